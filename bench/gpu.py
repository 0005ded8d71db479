"""The Train tab's GPU path, run for real on a CUDA machine, and the encoder on the GPU.

Every training run goes through the job manager, as the Train tab's Start button does (the run in a
child process, its events read back, the estimate shown before it starts), with the GPU defaults the
tab fills in (batch 32, lr 2e-5, all pairs, precision auto):

1. all-MiniLM-L6-v2, cosine regression on STSb train (5,749 pairs), precision auto (bf16 where the
   GPU has it);
2. the same in fp16 (mixed precision with loss scaling);
3. all-MiniLM-L6-v2, NLI softmax on the NLI pairs shipped in ``data/nli`` (39,313), precision auto;
4. a cross-encoder from MiniLM on STSb train, precision auto.

Each prints the device the run chose, the estimate against the time it took, the seconds until the
first step ("preparing"), training pairs/s, and STSb dev / test Spearman before and after. Then the
encoder: STSb dev (2,910 distinct sentences) with MiniLM on the GPU in fp32 and bf16 (sentences/s,
Spearman), the numbers the STS tab would report there. Then a corpus (``corpus``): the shipped sets' distinct
sentences (STSb and NLI) embedded with MiniLM by ``python -m sbert_demo embed`` as a user runs it, in one
process and with ``--ray`` (a local Ray cluster started for the run, one actor per GPU with
``num_gpus=1``), each from an empty cache folder with every start-up counted; then the vectors of both
compared sentence by sentence (cosine), in the default precision and in fp32 (``--lossless`` with
``SBERT_DEMO_PRECISION=fp32``).

    python bench/gpu.py [--runs cosine-bf16,cosine-fp16,nli,cross-encoder,encode,corpus] [--json out.json]

A CUDA GPU is required (the script says so and exits 2 without one). Caches and trained models go
to a temporary folder unless SBERT_DEMO_CACHE / SBERT_DEMO_MODELS say otherwise.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
SCRATCH = Path(tempfile.mkdtemp(prefix="sbert-demo-gpu-"))
os.environ.setdefault("SBERT_DEMO_CACHE", str(SCRATCH / "cache"))
os.environ.setdefault("SBERT_DEMO_MODELS", str(SCRATCH / "models"))

MINILM = "all-MiniLM-L6-v2"
RUNS = {  # name: (objective, precision, what)
    "cosine-bf16": ("cosine", "auto", "MiniLM, cosine on STSb train, precision auto"),
    "cosine-fp16": ("cosine", "fp16", "MiniLM, cosine on STSb train, fp16"),
    "cosine-fp32": ("cosine", "fp32", "MiniLM, cosine on STSb train, fp32"),
    "nli": ("nli-softmax", "auto", "MiniLM, NLI softmax on 39,313 NLI pairs, precision auto"),
    "nli-fp32": ("nli-softmax", "fp32", "MiniLM, NLI softmax on 39,313 NLI pairs, fp32"),
    "mnrl": ("mnrl", "auto", "MiniLM, multiple-negatives ranking on the NLI triplets, precision auto"),
    "cross-encoder": ("cross-encoder", "auto", "cross-encoder from MiniLM on STSb train, precision auto"),
}


def installed(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def train(name: str) -> dict:
    from sbert_demo.training import config_for, device_label, training_jobs

    objective, precision, what = RUNS[name]
    config = config_for(MINILM, objective, f"gpu-{name}", overwrite=True, precision=precision)
    label = device_label(config)
    jobs = training_jobs()
    started = time.perf_counter()
    jobs.start(config)
    first_step = None
    while True:
        snap = jobs.snapshot()
        if first_step is None and snap.step > 0:
            first_step = time.perf_counter() - started
        if not snap.active:
            break
        time.sleep(0.05)
    total = time.perf_counter() - started
    row = {"run": name, "what": what, "device": label, "state": snap.state, "error": snap.error,
           "estimate_s": snap.estimate_s, "total_s": total, "preparing_s": first_step,
           "training_s": snap.train_elapsed_s, "steps": snap.total_steps, "batch_size": config.batch_size,
           "before": snap.before, "after": snap.after, "curve": list(snap.evals)}
    if snap.train_elapsed_s and snap.total_steps:
        row["pairs_per_s"] = snap.total_steps * config.batch_size / snap.train_elapsed_s
    if snap.state != "finished":
        row["log"] = list(snap.log[-15:])
    return row


def encode_rates() -> list[dict]:
    import numpy as np
    from scipy.stats import spearmanr

    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.encoding.encoder import encode

    dev = sts_split("dev")
    texts = list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))
    rows = []
    for precision in ("fp32", "bf16"):
        encode(MINILM, texts[:256], precision=precision, use_cache=False)  # load, warm the kernels
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            done = encode(MINILM, texts, precision=precision, use_cache=False, batch_size=128)
            best = min(best, time.perf_counter() - started)
        index = {text: i for i, text in enumerate(texts)}
        unit = done.embeddings / np.linalg.norm(done.embeddings, axis=1, keepdims=True)
        a = unit[[index[t] for t in dev.sentences1]]
        b = unit[[index[t] for t in dev.sentences2]]
        rho = spearmanr((a * b).sum(axis=1), dev.scores).statistic
        rows.append({"precision": precision, "runtime": done.runtime, "sentences_per_s": len(texts) / best,
                     "spearman_dev": float(rho)})
    return rows


def shipped_corpus(path: Path) -> int:
    """The shipped sets' distinct sentences (STSb, then NLI premises and hypotheses) as one Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sbert_demo.data.benchmarks import nli_pairs
    from sbert_demo.data.corpora import stsb_corpus

    sentences = list(stsb_corpus(ROOT / "data").sentences)
    pairs = nli_pairs(seed=0, data_dir=ROOT / "data")
    sentences = list(dict.fromkeys([*sentences, *pairs.premises, *pairs.hypotheses]))
    pq.write_table(pa.table({"text": sentences}), path)
    return len(sentences)


