"""The look shared by every figure, and the escaping that keeps user text inert.

Plotly renders a subset of HTML (``<b>``, ``<a href>``, ``<br>`` ...) in hover text, tick labels,
titles, legends and annotations, so every string that may come from a user goes through
:func:`escape` (or :func:`wrap`, which escapes) before it reaches a figure, and user text only ever
fills ``%{...}`` slots of a fixed hovertemplate, never the template itself.
"""

from __future__ import annotations

import html
import logging
import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative, sequential

logger = logging.getLogger(__name__)

# The app's one palette, Okabe-Ito: distinguishable with colour-blindness and on a white background.
# Figures use it from here; the page gets it as CSS variables (:func:`palette_css`).
PALETTE: dict[str, str] = {"orange": "#E69F00", "blue": "#0072B2", "green": "#009E73", "vermillion": "#D55E00",
                           "magenta": "#D81B60", "purple": "#CC79A7", "sky": "#56B4E9", "grey": "#999999",
                           "light-grey": "#BBBBBB"}
FAMILY_COLORS: dict[str, str] = {"naive": PALETTE["orange"], "siamese": PALETTE["blue"],
                                 "fine-tuned": PALETTE["green"], "cross-encoder": PALETTE["purple"],
                                 "static": PALETTE["sky"]}
# What colours mean on the page: model families, better / worse, notes and job states.
PAGE_COLORS: dict[str, str] = {**FAMILY_COLORS, "other": "#777777", "up": PALETTE["green"],
                               "down": PALETTE["vermillion"], "info": PALETTE["blue"], "warning": PALETTE["orange"],
                               "error": PALETTE["vermillion"], "ok": PALETTE["green"]}


CATEGORY_COLORS = qualitative.Plotly + qualitative.Dark24


NOISE_COLOR = PALETTE["light-grey"]


# The trace types this app draws, and plotly_white's parts that none of them reads (3-D, polar, ternary
# and map axes; the colour axis and layout colour scales: every colour scale is set on its trace).
TRACE_TYPES = ("bar", "heatmap", "histogram", "scatter", "scattergl")
UNUSED_LAYOUT = ("polar", "ternary", "scene", "geo", "coloraxis", "colorscale")


def lean_template(name: str = "plotly_white") -> go.layout.Template:
    """``name`` with only what this app's figures read. A figure's JSON carries its whole template:
    plotly_white's 7.1 KB, nine times in an Explore answer (64 of its 148 KB, serialised by the server
    and parsed by every browser); this one is 1.6 KB and draws the same figures."""
    full = pio.templates[name].to_plotly_json()
    return go.layout.Template(layout={k: v for k, v in full["layout"].items() if k not in UNUSED_LAYOUT},
                              data={k: v for k, v in full["data"].items() if k in TRACE_TYPES})


# Every figure starts from it. As the default template it is attached to each new figure as it is; set
# with update_layout(template=...) it was deep-copied and validated for every figure, a third of the
# time it took to draw one (30 of 90 ms for a heatmap, nine figures an Explore request).
pio.templates["sbert_demo"] = lean_template()
pio.templates.default = "sbert_demo"


FONT = dict(family="Inter, 'Helvetica Neue', Arial, sans-serif", size=12, color="#222")


HEIGHT = 480


SCATTERGL_MIN_N = 1000  # WebGL pays off only for many points


def palette_css() -> str:
    """The palette as CSS variables (``--sd-naive``, ``--sd-up`` ...) for the page's stylesheet.

    >>> palette_css().splitlines()[1]
    '  --sd-naive: #E69F00;'
    """
    lines = "".join(f"  --sd-{name}: {colour};\n" for name, colour in PAGE_COLORS.items())
    return f":root {{\n{lines}}}\n"


def escape(text: object) -> str:
    # quote=False: Plotly decodes &amp; &lt; &gt; but not &quot;, and quotes are harmless once
    # no tag can be opened.
    return html.escape(str(text), quote=False)


def shorten(text: object, limit: int = 28) -> str:
    """First ``limit`` characters on one line, with an ellipsis when cut; escaped."""
    flat = " ".join(str(text).split())
    return escape(flat if len(flat) <= limit else flat[:limit].rstrip() + "…")


