"""Audience boards: the store's limits and secret, what a board shows, the CSV, the CLI (issue 23).

Hostile input from the issue: script/HTML and formula prefixes in sentences, a 10 kB sentence, 600
sends to one board, 20 sends a minute from one session, bad board codes, a guessed presenter secret,
and a hundred phones sending at once (nothing lost).
"""

from __future__ import annotations

import asyncio
import csv
import html
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import gradio as gr
import pytest

from sbert_demo.audience import board as board_view
from sbert_demo.audience.store import (KEEP_HOURS, MAX_CHARS, MAX_SENTENCES, PER_MINUTE, BoardStore, export_rows,
                                       normalise_code)
from sbert_demo.explore.exports import write_table_csv

REPO = Path(__file__).resolve().parents[1]


def run_async(coroutine):
    """``asyncio.run`` in a thread of its own: the test's thread may already run an event loop (Playwright's)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.fixture
def store(tmp_path: Path) -> BoardStore:
    return BoardStore(tmp_path / "boards.sqlite")


def test_a_board_keeps_its_sentences_across_a_restart(store: BoardStore, tmp_path: Path) -> None:
    board = store.create("glove-6b-50d")
    assert len(board.code) == 5 and board.secret and "I" not in board.code and "O" not in board.code
    for i, text in enumerate(["A cat sleeps.", "A dog barks.", "Stocks fell."]):
        store.add(board.code, text, sender=f"visitor:phone-{i}")
    again = BoardStore(tmp_path / "boards.sqlite")  # the app started again
    assert [s.text for s in again.sentences(board.code.lower())] == ["A cat sleeps.", "A dog barks.", "Stocks fell."]
    assert again.get(f" {board.code[:2]} {board.code[2:]} ").model == "glove-6b-50d"  # typed with spaces


@pytest.mark.parametrize("code", ["", "ABCD", "ABCDEF", "ABC1E", "ABCIO", "<script>", "x" * 10_000, None, 12345])
def test_bad_board_codes_get_a_sentence(store: BoardStore, code) -> None:
    with pytest.raises(ValueError, match="board code|Give the board"):
        normalise_code(code)
    with pytest.raises(ValueError):
        store.add(code, "A sentence.", sender="phone")


def test_an_unknown_board_says_so(store: BoardStore) -> None:
    with pytest.raises(ValueError, match="There is no board ABCDE"):
        store.get("abcde")


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("   ", "empty"), ("\u200b\u200e \u2060", "empty"), (None, "must be text"),
    ("x" * (MAX_CHARS + 1), f"keep it to {MAX_CHARS}"), ("y" * 10_000, f"10,000 characters; keep it to {MAX_CHARS}\\."),
    # characters that draw nothing: Hangul fillers, the blank Braille pattern, a variation selector,
    # combining marks with nothing to combine with
    ("\u3164\u2800 \u115f\u1160", "empty"), ("\ufe0f\u034f\uffa0", "empty"), ("\u0301\u0308", "empty"),
])
def test_sentences_that_cannot_go_on_the_board(store: BoardStore, text, message) -> None:
    board = store.create("glove-6b-50d")
    with pytest.raises(ValueError, match=message):
        store.add(board.code, text, sender="phone")
    assert store.sentences(board.code) == []


def test_duplicates_case_and_spacing_aside_are_refused(store: BoardStore) -> None:
    board = store.create("glove-6b-50d")
    store.add(board.code, "A cat  sleeps.", sender="a")
    with pytest.raises(ValueError, match="already on the board"):
        store.add(board.code, " a CAT sleeps.\u200b", sender="b")
    assert [s.text for s in store.sentences(board.code)] == ["A cat sleeps."]  # stored cleaned


def test_twenty_sends_a_minute_from_one_session(store: BoardStore) -> None:
    board = store.create("glove-6b-50d")
    outcomes = []
    for i in range(20):
        try:
            store.add(board.code, f"Sentence number {i}.", sender="one-phone", now=1000.0 + i * 3)
            outcomes.append("ok")
        except ValueError as exc:
            outcomes.append(str(exc))
    assert outcomes[:PER_MINUTE] == ["ok"] * PER_MINUTE  # 3 in any 60 s, the other 17 refused, saying why
    assert all("in the last minute" in o for o in outcomes[PER_MINUTE:]), outcomes
    store.add(board.code, "Another phone is not slowed down.", sender="other-phone", now=1030.0)
    store.add(board.code, "A minute after the first, the phone may send again.", sender="one-phone", now=1061.0)


def test_six_hundred_sends_fill_the_board_at_five_hundred(store: BoardStore) -> None:
    board = store.create("glove-6b-50d")
    refused = []
    for i in range(600):
        try:
            store.add(board.code, f"Sentence {i}.", sender=f"visitor:phone-{i}")
        except ValueError as exc:
            refused.append(str(exc))
    assert len(store.sentences(board.code)) == MAX_SENTENCES
    assert len(refused) == 100 and set(refused) == {f"The board is full ({MAX_SENTENCES} sentences)."}


def test_a_hundred_phones_at_once_lose_nothing(store: BoardStore) -> None:
    board = store.create("glove-6b-50d")
    accepted, errors = [], []

    def phone(n: int) -> None:
        for k in range(3):
            try:
                accepted.append(store.add(board.code, f"Phone {n} says {k}.", sender=f"visitor:phone-{n}").id)
            except Exception as exc:  # noqa: BLE001 - any failure is what this test looks for
                errors.append(repr(exc))

    threads = [threading.Thread(target=phone, args=(n,)) for n in range(100)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(accepted) == 300
    assert sorted(s.id for s in store.sentences(board.code)) == sorted(accepted)


def test_presenter_actions_need_the_secret(store: BoardStore) -> None:
    board = store.create("glove-6b-50d")
    sentence = store.add(board.code, "Hide me.", sender="a")
    for guess in ("", None, "guess", board.secret[:-1], board.secret + "x", "' OR 1=1 --"):
        for act in (lambda: store.set_locked(board.code, guess, True), lambda: store.clear(board.code, guess),
                    lambda: store.hide(board.code, guess, sentence.id),
                    lambda: store.set_model(board.code, guess, "all-MiniLM-L6-v2")):
            with pytest.raises(ValueError, match="Only the presenter"):
                act()
    assert not store.get(board.code).locked and len(store.sentences(board.code)) == 1 == store.count(board.code)
    store.hide(board.code, board.secret, sentence.id)
    assert store.sentences(board.code) == [] and store.sentences(board.code, include_hidden=True)[0].hidden
    assert store.count(board.code.lower()) == 0  # what the board shows, hidden ones aside
    store.set_locked(board.code, board.secret, True)
    with pytest.raises(ValueError, match="closed this board"):
        store.add(board.code, "Too late.", sender="b")
    assert store.set_model(board.code, board.secret, "all-MiniLM-L6-v2").model == "all-MiniLM-L6-v2"
    assert store.clear(board.code, board.secret) == 1


def test_boards_older_than_the_limit_are_removed(store: BoardStore) -> None:
    old = store.create("glove-6b-50d", now=0.0)
    store.create("glove-6b-50d", now=KEEP_HOURS * 3600 + 1.0)
    with pytest.raises(ValueError, match="There is no board"):
        store.get(old.code)


def test_where_a_sentence_landed(store: BoardStore) -> None:
    board = store.create("glove-6b-50d")
    texts = ["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Stock markets fell sharply today.",
             "Shares dropped on the stock exchange.", "The cat is sleeping on the couch."]
    for i, text in enumerate(texts):
        store.add(board.code, text, sender=f"p{i}")
    sentences = store.sentences(board.code)
    shown = board_view.picture("glove-6b-50d", sentences)
    assert shown.coords.shape == (5, 2) and len(shown.clusters) == 5 and shown.method == "PCA"
    landed = board_view.landing("glove-6b-50d", sentences, sentences[-1].id)
    assert landed.nearest[0][0] in texts[:2] and len(landed.nearest) == 3
    assert landed.nearest[0][1] >= landed.nearest[1][1] >= landed.nearest[2][1]
    assert landed.cluster == shown.cluster_names[shown.clusters[-1]]
    assert board_view.picture("glove-6b-50d", sentences) is shown  # the next refresh computes nothing
    assert shown.closest == board_view.closest_pair(shown.embeddings)
    i, j, cosine = shown.closest
    assert {texts[i], texts[j]} <= set(texts) and 0 < cosine <= 1


def test_the_phone_and_the_screen_name_the_same_group(store: BoardStore) -> None:
    """A phone told its sentence "joined the group passport · expired · new" while the presenter's map put it in
    "cheese · favourite · food": the phone had the group of its nearest sentence in the older picture. Now the
    phone's answer, given before the screen redraws, names the group the screen then shows, every time."""
    board = store.create("glove-6b-50d")
    texts = ["My passport expired last week.", "I need a new passport.", "Cheese is my favourite food.",
             "I love eating cheese.", "What is your favourite food?", "The visa office is closed.",
             "Will it rain tomorrow?", "The forecast says rain.", "Sunny skies all week.", "Blue cheese smells."]
    for i, text in enumerate(texts):
        store.add(board.code, text, sender=f"p{i}")
        sentences = store.sentences(board.code)
        landed = board_view.landing("glove-6b-50d", sentences, sentences[-1].id)  # the phone first
        shown = board_view.picture("glove-6b-50d", sentences)  # then the presenter's refresh
        if len(sentences) >= board_view.MIN_MAP:
            assert landed.cluster == shown.cluster_names[shown.clusters[-1]], (text, landed.cluster)
        else:
            assert landed.cluster is None


