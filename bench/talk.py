"""The talk on a prepared machine: key press to figure for each step, and Table 1 cold and warm.

    python bench/talk.py [--skip-table1] [--table1-models KEYS] [--runs 3]

1. **Steps.** The app runs on this machine's cache folder as ``python -m sbert_demo prepare`` left it
   (run it first; this bench says so if the talk is not rehearsed). Headless Chromium opens the
   presenter view at 1280x720 and presses → through the eight steps, timing each from the key press to
   the step's figure drawn (title, address and figure of the new step), ``--runs`` times; it prints
   each step's median and worst, against the target of 2 s.
2. **Table 1.** ``table1`` on the Table 1 tab's default models, in a separate process: **cold** in a
   cache folder that shares this machine's prepared models and measured runtimes but holds no
   embeddings (what the first table after ``prepare`` costs), then **warm** in the same folder (every
   embedding read from the cache), lossless and fast (int8 where it keeps Spearman within 0.5). The
   estimate the page shows before the click is printed beside each cold time.

Prints the CPU first: the numbers belong to it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from sbert_demo.explore.prepare import link_prepared  # noqa: E402
from load import free_port, stop_app, wait_ready  # noqa: E402

TARGET_S = 2.0
CHROMIUM = "/usr/bin/chromium"
# The step on screen (title, address) and its figure drawn: the end of one key press's wait.
SHOWN = """(step) => {
  const title = ((document.querySelector('#talk-title') || {}).innerText || '').includes(step + ' / 8');
  const address = new URLSearchParams(location.search).get('step') === String(step);
  const plot = document.querySelector('#talk-left .js-plotly-plot');
  const room = document.querySelector('#talk-room-row');  // left out of the page while hidden
  const figure = !!plot && plot.offsetParent !== null && plot.dataset.step === undefined
    || !!room && room.offsetParent !== null;
  return title && address && figure;
}"""
# Marks the figure on screen as seen, so that the next step's wait needs a figure drawn after the key.
MARK = "() => { const p = document.querySelector('#talk-left .js-plotly-plot'); if (p) { p.dataset.step = 'old'; } }"


def start_app(port: int) -> subprocess.Popen:
    log = open(Path(tempfile.gettempdir()) / "sbert-bench-talk.log", "w")
    return subprocess.Popen([sys.executable, "app.py", "--host", "127.0.0.1", "--port", str(port)], cwd=REPO,
                            stdout=log, stderr=subprocess.STDOUT)


def time_steps(url: str, runs: int) -> dict[int, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[int, list[float]] = {step: [] for step in range(1, 9)}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(300_000)
            page.goto(url + "?view=talk")
            page.wait_for_selector("#talk-intro-box", state="visible")
            page.wait_for_timeout(1000)
            for step in range(1, 9):
                page.evaluate(MARK)
                started = time.perf_counter()
                page.keyboard.press("ArrowRight")
                page.wait_for_function(SHOWN, arg=step, polling=20)
                times[step].append(time.perf_counter() - started)
                page.wait_for_timeout(400)
            page.close()
        browser.close()
    return times


def table1_run(cache: str, models: list[str], fast: bool) -> dict:
    """One table in a child process (its own settings and caches): seconds, and the estimate before it."""
    code = f"""
import json, time
from sbert_demo.benchmark.table1 import costs, table1
found = costs({models!r}, fast={fast})
estimate = sum(c.seconds or 0 for c in found)
started = time.perf_counter()
rows = table1({models!r}, fast={fast})
print(json.dumps({{"seconds": time.perf_counter() - started, "estimate": estimate,
                   "rows": {{r.key: r.as_json() for r in rows}}}}))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "SBERT_DEMO_CACHE": cache})
    return json.loads(out.stdout.strip().splitlines()[-1])


def table1_times(models: list[str]) -> None:
    for fast in (False, True):
        with tempfile.TemporaryDirectory(prefix="sbert-table1-") as folder:
            link_prepared(Path(folder), parts=("onnx", "models", "runtime", "numba", "fixes"))
            cold = table1_run(folder, models, fast)
            warm = table1_run(folder, models, fast)
        path = "fast (int8 where within 0.5)" if fast else "lossless"
        print(f"Table 1 ({', '.join(models)}), {path}: cold {cold['seconds']:.1f} s (estimated before the click "
              f"{cold['estimate']:.0f} s), warm {warm['seconds']:.1f} s", flush=True)
        averages = {key: row.get("avg") for key, row in warm["rows"].items()}
        print(f"  averages: {averages}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-table1", action="store_true")
    parser.add_argument("--table1-models", default="")
    args = parser.parse_args()
    from sbert_demo.encoding import devices
    from sbert_demo.talk.rehearsal import rehearsal
    from sbert_demo.views import VIEWS

    hardware = devices.detect_hardware()
    print(f"CPU: {hardware.cpu_name}, {hardware.cpu_threads} threads", flush=True)
    ready = rehearsal().ready()
    if not all(ready):
        print(f"The talk is not rehearsed on this machine ({sum(ready)} of 8 steps ready): run "
              "`python -m sbert_demo prepare` first; the unready steps are timed computing.", flush=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = start_app(port)
    try:
        wait_ready(url, timeout=300, server=server)
        times = time_steps(url, args.runs)
    finally:
        stop_app(server)
    for step, seconds in times.items():
        worst = max(seconds)
        print(f"step {step}: key press to figure median {statistics.median(seconds):.2f} s, worst {worst:.2f} s "
              f"({'within' if worst <= TARGET_S else 'OVER'} {TARGET_S:.0f} s)", flush=True)
    if not args.skip_table1:
        models = [m for m in args.table1_models.split(",") if m] or list(VIEWS["table1"].default_models)
        table1_times(models)


if __name__ == "__main__":
    main()
