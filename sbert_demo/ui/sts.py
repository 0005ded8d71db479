"""STS benchmark tab: Spearman and Pearson of cosine similarity against gold scores, live; with two
more parts, Table 1 on seven STS sets (:mod:`.table1`) and the cost of cross-encoding (:mod:`.cost`).

The table fills in model by model (a generator yields after each one); beside it a bar chart
against the SBERT paper's published STSb test numbers, and below, one gold-vs-cosine scatter per
model. Embeddings are cached, so a repeated comparison returns at once.
"""

from __future__ import annotations

import math

import gradio as gr

from ..benchmark import plots as benchmark_plots
from ..benchmark.evaluation import StsResult, evaluate_many
from ..data.benchmarks import sts_split
from ..data.files import read_scored_pairs
from ..data.records import ScoredPairs
from ..explore.exports import write_table_csv
from ..formatting import x100
from ..models.kinds import SCORES_PAIRS
from ..models.per_model import chosen_models
from ..models.registry import get_registry, requested_keys
from ..views import VIEWS
from . import cost, snippets, table1
from .common import QUIET, action, user_errors, warn_once_about_the_cache
from .links import TabParts
from .model_select import default_models, model_dropdown, picker
from .page_work import watched

DATASETS = [("STSb dev", "dev"), ("STSb test", "test"),
            ("Upload scored pairs", "upload")]
MAX_MODELS = VIEWS["sts"].max_models  # chosen models
MAX_ROWS = 16  # models and their training-free variants
MAX_SCATTERS = 12  # one scatter slot for each of the first rows that run
FIXES = [("centred", "center"), ("all-but-the-top 3", "abtt3"), ("whitened", "whiten")]
HEADERS = ["model", "family", "Spearman x100", "Pearson x100", "pairs", "seconds", "cached", "computed with", "note"]


# --- handlers ------------------------------------------------------------------------------------

def show_upload(dataset: str) -> dict:
    return gr.update(visible=dataset == "upload")


def load_pairs(dataset: str, path: str | None) -> ScoredPairs:
    if not isinstance(dataset, str) or not dataset.strip():
        raise ValueError("Choose the data to evaluate on: STSb dev, STSb test or an uploaded file of scored pairs.")
    if dataset == "upload":
        if not path or not isinstance(path, str):
            raise ValueError("Upload a CSV/TSV file of scored pairs (header: sentence1, sentence2, score) "
                             "or choose STSb dev or test.")
        return read_scored_pairs(path)
    return sts_split(dataset)


def check_models(model_keys: list[str] | None, fix_names: list[str] | None = None) -> list[str]:
    """The rows to evaluate: each chosen model, followed by its training-free variants."""
    keys = chosen_models(model_keys, MAX_MODELS, "evaluate")
    chosen = requested_keys(fix_names)
    known = [name for _, name in FIXES]
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise ValueError(f"Unknown training-free fix {unknown[0]!r}; choose from {', '.join(known)}.")
    fixes = [name for name in known if name in chosen]  # always in the same order, whatever the clicks
    rows = list(dict.fromkeys(row for key in keys for row in
                              [key, *(f"{key}+{fix}" for fix in fixes if "+" not in key)]))
    if len(rows) > MAX_ROWS:
        raise ValueError(f"{len(keys)} models with {len(fixes)} fixes make {len(rows)} rows; at most "
                         f"{MAX_ROWS} fit one comparison. Choose fewer models or fixes.")
    return rows


@user_errors
def run_sts(dataset: str, path: str | None, model_keys: list[str], fix_names: list[str] | None = None,
            progress=gr.Progress()):
    """Yield (status, table, bar chart, *scatters) after each model (and each variant) finishes; the run stops
    where it is when its page closes."""
    progress = watched(progress)
    pairs = load_pairs(dataset, path)
    keys = check_models(model_keys, fix_names)
    status = _status(pairs, keys)
    results: list[StsResult] = []

    def step(fraction: float, what: str) -> None:
        progress(fraction, desc=what)

    # Scatter slots are laid out before the figures arrive: a plot drawn into a row that later
    # gains neighbours would keep its old width and be cut off.
    slots = {key: slot for slot, key in enumerate([k for k in keys if _available(k)][:MAX_SCATTERS])}
    # Every yield repeats each slot's latest update (a new dict: Gradio pops "value" from the one it is given),
    # never a gr.skip() after a figure. Gradio streams a generator's yields as diffs that its page applies in
    # place, to the very update it handed the plot, so a skip right after a figure (two cached models answer
    # within milliseconds) deleted the figure before the plot had read it: that model's scatter stayed empty.
    # A repeated update is an empty diff.
    scatters = [gr.update(visible=slot < len(slots), value=None) for slot in range(MAX_SCATTERS)]
    progress(0, desc="Starting")
    yield [status, _table(results), None, *map(dict, scatters)]
    for result in evaluate_many(keys, pairs, progress=step):
        results.append(result)
        if result.key in slots:
            scatters[slots[result.key]] = _scatter(result, pairs)
        warn_once_about_the_cache()
        yield [status, _table(results), bar_chart(results, dataset if dataset in ("dev", "test") else None),
               *map(dict, scatters)]


