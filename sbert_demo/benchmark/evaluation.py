"""STS evaluation: Spearman and Pearson of cosine similarity (or a pair scorer's score) against gold scores.

The metric is computed exactly as sentence-transformers' ``EmbeddingSimilarityEvaluator`` does
(cosine of each pair, then ``scipy.stats.spearmanr`` / ``pearsonr`` against the gold scores); the
difference is that the embeddings come from :func:`sbert_demo.encoding.encoder.encode`, so they are cached
and computed once per distinct sentence. A model that only scores pairs is asked for its scores
(:func:`sbert_demo.encoding.pair_scores.score_pairs`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.records import ScoredPairs
from ..encoding.pair_scores import score_pairs
from ..models.kinds import SCORES_PAIRS
from ..models.loading import ResolvedModel
from ..models.per_model import ModelOutcome, Progress, iter_per_model, resolve_for
from ..models.registry import Registry

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StsResult(ModelOutcome):
    spearman: float | None = None  # in [-1, 1]; None when the model could not run
    pearson: float | None = None
    n: int = 0
    cached: bool = False
    cosine: np.ndarray | None = field(default=None, repr=False)  # per pair (a pair scorer's own score), for scatters

    def as_json(self) -> dict:
        """The JSON row written by ``python -m sbert_demo eval --json``."""
        row = {"spearman": self.spearman, "pearson": self.pearson, "n": self.n,
               "seconds": round(self.seconds, 3), "cached": self.cached, "runtime": self.runtime}
        if self.error:
            row["error"] = self.error
        return row


def correlations(gold: Sequence[float], cosine: np.ndarray) -> tuple[float, float]:
    """``(spearman, pearson)`` as sentence-transformers' evaluator computes them."""
    from scipy.stats import pearsonr, spearmanr

    return float(spearmanr(gold, cosine)[0]), float(pearsonr(gold, cosine)[0])


def evaluate(model: str | ResolvedModel, pairs: ScoredPairs, registry: Registry | None = None,
             progress: Callable[[int, int], None] | None = None, **encode_options) -> StsResult:
    """Evaluate one registry model on scored pairs; raises ValueError when it cannot run.

    ``progress(done, total)`` counts the distinct sentences encoded so far.
    """
    model = resolve_for(model, SCORES_PAIRS, "score sentence pairs", registry)
    if len(pairs) < 2:
        raise ValueError("At least two scored pairs are needed to compute a correlation.")
    scored = score_pairs(model, pairs.sentences1, pairs.sentences2, registry=registry, progress=progress,
                         **encode_options)
    spearman, pearson = correlations(pairs.scores, scored.scores)
    return StsResult.of(model, spearman=spearman, pearson=pearson, n=len(pairs), seconds=scored.seconds,
                        cached=scored.cached, cosine=scored.scores, notes=scored.notes, runtime=scored.runtime)


def evaluate_many(models: Sequence[str], pairs: ScoredPairs, registry: Registry | None = None,
                  progress: Progress | None = None, **encode_options) -> Iterator[StsResult]:
    """Evaluate models one after another, yielding each result as soon as it is ready.

    A model that cannot run (unavailable, failed to load) yields a result with ``error`` set
    instead of stopping the comparison.
    """
    def run_one(model: ResolvedModel, step) -> StsResult:
        label = model.entry.label
        return evaluate(model, pairs, registry, progress=lambda done, total: step(
            done / max(total, 1), f"{label}: {done:,} / {total:,} sentences"), **encode_options)

    yield from iter_per_model(list(models), run_one, StsResult, progress=progress, needs=SCORES_PAIRS,
                              purpose="score sentence pairs", registry=registry, failed_values={"n": len(pairs)})
