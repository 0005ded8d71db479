"""Long work tied to its page (sbert_demo.ui.page_work), on a real Gradio server and a real Chromium: a run whose
page closes stops within seconds and frees its slot; a visitor runs one heavy run at a time; a cancelled run
stops too. The heavy handler here reports progress as the app's do (Table 1, the cost, corpus maps, STS):
through :func:`watched`, under :class:`heavy_run`, decorated with ``user_errors``."""

from __future__ import annotations

import threading
import time

import gradio as gr
import pytest
from starlette.middleware import Middleware
from conftest import launch_here
from test_browser import free_port

from sbert_demo.ui.common import user_errors
from sbert_demo.ui.page_work import PageClosed, heavy_run, page_open, watched
from sbert_demo.ui.visitor import COOKIE, VisitorCookie, visitor

STEPS = 1200  # 0.05 s each: a minute's work unless its page goes


class Work:
    def __init__(self) -> None:
        self.started: list[float] = []
        self.ended: list[tuple[float, int, str]] = []  # (when, steps done, how)
        self.lock = threading.Lock()

    def run(self, label: str, request: gr.Request, progress=gr.Progress()) -> str:
        report = watched(progress)
        with self.lock:
            self.started.append(time.monotonic())
        done, how = 0, "finished"
        try:
            with heavy_run(visitor(request), label):
                for done in range(STEPS):
                    report(done / STEPS, f"{label}: step {done} of {STEPS}")
                    time.sleep(0.05)
        except PageClosed:
            how = "page closed"
            raise
        finally:
            with self.lock:
                self.ended.append((time.monotonic(), done, how))
        return "done"


@pytest.fixture
def served():
    work = Work()
    with gr.Blocks() as demo:
        label = gr.Textbox("heavy", elem_id="label")
        go = gr.Button("Go", elem_id="go")
        out = gr.Textbox(elem_id="out")
        go.click(user_errors(work.run), label, out, api_name="heavy", concurrency_limit=2)
    port = free_port()
    url = launch_here(demo.queue(), port, app_kwargs={"middleware": [Middleware(VisitorCookie)]})
    try:
        yield url, work
    finally:
        demo.close()


def wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.browser
def test_a_closed_page_stops_its_run_within_seconds_and_frees_the_slot(browser, served) -> None:
    url, work = served
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.click("#go")
    page.wait_for_function("document.body.innerText.includes('heavy: step')", timeout=30_000)  # its progress shows
    time.sleep(1.0)
    closed = time.monotonic()
    page.close()
    assert wait_for(lambda: work.ended, 15), "the run went on after its page closed"
    when, done, how = work.ended[0]
    assert how == "page closed" and done < STEPS - 1
    assert when - closed < 10, f"stopped {when - closed:.1f} s after its page closed"
    # its slot is free and so is the visitor's place: two more pages of the browser take both slots at once
    others = [context.new_page() for _ in range(2)]
    for other in others:
        other.goto(url)
        before = len(work.started)
        other.locator("#label").locator("input, textarea").first.fill(f"tab {before}")
        other.click("#go")
        assert wait_for(lambda: len(work.started) > before, 10), (work.started, work.ended)
    assert wait_for(lambda: "still under way in another tab" in others[1].inner_text("body"), 10)  # one each
    for other in others:
        other.close()
    assert wait_for(lambda: len(work.ended) == 3, 15)
    context.close()


def test_a_visitor_runs_one_heavy_run_at_a_time_and_a_cancelled_one_stops(served) -> None:
    """Two clients with one visitor cookie (two tabs of one browser): the second run is refused with a sentence
    while the first runs; the first, cancelled, stops; then the second may run. Another visitor is not held."""
    from gradio_client import Client

    url, work = served
    cookie = {"Cookie": f"{COOKIE}=Zm9vYmFyYmF6cXV4cXV1eA"}
    first = Client(url, verbose=False, headers=cookie)
    job = first.submit("first", api_name="/heavy")
    assert wait_for(lambda: work.started, 20)
    second = Client(url, verbose=False, headers=cookie)
    with pytest.raises(Exception, match="Your first run is still under way in another tab"):
        second.predict("second", api_name="/heavy")
    assert [how for *_, how in work.ended] == ["finished"]  # refused before any work
    job.cancel()
    stopped = lambda: [how for *_, how in work.ended].count("page closed")  # noqa: E731
    assert wait_for(lambda: stopped() == 1, 15), "a cancelled run went on"
    again = second.submit("second", api_name="/heavy")
    assert wait_for(lambda: len(work.started) == 3, 15)  # the visitor's place is free again
    assert wait_for(lambda: "second: step 5 " in str(again.status().progress_data), 15)  # it runs, not refused
    again.cancel()
    assert wait_for(lambda: stopped() == 2, 15)
    other = Client(url, verbose=False, headers={"Cookie": f"{COOKIE}=b3RoZXJ2aXNpdG9ydG9rZW4"})
    assert other.submit("another visitor", api_name="/heavy")  # not held by the first visitor's runs


def test_outside_a_queued_event_the_page_counts_as_open() -> None:
    assert page_open()
    heard = []
    report = watched(lambda fraction, desc=None: heard.append((fraction, desc)))
    report(0.5, "half")
    report(0.75, desc="three quarters")
    assert heard == [(0.5, "half"), (0.75, "three quarters")]