def table_rows(table) -> dict:
    """The page's results table (a pandas DataFrame) as the JSON the ``sts`` endpoint returns."""
    rows = table.to_numpy().tolist() if table is not None else []
    return {"headers": HEADERS, "data": rows}


def table_cards(rows: object) -> str:
    """The results (``table_rows``' JSON) as the cards a phone shows instead of the wide table: each model a
    card, each number on a line after its column's name (app.css hides one or the other by screen width)."""
    data = rows.get("data") if isinstance(rows, dict) else None
    return snippets.cards(HEADERS, [row for row in data or [] if isinstance(row, list)], numeric=(2, 3, 4, 5))


@user_errors
def table_csv(table: object, dataset: object) -> dict:
    """The results table (``{"headers": [...], "data": [[...], ...]}``, as ``sts`` returns it) as a CSV
    file, shown as a download."""
    rows = table.get("data") if isinstance(table, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) <= len(HEADERS) for row in rows):
        raise ValueError("The results to save are not the benchmark's table; run the benchmark and pass the "
                         "table the sts endpoint returned, unchanged.")
    rows = snippets.filled(rows)
    name = f"sts-{dataset if dataset in ('dev', 'test') else 'uploaded-pairs'}-results"
    return gr.update(value=str(write_table_csv(name, HEADERS, rows)), visible=True)


# --- results as table and figures ----------------------------------------------------------------

FEW_PAIRS = 50  # below this a Spearman's 95% interval is wider than the gaps between the models compared


def spearman_uncertainty(pairs: int) -> str:
    """A warning for a Spearman on too few pairs to compare models (its 95% interval from Fisher's z, with
    Bonett and Wright's standard error 1.03 / sqrt(n - 3) for rank correlations), else ""."""
    if pairs >= FEW_PAIRS:
        return ""
    if pairs <= 3:
        return f"With {pairs} pairs a Spearman correlation means nothing; give at least {FEW_PAIRS} pairs."
    half = 1.96 * 1.03 / (pairs - 3) ** 0.5
    width = math.tanh(half)  # the interval's half-width around a correlation of 0, on the correlation's scale
    return (f"With only {pairs} pairs a Spearman is too uncertain to rank models: its 95% interval spans about "
            f"±{width:.2f} (±{100 * width:.0f} on the x100 scale). Give at least {FEW_PAIRS} pairs to compare them.")


def _status(pairs: ScoredPairs, keys: list[str]) -> str:
    # The score range is shown because uploads may use any scale; an outlier (e.g. 1e9) shows here.
    scores = f"gold scores {min(pairs.scores):g} to {max(pairs.scores):g}"
    intro = snippets.message(f"{pairs.name}: {len(pairs):,} scored pairs ({scores}), {len(keys)} model(s).",
                             "info")
    few = spearman_uncertainty(len(pairs))
    if few:
        intro += snippets.message(few, "warning")
    if not pairs.problems:
        return intro
    return intro + snippets.notes_box(pairs.problems, title=f"Some rows of {pairs.name} were rejected",
                                      kind="warning")


def _available(key: str) -> bool:
    try:
        return get_registry().availability(key).available
    except ValueError:  # an unknown key: evaluate_many reports it in the table
        return False


def result_row(result: StsResult) -> list[str]:
    note = result.error or "; ".join(result.notes)
    return [result.label, result.family, x100(result.spearman), x100(result.pearson), f"{result.n:,}",
            f"{result.seconds:.2f}", "yes" if result.cached else "no", result.runtime, note]


def _table(results: list[StsResult]) -> dict:
    return {"headers": HEADERS, "data": [result_row(r) for r in results]}


def bar_chart(results: list[StsResult], split: str | None):
    """Spearman bars of the results that ran, beside the paper's STSb test marks where the run is on
    STSb test (None when none ran)."""
    rows = [{"label": r.label, "family": r.family, "spearman": r.spearman * 100}
            for r in results if r.error is None]
    return benchmark_plots.sts_bar_chart(rows, split=split, horizontal=True) if rows else None


def _scatter(result: StsResult, pairs: ScoredPairs) -> dict:
    if result.error is not None:
        return gr.update(visible=False, value=None)
    figure = benchmark_plots.gold_vs_cosine(pairs.scores, result.cosine, pairs.sentences1, pairs.sentences2,
                                  f"{result.label}: Spearman {result.spearman * 100:.2f}")
    return gr.update(visible=True, value=figure)


