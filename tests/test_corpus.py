"""The corpus map: reading corpora, exact neighbours, the map cache, k-means, c-TF-IDF words, search,
the figure and the Explore → Corpus map handlers (GloVe and tiny models: fast, offline)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import gradio as gr
import numpy as np
import pytest

from sbert_demo.data.corpora import MAX_CORPUS_SENTENCES, NO_LABEL, read_corpus, stsb_corpus
from sbert_demo.explore import map_cache, plots, projection
from sbert_demo.explore.cluster_words import class_tfidf, distinctive_words
from sbert_demo.explore.corpus_map import (
    corpus_results,
    map_corpus,
    meaning_matches,
    sample_sentences,
    search,
    word_matches,
)
from sbert_demo.ui import corpus as corpus_tab
from sbert_demo.ui import explore as explore_tab

TOPICS = {
    "music": ["a man is playing a guitar", "a woman plays the piano", "a boy is playing a guitar on stage",
              "she sang a song with her guitar", "the band played music in the park", "a girl plays the piano"],
    "food": ["a woman is slicing an onion", "the man is cooking rice", "a cook is cutting potatoes",
             "the woman is peeling a potato", "a man slices a tomato with a knife", "the boy is eating an apple"],
    "animals": ["a dog is running on the grass", "two dogs chase a ball", "a cat is sleeping on the bed",
                "the dog jumps over the fence", "a horse runs in the field", "the cat chases a mouse"],
}


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def topics_csv(tmp_path: Path) -> Path:
    rows = [[sentence, topic, str(i)] for topic, sentences in TOPICS.items() for i, sentence in enumerate(sentences)]
    return write_csv(tmp_path / "topics.csv", ["Text", "topic", "id"], rows)


# --- reading corpora -------------------------------------------------------------------------------


def test_a_csv_corpus_finds_its_columns_and_drops_repeats(tmp_path: Path, topics_csv: Path) -> None:
    corpus = read_corpus(topics_csv)
    assert len(corpus) == 18 and corpus.text_column == "Text" and corpus.label_name == "topic"
    assert corpus.labels[:6] == ["music"] * 6 and corpus.columns == ("Text", "topic", "id")
    assert corpus.describe() == "topics.csv: 18 sentences from 'Text', labels from 'topic' (3)"
    unlabelled = read_corpus(topics_csv, label_column=NO_LABEL)
    assert unlabelled.labels is None and unlabelled.describe().endswith("no labels")
    by_id = read_corpus(topics_csv, text_column="text", label_column="ID")
    assert by_id.labels[:2] == ["0", "1"]
    repeated = write_csv(tmp_path / "r.tsv", ["sentence", "label"], [["A b.", "x"], ["C d.", "y"], ["A b.", "z"]])
    repeated.write_text(repeated.read_text().replace(",", "\t"), encoding="utf-8")
    corpus = read_corpus(repeated)
    assert corpus.sentences == ["A b.", "C d."] and corpus.labels == ["x", "y"]
    assert any("Dropped 1 repeated sentence" in note for note in corpus.notes)


def test_txt_and_parquet_corpora(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = tmp_path / "lines.txt"
    text.write_text("pets | A cat sleeps.\nA dog barks.\n\nThe bus is late.\n", encoding="utf-8")
    corpus = read_corpus(text)
    assert corpus.sentences == ["A cat sleeps.", "A dog barks.", "The bus is late."]
    assert corpus.labels == ["pets", "ungrouped", "ungrouped"] and corpus.columns == ()
    table = pa.table({"body": ["First text.", "Second text.", None, "Third text."], "genre": [1, 2, 2, None]})
    pq.write_table(table, tmp_path / "c.parquet")
    corpus = read_corpus(tmp_path / "c.parquet")
    assert corpus.sentences == ["First text.", "Second text.", "Third text."]
    assert corpus.text_column == "body" and corpus.labels == ["1", "2", "ungrouped"]


@pytest.mark.parametrize(("name", "content", "kwargs", "message"), [
    ("x.xlsx", b"PK\x03\x04", {}, "not a .txt, .csv, .tsv or .parquet file"),
    ("bin.csv", b"text\n\x00\x01", {}, "not UTF-8 text"),
    ("none.csv", b"a,b\n1,2\n3,4\n", {}, "has no text column"),
    ("nohead.csv", b"A cat sleeps on the sofa.,pets\nA dog barks.,pets\n", {}, "first row reads like data: add a header"),
    ("cols.csv", b"text,label\nA.,x\nB.,y\n", {"text_column": "body"}, "has no column 'body'"),
    ("same.csv", b"text,label\nA.,x\nB.,y\n", {"label_column": "text"}, "cannot be both"),
    ("one.csv", b"text\nOnly one.\n", {}, "only one sentence"),
    ("bad.parquet", b"not parquet at all", {}, "not a readable Parquet file"),
])
def test_bad_corpus_files_get_sentences(tmp_path: Path, name: str, content: bytes, kwargs: dict,
                                        message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        read_corpus(path, **kwargs)


def test_fifty_thousand_sentences_are_refused_naming_the_limit(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sentences = [f"Sentence number {i}." for i in range(50_000)]
    path = write_csv(tmp_path / "big.csv", ["text"], [[s] for s in sentences])
    with pytest.raises(ValueError, match=r"big.csv has 50,000 sentences; the limit is 20,000"):
        read_corpus(path)
    pq.write_table(pa.table({"text": sentences}), tmp_path / "big.parquet")
    with pytest.raises(ValueError, match=r"50,000 rows; the corpus map takes at most 20,000"):
        read_corpus(tmp_path / "big.parquet")
    assert MAX_CORPUS_SENTENCES == 20_000
    exactly = write_csv(tmp_path / "limit.csv", ["text"], [[s] for s in sentences[:20_000]])
    assert len(read_corpus(exactly)) == 20_000


def test_the_built_in_corpus_is_every_distinct_stsb_sentence_by_source() -> None:
    corpus = stsb_corpus()
    assert len(corpus) == 15_457 and len(set(corpus.sentences)) == len(corpus)
    counts = {label: corpus.labels.count(label) for label in set(corpus.labels)}
    assert counts["headlines"] == 4_733 and counts["MSRvid"] == 2_281 and len(counts) == 9
    assert corpus.label_name == "source" and not any(note.startswith("Dropped") for note in corpus.notes)


# --- the parts of a map ----------------------------------------------------------------------------


def test_class_tfidf_follows_the_formula() -> None:
    from scipy import sparse

    # two classes, three words: counts per sentence, sentences 0-1 in class 0, sentence 2 in class 1
    counts = sparse.csr_matrix(np.array([[2, 0, 1], [1, 0, 0], [0, 3, 1]]))
    weights = class_tfidf(counts, np.array([0, 0, 1]), 2)
    per_class = np.array([[3, 0, 1], [0, 3, 1]], dtype=float)
    tf = per_class / per_class.sum(axis=1, keepdims=True)
    idf = np.log(1 + (8 / 2) / per_class.sum(axis=0))
    np.testing.assert_allclose(weights, tf * idf)


def test_distinctive_words_name_each_topic() -> None:
    sentences = [s for group in TOPICS.values() for s in group]
    labels = [t for t, group in TOPICS.items() for _ in group]
    words = distinctive_words(sentences, labels, top=3)
    # "man" and "woman" lead for food: 4 of its 6 sentences have one, against 3 of music's and none of animals'
    assert words == {"music": ("guitar", "piano", "playing"), "food": ("man", "woman", "apple"),
                     "animals": ("cat", "dog", "ball")}
    # contractions and possessives lose their ending; ties keep alphabetical order; noise (-1) gets nothing
    assert distinctive_words(["I don't know", "It's John's dog", "the of and"], [0, 0, -1]) == {0: ("dog", "john", "know")}
    assert distinctive_words(["the of", "and it"], [1, 2]) == {1: (), 2: ()}
    with pytest.raises(ValueError, match="2 labels for 3 sentences"):
        distinctive_words(["a", "b", "c"], [1, 2])


def test_exact_neighbours_match_scikit_learns_cosine_search() -> None:
    from sklearn.neighbors import NearestNeighbors

    from sbert_demo.explore.similarity import normalize_rows

    unit = normalize_rows(np.random.default_rng(1).normal(size=(300, 16)))
    indices, distances = projection.exact_neighbours(unit, 6)
    ref_distances, ref_indices = NearestNeighbors(n_neighbors=6, metric="cosine", algorithm="brute").fit(unit).kneighbors(unit)
    np.testing.assert_array_equal(indices, ref_indices)
    np.testing.assert_allclose(distances, ref_distances, atol=1e-5)
    assert (indices[:, 0] == np.arange(300)).all()  # each point is its own first neighbour, as UMAP expects


def test_large_maps_use_exact_neighbours_and_are_kept_on_disk(monkeypatch: pytest.MonkeyPatch,
                                                             isolated) -> None:
    monkeypatch.setattr(projection, "EXACT_KNN_MIN", 200)  # the large-corpus path, on a small input
    centres = np.random.default_rng(0).normal(size=(3, 20)) * 3
    points = np.vstack([c + np.random.default_rng(i).normal(size=(400, 20)) for i, c in enumerate(centres)])
    calls = []
    real = projection.exact_neighbours
    monkeypatch.setattr(projection, "exact_neighbours", lambda unit, k: calls.append(k) or real(unit, k))
    first = projection.project_2d(points)
    assert first.method == "UMAP" and calls == [15]
    files = list((isolated.cache_dir / "maps").glob("*.npz"))
    assert len(files) == 1
    # the second time the map comes from the disk (nothing is laid out) and is the same map
    monkeypatch.setattr(projection, "umap_2d", lambda *a: pytest.fail("laid out again"))
    np.testing.assert_array_equal(projection.project_2d(points).coords, first.coords)
    # the three blobs stay apart on the map: every point's 10 map neighbours are from its own blob
    from sklearn.neighbors import NearestNeighbors

    blob = np.repeat([0, 1, 2], 400)
    _, near = NearestNeighbors(n_neighbors=11).fit(first.coords).kneighbors(first.coords)
    assert (blob[near[:, 1:]] == blob[:, None]).mean() > 0.99
    files[0].write_bytes(b"damaged")
    monkeypatch.undo()
    monkeypatch.setattr(projection, "EXACT_KNN_MIN", 200)
    np.testing.assert_allclose(projection.project_2d(points).coords, first.coords)  # recomputed: deterministic


def test_the_map_cache_keys_on_vectors_and_settings(isolated) -> None:
    unit = np.random.default_rng(0).normal(size=(1000, 4))
    built = []
    build = lambda: built.append(1) or np.ones((1000, 2))  # noqa: E731
    map_cache.maps.get_or_build(unit, "a", build)
    map_cache.maps.get_or_build(unit, "a", build)
    map_cache.maps.get_or_build(unit, "b", build)
    map_cache.maps.get_or_build(unit + 1e-9, "a", build)
    assert len(built) == 3
    map_cache.maps.get_or_build(unit[:999], "a", lambda: built.append(1) or np.ones((999, 2)))
    assert len(built) == 4 and len(list((isolated.cache_dir / "maps").glob("*.npz"))) == 3  # < 1,000: not kept


def test_the_map_key_does_not_import_umap_before_its_compile_cache_is_set() -> None:
    """Importing umap before numba_cache.enable() put umap's own cached kernels in site-packages."""
    import subprocess
    import sys

    script = ("import sys, numpy as np\n"
              "from sbert_demo.explore import projection\n"
              "key = projection._map_settings(np.zeros((5000, 4)), 7)\n"
              "print(key, 'umap' in sys.modules, 'numba' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[1])
    from importlib.metadata import version

    assert run.stdout.split() == [f"umap-{version('umap-learn')}|n_neighbors=15|min_dist=0.1|cosine|random_state=7|"
                                  "neighbours=exact", "False", "False"], run.stderr


def test_kmeans_for_a_corpus_finds_separated_groups() -> None:
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 32))
    points = np.vstack([c + 0.05 * rng.normal(size=(700, 32)) for c in centres])
    clustering = projection.kmeans_clusters(points, 4)
    assert clustering.k == 4 and adjusted_rand_score(np.repeat(range(4), 700), clustering.labels) == 1.0
    assert clustering.silhouette > 0.8
    with pytest.raises(ValueError, match="at least 2"):
        projection.kmeans_clusters(points, 1)


