"""What a board shows under one model: its map, named clusters, the latest sentences' similarities,
the closest pair so far, and where one sentence landed.

The presenter's view asks every two seconds; a board's picture is computed once per model and set
of sentences (:class:`~sbert_demo.shared.BoundedCache`), and the vectors come from the embedding
cache, so a new sentence costs one sentence's encoding and one map. Switching the model re-projects
the whole board: the same words under averaged GloVe and under SBERT.

Example::

    >>> import numpy as np
    >>> closest_pair(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]))
    (0, 1, 0.994)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..encoding.encoder import encode
from ..explore.cluster_words import distinctive_words
from ..explore.projection import auto_clusters, project_2d
from ..explore.similarity import cosine_matrix, normalize_rows
from ..shared import BoundedCache
from .store import Sentence

LATEST = 12  # the heatmap's sentences: the newest, few enough to read from the back of the room
NEAREST = 3
MIN_MAP = 3  # a map needs three sentences


@dataclass(frozen=True)
class BoardPicture:
    model: str
    ids: tuple[int, ...]
    sentences: tuple[str, ...]
    embeddings: np.ndarray  # (n, d), rows as the model gives them
    coords: np.ndarray | None  # (n, 2) or None below MIN_MAP sentences
    method: str | None  # "UMAP" or "PCA"
    clusters: tuple[int, ...]  # one label per sentence
    cluster_names: dict[int, str]
    runtime: str
    closest: tuple[int, int, float] | None = None  # the closest pair (indices, cosine), once per picture


@dataclass(frozen=True)
class Landing:
    """Where one sentence landed: its nearest sentences on the board and its cluster."""
    sentence: str
    nearest: list[tuple[str, float]]
    cluster: str | None


def closest_pair(embeddings: np.ndarray) -> tuple[int, int, float] | None:
    """The two most similar rows by cosine (indices, cosine rounded to 3 places), or None below two."""
    if len(embeddings) < 2:
        return None
    sim = cosine_matrix(embeddings)
    np.fill_diagonal(sim, -np.inf)
    i, j = np.unravel_index(int(np.argmax(sim)), sim.shape)
    i, j = sorted((int(i), int(j)))
    return i, j, round(float(sim[i, j]), 3)


def _name(words: Sequence[str], number: int) -> str:
    return " · ".join(words[:3]) if words else f"group {number + 1}"


_pictures: BoundedCache[tuple, BoardPicture] = BoundedCache("audience.pictures", 16)


# The newest picture per board and model, for the cluster a new sentence landed in.
_latest: BoundedCache[tuple[str, str], BoardPicture] = BoundedCache("audience.latest", 64)


def picture(model: str, sentences: Sequence[Sentence], board: str = "") -> BoardPicture:
    """Board ``board``'s picture under ``model``; computed once per model and set of sentences."""
    key = (model, tuple(s.id for s in sentences))
    shown = _pictures.get_or_build(key, lambda: _compute(model, sentences))
    _latest.put((board, model), shown)
    return shown


def _compute(model: str, sentences: Sequence[Sentence]) -> BoardPicture:
    texts = [s.text for s in sentences]
    ids = tuple(s.id for s in sentences)
    if not texts:
        return BoardPicture(model, ids, (), np.zeros((0, 0)), None, None, (), {}, "", None)
    encoded = encode(model, texts, fast=True)
    embeddings = np.asarray(encoded.embeddings)
    coords = method = None
    labels = np.zeros(len(texts), dtype=np.int64)
    if len(texts) >= MIN_MAP:
        projection = project_2d(embeddings)
        coords, method = projection.coords, projection.method
        labels = auto_clusters(embeddings, "kmeans", max_k=min(8, max(2, len(texts) // 3))).labels
    words = distinctive_words(texts, [int(x) for x in labels]) if len(texts) >= MIN_MAP else {}
    names = {int(label): _name(words.get(int(label), ()), int(label)) for label in set(labels.tolist())}
    return BoardPicture(model, ids, tuple(texts), embeddings, coords, method, tuple(int(x) for x in labels), names,
                        encoded.runtime, closest_pair(embeddings))


def landing(model: str, sentences: Sequence[Sentence], sentence_id: int, board: str = "") -> Landing:
    """Where sentence ``sentence_id`` landed under ``model``: its :data:`NEAREST` nearest sentences on the
    board, and its cluster in the board's latest picture (the cluster of its nearest sentence there, if
    the picture is older than the sentence).

    Cheap on purpose: a phone's answer must not wait for a new map of the whole board (the
    presenter's two-second refresh draws that); the board's vectors come from the embedding cache.
    """
    ids = [s.id for s in sentences]
    if sentence_id not in ids:
        raise ValueError("That sentence is no longer on the board.")
    index = ids.index(sentence_id)
    text = sentences[index].text
    if len(ids) < 2:
        return Landing(text, [], None)
    embeddings = np.asarray(encode(model, [s.text for s in sentences], fast=True).embeddings)
    unit = normalize_rows(embeddings)
    sim = unit @ unit[index]  # one row of the cosine matrix: the new sentence against the board
    order = [int(i) for i in np.argsort(-sim, kind="stable") if int(i) != index]
    nearest = [(sentences[i].text, round(float(sim[i]), 3)) for i in order[:NEAREST]]
    last = _latest.get((board, model))
    cluster = None
    if last is not None and last.coords is not None:
        position = {sentence: k for k, sentence in enumerate(last.ids)}
        anchor = sentence_id if sentence_id in position else next((ids[i] for i in order if ids[i] in position), None)
        if anchor is not None:
            cluster = last.cluster_names.get(last.clusters[position[anchor]])
    return Landing(text, nearest, cluster)
