"""What the Train tab shows about a job, as pure functions of a :class:`JobSnapshot`.

HTML pieces (status, progress bar, before/after table, plan), the curves figure, the log tail and
the JSON the ``train_status`` endpoint returns. Nothing here starts, stops or loads anything, so
each piece is tested with hand-made snapshots. Every value that may come from a user (model
names, file paths, error text) is escaped.
"""

from __future__ import annotations

from typing import Any

from ..training import OBJECTIVE_LABELS, JobSnapshot, TrainConfig
from ..training.curves import training_curves
from ..benchmark.score_changes import score_changes
from ..formatting import about, duration, signed_x100, x100
from .snippets import change_cell, esc, html_table, message

LOG_LINES = 12
OBJECTIVE_NAMES = {"nli-softmax": "NLI softmax", "cosine": "cosine regression", "mnrl": "MNRL",
                   "cross-encoder": "cross-encoder"}
DATA_NAMES = {"nli": "NLI pairs", "stsb": "STSb train"}

# Scoped to the progress component by gr.HTML(css_template=...): app.py's CSS stays untouched.
# --- numbers as words ----------------------------------------------------------------------------

def describe_config(config: TrainConfig) -> str:
    """One line for people: ``glove-6b-50d → glove-nli · NLI softmax on NLI pairs · 1 epoch, ...``."""
    data = DATA_NAMES.get(config.data_source, "an uploaded file")
    epochs = f"{config.epochs:g} epoch{'s' * (config.epochs != 1)}"
    return (f"{config.base} → {config.output} · {OBJECTIVE_NAMES.get(config.objective, config.objective)} "
            f"on {data} · {epochs}, batch {config.batch_size}, lr {config.learning_rate:g}")


# --- the live view -------------------------------------------------------------------------------

def status_html(snap: JobSnapshot) -> str:
    """What the job is doing (or how it ended), with its settings."""
    if snap.config is None:
        return message("No training job has run since the app started. Choose the settings and press Start.",
                       "info")
    head = f"<strong>{esc(snap.state.capitalize())}</strong>: {esc(describe_config(snap.config))}"
    device = f'<div class="muted">on {esc(snap.device)}</div>' if snap.device else ""
    if snap.state == "failed":
        body = esc(snap.error or snap.message or "The training process failed.")
        return f'<div class="notes notes-warning">{head}<br>{body}{device}</div>'
    kind = {"finished": "ok", "cancelled": "warning"}.get(snap.state, "info")
    text = f"<br>{esc(snap.message)}" if snap.message else ""
    return f'<div class="notes notes-{kind}">{head}{text}{device}</div>'


def progress_html(snap: JobSnapshot) -> str:
    """A bar with percent, step/total, elapsed time and ETA (empty before the first job)."""
    if snap.config is None:
        return ""
    fraction = 1.0 if snap.state == "finished" else min(1.0, max(0.0, snap.fraction))
    steps = f"step {snap.step:,} / {snap.total_steps:,}" if snap.total_steps else "preparing"
    parts = [f"<b>{fraction * 100:.0f}%</b>", steps, f"elapsed {duration(snap.elapsed_s)}"]
    if snap.active:
        if snap.eta_s is not None and snap.state == "running":
            parts.append(f"ETA {duration(snap.eta_s)}")
        elif snap.estimate_s is not None and not snap.step:
            parts.append(f"whole run estimated at {about(snap.estimate_s)}")
    else:
        parts.append(snap.state)
    return (f'<div class="train-progress" data-state="{esc(snap.state)}">'
            f'<div class="train-bar train-bar-{esc(snap.state)}" role="progressbar" '
            f'aria-valuenow="{fraction * 100:.0f}" aria-valuemin="0" aria-valuemax="100">'
            f'<span style="width:{fraction * 100:.1f}%"></span></div>'
            f'<div class="train-progress-text">{" · ".join(parts)}</div></div>')


