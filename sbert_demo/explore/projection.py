"""2-D maps (UMAP, or PCA for few sentences) and automatic clustering of sentence embeddings.

umap-learn compiles its numba kernels on first use (~50 s on two cores); they are cached on disk
(:mod:`.numba_cache`), so only the first start ever compiles them, and the app calls :func:`warm_up`
in a background thread at start-up so the first map a user asks for is quick.

From 4,096 points UMAP would switch to pynndescent's approximate neighbours, whose kernels numba
cannot cache: every process compiled them again (the first map of 15,457 sentences took 19.7 s,
the next ones 7.0 s). The exact neighbours from scikit-learn's brute-force search (a chunked
matrix product, 2.6 s for 15,457 x 384 on two cores) are passed in instead: nothing to compile,
and large maps are exact and deterministic like small ones. Maps
of 1,000 points or more are kept on disk (:mod:`.map_cache`), keyed by the vectors themselves.

Example::

    >>> import numpy as np
    >>> projection = project_2d(np.random.default_rng(0).normal(size=(6, 8)))
    >>> projection.method, projection.coords.shape
    ('PCA', (6, 2))
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from dataclasses import dataclass

import numpy as np

from ..shared import memoize
from .similarity import normalize_rows

logger = logging.getLogger(__name__)

# Below this many points UMAP's neighbour graph (15 neighbours: nearly every other point) says nothing
# a linear projection would not. Measured as trustworthiness (how many of each sentence's 5 nearest
# neighbours a map keeps; STSb dev slices and the example sets, mean of MiniLM and GloVe), PCA of the
# unit vectors against UMAP: 10 sentences 0.86 vs 0.80, 15: 0.86 vs 0.82, 18: 0.85 vs 0.83, 20: 0.85
# vs 0.84; then UMAP: 22: 0.85 vs 0.86, 25: 0.84 vs 0.87, 30: 0.83 vs 0.88. PCA costs 1 ms a map against
# UMAP's 21 (three maps per Explore request), so PCA up to 20 sentences, UMAP from 21.
UMAP_MIN_POINTS = 21
UMAP_NEIGHBOURS = 15
EXACT_KNN_MIN = 4096  # where umap-learn itself stops computing all pairwise distances
CLUSTER_METHODS = ("kmeans", "hdbscan")
# k-means restarts: 10 is cheap for the few dozen sentences of a demo; past a few hundred the
# nine fits (k = 2..10) would take half a minute on two cores, and 3 restarts are enough there.
KMEANS_N_INIT_SMALL, KMEANS_N_INIT_LARGE, KMEANS_LARGE_N = 10, 3, 500
# Up to here the ten restarts run at once on the rows' Gram matrix (small_kmeans: its work grows with n^2); past it
# scikit-learn's KMeans is quicker, with the same labels: k = 2..8 at 300 / 500 sentences, 0.30 / 0.99 s
# against 0.44 / 0.62 s (one thread, 2-core AMD EPYC Zen 3).
GRAM_KMEANS_MAX_N = 400
# A layout continued from where its points were (project_2d's start): fewer epochs than afresh (500 below 10,000
# points), from positions that are already a layout: 500 sentences in 0.83 s against 1.16 s afresh (Zen 3).
WARM_EPOCHS = 200


@dataclass(frozen=True)
class Projection:
    coords: np.ndarray  # (n, 2) float
    method: str  # "UMAP" or "PCA"
    note: str | None


@dataclass(frozen=True)
class Clustering:
    labels: np.ndarray  # (n,) int; -1 marks HDBSCAN noise
    method: str
    k: int  # number of clusters, noise excluded
    silhouette: float | None  # cosine silhouette of the chosen labels, None if undefined


def _distinct_rows(unit: np.ndarray) -> int:
    # A set of row bytes: np.unique(axis=0) sorts the rows lexicographically, 0.17 s for 15,000 x 384.
    rounded = np.round(unit, 6) + 0.0  # + 0.0 turns -0.0 into 0.0, so equal rows have equal bytes
    return len({row.tobytes() for row in rounded})


def project_2d(embeddings: np.ndarray, random_state: int = 42, start: np.ndarray | None = None) -> Projection:
    """Project embeddings to 2-D: UMAP (cosine) from ``UMAP_MIN_POINTS`` points, PCA below that.

    Rows are L2-normalised first, so PCA distances match cosine similarity. The result is
    deterministic for a fixed ``random_state``. ``start`` ((n, 2)): UMAP continues from these positions for
    :data:`WARM_EPOCHS` epochs instead of laying the points out afresh (a board that grows keeps its shape).
    """
    unit = normalize_rows(embeddings)
    n = unit.shape[0]
    if n < 3:
        raise ValueError(f"A 2-D map needs at least 3 sentences; got {n}.")
    if np.ptp(np.round(unit, 6), axis=0).max() == 0:  # every row the same (cheaper than counting them)
        note = f"All {n} sentences have the same embedding, so they sit on a single point."
        return Projection(np.zeros((n, 2)), "PCA", note)
    if n < UMAP_MIN_POINTS:
        note = f"{n} sentences: PCA, as faithful as UMAP up to {UMAP_MIN_POINTS - 1}"
        return Projection(_pca_2d(unit), "PCA", note)
    from . import map_cache

    settings = _map_settings(unit, random_state)
    if start is not None:
        start = np.asarray(start, dtype=np.float64)
        settings += f"|start={hashlib.sha256(start.tobytes()).hexdigest()[:16]}|epochs={WARM_EPOCHS}"
    coords = map_cache.maps.get_or_build(unit, settings, lambda: umap_2d(unit, random_state, start))
    if not np.isfinite(coords).all():
        logger.warning("UMAP returned non-finite coordinates for %d points; using PCA.", n)
        note = "UMAP could not lay out these embeddings, showing PCA instead."
        return Projection(_pca_2d(unit), "PCA", note)
    return Projection(coords, "UMAP", None)


def _pca_2d(unit: np.ndarray) -> np.ndarray:
    import sklearn
    from sklearn.decomposition import PCA

    n_components = min(2, *unit.shape)
    # On one BLAS thread and without scikit-learn's checks of the unit vectors made here: 20 x 768,
    # 1.7 -> 0.7 ms of CPU quiet, 4.9 ms under load (BLAS threads waiting for the busy other core).
    with _threadpools().limit(limits=1 if len(unit) <= KMEANS_LARGE_N else None), \
            sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        coords = PCA(n_components=n_components, svd_solver="full").fit_transform(unit)
    if n_components < 2:  # one-dimensional input: put every point on the x axis
        coords = np.hstack([coords, np.zeros((len(coords), 2 - n_components))])
    return coords.astype(np.float64)


def _map_settings(unit: np.ndarray, random_state: int) -> str:
    """Everything besides the vectors that decides a map, for the map cache's key."""
    neighbours = "exact" if unit.shape[0] >= EXACT_KNN_MIN else "umap"
    return (f"umap-{_umap_version()}|n_neighbors={min(UMAP_NEIGHBOURS, unit.shape[0] - 1)}|min_dist=0.1|"
            f"cosine|random_state={random_state}|neighbours={neighbours}")


