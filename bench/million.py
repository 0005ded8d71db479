"""A million sentences on this machine: reading, embedding, re-opening, search and layout quality, and Ray.

    python scripts/build_corpus.py             # the bench corpus: 1,000,000 distinct sentences (one Parquet file)
    python bench/million.py [--corpus FOLDER] [--phases read,embed,reopen,search,layout,ray]

Each phase runs in its own process (its peak memory, VmHWM, is its own) on this machine's cache folder:

* ``read`` — the corpus read, cleaned and de-duplicated from its Parquet shards (cold: its kept copy removed);
* ``embed`` — every sentence embedded with ``--model`` (default static-minilm) from no shards (that model's
  shards of this corpus removed first), sentences/s and the whole time (targets: static-minilm <= 5 min,
  MiniLM <= 25 min);
* ``reopen`` — a new process opening the same corpus and its embeddings (target <= 5 s, nothing computed);
* ``search`` — the HNSW index (usearch) over ``--model``'s vectors: 200 STSb sentences as queries, latency
  per query (target <= 100 ms) and recall@10 against exact search over every shard (target >= 0.95);
* ``neighbours`` — the map view's comparison of MiniLM and GloVe (:func:`sbert_demo.atlas.compare.shared`: each
  sentence's 10 nearest neighbours under each model, both indexes built cold, searched and rescored) on the first
  ``--sentences`` of the corpus (default 150,000; target <= 60 s), and each model's recall@10 against exact search
  for 2,000 sampled sentences (a neighbour found counts when its cosine reaches the exact tenth's: GloVe gives
  sentences with the same words the same vector, so ties are common);
* ``layout`` — the sampled layout (UMAP on 25,000 + placement) against a full UMAP on a 100,000-sentence
  slice: trustworthiness (scikit-learn, 10 neighbours) of both on 5,000 of its points, and their times;
* ``ray`` — 65,536 sentences (8 shards) embedded with MiniLM through ``embed --ray`` with 1 and 2 workers on a
  local cluster, and the one-process path, each from no shards on this machine's prepared cache folder (the
  runtime chosen and built once), sentences/s with every start-up counted (target: 2 workers >= 1.6x 1);
* ``space`` — what a 2-vCPU Space holds: 200,000 sentences of the corpus mapped with MiniLM by the ``map`` command
  from nothing (a cache folder that shares this machine's prepared models and measured runtimes, no shards, no
  map), then opened again by a new process (targets: cold <= 6 min, re-open <= 3 s), each with its peak memory.

Prints the CPU first: the numbers belong to it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
CORPUS = Path.home() / ".cache" / "sbert-demo" / "bench-corpus"
PHASES = ("read", "embed", "reopen", "search", "neighbours", "layout", "ray", "space")
COMPARED = ("all-MiniLM-L6-v2", "glove-6b-50d")
RAY_SENTENCES = 65_536  # 8 whole shards: two workers take four each
SPACE_SENTENCES = 200_000


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def spec(folder: str):
    from sbert_demo.corpus.sources import SourceSpec

    return SourceSpec(path=folder)


def phase_read(args) -> dict:
    from sbert_demo.corpus.embed import corpora_root
    from sbert_demo.corpus.library import open_corpus, source_identity

    identity = source_identity(spec(args.corpus))
    for suffix in (".parquet", ".json"):
        (corpora_root() / "texts" / f"{identity}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    corpus = open_corpus(spec(args.corpus))
    return {"sentences": len(corpus), "seconds": time.perf_counter() - started}


def phase_embed(args) -> dict:
    from sbert_demo.corpus.embed import embed_corpus, store_for
    from sbert_demo.corpus.library import open_corpus
    from sbert_demo.corpus.shards import plan

    corpus = open_corpus(spec(args.corpus))
    store, _ = store_for(args.model)
    for shard in plan(corpus.sentences):
        store.path(shard.key).unlink(missing_ok=True)
    started = time.perf_counter()
    embedded = embed_corpus(corpus, args.model)
    seconds = time.perf_counter() - started
    return {"model": args.model, "sentences": embedded.n, "seconds": seconds, "rate": embedded.n / seconds,
            "runtime": embedded.runtime}


def phase_reopen(args) -> dict:
    from sbert_demo.corpus.embed import embed_corpus
    from sbert_demo.corpus.library import open_corpus

    started = time.perf_counter()
    corpus = open_corpus(spec(args.corpus))
    embedded = embed_corpus(corpus, args.model)
    return {"sentences": embedded.n, "computed": embedded.computed, "seconds": time.perf_counter() - started}


def phase_search(args) -> dict:
    import numpy as np

    from sbert_demo.corpus.embed import embed_corpus
    from sbert_demo.corpus.library import open_corpus
    from sbert_demo.corpus.search import CorpusIndex, exact_top
    from sbert_demo.data.corpora import stsb_corpus
    from sbert_demo.encoding.encoder import encode

    embedded = embed_corpus(open_corpus(spec(args.corpus)), args.model)
    started = time.perf_counter()
    index = CorpusIndex.open_or_build(embedded)
    build = time.perf_counter() - started
    queries = stsb_corpus().sentences[::77][:200]
    vectors = encode(args.model, queries, use_cache=False, fast=True).embeddings
    times = []
    for sentence in queries[:50]:
        started = time.perf_counter()
        index.search([sentence], 10)
        times.append(time.perf_counter() - started)
    found = index.search_vectors(vectors, 10)
    exact = exact_top(embedded, vectors, 10)
    recall = np.mean([len({r for r, _ in got} & set(want.tolist())) / 10 for got, want in zip(found, exact)])
    # ties: a sentence found counts when its cosine (exact: the index rescores) reaches the exact tenth's
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    tenth = np.einsum("ij,ij->i", unit, embedded.rows(exact[:, 9]))
    reached = np.mean([sum(c >= t - 1e-6 for _, c in got) / 10 for got, t in zip(found, tenth)])
    return {"index_s": build, "p50_ms": 1000 * float(np.median(times)), "p95_ms": 1000 * float(np.percentile(times, 95)),
            "recall": float(recall), "reached": float(reached), "queries": len(queries)}


def phase_neighbours(args) -> dict:
    import numpy as np

    from sbert_demo.atlas import compare
    from sbert_demo.atlas.store import Atlas
    from sbert_demo.corpus.embed import embed_corpus
    from sbert_demo.corpus.library import open_corpus
    from sbert_demo.corpus.search import CorpusIndex
    from sbert_demo.corpus.sources import LargeCorpus

    sentences = open_corpus(spec(args.corpus)).sentences[:args.sentences]
    embedded = [embed_corpus(LargeCorpus("neighbours", sentences, None), key) for key in COMPARED]  # not timed
    for each in embedded:
        CorpusIndex.path(each).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as root:
        flat = {key: np.zeros((len(sentences), 2), np.float32) for key in COMPARED}
        atlas = Atlas.of_arrays("neighbours", sentences, flat, {key: np.zeros(len(sentences), int) for key in COMPARED},
                                root=Path(root))
        started = time.perf_counter()
        compare.shared(atlas, 0, 1)
        seconds = time.perf_counter() - started
        sample = np.random.default_rng(0).choice(len(sentences), 2_000, replace=False)
        recall = {}
        for m, each in enumerate(embedded):
            unit = each.matrix(np.float32)
            scores = unit[sample] @ unit.T
            scores[np.arange(len(sample)), sample] = -np.inf
            tenth = -np.partition(-scores, 9, axis=1)[:, 9]
            found = np.take_along_axis(scores, compare.neighbours(atlas, m)[sample].astype(np.int64), axis=1)
            recall[each.label] = float((found >= tenth[:, None] - 1e-6).mean())
    return {"sentences": len(sentences), "seconds": seconds, "recall": recall}


def phase_layout(args) -> dict:
    import numpy as np
    from sklearn.manifold import trustworthiness

    from sbert_demo.corpus.embed import embed_corpus
    from sbert_demo.corpus.layout import layout_rows
    from sbert_demo.corpus.library import open_corpus
    from sbert_demo.corpus.sources import LargeCorpus
    from sbert_demo.explore.projection import umap_2d

    corpus = open_corpus(spec(args.corpus))
    rows = np.sort(np.random.default_rng(1).choice(len(corpus), 100_000, replace=False))
    part = LargeCorpus("100k", [corpus.sentences[i] for i in rows], None)
    unit = embed_corpus(part, args.model).matrix(np.float32)
    started = time.perf_counter()
    sampled, _ = layout_rows(unit)
    sampled_s = time.perf_counter() - started
    started = time.perf_counter()
    full = umap_2d(unit, 42)
    full_s = time.perf_counter() - started
    check = np.random.default_rng(2).choice(len(unit), 5000, replace=False)
    return {"sampled_s": sampled_s, "full_s": full_s,
            "sampled_trust": float(trustworthiness(unit[check], sampled[check], n_neighbors=10, metric="cosine")),
            "full_trust": float(trustworthiness(unit[check], full[check], n_neighbors=10, metric="cosine"))}


def phase_ray(args) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sbert_demo.corpus.embed import store_for
    from sbert_demo.corpus.library import open_corpus
    from sbert_demo.corpus.shards import plan

    corpus = open_corpus(spec(args.corpus))
    rows = {}
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "part.parquet"
        pq.write_table(pa.table({"text": corpus.sentences[:RAY_SENTENCES]}), source)
        part = open_corpus(spec(str(source)))
        store, _ = store_for("all-MiniLM-L6-v2")  # the runtime measured and built once, as on a prepared machine
        for name, flags in (("one process", []), ("ray, 1 worker", ["--ray", "--workers", "1"]),
                            ("ray, 2 workers", ["--ray", "--workers", "2"])):
            for shard in plan(part.sentences):  # every run embeds all of it
                store.path(shard.key).unlink(missing_ok=True)
            env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "sbert_demo", "embed", str(source), "--model",
                                   "all-MiniLM-L6-v2", *flags], cwd=REPO, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            if done.returncode:
                raise RuntimeError(done.stderr[-2000:])
            rows[name] = {"seconds": seconds, "rate": RAY_SENTENCES / seconds}
    return {"runs": rows}


def phase_space(args) -> dict:
    import resource

    import pyarrow as pa
    import pyarrow.parquet as pq

    from sbert_demo.explore.prepare import link_prepared
    from sbert_demo.corpus.library import open_corpus

    corpus = open_corpus(spec(args.corpus))
    rows = {}
    with tempfile.TemporaryDirectory(prefix="sbert-space-") as folder:
        link_prepared(Path(folder))
        source = Path(folder) / "space.parquet"
        pq.write_table(pa.table({"text": corpus.sentences[300_000: 300_000 + SPACE_SENTENCES]}), source)
        for name in ("cold", "re-open"):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "sbert_demo", "map", "--file", str(source), "--models",
                                   "all-MiniLM-L6-v2", "--json", str(Path(folder) / "map.json")], cwd=REPO,
                                  env={**os.environ, "SBERT_DEMO_CACHE": folder}, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            if done.returncode:
                raise RuntimeError(done.stderr[-2000:])
            points = json.loads((Path(folder) / "map.json").read_text(encoding="utf-8"))
            rows[name] = {"seconds": seconds, "children_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                          "points": sum(len(m["map"]["x"]) for m in points["models"] if not m.get("error"))}
        # The app's re-open: a process started like the app (its hardware probe done at start-up) opens the corpus
        # and its map again, as the Corpus map button does.
        code = ("import json, sys, time; from sbert_demo.encoding.devices import detect_hardware; detect_hardware(); "
                "from sbert_demo.corpus.library import open_corpus; from sbert_demo.corpus.sources import SourceSpec; "
                "from sbert_demo.corpus.large_map import map_large_corpus; t = time.perf_counter(); "
                f"m = map_large_corpus(open_corpus(SourceSpec(path={str(source)!r})), ['all-MiniLM-L6-v2'], k=12); "
                "print(json.dumps({'seconds': time.perf_counter() - t, 'cached': [r.cached for r in m.models], 'errors': [r.error for r in m.models]}))")
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**os.environ, "SBERT_DEMO_CACHE": folder},
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(done.stderr[-2000:])
        rows["app re-open"] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"runs": rows, "sentences": SPACE_SENTENCES}


def child(args) -> None:
    result = globals()[f"phase_{args.child}"](args)
    result["peak_mb"] = peak_mb()
    print("RESULT " + json.dumps(result), flush=True)


def run(phase: str, args) -> dict:
    command = [sys.executable, __file__, "--child", phase, "--corpus", args.corpus, "--model", args.model,
               "--sentences", str(args.sentences)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{phase} failed:\n{done.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(CORPUS), help="a folder of Parquet files (scripts/build_corpus.py)")
    parser.add_argument("--model", default="static-minilm")
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--sentences", type=int, default=150_000, help="the neighbours phase's share of the corpus")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        return child(args)
    from encode import cpu_line

    print(cpu_line(), flush=True)
    for phase in args.phases.split(","):
        r = run(phase, args)
        mem = f"peak memory {r['peak_mb']:,.0f} MB"
        if phase == "read":
            print(f"read: {r['sentences']:,} sentences in {r['seconds']:.1f} s, {mem}")
        elif phase == "embed":
            print(f"embed ({r['model']}, {r['runtime']}): {r['sentences']:,} sentences in {r['seconds'] / 60:.1f} min, "
                  f"{r['rate']:,.0f} sentences/s, {mem} (target: static <= 5 min, MiniLM <= 25 min; memory <= 4 GB)")
        elif phase == "reopen":
            print(f"re-open: {r['sentences']:,} sentences and their embeddings in {r['seconds']:.1f} s, "
                  f"{r['computed']} embedded (target <= 5 s), {mem}")
        elif phase == "search":
            print(f"search ({args.model}): index built in {r['index_s']:.0f} s; a query p50 {r['p50_ms']:.1f} ms, p95 "
                  f"{r['p95_ms']:.1f} ms (target <= 100); recall@10 {r['recall']:.3f} over {r['queries']} queries "
                  f"(target >= 0.95; {r['reached']:.3f} counting ties: found at the exact tenth's cosine), {mem}")
        elif phase == "neighbours":
            print(f"neighbours (the map view's comparison of {' and '.join(COMPARED)}, {r['sentences']:,} sentences): "
                  f"{r['seconds']:.0f} s (target <= 60); recall@10 " + ", ".join(
                      f"{label} {value:.3f}" for label, value in r["recall"].items()) + f"; {mem}")
        elif phase == "layout":
            print(f"layout of 100,000 ({args.model}): sampled UMAP + placement {r['sampled_s']:.0f} s, trustworthiness "
                  f"{r['sampled_trust']:.3f}; full UMAP {r['full_s']:.0f} s, {r['full_trust']:.3f}; {mem}")
        elif phase == "ray":
            runs = r["runs"]
            print(f"ray ({RAY_SENTENCES:,} sentences, MiniLM, local cluster): " + "; ".join(
                f"{name} {v['seconds']:.0f} s ({v['rate']:,.0f}/s)" for name, v in runs.items())
                + f"; 2 workers / 1 worker {runs['ray, 2 workers']['rate'] / runs['ray, 1 worker']['rate']:.2f}x "
                "(target >= 1.6x)")
        elif phase == "space":
            cold, again = r["runs"]["cold"], r["runs"]["re-open"]
            print(f"space ({r['sentences']:,} sentences, MiniLM map, the map command): cold {cold['seconds'] / 60:.1f} min "
                  f"(target <= 6), peak memory {cold['children_peak_mb']:,.0f} MB; re-open: the command {again['seconds']:.1f} s "
                  f"(its start and torch's import included), in a started app {r['runs']['app re-open']['seconds']:.1f} s "
                  f"(target <= 3 s); {again['points']:,} points")


if __name__ == "__main__":
    main()
