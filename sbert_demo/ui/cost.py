"""STS tab → The cost: why sentence embeddings exist, measured on the machine in front of you.

A cross-encoder is timed on a sample of pairs and extrapolated to every pair of n sentences; a
bi-encoder really encodes the n sentences and compares every pair (paraphrase mining); retrieve &
re-rank answers one query with both. A log-log plot carries the measured rates to 100,000 sentences
beside the paper's 65 h / 5 s (V100). The button's endpoint is ``api_name="cost"``.
"""

from __future__ import annotations

import gradio as gr

from ..benchmark import plots as benchmark_plots
from ..benchmark.cost import (DEFAULT_QUERY, MAX_N, PAPER, CostReport, check_n, describe, measure_cost, pairs,
                              split_pairs)
from ..models.kinds import EMBEDS, SCORES_PAIRS, kind_of
from ..models.registry import get_registry
from ..views import VIEWS
from . import snippets
from .common import action, model_choices, user_errors
from .model_select import Refresher
from .page_work import heavy_run, watched
from .visitor import visitor

VIEW = VIEWS["cost"]
UNTRAINED = ""  # the cross-encoder choice "none": the bi-encoder's transformer with an untrained head, timed only


def cross_encoder_choices() -> list[tuple[str, str]]:
    """The registry's pair scorers that are not bi-encoders, after the untrained option."""
    registry = get_registry()
    scorers = [(label, key) for label, key in model_choices(needs=SCORES_PAIRS)
               if not kind_of(registry.get(key)).can(EMBEDS)]
    return [("untrained head (timed only)", UNTRAINED), *scorers]


def refresh_cross_encoders(current: str | None) -> dict:
    choices = cross_encoder_choices()
    keys = {key for _, key in choices}
    return gr.update(choices=choices, value=current if current in keys else _default_cross_encoder(choices))


def _default_cross_encoder(choices: list[tuple[str, str]]) -> str:
    """A cross-encoder trained here when there is one (the newest listed last), else the untrained option."""
    registry = get_registry()
    trained = [key for _, key in choices if key and registry.availability(key).available]
    return trained[-1] if trained else UNTRAINED


# --- handlers ------------------------------------------------------------------------------------

@user_errors
def run_cost(n: float | None, bi_encoder: str | None, cross_encoder: str | None, query: str | None,
             request: gr.Request = None, progress=gr.Progress()) -> list:
    """(summary HTML, log-log plot, pairs HTML, re-rank HTML, JSON); stopped when its page closes."""
    if not isinstance(bi_encoder, str) or not bi_encoder:
        raise ValueError("Choose the bi-encoder whose sentence vectors are compared.")
    with heavy_run(visitor(request), "cost"):
        report = measure_cost(n if n is not None else 10_000, bi_encoder, cross_encoder or None,
                              query or DEFAULT_QUERY, progress=watched(progress))
    curve = report.curve()
    figure = benchmark_plots.cost_plot(curve, report.n, {
        "cross_encoder": report.cross_encoder["extrapolated_s"], "bi_encoder": report.bi_encoder["total_s"],
        "retrieve_rerank": report.rerank["retrieve_s"] + report.rerank["rerank_s"]}, PAPER, report.cpu)
    return [summary_html(report), figure, pairs_html(report), rerank_html(report), report.as_json()]


def summary_html(report: CostReport) -> str:
    ce, bi = report.cross_encoder, report.bi_encoder
    stats = [("sentences", f"{report.n:,}"), ("pairs", f"{pairs(report.n):,}"),
             ("cross-encoder, all pairs", _duration(ce["extrapolated_s"])),
             ("bi-encoder, all pairs", _duration(bi["total_s"])), ("ratio", f"{report.ratio:,.0f}x")]
    cells = "".join(f'<div><span class="stat-value">{snippets.esc(v)}</span>'
                    f'<span class="stat-name">{snippets.esc(k)}</span></div>' for k, v in stats)
    lines = "".join(f"<li>{snippets.esc(line)}</li>" for line in describe(report))
    return (f'<div class="stats cost-stats">{cells}</div><ul class="cost-lines">{lines}</ul>'
            f'<p class="muted">Measured on {snippets.esc(report.cpu)}.</p>' + snippets.notes_box(report.notes))


def pairs_html(report: CostReport) -> str:
    different, duplicates = split_pairs(report)
    rows = [[f"{cosine:.3f}", report.sentences[i], report.sentences[j]] for i, j, cosine in different]
    return (f"<p><strong>The most similar pairs among all {pairs(report.n):,}</strong> ({duplicates} of the top "
            f"{len(report.bi_encoder['top_pairs'])} are one sentence twice, up to case and spacing; shown: the most "
            "similar differently worded ones).</p>"
            + f'<div class="table-scroll">{snippets.html_table(["cosine", "sentence", "sentence"], rows, numeric=(0,))}</div>')


