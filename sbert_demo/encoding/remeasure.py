"""Unsure runtime decisions measured again while the machine is idle, never during a visitor's request.

A decision whose winner beat the runner-up by less than their rounds disagree
(:meth:`.runtime_choice.Decision.unsure`) was probably made while something else used the CPU. The app's
warm-up thread then waits for a quiet machine (every core together below :data:`IDLE_PERCENT` busy for
:data:`IDLE_SECONDS`: no visitor's request and no other process at work) and measures such a model again;
the new rounds join the kept ones (each candidate's best round kept), so the decision converges on what a
quiet machine measures. ``python -m sbert_demo prepare --remeasure`` does the same on demand.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from . import model_cache

logger = logging.getLogger(__name__)

IDLE_PERCENT = 20.0  # the whole machine's CPU use below which it counts as idle
IDLE_SECONDS = 15.0
TRIES = 3  # measurements per unsure model at most (each one adds its rounds)


def machine_idle(seconds: float = IDLE_SECONDS, percent: float = IDLE_PERCENT) -> bool:
    """Whether every core together was less than ``percent`` busy over the next ``seconds``."""
    import psutil

    return psutil.cpu_percent(interval=seconds) < percent


def unsure(keys: Sequence[str]) -> list[str]:
    """The models of ``keys`` that run where measuring put them and whose kept decision is unsure on either path
    (never measures). A model on the CPU-flag rules (``SBERT_DEMO_RUNTIME_CHOICE=rules``) or on an explicit
    back-end or precision does not read the decision, so it is never measured again: an app on the rules whose
    cache holds an unsure decision (a deployment's prepare made it) neither waits for an idle machine nor times
    runtimes it does not use."""
    found = []
    for key in keys:
        try:
            if not model_cache.measures_runtime(key):
                continue
            decision = model_cache.kept_decision(key)
        except ValueError:
            continue
        if decision is not None and (decision.unsure(False) or decision.unsure(True)):
            found.append(key)
    return found


def remeasure_when_idle(keys: Sequence[str], stop: threading.Event | None = None,
                        idle: Callable[[], bool] = machine_idle, tries: int = TRIES) -> dict[str, str]:
    """Measure each unsure model of ``keys`` again when the machine is idle, up to ``tries`` times or until it
    is sure; returns each measured model's verdicts (lossless; fast). ``stop`` ends the wait."""
    from ..gpu import on_the_cpu

    stop = stop or threading.Event()
    verdicts: dict[str, str] = {}
    for key in unsure(keys):
        for _ in range(tries):
            while not stop.is_set() and not idle():
                stop.wait(5)
            if stop.is_set():
                return verdicts
            with on_the_cpu():
                decision = model_cache.runtime_decision(key, again=True)
            verdicts[key] = f"lossless {decision.verdict(False)}; fast {decision.verdict(True)}"
            logger.info("Measured %s again while the machine was idle: %s", key, verdicts[key])
            if not (decision.unsure(False) or decision.unsure(True)):
                break
    return verdicts
