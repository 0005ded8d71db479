"""Tests for sbert_demo.data (benchmarks, files, records): the offline benchmark copies, user files, NLI pairs and triplets."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sbert_demo.config import reload_settings

from sbert_demo.data import benchmarks as data
from sbert_demo.data import files as datafiles
from sbert_demo.data import records, tables
from sbert_demo.data.records import NLI_LABELS, NliPairs, ScoredPairs, Triplets

from conftest import SHIPPED_DATA


@pytest.fixture
def offline(no_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """SBERT_DEMO_DATA names an empty folder, and no Hub."""
    monkeypatch.setattr(data, "hub_reachable", lambda *args, **kwargs: False)
    return no_data


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    return path


# --- STS benchmark -------------------------------------------------------------------------------


@pytest.mark.parametrize(("split", "size"), [("train", 5749), ("dev", 1500), ("validation", 1500),
                                             ("test", 1379)])
def test_sts_split_sizes(split: str, size: int) -> None:
    pairs = data.sts_split(split, SHIPPED_DATA)
    assert len(pairs) == len(pairs.sentences1) == len(pairs.sentences2) == size
    assert pairs.problems == []
    assert min(pairs.scores) == 0.0 and max(pairs.scores) == 5.0


def test_sts_dev_known_rows() -> None:
    dev = data.sts_split("dev", SHIPPED_DATA)
    assert dev.sentences1[0] == "A man with a hard hat is dancing."
    assert dev.sentences2[0] == "A man wearing a hard hat is dancing."
    assert dev.scores[0] == 5.0
    assert dev.scores[1] == 4.75
    # Line 765 opens with an unbalanced quote: CSV quoting would swallow the following lines.
    assert dev.sentences1[764].startswith('"The grass family is one of the most widely')
    assert dev.scores[764] == 1.4
    assert dev.sentences2[764].startswith("As noted on the Wiki page, grass seed")
    # Line 1479 carries two extra source columns.
    assert dev.sentences1[1478] == "US Supreme Court limits president's recess appointments power"
    assert dev.sentences2[1478] == "High court checks President's recess appointment power"
    assert dev.scores[1478] == 5.0


def test_the_shipped_data_is_the_default_and_the_cache_is_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SBERT_DEMO_DATA", raising=False)
    reload_settings()
    monkeypatch.setattr(data, "hub_reachable", lambda *args, **kwargs: pytest.fail("the Hub was asked"))
    first = data.sts_split("dev")
    assert first.name == "STSb dev" and first.sentences1[0] == "A man with a hard hat is dancing."
    first.scores.clear()  # callers get copies, so the cache stays intact
    assert len(data.sts_split("dev")) == 1500


def test_sts_file_in_folder_root_with_extra_columns(tmp_path: Path, offline: None) -> None:
    write(tmp_path, "sts-test.csv",
          'g\tf\t2016\t0001\t3.5\tHe said "hi\tShe said hi\textra\tmore\n'
          "g\tf\t2016\t0002\t1\tA cat.\tA dog.\n"
          "g\tf\t2016\t0003\tbad\tA.\tB.\n")
    pairs = data.sts_split("test", tmp_path)
    assert pairs.sentences1 == ['He said "hi', "A cat."]
    assert pairs.sentences2 == ["She said hi", "A dog."]
    assert pairs.scores == [3.5, 1.0]
    assert pairs.problems == ["line 3: score 'bad' is not a number"]
    assert pairs.scaled().scores == [0.7, 0.2]  # STSb files are scaled from 0..5


def test_invalid_split() -> None:
    with pytest.raises(ValueError, match="train, dev, test"):
        data.sts_split("training")


def test_no_data_and_no_hub_message(offline: Path) -> None:
    with pytest.raises(ValueError) as error:
        data.sts_split("dev")
    message = str(error.value)
    assert message.startswith("STS benchmark data is not available: there is no file at "
                              f"{offline / 'stsbenchmark' / 'sts-dev.csv'}")
    assert f"unset SBERT_DEMO_DATA (and --data-dir) to use the data shipped with the app in {SHIPPED_DATA}" in message
    assert "stsbenchmark/sts-dev.csv" in message and "sentence-transformers/stsb" in message


def test_a_data_folder_that_does_not_exist_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tmp_path / "typo"))
    reload_settings()
    monkeypatch.setattr(data, "hub_reachable", lambda *args, **kwargs: False)
    with pytest.raises(ValueError, match=f"the data folder {tmp_path / 'typo'} does not exist"):
        data.sts_split("test")
    with pytest.raises(ValueError, match="NLI pairs data is not available: the data folder .* does not exist"):
        data.nli_pairs()


def test_the_shipped_data_missing_says_how_to_restore_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(data, "SHIPPED_DATA", tmp_path)
    monkeypatch.setattr(data, "hub_reachable", lambda *args, **kwargs: False)
    with pytest.raises(ValueError, match="restore the repository's data folder"):
        data.sts_split("dev", tmp_path)


def test_the_shipped_data_has_its_licences_and_sources() -> None:
    assert "Creative Commons" in (SHIPPED_DATA / "stsbenchmark" / "LICENSE.txt").read_text(encoding="utf-8")
    licence = (SHIPPED_DATA / "nli" / "LICENSE.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in licence and "OANC" in licence
    readme = (SHIPPED_DATA / "README.md").read_text(encoding="utf-8")
    assert all(name in readme for name in ("sts-{train,dev,test}.csv", "snli_1.0", "multinli_1.0"))


def test_missing_file_names_the_paths_looked_for(tmp_path: Path, offline: None) -> None:
    with pytest.raises(ValueError, match="not available") as error:
        data.sts_split("train", tmp_path)
    assert str(tmp_path / "stsbenchmark" / "sts-train.csv") in str(error.value)


def test_hub_fallback_uses_validation_split(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from datasets import Dataset

    calls = []

    def fake_load(repo_id, subset=None, split=None):
        calls.append((repo_id, subset, split))
        return Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["c", "d"],
                                  "score": [0.2, 1.0]})

    monkeypatch.setenv("SBERT_DEMO_DATA", str(tmp_path))  # no files here: the Hub is the fallback
    reload_settings()
    monkeypatch.setattr(data, "hub_reachable", lambda *args, **kwargs: True)
    monkeypatch.setattr("datasets.load_dataset", fake_load)
    data._hub_sts.cache_clear()
    pairs = data.sts_split("dev")
    data._hub_sts.cache_clear()
    assert calls == [("sentence-transformers/stsb", None, "validation")]
    assert pairs.scores == [0.2, 1.0] and pairs.scaled().scores == [0.2, 1.0]


# --- user files of scored pairs ------------------------------------------------------------------


def test_csv_with_quoting_and_extra_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "pairs.csv", 'id,sentence1,sentence2,score,note\n'
                 '1,"Hello, world","He said ""hi""",4.5,x\n2,A cat.,A dog.,1,y\n')
    pairs = datafiles.read_scored_pairs(path)
    assert pairs.sentences1 == ["Hello, world", "A cat."]
    assert pairs.sentences2 == ['He said "hi"', "A dog."]
    assert pairs.scores == [4.5, 1.0]
    assert pairs.name == "pairs.csv" and pairs.problems == []