def wrap(text: object, width: int = 60, limit: int = 400) -> str:
    """Hover text: at most ``limit`` characters, escaped, broken with <br> every ~width chars."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[:limit].rstrip() + "…"
    lines = textwrap.wrap(flat, width=width, break_on_hyphens=False) or [""]
    return "<br>".join(escape(line) for line in lines)  # wrap first so no entity is split


def score_text(value: float) -> str:
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def style(title: str, height: int = HEIGHT, subtitle: str | None = None) -> dict:
    """The layout every figure shares (title, size, font, margins, hover labels), as a dict to build a
    figure with: one ``go.Figure(data, layout)`` validates once, where each ``update_*`` call validates
    again (a 20-sentence heatmap: 3 ms built in one go, 21 ms in seven updates)."""
    title_spec: dict = dict(text=escape(title), x=0.01, xanchor="left", font=dict(size=15))
    if subtitle:
        title_spec["subtitle"] = dict(text=escape(subtitle), font=dict(size=12, color="#555"))
    return dict(title=title_spec, height=height, font=FONT, margin=dict(l=60, r=30, t=80 if subtitle else 60, b=50),
                hoverlabel=dict(align="left", font=dict(size=12)))


# Viridis as plotly expands its name for a validated trace (ten even stops): a trusted figure below
# sends the same stops instead of the name, which plotly.js would expand to slightly different ones.
VIRIDIS = [[i / 9, color] for i, color in enumerate(sequential.Viridis)]


def trusted_figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from trace and layout dicts that this app writes in plotly's own validated form, built
    without validating them again (plotly's private ``_validate=False``: checking each property costs
    three times the building; 20-sentence Explore figures, heatmap + ranking + map: 6.8 -> 2.3-4.5 ms a
    model). ``tests/test_plots.py`` checks that each such figure's JSON is what validation makes of it,
    so a property plotly would rename, expand or refuse fails there instead of reaching a page."""
    return go.Figure(data, layout, _validate=False)


def apply_style(fig: go.Figure, title: str, height: int = HEIGHT, subtitle: str | None = None) -> None:
    fig.update_layout(**style(title, height, subtitle))


def check_length(name: str, values: Sequence, n: int) -> None:
    if len(values) != n:
        raise ValueError(f"There are {len(values)} {name} for {n} items; give one per item.")


def sized(fig: go.Figure, size: int, title_size: int | None = None) -> go.Figure:
    """Every text of ``fig`` in ``size`` px (titles in ``title_size``): axes, ticks, legend, colour bars,
    annotations (subplot titles and labels included), cell and bar numbers. A figure made for a page
    carries 10-12 px labels; on a projector everything must read from the back of the room (18 px),
    on a phone everything must fit (12 px). Returns ``fig``, changed in place.

    >>> fig = sized(go.Figure(go.Heatmap(z=[[1]], texttemplate="%{z}")).add_annotation(text="a"), 18)
    >>> fig.layout.annotations[0].font.size, fig.data[0].textfont.size
    (18, 18)
    """
    title_size = title_size or size + 4
    fig.update_layout(font=dict(size=size), legend=dict(font=dict(size=size)),
                      hoverlabel=dict(font=dict(size=max(12, size - 2))))
    if fig.layout.title.text:
        fig.update_layout(title_font=dict(size=title_size))
        if fig.layout.title.subtitle.text:
            fig.layout.title.subtitle.font.size = size
    fig.update_annotations(font_size=size)
    fig.for_each_xaxis(lambda axis: axis.update(tickfont_size=size, title_font_size=size))
    fig.for_each_yaxis(lambda axis: axis.update(tickfont_size=size, title_font_size=size))
    for trace in fig.data:
        if trace.type in ("heatmap", "bar", "scatter", "scattergl") and "textfont" in trace:
            trace.textfont.size = size
        if trace.type == "heatmap" and trace.colorbar is not None:
            trace.colorbar.tickfont.size = size
            # along the bar: above it, a title in large type runs into the top tick
            trace.colorbar.title.update(font_size=size, side="right",
                                        text=(trace.colorbar.title.text or "").replace("<br>", " "))
    return fig
