"""A published map (python -m sbert_demo publish) against its budgets, in headless Chromium against
``python -m http.server`` with every request that leaves that server aborted.

    python bench/publish.py [--sentences 100000] [--models static-minilm,all-MiniLM-L6-v2] [--queries 200]

The corpus is every distinct sentence of the data that ships in ``data/`` (STS 2012-16, STSb, SICK, SNLI and
MultiNLI dev and test), then, past those, the bench corpus of ``scripts/build_corpus.py`` where it was built
(``--corpus FOLDER``). Mapped with the two models in this process (a cache folder of its own that links what
this machine prepared) and compared as ``map --compare`` does (each model's ten nearest neighbours of every
sentence, kept with the map: timed on its own line), then published, served and opened. Printed, each beside
its budget (issue: 100,000 sentences, a static model and MiniLM, with search):

* **publish** — seconds from the finished map (compared) to the folder, and the folder's size (<= 100 MB);
* **first paint** — from navigation to the maps drawn (<= 3 s), and the bytes downloaded by then (<= 10 MB);
* for each model the page searches with (a fresh browser each):
  **first answer** — the bytes downloaded until the first query's ten results are on the page (<= 40 MB);
  **query** — milliseconds from a query to its ten results in the page, once its files are in (<= 300 ms with
  the static model, <= 1 s with MiniLM in wasm), the median of ``--queries`` STSb dev sentences;
  **recall@10** — the page's ten (its own query vector, sign bits then int8 rescoring) against exact fp32
  search with the same model (fp32 corpus vectors and query) (>= 0.95);
* for MiniLM (ONNX Runtime Web), the same queries again on a server that sends the cross-origin isolation
  headers a Static Space's front matter asks for (``custom_headers``): the page then runs the graph on up to
  four threads; the two medians and their ratio.

Past 100,000 sentences the issue's budgets for a million apply: published in <= 5 min from the finished map,
the folder <= 600 MB, first paint <= 5 s, a query <= 1.5 s with either model, recall@10 >= 0.90 (the bytes
before the first paint and the first answer are printed without a budget). ``--keep FOLDER`` works in that
folder instead of a temporary one: the map, its shards and the published site stay, and a second run opens
the map again instead of embedding a million sentences again.

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
import urllib.request
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

CHROMIUM = "/usr/bin/chromium"
# the budgets: 100,000 sentences with search, and a million (None: printed, no budget)
BUDGETS = {100_000: dict(publish_s=None, folder_mb=100, paint_s=3, before_paint_mb=10, before_answer_mb=40,
                         static_ms=300, wasm_ms=1000, recall=0.95),
           1_000_000: dict(publish_s=300, folder_mb=600, paint_s=5, before_paint_mb=None, before_answer_mb=None,
                           static_ms=1500, wasm_ms=1500, recall=0.90)}


def budget_row(what: str, value: float, shown: str, limit: float | None, unit: str) -> str:
    if limit is None:
        return f"{what}: {shown} | no budget at this size"
    return f"{what}: {shown} | budget {limit:g} {unit}: {'met' if value <= limit else 'NOT met'}"


def shipped_sentences(limit: int, extra: Path | None) -> list[str]:
    """Distinct sentences of the data in ``data/`` (and of ``extra``'s Parquet files), up to ``limit``."""
    import gzip

    import pandas as pd

    from sbert_demo.config import SHIPPED_DATA
    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.data.sts_sets import TABLE1_SETS, sts_set

    found: dict[str, None] = {}
    for split in ("train", "dev", "test"):
        pairs = sts_split(split, SHIPPED_DATA)
        found.update(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))
    for name in TABLE1_SETS:
        pairs = sts_set(name)
        found.update(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))
    for path in sorted((SHIPPED_DATA / "nli").glob("*.csv.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            table = pd.read_csv(handle)
        for column in ("premise", "hypothesis", "sentence1", "sentence2"):
            if column in table:
                found.update(dict.fromkeys(str(t) for t in table[column].dropna()))
    if extra is not None and len(found) < limit:
        import pyarrow.parquet as pq

        for path in sorted(extra.glob("*.parquet")):
            found.update(dict.fromkeys(pq.read_table(path, columns=["text"]).column("text").to_pylist()))
            if len(found) >= limit:
                break
    return [t for t in found if 3 <= len(t.strip())][:limit]


# A static server that sends what a Static Space sends when its front matter asks (custom_headers): cross-origin
# isolation, under which ONNX Runtime Web may use several threads.
ISOLATED = """
import functools, http.server, json, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        for name, value in json.loads(sys.argv[3]).items():
            self.send_header(name, value)
        super().end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), functools.partial(Handler, directory=sys.argv[2])).serve_forever()
"""


def static_server(folder: Path, isolated: bool = False) -> tuple[str, subprocess.Popen]:
    """``python -m http.server`` on ``folder``; with ``isolated``, the same server sending the front matter's
    cross-origin isolation headers (sbert_demo.publish.site.ISOLATION_HEADERS)."""
    from load import free_port
    from sbert_demo.publish.site import ISOLATION_HEADERS

    port = free_port()
    command = ([sys.executable, "-c", ISOLATED, str(port), str(folder), json.dumps(ISOLATION_HEADERS)] if isolated
               else [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)])
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return url, server
        except OSError:
            time.sleep(0.2)
    raise SystemExit("python -m http.server did not start")


def in_chromium(url: str, n: int, searched: list[int], queries: list[str]) -> dict:
    """First paint, and for each searchable model (a fresh browser context each, so that the bytes its first
    search downloads are its own): the bytes until the first answer, each query's milliseconds and rows."""
    from playwright.sync_api import sync_playwright

    found: dict = {"models": {}}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-background-networking"])
        for m in searched:
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            left: list[str] = []
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url)
                          else (left.append(route.request.url), route.abort()))
            page = context.new_page()
            page.set_default_timeout(300_000)
            received: list[int] = []
            page.on("requestfinished", lambda request: received.append(request.sizes()["responseBodySize"]))
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']")
            if "paint_s" not in found:
                found["paint_s"], found["before_paint"] = time.perf_counter() - started, sum(received)
            page.select_option("#search-model", str(m))
            page.fill("#query", queries[0])
            page.click("#search-go")
            page.wait_for_selector("#results li[data-row]")
            page.wait_for_timeout(300)
            before_answer = sum(received)
            answers = [page.evaluate(f"atlasSearch.search({m}, {n}, {query!r}, 10)") for query in queries]
            assert not left, left
            times = [a["ms"] for a in answers]
            found["isolated"] = page.evaluate("self.crossOriginIsolated")
            found["threads"] = page.evaluate("self.ort ? ort.env.wasm.numThreads : null")
            found["models"][m] = {"before_answer": before_answer, "query_ms": statistics.median(times),
                                  "query_p95_ms": float(np.percentile(times, 95)),
                                  "rows": [[r["row"] for r in a["rows"]] for a in answers]}
            context.close()
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--models", default="static-minilm,all-MiniLM-L6-v2")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--corpus", type=Path, default=Path.home() / ".cache" / "sbert-demo" / "bench-corpus",
                        help="scripts/build_corpus.py's folder: sentences past those in data/")
    parser.add_argument("--keep", type=Path, default=None,
                        help="work in this folder (the map and the site stay; a second run opens the map again)")
    args = parser.parse_args()

    from encode import cpu_line

    print(cpu_line(), flush=True)
    sentences = shipped_sentences(args.sentences, args.corpus if args.corpus.is_dir() else None)
    keys = [k.strip() for k in args.models.split(",")]
    print(f"{len(sentences):,} distinct sentences (asked for {args.sentences:,}); models {', '.join(keys)}", flush=True)
    budget = BUDGETS[100_000 if len(sentences) <= 100_000 else 1_000_000]
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(sentences, keys, args.queries, args.keep, budget)
    else:
        with tempfile.TemporaryDirectory(prefix="sbert-publish-") as folder:
            run(sentences, keys, args.queries, Path(folder), budget)


