"""The CPU runtime chosen by measuring (sbert_demo/encoding/runtime_choice.py), with a tiny model.

Every candidate really runs (PyTorch fp32, bf16 where the CPU has it, ONNX Runtime fp32 and int8);
the decision is stored per machine and model version, read back instead of measured again, and
measured again for another CPU or a retrained model. Which candidate is fastest on the tiny model is
the machine's business: the tests check that the chosen one is the fastest that keeps the numbers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from sbert_demo.config import reload_settings
from sbert_demo.encoding import model_cache, runtime_choice
from sbert_demo.encoding.encoder import encode
from sbert_demo.encoding.runtime_choice import Candidate, Measured, pick
from sbert_demo.models.loading import resolve
from test_cross_encoder import trained_cross_encoder  # noqa: F401 (fixture)

TEXTS = ["a man is playing a guitar", "a dog runs in the park", "the market fell today"]


@pytest.fixture
def measuring(monkeypatch):
    """The deployment's defaults: everything on auto, the runtime measured."""
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    monkeypatch.setenv("SBERT_DEMO_RUNTIME_CHOICE", "measure")
    reload_settings()
    calls = []
    measure = runtime_choice.measure
    monkeypatch.setattr(runtime_choice, "measure", lambda *a, **k: calls.append(1) or measure(*a, **k))
    return calls


def stored(isolated) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((isolated.cache_dir / "runtime").rglob("*.json"))]


def test_the_fastest_candidate_that_keeps_the_numbers_is_used(tiny_sbert_in_models, measuring, isolated) -> None:
    fast = encode(tiny_sbert_in_models, TEXTS, use_cache=False, fast=True)
    lossless = encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    assert measuring == [1]  # measured once, for both paths
    (decision,) = stored(isolated)
    names = [m["candidate"]["backend"] + "-" + m["candidate"]["precision"] for m in decision["measured"]]
    assert names[0] == "torch-fp32" and {"onnx-fp32", "onnx-int8"} <= set(names)
    measured = tuple(runtime_choice.Decision.from_json(decision).measured)
    assert all(m.refused or (m.cold > 0 and m.warm > 0) for m in measured)
    assert measured[0].drift == 0.0 and not measured[0].refused
    for path, result in (("fast", fast), ("lossless", lossless)):
        chosen = Candidate(**decision[path])
        assert chosen == pick(measured, fast=path == "fast")
        assert result.runtime.startswith(chosen.label), (path, result.runtime)
        usable = [m for m in measured if not m.refused and m.drift <= runtime_choice.MAX_DRIFT[path]
                  and (path == "fast" or m.candidate.lossless)]
        assert min(usable, key=lambda m: m.score(path == "fast")).candidate == chosen
    assert Candidate(**decision["lossless"]).precision != "int8"
    plain = encode(tiny_sbert_in_models, TEXTS, use_cache=False, precision="fp32").embeddings
    assert np.allclose(lossless.embeddings, plain, atol=0.02)


@pytest.mark.slow  # ~33 s of measuring
def test_the_decision_is_kept_and_made_again_for_another_cpu_or_model(tiny_sbert_in_models, measuring,
                                                                      isolated, monkeypatch) -> None:
    encode(tiny_sbert_in_models, TEXTS, use_cache=False, fast=True)
    assert measuring == [1]
    runtime_choice.decisions.clear()
    model_cache.model_cache().clear()
    encode(tiny_sbert_in_models, TEXTS, use_cache=False, fast=True)
    assert measuring == [1]  # read back from the cache folder after a "restart"
    machine = runtime_choice.machine_identity
    monkeypatch.setattr(runtime_choice, "machine_identity", lambda hardware: machine(hardware) + " | another CPU")
    encode(tiny_sbert_in_models, TEXTS, use_cache=False, fast=True)
    assert measuring == [1, 1] and len(stored(isolated)) == 2
    before = resolve(tiny_sbert_in_models).identity
    folder = isolated.models_dir / tiny_sbert_in_models
    config = folder / "config_sentence_transformers.json"
    config.write_text(config.read_text() + " ")  # a new version of the model
    assert resolve(tiny_sbert_in_models).identity != before
    encode(tiny_sbert_in_models, TEXTS, use_cache=False, fast=True)
    assert measuring == [1, 1, 1] and len(stored(isolated)) == 3


