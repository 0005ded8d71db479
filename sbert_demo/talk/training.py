"""The talk's own training run (step 7): siamese GloVe on the shipped NLI pairs, trained once, replayed.

The run is a job of the app's one training manager (:mod:`sbert_demo.training.jobs`), saved under
``<cache>/talk/models/`` instead of ``models/``: no model of a user's can be overwritten by it, and
it does not join the registry. Its curve and scores are kept in ``<cache>/talk/training-<id>.json``
(``<id>``: GloVe's identity), so coming back to the step, a reload or a restart replays the run
instead of training again; :func:`start` trains again only when asked.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import settings
from ..training import config_for, training_jobs
from ..training.jobs import JobSnapshot, TrainingJobs
from .story import NAIVE

logger = logging.getLogger(__name__)

TALK_MODEL = "talk-siamese-glove"
PURPOSE = "talk"
OBJECTIVE = "nli-softmax"


@dataclass(frozen=True)
class TrainingRun:
    """The talk's run as the step draws it: the curve so far and, once finished, what it changed."""

    state: str  # starting, running, ..., finished, failed, cancelled
    message: str = ""
    fraction: float = 0.0
    losses: list[tuple[int, float]] = field(default_factory=list)  # (step, training loss)
    evals: list[tuple[int, float]] = field(default_factory=list)  # (step, STSb dev Spearman in [-1, 1])
    before: dict[str, float] | None = None
    after: dict[str, float] | None = None
    train_elapsed_s: float = 0.0
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.state == "finished" and bool(self.after)

    @property
    def active(self) -> bool:
        return self.state in ("starting", "running", "evaluating", "saving")

    @classmethod
    def of(cls, snap: JobSnapshot) -> TrainingRun:
        return cls(snap.state, snap.message, snap.fraction, [tuple(x) for x in snap.losses],
                   [tuple(x) for x in snap.evals], snap.before, snap.after, snap.train_elapsed_s, snap.error)


def models_folder() -> Path:
    return settings().cache_dir / "talk" / "models"


def _record_path() -> Path | None:
    from ..models.loading import resolve

    identity = resolve(NAIVE).identity
    return None if identity is None else settings().cache_dir / "talk" / f"training-{identity}.json"


def stored() -> TrainingRun | None:
    """The last finished run of the talk on this machine, or None."""
    path = _record_path()
    try:
        values = json.loads(path.read_text(encoding="utf-8")) if path else None
        if isinstance(values, dict):  # JSON keeps (step, value) pairs as lists
            values.update(losses=[tuple(x) for x in values.get("losses", [])],
                          evals=[tuple(x) for x in values.get("evals", [])])
        run = TrainingRun(**values) if isinstance(values, dict) else None
    except (OSError, ValueError, TypeError):
        return None
    return run if run is not None and run.finished else None


def _store(run: TrainingRun) -> None:
    path = _record_path()
    if path is None or not run.finished:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_text(json.dumps(asdict(run)), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:  # a read-only cache: the run is replayed from the job while the app runs
        logger.warning("Could not keep the talk's training run in %s", path, exc_info=True)


def current(jobs: TrainingJobs | None = None) -> TrainingRun | None:
    """The talk's run now: the job's, while it is the manager's latest, else the stored one (None: never run).
    A run seen finished is stored for replay (once: a poll of the step does not write the same run again)."""
    snap = (jobs or training_jobs()).snapshot()
    if snap.purpose == PURPOSE:
        run = TrainingRun.of(snap)
        if run.finished and stored() != run:
            _store(run)
        if run.active or run.finished or not stored():
            return run
    return stored()


def start(jobs: TrainingJobs | None = None) -> TrainingRun:
    """Train now (a ValueError with a sentence when training is off or another job is running)."""
    jobs = jobs or training_jobs()
    snap = jobs.snapshot()
    if snap.active and snap.purpose != PURPOSE:
        raise ValueError(f"The Train tab's run ({snap.config.output if snap.config else 'a model'}) is using the "
                         "trainer; the talk's run starts once it has finished (or cancel it there).")
    if not snap.active:
        jobs.start(config_for(NAIVE, OBJECTIVE, TALK_MODEL, overwrite=True), models_dir=models_folder(),
                   purpose=PURPOSE)
    return TrainingRun.of(jobs.snapshot())
