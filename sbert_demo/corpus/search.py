"""Search a large corpus by meaning: an HNSW index (usearch) over its shards, built once and kept.

The index holds each sentence's vector in half precision (fp16: a million 384-d vectors in ~0.8 GB
with their graph) under cosine similarity; it is built shard by shard (all cores), saved beside the
shards, and memory-mapped when opened again. A query is encoded by the same model on the same runtime
and answered with its :data:`TOP` nearest sentences. :func:`exact_top` is the brute-force answer over
the shards, the reference that bench/million.py measures the index's recall@10 against.

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
# usearch's graph. A query's breadth (EXPANSION_SEARCH) against recall@10 at a million MiniLM vectors
# (bench/million.py): 96 -> 0.901, 256 -> 0.957, 512 -> 0.983 (5.5 ms a query), 1024 -> 0.993.
CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 16, 128, 512
# Every sentence's neighbours at once (the map view's comparison of two models) feed a share, a statistic over
# ten, so they are searched narrower than a user's query (recall@10 ~0.93 at a million, 4x quicker).
BULK_EXPANSION = 128


class CorpusIndex:
    """The index of one model's embeddings of one corpus."""

    def __init__(self, embedded: Embedded, index):
        self.embedded, self.index = embedded, index

    @staticmethod
    def path(embedded: Embedded):
        digest = hashlib.sha256("".join(s.key for s in embedded.shards).encode()).hexdigest()[:24]
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
        index = Index(ndim=embedded.dimension, metric="cos", dtype="f16", connectivity=CONNECTIVITY,
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
        found = self.index.search(np.ascontiguousarray(vectors, dtype=np.float32), k, threads=0)
        keys = np.asarray(found.keys).reshape(len(vectors), -1)
        distances = np.asarray(found.distances, dtype=np.float32).reshape(len(vectors), -1)
        return [[(int(r), float(1 - d)) for r, d in zip(row, dist) if r < self.embedded.n]
                for row, dist in zip(keys, distances)]

    def neighbours_of_each(self, k: int, progress: Progress | None = None) -> np.ndarray:
        """Each indexed sentence's ``k`` nearest other sentences (rows, nearest first), searched
        :data:`BULK_EXPANSION` wide; ``progress`` hears each shard."""
        say = progress or (lambda fraction, what: None)
        out = np.empty((self.embedded.n, k), dtype=np.int32)
        self.index.expansion_search = BULK_EXPANSION
        try:
            for shard, vectors in self.embedded.vectors():
                found = self.index.search(vectors, k + 1, threads=0)
                keys = np.asarray(found.keys, dtype=np.int64).reshape(len(vectors), -1)
                own = keys == np.arange(shard.start, shard.end)[:, None]
                # itself dropped (or the last one when the index missed it), order kept
                keep = np.where(own.any(axis=1, keepdims=True), ~own, np.arange(k + 1) < k)
                out[shard.start:shard.end] = keys[keep].reshape(len(vectors), k)
                say(shard.end / self.embedded.n, f"{self.embedded.label}: neighbours of {shard.end:,} sentences")
        finally:
            self.index.expansion_search = EXPANSION_SEARCH
        return out


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
