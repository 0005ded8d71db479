"""One call for every model: a list of strings in, an L2-normalised float32 matrix out.

What :func:`encode` adds to ``SentenceTransformer.encode``:

* the persistent embedding cache (only texts not seen before are computed; a fully cached call
  never loads the model), keyed by the model's fingerprint and the runtime that computes it,
* duplicates encoded once,
* the fastest accurate runtime for the machine (:mod:`sbert_demo.encoding.devices`): bf16 weights
  on CPUs with native bf16, ONNX Runtime elsewhere (fp32, lossless; int8 weights when the caller
  passes ``fast=True``, as Explore does); :attr:`Encoded.runtime` says which one computed the vectors,
* texts sorted by length over the whole call, then encoded in chunks so progress can be reported
  (ONNX Runtime: batches stream through every core with no pause between chunks); a batch is
  padded only to its longest text (dynamic padding),
* training-free variants (``K+whiten`` ...): ``K``'s vectors through a map fitted once per model
  (:mod:`.fixes`),
* guard rails: non-strings, empty texts and too many texts are refused with a sentence; texts over
  the model's token limit are truncated (as the model would) and reported.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..models import loading
from ..data.text import check_text
from ..gpu import gpu_function, wants_gpu_call
from ..models.entries import ModelEntry
from ..models.loading import ResolvedModel
from ..models.kinds import kind_of
from ..models.registry import Registry, get_registry
from ..shared import BoundedCache
from . import devices, fixes, model_cache
from .embedding_cache import embedding_cache

logger = logging.getLogger(__name__)

MAX_TEXTS = 50_000
CHUNK = 256  # texts per progress step
REPORT_S = 1.0  # and at least this often, where a model is slow
# On a GPU, batches of 32 short sentences leave it waiting between kernel launches: sentences per forward pass
# there, and per progress step (bench/gpu.py prints the rates).
ACCELERATOR_BATCH, ACCELERATOR_CHUNK = 256, 4096
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Encoded:
    embeddings: np.ndarray  # (n, dim) float32, rows L2-normalised (all-zero for texts with no known words)
    key: str
    cached: int  # texts (after de-duplication) that came from the persistent cache
    computed: int  # texts (after de-duplication) that were encoded now
    seconds: float
    runtime: str = ""  # what computed the vectors, e.g. "ONNX Runtime fp32, CPU (2 threads)"
    truncated: tuple[int, ...] = ()  # positions in the input that exceeded the model's limit
    empty_vectors: tuple[int, ...] = ()  # positions whose embedding is all zero (before any fix)
    fixed: bool = False  # a training-free fix mapped the vectors (an all-zero one included)

    @property
    def from_cache(self) -> bool:
        return self.computed == 0

    @property
    def notes(self) -> list[str]:
        notes = []
        if self.truncated:
            shown = ", ".join(str(i + 1) for i in self.truncated[:10])
            more = " …" if len(self.truncated) > 10 else ""
            notes.append(f"{len(self.truncated)} text(s) exceeded the model's length limit and were truncated (#{shown}{more}).")
        if self.empty_vectors:
            then = ("the fix maps their all-zero vector to one shared direction" if self.fixed
                    else "their similarity is 0")
            notes.append(f"{len(self.empty_vectors)} text(s) contain no word this model knows; {then}.")
        return notes


def validate_texts(texts: Sequence[str], max_texts: int = MAX_TEXTS) -> list[str]:
    """The texts as a list, or a ValueError naming the first problem."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise ValueError("Give a list of texts, not a single string or another object.")
    if not texts:
        raise ValueError("There is nothing to encode: the list of texts is empty.")
    if len(texts) > max_texts:
        raise ValueError(f"{len(texts):,} texts is too many at once; the limit is {max_texts:,}.")
    for position, text in enumerate(texts, start=1):
        check_text(text, f"Text #{position}", blank_hint="remove it or write a sentence")
    return list(texts)


def cache_key(identity: str, runtime: devices.DeviceChoice) -> str:
    """Embeddings depend on the model files and on the runtime (back-end, precision, device) that computed them."""
    return f"{identity}|{runtime.cache_tag}"


