"""The SBERT paper's Table 1 on seven STS sets, and the sets themselves (fast: GloVe and a tiny BERT).

The reference for every number is computed here the plain way, independently of the app: a
sentence-transformers model's ``encode``, the cosine of each pair, ``scipy.stats.spearmanr`` over
all of a set's rated pairs, the files read with their own parsing below. The real SBERT models are
checked the same way in ``tests/test_table1_slow.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from sbert_demo import cli
from sbert_demo.benchmark.table1 import PAPER, check_sets, table1
from sbert_demo.data.sts_sets import TABLE1_SETS, sts_set

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED_PAIRS = {"sts12": 3108, "sts13": 1500, "sts14": 3750, "sts15": 3000, "sts16": 1186, "stsb": 1379,
                  "sick-r": 4927}


def reference_pairs(name: str) -> tuple[list[str], list[str], list[float]]:
    """The set read straight from the shipped files (the format described in data/README.md)."""
    firsts, seconds, scores = [], [], []
    if name == "stsb":
        lines = (DATA / "stsbenchmark" / "sts-test.csv").read_text(encoding="utf-8").split("\n")
        rows = [line.split("\t") for line in lines if line.strip()]
        return [r[5].strip() for r in rows], [r[6].strip() for r in rows], [float(r[4]) for r in rows]
    if name == "sick-r":
        rows = [line.split("\t") for line in (DATA / "sick" / "SICK_test_annotated.txt").read_text().split("\n")[1:]
                if line.strip()]
        return [r[1].strip() for r in rows], [r[2].strip() for r in rows], [float(r[3]) for r in rows]
    year = DATA / "sts12-16" / str(2000 + int(name[3:]))
    for path in sorted(year.glob("*.test.tsv")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            fields = line.split("\t")
            if len(fields) >= 3 and fields[0].strip():
                scores.append(float(fields[0]))
                firsts.append(fields[1].strip())
                seconds.append(fields[2].strip())
    if (year / "STS.input.MSRvid.txt").is_file():
        pairs = [line.split("\t") for line in (year / "STS.input.MSRvid.txt").read_text().split("\n") if line.strip()]
        golds = [line for line in (year / "STS.gs.MSRvid.txt").read_text().split("\n") if line.strip()]
        firsts += [p[0].strip() for p in pairs]
        seconds += [p[1].strip() for p in pairs]
        scores += [float(g) for g in golds]
    return firsts, seconds, scores


def plain_vectors(folder: Path, names) -> dict:
    """sentence-transformers' ``encode`` of every distinct sentence of the sets ``names``, in one call, by the model
    in ``folder``: each sentence's vector (float64) by its text. The seven sets' 37,700 sentences are 26,139 distinct
    ones (28,570 set by set), so a sentence that appears twice, in one set or in two, has one vector, as it has in the
    app. The real models' numbers from it are shipped (tests/references.py makes them)."""
    from sentence_transformers import SentenceTransformer

    distinct = list(dict.fromkeys(text for name in names for firsts, seconds, _ in [reference_pairs(name)]
                                  for text in (*firsts, *seconds)))
    model = SentenceTransformer(str(folder), device="cpu")
    vectors = model.encode(distinct, convert_to_tensor=True).cpu().double()
    return dict(zip(distinct, vectors))


def plain_spearman(name: str, vectors: dict) -> float:
    """The library's cosine of each pair (two equal vectors: 1, a tie), then scipy's Spearman, on the set's vectors
    from :func:`plain_vectors` (made for this set or for several at once)."""
    import torch
    from sentence_transformers.util import pairwise_cos_sim

    firsts, seconds, scores = reference_pairs(name)
    a, b = torch.stack([vectors[text] for text in firsts]), torch.stack([vectors[text] for text in seconds])
    cosines = np.where((a == b).all(dim=1).numpy(), 1.0, pairwise_cos_sim(a, b).numpy())
    return float(spearmanr(scores, cosines)[0])


@pytest.fixture(scope="module")
def plain_glove():
    """Averaged GloVe built here with sentence-transformers' own modules from the package's files, in
    float64 (the mean of word vectors, exactly)."""
    import pandas as pd
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, WordEmbeddings
    from sentence_transformers.sentence_transformer.modules.tokenizer import WhitespaceTokenizer

    from sbert_demo.models import assets

    vectors_file, index_file = assets.glove_files()
    words = WordEmbeddings(WhitespaceTokenizer(pd.read_parquet(index_file)["index"].tolist(), do_lower_case=True),
                           np.load(vectors_file).astype(np.float64))
    return SentenceTransformer(modules=[words, Pooling(50, "mean")], device="cpu").double()


def glove_spearman(model, name: str) -> float:
    """Spearman of averaged GloVe, exactly: a pair whose sentences have the same words (in any order)
    has cosine 1, a tie; a sentence with no known word has a zero vector (cosine 0, as the app says);
    every other cosine from the library in float64."""
    from sentence_transformers.util import pairwise_cos_sim

    firsts, seconds, scores = reference_pairs(name)
    bag = model[0].tokenizer.tokenize
    same = np.array([bool(bag(a)) and sorted(bag(a)) == sorted(bag(b)) for a, b in zip(firsts, seconds)])
    cosines = pairwise_cos_sim(model.encode(firsts, convert_to_tensor=True), model.encode(seconds, convert_to_tensor=True))
    return float(spearmanr(scores, np.where(same, 1.0, cosines.numpy()))[0])


