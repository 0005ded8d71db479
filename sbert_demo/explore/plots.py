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
from collections import Counter
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ..plot_style import (
    CATEGORY_COLORS,
    FAMILY_COLORS,
    NOISE_COLOR,
    PALETTE,
    SCATTERGL_MIN_N,
    VIRIDIS,
    apply_style,
    style,
    check_length,
    escape,
    score_text,
    shorten,
    trusted_figure,
    wrap,
)
from ..shared import memoize

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
    column: bool = False,
) -> go.Figure:
    """Cosine-similarity heatmap; pass the same zmin/zmax (see :func:`shared_range`) to compare.

    ``order`` (from ``similarity.group_order``) permutes rows and columns; sentences keep their
    original number in the labels. Row labels show the start of each sentence, column labels only
    its number; hovering a cell shows both sentences and the score. ``column=True`` fits a narrow
    column of models side by side: the cells fill the plot instead of staying square, and what cannot
    be read at that size is dropped (hover still names both sentences of every cell).
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
    trace = dict(z=sim[np.ix_(order, order)].astype(np.float32), x=categories, y=categories, zmin=zmin, zmax=zmax,
                 colorscale=VIRIDIS, colorbar=dict(title=dict(text="cosine", side="right"), thickness=12),
                 texttemplate="%{z:.2f}" if n <= HEATMAP_TEXT_MAX_N else None,
                 hovertemplate="%{y}<br><i>vs.</i><br>%{x}<br>cosine: <b>%{z:.3f}</b><extra></extra>")
    axis = dict(type="category", showgrid=False, constrain="domain", showticklabels=n <= HEATMAP_TICKS_MAX_N,
                tickmode="array", tickvals=categories)
    xaxis = dict(axis, tickangle=0, ticktext=[str(i + 1) for i in order])
    yaxis = dict(axis, autorange="reversed", scaleanchor="x", ticktext=[f"{i + 1}. {shorten(sentences[i])}" for i in order])
    layout = style(title, height=520)
    if column:
        del yaxis["scaleanchor"]
        trace.update(colorbar=dict(thickness=10, title=dict(text="cosine", side="right")),
                     textfont=dict(size=10 if n > 8 else 12))
        if n > HEATMAP_TEXT_MAX_N:
            yaxis.update(tickfont=dict(size=10), automargin=True)
            xaxis["showticklabels"] = False
        layout["margin"] = dict(l=10, r=10, t=60, b=30)
    shapes = [] if groups is None else _group_separators([groups[i] for i in order])
    layout = dict(layout, xaxis=xaxis, yaxis=yaxis, **({"shapes": shapes} if shapes else {}))
    return trusted_figure([dict(type="heatmap", **trace)], layout)


def label_blocks(fig: go.Figure, groups: Sequence[str]) -> go.Figure:
    """One tick per block of equal groups (at its middle) instead of one per sentence, and none on
    the x axis: a heatmap read from the back of a room, where 24 sentence labels would overlap.
    ``groups`` in the heatmap's row order; hovering a cell still names both sentences.

    >>> import numpy as np
    >>> fig = label_blocks(heatmap(np.eye(4), list("abcd"), "t", groups=["x", "x", "y", "y"]), ["x", "x", "y", "y"])
    >>> list(fig.layout.yaxis.ticktext), fig.layout.xaxis.showticklabels
    (['x', 'y'], False)
    """
    heatmap_trace = fig.data[0]
    check_length("group labels", groups, len(heatmap_trace.y))
    starts = [i for i in range(len(groups)) if i == 0 or groups[i] != groups[i - 1]]
    ends = starts[1:] + [len(groups)]
    middles = [heatmap_trace.y[(start + end - 1) // 2] for start, end in zip(starts, ends)]
    fig.update_yaxes(tickmode="array", tickvals=middles, ticktext=[escape(shorten(groups[i], 24)) for i in starts])
    fig.update_xaxes(showticklabels=False)
    return fig


def _cell_label(index: int, sentence: str, group: str | None) -> str:
    prefix = f"<b>{index + 1}.</b> " + (f"[{escape(group)}] " if group is not None else "")
    return prefix + wrap(sentence, limit=300)


def _group_separators(ordered_groups: list[str]) -> list[dict]:
    """Thin white lines between consecutive groups, so blocks on the diagonal stand out."""
    n = len(ordered_groups)
    line = dict(color="white", width=2)
    shapes = []
    for b in range(1, n):
        if ordered_groups[b] != ordered_groups[b - 1]:
            shapes.append(dict(type="line", x0=b - 0.5, x1=b - 0.5, y0=-0.5, y1=n - 0.5, line=line))
            shapes.append(dict(type="line", y0=b - 0.5, y1=b - 0.5, x0=-0.5, x1=n - 0.5, line=line))
    return shapes


RANKING_SHOWN = 15  # bars in view; the rest are a drag (or the zoom-out button) away


def ranking_bars(
    query: str, sentences: Sequence[str], scores: Sequence[float], title: str, labels_outside: bool = False
) -> go.Figure:
    """Horizontal bars of cosine similarity to ``query``, most similar on top.

    With more than :data:`RANKING_SHOWN` sentences the top ones are in view and the axis pans to
    the rest (drag up or down; double-click shows all), so 480 sentences never become a smear.
    Values below zero get room on the left so their labels stay off the sentence labels.
    ``labels_outside``: each score just past the end of its bar, with room kept for it ("auto" can
    put the text of short or negative bars on top of the sentence labels).
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    check_length("scores", scores, len(sentences))
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    positions = list(range(len(ranked)))
    negative = bool(len(scores)) and float(scores.min()) < 0
    low = min(0.0, math.floor(float(scores.min()) * 10) / 10) if len(scores) else 0.0
    if negative:
        low -= 0.15  # room for a negative bar's label between the bar and the axis
    bars = dict(x=scores[ranked], y=positions, orientation="h", marker_color=FAMILY_COLORS["siamese"],
                text=[score_text(scores[i]) for i in ranked], textposition="auto",
                customdata=[wrap(sentences[i]) for i in ranked],
                hovertemplate="%{customdata}<br>cosine: <b>%{x:.3f}</b><extra></extra>")
    xaxis = dict(range=[low, 1.0], title=dict(text="cosine to the query"))
    if labels_outside:
        bars.update(textposition="outside", cliponaxis=False)
        xaxis["range"] = [low - (0.15 if negative else 0), 1.0 + 0.12]
    yaxis = dict(tickmode="array", tickvals=positions, ticktext=[shorten(sentences[i], 40) for i in ranked],
                 autorange="reversed", automargin=True)
    subtitle = f"Query: {' '.join(str(query).split())[:120]}"
    extra = {}
    if len(ranked) > RANKING_SHOWN:
        # Reversed axis: the first bar at the top. Dragging pans along y only.
        yaxis.update(autorange=False, range=[RANKING_SHOWN - 0.5, -0.5])
        xaxis["fixedrange"] = True
        extra["dragmode"] = "pan"
        subtitle += f" · top {RANKING_SHOWN} of {len(ranked)}: drag to see the rest"
    height = max(420, min(1200, 120 + 26 * min(len(ranked), RANKING_SHOWN)))
    return trusted_figure([dict(type="bar", **bars)], dict(style(title, height=height, subtitle=subtitle), xaxis=xaxis,
                                                  yaxis=yaxis, **extra))


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
    trace_type = "scattergl" if n > SCATTERGL_MIN_N else "scatter"
    traces = []  # as dicts: the figure validates them once (trace objects would be validated, then copied)
    for position, category in enumerate(distinct):
        members = [i for i in range(n) if keys[i] == category]
        color = NOISE_COLOR if category == -1 else CATEGORY_COLORS[position % len(CATEGORY_COLORS)]
        traces.append(
            dict(
                type=trace_type,
                x=coords[members, 0],
                y=coords[members, 1],
                mode="markers",
                name=names[category],
                marker=dict(size=9, color=color, opacity=0.85, line=dict(width=0.5, color="white")),
                customdata=[[wrap(sentences[i]), names[category]] for i in members],
                hovertemplate="%{customdata[0]}<br><i>%{customdata[1]}</i><extra></extra>",
            )
        )
    bare = dict(showticklabels=False, zeroline=False, showgrid=False)
    return trusted_figure(traces, dict(style(title, subtitle=note), xaxis=bare, yaxis=bare,
                                         showlegend=color_labels is not None, legend=dict(itemsizing="constant")))