def fingerprint(model: str | ModelEntry | ResolvedModel, registry: Registry | None = None,
                fast: bool = False) -> str | None:
    """What a model's embeddings depend on (its files' identity and the runtime), or None before a
    Hub model is downloaded: the key for results derived from its embeddings."""
    registry = registry or get_registry()
    resolved = loading.resolve(model, registry)
    entry, _, identity = resolved
    if identity is None:
        return None
    if entry.fix is not None:
        base = fingerprint(resolved.base(registry), registry, fast)
        return base and f"{base}|{entry.fix}|{fixes.collection_id(fixes.fit_collection()[1])}"
    return cache_key(identity, model_cache.runtime_for(entry, identity, None, fast))


def _token_lengths(model, texts: list[str]) -> list[int] | None:
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None or not callable(tokenizer) or getattr(model, "max_seq_length", None) is None:
        return None  # e.g. GloVe: no token limit that matters
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]]


def _compute(loaded: model_cache.LoadedModel, texts: list[str], batch_size: int,
             progress: Progress | None, done: int, total: int,
             store: Callable[[list[str], np.ndarray, set[int]], None] | None = None) -> tuple[np.ndarray, set[int]]:
    """Encode ``texts`` (already de-duplicated) in length order; return vectors and truncated positions.

    ``store`` receives each finished chunk, so an interrupted long run keeps what it computed.
    """
    if loaded.device.backend in ("onnx", "openvino"):  # a graph encoder: ONNX Runtime or OpenVINO
        return _compute_graph(loaded, texts, batch_size, progress, done, total, store)
    import torch

    model = loaded.model
    limit = model.max_seq_length if kind_of(loaded.entry).token_limited else None
    # Cutting absurdly long texts first bounds tokenizer work; the model would see only the first
    # ``limit`` tokens anyway, and no word piece is longer than 100 characters.
    clipped = [t[: limit * 100] if limit else t for t in texts]
    lengths = _token_lengths(model, clipped) if limit else None
    truncated = {i for i, n in enumerate(lengths or []) if n > limit}
    order = np.argsort([-len(t) for t in clipped], kind="stable")
    out = np.zeros((len(texts), model.get_embedding_dimension()), dtype=np.float32)
    kind_batch = kind_of(loaded.entry).batch_size  # e.g. a static model's large look-up batches
    if kind_batch:
        batch_size, chunk = kind_batch, max(CHUNK, kind_batch)
    elif loaded.device.device != "cpu":
        batch_size, chunk = max(batch_size, ACCELERATOR_BATCH), ACCELERATOR_CHUNK
    else:
        chunk = CHUNK
    for start in range(0, len(order), chunk):
        index = order[start : start + chunk]
        with torch.inference_mode():  # weights are already in the chosen precision (model_cache.load)
            vectors = model.encode([clipped[i] for i in index], batch_size=batch_size, convert_to_tensor=True,
                                   show_progress_bar=False)
        out[index] = torch.nn.functional.normalize(vectors.float(), dim=-1).cpu().numpy()
        if store:
            cut = {j for j, i in enumerate(index) if i in truncated}
            store([texts[i] for i in index], out[index], cut)
        if progress:
            progress(done + start + len(index), total)
    return out, truncated


def _compute_graph(loaded: model_cache.LoadedModel, texts: list[str], batch_size: int,
                  progress: Progress | None, done: int, total: int,
                  store: Callable[[list[str], np.ndarray, set[int]], None] | None) -> tuple[np.ndarray, set[int]]:
    """:func:`_compute` for a :class:`~.onnx_encoder.GraphEncoder` (ONNX Runtime, OpenVINO): its batches stream in, longest texts
    first, and are stored and reported every :data:`CHUNK` texts, or every :data:`REPORT_S` seconds where that
    comes first (a large model's 256 long texts take 6 s on 2 cores: a progress report is also where a run
    whose page closed stops), while the next ones run."""
    encoder = loaded.model
    clipped = [t[: encoder.max_seq_length * 100] for t in texts]  # as in _compute: bounds tokenizer work
    out = np.zeros((len(texts), encoder.get_embedding_dimension()), dtype=np.float32)
    truncated, batches = encoder.stream(clipped, batch_size)
    finished: list[np.ndarray] = []  # batches since the last report
    count = reported = 0
    last = time.monotonic()
    for positions, vectors in batches:
        out[positions] = vectors
        finished.append(positions)
        count += len(positions)
        if count - reported >= CHUNK or count == len(texts) or time.monotonic() - last >= REPORT_S:
            index, finished, reported, last = np.concatenate(finished), [], count, time.monotonic()
            if store:
                store([texts[i] for i in index], out[index], {j for j, i in enumerate(index) if i in truncated})
            if progress:
                progress(done + count, total)
    return out, set(truncated)


