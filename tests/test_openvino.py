"""OpenVINO as runtime candidates (issue "the fastest runtime on every CPU, OpenVINO included").

A real compiled model every time: the tiny random BERT's ONNX graph read by OpenVINO in fp32 (and with
the bf16 hint where this CPU has native bf16), NNCF's int8 from STSb train sentences, each checked
against ONNX Runtime fp32 on real sentences; the candidates and their absence on a machine without
OpenVINO; the calibration set never touching dev or test. ``tests/test_reference_slow.py``-style
numbers for MiniLM and mpnet are in the slow test at the end.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

from sbert_demo.config import reload_settings
from sbert_demo.encoding import devices, model_cache, onnx_export, openvino_export, runtime_choice
from sbert_demo.encoding.devices import Hardware, choose
from sbert_demo.encoding.encoder import encode
from sbert_demo.encoding.runtime_choice import Candidate, candidates, left_out

pytest.importorskip("openvino")

SENTENCES = ["A man is playing a guitar.", "A person plays the guitar.", "Dogs run through the snow.",
             "Two dogs are running in the snow.", "The stock market fell sharply today.",
             "Shares dropped after the news.", "A woman is slicing an onion.", "The cat sleeps on the sofa.",
             "x " * 200]
ZEN4 = Hardware(cpu_bf16=True, onnx=True, openvino=True, nncf=True, cpu_threads=2, cpu_name="AMD EPYC")


def pairwise(vectors: np.ndarray) -> np.ndarray:
    return vectors @ vectors.T


def test_openvino_candidates_where_they_can_run() -> None:
    names = [c.name for c in candidates(ZEN4)]
    assert names == ["torch-fp32", "torch-bf16", "onnx-fp32", "onnx-int8", "openvino-fp32", "openvino-bf16",
                     "openvino-int8"]
    no_bf16 = Hardware(onnx=True, openvino=True, nncf=True)
    assert [c.name for c in candidates(no_bf16)][-2:] == ["openvino-fp32", "openvino-int8"]
    assert "no native bf16" in " ".join(left_out(no_bf16))
    assert Candidate("openvino", "bf16").lossless and not Candidate("openvino", "int8").lossless
    assert Candidate("openvino", "int8").label == "OpenVINO int8"


def test_a_machine_without_openvino_leaves_it_out_with_a_sentence() -> None:
    without = Hardware(cpu_bf16=True, onnx=True, openvino=False, nncf=False)
    assert not any(c.backend == "openvino" for c in candidates(without))
    assert left_out(without) == ("OpenVINO left out: openvino is not installed here (pip install -r requirements.txt).",)
    assert "nncf is not installed" in left_out(Hardware(onnx=True, openvino=True, nncf=False))[0]
    with pytest.raises(ValueError, match="needs openvino and onnxruntime"):
        choose(without, backend="openvino")
    with pytest.raises(ValueError, match="needs nncf"):
        choose(Hardware(onnx=True, openvino=True), backend="openvino", precision="int8")
    with pytest.raises(ValueError, match="no native bf16"):
        choose(Hardware(onnx=True, openvino=True), backend="openvino", precision="bf16")
    chosen = choose(ZEN4, backend="openvino")
    assert (chosen.backend, chosen.precision) == ("openvino", "bf16") and chosen.runtime.startswith("OpenVINO bf16")
    assert choose(ZEN4, backend="openvino", fast=True).precision == "int8"


def test_the_calibration_never_reads_a_dev_or_test_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.data import benchmarks

    read = []
    split = benchmarks.sts_split
    monkeypatch.setattr(benchmarks, "sts_split", lambda name, *args, **kw: read.append(name) or split(name, *args, **kw))
    texts = openvino_export.calibration_texts()
    assert read == ["train"] and len(texts) == openvino_export.CALIBRATION == len(set(texts))
    train = split("train")
    assert set(texts) <= set(train.sentences1) | set(train.sentences2)
    assert [len(t) for t in texts] == sorted(len(t) for t in texts)  # batches of like length


@pytest.fixture
def openvino_everywhere(monkeypatch):
    """The settings' auto choice, on this machine's CPU flags, with OpenVINO installed."""
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    reload_settings()


def test_openvino_embeddings_equal_onnx_runtime_fp32_within_the_bounds(tiny_sbert_in_models, openvino_everywhere,
                                                                       isolated) -> None:
    compiled = isolated.cache_dir / "openvino" / "compiled"
    compiled.mkdir(parents=True)
    (compiled / "3141592653589793.blob").write_bytes(b"a blob of the shared folder an earlier version kept")
    reference = encode(tiny_sbert_in_models, SENTENCES, use_cache=False, precision="fp32", backend="onnx")
    assert reference.runtime.startswith("ONNX Runtime fp32")
    hardware = devices.detect_hardware()
    bf16 = hardware.cpu_bf16
    for precision, bound in (("fp32", runtime_choice.MAX_DRIFT["lossless"]), *((("bf16", 0.02),) if bf16 else ()),
                             ("int8", runtime_choice.MAX_DRIFT["fast"])):
        result = encode(tiny_sbert_in_models, SENTENCES, use_cache=False, precision=precision, backend="openvino")
        assert result.runtime.startswith(f"OpenVINO {precision}"), result.runtime
        drift = np.max(np.abs(pairwise(result.embeddings) - pairwise(reference.embeddings)))
        assert drift <= bound, (precision, drift)
        if precision == "fp32":  # the same graph, the same vectors
            assert np.min(np.sum(result.embeddings * reference.embeddings, axis=1)) >= 0.9999
        assert result.truncated == reference.truncated == (8,)  # the same tokenizer and limit
    folder = openvino_export.artefact_dir(isolated.cache_dir, model_cache.loading.resolve(tiny_sbert_in_models).identity)
    manifest = openvino_export.read_manifest(folder)
    assert manifest["calibration"] == "600 STSb train sentences" and manifest["check_max_pair_drift"] <= 0.06
    # compiled models kept for the next start, a folder per precision hint: OpenVINO names a graph's blob the same
    # for fp32 and bf16, and a bf16 compile that imported the fp32 blob gave wrong vectors and crashed (AMX Xeon)
    assert not list(compiled.glob("*.blob"))  # the earlier version's flat blob is gone
    kept = {hint.name for hint in compiled.iterdir() if any(hint.iterdir())}
    assert kept == ({"f32", "bf16"} if bf16 else {"f32"})


def test_fewer_threads_than_cores_are_not_pinned_to_a_core(tiny_sbert_in_models, openvino_everywhere, isolated,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Processes of one thread each side by side (Ray actors) all ran on the first core while OpenVINO pinned them."""
    cores = len(os.sched_getaffinity(0))
    for threads in sorted({1, cores}):
        monkeypatch.setenv("SBERT_DEMO_INFERENCE_THREADS", str(threads))
        reload_settings()
        model_cache.model_cache.reset()
        resolved = model_cache.loading.resolve(tiny_sbert_in_models)
        loaded = model_cache.load(resolved, precision="fp32", backend="openvino")
        assert loaded.device.runtime.startswith("OpenVINO fp32"), loaded.device.runtime
        assert loaded.model.compiled.get_property("INFERENCE_NUM_THREADS") == threads
        assert loaded.model.compiled.get_property("ENABLE_CPU_PINNING") is (threads == cores)