def test_the_seven_sets_hold_every_rated_pair() -> None:
    for name in TABLE1_SETS:
        pairs = sts_set(name)
        assert len(pairs) == EXPECTED_PAIRS[name] and not pairs.problems
        firsts, seconds, scores = reference_pairs(name)
        assert (pairs.sentences1, pairs.sentences2, pairs.scores) == (firsts, seconds, scores)


def test_table1_equals_plain_sentence_transformers(plain_glove, tmp_path: Path) -> None:
    (row,) = table1(["glove-6b-50d"])
    assert row.ok and row.complete and set(row.scores) == set(TABLE1_SETS)
    assert not row.cached  # every sentence was encoded by the first pass: not "from the cache"
    for name in TABLE1_SETS:
        assert row.scores[name] * 100 == pytest.approx(glove_spearman(plain_glove, name) * 100, abs=0.01), name
    assert row.average == pytest.approx(np.mean([row.scores[n] for n in TABLE1_SETS]))
    out = tmp_path / "t1.json"
    assert cli.main(["table1", "--models", "glove-6b-50d", "--json", str(out)]) == 0
    data = json.loads(out.read_text())["glove-6b-50d"]
    assert list(data) == [*TABLE1_SETS, "avg", "runtime"] and data["stsb"] == round(row.scores["stsb"] * 100, 2)
    again = table1(["glove-6b-50d"])[0]  # a second table is read from the cache
    assert again.cached and again.scores == row.scores


def test_pairs_with_the_same_words_tie_and_sick_r_is_exact(plain_glove) -> None:
    """SICK-R has 727 pairs whose two sentences keep the same words once GloVe's stop words are dropped:
    their cosine is exactly 1, a tie for Spearman. As float32 dot products they were ranked by rounding
    noise (1 +- 1e-7), which put GloVe's SICK-R at 52.15 instead of 52.24."""
    from sbert_demo.encoding.pair_scores import score_pairs

    firsts, seconds, _ = reference_pairs("sick-r")
    bag = plain_glove[0].tokenizer.tokenize
    same = np.array([sorted(bag(a)) == sorted(bag(b)) for a, b in zip(firsts, seconds)])
    assert same.sum() == 727
    scores = score_pairs("glove-6b-50d", firsts, seconds).scores
    assert set(scores[same].tolist()) == {1.0}  # one value: a tie, whatever the order, batch or rounding
    got = table1(["glove-6b-50d"], sets=["sick-r"])[0].scores["sick-r"] * 100
    assert got == pytest.approx(glove_spearman(plain_glove, "sick-r") * 100, abs=0.01)
    assert got == pytest.approx(52.24, abs=0.01)


def test_table1_streams_set_by_set_and_skips_what_cannot_run(tiny_sbert_in_models) -> None:
    from sbert_demo.benchmark.table1 import iter_table1

    seen = list(iter_table1([tiny_sbert_in_models, "bert-base-uncased-cls", "nope"], sets=["sts13", "sts16"]))
    tiny = [row for row in seen if row.key == tiny_sbert_in_models]
    assert [sorted(row.scores) for row in tiny] == [["sts13"], ["sts13", "sts16"]]
    assert tiny[-1].complete and tiny[-1].as_json()["avg"] is not None
    failed = {row.key: row.error for row in seen if row.error}
    assert "needs the Hugging Face Hub" in failed["bert-base-uncased-cls"] and "Unknown model" in failed["nope"]


def test_bad_sets_and_model_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="Unknown STS set 'sts11'"):
        check_sets(["sts11"])
    assert check_sets(["SICK-R", "sts12"]) == ("sts12", "sick-r")  # the paper's order
    with pytest.raises(ValueError, match="at most 8 models"):
        table1([f"glove-6b-50d+abtt{i}" for i in range(1, 10)])
    with pytest.raises(ValueError, match="at least one model"):
        table1([])


def test_the_paper_rows_average_their_sets() -> None:
    for name, values in PAPER.items():
        assert np.mean(values[:7]) == pytest.approx(values[7], abs=0.05), name  # the paper rounds each cell


def test_the_table1_view_fills_in_and_shows_the_paper_rows() -> None:
    pytest.importorskip("gradio")
    from sbert_demo.ui import table1 as table1_tab

    outputs = list(table1_tab.run_table1(["glove-6b-50d"], progress=lambda *a, **k: None))
    assert len(outputs) == 1 + len(TABLE1_SETS)  # a row per set as it fills in, then the finished table
    status, table, figure, phone_figure, data = outputs[-1]
    assert "Done" in status and "paper: SBERT-NLI-base" in table and "74.89" in table
    assert 'class="summary-table table1 stacked titled"' in table and 'data-label="STS12"' in table  # cards on a phone
    assert figure.data[0].z.shape == (1 + len(PAPER), len(TABLE1_SETS) + 1)
    assert phone_figure.data[0].z.shape == (1 + len(PAPER), len(TABLE1_SETS) + 1)  # a phone's: names wrapped
    assert all("<br>" in label for label in phone_figure.data[0].y[1:])
    assert data["glove-6b-50d"]["avg"] is not None
