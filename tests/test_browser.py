"""The real page in headless Chromium: ``python app.py`` in a subprocess, each tab driven by
Playwright, what the page shows checked, and a full-page screenshot of each tab saved to
``test-artifacts/`` (look at them).

Fast variant: the paraphrase example set and the tiny STS files with GloVe and MiniLM, in an
isolated cache. ``-m slow`` adds the real comparison from the issue: GloVe, MiniLM and mpnet on the
paraphrase set and on STSb dev (65.52, 86.72 and 88.11: exactly in PyTorch fp32, within 0.05 on any other lossless
runtime), each transformer where the run's measurement put it, as on a deployed machine.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import script

from sbert_demo.explore.prepare import link_prepared
from sbert_demo.models.registry import get_registry

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
VIEWPORT = {"width": 1600, "height": 1000}
RUNNING: list[subprocess.Popen] = []  # the apps these tests started, for server_state
THREE = ("glove-6b-50d", "all-MiniLM-L6-v2", "all-mpnet-base-v2")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_app(root: Path, data_dir: Path, log_name: str, arguments: tuple[str, ...] = (),
              prepared: Path | None = None, measured: bool = False) -> Iterator[str]:
    """Run ``python app.py [arguments]`` on a free loopback port with its own cache (linking the parts of the
    run's ``prepared`` cache folder, as a prepared machine starts; ``measured``: that folder is the run's measured
    cache and the app runs each model where that measurement put it, as a deployed machine does); yield its URL."""
    if prepared is not None:
        link_prepared(root / "cache", prepared)
        if measured:
            own_decisions(root / "cache")
    yield from serve(app_environment(root, data_dir, measured), ["--port", str(free_port()), *arguments], log_name)


def own_decisions(cache: Path) -> Path:
    """``cache``'s runtime decisions as a copy of its own instead of a link to the run's: an app measures an unsure
    decision again when the machine is idle, and writes it where it read it; the run's other tests keep theirs."""
    linked = cache / "runtime"
    if linked.is_symlink():
        source = linked.resolve()
        linked.unlink()
        shutil.copytree(source, linked)
    return cache