# --- a whole map, search and the figure ------------------------------------------------------------


def test_map_corpus_with_glove(topics_csv: Path) -> None:
    corpus = read_corpus(topics_csv)
    result = map_corpus(corpus, ["glove-6b-50d"], k=3)
    model = result.models[0]
    assert model.coords.shape == (18, 2) and model.method == "PCA" and model.clustering.k == 3
    assert set(model.cluster_words) == {0, 1, 2} and all(model.cluster_words.values())
    assert result.label_words["music"][0] in {"guitar", "piano"}
    data = json.loads(json.dumps(result.as_json()))  # what the API sends is plain JSON
    assert data["n"] == 18 and data["label_name"] == "topic" and len(data["models"][0]["map"]["x"]) == 18
    assert data["models"][0]["clusters"]["ari"] is not None
    assert len(sample_sentences(result, model, 0)) == 3
    again = map_corpus(corpus, ["glove-6b-50d"], k=3)
    assert again.models[0].cached and np.array_equal(again.models[0].coords, model.coords)
    corpus_results.clear()


@pytest.mark.parametrize(("models", "k", "message"), [
    ([], 12, "at least one model"),
    (["glove-6b-50d"] * 1 + ["a", "b", "c", "d"], 12, "at most 4 models"),
    (["glove-6b-50d"], 1, "from 2 to 40"),
    (["glove-6b-50d"], 2.5, "from 2 to 40"),
    (["nope"], 12, "nope"),
])
def test_map_corpus_refuses_bad_requests(topics_csv: Path, models: list[str], k, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        map_corpus(read_corpus(topics_csv), models, k=k)


def test_search_by_words_and_by_meaning(topics_csv: Path) -> None:
    corpus = read_corpus(topics_csv)
    assert word_matches(corpus.sentences, "GUITAR  Playing").tolist() == [0, 2]
    # at word starts: "man" is not found inside "woman", "play" finds "plays" and "played"
    assert [corpus.sentences[i] for i in word_matches(corpus.sentences, "man")] == [
        "a man is playing a guitar", "the man is cooking rice", "a man slices a tomato with a knife"]
    assert word_matches(corpus.sentences, "play").tolist() == [0, 1, 2, 4, 5]
    assert word_matches(corpus.sentences, "(").tolist() == []  # not a pattern
    assert word_matches(corpus.sentences, "  ").tolist() == []
    result = map_corpus(corpus, ["glove-6b-50d"], k=3)
    found = search(result, "guitar", "words")
    assert found["glove-6b-50d"][0].tolist() == [0, 2, 3] and "3 of 18 sentences" in found["glove-6b-50d"][1]
    order, scores = meaning_matches("glove-6b-50d", corpus.sentences, "a man is playing a guitar", top=3)
    assert order[0] == 0 and scores[0] == pytest.approx(1.0, abs=1e-5) and (np.diff(scores) <= 0).all()
    with pytest.raises(ValueError, match="the limit here is 500"):
        search(result, "x" * 501, "words")
    with pytest.raises(ValueError, match="Unknown search mode"):
        search(result, "x", "regex")
    corpus_results.clear()


def test_corpus_figure_groups_rare_labels_highlights_and_escapes() -> None:
    n = 60
    coords = np.random.default_rng(0).normal(size=(n, 2))
    sentences = [f"<b>sentence</b> {i}" for i in range(n)]
    labels = [f"label {i % 30}" for i in range(n)]  # 30 labels: 23 shown, the rest "other"
    figure = plots.corpus_scatter(coords, sentences, labels, "Title", highlight=[3, 5], highlight_name="matches (2)")
    names = [trace.name for trace in figure.data]
    assert len(names) == plots.MAX_CATEGORIES + 1 and names[-2] == "other (14)" and names[-1] == "matches (2)"
    assert all(trace.type == "scattergl" for trace in figure.data)
    assert list(figure.data[-1].x) == [coords[3, 0], coords[5, 0]]
    assert all(trace.marker.opacity == 0.15 for trace in figure.data[:-1])
    assert "&lt;b&gt;sentence&lt;/b&gt; 0" == figure.data[0].customdata[0][0]
    clusters = plots.corpus_scatter(coords, sentences, [i % 3 for i in range(n)], "T",
                                    words={0: ("alpha", "beta"), 1: ("<i>x</i>",), 2: ()})
    assert [t.name for t in clusters.data] == ["cluster 0: alpha, beta (20)", "cluster 1: &lt;i&gt;x&lt;/i&gt; (20)",
                                               "cluster 2 (20)"]
    assert sorted(a.text for a in clusters.layout.annotations) == ["&lt;i&gt;x&lt;/i&gt;", "alpha, beta"]
    with pytest.raises(ValueError, match="60 sentences"):
        plots.corpus_scatter(coords[:5], sentences, labels, "T")


# --- the tab's handlers ----------------------------------------------------------------------------


def test_the_tab_maps_recolours_and_highlights(topics_csv: Path) -> None:
    columns, labels, card = corpus_tab.inspect_file("file", str(topics_csv))
    assert columns["value"] == "Text" and labels["value"] == "topic" and "18 sentences" in card
    outputs = corpus_tab.run_map("file", str(topics_csv), "Text", "topic", ["glove-6b-50d"], "labels", 3)
    card, notes, state, data, clusters, found, view, *slots = outputs
    assert "18 sentences" in card and data["n"] == 18 and "distinctive words" in clusters
    assert "/atlas/?map=" in view and "<iframe" not in view  # a small map links to the map view
    assert slots[0]["visible"] is True and slots[3]["visible"] is False
    names = [trace.name for trace in slots[1].data]
    assert names[:3] == ["animals: cat, dog, ball (6)", "food: man, woman, apple (6)", "music: guitar, piano, playing (6)"]
    recoloured = corpus_tab.recolour(state, "clusters")
    assert recoloured[1].data[0].name.startswith("cluster 0")
    found, *slots = corpus_tab.highlight(state, "labels", "guitar", "words")
    assert "3 of 18 sentences" in found and slots[1].data[-1].name.startswith("matches for “guitar” (3)")
    found, *slots = corpus_tab.highlight(state, "labels", "someone makes music", "meaning")
    assert "GloVe" in found and len(slots[1].data[-1].x) == 18  # 100 nearest of 18: all
    # Mapping again with the search still in its box keeps its matches on the new maps.
    again = corpus_tab.run_map("file", str(topics_csv), "Text", "topic", ["glove-6b-50d"], "labels", 3, "guitar", "words")
    found, map_figure = again[5], again[8]  # card, notes, state, data, clusters, found, view, then the slots
    assert "3 of 18 sentences" in found and map_figure.data[-1].name.startswith("matches for “guitar” (3)")
    with pytest.raises(gr.Error, match="Map a corpus first"):
        corpus_tab.highlight(None, "labels", "x", "words")
    with pytest.raises(gr.Error, match="Upload a corpus file first"):
        corpus_tab.run_map("file", None, None, None, ["glove-6b-50d"], "labels", 3)
    corpus_results.clear()


def test_a_large_upload_to_the_sentence_box_opens_in_the_corpus_map(tmp_path: Path) -> None:
    rows = [[f"Sentence number {i} about topic {i % 7}.", f"t{i % 7}"] for i in range(600)]
    path = write_csv(tmp_path / "six-hundred.csv", ["sentence", "topic"], rows)
    text, notes, source, file, tabs = explore_tab.load_file(str(path))
    assert text == gr.skip() and source == "file" and file == str(path)
    assert "600 sentences" in notes and "corpus map" in notes and tabs.get("selected") == "corpus"
    small = write_csv(tmp_path / "small.csv", ["sentence"], [["One."], ["Two."]])
    assert explore_tab.load_file(str(small))[2:] == (gr.skip(),) * 3


def test_the_tab_lets_a_user_choose_columns_it_could_not_find(tmp_path: Path) -> None:
    odd = write_csv(tmp_path / "odd.csv", ["utterance", "speaker"],
                    [["Hello there, how are you?", "ann"], ["Fine, thanks.", "bob"], ["See you.", "ann"]])
    columns, labels, card = corpus_tab.inspect_file("file", str(odd))
    assert columns["visible"] and columns["choices"] == ["utterance", "speaker"]
    assert columns["value"] is None and "has no text column" in card and labels["value"] == NO_LABEL
    chosen = corpus_tab.describe_choice("file", str(odd), "utterance", "speaker")
    assert "odd.csv: 3 sentences from &#x27;utterance&#x27;, labels from &#x27;speaker&#x27; (2)" in chosen
    built_in = corpus_tab.inspect_file("stsb", None)
    assert built_in[0]["visible"] is False and "15,457 sentences" in built_in[2]
    assert "Upload a corpus file" in corpus_tab.inspect_file("file", None)[2]


def test_the_map_command_prints_cluster_words_and_writes_the_map(topics_csv: Path, tmp_path: Path, capsys) -> None:
    from sbert_demo.cli import main

    out = tmp_path / "map.json"
    assert main(["map", "--models", "glove-6b-50d", "--file", str(topics_csv), "--k", "3", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "GloVe average (6B, 50d) (glove-6b-50d): PCA map, 3 clusters" in printed and "c-TF-IDF" in printed
    data = json.loads(out.read_text())
    assert data["n"] == 18 and data["label_words"]["music"] == ["guitar", "piano", "playing", "plays"]
    assert len(data["models"][0]["map"]["x"]) == 18 and sorted(data["models"][0]["clusters"]["words"]) == ["0", "1", "2"]
    assert main(["map", "--models", "glove-6b-50d", "--file", str(topics_csv), "--text-column", "nope"]) == 2
    assert "has no column 'nope'" in capsys.readouterr().err
    corpus_results.clear()


def test_reading_a_corpus_says_what_it_cleaned(tmp_path) -> None:
    """Lines cut and characters removed are counted in the corpus's notes (``map`` and ``embed`` print them)."""
    from sbert_demo.corpus.sources import SourceSpec, read_source
    from sbert_demo.data.corpora import MAX_SENTENCE_CHARS

    path = tmp_path / "corpus.txt"
    path.write_text("A family 👨\u200d👩\u200d👧 at home.\nA bell\x07 rings\u200b twice.\nA plain line.\n"
                    + "long " * MAX_SENTENCE_CHARS + "\n", encoding="utf-8")
    corpus = read_source(SourceSpec(path=str(path)))
    assert corpus.sentences[0] == "A family 👨\u200d👩\u200d👧 at home."
    assert corpus.sentences[1] == "A bell rings twice."
    assert "1 texts cut at 2,000 characters" in corpus.notes
    assert "2 invisible or control characters removed from 1 texts (emoji sequences kept whole)" in corpus.notes
