"""The map view in headless Chromium: first paint, pan/zoom frame times, hover to sentence, a 50,000-point
selection with its table, the page's memory and the server's as visitors open the map, for a map and a
20,000-point sample of it, beside the Plotly corpus figure of the same 20,000 points.

    python -m sbert_demo map --file CORPUS --models glove-6b-50d,all-MiniLM-L6-v2 --k 20 --compare
    python bench/atlas.py --map <the id it printed>
    python bench/atlas.py --synthetic 722748    # or a synthetic map of that many points (two models, 30 groups)

The map view's routes are served on a free port in this process (the app serves the same routes: the page and
the map's folder as files; the page computes what it shows);
Chromium draws WebGL with whatever it has here (on a machine without a GPU, SwiftShader: the CPU draws
every frame, a pessimistic case). Measured:

* **data** — from navigation to every model's points and clusters received (binary arrays);
* **first paint** — from the data received to the maps drawn (two animation frames later);
* **pan / zoom** — a scripted 3-second drag and 20 wheel steps over the first map; the intervals
  between ``requestAnimationFrame`` callbacks, p50 and p95 (target p95 <= 20 ms);
* **hover** — the mouse moved onto 15 random points: from the move to the sentence shown (<= 50 ms);
* **select** — a lasso around about 50,000 points (a square grown around the median point) to the
  table filled with its first page and the per-cluster counts (<= 300 ms);
* **memory** — resident memory of Chromium's renderer and GPU processes (<= 1.5 GB), and the JS heap;
* **visitors** — the server's resident memory before and after eight more pages opened the full map at once
  (it serves files: it should not grow with them).

Prints the CPU first: the numbers belong to it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

CHROMIUM = "/usr/bin/chromium"
RAF = """() => new Promise((done) => {
  const gaps = []; let last = performance.now();
  const tick = (now) => { gaps.push(now - last); last = now; if (!window.__stopRaf) requestAnimationFrame(tick); else done(gaps); };
  window.__stopRaf = false; requestAnimationFrame(tick); window.__rafDone = done;
})"""


def serve() -> tuple[str, object]:
    import uvicorn
    from starlette.applications import Starlette

    from load import free_port
    from sbert_demo.ui.atlas import routes

    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes()), port=free_port(), log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{server.config.port}", server


def sample_atlas(atlas, size: int):
    """A ``size``-point map of the same corpus: a random sample of the big one's points, clusters and words."""
    from sbert_demo.atlas.store import Atlas

    rows = np.sort(np.random.default_rng(0).choice(atlas.n, size, replace=False))
    every = atlas.texts()
    texts = [every[r] for r in rows]
    models = {m["key"]: {"label": m["label"], "family": m.get("family", ""), "method": m.get("method", "")}
              for m in atlas.models}
    coords = {m["key"]: atlas.coords(i).reshape(-1, 2)[rows] for i, m in enumerate(atlas.models)}
    clusters = {m["key"]: atlas.clusters(i)[rows] for i, m in enumerate(atlas.models)}
    words = {m["key"]: {c["cluster"]: tuple(c["words"]) for c in m["clusters"]} for m in atlas.models}
    return Atlas.of_arrays(f"{atlas.meta['name']} ({size:,} sampled)", texts, coords, clusters, words, models=models)


def synthetic_atlas(n: int):
    """``n`` sentences in 30 groups, mapped by two models that place the same groups elsewhere (written once)."""
    from sbert_demo.atlas.store import Atlas

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(30, 2)) * 4
    groups = rng.integers(0, 30, n)
    words = ["river", "piano", "tensor", "market", "garden", "engine"]
    sentences = [f"Sentence {i} about the {words[g % 6]} number {g}." for i, g in enumerate(groups)]
    return Atlas.of_arrays(f"synthetic-{n}", sentences, {"a": centres[groups] + rng.normal(size=(n, 2)),
                                                          "b": centres[(groups * 7) % 30] + rng.normal(size=(n, 2))},
                           {"a": groups, "b": groups})


def lasso_for(xy: np.ndarray, target: int) -> list[list[float]]:
    """A square around the median point holding about ``target`` points."""
    centre = np.median(xy, axis=0)
    low, high = 1e-4, 2.0
    for _ in range(40):
        half = (low + high) / 2
        count = int((np.abs(xy - centre) <= half).all(axis=1).sum())
        low, high = (half, high) if count < target else (low, half)
    (x, y), h = centre.tolist(), (low + high) / 2
    return [[x - h, y - h], [x + h, y - h], [x + h, y + h], [x - h, y + h]]


