"""The Train tab without a browser: it builds, its handlers start, refuse, report and cancel a real
(tiny) GloVe job, the live view re-renders only what changed, and the HTML it shows is exact and
escaped. Real jobs use a fresh job manager (not the process-wide one) and tiny STS/NLI files.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import gradio as gr
import pytest

from sbert_demo import formatting
from sbert_demo.config import reload_settings
from conftest import launch_here, train_form

from sbert_demo.training import DISABLED, JobSnapshot, TrainConfig, TrainingJobs
from sbert_demo.ui import train as train_tab
from sbert_demo.ui import train_view

NLI_ROWS = [
    ("A man is playing a guitar.", "A man plays music.", "entailment"),
    ("A man is playing a guitar.", "A man is sleeping.", "contradiction"),
    ("A man is playing a guitar.", "A man plays a song for his son.", "neutral"),
    ("Two dogs are running in the park.", "Animals are running.", "entailment"),
    ("Two dogs are running in the park.", "The dogs are sitting at home.", "contradiction"),
    ("A woman is cutting an onion.", "A woman is cooking.", "entailment"),
    ("A woman is cutting an onion.", "A woman is swimming in the sea.", "contradiction"),
    ("A child is riding a horse.", "A child is on an animal.", "entailment"),
    ("A child is riding a horse.", "The child is reading a book in bed.", "contradiction"),
    ("People are walking in the city.", "People are outside.", "entailment"),
    ("People are walking in the city.", "Nobody is in the city.", "contradiction"),
    ("A cat is sleeping on the bed.", "A cat is chasing a mouse.", "contradiction"),
]
CONFIG = TrainConfig("glove-6b-50d", "nli-softmax", "glove-nli", batch_size=32, learning_rate=1e-3)


def form(**changes) -> list:
    """The form's values: a 1-epoch GloVe NLI run by default (see ``conftest.train_form``)."""
    return train_form("tab-trained", **changes)


