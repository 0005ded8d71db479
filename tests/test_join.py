"""The room's phone page outside Gradio (``/join/CODE``, :mod:`sbert_demo.ui.join`): its files, the board's
about, a send with the store's limits, bodies read with a limit, and where a sentence landed, equal to the
board's own grouping and to cosines computed here; served by a plain Starlette app with the visitor cookie."""

from __future__ import annotations

import json

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient

from sbert_demo.audience import board as board_view
from sbert_demo.audience.store import MAX_CHARS, PER_MINUTE, board_store
from sbert_demo.encoding.encoder import encode
from sbert_demo.ui.join import MAX_BODY, routes
from sbert_demo.ui.visitor import COOKIE, TOKEN, VisitorCookie

ROOM = ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Stock markets fell sharply today.",
        "Shares dropped on the stock exchange."]


def phone() -> TestClient:
    """A phone's browser: a client of the routes behind the visitor cookie's middleware, as the app serves them."""
    return TestClient(Starlette(routes=routes(), middleware=[Middleware(VisitorCookie)]), follow_redirects=False)


def opened(code: str) -> TestClient:
    client = phone()
    page = client.get(f"/join/{code}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert TOKEN.fullmatch(client.cookies[COOKIE])  # the page names the phone, as the app's page does
    return client


def send(client: TestClient, code: str, sentence: str):
    return client.post(f"/join/{code}/send", json={"sentence": sentence})


def test_the_page_and_its_files_and_nothing_else() -> None:
    client = phone()
    page = client.get("/join/ABCDE")
    assert "join.js" in page.text and "Send" in page.text and "key" not in page.text.lower()
    assert client.get("/join").status_code == 308 and client.get("/join").headers["location"].endswith("/join/")
    assert client.get("/join/").text == page.text  # the code typed there
    for name, kind, holds in (("join.js", "javascript", "landing/"), ("join.css", "css", "main {"),
                              ("palette.css", "css", "--sd-info")):
        answer = client.get(f"/join/assets/{name}")
        assert answer.status_code == 200 and kind in answer.headers["content-type"] and holds in answer.text
    for name in ("app.css", "join.html", "..%2Fjoin.py", "page.js", "%2E%2E%2F%2E%2E%2Fconfig.py"):
        assert client.get(f"/join/assets/{name}").status_code == 404, name


def test_about_a_board_and_codes_that_are_none() -> None:
    board = board_store().create("glove-6b-50d")
    client = opened(board.code)
    about = client.get(f"/join/{board.code.lower()}/about").json()  # typed in lower case
    assert about == {"code": board.code, "model": "glove-6b-50d", "model_label": about["model_label"], "sentences": 0,
                     "locked": False, "max_chars": MAX_CHARS}
    assert "GloVe" in about["model_label"]
    for code in ("ABCD", "ABCIO", "%3Cb%3E", "x" * 300):
        answer = client.get(f"/join/{code}/about")
        assert answer.status_code == 400 and "board code" in answer.json()["error"], code
    unknown = "ZZZZZ" if board.code != "ZZZZZ" else "YYYYY"
    assert "There is no board" in client.get(f"/join/{unknown}/about").json()["error"]


def test_a_send_stores_the_sentence_with_the_stores_limits() -> None:
    board = board_store().create("glove-6b-50d")
    client = opened(board.code)
    first = send(client, board.code, "  The cat   sleeps on the sofa. ")
    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    answer = first.json()
    assert answer["sentence"] == "The cat sleeps on the sofa." and answer["sentences"] == 1
    assert [s.id for s in board_store().sentences(board.code)] == [answer["id"]]
    again = send(client, board.code, "the CAT sleeps on the sofa.")
    assert again.status_code == 400 and "already on the board" in again.json()["error"]
    for text in ROOM[1:PER_MINUTE]:
        assert send(client, board.code, text).status_code == 200
    over = send(client, board.code, "One more sentence in the same minute.")
    assert over.status_code == 400 and f"You have sent {PER_MINUTE} sentences in the last minute" in over.json()["error"]
    assert send(opened(board.code), board.code, "Another phone may send.").status_code == 200  # its own cookie
    assert len(board_store().sentences(board.code)) == PER_MINUTE + 1
    board_store().set_locked(board.code, board.secret, True)
    closed = send(opened(board.code), board.code, "The board is locked now.")
    assert closed.status_code == 400 and "closed" in closed.json()["error"]


def test_bodies_that_are_no_sentence_are_refused_with_a_sentence_and_store_nothing() -> None:
    board = board_store().create("glove-6b-50d")
    client = opened(board.code)
    url = f"/join/{board.code}/send"
    answers = [
        client.post(url, data={"sentence": "A form from another site."}),  # no JSON: a cross-site form cannot send
        client.post(url, content=b"not json", headers={"content-type": "application/json"}),
        client.post(url, json={"text": "the wrong field"}),
        client.post(url, json={"sentence": ["a list"]}),
        client.post(url, json=["A sentence."]),
        client.post(url, content=b"[" * 100 + b"]" * 100, headers={"content-type": "application/json"}),
        client.post(url, json={"sentence": ""}),
        client.post(url, json={"sentence": "x" * (MAX_CHARS + 1)}),
    ]
    for answer in answers:
        assert answer.status_code == 400 and answer.json()["error"].endswith("."), answer.text
    large = client.post(url, content=json.dumps({"sentence": "y" * MAX_BODY}).encode(),
                        headers={"content-type": "application/json"})
    assert large.status_code == 413 and large.json()["error"] == "That request is larger than 4 kB; send less at once."
    assert board_store().sentences(board.code) == []


def test_where_it_landed_is_the_boards_grouping_and_cosines_computed_here() -> None:
    board = board_store().create("glove-6b-50d")
    ids = []
    for i, text in enumerate(ROOM):  # a phone each: three a minute per phone
        ids.append(send(opened(board.code), board.code, text).json()["id"])
    client = opened(board.code)
    newest = send(client, board.code, "The cat is sleeping on the couch.").json()["id"]
    where = client.get(f"/join/{board.code}/landing/{newest}").json()
    sentences = board_store().sentences(board.code)
    texts = [s.text for s in sentences]
    vectors = np.asarray(encode("glove-6b-50d", texts, fast=True).embeddings)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit[:-1] @ unit[-1]
    order = np.argsort(-cosines, kind="stable")[:board_view.NEAREST]
    assert [item["sentence"] for item in where["nearest"]] == [texts[i] for i in order]
    assert [item["cosine"] for item in where["nearest"]] == pytest.approx([round(float(cosines[i]), 3) for i in order],
                                                                          abs=1e-3)
    assert where["cluster"] == board_view.groups("glove-6b-50d", sentences).group_of(newest)  # as the screen draws
    assert where["sentence"] == "The cat is sleeping on the couch." and "GloVe" in where["model_label"]
    board_store().hide(board.code, board.secret, newest)
    board_view._latest.clear()  # the next grouping, as the next send starts
    hidden = client.get(f"/join/{board.code}/landing/{newest}")
    assert hidden.status_code == 400 and "no longer on the board" in hidden.json()["error"]
    assert client.get(f"/join/{board.code}/landing/0").status_code == 400
    assert client.get(f"/join/{board.code}/landing/x").status_code == 404  # no such route: a number only
