"""Process-wide state, in one place: objects built once, bounded caches, and the list of all of them.

Everything that lives as long as the process and holds state is made here and registers itself, so
:func:`reset_all` forgets all of it in one loop (tests start each case from a clean state that way,
and ``tests/test_shared.py`` fails when a module keeps state that is not registered):

* :func:`process_wide` — a zero-argument factory whose object is built once, on first use;
* :class:`BoundedCache` — the one cache primitive: a thread-safe LRU bounded by count (and, when
  asked, by a total weight such as megabytes, or by age), with :meth:`BoundedCache.get_or_build`;
* :class:`KeyLocks` — the one "build once per key" rule, also for caches that live on disk;
* :func:`memoize` — ``functools.lru_cache`` for plain functions, registered like the rest.

The lock rule (one for the whole package): a key's lock exists while some thread holds it or waits
for it, and is dropped when the last one leaves. So two requests for the same key never build it
twice, a key's lock never outlives its use, and a lock is never dropped while held (which would let
a second build start).

Example::

    >>> squares = BoundedCache("squares (doctest)", max_items=2)
    >>> squares.get_or_build(3, lambda: 9), squares.get_or_build(3, lambda: 0)
    (9, 9)
    >>> squares.put(4, 16); squares.put(5, 25); 3 in squares
    False
    >>> squares.unregister()
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")


class Resettable(Protocol):
    def reset(self) -> None: ...


_registered: dict[int, tuple[str, Resettable]] = {}
_registry_lock = threading.Lock()


def register(name: str, state: Resettable) -> Resettable:
    """Add ``state`` (anything with ``reset()``) to what :func:`reset_all` resets; returns it."""
    with _registry_lock:
        _registered[id(state)] = (name, state)
    return state


def unregister(state: object) -> None:
    with _registry_lock:
        _registered.pop(id(state), None)


def is_registered(state: object) -> bool:
    with _registry_lock:
        return id(state) in _registered


def registered() -> list[tuple[str, Resettable]]:
    """``(name, object)`` of every registered piece of process-wide state, in registration order."""
    with _registry_lock:
        return list(_registered.values())


def reset_all() -> None:
    """Forget every registered piece of process-wide state (tests call this before and after each case)."""
    for _, state in registered():
        state.reset()


class KeyLocks:
    """Per-key locks under the package's one rule: a key's lock lives while a thread holds or waits
    for it (a count of users), so it is never dropped while held and never kept after its last use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._locks: dict[Hashable, list] = {}  # key -> [lock, users]

    @contextmanager
    def hold(self, key: Hashable) -> Iterator[None]:
        with self._lock:
            slot = self._locks.setdefault(key, [threading.Lock(), 0])
            slot[1] += 1
        try:
            with slot[0]:
                yield
        finally:
            with self._lock:
                slot[1] -= 1
                if slot[1] == 0:
                    del self._locks[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._locks)


class BoundedCache(Generic[K, V]):
    """A registered, thread-safe LRU: at most ``max_items`` values (and at most ``max_weight`` by
    ``weigh``, the newest one always kept), each younger than ``ttl_s`` when given.

    :meth:`get_or_build` builds each missing key once, however many threads ask at the same moment
    (:class:`KeyLocks`); ``keep(value)`` False returns a value without storing it (e.g. a failure).
    """

    def __init__(self, name: str, max_items: int, *, weigh: Callable[[V], float] | None = None,
                 max_weight: float | None = None, ttl_s: float | None = None, registered: bool = True):
        self.name, self.max_items, self.max_weight, self.ttl_s = name, max_items, max_weight, ttl_s
        self._weigh = weigh
        self._items: OrderedDict[K, tuple[V, float, float]] = OrderedDict()  # value, weight, stored at
        self._lock = threading.Lock()
        self._building = KeyLocks()
        if registered:  # False only for a cache that a registered process-wide getter owns
            register(name, self)

    def _fresh(self, key: K) -> bool:
        """Whether ``key`` holds a value that has not expired (the caller holds the lock)."""
        item = self._items.get(key)
        if item is None:
            return False
        if self.ttl_s is not None and time.monotonic() - item[2] > self.ttl_s:
            del self._items[key]
            return False
        return True

    def get(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            if not self._fresh(key):
                return default
            self._items.move_to_end(key)
            return self._items[key][0]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return self._fresh(key)  # type: ignore[arg-type]

    def put(self, key: K, value: V) -> None:
        weight = float(self._weigh(value)) if self._weigh else 0.0
        with self._lock:
            self._items[key] = (value, weight, time.monotonic())
            self._items.move_to_end(key)
            self._evict()

    def _evict(self) -> None:
        def too_many() -> bool:
            if len(self._items) > self.max_items:
                return True
            return self.max_weight is not None and sum(w for _, w, _ in self._items.values()) > self.max_weight

        while len(self._items) > 1 and too_many():
            self._items.popitem(last=False)

    def get_or_build(self, key: K, build: Callable[[], V], keep: Callable[[V], bool] | None = None) -> V:
        found = self.get(key)
        if found is not None:
            return found
        with self._building.hold(key):
            found = self.get(key)  # another thread may have built it while this one waited
            if found is not None:
                return found
            value = build()
            if value is not None and (keep is None or keep(value)):
                self.put(key, value)
            return value

    def rebuild(self, key: K, build: Callable[[], V]) -> V:
        """``build()`` stored in place of what ``key`` holds (once at a time per key; readers keep the old
        value until the new one is ready)."""
        with self._building.hold(key):
            value = build()
            if value is not None:
                self.put(key, value)
            return value

    def pop(self, key: K, default: V | None = None) -> V | None:
        with self._lock:
            item = self._items.pop(key, None)
        return default if item is None else item[0]

    def keys(self) -> list[K]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    reset = clear

    def unregister(self) -> None:
        unregister(self)


def process_wide(factory: Callable[[], T]) -> Callable[[], T]:
    """Make a zero-argument factory return one shared object, built once under a lock.

    The getter's ``reset()`` forgets the object so the next call builds a new one; the getter is
    registered, so :func:`reset_all` does that too.
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
    register(f"{factory.__module__}.{factory.__qualname__}", get)  # type: ignore[arg-type]
    return get


def memoize(maxsize: int) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``functools.lru_cache(maxsize)``, registered so :func:`reset_all` clears it."""

    def decorate(function: Callable[..., T]) -> Callable[..., T]:
        cached: Any = functools.lru_cache(maxsize=maxsize)(function)
        cached.reset = cached.cache_clear
        register(f"{function.__module__}.{function.__qualname__}", cached)
        return cached

    return decorate
