"""One background training job per app process, run in a child process, watched through snapshots.

Why a child process rather than a thread: training on a 2-core machine would otherwise hold the
GIL and both cores in the web server's process; in a child it uses ``SBERT_DEMO_TRAIN_THREADS``
torch threads (default: all cores but one), other users keep exploring, a crash (even out of
memory) cannot take the app down, and cancellation has a last resort (terminate). The price is
start-up, shown as ``starting``: measured here (warm disk cache, busy machine) the worker is ready
with torch imported ~1 s after launch, and the GloVe run's first step comes ~6 s after launch
(data read, base scores from the cache, model built); cancelling took 1.6 s.

Why ``subprocess`` (``python -m sbert_demo.training.worker``, JSON lines over pipes) rather than
``multiprocessing`` spawn: spawn re-runs the app's main script in the child (a script without an
``if __name__ == "__main__"`` guard fails to start any job; an ``app.py`` that builds its Blocks
at import would rebuild the whole UI in the training process), and terminating a
``multiprocessing`` child can corrupt its queue. The worker also stops by itself when the app
dies (its stdin closes).

The child writes events as JSON lines; a monitor thread in the parent replays them into the job's
:class:`~sbert_demo.training.job_state.JobState`. :meth:`TrainingJobs.snapshot` returns its
immutable :class:`JobSnapshot` (cheap enough to poll every second from every open page); a
reloaded page simply asks again.

Example (what a Train tab does)::

    jobs = training_jobs()
    jobs.start(config_for("glove-6b-50d", "nli-softmax", "glove-nli"))   # ValueError when busy/off
    snap = jobs.snapshot()     # state, step/total_steps, eta_s, losses, evals, before/after, ...
    jobs.cancel()
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..config import settings
from ..gpu import zero_gpu
from ..shared import process_wide
from .job_state import JobSnapshot, JobState
from .reporting import replay
from .settings import TrainConfig

logger = logging.getLogger(__name__)

DISABLED = "Training is switched off on this deployment (SBERT_DEMO_ALLOW_TRAINING=0)."
CANCEL_GRACE_S = 5.0  # then the child is terminated (unless it is renaming the saved folder)
PACKAGE_PARENT = Path(__file__).resolve().parents[2]  # the folder holding sbert_demo/, for the child


class _Job:
    """A training process, the thread that reads its events, and its cancellation."""

    def __init__(self, config: TrainConfig, entry: Any, estimate_s: float | None, models_dir: Path | None = None,
                 purpose: str = ""):
        self.id = uuid.uuid4().hex[:12]
        self.config, self.entry, self.models_dir = config, entry, models_dir
        self.state = JobState(self.id, config, estimate_s, purpose)
        self.process: subprocess.Popen | None = None
        self.cancel_requested: float | None = None
        self._stdin_lock = threading.Lock()
        self.monitor = threading.Thread(target=self._watch, name=f"train-monitor-{self.id}", daemon=True)

    def request(self) -> dict:
        """What the training process is given: the run, a model added at run time, the app's settings."""
        handed = settings() if self.models_dir is None else settings().replace(models_dir=self.models_dir)
        return {"config": self.config.as_dict(), "entry": asdict(self.entry) if self.entry else None,
                "settings": handed.as_dict()}

    def launch(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_PARENT),
                                                                         os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sbert_demo.training.worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env, text=True, encoding="utf-8", bufsize=1,
        )
        self._write(json.dumps(self.request()))
        self.monitor.start()

    def _write(self, line: str) -> None:
        with self._stdin_lock:
            try:
                self.process.stdin.write(line + "\n")
                self.process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):  # the process has already ended
                pass

    def cancel(self) -> None:
        if self.cancel_requested is None:
            self.cancel_requested = time.monotonic()
            timer = threading.Timer(CANCEL_GRACE_S, self._enforce_cancel)
            timer.daemon = True
            timer.start()
        self.state.log("Cancel requested")
        self._write("cancel")

    def _apply(self, event: list) -> None:
        kind, args = event
        if kind == "done":
            self.state.finish("finished", f"Saved {args[0]}")
        elif kind == "cancelled":
            self.state.finish("cancelled", args[0])
        elif kind == "failed":
            self.state.finish("failed", args[0], error=args[0])
        else:
            replay(self.state, event)

    def _watch(self) -> None:
        for line in self.process.stdout:
            try:
                self._apply(json.loads(line))
            except (ValueError, TypeError):
                logger.warning("Unreadable event from the training process: %r", line[:200])
        code = self.process.wait()
        with self._stdin_lock:
            self.process.stdin.close()
        self._finish_after_exit(code)

    def _enforce_cancel(self) -> None:
        """Last resort, CANCEL_GRACE_S after a cancel: end a process that has not stopped by itself."""
        while self.process.poll() is None and self.state.snapshot().state == "saving":
            time.sleep(0.2)  # never interrupt the atomic rename
        if self.process.poll() is None:
            logger.warning("Training process %s did not stop within %.0f s; terminating it",
                           self.process.pid, CANCEL_GRACE_S)
            self.process.terminate()
            try:
                self.process.wait(2.0)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def _finish_after_exit(self, code: int) -> None:
        saved = self.state.snapshot().model_name
        if saved:  # stopped while scoring the saved model: the model itself is complete
            self.state.finish("finished", f"Saved {saved}; its final scoring did not complete.")
            return
        if self.cancel_requested is not None:
            self.state.finish("cancelled", "Training was cancelled; nothing was saved.")
            return
        why = "it ran out of memory or was killed" if code in (-9, 137) else f"exit code {code}"
        message = f"The training process stopped unexpectedly ({why}); nothing was saved."
        self.state.finish("failed", message, error=message)


