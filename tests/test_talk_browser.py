"""The talk on stage, in headless Chromium (slow), on one app for the whole module.

* **Cold start**: on a prepared machine that has not seen the talk, the presenter walks the computed steps
  while the app computes them (Table 1 with MiniLM on seven sets, the cost, the training run); a step link
  opens its step; then ``prepare``, as ``scripts/setup.sh`` runs it, finds every step kept. The tests below
  open the steps the walk computed, as on a machine ``setup.sh`` prepared.
* **Rehearsal**: the presenter view at 1280x720 goes through all eight steps forward and back with key
  presses 0.3 s apart, is reloaded in the middle of step 7, and gets a burst of random key presses;
  after each, the step on screen, in the address and in the QR code's link agree, and the step is the
  one the keys count to; step 7 trains at most once; no step leaves an empty frame for more than 0.5 s.
* **Layout**: every step and every tab at a laptop (1366x768), a projector (1280x720) and a phone
  (390x844): no text cut by its box or figure, no two texts of a figure over each other, nothing
  wider than the screen (``tests/browser_assets/text_problems.js`` measures it in the DOM).
  Screenshots in ``test-artifacts/`` (look at them).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import (ARTIFACTS, PROJECTORS, REPO, app_environment, assert_fits_each_projector, capture,
                          free_port, log_file, open_page, own_decisions, serve, shoot)

from sbert_demo.explore.prepare import PREPARED_PARTS, link_prepared

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = {"laptop": (1366, 768), "projector": (1280, 720), "phone": (390, 844)}
STEPS = 8
TEXT_PROBLEMS = (Path(__file__).parent / "browser_assets" / "text_problems.js").read_text(encoding="utf-8")
LOG = "server-talk.log"
# What the page shows as the step: the title's counter, the address's step and the QR code's link.
WHERE = """() => ({
  title: ((document.querySelector('#talk-title') || {}).innerText || '').match(/(\\d+) \\/ 8/)?.[1] || null,
  address: new URLSearchParams(location.search).get('step'),
  qr: ((document.querySelector('#talk-qr') || {}).innerText || '').match(/step=(\\d+)/)?.[1] || null,
})"""
# The longest time the figure's place was empty: no figure drawn or being drawn (its frame's spinner), no
# progress box, no title slide, no room row.
WATCH_EMPTY = """() => {
  const seen = (id) => { const e = document.getElementById(id); return e && e.offsetParent !== null; };
  const spinning = (id) => seen(id) && !['none', 'normal'].includes(
    getComputedStyle(document.getElementById(id), '::after').content);
  window.__emptySince = null; window.__longestEmpty = 0;
  setInterval(() => {
    const something = document.querySelector('#talk-left .js-plotly-plot') && seen('talk-left')
      || spinning('talk-left') || seen('talk-waiting') || seen('talk-intro-box') || seen('talk-room-row');
    const now = performance.now();
    if (something) { window.__emptySince = null; return; }
    if (window.__emptySince === null) { window.__emptySince = now; }
    window.__longestEmpty = Math.max(window.__longestEmpty, now - window.__emptySince);
  }, 25);
}"""


@pytest.fixture(scope="module")
def talk_env(tmp_path_factory: pytest.TempPathFactory, shipped_data: Path, measured_cache: Path) -> dict[str, str]:
    """A machine prepared as a deployment is (the run's measured cache: runtimes measured and built, UMAP; each
    model run where it was measured fastest) that has not seen the talk: no embeddings, no fitted fixes, no step
    computed. The module's first test walks the talk from it, cold."""
    root = tmp_path_factory.mktemp("talk-app")
    own_decisions(link_prepared(root / "cache", measured_cache, [part for part in PREPARED_PARTS if part != "fixes"]))
    env = app_environment(root, shipped_data, measured=True)
    for name in ("SBERT_DEMO_FIT_SENTENCES", "SBERT_DEMO_DEVICE"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def talk_app(talk_env: dict[str, str]) -> Iterator[tuple[str, Path]]:
    for url in serve(talk_env, ["--port", str(free_port())], LOG):
        yield url, Path(talk_env["SBERT_DEMO_CACHE"])


def open_talk(browser, url: str, size: tuple[int, int], link: str = "?view=talk"):
    phone = size[0] < 640
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=phone, has_touch=phone,
                                  device_scale_factor=2 if phone else 1)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url + link)
    page.wait_for_selector("#talk-next", state="visible")
    return context, page


