"""Corpus map at scale: cold and warm times and peak memory for 15,457 and 20,000 sentences.

What the Explore → Corpus map button does (``map_corpus``: embeddings, exact neighbours + UMAP,
k-means, c-TF-IDF words, then the WebGL figure), timed in fresh processes that start like the app
(imports, then UMAP's warm-up and the hardware probe, which the app runs at start-up), each scenario in its own process so
its peak memory (VmHWM: the largest resident set the process ever had) is its own:

* ``stsb``: the built-in corpus, every distinct STSb sentence (15,457), one model (MiniLM):
  cold: an empty cache folder (the ONNX int8 artefact is built, every sentence encoded);
  warm: embeddings cached, the map laid out again (its disk copy deleted, the memory caches empty);
  restart: a new process with embeddings and map on disk (what a restarted demo sees);
* ``20k``: the limit: the STSb sentences plus distinct NLI sentences up to 20,000, cold and warm;
* ``50k``: a 50,000-sentence CSV is refused with a message naming the limit; memory stays bounded.

Targets (issue 11): cold <= 90 s, warm <= 10 s on the CPU at hand. The first line names the CPU.

    python bench/corpus.py [--model all-MiniLM-L6-v2] [--k 12]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def corpus_of(kind: str, folder: Path):
    from sbert_demo.data.benchmarks import nli_pairs
    from sbert_demo.data.corpora import MAX_CORPUS_SENTENCES, read_corpus, stsb_corpus

    stsb = stsb_corpus()
    if kind == "stsb":
        return stsb
    seen = dict.fromkeys(stsb.sentences)
    labels = list(stsb.labels)
    pairs = nli_pairs()
    for sentence in [*pairs.premises, *pairs.hypotheses]:
        if len(seen) >= MAX_CORPUS_SENTENCES:
            break
        if sentence.strip() and sentence not in seen:
            seen[sentence] = None
            labels.append("nli")
    path = folder / "corpus-20k.csv"
    _write_csv(path, list(seen), labels)
    return read_corpus(path)


def _write_csv(path: Path, sentences: list[str], labels: list[str]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows(zip(sentences, labels))


def one_run(corpus, model: str, k: int) -> dict:
    """Map and draw, as the page's button does; seconds per part."""
    from sbert_demo.explore import plots
    from sbert_demo.explore.corpus_map import map_corpus

    started = time.perf_counter()
    result = map_corpus(corpus, [model], k)
    mapped = time.perf_counter()
    m = result.models[0]
    if m.error:
        raise SystemExit(f"{model} could not map the corpus: {m.error}")
    figure = plots.corpus_scatter(m.coords, corpus.sentences, corpus.labels or m.clustering.labels.tolist(),
                                  m.label, words=result.label_words or m.cluster_words)
    size = len(figure.to_json())
    done = time.perf_counter()
    return {"seconds": done - started, "map": mapped - started, "figure": done - mapped, "figure_mb": size / 2**20,
            "runtime": m.runtime, "cached": m.cached}


def scenario(kind: str, model: str, k: int, cache: Path, phases: list[str]) -> dict:
    """Runs in a child process (SBERT_DEMO_CACHE already points at ``cache``)."""
    out: dict = {"kind": kind}
    started = time.perf_counter()
    from sbert_demo.encoding import devices
    from sbert_demo.explore.corpus_map import corpus_results
    from sbert_demo.explore.projection import warm_up

    warm_up()  # what the app does at start-up: UMAP's kernels, and the runtime chosen for this machine
    devices.detect_hardware()
    out["start"] = time.perf_counter() - started
    out["start_mb"] = peak_mb()
    if kind == "50k":
        from sbert_demo.data.corpora import read_corpus

        path = cache / "corpus-50k.csv"
        _write_csv(path, [f"Sentence number {i} of a corpus that is too large." for i in range(50_000)],
                   ["x"] * 50_000)
        try:
            read_corpus(path)
            out["message"] = "ACCEPTED (should have been refused)"
        except ValueError as exc:
            out["message"] = str(exc)
        out["peak_mb"] = peak_mb()
        return out
    corpus = corpus_of(kind, cache)
    out["n"] = len(corpus)
    for phase in phases:
        if phase == "warm":  # embeddings cached; map laid out again
            shutil.rmtree(cache / "maps", ignore_errors=True)
            corpus_results.clear()
        out[phase] = one_run(corpus, model, k)
        out[f"peak_after_{phase}_mb"] = peak_mb()
    return out


def child(kind: str, model: str, k: int, cache: Path, phases: list[str]) -> dict:
    env = dict(os.environ, SBERT_DEMO_CACHE=str(cache))
    command = [sys.executable, __file__, "--child", kind, "--model", model, "--k", str(k), "--phases", ",".join(phases)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        raise SystemExit(f"scenario {kind} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def show(name: str, run: dict, target: str) -> None:
    print(f"  {name:34s} {run['seconds']:6.1f} s  (map {run['map']:5.1f} s, figure {run['figure']:4.2f} s, "
          f"{run['figure_mb']:.1f} MB JSON) | {run['runtime']} | {target}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--k", type=int, default=12)
    parser.add_argument("--child")
    parser.add_argument("--phases", default="cold,warm")
    args = parser.parse_args()
    if args.child:
        result = scenario(args.child, args.model, args.k, Path(os.environ["SBERT_DEMO_CACHE"]),
                          args.phases.split(","))
        print(json.dumps(result), flush=True)
        return

    from encode import cpu_line

    print(cpu_line(), flush=True)
    print(f"model {args.model}, k = {args.k}; each scenario in a fresh process (start = imports + UMAP warm-up)")
    for kind in ("stsb", "20k"):
        with tempfile.TemporaryDirectory(prefix="sbert-corpus-") as folder:
            cache = Path(folder)
            first = child(kind, args.model, args.k, cache, ["cold", "warm"])
            again = child(kind, args.model, args.k, cache, ["restart"])
        print(f"{kind}: {first['n']:,} sentences (process start {first['start']:.1f} s)")
        show("cold (empty cache folder)", first["cold"], "target <= 90 s")
        show("warm (embeddings cached, new map)", first["warm"], "target <= 10 s")
        show("restart (embeddings + map on disk)", again["restart"], "")
        print(f"  peak memory (VmHWM): {first['start_mb']:.0f} MB after the start, {first['peak_after_cold_mb']:.0f} MB "
              f"after cold (the model's ONNX export included), {first['peak_after_warm_mb']:.0f} MB after warm; "
              f"restart process {again['start_mb']:.0f} MB after its start, {again['peak_after_restart_mb']:.0f} MB "
              "after the map", flush=True)
        print(f"  cold / warm {first['cold']['seconds'] / first['warm']['seconds']:.1f}x, "
              f"cold / restart {first['cold']['seconds'] / again['restart']['seconds']:.1f}x", flush=True)
    with tempfile.TemporaryDirectory(prefix="sbert-corpus-") as folder:
        refused = child("50k", args.model, args.k, Path(folder), [])
    print(f"50k: refused: {refused['message']!r}; peak memory {refused['peak_mb']:.0f} MB "
          f"({refused['start_mb']:.0f} MB after the start)", flush=True)


if __name__ == "__main__":
    main()
