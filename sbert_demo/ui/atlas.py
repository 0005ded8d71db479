"""The map view in the app: its page and a map's folder served as files, and the one thing that needs the server.

* ``/atlas/?map=<id>`` — the page (:mod:`sbert_demo.atlas.page`; ``/atlas?map=`` is sent there), its scripts
  beside it (``/atlas/atlas.js`` ...);
* ``/atlas/data/<id>/...`` — the map's folder (:mod:`sbert_demo.atlas.store`) as static files (ETags, ranges),
  the same files a published folder holds: the page computes what it shows from them;
* ``POST /atlas/api/<id>/compare/<a>/<b>`` — writes the comparison of two models (shared neighbours and where they
  disagree) into the folder, and ``GET /atlas/api/<id>/working/<a>/<b>`` says how far it is (its step, share and
  time left), which the page asks every second meanwhile;
* ``POST /atlas/api/<id>/agreement`` — writes how each model's neighbours agree with the corpus's category
  columns (:mod:`sbert_demo.atlas.agreement`) into the folder, once.

Failures answer ``{"error": sentence}`` with status 400 (the user's doing) or 500 (logged).
"""

from __future__ import annotations

import json
import os

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..atlas import compare
from ..atlas.agreement import agreement_all
from ..atlas.page import ASSETS, MAP_PAGE, TYPES
from ..atlas.store import ID, atlas_root, open_atlas
from .answers import json_route


class MapFiles(StaticFiles):
    """``<id>/<path>`` served from ``<cache>/corpora/atlas/<id>/data/<path>``: a map's page files, nothing beside
    them (the server's own files of a map, other folders of the cache)."""

    def __init__(self) -> None:
        super().__init__(directory=None, check_dir=False)

    def lookup_path(self, path: str) -> tuple[str, os.stat_result | None]:
        atlas_id, _, rest = path.replace("\\", "/").partition("/")
        if not ID.match(atlas_id) or not rest:
            return "", None
        folder = os.path.realpath(atlas_root() / atlas_id / "data")  # asked each time: the cache folder may change
        found = os.path.realpath(os.path.join(folder, rest))
        if os.path.commonpath([found, folder]) != folder:  # a link out of the map's folder
            return "", None
        try:
            return found, os.stat(found)
        except (FileNotFoundError, NotADirectoryError):
            return "", None

    def file_response(self, full_path, stat_result, scope, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Cache-Control"] = "no-cache"  # asked again with its ETag: a 304 when it is the same
        return response


def page(request: Request) -> Response:
    return Response((ASSETS / "atlas.html").read_bytes(), media_type=TYPES["html"])


def moved(request: Request) -> Response:
    """``/atlas?map=<id>`` (links made before the page moved) to ``/atlas/?map=<id>``, where its files are beside it."""
    query = f"?{request.url.query}" if request.url.query else ""
    return RedirectResponse(f"/atlas/{query}", status_code=308)


def asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in MAP_PAGE:
        return JSONResponse({"error": "Not found"}, status_code=404)
    return Response((ASSETS / name).read_bytes(), media_type=TYPES[name.rpartition(".")[2]])


def _pair(request: Request):
    atlas = open_atlas(request.path_params["id"])
    return atlas, request.path_params["a"], request.path_params["b"]


def compared(request: Request) -> dict:
    """Compares two models of the map (computed once, then kept): their shared neighbours' mean."""
    atlas, a, b = _pair(request)
    counts = compare.shared(atlas, a, b)
    return {"mean_shared": round(float(counts.mean()) / compare.K, 4)}


def agreed(request: Request) -> dict:
    """How each model of the map agrees with its category columns (computed once, then kept beside the map)."""
    atlas = open_atlas(request.path_params["id"])
    if not any(about["kind"] == "category" for about in atlas.meta.get("fields", [])):
        raise ValueError("This map's corpus has no category column to compare its models with.")
    kept = atlas.data / "agreement.json"
    with compare.computing.hold(kept):
        return json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else agreement_all(atlas)


def working(request: Request) -> dict | None:
    """How far the shared neighbours of two models are: {fraction, what, left} or null when none computes."""
    return compare.progress_of(*_pair(request))


def routes() -> list:
    """The map view's routes, for ``launch(app_kwargs={"routes": routes()})``."""
    api = "/atlas/api/{id}"
    return [
        Route("/atlas", moved), Route("/atlas/", page),
        Mount("/atlas/data", MapFiles()),
        Route(api + "/compare/{a}/{b}", json_route(compared, "the map view"), methods=["POST"]),
        Route(api + "/working/{a}/{b}", json_route(working, "the map view")),
        Route(api + "/agreement", json_route(agreed, "the map view"), methods=["POST"]),
        Route("/atlas/{name}", asset),
    ]
