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
  ``/disagree/<a>/<b>`` the sentences they disagree on most.

Failures answer ``{"error": sentence}`` with status 400 (the user's doing) or 500 (logged).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import numpy as np
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..atlas import compare
from ..atlas.store import open_atlas
from .common import UNEXPECTED
from .page_assets import ASSETS, asset

logger = logging.getLogger(__name__)
MAX_BODY = 64 * 1024 * 1024  # a million int32 sentence numbers, with room
STATIC = {"atlas.js": "text/javascript", "atlas.css": "text/css"}


def _answer(work: Callable[[Request], Response]) -> Callable:
    async def endpoint(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        try:
            return await run_in_threadpool(work, request, await _rows_in(request))
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except Exception as exc:  # noqa: BLE001 - logged; the page gets a sentence
            logger.exception("Unexpected error in the map view", exc_info=exc)
            return JSONResponse({"error": UNEXPECTED.format(kind=type(exc).__name__)}, status_code=500)

    return endpoint


async def _rows_in(request: Request) -> np.ndarray | None:
    if request.method != "POST":
        return None
    body = await request.body()
    if len(body) > MAX_BODY:
        raise ValueError("That selection is too large to send; select fewer sentences.")
    if request.headers.get("content-type", "").startswith("application/octet-stream"):
        if len(body) % 4:
            raise ValueError("A binary selection is int32 sentence numbers (4 bytes each).")
        return np.frombuffer(body, dtype="<i4")
    try:
        rows = json.loads(body or b"{}").get("rows", [])
    except (ValueError, AttributeError):
        raise ValueError('Send the selection as JSON, {"rows": [0, 5, 9]}, or as int32 bytes.') from None
    if not isinstance(rows, list) or not all(isinstance(r, int) and not isinstance(r, bool) for r in rows):
        raise ValueError("A selection is a list of sentence numbers (whole numbers from 0).")
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
    name = "".join(c if c.isalnum() else "-" for c in atlas.meta["name"])[:60] or "corpus"
    return Response(atlas.csv(rows), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}-selection.csv"'})


def shared(request: Request, _rows) -> Response:
    return _binary(compare.shared(_atlas(request), request.path_params["a"], request.path_params["b"]))


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
        Route(api + "/disagree/{a}/{b}", _answer(disagree)),
    ]
