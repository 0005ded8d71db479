"""Comparing a map Explore drew: the shared neighbours of its two models, from the vectors Explore cached against
embedded again.

Explore → Corpus map draws the map (``map_corpus``: each model's vectors go to the embedding cache); the map is
then published as a map view (``sbert_demo.atlas.store.publish``) and its two models compared
(``compare.shared``: each sentence's nearest neighbours under each model, from the corpus's vector shards). The
comparison runs twice on the same map, in one process, on a cache folder that starts as a prepared machine's (the
runtimes measured, built and UMAP compiled, linked from the machine's cache folder; nothing else):

* **embedded again**: the corpus treated as larger than Explore maps (``MAX_CORPUS_SENTENCES`` set to 0), so its
  shards are embedded by the model, not read from the embedding cache;
* **from Explore's vectors**: the shards and the kept neighbours deleted, the limit as shipped: the shards are
  written from the embedding cache, and no model is loaded.

The first line names the CPU: the numbers belong to it. The ratio is measured in this run.

    python bench/compare.py [--models glove-6b-50d,all-MiniLM-L6-v2] [--sentences 15457]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def timed_compare(atlas) -> tuple[float, float]:
    """Seconds of ``compare.shared`` on the map's two models, and the mean number of shared neighbours."""
    from sbert_demo.atlas import compare

    started = time.perf_counter()
    counts = compare.shared(atlas, 0, 1)
    return time.perf_counter() - started, float(counts.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="glove-6b-50d,all-MiniLM-L6-v2", help="the map's two models")
    parser.add_argument("--sentences", type=int, default=15_457, help="the first N STSb sentences (default: all)")
    args = parser.parse_args()

    from encode import cpu_line

    from sbert_demo.config import reload_settings, settings
    from sbert_demo.explore.prepare import link_prepared

    print(cpu_line(), flush=True)
    machine = settings().cache_dir
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as folder:
        cache = link_prepared(Path(folder) / "cache", machine)
        os.environ["SBERT_DEMO_CACHE"] = str(cache)
        reload_settings()

        from sbert_demo.atlas.store import publish
        from sbert_demo.corpus import embed
        from sbert_demo.data.corpora import Corpus, stsb_corpus
        from sbert_demo.explore.corpus_map import map_corpus

        stsb = stsb_corpus()
        corpus = Corpus(f"stsb-{args.sentences}", stsb.sentences[:args.sentences], stsb.labels[:args.sentences],
                        "source")
        models = args.models.split(",")
        started = time.perf_counter()
        atlas = publish(map_corpus(corpus, models))
        print(f"{len(corpus):,} sentences mapped as Explore maps them ({', '.join(models)}) in "
              f"{time.perf_counter() - started:.1f} s", flush=True)

        shipped = embed.MAX_CORPUS_SENTENCES
        embed.MAX_CORPUS_SENTENCES = 0
        again, shared_again = timed_compare(atlas)
        embed.MAX_CORPUS_SENTENCES = shipped
        shutil.rmtree(embed.corpora_root() / "vectors", ignore_errors=True)  # the shards (the map view stays)
        for kept in [*atlas.folder.glob("neighbours-*"), *atlas.folder.glob("shared-*")]:
            kept.unlink()
        cached, shared_cached = timed_compare(atlas)
        assert abs(shared_again - shared_cached) < 0.05, (shared_again, shared_cached)
        print(f"compared, embedded again: {again:.1f} s; from Explore's vectors: {cached:.1f} s "
              f"({again / cached:.1f}x); {shared_cached:.2f} of each sentence's 10 neighbours shared")


if __name__ == "__main__":
    main()