def settle(page, step: int) -> dict:
    """Wait until the title, the address and the QR code all say ``step`` (1-based) and its figure (or the
    room's row) is drawn; return what the page says."""
    page.wait_for_function(f"(() => {{ const w = ({WHERE})(); return w.title === '{step}' && w.address === '{step}' "
                           f"&& w.qr === '{step}'; }})()", timeout=60_000)
    page.wait_for_function("(() => { const seen = (s) => { const e = document.querySelector(s); "
                           "return !!e && e.offsetParent !== null; }; "
                           "return (!!document.querySelector('#talk-left .js-plotly-plot') && seen('#talk-left')) "
                           "|| seen('#talk-room-row'); })()", timeout=60_000)
    page.wait_for_timeout(700)  # page.js sizes the figure to the screen
    return page.evaluate(WHERE)


def test_presenter_view_runs_its_computed_steps_from_a_cold_start(browser, talk_app) -> None:
    """First in this module: the app's cache has no embeddings, no fitted fixes and no step (about 3.5 min: every
    step computed while the presenter waits). On a projector (1280x720), each step checked at three projector
    sizes. The steps it computes are the ones the rest of the module opens."""
    url, _ = talk_app
    context, page = open_page(browser, url + "?view=talk", timeout_ms=300_000,
                              viewport={"width": PROJECTORS[0][0], "height": PROJECTORS[0][1]})
    page.wait_for_function("document.body.classList.contains('talk-mode')")
    page.wait_for_selector("#talk-next", state="visible")  # the link selected the Talk tab
    expected = [("1 / 8", "#talk-left", None), ("2 / 8", "#talk-right", None), ("3 / 8", "#talk-left", "58.0"),
                ("4 / 8", "#talk-left", "SICK-R"), ("5 / 8", "#talk-right", None),
                ("6 / 8", "#talk-left", "cross-encoder"), ("7 / 8", "#talk-left", "after")]  # 8: test_audience_browser
    for number, (title, plot, text) in enumerate(expected, start=1):
        page.keyboard.press("ArrowRight")  # the presenter's clicker
        page.wait_for_function(f"document.querySelector('#talk-title').innerText.includes({title!r})")
        page.wait_for_function(f"document.querySelectorAll('{plot} .js-plotly-plot').length === 1")
        if text == "after":  # the training curve: the run has finished and says what it changed
            page.wait_for_function("document.querySelector('#talk-caption').innerText.includes('after')")
            assert "STSb test 55.60 →" in page.inner_text("#talk-caption")
        elif text:
            page.wait_for_function(f"document.querySelector('#talk-left').innerText.includes({text!r})")
        assert page.inner_text("#talk-failure").strip() == ""
        assert_fits_each_projector(page, number)
        shoot(page, f"talk-{number}.png")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("document.querySelector('#talk-title').innerText.includes('6 / 8')")
    page.keyboard.press("q")  # the room follows along: a QR code of the presenter view over the step
    page.wait_for_selector("#talk-qr img.qr", state="visible")
    assert "?view=talk" in page.inner_text("#talk-qr")
    shoot(page, "talk-qr.png")
    page.keyboard.press("q")
    page.wait_for_selector("#talk-qr img.qr", state="hidden")
    context.close()


