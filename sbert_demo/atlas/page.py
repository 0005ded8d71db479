"""The map view's page: one set of files (``atlas/assets/``) that the app serves beside a map's folder and that
``publish`` copies beside its copy of that folder, so both read the same files the same way.

* ``atlas.html`` / ``atlas.css`` / ``atlas.js`` — the page: WebGL maps, lasso, side panel;
* ``atlas_data.js`` — what the page computes from a map's files: a selection's table, counts per cluster, the
  word filter, the CSV (the only implementation);
* ``atlas_search.js`` — search by meaning in the page, where the folder holds a model's search files;
* ``playground.*`` — sentences typed by a visitor, compared under the map's models in the page (published).

The page finds its map's folder at ``data/<id>/`` beside it when the address names a map (the app, which
serves the folder at ``/atlas/data/<id>/``), else at ``data/`` (a published folder).
"""

from __future__ import annotations

import shutil
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
MAP_PAGE = ("atlas.html", "atlas.css", "atlas.js", "atlas_data.js", "atlas_facets.js", "atlas_agreement.js",
            "atlas_search.js")
PLAYGROUND = ("playground.html", "playground.js", "playground.css")
TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}


def copy_page(into: Path, playground: bool = False) -> None:
    """The page's files into ``into`` (``atlas.html`` as ``index.html``), with the playground's when asked."""
    for name in MAP_PAGE + PLAYGROUND * playground:
        shutil.copyfile(ASSETS / name, into / ("index.html" if name == "atlas.html" else name))
