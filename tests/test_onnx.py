"""The ONNX Runtime path: runtime choice, artefacts (built once, checked, rebuilt when damaged),
the same embeddings as plain sentence-transformers, fallback to PyTorch, and labels on every number.

Tiny random BERTs keep this fast; tests/test_reference_slow.py checks the real models' Spearman.
"""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from sbert_demo.config import reload_settings

from sbert_demo.encoding import devices, model_cache, onnx_export
from sbert_demo.encoding.devices import Hardware, choose
from sbert_demo.encoding.encoder import encode
from sbert_demo.encoding.onnx_encoder import OnnxEncoder

AVX2 = Hardware(cpu_bf16=False, onnx=True, cpu_threads=2)
TEXTS = ["A man is playing a guitar.", "A person plays the guitar.", "Dogs run in the snow.",
         "The market fell after the news.", "¿Dónde está la estación? 🚆", "x " * 300]


@pytest.mark.parametrize("hardware, kwargs, expected", [
    (AVX2, {}, ("onnx", "fp32")),  # lossless by default
    (AVX2, {"fast": True}, ("onnx", "int8")),
    (AVX2, {"precision": "fp32"}, ("torch", "fp32")),  # an explicit fp32 means plain PyTorch
    (AVX2, {"precision": "int8"}, ("onnx", "int8")),
    (AVX2, {"backend": "torch", "fast": True}, ("torch", "fp32")),
    (AVX2, {"backend": "onnx"}, ("onnx", "fp32")),
    (Hardware(cpu_bf16=True, onnx=True), {"fast": True}, ("torch", "bf16")),  # bf16 stays where it is native
    (Hardware(cpu_bf16=True, onnx=True), {"backend": "onnx"}, ("onnx", "fp32")),
    (Hardware(onnx=False), {"fast": True}, ("torch", "fp32")),  # no onnxruntime: plain PyTorch
    (Hardware(cuda=True, cuda_bf16=True, onnx=True), {"fast": True}, ("torch", "bf16")),
    (AVX2, {"matmul_heavy": False, "fast": True}, ("torch", "fp32")),  # word vectors
    (AVX2, {"matmul_heavy": False, "precision": "int8"}, ("torch", "fp32")),
])
def test_runtime_choice(hardware, kwargs, expected):
    choice = choose(hardware, **kwargs)
    assert (choice.backend, choice.precision) == expected
    engine = "ONNX Runtime" if expected[0] == "onnx" else "PyTorch"
    assert choice.runtime.startswith(f"{engine} {expected[1]}, ")


@pytest.mark.parametrize("hardware, kwargs, words", [
    (AVX2, {"backend": "torch", "precision": "int8"}, "int8 runs on the ONNX back-end"),
    (AVX2, {"backend": "onnx", "precision": "bf16"}, "bf16 runs on the PyTorch back-end"),
    (Hardware(onnx=False), {"backend": "onnx"}, "needs onnxruntime"),
    (Hardware(cuda=True, onnx=True), {"device": "cuda", "backend": "onnx"}, "runs on the CPU"),
    (AVX2, {"backend": "tensorrt"}, "not valid"),
])
def test_impossible_runtime_requests_are_sentences(hardware, kwargs, words):
    with pytest.raises(ValueError, match=words):
        choose(hardware, **kwargs)


@pytest.fixture
def onnx_auto(monkeypatch):
    """The app's defaults on a CPU without native bf16 (like the AMD EPYC this was measured on)."""
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    reload_settings()
    monkeypatch.setattr(devices, "detect_hardware", lambda: AVX2)