@pytest.fixture
def nli_data(tiny_sts_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny STS folder plus ``nli/tiny.csv``, set as SBERT_DEMO_DATA."""
    (tiny_sts_dir / "nli").mkdir()
    lines = ["pairID,sentence1,sentence2,label", *(f'{i},"{p}","{h}",{label}' for i, (p, h, label)
                                                  in enumerate(NLI_ROWS))]
    (tiny_sts_dir / "nli" / "tiny.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    return tiny_sts_dir


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> TrainingJobs:
    """A job manager of the test's own; whatever it still runs at the end is cancelled."""
    manager = TrainingJobs()
    monkeypatch.setattr(train_tab, "training_jobs", lambda: manager)
    yield manager
    if manager.cancel():
        manager.wait(timeout=30)


class ScriptedJobs:
    """Stands in for the job manager: returns whatever snapshot the test sets."""

    def __init__(self, snap: JobSnapshot):
        self.snap = snap

    def snapshot(self) -> JobSnapshot:
        return self.snap


def wait_for(condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


# --- the tab in a Blocks ---------------------------------------------------------------------------


def endpoints(demo: gr.Blocks) -> dict[str, object]:
    return {fn.api_name: fn for fn in demo.fns.values() if fn.api_name and fn.api_visibility == "public"}


def test_the_tab_builds_with_its_endpoints_and_a_base_model_refresher() -> None:
    with gr.Blocks() as demo:
        refreshers = train_tab.build_tab()
    assert set(endpoints(demo)) == {"train_start", "train_cancel", "train_status"}
    assert any(isinstance(block, gr.Timer) for block in demo.blocks.values())
    (refresher,) = refreshers
    assert refresher.component.elem_id == "train-base"
    assert ("GloVe average (6B, 50d) · naive", "glove-6b-50d") in refresher.fn("glove-6b-50d")["choices"]


def test_switched_off_the_tab_still_shows_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_ALLOW_TRAINING", "0")
    reload_settings()
    with gr.Blocks() as demo:
        train_tab.build_tab()
    blocks = list(demo.blocks.values())
    assert any(isinstance(b, gr.HTML) and DISABLED in str(b.value) for b in blocks)
    start = next(b for b in blocks if getattr(b, "elem_id", None) == "train-start")
    base = next(b for b in blocks if getattr(b, "elem_id", None) == "train-base")
    assert start.interactive is False and base.interactive is False
    assert not any(isinstance(b, gr.Timer) for b in blocks)
    with pytest.raises(gr.Error) as excinfo:
        train_tab.start_training(*form())
    assert excinfo.value.message == DISABLED


# --- the form ------------------------------------------------------------------------------------


def test_the_form_becomes_a_config_with_empty_meaning_no_limit(nli_data: Path) -> None:
    config = train_tab.form_config(*form(max_pairs=0, max_seq_length=0, batch_size=8.0))
    assert config.max_pairs is None and config.max_seq_length is None and config.batch_size == 8
    assert config.concatenation == "u,v,|u-v|" and config.data_source == "nli"
    cosine = train_tab.form_config(*form(objective="cosine", data="stsb", concatenation=[]))
    assert cosine.concatenation == TrainConfig.concatenation  # ignored outside NLI softmax


@pytest.mark.parametrize("changes, expected", [
    (dict(data="upload", upload=None), "Upload a training file"),
    (dict(concatenation=[]), "Select at least one part"),
    (dict(batch_size=2.5), "Batch size must be a whole number"),
    (dict(output="../evil"), "path separator"),
    (dict(precision="fp16"), "fp16 is not supported on the CPU"),
])
def test_bad_settings_show_in_the_plan_and_refuse_to_start(nli_data: Path, changes: dict, expected: str) -> None:
    assert expected in train_tab.update_plan(*form(**changes))
    with pytest.raises(gr.Error, match=expected.replace(".", r"\.")):
        train_tab.start_training(*form(**changes))


def test_the_plan_names_device_steps_and_time(nli_data: Path) -> None:
    plan = train_tab.update_plan(*form())
    assert "<strong>Device:</strong> CPU (1 thread)</div>" in plan and "<strong>Precision:</strong> fp32" in plan
    assert "3 (12 examples ÷ batch 4 × 1 epoch; 1 warm-up)" in plan and "every 2 steps" in plan


def test_defaults_follow_the_base_model_and_objective(nli_data: Path, isolated) -> None:
    (isolated.models_dir / "all-MiniLM-L6-v2-cosine").mkdir()
    updates = dict(zip(train_tab.DEFAULT_FIELDS,
                       train_tab.fill_defaults("all-MiniLM-L6-v2", "cosine", "glove-6b-50d-nli-softmax", "nli")))
    assert updates["data"] == "stsb" and updates["concatenation"]["visible"] is False
    assert (updates["batch_size"], updates["learning_rate"], updates["max_pairs"]) == (16, 2e-5, 10_000)
    assert updates["max_seq_length"] == {"__type__": "update", "visible": True, "value": 128}
    assert updates["pooling"]["visible"] is False and updates["dense_dim"]["visible"] is False
    assert updates["output"] == "all-MiniLM-L6-v2-cosine-2"  # a suggestion is replaced, kept unique
    kept = dict(zip(train_tab.DEFAULT_FIELDS, train_tab.fill_defaults("glove-6b-50d", "mnrl", "mine", "upload")))
    assert kept["output"] == gr.skip() and kept["data"] == "upload"  # a typed name stays


def test_a_reloaded_page_shows_the_running_jobs_settings(nli_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(train_tab, "training_jobs", lambda: ScriptedJobs(RUNNING))
    *values, plan = train_tab.load_form()
    shown = dict(zip(train_tab.LOAD_FIELDS, values))
    assert (shown["base"], shown["output"], shown["batch_size"], shown["learning_rate"]) == (
        "glove-6b-50d", "glove-nli", 32, 1e-3)
    assert shown["concatenation"]["value"] == ["u,v", "|u-v|"] and shown["dense_dim"]["visible"] is True
    assert "<strong>Steps:</strong> 1 (12 examples ÷ batch 32" in plan
    monkeypatch.setattr(train_tab, "training_jobs", lambda: ScriptedJobs(FINISHED))
    shown = dict(zip(train_tab.LOAD_FIELDS, train_tab.load_form()[:-1]))
    assert shown["output"] == "glove-6b-50d-nli-softmax"  # no job running: the defaults


def test_refreshing_the_base_list_keeps_a_known_choice() -> None:
    assert "value" not in train_tab.refresh_base("glove-6b-50d")
    assert train_tab.refresh_base("gone-model")["value"] == train_tab.DEFAULT_BASE


# --- a real job through the handlers -------------------------------------------------------------


def test_start_status_refuse_a_second_and_cancel(nli_data: Path, jobs: TrainingJobs, isolated) -> None:
    started = train_tab.start_training(*form(epochs=100, batch_size=1, eval_steps=100_000))
    assert started["active"] and started["config"]["output"] == "tab-trained"
    with pytest.raises(gr.Error, match="already running"):
        train_tab.start_training(*form(output="second"))
    wait_for(lambda: train_tab.train_status()["step"] >= 3)
    status = train_tab.train_status()
    assert status["state"] in ("running", "evaluating") and status["total_steps"] == 1_200
    assert status["before"] is not None and json.loads(json.dumps(status)) == status
    asked = time.monotonic()
    assert train_tab.cancel_training()["cancel_requested"] is True
    wait_for(lambda: train_tab.train_status()["state"] == "cancelled", timeout=15)
    assert time.monotonic() - asked < 8
    assert list(isolated.models_dir.iterdir()) == []
    assert train_tab.cancel_training()["cancel_requested"] is False


def test_a_finished_job_shows_before_after_and_the_new_model(nli_data: Path, jobs: TrainingJobs) -> None:
    train_tab.start_training(*form(output="tab-done"))
    snap = jobs.wait(timeout=180)
    assert snap.state == "finished", (snap.error, snap.log)
    seen, status, progress, curves, results, log, cancel, base = train_tab.poll(None)
    assert "tab-done" in results and results.count('<td class="num">') == 6
    assert "<b>100%</b> · step 3 / 3" in progress and "finished" in progress
    label = dict((key, label) for label, key in base["choices"])["tab-done"]
    assert label.endswith("· trained here")
    assert cancel == {"__type__": "update", "interactive": False}
    assert curves["visible"] and curves["value"].data[0].x == tuple(step for step, _ in snap.losses)
    assert train_tab.poll(seen) == [gr.skip()] * (1 + len(train_tab.PART_NAMES))


class RecordingJobs(ScriptedJobs):
    """Accepts one start and shows it as starting; nothing runs."""

    def __init__(self):
        super().__init__(JobSnapshot())
        self.started: list[TrainConfig] = []

    def start(self, config: TrainConfig) -> str:
        self.started.append(config)
        self.snap = JobSnapshot(state="starting", job_id="j9", config=config)
        return "j9"

    def cancel(self) -> bool:
        return self.snap.active


def test_the_endpoints_answer_gradio_client_with_short_calls(nli_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from gradio_client import Client

    recorder = RecordingJobs()
    monkeypatch.setattr(train_tab, "training_jobs", lambda: recorder)
    with gr.Blocks() as demo:
        train_tab.build_tab()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    launch_here(demo.queue(), port)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        assert client.predict(api_name="/train_status")["state"] == "idle"
        started = client.predict(base="glove-6b-50d", objective="cosine", data="stsb", output="via-api",
                                 api_name="/train_start")
        assert started["state"] == "starting" and started["config"]["data"] == "stsb"
        (config,) = recorder.started
        assert (config.objective, config.batch_size, config.learning_rate, config.output) == ("cosine", 32, 1e-3,
                                                                                             "via-api")
        assert client.predict(api_name="/train_cancel")["cancel_requested"] is True
    finally:
        demo.close()


# --- rendering with known numbers ------------------------------------------------------------------


RUNNING = JobSnapshot(state="running", job_id="j1", message="Training", config=CONFIG,
                      device="CPU (1 thread), fp32", step=516, total_steps=1229, elapsed_s=12.4, eta_s=17.2,
                      losses=((1, 1.1), (100, 0.9)), evals=((0, 0.6552), (123, 0.70)),
                      before={"dev": 0.6552, "test": 0.5561}, log=("line 1", "line 2"), started_at=1.0)
FINISHED = JobSnapshot(state="finished", job_id="j1", message="Saved glove-nli", config=CONFIG, step=1229,
                       total_steps=1229, elapsed_s=65.0, before={"dev": 0.6552, "test": 0.5561},
                       after={"dev": 0.7012, "test": 0.5904}, model_name="glove-nli", started_at=1.0)


def test_progress_bar_text() -> None:
    assert train_view.progress_html(RUNNING).endswith(
        '<div class="train-progress-text"><b>42%</b> · step 516 / 1,229 · elapsed 12 s · ETA 17 s</div></div>')
    assert '<div class="train-bar train-bar-running"' in train_view.progress_html(RUNNING)
    assert '<span style="width:42.0%"></span>' in train_view.progress_html(RUNNING)
    assert "<b>100%</b> · step 1,229 / 1,229 · elapsed 1 min 05 s · finished" in train_view.progress_html(FINISHED)
    assert train_view.progress_html(JobSnapshot()) == ""


def test_before_after_table_has_the_numbers_and_deltas() -> None:
    html = train_view.results_html(FINISHED)
    assert ('<tr><td>STSb test</td><td class="num">55.61</td><td class="num">59.04</td>'
            '<td class="num"><span class="change-up">+3.43</span></td></tr>') in html
    assert '<td class="num">65.52</td><td class="num">70.12</td>' in html and "+4.60" in html
    assert "The model <strong>glove-nli</strong> is saved" in html
    running = train_view.results_html(RUNNING)
    assert '<td class="num">55.61</td><td class="num">–</td><td class="num">–</td>' in running
    assert "is saved" not in running and train_view.results_html(JobSnapshot()) == ""


@pytest.mark.parametrize("seconds, exact, rounded", [
    (0, "0 s", "about 5 s"), (42.4, "42 s", "about 40 s"), (65, "1 min 05 s", "about 1 min"),
    (3725, "1 h 02 min", "about 1 h 02 min"), (None, "–", "unknown"),
])
def test_durations(seconds, exact: str, rounded: str) -> None:
    assert formatting.duration(seconds) == exact and formatting.about(seconds) == rounded


def test_names_and_errors_are_escaped() -> None:
    hostile = TrainConfig("<b>base</b>", "nli-softmax", "<img src=x onerror=alert(1)>")
    failed = JobSnapshot(state="failed", job_id="j2", config=hostile, error="bad <script>alert(1)</script>",
                         before={"dev": 0.5, "test": 0.4}, after={"dev": 0.6, "test": 0.5},
                         model_name="<i>m</i>")
    shown = train_view.status_html(failed) + train_view.results_html(failed) + train_view.progress_html(failed)
    for raw in ("<script>", "<img", "<b>base", "<i>m"):
        assert raw not in shown
    assert "bad &lt;script&gt;alert(1)&lt;/script&gt;" in shown and "&lt;i&gt;m&lt;/i&gt;" in shown


def test_the_view_re_renders_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    scripted = ScriptedJobs(RUNNING)
    monkeypatch.setattr(train_tab, "training_jobs", lambda: scripted)
    seen, *parts = train_tab.poll(None)
    assert all(part != gr.skip() for part in parts[:-1]) and parts[-1] == gr.skip()  # no new model yet
    assert train_tab.poll(seen) == [gr.skip()] * (1 + len(train_tab.PART_NAMES))  # idle ticks are free
    scripted.snap = RUNNING.__class__(**{**RUNNING.__dict__, "step": 517})
    seen2, *parts = train_tab.poll(seen)
    changed = {name for name, part in zip(train_tab.PART_NAMES, parts) if part != gr.skip()}
    assert changed == {"progress"}  # the curves are not redrawn for a step without a new point
    scripted.snap = FINISHED
    changed = {name for name, part in zip(train_tab.PART_NAMES, train_tab.poll(seen2)[1:]) if part != gr.skip()}
    assert changed == set(train_tab.PART_NAMES)


def test_status_json_is_plain_data() -> None:
    data = train_view.snapshot_json(RUNNING)
    assert json.loads(json.dumps(data)) == data
    assert (data["state"], data["step"], data["total_steps"], data["eta_s"]) == ("running", 516, 1229, 17.2)
    assert data["evals"] == [[0, 0.6552], [123, 0.70]] and data["after"] is None
    assert data["config"]["base"] == "glove-6b-50d" and data["log_tail"] == ["line 1", "line 2"]
