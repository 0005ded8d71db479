"""Loaded models on a device: the bounded LRU every user of the process shares, and :func:`load`.

:func:`load` resolves an entry (:func:`sbert_demo.models.loading.resolve`), chooses the device,
back-end and precision (:func:`runtime_for`, rules in :mod:`sbert_demo.encoding.devices`) and
returns the model from :func:`model_cache`, building it on first use: a ``SentenceTransformer``
for PyTorch, an :class:`~.onnx_encoder.OnnxEncoder` for ONNX Runtime (its artefact built once per
model fingerprint, :mod:`.onnx_export`). Each model is built once even when many users ask at the
same moment. When an ONNX artefact cannot be built, the reason is logged once and the model runs
in PyTorch fp32 for the rest of the process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..config import settings
from ..models import loading
from ..models.entries import ModelEntry
from ..models.kinds import EMBEDS, kind_of
from ..models.registry import Registry
from ..shared import BoundedCache, process_wide
from . import devices, runtime_choice

logger = logging.getLogger(__name__)


def _size_mb(model: Any) -> float:
    if hasattr(model, "size_mb"):  # an OnnxEncoder
        return float(model.size_mb)
    try:
        tensors = [*model.parameters(), *model.buffers()]
        return sum(t.numel() * t.element_size() for t in tensors) / 2**20
    except Exception:
        return 0.0


@process_wide
def model_cache() -> BoundedCache[str, Any]:
    """The LRU of loaded models shared by every user of the process (bounded by count and megabytes;
    each model is built once even when many users ask at the same moment)."""
    config = settings()
    return BoundedCache("loaded models", config.max_loaded_models, weigh=_size_mb,
                        max_weight=config.max_loaded_model_mb, registered=False)


@dataclass(frozen=True)
class LoadedModel:
    entry: ModelEntry
    model: Any  # SentenceTransformer (backend "torch") or OnnxEncoder (backend "onnx")
    identity: str
    device: devices.DeviceChoice


onnx_failures: BoundedCache[tuple[str, str], str] = BoundedCache("ONNX artefacts that failed to build", 256)
Notify = Callable[[str], None]


def runtime_for(entry: ModelEntry, identity: str | None, precision: str | None = None,
                fast: bool = False, backend: str | None = None, notify: Notify | None = None) -> devices.DeviceChoice:
    """Where and how ``entry`` runs now: the settings' choice (on the CPU with everything on "auto", the
    runtime measured fastest for this model on this machine, :mod:`.runtime_choice`), unless its ONNX
    artefact failed to build (int8 then falls back to ONNX fp32, fp32 to PyTorch fp32).
    ``backend="torch"`` asks for the ``SentenceTransformer`` itself (e.g. to read its token embeddings)."""
    kind = kind_of(entry)
    matmul_heavy = kind.matmul_heavy
    choice = devices.current(matmul_heavy=matmul_heavy, precision=precision, fast=fast,
                             backend=backend or (None if kind.onnx else "torch"))
    if _measured(choice, matmul_heavy, identity, precision, backend):
        chosen = _decision(entry, identity, notify).for_path(fast)
        choice = devices.current(matmul_heavy=True, precision=chosen.precision, fast=fast, backend=chosen.backend)
    if choice.backend not in ("onnx", "openvino"):
        return choice
    if (identity, "fp32") in onnx_failures:  # no ONNX graph: neither ONNX Runtime nor OpenVINO can run it
        return devices.current(matmul_heavy=matmul_heavy, precision="fp32", backend="torch")
    if choice.backend == "openvino" and (identity, f"openvino-{choice.precision}") in onnx_failures:
        return devices.current(matmul_heavy=matmul_heavy, precision="int8" if choice.precision == "int8" else "fp32",
                               backend="onnx")
    if choice.backend == "onnx" and (identity, choice.precision) in onnx_failures:
        return devices.current(matmul_heavy=matmul_heavy, precision="fp32", backend="onnx")
    return choice


def known_runtime(entry: ModelEntry, identity: str | None, fast: bool = False) -> devices.DeviceChoice | None:
    """:func:`runtime_for` where answering costs nothing: None for a transformer whose runtimes were
    never measured on this machine (answering would measure them, a minute or two)."""
    choice = devices.current(matmul_heavy=kind_of(entry).matmul_heavy, fast=fast,
                             backend=None if kind_of(entry).onnx else "torch")
    if _measured(choice, kind_of(entry).matmul_heavy, identity, None, None) and runtime_choice.stored(
            settings().cache_dir, devices.detect_hardware(), identity) is None:
        return None
    return runtime_for(entry, identity, fast=fast)


def _measured(choice: devices.DeviceChoice, matmul_heavy: bool, identity: str | None, precision: str | None,
              backend: str | None) -> bool:
    """Whether the runtime is the measured one: a local transformer on the CPU, nothing asked explicitly."""
    config = settings()
    return (choice.device == "cpu" and matmul_heavy and identity is not None and precision is None
            and backend is None and config.runtime_choice == "measure" and config.precision == "auto"
            and config.backend == "auto")


def _probe_embed(loaded: LoadedModel) -> runtime_choice.Embed:
    """Texts -> normalised vectors with ``loaded`` as it is (no cache, no chunks): what the probe times.
    A pair scorer scores each text with the next one instead (one score per pair)."""
    kind = kind_of(loaded.entry)
    if not kind.can(EMBEDS):
        return lambda texts: np.asarray(kind.score_pairs(loaded.model, texts[:-1], texts[1:]), dtype=np.float32)
    if loaded.device.backend in ("onnx", "openvino"):  # a graph encoder (:class:`.onnx_encoder.GraphEncoder`)
        return lambda texts: loaded.model.embed(texts, batch_size=32)[0]

    def embed(texts: list[str]):
        import torch

        with torch.inference_mode():
            vectors = loaded.model.encode(texts, batch_size=32, convert_to_tensor=True, show_progress_bar=False)
        return torch.nn.functional.normalize(vectors.float(), dim=-1).cpu().numpy()

    return embed


def _decision(entry: ModelEntry, identity: str, notify: Notify | None, again: bool = False,
              settle: Callable[[], None] | None = None) -> runtime_choice.Decision:
    hardware = devices.detect_hardware()

    def timed(candidate: runtime_choice.Candidate) -> runtime_choice.Embed:
        """``entry`` loaded on ``candidate`` (its artefact built first), as the probe times it."""
        loaded = load(entry, precision=candidate.precision, backend=candidate.backend, notify=notify)
        if (loaded.device.backend, loaded.device.precision) != (candidate.backend, candidate.precision):
            raise ValueError(f"it fell back to {loaded.device.runtime} (see the log)")
        return _probe_embed(loaded)

    def runs() -> dict:
        return {candidate: partial(timed, candidate)
                for candidate in runtime_choice.candidates(hardware, onnx=kind_of(entry).onnx)}

    def forget_losers(decision: runtime_choice.Decision) -> None:
        """The candidates loaded only to be timed leave the loaded-model cache (the winners stay warm)."""
        for measured in decision.measured:
            if measured.candidate not in (decision.lossless, decision.fast):
                backend = measured.candidate.backend
                model_cache().pop(f"{identity}:{'cpu' if backend == 'torch' else backend}:{measured.candidate.precision}")

    return runtime_choice.decided(settings().cache_dir, hardware, identity, entry.label, runs, notify, forget_losers,
                                  again=again, settle=settle)


def runtime_decision(model: ModelEntry | str | loading.ResolvedModel, registry: Registry | None = None,
                     notify: Notify | None = None, again: bool = False,
                     settle: Callable[[], None] | None = None) -> runtime_choice.Decision:
    """The runtimes measured for a local transformer on this machine (measured now if never before;
    ``again``: measured now, the new rounds added to the kept ones; ``settle``: called, where it measures, once the
    candidates are built and loaded and before they are timed, :func:`.runtime_choice.measure`)."""
    entry, _, identity = loading.resolve(model, registry)
    if identity is None or not kind_of(entry).matmul_heavy:
        raise ValueError(f"{entry.label} has no local transformer to time.")
    return _decision(entry, identity, notify, again, settle)


def measures_runtime(model: ModelEntry | str | loading.ResolvedModel, registry: Registry | None = None) -> bool:
    """Whether ``model``'s CPU runtime here is chosen by measuring (a local transformer on the CPU, every
    setting on "auto" and ``SBERT_DEMO_RUNTIME_CHOICE=measure``)."""
    entry, _, identity = loading.resolve(model, registry)
    kind = kind_of(entry)
    choice = devices.current(matmul_heavy=kind.matmul_heavy, backend=None if kind.onnx else "torch")
    return _measured(choice, kind.matmul_heavy, identity, None, None)


def kept_decision(model: ModelEntry | str | loading.ResolvedModel,
                  registry: Registry | None = None) -> runtime_choice.Decision | None:
    """The runtime decision kept for a local transformer on this machine, or None; never measures."""
    entry, _, identity = loading.resolve(model, registry)
    if identity is None or not kind_of(entry).matmul_heavy:
        return None
    return runtime_choice.kept(settings().cache_dir, devices.detect_hardware(), identity)


def _remember_failure(entry: ModelEntry, identity: str, precision: str, exc: Exception) -> None:
    if (identity, precision) in onnx_failures:
        return
    onnx_failures.put((identity, precision), str(exc))
    if precision.startswith("openvino-"):
        logger.warning("%s runs in ONNX Runtime instead of OpenVINO %s (%s: %s)", entry.label,
                       precision.split("-", 1)[1], type(exc).__name__, exc)
        return
    fallback = "ONNX Runtime fp32 (or PyTorch fp32, if that fails too)" if precision == "int8" else "PyTorch fp32"
    # Word-vector models (e.g. siamese GloVe trained here) have nothing to export: expected, not a problem.
    level = logging.INFO if "not a Hugging Face transformer" in str(exc) else logging.WARNING
    logger.log(level, "%s runs in %s: its ONNX %s artefact could not be built (%s: %s)",
               entry.label, fallback, precision, type(exc).__name__, exc)


def load(entry: ModelEntry | str | loading.ResolvedModel, registry: Registry | None = None,
         precision: str | None = None, fast: bool = False, notify: Notify | None = None,
         backend: str | None = None) -> LoadedModel:
    """Load (or fetch from the LRU) the model for ``entry`` on the automatically chosen runtime.

    ``fast=True`` allows the int8 path where it is the automatic choice (Explore); ``notify``
    hears what is being prepared when an ONNX artefact has to be built first.
    """
    entry, status, identity = loading.resolve(entry, registry)
    if entry.fix is not None:
        raise ValueError(f"{entry.key} is not a model of its own: load {entry.base} and apply its fix.")
    choice = runtime_for(entry, identity, precision, fast, backend, notify)

    def build(choice: devices.DeviceChoice = choice):
        try:
            model = loading.build_model(entry, status, choice.device, notify=notify, registry=registry)
            if choice.backend == "torch" and choice.autocast_dtype is not None:
                # Inference only: weights cast once beat autocast's per-operation casts (measured here:
                # MiniLM 802 vs 734 sentences/s, mpnet 157 vs 140, STSb Spearman unchanged to 0.01).
                model.to(choice.autocast_dtype)
            return model
        except ValueError:
            raise
        except Exception as exc:  # corrupt weights, missing tokenizer files, Hub errors ...
            logger.exception("Loading %s failed", entry.key)
            raise ValueError(f"{entry.label} could not be loaded from {status.where}: {exc}") from exc

    downloaded = None
    if identity is None:  # a Hub model not downloaded yet: download, then fingerprint the snapshot
        downloaded = build()
        identity = loading.model_identity(entry, status) or f"hub:{status.hub_id}"
        choice = runtime_for(entry, identity, precision, fast, backend)
        if choice.backend == "torch":
            model = model_cache().get_or_build(f"{identity}:{choice.device}:{choice.precision}", lambda: downloaded)
            return LoadedModel(entry=entry, model=model, identity=identity, device=choice)

    if choice.backend == "openvino":
        return _load_openvino(entry, status, identity, choice, registry, precision, fast, notify, backend,
                              lambda: downloaded or build())
    if choice.backend == "onnx":
        from . import onnx_export
        from .onnx_encoder import OnnxEncoder

        def build_onnx():
            say = (lambda step: notify(f"Preparing ONNX Runtime {choice.precision} for {entry.label} "
                                       f"(once per model version): {step}")) if notify else None
            folder = onnx_export.ensure_artefact(settings().cache_dir, identity, choice.precision,
                                                 lambda: downloaded or build(), say)
            return OnnxEncoder(folder)

        try:
            model = model_cache().get_or_build(f"{identity}:onnx:{choice.precision}", build_onnx)
            return LoadedModel(entry=entry, model=model, identity=identity, device=choice)
        except Exception as exc:  # not exportable, export or check failed, disk full ...
            _remember_failure(entry, identity, choice.precision, exc)
            if "could not be loaded" in str(exc):  # the model itself is broken: say so, as PyTorch would
                raise
            return load(entry, registry, precision, fast, notify, backend)
    model = model_cache().get_or_build(f"{identity}:{choice.device}:{choice.precision}", lambda: build(choice))
    return LoadedModel(entry=entry, model=model, identity=identity, device=choice)


def _load_openvino(entry: ModelEntry, status, identity: str, choice: devices.DeviceChoice, registry, precision,
                   fast: bool, notify: Notify | None, backend: str | None, torch_model) -> LoadedModel:
    """:func:`load` on OpenVINO: the ONNX fp32 graph (built first if needed) compiled in fp32 or with the bf16
    hint, or the int8 model NNCF makes from it (:mod:`.openvino_export`). If it cannot be made, the model
    runs in ONNX Runtime, as if OpenVINO were not installed, and the log says why."""
    from . import onnx_export, openvino_export
    from .onnx_encoder import GRAPH
    from .openvino_encoder import OpenVinoEncoder

    cpu_bf16 = devices.detect_hardware().cpu_bf16

    def build() -> OpenVinoEncoder:
        say = (lambda step: notify(f"Preparing OpenVINO {choice.precision} for {entry.label} (once per model "
                                   f"version): {step}")) if notify else None
        source = onnx_export.ensure_artefact(settings().cache_dir, identity, "fp32", torch_model, say)
        if choice.precision == "int8":
            folder = openvino_export.ensure_int8(settings().cache_dir, identity, source, torch_model, cpu_bf16, say)
            return OpenVinoEncoder(folder, folder / openvino_export.MODEL, "int8", cpu_bf16)
        return OpenVinoEncoder(source, source / GRAPH, choice.precision, cpu_bf16)

    try:
        model = model_cache().get_or_build(f"{identity}:openvino:{choice.precision}", build)
        return LoadedModel(entry=entry, model=model, identity=identity, device=choice)
    except Exception as exc:  # no graph, NNCF or the check failed, OpenVINO cannot compile it ...
        _remember_failure(entry, identity, f"openvino-{choice.precision}", exc)
        if "could not be loaded" in str(exc):
            raise
        return load(entry, registry, precision, fast, notify, backend)


def runtime_summary(model: ModelEntry | str | loading.ResolvedModel, registry: Registry | None = None) -> str:
    """What a model runs on here, for the Models tab, read from the kept decision (never measures), e.g.
    "numbers: ONNX Runtime fp32; maps: OpenVINO int8, 812 sentences/s (2.41x PyTorch fp32); measured
    2026-11-27"."""
    try:
        resolved = loading.resolve(model, registry)
    except ValueError:  # not available here: the table says why in its own column
        return ""
    entry, status, identity = resolved
    if not kind_of(entry).matmul_heavy:
        return "PyTorch fp32 (a look-up and an average: nothing to speed up)"
    if not measures_runtime(resolved, registry):
        lossless = runtime_for(entry, identity).runtime
        fast = runtime_for(entry, identity, fast=True).runtime
        return f"numbers: {lossless}" + ("" if fast == lossless else f"; maps: {fast}") + " (as set, not measured)"
    decision = kept_decision(resolved, registry)
    if decision is None:
        return "measured on first use (python -m sbert_demo prepare does it ahead)"
    lossless, fast = decision.for_path(False), decision.for_path(True)

    def rated(candidate: runtime_choice.Candidate, on_maps: bool) -> str:  # the speed-up on the path's own work
        rate, speedup = decision.rate(candidate.name), decision.path_speedup(candidate.name, on_maps)
        return (f"{candidate.label}" + (f", {rate:,.0f} sentences/s" if rate else "")
                + (f" ({speedup:.2f}x {runtime_choice.REFERENCE.label})" if speedup and candidate != runtime_choice.REFERENCE
                   else ""))

    unsure = decision.unsure(False) or decision.unsure(True)
    return (f"numbers: {rated(lossless, False)}" + ("" if fast == lossless else f"; maps: {rated(fast, True)}")
            + (f"; measured {decision.decided[:10]}" if decision.decided else "")
            + ("; unsure: measured again when idle" if unsure else ""))