@pytest.mark.slow  # ~22 s of measuring
def test_a_damaged_decision_file_is_measured_again(tiny_sbert_in_models, measuring, isolated) -> None:
    encode(tiny_sbert_in_models, TEXTS[:1], use_cache=False)
    (path,) = (isolated.cache_dir / "runtime").rglob("*.json")
    path.write_text("{not json")
    runtime_choice.decisions.clear()
    encode(tiny_sbert_in_models, TEXTS[:1], use_cache=False)
    assert measuring == [1, 1] and json.loads(path.read_text())["format"] == runtime_choice.FORMAT


def test_explicit_settings_and_the_rules_are_obeyed(tiny_sbert_in_models, measuring, monkeypatch) -> None:
    assert encode(tiny_sbert_in_models, TEXTS, use_cache=False, precision="fp32").runtime.startswith("PyTorch fp32")
    monkeypatch.setenv("SBERT_DEMO_BACKEND", "onnx")
    reload_settings()
    assert encode(tiny_sbert_in_models, TEXTS, use_cache=False, fast=True).runtime.startswith("ONNX Runtime")
    monkeypatch.setenv("SBERT_DEMO_BACKEND", "auto")
    monkeypatch.setenv("SBERT_DEMO_RUNTIME_CHOICE", "rules")
    reload_settings()
    encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    assert measuring == []  # nothing measured when a choice is explicit or the rules are asked for


def test_word_vectors_are_not_measured(measuring) -> None:
    assert encode("glove-6b-50d", TEXTS, use_cache=False).runtime.startswith("PyTorch fp32")
    assert measuring == []


def test_pick_leaves_out_what_changes_the_numbers_or_could_not_run() -> None:
    fp32 = Measured(Candidate("torch", "fp32"), cold=100, warm=100)
    bf16 = Measured(Candidate("torch", "bf16"), cold=150, warm=400, drift=0.03)  # beyond the lossless bound
    onnx = Measured(Candidate("onnx", "fp32"), cold=140, warm=150, drift=0.0005)
    int8 = Measured(Candidate("onnx", "int8"), refused="its int8 similarities differ from PyTorch's")
    assert pick((fp32, bf16, onnx, int8), fast=False) == onnx.candidate
    assert pick((fp32, bf16, onnx, int8), fast=True) == bf16.candidate  # within the fast bound (0.06)
    assert pick((Measured(Candidate("onnx", "int8"), refused="no onnxruntime"),), fast=True) == runtime_choice.REFERENCE
    slow_first = Measured(Candidate("torch", "bf16"), cold=20, warm=1000)  # fast again, very slow on new shapes
    assert pick((fp32, slow_first), fast=True) == fp32.candidate  # Explore: a few new sentences at a time
    assert pick((fp32, slow_first), fast=False) == slow_first.candidate  # benchmarks: shapes repeat


def test_a_cross_encoder_is_measured_among_pytorch_runtimes(trained_cross_encoder, measuring, isolated) -> None:
    from test_cross_encoder import NAME

    from sbert_demo.encoding.pair_scores import score_pairs

    scored = score_pairs(NAME, TEXTS[:2], TEXTS[1:])
    (decision,) = stored(isolated)
    names = {m["candidate"]["backend"] for m in decision["measured"]}
    assert names == {"torch"}  # no ONNX export for a cross-encoder
    chosen = Candidate(**decision["lossless"])
    assert scored.runtime.startswith(chosen.label) and measuring == [1]
    plain = score_pairs(NAME, TEXTS[:2], TEXTS[1:], precision="fp32", use_cache=False)
    assert np.allclose(scored.scores, plain.scores, atol=0.02)


