"""Two models on one corpus: how many of each sentence's ten nearest neighbours they share.

A sentence's neighbours under a model are the corpus sentences its embedding is most similar to (cosine),
itself left out: exact (blocks of matrix products) up to :data:`EXACT_UP_TO` sentences, beyond that from
the corpus's HNSW index (:class:`~sbert_demo.corpus.search.CorpusIndex`, recall@10 measured by
``bench/million.py``). The embeddings are the corpus path's shards (:func:`~sbert_demo.corpus.embed.embed_corpus`),
computed once; each model's neighbours are kept beside the map, and a pair's shared counts
(``shared-<a>-<b>.u8``) and the sentences they disagree on most (``disagree-<a>-<b>.json``) in the folder its
page reads.

Naive GloVe puts sentences that share words next to each other, SBERT sentences that mean the same: the
sentences whose neighbourhoods differ most show the paper's point without a word of explanation.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from ..corpus.embed import Embedded, embed_corpus
from ..corpus.sources import LargeCorpus, Progress
from ..formatting import about
from ..shared import BoundedCache, KeyLocks
from .store import Atlas

K = 10
EXACT_UP_TO = 60_000
BLOCK = 1024


def _exact(unit: np.ndarray, k: int, progress: Progress, label: str) -> np.ndarray:
    out = np.empty((len(unit), k), dtype=np.int32)
    for start in range(0, len(unit), BLOCK):
        if start:
            progress(start / len(unit), f"{label}: nearest neighbours of {start:,} of {len(unit):,} sentences")
        scores = unit[start:start + BLOCK] @ unit.T
        rows = np.arange(start, min(start + BLOCK, len(unit)))
        scores[rows - start, rows] = -np.inf  # not its own neighbour
        top = np.argpartition(-scores, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
        out[start:start + BLOCK] = np.take_along_axis(top, order, axis=1)
    return out


def _indexed(embedded, k: int, progress: Progress) -> np.ndarray:
    from ..corpus.search import CorpusIndex

    index = CorpusIndex.open_or_build(embedded, progress=lambda f, what: progress(0.55 * f, what))  # measured shares
    return index.neighbours_of_each(k, progress=lambda f, what: progress(0.55 + 0.45 * f, what))


# One computation of each kept file at a time: requests that ask for it together wait for the first, then
# read what it wrote (each file is written under its own temporary name and renamed into place whole).
computing = KeyLocks()
clock = time.perf_counter  # the clock of the estimates (a test runs it faster)


@dataclass
class Work:
    """One computation of a kept file as it goes: what it does now, its share done, seconds left (estimated
    from the rate so far, once a twentieth is done)."""
    started: float
    fraction: float = 0.0
    what: str = "starting"

    @property
    def left_s(self) -> float | None:
        elapsed = clock() - self.started
        return elapsed * (1 - self.fraction) / self.fraction if self.fraction >= 0.05 and elapsed > 1 else None

    def as_json(self) -> dict:
        left = self.left_s
        return {"fraction": round(self.fraction, 4), "what": self.what,
                "left": None if left is None else about(left)}


working: BoundedCache[str, Work] = BoundedCache("map view: computations under way", 256, ttl_s=6 * 3600)


def _tracked(key: str, progress: Progress | None) -> Progress:
    """``progress`` with each step's share and ETA appended, the computation kept in :data:`working` under
    ``key`` for anyone who asks how far it is (the map view polls it)."""
    work = Work(clock())
    working.put(key, work)

    def say(fraction: float, what: str) -> None:
        work.fraction, work.what = max(work.fraction, min(1.0, fraction)), what
        left = work.left_s
        if progress:
            progress(work.fraction, f"{what} · {work.fraction:.0%}" + (f" · {about(left)} left" if left else ""))

    return say


def progress_of(atlas: Atlas, a: int, b: int) -> dict | None:
    """How far the shared neighbours of ``a`` and ``b`` are (None when nothing computes them now)."""
    a, b = sorted((atlas.model_index(a), atlas.model_index(b)))
    work = working.get(str(_shared_path(atlas, a, b)))
    return None if work is None else work.as_json()


def _kept(path, dtype: str, size: int) -> np.ndarray | None:
    if path.is_file():
        kept = np.fromfile(path, dtype=dtype)
        if kept.size == size:
            return kept
    return None


def _keep(path, array: np.ndarray) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    array.tofile(temporary)
    os.replace(temporary, path)


def neighbours(atlas: Atlas, m: int, k: int = K, progress: Progress | None = None,
               embedded: Embedded | None = None) -> np.ndarray:
    """Each sentence's ``k`` nearest sentences under model ``m`` (rows, nearest first), kept on disk
    (``embedded``: the model's embeddings of the corpus when the caller has them)."""
    m = atlas.model_index(m)
    path = _neighbours_path(atlas, m, k)
    with computing.hold(path):
        kept = _kept(path, "<i4", atlas.n * k)
        if kept is not None:
            return kept.reshape(atlas.n, k)
        found = _neighbours(atlas, m, k, progress, embedded)
        _keep(path, found.astype("<i4"))
        return found


def _neighbours_path(atlas: Atlas, m: int, k: int):
    return atlas.folder / f"neighbours-{m}-k{k}.i32"


def _embedded(atlas: Atlas, m: int, progress: Progress | None) -> Embedded:
    corpus = LargeCorpus(atlas.meta["name"], atlas.texts(), None)
    return embed_corpus(corpus, atlas.models[m]["key"], progress=progress)


def _neighbours(atlas: Atlas, m: int, k: int, progress: Progress | None, embedded: Embedded | None) -> np.ndarray:
    if atlas.n <= k:
        raise ValueError(f"Comparing neighbourhoods needs more than {k} sentences; this corpus has {atlas.n}.")
    say = progress or (lambda fraction, what: None)
    if embedded is None:
        embedded = _embedded(atlas, m, lambda f, what: say(0.0, what))
    label = atlas.models[m]["label"]
    if atlas.n <= EXACT_UP_TO:
        found = _exact(embedded.matrix(np.float32), k, say, label)
    else:
        found = _indexed(embedded, k, say)
    say(1.0, f"{label}: nearest neighbours of all {atlas.n:,} sentences")
    return found


def shared(atlas: Atlas, a: int, b: int, progress: Progress | None = None) -> np.ndarray:
    """Per sentence, how many of its :data:`K` nearest neighbours models ``a`` and ``b`` share (0 to K)."""
    a, b = atlas.model_index(a), atlas.model_index(b)
    if a == b:
        raise ValueError("Choose two different models to compare.")
    a, b = sorted((a, b))
    path = _shared_path(atlas, a, b)
    with computing.hold(path):
        kept = _kept(path, "u1", atlas.n)
        if kept is not None:
            return kept
        say = _tracked(str(path), progress)
        try:
            counts = _shared(atlas, a, b, say)
            found = _disagreements(atlas, a, b, counts)
            disagree = _disagree_path(atlas, a, b)
            temporary = disagree.with_name(f".{disagree.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            temporary.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
            os.replace(temporary, disagree)
            _keep(path, counts)  # last: the page takes a pair as compared once this file is there
        finally:
            working.pop(str(path))
        return counts


EMBEDDING_SHARE = 0.6  # of the work, when the embeddings are computed here (a map made elsewhere keeps them)


def _shared(atlas: Atlas, a: int, b: int, progress: Progress | None) -> np.ndarray:
    say = progress or (lambda fraction, what: None)
    computed = [False]

    def embedding(i: int) -> Progress:
        def hear(fraction: float, what: str) -> None:
            if fraction < 1:  # embed_corpus's first word is 1.0 when every shard was on disk
                computed[0] = True
            say(EMBEDDING_SHARE * (i + fraction) / 2 if computed[0] else 0.0, what)
        return hear

    kept = {m: _neighbours_path(atlas, m, K).is_file() for m in (a, b)}
    embedded = {m: None if kept[m] else _embedded(atlas, m, embedding(i)) for i, m in enumerate((a, b))}
    # each model's share of the rest by its neighbours' cost (the dimension past a fixed part: MiniLM's 384 took 2.4x
    # GloVe's 50 at 150,000 sentences), nothing where they are kept
    cost = {m: 0 if kept[m] else embedded[m].dimension + 192 for m in (a, b)}
    base, total = (EMBEDDING_SHARE if computed[0] else 0.0), max(1, sum(cost.values()))
    found, low = {}, base
    for m in (a, b):
        high = low + (1 - base) * cost[m] / total
        found[m] = neighbours(atlas, m, progress=lambda f, what, low=low, high=high: say(low + (high - low) * f, what),
                              embedded=embedded[m])
        low = high
    counts = np.zeros(atlas.n, dtype=np.uint8)
    for row in range(0, atlas.n, 65_536):  # a row's shared count: sorted rows compared column by column
        left = np.sort(found[a][row:row + 65_536], axis=1)
        right = np.sort(found[b][row:row + 65_536], axis=1)
        counts[row:row + 65_536] = (left[:, :, None] == right[:, None, :]).any(axis=2).sum(axis=1)
    return counts


def pairs(atlas: Atlas) -> list[tuple[int, int]]:
    """Every pair of the map's models (a < b): the comparisons a published folder holds."""
    count = len(atlas.models)
    return [(a, b) for a in range(count) for b in range(a + 1, count)]


def _shared_path(atlas: Atlas, a: int, b: int):
    return atlas.data / f"shared-{a}-{b}.u8"


def _disagree_path(atlas: Atlas, a: int, b: int):
    return atlas.data / f"disagree-{a}-{b}.json"


def compared(atlas: Atlas) -> bool:
    """Whether every pair's shared neighbours are kept (nothing left to compute for the map view or a publish)."""
    return all(_kept(_shared_path(atlas, a, b), "u1", atlas.n) is not None for a, b in pairs(atlas))


def compare_all(atlas: Atlas, progress: Progress | None = None) -> dict[tuple[int, int], np.ndarray]:
    """Every pair's shared neighbours (:func:`shared`), each model's neighbours found once and kept beside the
    map: what ``map --compare`` does when the map is made, so that the map view colours by shared neighbours at
    once and a publish writes the comparisons without computing them."""
    say = progress or (lambda fraction, what: None)
    done: set[int] = {m for m in range(len(atlas.models)) if _neighbours_path(atlas, m, K).is_file()}
    # a pair's share: the models whose neighbours it finds (the costly part), plus a little for its counts
    weights = []
    for a, b in pairs(atlas):
        weights.append(1 + 10 * len({a, b} - done))
        done |= {a, b}
    total, low, found = sum(weights), 0.0, {}
    for (a, b), weight in zip(pairs(atlas), weights):
        high = low + weight / total
        found[(a, b)] = shared(atlas, a, b,
                               progress=lambda f, what, low=low, high=high: say(low + (high - low) * f, what))
        low = high
    if found:
        say(1.0, f"{len(found)} comparison(s) of {atlas.n:,} sentences kept")
    return found


def disagreements(atlas: Atlas, a: int, b: int) -> dict:
    """The sentences whose neighbourhoods differ most under ``a`` and ``b`` (:data:`DISAGREE_TOP`), each with its
    nearest :data:`DISAGREE_SHOWN` neighbours under both, and the mean share over the corpus (kept with
    :func:`shared`)."""
    a, b = sorted((atlas.model_index(a), atlas.model_index(b)))
    shared(atlas, a, b)
    return json.loads(_disagree_path(atlas, a, b).read_text(encoding="utf-8"))


DISAGREE_TOP = 20
DISAGREE_SHOWN = 5


def _disagreements(atlas: Atlas, a: int, b: int, counts: np.ndarray) -> dict:
    first, second = neighbours(atlas, a), neighbours(atlas, b)
    rng = np.random.default_rng(0)
    order = np.lexsort((rng.random(atlas.n), counts))[:DISAGREE_TOP]  # fewest shared first, ties mixed
    texts = atlas.texts()
    rows = []
    for row in order:
        near_a, near_b = first[row, :DISAGREE_SHOWN], second[row, :DISAGREE_SHOWN]
        rows.append({"row": int(row), "text": texts[row], "shared": int(counts[row]),
                     "a": [{"row": int(r), "text": texts[r]} for r in near_a],
                     "b": [{"row": int(r), "text": texts[r]} for r in near_b]})
    return {"a": atlas.models[a]["label"], "b": atlas.models[b]["label"], "k": K,
            "mean_shared": round(float(counts.mean()) / K, 4),
            "histogram": np.bincount(counts, minlength=K + 1).tolist(), "rows": rows}
