"""A corpus's embeddings under one model, shard by shard (:mod:`.shards`), with progress and an ETA.

The project's own encoder computes each shard (:func:`~sbert_demo.encoding.encoder.encode`, the
runtime this machine measured fastest: the fast path for maps, as Explore uses). The shards are this
path's cache; a corpus no larger than Explore maps (``MAX_CORPUS_SENTENCES``) also shares the
persistent embedding cache with Explore, so a map drawn there and then published or compared is not
embedded twice, and a larger one leaves it out. Shards already on disk are skipped, so a second run,
or a run after ``kill -9``, only computes what is missing. :mod:`.ray_embed` writes the same shards
from a Ray cluster.

Example::

    >>> from sbert_demo.corpus.sources import LargeCorpus
    >>> corpus = LargeCorpus("pets", ["A cat sleeps.", "A kitten naps.", "Stocks fell."], None)
    >>> embedded = embed_corpus(corpus, "glove-6b-50d")
    >>> embedded.dimension, sum(len(v) for _, v in embedded.vectors())
    (50, 3)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import settings
from ..data.corpora import MAX_CORPUS_SENTENCES
from ..encoding.embedding_cache import embedding_cache
from ..encoding.encoder import encode, fingerprint
from ..formatting import about
from ..models.kinds import EMBEDS
from ..models.per_model import resolve_for
from .shards import SHARD, Shard, ShardStore, plan
from .sources import LargeCorpus, Progress

logger = logging.getLogger(__name__)


def corpora_root() -> Path:
    return settings().cache_dir / "corpora"


@dataclass(frozen=True)
class Embedded:
    """Where one model's embeddings of a corpus are: its shards, in order."""

    key: str
    label: str
    fingerprint: str
    runtime: str
    dimension: int
    shards: tuple[Shard, ...] = field(repr=False)
    store: ShardStore = field(repr=False)
    computed: int = 0  # sentences the model embedded in this call (the rest were on disk or in the embedding cache)
    seconds: float = 0.0

    @property
    def n(self) -> int:
        return self.shards[-1].end if self.shards else 0

    def vectors(self) -> Iterator[tuple[Shard, np.ndarray]]:
        """Each shard's vectors (float32, unit length), in corpus order, one shard in memory at a time."""
        for shard in self.shards:
            vectors = self.store.read(shard.key, len(shard))
            if vectors is None:
                raise self._missing(shard)
            yield shard, vectors

    def rows(self, picks: np.ndarray) -> np.ndarray:
        """The vectors of the corpus rows ``picks`` (any shape; float32, ``picks.shape + (dimension,)``), each
        shard read only where a row is picked."""
        flat = np.asarray(picks, dtype=np.int64).ravel()
        out = np.empty((len(flat), self.dimension), dtype=np.float32)
        which = np.searchsorted([shard.end for shard in self.shards], flat, side="right")
        order = np.argsort(which, kind="stable")  # the picks grouped by shard, in one sort
        present, starts = np.unique(which[order], return_index=True)
        for s, here in zip(present, np.split(order, starts[1:])):
            shard = self.shards[s]
            vectors = self.store.picked(shard.key, flat[here] - shard.start, len(shard))
            if vectors is None:
                raise self._missing(shard)
            out[here] = vectors
        return out.reshape(*np.shape(picks), self.dimension)

    def _missing(self, shard: Shard) -> ValueError:
        return ValueError(f"The embeddings of sentences {shard.start + 1:,}-{shard.end:,} ({self.label}) are "
                          "missing or damaged on disk; map the corpus again to compute them.")

    def matrix(self, dtype=np.float16) -> np.ndarray:
        """Every vector in one array of ``dtype`` (fp16: 0.8 GB for a million 384-d vectors)."""
        out = np.empty((self.n, self.dimension), dtype=dtype)
        for shard, vectors in self.vectors():
            out[shard.start: shard.end] = vectors
        return out


