"""What the Models tab lists about each registry entry, read from files without loading any model.

The embedding dimension comes from configuration files (a sentence-transformers folder's last
module that sets it, else the transformer's ``hidden_size``; GloVe from the ``.npy`` header), so
listing the registry stays instant even for models that take seconds to load.

Example::

    >>> rows = registry_rows()
    >>> next(r for r in rows if r.key == "glove-6b-50d").dimension
    50
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from ..hub import cached_snapshot
from . import assets
from .entries import Availability, ModelEntry
from .registry import Registry, get_registry

logger = logging.getLogger(__name__)

# Keys that name an output size in sentence-transformers module configs (Pooling, Dense) and in
# Hugging Face model configs, in the order they are looked for.
_MODULE_DIMENSION_KEYS = ("embedding_dimension", "word_embedding_dimension", "out_features")
_CONFIG_DIMENSION_KEYS = ("hidden_size", "d_model", "dim", "n_embd")


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


def _read_json(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _config_dimension(config: object, keys: tuple[str, ...]) -> int | None:
    if not isinstance(config, dict):
        return None
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def folder_dimension(folder: Path) -> int | None:
    """The sentence-embedding size of a model folder, from its config files; None if unknown."""
    modules = _read_json(folder / "modules.json")
    if isinstance(modules, list):
        # The last module that states a size decides it (Pooling, or a Dense layer after it).
        for module in reversed(modules):
            path = module.get("path", "") if isinstance(module, dict) else ""
            size = _config_dimension(_read_json(folder / path / "config.json"), _MODULE_DIMENSION_KEYS)
            if size and path:  # path "" is the transformer itself: its config.json is the HF one
                return size
    return _config_dimension(_read_json(folder / "config.json"), _CONFIG_DIMENSION_KEYS)


def _glove_dimension() -> int | None:
    import numpy as np

    files = assets.glove_files()
    if files is None:
        return None
    try:
        return int(np.load(files[0], mmap_mode="r").shape[1])  # reads only the .npy header
    except (OSError, ValueError, IndexError) as exc:
        logger.warning("Cannot read the GloVe vectors' shape: %s", exc)
        return None


def embedding_dimension(entry: ModelEntry, status: Availability) -> int | None:
    """Sentence-embedding size of ``entry`` without loading it; None when no local file says."""
    if entry.kind == "glove":
        return _glove_dimension()
    folder = status.location
    if folder is None and status.hub_id:
        folder = cached_snapshot(status.hub_id)
    if folder == assets.mpnet_folder() and not folder.is_dir():  # not joined yet: ask the archive
        pooling = assets.read_mpnet_member("1_Pooling/config.json")
        return _config_dimension(json.loads(pooling), _MODULE_DIMENSION_KEYS) if pooling else None
    if folder is None or not folder.is_dir():
        return None
    return folder_dimension(folder)


def registry_rows(registry: Registry | None = None) -> list[ModelRow]:
    """One row per registry entry, in registry order."""
    registry = registry or get_registry()
    rows = []
    for entry in registry.entries():
        status = registry.availability(entry)
        rows.append(ModelRow(
            key=entry.key, label=entry.label, family=entry.family, kind=entry.kind,
            source=entry.source, pooling=entry.pooling if entry.kind == "transformer" else None,
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