@memoize(maxsize=1)
def _umap_version() -> str:
    """umap-learn's version from the package metadata, read once (6 ms a time): importing umap here,
    before numba_cache.enable() has pointed numba's cache at our folder, would put umap's own
    cache=True kernels in site-packages."""
    from importlib.metadata import version

    return version("umap-learn")


def exact_neighbours(unit: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` nearest rows (itself first) and their cosine distances, for unit-length rows.

    Euclidean distance between unit vectors is sqrt(2 - 2 cos), so scikit-learn's fast Euclidean
    brute force (a chunked matrix product) finds the cosine neighbours; d^2 / 2 is the cosine distance.
    """
    from sklearn.neighbors import NearestNeighbors

    vectors = unit.astype(np.float32)  # scikit-learn's float32 search works through the rows in chunks
    distances, indices = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(vectors).kneighbors(vectors)
    return indices, np.clip(distances.astype(np.float32) ** 2 / 2, 0.0, 2.0)


def umap_2d(unit: np.ndarray, random_state: int, start: np.ndarray | None = None) -> np.ndarray:
    """UMAP of unit rows to 2-D (cosine; exact neighbours from :data:`EXACT_KNN_MIN` rows), no cache; from
    ``start``'s positions for :data:`WARM_EPOCHS` epochs where given."""
    import warnings

    from . import numba_cache

    numba_cache.enable()
    import umap

    n_neighbors = min(UMAP_NEIGHBOURS, unit.shape[0] - 1)
    precomputed = (None, None, None)
    if unit.shape[0] >= EXACT_KNN_MIN:
        precomputed = (*exact_neighbours(unit, n_neighbors), None)
    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=n_neighbors,
        min_dist=0.1,
        metric="cosine",
        random_state=random_state,
        n_jobs=1,  # a fixed random_state forces one thread anyway; saying so avoids a warning
        precomputed_knn=precomputed,
        **({} if start is None else {"init": start, "n_epochs": WARM_EPOCHS}),
    )
    with warnings.catch_warnings():
        # Without a search index UMAP warns that it cannot place *new* points later; maps never do.
        warnings.filterwarnings("ignore", message=r"precomputed_knn\[2\]")
        return np.asarray(reducer.fit_transform(unit), dtype=np.float64)


def auto_clusters(
    embeddings: np.ndarray, method: str = "kmeans", max_k: int = 10, random_state: int = 42
) -> Clustering:
    """Cluster embeddings by cosine similarity.

    ``"kmeans"`` tries k = 2 .. min(max_k, n - 1) and keeps the k with the best cosine silhouette;
    ``"hdbscan"`` finds the number of clusters itself and marks outliers with -1. Fewer than three
    sentences, or all-identical embeddings, give one cluster.
    """
    if method not in CLUSTER_METHODS:
        valid = ", ".join(CLUSTER_METHODS)
        raise ValueError(f"Unknown clustering method {method!r}; choose one of {valid}.")
    if max_k < 2:
        raise ValueError(f"max_k must be at least 2, got {max_k}.")
    unit = normalize_rows(embeddings)
    n = unit.shape[0]
    distinct = _distinct_rows(unit) if n else 0
    if n < 3 or distinct < 2:
        return Clustering(np.zeros(n, dtype=np.int64), method, min(n, 1), None)
    if method == "kmeans":
        # Up to a few hundred sentences, on one BLAS/OpenMP thread (numpy's products and scikit-learn's
        # KMeans alike): thread start-up and spinning cost far more than the work itself (measured: 3 s
        # with the default OpenMP threads vs 0.08 s with one, on a busy 2-core host).
        with _threadpools().limit(limits=1 if n <= KMEANS_LARGE_N else None):
            return _kmeans(unit, min(max_k, n - 1, distinct), random_state)
    return _hdbscan(unit)


def _cosine_distances(unit: np.ndarray) -> np.ndarray:
    distances = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    np.fill_diagonal(distances, 0.0)
    return distances


@memoize(maxsize=1)
def _threadpools():
    """threadpoolctl's view of the loaded BLAS and OpenMP libraries, found once: each
    ``threadpool_limits(...)`` looks through every loaded library again (~10 ms with torch loaded)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _kmeans(unit: np.ndarray, k_max: int, random_state: int) -> Clustering:
    distances = _cosine_distances(unit)  # computed once, shared by every silhouette
    best: Clustering | None = None
    for k in range(2, k_max + 1):
        labels, score = _kmeans_for(unit, distances, k, random_state)
        if labels is not None and (best is None or score > best.silhouette):  # ties keep the smaller k
            best = Clustering(labels.astype(np.int64), "kmeans", k, score)
    if best is None:
        return Clustering(np.zeros(len(unit), dtype=np.int64), "kmeans", 1, None)
    return best


def _kmeans_for(unit: np.ndarray, distances: np.ndarray, k: int, random_state: int) -> tuple[np.ndarray | None, float]:
    """k-means labels for one k and their cosine silhouette; (None, nan) for a single cluster.

    Up to ``GRAM_KMEANS_MAX_N`` sentences, all ten restarts run at once (:mod:`.small_kmeans`: the same
    labels as scikit-learn's KMeans, 6 ms instead of 55 for k = 2..10 on 20 sentences); larger sets,
    or a restart that empties a cluster, go to scikit-learn itself."""
    from . import small_kmeans

    if len(unit) <= GRAM_KMEANS_MAX_N:
        try:
            labels = small_kmeans.kmeans(unit, k, KMEANS_N_INIT_SMALL, random_state)
        except small_kmeans.EmptyCluster:
            labels = _sklearn_kmeans(unit, k, KMEANS_N_INIT_SMALL, random_state)
    else:
        labels = _sklearn_kmeans(unit, k, KMEANS_N_INIT_SMALL if len(unit) <= KMEANS_LARGE_N else KMEANS_N_INIT_LARGE,
                                 random_state)
    if len(np.unique(labels)) < 2:
        return None, float("nan")
    return labels, small_kmeans.silhouette(distances, labels)


def _sklearn_kmeans(unit: np.ndarray, k: int, n_init: int, random_state: int) -> np.ndarray:
    import sklearn
    from sklearn.cluster import KMeans

    # Called inside auto_clusters' thread limit. The inputs are unit vectors made here: scikit-learn's
    # checks are skipped (the same labels).
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        return KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit_predict(unit)


SILHOUETTE_SAMPLE = 2_000  # a corpus's silhouette is estimated on this many sentences


def kmeans_clusters(embeddings: np.ndarray, k: int, random_state: int = 42) -> Clustering:
    """k-means with a given ``k`` for a corpus of any size (cosine: on unit rows), its silhouette
    estimated on a fixed sample of ``SILHOUETTE_SAMPLE`` sentences (the full matrix of 20,000 would be
    3 GB). Choosing k by silhouette is not offered here: on sentence corpora every k from 2 to 20
    scored 0.05 to 0.07 (STSb, MiniLM), so the choice would be noise."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    unit = normalize_rows(embeddings)
    n = unit.shape[0]
    if k < 2:
        raise ValueError(f"The number of clusters must be at least 2, not {k}.")
    distinct = _distinct_rows(unit) if n else 0
    if n < 3 or distinct < 2:
        return Clustering(np.zeros(n, dtype=np.int64), "kmeans", min(n, 1), None)
    k = min(k, distinct)
    # One k-means++ start: on STSb (15,457 sentences, MiniLM, k = 12) three starts lowered the
    # inertia by 0.05% and took 1.1 s instead of 0.5 s.
    labels = KMeans(n_clusters=k, n_init=1, random_state=random_state).fit_predict(unit.astype(np.float32))
    silhouette = None
    if 2 <= len(np.unique(labels)) < n:
        try:
            silhouette = float(silhouette_score(unit, labels, metric="cosine", random_state=random_state,
                                                sample_size=min(n, SILHOUETTE_SAMPLE)))
        except ValueError:  # the sample held a single cluster
            silhouette = None
    return Clustering(labels.astype(np.int64), "kmeans", int(len(np.unique(labels))), silhouette)


def hdbscan_min_cluster_size(n: int) -> int:
    """Smallest cluster HDBSCAN may report: 2 for a few dozen sentences, at most 5."""
    return max(2, min(5, n // 10))


def _hdbscan(unit: np.ndarray) -> Clustering:
    from sklearn.cluster import HDBSCAN
    from sklearn.metrics import silhouette_score

    # Euclidean distance between unit vectors is a monotone function of cosine distance, and it
    # lets HDBSCAN use a tree instead of brute force.
    hdbscan = HDBSCAN(min_cluster_size=hdbscan_min_cluster_size(len(unit)), copy=True)
    labels = hdbscan.fit_predict(unit).astype(np.int64)
    clustered = labels >= 0
    k = len(np.unique(labels[clustered]))
    silhouette = None
    if 2 <= k < clustered.sum():
        distances = _cosine_distances(unit[clustered])
        silhouette = float(silhouette_score(distances, labels[clustered], metric="precomputed"))
    return Clustering(labels, "hdbscan", k, silhouette)


def cluster_agreement(groups: Sequence[str], labels: Sequence[int]) -> float:
    """Adjusted Rand index between the user's groups and cluster labels (1 = same partition).

    HDBSCAN noise (-1) counts as one more cluster.
    """
    from sklearn.metrics import adjusted_rand_score

    groups, labels = list(groups), list(labels)
    if len(groups) != len(labels):
        raise ValueError(f"There are {len(groups)} group labels for {len(labels)} cluster labels.")
    if not groups:
        raise ValueError("Cluster agreement needs at least one sentence.")
    return float(adjusted_rand_score(groups, labels))


def warm_up() -> None:
    """Fit a tiny UMAP once so numba compiles its kernels before the first user asks for a map."""
    start = time.perf_counter()
    points = np.random.default_rng(0).normal(size=(2 * UMAP_MIN_POINTS, 8))  # enough points for UMAP, not PCA
    if project_2d(points).method != "UMAP":
        raise RuntimeError("The warm-up map did not use UMAP, so its kernels are still to compile.")
    logger.info("UMAP warmed up in %.1f s.", time.perf_counter() - start)


def start_compiling() -> subprocess.Popen | None:
    """Compile UMAP's kernels into the cache folder in a child process, beside the caller's other work: the
    compile is numba's, in Python, holding one core and the interpreter's lock for 35-50 s on a 2-core AMD EPYC,
    while the models' ONNX artefacts are built on the other core. None where this cache folder has them already
    (then :func:`warm_up` loads them in about 5 s). Wait for it, then call :func:`warm_up`, which loads what it
    compiled (or compiles, should the child have failed)."""
    from ..config import settings
    from .numba_cache import compiled_here

    if compiled_here():
        return None
    env = {**os.environ, "SBERT_DEMO_CACHE": str(settings().cache_dir)}
    return subprocess.Popen([sys.executable, "-c", "from sbert_demo.explore.projection import warm_up; warm_up()"],
                            cwd=Path(__file__).resolve().parents[2], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