def test_onnx_fp32_matches_plain_sentence_transformers(tiny_sbert, tiny_sbert_in_models, onnx_auto, plain_sbert,
                                                       tiny_bert, isolated):
    result = encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    assert result.runtime == "ONNX Runtime fp32, CPU (2 threads)"
    plain = plain_sbert(tiny_bert, "mean").encode(TEXTS, normalize_embeddings=True)
    assert np.allclose(result.embeddings, plain, atol=1e-5)
    assert result.truncated == (5,)  # the 300-word text is past the tiny model's 64 tokens, as in PyTorch
    torch_result = encode(tiny_sbert_in_models, TEXTS, use_cache=False, precision="fp32")
    assert torch_result.runtime.startswith("PyTorch fp32") and torch_result.truncated == (5,)
    folders = list((isolated.cache_dir / "onnx").glob("*/fp32"))
    assert len(folders) == 1 and onnx_export.read_manifest(folders[0])["dimension"] == 32


def test_tokens_match_sentence_transformers(tiny_sbert, plain_sbert, tiny_bert, tmp_path):
    folder = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", lambda: plain_sbert(tiny_bert, "mean", cached=False))
    encoder = OnnxEncoder(folder)
    texts = ["Hello WORLD", "  padded  ", "naïve café", "emoji 🚆 here", "<b>tag</b>", "a " * 100]
    ids, cut = encoder.tokenize(texts)
    reference = plain_sbert(tiny_bert, "mean").preprocess(texts)
    for row, tokens in enumerate(ids):
        expected = reference["input_ids"][row][reference["attention_mask"][row].bool()].tolist()
        assert tokens == expected
    assert cut == {5}


def test_batches_stream_in_length_order_and_stop_when_abandoned(plain_sbert, tiny_bert, tmp_path):
    import time

    from sbert_demo.encoding import onnx_encoder

    model = plain_sbert(tiny_bert, "mean", cached=False)
    folder = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", lambda: model)
    texts = [" ".join(["a"] * n) for n in (3, 40, 7, 1, 25, 12, 9, 30, 2, 18, 5, 70)] * 2  # a token per word
    encoder = OnnxEncoder(folder, threads=2)
    cut, batches = encoder.stream(texts, batch_size=2)
    seen = list(batches)
    positions = np.concatenate([batch for batch, _ in seen])
    assert sorted(positions.tolist()) == list(range(len(texts)))  # every text once
    lengths = [len(texts[i].split()) for i in positions]
    assert lengths == sorted(lengths, reverse=True)  # longest first: batches padded to similar lengths
    expected = model.encode(texts, normalize_embeddings=True)
    for batch, vectors in seen:
        assert np.allclose(vectors, expected[batch], atol=1e-5)
    assert cut == {11, 23}  # 70 words: past the tiny model's 64 tokens

    calls = []
    run = encoder._run
    # the first batch (the 70-word texts, cut to 64 tokens) is quick, the others slow
    encoder._run = lambda ids: calls.append(len(ids)) or time.sleep(0 if len(ids[0]) == 64 else 1) or run(ids)
    _, batches = encoder.stream(texts, batch_size=2)
    next(batches)  # the first batch is done, the next one or two are running, the fourth waits in the pool
    batches.close()  # e.g. a cancelled request: what has not started is dropped
    for future in [onnx_encoder._pool().submit(lambda: None) for _ in range(4)]:
        future.result()  # the pool has worked through everything queued before these
    assert onnx_encoder.LOOKAHEAD * encoder.threads == 4 and len(calls) in (2, 3)  # of 12 batches


def test_onnx_progress_and_cache_see_every_text_once(tiny_sbert_in_models, onnx_auto, isolated):
    texts = [f"Sentence number {i} has {'many ' * (i % 13)}words." for i in range(600)]
    steps = []
    first = encode(tiny_sbert_in_models, texts, progress=lambda done, total: steps.append((done, total)))
    assert first.computed == 600 and first.runtime.startswith("ONNX Runtime fp32")
    assert steps[0] == (0, 600) and steps[-1] == (600, 600) and len(steps) >= 3  # reported per step of 256
    assert [done for done, _ in steps] == sorted(done for done, _ in steps)
    again = encode(tiny_sbert_in_models, texts)
    assert again.cached == 600 and again.computed == 0  # every chunk was stored as it finished
    assert np.array_equal(again.embeddings, first.embeddings)


