"""Plotly figures for the app: pure functions from arrays and labels to figures.

Plotly renders a subset of HTML (``<b>``, ``<a href>``, ``<br>`` ...) in hover text, tick labels,
titles, legends and annotations, so every string that may come from a user goes through
:func:`_esc` (or :func:`_wrap`, which escapes) before it reaches a figure, and user text only ever
fills ``%{...}`` slots of a fixed hovertemplate, never the template itself.

Example::

    >>> import numpy as np
    >>> fig = heatmap(np.eye(2), ["A <b>cat</b>.", "A dog."], "MiniLM")
    >>> fig.layout.yaxis.ticktext[0]
    '1. A &lt;b&gt;cat&lt;/b&gt;.'
"""

from __future__ import annotations

import html
import logging
import math
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

logger = logging.getLogger(__name__)

PAPER_STSB_TEST: dict[str, float] = {
    "Avg. GloVe (paper)": 58.02,
    "Avg. BERT (paper)": 46.35,
    "BERT CLS (paper)": 16.50,
    "SBERT-NLI-base (paper)": 77.03,
}
# Okabe-Ito colours: distinguishable with colour-blindness and on a white background.
FAMILY_COLORS: dict[str, str] = {"naive": "#E69F00", "siamese": "#0072B2", "fine-tuned": "#009E73"}
CATEGORY_COLORS = qualitative.Plotly + qualitative.Dark24
NOISE_COLOR = "#BBBBBB"
FONT = dict(family="Inter, 'Helvetica Neue', Arial, sans-serif", size=12, color="#222")
HEIGHT = 480
HEATMAP_TEXT_MAX_N = 15  # larger matrices get too crowded to print values in the cells
HEATMAP_TICKS_MAX_N = 60  # beyond this the tick labels overlap; hover still identifies cells
SCATTERGL_MIN_N = 1000  # WebGL pays off only for many points


def _esc(text: object) -> str:
    # quote=False: Plotly decodes &amp; &lt; &gt; but not &quot;, and quotes are harmless once
    # no tag can be opened.
    return html.escape(str(text), quote=False)


def _short(text: object, limit: int = 28) -> str:
    """First ``limit`` characters on one line, with an ellipsis when cut; escaped."""
    flat = " ".join(str(text).split())
    return _esc(flat if len(flat) <= limit else flat[:limit].rstrip() + "…")


