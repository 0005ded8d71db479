"""STS evaluation: Spearman and Pearson of cosine similarity against gold scores.

The metric is computed exactly as sentence-transformers' ``EmbeddingSimilarityEvaluator`` does
(cosine of each pair, then ``scipy.stats.spearmanr`` / ``pearsonr`` against the gold scores); the
difference is that the embeddings come from :func:`sbert_demo.encoding.encoder.encode`, so they are cached
and computed once per distinct sentence.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.records import ScoredPairs
from ..encoding.encoder import Progress, encode
from ..models.registry import Registry, get_registry

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StsResult:
    key: str
    label: str
    family: str
    spearman: float | None  # in [-1, 1]; None when the model could not run
    pearson: float | None
    n: int
    seconds: float
    cached: bool
    error: str | None = None
    cosine: np.ndarray | None = field(default=None, repr=False)  # per pair, for scatter plots
    notes: tuple[str, ...] = ()
    runtime: str = ""  # what computed the embeddings, e.g. "ONNX Runtime fp32, CPU (2 threads)"

    def as_json(self) -> dict:
        """The JSON row written by ``python -m sbert_demo eval --json``."""
        row = {"spearman": self.spearman, "pearson": self.pearson, "n": self.n,
               "seconds": round(self.seconds, 3), "cached": self.cached, "runtime": self.runtime}
        if self.error:
            row["error"] = self.error
        return row


def pair_cosines(embeddings1: np.ndarray, embeddings2: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two matrices of L2-normalised rows (float64 for a stable ranking)."""
    return np.einsum("ij,ij->i", embeddings1.astype(np.float64), embeddings2.astype(np.float64))


def correlations(gold: Sequence[float], cosine: np.ndarray) -> tuple[float, float]:
    """``(spearman, pearson)`` as sentence-transformers' evaluator computes them."""
    from scipy.stats import pearsonr, spearmanr

    return float(spearmanr(gold, cosine)[0]), float(pearsonr(gold, cosine)[0])


def evaluate(model: str, pairs: ScoredPairs, registry: Registry | None = None,
             progress: Progress | None = None, **encode_options) -> StsResult:
    """Evaluate one registry model on scored pairs; raises ValueError when it cannot run."""
    registry = registry or get_registry()
    entry = registry.get(model)
    if len(pairs) < 2:
        raise ValueError("At least two scored pairs are needed to compute a correlation.")
    started = time.perf_counter()
    encoded = encode(entry, [*pairs.sentences1, *pairs.sentences2], registry=registry,
                     progress=progress, **encode_options)
    n = len(pairs)
    cosine = pair_cosines(encoded.embeddings[:n], encoded.embeddings[n:])
    spearman, pearson = correlations(pairs.scores, cosine)
    return StsResult(
        key=entry.key, label=entry.label, family=entry.family, spearman=spearman, pearson=pearson,
        n=n, seconds=time.perf_counter() - started, cached=encoded.from_cache, cosine=cosine,
        notes=tuple(encoded.notes), runtime=encoded.runtime,
    )


def evaluate_many(models: Sequence[str], pairs: ScoredPairs, registry: Registry | None = None,
                  progress: Callable[[str, int, int], None] | None = None,
                  **encode_options) -> Iterator[StsResult]:
    """Evaluate models one after another, yielding each result as soon as it is ready.

    A model that cannot run (unavailable, failed to load) yields a result with ``error`` set
    instead of stopping the comparison.
    """
    registry = registry or get_registry()
    for key in models:
        step = (lambda done, total, key=key: progress(key, done, total)) if progress else None
        started = time.perf_counter()
        try:
            yield evaluate(key, pairs, registry, progress=step, **encode_options)
        except ValueError as exc:
            try:
                entry = registry.get(key)
                label, family = entry.label, entry.family
            except ValueError:
                label, family = key, "-"
            yield StsResult(key=key, label=label, family=family, spearman=None, pearson=None, n=len(pairs),
                            seconds=time.perf_counter() - started, cached=False, error=str(exc))