def test_a_step_link_opens_the_presenter_view_at_that_step_and_its_qr_code_follows(browser, talk_app) -> None:
    """The room's phones open the step on the screen: ?view=talk&step=2 opens step 2, and the QR code
    (Q) carries the step shown, again after the presenter moves on."""
    url, _ = talk_app
    context, page = open_page(browser, url + "?view=talk&step=2", timeout_ms=180_000,
                              viewport={"width": 390, "height": 844})
    page.wait_for_function("((document.querySelector('#talk-title') || {}).innerText || '').includes('2 / 8')")
    page.wait_for_function("document.querySelectorAll('#talk-right .js-plotly-plot').length === 1")
    assert page.inner_text("#talk-failure").strip() == ""
    page.wait_for_function("((document.querySelector('#talk-qr') || {}).innerText || '').includes('step=2')")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("((document.querySelector('#talk-title') || {}).innerText || '').includes('1 / 8')")
    page.wait_for_function("((document.querySelector('#talk-qr') || {}).innerText || '').includes('step=1')")
    page.keyboard.press("q")
    page.wait_for_selector("#talk-qr img.qr", state="visible")
    assert "?view=talk&step=1" in page.inner_text("#talk-qr")
    page.wait_for_function("document.querySelectorAll('#talk-left .js-plotly-plot').length === 1")
    context.close()


def test_prepare_after_the_walk_finds_every_step_kept(talk_env: dict[str, str], talk_app) -> None:
    """``prepare`` for the talk's two models, as ``scripts/setup.sh`` runs it, on the machine the walk above used:
    every step opens at once, and what the walk computed is kept, not computed again (its training run included)."""
    _, cache = talk_app
    (run,) = (cache / "talk").glob("training-*.json")  # the walk's one training run
    kept_at = run.stat().st_mtime
    prepared = subprocess.run([sys.executable, "-m", "sbert_demo", "prepare", "--models",
                               "glove-6b-50d,all-MiniLM-L6-v2"], cwd=REPO, env=talk_env, capture_output=True, text=True,
                              timeout=1800)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    assert "every step opens at once" in prepared.stderr
    assert run.stat().st_mtime == kept_at


def test_the_talk_published_as_a_static_folder_runs_from_it(browser, talk_env: dict[str, str], talk_app,
                                                            tmp_path: Path) -> None:
    """``publish --talk`` on the machine the walk prepared: every step drawn from what is kept (nothing trained
    again), a folder of at most 15 MB that ``python -m http.server`` serves with every other request aborted;
    the keys walk 1 -> 8 and back, the address and the QR code follow, step 8 links the app, no text is cut at
    the three sizes, and a damaged step file is named on the page."""
    _, cache = talk_app
    (run,) = (cache / "talk").glob("training-*.json")
    kept_at = run.stat().st_mtime
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "sbert_demo", "publish", "--talk", "--out", str(site),
                           "--app-url", "https://example.org/app/"], cwd=REPO, env=talk_env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the talk (8 steps) in talk/" in done.stdout and run.stat().st_mtime == kept_at
    folder_bytes = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert folder_bytes <= 15e6, folder_bytes  # the talk alone: the budget
    assert "sdk: static" in (site / "README.md").read_text(encoding="utf-8")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory",
                               str(site)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    names = [step["name"] for step in json.loads((site / "talk" / "steps.json").read_text(encoding="utf-8"))["steps"]]
    try:
        time.sleep(1.0)
        seconds = {}
        for name, size in SIZES.items():
            phone = size[0] < 640
            context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=phone,
                                          has_touch=phone)
            left: list[str] = []
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                          else (left.append(route.request.url), route.abort()))
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(base)  # the folder's front page opens the talk
            page.wait_for_selector("body[data-step='0']")
            assert page.url.startswith(base + "talk/")
            for step in range(1, STEPS + 1):
                started = time.perf_counter()
                page.keyboard.press("ArrowRight")
                page.wait_for_selector(f"body[data-step='{step}']")
                seconds[f"{name}-{step}"] = round(time.perf_counter() - started, 3)
                assert page.inner_text("#title") == f"{step} / {STEPS} · {names[step - 1]}"
                assert page.evaluate("location.search") == f"?step={step}"
                figures = page.evaluate("document.querySelectorAll('#figures .js-plotly-plot').length")
                assert figures == (0 if step == STEPS else 2 if step in (2, 5) else 1), (step, figures)
                assert page.evaluate(TEXT_PROBLEMS) == [], (name, step)
                assert "--app-url" not in page.inner_text("body")  # the publisher's words never reach the room
                capture(page, ARTIFACTS / f"static-talk-{name}-{step}.png")
            assert "https://example.org/app/?view=talk&step=8" == page.get_attribute("#figures .room a", "href")
            page.keyboard.press("ArrowLeft")
            page.wait_for_selector("body[data-step='7']")
            assert "after" in page.inner_text("#caption")  # the kept run's before -> after
            page.keyboard.press("q")
            page.wait_for_selector("#qr:not([hidden]) #qr-code svg")
            assert page.url.endswith("/talk/?step=7")  # the address follows the step, the QR code does not:
            assert page.inner_text("#qr-link") == base + "talk/"  # it opens the talk, where the room starts it
            assert left == [] and errors == [], (left, errors)
            context.close()
        (ARTIFACTS / "static-talk-seconds.json").write_text(json.dumps(seconds, indent=1), encoding="utf-8")
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(base + "talk/?step=4")  # a link to a step opens it
        page.wait_for_selector("body[data-step='4']")
        assert "SICK-R" in page.inner_text("#figures")
        context.close()
        _without_npm(talk_env, cache, tmp_path)
        steps = site / "talk" / "steps" / "3-screen.json"
        steps.write_bytes(steps.read_bytes()[:500])  # an upload cut short
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(base + "talk/?step=3")
        page.wait_for_selector("body[data-step='error']")
        assert "incomplete: steps/3-screen.json is missing or damaged" in page.inner_text("#status")
        context.close()
    finally:
        server.terminate()
        server.wait(10)


