"""Work the selected tests need that can start before they do: begun when the run's tests are collected, done one
piece at a time in a thread at the lowest CPU priority (its commands run under ``nice``), while the run's first
tests drive pages and wait for apps; a test that needs a piece waits for it (or does it itself where it was never
started: a run under pytest-xdist, or a test run alone).

A test says what it needs with ``@pytest.mark.early("name")``, a name of tests/envs.py's ``WANTED``
(tests/conftest.py starts them in the order the tests come). Each piece keeps what it makes where its test looks
for it (tests/envs.py's environments), so starting early changes when it is made, never what. Nothing that
measures this machine's speed starts early: beside other work it measures that work (tests/conftest.py,
``measured_root``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
NICE = ["nice", "-n", "19"]  # a command run early yields the CPU to the tests
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="early-work")
_started: dict[str, Future] = {}


def start(key: str, work: Callable[[], object]) -> None:
    """Queue ``work`` under ``key`` (once: a key already queued is left as it is)."""
    if key not in _started:
        _started[key] = _pool.submit(work)


def wait(key: str) -> object | None:
    """What the work queued under ``key`` made, once it is done; None where nothing was queued under it."""
    future = _started.get(key)
    return None if future is None else future.result()


def started() -> list[str]:
    return list(_started)