def test_a_room_sending_at_once_shares_a_few_groupings(store: BoardStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thirty phones send at once: each is told its own sentence's nearest and group, from groupings of the whole
    board that the sends waiting meanwhile share (500 phones had each waited for a grouping of its own: send p50
    46 s), awaited in one event loop. Each phone's group is the one the same grouping gives its sentence."""
    board = store.create("glove-6b-50d")
    for i, text in enumerate(["The cat sleeps.", "Stocks fell today.", "It will rain."]):
        store.add(board.code, text, sender=f"first{i}")
    made, real = [], board_view._group

    def slow(model, sentences):
        made.append(len(sentences))
        time.sleep(0.3)  # a grouping takes a while: the sends arriving meanwhile wait for the next one
        return real(model, sentences)

    monkeypatch.setattr(board_view, "_group", slow)

    async def send(i: int):
        await asyncio.sleep(0.01 * i)  # the sends arrive over 0.3 s, each stored before it asks where it landed
        added = store.add(board.code, f"Phone number {i} says the cat sat on mat {i}.", sender=f"visitor:phone{i}")
        return added, await board_view.landing_now("glove-6b-50d", board.code, lambda: store.sentences(board.code),
                                                   added.id)

    async def room():
        return await asyncio.gather(*(send(i) for i in range(30)))

    landed = run_async(room())
    assert len(made) <= 4 and made[-1] == 33, made  # a few groupings, the last of the whole board
    for added, where in landed:
        assert where.sentence == added.text and len(where.nearest) == 3 and where.cluster
        grouped = board_view._latest.get(("glove-6b-50d", board.code))
        assert added.id in grouped.ids


def test_a_grouping_done_before_its_callback_ran_is_not_awaited_again(store: BoardStore) -> None:
    """A send that finds the board's last grouping finished but not yet cleared (its done callback still queued)
    and without its sentence starts the next grouping: it had awaited the same finished grouping again and
    again without ever yielding, and the app's event loop spun at 100% of a core (bench/audience.py, 100 phones)."""
    board = store.create("glove-6b-50d")
    first = store.add(board.code, "The cat sleeps on the mat.", sender="first")
    key = ("glove-6b-50d", board.code)
    before = board_view.groups("glove-6b-50d", store.sentences(board.code))  # the board before the new sentence
    added = store.add(board.code, "A kitten naps on the couch.", sender="second")
    answer = []

    async def send():
        stale = asyncio.get_running_loop().create_future()
        stale.set_result(before)  # finished, still listed as under way
        state = board_view._groupings()
        state.under_way[key] = (state.last, stale)
        answer.append(await board_view.landing_now("glove-6b-50d", board.code, lambda: store.sentences(board.code),
                                                   added.id))

    worker = threading.Thread(target=asyncio.run, args=(send(),), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "landing_now spun on a finished grouping"
    assert answer[0].sentence == added.text and answer[0].nearest[0][0] == "The cat sleeps on the mat."
    assert first.id in board_view._latest.get(key).ids and key not in board_view._groupings().under_way


def test_a_send_is_answered_before_the_board_is_grouped_and_its_landing_follows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A phone's send stores its sentence and is answered without the board's model (a full room's sends had
    waited behind its groupings: 1,217 of 1,500 timed out with 500 phones); ``board_landing`` then says where it
    landed, as the page's chained step does."""
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import audience

    store = board_store()
    board = store.create("glove-6b-50d")
    for i, text in enumerate(["The cat sleeps on the mat.", "Stocks fell sharply today.", "A kitten naps."]):
        store.add(board.code, text, sender=f"first{i}")
    grouped = []
    real = board_view._group
    monkeypatch.setattr(board_view, "_group", lambda model, sentences: grouped.append(len(sentences)) or
                        real(model, sentences))
    html_out, sent = audience.send_sentence(board.code, "A cat is sleeping on a mat.", page_request("phone-9"))
    assert grouped == [] and sent["pending"] and sent["nearest"] == []  # answered before any grouping
    landed = run_async(audience.api_landing(board.code, sent["id"]))
    assert grouped == [4] and landed["sentence"] == "A cat is sleeping on a mat."
    assert landed["nearest"][0]["sentence"] == "The cat sleeps on the mat." and landed["cluster"]
    page_html, again = run_async(audience.where_it_landed(sent))  # the page's chained step, as HTML
    assert again == landed and "Closest on the board" in page_html and "Finding" not in page_html
    for wrong in (0, -3, 2.5, True, "1", 10_000):
        with pytest.raises(gr.Error):
            run_async(audience.api_landing(board.code, wrong))


def test_what_people_send_is_shown_as_text_and_exported_as_text(store: BoardStore) -> None:
    from sbert_demo.ui.audience import _landing_html, board_map
    from sbert_demo.ui.talk import room_status

    board = store.create("glove-6b-50d")
    evil = ['<script>alert(1)</script> hi', '=HYPERLINK("http://x","click")', '+1+cmd|calc', '@SUM(A1)',
            '<img src=x onerror=alert(2)>']
    for i, text in enumerate(evil):
        store.add(board.code, text, sender=f"p{i}")
    sentences = store.sentences(board.code)
    shown = board_view.picture("glove-6b-50d", sentences)
    result = {"sentence": evil[0], "model": "glove-6b-50d", "cluster": "<b>x</b>",
              "nearest": [{"sentence": evil[4], "cosine": 0.5}]}
    page = _landing_html(result)
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page and "&lt;b&gt;x" in page
    figure = board_map(shown, "glove-6b-50d").to_json()
    assert "<script>" not in figure and "<img" not in figure and "&lt;img src=x" in figure  # the newest, written
    status = room_status({"code": board.code, "secret": "s3cret", "base": "http://talk.example/"}, [shown])
    assert "<script>" not in status and "<img" not in status and status.count("Closest under") == 1
    assert f"talk.example/join/{board.code} " in html.unescape(re.sub("<[^>]+>", " ", status))  # the join link
    path = write_table_csv("board", ["id", "sentence", "sent", "hidden"], export_rows(store, board.code))
    cells = [row[1] for row in csv.reader(path.open(encoding="utf-8"))][1:]
    assert cells[0] == evil[0] and all(cell.startswith("'") for cell in cells[1:4]) and cells[4] == evil[4]


def test_the_cli_exports_a_board(store: BoardStore, tmp_path: Path) -> None:
    board = store.create("glove-6b-50d")
    store.add(board.code, "=1+1", sender="a")
    store.add(board.code, "A plain sentence.", sender="b")
    env = {"SBERT_DEMO_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    (tmp_path / "cache" / "audience").mkdir(parents=True)
    store.path.rename(tmp_path / "cache" / "audience" / "boards.sqlite")
    out = tmp_path / "board.csv"
    done = subprocess.run([sys.executable, "-m", "sbert_demo", "board", "export", board.code.lower(), "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert rows[0] == ["id", "sentence", "sent (UTC)", "hidden"] and [r[1] for r in rows[1:]] == ["'=1+1", "A plain sentence."]
    missing = subprocess.run([sys.executable, "-m", "sbert_demo", "board", "export", "QQQQQ"], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "There is no board QQQQQ" in missing.stderr and "Traceback" not in missing.stderr


def test_the_presenter_views_room_step_redraws_only_when_a_sentence_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import talk

    monkeypatch.setattr(talk, "SIAMESE", "glove-6b-50d+whiten")  # a second model without the ONNX build of MiniLM
    board = board_store().create("glove-6b-50d")
    room = {"code": board.code, "secret": board.secret, "base": "http://talk.example/"}
    for i, text in enumerate(["A cat sleeps on the sofa.", "A kitten naps on the couch.", "Stocks fell today."]):
        board_store().add(board.code, text, sender=f"p{i}")
    skipped = talk.room_tick(talk.ROOM_STEP - 1, room, None)  # another step on the screen: nothing is drawn
    assert skipped[3] is None and all(part == gr.skip() for part in skipped[:3])
    status, left, right, key = talk.room_tick(talk.ROOM_STEP, room, None)
    assert "3</span> sentences" in status and key == "1,2,3"
    assert [trace.x.shape for trace in left["value"].data[:-1]] and right["visible"] and right["value"] is not None
    assert left["value"].layout.title.text.startswith("GloVe") and "3 sentences" in left["value"].layout.title.text
    assert talk.room_tick(talk.ROOM_STEP, room, key)[3] == key and talk.room_tick(talk.ROOM_STEP, room, key)[0] == gr.skip()
    board_store().add(board.code, "Markets dropped sharply.", sender="p9")
    assert talk.room_tick(talk.ROOM_STEP, room, key)[3] == "1,2,3,4"  # a new sentence: drawn again
    # The room's Start button and its timer at the room step only; its row comes with the step's figures.
    start, timer, shown, hint = talk.room_controls(talk.ROOM_STEP, None, None)
    assert start["visible"] and not timer["active"] and "No board yet" in hint
    start, timer, shown, hint = talk.room_controls(talk.ROOM_STEP, room, None)
    assert not start["visible"] and timer["active"] and hint == gr.skip()
    assert not talk.room_controls(2, room, None)[1]["active"]
    assert "Only the presenter" in talk.room_controls(talk.ROOM_STEP, None, "Only the presenter can do that.")[3]
    (*_, row), = talk._room_step(talk.ROOM_STEP, room, "screen")
    assert row["visible"] and next(talk._room_step(talk.ROOM_STEP, None, "screen"))[-1]["visible"]
    assert not talk._shown(2, talk.slides.Slide(None, None))[-1]["visible"]


# --- hostile input, by class (issue "a talk that cannot go wrong on stage") ---------------------------

def page_request(session: str = "phone-1", address: str = "203.0.113.7"):
    """A stand-in for gr.Request: a browser session behind one network address (as a proxy reports it)."""
    from types import SimpleNamespace

    return SimpleNamespace(session_hash=session, headers={"x-forwarded-for": f"198.51.100.1, {address}"},
                           client=SimpleNamespace(host="127.0.0.1"), query_params={})


@pytest.mark.parametrize("model, why", [
    ("nope", "Unknown model"),
    ("glove-6b-50d+abtt999", "all-but-the-top"),  # a variant its base cannot make
    ("bert-base-uncased-cls", "Hugging Face Hub"),  # not available offline
    ("", "Choose the model"), (None, "Choose the model"), (7, "Choose the model"),
])
def test_a_board_is_refused_a_model_it_cannot_use(model, why) -> None:
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import audience

    with pytest.raises(gr.Error, match=why):
        audience.create_board(model, page_request())
    board = board_store().create("glove-6b-50d")
    with pytest.raises(gr.Error, match=why):
        audience.set_model(board.code, board.secret, model)
    assert board_store().get(board.code).model == "glove-6b-50d"  # unchanged: the board goes on working
    assert audience.board_state(board.code)["model"] == "glove-6b-50d"


def test_a_sentence_is_either_stored_and_accepted_or_refused_and_not_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import audience

    board = board_store().create("glove-6b-50d")
    html_out, result = audience.send_sentence(board.code, "A cat sleeps on the sofa.", page_request())
    assert result["id"] and "Sent" in html_out and "Finding where it landed" in html_out and result["pending"]

    def broken(*args, **kwargs):
        raise ValueError("the model could not be loaded")

    monkeypatch.setattr(audience, "landing_now", broken)  # the board's model fails after the sentence is stored
    html_out, result = audience.send_sentence(board.code, "A kitten naps on the couch.", page_request("phone-2"))
    assert "Sent" in html_out and result["nearest"] == []  # the send never waits for the model
    html_out, result = run_async(audience.where_it_landed(result))
    assert "Sent" in html_out and "it is on the board" in html_out and result["nearest"] == []
    assert "pending" not in result
    assert [s.text for s in board_store().sentences(board.code)][-1] == "A kitten naps on the couch."
    with pytest.raises(gr.Error, match="already on the board"):  # refused: nothing stored
        audience.send_sentence(board.code, "a cat  SLEEPS on the sofa.", page_request("phone-3"))
    assert len(board_store().sentences(board.code)) == 2
    monkeypatch.setattr(audience, "picture", broken)  # the board's state still lists its sentences
    state = audience.board_state(board.code)
    assert state["count"] == 2 and "could not be loaded" in state["problem"]


@pytest.mark.parametrize("number", [10 ** 30, 2 ** 63, -1, 0, 2.5, float("nan"), float("inf"), True, "3", None])
def test_hide_refuses_numbers_that_are_no_sentence(number) -> None:
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import audience

    board = board_store().create("glove-6b-50d")
    board_store().add(board.code, "A cat sleeps.", sender="p")
    with pytest.raises(gr.Error) as refused:
        audience.hide_sentence(board.code, board.secret, number)
    assert "no sentence" in str(refused.value) or "Choose the sentence" in str(refused.value)
    assert "went wrong" not in str(refused.value)
    assert [s.hidden for s in board_store().sentences(board.code, include_hidden=True)] == [False]


@pytest.mark.parametrize("value, closed", [("false", False), ("False", False), ("0", False), (0, False),
                                            ("true", True), (1, True), (True, True), (False, False)])
def test_a_lock_says_what_it_means(value, closed) -> None:
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import audience

    board = board_store().create("glove-6b-50d")
    audience.api_lock(board.code, board.secret, value)
    assert board_store().get(board.code).locked is closed


@pytest.mark.parametrize("value", ["maybe", "", 2, 0.5, None, [True]])
def test_a_lock_that_is_not_yes_or_no_is_refused(value) -> None:
    from sbert_demo.audience.store import board_store
    from sbert_demo.ui import audience

    board = board_store().create("glove-6b-50d")
    with pytest.raises(gr.Error, match="true or false"):
        audience.api_lock(board.code, board.secret, value)
    assert not board_store().get(board.code).locked


def test_new_sessions_from_one_address_do_not_reset_the_limit(store: BoardStore) -> None:
    from sbert_demo.audience.store import PER_ADDRESS_MINUTE

    boards = [store.create("glove-6b-50d") for _ in range(2)]
    for i in range(PER_ADDRESS_MINUTE):  # a script fetching a new visitor cookie for each sentence, two boards
        store.add(boards[i % 2].code, f"Sentence {i}.", sender=f"visitor:session-{i}", address="203.0.113.7",
                  now=1000.0 + i * 0.01)
    with pytest.raises(ValueError, match="came from your network in the last minute"):
        store.add(boards[0].code, "One more.", sender="visitor:session-new", address="203.0.113.7", now=1020.0)
    store.add(boards[0].code, "Another network is not held.", sender="x", address="198.51.100.9", now=1020.0)
    store.add(boards[1].code, "A minute later it may send again.", sender="y", address="203.0.113.7", now=1080.0)
    assert sum(len(store.sentences(b.code)) for b in boards) == PER_ADDRESS_MINUTE + 2


def test_a_whole_room_behind_one_venue_address_fills_its_board(store: BoardStore) -> None:
    """500 phones on one venue Wi-Fi (one public address), one sentence each within a minute: every one lands
    (120 a minute from an address refused 380 of them); the 501st meets the board's size, not the network's."""
    from sbert_demo.audience.store import MAX_SENTENCES

    board = store.create("glove-6b-50d")
    for i in range(MAX_SENTENCES):
        store.add(board.code, f"Phone {i} says hello.", sender=f"visitor:phone-{i}", address="192.0.2.1", now=5000.0 + i * 0.1)
    assert len(store.sentences(board.code)) == MAX_SENTENCES
    with pytest.raises(ValueError, match="The board is full"):
        store.add(board.code, "One too many.", sender="visitor:phone-late", address="192.0.2.1", now=5055.0)


def test_the_address_is_the_one_the_nearest_proxy_saw(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from sbert_demo.config import reload_settings
    from sbert_demo.ui.visitor import address

    assert address(page_request(address="203.0.113.7")) == "203.0.113.7"  # a proxy here; a forged first entry ignored
    assert address(SimpleNamespace(headers={}, client=SimpleNamespace(host="127.0.0.1"))) == "127.0.0.1"
    assert address(None) == ""
    # a phone that reaches the app directly names its own address, whatever it writes in X-Forwarded-For
    direct = SimpleNamespace(headers={"x-forwarded-for": "192.0.2.55"}, client=SimpleNamespace(host="198.51.100.9"))
    assert address(direct) == "198.51.100.9"
    monkeypatch.setenv("SPACE_ID", "someone/sbert-demo")  # on a Space its proxy is the only way in
    reload_settings()
    assert address(direct) == "192.0.2.55"
    monkeypatch.delenv("SPACE_ID")
    monkeypatch.setenv("SBERT_DEMO_TRUSTED_PROXIES", "10.0.0.1, 198.51.100.9")  # the operator's own proxies
    reload_settings()
    assert address(direct) == "192.0.2.55"
    assert address(page_request(address="203.0.113.7")) == "127.0.0.1"  # this machine is no longer named


def test_a_store_from_before_addresses_opens_and_keeps_its_sentences(tmp_path: Path) -> None:
    import sqlite3

    from sbert_demo.audience.store import SCHEMA

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema as first released: no address column
        db.executescript(SCHEMA)
        db.execute("INSERT INTO boards VALUES ('ABCDE', 'x', 'glove-6b-50d', 0, 1.0)")
        db.execute("INSERT INTO sentences (board, text, norm, sender, created) VALUES ('ABCDE', 'Old.', 'old.', 'p', 1.0)")
    store = BoardStore(path)
    assert [s.text for s in store.sentences("ABCDE")] == ["Old."]
    store.add("ABCDE", "New.", sender="q", address="203.0.113.7")
    assert len(store.sentences("ABCDE")) == 2


@pytest.mark.parametrize("action", ["export", "clear", "hide", "lock"])
def test_presenter_actions_before_a_board_say_to_create_one(action) -> None:
    from sbert_demo.ui import audience

    call = {"export": lambda: audience.export_for_page(None, None), "clear": lambda: audience.clear_board(None, None),
            "hide": lambda: audience.hide_sentence(None, None, 1), "lock": lambda: audience.set_locked(None, None, True)}
    with pytest.raises(gr.Error) as refused:
        call[action]()
    assert refused.value.sentence == audience.NO_BOARD  # the words, once: the page's box escapes them once
    assert "&amp;" not in refused.value.message and "&#x27;&#x27;" not in refused.value.message


def test_a_nested_handlers_error_is_escaped_once() -> None:
    from sbert_demo.ui import common

    @common.user_errors
    def inner():
        raise ValueError("Give the board's code.")

    @common.user_errors
    def outer():
        return inner()

    with pytest.raises(gr.Error) as refused:
        outer()
    assert refused.value.sentence == "Give the board's code." and refused.value.message == "Give the board&#x27;s code."
    assert common.failure_box(refused.value.sentence).count("&#x27;") == 1


def test_the_cost_endpoint_reads_its_size_as_a_sentence() -> None:
    from sbert_demo.ui import cost

    for bad in ("many", "1e99", "-5", ""):
        with pytest.raises(gr.Error, match="number of sentences|sentences: the measured run"):
            cost.api_cost(bad)


# --- one phone across reloads: the visitor cookie -----------------------------------------------------

def _pages():
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from sbert_demo.ui.visitor import VisitorCookie

    async def page(request):
        return HTMLResponse("<p>the page</p>")

    async def api(request):
        return JSONResponse({"cookie": request.cookies.get("sbert_demo_visitor")})

    return TestClient(Starlette(routes=[Route("/", page), Route("/api", api, methods=["GET", "POST"])],
                                middleware=[Middleware(VisitorCookie)]))


def test_a_page_gives_a_browser_without_one_a_visitor_cookie_that_later_requests_carry() -> None:
    from sbert_demo.ui.visitor import COOKIE, TOKEN

    client = _pages()
    first = client.get("/")
    made = first.headers["set-cookie"]
    token = client.cookies[COOKIE]
    assert TOKEN.fullmatch(token) and "HttpOnly" in made and "SameSite=Lax" in made and "Path=/" in made
    assert "set-cookie" not in client.get("/").headers  # kept: the next page load names the same browser
    assert client.post("/api").json() == {"cookie": token}  # what a Gradio queue call carries
    assert "set-cookie" not in _pages().get("/api").headers  # only pages set it
    other = _pages().get("/").headers["set-cookie"]
    assert other.split(";")[0] != made.split(";")[0]  # each browser its own


@pytest.mark.parametrize("value", ["x", "A" * 21, "A" * 23, "AAAAAAAAAAAAAAAAAAAA;=", "%C3%84AAAAAAAAAAAAAAAAAA"])
def test_a_cookie_value_the_app_never_hands_out_is_replaced_and_never_names_a_phone(value: str) -> None:
    from types import SimpleNamespace

    from sbert_demo.ui.visitor import COOKIE, visitor

    client = _pages()
    client.cookies.set(COOKIE, value)
    assert client.get("/").headers["set-cookie"].startswith(f"{COOKIE}=")
    assert visitor(SimpleNamespace(cookies={COOKIE: value}, session_hash="page-load-1")) == "page-load-1"
    assert visitor(SimpleNamespace(cookies={}, session_hash=None)) == "api"


def test_over_https_the_cookie_holds_in_a_spaces_frame() -> None:
    client = _pages()
    made = client.get("/", headers={"x-forwarded-proto": "https"}).headers["set-cookie"]
    assert "SameSite=None" in made and "Secure" in made and "Partitioned" in made


def test_a_phone_that_reloads_keeps_its_count(store: BoardStore) -> None:
    """Three sentences from one browser, each from a new page load (a new Gradio session) with its cookie: the
    fourth is refused; a browser without the cookie counts per page load, as before."""
    from sbert_demo.ui import audience

    board = store.create("glove-6b-50d")
    cookie = {"sbert_demo_visitor": "Zm9vYmFyYmF6cXV4cXV1eA"}
    for i in range(PER_MINUTE):
        request = page_request(session=f"reload-{i}")
        request.cookies = cookie
        store.add(board.code, f"Sentence {i} from one phone.", sender=audience.visitor(request),
                  address=audience.address(request))
    request = page_request(session="reload-9")
    request.cookies = cookie
    with pytest.raises(ValueError, match="in the last minute"):
        store.add(board.code, "One reload too many.", sender=audience.visitor(request), address="203.0.113.7")
    fresh = page_request(session="reload-10")  # no cookie: its own page load
    store.add(board.code, "A page load without the cookie.", sender=audience.visitor(fresh), address="203.0.113.7")


def test_a_phone_is_told_its_group_for_now() -> None:
    """The groups change as the board grows: the phone's sentence says its group is the screen's for now."""
    from sbert_demo.ui import audience

    shown = audience._landing_html({"nearest": [], "cluster": "cat · couch · kitten", "sentence": "A cat naps."})
    assert "For now it is in the group <strong>cat · couch · kitten</strong>" in shown
    assert "the groups change as more sentences arrive" in shown


def test_a_growing_board_starts_its_next_map_where_the_last_one_drew_its_points(store: BoardStore) -> None:
    """The presenter's map continues from the last one (UMAP from those positions, fewer epochs: quicker): the
    sentences the room has seen keep their shape, a new one starts beside its nearest ones; a first map, a PCA one, or one that
    shows fewer than half of the sentences is laid out afresh."""
    import numpy as np

    from sbert_demo.data.benchmarks import sts_split

    board = store.create("glove-6b-50d")
    texts = list(dict.fromkeys(sts_split("dev").sentences1))[:40]
    for i, text in enumerate(texts[:36]):
        store.add(board.code, text, sender=f"visitor:p{i}")
    first = board_view.picture("glove-6b-50d", store.sentences(board.code), board.code)
    assert first.method == "UMAP"
    for i, text in enumerate(texts[36:]):
        store.add(board.code, text, sender=f"visitor:q{i}")
    sentences = store.sentences(board.code)
    start = board_view.starting_points(first, [s.id for s in sentences], np.asarray(
        board_view.groups("glove-6b-50d", sentences).embeddings))
    assert np.allclose(start[:36], first.coords, atol=0.05 * np.ptp(first.coords))  # where they were, by a hair
    unit = board_view.normalize_rows(np.asarray(board_view.groups("glove-6b-50d", sentences).embeddings))
    for k in range(36, 40):
        nearest = np.argsort(-(unit[k] @ unit[:36].T), kind="stable")[:board_view.NEAREST]
        assert np.allclose(start[k], first.coords[nearest].mean(axis=0), atol=0.05 * np.ptp(first.coords))
    grown = board_view.picture("glove-6b-50d", sentences, board.code)
    afresh = board_view.picture("glove-6b-50d", sentences)  # the cache's: the same set, computed once
    assert afresh is grown

    def shape(coords):  # the pairwise distances of the 36 sentences the room saw first
        return np.linalg.norm(coords[:36, None] - coords[None, :36], axis=2)[np.triu_indices(36, 1)]

    from sbert_demo.explore.projection import project_2d
    assert not np.allclose(project_2d(grown.embeddings).coords, grown.coords)  # continued, not laid out afresh
    kept = np.corrcoef(shape(first.coords), shape(grown.coords))[0, 1]
    assert kept > 0.9, kept
    assert board_view.starting_points(None, grown.ids, grown.embeddings) is None
    assert board_view.starting_points(first, grown.ids[:5] + tuple(range(10_000, 10_010)), grown.embeddings[:15]) is None