def log_file(log_name: str) -> Path:
    """Where an app's log goes: ``test-artifacts/<log_name>``, or ``<stem>-gw0.log`` in pytest-xdist's worker gw0
    (each worker may start the same app)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return ARTIFACTS / (f"{Path(log_name).stem}-{worker}{Path(log_name).suffix}" if worker else log_name)


def app_environment(root: Path, data_dir: Path, measured: bool = False) -> dict[str, str]:
    """The environment a test's app runs with: its own cache and models folders under ``root``, no Hub; the
    CPU-flag rules for its runtimes (tests/conftest.py), or with ``measured`` the deployment's default, the
    runtimes measured fastest on this machine (read from the run's measured cache its cache folder links: the
    measurement is made once per run, before any app starts, so nothing a test expects hangs on timings)."""
    env = {**os.environ, "SBERT_DEMO_DATA": str(data_dir), "SBERT_DEMO_CACHE": str(root / "cache"),
           "SBERT_DEMO_MODELS": str(root / "models"), "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(root / "hf"),
           "GRADIO_ANALYTICS_ENABLED": "False"}
    for name in ("SPACE_ID", "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT", "SBERT_DEMO_PRECISION", "SBERT_DEMO_MCP"):
        env.pop(name, None)
    if measured:
        for name in ("SBERT_DEMO_DEVICE", "SBERT_DEMO_BACKEND"):
            env.pop(name, None)
        env["SBERT_DEMO_RUNTIME_CHOICE"] = "measure"
    return env


def launch(env: dict[str, str], arguments: list[str], log_name: str, python: str = sys.executable,
           cwd: Path = REPO, timeout: float = 120, port: str | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``python app.py [arguments]`` in ``cwd`` with ``env``; return (the process, its URL) once it answers.

    The port comes from ``--port`` in ``arguments``, else ``port`` (e.g. set through GRADIO_SERVER_PORT), else
    7860. The log goes to ``test-artifacts/<log_name>`` (appended to, so a restarted app adds to it).
    """
    port = arguments[arguments.index("--port") + 1] if "--port" in arguments else port or "7860"
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(log_file(log_name), "a", encoding="utf-8")
    server = subprocess.Popen([python, "app.py", *arguments], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    log.close()  # the child keeps its own handle
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            pytest.fail(f"app.py exited with {server.returncode}; see {log_file(log_name)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return server, url
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.kill()
            pytest.fail(f"app.py did not answer within {timeout:.0f} s; see {log_file(log_name)}")
        time.sleep(0.5)


def serve(env: dict[str, str], arguments: list[str], log_name: str, python: str = sys.executable,
          cwd: Path = REPO, timeout: float = 120, port: str | None = None) -> Iterator[str]:
    """:func:`launch`, yield its URL, and stop the app afterwards."""
    log_file(log_name).unlink(missing_ok=True)
    server, url = launch(env, arguments, log_name, python, cwd, timeout, port)
    RUNNING.append(server)
    try:
        yield url
    finally:
        RUNNING.remove(server)
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


PAGE_EVENTS: dict[int, list[str]] = {}  # id(page) -> its console messages and failed requests


def server_state(page, selector: str, log_name: str) -> str:
    """The page's status text and the app's log tail, every thread's stack in it (app.py dumps them on SIGUSR1)."""
    status = page.inner_text(selector) if page.query_selector(selector) else "(no status)"
    shown = page.evaluate("""() => [...document.querySelectorAll('.progress-box, .pending, .wrap.default, button[disabled]')]
        .filter(e => e.offsetParent !== null).map(e => `${e.id || e.className}: ${e.innerText.slice(0, 160)}`)""")
    heard = PAGE_EVENTS.get(id(page), [])
    for server in RUNNING:
        if server.poll() is None and hasattr(signal, "SIGUSR1"):
            server.send_signal(signal.SIGUSR1)
    time.sleep(1)
    log = log_file(log_name).read_text(encoding="utf-8", errors="replace") if log_file(log_name).is_file() else ""
    return (f"status {status!r}; shown {shown!r}; the page's console and failed requests: {heard[-30:]!r}; "
            f"the app's log ends:\n{busy_threads(log)}")


IDLE_FRAMES = ("threading.py", "queue.py", "selectors.py", "asyncio/", "anyio/_backends", "tqdm/_monitor.py",
               "uvicorn/", "gradio/blocks.py", "app.py")
DUMP_LINES = ("Thread 0x", "Current thread 0x", "  File ", "  <no Python frame>")


def busy_threads(log: str, keep: int = 3000) -> str:
    """The end of an app's log with the stack dump SIGUSR1 wrote at its end cut to the threads doing something:
    those with a frame outside Python's and the server's waiting loops (the idle ones would push out the log)."""
    lines = log.splitlines()
    start = len(lines)
    while start and (not lines[start - 1].strip() or lines[start - 1].startswith(DUMP_LINES)):
        start -= 1
    head, dump = "\n".join(lines[:start]), "\n".join(lines[start:])
    blocks = [block for block in dump.split("\n\n") if block.strip()]
    busy = [block for block in blocks
            if any("File " in line and not any(frame in line for frame in IDLE_FRAMES) for line in block.splitlines())]
    if not blocks:
        return head[-keep:]
    return f"{head[-keep:]}\n[{len(blocks)} threads dumped, {len(blocks) - len(busy)} of them waiting]\n" + "\n\n".join(busy)


def open_page(browser, url: str, timeout_ms: int = 60_000, viewport: dict | None = None):
    """A fresh browser context on ``url``, once the app is on the page (Explore's button exists; a link
    to another tab may have hidden it already) and its load chain has finished: (context, page)."""
    context = browser.new_context(viewport=viewport or VIEWPORT)
    page = context.new_page()
    heard = PAGE_EVENTS[id(page)] = []  # what server_state reports when a wait runs out (an id reused: a new list)
    page.on("console", lambda message: heard.append(f"{message.type}: {message.text[:300]}"))
    page.on("requestfailed", lambda request: heard.append(f"failed {request.method} {request.url[:200]}"))
    page.set_default_timeout(timeout_ms)
    page.goto(url)
    page.wait_for_selector("#explore-run", state="attached")
    # the page's own readiness mark (ui/assets/link_applied.js): until then its load chain may still write the
    # link notes and a link's values over what a test has typed or clicked
    page.wait_for_function("document.documentElement.dataset.linked === 'yes'")
    return context, page


@pytest.fixture
def page(browser, app_url: str):
    context, page = open_page(browser, app_url)
    yield page
    context.close()


def choose_models(page, picker: str, keys: tuple[str, ...]) -> None:
    """Keep only ``keys`` among the chips of a model multi-select (chips show registry labels)."""
    labels = [get_registry().get(key).label for key in keys]
    while True:
        chips = page.locator(f"{picker} .token").all_inner_texts()
        extra = [i for i, text in enumerate(chips) if not any(text.startswith(label) for label in labels)]
        if not extra:
            break
        page.locator(f"{picker} .token").nth(extra[0]).locator(".token-remove").click()
    assert len(chips) == len(keys), chips


def plot_traces(page, selector: str) -> list[int]:
    """Number of drawn Plotly traces in each plot matching ``selector``."""
    return page.eval_on_selector_all(selector + " .js-plotly-plot",
                                     "plots => plots.map(p => (p.data || []).length)")


def capture(page, path: Path, *, full_page: bool = False) -> None:
    """``page.screenshot`` to ``path``, tried again when Chromium stalls on the capture itself.

    Headless Chromium can, rarely, never finish a capture of a page whose script still runs (seen as a
    full-page shot of the Why tab that had not ended after 240 s): each try has 45 s, and between tries
    the page must answer a script within 10 s, so a page that hangs still fails.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(3):
        try:
            page.screenshot(path=str(path), full_page=full_page, timeout=45_000)
            return
        except PlaywrightTimeout:
            page.wait_for_function("() => true", polling=100, timeout=10_000)
    raise AssertionError(f"Chromium did not capture {path.name} in three tries of 45 s, though the page answered")


def shoot(page, name: str) -> None:
    page.wait_for_timeout(1000)  # let Plotly finish drawing
    capture(page, ARTIFACTS / name, full_page=True)


def run_explore(page, models: tuple[str, ...], timeout_s: float) -> None:
    page.locator("#explore-example input").click()
    page.get_by_role("option", name="Paraphrased questions").click()
    choose_models(page, "#explore-models", models)
    page.click("#explore-run")
    page.wait_for_function(
        f"document.querySelectorAll('#explore-summary tbody tr').length === {len(models)} && "
        f"document.querySelectorAll('.map .js-plotly-plot').length === {len(models)}", timeout=timeout_s * 1000)


def gaps(page) -> dict[str, float]:
    """The gap column of the summary table, by model label."""
    rows = page.eval_on_selector_all("#explore-summary tbody tr",
                                     "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")
    return {row[0]: float(row[4].split()[0]) for row in rows}


PROJECTORS = [(1280, 720), (1366, 768), (1920, 1080)]
# What a step looks like on the screen: the page's height (no scrolling if it is the screen's), whether
# anything of the normal page shows, the caption's and the title's font size, the figures' heights.
FIT = """() => ({
  height: document.documentElement.scrollHeight,
  normalPage: [".header-row", "#main-tabs > .tab-wrapper", "#page-footer", "#talk-steps"]
    .some((s) => { const e = document.querySelector(s); return e && e.offsetParent !== null; }),
  caption: parseFloat(getComputedStyle(document.querySelector("#talk-caption p")).fontSize),
  title: parseFloat(getComputedStyle(document.querySelector("#talk-title h2")).fontSize),
  figures: [...document.querySelectorAll("#talk-left .js-plotly-plot, #talk-right .js-plotly-plot")]
    .filter((gd) => gd.offsetParent !== null).map((gd) => gd.getBoundingClientRect().height),
})"""


def assert_fits_each_projector(page, number: int) -> None:
    """The step on the screen at each projector size: no scrolling, none of the normal page, text of
    24 px or more, and the figure filling the room left (at least 45% of the screen's height)."""
    for width, height in PROJECTORS:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(900)  # the resize, then page.js sizing the figures
        fit = page.evaluate(FIT)
        assert fit["height"] <= height and not fit["normalPage"], (number, width, height, fit)
        assert fit["caption"] >= 24 and fit["title"] >= 30, (number, width, height, fit)
        assert fit["figures"] and min(fit["figures"]) >= 0.45 * height, (number, width, height, fit)
    page.set_viewport_size({"width": PROJECTORS[0][0], "height": PROJECTORS[0][1]})


def test_explore_shows_the_page_drawn_before_serving_without_a_click(browser, app_url: str) -> None:
    """The app draws Explore's default page before it serves (its log says so); a visitor opening the app at a
    laptop's size sees it, its heatmaps and maps, before any click (it was blank under "Compare models")."""
    assert "The default Explore page was drawn in" in log_file("server-fast.log").read_text(encoding="utf-8")
    context, page = open_page(browser, app_url, viewport={"width": 1366, "height": 768})
    try:
        page.wait_for_function("document.querySelectorAll('.heatmap .js-plotly-plot').length === 3", timeout=20_000)
        assert plot_traces(page, ".heatmap") == [1, 1, 1] and len(plot_traces(page, ".map")) == 3
        assert "GloVe" in page.inner_text("#explore-summary")
        assert page.evaluate("document.querySelector('#explore-progress').innerText.trim()") == ""  # nothing ran
    finally:
        context.close()


def test_explore_tab(page) -> None:
    run_explore(page, THREE[:2], timeout_s=180)
    assert plot_traces(page, ".heatmap") == [1, 1]
    assert plot_traces(page, ".map") == [6, 6]  # six groups, one trace each
    found = gaps(page)
    glove = next(v for k, v in found.items() if "GloVe" in k)
    minilm = next(v for k, v in found.items() if "MiniLM" in k)
    assert minilm > glove + 0.15, found
    assert "ARI" in page.inner_text(".map-caption >> nth=0")
    # Another query re-ranks without a new run.
    page.locator("#explore-query input").click()
    page.get_by_role("option", name="9. Will it rain tomorrow?").click()
    page.wait_for_function("[...document.querySelectorAll('.ranking')].every(e => "
                           "e.innerText.includes('Query: 9. Will it rain tomorrow?'))")
    shoot(page, "explore.png")
    name, content = download(page, ".heatmap .svg-download")
    assert name.endswith("_cosine_similarity.svg") and content.lstrip().startswith(b"<svg"), name
    name, content = download(page, '.heatmap .modebar-btn[data-title^="Download plot"]')
    assert name.endswith(".png") and content.startswith(b"\x89PNG"), name  # the camera still gives PNG


def download(page, selector: str) -> tuple[str, bytes]:
    """Click a figure toolbar button (shown on hover; clicked directly) and return the downloaded file."""
    page.wait_for_selector(selector, state="attached")
    with page.expect_download(timeout=30_000) as started:
        page.eval_on_selector(selector, "button => button.click()")
    return started.value.suggested_filename, Path(started.value.path()).read_bytes()


def test_corpus_map_from_an_upload(page, tmp_path: Path) -> None:
    """A file with more sentences than the heatmaps show lands in Explore → Corpus map; the map, the
    colouring by clusters and the search all work in the page."""
    import csv

    from sbert_demo.data.corpora import stsb_corpus

    shipped = stsb_corpus(REPO / "data")
    upload = tmp_path / "stsb-600.csv"
    with upload.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "source"])
        writer.writerows(list(zip(shipped.sentences, shipped.labels))[::25][:600])  # every source
    sources = len(set(shipped.labels[::25][:600]))
    page.set_input_files('#explore-upload ~ input[type=file], input[data-testid$="-upload-button"]', str(upload))
    page.wait_for_selector("#corpus-run", state="visible")
    page.wait_for_function("document.querySelector('#explore-notes')?.innerText.includes('600 sentences')")
    try:
        page.wait_for_function("document.querySelector('#corpus-card')?.innerText.includes('stsb-600.csv: 600 sentences')")
    except Exception:  # the card as it was left, and what the app was doing
        pytest.fail(f"The corpus card did not describe the upload: {page.inner_text('#corpus-card')!r}; "
                    f"{server_state(page, '#corpus-progress', 'server-fast.log')}")
    page.wait_for_timeout(1500)
    choose_models(page, "#corpus-models", ("glove-6b-50d",))
    page.click("#corpus-run")
    page.wait_for_function("document.querySelectorAll('.corpus-map .js-plotly-plot').length === 1", timeout=180_000)
    assert plot_traces(page, ".corpus-map") == [sources]
    assert "agreement with the labels" in page.inner_text(".corpus-column .map-caption")
    page.fill("#corpus-search textarea, #corpus-search input", "man")
    page.click("#corpus-find")
    page.wait_for_function("document.querySelector('#corpus-found')?.innerText.includes('of 600 sentences')")
    page.wait_for_function(f"(document.querySelector('.corpus-map .js-plotly-plot')?.data || []).length === {sources + 1}")
    last = page.eval_on_selector(".corpus-map .js-plotly-plot", "p => p.data[p.data.length - 1].name")
    assert last.startswith("matches for “man”"), last
    page.locator("#corpus-colour label", has_text="k-means").click()
    page.wait_for_function("(document.querySelector('.corpus-map .js-plotly-plot')?.data || [])"
                           ".every(t => t.name.startsWith('cluster') || t.name.startsWith('matches'))")
    assert plot_traces(page, ".corpus-map") == [12 + 1]  # twelve clusters and the matches still on top
    shoot(page, "corpus-map.png")
    name, content = download(page, ".corpus-map .svg-download")  # a WebGL figure exports too
    assert name.endswith("_UMAP_map.svg") and content.lstrip().startswith(b"<svg") and len(content) > 10_000


def test_explore_upload_fills_the_text_box(page, tmp_path: Path) -> None:
    upload = tmp_path / "mine.csv"
    upload.write_text("topic,sentence\npets,\"A cat, asleep.\"\npets,A dog | barking\n", encoding="utf-8")
    page.set_input_files('#explore-upload ~ input[type=file], input[data-testid$="-upload-button"]', str(upload))
    page.wait_for_function("document.querySelector('#explore-text textarea').value.includes('A dog / barking')")
    assert page.input_value("#explore-text textarea") == "pets | A cat, asleep.\npets | A dog / barking"
    assert "replaced by '/'" in page.inner_text("#explore-notes")


def test_sts_tab(page) -> None:
    page.get_by_role("tab", name="STS benchmark").click()
    choose_models(page, "#sts-models", THREE[:2])
    page.click("#sts-run")
    try:
        page.wait_for_function("document.querySelectorAll('.sts-scatter .js-plotly-plot').length === 2 && "
                               "document.querySelector('#sts-table').innerText.includes('MiniLM')", timeout=180_000)
    except Exception:  # what the page and the app were doing, in the failure's message
        drawn = page.evaluate("document.querySelectorAll('.sts-scatter .js-plotly-plot').length")
        pytest.fail(f"The STS run did not finish: {drawn} scatter(s) drawn, the table {page.inner_text('#sts-table')!r}; "
                    f"{server_state(page, '#sts-status', 'server-fast.log')}")
    table = page.inner_text("#sts-table")
    assert "GloVe average (6B, 50d)" in table and "STSb dev: 6 scored pairs" in page.inner_text("#sts-status")
    assert plot_traces(page, "#sts-bars")[0] == 2  # bars per family; no paper marks beside a dev run
    page.click("#sts-run")  # cached now: every row says so
    # The wait, not the check, is generous: on a cold app the background warm-up (mpnet's ONNX export)
    # shares the two cores, and once in four full runs the cached rerun took longer than 30 s.
    page.wait_for_function("document.querySelector('#sts-table').innerText.split('yes').length - 1 === 2",
                           timeout=120_000)
    shoot(page, "sts.png")


def test_models_tab(page) -> None:
    page.get_by_role("tab", name="Models").click()
    page.wait_for_function("document.querySelector('#models-table').innerText.includes('glove-6b-50d')")
    assert "384" in page.inner_text("#models-table")  # MiniLM's dimension, read from its config
    page.fill("#models-name input, #models-name textarea", "bert-base-uncased")
    started = time.perf_counter()
    page.click("#models-add")
    page.get_by_text("needs the Hugging Face Hub").last.wait_for(timeout=20_000)
    assert time.perf_counter() - started < 10
    assert "Traceback" not in page.content()
    shoot(page, "models.png")


# --- the real comparison from the issue (minutes on a CPU) ---------------------------------------


@pytest.mark.slow
def test_real_comparison(browser, real_app) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(real_app.url)
    page.wait_for_selector("#explore-run")
    run_explore(page, THREE, timeout_s=600)
    found = gaps(page)
    glove = next(v for k, v in found.items() if "GloVe" in k)
    assert all(v > glove + 0.15 for k, v in found.items() if "SBERT" in k), found
    shoot(page, "explore-real.png")

    page.get_by_role("tab", name="STS benchmark").click()
    choose_models(page, "#sts-models", THREE)
    page.click("#sts-run")
    page.wait_for_function("document.querySelectorAll('.sts-scatter .js-plotly-plot').length === 3",
                           timeout=1_200_000)
    # the table is drawn beside the last scatter, not always in the same frame (seen once under load: the plots
    # were there and the table still empty)
    page.wait_for_function("document.querySelector('#sts-table').innerText.includes('siamese')", timeout=120_000)
    table = page.inner_text("#sts-table")
    assert re.search(r"GloVe average \(6B, 50d\)\s+naive\s+65\.52\b", table), table  # word vectors: always fp32
    # each transformer on the runtime measured fastest here (the table says which): the reference exactly in PyTorch
    # fp32, within 0.05 on any other lossless runtime (tests/test_reference_slow.py checks the same bound)
    for name, reference in (("MiniLM-L6-v2", 86.72), ("mpnet-base-v2", 88.11)):
        row = re.search(name + r"\s+siamese\s+(\d+\.\d+)(?:\s+\S+){4}\s+(.+)", table)
        assert row, table
        got, runtime = float(row.group(1)), row.group(2)
        assert got == reference if runtime.startswith("PyTorch fp32") else abs(got - reference) <= 0.05, table
    page.click("#sts-run")  # the warm re-run is served from the cache (its time: see the issue notes)
    page.wait_for_function("document.querySelector('#sts-table').innerText.split('yes').length - 1 === 3")
    shoot(page, "sts-real.png")
    context.close()


# --- deep links ------------------------------------------------------------------------------------

def link_box(page) -> str:
    return page.locator("#share-link input, #share-link textarea").first.input_value()


def explore_state(page) -> tuple:
    page.wait_for_function("document.querySelectorAll('#explore-models .token').length > 0")
    return (tuple(page.locator("#explore-models .token").all_inner_texts()),
            page.locator("#explore-example input").input_value(), page.locator("#explore-query input").input_value(),
            page.locator("#explore-text textarea").input_value())


def test_a_deep_link_opens_its_state_and_copy_link_reopens_it(browser, app_url: str) -> None:
    context, page = open_page(browser, app_url + "?tab=explore&set=bag-of-words-traps&models=glove-6b-50d,"
                                                 "all-MiniLM-L6-v2&query=3&colour=clusters")
    page.wait_for_function("(document.querySelector('#explore-example input') || {}).value === 'Bag-of-words traps'")
    page.wait_for_function("document.querySelectorAll('#explore-models .token').length === 2")
    state = explore_state(page)
    assert state[0] == ("GloVe average (6B, 50d) · naive", "SBERT all-MiniLM-L6-v2 · siamese")
    assert state[2] == "3. I would recommend this hotel to my friends."
    assert page.locator("#explore-text textarea").input_value().startswith("negation-1 | The movie was good.")
    assert page.inner_text("#link-notes").strip() == ""
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#share-link input, #share-link textarea') || {}).value || '').startsWith('http')")
    url = link_box(page)
    assert "set=bag-of-words-traps" in url and "models=glove-6b-50d,all-MiniLM-L6-v2" in url and "query=3" in url
    shoot(page, "link-opened.png")
    again = context.new_page()
    again.goto(url)
    again.wait_for_function("document.querySelectorAll('#explore-models .token').length === 2")
    again.wait_for_function("((document.querySelector('#explore-query input') || {}).value || '').startsWith('3.')")
    assert explore_state(again) == state
    context.close()


def test_a_link_to_another_tab_and_a_malformed_link(browser, app_url: str) -> None:
    context, page = open_page(browser, app_url + "?tab=sts&models=glove-6b-50d,nope&data=test&query=zero&x=1")
    page.wait_for_function("((document.querySelector('#link-notes') || {}).innerText || '').includes('nope')")
    notes = page.inner_text("#link-notes")
    assert "Ignored unknown model(s) 'nope'" in notes and "'x'" in notes and "query='zero'" in notes
    page.wait_for_function("document.querySelectorAll('#sts-models .token').length === 1")
    assert page.get_by_label("STSb test").is_checked()
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#share-link input, #share-link textarea') || {}).value || '').includes('tab=sts')")
    assert "models=glove-6b-50d&data=test" in link_box(page)
    shoot(page, "link-malformed.png")
    context.close()


def test_a_corpus_map_link_opens_the_corpus_part_and_copy_link_keeps_it(browser, app_url: str) -> None:
    context, page = open_page(browser, app_url + "?tab=corpus&models=glove-6b-50d")
    page.wait_for_selector("#corpus-run", state="visible")
    page.wait_for_function("document.querySelectorAll('#corpus-models .token').length === 1")
    assert page.locator("#corpus-models .token").inner_text().startswith("GloVe average")
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#share-link input, #share-link textarea') || {}).value || '')"
                           ".includes('tab=corpus')")
    assert link_box(page).endswith("?tab=corpus&models=glove-6b-50d")
    # after a detour through another tab, Explore still shows (and a link still names) the corpus map
    page.get_by_role("tab", name="STS benchmark").click()
    page.wait_for_timeout(1000)
    page.get_by_role("tab", name="Explore").click()
    page.wait_for_timeout(1000)
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#share-link input, #share-link textarea') || {}).value || '')"
                           ".includes('tab=corpus')")
    page.get_by_role("tab", name="Compare sentences").click()
    page.wait_for_timeout(1000)
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#share-link input, #share-link textarea') || {}).value || '')"
                           ".includes('tab=explore')")
    context.close()


