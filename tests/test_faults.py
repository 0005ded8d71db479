"""Faults: processes killed mid-work, and what a restart finds.

* A training run killed (SIGKILL, no clean-up) while it trains or while it saves leaves no model
  the registry would list; models saved earlier are untouched and usable.
* An evaluation killed while it writes embeddings leaves a consistent cache: what was written is
  intact and reused, the rest is recomputed, and the scores equal plain sentence-transformers'.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sbert_demo.benchmark.evaluation import evaluate
from sbert_demo.encoding.embedding_cache import embedding_cache
from sbert_demo.encoding.encoder import encode
from sbert_demo.models.registry import get_registry

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # real training and evaluation processes, a few minutes in all


def _start(args: list[str], env_extra: dict[str, str]) -> subprocess.Popen:
    env = {**os.environ, **env_extra, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "sbert_demo", *args], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def _wait_for(condition, timeout: float, poll: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(poll)
    return False


def _train_args(shipped_data: Path, output: str, max_pairs: int) -> list[str]:
    return ["train", "--base", "glove-6b-50d", "--objective", "nli-softmax", "--max-pairs", str(max_pairs),
            "--epochs", "1", "--output", output, "--data-dir", str(shipped_data)]


@pytest.mark.parametrize("moment", ["while training", "while saving"])
def test_training_killed_leaves_only_complete_models(moment, isolated, shipped_data, tiny_sbert_in_models):
    models_dir = isolated.models_dir
    before = get_registry().availability(tiny_sbert_in_models)
    assert before.available

    if moment == "while training":
        process = _start(_train_args(shipped_data, "killed-run", 39_000), {})
        # the run has started training once its child has imported everything; give it a few seconds
        time.sleep(8)
    else:
        process = _start(_train_args(shipped_data, "killed-run", 2_000), {})
        saw_work_folder = _wait_for(lambda: any(p.name.startswith(".tmp-killed-run") for p in models_dir.iterdir()),
                                    timeout=240)
        assert saw_work_folder, "the run never reached its save step"
    assert process.poll() is None, "the run ended before it could be killed"
    _kill(process)

    registry = get_registry()
    assert "killed-run" not in registry.keys()
    assert not (models_dir / "killed-run").exists()
    # the earlier model is untouched and still encodes
    assert registry.availability(tiny_sbert_in_models).available
    assert encode(tiny_sbert_in_models, ["the dog runs", "a cat sleeps"]).embeddings.shape[0] == 2
    # a later run with the same name succeeds despite the leftovers
    finished = subprocess.run([sys.executable, "-m", "sbert_demo", *_train_args(shipped_data, "killed-run", 500)],
                              cwd=REPO, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "killed-run" in get_registry().keys()
    assert get_registry().availability("killed-run").available


def _cached_rows(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as connection:
            return connection.execute("SELECT count(*) FROM vectors").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_evaluation_killed_mid_write_leaves_a_consistent_cache(isolated, shipped_data):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.models import assets

    pairs = sts_split("test", shipped_data)
    distinct = len(set(pairs.sentences1 + pairs.sentences2))
    database = isolated.cache_dir / "embeddings.sqlite"
    process = _start(["eval", "--models", "all-MiniLM-L6-v2", "--split", "test", "--data-dir", str(shipped_data)],
                     {"SBERT_DEMO_PRECISION": "fp32"})
    assert _wait_for(lambda: _cached_rows(database) >= 256, timeout=240, poll=0.05), "no chunk was ever cached"
    _kill(process)

    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    written = _cached_rows(database)
    assert 0 < written < distinct  # killed part-way

    result = evaluate("all-MiniLM-L6-v2", pairs)
    assert embedding_cache().problem is None
    plain = SentenceTransformer(str(assets.minilm_folder()), device="cpu")
    reference = EmbeddingSimilarityEvaluator(pairs.sentences1, pairs.sentences2, pairs.scores,
                                             main_similarity="cosine")(plain)["spearman_cosine"]
    assert result.spearman == pytest.approx(reference, abs=1e-6)
    assert round(result.spearman * 100, 2) == 82.03
    assert _cached_rows(database) == distinct
