"""The talk (issue "a talk that cannot go wrong on stage"): its steps computed once and replayed, drawn
for a projector and for a phone, a step's stale answer dropped, the talk's training kept out of
``models/`` and replayed.

The core (:mod:`sbert_demo.talk`) with the real GloVe and MiniLM on cheap steps and stand-in
computations where only the keeping matters; the presenter view's handlers (:mod:`sbert_demo.ui.talk`)
with a stand-in request. The real page, every step at three screen sizes and the rehearsal with key
presses and a reload, is ``tests/test_talk_browser.py`` (slow).
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest

from sbert_demo.shared import reset_all
from sbert_demo.talk import rehearsal as rehearsal_module
from sbert_demo.talk import slides, story
from sbert_demo.talk import training as talk_training
from sbert_demo.talk.rehearsal import rehearsal


def stand_in(steps: dict[int, object]) -> tuple:
    """The story with ``steps`` (position: compute) replaced, for the rehearsal."""
    return tuple(replace(step, compute=steps.get(i, step.compute)) for i, step in enumerate(story.STEPS))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch):
    """Step 2's computation replaced by one that counts its calls and waits for ``release`` (and its
    slide by a blank figure)."""
    monkeypatch.setattr(slides, "slide", lambda step, data, layout="screen": slides.Slide(go.Figure()))
    calls, release = [], threading.Event()

    def compute(progress):
        calls.append(1)
        progress(0.5, "halfway")
        release.wait(10)
        return {"numbers": [1, 2, 3]}

    monkeypatch.setattr(rehearsal_module, "STEPS", stand_in({1: compute}))
    return SimpleNamespace(calls=calls, release=release)


def test_a_step_is_computed_once_and_kept_on_disk(counted) -> None:
    first, second = rehearsal().start(1), rehearsal().start(1)  # asked twice while computing
    assert first is second and first.wait(0.3) is False and first.what == "halfway"
    counted.release.set()
    assert first.wait(10) and first.result == {"numbers": [1, 2, 3]} and first.error is None
    assert rehearsal().result(1) == {"numbers": [1, 2, 3]} and len(counted.calls) == 1
    reset_all()  # a new process: the kept step is read from the cache folder, not computed again
    assert rehearsal().result(1) == {"numbers": [1, 2, 3]}
    assert rehearsal().start(1).wait(1) and len(counted.calls) == 1
    assert rehearsal().ready()[1] and not rehearsal().ready()[2]


def test_new_model_files_or_runtimes_compute_the_step_again(counted, monkeypatch: pytest.MonkeyPatch) -> None:
    counted.release.set()
    assert rehearsal().start(1).wait(10) and rehearsal().result(1) is not None
    key = rehearsal_module.step_key(1)
    assert "glove" not in key and key.startswith("Paraphrases|")  # the identities, not the names, count
    monkeypatch.setattr(rehearsal_module, "_runtime_tag", lambda model, fast: f"{model}|a-new-runtime")
    reset_all()
    assert rehearsal().result(1) is None  # another runtime: the kept numbers are not these


def test_a_step_that_cannot_be_computed_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(progress):
        raise ValueError("The STS benchmark files are missing: put them in data/.")

    def broken(progress):
        raise KeyError("column")

    quick = {i: (lambda progress: "numbers") for i, step in enumerate(story.STEPS) if step.compute}
    monkeypatch.setattr(rehearsal_module, "STEPS", stand_in({**quick, 0: refused, 1: broken}))
    work = rehearsal().start(0)
    assert work.wait(10) and work.error == "The STS benchmark files are missing: put them in data/."
    work = rehearsal().start(1)
    assert work.wait(10) and work.error == "Step 2 failed unexpectedly (KeyError); it has been logged."
    assert rehearsal().result(0) is None and "Step 1 (The cone)" in rehearsal().rehearse(train=False)[0]
    with pytest.raises(ValueError, match="is live"):
        rehearsal().start(story.TRAINING_STEP)
    with pytest.raises(ValueError, match="from 1 to 8"):
        rehearsal().start(8)


# --- the figures, for a projector and for a phone ------------------------------------------------

def text_sizes(figure: go.Figure) -> list[float]:
    """Every text size a figure sets or inherits (layout font, title, axes, legend, annotations, traces)."""
    layout = figure.layout
    sizes = [layout.font.size, layout.title.font.size, layout.legend.font.size]
    sizes += [a.font.size for a in layout.annotations]
    for axis in [*figure.select_xaxes(), *figure.select_yaxes()]:
        sizes += [axis.tickfont.size, axis.title.font.size]
    for trace in figure.data:
        if "textfont" in trace and trace.textfont.size is not None:
            sizes.append(trace.textfont.size)
        if trace.type == "heatmap" and trace.colorbar is not None:
            sizes += [trace.colorbar.tickfont.size, trace.colorbar.title.font.size]
    return [s for s in sizes if s is not None]


def check_slide(slide: slides.Slide, layout: str) -> list[go.Figure]:
    figures = [f for f in (slide.left, slide.right) if f is not None]
    assert figures
    for figure in figures:
        sizes = text_sizes(figure)
        if layout == slides.SCREEN:
            assert min(sizes) >= 18, sizes  # read from the back of a room
        else:
            assert set(sizes) <= {12, 14}, sizes
            title = figure.layout.title.text or ""
            assert all(len(line) <= slides.PHONE_TITLE_CHARS for line in title.split("<br>")), title
            for axis in [*figure.select_xaxes(), *figure.select_yaxes()]:
                assert axis.tickangle in (None, 0), axis  # no label turned on a phone
    return figures


@pytest.mark.parametrize("layout", slides.LAYOUTS)
def test_paraphrases_and_the_explanation_on_either_screen(layout: str) -> None:
    for step in (1, 4):
        data = story.STEPS[step].compute(lambda fraction, what: None)
        figures = check_slide(slides.slide(step, data, layout), layout)
        assert len(figures) == 2
    why = slides.slide(4, data, layout)
    glove, sbert = why.left.data[0], why.right.data[0]
    if layout == slides.SCREEN:  # the strongest pairs carry their number, the rest only a colour
        assert all(t for row in glove.text for t in row)  # GloVe: every word adds as much as the strongest
        shown = [t for row in sbert.text for t in row if t]
        assert shown and len(shown) < sbert.z.size / 4
        assert why.table is None
    else:  # a phone: numbered columns, no numbers in cells, the strongest pairs in a table
        assert list(why.left.layout.xaxis.ticktext) == ["1", "2", "3"] and glove.text is None
        headers, rows = why.table
        assert headers[-1] == "share of the cosine" and len(rows) == 6 and rows[0][1:3] == ("guitar", "guitar")


def sts_result(key: str, label: str, family: str, spearman: float):
    from sbert_demo.benchmark.evaluation import StsResult

    return StsResult(key=key, label=label, family=family, spearman=spearman, pearson=spearman, n=1379)


@pytest.mark.parametrize("layout", slides.LAYOUTS)
def test_the_benchmark_and_table_1_on_either_screen(layout: str) -> None:
    from sbert_demo.benchmark.table1 import Table1Row
    from sbert_demo.data.sts_sets import TABLE1_SETS

    results = [sts_result("glove-6b-50d", "GloVe average (6B, 50d)", "naive", 0.556),
               sts_result("glove-6b-50d+whiten", "GloVe average (6B, 50d) + whitened", "naive", 0.638),
               sts_result("all-MiniLM-L6-v2", "SBERT all-MiniLM-L6-v2", "siamese", 0.820)]
    (bars,) = check_slide(slides.slide(2, results, layout), layout)
    assert {t.orientation for t in bars.data if t.type == "bar"} == {"h" if layout == slides.PHONE else "v"}
    assert "paper, STSb test" in " ".join(t.name for t in bars.data)  # the marks say their split
    assert not bars.layout.title.subtitle.text  # the caption says it; in a slide's 18 px it met the axis's top
    rows = [Table1Row(key=r.key, label=r.label, family=r.family, scores={name: 0.5 for name in TABLE1_SETS})
            for r in results]
    (table,) = check_slide(slides.slide(3, rows, layout), layout)
    heat = table.data[0]
    if layout == slides.PHONE:  # on its side: a row per set, a column per model, short names
        assert len(heat.y) == 8 and heat.x[:3] == ("GloVe", "GloVe<br>whitened", "MiniLM")
    else:
        assert len(heat.x) == 8 and len(heat.y) == 6


def test_the_training_slide_says_what_training_changed() -> None:
    run = talk_training.TrainingRun("finished", losses=[(0, 1.1), (10, 0.9)], evals=[(0, 0.655), (10, 0.68)],
                                    before={"dev": 0.655, "test": 0.556}, after={"dev": 0.68, "test": 0.5877},
                                    train_elapsed_s=6.4)
    slide = slides.training_slide(run, slides.SCREEN)
    assert slide.note == "STSb test 55.60 → 58.77 after 6.4 s of training."
    check_slide(slide, slides.SCREEN)


# --- the presenter view: one step state ----------------------------------------------------------

def request(session: str = "page-1"):
    return SimpleNamespace(session_hash=session, query_params={}, headers={}, client=None)


def test_a_steps_answer_is_dropped_once_the_page_has_moved_on(counted) -> None:
    from sbert_demo.ui import talk

    page = request()
    talk.note_step(1, 1, page)
    answers = talk.show_step(1, None, "screen", 1, page, progress=lambda *a, **k: None)
    title, caption, left, right, waiting, *_ = next(answers)  # at once: the title and a progress box
    assert title.startswith("## 2 / 8") and waiting["visible"] and "Computing step 2" in waiting["value"]
    assert not left["visible"] and not right["visible"]  # no empty frame
    talk.note_step(2, 2, page)  # the presenter pressed → while step 2 computes
    assert list(answers) == []  # the stale step draws nothing more
    counted.release.set()
    assert rehearsal().start(1).wait(10)  # its work went on and is kept: coming back shows it at once
    talk.note_step(1, 3, page)
    (shown,) = list(talk.show_step(1, None, "screen", 3, page, progress=lambda *a, **k: None))
    assert shown[0].startswith("## 2 / 8") and not shown[4]["visible"]
    # Another page's newer step does not count for this one.
    talk.note_step(5, 9, request("page-2"))
    assert not talk._stale(page, 3) and talk._stale(page, 2)


def test_moving_through_the_story() -> None:
    from sbert_demo.ui import talk

    assert talk.move(None, 1) == 0 and talk.move(None, -1) == 0  # from the title slide Next opens step 1
    assert talk.move(7, 1) == 7 and talk.move(0, -1) == 0 and talk.move(3, -1) == 2


def test_the_title_slide_says_which_steps_are_ready(counted) -> None:
    from sbert_demo.ui import talk

    (title, caption, left, right, waiting, table, intro, again, room_row), = list(
        talk.show_step(None, None, "screen", 1, request(), progress=lambda *a, **k: None))
    assert not left["visible"] and intro["visible"] and not room_row["visible"]
    assert "Rehearse" in talk.intro_html() and "1 of 8 steps are ready" in talk.intro_html()  # the room is live
    counted.release.set()
    assert rehearsal().start(1).wait(10) and "2 of 8 steps are ready" in talk.intro_html()


# --- the talk's own training ---------------------------------------------------------------------

@pytest.mark.slow  # ~24 s: the talk's training run
def test_the_talks_training_lives_in_the_cache_and_is_replayed(isolated, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.training import TrainingJobs
    from sbert_demo.ui import talk

    users_model = isolated.models_dir / talk_training.TALK_MODEL  # a user's model with the talk's name
    users_model.mkdir()
    (users_model / "mine.txt").write_text("a user's model", encoding="utf-8")
    quick = talk_training.config_for
    monkeypatch.setattr(talk_training, "config_for", lambda *args, **kw: quick(*args, max_pairs=600, **kw))
    jobs = TrainingJobs()
    monkeypatch.setattr(talk_training, "training_jobs", lambda: jobs)
    assert talk_training.current(jobs) is None
    run = talk_training.start(jobs)
    assert run.state == "starting" and talk_training.start(jobs).state in ("starting", "running")  # one run only
    jobs.wait(300)
    run = talk_training.current(jobs)
    assert run.finished, run
    record = next((isolated.cache_dir / "talk").glob("training-*.json"))
    written = record.stat().st_mtime_ns
    assert talk_training.current(jobs) == run and record.stat().st_mtime_ns == written  # a poll writes nothing again
    assert (users_model / "mine.txt").read_text(encoding="utf-8") == "a user's model"
    assert not (users_model / "modules.json").exists()
    assert (talk_training.models_folder() / talk_training.TALK_MODEL / "modules.json").is_file()
    # Kept: a new process replays it; the step shows it with Train again, and nothing starts.
    reset_all()
    kept = talk_training.stored()
    assert kept == run and kept.before["test"] == pytest.approx(0.556, abs=0.002)
    monkeypatch.setattr(talk_training, "training_jobs", lambda: TrainingJobs())
    page = request()
    talk.note_step(story.TRAINING_STEP, 1, page)
    (shown,) = list(talk.show_step(story.TRAINING_STEP, None, "screen", 1, page))
    assert "after" in shown[1] and shown[7]["visible"]  # the outcome in the caption, Train again offered


def test_the_talk_does_not_take_over_a_users_training_run(isolated, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.training.job_state import JobSnapshot

    busy = SimpleNamespace(snapshot=lambda: JobSnapshot(state="running", purpose="",
                                                        config=SimpleNamespace(output="my-model")))
    with pytest.raises(ValueError, match=r"The Train tab's run \(my-model\)"):
        talk_training.start(busy)
    assert talk_training.current(busy) is None  # a user's run is not the talk's curve


# --- Table 1 said before it runs -----------------------------------------------------------------

def test_table_1_says_what_it_will_cost_before_it_runs() -> None:
    from sbert_demo.benchmark.table1 import costs, table1, weights
    from sbert_demo.ui import table1 as table1_tab

    (glove,) = costs(["glove-6b-50d"])
    assert glove.left.sentences == 26_139 and glove.seconds == pytest.approx(26_139 / 20_000)
    table1(["glove-6b-50d"])
    assert costs(["glove-6b-50d"])[0].left.sentences == 0
    assert "in the cache" in table1_tab.estimate_html(["glove-6b-50d"])
    assert weights(costs(["glove-6b-50d", "all-MiniLM-L6-v2"]))[0] == 1.0
    assert "unknown" not in table1_tab.estimate_html(["glove-6b-50d", "all-MiniLM-L6-v2"])
    with pytest.raises(Exception, match="Unknown runtime"):
        table1_tab.estimate_html(["glove-6b-50d"], "turbo")


def test_progress_moves_with_each_models_expected_work() -> None:
    from sbert_demo.models.per_model import ModelOutcome, iter_per_model

    seen = []

    def run_one(model, step):
        step(0.5, "half")
        step(1.0, "done")
        return ModelOutcome.of(model)

    list(iter_per_model(["glove-6b-50d", "all-MiniLM-L6-v2"], run_one, ModelOutcome,
                        progress=lambda fraction, what: seen.append(round(fraction, 3)), weights=[1.0, 3.0]))
    assert seen == [0.125, 0.25, 0.625, 1.0]  # the second model, expected 3x as long, has 3/4 of the bar


# --- a room that cannot hurt the talk: a follower's page is a follower for good --------------------------------

def test_a_page_from_the_qr_code_is_a_follower_without_the_presenters_controls() -> None:
    from sbert_demo.ui import talk

    follower = SimpleNamespace(session_hash="phone", query_params={"follow": "presenterTOKEN12"}, headers={},
                               client=None)
    token, followed, timer, role, rehearse, intro = talk.page_roles(follower)
    assert followed == "presenterTOKEN12" and timer["active"] and role == talk.FOLLOWER
    assert rehearse["visible"] is False and "Rehearse" not in intro and "follows the presenter" in intro
    *_, role, rehearse, intro = talk.page_roles(request())
    assert role == talk.PRESENTER and rehearse["visible"] is True and "Rehearse" in intro
    import gradio as gr

    for refused in (lambda: talk.rehearse(talk.FOLLOWER, progress=lambda *a, **k: None),
                    lambda: talk.train_again(talk.FOLLOWER), lambda: talk.start_room(talk.FOLLOWER, follower)):
        with pytest.raises(gr.Error, match="A page following the presenter cannot do that"):
            refused()


def test_a_follower_is_told_the_presenters_board_at_step_8() -> None:
    from sbert_demo.ui import talk

    talk.publish_step(talk.ROOM_STEP, None, "presenterTOKEN12", None, talk.PRESENTER)
    assert talk.follow_presenter("presenterTOKEN12", 2, None) == (talk.ROOM_STEP, talk.gr.skip())
    start, timer, _, hint = talk.room_controls(talk.ROOM_STEP, None, None, talk.FOLLOWER, None)
    assert not start["visible"] and not timer["active"] and "When the presenter starts a board" in hint
    talk.publish_step(talk.ROOM_STEP, {"code": "KXQRT", "secret": "s", "base": "http://x/"}, "presenterTOKEN12",
                      None, talk.PRESENTER)
    step, board = talk.follow_presenter("presenterTOKEN12", talk.ROOM_STEP, None)
    assert board == "KXQRT"
    page = SimpleNamespace(session_hash="phone", query_params={}, headers={"host": "127.0.0.1:7860"}, client=None,
                           url=SimpleNamespace(scheme="http", netloc="127.0.0.1:7860", path="/"))
    *_, hint = talk.room_controls(talk.ROOM_STEP, None, None, talk.FOLLOWER, "KXQRT", page)
    assert "KXQRT" in hint and 'href="/join/KXQRT"' in hint and "send" in hint
    # a follower publishes nothing, whatever it shows
    talk.publish_step(1, None, "phoneTOKEN123", "presenterTOKEN12", talk.FOLLOWER)
    assert "phoneTOKEN123" not in talk.presenters