@pytest.mark.parametrize("name", ["pairs.tsv", "pairs.txt"])
def test_tab_separated_by_extension_or_header(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, "Text_A\tText_B\tSimilarity\nA, b\tC\t-1\nD\tE\t2.5\n")
    pairs = datafiles.read_scored_pairs(path, name="mine")
    assert pairs.sentences1 == ["A, b", "D"] and pairs.scores == [-1.0, 2.5]
    assert pairs.name == "mine"


@pytest.mark.parametrize(("header", "expected"), [
    ("premise,hypothesis,label", (0, 1, 2)),
    ("RATING,second,first", (2, 1, 0)),
    ("anchor,positive,gold_score", (0, 1, 2)),
])
def test_column_aliases(tmp_path: Path, header: str, expected: tuple[int, int, int]) -> None:
    path = write(tmp_path, "pairs.csv", f"{header}\n0,1,2\n10,11,12\n")
    pairs = datafiles.read_scored_pairs(path)
    rows = [[int(x) % 10 for x in (pairs.sentences1[i], pairs.sentences2[i], pairs.scores[i])]
            for i in range(2)]
    assert rows == [list(expected), list(expected)]


def test_custom_column_names(tmp_path: Path) -> None:
    path = write(tmp_path, "pairs.csv", "premise,query,answer,stars\nP,Q,A,1\nP2,Q2,A2,3\n")
    pairs = datafiles.read_scored_pairs(path, "query", "answer", "Stars")
    assert pairs.sentences1 == ["Q", "Q2"] and pairs.sentences2 == ["A", "A2"]
    assert pairs.scores == [1.0, 3.0]
    explicit_wins = datafiles.read_scored_pairs(path, sentence2_column="premise", score_column="stars")
    assert explicit_wins.sentences2 == ["P", "P2"] and explicit_wins.sentences1 == ["Q", "Q2"]


