"""One similarity score per sentence pair, whatever the kind of model: the STS benchmark's input.

A model that embeds sentences scores a pair by the cosine of its two vectors (each distinct
sentence encoded once, through :func:`~.encoder.encode` and its cache); a model that only scores
pairs (a cross-encoder) is asked by its kind (:meth:`ModelKind.score_pairs
<sbert_demo.models.kinds.base.ModelKind.score_pairs>`), each distinct pair once, and its scores
are kept in the same persistent cache (one number per pair), so a repeated run is instant.

Example::

    >>> scored = score_pairs("glove-6b-50d", ["A cat sleeps."], ["A kitten naps."])
    >>> round(float(scored.scores[0]), 2), scored.by_cosine
    (0.57, True)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..models.kinds import EMBEDS, SCORES_PAIRS, kind_of
from ..models.loading import ResolvedModel
from ..models.per_model import resolve_for
from ..models.registry import Registry
from . import model_cache
from .embedding_cache import embedding_cache
from .encoder import cache_key, encode, validate_texts

Counter = Callable[[int, int], None]  # (done, total): texts or pairs scored so far


@dataclass(frozen=True)
class PairScores:
    scores: np.ndarray  # (n,) float64: cosine, or the pair scorer's own score
    by_cosine: bool  # True: cosine of sentence vectors (in [-1, 1]); False: a pair scorer's score
    cached: bool  # nothing had to be computed
    runtime: str
    notes: tuple[str, ...] = ()
    seconds: float = 0.0


TIE_DECIMALS = 12  # far above float64's rounding (1e-16), far below any real difference of two cosines


def pair_cosines(embeddings1: np.ndarray, embeddings2: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two matrices (float64; all-zero rows score 0).

    Equal vectors score exactly alike, so a ranking (Spearman) sees their tie: float32 rows are
    normalised only to about 1e-7, and the plain dot product of a vector with itself would rank
    such pairs by that rounding noise.

    >>> v = np.array([[0.6, 0.8000001], [0.6, 0.8]], dtype=np.float32)
    >>> pair_cosines(v, v).tolist()
    [1.0, 1.0]
    """
    a, b = embeddings1.astype(np.float64), embeddings2.astype(np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cosines = np.einsum("ij,ij->i", a, b) / np.where(norms > 0, norms, 1.0)
    return np.round(cosines, TIE_DECIMALS)


def score_pairs(model: str | ResolvedModel, firsts: Sequence[str], seconds: Sequence[str], *,
                registry: Registry | None = None, progress: Counter | None = None, **encode_options) -> PairScores:
    """A score for each pair ``(firsts[i], seconds[i])``; raises ValueError with a sentence."""
    started = time.perf_counter()
    if len(firsts) != len(seconds):
        raise ValueError(f"There are {len(firsts):,} first sentences and {len(seconds):,} second ones; "
                         "a pair needs one of each.")
    model = resolve_for(model, SCORES_PAIRS, "score sentence pairs", registry)
    kind = kind_of(model.entry)
    n = len(firsts)
    if kind.can(EMBEDS):
        encoded = encode(model, [*firsts, *seconds], registry=registry, progress=progress, **encode_options)
        scores = pair_cosines(encoded.embeddings[:n], encoded.embeddings[n:])
        return PairScores(scores, True, encoded.from_cache, encoded.runtime, tuple(encoded.notes),
                          time.perf_counter() - started)
    validate_texts([*firsts, *seconds])
    return _scored_by_kind(model, list(firsts), list(seconds), registry, progress,
                           encode_options.get("precision"), encode_options.get("use_cache", True), started)


def _scored_by_kind(model: ResolvedModel, firsts: list[str], seconds: list[str], registry: Registry | None,
                    progress: Counter | None, precision: str | None, use_cache: bool, started: float) -> PairScores:
    """A pair scorer's scores: each distinct pair scored once, and kept in the embedding cache (a
    one-number vector per pair), so a second benchmark run reads them back."""
    entry, _, identity = model
    runtime = model_cache.runtime_for(entry, identity, precision)  # measured, PyTorch only (kinds.cross_encoder)
    keys = [json.dumps([first, second], ensure_ascii=False) for first, second in zip(firsts, seconds)]
    unique = list(dict.fromkeys(keys))
    cache = embedding_cache() if use_cache and identity else None
    key = f"{cache_key(identity, runtime)}|pair-scores" if cache else ""
    hits = cache.get_many(key, unique) if cache else {}
    scored = {unique[i]: float(vector[0]) for i, (vector, _) in hits.items()}
    missing = [text for text in unique if text not in scored]
    loaded_runtime = runtime.runtime
    if missing:
        loaded = model_cache.load(model, registry, precision=precision)
        loaded_runtime = loaded.device.runtime
        pairs = [json.loads(text) for text in missing]
        done = len(unique) - len(missing)
        values = kind_of(entry).score_pairs(loaded.model, [a for a, _ in pairs], [b for _, b in pairs],
                                           lambda n, total: progress(done + n, len(unique)) if progress else None)
        values = np.asarray(values, dtype=np.float32).reshape(-1)
        if cache:
            cache.put_many(key, missing, values[:, None])
        scored.update(zip(missing, values.tolist()))
    elif progress:
        progress(len(unique), len(unique))
    scores = np.array([scored[text] for text in keys], dtype=np.float64)
    return PairScores(scores, False, not missing, loaded_runtime, (), time.perf_counter() - started)
