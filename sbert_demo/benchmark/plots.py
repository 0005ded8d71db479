"""Figures of the STS benchmark: Spearman bars against the SBERT paper's numbers, and gold score
against cosine. Pure functions; user text is escaped by :mod:`sbert_demo.plot_style`.
"""

from __future__ import annotations

import logging
import math
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..plot_style import FAMILY_COLORS, PALETTE, SCATTERGL_MIN_N, apply_style, check_length, escape, wrap

logger = logging.getLogger(__name__)

PAPER_STSB_TEST: dict[str, float] = {
    "Avg. GloVe (paper)": 58.02,
    "Avg. BERT (paper)": 46.35,
    "BERT CLS (paper)": 16.50,
    "SBERT-NLI-base (paper)": 77.03,
}


def sts_bar_chart(
    rows: Sequence[Mapping], references: Mapping[str, float] = PAPER_STSB_TEST, horizontal: bool = False,
    split: str | None = "test",
) -> go.Figure:
    """STSb Spearman x 100 per model as bars coloured by family, with published results as lines.

    Each row needs ``label``, ``family`` (naive / siamese / fine-tuned) and ``spearman`` (x 100).
    ``references`` are the paper's STSb *test* numbers: drawn only beside a run of ``split`` "test"
    (a dev run or uploaded pairs get none, and the title says so). ``horizontal``: one bar per line,
    the model's name on its left, its number at its end (no label turned or cut at any width: the STS tab's
    chart, which a phone shows too, and the talk's phone figure).
    """
    rows = [_check_sts_row(row) for row in rows]
    references = references if split == "test" else {}
    fig = go.Figure()
    for family, color in FAMILY_COLORS.items():
        members = [i for i, row in enumerate(rows) if row["family"] == family]
        if not members:
            continue
        values = [rows[i]["spearman"] for i in members]
        fig.add_trace(
            go.Bar(
                x=values if horizontal else members,
                y=members if horizontal else values,
                orientation="h" if horizontal else "v",
                name=family,
                marker_color=color,
                width=0.7,
                text=["n/a" if v is None else f"{v:.1f}" for v in values],
                textposition="outside",
                constraintext="none",  # a number above a narrow bar stays readable (a phone's bars are thin)
                cliponaxis=False,
                customdata=[escape(rows[i]["label"]) for i in members],
                hovertemplate="%{customdata}<br>Spearman x 100: <b>%{" + ("x" if horizontal else "y") + ":.2f}</b>"
                              "<extra></extra>",
            )
        )
    _reference_lines(fig, references, horizontal)
    values = [row["spearman"] for row in rows if row["spearman"] is not None]
    low = min([0.0] + [math.floor(v / 10) * 10 for v in values])
    value_axis = dict(range=[low, 100], title_text="Spearman rank correlation x 100")
    if horizontal:  # room inside the plot for the number at the end of a bar of 100 ("100.0"), ticks to 100
        value_axis.update(range=[low, 112], tickmode="array", tickvals=list(range(int(low), 101, 20)))
    label_axis = dict(tickmode="array", tickvals=list(range(len(rows))),
                      ticktext=[wrap(row["label"], 16 if horizontal else 28) for row in rows],
                      range=[-0.6, max(len(rows), 1) - 0.4], automargin=True)
    if horizontal:
        fig.update_xaxes(**value_axis)
        fig.update_yaxes(**label_axis, autorange=False)
        fig.update_yaxes(range=[max(len(rows), 1) - 0.4, -0.6])  # the first model on top
    else:
        fig.update_yaxes(**value_axis)
        fig.update_xaxes(**label_axis)
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=-0.25 if not horizontal else -0.3))
    where = {"test": "STSb test", "dev": "STSb dev"}.get(split or "", "your pairs")
    note = "" if references or not PAPER_STSB_TEST else "; the paper reports STSb test only"
    # short lines: a phone's plot is 340 px wide and plotly does not wrap a title
    apply_style(fig, f"{where}: Spearman x 100", subtitle=f"cosine vs. gold scores{note}")
    fig.update_layout(margin=dict(r=30 if horizontal or not references else 190, b=110))
    if horizontal:  # a bar and its name (up to three lines) for each model, however many
        fig.update_layout(height=max(fig.layout.height or 0, 200 + 52 * len(rows)))
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


