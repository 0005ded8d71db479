"""Figures of the "why" views: pure functions from arrays and labels to Plotly figures.

Token strings and sentences may come from users: they go through :mod:`sbert_demo.plot_style`'s
escaping and fill only ``%{...}`` slots of fixed hover templates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..plot_style import FAMILY_COLORS, PALETTE, apply_style, escape, shorten

DIVERGING = "RdBu_r"  # red: adds to the similarity, blue: takes from it; white at 0
TEXT_MAX_CELLS = 120  # print values in cells only when the map is this small
HISTOGRAM_COLORS = {"random pairs": PALETTE["grey"], "similar (gold ≥ 4)": PALETTE["blue"],
                    "unrelated (gold ≤ 1)": PALETTE["vermillion"]}


def _token_labels(tokens: Sequence[str]) -> list[str]:
    # Numbered, so repeated tokens ("a" twice) stay distinct categories on the axis.
    return [f"{i + 1}. {shorten(t, 16)}" for i, t in enumerate(tokens)]


def contribution_heatmap(contributions: np.ndarray, tokens_a: Sequence[str], tokens_b: Sequence[str],
                         title: str, zmax: float | None = None, subtitle: str | None = None,
                         numbers: str = "all", columns: str = "turned") -> go.Figure:
    """Token x token contributions (rows: sentence A, columns: B) on a diverging scale centred on 0.

    Pass the same ``zmax`` to several maps so their colours compare. ``numbers``: "all" (every cell's
    value, up to :data:`TEXT_MAX_CELLS` cells), "top" (two decimals, only the cells carrying at least a
    quarter of ``zmax``: readable from afar) or "none". ``columns``: how the columns are labelled:
    "turned" (numbered tokens at 45 degrees), "staggered" (the tokens level, every other one a line
    lower, so large type never runs into its neighbour) or "numbered" (the numbers only, level: a
    phone's narrow screen; the hover names the token).
    """
    contributions = np.asarray(contributions, dtype=float)
    if contributions.shape != (len(tokens_a), len(tokens_b)):
        raise ValueError(f"The contribution map is {contributions.shape}, but there are {len(tokens_a)} x "
                         f"{len(tokens_b)} tokens.")
    zmax = float(zmax if zmax is not None else np.abs(contributions).max() or 1.0)
    rows, cols = _token_labels(tokens_a), _token_labels(tokens_b)
    hover = np.array([[[escape(a), escape(b)] for b in tokens_b] for a in tokens_a], dtype=object)
    text = None
    if numbers == "all" and contributions.size <= TEXT_MAX_CELLS:
        text = np.round(contributions, 3)
    elif numbers == "top":
        strong = np.abs(contributions) >= 0.25 * zmax  # of the shared scale: maps side by side compare
        text = np.where(strong, np.vectorize(lambda v: f"{v:.2f}")(contributions), "")
    heat = go.Heatmap(
        z=contributions, x=cols, y=rows, zmid=0, zmin=-zmax, zmax=zmax, colorscale=DIVERGING,
        customdata=hover, colorbar=dict(title=dict(text="share of<br>cosine"), thickness=12),
        hovertemplate="A: %{customdata[0]}<br>B: %{customdata[1]}<br>contribution %{z:.4f}<extra></extra>",
        text=text, texttemplate="%{text}" if text is not None else None,
    )
    fig = go.Figure(heat)
    fig.update_yaxes(autorange="reversed", title_text="sentence A", type="category", automargin=True)
    fig.update_xaxes(title_text="sentence B", type="category", tickangle=-45 if columns == "turned" else 0,
                     automargin=True)
    if columns == "numbered":
        fig.update_xaxes(tickmode="array", tickvals=cols, ticktext=[str(i + 1) for i in range(len(cols))])
    elif columns == "staggered":
        fig.update_xaxes(tickmode="array", tickvals=cols,
                         ticktext=[("<br>" if i % 2 else "") + shorten(t, 10) for i, t in enumerate(tokens_b)])
    height = int(min(900, max(380, 140 + 22 * len(tokens_a))))
    apply_style(fig, title, height=height, subtitle=subtitle)
    return fig


def leave_one_out_bars(delta_a: np.ndarray, delta_b: np.ndarray, tokens_a: Sequence[str],
                       tokens_b: Sequence[str], title: str, subtitle: str | None = None) -> go.Figure:
    """Per-token leave-one-out deltas for both sentences (approximate explanations)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("sentence A", "sentence B"), horizontal_spacing=0.2)
    for col, (delta, tokens) in enumerate(((delta_a, tokens_a), (delta_b, tokens_b)), start=1):
        delta = np.asarray(delta, dtype=float)
        colors = np.where(np.nan_to_num(delta) < 0, PALETTE["vermillion"], PALETTE["blue"])
        fig.add_trace(go.Bar(
            x=np.nan_to_num(delta), y=_token_labels(tokens), orientation="h", marker_color=colors,
            customdata=[escape(t) for t in tokens], showlegend=False,
            hovertemplate="%{customdata}: cosine changes by %{x:+.4f} without it<extra></extra>"), row=1, col=col)
        fig.update_yaxes(autorange="reversed", type="category", automargin=True, row=1, col=col)
        fig.update_xaxes(title_text="cosine without the token − with it", zeroline=True, row=1, col=col)
    height = int(min(900, max(380, 140 + 20 * max(len(tokens_a), len(tokens_b)))))
    apply_style(fig, title, height=height, subtitle=subtitle)
    return fig


