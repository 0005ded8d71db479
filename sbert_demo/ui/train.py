"""Train tab: fine-tune a registry model the SBERT way, watch it learn, compare before and after.

The form fills the defaults for the chosen base model and objective on this machine
(:func:`~sbert_demo.training.config_for`) and shows the plan: device, precision, steps and the
estimated time. Start hands the config to the process-wide job manager
(:func:`~sbert_demo.training.training_jobs`), which trains in a child process, so this page and
every other tab stay responsive. A 1 s ``gr.Timer`` polls the job's snapshot and re-renders only
the parts that changed; a reloaded page (or a second visitor) sees the same job.

Endpoints: ``train_start`` (the form's fields), ``train_cancel`` and ``train_status``, each
returning the job as JSON (:func:`~sbert_demo.ui.train_view.snapshot_json`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from ..config import PRECISIONS, settings
from ..models.registry import get_registry
from ..training import DISABLED, OBJECTIVE_LABELS, OBJECTIVES, TrainConfig, config_for, defaults_for, training_jobs
from ..training.settings import DEFAULT_DATA
from . import snippets, train_view
from .common import QUIET, action, user_errors
from .model_select import Refresher
from .train_form import (
    CONCAT_CHOICES,
    DATA_CHOICES,
    DEFAULT_BASE,
    DEFAULT_OBJECTIVE,
    OBJECTIVE_HELP,
    POOLING_CHOICES,
    UPLOAD_HINTS,
    form_config,
    form_values,
    is_suggestion,
    kind_fields,
    plan_for,
    suggested_name,
    trainable_choices,
)

POLL_SECONDS = 1.0
PART_NAMES = ("status", "progress", "curves", "results", "log", "cancel", "base")


@user_errors
def refresh_base(current: str | None) -> dict:
    """Fresh choices; the value is left alone unless it no longer exists (the page-load handler may
    be setting it to the running job's base model at the same moment)."""
    choices = trainable_choices()
    if current in {key for _, key in choices}:
        return gr.update(choices=choices)
    return gr.update(choices=choices, value=DEFAULT_BASE)


# --- handlers ------------------------------------------------------------------------------------

@user_errors
def load_form() -> list:
    """On page load: the running job's settings (a reload shows what is training), else the
    defaults with a fresh model name; then the plan."""
    snap = training_jobs().snapshot()
    if snap.active and snap.config is not None:
        config = snap.config
    else:
        config = config_for(DEFAULT_BASE, DEFAULT_OBJECTIVE, suggested_name(DEFAULT_BASE, DEFAULT_OBJECTIVE))
    values = form_values(config)
    try:
        plan = plan_for(config)
    except ValueError as exc:
        plan = train_view.plan_problem_html(str(exc))
    return [values[name] for name in LOAD_FIELDS] + [plan]


def update_plan(*form: Any) -> str:
    """Re-plan as settings change; a bad setting is shown in the box (no pop-up while typing)."""
    try:
        return plan_for(form_config(*form))
    except ValueError as exc:
        return train_view.plan_problem_html(str(exc))


@user_errors
def fill_defaults(base: str, objective: str, output: str, data: str) -> list:
    """The defaults for ``base`` + ``objective`` on this device, and which fields apply."""
    entry = get_registry().get(base)
    shown = kind_fields(entry.key)
    defaults = config_for(base, objective, output or "unnamed")
    source = data if data == "upload" else DEFAULT_DATA[objective]
    name = suggested_name(entry.key, objective) if is_suggestion(output) else gr.skip()
    return [
        gr.update(visible=shown["pooling"], value=entry.pooling or "mean"),
        gr.update(visible=objective == "nli-softmax"),
        source,
        gr.update(visible=source == "upload", label=UPLOAD_HINTS[objective]),
        defaults.max_pairs or 0, defaults.batch_size, defaults.learning_rate, defaults.warmup_ratio,
        gr.update(visible=shown["max_seq_length"], value=defaults.max_seq_length or 0),
        gr.update(visible=shown["dense_dim"]),
        name,
        snippets.paragraph(OBJECTIVE_HELP[objective]),
    ]


def show_upload(data: str) -> dict:
    return gr.update(visible=data == "upload")


@user_errors
def start_training(base: str, pooling: str, objective: str, concatenation: list[str], data: str,
                   upload: str | None = None, max_pairs: float | None = None, epochs: float | None = None,
                   batch_size: float | None = None, learning_rate: float | None = None,
                   warmup_ratio: float | None = None, max_seq_length: float | None = None,
                   eval_steps: float | None = None, seed: float | None = None, precision: str | None = None,
                   dense_dim: float | None = None, output: str | None = None, overwrite: bool = False) -> dict:
    """Start a job in the background; ValueError (a message) when busy, switched off or invalid.

    Defaults of None (the file upload above all) keep API calls short: the client fills the rest
    from the form's initial values.
    """
    config = form_config(base, pooling, objective, concatenation, data, upload, max_pairs, epochs, batch_size,
                         learning_rate, warmup_ratio, max_seq_length, eval_steps, seed, precision, dense_dim,
                         output, overwrite)
    training_jobs().start(config)
    return train_view.snapshot_json(training_jobs().snapshot())


@user_errors
def cancel_training() -> dict:
    """Ask the running job to stop (it does within a few seconds; nothing is saved)."""
    requested = training_jobs().cancel()
    return {**train_view.snapshot_json(training_jobs().snapshot()), "cancel_requested": requested}


def train_status() -> dict:
    """The current (or last) training job as JSON: state, step, total_steps, eta_s, losses, evals,
    before, after, model_name, error, config, log_tail."""
    return train_view.snapshot_json(training_jobs().snapshot())


# --- the live view: render only what changed -----------------------------------------------------

def _part_keys(snap) -> dict[str, tuple]:
    """Small keys per view part; a part is re-rendered only when its key changes."""
    ticking = int(snap.elapsed_s) if snap.active else None
    return {
        "status": (snap.job_id, snap.state, snap.message, snap.device, snap.error),
        "progress": (snap.job_id, snap.state, snap.step, snap.total_steps, ticking),
        "curves": (snap.job_id, len(snap.losses), len(snap.evals), snap.curve_pairs),
        "results": (snap.job_id, repr(snap.before), repr(snap.after), snap.model_name),
        "log": (snap.job_id, len(snap.log), snap.log[-1] if snap.log else None),
        "cancel": (snap.active,),
        "base": (snap.job_id, snap.model_name),
    }


def _new_models(snap) -> Any:
    """Once a job has saved a model, this tab's base list gains it too (other tabs refresh on select)."""
    return gr.update(choices=trainable_choices()) if snap.model_name else gr.skip()


RENDERERS: dict[str, Callable] = {
    "status": train_view.status_html,
    "progress": train_view.progress_html,
    "curves": lambda snap: gr.update(value=train_view.curves_figure(snap), visible=snap.config is not None),
    "results": train_view.results_html,
    "log": train_view.log_tail,
    "cancel": lambda snap: gr.update(interactive=snap.active),
    "base": _new_models,
}


def poll(seen: dict | None) -> list:
    """The timer's tick: ``[keys, *parts]`` with ``gr.skip()`` for every part that has not changed."""
    snap = training_jobs().snapshot()
    keys = _part_keys(snap)
    seen = seen or {}
    if keys == seen:
        return [gr.skip()] * (1 + len(PART_NAMES))
    return [keys, *(RENDERERS[name](snap) if keys[name] != seen.get(name) else gr.skip()
                    for name in PART_NAMES)]


def show_job() -> list:
    """Everything about the current job, re-rendered (page load, after Start and Cancel)."""
    return poll(None)


# --- layout and wiring ---------------------------------------------------------------------------

def _form(enabled: bool) -> dict[str, gr.components.Component]:
    """The settings, laid out; the initial values are the GloVe + NLI softmax run's defaults."""
    glove = defaults_for(get_registry().get(DEFAULT_BASE).kind, "cpu")  # GloVe's: the same on every device
    on = {"interactive": enabled}
    fields: dict[str, gr.components.Component] = {}
    fields["base"] = gr.Dropdown(trainable_choices(), value=DEFAULT_BASE, label="Base model", allow_custom_value=True,
                                 elem_id="train-base", **on)
    fields["pooling"] = gr.Radio(POOLING_CHOICES, value="mean", label="Pooling", visible=False,
                                 elem_id="train-pooling", **on)
    fields["objective"] = gr.Radio([(OBJECTIVE_LABELS[o], o) for o in OBJECTIVES], value=DEFAULT_OBJECTIVE,
                                   label="Objective", elem_id="train-objective", **on)
    objective_help = gr.HTML(snippets.paragraph(OBJECTIVE_HELP[DEFAULT_OBJECTIVE]), elem_id="train-objective-help")
    fields["concatenation"] = gr.CheckboxGroup(CONCAT_CHOICES, value=["u,v", "|u-v|"],
                                               label="Softmax classifier input", elem_id="train-concat", **on)
    fields["data"] = gr.Radio(DATA_CHOICES, value="nli", label="Training data",
                              elem_id="train-data", **on)
    fields["upload"] = gr.File(label=UPLOAD_HINTS[DEFAULT_OBJECTIVE], file_types=[".csv", ".tsv", ".txt"],
                               type="filepath", visible=False, elem_id="train-upload", **on)
    with gr.Accordion("Hyperparameters", open=True):
        with gr.Row():
            fields["max_pairs"] = gr.Number(0, precision=0, label="Max training pairs (0 = all)",
                                            elem_id="train-max-pairs", **on)
            fields["epochs"] = gr.Number(1, label="Epochs", elem_id="train-epochs", **on)
        with gr.Row():
            fields["batch_size"] = gr.Number(glove["batch_size"], precision=0, label="Batch size",
                                             elem_id="train-batch", **on)
            fields["learning_rate"] = gr.Number(glove["learning_rate"], label="Learning rate",
                                                elem_id="train-lr", **on)
        with gr.Row():
            fields["warmup_ratio"] = gr.Number(glove["warmup_ratio"], label="Warm-up (fraction of steps)",
                                               elem_id="train-warmup", **on)
            fields["max_seq_length"] = gr.Number(0, precision=0, label="Max sequence length (0 = model's)",
                                                 visible=False, elem_id="train-seq", **on)
        with gr.Row():
            fields["eval_steps"] = gr.Number(0, precision=0, label="Dev Spearman every N steps (0 = auto)",
                                             elem_id="train-eval-steps", **on)
            fields["seed"] = gr.Number(42, precision=0, label="Seed", elem_id="train-seed", **on)
        with gr.Row():
            fields["precision"] = gr.Radio(list(PRECISIONS), value="auto", label="Precision",
                                           elem_id="train-precision", **on)
            fields["dense_dim"] = gr.Number(TrainConfig.dense_dim, precision=0, label="GloVe dense layer size",
                                            elem_id="train-dense", **on)
    with gr.Row():
        fields["output"] = gr.Textbox(suggested_name(DEFAULT_BASE, DEFAULT_OBJECTIVE), label="New model name",
                                      max_lines=1, scale=3, elem_id="train-output", **on)
        fields["overwrite"] = gr.Checkbox(False, label="Overwrite", scale=1, min_width=100,
                                          elem_id="train-overwrite", **on)
    fields["objective_help"] = objective_help
    return fields


FORM_FIELDS = ("base", "pooling", "objective", "concatenation", "data", "upload", "max_pairs", "epochs",
               "batch_size", "learning_rate", "warmup_ratio", "max_seq_length", "eval_steps", "seed",
               "precision", "dense_dim", "output", "overwrite")
LOAD_FIELDS = (*FORM_FIELDS, "objective_help")
DEFAULT_FIELDS = ("pooling", "concatenation", "data", "upload", "max_pairs", "batch_size", "learning_rate",
                  "warmup_ratio", "max_seq_length", "dense_dim", "output", "objective_help")


def build_tab() -> list[Refresher]:
    """Build the Train tab inside the current ``gr.Tab``; returns what to refresh when it is shown."""
    enabled = settings().training_enabled
    gr.Markdown("Fine-tune a model the SBERT way and watch STSb dev Spearman move while it trains. "
                "One job runs at a time, in the background: other tabs stay usable, and a reloaded "
                "page shows the running job.", elem_classes="tab-intro")
    if not enabled:
        gr.HTML(snippets.message(DISABLED, "warning"), elem_id="train-disabled")
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=340):
            fields = _form(enabled)
        # The plan, Start and the live status together at the top: Start is on the first screen, and
        # the status and the curve stay in view while the job runs.
        with gr.Column(scale=2):
            plan = gr.HTML(snippets.paragraph("The plan appears when the page has loaded.") if enabled else "",
                           elem_id="train-plan")
            with gr.Row():
                start = gr.Button("Start training", variant="primary", interactive=enabled, elem_id="train-start")
                cancel = gr.Button("Cancel", variant="stop", interactive=False, elem_id="train-cancel")
            feedback = gr.HTML(elem_id="train-feedback")
            status = gr.HTML(elem_id="train-status")
            progress = gr.HTML(elem_id="train-progress")
            curves = gr.Plot(show_label=False, visible=False, elem_id="train-curves")
            results = gr.HTML(elem_id="train-results")
            with gr.Accordion("Log", open=False, visible=enabled):
                log = gr.Textbox(show_label=False, lines=8, max_lines=12, interactive=False, autoscroll=True,
                                 elem_id="train-log")
    job_json = gr.JSON(visible=False)
    seen = gr.State(None)
    view = {"status": status, "progress": progress, "curves": curves, "results": results, "log": log,
            "cancel": cancel, "base": fields["base"]}
    view_outputs = [seen, *(view[name] for name in PART_NAMES)]
    form = [fields[name] for name in FORM_FIELDS]

    action([start.click], start_training, form, job_json, failures_to=feedback, api_name="train_start", reveal="train-status",
           concurrency_id="train", concurrency_limit=1, show_progress="hidden").then(show_job, None, view_outputs, **QUIET)
    action([cancel.click], cancel_training, None, job_json, failures_to=feedback, api_name="train_cancel", queue=False,
           show_progress="hidden").then(show_job, None, view_outputs, **QUIET)
    gr.api(train_status, api_name="train_status", queue=False)
    if enabled:
        gr.on(None, show_job, None, view_outputs, **QUIET)  # no triggers, no inputs: on page load
        timer = gr.Timer(POLL_SECONDS)
        timer.tick(poll, seen, view_outputs, **QUIET)
        _wire_form(fields, form, plan)
    return [Refresher(refresh_base, fields["base"])]


def _wire_form(fields: dict, form: list, plan: gr.HTML) -> None:
    defaults = [fields[name] for name in DEFAULT_FIELDS]
    gr.on(None, load_form, None, [*(fields[name] for name in LOAD_FIELDS), plan], **QUIET)  # on page load
    for name in ("base", "objective"):
        fields[name].input(fill_defaults, [fields["base"], fields["objective"], fields["output"], fields["data"]],
                           defaults, **QUIET).then(update_plan, form, plan, **QUIET)
    fields["data"].input(show_upload, fields["data"], fields["upload"], **QUIET).then(update_plan, form, plan,
                                                                                        **QUIET)
    others = [fields[name].input for name in FORM_FIELDS if name not in ("base", "objective", "data", "upload")]
    gr.on([*others, fields["upload"].change], update_plan, form, plan, trigger_mode="always_last", **QUIET)
