"""``python -m sbert_demo publish [--map ID] [--talk] --out FOLDER``: a corpus map and/or the talk as a static folder
(:mod:`sbert_demo.publish`).

The map is one the app or ``python -m sbert_demo map`` made (its id is in the map view's address,
``/atlas?map=ID``, and in ``map``'s output; ``--map latest`` takes the newest). The folder opens from any
static host: ``python -m http.server --directory FOLDER``, a Static Space (its README holds the front
matter), GitHub Pages.
"""

from __future__ import annotations

import argparse
import sys

from .output import progress_bar


def cmd_publish(args: argparse.Namespace) -> int:
    from ..atlas import compare
    from ..atlas.store import atlas_root, open_atlas
    from ..publish.site import publish_map

    chosen = args.map
    if chosen is None and not args.talk:
        raise ValueError("Name a map to publish (--map ID or --map latest), the talk (--talk), or both.")
    if chosen == "latest":
        found = sorted((p for p in atlas_root().glob("*/data/meta.json")), key=lambda p: p.stat().st_mtime)
        if not found:
            raise ValueError("No map was made on this machine yet: python -m sbert_demo map --models A,B first.")
        chosen = found[-1].parent.parent.name
    atlas = open_atlas(chosen) if chosen is not None else None
    what = [f"{atlas.meta['name']} ({atlas.n:,} sentences, {len(atlas.models)} map(s))"] if atlas is not None else []
    print(f"Publishing {' and '.join(what + ['the talk'] * args.talk)} into {args.out}", file=sys.stderr)
    if atlas is not None and not compare.compared(atlas):
        print(f"Comparing its {len(atlas.models)} models first (each sentence's {compare.K} nearest neighbours under "
              "each, kept with the map; 'map --compare' does this when the map is made)", file=sys.stderr)
    with progress_bar("publishing") as progress:
        site = publish_map(atlas, args.out, app_url=args.app_url, search=args.search, talk=args.talk,
                           progress=progress, site_url=args.site_url)
    print(site.describe())
    print(f"Try it: python -m http.server --directory {site.folder} 8000, then open http://127.0.0.1:8000/ "
          "(docs/publish.md: a free Static Space)", file=sys.stderr)
    return 0


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``publish`` to ``python -m sbert_demo``."""
    parser = commands.add_parser("publish", help="write a corpus map as a static folder (a free Static Space, "
                                                 "GitHub Pages, any web server): map view and search in the page")
    parser.add_argument("--map", help="the map's id (in the map view's address) or 'latest'")
    parser.add_argument("--talk", action="store_true",
                        help="add the talk (talk/): the presenter view's steps, computed here (as prepare does)")
    parser.add_argument("--out", required=True, help="the folder to write (new, empty, or published before)")
    parser.add_argument("--app-url", help="the app's address, linked from the page's title bar")
    parser.add_argument("--site-url", help="the address the folder will be served from: the talk's QR code is drawn "
                                           "here from it where npm cannot give the page its QR code generator")
    parser.add_argument("--no-search", dest="search", action="store_false",
                        help="leave out search by meaning (the static model's table and the corpus's vectors)")
    parser.set_defaults(run=cmd_publish)