def cached_share(model: str | ModelEntry | ResolvedModel, texts: Sequence[str],
                 registry: Registry | None = None) -> float | None:
    """The share of the distinct ``texts`` whose lossless embeddings are cached already, found without
    loading the model; None where its runtime is not known yet (it has not been measured here)."""
    resolved = loading.resolve(model, registry or get_registry())
    unique = list(dict.fromkeys(texts))
    runtime = None if resolved.identity is None else model_cache.known_runtime(resolved.entry, resolved.identity)
    if runtime is None or not unique:
        return None
    return len(embedding_cache().get_many(cache_key(resolved.identity, runtime), unique)) / len(unique)


def encode(
    model: str | ModelEntry | ResolvedModel,
    texts: Sequence[str],
    *,
    registry: Registry | None = None,
    batch_size: int = 32,
    precision: str | None = None,
    backend: str | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    fast: bool = False,
    notify: Callable[[str], None] | None = None,
) -> Encoded:
    """Embed ``texts`` with a registry model.

    ``fast=True`` allows the int8 runtime where it is the automatic choice (Spearman within 0.5 of
    fp32, ``runtime_choice.FAST_SPEARMAN``); the default is lossless, for numbers that are reported.
    ``notify`` hears what is being prepared when a model's ONNX artefact is built or its runtime
    measured (once per model version).
    ``precision`` and ``backend`` force a runtime (e.g. ``"int8"`` and ``"onnx"``), as the settings do.

    >>> encode("all-MiniLM-L6-v2", ["A man bites a dog.", "A dog bites a man."]).embeddings.shape
    (2, 384)
    """
    started = time.perf_counter()
    texts = validate_texts(texts)
    registry = registry or get_registry()
    resolved = loading.resolve(model, registry)  # once: what follows reuses it
    entry, status, identity = resolved
    gpu_runtime = None
    if wants_gpu_call(kind_of(entry).matmul_heavy, len(texts), GPU_BATCH_MIN):  # worth a lent GPU (sbert_demo.gpu)
        gpu_options = dict(batch_size=batch_size, precision=precision, backend=backend, use_cache=use_cache, fast=fast)
        gpu_runtime = _gpu_runtimes.get((identity, precision, fast, backend)) if use_cache else None
        if (entry.fix is not None or gpu_runtime is None
                or len(embedding_cache().get_many(cache_key(identity, gpu_runtime), list(dict.fromkeys(texts))))
                < len(set(texts))):
            return _encoded_on_gpu(resolved, texts, gpu_options)
        # else every vector is in the cache from an earlier GPU call (Table 1's sets after its first pass):
        # read here, no GPU call
    if entry.fix is not None:
        options = dict(registry=registry, batch_size=batch_size, precision=precision, backend=backend,
                       use_cache=use_cache, fast=fast, notify=notify)
        return _encode_fixed(resolved, texts, progress, options, started)
    unique = list(dict.fromkeys(texts))
    cache = embedding_cache() if use_cache else None
    runtime = gpu_runtime or model_cache.runtime_for(entry, identity, precision, fast, backend, notify)
    hits = cache.get_many(cache_key(identity, runtime), unique) if cache and identity else {}
    missing = [i for i in range(len(unique)) if i not in hits]
    if progress:
        progress(len(hits), len(unique))

    dim = next(iter(hits.values()))[0].shape[0] if hits else None
    truncated_unique = {i for i, (_, cut) in hits.items() if cut}
    vectors: np.ndarray | None = None
    if missing:
        loaded = model_cache.load(resolved, registry, precision=precision, fast=fast, notify=notify, backend=backend)
        identity, runtime = loaded.identity, loaded.device
        key = cache_key(identity, runtime)
        store = (lambda chunk, chunk_vectors, chunk_cut: cache.put_many(key, chunk, chunk_vectors, chunk_cut)) if cache else None
        computed, cut = _compute(loaded, [unique[i] for i in missing], batch_size, progress, len(hits), len(unique), store)
        dim = computed.shape[1]
        vectors = np.empty((len(unique), dim), dtype=np.float32)
        vectors[missing] = computed
        truncated_unique |= {missing[i] for i in cut}
    if vectors is None:
        vectors = np.empty((len(unique), dim), dtype=np.float32)
    for i, (vector, _) in hits.items():
        vectors[i] = vector

    position = {text: i for i, text in enumerate(unique)}
    rows = np.array([position[t] for t in texts])
    embeddings = vectors[rows]
    zero = np.flatnonzero(~np.any(embeddings, axis=1))
    return Encoded(
        embeddings=embeddings,
        key=entry.key,
        cached=len(hits),
        computed=len(missing),
        seconds=time.perf_counter() - started,
        runtime=runtime.runtime,
        truncated=tuple(int(i) for i in np.flatnonzero(np.isin(rows, list(truncated_unique)))),
        empty_vectors=tuple(int(i) for i in zero),
    )


