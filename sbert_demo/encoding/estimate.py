"""How long encoding will take on this machine, said before it starts (from rates measured here).

A run that will take more than a few seconds says so before the click: how many of its distinct
sentences are not in the embedding cache yet, and at what rate this machine encodes them with the
runtime that will run (the rates that :mod:`.runtime_choice` measured when it chose that runtime,
kept in the cache folder). Nothing here loads a model or measures: a transformer whose runtimes were
never measured here has no estimate (None), and the caller says that its first run measures them.

Example::

    >>> left = to_encode("glove-6b-50d", ["A cat sleeps.", "A dog barks."])
    >>> left.sentences <= 2 and left.seconds is not None
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..config import settings
from ..models import loading
from ..models.kinds import kind_of
from ..models.registry import Registry, get_registry
from . import devices, fixes, model_cache, runtime_choice
from .embedding_cache import embedding_cache
from .encoder import cache_key

# Kinds whose work is a table look-up (GloVe, static models): encoding is never what a user waits for.
LOOKUP_RATE = 20_000.0  # sentences/s, well below what they run at here (bench/encode.py: 35,000-45,000)


@dataclass(frozen=True)
class ToEncode:
    """What encoding ``texts`` with one model will cost here."""

    sentences: int  # distinct texts not in the embedding cache
    rate: float | None  # sentences/s of the runtime that will run; None: not measured on this machine yet
    runtime: str = ""

    @property
    def seconds(self) -> float | None:
        if not self.sentences:
            return 0.0
        return None if not self.rate else self.sentences / self.rate


def to_encode(model: str, texts: Sequence[str], fast: bool = False, registry: Registry | None = None) -> ToEncode:
    """The distinct ``texts`` that ``model`` has yet to encode here (with a training-free fix: its base's,
    with the collection it is fitted on), and the rate it will encode them at."""
    registry = registry or get_registry()
    resolved = loading.resolve(model, registry)
    if resolved.entry.fix is not None:  # the base's vectors, and those of the collection the fix is fitted on
        return to_encode(resolved.base(registry).entry.key, [*texts, *fixes.fit_collection()[1]], fast, registry)
    unique = list(dict.fromkeys(texts))
    entry, identity = resolved.entry, resolved.identity
    runtime = None if identity is None else model_cache.known_runtime(entry, identity, fast=fast)
    if runtime is None:  # never measured here (or a Hub model not downloaded): nothing is known yet
        return ToEncode(len(unique), None)
    cached = embedding_cache().count_cached(cache_key(identity, runtime), unique)
    return ToEncode(len(unique) - cached, _rate(entry, identity, runtime), runtime.runtime)


def _rate(entry, identity: str, runtime: devices.DeviceChoice) -> float | None:
    if not kind_of(entry).matmul_heavy:
        return LOOKUP_RATE
    decision = runtime_choice.stored(settings().cache_dir, devices.detect_hardware(), identity)
    if decision is None:
        return None
    return decision.rate(f"{runtime.backend}-{runtime.precision}")
