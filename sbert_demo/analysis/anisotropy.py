"""The cone: how much naive sentence vectors all point the same way, and what it costs.

For one model, over STS benchmark pairs:

* random pairs of sentences (fixed seed): their mean cosine measures anisotropy (bert-as-service's
  FAQ: "cosine is always > 0.8"); measured here on STSb train: GloVe average 0.50, MiniLM 0.03;
* gold-similar pairs (score ≥ 4) against gold-unrelated pairs (score ≤ 1): the ROC AUC of cosine
  separating them (scikit-learn's ``roc_auc_score``) says whether the cosine still ranks well
  inside the cone.

Embeddings come from :func:`sbert_demo.encoding.encoder.encode` (lossless runtime, cached), so a
training-free variant (``K+whiten``) is measured the same way as its base.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..encoding.pair_scores import pair_cosines
from ..data.benchmarks import sts_split
from ..encoding.encoder import encode
from ..models.kinds import EMBEDS
from ..models.loading import ResolvedModel
from ..models.per_model import ModelOutcome, Progress, chosen_models, resolve_for, run_per_model
from ..models.registry import Registry
from ..views import VIEWS

N_RANDOM = 2000
SEED = 0
SIMILAR = 4.0  # gold score at or above: similar
UNRELATED = 1.0  # at or below: unrelated
MAX_MODELS = VIEWS["cone"].max_models


@dataclass(frozen=True)
class Anisotropy(ModelOutcome):
    random: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)  # cosine of each random pair
    similar: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)  # ... of each gold-similar pair
    unrelated: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)  # ... of each unrelated pair
    split: str = "train"

    @property
    def mean_random_cosine(self) -> float:
        return float(self.random.mean())

    @property
    def auc(self) -> float:
        """ROC AUC of cosine separating gold-similar (positive) from gold-unrelated pairs."""
        from sklearn.metrics import roc_auc_score

        labels = np.r_[np.ones(len(self.similar)), np.zeros(len(self.unrelated))]
        return float(roc_auc_score(labels, np.r_[self.similar, self.unrelated]))

    def as_json(self) -> dict:
        """The JSON object ``python -m sbert_demo anisotropy --json`` writes per model."""
        return {"mean_random_cosine": self.mean_random_cosine, "auc_similar_vs_unrelated": self.auc,
                "n_random": len(self.random), "n_similar": len(self.similar), "n_unrelated": len(self.unrelated),
                "mean_similar_cosine": float(self.similar.mean()),
                "mean_unrelated_cosine": float(self.unrelated.mean()), "split": self.split,
                "seconds": round(self.seconds, 3), "runtime": self.runtime}


def random_pairs(count: int, n_random: int = N_RANDOM, seed: int = SEED) -> np.ndarray:
    """(n_random, 2) indices of distinct sentences, the same for every model and run."""
    if count < 2:
        raise ValueError("At least two sentences are needed for random pairs.")
    rng = np.random.default_rng(seed)
    first = rng.integers(0, count, n_random)
    second = (first + rng.integers(1, count, n_random)) % count  # never the same index
    return np.stack([first, second], axis=1)


def anisotropy(model: str | ResolvedModel, split: str = "train", n_random: int = N_RANDOM, seed: int = SEED,
               registry: Registry | None = None,
               progress: Callable[[int, int], None] | None = None) -> Anisotropy:
    """Cosines of random, similar and unrelated STSb pairs for one model (raises ValueError).

    ``progress(done, total)`` counts the distinct sentences encoded so far.
    """
    model = resolve_for(model, EMBEDS, "measure the cone of its sentence vectors", registry)
    if not 10 <= n_random <= 100_000:
        raise ValueError("The number of random pairs must be between 10 and 100,000.")
    started = time.perf_counter()
    pairs = sts_split(split)
    sentences = list(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))
    chosen = random_pairs(len(sentences), n_random, seed)
    scores = np.asarray(pairs.scores)
    similar = np.flatnonzero(scores >= SIMILAR)
    unrelated = np.flatnonzero(scores <= UNRELATED)
    if not len(similar) or not len(unrelated):
        raise ValueError(f"{pairs.name} has {len(similar)} pairs scored {SIMILAR:g} or more and {len(unrelated)} "
                         f"scored {UNRELATED:g} or less; the AUC needs both. Choose another split.")
    texts = [*(sentences[i] for i in chosen.ravel()),
             *(pairs.sentences1[i] for i in similar), *(pairs.sentences2[i] for i in similar),
             *(pairs.sentences1[i] for i in unrelated), *(pairs.sentences2[i] for i in unrelated)]
    encoded = encode(model, texts, registry=registry, progress=progress)
    vectors = encoded.embeddings
    r, s, u = 2 * n_random, len(similar), len(unrelated)
    random_cos = pair_cosines(vectors[0:r:2], vectors[1:r:2])
    similar_cos = pair_cosines(vectors[r : r + s], vectors[r + s : r + 2 * s])
    start = r + 2 * s
    unrelated_cos = pair_cosines(vectors[start : start + u], vectors[start + u : start + 2 * u])
    return Anisotropy.of(model, random=random_cos, similar=similar_cos, unrelated=unrelated_cos, split=split,
                         seconds=time.perf_counter() - started, runtime=encoded.runtime)


def anisotropy_many(models: Sequence[str], split: str = "train", registry: Registry | None = None,
                    progress: Progress | None = None, max_models: int = MAX_MODELS) -> list[Anisotropy]:
    """One result per model, in order; a model that cannot run has ``error`` set."""
    keys = chosen_models(models, max_models, "measure")

    def run_one(model: ResolvedModel, step: Progress) -> Anisotropy:
        label = model.entry.label
        return anisotropy(model, split, registry=registry, progress=lambda done, total: step(
            done / max(total, 1), f"{label}: {done:,} / {total:,} sentences"))

    return run_per_model(keys, run_one, Anisotropy, progress=progress, purpose="measure the cone of its "
                         "sentence vectors", registry=registry)
