"""Every computed step of the talk, kept: computed once in the background, then replayed at once.

A step on stage must answer within two seconds, and Table 1 alone encodes 26,139 sentences. So a
step's numbers (:mod:`.story`) are computed once per machine and kept, in memory and as a pickle in
``<cache>/talk/``, keyed by what they depend on: the step, :data:`VERSION`, the data folder and
the identity and measured runtimes of the talk's two models (new model files or a new CPU: computed
again). ``python -m sbert_demo prepare`` and the Talk tab's **Rehearse** compute every step (and
train step 7) before the talk; a step asked for before then is computed in the background, one
step at a time, while the page shows its progress: a presenter who moves on is never kept waiting
by it, and coming back finds the work done or still going, never started twice.

Example::

    >>> from sbert_demo.talk.rehearsal import rehearsal
    >>> work = rehearsal().start(1)          # paraphrases: computed in the background
    >>> work.wait() and rehearsal().result(1) is not None
    True
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import settings
from ..models.per_model import Progress
from ..shared import BoundedCache, process_wide
from .story import NAIVE, SIAMESE, STEPS, check_step

logger = logging.getLogger(__name__)

VERSION = "1"  # bump when a step's numbers change shape or meaning


@dataclass
class Work:
    """One step being computed: its progress, then its result or the sentence that says why not."""

    step: int
    fraction: float = 0.0
    what: str = "Waiting for the step before it"
    result: Any = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)

    def report(self, fraction: float, what: str) -> None:
        self.fraction, self.what = max(self.fraction, min(1.0, float(fraction))), what

    def wait(self, timeout: float | None = None) -> bool:
        """True once finished (with a result or an error)."""
        return self.done.wait(timeout)


def _runtime_tag(key: str, fast: bool) -> str | None:
    from ..encoding import model_cache
    from ..models.loading import resolve

    model = resolve(key)
    if model.identity is None:
        return None
    runtime = model_cache.known_runtime(model.entry, model.identity, fast=fast)
    return None if runtime is None else f"{model.identity}|{runtime.cache_tag}"


def step_key(step: int) -> str | None:
    """What step ``step``'s numbers depend on, or None while a model's runtime is still unmeasured."""
    parts = [_runtime_tag(NAIVE, False), _runtime_tag(SIAMESE, False), _runtime_tag(SIAMESE, True)]
    if None in parts:
        return None
    return "|".join([STEPS[step].name, VERSION, str(settings().data_dir.resolve()), *parts])


class Rehearsal:
    """The talk's computed steps for this process and cache folder."""

    def __init__(self) -> None:
        self._kept: BoundedCache[str, Any] = BoundedCache("talk steps (numbers)", len(STEPS), registered=False)
        self._lock = threading.Lock()
        self._turn = threading.Lock()  # one step computed at a time: two would only slow each other
        self._running: dict[int, Work] = {}

    def reset(self) -> None:
        self._kept.reset()
        with self._lock:
            self._running.clear()

    @staticmethod
    def _path(key: str) -> Path:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
        return settings().cache_dir / "talk" / f"step-{key.split('|')[0].lower().replace(' ', '-')}-{digest}.pkl"

    def result(self, step: int) -> Any:
        """Step ``step``'s numbers if they were computed with today's models and runtimes, else None."""
        if STEPS[check_step(step)].compute is None:
            return None
        key = step_key(step)
        if key is None:
            return None
        kept = self._kept.get(key)
        if kept is None:
            kept = self._read(key)
            if kept is not None:
                self._kept.put(key, kept)
        return kept

    def _read(self, key: str) -> Any:
        path = self._path(key)
        try:
            with path.open("rb") as file:
                stored_key, value = pickle.load(file)  # our own file in our own cache folder
        except FileNotFoundError:
            return None
        except Exception:  # written by another version of the code, or cut short: compute it again
            logger.info("The talk's kept step %s could not be read; it is computed again.", path.name)
            return None
        return value if stored_key == key else None

    def _write(self, key: str, value: Any) -> None:
        path = self._path(key)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with temporary.open("wb") as file:
                pickle.dump((key, value), file, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except OSError:  # a read-only or full disk: kept in memory for this process only
            logger.warning("Could not keep the talk's step in %s", path, exc_info=True)
        finally:
            temporary.unlink(missing_ok=True)

    def start(self, step: int) -> Work:
        """Step ``step`` being computed (or already done): the work to watch. Never computes twice."""
        compute = STEPS[check_step(step)].compute
        if compute is None:
            raise ValueError(f"Step {step + 1} ({STEPS[step].name}) is live; it has nothing to compute ahead.")
        with self._lock:
            running = self._running.get(step)
            if running is not None and not running.done.is_set():
                return running
            work = self._running[step] = Work(step)
        kept = self.result(step)
        if kept is not None:
            work.result, work.fraction, work.what = kept, 1.0, "Done"
            work.done.set()
            return work
        threading.Thread(target=self._compute, args=(work, compute), name=f"talk-step-{step + 1}",
                         daemon=True).start()
        return work

    def _compute(self, work: Work, compute: Callable[[Progress], Any]) -> None:
        try:
            with self._turn:
                work.started = time.monotonic()
                work.report(0.0, "Starting")
                value = compute(work.report)
            key = step_key(work.step)  # known now: computing measured the runtimes if they were not
            if key is not None:
                self._kept.put(key, value)
                self._write(key, value)
            work.result = value
            work.report(1.0, "Done")
        except ValueError as exc:
            work.error = str(exc)
        except Exception as exc:  # a bug: logged with its traceback; the page gets a sentence
            logger.exception("The talk's step %s failed", work.step + 1)
            work.error = f"Step {work.step + 1} failed unexpectedly ({type(exc).__name__}); it has been logged."
        finally:
            work.done.set()

    def ready(self) -> list[bool]:
        """For each step of the story: whether it answers at once (its numbers kept; for the training, a run
        kept; the room is always live)."""
        from . import training

        marks = []
        for step, story_step in enumerate(STEPS):
            if story_step.compute is not None:
                marks.append(self.result(step) is not None)
            elif story_step.room:
                marks.append(True)
            else:
                marks.append(training.stored() is not None)
        return marks

    def rehearse(self, progress: Progress | None = None, train: bool = True) -> list[str]:
        """Compute every step (and train step 7 unless it has a run kept), one after the other; return the
        problems as sentences (none: the talk is ready)."""
        from . import training

        say = progress or (lambda fraction, what: None)
        computed = [step for step, story_step in enumerate(STEPS) if story_step.compute is not None]
        problems = []
        for position, step in enumerate(computed):
            say(position / (len(computed) + 1), f"Step {step + 1}: {STEPS[step].name}")
            work = self.start(step)
            work.wait()
            if work.error:
                problems.append(f"Step {step + 1} ({STEPS[step].name}): {work.error}")
        if train and training.stored() is None:
            say(len(computed) / (len(computed) + 1), "Step 7: training siamese GloVe")
            problems += _train_and_wait(training)
        say(1.0, "Ready" if not problems else "Done, with problems")
        return problems


def _train_and_wait(training) -> list[str]:
    from ..training import training_jobs

    try:
        training.start()
    except ValueError as exc:
        return [f"Step 7 (Training): {exc}"]
    jobs = training_jobs()
    jobs.wait()
    run = training.current(jobs)
    return [] if run is not None and run.finished else [
        f"Step 7 (Training): {run.error if run and run.error else 'the run did not finish'}"]


@process_wide
def rehearsal() -> Rehearsal:
    """The process's kept talk steps (reset with every other process-wide object)."""
    return Rehearsal()