def _without_npm(env: dict[str, str], cache: Path, tmp_path: Path) -> None:
    """``publish --talk`` where npm is not on PATH and nothing is vendored yet: it exits 0 with the whole talk; its
    QR code is drawn here by segno from --site-url (the page asks for no generator script), or, without it, said
    in a sentence and shown as the address."""
    bare = tmp_path / "cache-without-vendor"  # the talk's kept steps, none of the vendored packages
    bare.mkdir()
    for entry in cache.iterdir():
        if entry.name != "vendor":
            (bare / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    empty_path = tmp_path / "no-npm-bin"
    empty_path.mkdir()
    env = {**env, "SBERT_DEMO_CACHE": str(bare), "PATH": str(empty_path)}
    for site_url, out in (("https://example.org/talk-site/", tmp_path / "drawn"), (None, tmp_path / "said")):
        done = subprocess.run([sys.executable, "-m", "sbert_demo", "publish", "--talk", "--out", str(out)]
                              + (["--site-url", site_url] if site_url else []), cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "the talk (8 steps) in talk/" in done.stdout
        assert len(list((out / "talk" / "steps").glob("*-screen.json"))) == STEPS - 1  # the room's needs the app
        page = (out / "talk" / "index.html").read_text(encoding="utf-8")
        assert "qrcode.js" not in page and not (out / "vendor" / "qrcode.js").exists()
        story = json.loads((out / "talk" / "steps.json").read_text(encoding="utf-8"))
        if site_url:
            assert story["qr"] == "qr.svg" and (out / "talk" / "qr.svg").read_text().startswith("<?xml")
        else:
            assert story["qr"] is None and "QR code shows as its address" in done.stdout and "npm" in done.stdout


def test_every_step_fits_each_screen(browser, talk_app) -> None:
    url, _ = talk_app
    problems = {}
    for name, size in SIZES.items():
        context, page = open_talk(browser, url, size)
        page.wait_for_selector("#talk-intro-box", state="visible")
        problems[(name, 0)] = page.evaluate(TEXT_PROBLEMS)
        for step in range(1, STEPS + 1):
            page.keyboard.press("ArrowRight")
            settle(page, step)
            problems[(name, step)] = page.evaluate(TEXT_PROBLEMS)
            if step == STEPS and "board" not in page.inner_text("#talk-room"):  # what the room step asks of them
                problems[(name, step)].append("the room step says nothing about the board")
            capture(page, ARTIFACTS / f"talk-{name}-{step}.png")
        context.close()
    assert not {where: found for where, found in problems.items() if found}


def test_a_rehearsal_with_key_presses_a_reload_and_mashing(browser, talk_app) -> None:
    url, cache = talk_app
    context, page = open_talk(browser, url, SIZES["projector"])
    page.evaluate(WATCH_EMPTY)
    kept_run = next((cache / "talk").glob("training-*.json"))
    kept_at = kept_run.stat().st_mtime
    for step in range(1, STEPS + 1):  # forward, a key every 0.3 s
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
    assert settle(page, STEPS) == {"title": "8", "address": "8", "qr": "8"}
    for _ in range(STEPS - 1):  # and back
        page.keyboard.press("ArrowLeft")
        page.wait_for_timeout(300)
    assert settle(page, 1)["title"] == "1"
    for _ in range(6):  # to step 7, and a reload in the middle of it
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
    settle(page, 7)
    assert page.evaluate("window.__longestEmpty") <= 500  # every change so far, key presses 0.3 s apart
    page.reload()
    page.wait_for_selector("#talk-next", state="visible")
    page.evaluate(WATCH_EMPTY)
    assert settle(page, 7) == {"title": "7", "address": "7", "qr": "7"}
    assert "after" in page.inner_text("#talk-caption")  # the kept run, replayed
    rng = random.Random(31)
    expected = 7
    for _ in range(40):  # mashing: ← and → at random, 0 to 0.15 s apart
        key = rng.choice(["ArrowLeft", "ArrowRight"])
        expected = max(1, min(STEPS, expected + (1 if key == "ArrowRight" else -1)))
        page.keyboard.press(key)
        page.wait_for_timeout(rng.randint(0, 150))
    assert settle(page, expected) == {"title": str(expected), "address": str(expected), "qr": str(expected)}
    page.wait_for_timeout(3000)  # nothing stale arrives afterwards
    assert page.evaluate(WHERE)["title"] == str(expected)
    assert page.evaluate("window.__longestEmpty") <= 500
    log = log_file(LOG).read_text(encoding="utf-8")
    assert len(re.findall(r"Started training job", log)) <= 1 and kept_run.stat().st_mtime == kept_at
    assert "Traceback" not in log
    context.close()


# The queued event that answers a step (ui/talk.py's show_step, asked for through the hidden #talk-show).
ANSWER_FN = """() => {
  const config = window.gradio_config;
  const show = config.components.find((c) => c.props && c.props.elem_id === 'talk-show').id;
  return config.dependencies.filter((d) => d.queue && d.targets.some(([id, event]) => id === show && event === 'click'))
    .map((d) => d.id);
}"""


def test_a_burst_of_key_presses_asks_for_one_answer_at_a_time(browser, talk_app) -> None:
    """Five presses 60 ms apart on a slow network (300 ms each way): the page asks for an answer, then, once it has
    ended, for the newest step only; it lands on step 5, and nothing is asked for again afterwards (Gradio fires the
    radio's change again with the step unchanged while other events update it: those ask for nothing)."""
    url, _ = talk_app
    context, page = open_talk(browser, url, SIZES["projector"])
    (answer_fn,) = page.evaluate(ANSWER_FN)
    posts: list[tuple[float, int | None]] = []
    page.on("request", lambda r: posts.append((time.monotonic(), json.loads(r.post_data or "{}").get("fn_index")))
            if r.method == "POST" and "/gradio_api/" in r.url else None)
    network = context.new_cdp_session(page)
    network.send("Network.enable")
    network.send("Network.emulateNetworkConditions", {"offline": False, "latency": 300, "downloadThroughput": -1,
                                                      "uploadThroughput": -1})
    for _ in range(5):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(60)
    assert settle(page, 5) == {"title": "5", "address": "5", "qr": "5"}
    settled = time.monotonic()
    page.wait_for_timeout(6000)
    answers = [fn for _, fn in posts if fn == answer_fn]
    assert 1 <= len(answers) <= 2, answers  # the first press's answer, then the newest step's (ungated: one a press)
    later = [fn for at, fn in posts if at > settled + 1]
    assert len(later) <= 4, later  # no stream of events with the step unchanged (ungated: about 6 a second)
    assert page.evaluate(WHERE)["title"] == "5"
    context.close()


TABS = {  # tab: (deep link, main button or None, true once its result is on the page)
    "explore": ("?tab=explore&set=paraphrase-questions&models=glove-6b-50d,glove-6b-50d%2Bwhiten,all-MiniLM-L6-v2",
                "#explore-run", "document.querySelectorAll('.map .js-plotly-plot').length >= 3"),
    "corpus": ("?tab=corpus", None, None),
    "sts": ("?tab=sts&models=glove-6b-50d,all-MiniLM-L6-v2", "#sts-run",
            "document.querySelectorAll('.sts-scatter .js-plotly-plot').length === 2"),
    "table1": ("?tab=table1&models=glove-6b-50d,glove-6b-50d%2Bwhiten,all-MiniLM-L6-v2", "#table1-run",
               "(document.querySelector('#table1-status') || {innerText: ''}).innerText.includes('Done')"),
    "cost": ("?tab=cost", "#cost-run", "document.querySelectorAll('#cost-plot .js-plotly-plot').length === 1"),
    "why": ("?tab=why", None, None),
    "train": ("?tab=train", None, None),
    "models": ("?tab=models", None, None),
    "audience": ("?tab=audience", "#board-create", "document.querySelector('#board-invite img')"),
}


def test_every_tab_fits_each_screen(browser, talk_app) -> None:
    """Each tab opened from its link and its main action run at a laptop (1366x768) and on a phone (390x844, then
    360x800);
    the laptop's page is then switched to a projector's 1280x720, as a presenter's laptop is when it is plugged in,
    and checked again: the same page at the projector's size, without loading it and running its action twice."""
    url, _ = talk_app
    problems, seconds = {}, {}
    for name in ("laptop", "phone"):
        for tab, (link, button, done) in TABS.items():
            started = time.perf_counter()
            context, page = open_talk_tab(browser, url, SIZES[name], link)
            if tab == "cost":  # a smaller corpus than the default 10,000: the same page, sooner
                page.fill("#cost-n input[type=number]", "1000")
                page.keyboard.press("Enter")
            if button:
                page.locator(button).scroll_into_view_if_needed()
                page.click(button)
                page.wait_for_function(done, timeout=300_000)
                page.wait_for_timeout(1500)
            problems[(name, tab)] = page.evaluate(TEXT_PROBLEMS)
            capture(page, ARTIFACTS / f"tab-{tab}-{name}.png")
            seconds[f"{name} {tab}"] = round(time.perf_counter() - started, 1)
            if name == "laptop":
                started = time.perf_counter()
                width, height = SIZES["projector"]
                page.set_viewport_size({"width": width, "height": height})
                page.wait_for_timeout(1000)  # the figures follow the window (page.js, Plotly's resize)
                assert page.evaluate("[innerWidth, innerHeight]") == [width, height]
                problems[("projector", tab)] = page.evaluate(TEXT_PROBLEMS)
                capture(page, ARTIFACTS / f"tab-{tab}-projector.png")
                seconds[f"projector {tab}"] = round(time.perf_counter() - started, 1)
            else:  # the narrowest phones in use (360x800): the same page, narrower
                page.set_viewport_size({"width": 360, "height": 800})
                page.wait_for_timeout(1000)
                problems[("small phone", tab)] = page.evaluate(TEXT_PROBLEMS)
                capture(page, ARTIFACTS / f"tab-{tab}-phone-360.png")
            context.close()
    (ARTIFACTS / "talk-tab-seconds.json").write_text(json.dumps(seconds, indent=1), encoding="utf-8")  # where it goes
    assert set(problems) == {(name, tab) for name in [*SIZES, "small phone"] for tab in TABS}  # every tab, every size
    assert not {where: found for where, found in problems.items() if found}


def open_talk_tab(browser, url: str, size: tuple[int, int], link: str):
    phone = size[0] < 640
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=phone, has_touch=phone,
                                  device_scale_factor=2 if phone else 1)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url + link)
    page.wait_for_selector("#explore-run", state="attached")
    page.wait_for_function("document.documentElement.dataset.linked === 'yes'")  # its tab selected, pickers filled
    page.wait_for_timeout(300)
    return context, page


