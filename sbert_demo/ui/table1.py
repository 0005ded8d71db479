"""STS tab → Table 1: the SBERT paper's Table 1, computed live on seven STS sets for any models.

One row per chosen model (Spearman x 100 on STS12–STS16, STSb and SICK-R, and their average),
filled in set by set, beside the paper's rows; the same numbers as an annotated heatmap a room can
read. The button's endpoint (``api_name="table1"``) returns the JSON of ``python -m sbert_demo table1``.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import gradio as gr

from ..benchmark import plots as benchmark_plots
from ..benchmark.table1 import PAPER, Table1Row, costs, iter_table1, set_sentences, weights
from ..formatting import about, duration
from ..data.sts_sets import TABLE1_SETS, TITLES, sts_set
from ..encoding.runtime_choice import FAST_SPEARMAN
from ..models.kinds import SCORES_PAIRS
from ..models.variants import split_key
from ..views import VIEWS
from . import snippets
from .common import action, user_errors, warn_once_about_the_cache
from .model_select import Refresher, default_models, model_dropdown, picker
from .page_work import heavy_run, watched
from .visitor import visitor

VIEW = VIEWS["table1"]
COLUMNS = [TITLES[name] for name in TABLE1_SETS] + ["avg"]


# --- handlers ------------------------------------------------------------------------------------

RUNTIMES = [("Lossless: the numbers to report", "lossless"),
            (f"Fast: int8 where it stays within {FAST_SPEARMAN} Spearman (quicker)", "fast")]
ANNOUNCE_S = 10  # a run expected to take longer says how long before the click


def _fast(runtime: object) -> bool:
    if runtime not in (None, "lossless", "fast"):
        raise ValueError(f"Unknown runtime {runtime!r}; choose lossless or fast.")
    return runtime == "fast"


@user_errors
def estimate_html(model_keys: list[str] | None, runtime: str | None = "lossless") -> str:
    """Before the click: how long the table will take on this machine (from the rates measured here), and
    the quicker choices when it is more than a few seconds."""
    if not model_keys:
        return ""
    fast = _fast(runtime)
    found = costs(model_keys, fast=fast, max_models=VIEW.max_models)
    known = [c for c in found if c.seconds is not None]
    total = sum(c.seconds for c in known)
    everything = len(set_sentences(TABLE1_SETS))
    parts = []
    for cost in found:
        if cost.left is None:
            parts.append(f"{cost.label}: scored pair by pair (no estimate)")
        elif cost.seconds is None:
            parts.append(f"{cost.label}: its runtimes are measured first (a minute or two), then "
                         f"{cost.left.sentences:,} sentences")
        elif cost.left.sentences:  # the count its progress bar will show: of every sentence of the sets
            parts.append(f"{cost.label}: {about(cost.seconds)} ({cost.left.sentences:,} of the {everything:,} "
                         f"sentences still to encode, at {cost.left.rate:,.0f}/s, {cost.left.runtime})")
    if not parts:
        return snippets.message("Every number of this table is in the cache: it takes a few seconds.", "ok")
    unknown = len(known) < len(found)
    head = f"{'At least ' if unknown else ''}{about(total)} on this machine" if total >= 1 else "A few seconds"
    advice = ""
    if total > ANNOUNCE_S or unknown:
        quick = "" if fast else (f" The fast runtime takes {about(sum(c.seconds or 0 for c in costs(model_keys, fast=True, max_models=VIEW.max_models)))}."
                                 if all(c.seconds is not None for c in found) else " The fast runtime is quicker.")
        advice = f"{quick} Fewer models are quicker too; what is computed is kept, so a second table only reads it."
    return snippets.message(f"{head}: {'; '.join(parts)}.{advice}", "info" if total <= ANNOUNCE_S else "warning")


@user_errors
def run_table1(model_keys: list[str], runtime: str | None = "lossless", request: gr.Request = None,
               progress=gr.Progress()):
    """Yield (status, table HTML, heatmap, JSON) as each model's row fills in, set by set. The progress
    bar moves with the expected work (a slow model's share is its expected time), and the status line
    says the whole run's elapsed and remaining time. The run stops where it is when its page closes, and a
    visitor runs one heavy run at a time (:mod:`.page_work`)."""
    with heavy_run(visitor(request), "Table 1"):
        yield from _table1(model_keys, runtime, watched(progress))


def _table1(model_keys: list[str], runtime: str | None, progress):
    fast = _fast(runtime)
    rows: dict[str, Table1Row] = {}
    found = costs(model_keys or [], fast=fast, max_models=VIEW.max_models)
    expected = sum(weights(found))
    started = time.monotonic()
    seen = {"fraction": 0.0}

    def step(fraction: float, what: str) -> None:  # the bar names its phase and the time left from the first second
        seen["fraction"] = fraction
        progress(fraction, f"{what}{_clock(time.monotonic() - started, fraction, expected)}")

    progress(0, "Starting")
    for row in iter_table1(model_keys or [], progress=step, max_models=VIEW.max_models, shares=weights(found),
                           fast=fast):
        rows[row.key] = row
        clock = _clock(time.monotonic() - started, seen["fraction"], expected)
        yield (_status(rows, clock=clock), table_html(list(rows.values())), *heatmaps(list(rows.values())),
               _json(rows))
    warn_once_about_the_cache()
    yield (_status(rows, done=True, clock=f" in {duration(time.monotonic() - started)}"),
           table_html(list(rows.values())), *heatmaps(list(rows.values())), _json(rows))


def _clock(elapsed: float, fraction: float, expected: float) -> str:
    """`` · 1 min 20 s so far, about 4 min left`` (the whole run's, from the work done and the estimate)."""
    if fraction >= 0.02:
        left = elapsed * (1 - fraction) / fraction  # from this run's own pace once it has one
    else:
        left = max(0.0, expected - elapsed)
    return f" · {duration(elapsed)} so far, {about(left)} left"


def _json(rows: dict[str, Table1Row]) -> dict:
    return {key: row.as_json() for key, row in rows.items()}


def _status(rows: dict[str, Table1Row], done: bool = False, clock: str = "") -> str:
    sizes = " · ".join(f"{TITLES[name]} {len(sts_set(name)):,}" for name in TABLE1_SETS)
    cached = all(row.cached for row in rows.values() if row.ok) and rows
    how = " (every number from the cache)" if done and cached else ""
    state = f"Done{clock}{how}." if done else f"Computing{clock}."
    return snippets.message(f"{state} Rated pairs per set: {sizes}.", "ok" if done else "info")


def table_html(rows: list[Table1Row]) -> str:
    """The table as the paper lays it out: this machine's rows, then the paper's, in italics."""
    body = []
    for row in rows:
        name = snippets.Markup(f"{snippets.esc(row.label)} {snippets.badge(row.family)}")
        if row.error:
            body.append([name, *([""] * len(COLUMNS)), f"Skipped: {row.error}"])
        else:
            body.append([name, *row.cells(), row.runtime])
    for paper_name, values in PAPER.items():
        body.append([snippets.Markup(f"<i>paper: {snippets.esc(paper_name)}</i>"), *(f"{v:.2f}" for v in values),
                     "Reimers & Gurevych (2019), Table 1"])
    table = snippets.html_table(["Model", *COLUMNS, "computed with"], body, css="summary-table table1",
                                numeric=range(1, len(COLUMNS) + 1), stacked=True, titled=True)  # a phone: cards
    return (f'<div class="table-scroll">{table}</div><p class="muted">Spearman rank correlation x 100 of the '
            "cosine of each pair (a cross-encoder: its score) with the gold scores, one per set over all its "
            "rated pairs; avg is the mean of the seven. The paper's GloVe rows use 300-d vectors, its BERT rows "
            "BERT base; SBERT-NLI is trained on NLI only, like these SBERT models are not.</p>")


def heatmap(rows: list[Table1Row], compact: bool = False):
    """The annotated heatmap of the rows computed so far (x 100), above the paper's rows (``compact``: names
    wrapped, for a phone's narrow screen, whatever the number of models)."""
    values = [(row.label, [None if (v := row.scores.get(name)) is None else v * 100 for name in TABLE1_SETS]
               + [None if row.average is None else row.average * 100]) for row in rows if row.ok]
    if compact:
        return benchmark_plots.table1_heatmap(values, COLUMNS, PAPER, title="Spearman x 100, seven STS sets",
                                              compact=True)
    return benchmark_plots.table1_heatmap(values, COLUMNS, PAPER)


def heatmaps(rows: list[Table1Row]) -> tuple:
    """(the heatmap a laptop or projector shows, the one a phone shows): the page shows one of them (app.css)."""
    return heatmap(rows), heatmap(rows, compact=True)


# --- layout and wiring ---------------------------------------------------------------------------

class Table1Parts(NamedTuple):
    models: gr.Dropdown
    refresher: Refresher
    estimate: gr.HTML
    runtime: gr.Radio


def build() -> Table1Parts:
    """Build Table 1 inside the current ``gr.Tab``."""
    gr.Markdown("One benchmark can be a fluke; seven are the argument. The SBERT paper's Table 1: Spearman x 100 "
                "on the SemEval STS sets of 2012–2016, the STS benchmark and SICK-R, computed here for any models, "
                "beside the paper's own rows. What is computed is kept: a second table only reads it.",
                elem_classes="tab-intro")
    with gr.Row(equal_height=True):
        available = set(default_models(("naive", "siamese", "fine-tuned", "cross-encoder"), needs=SCORES_PAIRS))
        models = model_dropdown([k for k in VIEW.default_models if split_key(k)[0] in available], VIEW.max_models,
                                label=f"Models (up to {VIEW.max_models})", needs=SCORES_PAIRS, elem_id="table1-models",
                                info="Any model, a training-free fix (K+whiten) or a cross-encoder trained here.")
        with gr.Column(scale=0, min_width=220):
            run = gr.Button("Compute Table 1", variant="primary", size="lg", elem_id="table1-run")
    runtime = gr.Radio(RUNTIMES, value="lossless", label="Runtime", elem_id="table1-runtime")
    estimate = gr.HTML(elem_id="table1-estimate")  # how long the table will take here, before the click
    progress_box = gr.HTML(elem_classes="progress-box", elem_id="table1-progress")
    status = gr.HTML(elem_id="table1-status")
    table = gr.HTML(elem_id="table1-table")
    figure = gr.Plot(show_label=False, elem_id="table1-heatmap")
    phone_figure = gr.Plot(show_label=False, elem_id="table1-heatmap-phone")  # shown on a phone instead (app.css)
    data = gr.JSON(visible=False)
    action([run.click], run_table1, [models, runtime], [status, table, figure, phone_figure, data],
           failures_to=progress_box,
           api_name="table1", reveal="table1-status", concurrency_id="sts", concurrency_limit=1, show_progress_on=progress_box)
    gr.on([models.change, runtime.change, status.change], estimate_html, [models, runtime], estimate,
          queue=False, show_progress="hidden", api_name="table1_estimate")
    return Table1Parts(models, picker(models), estimate, runtime)