def rerank_html(report: CostReport) -> str:
    rerank, sentences = report.rerank, report.sentences
    head = (f"<p><strong>Retrieve & re-rank</strong> for “{snippets.esc(rerank['query'])}”: the bi-encoder's top "
            f"{rerank['top_k']} in {rerank['retrieve_s'] * 1000:.0f} ms, the cross-encoder on those only in "
            f"{rerank['rerank_s'] * 1000:.0f} ms (on all {report.n:,} sentences it would take "
            f"{_duration(report.n / report.cross_encoder['pairs_per_s'])}).</p>")
    retrieved = [[rank, f"{cos:.3f}", sentences[i]] for rank, (i, cos) in enumerate(rerank["retrieved"][:10], 1)]
    left = snippets.html_table(["#", "cosine", "bi-encoder's order"], retrieved, numeric=(0, 1))
    if rerank["reranked"] is None:
        right = snippets.message("Re-ranking needs a trained cross-encoder: train one in the Train tab (objective "
                                 "cross-encoder, about 5 minutes on a laptop CPU) and choose it above.", "info")
    else:
        reranked = [[rank, f"{score:.3f}", sentences[i]] for rank, (i, score) in enumerate(rerank["reranked"][:10], 1)]
        right = snippets.html_table(["#", "score", "cross-encoder's order"], reranked, numeric=(0, 1))
    return f'{head}<div class="why-cards"><div>{left}</div><div>{right}</div></div>'


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


@user_errors
def api_cost(n: float | str | None = 10_000, bi_encoder: str = VIEW.default_models[0], cross_encoder: str | None = None,
             query: str | None = DEFAULT_QUERY) -> dict:
    """Time a cross-encoder on every pair of ``n`` shipped sentences against a bi-encoder, on this machine:
    the JSON of ``python -m sbert_demo cost --json`` (the rates, the extrapolated times, the curve to
    100,000 sentences, the most similar pairs and a retrieve-and-re-rank query)."""
    if not isinstance(bi_encoder, str) or not bi_encoder:
        raise ValueError("Choose the bi-encoder whose sentence vectors are compared.")
    return measure_cost(check_n(10_000 if n is None else n), bi_encoder, cross_encoder or None,
                        query or DEFAULT_QUERY).as_json()


# --- layout and wiring ---------------------------------------------------------------------------

def build() -> list[Refresher]:
    """Build the cost view inside the current ``gr.Tab``."""
    gr.Markdown("Why sentence embeddings exist. A cross-encoder reads both sentences of a pair together: "
                "accurate, but finding the most similar pair among n sentences needs all n·(n−1)/2 pairs. A "
                "bi-encoder embeds each sentence once and compares vectors. Timed here, on this machine's CPU.",
                elem_classes="tab-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            n = gr.Slider(100, MAX_N, value=10_000, step=100, label="Sentences (n) from the shipped corpus",
                          elem_id="cost-n")
            query = gr.Textbox(DEFAULT_QUERY, label="A query for retrieve & re-rank", max_lines=1, elem_id="cost-query")
        with gr.Column(scale=2):
            bi_encoder = gr.Dropdown(model_choices(needs=EMBEDS), value=VIEW.default_models[0], label="Bi-encoder",
                                     allow_custom_value=True, elem_id="cost-bi-encoder")
            choices = cross_encoder_choices()
            cross_encoder = gr.Dropdown(choices, value=_default_cross_encoder(choices), label="Cross-encoder",
                                        allow_custom_value=True, elem_id="cost-cross-encoder")
        with gr.Column(scale=1, min_width=200):
            run = gr.Button("Measure", variant="primary", size="lg", elem_id="cost-run")
    progress_box = gr.HTML(elem_classes="progress-box", elem_id="cost-progress")
    summary = gr.HTML(elem_id="cost-summary")
    figure = gr.Plot(show_label=False, elem_id="cost-plot")
    with gr.Row(equal_height=False):
        found = gr.HTML(elem_id="cost-pairs")
    reranked = gr.HTML(elem_id="cost-rerank")
    data = gr.JSON(visible=False)
    action([run.click], run_cost, [n, bi_encoder, cross_encoder, query], [summary, figure, found, reranked, data],
           failures_to=progress_box, api_visibility="private", reveal="cost-summary", concurrency_id="cost",
           concurrency_limit=1, show_progress_on=progress_box)
    # For scripts: the same measurement as JSON. Its size is read here, not by the slider, so that a size
    # that is not a number gets the page's sentence instead of the slider's generic check.
    gr.api(api_cost, api_name="cost", concurrency_id="cost", concurrency_limit=1)
    return [Refresher(refresh_cross_encoders, cross_encoder)]