# --- layout and wiring ---------------------------------------------------------------------------

def build_tab() -> TabParts:
    """Build the STS tab inside the current ``gr.Tab``: the STS benchmark, Table 1 on seven sets, and the
    cost of cross-encoding, each a part a link can open; returns what to refresh and what a link can set."""
    with gr.Tabs(elem_id="sts-parts", overflow_behavior="wrap") as modes:
        with gr.Tab("STS benchmark", id="stsb") as stsb_tab:
            refreshers, linkable = _stsb_part()
        with gr.Tab("Table 1: seven STS sets", id="table1") as table1_tab:
            table1_parts = table1.build()
        with gr.Tab("The cost: cross- vs bi-encoder", id="cost") as cost_tab:
            cost_refreshers = cost.build()
    # Opening Table 1 says how long it would take here, before anyone presses its button.
    table1_tab.select(table1.estimate_html, [table1_parts.models, table1_parts.runtime], table1_parts.estimate,
                      **QUIET)
    parts = {"sts": (stsb_tab, {}), "table1": (table1_tab, {"models": table1_parts.models}), "cost": (cost_tab, {})}
    return TabParts([*refreshers, table1_parts.refresher, *cost_refreshers], {**linkable, "mode": modes}, parts)


def _stsb_part() -> tuple[list, dict]:
    gr.Markdown("How well does cosine similarity rank sentence pairs like people do? Spearman rank "
                "correlation x 100 against the gold scores of the STS benchmark, as in the SBERT paper.",
                elem_classes="tab-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=300):
            dataset = gr.Radio(DATASETS, value="dev", label="Data", elem_id="sts-dataset")
            upload = gr.File(label="Scored pairs (.csv / .tsv with sentence1, sentence2, score)",
                             file_types=[".csv", ".tsv", ".txt"], type="filepath", visible=False,
                             elem_id="sts-upload")
            models = model_dropdown(default_models(("naive", "siamese"), limit=MAX_MODELS), MAX_MODELS,
                                    label="Models", info="Defaults: every available naive and SBERT model; "
                                                         "cross-encoders trained here score pairs too.",
                                    elem_id="sts-models", needs=SCORES_PAIRS)
            run = gr.Button("Run the benchmark", variant="primary", size="lg", elem_id="sts-run")
            progress_box = gr.HTML(elem_classes="progress-box", elem_id="sts-progress")
            fixes = gr.CheckboxGroup(FIXES, value=[], label="Training-free fixes",
                                     info="Adds each fix as a row beside its model, fitted on the STSb train "
                                          "sentences (no labels): does it help naive embeddings? SBERT?",
                                     elem_id="sts-fixes")
            status = gr.HTML(elem_id="sts-status")
        with gr.Column(scale=2):
            table = gr.Dataframe(headers=HEADERS, interactive=False, wrap=True, label="Results",
                                 column_widths=["21%", "9%", "11%", "11%", "8%", "10%", "8%", "22%"],
                                 elem_id="sts-table")
            cards = gr.HTML(elem_id="sts-cards")  # the table as a phone shows it (app.css)
            results_file = gr.File(label="Results as CSV", interactive=False, visible=False, elem_id="sts-csv")
            bars = gr.Plot(show_label=False, elem_id="sts-bars")
    gr.Markdown("**Gold score against cosine, one point per pair** (hover for the sentences). Naive "
                "BERT squeezes every pair into a narrow band of high cosines.", elem_classes="section-title")
    with gr.Row(elem_classes="scatter-grid"):
        scatters = [gr.Plot(show_label=False, visible=False, min_width=380, elem_classes="sts-scatter")
                    for _ in range(MAX_SCATTERS)]

    dataset.change(show_upload, dataset, upload, api_visibility="private", queue=False, show_progress="hidden")
    done = action([run.click], run_sts, [dataset, upload, models, fixes], [status, table, bars, *scatters],
                  failures_to=progress_box, api_name="sts", reveal="sts-status", concurrency_id="sts", concurrency_limit=1,
                  show_progress_on=progress_box)
    # The CSV is written from the table's JSON: an API caller's malformed table reaches table_csv (which
    # says what is wrong) instead of failing inside the Dataframe component.
    rows = gr.JSON(visible=False)
    shown = done.success(table_rows, table, rows, **QUIET)
    shown.then(table_csv, [rows, dataset], results_file, api_name="sts_csv", show_progress="hidden")
    shown.then(table_cards, rows, cards, **QUIET)
    return [picker(models)], {"models": models, "data": dataset}