def exact_ten(key: str, sentences: list[str], queries: list[str], folder: Path) -> list[list[int]]:
    """Each query's ten nearest sentences by exact fp32 search with ``key`` (fp32 vectors and query), kept in
    ``folder`` for the same model, sentences and queries (a second run with ``--keep`` reads them: a million
    MiniLM sentences of the bench corpus take about 85 minutes in PyTorch fp32 on two cores). The corpus vectors
    are kept a part of 50,000 sentences at a time until the ten are found, so a pass stopped midway goes on from
    its last whole part."""
    import hashlib
    import shutil

    from sbert_demo.encoding.encoder import encode

    digest = hashlib.sha256("\n".join([key, *sentences, "", *queries]).encode("utf-8")).hexdigest()[:24]
    kept, parts = folder / f"exact-{digest}.npy", folder / f"exact-{digest}.parts"
    if kept.is_file():
        return np.load(kept).tolist()
    parts.mkdir(exist_ok=True)
    started, step = time.perf_counter(), 50_000  # encode's limit for one call
    vectors = []
    for start in range(0, len(sentences), step):
        part = parts / f"{start:09d}.npy"
        if not part.is_file():
            begun = time.perf_counter()
            chunk = encode(key, sentences[start : start + step], precision="fp32", use_cache=False).embeddings
            temporary = parts / f"{start:09d}.tmp.npy"
            np.save(temporary, chunk)
            temporary.replace(part)  # whole parts only: a stopped pass goes on from here
            print(f"  exact fp32 ({key}): sentences {start + 1:,}-{start + len(chunk):,} of {len(sentences):,} in "
                  f"{time.perf_counter() - begun:,.0f} s", flush=True)
        vectors.append(np.load(part))
    vectors = np.concatenate(vectors)
    exact = np.array([np.argsort(-(vectors @ q), kind="stable")[:10]
                      for q in encode(key, queries, precision="fp32", use_cache=False).embeddings])
    np.save(kept, exact)
    shutil.rmtree(parts)
    print(f"exact fp32 search over {len(sentences):,} sentences with {key}: {time.perf_counter() - started:,.0f} s "
          "(this run's share)", flush=True)
    return exact.tolist()


