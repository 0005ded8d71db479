"""The corpus map for up to a million sentences: per model its shards (:mod:`.embed`), a layout
(:mod:`.layout`), clusters and their words (:mod:`.clusters`), all kept on disk, in the corpus map's
own result shape (:class:`~sbert_demo.explore.corpus_map.CorpusMap`), so the page, the API and the CLI
show it as they show a small one.

What is kept, per corpus (its content id) and model (its fingerprint), under
``<cache>/corpora/maps/<corpus>/<model>-k<k>/``: the coordinates, the cluster of each sentence, the
UMAP sample's rows and the clusters' words. A second map of the same corpus reads them (and the
shards) instead of computing anything; :mod:`.library` keeps the corpus's sentences, so a re-open after
a restart does not read the source file again either.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..data.corpora import Corpus
from ..explore.cluster_words import distinctive_words
from ..explore.corpus_map import MAX_MODELS, CorpusMap, ModelMap, check_k
from ..explore.projection import Clustering, cluster_agreement
from ..models.loading import ResolvedModel
from ..models.per_model import chosen_models, outcome_notes, run_per_model
from .clusters import cluster, cluster_names
from .embed import corpora_root, embed_corpus
from .layout import SAMPLE, layout
from .sources import LargeCorpus, Progress

DEFAULT_K = 20
MEANING_MATCHES = 100  # as the small map's search by meaning
MAP_FORMAT = "1"


def as_corpus(corpus: LargeCorpus) -> Corpus:
    return Corpus(corpus.name, corpus.sentences, corpus.labels, corpus.label_name, (), corpus.text_column,
                  list(corpus.notes), corpus.fields)


def _folder(corpus: LargeCorpus, fingerprint: str, k: int, sample_size: int) -> Path:
    import hashlib

    model = hashlib.sha256(f"{fingerprint}|{MAP_FORMAT}|{sample_size}".encode()).hexdigest()[:20]
    return corpora_root() / "maps" / corpus.content_id / f"{model}-k{k}"


def _read(folder: Path) -> tuple | None:
    try:
        coords = np.load(folder / "coords.npy", allow_pickle=False)
        labels = np.load(folder / "clusters.npy", allow_pickle=False)
        sample = np.load(folder / "sample.npy", allow_pickle=False)
        words = {int(k): tuple(v) for k, v in json.loads((folder / "words.json").read_text(encoding="utf-8")).items()}
    except (OSError, ValueError):
        return None
    return coords, labels, sample, words


def _write(folder: Path, coords: np.ndarray, labels: np.ndarray, sample: np.ndarray, words: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    work = folder.with_name(f".{folder.name}.{os.getpid()}")
    work.mkdir(exist_ok=True)
    np.save(work / "coords.npy", coords)
    np.save(work / "clusters.npy", labels)
    np.save(work / "sample.npy", sample)
    (work / "words.json").write_text(json.dumps({str(k): list(v) for k, v in words.items()}), encoding="utf-8")
    for item in work.iterdir():  # words.json last: a folder with it is complete
        os.replace(item, folder / item.name)
    work.rmdir()


def map_large_corpus(corpus: LargeCorpus, model_keys: Sequence[str], k: int = DEFAULT_K,
                     progress: Progress | None = None, sample_size: int = SAMPLE) -> CorpusMap:
    """Map ``corpus`` with each model (skipped models say why), kept on disk for the next time."""
    keys = chosen_models(model_keys, MAX_MODELS, "map the corpus with")
    if len(corpus) < 3:
        raise ValueError(f"A map needs at least three sentences; {corpus.name} has {len(corpus)}.")
    k = check_k(k)

    def run_one(model: ResolvedModel, step: Progress) -> ModelMap:
        started = time.perf_counter()
        embedded = embed_corpus(corpus, model.entry.key, progress=lambda f, what: step(0.7 * f, what))
        folder = _folder(corpus, embedded.fingerprint, k, sample_size)
        kept = _read(folder)
        if kept is None:
            coords, sample = layout(embedded, sample_size, progress=lambda f, what: step(0.7 + 0.2 * f, what))
            labels = cluster(embedded, k, progress=lambda f, what: step(0.9 + 0.08 * f, what))
            words = cluster_names(corpus.sentences, labels)
            _write(folder, coords, labels, sample, words)
        else:
            coords, labels, sample, words = kept
        agreement = None
        if corpus.labels is not None and len(set(corpus.labels[:10_000])) > 1:
            agreement = cluster_agreement(corpus.labels, labels)
        placed = len(corpus) - len(sample)
        note = (f"UMAP of {len(sample):,} sampled sentences; the other {placed:,} placed beside their nearest "
                "sampled ones" if placed else None)
        return ModelMap.of(model, coords=coords, method="UMAP" if not placed else "UMAP (sample) + placement",
                           note=note, clustering=Clustering(labels, "kmeans", int(labels.max()) + 1, None),
                           cluster_words=words, agreement=agreement, seconds=time.perf_counter() - started,
                           cached=embedded.computed == 0 and kept is not None, runtime=embedded.runtime)

    models = run_per_model(keys, run_one, ModelMap, progress=progress, purpose="draw a map of a corpus",
                           require_one=True)
    label_words = None
    if corpus.labels is not None:
        rows = np.random.default_rng(0).permutation(len(corpus))[:50_000]
        label_words = {str(label): found for label, found in
                       distinctive_words([corpus.sentences[i] for i in rows], [corpus.labels[i] for i in rows]).items()}
    return CorpusMap(as_corpus(corpus), k, models, label_words, outcome_notes(models))


def search_large(result: CorpusMap, query: str, mode: str = "words") -> dict[str, tuple[np.ndarray, str]]:
    """:func:`~sbert_demo.explore.corpus_map.search` for a corpus mapped here: meaning through each model's
    search index over its shards (:mod:`.search`) instead of encoding every sentence again."""
    from ..explore.corpus_map import check_query, search
    from .search import CorpusIndex
    from .sources import LargeCorpus

    if mode != "meaning":
        return search(result, query, mode)
    query = check_query(query)
    if not query:
        return {}
    corpus = LargeCorpus(result.corpus.name, result.corpus.sentences, None)
    found = {}
    for model in result.succeeded:
        index = CorpusIndex.open_or_build(embed_corpus(corpus, model.key))
        rows = index.search([query], MEANING_MATCHES)[0]
        matches = np.array([row for row, _ in rows], dtype=np.int64)
        lowest = f"; the last of them has cosine {rows[-1][1]:.2f}" if rows else ""
        found[model.key] = (matches, f"The {len(matches)} sentences {model.label} puts closest to \u201c{query}\u201d "
                                     f"(search index){lowest}.")
    return found
