"""The page's stylesheet, script and fixed HTML, kept as files in ``ui/assets/`` and read once.

* ``app.css`` — every style of the app, colours from the palette's CSS variables, which
  :func:`stylesheet_head` writes from :data:`sbert_demo.plot_style.PAGE_COLORS` (the one source);
* ``page.js`` — run once on load: the presenter view's keys, the SVG button of every figure;
* ``copy_link.js`` — the Copy link button's client side;
* ``header.html`` / ``footer.html`` — the page's fixed text.

They reach the page through Gradio's own parameters (``launch(css=..., css_paths=..., js=...)``).
"""

from __future__ import annotations

from pathlib import Path

from ..plot_style import palette_css
from ..shared import memoize

ASSETS = Path(__file__).resolve().parent / "assets"
STYLESHEET = ASSETS / "app.css"


@memoize(maxsize=8)
def asset(name: str) -> str:
    """The text of ``ui/assets/<name>``."""
    return (ASSETS / name).read_text(encoding="utf-8")


def launch_assets() -> dict:
    """``Blocks.launch`` keyword arguments that put the stylesheet and the page script on the page."""
    return {"css": palette_css(), "css_paths": [STYLESHEET], "js": asset("page.js")}
