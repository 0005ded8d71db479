"""Process-wide objects (the registry, the loaded-model cache, the training jobs), built on first use.

Example::

    >>> @process_wide
    ... def answer() -> list:
    ...     return [42]
    >>> answer() is answer()
    True
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def process_wide(factory: Callable[[], T]) -> Callable[[], T]:
    """Make a zero-argument factory return one shared object, built once under a lock.

    The getter's ``reset()`` forgets the object so the next call builds a new one (tests use it to
    start each case from a clean state).
    """
    lock = threading.Lock()
    built: list[T] = []

    @functools.wraps(factory)
    def get() -> T:
        with lock:
            if not built:
                built.append(factory())
            return built[0]

    def reset() -> None:
        with lock:
            built.clear()

    get.reset = reset  # type: ignore[attr-defined]
    return get