def _reference_lines(fig: go.Figure, references: Mapping[str, float], horizontal: bool = False) -> None:
    """Dotted lines for published numbers (STSb test), each labelled in the margin (beside a vertical
    chart, for a wide screen) or by its value in the legend (a horizontal one); the legend says where they
    come from."""
    line = dict(color="#555", dash="dot", width=1)
    for name, value in references.items():
        if horizontal:
            fig.add_vline(x=float(value), line=line)
            continue
        fig.add_hline(y=float(value), line=line)
        fig.add_annotation(
            x=1.0, xref="paper", xanchor="left", y=float(value), yref="y", showarrow=False,
            text=f"{escape(name)}: {float(value):.1f}", font=dict(size=10, color="#555"),
        )
    if references:  # a legend entry explaining the dotted lines
        marks = [f"{escape(name.replace(' (paper)', ''))} {value:.1f}" for name, value in references.items()]
        lines = [" · ".join(marks[i:i + 2]) for i in range(0, len(marks), 2)]  # no label wider than a phone
        legend_entry = go.Scatter(x=[None], y=[None], mode="lines", line=line,
                                  name="paper, STSb test" + ("<br>" + "<br>".join(lines) if horizontal else ""))
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


def _column_label(text: str, width: int = 7) -> str:
    """A heatmap column's name over short lines, broken between words and after hyphens, never inside a word
    (a phone's column is ~45 px: "embeddin / gs" read as two words)."""
    lines = textwrap.wrap(" ".join(str(text).split()), width=width, break_on_hyphens=True, break_long_words=False)
    return "<br>".join(escape(line) for line in lines or [""])


