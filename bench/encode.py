"""Encoding speed: this project's encoder against plain ``SentenceTransformer.encode``, per runtime.

For each model, every runner embeds the same distinct STSb dev sentences in the same process, with
the same batch size (duplicates are removed first so that only computation is compared):

* plain: ``SentenceTransformer.encode`` in fp32 (the library's defaults), the baseline;
* every candidate runtime this CPU has (:mod:`sbert_demo.encoding.runtime_choice`): PyTorch fp32,
  PyTorch bf16 (native bf16 only), ONNX Runtime fp32 and int8, OpenVINO fp32, bf16 (native bf16
  only) and int8 (NNCF), through
  :func:`sbert_demo.encoding.encoder.encode` with that runtime forced;

with the persistent cache off. Each runner is loaded first (ONNX artefacts built once per model
version), then its **cold** rate is its first call (every input shape new to it), then the runners
are timed alternately ``--repeats`` times (default 3) so that drifts of a shared machine hit all
alike; the fastest run of each is its **warm** rate, as ``timeit`` counts. Each line gives both rates,
the STSb dev Spearman of its embeddings and the warm ratio to plain, ending like ``1.85x``.

Then "the app's pick" for the two paths, as the app chose it by measuring its probe in interleaved
rounds (what ``encode`` uses with everything on "auto"; the probe's own rates and verdict are printed
too): **lossless** (reported numbers: Spearman within 0.05 of fp32) and **fast** (Explore: within 0.5),
each with its ratio to plain, and whether it agrees with the fastest candidate printed for that path
(or how far behind it is, against the bench's own spread: the gap between each one's two best repeats).

    python bench/encode.py [--models all-MiniLM-L6-v2,all-mpnet-base-v2] [--batch-size 32] [--repeats 3]
                           [--static static-minilm,static-mpnet,wordllama-l2-256]

The static models (distilled here from MiniLM and mpnet, and WordLlama's table from its wheel) are
timed last, against MiniLM's plain rate measured in the same run (the issue's goal: at least 50x);
each beside its library's own path ("plain": sentence-transformers on the saved folder, WordLlama's
own inference class).
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
from sbert_demo.encoding import devices, model_cache, onnx_encoder, runtime_choice
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
    entry, status, identity = loading.resolve(key)
    plain = SentenceTransformer(str(status.location), device="cpu")
    candidates = runtime_choice.candidates(devices.detect_hardware())
    runs = {"plain": lambda: plain.encode(sentences, batch_size=batch_size, normalize_embeddings=True)}
    labels = {"plain": "PyTorch fp32 (SentenceTransformer.encode)"}
    for candidate in candidates:
        loaded = model_cache.load(key, precision=candidate.precision, backend=candidate.backend)  # artefacts built
        if (loaded.device.backend, loaded.device.precision) != (candidate.backend, candidate.precision):
            print(f"{key} {candidate.name}: not available here (it fell back to {loaded.device.runtime})", flush=True)
            continue
        runs[candidate.name] = (lambda c=candidate: encode(key, sentences, batch_size=batch_size, use_cache=False,
                                                           precision=c.precision, backend=c.backend).embeddings)
        labels[candidate.name] = loaded.device.runtime
    cold, best, outputs = {}, dict.fromkeys(runs, 0.0), {}
    every: dict[str, list[float]] = {name: [] for name in runs}
    for name, run in runs.items():  # the first call: every input shape is new to this runner
        started = time.perf_counter()
        outputs[name] = run()
        cold[name] = len(sentences) / (time.perf_counter() - started)
    for _ in range(repeats):  # alternate, so drifts of a shared machine hit all alike
        for name, run in runs.items():
            started = time.perf_counter()
            outputs[name] = run()
            every[name].append(len(sentences) / (time.perf_counter() - started))
            best[name] = max(every[name])
    if rates is not None:
        rates[key] = best["plain"]
    scores = {name: spearman(np.asarray(outputs[name]), position, pairs) for name in runs}
    lines = [f"{key} {name:10s}: cold {cold[name]:7.1f} | warm {best[name]:7.1f} sent/s | {labels[name]:42s} | "
             f"Spearman {scores[name]:.2f} | threads {torch.get_num_threads()}, batch {batch_size}, best of {repeats} | "
             f"{best[name] / best['plain']:.2f}x" for name in runs]
    decision = model_cache.runtime_decision(key)  # what "auto" uses: measured on the probe once, or read back
    lines.append(f"{key} probe ({decision.sentences} sentences timed, typed and STSb; {decision.seconds:.1f} s to measure):")
    lines += [f"    {line}" for line in decision.summary().splitlines()]
    for path, fast, bound in (("lossless", False, 0.05), ("fast", True, 0.3)):
        chosen = decision.for_path(fast).name
        if chosen not in runs:
            lines.append(f"{key} {path}: {decision.for_path(fast).label}, which did not run above")
            continue
        allowed = [n for n in runs if n != "plain" and abs(scores[n] - scores["torch-fp32"]) <= bound
                   and (fast or not n.endswith("int8"))]
        fastest = max(allowed, key=lambda n: best[n])
        # the bench's own spread: how far each one's second-best repeat is from its best
        spread = max(runtime_choice.round_spread(every[chosen], 0.0), runtime_choice.round_spread(every[fastest], 0.0))
        behind = 1 - best[chosen] / best[fastest]
        agree = ("agrees with the fastest printed" if chosen == fastest else
                 f"{behind:.0%} behind the fastest printed ({labels[fastest]}), "
                 + ("within the bench's spread" if behind <= spread else "outside the bench's spread") +
                 f" of {spread:.0%}")
        lines.append(f"{key} the app's pick, {path:8s}: {labels[chosen]:36s} | Spearman {scores[chosen]:.2f} | "
                     f"{best[chosen] / best['plain']:.2f}x | {agree}")
        lines.append(f"{key}     probe's verdict: {decision.verdict(fast)}")
    return lines


def bench_static(key: str, pairs, batch_size: int, repeats: int, reference: tuple[str, float]) -> list[str]:
    """A static model (distilled here): this project's encoder and plain ``SentenceTransformer.encode`` on
    its saved folder, and the rate against the teacher's plain rate measured above in this run."""
    from sentence_transformers import SentenceTransformer

    sentences = list(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))
    position = {t: i for i, t in enumerate(sentences)}
    model_cache.load(key)  # distils once (per teacher version) before anything is timed
    if loading.resolve(key).entry.kind == "wordllama":  # the library's own inference on the wheel's files
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        from sbert_demo.models.kinds.wordllama import TABLE, package_files

        weights, tokenizer = package_files()
        library = WordLlamaInference(load_file(str(weights))[TABLE], Tokenizer.from_file(str(tokenizer)))
        plain = lambda: library.embed(sentences, norm=True, batch_size=batch_size)  # noqa: E731
    else:
        model = SentenceTransformer(str(loading.resolve(key).status.location), device="cpu")
        plain = lambda: model.encode(sentences, batch_size=batch_size, normalize_embeddings=True)  # noqa: E731
    runs = {"plain": plain,
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
    amx = "AMX" if " amx_bf16" in flags else "no AMX"
    versions = []
    for name in ("onnxruntime", "openvino", "nncf"):
        try:
            versions.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            versions.append(f"{name}: not installed")
    return (f"CPU: {hardware.cpu_name} | {simd} | native bf16: {'yes' if hardware.cpu_bf16 else 'no'} | {amx} | "
            f"{onnx_encoder.cpu_workers()} cores | {', '.join(versions)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="all-MiniLM-L6-v2,all-mpnet-base-v2")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data-dir", default=os.environ.get("SBERT_DEMO_DATA"))
    parser.add_argument("--repeats", type=int, default=3, help="alternating timed runs per encoder; the best counts")
    parser.add_argument("--static", default="static-minilm,static-mpnet,wordllama-l2-256",
                        help="static models (distilled here, or WordLlama's) to time against MiniLM's plain rate "
                             "('' for none)")
    args = parser.parse_args()
    pairs = sts_split("dev", args.data_dir)
    print(cpu_line(), flush=True)
    for why in runtime_choice.left_out(devices.detect_hardware()):
        print(why, flush=True)
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
