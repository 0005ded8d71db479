"""The training process the job manager starts: ``python -m sbert_demo.training.worker``.

Protocol (text, one JSON document per line):

* stdin, first line: ``{"config": {...TrainConfig...}, "entry": {...ModelEntry...} | null,
  "settings": {...Settings...}}`` (the app's settings: the child does not read them again);
  then ``cancel`` lines. End of input (the app closed the pipe or died) also cancels, so a run
  never outlives the app that started it.
* stdout: events ``[method, [args...]]`` replayed into the job's state (see
  :class:`~sbert_demo.training.reporting.JsonLinesReporter`), then one final event:
  ``["done", [name]]``, ``["cancelled", [sentence]]`` or ``["failed", [sentence]]``.
  Anything else written to stdout (a library's print) is redirected to stderr, the server log.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from typing import Any, TextIO

from ..gpu import gpu_function

logger = logging.getLogger("sbert_demo.training.worker")


def _watch_stdin(stream: TextIO, cancel: threading.Event) -> None:
    for line in stream:
        if line.strip() == "cancel":
            cancel.set()
    cancel.set()  # end of input: the app is gone or gave up on this run


def _registry_entry(values: dict[str, Any] | None) -> Any:
    from ..models.entries import ModelEntry

    if not values:
        return None
    return ModelEntry(**{**values, "hub_ids": tuple(values.get("hub_ids") or ())})


def run(request: dict[str, Any], reporter: Any, cancel: threading.Event) -> tuple[str, list]:
    """Run one request; return the final event. Never raises."""
    from ..models.registry import get_registry
    from .reporting import Cancelled
    from .runner import apply_thread_limit, run_training
    from .settings import TrainConfig

    try:
        registry = get_registry()
        entry = _registry_entry(request.get("entry"))
        if entry is not None:  # a model the app's user added at run time: unknown to a fresh registry
            registry.register(entry)
        config = TrainConfig.from_dict(request["config"])
        threads = apply_thread_limit(registry.get(config.base).kind)
        reporter.log(f"Training process {os.getpid()} ready ({threads} CPU thread(s))")
        return "done", [run_training(config, reporter, cancel).name]
    except Cancelled as exc:
        return "cancelled", [str(exc)]
    except ValueError as exc:
        return "failed", [str(exc)]
    except Exception as exc:  # a bug or a library failure: logged here, a sentence for the user
        logger.exception("Training failed")
        return "failed", [f"Training failed unexpectedly ({type(exc).__name__}: {exc}); see the server log."]


def _gpu_seconds(request: dict[str, Any], cancel_path: str, estimate_s: float) -> float:
    return 60 + 1.5 * estimate_s  # the model loaded on the GPU, then the CPU's estimate with room


@gpu_function(duration=_gpu_seconds)
def train_on_gpu(request: dict[str, Any], cancel_path: str, estimate_s: float):
    """On ZeroGPU: :func:`run` inside the GPU call, yielding its events (``[method, [args]]``) as they come;
    the run stops when ``cancel_path`` appears."""
    import queue

    from ..config import Settings, use_settings
    from .reporting import JsonLinesReporter

    events: queue.Queue = queue.Queue()

    class Lines:
        def write(self, text: str) -> None:
            events.put(text)

        def flush(self) -> None:
            pass

    reporter, cancel = JsonLinesReporter(Lines()), threading.Event()

    def watch() -> None:
        while not cancel.wait(0.5):
            if os.path.exists(cancel_path):
                cancel.set()

    def work() -> None:
        try:
            with use_settings(Settings.from_dict(request["settings"])):
                reporter.send(*run(request, reporter, cancel))
        finally:
            events.put(None)

    threading.Thread(target=watch, daemon=True).start()
    threading.Thread(target=work, daemon=True).start()
    while (text := events.get()) is not None:
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)
    cancel.set()


def _yield_cpu_to_the_app(niceness: int) -> None:
    """Run below the web server's priority: when both want the CPU, people exploring go first."""
    if niceness > 0 and hasattr(os, "nice"):
        try:
            os.nice(niceness)
        except OSError:  # not permitted on some hosts; training then shares the CPU equally
            pass


def main() -> int:
    events = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the events
    sys.stdout = sys.stderr
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from ..config import Settings, quiet_libraries, use_settings
    from .reporting import JsonLinesReporter

    quiet_libraries()

    reporter = JsonLinesReporter(events)
    line = sys.stdin.readline()
    cancel = threading.Event()
    threading.Thread(target=_watch_stdin, args=(sys.stdin, cancel), daemon=True).start()
    try:
        request = json.loads(line)
        chosen = Settings.from_dict(request["settings"])  # the app's settings, handed down with the job
    except (ValueError, KeyError, TypeError):
        reporter.send("failed", ["The training process got no valid request."])
        return 2
    _yield_cpu_to_the_app(chosen.train_nice)
    with use_settings(chosen):
        reporter.send(*run(request, reporter, cancel))
    return 0


if __name__ == "__main__":
    sys.exit(main())
