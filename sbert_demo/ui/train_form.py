"""The Train tab's form as data: choices, suggested names, defaults, and form fields <-> TrainConfig.

No layout here: the tab (:mod:`sbert_demo.ui.train`) lays out the form and wires its events;
these functions turn what the fields hold into a validated :class:`~sbert_demo.training.TrainConfig`
and back, and describe the plan (device, precision, steps, estimated time).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import gradio as gr

from ..config import settings
from ..models.kinds import TRAINABLE, kind_of
from ..models.registry import get_registry
from ..training import OBJECTIVES, TrainConfig, config_for, device_label, estimate
from ..views import VIEWS
from . import snippets, train_view
from .common import model_choices

DEFAULT_BASE, DEFAULT_OBJECTIVE = VIEWS["train"].default_models[0], "nli-softmax"


OBJECTIVE_HELP = {
    "nli-softmax": "A classifier on (u, v, |u−v|) learns entailment / neutral / contradiction; the "
                   "SBERT paper's main training, on SNLI + MultiNLI.",
    "cosine": "cos(u, v) is regressed onto the gold similarity (STSb scores scaled to 0–1) with "
              "mean-squared error.",
    "mnrl": "Each anchor's positive must score above every other sentence in the batch (the other "
            "positives and the hard negatives): no labels needed, large batches help.",
    "cross-encoder": "Not an embedding model: one transformer reads both sentences together and outputs their "
                     "score (STSb scaled to 0–1). More accurate, but every pair needs its own pass: see the "
                     "STS tab's cost view. It scores pairs in the STS benchmark and Table 1.",
}


UPLOAD_HINTS = {
    "nli-softmax": "CSV/TSV with a header: sentence1, sentence2, label (entailment, neutral, contradiction)",
    "cosine": "CSV/TSV with a header: sentence1, sentence2, score",
    "mnrl": "CSV/TSV with a header: anchor, positive, negative",
    "cross-encoder": "CSV/TSV with a header: sentence1, sentence2, score",
}


CONCAT_CHOICES = [("u, v", "u,v"), ("|u − v|", "|u-v|"), ("u * v", "u*v")]


POOLING_CHOICES = [("mean", "mean"), ("[CLS]", "cls"), ("max", "max")]


def trainable_choices() -> list[tuple[str, str]]:
    """``(label, key)`` of registry models that can be trained (unavailable ones marked)."""
    return model_choices(needs=TRAINABLE)


def kind_fields(base: str) -> dict[str, bool]:
    """Which of the kind-specific fields apply to ``base`` (its kind's ``train_fields``): the one
    rule for showing them, whether the form is filled from defaults or from a running job."""
    fields = kind_of(get_registry().get(base)).train_fields
    return {"pooling": "pooling" in fields, "max_seq_length": "max_seq_length" in fields,
            "dense_dim": "dense_dim" in fields}


# All three at all times: Gradio checks a Radio's value against the choices it was built with, so
# choices narrowed per objective would refuse API calls (cosine + stsb) that never loaded the page.
DATA_CHOICES = [("NLI pairs (SNLI + MultiNLI)", "nli"), ("STSb train (scored pairs)", "stsb"),
                ("Upload a file", "upload")]


def suggested_name(base: str, objective: str) -> str:
    """``<base>-<objective>``, with ``-2``, ``-3``... when ``models/`` already holds that name."""
    stem = f"{base}-{objective}"
    models_dir = settings().models_dir
    name, number = stem, 1
    while (models_dir / name).exists():
        number += 1
        name = f"{stem}-{number}"
    return name


def is_suggestion(name: str | None) -> bool:
    """True for an empty name or one :func:`suggested_name` made, which a new choice may replace."""
    if not (name or "").strip():
        return True
    pattern = "|".join(re.escape(f"{key}-{objective}") for key in get_registry().keys() for objective in OBJECTIVES)
    return re.fullmatch(f"(?:{pattern})(?:-\\d+)?", name.strip()) is not None


def _whole(value: float | None, what: str) -> int | None:
    """A form number as an int; NaN, infinity, fractions and text (API callers) are refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or float(value) != int(value):
        raise ValueError(f"{what} must be a whole number, not {str(value)[:40]!r}.")
    return int(value)


def form_config(base: str, pooling: str, objective: str, concatenation: list[str] | None, data: str,
                upload: str | None, max_pairs: float | None, epochs: float | None, batch_size: float | None,
                learning_rate: float | None, warmup_ratio: float | None, max_seq_length: float | None,
                eval_steps: float | None, seed: float | None, precision: str, dense_dim: float | None,
                output: str, overwrite: bool) -> TrainConfig:
    """The form's fields as a validated :class:`TrainConfig` (empty fields take the defaults;
    0 pairs means all of them and 0 for the sequence length keeps the model's own limit)."""
    if not base:
        raise ValueError("Choose a base model to train.")
    if output is not None and not isinstance(output, str):
        raise ValueError("The new model's name must be text.")
    if data == "upload" and not upload:
        raise ValueError(f"Upload a training file ({UPLOAD_HINTS.get(objective, 'CSV/TSV')}) or choose "
                         "the built-in data.")
    source = upload if data == "upload" else data
    concat = ",".join(concatenation or []) if objective == "nli-softmax" else None
    config = config_for(
        base, objective, (output or "").strip(), data=source, epochs=epochs,
        batch_size=_whole(batch_size, "Batch size"), learning_rate=learning_rate, warmup_ratio=warmup_ratio,
        eval_steps=_whole(eval_steps, "Evaluation interval (steps)"), seed=_whole(seed, "Seed"),
        precision=precision or "auto", pooling=pooling or None, concatenation=concat,
        dense_dim=_whole(dense_dim, "Dense layer size"), overwrite=bool(overwrite),
        max_pairs=_whole(max_pairs, "Maximum number of training pairs") or None,
        max_seq_length=_whole(max_seq_length, "Maximum sequence length") or None,
    )
    # config_for ignores None (it keeps the device's default); an empty or 0 field means "no limit".
    if not max_pairs:
        config = replace(config, max_pairs=None)
    if not max_seq_length:
        config = replace(config, max_seq_length=None)
    return config.validate()


def plan_for(config: TrainConfig) -> str:
    """The plan box for a valid config: device, precision, steps and the estimated time."""
    from ..training.arguments import schedule
    from ..training.settings import caution, training_device

    kind = get_registry().get(config.base).kind  # the kind's name, for the schedule
    label = device_label(config)
    guess = estimate(config)
    plan = schedule(config, guess.examples, kind, training_device(config.precision, kind, base=config.base).device)
    return train_view.plan_html(label, plan.total_steps, guess.examples, config.batch_size, config.epochs,
                                plan.warmup_steps, plan.eval_steps, guess.total_s, guess.training_s,
                                caution=caution(config))


def form_values(config: TrainConfig) -> dict[str, Any]:
    """The form showing ``config`` (an uploaded file cannot be shown again, only that one was used)."""
    shown = kind_fields(config.base)
    objective = config.objective
    data = "upload" if config.data_is_file else config.data_source
    parts = [value for (_, value), used in zip(CONCAT_CHOICES, config.concat_flags()) if used]
    return {
        "base": config.base,
        "pooling": gr.update(value=config.pooling, visible=shown["pooling"]),
        "objective": objective,
        "concatenation": gr.update(value=parts, visible=objective == "nli-softmax"),
        "data": data,
        "upload": gr.update(visible=data == "upload", label=UPLOAD_HINTS[objective]),
        "max_pairs": config.max_pairs or 0,
        "epochs": config.epochs,
        "batch_size": config.batch_size,
        "learning_rate": config.learning_rate,
        "warmup_ratio": config.warmup_ratio,
        "max_seq_length": gr.update(value=config.max_seq_length or 0, visible=shown["max_seq_length"]),
        "eval_steps": config.eval_steps,
        "seed": config.seed,
        "precision": config.precision,
        "dense_dim": gr.update(value=config.dense_dim, visible=shown["dense_dim"]),
        "output": config.output,
        "overwrite": config.overwrite,
        "objective_help": snippets.paragraph(OBJECTIVE_HELP[objective]),
    }