def test_bad_rows_reported_with_line_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, "pairs.csv", "sentence1,sentence2,score\n"
                 "a,b,1\n"               # line 2 ok
                 '"multi\nline",c,2\n'   # lines 3-4 ok
                 "d,e,abc\n"             # line 5
                 "f,,3\n"                # line 6
                 "g\n"                   # line 7
                 "h,i,nan\n"             # line 8
                 "j,k,-inf\n"            # line 9
                 "\n"                    # line 10: blank, ignored
                 "l,m,4\n")              # line 11 ok
    pairs = datafiles.read_scored_pairs(path)
    assert pairs.sentences1 == ["a", "multi\nline", "l"] and pairs.scores == [1.0, 2.0, 4.0]
    assert pairs.problems == [
        "line 5: score 'abc' is not a number",
        "line 6: empty sentence2",
        "line 7: 1 fields, expected at least 3",
        "line 8: score 'nan' is not a finite number",
        "line 9: score '-inf' is not a finite number",
    ]
    assert all(math.isfinite(s) for s in pairs.scores)


def test_problem_list_is_capped(tmp_path: Path) -> None:
    bad = "".join(f"s{i},t{i},x\n" for i in range(30))
    path = write(tmp_path, "pairs.csv", "s1,s2,score\na,b,1\nc,d,2\n" + bad)
    pairs = datafiles.read_scored_pairs(path)
    assert len(pairs) == 2
    assert len(pairs.problems) == records.MAX_PROBLEMS + 1
    assert pairs.problems[0].startswith("line 4:")
    assert pairs.problems[-1] == "… and 10 more rejected rows"


def test_missing_column_message(tmp_path: Path) -> None:
    path = write(tmp_path, "pairs.csv", "left,right,score\na,b,1\nc,d,2\n")
    with pytest.raises(ValueError, match="no sentence1 column") as error:
        datafiles.read_scored_pairs(path)
    assert "left, right, score" in str(error.value) and "text_a" in str(error.value)
    with pytest.raises(ValueError, match="'missing'"):
        datafiles.read_scored_pairs(path, "left", "right", "missing")


@pytest.mark.parametrize(("content", "message"), [
    (b"", "is empty"),
    (b"  \n\n", "is empty"),
    (b"PK\x03\x04\x00\x00binary", "not UTF-8 text"),
    ("sentence1,sentence2,score\ncafé,naïve,1\nb,c,2\n".encode("latin-1"), "not UTF-8 text"),
    (b"sentence1,sentence2,score\na,b,1\n", "1 usable scored pairs"),
    (b"sentence1,sentence2,score\na,b,3\nc,d,3\ne,f,3.0\n", "Every score"),
])
def test_unusable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "pairs.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        datafiles.read_scored_pairs(path)


def test_utf8_with_bom_and_missing_file(tmp_path: Path) -> None:
    path = write(tmp_path, "pairs.csv", "sentence1,sentence2,score\ncafé,naïve,1\nb,c,2\n",
                 encoding="utf-8-sig")
    assert datafiles.read_scored_pairs(path).sentences1 == ["café", "b"]
    with pytest.raises(ValueError, match="File not found"):
        datafiles.read_scored_pairs(tmp_path / "nope.csv")


def test_file_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 10)
    path = write(tmp_path, "pairs.csv", "sentence1,sentence2,score\na,b,1\nc,d,2\n")
    with pytest.raises(ValueError, match="the limit is"):
        datafiles.read_scored_pairs(path)


@pytest.mark.parametrize(("low", "high", "expected"), [
    (None, None, [0.0, 0.5, 1.0]), (0, 10, [0.2, 0.4, 0.6])])
def test_scaled(low: float | None, high: float | None, expected: list[float]) -> None:
    pairs = ScoredPairs(["a", "b", "c"], ["d", "e", "f"], [2.0, 4.0, 6.0], "x")
    assert pairs.scaled(low, high).scores == pytest.approx(expected)
    assert pairs.scores == [2.0, 4.0, 6.0]
    with pytest.raises(ValueError, match="outside"):
        pairs.scaled(0, 5)
    with pytest.raises(ValueError, match="upper bound"):
        pairs.scaled(3, 3)