@pytest.mark.parametrize("pooling", ["cls", "max"])
def test_other_poolings_export_exactly(pooling, plain_sbert, tiny_bert, tmp_path):
    model = plain_sbert(tiny_bert, pooling, cached=False)
    folder = onnx_export.ensure_artefact(tmp_path, f"tiny-{pooling}", "fp32", lambda: model)
    vectors, _ = OnnxEncoder(folder).embed(TEXTS[:5])
    assert np.allclose(vectors, model.encode(TEXTS[:5], normalize_embeddings=True), atol=1e-5)


def test_artefact_is_built_once_and_rebuilt_when_damaged(plain_sbert, tiny_bert, tmp_path, caplog):
    builds = []

    def build():
        builds.append(1)
        return plain_sbert(tiny_bert, "mean", cached=False)

    folder = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", build)
    assert onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", build) == folder and len(builds) == 1
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]  # no temporary folders left

    with open(folder / onnx_export.GRAPH, "r+b") as graph:  # flip bytes in the middle: a damaged file
        graph.seek(graph.seek(0, 2) // 2)
        graph.write(b"\0" * 64)
    assert onnx_export.read_manifest(folder) is None
    with caplog.at_level(logging.WARNING):
        onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", build)
    assert len(builds) == 2 and onnx_export.read_manifest(folder) is not None
    assert "Rebuilt the damaged or outdated ONNX artefact" in caplog.text

    (folder / onnx_export.MANIFEST).unlink()  # an interrupted build (no manifest): rebuilt too
    onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", build)
    assert len(builds) == 3
    manifest = json.loads((folder / onnx_export.MANIFEST).read_text())
    assert manifest["precision"] == "fp32" and manifest["check_max_pair_drift"] <= onnx_export.MAX_PAIR_DRIFT["fp32"]


def test_int8_is_checked_against_pytorch(plain_sbert, tiny_bert, tmp_path):
    model = plain_sbert(tiny_bert, "mean", cached=False)
    try:
        folder = onnx_export.ensure_artefact(tmp_path, "tiny", "int8", lambda: model)
    except onnx_export.ExportError as exc:  # refused: recorded, so the next start does not retry
        with pytest.raises(onnx_export.ExportError, match="differ"):
            onnx_export.ensure_artefact(tmp_path, "tiny", "int8", lambda: pytest.fail("rebuilt a refused artefact"))
        assert "differ" in str(exc)
        return
    vectors, _ = OnnxEncoder(folder).embed(list(onnx_export.PROBES))
    reference = model.encode(list(onnx_export.PROBES), normalize_embeddings=True)
    drift = np.abs(vectors @ vectors.T - reference @ reference.T).max()
    assert drift <= onnx_export.MAX_PAIR_DRIFT["int8"]
    assert OnnxEncoder(folder).size_mb < OnnxEncoder(tmp_path / "onnx" / "tiny" / "fp32").size_mb


def test_the_checks_run_the_probe_past_the_token_limit_alone(plain_sbert, tiny_bert):
    """The probes run as two batches: the short ones padded together (the mask at work) and the one past the
    token limit by itself, so the check never pads every probe to the limit; the vectors are one batch's."""
    model = plain_sbert(tiny_bert, "mean", cached=False)
    batches = []
    encode = model.encode
    model.encode = lambda texts, **kwargs: batches.append(list(texts)) or encode(texts, **kwargs)
    vectors = onnx_export.reference_vectors(model)
    assert batches == [list(onnx_export.PROBES[:-1]), [onnx_export.PROBES[-1]]]
    assert len(model.tokenizer(onnx_export.PROBES[-1])["input_ids"]) > model.max_seq_length  # past the limit
    assert max(len(model.tokenizer(probe)["input_ids"]) for probe in onnx_export.PROBES[:-1]) < 40
    together = encode(list(onnx_export.PROBES), normalize_embeddings=True, batch_size=len(onnx_export.PROBES))
    assert vectors.shape == together.shape
    assert np.allclose(vectors, together, atol=1e-5)


def test_the_int8_graph_holds_its_word_table_in_int8(plain_sbert, tiny_bert, tmp_path):
    """The word-embedding table (what a published page downloads most of) is int8 with one scale per row, read
    back within half a step of the fp32 table."""
    import onnx
    from onnx import numpy_helper

    model = plain_sbert(tiny_bert, "mean", cached=False)
    source = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", lambda: model)
    out = tmp_path / "int8"
    out.mkdir()
    onnx_export._quantise_int8(source, out, lambda step: None)
    table = model[0].auto_model.get_input_embeddings().weight.detach().numpy()
    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(out / onnx_export.GRAPH)).graph.initializer}
    floats = [name for name, value in weights.items() if value.dtype == np.float32 and value.shape == table.shape]
    assert floats == []  # no fp32 copy of the table is left
    (name,) = [name for name, value in weights.items() if value.dtype == np.int8 and value.shape == table.shape]
    scales = weights[name.replace(".int8", ".scale")]
    assert np.abs(weights[name] * scales[:, None] - table).max() <= scales.max() / 2 + 1e-7
    used = np.abs(table).max(axis=1) > 0  # the padding token's row is zeros, and stays so
    assert np.all(np.abs(weights[name][used]).max(axis=1) == 127) and not weights[name][~used].any()