def curves_figure(snap: JobSnapshot):
    """Loss and STSb-dev Spearman x 100 against the step; None before the first job."""
    if snap.config is None:
        return None
    loss_steps, losses = zip(*snap.losses) if snap.losses else ((), ())
    eval_steps, spearman = zip(*snap.evals) if snap.evals else ((), ())
    sample = f" ({snap.curve_pairs:,} dev pairs)" if snap.curve_pairs else ""
    return training_curves(loss_steps, losses, eval_steps, [s * 100 for s in spearman],
                                           f"{snap.config.base} → {snap.config.output}{sample}")


def log_tail(snap: JobSnapshot, lines: int = LOG_LINES) -> str:
    return "\n".join(snap.log[-lines:])


def results_html(snap: JobSnapshot) -> str:
    """Before/after STSb dev and test Spearman x 100 with the change; a note once the model is saved."""
    if not snap.before and not snap.after:
        return ""
    base = snap.config.base if snap.config else "base model"
    trained = snap.model_name or (snap.config.output if snap.config else "trained")
    rows = [[f"STSb {row.split}", x100(row.before), x100(row.after), change_cell(signed_x100(row.change), row.change)]
            for row in score_changes(snap.before, snap.after)]
    table = html_table(["Spearman x 100", f"before ({base})", f"after ({trained})", "change"], rows,
                       numeric=(1, 2, 3))
    return table + _saved_note(snap)


def _saved_note(snap: JobSnapshot) -> str:
    if not snap.model_name:
        return ""
    name = esc(snap.model_name)
    return ('<div class="notes notes-ok">The model <strong>' + name + "</strong> is saved in "
            f"<code>models/{name}</code> and can now be chosen in Explore, STS benchmark and here as a "
            "base model (the model lists refresh when a tab is opened). See what training changed beside "
            "its base in <strong>Why naive fails → Before / after training</strong>.</div>")


# --- before a run --------------------------------------------------------------------------------

def plan_html(device: str, steps: int, examples: int, batch_size: int, epochs: float, warmup_steps: int,
              eval_steps: int, total_s: float, training_s: float, caution: str | None = None) -> str:
    """The plan box: device (and GPU name), precision, steps and the estimated time; ``caution`` (a
    run likely to make the model worse) as a warning under it."""
    name, _, precision = device.rpartition(", ")
    rows = [("Device", esc(name or device)), ("Precision", esc(precision or "fp32")),
            ("Steps", f"{steps:,} ({examples:,} examples ÷ batch {batch_size} × {epochs:g} epoch"
                      f"{'s' * (epochs != 1)}; {warmup_steps:,} warm-up)"),
            ("Dev curve", f"STSb dev Spearman every {eval_steps:,} steps"),
            ("Estimated time", f"<strong>{about(total_s)}</strong> (training {about(training_s)}; the rest "
                               "is start-up and scoring before and after)")]
    lines = "".join(f"<div><strong>{label}:</strong> {value}</div>" for label, value in rows)
    box = f'<div class="notes notes-info train-plan">{lines}</div>'
    return box + (message(caution, "warning") if caution else "")


def plan_problem_html(problem: str) -> str:
    return message(f"Cannot start with these settings: {problem}", "warning")


# --- the train_status endpoint -------------------------------------------------------------------

def snapshot_json(snap: JobSnapshot) -> dict[str, Any]:
    """The snapshot as plain JSON: what ``train_status`` (and ``train_start``/``train_cancel``) return."""
    return {
        "job_id": snap.job_id,
        "state": snap.state,
        "active": snap.active,
        "message": snap.message,
        "step": snap.step,
        "total_steps": snap.total_steps,
        "fraction": round(snap.fraction, 4),
        "elapsed_s": round(snap.elapsed_s, 1),
        "eta_s": None if snap.eta_s is None else round(snap.eta_s, 1),
        "estimate_s": None if snap.estimate_s is None else round(snap.estimate_s, 1),
        "device": snap.device,
        "losses": [[step, loss] for step, loss in snap.losses],
        "evals": [[step, spearman] for step, spearman in snap.evals],
        "before": snap.before,
        "after": snap.after,
        "model_name": snap.model_name,
        "error": snap.error,
        "config": snap.config.as_dict() if snap.config else None,
        "objective_label": OBJECTIVE_LABELS.get(snap.config.objective) if snap.config else None,
        "log_tail": list(snap.log[-LOG_LINES:]),
    }