def anisotropy_histograms(results: Sequence, bins: int = 40, stacked: bool = False) -> go.Figure:
    """One panel per model: overlaid cosine histograms of random, similar and unrelated pairs.

    ``results`` are :class:`~.anisotropy.Anisotropy` (anything with ``label``, ``family``,
    ``random``, ``similar``, ``unrelated``, ``mean_random_cosine`` and ``auc``). ``stacked``: the
    panels one above the other (a phone's narrow screen) instead of side by side.
    """
    if not results:
        raise ValueError("There is nothing to plot: no model gave results.")
    titles = [f"{escape(r.label)}<br><sup>mean random cosine {r.mean_random_cosine:.2f} · AUC {r.auc:.3f}</sup>"
              for r in results]
    if stacked:
        fig = make_subplots(rows=len(results), cols=1, subplot_titles=titles, shared_xaxes=True,
                            vertical_spacing=0.16)
    else:
        fig = make_subplots(rows=1, cols=len(results), subplot_titles=titles, shared_yaxes=True,
                            horizontal_spacing=0.04)
    edges = dict(start=-0.4, end=1.0, size=1.4 / bins)
    for position, result in enumerate(results, start=1):
        row, col = (position, 1) if stacked else (1, position)
        for (name, color), values in zip(HISTOGRAM_COLORS.items(), (result.random, result.similar, result.unrelated)):
            fig.add_trace(go.Histogram(
                x=values, name=name, legendgroup=name, showlegend=position == 1, marker_color=color, opacity=0.55,
                histnorm="probability density", xbins=edges,
                hovertemplate=f"{name}<br>cosine %{{x}}<br>density %{{y:.2f}}<extra></extra>"), row=row, col=col)
        fig.add_vline(x=result.mean_random_cosine, line=dict(color="#555", dash="dot", width=1), row=row, col=col)
        fig.update_xaxes(range=[-0.4, 1.0], title_text="cosine" if not stacked or row == len(results) else None,
                         row=row, col=col, linecolor=FAMILY_COLORS.get(result.family, "#777"), linewidth=3,
                         showline=True, showticklabels=not stacked or row == len(results))
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=-0.25, x=0))
    for row in range(1, len(results) + 1 if stacked else 2):
        fig.update_yaxes(title_text="density", row=row, col=1)
    apply_style(fig, "Cosine of random, similar and unrelated STSb pairs",
                subtitle="Naive vectors sit in a narrow cone: even random pairs score high. The dotted line "
                         "is the mean random cosine.", height=440)
    fig.update_layout(margin=dict(t=130))
    return fig


def difference_heatmap(before: np.ndarray, after: np.ndarray, sentences: Sequence[str], title: str) -> go.Figure:
    """After − before cosine for every sentence pair, on a diverging scale centred on 0."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    n = len(sentences)
    if before.shape != (n, n) or after.shape != (n, n):
        raise ValueError(f"Both similarity matrices must be {n} x {n}, one row per sentence.")
    diff = after - before
    np.fill_diagonal(diff, 0.0)
    zmax = float(np.abs(diff).max()) or 0.1
    labels = [f"{i + 1}. {shorten(s, 24)}" for i, s in enumerate(sentences)]
    numbers = [str(i + 1) for i in range(n)]
    hover = np.array([[[escape(shorten(a, 80)), escape(shorten(b, 80)), before[i, j], after[i, j]]
                       for j, b in enumerate(sentences)] for i, a in enumerate(sentences)], dtype=object)
    fig = go.Figure(go.Heatmap(
        z=diff, x=numbers, y=labels, zmid=0, zmin=-zmax, zmax=zmax, colorscale=DIVERGING, customdata=hover,
        colorbar=dict(title=dict(text="after −<br>before"), thickness=12),
        hovertemplate=("%{customdata[0]}<br>%{customdata[1]}<br>before %{customdata[2]:.2f} → after "
                       "%{customdata[3]:.2f} (%{z:+.2f})<extra></extra>")))
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    fig.update_xaxes(type="category")
    apply_style(fig, title, subtitle="Red: training made the pair more similar; blue: less similar.",
                height=int(min(900, max(420, 160 + 22 * n))))
    return fig
