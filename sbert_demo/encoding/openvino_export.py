"""OpenVINO int8 models quantised by NNCF from the project's ONNX fp32 graph, built once per model version.

The recipe NNCF recommends for transformers: post-training quantisation (``nncf.quantize``) with the
transformer model type (attention's own matrices and the layer norms stay as they are), the mixed
preset (symmetric weights, asymmetric activations) and SmoothQuant on the matrix products
(``smooth_quant_alphas.matmul`` = :data:`SMOOTH_QUANT_ALPHA`). The activation ranges are calibrated
on :data:`CALIBRATION` sentences of the STS benchmark's **train** split, never on the dev or test sets
whose numbers are reported (:func:`calibration_texts`). It reads the fp32 graph that
:mod:`.onnx_export` builds (no ``optimum-intel``: it pins transformers 5.5, below this project's 5.23,
and pulls a CUDA build of torch 2.14).

The model lives in ``<cache>/openvino/<model identity>/int8/`` (``model.xml`` and ``model.bin``, the
tokenizer, a manifest) and is built as the ONNX artefacts are: in a temporary folder, checked against
PyTorch fp32 on the probe sentences (every pairwise cosine within ``onnx_export.MAX_PAIR_DRIFT``), then
moved in place with one rename under a file lock; a model that fails the check is refused for this
model version (a marker), so no start builds it again. Measured on an AMD EPYC Zen 4: MiniLM in
~10 s, mpnet in ~40 s.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .onnx_encoder import GRAPH, MANIFEST
from .onnx_export import MAX_PAIR_DRIFT, ExportError, Notify, probe_vectors, reference_vectors

logger = logging.getLogger(__name__)

FORMAT = "1"  # bump when the recipe changes: older models (and refusals) are made again
CALIBRATION = 600  # STSb train sentences (the measurement: 600 sentences, MiniLM in 7 s)
CALIBRATION_BATCH = 8
SMOOTH_QUANT_ALPHA = 0.95
MODEL = "model.xml"


def artefact_dir(cache_dir: Path, identity: str) -> Path:
    return cache_dir / "openvino" / identity / "int8"


def calibration_texts(count: int = CALIBRATION) -> list[str]:
    """``count`` distinct sentences of the STS benchmark's train split as shipped, spread over it (every
    k-th), sorted by length so that each calibration batch pads little. Only the train file is read:
    the dev and test numbers stay the numbers of data the quantisation never saw."""
    from ..config import SHIPPED_DATA
    from ..data.benchmarks import sts_split

    if not (SHIPPED_DATA / "stsbenchmark" / "sts-train.csv").is_file():
        raise ExportError("the STS benchmark's train sentences (the calibration set) are not in data/")
    train = sts_split("train", SHIPPED_DATA)
    distinct = list(dict.fromkeys([*train.sentences1, *train.sentences2]))
    step = max(1, len(distinct) // count)
    return sorted(distinct[::step][:count], key=len)


def read_manifest(folder: Path) -> dict | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("openvino_format") != FORMAT or not (folder / MODEL).is_file() \
                or (folder / MODEL).with_suffix(".bin").stat().st_size != manifest["bin_bytes"]:
            return None
        return manifest
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _refusal(final: Path) -> str | None:
    try:
        marker = json.loads(final.with_name(f"{final.name}.refused.json").read_text(encoding="utf-8"))
        return marker["reason"] if marker.get("format") == FORMAT else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _quantise(source: Path, work: Path, notify: Notify) -> None:
    import nncf
    import openvino as ov
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    limit = json.loads((source / MANIFEST).read_text(encoding="utf-8"))["max_seq_length"]
    texts = calibration_texts()
    batches = [texts[i: i + CALIBRATION_BATCH] for i in range(0, len(texts), CALIBRATION_BATCH)]

    def inputs(batch: list[str]) -> dict[str, np.ndarray]:
        encoded = tokenizer(batch, padding=True, truncation=True, max_length=limit, return_tensors="np")
        return {"input_ids": encoded["input_ids"].astype(np.int64),
                "attention_mask": encoded["attention_mask"].astype(np.int64)}

    notify(f"quantising to int8 with NNCF ({len(texts)} STSb train sentences to calibrate)")
    model = ov.Core().read_model(str(source / GRAPH))
    quantised = nncf.quantize(
        model, nncf.Dataset(batches, inputs), subset_size=len(batches), model_type=nncf.ModelType.TRANSFORMER,
        preset=nncf.QuantizationPreset.MIXED,
        advanced_parameters=nncf.AdvancedQuantizationParameters(
            smooth_quant_alphas=nncf.AdvancedSmoothQuantParameters(matmul=SMOOTH_QUANT_ALPHA)))
    ov.save_model(quantised, str(work / MODEL), compress_to_fp16=False)
    for item in source.iterdir():  # the tokenizer files, for the encoder
        if item.is_file() and item.name not in (GRAPH, MANIFEST):
            shutil.copy2(item, work / item.name)


def _write_manifest(source: Path, work: Path, calibrated: int, drift: float | None, seconds: float) -> None:
    import nncf
    import openvino as ov

    manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    manifest.update(precision="int8", openvino_format=FORMAT, bin_bytes=(work / MODEL).with_suffix(".bin").stat().st_size,
                    calibration=f"{calibrated} STSb train sentences", smooth_quant_alpha=SMOOTH_QUANT_ALPHA,
                    check_max_pair_drift=None if drift is None else round(drift, 6), build_seconds=round(seconds, 1),
                    openvino=ov.__version__, nncf=nncf.__version__)
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def _check(model: Any, work: Path, cpu_bf16: bool) -> float:
    from .openvino_encoder import OpenVinoEncoder

    reference = reference_vectors(model)
    encoder = OpenVinoEncoder(work, work / MODEL, "int8", cpu_bf16, threads=1, keep_compiled=False)
    candidate = probe_vectors(lambda batch: encoder.embed(batch, batch_size=8)[0])
    drift = float(np.max(np.abs(reference @ reference.T - candidate @ candidate.T)))
    if not drift <= MAX_PAIR_DRIFT["int8"]:
        raise ExportError(f"its int8 similarities differ from PyTorch's by up to {drift:.3f} "
                          f"(more than {MAX_PAIR_DRIFT['int8']})")
    return drift


def ensure_int8(cache_dir: Path, identity: str, source: Path, build_model: Callable[[], Any], cpu_bf16: bool,
                notify: Notify | None = None) -> Path:
    """The folder of a checked OpenVINO int8 model for ``identity``, quantised from the ONNX fp32
    artefact in ``source`` if needed (``build_model``: the model in PyTorch fp32, for the check).
    Raises :class:`~.onnx_export.ExportError` when it cannot be made or fails its check."""
    final = artefact_dir(cache_dir, identity)
    if read_manifest(final) is not None:
        return final
    refused = _refusal(final)
    if refused:
        raise ExportError(refused)
    from filelock import FileLock

    final.parent.mkdir(parents=True, exist_ok=True)
    say = notify or (lambda message: None)
    with FileLock(str(final.parent / f"{final.name}.lock"), timeout=1800):
        if read_manifest(final) is not None:
            return final
        started = time.perf_counter()
        work = Path(tempfile.mkdtemp(prefix=".int8-", dir=final.parent))
        try:
            _quantise(source, work, say)
            _write_manifest(source, work, CALIBRATION, None, 0.0)
            say("checking it against PyTorch")
            try:
                drift = _check(build_model(), work, cpu_bf16)
            except ExportError as exc:
                final.with_name(f"{final.name}.refused.json").write_text(
                    json.dumps({"format": FORMAT, "reason": str(exc)}), encoding="utf-8")
                raise
            _write_manifest(source, work, CALIBRATION, drift, time.perf_counter() - started)
            if final.exists():
                shutil.rmtree(final)
            os.replace(work, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        logger.info("Built the OpenVINO int8 model %s in %.1f s (largest pairwise cosine change %.4f)", final,
                    time.perf_counter() - started, drift)
    return final