def test_int8_weights_use_8_bits_only_on_cpus_with_vnni(plain_sbert, tiny_bert, tmp_path, monkeypatch):
    """Without VNNI the weights keep to 7 bits (VPMADDUBSW's 16-bit sums would saturate); with it all 8
    bits, in an artefact of its own (another folder, another embedding-cache tag)."""
    import onnx
    from onnx import numpy_helper

    from sbert_demo.encoding import cpu

    model = plain_sbert(tiny_bert, "mean", cached=False)
    source = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", lambda: model)
    largest = {}
    for flags, name in ((frozenset({"avx2", "avx512f"}), "int8"), (frozenset({"avx2", "avx512_vnni"}), "int8-w8")):
        monkeypatch.setattr(cpu, "cpu_flags", lambda flags=flags: flags)
        assert onnx_export.artefact_dir(tmp_path, "tiny", "int8").name == name
        out = tmp_path / name
        out.mkdir()
        onnx_export._quantise_int8(source, out, lambda step: None)
        weights = [numpy_helper.to_array(t) for t in onnx.load(str(out / onnx_export.GRAPH)).graph.initializer
                   if t.data_type == onnx.TensorProto.INT8 and t.dims and len(t.dims) == 2
                   and not t.name.endswith(".int8")]  # the word table is dequantised, never multiplied: 8 bits
        assert weights, "no int8 weight matrix in the quantised graph"
        largest[name] = max(int(np.abs(w.astype(np.int16)).max()) for w in weights)
    assert largest["int8"] <= 64 < largest["int8-w8"] <= 127


def test_down_projections_are_found_fused_or_not(plain_sbert, tiny_bert, tmp_path):
    """The feed-forward down-projections (hidden 64 -> 32, one per layer) are told apart from the
    other weight matrices in the fused graph and in the plain exported one (unfused GELU: Erf)."""
    import onnx

    model = plain_sbert(tiny_bert, "mean", cached=False)
    folder = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", lambda: model)
    fused = onnx.load(str(folder / onnx_export.GRAPH))
    plain_folder = tmp_path / "plain"
    plain_folder.mkdir()
    with pytest.MonkeyPatch.context() as patch:  # the graph as exported, before the optimiser fuses it
        patch.setattr("onnxruntime.transformers.optimizer.optimize_model",
                      lambda *args, **kwargs: (_ for _ in ()).throw(RuntimeError("no fusion in this test")))
        onnx_export._export_fp32(model, plain_folder, lambda message: None)
    plain = onnx.load(str(plain_folder / onnx_export.GRAPH))
    assert "Erf" in {node.op_type for node in plain.graph.node}
    for graph in (fused.graph, plain.graph):
        shapes = {t.name: list(t.dims) for t in graph.initializer}
        weights = {n.name: shapes[n.input[1]] for n in graph.node if n.op_type == "MatMul" and n.input[1] in shapes}
        every, down = onnx_export._weight_matmuls(graph)
        assert len(down) == 2 and all(weights[name] == [64, 32] for name in down)
        assert sorted(every) == sorted(weights) and len(every) > len(down)