def corpus_vectors(cache: Path, source: Path, precision: str | None):
    """The shards one ``embed`` run wrote to ``cache``, as one float32 matrix (read in a child process)."""
    import numpy as np

    code = ("import sys, numpy as np; from sbert_demo.corpus.library import open_corpus; "
            "from sbert_demo.corpus.sources import SourceSpec; from sbert_demo.corpus.embed import embed_corpus; "
            f"e = embed_corpus(open_corpus(SourceSpec(path={str(source)!r})), {MINILM!r}, fast={precision is None}); "
            "assert e.computed == 0, 'the shards were not all on disk'; np.save(sys.argv[1], e.matrix(np.float32))")
    out = cache / "matrix.npy"
    env = {**os.environ, "SBERT_DEMO_CACHE": str(cache), **({"SBERT_DEMO_PRECISION": precision} if precision else {})}
    subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, env=env, check=True)
    return np.load(out)


def corpus_runs() -> list[dict]:
    """``embed`` in one process and on a local Ray cluster on this GPU, both precisions, vectors compared."""
    import numpy as np

    folder = SCRATCH / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "shipped.parquet"
    n = shipped_corpus(source)
    rows = []
    runs = (("one process", []), ("ray", ["--ray"])) if installed("ray") != "not installed" else (("one process", []),)
    for precision in (None, "fp32"):
        vectors = {}
        for name, flags in runs:
            cache = folder / f"{name.replace(' ', '-')}-{precision or 'default'}"
            env = {**os.environ, "SBERT_DEMO_CACHE": str(cache), "RAY_AUTH_MODE": "disabled",
                   **({"SBERT_DEMO_PRECISION": precision} if precision else {})}
            command = [sys.executable, "-m", "sbert_demo", "embed", str(source), "--model", MINILM, *flags,
                       *(["--lossless"] if precision else [])]
            started = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            row = {"run": name, "precision": precision or "default", "sentences": n, "seconds": seconds,
                   "rate": n / seconds, "returncode": done.returncode, "table": done.stdout.strip()[-600:]}
            if done.returncode:
                row["error"] = done.stderr[-1500:]
            else:
                vectors[name] = corpus_vectors(cache, source, precision)
            rows.append(row)
        if len(vectors) == 2:
            a, b = (v / np.linalg.norm(v, axis=1, keepdims=True) for v in vectors.values())
            rows[-1]["cosine_min"] = float((a * b).sum(axis=1).min())
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default="cosine-bf16,nli,cosine-fp16,encode,cross-encoder")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("No CUDA GPU here: bench/gpu.py measures the GPU path.", file=sys.stderr)
        return 2
    print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, transformers {installed('transformers')}, "
          f"sentence-transformers {installed('sentence-transformers')}, ray {installed('ray')}", flush=True)
    results: dict = {"gpu": torch.cuda.get_device_name(0), "training": [], "encode": []}
    for name in args.runs.split(","):
        if name == "corpus":
            results["corpus"] = corpus_runs()
            for row in results["corpus"]:
                print(f"embed {row['sentences']:,} shipped sentences, MiniLM, {row['run']}, {row['precision']}: "
                      f"{row['seconds']:.1f} s with its start-up ({row['rate']:,.0f} sentences/s)"
                      + (f"; cosine to one process, min {row['cosine_min']:.6f}" if "cosine_min" in row else ""),
                      flush=True)
                print("   " + row["table"].replace("\n", "\n   "), flush=True)
                if row.get("error"):
                    print("   error: " + row["error"], flush=True)
            continue
        if name == "encode":
            results["encode"] = encode_rates()
            for row in results["encode"]:
                print(f"encode STSb dev, {row['runtime']}: {row['sentences_per_s']:,.0f} sentences/s, "
                      f"Spearman {row['spearman_dev'] * 100:.2f}", flush=True)
            continue
        row = train(name)
        results["training"].append(row)
        before = row["before"] or {}
        after = row["after"] or {}
        print(f"{row['what']} on {row['device']}: {row['state']} {row['error'] or ''}; estimate "
              f"{row['estimate_s'] or 0:.1f} s, took {row['total_s']:.1f} s (preparing {row['preparing_s'] or 0:.1f} s, "
              f"training {row['training_s']:.1f} s, {row['steps']} steps of {row['batch_size']}, "
              f"{row.get('pairs_per_s', 0):,.0f} pairs/s); STSb dev {before.get('dev', 0) * 100:.2f} -> "
              f"{after.get('dev', 0) * 100:.2f}, test {before.get('test', 0) * 100:.2f} -> "
              f"{after.get('test', 0) * 100:.2f}", flush=True)
        for line in row.get("log", []):
            print("   ", line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
