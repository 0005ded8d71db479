"""The model a run trains, built fresh by its kind from a registry entry (never the shared cached copy).

* a sentence-transformers model (SBERT, or one trained here before) as it is;
* a plain transformer (BERT, a local folder) with the pooling the config asks for;
* the GloVe average plus ``Dense(50, dense_dim, tanh)`` on top, word vectors frozen: the
  "siamese GloVe" whose only trainable part is the dense layer, so the objective's effect on a
  naive encoder shows in seconds on a CPU.

Example::

    >>> model = build_trainable_model(TrainConfig("glove-6b-50d", "nli-softmax", "x"), "cpu")
    >>> [type(m).__name__ for m in model], model.get_embedding_dimension()
    (['WordEmbeddings', 'Pooling', 'Dense'], 256)
"""

from __future__ import annotations

import logging
from typing import Any

from ..models.kinds import kind_of
from ..models.registry import get_registry
from .settings import TrainConfig

logger = logging.getLogger(__name__)


def build_trainable_model(config: TrainConfig, device: str) -> Any:
    """A new ``SentenceTransformer`` for ``config.base`` on ``device``, ready to train: built by the
    base model's kind (:meth:`~sbert_demo.models.kinds.base.ModelKind.trainable_model`) with the
    run's settings. Call after seeding: a new dense layer starts from random weights.
    """
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    registry = get_registry()
    entry = registry.get(config.base)
    status = registry.availability(entry)
    if not status.available:
        raise ValueError(status.reason or f"{entry.label} is not available.")
    kind = kind_of(entry)
    kind.prepare(entry, status)
    model = kind.trainable_model(entry, status, device, config.as_dict(), registry)
    if config.max_seq_length is not None and isinstance(model[0], Transformer):
        model.max_seq_length = min(config.max_seq_length, _position_limit(model))
    if not any(isinstance(module, Pooling) for module in model):
        logger.warning("%s has no Pooling module; training it as it is", entry.key)
    # No Hub look-ups and no widget examples: the model card is written by this project (saving.py).
    model.model_card_data.local_files_only = True
    model.model_card_data.generate_widget_examples = False
    return model


def _position_limit(model: Any) -> int:
    config = getattr(model.transformers_model, "config", None)
    return int(getattr(config, "max_position_embeddings", 10**6) or 10**6)


def trainable_parameters(model: Any, loss: Any) -> int:
    """Parameters the optimiser updates (the model's and the loss's own, e.g. the softmax classifier)."""
    seen: set[int] = set()
    total = 0
    for module in (model, loss):
        for parameter in module.parameters():
            if parameter.requires_grad and id(parameter) not in seen:
                seen.add(id(parameter))
                total += parameter.numel()
    return total