GPU_BATCH_MIN = 512  # on ZeroGPU, fewer sentences are encoded on the CPU (a GPU call costs seconds to start)
GPU_SENTENCES_PER_S = 2000  # what a ZeroGPU slice encodes with mpnet, to size the call's duration


# (identity, precision, fast, backend) -> the runtime a ZeroGPU call ran the model on
_gpu_runtimes: BoundedCache[tuple, devices.DeviceChoice] = BoundedCache("ZeroGPU: each model's runtime in a GPU call", 64)


def _encoded_on_gpu(model: ResolvedModel, texts: Sequence[str], options: dict) -> Encoded:
    """:func:`encode` in a ZeroGPU call; the runtime it used is remembered, so later reads of the vectors it
    cached need no call. The resolved model travels (pickled) to the worker ``spaces`` forked earlier, whose
    registry may predate a model added since."""
    encoded, runtime = _encode_on_gpu(model, list(texts), **options)
    _gpu_runtimes.put((model.identity, options["precision"], options["fast"], options["backend"]), runtime)
    return encoded


def _gpu_seconds(model, texts, **options) -> float:
    return 30 + len(texts) / GPU_SENTENCES_PER_S


@gpu_function(duration=_gpu_seconds)
def _encode_on_gpu(model: ResolvedModel, texts: list[str], **options) -> tuple[Encoded, devices.DeviceChoice]:
    """:func:`encode` on a GPU lent by ZeroGPU (the model loads on it inside the call), and the runtime it ran on."""
    encoded = encode(model, texts, **options)
    return encoded, model_cache.runtime_for(model.entry, model.identity, options.get("precision"),
                                            options.get("fast", False), options.get("backend"))


def fitted_fix(model: ModelEntry | ResolvedModel, progress: Progress | None = None, **options) -> fixes.FittedFix:
    """The map of the variant ``model`` (e.g. ``glove-6b-50d+whiten``), fitted on first use.

    ``options`` are :func:`encode`'s (runtime and cache): the map is fitted on the vectors of the
    runtime that will be fixed, and cached per base fingerprint and fitting collection.
    """
    resolved = loading.resolve(model, options.get("registry"))
    entry, base_model = resolved.entry, resolved.base(options.get("registry"))
    name, sentences = fixes.fit_collection()
    base = fingerprint(base_model, options.get("registry"), options.get("fast", False))

    def moments() -> fixes.Moments:
        if options.get("notify"):
            options["notify"](f"Encoding {name} to fit {entry.fix} ({len(sentences):,} sentences, once per model)")
        return fixes.Moments.of(encode(base_model, sentences, progress=progress, **options).embeddings)

    if base is None:  # a Hub model not downloaded yet: nothing to share the fit with
        return fixes.fit(entry.fix, moments(), name)
    runtime = f"{options.get('backend') or 'auto'}-{options.get('precision') or 'auto'}"  # explicit ones: other vectors
    collection = fixes.collection_id(sentences)  # one hash of the collection per call
    return fixes.cached_fit(f"{base}|{runtime}|{entry.fix}|{collection}|{name}", lambda: fixes.fit(
        entry.fix, fixes.fitted_moments.get_or_build(f"{base}|{runtime}|{collection}|{name}", moments), name))


def _encode_fixed(resolved: ResolvedModel, texts: list[str], progress: Progress | None, options: dict,
                  started: float) -> Encoded:
    """:func:`encode` for a training-free variant: the base's vectors, then the fitted map."""
    entry = resolved.entry
    base = encode(resolved.base(options.get("registry")), texts, progress=progress, **options)
    fitted = fitted_fix(resolved, progress, **options)
    return replace(base, key=entry.key, embeddings=fitted.apply(base.embeddings), fixed=True,
                   seconds=time.perf_counter() - started,
                   runtime=f"{base.runtime}; {entry.fix} fitted on {fitted.collection} ({fitted.fitted_on:,} sentences)")
