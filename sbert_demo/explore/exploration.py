"""One exploration of a sentence set: for each chosen model, similarities, summary, query ranking,
2-D map and automatic clusters, as plain data.

The Explore tab and its API endpoint both call :func:`explore`, so what ``gradio_client`` receives
(:meth:`Exploration.as_json`) holds the same numbers the page shows.

Example::

    >>> result = explore(["A cat sleeps.", "A kitten naps.", "Stocks fell."], None, ["glove-6b-50d"])
    >>> result.models[0].ranking[0][0]  # the sentence most similar to sentence 1
    1
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..encoding.encoder import encode, fingerprint
from ..models.kinds import EMBEDS
from ..models.loading import ResolvedModel
from ..models.per_model import ModelOutcome, Progress, chosen_models, outcome_notes, resolve_for, run_per_model
from ..models.registry import Registry, requested_keys
from ..shared import BoundedCache
from ..views import VIEWS
from .projection import CLUSTER_METHODS, Clustering, Projection, auto_clusters, cluster_agreement, project_2d
from .similarity import SimilaritySummary, cosine_matrix, rank_against, summarize

logger = logging.getLogger(__name__)

MAX_MODELS = VIEWS["explore"].max_models
MAX_SENTENCES = 500  # beyond this a heatmap is an unreadable blur and slow to draw
RESULTS_KEPT = 64  # finished per-model explorations kept in memory (each <= ~2 MB at 500 sentences)


# Finished per-model explorations, keyed by everything they depend on: the model's fingerprint and
# runtime, the exact sentences and groups, the query and the clustering method. The embeddings are in
# the persistent cache already; this keeps the work after them (similarities, clusters, the UMAP map),
# so a repeated request (a talk audience opening the same example) costs a dictionary lookup.
results: BoundedCache[tuple, ModelExploration] = BoundedCache("finished per-model explorations", RESULTS_KEPT)


@dataclass(frozen=True)
class ModelExploration(ModelOutcome):
    sim: np.ndarray | None = None
    summary: SimilaritySummary | None = None
    ranking: tuple[tuple[int, float], ...] = ()
    projection: Projection | None = None
    clustering: Clustering | None = None
    agreement: float | None = None  # adjusted Rand index of clusters vs. the given groups
    cached: bool = False

    def as_json(self, sentences: Sequence[str]) -> dict:
        row: dict = {"key": self.key, "label": self.label, "family": self.family, "error": self.error}
        if self.error:
            return row
        summary, clustering, projection = self.summary, self.clustering, self.projection
        row["summary"] = {
            "n": summary.n, "mean_pairwise": _round(summary.mean_pairwise),
            "within_group": _round(summary.within_group), "between_group": _round(summary.between_group),
            "gap": _round(summary.gap),
        }
        row["ranking"] = [{"rank": rank, "index": i, "sentence": sentences[i], "cosine": _round(score)}
                          for rank, (i, score) in enumerate(self.ranking, start=1)]
        row["clusters"] = {"method": clustering.method, "k": clustering.k,
                           "silhouette": _round(clustering.silhouette), "ari": _round(self.agreement),
                           "labels": [int(label) for label in clustering.labels]}
        row["map"] = None if projection is None else {
            "method": projection.method, "note": projection.note,
            "x": [_round(v) for v in projection.coords[:, 0]], "y": [_round(v) for v in projection.coords[:, 1]],
        }
        row.update(seconds=round(self.seconds, 3), cached=self.cached, notes=list(self.notes), runtime=self.runtime)
        return row


@dataclass(frozen=True)
class Exploration:
    sentences: list[str]
    groups: list[str] | None
    query_index: int
    cluster_method: str
    models: list[ModelExploration]
    notes: list[str]

    @property
    def succeeded(self) -> list[ModelExploration]:
        return [m for m in self.models if m.error is None]

    def as_json(self) -> dict:
        return {
            "sentences": self.sentences, "groups": self.groups, "query_index": self.query_index,
            "query": self.sentences[self.query_index], "cluster_method": self.cluster_method,
            "notes": self.notes, "models": [m.as_json(self.sentences) for m in self.models],
        }


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def check_request(sentences: Sequence[str], model_keys: Sequence[str], query_index: int,
                  cluster_method: str) -> list[str]:
    """The distinct model keys, or a ValueError saying what to change."""
    keys = chosen_models(model_keys, MAX_MODELS, "compare")
    if len(sentences) < 2:
        raise ValueError("Enter at least two sentences, one per line.")
    if len(sentences) > MAX_SENTENCES:
        raise ValueError(f"{len(sentences):,} sentences is too many for heatmaps; the limit is {MAX_SENTENCES}. "
                         "Upload them as a file instead: Explore → Corpus map draws maps of up to 20,000.")
    if not 0 <= query_index < len(sentences):
        raise ValueError(f"The query sentence {query_index + 1} does not exist; choose one from 1 "
                         f"to {len(sentences)}.")
    if cluster_method not in CLUSTER_METHODS:
        raise ValueError(f"Unknown clustering method {cluster_method!r}; choose one of "
                         f"{', '.join(CLUSTER_METHODS)}.")
    return keys


def request_key(sentences: Sequence[str], groups: Sequence[str] | None, models: Sequence[ResolvedModel],
                query_index: int, cluster_method: str, registry: Registry | None = None) -> tuple | None:
    """Everything an exploration's result depends on (models by fingerprint and runtime), for caches of
    what is drawn from it; None when a model is not downloaded yet (nothing to cache)."""
    prints = tuple(fingerprint(model, registry, fast=True) for model in models)
    if None in prints:
        return None
    return (prints, tuple(sentences), None if groups is None else tuple(groups), query_index, cluster_method)


def resolve_all(model_keys: Sequence[str], registry: Registry | None = None) -> list[ResolvedModel] | None:
    """Each model resolved once for a request, or None when one of them cannot run (the exploration
    then reports why, model by model)."""
    try:
        return [resolve_for(key, EMBEDS, "map or compare sentences", registry) for key in requested_keys(model_keys)]
    except ValueError:
        return None


def explore(sentences: Sequence[str], groups: Sequence[str] | None, model_keys: Sequence[str | ResolvedModel],
            query_index: int = 0, cluster_method: str = "kmeans", registry: Registry | None = None,
            progress: Progress | None = None) -> Exploration:
    """Explore ``sentences`` with each model (keys, or models resolved for this request); a model that
    cannot run is skipped with the reason."""
    sentences, groups = list(sentences), None if groups is None else list(groups)
    if groups is not None and len(groups) != len(sentences):
        raise ValueError(f"There are {len(groups)} group labels for {len(sentences)} sentences.")
    resolved = [m for m in model_keys if isinstance(m, ResolvedModel)]
    keys = check_request(sentences, [m.key if isinstance(m, ResolvedModel) else m for m in model_keys],
                         query_index, cluster_method)
    models = resolved if len(resolved) == len(keys) else keys
    request = (tuple(sentences), None if groups is None else tuple(groups), query_index, cluster_method)
    outcomes = run_per_model(
        models, lambda model, step: cached_per_model(
            model, results, request, registry,
            lambda started: _compute_one(model, sentences, groups, query_index, cluster_method, registry, step,
                                         started)),
        ModelExploration, progress=progress, purpose="draw heatmaps and maps of sentences", registry=registry,
        require_one=True)
    return Exploration(sentences, groups, query_index, cluster_method, outcomes, outcome_notes(outcomes))


def cached_per_model(model: ResolvedModel, cache: BoundedCache, request: tuple, registry: Registry | None,
                     compute: Callable[[float], ModelOutcome]) -> ModelOutcome:
    """One model's result for ``request`` from ``cache`` (keyed by the model's fingerprint and runtime
    too, so a retrained model is never served stale), else ``compute(started)``, kept when it succeeded."""
    started = time.perf_counter()
    identity = fingerprint(model, registry, fast=True)
    cache_key = None if identity is None else (identity, *request)
    done = cache.get(cache_key) if cache_key else None
    if done is not None:
        return dataclasses.replace(done, seconds=time.perf_counter() - started, cached=True)
    result = compute(started)
    if cache_key and result.error is None:
        cache.put(cache_key, result)
    return result


def _compute_one(model: ResolvedModel, sentences: list[str], groups: list[str] | None, query_index: int,
                 cluster_method: str, registry: Registry | None, step: Progress, started: float) -> ModelExploration:
    label = model.entry.label
    step(0.0, f"{label}: encoding")
    encoded = encode(model, sentences, registry=registry, fast=True,
                     progress=lambda done, total: step(0.6 * done / max(total, 1), f"{label}: encoding"),
                     notify=lambda what: step(0.0, what))
    sim = cosine_matrix(encoded.embeddings)
    summary = summarize(sim, groups)
    ranking = tuple(rank_against(sim, query_index))
    step(0.6, f"{label}: clustering")
    clustering = auto_clusters(encoded.embeddings, method=cluster_method)
    agreement = None
    if groups is not None and len(set(groups)) > 1:
        agreement = cluster_agreement(groups, clustering.labels)
    step(0.8, f"{label}: 2-D map")
    notes = list(encoded.notes)
    projection = None
    if len(sentences) >= 3:
        projection = project_2d(encoded.embeddings)
    else:
        notes.append("A 2-D map needs at least three sentences.")
    return ModelExploration.of(
        model, sim=sim, summary=summary, ranking=ranking, projection=projection, clustering=clustering,
        agreement=agreement, seconds=time.perf_counter() - started, cached=encoded.from_cache, notes=tuple(notes),
        runtime=encoded.runtime,
    )


def rankings(sentences: Sequence[str], model_keys: Sequence[str], query_index: int,
             registry: Registry | None = None) -> list[tuple[str, str, list[tuple[int, float]]]]:
    """``(key, label, ranking)`` per model for another query: cheap once the sentences are cached."""
    sentences = list(sentences)
    keys = check_request(sentences, model_keys, query_index, CLUSTER_METHODS[0])
    out = []
    for key in keys:
        model = resolve_for(key, EMBEDS, "rank sentences", registry)
        sim = cosine_matrix(encode(model, sentences, registry=registry, fast=True).embeddings)
        out.append((model.entry.key, model.entry.label, rank_against(sim, query_index)))
    return out


def format_sentences(sentences: Sequence[str], groups: Sequence[str] | None) -> tuple[str, list[str]]:
    """Text-box content for parsed sentences (the inverse of ``examples.parse_sentences``).

    The text box reads ``|`` as the group separator, so a ``|`` inside a sentence becomes ``/``;
    the returned notes say so.
    """
    notes = []
    piped = [i + 1 for i, s in enumerate(sentences) if "|" in s]
    if piped:
        notes.append(f"{len(piped)} sentence(s) contained '|', which the text box reads as a group "
                     f"separator; it was replaced by '/' (first: sentence {piped[0]}).")
    clean = [s.replace("|", "/") for s in sentences]
    if groups is None:
        return "\n".join(clean), notes
    return "\n".join(f"{g.replace('|', '/')} | {s}" for g, s in zip(groups, clean)), notes
