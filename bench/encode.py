"""Encoding speed: this project's encoder against plain ``SentenceTransformer.encode``, per runtime path.

For each model, every encoder embeds the same distinct STSb dev sentences in the same process, with
the same batch size (duplicates are removed first so that only computation is compared):

* plain: ``SentenceTransformer.encode`` in fp32 (the library's defaults), the baseline;
* lossless: :func:`sbert_demo.encoding.encoder.encode` as the STS tab and ``eval`` call it (automatic
  runtime: PyTorch bf16 on CPUs with native bf16, ONNX Runtime fp32 elsewhere);
* fast: the same with ``fast=True``, as Explore calls it (ONNX Runtime int8 where the model passes
  the int8 check, else the lossless runtime);

with the persistent cache off. ONNX artefacts are built before timing (once per model version).
All are warmed up, then timed alternately ``--repeats`` times (default 3) so that drifts of a
shared machine hit all alike; the fastest run of each counts, as ``timeit`` does. The first line
names the CPU and whether it has native bf16; then one line per model and path with sentences/s,
the runtime, the STSb dev Spearman of its embeddings and the ratio to plain, ending like ``1.85x``.

    python bench/encode.py [--models all-MiniLM-L6-v2,all-mpnet-base-v2] [--batch-size 32] [--repeats 3]
                           [--static static-minilm,static-mpnet]

The static models (distilled here from MiniLM and mpnet) are timed last, against MiniLM's plain rate
measured in the same run (the issue's goal: at least 50x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np  # noqa: E402

from sbert_demo.benchmark.evaluation import correlations
from sbert_demo.encoding.pair_scores import pair_cosines
from sbert_demo.data.benchmarks import sts_split
from sbert_demo.encoding import devices, model_cache, onnx_encoder
from sbert_demo.encoding.encoder import encode
from sbert_demo.models import loading


def spearman(unique: np.ndarray, position: dict[str, int], pairs) -> float:
    a = unique[[position[t] for t in pairs.sentences1]]
    b = unique[[position[t] for t in pairs.sentences2]]
    return correlations(pairs.scores, pair_cosines(a, b))[0] * 100


def bench_model(key: str, pairs, batch_size: int, repeats: int, rates: dict | None = None) -> list[str]:
    import torch
    from sentence_transformers import SentenceTransformer

    sentences = list(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))
    position = {t: i for i, t in enumerate(sentences)}
    entry, status, _ = loading.resolve(key)
    plain = SentenceTransformer(str(status.location), device="cpu")
    runs = {
        "plain": lambda: plain.encode(sentences, batch_size=batch_size, normalize_embeddings=True),
        "lossless": lambda: encode(key, sentences, batch_size=batch_size, use_cache=False).embeddings,
        "fast": lambda: encode(key, sentences, batch_size=batch_size, use_cache=False, fast=True).embeddings,
    }
    labels = {"plain": "PyTorch fp32 (SentenceTransformer.encode)",
              "lossless": model_cache.load(key).device.runtime,  # builds the artefacts before timing
              "fast": model_cache.load(key, fast=True).device.runtime}
    for run in runs.values():
        run()  # warm-up at full size: the first ONNX/PyTorch calls allocate their buffers
    best = dict.fromkeys(runs, 0.0)
    outputs = {}
    for _ in range(repeats):  # alternate, so drifts of a shared machine hit all alike
        for name, run in runs.items():
            started = time.perf_counter()
            outputs[name] = run()
            best[name] = max(best[name], len(sentences) / (time.perf_counter() - started))
    if rates is not None:
        rates[key] = best["plain"]
    lines = []
    for name in runs:
        lines.append(f"{key} {name:8s}: {best[name]:7.1f} sent/s | {labels[name]:45s} | Spearman "
                     f"{spearman(np.asarray(outputs[name]), position, pairs):.2f} | threads {torch.get_num_threads()}, "
                     f"batch {batch_size}, best of {repeats} | {best[name] / best['plain']:.2f}x")
    return lines


def bench_static(key: str, pairs, batch_size: int, repeats: int, reference: tuple[str, float]) -> list[str]:
    """A static model (distilled here): this project's encoder and plain ``SentenceTransformer.encode`` on
    its saved folder, and the rate against the teacher's plain rate measured above in this run."""
    from sentence_transformers import SentenceTransformer

    sentences = list(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))
    position = {t: i for i, t in enumerate(sentences)}
    model_cache.load(key)  # distils once (per teacher version) before anything is timed
    plain = SentenceTransformer(str(loading.resolve(key).status.location), device="cpu")
    runs = {"plain": lambda: plain.encode(sentences, batch_size=batch_size, normalize_embeddings=True),
            "encoder": lambda: encode(key, sentences, batch_size=batch_size, use_cache=False, fast=True).embeddings}
    best = dict.fromkeys(runs, 0.0)
    outputs = {}
    for run in runs.values():
        run()
    for _ in range(repeats):
        for name, run in runs.items():
            started = time.perf_counter()
            outputs[name] = run()
            best[name] = max(best[name], len(sentences) / (time.perf_counter() - started))
    teacher, teacher_rate = reference
    return [f"{key} {name:8s}: {best[name]:9.1f} sent/s | Spearman {spearman(np.asarray(outputs[name]), position, pairs):.2f}"
            f" | best of {repeats} | {best[name] / teacher_rate:.1f}x {teacher}'s plain rate" for name in runs]


def cpu_line() -> str:
    hardware = devices.detect_hardware()
    flags = open("/proc/cpuinfo", encoding="ascii", errors="ignore").read() if Path("/proc/cpuinfo").exists() else ""
    simd = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "no AVX2"
    return (f"CPU: {hardware.cpu_name} | {simd} | native bf16: {'yes' if hardware.cpu_bf16 else 'no'} | "
            f"{onnx_encoder.cpu_workers()} cores | onnxruntime: {'yes' if hardware.onnx else 'no'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="all-MiniLM-L6-v2,all-mpnet-base-v2")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data-dir", default=os.environ.get("SBERT_DEMO_DATA"))
    parser.add_argument("--repeats", type=int, default=3, help="alternating timed runs per encoder; the best counts")
    parser.add_argument("--static", default="static-minilm,static-mpnet",
                        help="static models (distilled here) to time against their teacher's plain rate ('' for none)")
    args = parser.parse_args()
    pairs = sts_split("dev", args.data_dir)
    print(cpu_line(), flush=True)
    print(f"STSb dev: {len(pairs):,} pairs, {len(set([*pairs.sentences1, *pairs.sentences2])):,} distinct sentences",
          flush=True)
    rates: dict[str, float] = {}
    for key in args.models.split(","):
        for line in bench_model(key.strip(), pairs, args.batch_size, args.repeats, rates):
            print(line, flush=True)
    teacher = "all-MiniLM-L6-v2"
    if args.static and teacher not in rates:
        rates[teacher] = 0.0
        bench_model(teacher, pairs, args.batch_size, 1, rates)  # the reference rate the static tier is measured against
    for key in filter(None, (k.strip() for k in args.static.split(","))):
        for line in bench_static(key, pairs, args.batch_size, args.repeats, (teacher, rates[teacher])):
            print(line, flush=True)


if __name__ == "__main__":
    main()