def test_the_room_follows_the_presenter_and_a_reload_keeps_the_board(browser, talk_app) -> None:
    """A phone opened from the presenter's QR code follows the presenter's steps (until it moves by itself); at
    the room step, a reload of the presenter after "Start a board" keeps the board (the address bar never shows
    its secret)."""
    url, _ = talk_app
    context, page = open_talk(browser, url, SIZES["projector"])
    page.keyboard.press("ArrowRight")
    settle(page, 1)
    link = re.search(r"https?://\S+", page.inner_text("#talk-qr")).group(0)
    assert "&follow=" in link and "step=1" in link
    phone_context, phone = open_talk(browser, url, SIZES["phone"], link[link.index("?"):])  # the room scans it
    phone.wait_for_function(f"(({WHERE})()).title === '1'")
    # the title slide's QR code (no step) opens a follower too: the steps, never the presenter's Rehearse
    title_link = link[link.index("?"):].replace("&step=1", "")
    early_context, early = open_talk(browser, url, SIZES["phone"], title_link)
    early.wait_for_function("(document.querySelector('#talk-intro') || {}).innerText?.includes('follows the presenter')")
    assert not early.is_visible("#talk-rehearse") and not phone.is_visible("#talk-rehearse")
    early_context.close()
    for _ in range(2):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
    settle(page, 3)
    phone.wait_for_function(f"(({WHERE})()).title === '3'", timeout=15_000)  # moved with the presenter
    for _ in range(STEPS - 3):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
    settle(page, STEPS)
    page.click("#talk-room-start")
    page.wait_for_function("/board [A-Z0-9]{4,}/.test((document.querySelector('#talk-room') || {}).innerText || '')")
    code = re.search(r"board ([A-Z0-9]{4,})", page.inner_text("#talk-room")).group(1)
    phone.wait_for_function(f"(({WHERE})()).title === '{STEPS}'", timeout=15_000)
    # the phone is told the board started, with its send link, pushed as the step is; it never gets Start
    phone.wait_for_selector(f"#talk-room a.room-send-link[href$='/join/{code}']", timeout=15_000)
    assert not phone.is_visible("#talk-room-start")
    page.reload()
    page.wait_for_selector("#talk-next", state="visible")
    page.wait_for_function(f"((document.querySelector('#talk-room') || {{}}).innerText || '').includes('{code}')")
    assert "key=" not in page.url and f"step={STEPS}" in page.url
    assert not page.is_visible("#talk-room-start")  # the board is there: nothing to start again
    phone.keyboard.press("ArrowLeft")  # the phone goes back by itself: it leaves follow mode
    phone.wait_for_function(f"(({WHERE})()).title === '{STEPS - 1}'")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    settle(page, STEPS - 2)
    page.wait_for_timeout(3000)
    assert phone.evaluate(WHERE)["title"] == str(STEPS - 1)
    phone_context.close()
    context.close()