# --- NLI -----------------------------------------------------------------------------------------


def test_nli_pairs_from_the_shipped_gzip_files() -> None:
    assert sorted(p.name for p in (SHIPPED_DATA / "nli").glob("*.csv.gz")) == [
        "multinli_1.0_dev_matched.csv.gz", "multinli_1.0_dev_mismatched.csv.gz", "snli_1.0_dev.csv.gz",
        "snli_1.0_test.csv.gz"]
    pairs = data.nli_pairs(SHIPPED_DATA)
    assert len(pairs) == 39_313
    assert sorted(set(pairs.labels)) == [0, 1, 2]
    assert pairs.labels.count(0) == 13_639  # entailment rows in the four files
    same = data.nli_pairs(SHIPPED_DATA, max_pairs=50, seed=7)
    assert len(same) == 50 and same == data.nli_pairs(SHIPPED_DATA, max_pairs=50, seed=7)
    assert same.premises != data.nli_pairs(SHIPPED_DATA, max_pairs=50, seed=8).premises


def test_nli_triplets_from_the_shipped_data() -> None:
    triplets = data.nli_triplets(SHIPPED_DATA, max_triplets=100)
    assert len(triplets) == 100 and len(data.nli_triplets(SHIPPED_DATA)) == 12_838


@pytest.fixture
def tiny_nli(tmp_path: Path) -> Path:
    folder = tmp_path / "nli"
    folder.mkdir()
    write(folder, "b.csv", "pairID,sentence1,sentence2,label\n"
          "1,P1,E1,entailment\n2,P1,C1,contradiction\n3,P1,E2,entailment\n4,P1,N1,neutral\n"
          "5,P2,E3,entailment\n6,P2,N2,neutral\n7,P3,X,-\n")
    write(folder, "a.csv", "pairID,sentence1,sentence2,label\n"
          '1,"P0, quoted",E0,entailment\n2,"P0, quoted",C0a,contradiction\n'
          "3,P0b,C0b,contradiction\n4,P1,C2,contradiction\n")
    return tmp_path


def test_nli_pairs_tiny_folder(tiny_nli: Path) -> None:
    pairs = data.nli_pairs(tiny_nli, seed=0)
    assert len(pairs) == 10
    assert sorted(zip(pairs.hypotheses, pairs.labels))[:3] == [("C0a", 2), ("C0b", 2), ("C1", 2)]
    assert ("N1", NLI_LABELS.index("neutral")) in zip(pairs.hypotheses, pairs.labels)
    assert any("1 rows without a gold label" in p for p in pairs.problems)
    with pytest.raises(ValueError, match="at least 1"):
        data.nli_pairs(tiny_nli, max_pairs=0)


def test_triplet_construction_known_answer(tiny_nli: Path) -> None:
    triplets = data.nli_triplets(tiny_nli)
    # Files are read in sorted order, so P1's contradictions are C2 (a.csv) then C1 (b.csv);
    # P0b and P2 lack an entailment or a contradiction and give nothing.
    assert sorted(zip(triplets.anchors, triplets.positives, triplets.negatives)) == [
        ("P0, quoted", "E0", "C0a"), ("P1", "E1", "C2"), ("P1", "E2", "C1")]
    assert data.nli_triplets(tiny_nli, max_triplets=2, seed=1) == data.nli_triplets(
        tiny_nli, max_triplets=2, seed=1)


def test_triplets_cycle_contradictions() -> None:
    pairs = NliPairs(["P", "P", "P", "P", "P", "Q"], ["E1", "C1", "E2", "C2", "E3", "E"],
                     [0, 2, 0, 2, 0, 0], "hand-made")
    built = data.triplets_from_pairs(pairs)
    assert list(zip(built.anchors, built.positives, built.negatives)) == [
        ("P", "E1", "C1"), ("P", "E2", "C2"), ("P", "E3", "C1")]


