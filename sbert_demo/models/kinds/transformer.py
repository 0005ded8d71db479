"""A plain Hugging Face transformer with a pooling chosen per entry: naive BERT (CLS, mean, max).

The SBERT paper's weakest baselines: BERT without siamese training, its token vectors averaged
("Avg. BERT"), its [CLS] vector, or their element-wise maximum. Loaded as sentence-transformers'
``Transformer`` + ``Pooling`` from a local folder (``models/bert-base-uncased``), the Hugging Face
cache, or the Hub; never with remote code.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..entries import Availability, ModelEntry
from .base import ModelKind

BERT_HUB_IDS = ("google-bert/bert-base-uncased", "bert-base-uncased")


def _bert(pooling: str, label: str, description: str) -> ModelEntry:
    return ModelEntry(key=f"bert-base-uncased-{pooling}", label=f"BERT base ({label})", family="naive",
                      kind=TransformerKind.name, source="bert-base-uncased", pooling=pooling,
                      description=description, builtin=True, hub_ids=BERT_HUB_IDS)


class TransformerKind(ModelKind):
    name = "transformer"
    description = "plain transformer with a pooling"
    layout = "transformer"
    train_fields = frozenset({"pooling", "max_seq_length"})

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return (
            _bert("mean", "mean", "Plain BERT, token vectors averaged: the SBERT paper's 'Avg. BERT' baseline."),
            _bert("cls", "CLS", "Plain BERT, the [CLS] token vector: the paper's weakest baseline."),
            _bert("max", "max", "Plain BERT, element-wise max over token vectors."),
        )

    def load(self, entry: ModelEntry, status: Availability, device: str, notify: Any = None, registry: Any = None) -> Any:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

        if not status.available:
            raise ValueError(status.reason or f"{entry.label} is not available.")
        source = str(status.location) if status.location is not None else status.hub_id
        local_only = {"local_files_only": status.location is not None, "trust_remote_code": False}
        transformer = Transformer(source, model_kwargs=local_only, processor_kwargs=local_only,
                                  config_kwargs=local_only)
        pooling = Pooling(transformer.get_embedding_dimension(), entry.pooling or "mean")
        return SentenceTransformer(modules=[transformer, pooling], device=device)

    def trainable_model(self, entry: ModelEntry, status: Availability, device: str, options: dict[str, Any],
                        registry: Any = None) -> Any:
        pooling = options.get("pooling")
        return self.load(replace(entry, pooling=pooling) if pooling else entry, status, device)

    def user_entry(self, source: str, name: str, pooling: str, hub_ids: tuple[str, ...] = ()) -> ModelEntry:
        """A plain transformer a user adds: its key names the pooling (``name@mean``)."""
        key = f"{name}@{pooling}"
        return ModelEntry(key=key, label=key, family="naive", kind=self.name, source=source, pooling=pooling,
                          hub_ids=hub_ids)
