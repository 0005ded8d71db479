"""A map of a whole corpus (up to 20,000 sentences) per model: 2-D layout, k-means clusters named by
their most distinctive words, and search by words or by meaning.

Beyond the 500 sentences a heatmap can show, this is what Explore offers: no n x n matrix is ever
built (20,000 sentences would need 1.6 GB for it). Per model the work is: embeddings (the
persistent embedding cache makes a second run skip the model), exact 15-nearest neighbours and a
UMAP layout (:func:`.projection.project_2d`, kept on disk per set of vectors), k-means with the
chosen k (:func:`.projection.kmeans_clusters`) and c-TF-IDF words per cluster
(:mod:`.cluster_words`). The words of the given labels do not depend on the model and are computed
once.

Example::

    >>> from sbert_demo.data.corpora import Corpus
    >>> corpus = Corpus("pets", ["A cat sleeps.", "A kitten naps.", "Stocks fell.", "Markets slid."], None, None)
    >>> result = map_corpus(corpus, ["glove-6b-50d"], k=2)
    >>> result.models[0].coords.shape
    (4, 2)
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from ..data.corpora import Corpus
from ..data.text import check_text, clean_text
from ..encoding.encoder import encode
from ..encoding.fixes import collection_id
from ..models.kinds import EMBEDS
from ..models.loading import ResolvedModel
from ..models.per_model import ModelOutcome, Progress, chosen_models, outcome_notes, resolve_for, run_per_model
from ..models.registry import Registry
from ..shared import BoundedCache
from ..views import VIEWS
from .cluster_words import distinctive_words
from .exploration import cached_per_model
from .projection import Clustering, cluster_agreement, kmeans_clusters, project_2d

MAX_MODELS = VIEWS["corpus"].max_models
DEFAULT_K = 12
MAX_K = 40
SEMANTIC_MATCHES = 100  # "by meaning" highlights this many nearest sentences
MAX_QUERY_CHARS = 500
SEARCH_MODES = ("words", "meaning")

corpus_results: BoundedCache[tuple, "ModelMap"] = BoundedCache("finished corpus maps", 8)  # ~0.3 MB each at 20,000


@dataclass(frozen=True)
class ModelMap(ModelOutcome):
    coords: np.ndarray | None = None  # (n, 2)
    method: str = ""  # "UMAP" or "PCA"
    note: str | None = None
    clustering: Clustering | None = None
    cluster_words: dict[int, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    agreement: float | None = None  # adjusted Rand index of the clusters vs. the given labels
    cached: bool = False  # every embedding came from the persistent cache

    def clusters_by_size(self) -> list[tuple[int, int]]:
        """``(cluster, number of sentences)``, largest first (ties: lower cluster number first)."""
        clusters, counts = np.unique(self.clustering.labels, return_counts=True)
        return [(int(clusters[i]), int(counts[i])) for i in np.argsort(-counts, kind="stable")]


@dataclass(frozen=True)
class CorpusMap:
    corpus: Corpus
    k: int
    models: list[ModelMap]
    label_words: dict[str, tuple[str, ...]] | None  # the given labels' words, model-independent
    notes: list[str]  # about the models (skipped ones, truncated texts ...); the corpus has its own

    @property
    def succeeded(self) -> list[ModelMap]:
        return [m for m in self.models if m.error is None]

    def as_json(self) -> dict:
        """What the API returns: per model its map, clusters and their words (rounded coordinates)."""
        models = []
        for m in self.models:
            row: dict = {"key": m.key, "label": m.label, "family": m.family, "error": m.error}
            if m.error is None:
                row.update(
                    map={"method": m.method, "note": m.note, "x": np.round(m.coords[:, 0], 4).tolist(),
                         "y": np.round(m.coords[:, 1], 4).tolist()},
                    clusters={"k": m.clustering.k, "labels": m.clustering.labels.tolist(),
                              "silhouette": None if m.clustering.silhouette is None
                              else round(m.clustering.silhouette, 4),
                              "ari": None if m.agreement is None else round(m.agreement, 4),
                              "words": {str(c): list(w) for c, w in sorted(m.cluster_words.items())}},
                    seconds=round(m.seconds, 3), cached=m.cached, runtime=m.runtime, notes=list(m.notes))
            models.append(row)
        return {"corpus": self.corpus.name, "n": len(self.corpus), "label_name": self.corpus.label_name,
                "labels": self.corpus.labels, "label_words": None if self.label_words is None
                else {label: list(w) for label, w in self.label_words.items()},
                "k": self.k, "corpus_notes": self.corpus.notes, "notes": self.notes, "models": models}


def check_k(k: object) -> int:
    if isinstance(k, float) and k.is_integer():
        k = int(k)
    if not isinstance(k, int) or isinstance(k, bool) or not 2 <= k <= MAX_K:
        raise ValueError(f"The number of clusters must be a whole number from 2 to {MAX_K}, not {k!r}.")
    return k


def map_corpus(corpus: Corpus, model_keys: Sequence[str], k: int = DEFAULT_K, registry: Registry | None = None,
               progress: Progress | None = None) -> CorpusMap:
    """Map ``corpus`` with each model; unavailable models are skipped with the reason."""
    keys = chosen_models(model_keys, MAX_MODELS, "map the corpus with")
    if len(corpus) < 3:
        raise ValueError(f"A map needs at least three sentences; {corpus.name} has {len(corpus)}.")
    k = check_k(k)
    identity = collection_id(corpus.sentences)
    request = ("corpus", identity, None if corpus.labels is None else tuple(corpus.labels), k)
    models = run_per_model(
        keys, lambda model, step: cached_per_model(
            model, corpus_results, request, registry,
            lambda started: _compute_map(model, corpus, k, registry, step, started)),
        ModelMap, progress=progress, purpose="draw a map of a corpus", registry=registry, require_one=True)
    label_words = None if corpus.labels is None else _label_words(identity, tuple(corpus.labels), corpus.sentences)
    return CorpusMap(corpus, k, models, label_words, outcome_notes(models))


label_words_kept: BoundedCache[tuple, dict] = BoundedCache("words of a corpus's labels", 4)  # model-independent


def _label_words(identity: str, labels: tuple[str, ...], sentences: list[str]) -> dict[str, tuple[str, ...]]:
    return label_words_kept.get_or_build(
        (identity, labels),
        lambda: {str(label): found for label, found in distinctive_words(sentences, list(labels)).items()})


def _compute_map(model: ResolvedModel, corpus: Corpus, k: int, registry: Registry | None, step: Progress,
                 started: float) -> ModelMap:
    n, label = len(corpus), model.entry.label
    step(0.0, f"{label}: encoding {n:,} sentences")
    encoded = encode(model, corpus.sentences, registry=registry, fast=True,
                     progress=lambda done, total: step(0.75 * done / max(total, 1),
                                                       f"{label}: encoding ({done:,} of {total:,})"),
                     notify=lambda what: step(0.0, what))
    step(0.75, f"{label}: 2-D map of {n:,} points (UMAP)")
    # Sequential on purpose: k-means beside UMAP's one-core layout was measured slower (10.7-11.3 s
    # instead of 10.5 s for 15,457 sentences): numba's layout holds the GIL for each epoch.
    projection = project_2d(encoded.embeddings)
    step(0.93, f"{label}: {k} clusters and their words")
    clustering, words, agreement = _clusters(corpus, encoded.embeddings, k)
    return ModelMap.of(model, coords=projection.coords, method=projection.method,
                    note=projection.note, clustering=clustering, cluster_words={int(c): w for c, w in words.items()},
                    agreement=agreement, seconds=time.perf_counter() - started, cached=encoded.from_cache,
                    runtime=encoded.runtime, notes=tuple(encoded.notes))


def _clusters(corpus: Corpus, embeddings: np.ndarray, k: int) -> tuple[Clustering, dict, float | None]:
    clustering = kmeans_clusters(embeddings, k)
    words = distinctive_words(corpus.sentences, clustering.labels.tolist())
    agreement = None
    if corpus.labels is not None and len(set(corpus.labels)) > 1:
        agreement = cluster_agreement(corpus.labels, clustering.labels)
    return clustering, words, agreement


def check_query(query: object) -> str:
    """The search as typed, invisible characters removed and spaces folded ("" searches nothing)."""
    check_text(query, "The search", allow_blank=True)
    query = " ".join(clean_text(query)[0].split())
    return check_text(query, "The search", allow_blank=True, max_chars=MAX_QUERY_CHARS)


def word_matches(sentences: Sequence[str], query: str) -> np.ndarray:
    """Positions of the sentences containing every word of ``query`` at the start of one of their
    words, in any case and order: "man" finds "man", "Man's" and "manager", not "woman"."""
    terms = check_query(query).split()
    if not terms:
        return np.zeros(0, dtype=np.int64)
    patterns = [re.compile(r"(?<!\w)" + re.escape(term), re.IGNORECASE) for term in terms]
    return np.array([i for i, sentence in enumerate(sentences)
                     if all(pattern.search(sentence) for pattern in patterns)], dtype=np.int64)


def meaning_matches(model_key: str, sentences: Sequence[str], query: str, top: int = SEMANTIC_MATCHES,
                    registry: Registry | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` sentences closest to ``query`` by the model's cosine, nearest first, and their cosines.

    The corpus's vectors come from the embedding cache the map filled, so this costs one encoding.
    """
    query = check_query(query)
    if not query:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    model = resolve_for(model_key, EMBEDS, "search by meaning", registry)
    vectors = encode(model, list(sentences), registry=registry, fast=True).embeddings
    probe = encode(model, [query], registry=registry, fast=True).embeddings[0]
    scores = vectors @ probe
    order = np.argsort(-scores, kind="stable")[:top]
    return order.astype(np.int64), scores[order].astype(np.float64)