MAX_CATEGORIES = 24  # more colours than this cannot be told apart; the rest become "other"
OTHER = "other"
OTHER_COLOR = PALETTE["grey"]


def corpus_scatter(
    coords: np.ndarray,
    sentences: Sequence[str],
    labels: Sequence[str] | Sequence[int],
    title: str,
    words: dict | None = None,
    highlight: Sequence[int] | None = None,
    highlight_name: str = "matches",
    subtitle: str | None = None,
) -> go.Figure:
    """A WebGL map of a corpus: one colour per label or cluster (the ``MAX_CATEGORIES - 1`` largest,
    the rest "other"), each named in the legend and on the map by its most distinctive ``words``;
    ``highlight`` (search matches) are drawn on top and the rest faded. Hover shows the sentence."""
    coords = np.asarray(coords, dtype=np.float64)
    n = len(sentences)
    if coords.shape != (n, 2):
        raise ValueError(f"The coordinates have shape {coords.shape} but there are {n} sentences.")
    check_length("labels", labels, n)
    words = words or {}
    numeric = all(isinstance(label, (int, np.integer)) for label in labels)
    keys = [int(label) if numeric else str(label) for label in labels]
    sizes = Counter(keys)
    ordered = sorted(sizes, key=lambda c: (-sizes[c], c)) if not numeric else sorted(sizes, key=lambda c: (c == -1, c))
    shown = ordered if len(ordered) <= MAX_CATEGORIES else ordered[:MAX_CATEGORIES - 1]
    colour_of = {c: (NOISE_COLOR if c == -1 else CATEGORY_COLORS[i % len(CATEGORY_COLORS)])
                 for i, c in enumerate(shown)}
    members: dict = {c: [] for c in shown}
    rest: list[int] = []
    for i, key in enumerate(keys):
        (members[key] if key in members else rest).append(i)
    hover = _hover_texts(tuple(sentences))
    faded = highlight is not None
    size = 4 if n > 5000 else 6 if n > 1000 else 8
    fig = go.Figure()
    groups = [(c, members[c]) for c in shown] + ([(OTHER, rest)] if rest else [])
    for category, index in groups:
        name = _category_name(category, numeric, words, len(index))
        colour = OTHER_COLOR if category == OTHER else colour_of[category]
        fig.add_trace(go.Scattergl(
            x=coords[index, 0], y=coords[index, 1], mode="markers", name=name,
            marker=dict(size=size, color=colour, opacity=0.15 if faded else 0.7),
            customdata=[[hover[i], escape(category if category != OTHER else keys[i])] for i in index],
            hovertemplate="%{customdata[0]}<br><i>%{customdata[1]}</i><extra></extra>",
        ))
    if highlight is not None:
        index = np.unique(np.asarray(list(highlight), dtype=np.int64))  # in order, each once
        fig.add_trace(go.Scattergl(
            x=coords[index, 0], y=coords[index, 1], mode="markers", name=escape(highlight_name),
            marker=dict(size=size + 5, color=PALETTE["magenta"], opacity=0.95, line=dict(width=1, color="black")),
            customdata=[[hover[i], escape(keys[i])] for i in index],
            hovertemplate="%{customdata[0]}<br><i>%{customdata[1]}</i><extra></extra>",
        ))
    for category in shown if numeric else ():  # clusters are compact on the map; given labels may be spread
        index = members[category]
        if category == -1 or len(index) < max(3, n // 100) or not words.get(category):
            continue
        x, y = np.median(coords[index], axis=0)
        fig.add_annotation(x=x, y=y, text=escape(", ".join(words[category][:3])), showarrow=False,
                           font=dict(size=11, color="#111"), bgcolor="rgba(255,255,255,0.75)", borderpad=2)
    fig.update_xaxes(showticklabels=False, zeroline=False, showgrid=False)
    fig.update_yaxes(showticklabels=False, zeroline=False, showgrid=False)
    apply_style(fig, title, height=720, subtitle=subtitle)
    # The legend goes under the map, so the map keeps the column's whole width.
    fig.update_layout(legend=dict(itemsizing="constant", font=dict(size=11), orientation="h", yanchor="top", y=-0.02,
                                  xanchor="left", x=0), hovermode="closest", margin=dict(l=10, r=10, b=10))
    return fig


@memoize(maxsize=4)
def _hover_texts(sentences: tuple[str, ...]) -> list[str]:
    """Escaped, wrapped hover text per sentence: kept for the last few corpora, since every recolouring
    and search redraws the same sentences (0.3 s for 15,000)."""
    return [wrap(sentence, limit=240) for sentence in sentences]


def _category_name(category, numeric: bool, words: dict, count: int) -> str:
    if category == OTHER:
        return f"{OTHER} ({count:,})"
    if category == -1:
        return f"noise ({count:,})"
    head = f"cluster {category}" if numeric else shorten(category, 24)
    found = words.get(category)
    return f"{head}: {escape(', '.join(found[:3]))} ({count:,})" if found else f"{head} ({count:,})"
