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


def _score_text(value: float) -> str:
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


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
        raise ValueError(f"The similarity matrix is {sim.shape} but there are {n} sentences.")
    order = list(range(n)) if order is None else [int(i) for i in order]
    if sorted(order) != list(range(n)):
        raise ValueError("The order must list every sentence number exactly once.")
    if groups is not None:
        _check_length("group labels", groups, n)
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


def ranking_bars(
    query: str, sentences: Sequence[str], scores: Sequence[float], title: str
) -> go.Figure:
    """Horizontal bars of cosine similarity to ``query``, most similar on top."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    _check_length("scores", scores, len(sentences))
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    positions = list(range(len(ranked)))
    fig = go.Figure(
        go.Bar(
            x=scores[ranked],
            y=positions,
            orientation="h",
            marker_color=FAMILY_COLORS["siamese"],
            text=[_score_text(scores[i]) for i in ranked],
            textposition="auto",
            customdata=[_wrap(sentences[i]) for i in ranked],
            hovertemplate="%{customdata}<br>cosine: <b>%{x:.3f}</b><extra></extra>",
        )
    )
    low = min(0.0, math.floor(float(scores.min()) * 10) / 10) if len(scores) else 0.0
    fig.update_xaxes(range=[low, 1.0], title_text="cosine similarity to the query")
    fig.update_yaxes(
        tickmode="array",
        tickvals=positions,
        ticktext=[_short(sentences[i], 40) for i in ranked],
        autorange="reversed",
        automargin=True,
    )
    height = max(420, min(1200, 120 + 26 * len(ranked)))
    _style(fig, title, height=height, subtitle=f"Query: {' '.join(str(query).split())[:120]}")
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
    return distinct, {c: _esc(c) for c in distinct}


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
    _check_length("colour labels", labels, n)
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
                customdata=[[_wrap(sentences[i]), names[category]] for i in members],
                hovertemplate="%{customdata[0]}<br><i>%{customdata[1]}</i><extra></extra>",
            )
        )
    fig.update_xaxes(showticklabels=False, zeroline=False, showgrid=False)
    fig.update_yaxes(showticklabels=False, zeroline=False, showgrid=False)
    fig.update_layout(showlegend=color_labels is not None, legend=dict(itemsizing="constant"))
    _style(fig, title, subtitle=note)
    return fig


def sts_bar_chart(
    rows: Sequence[Mapping], references: Mapping[str, float] = PAPER_STSB_TEST
) -> go.Figure:
    """STSb Spearman x 100 per model as bars coloured by family, with published results as lines.

    Each row needs ``label``, ``family`` (naive / siamese / fine-tuned) and ``spearman`` (x 100).
    """
    rows = [_check_sts_row(row) for row in rows]
    fig = go.Figure()
    for family, color in FAMILY_COLORS.items():
        members = [i for i, row in enumerate(rows) if row["family"] == family]
        if not members:
            continue
        values = [rows[i]["spearman"] for i in members]
        fig.add_trace(
            go.Bar(
                x=members,
                y=values,
                name=family,
                marker_color=color,
                width=0.7,
                text=["n/a" if v is None else f"{v:.1f}" for v in values],
                textposition="outside",
                customdata=[_esc(rows[i]["label"]) for i in members],
                hovertemplate="%{customdata}<br>Spearman x 100: <b>%{y:.2f}</b><extra></extra>",
            )
        )
    _reference_lines(fig, references)
    values = [row["spearman"] for row in rows if row["spearman"] is not None]
    low = min([0.0] + [math.floor(v / 10) * 10 for v in values])
    fig.update_yaxes(range=[low, 100], title_text="Spearman rank correlation x 100")
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(rows))),
        ticktext=[_esc(row["label"]) for row in rows],
        range=[-0.6, max(len(rows), 1) - 0.4],
    )
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=-0.25))
    _style(fig, "STS benchmark: cosine vs. gold scores (Spearman x 100)")
    fig.update_layout(margin=dict(r=190, b=110))
    return fig


def _check_sts_row(row: Mapping) -> dict:
    missing = [key for key in ("label", "family", "spearman") if key not in row]
    if missing:
        raise ValueError(
            f"An STS result row lacks {', '.join(missing)}; give label, family and spearman."
        )
    if row["family"] not in FAMILY_COLORS:
        raise ValueError(
            f"Unknown model family {row['family']!r}; choose one of {', '.join(FAMILY_COLORS)}."
        )
    value = row["spearman"]
    finite = value is not None and math.isfinite(float(value))
    spearman = float(value) if finite else None
    return {"label": str(row["label"]), "family": row["family"], "spearman": spearman}


def _reference_lines(fig: go.Figure, references: Mapping[str, float]) -> None:
    """Dotted horizontal lines for published numbers, labelled in the right margin."""
    line = dict(color="#555", dash="dot", width=1)
    for name, value in references.items():
        fig.add_hline(y=float(value), line=line)
        fig.add_annotation(
            x=1.0, xref="paper", xanchor="left", y=float(value), yref="y", showarrow=False,
            text=f"{_esc(name)}: {float(value):.1f}", font=dict(size=10, color="#555"),
        )
    if references:  # a legend entry explaining the dotted lines
        legend_entry = go.Scatter(x=[None], y=[None], mode="lines", line=line, name="published")
        fig.add_trace(legend_entry)


def gold_vs_cosine(
    gold: Sequence[float],
    cosine: Sequence[float],
    sentences1: Sequence[str],
    sentences2: Sequence[str],
    title: str,
) -> go.Figure:
    """Scatter of gold similarity (x) against model cosine (y), one point per sentence pair."""
    gold = np.asarray(gold, dtype=np.float64).reshape(-1)
    cosine = np.asarray(cosine, dtype=np.float64).reshape(-1)
    n = len(gold)
    for name, values in (("cosine scores", cosine), ("first sentences", sentences1),
                         ("second sentences", sentences2)):
        _check_length(name, values, n)
    trace_type = go.Scattergl if n > SCATTERGL_MIN_N else go.Scatter
    fig = go.Figure(
        trace_type(
            x=gold,
            y=cosine,
            mode="markers",
            marker=dict(size=6, color=FAMILY_COLORS["siamese"], opacity=0.5),
            customdata=[[_wrap(a, limit=200), _wrap(b, limit=200)]
                        for a, b in zip(sentences1, sentences2)],
            hovertemplate=(
                "gold: <b>%{x:.2f}</b>  cosine: <b>%{y:.3f}</b><br>"
                "<b>A</b> %{customdata[0]}<br><b>B</b> %{customdata[1]}<extra></extra>"
            ),
        )
    )
    fig.update_xaxes(title_text="gold similarity score")
    fig.update_yaxes(title_text="cosine similarity")
    _style(fig, title)
    return fig


def training_curves(
    loss_steps: Sequence[int],
    losses: Sequence[float],
    eval_steps: Sequence[int],
    eval_spearman: Sequence[float],
    title: str = "",
) -> go.Figure:
    """Training loss (left axis) and STSb-dev Spearman x 100 (right axis) against the step.

    ``eval_spearman`` is expected already multiplied by 100. Empty lists give empty axes.
    """
    _check_length("loss values", losses, len(loss_steps))
    _check_length("Spearman values", eval_spearman, len(eval_steps))
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=list(loss_steps), y=list(losses), mode="lines", name="training loss",
        line=dict(color=FAMILY_COLORS["naive"], width=2),
        hovertemplate="step %{x}<br>loss: %{y:.4f}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=list(eval_steps), y=list(eval_spearman), mode="lines+markers", yaxis="y2",
        name="STSb dev Spearman x 100", line=dict(color=FAMILY_COLORS["fine-tuned"], width=2),
        hovertemplate="step %{x}<br>Spearman x 100: %{y:.2f}<extra></extra>",
    ))
    fig.update_layout(
        xaxis=dict(title=dict(text="training step"), rangemode="tozero"),
        yaxis=dict(title=dict(text="loss"), rangemode="tozero"),
        yaxis2=dict(title=dict(text="STSb dev Spearman x 100"), overlaying="y", side="right",
                    showgrid=False, tickmode="auto", tickformat=".0f"),
        legend=dict(orientation="h", y=-0.2),
    )
    if not len(loss_steps) and not len(eval_steps):
        fig.add_annotation(text="No training steps logged yet.", showarrow=False,
                           x=0.5, y=0.5, xref="paper", yref="paper", font=dict(color="#777"))
    _style(fig, title or "Training progress")
    fig.update_layout(margin=dict(r=70, b=90))
    return fig