def store_for(model, fast: bool = True, dtype: str = "fp16") -> tuple[ShardStore, str]:
    """The shard store of ``model`` on the runtime it will run here (and that fingerprint)."""
    resolved = resolve_for(model, EMBEDS, "embed a corpus")
    key = fingerprint(resolved, fast=fast)
    if key is None:  # a Hub model not downloaded yet: loading it downloads it and gives its identity
        encode(resolved, ["Getting ready."], use_cache=False, fast=fast)
        key = fingerprint(resolved, fast=fast)
    return ShardStore(corpora_root(), key, dtype), key


def embed_corpus(corpus: LargeCorpus, model: str, *, fast: bool = True, dtype: str = "fp16",
                 progress: Progress | None = None, batch_size: int = 32, shard_size: int = SHARD) -> Embedded:
    """Every shard of ``corpus`` under ``model`` on disk (computing the missing ones); a ValueError that says
    what to do when a shard cannot be written (a full disk: the shards done are kept)."""
    resolved = resolve_for(model, EMBEDS, "embed a corpus")
    label = resolved.entry.label
    store, key = store_for(resolved, fast, dtype)
    shards = plan(corpus.sentences, shard_size)
    todo = store.missing(shards)
    say = progress or (lambda fraction, what: None)
    total, done_before = len(corpus), len(corpus) - sum(len(s) for s in todo)
    shared = total <= MAX_CORPUS_SENTENCES  # Explore's size: its embedding cache is read and kept (the docstring)
    if not todo:
        say(1.0, f"{label}: all {total:,} sentences were embedded before (read from disk)")
    elif not (shared and _all_cached(key, corpus.sentences, todo)):
        # the model loaded (on a GPU: CUDA started, seconds) before the clock of the rate and the ETA starts
        say(done_before / total, f"{label}: loading the model")
        encode(resolved, ["Getting ready."], use_cache=False, fast=fast)
    started, written, computed, runtime, dimension = time.perf_counter(), 0, 0, "", None

    def embedded(within: int) -> None:  # the count and the rate as the encoder goes, inside a shard too (a shard
        # takes seconds on a quiet machine and minutes on a loaded one)
        now, fresh, elapsed = done_before + written + within, computed + within, time.perf_counter() - started
        rate = f" · {fresh / elapsed:,.0f}/s · {about((total - now) * elapsed / fresh)} left" if fresh and elapsed else ""
        say(now / total, f"{label}: {now:,}/{total:,} embedded{rate}")

    for shard in todo:
        encoded = encode(resolved, corpus.sentences[shard.start: shard.end], use_cache=shared, fast=fast,
                         batch_size=batch_size, progress=lambda done, count: embedded(done))
        runtime, dimension = encoded.runtime, encoded.embeddings.shape[1]
        try:
            store.write(shard.key, encoded.embeddings)
        except OSError as exc:
            raise ValueError(f"The embeddings could not be written ({exc.strerror or exc}): {done_before + written:,} "
                             f"of {total:,} sentences are embedded and kept; free some disk space and map the corpus "
                             "again to continue from there.") from None
        written += len(shard)
        computed += encoded.computed
        embedded(0)
    if dimension is None:  # everything was on disk: the dimension from the first shard
        first = store.read(shards[0].key, len(shards[0]))
        dimension = first.shape[1]
        runtime = "read from disk"
    return Embedded(resolved.entry.key, label, key, runtime, int(dimension), tuple(shards), store, computed,
                    time.perf_counter() - started)


def _all_cached(key: str, sentences: list[str], shards: list[Shard]) -> bool:
    """Whether the embedding cache holds every sentence of ``shards`` under ``key`` (nothing to load a model for)."""
    texts = list(dict.fromkeys(t for shard in shards for t in sentences[shard.start: shard.end]))
    return embedding_cache().count_cached(key, texts) == len(texts)