class _ZeroGpuJob(_Job):
    """On ZeroGPU (:mod:`sbert_demo.gpu`): the run inside a ``spaces.GPU`` call, which ``spaces`` forks
    with the GPU lent for the estimated time; its events stream back into the job's state, and a cancel
    is a file the run watches (the forked process shares the disk, not the memory)."""

    def launch(self) -> None:
        self.cancel_file = settings().cache_dir / "training" / f"cancel-{self.id}"
        self.monitor = threading.Thread(target=self._stream, name=f"train-gpu-{self.id}", daemon=True)
        self.monitor.start()

    def _stream(self) -> None:
        from .worker import train_on_gpu

        try:
            for event in train_on_gpu(self.request(), str(self.cancel_file), self.state.snapshot().estimate_s or 0.0):
                self._apply(event)
        except Exception as exc:  # the GPU was not lent (quota, duration) or the call failed
            logger.exception("Training on ZeroGPU failed")
            self.state.finish("failed", f"Training on the GPU failed ({exc}); try a shorter run or later.",
                              error=str(exc))
        if self.state.snapshot().active:
            self._finish_after_exit(1)
        self.cancel_file.unlink(missing_ok=True)

    def cancel(self) -> None:
        self.cancel_requested = time.monotonic()
        self.state.log("Cancel requested")
        try:
            self.cancel_file.parent.mkdir(parents=True, exist_ok=True)
            self.cancel_file.touch()
        except OSError:
            logger.warning("Could not ask the GPU run to stop (%s)", self.cancel_file)


class TrainingJobs:
    """The process-wide training job manager: one job at a time, polled through snapshots."""

    def __init__(self):
        self._lock = threading.Lock()
        self._job: _Job | None = None

    def start(self, config: TrainConfig, models_dir: Path | None = None, purpose: str = "") -> str:
        """Validate ``config`` and start it in the background; return the job id.

        ``models_dir``: where the model is saved instead of the registry's folder (the talk's own run,
        which must never overwrite a user's model); ``purpose`` names such a job in its snapshots.
        Raises ValueError when training is switched off, another job is running, or a setting
        is wrong (before any process starts).
        """
        if not settings().training_enabled:
            raise ValueError(DISABLED)
        self._refuse_if_busy()
        config = config.validate()
        entry = _added_entry(config.base)
        estimate_s = _safe_estimate(config)
        with self._lock:
            self._refuse_if_busy()
            job_class = _ZeroGpuJob if zero_gpu() else _Job
            job = self._job = job_class(config, entry, estimate_s, models_dir, purpose)
            job.launch()
        logger.info("Started training job %s: %s", job.id, config)
        return job.id

    def _refuse_if_busy(self) -> None:
        current = self._job.state.snapshot() if self._job else None
        if current is not None and current.active:
            raise ValueError(f"A training job is already running ({current.config.output}, "
                             f"{current.state}); wait for it to finish or cancel it.")

    def snapshot(self) -> JobSnapshot:
        """The current (or last) job; ``JobSnapshot()`` (state "idle") before the first one."""
        job = self._job
        return job.state.snapshot() if job else JobSnapshot()

    def cancel(self) -> bool:
        """Ask the running job to stop; False when nothing is running."""
        job = self._job
        if job is None or not job.state.snapshot().active:
            return False
        job.cancel()
        return True

    def wait(self, timeout: float | None = None) -> JobSnapshot:
        """Block until the current job has ended (or ``timeout`` seconds); return its snapshot."""
        job = self._job
        if job is not None:
            job.monitor.join(timeout)
        return self.snapshot()


def _added_entry(key: str) -> Any:
    """The registry entry to hand to the child when it was added at run time (else None)."""
    from ..models.registry import get_registry

    return get_registry().added_entry(key)


def _safe_estimate(config: TrainConfig) -> float | None:
    from .estimate import estimate_seconds

    try:
        return estimate_seconds(config)
    except Exception:  # an estimate is a nicety; the run itself reports real problems
        logger.info("No time estimate for %s", config, exc_info=True)
        return None


@process_wide
def training_jobs() -> TrainingJobs:
    """The process-wide job manager shared by every page of the app."""
    return TrainingJobs()
