"""What the Models tab lists about each registry entry, read from files without loading any model.

The embedding dimension comes from configuration files, as each kind reads them (a
sentence-transformers folder's last module that sets it, else the transformer's ``hidden_size``;
GloVe from the ``.npy`` header), so listing the registry stays instant even for models that take
seconds to load.

Example::

    >>> rows = registry_rows()
    >>> next(r for r in rows if r.key == "glove-6b-50d").dimension
    50
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from ..hub import cached_snapshot
from .entries import Availability, ModelEntry
from .kinds import kind_of
from .registry import Registry, get_registry

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class ModelRow:
    key: str
    label: str
    family: str
    kind: str
    source: str
    pooling: str | None
    dimension: int | None
    available: bool
    where: str  # where it loads from when available, else why it is not
    description: str

    def as_json(self) -> dict:
        return asdict(self)


def embedding_dimension(entry: ModelEntry, status: Availability) -> int | None:
    """Sentence-embedding size of ``entry`` without loading it; None when no local file says."""
    return kind_of(entry).dimension(entry, status)


def registry_rows(registry: Registry | None = None) -> list[ModelRow]:
    """One row per registry entry, in registry order."""
    registry = registry or get_registry()
    rows = []
    for entry in registry.entries():
        status = registry.availability(entry)
        rows.append(ModelRow(
            key=entry.key, label=entry.label, family=entry.family, kind=entry.kind,
            source=entry.source, pooling=entry.pooling if kind_of(entry).pooling_choice else None,
            dimension=embedding_dimension(entry, status), available=status.available,
            where=status.where if status.available else (status.reason or "unavailable"),
            description=entry.description,
        ))
    return rows


def looks_like_sentence_transformer(name_or_path: str) -> bool:
    """Whether a model a user is about to add keeps its own pooling (so none needs choosing).

    True for a local folder or cached Hub snapshot with ``modules.json``, and for ids under the
    ``sentence-transformers/`` organisation; False when unknown.
    """
    text = name_or_path.strip() if isinstance(name_or_path, str) else ""
    if not text:
        return False
    if text.startswith("sentence-transformers/"):
        return True
    path = Path(text).expanduser()
    if path.is_absolute() or text.startswith((".", "~")):
        return (path / "modules.json").is_file()
    try:
        snapshot = cached_snapshot(text)
    except Exception:  # an id the cache cannot even name; availability will say why later
        return False
    return snapshot is not None and (snapshot / "modules.json").is_file()
