"""k-means for the few dozen sentences of an Explore request, all restarts at once.

Explore picks k by silhouette: k = 2..10, ten k-means++ restarts each, for every model of a request.
On 20 sentences scikit-learn's ``KMeans`` spends its time around the work, not in it (parameter and
array checks, thread-pool limits, one Cython call per restart: about 0.6 ms per restart, 55 ms per
model, a third of an unseen request's CPU beside the encoding under load). This module runs the same
algorithm with the ten restarts of a k as one set of numpy array operations:

* the same k-means++ seeding as ``sklearn.cluster._kmeans._kmeans_plusplus`` (2 + ln k local trials,
  the candidate that lowers the potential most) drawing the same random numbers in the same order
  (``RandomState(random_state)``: one draw for the first centre, then the trials of each next one),
  on the data centred as ``KMeans.fit`` centres it;
* Lloyd's iterations as ``_kmeans_single_lloyd`` runs them (at most 300; stop when no label changes,
  or when the centres' squared shift is within ``tol`` = 1e-4 x the mean feature variance, then label
  once more), and the restart with the lowest inertia kept as ``KMeans.fit`` keeps it.

So the labels are scikit-learn's (``tests/test_projection.py`` checks them against ``KMeans`` on real
sentence sets; only exact floating-point ties could differ). Where a cluster empties during the
iterations (scikit-learn then moves a far point into it) the caller falls back to ``KMeans``.
:func:`silhouette` is scikit-learn's ``silhouette_score`` on precomputed distances, also without
its per-call checks (checked against it in the same test).
"""

from __future__ import annotations

import numpy as np

MAX_ITER = 300
TOL = 1e-4


class EmptyCluster(Exception):
    """A restart emptied a cluster: scikit-learn relocates points then, which this does not copy."""


def kmeans(unit: np.ndarray, k: int, n_init: int = 10, random_state: int = 42) -> np.ndarray:
    """Labels of ``KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit_predict(unit)``
    for float64 rows; raises :class:`EmptyCluster` where a restart would need scikit-learn's relocation."""
    x = np.array(unit, dtype=np.float64)
    x -= x.mean(axis=0)
    norms = np.einsum("ij,ij->i", x, x)
    tol = float(np.mean(np.var(x, axis=0))) * TOL
    gram = x @ x.T
    seeds = _plusplus(gram, norms, k, n_init, np.random.RandomState(random_state))
    labels, inertia = _lloyd(gram, seeds, tol)
    best = 0
    for start in range(1, n_init):  # KMeans.fit: a lower inertia that is also a different partition
        if inertia[start] < inertia[best] and not _same_partition(labels[start], labels[best], k):
            best = start
    return labels[best].astype(np.int64)


def _plusplus(gram: np.ndarray, norms: np.ndarray, k: int, n_init: int, rng: np.random.RandomState) -> np.ndarray:
    """(n_init, k) row indices of the k-means++ seeds of each restart, drawn in KMeans.fit's order."""
    n = len(gram)
    trials = 2 + int(np.log(k))
    draws = rng.random_sample(n_init * (1 + (k - 1) * trials)).reshape(n_init, -1)
    distances = np.maximum(norms[:, None] - 2 * gram + norms[None, :], 0)  # squared, as sklearn's
    seeds = np.empty((n_init, k), dtype=np.int64)
    cumulative = (np.ones(n) / n).cumsum()  # the first centre: RandomState.choice(n, p=uniform)'s cdf
    cumulative /= cumulative[-1]
    seeds[:, 0] = np.searchsorted(cumulative, draws[:, 0], side="right")
    closest = distances[seeds[:, 0]]  # (n_init, n)
    weights = np.ones(n)
    potential = closest @ weights
    rows = np.arange(n_init)
    for c in range(1, k):
        values = draws[:, 1 + (c - 1) * trials: 1 + c * trials] * potential[:, None]  # (n_init, trials)
        totals = np.cumsum(closest, axis=1)
        candidates = np.minimum((totals[:, None, :] < values[:, :, None]).sum(axis=2), n - 1)  # searchsorted left
        tried = np.minimum(closest[:, None, :], distances[candidates])  # (n_init, trials, n)
        potentials = tried @ weights
        chosen = np.argmin(potentials, axis=1)
        seeds[:, c] = candidates[rows, chosen]
        closest = tried[rows, chosen]
        potential = potentials[rows, chosen]
    return seeds


