"""Search a large corpus by meaning: an HNSW index (usearch) over its shards, built once and kept.

The index holds an int8 copy of each sentence's vector (a quarter of float32) under cosine similarity;
it is built shard by shard (all cores), saved beside the shards, and memory-mapped when opened again.
Its graph only proposes: the :data:`CANDIDATES` sentences it finds for a query are scored again with
the shards' own vectors, so the order and the cosines given are the model's. A query is encoded by the
same model on the same runtime and answered with its :data:`TOP` nearest sentences. :func:`exact_top` is
the brute-force answer over the shards, the reference that bench/million.py measures the index's
recall@10 against.

Example::

    >>> from sbert_demo.corpus.embed import embed_corpus
    >>> from sbert_demo.corpus.sources import LargeCorpus
    >>> corpus = LargeCorpus("pets", ["A cat sleeps.", "A kitten naps.", "Stocks fell.", "Markets slid."], None)
    >>> index = CorpusIndex.open_or_build(embed_corpus(corpus, "glove-6b-50d"))
    >>> sorted(row for row, _ in index.search(["A kitten sleeps."], 2)[0])  # the two about pets
    [0, 1]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..encoding.encoder import encode
from .embed import Embedded
from .sources import Progress

TOP = 10
# usearch's graph, over int8 copies of the vectors, proposes; the shards' vectors decide. Measured at 150,000
# MiniLM vectors on 2 cores (bench/million.py, phases neighbours and search), against the fp16 graph built 128
# wide that came before: built in 20 s instead of 35; every sentence's neighbours found in 20 s instead of 40
# with recall@10 0.983 (0.995 before); a user's query (STSb sentences against manual pages, far from their
# neighbours) recall@10 0.909 searched 512 wide, 0.951 1,024 wide, at the same 15 ms (encoding included).
CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 16, 96, 1024
DTYPE = "i8"
CANDIDATES = 32  # a user's query's proposals, scored again exactly
# Every sentence's neighbours at once (the map view's comparison of two models) feed a share, a statistic over
# ten, so they are searched narrower than a user's query.
BULK_EXPANSION, BULK_CANDIDATES = 48, 24
RESCORED = 1024  # queries rescored at a time (their candidates' vectors: 50 MB of 384-d float32)


class CorpusIndex:
    """The index of one model's embeddings of one corpus."""

    def __init__(self, embedded: Embedded, index):
        self.embedded, self.index = embedded, index

    @staticmethod
    def path(embedded: Embedded):
        digest = hashlib.sha256((DTYPE + "".join(s.key for s in embedded.shards)).encode()).hexdigest()[:24]
        return embedded.store.folder / f"index-{digest}.usearch"

    @classmethod
    def open_or_build(cls, embedded: Embedded, progress: Progress | None = None) -> CorpusIndex:
        from usearch.index import Index

        path = cls.path(embedded)
        if path.is_file():
            try:
                index = Index.restore(str(path), view=True)
                index.expansion_search = EXPANSION_SEARCH  # a query's setting, not kept in the file
                return cls(embedded, index)
            except Exception:  # cut short or from another usearch: built again
                path.unlink(missing_ok=True)
        say = progress or (lambda fraction, what: None)
        index = Index(ndim=embedded.dimension, metric="cos", dtype=DTYPE, connectivity=CONNECTIVITY,
                      expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
        for shard, vectors in embedded.vectors():
            index.add(np.arange(shard.start, shard.end), vectors, threads=0)
            say(shard.end / embedded.n, f"{embedded.label}: search index, {shard.end:,} of {embedded.n:,} sentences")
        temporary = path.with_name(f".{path.name}.tmp")
        try:
            index.save(str(temporary))
            temporary.replace(path)
        except OSError:  # kept for this process only
            temporary.unlink(missing_ok=True)
        return cls(embedded, index)

    def search(self, queries: Sequence[str], k: int = TOP) -> list[list[tuple[int, float]]]:
        """For each query, its ``k`` nearest sentences as (row, cosine), nearest first."""
        vectors = encode(self.embedded.key, list(queries), use_cache=False, fast=True).embeddings
        return self.search_vectors(vectors, k)

    def search_vectors(self, vectors: np.ndarray, k: int = TOP) -> list[list[tuple[int, float]]]:
        queries = np.asarray(vectors, dtype=np.float32)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        rows, scores = self._best(queries, self._proposed(queries, max(CANDIDATES, k)), k)
        return [[(int(r), float(c)) for r, c in zip(row, cosines) if c > -np.inf] for row, cosines in zip(rows, scores)]

    def neighbours_of_each(self, k: int, progress: Progress | None = None) -> np.ndarray:
        """Each indexed sentence's ``k`` nearest other sentences (rows, nearest first), proposed by the graph
        searched :data:`BULK_EXPANSION` wide and rescored; ``progress`` hears each shard."""
        say = progress or (lambda fraction, what: None)
        out = np.empty((self.embedded.n, k), dtype=np.int32)
        self.index.expansion_search = BULK_EXPANSION
        try:
            for shard, vectors in self.embedded.vectors():
                proposed = self._proposed(vectors, max(BULK_CANDIDATES, k + 1))
                out[shard.start:shard.end] = self._best(vectors, proposed, k, np.arange(shard.start, shard.end))[0]
                say(shard.end / self.embedded.n, f"{self.embedded.label}: neighbours of {shard.end:,} sentences")
        finally:
            self.index.expansion_search = EXPANSION_SEARCH
        return out

    def _proposed(self, queries: np.ndarray, count: int) -> np.ndarray:
        """The graph's ``count`` candidates for each query (rows; ``n`` where it found fewer)."""
        found = self.index.search(np.ascontiguousarray(queries), count, threads=0)
        keys = np.asarray(found.keys).astype(np.int64, copy=False).reshape(len(queries), -1)
        return np.where((keys >= 0) & (keys < self.embedded.n), keys, self.embedded.n)

    def _best(self, queries: np.ndarray, keys: np.ndarray, k: int, own: np.ndarray | None = None):
        """Of each query's candidate rows, the ``k`` most similar by the shards' vectors (rows and cosines,
        nearest first; a query's own row left out when ``own`` names it; -inf where fewer were found)."""
        valid = keys < self.embedded.n
        if own is not None:
            valid &= keys != own[:, None]
        keys = np.where(valid, keys, 0)
        rows = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float32)
        for start in range(0, len(queries), RESCORED):
            part = slice(start, start + RESCORED)
            cosines = np.einsum("ij,ikj->ik", queries[part], self.embedded.rows(keys[part]))
            cosines[~valid[part]] = -np.inf
            order = np.argsort(-cosines, axis=1, kind="stable")[:, :k]
            rows[part] = np.take_along_axis(keys[part], order, axis=1)
            scores[part] = np.take_along_axis(cosines, order, axis=1)
        return rows, scores


def exact_top(embedded: Embedded, vectors: np.ndarray, k: int = TOP) -> np.ndarray:
    """The exact ``k`` nearest rows of each query vector (cosine, brute force over every shard)."""
    queries = np.asarray(vectors, dtype=np.float32)
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    for shard, shard_vectors in embedded.vectors():
        scores = queries @ shard_vectors.T
        rows = np.broadcast_to(np.arange(shard.start, shard.end), scores.shape)
        best_scores = np.concatenate([best_scores, scores], axis=1)
        best_rows = np.concatenate([best_rows, rows], axis=1)
        keep = np.argsort(-best_scores, axis=1, kind="stable")[:, :k]
        best_scores = np.take_along_axis(best_scores, keep, axis=1)
        best_rows = np.take_along_axis(best_rows, keep, axis=1)
    return best_rows
