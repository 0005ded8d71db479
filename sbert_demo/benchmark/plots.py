"""Figures of the STS benchmark: Spearman bars against the SBERT paper's numbers, and gold score
against cosine. Pure functions; user text is escaped by :mod:`sbert_demo.plot_style`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..plot_style import FAMILY_COLORS, SCATTERGL_MIN_N, apply_style, check_length, escape, wrap

logger = logging.getLogger(__name__)

PAPER_STSB_TEST: dict[str, float] = {
    "Avg. GloVe (paper)": 58.02,
    "Avg. BERT (paper)": 46.35,
    "BERT CLS (paper)": 16.50,
    "SBERT-NLI-base (paper)": 77.03,
}


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
                customdata=[escape(rows[i]["label"]) for i in members],
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
        ticktext=[escape(row["label"]) for row in rows],
        range=[-0.6, max(len(rows), 1) - 0.4],
    )
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=-0.25))
    apply_style(fig, "STS benchmark: cosine vs. gold scores (Spearman x 100)")
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
            text=f"{escape(name)}: {float(value):.1f}", font=dict(size=10, color="#555"),
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
        check_length(name, values, n)
    trace_type = go.Scattergl if n > SCATTERGL_MIN_N else go.Scatter
    fig = go.Figure(
        trace_type(
            x=gold,
            y=cosine,
            mode="markers",
            marker=dict(size=6, color=FAMILY_COLORS["siamese"], opacity=0.5),
            customdata=[[wrap(a, limit=200), wrap(b, limit=200)]
                        for a, b in zip(sentences1, sentences2)],
            hovertemplate=(
                "gold: <b>%{x:.2f}</b>  cosine: <b>%{y:.3f}</b><br>"
                "<b>A</b> %{customdata[0]}<br><b>B</b> %{customdata[1]}<extra></extra>"
            ),
        )
    )
    fig.update_xaxes(title_text="gold similarity score")
    fig.update_yaxes(title_text="cosine similarity")
    apply_style(fig, title)
    return fig