def test_a_prepared_artefact_reached_through_another_cache_folder_is_not_compiled_again(
        tiny_sbert_in_models, openvino_everywhere, isolated, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache folder linking a prepared machine's parts (``link_prepared``: the test run's apps, the benches) imports
    the blob the prepared folder keeps: OpenVINO names a blob after the graph's path, which differed through each
    link, so every such process compiled again and wrote a blob of its own (mpnet: 436 MB each). The export's own
    check, compiled in a folder about to be renamed, keeps none."""
    from sbert_demo.explore.prepare import link_prepared

    compiled = isolated.cache_dir / "openvino" / "compiled"
    first = {precision: encode(tiny_sbert_in_models, SENTENCES, use_cache=False, precision=precision,
                               backend="openvino").embeddings for precision in ("fp32", "int8")}
    kept = sorted(compiled.rglob("*.blob"))
    assert len(kept) == 2, kept  # the fp32 graph and the int8 model, compiled once each: none for the int8 check
    elsewhere = link_prepared(tmp_path / "another-cache", isolated.cache_dir)
    monkeypatch.setenv("SBERT_DEMO_CACHE", str(elsewhere))
    reload_settings()
    model_cache.model_cache.reset()
    for precision, vectors in first.items():
        again = encode(tiny_sbert_in_models, SENTENCES, use_cache=False, precision=precision, backend="openvino")
        assert again.runtime.startswith(f"OpenVINO {precision}") and np.array_equal(again.embeddings, vectors)
    assert sorted(compiled.rglob("*.blob")) == kept


def test_an_int8_model_that_cannot_be_made_falls_back_to_onnx_runtime(tiny_sbert_in_models, openvino_everywhere,
                                                                      monkeypatch, caplog) -> None:
    def refused(*args, **kwargs):
        raise onnx_export.ExportError("its int8 similarities differ from PyTorch's by up to 0.300")

    monkeypatch.setattr(openvino_export, "ensure_int8", refused)
    with caplog.at_level(logging.WARNING):
        result = encode(tiny_sbert_in_models, SENTENCES, use_cache=False, precision="int8", backend="openvino")
    assert result.runtime.startswith("ONNX Runtime int8")
    assert "instead of OpenVINO int8" in caplog.text and "0.300" in caplog.text


def test_the_measurement_times_openvino_and_is_made_again_for_another_cpu(tiny_sbert_in_models, openvino_everywhere,
                                                                          isolated, monkeypatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_RUNTIME_CHOICE", "measure")
    reload_settings()
    encode(tiny_sbert_in_models, SENTENCES, use_cache=False, fast=True)
    decision = model_cache.runtime_decision(tiny_sbert_in_models)
    timed = {m.candidate.name: m for m in decision.measured}
    assert {"openvino-fp32", "openvino-int8"} <= set(timed) and not timed["openvino-fp32"].refused
    assert timed["openvino-fp32"].drift <= runtime_choice.MAX_DRIFT["lossless"]
    import openvino

    assert f"openvino {openvino.__version__}" in decision.machine
    other = devices.Hardware(**{**devices.detect_hardware().__dict__, "cpu_name": "Another CPU"})
    assert runtime_choice.stored(isolated.cache_dir, other, model_cache.loading.resolve(tiny_sbert_in_models).identity) \
        is None  # another CPU: measured again there