def memory_mb(browser_pid: int) -> float:
    import psutil

    total = 0
    for child in psutil.Process(browser_pid).children(recursive=True):
        try:
            line = " ".join(child.cmdline())
            if "--type=renderer" in line or "--type=gpu-process" in line:
                total += child.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def drag_around(page, cx: float, cy: float) -> None:
    """The scripted pan: 90 mouse moves 16 ms apart on a loop around (cx, cy), the button held."""
    page.mouse.move(cx, cy)
    page.mouse.down()
    for i in range(90):
        page.mouse.move(cx + 150 * np.sin(i / 9), cy + 100 * np.cos(i / 7))
        page.wait_for_timeout(16)
    page.mouse.up()


def frames(page, action) -> list[float]:
    page.evaluate("() => { window.__gaps = (" + RAF + ")(); }")
    action()
    page.evaluate("() => { window.__stopRaf = true; }")
    return page.evaluate("() => window.__gaps")[2:]


def measure(browser, url: str, atlas, label: str, rng) -> dict:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(300_000)
    started = time.perf_counter()
    page.goto(f"{url}/atlas/?map={atlas.id}")
    page.wait_for_selector("body[data-ready='1']")
    timings = page.evaluate("atlas.state.timings")
    box = page.eval_on_selector(".panel[data-model='0'] .map", "m => { const r = m.getBoundingClientRect(); "
                                "return [r.left, r.top, r.width, r.height]; }")
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2

    def zoom():
        for i in range(20):
            page.mouse.move(cx, cy)
            page.mouse.wheel(0, -120 if i < 10 else 120)
            page.wait_for_timeout(40)

    panned, zoomed = frames(page, lambda: drag_around(page, cx, cy)), frames(page, zoom)
    page.mouse.move(box[0] + 2, box[1] + 2)
    page.evaluate("() => { document.querySelector('.panel[data-model=\"0\"] .map').dispatchEvent(new Event('dblclick')); }")
    page.wait_for_timeout(300)
    hovers = []
    xy = atlas.coords(0).reshape(-1, 2)
    for row in rng.choice(atlas.n, 15, replace=False):
        x, y = page.evaluate(f"atlas.screenOf(0, {int(row)})")
        if not (box[0] < x < box[0] + box[2] and box[1] < y < box[1] + box[3]):
            continue
        page.mouse.move(box[0] + 1, box[1] + 1)
        page.wait_for_function("document.querySelector('#tip').hidden")
        t = time.perf_counter()
        page.mouse.move(x, y)
        page.wait_for_selector("#tip:not([hidden])")
        hovers.append(1000 * (time.perf_counter() - t))
    polygon = lasso_for(xy, min(50_000, atlas.n // 3))
    selected_ms = page.evaluate(f"atlas.lasso(0, {json.dumps(polygon)})")
    count = page.inner_text("#sel-title").split(" ")[0]
    heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize / 1048576 : null")
    memory = memory_mb(browser.process.pid) if getattr(browser, "process", None) else memory_mb_all()
    context.close()
    return {"label": label, "n": atlas.n, "models": len(atlas.models), "data_s": timings["data"] / 1000,
            "paint_s": (timings["paint"] - timings["data"]) / 1000, "open_s": time.perf_counter() - started,
            "pan": panned, "zoom": zoomed, "hover": hovers, "select_ms": selected_ms, "selected": count,
            "heap_mb": heap, "memory_mb": memory}


def memory_mb_all() -> float:
    import psutil

    total = 0
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        if "chromium" in line and ("--type=renderer" in line or "--type=gpu-process" in line):
            total += process.memory_info().rss
    return total / 2**20


def plotly_baseline(browser, atlas, folder: Path) -> dict:
    """Today's corpus figure (one Plotly WebGL figure per model, every sentence's text for hover) of the
    same points, first paint and pan frame times."""
    from sbert_demo.explore import plots

    texts = atlas.texts()
    figure = plots.corpus_scatter(atlas.coords(0).reshape(-1, 2).astype(float), texts,
                                  atlas.clusters(0).tolist(), "today's corpus map", words={}, subtitle="")
    page_file = folder / "plotly.html"
    figure.write_html(str(page_file), include_plotlyjs=True, full_html=True,
                      post_script="window.__drawn = performance.now();")
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(300_000)
    page.goto(page_file.as_uri())
    page.wait_for_function("window.__drawn")
    paint = page.evaluate("window.__drawn") / 1000
    plot = page.eval_on_selector(".js-plotly-plot", "p => { const r = p.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    cx, cy = plot[0] + plot[2] / 2, plot[1] + plot[3] / 2

    page.evaluate("() => Plotly.relayout(document.querySelector('.js-plotly-plot'), {dragmode: 'pan'})")
    panned = frames(page, lambda: drag_around(page, cx, cy))
    memory = memory_mb_all()
    context.close()
    return {"label": "Plotly figure (today)", "n": atlas.n, "paint_s": paint, "pan": panned, "memory_mb": memory}


def visitors(browser, url: str, atlas, pages: int = 8) -> str:
    """The server's resident memory (this process) before and after ``pages`` pages open the map at once."""
    import psutil

    server = psutil.Process()
    before = server.memory_info().rss / 2**20
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    opened = [context.new_page() for _ in range(pages)]
    for page in opened:
        page.set_default_timeout(300_000)
        page.goto(f"{url}/atlas/?map={atlas.id}", wait_until="commit")
    for page in opened:
        page.wait_for_selector("body[data-ready='1']")
    after = server.memory_info().rss / 2**20
    context.close()
    return (f"  server memory with {pages} more visitors on the {atlas.n:,}-point map: {before:,.0f} MB before, "
            f"{after:,.0f} MB after ({after - before:+,.0f} MB)")


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def report(row: dict) -> None:
    parts = [f"{row['label']}: {row['n']:,} points"]
    if "data_s" in row:
        parts.append(f"data {row['data_s']:.2f} s, first paint {row['paint_s']:.2f} s after it (target: data + paint <= 2 s)")
    else:
        parts.append(f"page to figure drawn {row['paint_s']:.2f} s")
    parts.append(f"pan frames p50 {p(row['pan'], 50):.0f} ms / p95 {p(row['pan'], 95):.0f} ms (target p95 <= 20)")
    if row.get("zoom"):
        parts.append(f"zoom frames p50 {p(row['zoom'], 50):.0f} / p95 {p(row['zoom'], 95):.0f} ms")
    if row.get("hover"):
        parts.append(f"hover to sentence median {statistics.median(row['hover']):.0f} ms, worst "
                     f"{max(row['hover']):.0f} ms (target <= 50)")
    if row.get("select_ms") is not None:
        parts.append(f"lasso of {row['selected']} points to table {row['select_ms']:.0f} ms (target <= 300)")
    parts.append(f"renderer + GPU memory {row['memory_mb']:,.0f} MB (target <= 1,536)"
                 + (f", JS heap {row['heap_mb']:,.0f} MB" if row.get("heap_mb") else ""))
    print("  " + "\n    ".join(parts), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--map", help="a map's id (python -m sbert_demo map prints it)")
    chosen.add_argument("--synthetic", type=int, help="a synthetic map of this many points instead (two models)")
    parser.add_argument("--small", type=int, default=20_000, help="the sampled map's size (default 20,000)")
    args = parser.parse_args()

    from encode import cpu_line
    from playwright.sync_api import sync_playwright

    from sbert_demo.atlas.store import open_atlas

    print(cpu_line(), flush=True)
    atlas = open_atlas(args.map) if args.map else synthetic_atlas(args.synthetic)
    small = sample_atlas(atlas, min(args.small, atlas.n))
    url, server = serve()
    rng = np.random.default_rng(0)
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--enable-unsafe-swiftshader"])
        renderer = browser.new_page()
        renderer.goto("about:blank")
        gl = renderer.evaluate("""() => { const c = document.createElement('canvas').getContext('webgl2');
            const i = c && c.getExtension('WEBGL_debug_renderer_info');
            return c ? (i ? c.getParameter(i.UNMASKED_RENDERER_WEBGL) : 'WebGL 2') : 'no WebGL 2'; }""")
        renderer.close()
        print(f"Chromium {browser.version}, WebGL renderer: {gl}", flush=True)
        for row in (measure(browser, url, small, "map view", rng), plotly_baseline(browser, small, Path(folder)),
                    measure(browser, url, atlas, "map view", rng)):
            report(row)
        print(visitors(browser, url, atlas), flush=True)
        browser.close()
    server.should_exit = True


if __name__ == "__main__":
    main()
