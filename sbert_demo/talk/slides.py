"""The talk's figures, drawn from a step's numbers for the screen that shows them.

Two layouts: ``screen`` (a projector or a laptop: every text 18 px or more, read from the back of a
room; ``page.js`` fits each figure's height to the screen) and ``phone`` (390 px wide, the room
following along: 12 px text, one figure per row, nothing turned or cut: bars lie horizontally, Table
1 stands on its side, a word-pair map numbers its columns and lists its strongest pairs in a table).
Pure functions of the numbers (:mod:`.story`): building a slide costs milliseconds, so a step kept
by :mod:`.rehearsal` answers at once whatever the layout.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from ..analysis import plots as why_plots
from ..benchmark import plots as benchmark_plots
from ..benchmark.cost import PAPER as COST_PAPER
from ..benchmark.table1 import PAPER
from ..data.sts_sets import TABLE1_SETS, TITLES
from ..explore import plots as explore_plots
from ..plot_style import sized, wrap
from ..training.curves import training_curves
from .story import NAIVE, SIAMESE, STEPS, WHITENED

SCREEN, PHONE = "screen", "phone"
LAYOUTS = (SCREEN, PHONE)
TEXT = {SCREEN: 18, PHONE: 12}  # px: a projector's back row; a phone held in the hand
TITLE = {SCREEN: 24, PHONE: 14}
HEIGHT = {SCREEN: 560, PHONE: 400}  # the starting height (page.js fits a screen's figures to what is left)
PHONE_TITLE_CHARS = 40
PHONE_LEGEND_CHARS = 42
TABLE1_PAPER_ROWS = ("Avg. GloVe embeddings", "BERT CLS-vector", "SBERT-NLI-base")  # few rows read from afar
# A phone's Table 1 has a column per model: names of two short lines.
SHORT_LABELS = {NAIVE: "GloVe", WHITENED: "GloVe whitened", SIAMESE: "MiniLM"}
PAPER_SHORT = {"Avg. GloVe embeddings": "GloVe", "BERT CLS-vector": "CLS", "SBERT-NLI-base": "SBERT"}


@dataclass(frozen=True)
class Slide:
    """What a step shows: one or two figures, a sentence for the caption, and a small table for numbers
    that a figure cannot hold on this screen (headers, rows)."""

    left: go.Figure | None
    right: go.Figure | None = None
    note: str = ""
    table: tuple[tuple[str, ...], tuple[tuple[str, ...], ...]] | None = None


def blank_figure() -> go.Figure:
    """An empty figure: drawn off screen on the title slide so the page has Plotly before step 1."""
    return go.Figure(layout={"width": 40, "height": 40, "margin": {"l": 0, "r": 0, "t": 0, "b": 0},
                             "xaxis": {"visible": False}, "yaxis": {"visible": False}})


def check_layout(layout: object) -> str:
    return layout if layout in LAYOUTS else SCREEN


def _fit(fig: go.Figure, layout: str, height: int | None = None) -> go.Figure:
    """``fig``'s text sized for ``layout``; on a phone the title wrapped, the subtitle dropped (the
    caption says it) and the legend laid out under the plot."""
    sized(fig, TEXT[layout], TITLE[layout])
    fig.update_layout(height=height or HEIGHT[layout])
    if layout == PHONE:
        title = wrap(html.unescape((fig.layout.title.text or "").replace("<br>", " ")), PHONE_TITLE_CHARS)
        entries = 0
        for trace in fig.data:  # legend names wrapped to the phone's width
            if trace.showlegend is not False and trace.name:
                trace.name = wrap(html.unescape(trace.name.replace("<br>", " ")), PHONE_LEGEND_CHARS)
                entries += 1 + trace.name.count("<br>")
        # The legend at the figure's foot (below the axis titles whatever the plot's height), the title's
        # lines above the plot.
        # meta: drawn for a phone already, so the page's script for narrow figures leaves it as it is (page.js)
        # The title's lines from the figure's top down (not centred in the margin, where its last line met the top
        # tick's label).
        fig.update_layout(meta=dict(drawn_for=PHONE),
                          title=dict(text=title, subtitle=dict(text=""), yref="container", yanchor="top",
                                     y=1 - 10 / fig.layout.height, pad=dict(t=8)),
                          legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, x=0),
                          margin=dict(l=8, r=8, t=28 + 18 * (title.count("<br>") + 1),
                                      b=60 + (20 * entries if fig.layout.showlegend is not False else 0)))
        fig.update_xaxes(automargin=True)
        fig.update_yaxes(automargin=True)
    return fig


def _cone(results: list, layout: str) -> Slide:
    figure = why_plots.anisotropy_histograms(results, stacked=layout == PHONE)
    # The caption says what the page's subtitle says; each panel's numbers on a line of full size.
    figure.update_layout(title=dict(subtitle=dict(text="")))
    figure.for_each_annotation(lambda note: note.update(text=note.text.replace("<sup>", "").replace("</sup>", "")))
    figure = _fit(figure, layout, HEIGHT[layout] + (200 if layout == PHONE else 0))
    # The title, then each panel's two-line title above it.
    return Slide(figure.update_layout(margin=dict(t=150 if layout == SCREEN else 110)))


def _paraphrases(data, layout: str) -> Slide:
    zmin, zmax = explore_plots.shared_range(list(data.similarities))
    figures = []
    for label, sim in zip(data.labels, data.similarities):
        # On a slide the blocks are labelled by topic (24 sentence labels would overlap); hover names each pair.
        figure = explore_plots.label_blocks(explore_plots.heatmap(sim, data.sentences, label, zmin, zmax,
                                                                  groups=data.groups), data.groups)
        figures.append(_fit(figure, layout, 620 if layout == SCREEN else 380))
    return Slide(*figures)


def _benchmark(results: list, layout: str) -> Slide:
    rows = [{"label": r.label, "family": r.family, "spearman": r.spearman * 100} for r in results]
    figure = benchmark_plots.sts_bar_chart(rows, horizontal=layout == PHONE, split="test")
    figure.update_layout(title=dict(subtitle=dict(text="")))  # the caption says it (in 18 px it met the axis)
    figure = _fit(figure, layout)
    if layout == SCREEN:
        figure.update_layout(margin=dict(r=330))  # the paper's marks, labelled in 18 px beside the plot
    return Slide(figure)


def _seven_sets(rows: list, layout: str) -> Slide:
    phone = layout == PHONE
    values = [(SHORT_LABELS.get(row.key, row.label) if phone else row.label,
               [row.scores[name] * 100 for name in TABLE1_SETS] + [row.average * 100]) for row in rows]
    columns = [TITLES[name] for name in TABLE1_SETS] + ["avg"]
    paper = {(PAPER_SHORT[name] if phone else name): PAPER[name] for name in TABLE1_PAPER_ROWS}
    figure = benchmark_plots.table1_heatmap(values, columns, paper, transposed=phone,
                                            title="Seven STS sets, Spearman x 100 (paper: 300-d GloVe, BERT base)")
    figure = _fit(figure, layout, 520 if layout == SCREEN else 470)
    if phone:  # the title's lines, then the columns' names (two short lines each) above the cells
        figure.update_layout(margin=dict(t=110))
    return Slide(figure)


def _explanation(results: list, layout: str) -> Slide:
    zmax = max(float(abs(r.contributions).max()) for r in results)
    figures, rows = [], []
    for r in results:
        figure = why_plots.contribution_heatmap(r.contributions, r.tokens_a, r.tokens_b,
                                                f"{r.label}: cosine {r.cosine:.2f}", zmax,
                                                numbers="top" if layout == SCREEN else "none",
                                                columns="staggered" if layout == SCREEN else "numbered")
        figures.append(_fit(figure, layout, 560 if layout == SCREEN else 360))
        rows += [(r.label, r.tokens_a[i], r.tokens_b[j], f"{value:.3f}") for i, j, value in r.top_pairs(3)]
    table = (("model", "word of A", "word of B", "share of the cosine"), tuple(rows)) if layout == PHONE else None
    return Slide(*figures, table=table)


def _cost(report, layout: str) -> Slide:
    measured = {"cross_encoder": report.cross_encoder["extrapolated_s"], "bi_encoder": report.bi_encoder["total_s"],
                "retrieve_rerank": report.rerank["retrieve_s"] + report.rerank["rerank_s"]}
    figure = benchmark_plots.cost_plot(report.curve(), report.n, measured, COST_PAPER, report.cpu)
    figure.update_layout(title=dict(text=f"{report.n:,} sentences on this CPU: cross-encoder "
                                         f"{report.cross_encoder['extrapolated_s'] / 3600:.1f} h, bi-encoder "
                                         f"{report.bi_encoder['total_s']:.1f} s ({report.ratio:,.0f}x)"))
    if layout == PHONE:
        # No room beside the paper's crosses in a plot a phone wide: the legend names them instead of labels.
        crosses = [trace for trace in figure.data if trace.mode == "markers+text"]
        times = " and ".join(cross.text[0].rsplit(": ", 1)[1] for cross in crosses)  # "65 h and 5 s"
        for index, trace in enumerate(crosses):  # one legend entry for both
            trace.update(mode="markers", showlegend=index == 0,
                         name=f"×: the SBERT paper on a V100, {COST_PAPER['n']:,} sentences: {times}")
    figure = _fit(figure, layout, HEIGHT[layout] + (60 if layout == PHONE else 0))  # a phone: 4 legend entries below
    if layout == SCREEN:
        # the legend under the plot; above it the title and subtitle in large type, clear of the y axis's top tick
        # label (a tick at the plot's top edge, as the measured rates may put one, reaches half a line above it)
        figure.update_layout(margin=dict(r=30, b=130, t=115))
    else:  # room on the right for half of the last decade's label ("100,000"), which a phone's margin cut off, and
        # above the plot for half of the top tick's label under the title
        figure.update_layout(margin=dict(r=30, t=figure.layout.margin.t + 12))
    return Slide(figure)


def training_slide(run, layout: str) -> Slide:
    """Step 7 from a :class:`~.training.TrainingRun` (finished, or the curve so far)."""
    figure = training_curves([s for s, _ in run.losses], [v for _, v in run.losses],
                             [s for s, _ in run.evals], [v * 100 for _, v in run.evals],
                             "Siamese GloVe on NLI: loss and STSb dev Spearman x 100")
    note = ""
    if run.before and run.after:
        note = (f"STSb test {run.before['test'] * 100:.2f} → {run.after['test'] * 100:.2f} after "
                f"{run.train_elapsed_s:.1f} s of training.")
    return Slide(_fit(figure, layout), note=note)


_BUILDERS = {"The cone": _cone, "Paraphrases": _paraphrases, "The benchmark": _benchmark,
             "Seven benchmarks": _seven_sets, "Why": _explanation, "The cost": _cost}


def slide(step: int, data: Any, layout: str = SCREEN) -> Slide:
    """Step ``step``'s figures from its numbers (:attr:`.story.Step.compute`'s result) for ``layout``."""
    return _BUILDERS[STEPS[step].name](data, check_layout(layout))
