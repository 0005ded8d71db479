"""ONNX Runtime artefacts for a transformer model, built once per model fingerprint.

Why an export of our own: sentence-transformers' ``backend="onnx"`` needs ``optimum-onnx``, which
cannot be installed beside transformers 5 (it pins transformers < 4.58). What it would do for us
is small, so it is done here with the libraries underneath it:

1. ``torch.onnx.export`` of the model's modules up to (not including) ``Normalize``: token ids and
   attention mask in, the pooled sentence embedding out (pooling and any Dense layer included);
2. ONNX Runtime's transformer optimiser (fused attention, SkipLayerNorm, BiasGelu), used as
   Optimum uses it; this is the **fp32** artefact: lossless (same Spearman as PyTorch fp32 to 0.01);
3. for **int8**, ONNX Runtime's dynamic quantisation (int8 weights per output channel, activations
   quantised per call) of every weight matrix. On x86 CPUs without VNNI (AVX2, plain AVX-512)
   weights use 7 of their 8 bits (``reduce_range``): ONNX Runtime multiplies uint8 activations by
   int8 weights with ``VPMADDUBSW``, whose 16-bit sums saturate, as its documentation warns. Measured
   on an AVX2 EPYC: with 8-bit weights mpnet's STSb dev Spearman fell from 88 to 19, with 7-bit weights
   it stays within 0.2, and MiniLM's went from 86.51 to 86.72 (= fp32), at the same speed. CPUs with
   VNNI (AVX512-VNNI, AVX-VNNI, AMX) sum int8 products in 32 bits (``VPDPBUSD``): there all 8 bits
   are used, a separate artefact (:func:`recipe`). Measured on a Xeon with AVX512-VNNI, mpnet (the
   variant below): STSb dev Spearman +0.06 from fp32 with 8-bit weights, +0.25 with 7-bit, same speed
   (2.0x ONNX fp32), in one batch order (through the app's encoder, batches cut by length: +0.23);
   largest probe-pair change 0.064 against 0.066. If that
   fails the check below, the feed-forward **down-projections** (the matrices fed by the activation
   function) with outlier inputs get help: their inputs carry per-token outliers that one scale per
   tensor cannot hold (mpnet: vectors within cosine 0.92 of fp32 when only these are quantised, 0.999
   for the others). Those whose input reaches far beyond the others' (:data:`OUTLIER_FACTOR`,
   measured on the probe sentences) first take their input **scaled per token** (each token divided
   by its own peak before the product and multiplied back after it: per-token quantisation built
   from plain ONNX operators, :func:`_scale_per_token`), every matrix still in int8; if that fails
   the check, they stay in fp32; then all down-projections do. mpnet takes the per-token variant
   (Zen 4: STSb dev/test 88.12 / 83.46 against fp32's 88.11 / 83.42, probe drift 0.028, 21% less CPU
   than keeping its 5 outlier down-projections in fp32, which gave 88.17 / 83.42), MiniLM the first.
   The **word-embedding table** is kept in int8 too, one scale per row, dequantised in the graph
   (:func:`_int8_word_table`): MiniLM's graph 59 -> 24 MB, small enough for a published page to run it
   in the browser (:mod:`sbert_demo.publish.search`), the same graph there as here. Its vectors moved by
   no more than any other int8 perturbation: on 400 STSb dev sentences, within cosine 0.989 of the graph
   with the fp32 table, which is itself within 0.991 of fp32 (an fp16 table moves them as far, 0.990).
   (SmoothQuant-style per-channel scaling of those inputs did not help: the outliers are tokens, not
   channels; ``MatMulNBits`` 8-bit weights keep mpnet accurate but are no faster than fp32 on AVX2.)

Each artefact lives in ``<cache>/onnx/<model identity>/<precision>/`` with the tokenizer files and a
``manifest.json`` (sizes and sha256 of the graph, the check below, versions). It is built in a
temporary folder and moved in place with one rename, under a file lock, so a crash leaves no half
artefact and two processes never build the same one twice; a folder whose manifest is missing or
does not match its files is rebuilt. Before it is accepted, its embeddings of a few probe sentences
are compared with PyTorch fp32: fp32 must give the same vectors (cosine >= 0.9999 each); int8 must
keep the similarity structure (every pairwise cosine of the probes within 0.06 of fp32's), which is
what STSb Spearman measures.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

from .onnx_encoder import GRAPH, MANIFEST, OnnxEncoder

FORMATS = {"fp32": "1", "int8": "4"}  # bump one when its recipe changes: older artefacts (and refusals) are redone
# int8 "3": the per-token variant came before keeping outlier down-projections in fp32; "4": the word table in int8
MIN_COSINE = {"fp32": 0.9999}  # each probe's vector against PyTorch fp32's
MAX_PAIR_DRIFT = {"fp32": 0.001, "int8": 0.06}  # largest change of any pairwise cosine between probes
PROBES = (
    "A man is playing a guitar.",
    "A person plays the guitar.",
    "Two dogs run through the snow-covered field, chasing a red ball.",
    "Dogs are running in the snow.",
    "The stock market fell sharply after the announcement.",
    "Shares dropped quickly once the news was released.",
    "A woman is slicing an onion in the kitchen.",
    "The cat sleeps on the warm windowsill.",
    "¿Dónde está la estación de tren? 🚆",
    "A",
    "<b>HTML</b> & other markup, kept as text",
    " ".join(["The committee reviewed every proposal in detail before the vote."] * 60),  # past any token limit
)
# The probes run in two batches: the short ones together (padded to the longest of them, so the attention mask is at
# work) and the one past the token limit alone. In one batch every probe is padded to the limit: mpnet's PyTorch
# reference took 7.5 s instead of 1.1 s on a 2-core AMD EPYC, and a model's artefacts are checked three to five times.
PROBE_BATCHES = (PROBES[:-1], PROBES[-1:])
Notify = Callable[[str], None]


def probe_vectors(encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``encode``'s vectors of :data:`PROBES`, in their order, one call per batch of :data:`PROBE_BATCHES`."""
    return np.vstack([encode(list(batch)) for batch in PROBE_BATCHES])


