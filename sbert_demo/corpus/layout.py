"""A 2-D layout of up to a million sentences: UMAP fitted on a sample, every other sentence placed among
its nearest sampled neighbours.

UMAP on a million points is out of reach for two cores in a usable time (a full UMAP of 100,000
MiniLM vectors took 134 s here, and its cost grows faster than the corpus), so it is fitted on
:data:`SAMPLE` sentences drawn at random (its own exact 15-nearest-neighbour graph, as the corpus map
uses up to 20,000 sentences, :mod:`sbert_demo.explore.projection`); each other sentence is placed beside
its nearest sampled sentence, found with an HNSW index (usearch) over the sample, pulled a fifth of the
way towards the similarity-weighted mean of its :data:`PLACE_K` nearest (so that sentences placed by one
sampled sentence spread around it instead of stacking on one point).

Measured by ``bench/million.py --phases layout`` on 100,000 MiniLM vectors of the bench corpus
(trustworthiness, 10 neighbours, on 5,000 points): full UMAP 0.847 in 134 s; this layout 0.820 in
about 40 s (the nearest sampled sentence alone 0.824, the weighted mean of 10 alone 0.793, a sample of
50,000 +0.01 for 3x UMAP's time). UMAP's own ``transform`` starts a new point the same way and then runs
further epochs, about 10x the time here.

Example::

    >>> import numpy as np
    >>> unit = np.random.default_rng(0).normal(size=(300, 16)).astype(np.float32)
    >>> unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    >>> coords, sample = layout_rows(unit, sample_size=100)
    >>> coords.shape, len(sample)
    ((300, 2), 100)
"""

from __future__ import annotations

import numpy as np

from ..explore.projection import umap_2d
from .embed import Embedded
from .sources import Progress

SAMPLE = 25_000  # sentences UMAP is fitted on (measured: 16 s for 25,000, 45 s for 50,000 here)
PLACE_K = 10  # sampled neighbours a placed sentence's spread is drawn from
PULL = 0.2  # how far a placed sentence moves from its nearest sampled one towards the others' mean
SEED = 42


def sample_rows(n: int, size: int, seed: int = SEED) -> np.ndarray:
    """``size`` row numbers of ``n`` (all of them when there are fewer), sorted."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def _index(vectors: np.ndarray):
    from usearch.index import Index

    index = Index(ndim=vectors.shape[1], metric="cos", dtype="f32", connectivity=16, expansion_add=64,
                  expansion_search=64)
    index.add(np.arange(len(vectors)), np.ascontiguousarray(vectors, dtype=np.float32), threads=0)
    return index


def place(index, sample_coords: np.ndarray, vectors: np.ndarray, k: int = PLACE_K) -> np.ndarray:
    """Positions of ``vectors`` among the sampled ones: beside their nearest sampled sentence, :data:`PULL`
    of the way towards the similarity-weighted mean of their ``k`` nearest (a sentence in the sample, or
    its duplicate, lands on its own point)."""
    found = index.search(np.ascontiguousarray(vectors, dtype=np.float32), k, threads=0)
    keys = np.asarray(found.keys, dtype=np.int64).reshape(len(vectors), -1)
    distances = np.asarray(found.distances, dtype=np.float32).reshape(len(vectors), -1)
    similarity = np.clip(1.0 - distances.astype(np.float64), 1e-3, None)
    weights = (similarity / similarity.max(axis=1, keepdims=True)) ** 16  # the nearest dominate (float64: no
    weights[distances <= 1e-6] = 1e6  # underflow to a 0/0); a duplicate takes all
    mean = (weights[:, :, None] * sample_coords[keys]).sum(axis=1) / weights.sum(axis=1, keepdims=True)
    return ((1 - PULL) * sample_coords[keys[:, 0]] + PULL * mean).astype(np.float32)


def layout_rows(unit: np.ndarray, sample_size: int = SAMPLE, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """(coordinates of every row, the sampled row numbers) for vectors held in memory (tests, small corpora)."""
    sample = sample_rows(len(unit), sample_size, seed)
    coords = np.empty((len(unit), 2), dtype=np.float32)
    coords[sample] = umap_2d(unit[sample].astype(np.float32), seed)
    if len(sample) < len(unit):
        rest = np.setdiff1d(np.arange(len(unit)), sample)
        coords[rest] = place(_index(unit[sample]), coords[sample], unit[rest])
    return coords, sample


def layout(embedded: Embedded, sample_size: int = SAMPLE, seed: int = SEED,
           progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(coordinates of every sentence as float32, the sampled row numbers), reading the shards twice (the
    sample, then every shard to place), never the whole corpus in memory as float32."""
    say = progress or (lambda fraction, what: None)
    n = embedded.n
    sample = sample_rows(n, sample_size, seed)
    vectors = np.empty((len(sample), embedded.dimension), dtype=np.float32)
    for shard, shard_vectors in embedded.vectors():
        inside = (sample >= shard.start) & (sample < shard.end)
        vectors[inside] = shard_vectors[sample[inside] - shard.start]
    say(0.05, f"{embedded.label}: UMAP on a sample of {len(sample):,} sentences")
    coords = np.empty((n, 2), dtype=np.float32)
    sample_coords = umap_2d(vectors, seed).astype(np.float32)
    coords[sample] = sample_coords
    if len(sample) == n:
        return coords, sample
    say(0.6, f"{embedded.label}: placing the other {n - len(sample):,} sentences beside their nearest sampled ones")
    index = _index(vectors)
    for shard, shard_vectors in embedded.vectors():
        rows = np.arange(shard.start, shard.end)
        outside = ~np.isin(rows, sample, assume_unique=True)
        if outside.any():
            coords[rows[outside]] = place(index, sample_coords, shard_vectors[outside])
        say(0.6 + 0.4 * shard.end / n, f"{embedded.label}: placed {shard.end:,} of {n:,}")
    return coords, sample