def test_sentences_too_long_for_a_link_get_a_message(page) -> None:
    page.locator("#explore-text textarea").fill("\n".join(f"Sentence number {i} is here." for i in range(120)))
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#link-notes') || {}).innerText || '').includes('do not fit in a link')")
    assert "sentences=" not in link_box(page) and "tab=explore" in link_box(page)
    page.locator("#explore-text textarea").fill("One sentence.\nAnother | Two sentences.")
    page.click("#copy-link")
    page.wait_for_function("((document.querySelector('#share-link input, #share-link textarea') || {}).value || '').includes('sentences=')")
    reopened = page.context.new_page()
    reopened.goto(link_box(page))
    reopened.wait_for_selector("#explore-text textarea")
    reopened.wait_for_function("(document.querySelector('#explore-text textarea') || {}).value === "
                               "'One sentence.\\nAnother | Two sentences.'")


def test_a_hostile_visitors_run_over_http_finds_nothing(app_url: str, capsys: pytest.CaptureFixture) -> None:
    """``scripts/hostile.py`` (docs/spaces.md) against the running app, from the outside: server folders named in
    the dataset field (the app's own cache among them), a 1.5 GB streamed body with the server's memory read
    around it, Latin-1 corpora, 24 simultaneous comparisons of a fresh map, numbers and nesting past any corpus,
    other scripts. Its 56 MB upload and room of 500 phones are left out here (the same limits are checked in the
    process: tests/test_hostile_server.py's upload limit, tests/test_audience.py's venue address)."""
    hostile = script("hostile")
    port = app_url.rstrip("/").rsplit(":", 1)[1]
    server = next(s for s in RUNNING if s.poll() is None and port in map(str, s.args))
    environment = dict(item.split("=", 1) for item in
                       Path(f"/proc/{server.pid}/environ").read_text(errors="replace").split("\0") if "=" in item)
    found = hostile.main(["--url", app_url, "--pid", str(server.pid), "--cache", environment["SBERT_DEMO_CACHE"],
                          "--skip", "upload_limit,room"])
    printed = capsys.readouterr().out
    assert found == 0 and "FAILED" not in printed, printed
    # every case ran and was checked: 9 places, 1 race, 1 body, 2 files, 8 edges, 6 names and words, the phone's body
    assert printed.count("  ok     ") == 29, printed
    assert "the server grew by ? MB" not in printed and "the cache root" in printed, printed