def _bf16_measured(fp32_rate: float, bf16_rate: float, machine: str) -> runtime_choice.Decision:
    measured = (Measured(Candidate("torch", "fp32"), cold=fp32_rate, warm=fp32_rate),
                Measured(Candidate("torch", "bf16"), cold=bf16_rate, warm=bf16_rate, drift=0.002))
    return runtime_choice.Decision(runtime_choice.REFERENCE, runtime_choice.REFERENCE, measured, machine, 128, 1.0)


def test_training_on_a_cpu_with_bf16_uses_it_only_where_it_was_measured_faster(tiny_sbert_in_models, isolated,
                                                                               monkeypatch) -> None:
    """A Xeon without AMX has native bf16 that runs slower than fp32 (MiniLM 271 against 450 sentences/s):
    training there runs in fp32; where bf16 was measured faster, or never measured, the rule (bf16)."""
    from dataclasses import replace

    from sbert_demo.encoding import devices
    from sbert_demo.models.registry import get_registry
    from sbert_demo.training.estimate import MINILM_CPU, _costs
    from sbert_demo.training.settings import TrainConfig, training_device

    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    reload_settings()
    key = tiny_sbert_in_models
    kind = get_registry().get(key).kind
    trainer = devices.Hardware(cpu_bf16=True, cpu_threads=1, cpu_name="Test CPU")  # training: one thread
    assert training_device("auto", kind, trainer, "cpu", base=key).precision == "bf16"  # never measured
    machine = runtime_choice.machine_identity(replace(trainer, cpu_threads=2))  # the app measured on two
    path = runtime_choice.decision_file(isolated.cache_dir, machine, resolve(key).identity)
    runtime_choice._write(path, _bf16_measured(450, 271, machine))
    assert training_device("auto", kind, trainer, "cpu", base=key).precision == "fp32"
    assert training_device("bf16", kind, trainer, "cpu", base=key).precision == "bf16"  # asked for: obeyed
    assert training_device("auto", kind, replace(trainer, cpu_name="Another CPU"), "cpu", base=key).precision == "bf16"
    runtime_choice._write(path, _bf16_measured(100, 260, machine))
    assert training_device("auto", kind, trainer, "cpu", base=key).precision == "bf16"
    # The estimate's bf16 cost per text is fp32's divided by the measured speed-up.
    decision = runtime_choice.stored(isolated.cache_dir, trainer, resolve(key).identity)
    costs = _costs(TrainConfig(key, "cosine", "x"), kind, "cpu", "bf16", 1.0, decision)
    assert costs["text_s"] == pytest.approx(MINILM_CPU["fp32"]["text_s"] / 2.6)


def test_the_share_of_texts_already_cached_is_known_without_loading(tiny_sbert_in_models, measuring) -> None:
    from sbert_demo.encoding.encoder import cached_share

    encode("glove-6b-50d", TEXTS[:2])
    assert cached_share("glove-6b-50d", TEXTS[:2]) == 1.0
    assert cached_share("glove-6b-50d", [*TEXTS[:2], "an unseen sentence about nothing"]) == pytest.approx(2 / 3)
    assert cached_share(tiny_sbert_in_models, TEXTS) is None and measuring == []  # would have to measure first


def _clocked(seconds_per_call: float, busy: dict) -> runtime_choice.Embed:
    """A candidate that takes ``seconds_per_call`` (more while ``busy`` says the machine is busy), with real
    vectors (the same for every candidate)."""
    import time

    def embed(texts: list[str]) -> np.ndarray:
        busy["calls"] += 1
        time.sleep(seconds_per_call + (busy["extra"] if busy["calls"] in busy["window"] else 0.0))
        vectors = np.array([[len(t), t.count(" ") + 1.0, sum(map(ord, t)) % 97 + 1.0] for t in texts])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    return embed


