"""Tests for sbert_demo.training: settings, names, objectives, device logic, atomic save, cancel, jobs.

Every run here trains the session's tiny random BERT (conftest ``tiny_bert``) for a few steps on
hand-made STS and NLI files, so the whole file takes seconds; the real GloVe and MiniLM runs with
their reference numbers are in ``test_training_slow.py``.
"""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.config import reload_settings

from sbert_demo.encoding import devices
from sbert_demo.models.registry import get_registry
from sbert_demo.training import jobs as jobs_module
from sbert_demo.training import saving
from sbert_demo.training.arguments import argument_kwargs, precision_flags, schedule
from sbert_demo.training.reporting import Cancelled, Reporter
from sbert_demo.training.saving import output_folder, sanitize_model_name
from sbert_demo.training.settings import TrainConfig, config_for, parse_concatenation, training_device

NLI_ROWS = [  # premise, hypothesis, label: every premise has an entailment and a contradiction
    ("A man is playing a guitar.", "A man plays music.", "entailment"),
    ("A man is playing a guitar.", "A man is sleeping.", "contradiction"),
    ("A man is playing a guitar.", "A man plays a song for his son.", "neutral"),
    ("Two dogs are running in the park.", "Animals are running.", "entailment"),
    ("Two dogs are running in the park.", "The dogs are sitting at home.", "contradiction"),
    ("Two dogs are running in the park.", "Two dogs chase a ball.", "neutral"),
    ("A woman is cutting an onion.", "A woman is cooking.", "entailment"),
    ("A woman is cutting an onion.", "A woman is swimming in the sea.", "contradiction"),
    ("A child is riding a horse.", "A child is on an animal.", "entailment"),
    ("A child is riding a horse.", "The child is reading a book in bed.", "contradiction"),
    ("A child is riding a horse.", "The horse is old.", "neutral"),
    ("People are walking in the city.", "People are outside.", "entailment"),
    ("People are walking in the city.", "Nobody is in the city.", "contradiction"),
    ("A cat is sleeping on the bed.", "A cat is resting.", "entailment"),
    ("A cat is sleeping on the bed.", "A cat is chasing a mouse.", "contradiction"),
    ("A cat is sleeping on the bed.", "-", "-"),
]


class Recorder(Reporter):
    """Keeps every event; optionally sets ``cancel`` once training has made ``cancel_at`` steps."""

    def __init__(self, cancel: threading.Event | None = None, cancel_at: int | None = None):
        self.events: list[tuple] = []
        self.cancel, self.cancel_at = cancel, cancel_at
        self.cancelled_at: float | None = None

    def phase(self, state, message=""):
        self.events.append(("phase", state))

    def progress(self, step, total, elapsed):
        self.events.append(("progress", step, total))
        if self.cancel is not None and self.cancel_at is not None and step >= self.cancel_at:
            if not self.cancel.is_set():
                self.cancelled_at = time.perf_counter()
                self.cancel.set()

    def loss(self, step, value):
        self.events.append(("loss", step, value))

    def evaluation(self, step, spearman):
        self.events.append(("evaluation", step, spearman))

    def of(self, kind: str) -> list[tuple]:
        return [e for e in self.events if e[0] == kind]