def table1_heatmap(rows: Sequence[tuple[str, Sequence[float | None]]], columns: Sequence[str],
                   references: Mapping[str, Sequence[float]] | None = None,
                   title: str = "Spearman x 100 on seven STS sets (the SBERT paper's Table 1)",
                   transposed: bool = False, compact: bool = False) -> go.Figure:
    """Table 1 as an annotated heatmap: one row per model (values x 100, None for not yet computed),
    then the paper's rows (``references``, labelled "paper:"), one column per set and the average.

    A colour per cell (0 to 90, higher is better) lets a room read it from the back; every cell shows
    its number. ``transposed``: one column per model (its name wrapped over short lines) and one row
    per set, for a phone's narrow screen and a few models. ``compact``: a row per model still, for a phone and
    any number of models: names wrapped over short lines, sets' names upright, smaller numbers.
    """
    references = dict(references or {})
    for label, values in rows:
        check_length(f"values of {label}", values, len(columns))
    if transposed:
        labels = [_column_label(label) for label, _ in rows] + [
            f"<i>paper<br>{_column_label(name.removesuffix(' embeddings').removesuffix('-vector'))}</i>"
            for name in references]
    elif compact:
        labels = [_column_label(label, 14) for label, _ in rows] + [
            f"<i>paper:<br>{_column_label(name.removesuffix(' embeddings').removesuffix('-vector'), 14)}</i>"
            for name in references]
    else:
        labels = [escape(label) for label, _ in rows] + [f"<i>paper: {escape(name)}</i>" for name in references]
    values = [list(v) for _, v in rows] + [list(v) for v in references.values()]
    z = np.array([[np.nan if v is None else float(v) for v in row] for row in values], dtype=float)
    text = [["" if v is None else f"{v:.1f}" for v in row] for row in values]
    sets = [escape(c) for c in columns]
    x, y = (labels, sets) if transposed else (sets, labels)
    fig = go.Figure(go.Heatmap(
        z=z.T if transposed else z, x=x, y=y, text=np.array(text, dtype=object).T.tolist() if transposed else text,
        texttemplate="%{text}", zmin=0, zmax=90, colorscale="Viridis",
        colorbar=dict(title=dict(text="x 100", side="top"), thickness=12),
        hovertemplate=("%{x} · %{y}" if transposed else "%{y} · %{x}") + ": <b>%{z:.2f}</b><extra></extra>",
        xgap=2, ygap=2, showscale=not transposed,
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(side="top", automargin=True, tickangle=0 if transposed else None,
                     tickfont=dict(size=10) if transposed else None)
    if rows and references:  # a rule between this machine's rows and the paper's
        if transposed:
            fig.add_vline(x=len(rows) - 0.5, line=dict(color="white", width=4))
        else:
            fig.add_hline(y=len(rows) - 0.5, line=dict(color="white", width=4))
    height = (120 + 40 * len(columns) if transposed else 130 + 44 * len(labels) if compact
              else max(260, 70 + 34 * len(labels)))
    apply_style(fig, title, height=height)
    fig.update_layout(margin=dict(l=10, r=10, t=110, b=20))
    if compact:
        fig.update_traces(textfont=dict(size=9), showscale=False)
        fig.update_xaxes(tickangle=-90, tickfont=dict(size=10))
        fig.update_yaxes(tickfont=dict(size=10))
    return fig


COST_LINES = {"cross_encoder": ("cross-encoder: every pair", "purple"),
              "bi_encoder": ("bi-encoder: encode + compare every pair", "blue"),
              "retrieve_rerank": ("one query, corpus embedded once: retrieve + re-rank the top k", "green")}


def cost_plot(curve: Mapping[str, Sequence[float]], measured_n: int, measured: Mapping[str, float],
              paper: Mapping[str, float], cpu: str) -> go.Figure:
    """Seconds against the number of sentences, log-log: the cross-encoder's all pairs, the
    bi-encoder's encode-and-compare and a retrieve-and-re-rank query, from the rates measured at
    ``measured_n`` (marked), with the paper's 65 h / 5 s for 10,000 sentences on a V100."""
    fig = go.Figure()
    sizes = list(curve["n"])
    for name, (label, _) in COST_LINES.items():
        fig.add_trace(go.Scatter(
            x=sizes, y=list(curve[name]), mode="lines", name=label, line=dict(color=_cost_color(name), width=3),
            hovertemplate="n = %{x:,}: %{y:.3g} s<extra>" + escape(label) + "</extra>"))
        if name in measured:
            fig.add_trace(go.Scatter(x=[measured_n], y=[measured[name]], mode="markers", showlegend=False,
                                     marker=dict(size=13, color=_cost_color(name), line=dict(width=2, color="white")),
                                     hovertemplate=f"measured here at n = {measured_n:,}: %{{y:.3g}} s<extra></extra>"))
    for line, value, text in (("cross_encoder", paper["cross_encoder_s"], "paper: 65 h"),
                              ("bi_encoder", paper["bi_encoder_s"], "paper: 5 s")):
        # The label on the side of the cross that the rising line leaves free: under it and to the right where the
        # line passes above the cross, else over it and to the left (it runs where the rates measured put it).
        passes_above = np.interp(math.log10(paper["n"]), np.log10(sizes), np.log10(curve[line])) > math.log10(value)
        fig.add_trace(go.Scatter(x=[paper["n"]], y=[value], mode="markers+text", text=[text],
                                 textposition="bottom right" if passes_above else "top left", showlegend=False,
                                 cliponaxis=False,  # on a phone "bottom right" reaches into the right margin
                                 marker=dict(symbol="x", size=14, color=PALETTE["grey"]),
                                 hovertemplate=f"{text}<extra></extra>"))
    for seconds, tick in ((1, "1 s"), (60, "1 min"), (3600, "1 h"), (86400, "1 day")):
        fig.add_hline(y=seconds, line=dict(color=PALETTE["light-grey"], width=1), layer="below")  # under labels
        # On a log axis an annotation's y is the log of the value (add_hline's own annotation put
        # "1 min" at 10^60 and stretched the axis to it).
        # Inside the plot, at its left edge above the line: in the figure at any width, on a phone too.
        fig.add_annotation(x=0, xref="paper", xanchor="left", y=math.log10(seconds), yref="y", yanchor="bottom",
                           text=tick, showarrow=False, font=dict(size=11, color="#777"))
    decades = [10 ** k for k in range(math.floor(math.log10(min(sizes))), math.ceil(math.log10(max(sizes))) + 1)]
    # The x axis starts a little before its first tick, so the corner's two first tick labels stay apart.
    fig.update_xaxes(type="log", title_text="sentences (n)", tickvals=decades, ticktext=[f"{n:,}" for n in decades],
                     range=[math.log10(min(sizes)) - 0.2, math.log10(max(sizes)) + 0.05])
    fig.update_yaxes(type="log", title_text="seconds", exponentformat="power")
    fig.update_layout(legend=dict(orientation="h", y=-0.22))
    apply_style(fig, "Finding the most similar pairs: time against the number of sentences",
                subtitle=f"Lines from the rates measured here ({cpu}); dots: measured; ×: the SBERT paper on a V100.")
    fig.update_layout(margin=dict(r=30, b=110))
    return fig


def _cost_color(name: str) -> str:
    return PALETTE[COST_LINES[name][1]]