def test_a_busy_moment_hits_every_candidate_alike_and_the_faster_one_wins() -> None:
    # ONNX Runtime fp32 is twice as fast as PyTorch fp32; the machine is busy for the 3rd to 5th call. Timed one
    # after another (warm-up, first, again for each), the busy moment fell on ONNX Runtime's timed calls and
    # PyTorch won; in interleaved rounds it hits both, and each one's best round decides.
    busy = {"calls": 0, "extra": 0.15, "window": range(3, 6)}
    fp32, onnx = Candidate("torch", "fp32"), Candidate("onnx", "fp32")
    runs = {fp32: lambda: _clocked(0.04, busy), onnx: lambda: _clocked(0.02, busy)}
    decision = runtime_choice.measure(runs)
    timed = {m.candidate: m for m in decision.measured}
    assert busy["calls"] == 2 + 2 * (1 + runtime_choice.ROUNDS) + 2 * runtime_choice.EXTRA_ROUNDS  # shaky rounds
    assert decision.lossless == onnx and decision.fast == onnx
    assert len(timed[onnx].rounds) == runtime_choice.ROUNDS + runtime_choice.EXTRA_ROUNDS
    assert timed[onnx].warm > 1.5 * timed[fp32].warm and timed[onnx].drift < 1e-9
    assert not decision.unsure(False) and "ahead of PyTorch fp32" in decision.verdict(False)
    assert decision.decided[:4].isdigit() and runtime_choice.Decision.from_json(decision.as_json()) == decision


def test_the_work_beside_the_loading_is_waited_for_before_the_first_timed_round() -> None:
    """``prepare`` builds what measures nothing (UMAP, a static model) in child processes beside the candidates'
    artefact builds; ``settle`` waits for them once every candidate is loaded and warmed up, before any round."""
    busy = {"calls": 0, "extra": 0.0, "window": range(0)}
    events: list[str] = []

    def loaded(name: str, seconds: float):
        def load():
            events.append(f"load {name}")
            embed = _clocked(seconds, busy)
            return lambda texts: events.append(f"embed {name}") or embed(texts)
        return load

    fp32, onnx = Candidate("torch", "fp32"), Candidate("onnx", "fp32")
    decision = runtime_choice.measure({fp32: loaded("fp32", 0.002), onnx: loaded("onnx", 0.001)},
                                      settle=lambda: events.append("settle"))
    assert events[:5] == ["load fp32", "embed fp32", "load onnx", "embed onnx", "settle"]  # loaded, warmed up
    assert events.count("settle") == 1 and len(events) == 5 + 2 * (1 + runtime_choice.ROUNDS) + \
        (2 * runtime_choice.EXTRA_ROUNDS if len(decision.measured[1].rounds) > runtime_choice.ROUNDS else 0)
    assert {m.candidate for m in decision.measured} == {fp32, onnx} and not any(m.refused for m in decision.measured)


def test_a_margin_inside_the_rounds_spread_is_unsure_and_measuring_again_joins_the_rounds() -> None:
    fp32 = Measured(Candidate("torch", "fp32"), cold=100, warm=120, rounds=(120, 80, 100))
    onnx = Measured(Candidate("onnx", "fp32"), cold=105, warm=125, drift=0.001, rounds=(125, 110, 124))
    first = runtime_choice.Decision(pick((fp32, onnx), False), pick((fp32, onnx), True), (fp32, onnx))
    runner_up, margin, spread = first.margin(False)
    assert first.lossless == onnx.candidate and runner_up == fp32.candidate
    assert 0 < margin < spread == pytest.approx(1 / 6) and first.unsure(False)  # its best two rounds: 120, 100
    assert first.verdict(False).endswith("unsure: measured again when the app is idle")
    quiet = (Measured(fp32.candidate, cold=110, warm=118, rounds=(118, 117, 116)),
             Measured(onnx.candidate, cold=190, warm=240, drift=0.002, rounds=(240, 236, 238)))
    again = first.joined(runtime_choice.Decision(fp32.candidate, fp32.candidate, quiet, decided="2026-11-27T15:00:00+00:00"))
    joined = {m.candidate: m for m in again.measured}
    assert joined[onnx.candidate].rounds == (125, 110, 124, 240, 236, 238) and joined[onnx.candidate].warm == 240
    assert joined[onnx.candidate].drift == 0.002 and again.lossless == onnx.candidate and not again.unsure(False)
    assert again.decided == "2026-11-27T15:00:00+00:00"


