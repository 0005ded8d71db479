"""A corpus's own columns (sbert_demo.data.fields, sbert_demo.atlas.agreement): each column kept with its type
or a sentence, written with the map, and how each model's neighbourhoods agree with each category column,
checked against scikit-learn's KNeighborsClassifier left one out on the same vectors.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.data.fields import MAX_CATEGORIES, MISSING, infer, infer_all

REPO = Path(__file__).resolve().parents[1]


def test_each_column_gets_its_type_and_missing_values_stay_missing() -> None:
    genre = infer("genre", ["news", "forum", None, "news", " ", float("nan")])
    assert (genre.kind, genre.categories, genre.missing) == ("category", ("news", "forum"), 3)
    assert genre.values.tolist() == [0, 1, MISSING, 0, MISSING, MISSING]
    score = infer("score", ["4.5", 3, None, "-0.25", "1e3"])
    assert score.kind == "number" and score.values[:2].tolist() == [4.5, 3.0] and np.isnan(score.values[2])
    when = infer("when", ["2016-03-01", "2016-03-01T12:00:00", None])
    assert when.kind == "date" and when.values[:2].tolist() == [16861.0, 16861.5] and when.missing == 1
    mixed = infer("mixed", ["1", "two", "3", "1"])
    assert mixed.kind == "category" and "numbers and words mixed" in mixed.describe()
    wide = infer("id", [f"row-{i}" for i in range(100_000)])  # a column of 100,000 distinct values: text
    assert wide.kind == "text" and "not a facet" in wide.describe() and f"{MAX_CATEGORIES}" in wide.note
    assert infer("underscores", ["1_000", "2_000"]).kind == "category"  # "1_000" is no number in a corpus
    kept, notes = infer_all({"<b>x</b>": ["a", "b"], "empty": [None, ""]}, None)
    assert [f.name for f in kept] == ["<b>x</b>"] and notes == ["the column 'empty' is empty (every value missing): left out"]
    kept, notes = infer_all({"a": ["x", "y"]}, ["a", "nope"])
    assert [f.name for f in kept] == ["a"] and "'nope' is not in the corpus" in notes[0]


def test_the_shipped_sts_corpus_carries_genre_source_year_score_and_split() -> None:
    from sbert_demo.data.corpora import stsb_corpus

    corpus = stsb_corpus(REPO / "data")
    fields = {f.name: f for f in corpus.fields}
    assert [f.kind for f in corpus.fields] == ["category", "category", "number", "number", "category"]
    assert set(fields["genre"].categories) >= {"news", "captions", "forums"} and fields["genre"].missing <= 2
    assert np.nanmin(fields["year"].values) == 2012 and np.nanmax(fields["score"].values) == 5
    first = corpus.sentences.index("A man with a hard hat is dancing.")  # the first pair of sts-dev (captions, 5.0)
    assert fields["genre"].categories[fields["genre"].values[first]] == "captions"
    assert fields["score"].values[first] == 5.0


@pytest.fixture
def sts_csv(tmp_path: Path) -> Path:
    """600 STSb sentences of every genre as a CSV with genre, source, year and score (no missing value)."""
    from sbert_demo.data.corpora import stsb_corpus

    corpus = stsb_corpus(REPO / "data")
    fields = {f.name: f for f in corpus.fields}
    rows = [i for i in range(0, len(corpus.sentences), 25)
            if all(fields[name].values[i] != MISSING for name in ("genre", "source"))][:600]
    path = tmp_path / "sts.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "genre", "source", "year", "score"])
        for i in rows:
            writer.writerow([corpus.sentences[i], *[fields[n].categories[fields[n].values[i]] for n in ("genre", "source")],
                             int(fields["year"].values[i]), fields["score"].values[i]])
    return path


def test_map_prints_each_models_agreement_as_knearest_neighbours_left_one_out_finds_it(sts_csv: Path, capsys) -> None:
    from sklearn.neighbors import KNeighborsClassifier

    from sbert_demo.atlas.store import open_atlas
    from sbert_demo.cli import main
    from sbert_demo.corpus.embed import embed_corpus
    from sbert_demo.corpus.sources import LargeCorpus

    keys = ["glove-6b-50d", "wordllama-l2-256", "all-MiniLM-L6-v2"]
    assert main(["map", "--file", str(sts_csv), "--models", ",".join(keys), "--k", "6", "--compare",
                 "--label-column", ""]) == 0
    told = capsys.readouterr()
    assert "column genre: category, 4 value(s) (news" in told.err and "column year: number, 2012 to" in told.err
    atlas = open_atlas(re.search(r"/atlas/\?map=(\w+)", told.out).group(1))
    found = json.loads((atlas.data / "agreement.json").read_text(encoding="utf-8"))
    assert [f["field"] for f in found["fields"]] == ["genre", "source"]
    sentences = atlas.texts()
    for f, field in enumerate(found["fields"]):
        assert f"Neighbour agreement with '{field['field']}'" in told.out
        codes = atlas.field(f)
        counts = np.bincount(codes)
        chance = np.mean((counts[codes] - 1) / (len(codes) - 1))
        for m, row in enumerate(field["models"]):
            assert row["chance"] == pytest.approx(chance, abs=1e-4)
            assert f"{row['agreement']:10.3f}  {row['chance']:6.3f}" in told.out
            vectors = embed_corpus(LargeCorpus(atlas.meta["name"], sentences, None), keys[m]).matrix(np.float32)
            rng = np.random.default_rng(m)
            shares = []
            for i in rng.choice(len(codes), 80, replace=False):  # left out: fitted on every other sentence
                others = np.delete(np.arange(len(codes)), i)
                knn = KNeighborsClassifier(n_neighbors=10, metric="cosine", algorithm="brute")
                knn.fit(vectors[others], codes[others])
                proba = knn.predict_proba(vectors[i:i + 1])[0]
                shares.append(proba[list(knn.classes_).index(codes[i])] if codes[i] in knn.classes_ else 0.0)
            near = np.fromfile(atlas.folder / f"neighbours-{m}-k10.i32", dtype="<i4").reshape(-1, 10)
            ours = [(codes[near[i]] == codes[i]).mean()  # the same 80 rows, from the map's kept neighbours
                    for i in np.random.default_rng(m).choice(len(codes), 80, replace=False)]
            assert np.mean(np.isclose(ours, shares)) >= 0.95, (field["field"], row["model"])  # ties may differ
            assert abs(np.mean(ours) - np.mean(shares)) < 0.01
            every = np.mean([(codes[near[i]] == codes[i]).mean() for i in range(len(codes))])
            assert row["agreement"] == pytest.approx(every, abs=1e-4)  # what map printed: every sentence's mean
        glove, minilm = field["models"][0], field["models"][2]
        assert 0 < glove["agreement"] <= 1 and 0 <= minilm["ari"] <= 1 and row["values"][0]["count"] > 0
    genre = {row["key"]: row for row in found["fields"][0]["models"]}
    assert genre["all-MiniLM-L6-v2"]["agreement"] > genre["all-MiniLM-L6-v2"]["chance"]


def test_each_column_is_kept_in_the_fewest_bytes_that_hold_it_and_read_back_as_it_was(tmp_path: Path) -> None:
    from sbert_demo.atlas.store import Atlas

    n = 1_000
    rng = np.random.default_rng(0)
    cells = {"genre": [None if i % 97 == 0 else f"g{i % 7}" for i in range(n)],
             "product": [f"p{i % 280}" for i in range(n)],  # 280 values: more than a byte's codes
             "year": [None if i % 50 == 0 else 1990 + i % 30 for i in range(n)],
             "score": [round(float(v), 3) for v in rng.normal(size=n)],
             "day": [f"2016-03-{1 + i % 28:02d}" for i in range(n)],
             "big": [10 ** 6 + i for i in range(n)]}  # whole, but past two bytes
    fields, _ = infer_all(cells)
    atlas = Atlas.of_arrays("columns", [f"sentence {i}" for i in range(n)], {"demo": rng.normal(size=(n, 2))},
                            {"demo": np.arange(n) % 3}, root=tmp_path, fields=fields)
    about = {f["name"]: f for f in atlas.meta["fields"]}
    assert {name: about[name]["type"] for name in cells} == {"genre": "u8", "product": "u16", "year": "i16",
                                                           "score": "f32", "day": "i16", "big": "f32"}
    sizes = {name: (atlas.data / about[name]["file"]).stat().st_size for name in cells}
    assert sizes == {"genre": n, "product": 2 * n, "year": 2 * n, "score": 4 * n, "day": 2 * n, "big": 4 * n}
    for f, found in enumerate(fields):
        back = atlas.field(f)
        if found.kind == "category":
            assert back.tolist() == found.values.tolist()  # MISSING where none, as inferred
        else:
            assert np.array_equal(np.isnan(back), np.isnan(found.values))
            assert np.allclose(back[~np.isnan(back)], found.values[~np.isnan(found.values)], rtol=1e-6)
    assert atlas.field(0)[0] == MISSING and np.isnan(atlas.field(2)[0])


def test_an_uploaded_table_keeps_each_column_of_the_rows_it_keeps(tmp_path: Path) -> None:
    """The Corpus map tab's upload (read_corpus): each other column beside the text, its value from the same row
    (blank and repeated rows dropped with their cells), typed; an empty column said, not dropped silently."""
    from sbert_demo.data.corpora import read_corpus

    path = tmp_path / "tickets.csv"
    path.write_text("text,topic,year,price,when,<b>x</b>,empty\n"
                    "A cat sleeps.,pets,2014,3.5,2016-03-01,a,\n"
                    ",pets,2015,1,2016-03-02,b,\n"  # no sentence: skipped with its cells
                    "A dog barks.,pets,2015,,2016-03-02,b,\n"
                    "A cat sleeps.,news,2010,2,2016-03-02,c,\n"  # a repeat: the first one's cells kept
                    "Stocks fell.,news,2013,10.25,,a,\n", encoding="utf-8")
    corpus = read_corpus(path)
    assert corpus.sentences == ["A cat sleeps.", "A dog barks.", "Stocks fell."] and corpus.label_name == "topic"
    fields = {f.name: f for f in corpus.fields}
    assert list(fields) == ["year", "price", "when", "<b>x</b>"]  # the text and the label not repeated
    assert fields["year"].values.tolist() == [2014, 2015, 2013]
    assert fields["price"].values[0] == 3.5 and np.isnan(fields["price"].values[1]) and fields["price"].values[2] == 10.25
    assert fields["when"].kind == "date" and np.isnan(fields["when"].values[2])
    assert [fields["<b>x</b>"].categories[c] for c in fields["<b>x</b>"].values] == ["a", "b", "a"]
    assert "Column 'empty' is empty (every value missing): left out." in corpus.notes


def test_the_corpus_tab_keeps_an_uploads_columns_and_its_map_view_gets_them(tmp_path: Path) -> None:
    from sbert_demo.atlas.store import open_atlas
    from sbert_demo.ui import corpus as tab

    upload = tmp_path / "tickets.csv"
    with upload.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "team", "opened"])
        writer.writerows([f"ticket {i} about the {w} printer", ("billing", "support")[i % 2], f"2024-01-{1 + i % 28:02d}"]
                         for i in range(60) for w in ["red"])
    card, notes, state, data, clusters, found, view, *slots = tab.run_map(
        "file", str(upload), None, None, ["glove-6b-50d"], "clusters", 3, progress=lambda *a, **k: None)
    assert "team: category, 2 value(s) (billing 50%, support 50%)" in card and "opened: date, 2024-01-01 to 2024-01-28" in card
    atlas = open_atlas(re.search(r"/atlas/\?map=([0-9a-f]+)", view).group(1))
    assert [(f["name"], f["kind"], f["type"]) for f in atlas.meta["fields"]] == [("team", "category", "u8"),
                                                                              ("opened", "date", "i16")]
    assert atlas.field(0).tolist() == [i % 2 for i in range(60)]


@pytest.mark.parametrize("cells", [
    ["news", " forum ", "news", None, "", "news\u00a0 today", float("nan")],
    ["4.5", "3", "", "-0.25", "1e3", None],
    ["2016-03-01", "2016-03-01T12:00:00", None, "2016-03-02 06:00"],
    ["1", "two", "3", "1"], ["1_000", "2_000"], ["nan", "1"], ["inf", "2"], ["2016-03", "2016-04"],
    [3, 4.5, None, float("nan")], [f"v{i % 400}" for i in range(1000)], [None, None],
    ["Ünïcode", "日本", "日本", "🇯🇵 flag"],
])
def test_arrows_loops_infer_what_the_cell_by_cell_rules_do(cells) -> None:
    """A million cells are inferred in Arrow's loops; each column here gets the same type, values, categories
    (in the same order), missing count and note from both."""
    from sbert_demo.data.fields import _infer_arrow, _infer_cells

    fast, slow = _infer_arrow("c", cells), _infer_cells("c", cells)
    assert fast is not None
    assert (fast.kind, fast.categories, fast.missing, fast.note) == (slow.kind, slow.categories, slow.missing, slow.note)
    if fast.kind in ("number", "date"):
        assert np.array_equal(fast.values, slow.values, equal_nan=True)
    else:
        assert fast.values.tolist() == slow.values.tolist()