def reference_vectors(model: Any) -> np.ndarray:
    """PyTorch fp32's unit vectors of :data:`PROBES` (``model``: the sentence-transformers model)."""
    return probe_vectors(lambda batch: model.encode(batch, normalize_embeddings=True, convert_to_numpy=True,
                                                    show_progress_bar=False))


class ExportError(RuntimeError):
    """The model cannot be exported (or its artefact failed the check); the PyTorch path is used."""


VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})  # int8 dot products summed in 32 bits


def recipe(precision: str) -> str:
    """The artefact a precision runs on this CPU: ``fp32``; ``int8`` (7-bit weights) or, on CPUs with
    VNNI, ``int8-w8`` (all 8 bits; module docstring). Also the artefact's folder name."""
    from .cpu import cpu_flags

    return "int8-w8" if precision == "int8" and VNNI_FLAGS & cpu_flags() else precision


def _format(name: str) -> str | None:
    """The recipe version of an artefact folder's precision ("int8-w8" is an int8 recipe)."""
    return FORMATS.get(name.split("-")[0])


def artefact_dir(cache_dir: Path, identity: str, precision: str) -> Path:
    return cache_dir / "onnx" / identity / recipe(precision)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(folder: Path) -> dict | None:
    """The manifest of a complete, intact artefact; None when it is missing, partial or damaged."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        graph = folder / GRAPH
        stat = graph.stat()
        if manifest.get("format") != FORMATS.get(manifest.get("precision")) or stat.st_size != manifest["graph_bytes"]:
            return None
        # The checksum is read when the file is not exactly as written (size and modification time);
        # hashing mpnet's 420 MB graph at every start would cost a second or two.
        if stat.st_mtime_ns != manifest.get("graph_mtime_ns") and _sha256(graph) != manifest["graph_sha256"]:
            return None
        return manifest
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _refusal(final: Path) -> str | None:
    """Why this artefact was refused by its check earlier (same recipe), or None."""
    try:
        marker = json.loads(final.with_name(f"{final.name}.refused.json").read_text(encoding="utf-8"))
        return marker["reason"] if marker.get("format") == _format(final.name) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _refuse(final: Path, reason: str) -> None:
    try:
        marker = {"format": _format(final.name), "reason": reason}
        final.with_name(f"{final.name}.refused.json").write_text(json.dumps(marker), encoding="utf-8")
    except OSError:
        pass


def _exportable(model: Any) -> tuple[Any, Any]:
    """The Transformer module and its fast tokenizer, or an ExportError saying why not."""
    first = model[0] if len(model) else None
    auto_model = getattr(first, "auto_model", None) or getattr(first, "model", None)
    tokenizer = getattr(first, "tokenizer", None)
    if auto_model is None or tokenizer is None or not hasattr(auto_model, "config"):
        raise ExportError("its first module is not a Hugging Face transformer (e.g. word vectors)")
    if not getattr(tokenizer, "is_fast", False):
        raise ExportError("its tokenizer has no fast (Rust) version to run without PyTorch")
    return auto_model, tokenizer


def _wrapper(model: Any):
    """An nn.Module: (input_ids, attention_mask) -> the sentence embedding before ``Normalize``."""
    import torch

    modules = []
    for module in model:
        if type(module).__name__ == "Normalize":
            break
        modules.append(module)

    class Embedder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stack = torch.nn.ModuleList(modules)

        def forward(self, input_ids, attention_mask):
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            for module in self.stack:
                features = module(features)
            return features["sentence_embedding"]

    return Embedder().eval()


def _export_fp32(model: Any, folder: Path, notify: Notify) -> None:
    import torch

    auto_model, tokenizer = _exportable(model)
    if hasattr(auto_model, "set_attn_implementation"):
        auto_model.set_attn_implementation("eager")  # the fusions below recognise the eager attention graph
    model.float()
    features = model.preprocess(["A short sentence.", "A somewhat longer sentence to trace the dynamic axes with."])
    raw = folder / "raw.onnx"
    notify("exporting the graph")
    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about shape-dependent branches: the axes are dynamic
        torch.onnx.export(
            _wrapper(model), (features["input_ids"], features["attention_mask"]), str(raw),
            input_names=["input_ids", "attention_mask"], output_names=["sentence_embedding"],
            dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                          "sentence_embedding": {0: "batch"}},
            opset_version=17, dynamo=False,
        )
    notify("fusing attention and layer norms")
    logging.disable(logging.INFO)  # the optimiser logs every fusion at INFO on loggers of its own
    try:
        from onnxruntime.transformers.optimizer import optimize_model

        config = auto_model.config
        optimised = optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                                   hidden_size=config.hidden_size, opt_level=1)
        optimised.save_model_to_file(str(folder / GRAPH))
        raw.unlink()
    except Exception as exc:  # an architecture the optimiser does not know: the plain graph still works
        logger.warning("ONNX fusion skipped (%s); using the plain exported graph", exc)
        raw.replace(folder / GRAPH)
    finally:
        logging.disable(logging.NOTSET)
    tokenizer.save_pretrained(str(folder))


_ACTIVATIONS = {"Gelu", "BiasGelu", "FastGelu", "QuickGelu", "Relu", "Erf", "Tanh", "Sigmoid"}
_PASS_THROUGH = {"Reshape", "Transpose", "Cast", "Identity", "Squeeze", "Unsqueeze"}
INT8_VARIANTS = {"all": "every weight matrix in int8",
                 "per-token-outlier-down-projections": "every weight matrix in int8, down-projections with outlier "
                                                       "inputs quantised per token",
                 "keep-outlier-down-projections": "down-projections with outlier inputs kept in fp32",
                 "keep-down-projections": "feed-forward down-projections kept in fp32"}
FALLBACK_VARIANTS = ("per-token-outlier-down-projections", "keep-outlier-down-projections", "keep-down-projections")
# A down-projection stays in fp32 when its input reaches more than this many times the median of the
# other down-projections' largest inputs (on the probe sentences). mpnet: layers 6-10 reach 56-97,
# the others 5-30 (median 16-23); quantising one of layers 6-10 alone moves probe similarities by up to
# 0.06-0.10, one of the others by at most 0.03.
OUTLIER_FACTOR = 2.0


def _weight_matmuls(graph) -> tuple[list[str], list[str]]:
    """Names of the MatMuls with a constant weight: all of them, and the feed-forward down-projections
    among them (fed by the activation function: a fused GELU, or the Erf/Tanh of an unfused one)."""
    constants = {tensor.name for tensor in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}

    def from_activation(name: str, depth: int = 0) -> bool:
        node = producer.get(name)
        while node is not None and node.op_type in _PASS_THROUGH:
            node = producer.get(node.input[0])
        if node is None or depth > 3:
            return False
        if node.op_type in _ACTIVATIONS:
            return True
        # an unfused GELU ends in Mul/Add nodes around its Erf or Tanh: x * 0.5 * (1 + erf(x / sqrt 2))
        return node.op_type in ("Mul", "Add", "Div") and any(from_activation(i, depth + 1) for i in node.input)

    weighted = [n for n in graph.node if n.op_type == "MatMul" and len(n.input) == 2 and n.input[1] in constants]
    return [n.name for n in weighted], [n.name for n in weighted if from_activation(n.input[0])]


def _largest_inputs(source: Path, model, names: list[str]) -> dict[str, float]:
    """The largest |value| of each named MatMul's input over the real tokens of the probe sentences
    (``model``: the loaded graph of the fp32 artefact in ``source``, left as it was)."""
    import onnx
    import onnxruntime as ort
    from transformers import AutoTokenizer

    inputs = {node.name: node.input[0] for node in model.graph.node if node.name in names}
    outputs = len(model.graph.output)
    for tensor in dict.fromkeys(inputs.values()):  # run with those inputs as extra outputs
        model.graph.output.append(onnx.helper.make_tensor_value_info(tensor, onnx.TensorProto.FLOAT, None))
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    finally:
        del model.graph.output[outputs:]
    manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    tensors = list(dict.fromkeys(inputs.values()))
    largest = dict.fromkeys(tensors, 0.0)
    for probes in PROBE_BATCHES:
        batch = tokenizer(list(probes), truncation=True, padding=True, return_tensors="np",
                          max_length=manifest["max_seq_length"])
        mask = batch["attention_mask"].astype(bool)
        values = session.run(tensors, {"input_ids": batch["input_ids"].astype(np.int64),
                                       "attention_mask": batch["attention_mask"].astype(np.int64)})
        for tensor, value in zip(tensors, values):
            largest[tensor] = max(largest[tensor], float(np.abs(value[mask]).max()))
    return {name: largest[tensor] for name, tensor in inputs.items()}


def _scale_per_token(model, names: list[str]) -> None:
    """Give each named MatMul ``x @ W`` its input scaled per token: ``(x / r) @ W * r`` with ``r`` the
    largest |value| of each row (token) of ``x``. The same product in fp32; quantised, the activation's
    one scale per tensor (ONNX Runtime's dynamic quantisation has no other) then holds every token at
    full resolution, as per-token quantisation would, while the outlier tokens of mpnet's
    down-projections no longer flatten the others to a few levels (measured: module docstring). The
    extra element-wise work is small beside the product it saves."""
    from onnx import helper, numpy_helper

    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    axes_input, axes_attribute = (["per_token_axes"], {}) if opset >= 18 else ([], {"axes": [-1]})
    if axes_input:  # ReduceMax takes its axes as an input from opset 18 on
        graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), axes_input[0]))
    floor = "per_token_floor"  # an all-zero row (padding) keeps its zeros instead of dividing by zero
    graph.initializer.append(numpy_helper.from_array(np.array(1e-12, dtype=np.float32), floor))
    nodes = []
    for node in graph.node:
        if node.name not in names:
            nodes.append(node)
            continue
        x, y, name = node.input[0], node.output[0], node.name
        nodes += [helper.make_node("Abs", [x], [f"{name}_abs"], name=f"{name}_Abs"),
                  helper.make_node("ReduceMax", [f"{name}_abs", *axes_input], [f"{name}_peak"], name=f"{name}_Peak",
                                   keepdims=1, **axes_attribute),
                  helper.make_node("Max", [f"{name}_peak", floor], [f"{name}_row"], name=f"{name}_Row"),
                  helper.make_node("Div", [x, f"{name}_row"], [f"{name}_scaled"], name=f"{name}_Scale")]
        node.input[0], node.output[0] = f"{name}_scaled", f"{name}_product"
        nodes += [node, helper.make_node("Mul", [f"{name}_product", f"{name}_row"], [y], name=f"{name}_Unscale")]
    del graph.node[:]
    graph.node.extend(nodes)


def _quantise_int8(source: Path, folder: Path, notify: Notify, variant: str = "all") -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    notify(f"quantising to int8 ({INT8_VARIANTS[variant]})")
    model = onnx.load(str(source / GRAPH))  # read once (the exported graph keeps its weights inside)
    every, down = _weight_matmuls(model.graph)
    kept = down if variant == "keep-down-projections" else []
    if variant in ("keep-outlier-down-projections", "per-token-outlier-down-projections") and down:
        largest = _largest_inputs(source, model, down)
        outliers = [name for name in down if len(down) > 1 and largest[name] > OUTLIER_FACTOR * float(
            np.median([value for other, value in largest.items() if other != name]))]
        if not outliers:
            raise ExportError("none of its down-projections has outlier inputs")
        if variant == "keep-outlier-down-projections":
            kept = outliers
        else:
            _scale_per_token(model, outliers)
    if not [name for name in every if name not in kept]:
        raise ExportError("it has no weight matrix that int8 can hold")
    logging.disable(logging.WARNING)  # the quantiser logs a pre-processing hint and every node
    try:
        quantize_dynamic(model, str(folder / GRAPH), weight_type=QuantType.QInt8, per_channel=True,
                         # 7-bit weights where VPMADDUBSW would saturate, 8-bit with VNNI (module docstring)
                         reduce_range=recipe("int8") == "int8",
                         # fused Attention nodes hold the Q/K/V projection of models the optimiser fuses (MiniLM)
                         op_types_to_quantize=["MatMul", "Attention"], nodes_to_exclude=kept,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT, "MatMulConstBOnly": True})
    finally:
        logging.disable(logging.NOTSET)
    _int8_word_table(folder / GRAPH)
    for file in source.iterdir():
        if file.name not in (GRAPH, MANIFEST) and not (folder / file.name).exists():
            shutil.copy2(file, folder / file.name)


def _int8_word_table(path: Path) -> None:
    """Rewrite the graph at ``path`` with its word-embedding table (the float initializer the token ids index:
    a Gather's data or an EmbedLayerNormalization's word embedding) in int8, one scale per row, dequantised
    in the graph by a DequantizeLinear of the same name (a quarter of the bytes)."""
    import onnx
    from onnx import helper, numpy_helper

    from .quantise import int8_rows

    model = onnx.load(str(path))
    graph = model.graph
    ids = {value.name for value in graph.input if value.name == "input_ids"}
    tables = {node.input[2] for node in graph.node if node.op_type == "EmbedLayerNormalization" and len(node.input) > 2}
    tables |= {node.input[0] for node in graph.node if node.op_type == "Gather" and node.input[1] in ids}
    found = [init for init in graph.initializer
             if init.name in tables and init.data_type == onnx.TensorProto.FLOAT and len(init.dims) == 2]
    for init in found:
        name = init.name
        rows, scales = int8_rows(numpy_helper.to_array(init))
        graph.initializer.remove(init)
        graph.initializer.extend([numpy_helper.from_array(rows, f"{name}.int8"), numpy_helper.from_array(scales, f"{name}.scale"),
                                  numpy_helper.from_array(np.zeros(len(scales), np.int8), f"{name}.zero")])
        graph.node.insert(0, helper.make_node("DequantizeLinear", [f"{name}.int8", f"{name}.scale", f"{name}.zero"], [name],
                                              axis=0, name=f"{name}.dequantise"))
    if found:
        onnx.save(model, str(path))


def _check(model: Any, folder: Path, precision: str) -> float:
    """The largest change of a pairwise probe cosine against PyTorch fp32 (ExportError beyond the bounds)."""
    reference = reference_vectors(model)
    encoder = OnnxEncoder(folder, threads=1)
    candidate = probe_vectors(lambda batch: encoder.embed(batch, batch_size=8)[0])
    lowest = float(np.min(np.sum(reference * candidate, axis=1)))
    drift = float(np.max(np.abs(reference @ reference.T - candidate @ candidate.T)))
    if precision in MIN_COSINE and not lowest >= MIN_COSINE[precision]:
        raise ExportError(f"its {precision} embeddings differ from PyTorch's (cosine {lowest:.4f} < "
                          f"{MIN_COSINE[precision]})")
    if not drift <= MAX_PAIR_DRIFT[precision]:
        raise ExportError(f"its {precision} similarities differ from PyTorch's by up to {drift:.3f} "
                          f"(more than {MAX_PAIR_DRIFT[precision]})")
    return drift


def _write_manifest(model: Any, folder: Path, precision: str, lowest: float | None, seconds: float,
                    variant: str | None = None) -> None:
    import onnxruntime

    graph = folder / GRAPH
    manifest = {
        "format": FORMATS[precision], "precision": precision, "recipe": recipe(precision), "int8_variant": variant,
        "graph_bytes": graph.stat().st_size, "graph_sha256": _sha256(graph),
        "graph_mtime_ns": graph.stat().st_mtime_ns,
        "max_seq_length": int(model.max_seq_length), "dimension": int(model.get_embedding_dimension()),
        "check_max_pair_drift": None if lowest is None else round(lowest, 6), "build_seconds": round(seconds, 1),
        "onnxruntime": onnxruntime.__version__,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


def ensure_artefact(cache_dir: Path, identity: str, precision: str, build_model: Callable[[], Any],
                    notify: Notify | None = None) -> Path:
    """The folder of a checked artefact for ``identity`` in ``precision`` ("fp32" or "int8"), built if needed.

    ``build_model`` returns the model in PyTorch fp32 on the CPU; it is called only when something
    must be built. Raises :class:`ExportError` (or any error of the export) when no artefact can be made.
    """
    if precision not in MAX_PAIR_DRIFT:
        raise ValueError(f"There is no ONNX artefact for precision {precision!r}.")
    final = artefact_dir(cache_dir, identity, precision)
    if read_manifest(final) is not None:
        return final
    refused = _refusal(final)
    if refused:  # a check that failed stays failed for this model version: no rebuild at every start
        raise ExportError(refused)
    from filelock import FileLock

    final.parent.mkdir(parents=True, exist_ok=True)
    say = notify or (lambda message: None)
    with FileLock(str(final.parent / f"{final.name}.lock"), timeout=1800):
        if read_manifest(final) is not None:  # another process built it while we waited
            return final
        started = time.perf_counter()
        model = build_model()
        source = ensure_artefact(cache_dir, identity, "fp32", lambda: model, notify) if precision == "int8" else None
        work = Path(tempfile.mkdtemp(prefix=f".{precision}-", dir=final.parent))
        try:
            variant = None if source is None else "all"
            if source is None:
                _export_fp32(model, work, say)
            else:
                _quantise_int8(source, work, say, variant)
            _write_manifest(model, work, precision, None, 0.0)  # the encoder reads it; final below
            say("checking it against PyTorch")
            try:
                lowest = _check(model, work, precision)
            except ExportError as exc:
                if source is None:
                    _refuse(final, str(exc))
                    raise
                lowest = None
                for variant in FALLBACK_VARIANTS:
                    logger.info("int8 variant failed (%s); trying: %s", exc, INT8_VARIANTS[variant])
                    try:
                        _quantise_int8(source, work, say, variant)
                        _write_manifest(model, work, precision, None, 0.0)
                        lowest = _check(model, work, precision)
                        break
                    except ExportError as again:
                        exc = again
                if lowest is None:
                    _refuse(final, str(exc))
                    raise exc
            _write_manifest(model, work, precision, lowest, time.perf_counter() - started, variant)
            if final.exists():
                logger.warning("Rebuilt the damaged or outdated ONNX artefact %s", final)
                shutil.rmtree(final)
            os.replace(work, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        logger.info("Built the ONNX %s artefact %s in %.1f s (largest pairwise cosine change %.4f)", precision, final,
                    time.perf_counter() - started, lowest)
    return final