def test_nli_without_data_or_hub(offline: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sentence-transformers/all-nli") as error:
        data.nli_pairs()
    assert "SBERT_DEMO_DATA" in str(error.value) and "nli/*.csv or nli/*.csv.gz" in str(error.value)
    with pytest.raises(ValueError, match=str(tmp_path / "nli")):
        data.nli_triplets(tmp_path)


def test_nli_hub_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from datasets import Dataset

    tables = {"pair-class": {"premise": list("abcde"), "hypothesis": list("fghij"),
                             "label": [0, 1, 2, 0, 1]},
              "triplet": {"anchor": list("abcd"), "positive": list("efgh"), "negative": list("ijkl")}}
    monkeypatch.setattr(data, "hub_reachable", lambda *args, **kwargs: True)
    monkeypatch.setattr("datasets.load_dataset",
                        lambda repo, subset, split: Dataset.from_dict(tables[subset]))
    pairs = data.nli_pairs(tmp_path, max_pairs=3)  # tmp_path has no nli/ folder
    assert len(pairs) == 3 and set(pairs.premises) <= set("abcde")
    assert all(pairs.labels[i] == "abcde".index(p) % 3 for i, p in enumerate(pairs.premises))
    triplets = data.nli_triplets(tmp_path)
    assert sorted(zip(triplets.anchors, triplets.negatives)) == list(zip("abcd", "ijkl"))


def test_read_nli_file(tmp_path: Path) -> None:
    path = write(tmp_path, "train.tsv", "Premise\tHypothesis\tLabel\nA\tB\tEntailment\nC\tD\t2\n"
                 "E\tF\tmaybe\nG\tH\t-\nI\tJ\t1\n")
    pairs = datafiles.read_nli_file(path)
    assert pairs.labels == [0, 2, 1] and pairs.premises == ["A", "C", "I"]
    assert pairs.problems[0] == (
        "line 4: label 'maybe' is not one of entailment, neutral, contradiction or 0..2")
    assert "1 rows without a gold label" in pairs.problems[1]


def test_read_triplets_file(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "query,pos,neg,extra\nq1,p1,n1,x\nq2,,n2,x\nq3,p3,n3,x\n")
    triplets = datafiles.read_triplets_file(path)
    assert (triplets.anchors, triplets.positives, triplets.negatives) == (
        ["q1", "q3"], ["p1", "p3"], ["n1", "n3"])
    assert triplets.problems == ["line 3: empty positive"]
    with pytest.raises(ValueError, match="no negative column"):
        datafiles.read_triplets_file(write(tmp_path, "u.csv", "anchor,positive\na,b\nc,d\n"))


# --- conversion ----------------------------------------------------------------------------------


def test_to_dataset_columns() -> None:
    scored = ScoredPairs(["a", "b"], ["c", "d"], [0.0, 5.0], "s").scaled(0, 5)
    nli = NliPairs(["p"], ["h"], [2], "n")
    triplets = Triplets(["a"], ["p"], ["n"], "t")
    assert records.to_dataset(scored).column_names == ["sentence1", "sentence2", "score"]
    assert records.to_dataset(scored)["score"] == [0.0, 1.0]
    assert records.to_dataset(nli)[0] == {"premise": "p", "hypothesis": "h", "label": 2}
    assert records.to_dataset(triplets).column_names == ["anchor", "positive", "negative"]
    with pytest.raises(TypeError):
        records.to_dataset(["not", "records"])


def test_gzip_files_read_like_plain_ones(tmp_path: Path, tiny_nli: Path) -> None:
    import gzip

    plain = tiny_nli / "nli" / "b.csv"
    packed = tmp_path / "b.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert datafiles.read_nli_file(packed).premises == datafiles.read_nli_file(plain).premises
    tsv = tmp_path / "pairs.tsv.gz"
    tsv.write_bytes(gzip.compress(b"sentence1\tsentence2\tscore\nA, b.\tC.\t1\nD.\tE.\t2\n"))
    assert datafiles.read_scored_pairs(tsv).sentences1 == ["A, b.", "D."]  # tab-separated despite .gz


def test_broken_or_huge_gzip_is_refused_with_a_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    broken = write(tmp_path, "broken.csv.gz", "not gzip at all")
    with pytest.raises(ValueError, match="broken.csv.gz is not a readable gzip file"):
        datafiles.read_nli_file(broken)
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"premise,hypothesis,label\n" + b"a,b,entailment\n" * 1000))
    monkeypatch.setattr(tables, "MAX_FILE_BYTES", 2000)
    with pytest.raises(ValueError, match="holds more than"):
        datafiles.read_nli_file(bomb)
