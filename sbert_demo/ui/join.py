"""The room's phone page, outside Gradio: what the board's QR code opens.

A Gradio page costs the server a session per phone (its page config and state, about 0.2 s of the one
interpreter each): a room of 500 scanning the QR code together waited a minute and a half for their pages, and a
tenth never opened. This page is three small files and three JSON routes, the same for every phone:

* ``/join/CODE`` — the page (``ui/assets/join.html``, ``join.css``, ``join.js``; ``/join/`` asks for the code);
* ``GET /join/CODE/about`` — the board's code, model and count, and whether it is closed;
* ``POST /join/CODE/send`` — ``{"sentence": "..."}`` (JSON only: a form on another site cannot send it; at most
  :data:`MAX_BODY` bytes, read with that limit) puts the sentence on the board, with the store's limits (the
  visitor cookie names the phone, as on the app's page) and answers at once with its number;
* ``GET /join/CODE/landing/N`` — where sentence N landed: its nearest sentences and its group for now, awaited in
  the event loop while the board is grouped (:func:`~sbert_demo.audience.board.landing_now`); the page asks it
  again every few seconds while it is in view, as the groups change.

The presenter's controls are not on it: they need the board's secret, which only the presenter's link carries.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..atlas.page import TYPES
from ..plot_style import palette_css
from .answers import json_route
from .audience import board_about, landing_of, store_sentence
from .bodies import loads_bounded, read_body
from .page_assets import asset

MAX_BODY = 4096  # a sentence of MAX_CHARS characters as JSON, escaped, with room to spare
FILES = ("join.css", "join.js")
CACHED = {"Cache-Control": "public, max-age=300"}  # a room's phones open the page within a minute or two
AS_JSON = 'Send the sentence as JSON: {"sentence": "..."}.'


def page(request: Request) -> Response:
    return Response(asset("join.html"), media_type=TYPES["html"], headers={"Cache-Control": "no-cache"})


def to_form(request: Request) -> Response:
    """``/join`` to ``/join/``, where the page's files are beside it."""
    return RedirectResponse(str(request.url.replace(path=request.url.path + "/", query="")), status_code=308)


def file(request: Request) -> Response:
    name = request.path_params["name"]
    if name == "palette.css":
        return Response(palette_css(), media_type=TYPES["css"], headers=CACHED)
    if name not in FILES:  # an allow list: nothing else of the assets folder is served from here
        return Response("Not found", status_code=404, media_type="text/plain")
    return Response(asset(name), media_type=TYPES[name.rpartition(".")[2]], headers=CACHED)


def about(request: Request) -> dict:
    return board_about(request.path_params["code"])


async def send(request: Request) -> dict:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise ValueError(AS_JSON)
    body = loads_bounded(await read_body(request, MAX_BODY), "The sentence")
    sentence = body.get("sentence") if isinstance(body, dict) else None
    if not isinstance(sentence, str):
        raise ValueError(AS_JSON)
    return await run_in_threadpool(store_sentence, request.path_params["code"], sentence, request)


async def landing(request: Request) -> dict:
    return await landing_of(request.path_params["code"], request.path_params["number"])


def routes() -> list[Route]:
    """The phone page's routes, for ``launch(app_kwargs={"routes": ...})``."""
    return [
        Route("/join", to_form), Route("/join/", page),
        Route("/join/assets/{name}", file),
        Route("/join/{code}", page),
        Route("/join/{code}/about", json_route(about, "the room's page")),
        Route("/join/{code}/send", json_route(send, "the room's page"), methods=["POST"]),
        Route("/join/{code}/landing/{number:int}", json_route(landing, "the room's page")),
    ]
