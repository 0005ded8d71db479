"""Turning a registry entry into a model, and fingerprinting its files: asked of the entry's kind.

* :func:`build_model` builds the model for an entry (:meth:`ModelKind.load
  <sbert_demo.models.kinds.base.ModelKind.load>`).
* :func:`model_identity` fingerprints the files a model comes from (names, sizes, modification
  times), so a model retrained in place gets a new identity and never reuses stale embeddings.
* :func:`resolve` answers, cheaply, which entry, from where and with which identity.
* :func:`notices` sends what a load prepares first (a distillation: minutes, once) to whoever runs the
  request (a view's progress bar), where the caller that loads the model passes no ``notify`` of its own.

Which device and precision a model runs in, and the bounded cache of loaded models, belong to
:mod:`sbert_demo.encoding.model_cache`.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from .entries import Availability, ModelEntry
from .identity import fingerprint
from .kinds import kind_of
from .libraries import import_hugging_face
from .registry import Registry, get_registry

logger = logging.getLogger(__name__)
_listener: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar("load_notices", default=None)


@contextmanager
def notices(listener: Callable[[str], None]) -> Iterator[None]:
    """Within the block, a model built with no ``notify`` of its own tells ``listener`` what it prepares."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def model_identity(entry: ModelEntry, status: Availability, registry: Registry | None = None) -> str | None:
    """A fingerprint of the model's files and settings; None while a Hub model is not downloaded yet."""
    kind = kind_of(entry)
    files = kind.identity_files(entry, status, registry or get_registry())
    if not files:
        return None
    location = status.location if status.location is not None else files[0]
    return fingerprint(entry.kind + kind.encoding_version, entry.pooling, location, files)


def build_model(entry: ModelEntry, status: Availability, device: str = "cpu",
                notify: Callable[[str], None] | None = None, registry: Registry | None = None) -> Any:
    """Load ``entry`` from where ``status`` says it is (never with remote code); ``notify`` hears what
    is prepared first (a distillation, a join)."""
    if not status.available:
        raise ValueError(status.reason or f"{entry.label} is not available.")
    kind = kind_of(entry)
    kind.prepare(entry, status)
    import_hugging_face()  # never two threads at once (the app's start loads models side by side)
    return kind.load(entry, status, device, notify=notify or _listener.get(), registry=registry or get_registry())


class ResolvedModel(NamedTuple):
    """A model resolved once for a request: what it is, where it loads from, and its identity (None
    for a Hub model not downloaded yet). Views hand it down to the encoder, so one request looks at a
    model's files once."""

    entry: ModelEntry
    status: Availability
    identity: str | None

    @property
    def key(self) -> str:
        return self.entry.key

    def base(self, registry: Registry | None = None) -> ResolvedModel:
        """For a training-free variant (``K+whiten``): its base model, which has the same files."""
        if self.entry.base is None:
            return self
        return ResolvedModel((registry or get_registry()).get(self.entry.base), self.status, self.identity)


def resolve(entry: ModelEntry | str | ResolvedModel, registry: Registry | None = None) -> ResolvedModel:
    """The entry, where it loads from, and its identity; a resolved model is returned as it is.

    Cheap: no torch import, no model load. Raises ValueError when the model is unavailable.
    """
    if isinstance(entry, ResolvedModel):
        return entry
    registry = registry or get_registry()
    entry = registry.get(entry) if isinstance(entry, str) else entry
    status = registry.availability(entry)
    if not status.available:
        raise ValueError(status.reason)
    kind_of(entry).prepare(entry, status)  # the fingerprint needs the prepared files (mpnet's join)
    return ResolvedModel(entry, status, model_identity(entry, status, registry))