def _wrap(text: object, width: int = 60, limit: int = 400) -> str:
    """Hover text: at most ``limit`` characters, escaped, broken with <br> every ~width chars."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[:limit].rstrip() + "…"
    lines = textwrap.wrap(flat, width=width, break_on_hyphens=False) or [""]
    return "<br>".join(_esc(line) for line in lines)  # wrap first so no entity is split


def _style(fig: go.Figure, title: str, height: int = HEIGHT, subtitle: str | None = None) -> None:
    title_spec: dict = dict(text=_esc(title), x=0.01, xanchor="left", font=dict(size=15))
    if subtitle:
        title_spec["subtitle"] = dict(text=_esc(subtitle), font=dict(size=12, color="#555"))
    fig.update_layout(
        template="plotly_white",
        title=title_spec,
        height=height,
        font=FONT,
        margin=dict(l=60, r=30, t=80 if subtitle else 60, b=50),
        hoverlabel=dict(align="left", font_size=12),
    )


def _check_length(name: str, values: Sequence, n: int) -> None:
    if len(values) != n:
        raise ValueError(f"There are {len(values)} {name} for {n} items; give one per item.")


def shared_range(matrices: Sequence[np.ndarray]) -> tuple[float, float]:
    """A common colour range for several similarity matrices, so their colours compare.

    The lower end is the smallest off-diagonal value floored to a multiple of 0.1; the upper end
    is 1.0. Example: ``shared_range([m1, m2]) == (-0.1, 1.0)`` when the lowest cosine is -0.04.
    """
    if len(matrices) == 0:
        raise ValueError("Give at least one similarity matrix to compute a colour range.")
    lowest = math.inf
    for matrix in matrices:
        matrix = np.asarray(matrix, dtype=np.float64)
        off_diagonal = matrix[~np.eye(len(matrix), dtype=bool)]
        if off_diagonal.size:
            lowest = min(lowest, float(off_diagonal.min()))
    if lowest == math.inf:
        return 0.0, 1.0
    zmin = math.floor(round(lowest * 10, 6)) / 10  # round first: 0.3 * 10 is 3.0000000000000004
    return max(-1.0, min(zmin, 0.9)), 1.0


def heatmap(
    sim: np.ndarray,
    sentences: Sequence[str],
    title: str,
    zmin: float = -0.2,
    zmax: float = 1.0,
    order: Sequence[int] | None = None,
    groups: Sequence[str] | None = None,
) -> go.Figure:
    """Cosine-similarity heatmap; pass the same zmin/zmax (see :func:`shared_range`) to compare.

    ``order`` (from ``similarity.group_order``) permutes rows and columns; sentences keep their
    original number in the labels. Row labels show the start of each sentence, column labels only
    its number; hovering a cell shows both sentences and the score.
    """
    n = len(sentences)
    sim = np.asarray(sim)
    if sim.shape != (n, n):
        raise ValueError(f"The similarity matrix has shape {sim.shape} but there are {n} sentences.")
    order = list(range(n)) if order is None else [int(i) for i in order]
    if sorted(order) != list(range(n)):
        raise ValueError("The order must list every sentence number exactly once.")
    if groups is not None:
        _check_length("group labels", groups, n)
    if not zmin < zmax:
        raise ValueError(f"The colour range is empty: zmin={zmin} is not below zmax={zmax}.")
    # Categories carry the full (escaped) hover text, so the hover needs O(n) strings, not O(n^2).
    categories = [_cell_label(i, sentences[i], None if groups is None else groups[i]) for i in order]
    fig = go.Figure(
        go.Heatmap(
            z=sim[np.ix_(order, order)].astype(np.float32),
            x=categories,
            y=categories,
            zmin=zmin,
            zmax=zmax,
            colorscale="Viridis",
            colorbar=dict(title=dict(text="cosine"), thickness=12),
            texttemplate="%{z:.2f}" if n <= HEATMAP_TEXT_MAX_N else None,
            hovertemplate="%{y}<br><i>vs.</i><br>%{x}<br>cosine: <b>%{z:.3f}</b><extra></extra>",
        )
    )
    show_ticks = n <= HEATMAP_TICKS_MAX_N
    axis = dict(type="category", showgrid=False, constrain="domain", showticklabels=show_ticks)
    fig.update_xaxes(axis, tickmode="array", tickvals=categories, tickangle=0,
                     ticktext=[str(i + 1) for i in order])
    fig.update_yaxes(axis, tickmode="array", tickvals=categories, autorange="reversed",
                     scaleanchor="x", ticktext=[f"{i + 1}. {_short(sentences[i])}" for i in order])
    if groups is not None:
        _group_separators(fig, [groups[i] for i in order])
    _style(fig, title, height=520)
    return fig


def _cell_label(index: int, sentence: str, group: str | None) -> str:
    prefix = f"<b>{index + 1}.</b> " + (f"[{_esc(group)}] " if group is not None else "")
    return prefix + _wrap(sentence, limit=300)


def _group_separators(fig: go.Figure, ordered_groups: list[str]) -> None:
    """Thin white lines between consecutive groups, so blocks on the diagonal stand out."""
    n = len(ordered_groups)
    for b in range(1, n):
        if ordered_groups[b] != ordered_groups[b - 1]:
            line = dict(color="white", width=2)
            fig.add_shape(type="line", x0=b - 0.5, x1=b - 0.5, y0=-0.5, y1=n - 0.5, line=line)
            fig.add_shape(type="line", y0=b - 0.5, y1=b - 0.5, x0=-0.5, x1=n - 0.5, line=line)
