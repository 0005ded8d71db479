"""Encoding speed: this project's encoder against plain ``SentenceTransformer.encode``.

For each model, both encode the same STSb dev sentences (3,000, duplicates included) in the same
process, one after the other, with the same batch size:

* plain: ``SentenceTransformer.encode`` in fp32 (the library's defaults), the baseline;
* sbert_demo: :func:`sbert_demo.encoding.encoder.encode` with the persistent cache switched off, so only
  the computation is measured (automatic precision: bf16 weights on CPUs with native bf16,
  duplicates encoded once, length-sorted chunks).

Both are warmed up first, then timed alternately ``--repeats`` times (default 3) so that drifts
of a shared machine hit both alike; the fastest run of each counts, as ``timeit`` does. Each prints sentences/s and the STSb dev Spearman of its embeddings
(the speed must not cost accuracy), then the ratio, on one line per model ending like ``2.63x``.

    python bench/encode.py [--models all-MiniLM-L6-v2,all-mpnet-base-v2] [--batch-size 32]
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

from sbert_demo.benchmark.evaluation import correlations, pair_cosines
from sbert_demo.data.benchmarks import sts_split
from sbert_demo.encoding import model_cache
from sbert_demo.encoding.encoder import encode
from sbert_demo.models import loading


def spearman(embeddings: np.ndarray, gold: list[float]) -> float:
    n = len(gold)
    return correlations(gold, pair_cosines(embeddings[:n], embeddings[n:]))[0] * 100


def timed(run, count: int) -> tuple[float, object]:
    """Sentences/s of one run, and its output."""
    started = time.perf_counter()
    output = run()
    return count / (time.perf_counter() - started), output


def bench_model(key: str, sentences: list[str], gold: list[float], batch_size: int, repeats: int) -> str:
    import torch
    from sentence_transformers import SentenceTransformer

    entry, status, _ = loading.resolve(key)
    plain = SentenceTransformer(str(status.location), device="cpu")
    plain.encode(sentences[:64], batch_size=batch_size)  # warm-up
    encode(key, sentences[:64], batch_size=batch_size, use_cache=False)  # warm-up (loads the model)
    plain_rate = our_rate = 0.0
    for _ in range(repeats):  # alternate, so drifts of a shared machine hit both alike
        rate, baseline = timed(lambda: plain.encode(sentences, batch_size=batch_size, normalize_embeddings=True),
                               len(sentences))
        plain_rate = max(plain_rate, rate)
        rate, ours = timed(lambda: encode(key, sentences, batch_size=batch_size, use_cache=False), len(sentences))
        our_rate = max(our_rate, rate)
    precision = model_cache.load(key).device.precision
    return (
        f"{key}: plain SentenceTransformer.encode fp32 {plain_rate:7.1f} sent/s (Spearman {spearman(baseline, gold):.2f}) | "
        f"sbert_demo {precision} {our_rate:7.1f} sent/s (Spearman {spearman(ours.embeddings, gold):.2f}) | "
        f"threads {torch.get_num_threads()}, batch {batch_size}, best of {repeats} | speed-up {our_rate / plain_rate:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="all-MiniLM-L6-v2,all-mpnet-base-v2")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data-dir", default=os.environ.get("SBERT_DEMO_DATA"))
    parser.add_argument("--repeats", type=int, default=3, help="alternating timed runs per encoder; the best counts")
    args = parser.parse_args()
    pairs = sts_split("dev", args.data_dir)
    sentences = [*pairs.sentences1, *pairs.sentences2]
    print(f"STSb dev: {len(sentences):,} sentences ({len(set(sentences)):,} distinct)", flush=True)
    for key in args.models.split(","):
        print(bench_model(key.strip(), sentences, pairs.scores, args.batch_size, args.repeats), flush=True)


if __name__ == "__main__":
    main()
