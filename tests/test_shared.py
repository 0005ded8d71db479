"""The one cache primitive, the one lock rule, and the one list of process-wide state.

The last test imports every module of the package and fails when a module keeps state at module
level (a cache, a memoised function, a mutable container that is not a constant) that is not
registered with :mod:`sbert_demo.shared`: such state would survive ``reset_all()`` and carry from
one test (or one cache folder) to the next.
"""

from __future__ import annotations

import collections
import functools
import importlib
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor

import pytest

from test_doctests import module_names

from sbert_demo import shared
from sbert_demo.shared import BoundedCache, KeyLocks



def test_bounded_cache_is_an_lru_by_count() -> None:
    cache = BoundedCache("test lru", 2, registered=False)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" becomes the most recently used
    cache.put("c", 3)  # evicts "b"
    assert cache.keys() == ["a", "c"] and "b" not in cache and cache.get("b") is None


def test_bounded_cache_by_weight_keeps_the_newest() -> None:
    cache = BoundedCache("test weights", 10, weigh=float, max_weight=3, registered=False)
    cache.put("small", 1)
    cache.put("medium", 1.5)
    cache.put("big", 2)  # 4.5 in all: the oldest go first
    assert cache.keys() == ["big"]
    cache.put("huge", 5)  # over the limit alone, still kept
    assert cache.keys() == ["huge"]


def test_bounded_cache_forgets_expired_values() -> None:
    cache = BoundedCache("test ttl", 4, ttl_s=0.05, registered=False)
    cache.put("k", "v")
    assert cache.get("k") == "v"
    time.sleep(0.08)
    assert cache.get("k") is None and len(cache) == 0
    assert cache.get_or_build("k", lambda: "new") == "new"


def test_get_or_build_builds_once_for_many_threads_and_drops_the_key_lock() -> None:
    cache = BoundedCache("test once", 4, registered=False)
    builds: list[int] = []
    gate = threading.Event()

    def slow_build() -> str:
        builds.append(1)
        gate.wait(5)
        return "model"

    with ThreadPoolExecutor(6) as executor:
        futures = [executor.submit(cache.get_or_build, "m", slow_build) for _ in range(6)]
        time.sleep(0.05)
        gate.set()
        assert {f.result() for f in futures} == {"model"}
    assert builds == [1]
    assert len(cache._building) == 0  # no lock outlives its last user


def test_get_or_build_after_a_failure_retries_and_keep_can_refuse() -> None:
    cache = BoundedCache("test retry", 4, registered=False)
    with pytest.raises(RuntimeError):
        cache.get_or_build("k", lambda: (_ for _ in ()).throw(RuntimeError("disk error")))
    assert cache.get_or_build("k", lambda: "ok") == "ok"
    assert cache.get_or_build("failed", lambda: "error", keep=lambda value: value != "error") == "error"
    assert "failed" not in cache


def test_key_locks_hold_one_key_at_a_time_and_leave_others_free() -> None:
    locks = KeyLocks()
    inside: list[str] = []
    with locks.hold("a"):
        other = threading.Thread(target=lambda: locks.hold("b").__enter__() or inside.append("b"))
        other.start()
        other.join(1)
        assert inside == ["b"]  # another key is not blocked
        blocked = threading.Thread(target=lambda: (locks.hold("a").__enter__(), inside.append("a")))
        blocked.start()
        blocked.join(0.1)
        assert inside == ["b"]  # the same key waits
    blocked.join(1)
    assert inside == ["b", "a"]


def test_reset_all_resets_what_is_registered() -> None:
    cache = BoundedCache("test reset", 4)
    built = []

    @shared.process_wide
    def thing() -> list:
        built.append(1)
        return []

    try:
        cache.put("k", 1)
        thing()
        shared.reset_all()
        assert len(cache) == 0
        thing()
        assert built == [1, 1]
    finally:
        shared.unregister(cache)
        shared.unregister(thing)


# --- every piece of module-level state is registered ------------------------------------------------

STATE_TYPES = (dict, list, set, collections.OrderedDict, collections.deque, threading.local, BoundedCache)


def _modules() -> list[types.ModuleType]:
    return [importlib.import_module(name) for name in module_names()]


def _is_state(name: str, value: object) -> bool:
    if name.startswith("__"):
        return False
    if isinstance(value, functools._lru_cache_wrapper) or isinstance(value, BoundedCache):
        return True
    if callable(value) and hasattr(value, "reset") and isinstance(value, types.FunctionType):
        return True  # a process_wide getter
    # Constants are named in capitals (and never changed); anything else mutable at module level is state.
    return isinstance(value, STATE_TYPES) and not name.isupper()


def test_every_piece_of_module_level_state_is_registered() -> None:
    unregistered: dict[int, str] = {}  # by identity: an object imported elsewhere is counted once
    for module in _modules():
        for name, value in vars(module).items():
            if value is shared._registered:  # the list of registrations itself
                continue
            if _is_state(name, value) and not shared.is_registered(value):
                unregistered.setdefault(id(value), f"{module.__name__}.{name}")
    unregistered = sorted(unregistered.values())
    assert unregistered == [], ("module-level state that reset_all() cannot reach; make it a "
                                f"shared.BoundedCache / process_wide / memoize: {unregistered}")
