"""A model trained here beside its base: what siamese training changed, on the same sentences.

The model card training writes (``sbert_demo_card.json``) names the base model and holds the STSb
Spearman before and after; :func:`training_effect` adds both models' cosine matrices on a set of
sentences and the pairs training moved most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..benchmark.score_changes import ScoreChange, score_changes
from ..encoding.encoder import encode
from ..explore.similarity import cosine_matrix
from ..models import local
from ..models.registry import Registry, get_registry

MAX_SENTENCES = 200  # three heatmaps of this size still read on a page
MOVED_PAIRS = 8


@dataclass(frozen=True)
class TrainingEffect:
    key: str
    label: str
    base_key: str
    base_label: str
    sentences: list[str]
    before: np.ndarray = field(repr=False)  # cosine matrix of the base model
    after: np.ndarray = field(repr=False)  # ... and of the trained model
    card: dict = field(default_factory=dict, repr=False)

    def scores(self) -> list[ScoreChange]:
        """STSb Spearman before / after per split, from the model card (splits with neither left out)."""
        return score_changes(self.card.get("before"), self.card.get("after"), keep_empty=False)

    def moved_pairs(self, k: int = MOVED_PAIRS) -> list[tuple[int, int, float, float]]:
        """``(i, j, before, after)`` of the ``k`` sentence pairs whose cosine changed most."""
        diff = np.triu(self.after - self.before, 1)
        order = np.argsort(-np.abs(diff), axis=None, kind="stable")[:k]
        pairs = [tuple(int(x) for x in np.unravel_index(flat, diff.shape)) for flat in order]
        return [(i, j, float(self.before[i, j]), float(self.after[i, j])) for i, j in pairs if i < j]


def trained_models(registry: Registry | None = None) -> list[tuple[str, str]]:
    """``(label, key)`` of the models trained here whose card names their base model, newest first."""
    registry = registry or get_registry()
    found = [(Path(entry.source), entry) for entry in registry.entries()
             if entry.family == "fine-tuned" and local.read_card(Path(entry.source)).get("base")]
    found.sort(key=lambda item: -_modified(item[0]))
    return [(entry.label, entry.key) for _, entry in found]


def _modified(folder: Path) -> float:
    try:
        return folder.stat().st_mtime
    except OSError:
        return 0.0


def training_effect(model: str, sentences: Sequence[str], registry: Registry | None = None) -> TrainingEffect:
    """Both models' cosine matrices on ``sentences`` and the STSb numbers from the card."""
    registry = registry or get_registry()
    entry = registry.get(model)
    card = local.read_card(Path(entry.source)) if entry.family == "fine-tuned" else {}
    base_key = card.get("base")
    if not base_key:
        raise ValueError(f"{entry.label} has no record of a base model (the card this app's training writes); "
                         "choose a model trained in the Train tab.")
    if not 2 <= len(sentences) <= MAX_SENTENCES:
        raise ValueError(f"Compare on 2 to {MAX_SENTENCES} sentences; there are {len(sentences)}.")
    base = registry.get(base_key)
    before = cosine_matrix(encode(base, list(sentences), registry=registry, fast=True).embeddings)
    after = cosine_matrix(encode(entry, list(sentences), registry=registry, fast=True).embeddings)
    return TrainingEffect(key=entry.key, label=entry.label, base_key=base.key, base_label=base.label,
                          sentences=list(sentences), before=before, after=after, card=card)