def run(sentences: list[str], keys: list[str], n_queries: int, folder: Path, budget: dict) -> None:
    import os
    import shutil

    from sbert_demo.atlas.compare import compare_all, pairs
    from sbert_demo.config import SHIPPED_DATA, reload_settings
    from sbert_demo.corpus.large_map import map_large_corpus
    from sbert_demo.corpus.sources import LargeCorpus
    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.explore.prepare import link_prepared
    from sbert_demo.publish.folder import HUB_FILES_LIMIT, HUB_FOLDER_LIMIT, layout
    from sbert_demo.publish.site import publish_map

    link_prepared(folder / "cache")
    os.environ["SBERT_DEMO_CACHE"] = str(folder / "cache")
    reload_settings()
    started = time.perf_counter()
    result = map_large_corpus(LargeCorpus("bench", sentences, None), keys, 20)
    print(f"mapped in {time.perf_counter() - started:,.0f} s", flush=True)
    from sbert_demo.atlas.store import publish

    atlas = publish(result)
    started = time.perf_counter()
    compare_all(atlas)  # as `map --compare` does: the models' neighbours and shared counts kept with the map
    print(f"compared ({len(pairs(atlas))} pair(s), each model's ten nearest neighbours of every sentence) in "
          f"{time.perf_counter() - started:,.0f} s", flush=True)
    shutil.rmtree(folder / "site", ignore_errors=True)
    started = time.perf_counter()
    site = publish_map(atlas, folder / "site")
    publish_s = time.perf_counter() - started
    print(budget_row("publish from the finished map", publish_s, f"{publish_s:,.0f} s", budget["publish_s"], "s"),
          flush=True)
    print(budget_row("the folder", site.bytes / 1e6, site.describe(), budget["folder_mb"], "MB"), flush=True)
    largest, where, files = layout(site.folder)
    print(f"layout: {files:,} files (Hugging Face: under {HUB_FILES_LIMIT:,}); the fullest folder, {where}, holds "
          f"{largest:,} entries (at most {HUB_FOLDER_LIMIT:,})", flush=True)
    meta = json.loads((site.folder / "data" / "meta.json").read_text(encoding="utf-8"))
    engines = {m: json.loads((site.folder / "search" / str(m) / "tokenizer.json").read_text(encoding="utf-8"))["engine"]
               for m in meta["search"]}
    dev = sts_split("dev", SHIPPED_DATA)
    queries = list(dict.fromkeys(dev.sentences1))[:n_queries]
    url, server = static_server(site.folder)
    try:
        seen = in_chromium(url, atlas.n, meta["search"], queries)
    finally:
        server.terminate()
    # what the browser measured, printed at once; then each model's recall (an exact fp32 pass over the corpus)
    print(budget_row("first paint", seen["paint_s"], f"{seen['paint_s']:.2f} s", budget["paint_s"], "s"), flush=True)
    print(budget_row("downloaded before the first paint", seen["before_paint"] / 1e6, f"{seen['before_paint'] / 1e6:.1f} MB",
                     budget["before_paint_mb"], "MB"), flush=True)
    for m, model in seen["models"].items():
        key = atlas.models[m]["key"]
        limit_ms = budget["static_ms"] if engines[m] == "static" else budget["wasm_ms"]  # a static model; MiniLM in wasm
        print(budget_row(f"downloaded before the first answer ({key})", model["before_answer"] / 1e6,
                         f"{model['before_answer'] / 1e6:.1f} MB", budget["before_answer_mb"], "MB"), flush=True)
        print(budget_row(f"a query to its ten results ({key}, median of {len(queries)})", model["query_ms"],
                         f"{model['query_ms']:.0f} ms (p95 {model['query_p95_ms']:.0f})", limit_ms, "ms"), flush=True)
    for m, model in seen["models"].items():  # the page's ten against exact fp32 search (fp32 vectors, fp32 query)
        key = atlas.models[m]["key"]
        exact = exact_ten(key, sentences, queries, folder)
        recall = float(np.mean([len(set(e) & set(rows)) / 10 for e, rows in zip(exact, model["rows"])]))
        print(f"recall@10 against exact fp32 search ({key}): {recall:.3f} | budget {budget['recall']:g}: "
              f"{'met' if recall >= budget['recall'] else 'NOT met'}", flush=True)
    graphs = [m for m in meta["search"] if engines[m] == "graph"]  # ONNX Runtime Web: threads where isolated
    if graphs:
        url, server = static_server(site.folder, isolated=True)
        try:
            threaded = in_chromium(url, atlas.n, graphs, queries)
        finally:
            server.terminate()
        for m in graphs:
            one, several = seen["models"][m]["query_ms"], threaded["models"][m]["query_ms"]
            print(f"a query with {atlas.models[m]['key']} served with cross-origin isolation (as a Static Space's "
                  f"custom_headers ask; isolated: {threaded['isolated']}, {threaded['threads']} threads) against "
                  f"without it (isolated: {seen['isolated']}, {seen['threads']} thread): {several:.0f} ms against "
                  f"{one:.0f} ms, median of {len(queries)}: {one / several:.2f}x", flush=True)


if __name__ == "__main__":
    main()
