"""How a run tells the world what it is doing, and how it is told to stop.

A :class:`Reporter` receives six kinds of events (phase, progress, loss, evaluation, log line,
detail).
The CLI prints them with tqdm; the training process writes them as JSON lines
(:class:`JsonLinesReporter`) which the job manager replays into a snapshot the UI polls. Light on
purpose (no torch, no transformers): the web app imports it.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

logger = logging.getLogger(__name__)

PHASES = ("starting", "evaluating", "running", "saving", "finished", "cancelled", "failed")


class Cancelled(Exception):
    """Raised inside a run when its cancel flag is set; nothing has been saved."""


class Reporter:
    """Receives a run's events; every method is optional (this base class ignores them all)."""

    def phase(self, state: str, message: str = "") -> None:
        """``state`` is one of :data:`PHASES`; ``message`` says what happens, for people."""

    def progress(self, step: int, total: int, elapsed: float) -> None:
        """``step`` of ``total`` optimiser steps done, ``elapsed`` seconds since training began."""

    def loss(self, step: int, value: float) -> None:
        """Mean training loss over the steps since the last call."""

    def evaluation(self, step: int, spearman: float) -> None:
        """Spearman (in [-1, 1]) of cosine similarity on STSb dev (or its sample) at ``step``."""

    def log(self, line: str) -> None:
        """A line for the run's log (already formatted for people)."""

    def detail(self, key: str, value: Any) -> None:
        """A fact about the run: ``device`` (str), ``before`` / ``after`` ({"dev", "test"} Spearman),
        ``curve_pairs`` (dev pairs behind the evaluations), ``model_name`` (once saved)."""


class JsonLinesReporter(Reporter):
    """Writes each event as one JSON line ``[method, [args...]]`` (the training process's stdout)."""

    def __init__(self, stream: Any):
        self.stream = stream
        self._lock = threading.Lock()

    def send(self, method: str, args: list) -> None:
        line = json.dumps([method, list(args)], ensure_ascii=False, default=str)
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()

    def phase(self, state: str, message: str = "") -> None:
        self.send("phase", [state, message])

    def progress(self, step: int, total: int, elapsed: float) -> None:
        self.send("progress", [step, total, elapsed])

    def loss(self, step: int, value: float) -> None:
        self.send("loss", [step, value])

    def evaluation(self, step: int, spearman: float) -> None:
        self.send("evaluation", [step, spearman])

    def log(self, line: str) -> None:
        self.send("log", [line])

    def detail(self, key: str, value: Any) -> None:
        self.send("detail", [key, value])


def replay(reporter: Reporter, event: list | tuple) -> None:
    """Apply one event written by :class:`JsonLinesReporter` (``[method, args]``) to ``reporter``."""
    method, args = event
    if method in ("phase", "progress", "loss", "evaluation", "log", "detail"):
        getattr(reporter, method)(*args)


def check_cancel(cancel: Any) -> None:
    """Raise :class:`Cancelled` when ``cancel`` (a threading/multiprocessing Event, or None) is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled("Training was cancelled; nothing was saved.")
