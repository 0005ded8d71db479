"""The one registry every part of the app asks about models.

An entry is a small frozen record: what the model is (key, label, family, kind, source, pooling).
Where it loads from *now* is a separate question answered by :meth:`Registry.availability` (asked
of the entry's kind), which looks only at local files and a time-boxed Hub probe, so listing never
hangs offline. The records live in :mod:`.entries`; the built-in ones, and what each kind of model
can do, in :mod:`.kinds`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from ..config import settings
from ..shared import process_wide
from . import kinds, variants
from .entries import Availability, ModelEntry

logger = logging.getLogger(__name__)

@dataclass
class Registry:
    """Built-in entries + complete folders under ``models/`` + entries added at run time."""

    added: dict[str, ModelEntry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def entries(self) -> list[ModelEntry]:
        """All entries, built-ins first; ``models/`` is rescanned on every call."""
        builtin = kinds.builtin_entries()
        builtin_keys = {e.key for e in builtin}
        trained = [e for e in kinds.scan(settings().models_dir) if e.key not in builtin_keys]
        with self._lock:
            added = list(self.added.values())
        seen = builtin_keys | {e.key for e in trained}
        return [*builtin, *trained, *(e for e in added if e.key not in seen)]

    def keys(self) -> list[str]:
        return [e.key for e in self.entries()]

    def get(self, key: str) -> ModelEntry:
        if not isinstance(key, str):  # e.g. a number or a list sent through the API
            raise ValueError(f"A model is named by its key (text), not by a {type(key).__name__}; "
                             f"known models: {', '.join(self.keys())}.")
        key = key.strip()
        entries = self.entries()
        for entry in entries:
            if entry.key == key:
                return entry
        base, fix = variants.split_key(key)
        if fix is not None:  # a training-free fix of a known model, e.g. glove-6b-50d+whiten
            return variants.variant_entry(self.get(base), fix)
        raise ValueError(f"Unknown model {key!r}. Known models: {', '.join(e.key for e in entries)} "
                         f"(and any of them +center, +abttD or +whiten[N]).")

    def availability(self, entry: ModelEntry | str) -> Availability:
        """Whether ``entry`` can load now, and from where; decided offline within a few seconds."""
        entry = self.get(entry) if isinstance(entry, str) else entry
        if entry.base is not None:  # a training-free variant loads exactly when its base does
            return self.availability(entry.base)
        return kinds.kind_of(entry).availability(entry, self)

    def kind(self, entry: ModelEntry | str):
        """The kind of ``entry`` (:class:`~sbert_demo.models.kinds.base.ModelKind`)."""
        return kinds.kind_of(self.get(entry) if isinstance(entry, str) else entry)

    def add(self, name_or_path: str, pooling: str = "mean") -> ModelEntry:
        """Add a model by Hugging Face id or local folder; raise ValueError when it cannot load."""
        entry = kinds.user_entry(name_or_path, pooling)
        status = self.availability(entry)
        if not status.available:
            raise ValueError(status.reason)
        self.register(entry)
        logger.info("Added model %s from %s", entry.key, status.where)
        return entry

    def register(self, entry: ModelEntry) -> None:
        """Register an entry that was already validated (e.g. handed to a training process)."""
        with self._lock:
            self.added[entry.key] = entry

    def added_entry(self, key: str) -> ModelEntry | None:
        """The entry a user added at run time under ``key``, if any."""
        with self._lock:
            return self.added.get(key)

    def remove(self, key: str) -> None:
        with self._lock:
            self.added.pop(key, None)


def requested_keys(model_keys: object) -> list[str]:
    """The distinct model keys a user asked for, stripped, in order (empty ones dropped).

    One key given as text counts as a list of one (an API caller's shortcut); anything that is
    not text is refused with a sentence, not iterated letter by letter or crashed on.

    >>> requested_keys([" glove-6b-50d", "", "glove-6b-50d", "all-MiniLM-L6-v2"])
    ['glove-6b-50d', 'all-MiniLM-L6-v2']
    """
    if model_keys is None:
        return []
    if isinstance(model_keys, str):
        model_keys = [model_keys]
    if not isinstance(model_keys, (list, tuple)):
        raise ValueError(f"Choose models as a list of model keys, not a {type(model_keys).__name__}.")
    odd = [key for key in model_keys if key is not None and not isinstance(key, str)]
    if odd:
        raise ValueError(f"Model keys are text; {odd[0]!r} ({type(odd[0]).__name__}) is not a model key.")
    return list(dict.fromkeys(key.strip() for key in model_keys if key and key.strip()))


@process_wide
def get_registry() -> Registry:
    """The process-wide registry shared by the CLI, the app and every user."""
    return Registry()
