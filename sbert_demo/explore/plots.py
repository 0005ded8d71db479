"""Figures of the Explore tab: pure functions from arrays and labels to Plotly figures.

User text is escaped by :mod:`sbert_demo.plot_style` before it reaches a figure.

Example::

    >>> import numpy as np
    >>> fig = heatmap(np.eye(2), ["A <b>cat</b>.", "A dog."], "MiniLM")
    >>> fig.layout.yaxis.ticktext[0]
    '1. A &lt;b&gt;cat&lt;/b&gt;.'
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ..plot_style import (
    CATEGORY_COLORS,
    FAMILY_COLORS,
    NOISE_COLOR,
    SCATTERGL_MIN_N,
    apply_style,
    check_length,
    escape,
    score_text,
    shorten,
    wrap,
)

logger = logging.getLogger(__name__)

HEATMAP_TEXT_MAX_N = 15  # larger matrices get too crowded to print values in the cells


HEATMAP_TICKS_MAX_N = 60  # beyond this the tick labels overlap; hover still identifies cells


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
        raise ValueError(f"The similarity matrix is {sim.shape} but there are {n} sentences.")
    order = list(range(n)) if order is None else [int(i) for i in order]
    if sorted(order) != list(range(n)):
        raise ValueError("The order must list every sentence number exactly once.")
    if groups is not None:
        check_length("group labels", groups, n)
    if not zmin < zmax:
        raise ValueError(f"The colour range is empty: zmin={zmin} is not below zmax={zmax}.")
    # Categories carry the full (escaped) hover text, so the hover needs O(n) strings, not O(n^2).
    categories = [_cell_label(i, sentences[i], groups[i] if groups else None) for i in order]
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
                     scaleanchor="x", ticktext=[f"{i + 1}. {shorten(sentences[i])}" for i in order])
    if groups is not None:
        _group_separators(fig, [groups[i] for i in order])
    apply_style(fig, title, height=520)
    return fig


def _cell_label(index: int, sentence: str, group: str | None) -> str:
    prefix = f"<b>{index + 1}.</b> " + (f"[{escape(group)}] " if group is not None else "")
    return prefix + wrap(sentence, limit=300)


def _group_separators(fig: go.Figure, ordered_groups: list[str]) -> None:
    """Thin white lines between consecutive groups, so blocks on the diagonal stand out."""
    n = len(ordered_groups)
    for b in range(1, n):
        if ordered_groups[b] != ordered_groups[b - 1]:
            line = dict(color="white", width=2)
            fig.add_shape(type="line", x0=b - 0.5, x1=b - 0.5, y0=-0.5, y1=n - 0.5, line=line)
            fig.add_shape(type="line", y0=b - 0.5, y1=b - 0.5, x0=-0.5, x1=n - 0.5, line=line)


def ranking_bars(
    query: str, sentences: Sequence[str], scores: Sequence[float], title: str
) -> go.Figure:
    """Horizontal bars of cosine similarity to ``query``, most similar on top."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    check_length("scores", scores, len(sentences))
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    positions = list(range(len(ranked)))
    fig = go.Figure(
        go.Bar(
            x=scores[ranked],
            y=positions,
            orientation="h",
            marker_color=FAMILY_COLORS["siamese"],
            text=[score_text(scores[i]) for i in ranked],
            textposition="auto",
            customdata=[wrap(sentences[i]) for i in ranked],
            hovertemplate="%{customdata}<br>cosine: <b>%{x:.3f}</b><extra></extra>",
        )
    )
    low = min(0.0, math.floor(float(scores.min()) * 10) / 10) if len(scores) else 0.0
    fig.update_xaxes(range=[low, 1.0], title_text="cosine similarity to the query")
    fig.update_yaxes(
        tickmode="array",
        tickvals=positions,
        ticktext=[shorten(sentences[i], 40) for i in ranked],
        autorange="reversed",
        automargin=True,
    )
    height = max(420, min(1200, 120 + 26 * len(ranked)))
    apply_style(fig, title, height=height, subtitle=f"Query: {' '.join(str(query).split())[:120]}")
    return fig


def _category_names(labels: Sequence) -> tuple[list, dict]:
    """Distinct labels in display order and their legend names.

    Integer labels (clusters) sort numerically with -1 shown as noise; text labels (groups) keep
    their order of first appearance, so the same groups get the same colours in every figure.
    """
    if all(isinstance(label, (int, np.integer)) for label in labels):
        distinct = sorted(set(int(label) for label in labels))
        return distinct, {c: "noise" if c == -1 else f"cluster {c}" for c in distinct}
    distinct = list(dict.fromkeys(str(label) for label in labels))
    return distinct, {c: escape(c) for c in distinct}


def scatter_map(
    coords: np.ndarray,
    sentences: Sequence[str],
    color_labels: Sequence[str] | Sequence[int] | None,
    title: str,
    note: str | None = None,
) -> go.Figure:
    """2-D map of sentences, one colour per group or cluster; hover shows the sentence."""
    coords = np.asarray(coords, dtype=np.float64)
    n = len(sentences)
    if coords.shape != (n, 2):
        raise ValueError(f"The coordinates have shape {coords.shape} but there are {n} sentences.")
    labels = ["all"] * n if color_labels is None else list(color_labels)
    check_length("colour labels", labels, n)
    distinct, names = _category_names(labels)
    numeric = bool(distinct) and isinstance(distinct[0], int)
    keys = [int(x) for x in labels] if numeric else [str(x) for x in labels]
    trace_type = go.Scattergl if n > SCATTERGL_MIN_N else go.Scatter
    fig = go.Figure()
    for position, category in enumerate(distinct):
        members = [i for i in range(n) if keys[i] == category]
        color = NOISE_COLOR if category == -1 else CATEGORY_COLORS[position % len(CATEGORY_COLORS)]
        fig.add_trace(
            trace_type(
                x=coords[members, 0],
                y=coords[members, 1],
                mode="markers",
                name=names[category],
                marker=dict(size=9, color=color, opacity=0.85, line=dict(width=0.5, color="white")),
                customdata=[[wrap(sentences[i]), names[category]] for i in members],
                hovertemplate="%{customdata[0]}<br><i>%{customdata[1]}</i><extra></extra>",
            )
        )
    fig.update_xaxes(showticklabels=False, zeroline=False, showgrid=False)
    fig.update_yaxes(showticklabels=False, zeroline=False, showgrid=False)
    fig.update_layout(showlegend=color_labels is not None, legend=dict(itemsizing="constant"))
    apply_style(fig, title, subtitle=note)
    return fig
