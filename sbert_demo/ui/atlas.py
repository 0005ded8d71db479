"""The map view's page and its HTTP API, served beside the Gradio app (``launch(app_kwargs={"routes": ...})``).

``/atlas?map=<id>`` is the page (``assets/atlas.html``, ``atlas.js``, ``atlas.css``); everything it
draws comes from :mod:`sbert_demo.atlas` through these routes, answered as binary arrays where they are
per point:

* ``GET /atlas/api/<id>`` — the corpus and its models (names, cluster and region words);
* ``GET /atlas/api/<id>/points/<m>`` — float32 x, y per sentence; ``/clusters/<m>`` and ``/labels``: uint16;
* ``GET /atlas/api/<id>/sentence/<row>`` — one sentence (fetched on hover, never shipped with the points);
* ``POST /atlas/api/<id>/selection?page=&size=&q=`` — sentence numbers in (JSON ``{"rows": [...]}`` or
  int32 bytes), the selection's table page and per-cluster counts out; ``/export`` — its CSV;
* ``GET /atlas/api/<id>/shared/<a>/<b>`` — per sentence the neighbours two models share (uint8), and
  ``/disagree/<a>/<b>`` the sentences they disagree on most; ``/working/<a>/<b>`` how far the shared
  neighbours' computation is (its step, share and time left), which the page asks every second meanwhile.

Failures answer ``{"error": sentence}`` with status 400 (the user's doing) or 500 (logged).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import quote

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..atlas import compare
from ..atlas.store import open_atlas
from .bodies import BodyTooLarge, loads_bounded, read_body
from .common import UNEXPECTED
from .page_assets import ASSETS, asset

logger = logging.getLogger(__name__)
MAX_BODY = 64 * 1024 * 1024  # a million int32 sentence numbers, with room
MAX_ROW = 2**31  # int32 sentence numbers: no corpus is larger
STATIC = {"atlas.js": "text/javascript", "atlas.css": "text/css"}


def _answer(work: Callable[[Request], Response]) -> Callable:
    async def endpoint(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        try:
            return await run_in_threadpool(work, request, await _rows_in(request))
        except BodyTooLarge:
            return JSONResponse({"error": "That selection is too large to send; select fewer sentences."},
                                status_code=413)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except Exception as exc:  # noqa: BLE001 - logged; the page gets a sentence
            logger.exception("Unexpected error in the map view", exc_info=exc)
            return JSONResponse({"error": UNEXPECTED.format(kind=type(exc).__name__)}, status_code=500)

    return endpoint


async def _rows_in(request: Request) -> np.ndarray | None:
    if request.method != "POST":
        return None
    body = await read_body(request, MAX_BODY)  # counted as it arrives: a giant body is cut, never held
    if request.headers.get("content-type", "").startswith("application/octet-stream"):
        if len(body) % 4:
            raise ValueError("A binary selection is int32 sentence numbers (4 bytes each).")
        return np.frombuffer(body, dtype="<i4")
    try:
        parsed = loads_bounded(body, "The selection")
        rows = parsed.get("rows", []) if isinstance(parsed, dict) else None
    except ValueError:
        rows = None
    if rows is None:
        raise ValueError('Send the selection as JSON, {"rows": [0, 5, 9]}, or as int32 bytes.')
    if not isinstance(rows, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in rows):
        raise ValueError("A selection is a list of sentence numbers (whole numbers from 0).")
    # Before numpy meets 2**63; a number within that is judged against the corpus's own range (Atlas.check_rows).
    outside = next((r for r in rows if not -MAX_ROW < r < MAX_ROW), None)
    if outside is not None:
        shown = str(outside) if len(str(outside)) <= 24 else f"{str(outside)[:12]}…"
        raise ValueError(f"Sentence numbers are whole numbers from 0 up to the corpus's size; {shown} is not one.")
    return np.asarray(rows, dtype=np.int64)


def _binary(array: np.ndarray) -> Response:
    return Response(np.ascontiguousarray(array).tobytes(), media_type="application/octet-stream",
                    headers={"Cache-Control": "private, max-age=86400"})  # a map's id names its content


def _param(request: Request, name: str, default: str = "") -> str:
    return request.query_params.get(name, default)


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"The {what} must be a whole number, not {value[:20]!r}.") from None


def attachment(filename: str) -> str:
    """A Content-Disposition for ``filename`` in any script: an ASCII fallback, and the name itself as RFC 5987's
    ``filename*`` (a header is Latin-1; ``猫と犬.csv`` would not fit in one)."""
    stem, dot, suffix = filename.rpartition(".")
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in stem)[:80] or "corpus"
    fallback = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in f"{stem}{dot}{suffix}")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(f'{stem}{dot}{suffix}', safe='')}"


def page(request: Request) -> Response:
    return Response(asset("atlas.html"), media_type="text/html")


def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        return Response("Not found", status_code=404)
    return Response((ASSETS / name).read_text(encoding="utf-8"), media_type=STATIC[name])


def _atlas(request: Request):
    return open_atlas(request.path_params["id"])


def meta(request: Request, _rows) -> Response:
    return JSONResponse(_atlas(request).meta)


def points(request: Request, _rows) -> Response:
    return _binary(_atlas(request).coords(request.path_params["m"]))


def clusters(request: Request, _rows) -> Response:
    return _binary(_atlas(request).clusters(request.path_params["m"]))


def labels(request: Request, _rows) -> Response:
    found = _atlas(request).labels()
    if found is None:
        raise ValueError("This corpus has no labels; colour it by clusters.")
    return _binary(found)


def sentence(request: Request, _rows) -> Response:
    return JSONResponse(_atlas(request).sentence(_int(request.path_params["row"], "sentence number")))


def selection(request: Request, rows) -> Response:
    atlas = _atlas(request)
    return JSONResponse(atlas.selection(rows, page=_int(_param(request, "page", "0"), "page"),
                                        size=_int(_param(request, "size", "50"), "page size"),
                                        query=_param(request, "q")[:200]))


def export(request: Request, rows) -> Response:
    atlas = _atlas(request)
    return Response(atlas.csv(rows), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": attachment(f"{atlas.meta['name']}-selection.csv")})


def shared(request: Request, _rows) -> Response:
    return _binary(compare.shared(_atlas(request), request.path_params["a"], request.path_params["b"]))


def working(request: Request, _rows) -> Response:
    """How far the shared neighbours of two models are: {fraction, what, left} or null when none computes."""
    return JSONResponse(compare.progress_of(_atlas(request), request.path_params["a"], request.path_params["b"]))


def disagree(request: Request, _rows) -> Response:
    top = _int(_param(request, "top", "20"), "number of sentences")
    return JSONResponse(compare.disagreements(_atlas(request), request.path_params["a"], request.path_params["b"],
                                              top=top))


def routes() -> list[Route]:
    """The map view's routes, for ``launch(app_kwargs={"routes": routes()})``."""
    api = "/atlas/api/{id}"
    return [
        Route("/atlas", page), Route("/atlas/", page),
        Route("/atlas/static/{name}", static),
        Route(api, _answer(meta)),
        Route(api + "/points/{m}", _answer(points)),
        Route(api + "/clusters/{m}", _answer(clusters)),
        Route(api + "/labels", _answer(labels)),
        Route(api + "/sentence/{row}", _answer(sentence)),
        Route(api + "/selection", _answer(selection), methods=["POST"]),
        Route(api + "/export", _answer(export), methods=["POST"]),
        Route(api + "/shared/{a}/{b}", _answer(shared)),
        Route(api + "/working/{a}/{b}", _answer(working)),
        Route(api + "/disagree/{a}/{b}", _answer(disagree)),
    ]