@pytest.mark.slow  # ~20 s of measuring
def test_an_unsure_decision_is_measured_again_when_idle(tiny_sbert_in_models, measuring, monkeypatch) -> None:
    from sbert_demo.encoding import remeasure

    encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    first = model_cache.kept_decision(tiny_sbert_in_models)
    assert measuring == [1] and first is not None
    monkeypatch.setattr(runtime_choice.Decision, "unsure", lambda self, fast: len(self.measured[0].rounds) < 6)
    asked = []
    verdicts = remeasure.remeasure_when_idle([tiny_sbert_in_models, "glove-6b-50d"],
                                             idle=lambda: asked.append(1) or len(asked) > 1)
    assert measuring == [1, 1] and len(asked) == 2  # waited for an idle machine, then measured once: now sure
    again = model_cache.kept_decision(tiny_sbert_in_models)
    kept, joined = first.measured[0].rounds, again.measured[0].rounds
    # the new rounds joined the kept ones: one measurement's (a busy moment adds its extra rounds to one)
    assert joined[:len(kept)] == kept
    assert len(joined) - len(kept) in (runtime_choice.ROUNDS, runtime_choice.ROUNDS + runtime_choice.EXTRA_ROUNDS)
    assert list(verdicts) == [tiny_sbert_in_models] and verdicts[tiny_sbert_in_models].startswith("lossless ")
    assert remeasure.unsure([tiny_sbert_in_models]) == []


def test_an_unsure_decision_is_not_measured_again_where_the_rules_or_a_setting_choose(tiny_sbert_in_models, measuring,
                                                                                       monkeypatch) -> None:
    # A deployment's prepare left an unsure decision in the cache; an app kept on the CPU-flag rules (as the
    # ZeroGPU tests and the browser tests' apps run) or asked for a runtime never reads it, so its warm-up neither
    # waits for an idle machine nor times the runtimes again.
    from sbert_demo.encoding import remeasure

    encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    monkeypatch.setattr(runtime_choice.Decision, "unsure", lambda self, fast: True)
    assert remeasure.unsure([tiny_sbert_in_models]) == [tiny_sbert_in_models]  # measured: it would be again
    for name, value in (("SBERT_DEMO_RUNTIME_CHOICE", "rules"), ("SBERT_DEMO_BACKEND", "torch"),
                        ("SBERT_DEMO_PRECISION", "fp32")):
        with monkeypatch.context() as each:
            each.setenv(name, value)
            reload_settings()
            assert model_cache.kept_decision(tiny_sbert_in_models) is not None  # still kept, still unsure
            asked = []
            assert remeasure.unsure([tiny_sbert_in_models]) == []
            assert remeasure.remeasure_when_idle([tiny_sbert_in_models], idle=lambda: asked.append(1) or True) == {}
            assert asked == [] and measuring == [1], name
    reload_settings()


def test_the_models_tab_says_what_each_path_runs_on_and_its_speed_up_on_that_paths_work(tiny_sbert_in_models,
                                                                                       measuring) -> None:
    assert model_cache.runtime_summary(tiny_sbert_in_models) == ("measured on first use (python -m sbert_demo "
                                                                "prepare does it ahead)")
    encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    decision = model_cache.kept_decision(tiny_sbert_in_models)
    summary = model_cache.runtime_summary(tiny_sbert_in_models)
    assert measuring == [1]  # read from the kept decision, never measured for the table
    for fast, label in ((False, "numbers: "), (True, "; maps: ")):
        chosen = decision.for_path(fast)
        if fast and chosen == decision.for_path(False):
            assert label not in summary
            continue
        said = f"{label}{chosen.label}, {decision.rate(chosen.name):,.0f} sentences/s"
        speedup = decision.path_speedup(chosen.name, fast)
        if chosen != runtime_choice.REFERENCE:
            said += f" ({speedup:.2f}x {runtime_choice.REFERENCE.label})"
        assert said in summary, (said, summary)
    assert f"measured {decision.decided[:10]}" in summary
    assert model_cache.runtime_summary("glove-6b-50d").endswith("nothing to speed up)")
