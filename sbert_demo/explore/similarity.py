"""Cosine similarity matrices and the numbers the app reports about them.

Pure numpy, so it is fast to test and shared by every tab.

Example::

    >>> import numpy as np
    >>> sim = cosine_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
    >>> round(float(sim[0, 1]), 3)
    0.707
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)

_ZERO_NORM = 1e-12  # rows with a smaller norm are treated as zero vectors


@dataclass(frozen=True)
class SimilaritySummary:
    n: int
    mean_pairwise: float
    within_group: float | None
    between_group: float | None
    gap: float | None  # within_group - between_group


def normalize_rows(embeddings: np.ndarray) -> np.ndarray:
    """L2-normalise each row (as float64); zero rows stay zero. NaN/inf or non-2-D input raises."""
    array = np.asarray(embeddings, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(
            f"Embeddings must be a 2-D array (sentences x dimensions), got {array.ndim}-D."
        )
    if not np.isfinite(array).all():
        raise ValueError("The embeddings contain NaN or infinite values; check the model output.")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > _ZERO_NORM)


def cosine_matrix(embeddings: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity as a symmetric float32 matrix in [-1, 1].

    Rows are re-normalised, so already-normalised input is fine; a zero row has similarity 0 with
    everything, itself included. Non-zero rows have exactly 1 on the diagonal.
    """
    unit = normalize_rows(embeddings)
    sim = unit @ unit.T
    sim = (sim + sim.T) / 2  # exact symmetry despite rounding in the product
    nonzero = np.linalg.norm(unit, axis=1) > 0.5
    np.fill_diagonal(sim, np.where(nonzero, 1.0, 0.0))
    return np.clip(sim, -1.0, 1.0).astype(np.float32)


def _check_square(sim: np.ndarray) -> np.ndarray:
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim != 2 or sim.shape[0] != sim.shape[1]:
        raise ValueError(f"A similarity matrix must be square, got shape {sim.shape}.")
    return sim


def _check_groups(groups: Sequence[str], n: int) -> list[str]:
    groups = list(groups)
    if len(groups) != n:
        raise ValueError(
            f"There are {len(groups)} group labels for {n} sentences; give one per sentence."
        )
    return groups


def summarize(sim: np.ndarray, groups: Sequence[str] | None = None) -> SimilaritySummary:
    """Mean cosine over all pairs i < j, and within / between groups when groups are given.

    ``within_group`` is None when no group has two members, ``between_group`` when there is only
    one group; ``gap`` needs both.
    """
    sim = _check_square(sim)
    n = sim.shape[0]
    if n < 2:
        raise ValueError("Similarity needs at least two sentences.")
    rows, cols = np.triu_indices(n, k=1)
    pair_values = sim[rows, cols]
    mean_pairwise = float(pair_values.mean())
    if groups is None:
        return SimilaritySummary(n, mean_pairwise, None, None, None)
    codes = np.unique(np.asarray(_check_groups(groups, n), dtype=object), return_inverse=True)[1]
    same = codes[rows] == codes[cols]
    within = float(pair_values[same].mean()) if same.any() else None
    between = float(pair_values[~same].mean()) if (~same).any() else None
    gap = within - between if within is not None and between is not None else None
    return SimilaritySummary(n, mean_pairwise, within, between, gap)


def rank_against(sim: np.ndarray, query_index: int) -> list[tuple[int, float]]:
    """All other sentences as ``(index, cosine)``, most similar first; ties keep index order.

    Example::

        >>> rank_against(np.array([[1, .2, .9], [.2, 1, .1], [.9, .1, 1]]), 0)
        [(2, 0.9), (1, 0.2)]
    """
    sim = _check_square(sim)
    n = sim.shape[0]
    if isinstance(query_index, bool) or not isinstance(query_index, (int, np.integer)):
        raise ValueError(f"The query must be a sentence number, not {query_index!r}.")
    if not 0 <= query_index < n:
        raise ValueError(f"Sentence {query_index + 1} does not exist; choose one from 1 to {n}.")
    others = np.array([i for i in range(n) if i != query_index], dtype=np.int64)
    scores = sim[query_index, others]
    order = np.lexsort((others, -scores))  # last key is primary: score descending, then index
    return [(int(others[i]), float(scores[i])) for i in order]


def group_order(groups: Sequence[str] | None, n: int) -> list[int]:
    """Indices sorted by group, groups in order of first appearance, stable within each group.

    Example::

        >>> group_order(["b", "a", "b", "c", "a"], 5)
        [0, 2, 1, 4, 3]
    """
    if groups is None:
        return list(range(n))
    groups = _check_groups(groups, n)
    first_seen: dict[str, int] = {}
    for group in groups:
        first_seen.setdefault(group, len(first_seen))
    return sorted(range(n), key=lambda i: (first_seen[groups[i]], i))