@pytest.fixture
def train_data(tiny_sts_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny STS folder plus ``nli/tiny.csv``, set as SBERT_DEMO_DATA."""
    nli = tiny_sts_dir / "nli"
    nli.mkdir()
    lines = ["pairID,sentence1,sentence2,label"]
    lines += [f'{i},"{p}","{h}",{label}' for i, (p, h, label) in enumerate(NLI_ROWS)]
    (nli / "tiny.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    return tiny_sts_dir


@pytest.fixture
def tiny_key(add_tiny_bert, train_data) -> str:
    return add_tiny_bert("mean").key


def tiny_config(key: str, objective: str, output: str = "tiny-trained", **changes) -> TrainConfig:
    values = dict(batch_size=4, learning_rate=1e-3, epochs=1, eval_steps=2, max_seq_length=32)
    values.update(changes)
    return TrainConfig(base=key, objective=objective, output=output, **values)


def listed_models() -> list[str]:
    return [e.key for e in get_registry().entries() if e.family == "fine-tuned"]


# --- names and settings --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../x", "a/b", "a\\b", "CON", "con.txt", "LPT1", ".hidden", "", "   ",
                                  "x" * 200, "glove-6b-50d", "all-MiniLM-L6-v2", "a b", "x..y", None])
def test_hostile_names_are_refused(name) -> None:
    with pytest.raises(ValueError):
        sanitize_model_name(name)


@pytest.mark.parametrize("name", ["my-model", "glove_nli.v2", "A1", "x" * 64])
def test_good_names_pass(name: str) -> None:
    assert sanitize_model_name(f" {name} ") == name


def test_existing_name_needs_overwrite(isolated) -> None:
    (isolated.models_dir / "taken").mkdir()
    with pytest.raises(ValueError, match="already exists"):
        output_folder("taken")
    assert output_folder("taken", overwrite=True) == isolated.models_dir / "taken"


@pytest.mark.parametrize(("changes", "message"), [
    ({"epochs": 0}, "Epochs"), ({"epochs": -1}, "Epochs"), ({"epochs": 101}, "Epochs"),
    ({"batch_size": 100000}, "Batch size"), ({"batch_size": 0}, "Batch size"),
    ({"learning_rate": math.nan}, "Learning rate"), ({"learning_rate": 0.0}, "Learning rate"),
    ({"learning_rate": 2.0}, "Learning rate"), ({"max_pairs": 0}, "training pairs"),
    ({"objective": "triplet"}, "Objective"), ({"concatenation": ""}, "at least one"),
    ({"concatenation": "u"}, "together"), ({"data": "stsb"}, "NLI data"),
    ({"data": "/no/such/file.csv"}, "neither"), ({"precision": "int8"}, "Precision"),
])
def test_absurd_settings_are_refused(tiny_key: str, changes: dict, message: str) -> None:
    objective = changes.pop("objective", "nli-softmax")
    with pytest.raises(ValueError, match=message):
        tiny_config(tiny_key, objective, **changes).validate()


def test_unknown_base_is_refused(train_data) -> None:
    with pytest.raises(ValueError, match="Unknown model"):
        TrainConfig("no-such-model", "cosine", "out").validate()


def test_cosine_refuses_nli_data(tiny_key: str) -> None:
    with pytest.raises(ValueError, match="scored pairs"):
        tiny_config(tiny_key, "cosine", data="nli").validate()


def test_concatenation_flags() -> None:
    assert parse_concatenation("u,v,|u-v|") == (True, True, False)
    assert parse_concatenation("|u-v|, u*v") == (False, True, True)
    assert parse_concatenation("(u, v)") == (True, False, False)


def test_a_run_alone_takes_every_core_and_one_beside_the_app_leaves_one(monkeypatch) -> None:
    from sbert_demo.training import settings as training_settings

    monkeypatch.setattr(training_settings.os, "cpu_count", lambda: 4)
    assert training_settings.training_threads("sentence-transformers", beside_app=False) == 4  # `train`
    assert training_settings.training_threads("sentence-transformers") == 3  # the Train tab's worker
    assert training_settings.training_threads("glove", beside_app=False) == 1  # tiny ops: one thread
    monkeypatch.setattr(training_settings.os, "cpu_count", lambda: 1)
    assert training_settings.training_threads("sentence-transformers") == 1
    monkeypatch.setenv("SBERT_DEMO_TRAIN_THREADS", "2")
    reload_settings()
    assert training_settings.training_threads("glove") == 2  # the setting wins


def test_defaults_suit_the_kind_and_device(tiny_key: str) -> None:
    glove = config_for("glove-6b-50d", "nli-softmax", "g", device="cpu")
    assert (glove.batch_size, glove.learning_rate, glove.max_pairs) == (32, 1e-3, None)
    cpu = config_for(tiny_key, "cosine", "t", device="cpu", batch_size=None, epochs=2)
    assert (cpu.batch_size, cpu.learning_rate, cpu.max_pairs, cpu.epochs) == (16, 2e-5, 10_000, 2)
    assert config_for(tiny_key, "cosine", "t", device="cuda").batch_size == 32


# --- device and precision ------------------------------------------------------------------------


@pytest.mark.parametrize(("hardware", "kind", "expected"), [
    (devices.Hardware(cuda=True, cuda_name="H100", cuda_bf16=True), "transformer",
     {"use_cpu": False, "bf16": True, "fp16": False}),
    (devices.Hardware(cuda=True, cuda_name="T4", cuda_bf16=False), "transformer",
     {"use_cpu": False, "bf16": False, "fp16": True}),
    (devices.Hardware(cpu_bf16=True), "sentence-transformers", {"use_cpu": True, "bf16": True, "fp16": False}),
    (devices.Hardware(cpu_bf16=True), "glove", {"use_cpu": True, "bf16": False, "fp16": False}),
    (devices.Hardware(cpu_bf16=False), "transformer", {"use_cpu": True, "bf16": False, "fp16": False}),
    (devices.Hardware(mps=True), "transformer", {"use_cpu": False, "bf16": False, "fp16": False}),
])
def test_precision_flags_follow_the_hardware(hardware, kind: str, expected: dict, monkeypatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")  # conftest pins fp32 for inference
    reload_settings()
    choice = training_device("auto", kind, hardware, device="auto")
    assert precision_flags(choice) == expected


def test_explicit_precision_setting_wins_over_auto(monkeypatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "fp32")
    reload_settings()
    choice = training_device("auto", "transformer", devices.Hardware(cuda=True, cuda_bf16=True), device="auto")
    assert choice.precision == "fp32"
    assert training_device("bf16", "transformer", devices.Hardware(cpu_bf16=True), device="cpu").precision == "bf16"


def test_mixed_precision_on_mps_is_refused() -> None:
    with pytest.raises(ValueError, match="MPS"):
        training_device("bf16", "transformer", devices.Hardware(mps=True), device="auto")


def test_training_arguments_on_gpu_and_cpu(tiny_key: str, monkeypatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    reload_settings()
    config = tiny_config(tiny_key, "cosine")
    gpu = training_device("auto", "transformer", devices.Hardware(cuda=True, cuda_bf16=True), device="auto")
    plan = schedule(config, 10, "transformer", gpu.device)
    kwargs = argument_kwargs(config, gpu, plan, "/tmp/x")
    assert kwargs["bf16"] and not kwargs["use_cpu"] and kwargs["dataloader_pin_memory"]
    assert kwargs["save_strategy"] == "no" and kwargs["report_to"] == "none"
    assert kwargs["dataloader_drop_last"] is False and kwargs["seed"] == config.seed
    from sbert_demo.training.arguments import training_arguments

    cpu = training_device("auto", "transformer", devices.Hardware(cpu_bf16=True), device="auto")
    args = training_arguments(config, cpu, plan, "/tmp/x")  # a real object: the CPU can build it
    assert args.use_cpu and args.bf16 and not args.fp16 and args.warmup_steps == plan.warmup_steps


def test_device_label_and_estimate(tiny_key: str) -> None:
    from sbert_demo.training import device_label, estimate

    config = tiny_config(tiny_key, "cosine")
    assert device_label(config).startswith("CPU (") and device_label(config).endswith("fp32")
    planned = estimate(config)
    assert planned.examples == 6 and planned.steps == 2 and 0 < planned.training_s < planned.total_s


def test_schedule_counts_like_the_trainer(tiny_key: str) -> None:
    plan = schedule(tiny_config(tiny_key, "cosine", batch_size=4, epochs=2, eval_steps=0), 10, "transformer", "cpu")
    assert (plan.steps_per_epoch, plan.total_steps, plan.warmup_steps) == (3, 6, 1)
    assert plan.eval_steps == 2  # four dev evaluations per CPU run


# --- training ------------------------------------------------------------------------------------


def _weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(next(folder.rglob("model.safetensors"))))


@pytest.mark.parametrize("objective", ["nli-softmax", "cosine", "mnrl"])
def test_each_objective_trains_saves_and_scores(tiny_key: str, tiny_bert: Path, objective: str) -> None:
    from sentence_transformers import SentenceTransformer

    from sbert_demo.training.runner import run_training

    recorder = Recorder()
    result = run_training(tiny_config(tiny_key, objective, output=f"tiny-{objective}"), recorder)
    assert result.folder.name == f"tiny-{objective}" and f"tiny-{objective}" in listed_models()
    assert result.steps >= 2 and recorder.of("loss") and recorder.of("evaluation")
    assert [e[1] for e in recorder.of("phase")][-1] == "finished"
    assert set(result.before) == set(result.after) == {"dev", "test"}
    trained, base = _weights(result.folder), _weights(tiny_bert)
    changed = [k for k in base if k in trained and not np.allclose(base[k], trained[k])]
    assert changed, "training did not change any weight"
    card = (result.folder / "sbert_demo_card.json").read_text()
    for key in ("label", "summary", "base", "objective", "data", "pairs", "hyperparameters", "device",
                "precision", "duration_s", "before", "after", "created"):
        assert f'"{key}"' in card
    assert "STSb test" in (result.folder / "README.md").read_text()
    loaded = SentenceTransformer(str(result.folder), device="cpu")  # plain sentence-transformers
    assert loaded.encode(["A man is playing a guitar."]).shape == (1, 32)


def test_loss_decreases_over_epochs(tiny_key: str) -> None:
    from sbert_demo.training.runner import run_training

    recorder = Recorder()
    run_training(tiny_config(tiny_key, "nli-softmax", epochs=12, learning_rate=3e-3, eval_steps=100), recorder)
    losses = [value for _, _, value in recorder.of("loss")]
    assert np.mean(losses[-3:]) < np.mean(losses[:3])


# --- saving and cancelling -----------------------------------------------------------------------


def _tiny_model(tiny_key: str):
    from sbert_demo.training.model_factory import build_trainable_model

    return build_trainable_model(tiny_config(tiny_key, "cosine"), "cpu")


def test_saved_model_loads_with_plain_sentence_transformers(tiny_key: str, isolated) -> None:
    from sentence_transformers import SentenceTransformer

    model = _tiny_model(tiny_key)
    sentences = ["A dog is running.", "A woman is cooking rice."]
    before = model.encode(sentences)
    folder = saving.save_model(model, "saved", {"label": "saved", "before": {"dev": 0.5, "test": 0.4}})
    after = SentenceTransformer(str(folder), device="cpu").encode(sentences)
    np.testing.assert_allclose(before, after, atol=1e-6)
    entry = get_registry().get("saved")
    assert entry.family == "fine-tuned" and entry.label == "saved"
    assert not [p for p in isolated.models_dir.iterdir() if p.name.startswith(".")]


def test_crash_before_rename_leaves_nothing(tiny_key: str, isolated, monkeypatch) -> None:
    def crash(*args, **kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(saving, "_move_into_place", crash)
    with pytest.raises(RuntimeError):
        saving.save_model(_tiny_model(tiny_key), "crashed", {"label": "crashed"})
    assert listed_models() == [] and list(isolated.models_dir.iterdir()) == []


def test_overwrite_swaps_the_whole_folder(tiny_key: str, isolated) -> None:
    old = isolated.models_dir / "again"
    old.mkdir()
    (old / "stale.txt").write_text("old")
    with pytest.raises(ValueError, match="already exists"):
        saving.save_model(_tiny_model(tiny_key), "again", {"label": "again"})
    folder = saving.save_model(_tiny_model(tiny_key), "again", {"label": "again"}, overwrite=True)
    assert not (folder / "stale.txt").exists() and (folder / "modules.json").is_file()
    assert [p.name for p in isolated.models_dir.iterdir()] == ["again"]


def test_stale_work_folders_are_removed(isolated) -> None:
    stale = isolated.models_dir / ".tmp-old-1234"
    stale.mkdir()
    assert saving.remove_stale_work(isolated.models_dir, older_than_s=-1) == [stale]


def test_cancel_stops_within_seconds_and_saves_nothing(tiny_key: str, isolated) -> None:
    from sbert_demo.training.runner import run_training

    cancel = threading.Event()
    recorder = Recorder(cancel, cancel_at=3)
    config = tiny_config(tiny_key, "cosine", epochs=100, batch_size=1, eval_steps=1000)
    with pytest.raises(Cancelled):
        run_training(config, recorder, cancel)
    assert time.perf_counter() - recorder.cancelled_at < 3.0
    assert recorder.of("progress")[-1][1] < recorder.of("progress")[-1][2]  # stopped early
    assert listed_models() == [] and list(isolated.models_dir.iterdir()) == []


def test_cli_trains_and_prints_the_table(tiny_key: str, capsys) -> None:
    import torch

    from sbert_demo.cli import main

    threads = torch.get_num_threads()
    try:
        argv = ["train", "--base", tiny_key, "--objective", "cosine", "--output", "cli-model",
                "--batch-size", "4", "--lr", "1e-3", "--max-seq-length", "32"]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "cli-model (after)" in out and "STSb test" in out and "change" in out
        assert main(argv) == 2  # the name is taken now
        assert "already exists" in capsys.readouterr().err
        assert main([*argv[:-4], "--batch-size", "0"]) == 2
    finally:
        torch.set_num_threads(threads)


# --- the job manager -----------------------------------------------------------------------------


def test_jobs_refuse_when_training_is_switched_off(tiny_key: str, monkeypatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_ALLOW_TRAINING", "0")
    reload_settings()
    manager = jobs_module.TrainingJobs()
    with pytest.raises(ValueError, match="switched off"):
        manager.start(tiny_config(tiny_key, "cosine"))
    assert manager.snapshot().state == "idle" and not manager.cancel()


def test_jobs_refuse_a_second_job(tiny_key: str, monkeypatch) -> None:
    manager = jobs_module.TrainingJobs()
    busy = jobs_module.JobState("fake", tiny_config(tiny_key, "cosine", output="first"), None)
    busy.phase("running", "Training")
    monkeypatch.setattr(manager, "_job", type("FakeJob", (), {"state": busy})())
    with pytest.raises(ValueError, match="already running"):
        manager.start(tiny_config(tiny_key, "cosine", output="second"))


def test_job_state_folds_events_into_snapshots(tiny_key: str) -> None:
    state = jobs_module.JobState("j1", tiny_config(tiny_key, "cosine"), 12.0)
    state.phase("running", "Training")
    state.progress(5, 20, 10.0)
    state.loss(5, 0.25)
    state.evaluation(5, 0.71)
    state.detail("before", {"dev": 0.5, "test": 0.4})
    snap = state.snapshot()
    assert snap.active and snap.fraction == 0.25 and snap.eta_s == pytest.approx(30.0)
    assert snap.losses == ((5, 0.25),) and snap.evals == ((5, 0.71),) and snap.before["dev"] == 0.5
    state.finish("failed", "boom", error="boom")
    state.phase("running", "late event")  # ignored once final
    assert state.snapshot().state == "failed" and state.snapshot().error == "boom"


@pytest.mark.slow  # ~18 s: a real training run
def test_a_real_job_runs_in_a_child_process_and_reports(tiny_key: str, isolated) -> None:
    manager = jobs_module.TrainingJobs()
    job_id = manager.start(tiny_config(tiny_key, "cosine", output="from-job", epochs=3))
    assert manager.snapshot().job_id == job_id and manager.snapshot().active
    with pytest.raises(ValueError, match="already running"):
        manager.start(tiny_config(tiny_key, "cosine", output="second"))
    snap = manager.wait(timeout=120)
    assert snap.state == "finished", (snap.error, snap.log)
    assert snap.model_name == "from-job" and "from-job" in listed_models()
    assert snap.step == snap.total_steps > 0 and snap.losses and len(snap.evals) >= 2
    assert set(snap.before) == set(snap.after) == {"dev", "test"} and snap.device.startswith("CPU")
    assert snap.finished_at and snap.elapsed_s > 0 and not snap.active


@pytest.mark.slow  # ~17 s: a real training run
def test_a_real_job_can_be_cancelled(tiny_key: str, isolated) -> None:
    manager = jobs_module.TrainingJobs()
    manager.start(tiny_config(tiny_key, "cosine", output="never", epochs=100, batch_size=1, eval_steps=1000))
    deadline = time.monotonic() + 120
    while manager.snapshot().step < 3 and time.monotonic() < deadline and manager.snapshot().active:
        time.sleep(0.1)
    assert manager.cancel()
    asked = time.monotonic()
    snap = manager.wait(timeout=30)
    assert snap.state == "cancelled" and time.monotonic() - asked < jobs_module.CANCEL_GRACE_S + 3
    assert listed_models() == [] and list(isolated.models_dir.iterdir()) == []


def test_a_crashed_training_process_becomes_a_failed_state(tiny_key: str) -> None:
    job = jobs_module._Job(tiny_config(tiny_key, "cosine"), None, None)
    job._finish_after_exit(-9)
    snap = job.state.snapshot()
    assert snap.state == "failed" and "out of memory" in snap.error and "nothing was saved" in snap.error


def test_validate_refuses_a_precision_the_device_cannot_run(isolated, monkeypatch):
    from sbert_demo.encoding import devices
    from sbert_demo.training import config_for

    monkeypatch.setattr(devices, "detect_hardware", lambda: devices.Hardware(cpu_threads=2))
    with pytest.raises(ValueError, match="fp16 is not supported on the CPU"):
        config_for("glove-6b-50d", "nli-softmax", "fp16-on-cpu", precision="fp16").validate()


# Whole runs measured through the job manager on an NVIDIA H200 (bench/gpu.py: all-MiniLM-L6-v2, the
# GPU defaults of batch 32 and all pairs, each run a fresh process, not the first on its machine):
# objective, precision (bf16: what auto chose there), seconds.
H200_RUNS = [("cosine", "bf16", 31.9), ("cosine", "fp32", 25.2), ("cosine", "fp16", 41.5),
             ("nli-softmax", "bf16", 119.2), ("nli-softmax", "fp32", 68.5), ("mnrl", "bf16", 67.5),
             ("cross-encoder", "bf16", 28.9)]


@pytest.mark.parametrize("objective, precision, measured_s", H200_RUNS)
def test_the_gpu_estimate_is_within_30_percent_of_runs_measured_on_an_h200(objective: str, precision: str,
                                                                          measured_s: float, monkeypatch) -> None:
    from sbert_demo.encoding import devices
    from sbert_demo.training import estimate
    from sbert_demo.training.settings import config_for

    h200 = devices.Hardware(cuda=True, cuda_name="NVIDIA H200", cuda_bf16=True, cpu_threads=16)
    monkeypatch.setattr(devices, "detect_hardware", lambda: h200)
    config = config_for("all-MiniLM-L6-v2", objective, "x", device="cuda", precision=precision)
    assert config.batch_size == 32 and config.max_pairs is None  # the Train tab's GPU defaults
    planned = estimate(config, device="cuda")
    assert abs(planned.total_s / measured_s - 1) <= 0.30, (planned, measured_s)


def test_nli_softmax_from_a_sentence_embedding_model_is_cautioned_before_it_starts(tiny_key: str) -> None:
    """MiniLM lost 48 STSb points to NLI softmax on an H200: the plan says so before Start, and points
    to the objective that improved it; GloVe (the paper's naive baseline) and other objectives are not
    cautioned."""
    from sbert_demo.training.settings import caution, config_for
    from sbert_demo.ui.train_form import plan_for

    warned = config_for("all-MiniLM-L6-v2", "nli-softmax", "x", device="cpu", max_pairs=64)
    assert "multiple-negatives ranking" in caution(warned) and "86.7 → 38.5" in caution(warned)
    assert "notes-warning" in plan_for(warned) and "already a sentence-embedding model" in plan_for(warned)
    for base, objective in (("all-MiniLM-L6-v2", "mnrl"), ("all-MiniLM-L6-v2", "cosine"),
                            ("glove-6b-50d", "nli-softmax"), (tiny_key, "nli-softmax")):
        config = config_for(base, objective, "x", device="cpu", max_pairs=64)
        assert caution(config) is None and "notes-warning" not in plan_for(config)