def _assign(gram: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Nearest centre of each row for each restart: argmin of |c|^2 - 2 x.c, as lloyd_iter compares.
    A centre is a weighted sum of rows (``weights`` (n_init, k, n): a seed, or a cluster's mean), so
    both terms come from the rows' Gram matrix: the work does not grow with the vectors' dimension."""
    dots = gram @ weights.transpose(0, 2, 1)  # (n_init, n, k): x . c
    norms = ((weights @ gram) * weights).sum(axis=2)  # (n_init, k): |c|^2
    return np.argmin(norms[:, None, :] - 2 * dots, axis=2)


def _lloyd(gram: np.ndarray, seeds: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Labels (n_init, n) and inertia (n_init,) of Lloyd's iterations from each restart's seeds."""
    n_init, k = seeds.shape
    n = len(gram)
    weights = np.zeros((n_init, k, n))
    weights[np.arange(n_init)[:, None], np.arange(k)[None, :], seeds] = 1.0
    labels = np.full((n_init, n), -1)
    strict = np.zeros(n_init, dtype=bool)
    running = np.ones(n_init, dtype=bool)
    for _ in range(MAX_ITER):
        live = np.flatnonzero(running)
        if not len(live):
            break
        new_labels = _assign(gram, weights[live])
        members = (new_labels[:, None, :] == np.arange(k)[None, :, None]).astype(np.float64)  # (live, k, n)
        counts = members.sum(axis=2)
        if (counts == 0).any():
            raise EmptyCluster
        new_weights = members / counts[:, :, None]  # each centre the mean of its rows
        moved = new_weights - weights[live]
        shift = ((moved @ gram) * moved).sum(axis=(1, 2))  # sum over centres of |c_new - c_old|^2
        unchanged = (new_labels == labels[live]).all(axis=1)
        weights[live] = new_weights
        labels[live] = new_labels
        strict[live] = unchanged
        running[live] = ~unchanged & (shift > tol)
    loose = np.flatnonzero(~strict)
    if len(loose):  # stopped on the shift (or the iteration limit): label against the final centres
        labels[loose] = _assign(gram, weights[loose])
    dots = gram @ weights.transpose(0, 2, 1)  # (n_init, n, k)
    norms = ((weights @ gram) * weights).sum(axis=2)  # (n_init, k)
    chosen = np.take_along_axis(norms, labels, axis=1)
    inertia = (np.diag(gram)[None, :] - 2 * np.take_along_axis(dots, labels[:, :, None], axis=2)[:, :, 0]
               + chosen).sum(axis=1)
    return labels, inertia


def _same_partition(a: np.ndarray, b: np.ndarray, k: int) -> bool:
    """Whether two labellings are the same partition up to renaming (sklearn's _is_same_clustering)."""
    mapping = np.full(k, -1)
    for left, right in zip(a, b):
        if mapping[left] == -1:
            mapping[left] = right
        elif mapping[left] != right:
            return False
    return True


def silhouette(distances: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette coefficient from a precomputed distance matrix (scikit-learn's definition: a
    sentence alone in its cluster scores 0); needs 2 <= clusters < sentences."""
    clusters, codes = np.unique(labels, return_inverse=True)
    members = codes[None, :] == np.arange(len(clusters))[:, None]  # (clusters, n)
    sizes = members.sum(axis=1)
    totals = distances @ members.T  # (n, clusters): summed distance to each cluster
    own = sizes[codes]
    inside = totals[np.arange(len(labels)), codes] / np.maximum(own - 1, 1)
    others = np.where(members.T, np.inf, totals / sizes[None, :])
    nearest = others.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 for duplicates: 0, as in sklearn
        scores = (nearest - inside) / np.maximum(inside, nearest)
    return float(np.mean(np.where(own > 1, np.nan_to_num(scores), 0.0)))
