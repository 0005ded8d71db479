"""What the Train tab shows about a job: :class:`JobSnapshot`, and :class:`JobState` that builds it.

``JobState`` is a :class:`~sbert_demo.training.reporting.Reporter`: the job manager replays the
training process's events into it. Every update replaces one immutable snapshot under a lock, so
:meth:`JobState.snapshot` is a cheap read that any number of pages can poll every second.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from .reporting import Reporter
from .settings import TrainConfig

ACTIVE_STATES = ("starting", "running", "evaluating", "saving")
FINAL_STATES = ("finished", "cancelled", "failed")
MAX_LOG_LINES = 200


@dataclass(frozen=True)
class JobSnapshot:
    """Everything the Train tab shows, at one instant. Scores are Spearman in [-1, 1]."""

    state: str = "idle"  # idle, starting, running, evaluating, saving, finished, cancelled, failed
    job_id: str | None = None
    message: str = ""  # what is happening now, for people
    config: TrainConfig | None = None
    device: str = ""  # e.g. "CPU (1 thread), bf16" once the child has chosen
    step: int = 0
    total_steps: int = 0
    train_elapsed_s: float = 0.0  # since the optimisation loop began
    elapsed_s: float = 0.0  # since the job was started
    eta_s: float | None = None  # remaining seconds of the training loop
    estimate_s: float | None = None  # the whole run, predicted before it started
    losses: tuple[tuple[int, float], ...] = ()  # (step, mean training loss)
    evals: tuple[tuple[int, float], ...] = ()  # (step, STSb dev Spearman); step 0 = the base model
    curve_pairs: int = 0  # dev pairs behind ``evals`` (all 1,500, or a 500-pair sample on CPU)
    before: dict[str, float] | None = None  # {"dev": ..., "test": ...} of the base model
    after: dict[str, float] | None = None  # of the saved model
    model_name: str | None = None  # set when the model is saved and listed in the registry
    error: str | None = None  # the sentence to show when state is "failed"
    log: tuple[str, ...] = ()
    started_at: float | None = None  # time.time()
    finished_at: float | None = None
    purpose: str = ""  # "" for a user's run; e.g. "talk" for the presenter view's own

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def fraction(self) -> float:
        return self.step / self.total_steps if self.total_steps else 0.0


class JobState(Reporter):
    """The parent's view of one job, updated from the child's events (thread-safe)."""

    def __init__(self, job_id: str, config: TrainConfig, estimate_s: float | None, purpose: str = ""):
        self.lock = threading.Lock()
        self.snap = JobSnapshot(state="starting", job_id=job_id, message="Starting the training process",
                                config=config, estimate_s=estimate_s, started_at=time.time(), purpose=purpose)
        self.losses: list[tuple[int, float]] = []
        self.evals: list[tuple[int, float]] = []
        self.lines: list[str] = []

    def _update(self, **changes: Any) -> None:
        with self.lock:
            if self.snap.state not in FINAL_STATES:
                self.snap = replace(self.snap, **changes)

    def phase(self, state: str, message: str = "") -> None:
        if state in FINAL_STATES:
            self.finish(state, message)
        else:
            self._update(state=state, message=message)

    def progress(self, step: int, total: int, elapsed: float) -> None:
        eta = elapsed / step * (total - step) if step else None
        self._update(step=step, total_steps=total, train_elapsed_s=elapsed, eta_s=eta)

    def loss(self, step: int, value: float) -> None:
        with self.lock:
            self.losses.append((step, value))
            self.snap = replace(self.snap, losses=tuple(self.losses))

    def evaluation(self, step: int, spearman: float) -> None:
        with self.lock:
            self.evals.append((step, spearman))
            self.snap = replace(self.snap, evals=tuple(self.evals))

    def log(self, line: str) -> None:
        with self.lock:
            self.lines = [*self.lines[-(MAX_LOG_LINES - 1):], line]
            self.snap = replace(self.snap, log=tuple(self.lines))

    def detail(self, key: str, value: Any) -> None:
        if key in ("device", "before", "after", "model_name", "curve_pairs"):
            self._update(**{key: value})

    def finish(self, state: str, message: str, error: str | None = None) -> None:
        with self.lock:
            if self.snap.state in FINAL_STATES:
                return
            self.snap = replace(self.snap, state=state, message=message, error=error, eta_s=None,
                                finished_at=time.time())

    def snapshot(self) -> JobSnapshot:
        with self.lock:
            snap = self.snap
        end = snap.finished_at or time.time()
        return replace(snap, elapsed_s=end - (snap.started_at or end))