@pytest.mark.parametrize("failures, variant, kept", [
    (1, "per-token-outlier-down-projections", 0),  # all in int8; the outlier one's input scaled per token
    (2, "keep-outlier-down-projections", 1),  # the one down-projection with outlier inputs stays fp32
    (3, "keep-down-projections", 2),  # that is not enough: all of them stay fp32
])
def test_int8_keeps_down_projections_in_fp32_when_the_full_variant_fails(plain_sbert, tiny_bert, tmp_path,
                                                                         monkeypatch, failures, variant, kept):
    import onnx

    model = plain_sbert(tiny_bert, "mean", cached=False)
    checked, drifts = [], []
    real_check = onnx_export._check

    def check(model, folder, precision):
        checked.append(precision)
        if precision == "int8" and checked.count("int8") <= failures:
            raise onnx_export.ExportError("its int8 similarities differ (failing on purpose in this test)")
        drifts.append(real_check(model, folder, precision))
        return drifts[-1]

    def largest(source, model, names):  # the first layer's down-projection sees outliers
        return {name: 100.0 if "layer.0/" in name else 1.0 for name in names}

    monkeypatch.setattr(onnx_export, "_check", check)
    monkeypatch.setattr(onnx_export, "_largest_inputs", largest)
    # The app's own drift bounds (the tiny model's int8 moves its probe cosines by about 3e-5).
    folder = onnx_export.ensure_artefact(tmp_path, "tiny", "int8", lambda: model)
    assert checked == ["fp32"] + ["int8"] * (failures + 1)
    assert len(drifts) == 2 and drifts[0] <= onnx_export.MAX_PAIR_DRIFT["fp32"]
    assert 0 < drifts[1] <= onnx_export.MAX_PAIR_DRIFT["int8"]
    assert json.loads((folder / onnx_export.MANIFEST).read_text())["int8_variant"] == variant
    graph = onnx.load(str(folder / onnx_export.GRAPH)).graph
    shapes = {t.name: list(t.dims) for t in graph.initializer}
    float_matmuls = [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in shapes]
    assert [shapes[n.input[1]] for n in float_matmuls] == [[64, 32]] * kept  # only down-projections stayed float
    assert kept != 1 or "layer.0/" in float_matmuls[0].name
    scaled = [n.name for n in graph.node if n.name.endswith("_Unscale")]
    assert len(scaled) == (variant == "per-token-outlier-down-projections") and all("layer.0/" in n for n in scaled)
    assert any(n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul") for n in graph.node)
    vectors, _ = OnnxEncoder(folder).embed(TEXTS)
    reference = model.encode(TEXTS, normalize_embeddings=True)
    assert np.min(np.sum(vectors * reference, axis=1)) > 0.9


@pytest.mark.parametrize("opset", [17, 18])  # ReduceMax's axes: an attribute, then an input
def test_per_token_scaling_keeps_the_product_and_rescues_the_other_tokens(tmp_path, opset):
    """``(x / r) @ W * r`` with each token's own peak ``r`` is the same product in fp32; quantised with one
    activation scale per tensor, tokens beside an outlier token keep their resolution (mpnet's case)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(0)
    weight = rng.normal(size=(64, 16)).astype(np.float32)
    x = rng.normal(size=(1, 6, 64)).astype(np.float32)
    x[0, 0] *= 200.0  # one outlier token (as mpnet's down-projections see), five ordinary ones
    x[0, 5] = 0.0  # a padded position stays zero instead of dividing by zero

    def graph_file(name: str, per_token: bool, quantised: bool) -> str:
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="down")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, None, 64])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, None, 16])],
                                  [numpy_helper.from_array(weight, "W")])
        imports = [helper.make_opsetid("", opset)]  # the IR version the opset needs, which every ONNX Runtime reads
        model = helper.make_model(graph, opset_imports=imports, ir_version=helper.find_min_ir_version_for(imports))
        if per_token:
            onnx_export._scale_per_token(model, ["down"])
        path = str(tmp_path / name)
        if quantised:
            quantize_dynamic(model, path, weight_type=QuantType.QInt8, per_channel=True,
                             reduce_range=onnx_export.recipe("int8") == "int8",  # as the app: 7 bits without VNNI
                             extra_options={"MatMulConstBOnly": True})
        else:
            onnx.save(model, path)
        return path

    def run(path: str) -> np.ndarray:
        return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]

    exact = x @ weight
    assert np.allclose(run(graph_file("scaled.onnx", True, False)), exact, rtol=1e-5, atol=1e-4)
    per_tensor = run(graph_file("per-tensor.onnx", False, True))
    per_token = run(graph_file("per-token.onnx", True, True))
    assert np.all(per_token[0, 5] == 0.0)

    def error(y: np.ndarray, rows: slice) -> float:
        return float(np.abs(y[0, rows] - exact[0, rows]).max() / np.abs(exact[0, rows]).max())

    assert error(per_token, slice(1, 5)) < 0.05 < error(per_tensor, slice(1, 5))  # the ordinary tokens
    assert error(per_token, slice(0, 1)) < 0.05  # and the outlier token itself


def test_largest_down_projection_inputs_match_pytorch(plain_sbert, tiny_bert, tmp_path):
    """The calibration reads the GELU outputs of real tokens: the same maxima as PyTorch's hooks give."""
    import onnx
    import torch

    model = plain_sbert(tiny_bert, "mean", cached=False)
    folder = onnx_export.ensure_artefact(tmp_path, "tiny", "fp32", lambda: model)
    graph = onnx.load(str(folder / onnx_export.GRAPH))
    _, down = onnx_export._weight_matmuls(graph.graph)
    outputs = list(graph.graph.output)
    got = onnx_export._largest_inputs(folder, graph, down)
    assert list(graph.graph.output) == outputs  # the caller's graph is left as it was
    bert = model[0].auto_model
    seen = {}
    hooks = [layer.intermediate.register_forward_hook(lambda module, args, out, i=i: seen.__setitem__(i, out))
             for i, layer in enumerate(bert.encoder.layer)]
    features = model.preprocess(list(onnx_export.PROBES))
    with torch.no_grad():
        bert(input_ids=features["input_ids"], attention_mask=features["attention_mask"])
    for hook in hooks:
        hook.remove()
    mask = features["attention_mask"].bool()
    expected = {i: float(out[mask].abs().max()) for i, out in seen.items()}
    assert sorted(got) == sorted(down)
    for name, value in got.items():
        layer = int(name.split("layer.")[1].split("/")[0])
        assert value == pytest.approx(expected[layer], rel=1e-4)


def test_failed_export_falls_back_to_pytorch_once(tiny_sbert_in_models, onnx_auto, monkeypatch, caplog, plain_sbert,
                                                  tiny_bert):
    def broken(*args, **kwargs):
        raise onnx_export.ExportError("the exporter is broken in this test")

    monkeypatch.setattr(onnx_export, "_export_fp32", broken)
    with caplog.at_level(logging.WARNING):
        first = encode(tiny_sbert_in_models, TEXTS[:3], use_cache=False)
        second = encode(tiny_sbert_in_models, TEXTS[:3], use_cache=False)
    assert first.runtime.startswith("PyTorch fp32") and second.runtime.startswith("PyTorch fp32")
    assert caplog.text.count("the exporter is broken in this test") == 1  # logged once
    plain = plain_sbert(tiny_bert, "mean").encode(TEXTS[:3], normalize_embeddings=True)
    assert np.allclose(first.embeddings, plain, atol=1e-5)


def test_cache_keys_and_labels_follow_the_runtime(tiny_sbert_in_models, onnx_auto, isolated):
    from sbert_demo.encoding.embedding_cache import embedding_cache

    lossless = encode(tiny_sbert_in_models, TEXTS[:4])
    again = encode(tiny_sbert_in_models, TEXTS[:4])
    assert again.from_cache and again.runtime == lossless.runtime == "ONNX Runtime fp32, CPU (2 threads)"
    fast = encode(tiny_sbert_in_models, TEXTS[:4], fast=True)
    assert not fast.from_cache or fast.runtime == lossless.runtime  # computed again unless int8 fell back to fp32
    identity = model_cache.load(tiny_sbert_in_models).identity
    assert embedding_cache().count(f"{identity}|onnx|fp32|cpu") == 4
    assert embedding_cache().count(f"{identity}|torch|fp32|cpu") == 0


def test_explore_repeats_come_from_the_result_cache(tiny_sbert_in_models, onnx_auto):
    from sbert_demo.explore.exploration import explore

    sentences = ["A cat sleeps.", "A kitten naps.", "Stocks fell.", "Markets dropped.", "It rains."]
    first = explore(sentences, None, [tiny_sbert_in_models, "glove-6b-50d"])
    second = explore(sentences, None, [tiny_sbert_in_models, "glove-6b-50d"])
    assert [m.cached for m in second.models] == [True, True]
    for a, b in zip(first.models, second.models):
        assert np.array_equal(a.sim, b.sim) and a.ranking == b.ranking
        assert np.array_equal(a.projection.coords, b.projection.coords)
    assert first.models[1].runtime.startswith("PyTorch fp32")  # GloVe: word vectors stay in PyTorch
    assert first.models[0].runtime.startswith("ONNX Runtime")
    assert second.as_json()["models"][0]["runtime"] == first.models[0].runtime
    unseen = ["Birds sing at dawn.", "A dog barks.", "Rain falls.", "The bus is late."]
    other = explore(unseen, None, [tiny_sbert_in_models])  # sentences never encoded: computed afresh
    assert not other.models[0].cached and other.models[0].sim.shape == (4, 4)


SIDE_BY_SIDE = """
import json, sys, threading
from sbert_demo.encoding import model_cache  # as the app has it when it starts: transformers not imported yet
keys = sys.argv[1:]
gate = threading.Barrier(len(keys))
runtimes = {}
def load(key):
    gate.wait()
    try:
        runtimes[key] = model_cache.load(key, backend="onnx", precision="fp32").device.runtime
    except Exception as exc:
        runtimes[key] = repr(exc)
threads = [threading.Thread(target=load, args=(key,)) for key in keys]
[thread.start() for thread in threads]
[thread.join() for thread in threads]
print(json.dumps(runtimes))
"""


def test_models_loaded_side_by_side_first_thing_run_where_asked(make_tiny_bert, plain_sbert, isolated):
    """Two graph models loaded by two threads at the same moment, first thing in a new process (the app's start: the
    first page drawn while the background warm-up loads the next model): each runs where it was asked, every time.
    Both threads imported transformers at once, and one of them failed ("cannot import name 'AutoTokenizer' from
    'transformers'") and ran in another runtime for the rest of the process (here: 6 processes in 6 had one or two of
    these three on PyTorch; the app's start with MiniLM and mpnet on OpenVINO: 3 in 3)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    keys = ["tiny-a", "tiny-b", "tiny-c"]
    for seed, key in enumerate(keys):  # other weights: other identities, so three builds, not one
        plain_sbert(make_tiny_bert(isolated.models_dir.parent / f"bert-{key}", seed=seed), cached=False).save(
            str(isolated.models_dir / key))
        assert model_cache.load(key, backend="onnx", precision="fp32").device.backend == "onnx"  # artefact built
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", SIDE_BY_SIDE, *keys], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    runtimes = json.loads(done.stdout.strip().splitlines()[-1])
    assert runtimes == {key: model_cache.load(key, backend="onnx", precision="fp32").device.runtime for key in keys}
    assert all(runtime.startswith("ONNX Runtime fp32, CPU") for runtime in runtimes.values()), runtimes
