"""This project's trainer: ``SentenceTransformerTrainer`` plus one callback, minus console output.

:class:`TrainingCallback` forwards progress (throttled), the logged training loss and the
STSb-dev Spearman of each evaluation to a :class:`~sbert_demo.training.reporting.Reporter`, and
checks the cancel flag after every optimiser step: when it is set, training stops at once (no
evaluation, logging or checkpoint for that step). Its cost per step is one ``Event.is_set()`` and
a clock read; ``bench/train.py`` compares the whole against a plain ``SentenceTransformerTrainer``.

:class:`SbertDemoTrainer` drops what the project does not use: the automatic model card (the
project writes its own, offline; the library's samples widget examples with tqdm and the global
``random`` state) and the console printers (progress goes through the reporter).
"""

from __future__ import annotations

import time
from typing import Any

from sentence_transformers import SentenceTransformerTrainer
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback

from .reporting import Reporter

PROGRESS_INTERVAL_S = 0.25  # progress events at most this often (the last step always)


class TrainingCallback(TrainerCallback):
    """Progress, loss and dev-Spearman events for a reporter, and cancellation between steps.

    Costs one ``Event.is_set()`` and a clock read per step; progress events are throttled.
    """

    def __init__(self, reporter: Reporter, cancel: Any = None, metric: str = ""):
        self.reporter, self.cancel, self.metric = reporter, cancel, metric
        self.started = time.perf_counter()
        self.last_progress = 0.0
        self.cancelled = False
        self.eval_seconds = 0.0
        self._eval_started: float | None = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.started = time.perf_counter()
        self.reporter.progress(0, state.max_steps, 0.0)

    def on_step_end(self, args, state, control, **kwargs):
        now = time.perf_counter()
        if self.cancel is not None and self.cancel.is_set():
            self.cancelled = True
            control.should_training_stop = True
            control.should_evaluate = control.should_log = control.should_save = False
            return control
        if now - self.last_progress >= PROGRESS_INTERVAL_S or state.global_step >= state.max_steps:
            self.last_progress = now
            self.reporter.progress(state.global_step, state.max_steps, now - self.started)
        if control.should_evaluate:
            self._eval_started = now
            self.reporter.phase("evaluating", f"Scoring STSb dev at step {state.global_step:,}")
        return control

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            self.reporter.loss(state.global_step, float(logs["loss"]))

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if self._eval_started is not None:
            self.eval_seconds += time.perf_counter() - self._eval_started
            self._eval_started = None
        value = (metrics or {}).get(self.metric)
        if value is not None:
            self.reporter.evaluation(state.global_step, float(value))
        if state.global_step < state.max_steps:
            self.reporter.phase("running", "Training")


def quiet_trainer(trainer_class: type) -> type:
    """``trainer_class`` (a sentence-transformers trainer) without model-card tracking and console printers."""

    class Quiet(trainer_class):
        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.remove_callback(PrinterCallback)
            self.remove_callback(ProgressCallback)

        def add_model_card_callback(self, default_args_dict: dict[str, Any]) -> None:
            """No model card callback: :mod:`sbert_demo.training.saving` writes the card."""

    Quiet.__name__ = Quiet.__qualname__ = f"Quiet{trainer_class.__name__}"
    return Quiet


SbertDemoTrainer = quiet_trainer(SentenceTransformerTrainer)
