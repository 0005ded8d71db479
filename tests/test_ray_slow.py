"""Embedding a corpus on a real Ray cluster started here (slow): two nodes on this machine (``ray start
--head`` and a second worker node), the command line joining it, and ``--ray`` alone starting a local
cluster for the run. The vectors equal the one-process path's (cosine >= 0.9999 per sentence on the
fp32 path), and the app's own path reads what Ray wrote without computing anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).with_name("ray")
# A cluster of this test's own on loopback: no usage report, no token (Ray 2.60 writes one to ~/.ray
# for a local cluster, which a node started next then expects).
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}


def corpus_file(folder: Path, count: int = 3_000) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sbert_demo.data.corpora import stsb_corpus

    path = folder / "corpus.parquet"
    pq.write_table(pa.table({"text": stsb_corpus(REPO / "data").sentences[:count]}), path)
    return path


def shards_of(cache: Path) -> dict[str, np.ndarray]:
    from sbert_demo.corpus.shards import ShardStore

    found = {}
    for path in sorted((cache / "corpora" / "vectors").rglob("*.fp16.npy")):
        found[path.name] = np.load(path).astype(np.float32)
    del ShardStore
    return found


def embed(cache: Path, path: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SBERT_DEMO_CACHE": str(cache), "SBERT_DEMO_PRECISION": "fp32", "SBERT_DEMO_BACKEND": "torch",
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), **RAY_ENV}
    return subprocess.run([sys.executable, "-m", "sbert_demo", "embed", str(path), "--model", "all-MiniLM-L6-v2",
                           "--lossless", "--shard-size", "500", *extra], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)


def test_a_two_node_cluster_and_a_local_one_write_the_one_process_vectors(tmp_path: Path) -> None:
    path = corpus_file(tmp_path)
    alone = embed(tmp_path / "one-process", path)
    assert alone.returncode == 0, alone.stderr[-2000:]
    reference = shards_of(tmp_path / "one-process")
    assert len(reference) == 6
    port = "6391"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO), **RAY_ENV}
    try:
        head = subprocess.run([str(RAY), "start", "--head", "--port", port, "--num-cpus", "1", "--include-dashboard",
                               "false"], env=env, capture_output=True, text=True, timeout=180)
        assert head.returncode == 0, head.stderr[-2000:]
        worker = subprocess.run([str(RAY), "start", "--address", f"127.0.0.1:{port}", "--num-cpus", "1"], env=env,
                                capture_output=True, text=True, timeout=180)
        assert worker.returncode == 0, worker.stderr[-2000:]
        joined = embed(tmp_path / "cluster", path, "--ray", f"127.0.0.1:{port}")
        assert joined.returncode == 0, joined.stderr[-3000:]
        assert "Ray, 2 workers" in joined.stdout
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)
    local = embed(tmp_path / "local", path, "--ray", "--workers", "2")
    assert local.returncode == 0, local.stderr[-3000:]
    for name in ("cluster", "local"):
        written = shards_of(tmp_path / name)
        assert written.keys() == reference.keys(), name
        for key, vectors in written.items():
            cosines = np.sum(vectors * reference[key], axis=1) / (np.linalg.norm(vectors, axis=1)
                                                                  * np.linalg.norm(reference[key], axis=1))
            assert np.min(cosines) >= 0.9999, (name, key, np.min(cosines))
    again = embed(tmp_path / "cluster", path)  # the app's path opens what Ray wrote: nothing to compute
    assert again.returncode == 0 and " 0 " in next(l for l in again.stdout.splitlines() if l.startswith("all-MiniLM"))


def test_a_ray_address_nobody_answers_gets_a_sentence(tmp_path: Path) -> None:
    result = embed(tmp_path / "cache", corpus_file(tmp_path, 50), "--ray", "127.0.0.1:6399")
    assert result.returncode == 2
    assert "No Ray cluster answered at 127.0.0.1:6399" in result.stderr and "Traceback" not in result.stderr
