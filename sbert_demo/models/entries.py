"""What a model *is*: the frozen registry record, and where it loads from now.

:class:`ModelEntry` says what a model is (key, label, family, kind, source, pooling);
:class:`Availability` says whether and from where it loads *now*. Both are plain data, so every
layer (model folders, loading, training, the UI) can import them without importing the registry,
and an entry travels as JSON to a training process. What a kind of model can do and how it loads
is the kind's own object (:mod:`sbert_demo.models.kinds`); the built-in entries are declared there,
by their kinds.

Families: ``naive`` (averaged word vectors, BERT without siamese training), ``siamese`` (SBERT
models), ``fine-tuned`` (models trained locally, found under ``models/``; also models a user adds),
``cross-encoder`` (pair scorers from the Hub; one trained here is ``fine-tuned``), ``static`` (token
vectors distilled from a sentence transformer, averaged).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FAMILIES = ("naive", "siamese", "fine-tuned", "cross-encoder", "static")
POOLINGS = ("mean", "cls", "max")


@dataclass(frozen=True)
class ModelEntry:
    key: str
    label: str
    family: str
    kind: str  # the name of its kind (:mod:`sbert_demo.models.kinds`), which knows how it loads
    source: str  # Hub id, local folder, or package name
    pooling: str | None = None  # for plain transformers; sentence-transformers folders keep their own
    description: str = ""
    builtin: bool = False
    hub_ids: tuple[str, ...] = ()  # Hub repositories this model can come from
    install_hint: str = ""  # how to install it for offline use, when a package ships it
    base: str | None = None  # for a training-free variant (:mod:`.variants`): the model it transforms
    fix: str | None = None  # ... and the fix, e.g. "whiten"
    asset: str | None = None  # a model shipped in a pip package (:mod:`.assets`), e.g. "minilm"


@dataclass(frozen=True)
class Availability:
    available: bool
    reason: str | None = None  # why not, as a sentence the user can act on
    location: Path | None = None  # local folder (or GloVe vectors file) to load from
    hub_id: str | None = None  # set when it will load from the Hub

    @property
    def where(self) -> str:
        if self.location is not None:
            return str(self.location)
        return f"Hugging Face Hub: {self.hub_id}" if self.hub_id else "-"
