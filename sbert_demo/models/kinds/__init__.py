"""Kinds of model, each one object implementing :class:`~.base.ModelKind`.

* :mod:`.base` — the protocol (availability, identity files, loading, vector size, training
  defaults and form fields, capabilities) and the capabilities views may ask for;
* :mod:`.transformer` — a plain Hugging Face transformer with a pooling (naive BERT);
* :mod:`.word_vectors` — averaged word vectors (GloVe);
* :mod:`.sentence_transformers` — a sentence-transformers model (SBERT, models trained here);
* :mod:`.cross_encoder` — a cross-encoder: scores a pair by reading both sentences together;
* :mod:`.static` — static embeddings distilled from a sentence transformer (model2vec's recipe);
* :mod:`.wordllama` — WordLlama's static token table, shipped in its pip wheel.

Adding a kind of model is one module with one ``ModelKind`` subclass (its built-in entries
included) and one line in :data:`KINDS` below; nothing else names a kind. A view that needs
sentence vectors asks :func:`kind_of` whether a model ``can(EMBEDS)`` and refuses it with the
kind's own sentence otherwise.

Example::

    >>> kind_of("glove").can(EMBEDS), kind_of("glove").matmul_heavy
    (True, False)
    >>> [entry.key for entry in builtin_entries()][:4]
    ['bert-base-uncased-mean', 'bert-base-uncased-cls', 'bert-base-uncased-max', 'glove-6b-50d']
"""

from __future__ import annotations

import re
from pathlib import Path

from ...hub import cached_snapshot, hub_reachable
from .. import local
from ..entries import POOLINGS, ModelEntry
from .base import CAPABILITIES, EMBEDS, SCORES_PAIRS, TRAINABLE, ModelKind, folder_dimension
from .cross_encoder import CrossEncoderKind
from .sentence_transformers import SentenceTransformersKind
from .static import StaticKind
from .transformer import TransformerKind
from .word_vectors import WordVectorsKind
from .wordllama import WordLlamaKind

__all__ = ["CAPABILITIES", "EMBEDS", "SCORES_PAIRS", "TRAINABLE", "ModelKind", "KINDS", "builtin_entries",
           "folder_dimension", "kind_of", "register_kind", "scan", "unregister_kind", "user_entry"]

# Every kind, by name, in the order their built-in models are listed and folders are claimed.
KINDS: dict[str, ModelKind] = {}


def register_kind(kind: ModelKind) -> ModelKind:
    if not kind.name:
        raise ValueError("A kind of model needs a name.")
    KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    KINDS.pop(name, None)


register_kind(TransformerKind())
register_kind(WordVectorsKind())
register_kind(SentenceTransformersKind())
register_kind(CrossEncoderKind())
register_kind(StaticKind())
register_kind(WordLlamaKind())


def kind_of(entry_or_name: ModelEntry | str) -> ModelKind:
    """The kind of an entry (or the kind called that)."""
    name = entry_or_name if isinstance(entry_or_name, str) else entry_or_name.kind
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"Unknown kind of model {name!r}; kinds: {', '.join(KINDS)}.") from None


def builtin_entries() -> tuple[ModelEntry, ...]:
    """Every kind's built-in models, in kind order."""
    return tuple(entry for kind in KINDS.values() for entry in kind.builtin_entries())


def _claiming_kind(folder: Path) -> ModelKind | None:
    return next((kind for kind in KINDS.values() if kind.claims_folder(folder)), None)


def scan(models_dir: Path) -> list[ModelEntry]:
    """Entries for the model folders directly under ``models_dir`` (trained here or copied there).

    Folders whose names start with a dot are work in progress (training builds there and renames at
    the end) and are never listed; a plain transformer copy (``config.json`` without ``modules.json``,
    e.g. ``models/bert-base-uncased``) is a source for a built-in entry, not a model of its own. A
    folder no kind claims is listed as a sentence-transformers model, so its problem is reported.
    """
    if not models_dir.is_dir():
        return []
    entries = []
    for folder in sorted(models_dir.iterdir(), key=lambda p: p.name.lower()):
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        card = local.read_card(folder)
        kind = KINDS.get(card.get("kind", "")) or _claiming_kind(folder)
        if kind is None:
            if not (folder / "modules.json").exists() and (folder / "config.json").is_file():
                continue
            kind = KINDS[SentenceTransformersKind.name]
        entries.append(kind.folder_entry(folder, card))
    return entries


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


def user_entry(name_or_path: str, pooling: str = "mean") -> ModelEntry:
    """Build (but do not register) an entry for a Hub id or a local folder given by a user."""
    if name_or_path is not None and not isinstance(name_or_path, str):
        raise ValueError(f"A model id or folder is text, not a {type(name_or_path).__name__}.")
    text = (name_or_path or "").strip()
    if not text:
        raise ValueError("Enter a Hugging Face model id (like sentence-transformers/all-MiniLM-L12-v2) or a folder.")
    if pooling not in POOLINGS:
        raise ValueError(f"Pooling {pooling!r} is not valid; choose one of {', '.join(POOLINGS)}.")
    if local.is_pathlike(text):
        folder = local.allowed_folder(text)
        kind = _claiming_kind(folder)
        if kind is None and (folder / "config.json").is_file():
            kind = KINDS[TransformerKind.name]
        if kind is None or not hasattr(kind, "user_entry"):
            raise ValueError(f"{text} holds no model: expected modules.json or config.json in it.")
        return kind.user_entry(str(folder), folder.name, pooling)
    if ".." in text or not _HUB_ID.match(text):
        raise ValueError(
            f"{text!r} is not a valid Hugging Face model id; ids look like 'org/name' "
            "(letters, digits, '.', '_' and '-')."
        )
    kind = _hub_kind(text)
    return kind.user_entry(text, text, pooling, hub_ids=(text,))


def _hub_kind(repo_id: str) -> ModelKind:
    """The kind of a Hub repository: from its cached snapshot, else from the Hub (modules.json and
    the model class it names), else a plain transformer."""
    snapshot = cached_snapshot(repo_id)
    plain = KINDS[TransformerKind.name]
    if snapshot is not None:
        return _claiming_kind(snapshot) or plain
    if hub_reachable():
        try:
            from huggingface_hub import file_exists

            if file_exists(repo_id, "modules.json"):
                return KINDS[SentenceTransformersKind.name]
        except Exception:  # the id may not exist; availability will say so when loading
            pass
    return plain
