"""The three SBERT objectives: the training examples and the sentence-transformers loss for each.

* ``nli-softmax`` — (premise, hypothesis, label) pairs; ``SoftmaxLoss`` classifies the
  concatenation of u, v, |u-v| (and optionally u*v) into entailment / neutral / contradiction.
* ``cosine`` — scored pairs with scores scaled to 0..1; ``CosineSimilarityLoss`` (MSE between
  cos(u, v) and the gold score).
* ``mnrl`` — (anchor, positive, hard negative) triplets; ``MultipleNegativesRankingLoss`` with
  the other positives and negatives in the batch as extra negatives. Batches avoid duplicate
  sentences (an NLI premise often has several entailments, and a copy of the anchor elsewhere in
  the batch would be a false negative).

Example::

    >>> data = training_data(TrainConfig("glove-6b-50d", "nli-softmax", "x", max_pairs=100))
    >>> data.dataset.column_names, len(data)
    (['sentence1', 'sentence2', 'label'], 100)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..data import benchmarks, files
from ..data.records import NLI_LABELS, NliPairs, ScoredPairs, Triplets, to_dataset
from .settings import SCORED_OBJECTIVES, TrainConfig

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingData:
    dataset: Any  # datasets.Dataset with the columns the objective's loss expects
    description: str  # e.g. "NLI (local): 39,313 labelled pairs"
    source: str  # "nli", "stsb" or the file path
    notes: tuple[str, ...] = ()  # rejected rows and similar, for the log

    def __len__(self) -> int:
        return len(self.dataset)


def _records(config: TrainConfig) -> ScoredPairs | NliPairs | Triplets:
    source, limit, seed = config.data_source, config.max_pairs, config.seed
    if config.objective in SCORED_OBJECTIVES:
        pairs = benchmarks.sts_split("train") if source == "stsb" else files.read_scored_pairs(source)
        return _cut(pairs.scaled(), limit, seed)
    if config.objective == "nli-softmax":
        if source == "nli":
            return benchmarks.nli_pairs(max_pairs=limit, seed=seed)
        return _cut(files.read_nli_file(source), limit, seed)
    if source == "nli":
        return benchmarks.nli_triplets(max_triplets=limit, seed=seed)
    return _cut(files.read_triplets_file(source), limit, seed)


def _cut(records: ScoredPairs | NliPairs | Triplets, limit: int | None, seed: int):
    """A seeded random sample of at most ``limit`` records (all of them, in order, without a limit)."""
    if limit is None or limit >= len(records):
        return records
    import random

    keep = sorted(random.Random(seed).sample(range(len(records)), limit))
    if isinstance(records, ScoredPairs):
        return ScoredPairs([records.sentences1[i] for i in keep], [records.sentences2[i] for i in keep],
                           [records.scores[i] for i in keep], records.name, records.problems,
                           records.score_range)
    if isinstance(records, NliPairs):
        return NliPairs([records.premises[i] for i in keep], [records.hypotheses[i] for i in keep],
                        [records.labels[i] for i in keep], records.name, records.problems)
    return Triplets([records.anchors[i] for i in keep], [records.positives[i] for i in keep],
                    [records.negatives[i] for i in keep], records.name, records.problems)


def _describe(records: ScoredPairs | NliPairs | Triplets) -> str:
    if isinstance(records, ScoredPairs):
        return f"{records.name}: {len(records):,} scored pairs (scores scaled to 0..1)"
    if isinstance(records, NliPairs):
        counts = ", ".join(f"{records.labels.count(i):,} {label}" for i, label in enumerate(NLI_LABELS))
        return f"{records.name}: {len(records):,} labelled pairs ({counts})"
    return f"{records.name}: {len(records):,} (anchor, positive, hard negative) triplets"


def training_data(config: TrainConfig) -> TrainingData:
    """Read (or download) the examples for ``config``; ValueError when there are none to train on."""
    records = _records(config)
    if len(records) < 1:
        raise ValueError(f"{records.name} holds no usable training examples for the {config.objective} objective.")
    dataset = to_dataset(records)
    if isinstance(records, NliPairs):
        # Neutral names: the collator warns about "hypothesis" not being the first column.
        dataset = dataset.rename_columns({"premise": "sentence1", "hypothesis": "sentence2"})
    return TrainingData(dataset, _describe(records), config.data_source, tuple(records.problems))


def build_loss(config: TrainConfig, model: Any) -> Any:
    """The sentence-transformers loss for ``config.objective``, attached to ``model``."""
    from sentence_transformers.sentence_transformer import losses

    if config.objective == "nli-softmax":
        rep, difference, product = config.concat_flags()
        return losses.SoftmaxLoss(
            model,
            embedding_dimension=model.get_embedding_dimension(),
            num_labels=len(NLI_LABELS),
            concatenation_sent_rep=rep,
            concatenation_sent_difference=difference,
            concatenation_sent_multiplication=product,
        )
    if config.objective == "cosine":
        return losses.CosineSimilarityLoss(model)
    if config.objective == "mnrl":
        return losses.MultipleNegativesRankingLoss(model)
    raise ValueError(f"Unknown objective {config.objective!r}.")


def batch_sampler(config: TrainConfig) -> Any:
    """NO_DUPLICATES for in-batch negatives (mnrl), the plain shuffled sampler otherwise."""
    from sentence_transformers.base.sampler import BatchSamplers

    return BatchSamplers.NO_DUPLICATES if config.objective == "mnrl" else BatchSamplers.BATCH_SAMPLER


def describe_objective(config: TrainConfig) -> str:
    """One line for logs and model cards, e.g. ``NLI softmax over (u, v, |u-v|)``."""
    if config.objective == "nli-softmax":
        rep, difference, product = config.concat_flags()
        parts = [*(["u", "v"] if rep else []), *(["|u-v|"] if difference else []), *(["u*v"] if product else [])]
        return f"NLI softmax classification over ({', '.join(parts)})"
    if config.objective == "cosine":
        return "cosine-similarity regression (MSE against gold scores scaled to 0..1)"
    if config.objective == "cross-encoder":
        return "a cross-encoder: both sentences through one transformer, a sigmoid score against gold scores scaled to 0..1"
    return "multiple-negatives ranking loss with hard negatives (scale 20)"