def search(result: CorpusMap, query: str, mode: str = "words",
           registry: Registry | None = None) -> dict[str, tuple[np.ndarray, str]]:
    """Per model key: the matching positions and a sentence about them."""
    if mode not in SEARCH_MODES:
        raise ValueError(f"Unknown search mode {mode!r}; choose one of {', '.join(SEARCH_MODES)}.")
    query = check_query(query)
    sentences = result.corpus.sentences
    found: dict[str, tuple[np.ndarray, str]] = {}
    if mode == "words":
        matches = word_matches(sentences, query)
        found = {m.key: (matches, f"{len(matches):,} of {len(sentences):,} sentences match "
                                  f"\u201c{query}\u201d.") for m in result.succeeded}
        return found
    for m in result.succeeded:
        matches, scores = meaning_matches(m.key, sentences, query, registry=registry)
        lowest = f"; the last of them has cosine {scores[-1]:.2f}" if len(scores) else ""
        found[m.key] = (matches, f"The {len(matches)} sentences {m.label} puts closest to "
                                 f"\u201c{query}\u201d{lowest}.")
    return found


def sample_sentences(result: CorpusMap, model: ModelMap, cluster: Hashable, count: int = 3) -> list[str]:
    """A few sentences of one cluster: those nearest the middle of its points on the map."""
    members = np.flatnonzero(model.clustering.labels == cluster)
    if not len(members):
        return []
    centre = np.median(model.coords[members], axis=0)
    nearest = members[np.argsort(((model.coords[members] - centre) ** 2).sum(axis=1), kind="stable")[:count]]
    return [result.corpus.sentences[i] for i in nearest]
