"""Clusters of up to a million sentences: scikit-learn's mini-batch k-means over the shards, each
cluster named by its most distinctive words (class-based TF-IDF, as the corpus map names them).

Unit vectors, so Euclidean k-means groups by cosine. :data:`PASSES` passes of ``partial_fit`` over the
shards (one shard in memory at a time), then every sentence is assigned to its nearest centre. The
words come from up to :data:`WORDS_SAMPLE` sentences per cluster (c-TF-IDF over a million sentences
would count the same words a hundred times over for the same ranking).

Example::

    >>> import numpy as np
    >>> names = cluster_names(["a cat sleeps", "a cat naps", "stocks fell", "markets fell"], np.array([0, 0, 1, 1]))
    >>> names[0][0], names[1][0]
    ('cat', 'fell')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..explore.cluster_words import distinctive_words
from .embed import Embedded
from .sources import Progress

PASSES = 2
BATCH = 4_096
IN_MEMORY = 50_000  # up to this many sentences, k-means sees them all at once
WORDS_SAMPLE = 2_000
SEED = 42


def cluster(embedded: Embedded, k: int, seed: int = SEED, progress: Progress | None = None) -> np.ndarray:
    """One cluster number (0 .. k-1) per sentence, as int32."""
    from sklearn.cluster import MiniBatchKMeans

    say = progress or (lambda fraction, what: None)
    k = max(2, min(int(k), embedded.n - 1))
    model = MiniBatchKMeans(n_clusters=k, batch_size=BATCH, random_state=seed, n_init=3)
    if embedded.n <= IN_MEMORY:  # small enough to fit at once (a partial fit needs k rows at its first call)
        model.fit(embedded.matrix(np.float32))
    else:
        for run in range(PASSES):
            for shard, vectors in embedded.vectors():
                model.partial_fit(vectors)  # a shard holds thousands of rows: more than any k here
                say((run + shard.end / embedded.n) / (PASSES + 1), f"{embedded.label}: k-means, pass {run + 1}")
    labels = np.empty(embedded.n, dtype=np.int32)
    for shard, vectors in embedded.vectors():
        labels[shard.start: shard.end] = model.predict(vectors)
    say(1.0, f"{embedded.label}: {k} clusters")
    return labels


def cluster_names(sentences: Sequence[str], labels: np.ndarray, seed: int = SEED,
                  per_cluster: int = WORDS_SAMPLE) -> dict[int, tuple[str, ...]]:
    """Each cluster's most distinctive words, from a sample of up to ``per_cluster`` of its sentences."""
    rng = np.random.default_rng(seed)
    chosen = []
    for value in np.unique(labels):
        rows = np.flatnonzero(labels == value)
        chosen.append(rows if len(rows) <= per_cluster else rng.choice(rows, per_cluster, replace=False))
    rows = np.sort(np.concatenate(chosen))
    return {int(k): v for k, v in distinctive_words([sentences[i] for i in rows], [int(labels[i]) for i in rows]).items()}
