"""Hostile input at the level a user hits it: the UI handlers (and, once, the launched app).

Every case either succeeds with correct output (duplicates, emoji, right-to-left and zero-width
text, a 100,000-character sentence, extra CSV columns) or fails with a ``gr.Error`` that is a
clear sentence: it names the problem, quotes user text HTML-escaped, and never shows a
traceback or an exception class. HTML and script text typed by a user only ever reaches the page
escaped. Nothing a user sends crashes the server, and nothing already saved is touched.

Models: the real GloVe average (loads in about a second) and the tiny random BERT from conftest.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from pathlib import Path

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
from gradio.components.plot import PlotData

from sbert_demo.config import reload_settings
from conftest import launch_here, train_form

from sbert_demo.benchmark.evaluation import evaluate
from sbert_demo.data.files import read_scored_pairs
from sbert_demo.explore.exploration import MAX_SENTENCES
from sbert_demo.models.registry import get_registry
from sbert_demo.training import TrainingJobs, config_for
from sbert_demo.ui import corpus as corpus_tab
from sbert_demo.ui import explore as explore_tab
from sbert_demo.ui import models as models_tab
from sbert_demo.ui import sts as sts_tab
from sbert_demo.ui import train as train_tab

GLOVE = ["glove-6b-50d"]
SLOT = explore_tab.SLOT_OUTPUTS
# Markup that would run or render if it reached the page unescaped.
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
LINK = '<a href="javascript:alert(3)">click</a>'
RAW_MARKUP = re.compile(r"<\s*(script|img|a\s|b\s+on|iframe|svg)", re.IGNORECASE)
EXCEPTION_NAMES = re.compile(r"Traceback|\b\w*(Error|Exception)\b|Something went wrong")
PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01" + bytes(range(256))


# --- helpers -------------------------------------------------------------------------------------


def assert_clear(message: str, *words: str) -> None:
    """A sentence naming the problem: the expected words, no traceback, no exception class names."""
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert not EXCEPTION_NAMES.search(message), message
    assert not RAW_MARKUP.search(message), message  # user text inside it is escaped


def refused(handler, *args, words: tuple[str, ...] = ()) -> str:
    """Call ``handler`` (a generator is drained), expect a clear ``gr.Error``; return its message."""
    with pytest.raises(gr.Error) as excinfo:
        result = handler(*args)
        if hasattr(result, "__next__"):
            list(result)
    message = str(excinfo.value.message)
    assert_clear(message, *words)
    return message


def strings(value) -> list[str]:
    """Every string inside handler outputs: HTML, ``gr.update`` dicts and Plotly figures."""
    if value is None or isinstance(value, (bool, int, float, np.number)):
        return []
    if isinstance(value, str):
        return [value]
    if hasattr(value, "to_plotly_json"):
        return strings(value.to_plotly_json())
    if isinstance(value, PlotData):  # a figure as the Explore handler sends it: already serialised
        return strings(json.loads(value.plot))
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, np.ndarray):
        return [str(v) for v in value.ravel()] if value.dtype.kind in "OUS" else []
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in strings(v)]
    return []


def assert_no_raw_markup(outputs) -> list[str]:
    found = strings(outputs)
    bad = [s for s in found if RAW_MARKUP.search(s)]
    assert not bad, bad[:3]
    return found


def folder_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def write(path: Path, data: bytes | str) -> str:
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return str(path)


@pytest.fixture
def tiny(add_tiny_bert) -> str:
    return add_tiny_bert("mean").key


# --- Explore: the text box -------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "words"), [
    ("", ("Enter at least two sentences",)),
    ("   \n\t\n  \r\n", ("Enter at least two sentences",)),
    ("\u200b\u200c\n\u2060\ufeff", ("Enter at least two sentences",)),  # only zero-width characters
    ("just one sentence", ("Only one sentence",)),
    (None, ("Enter at least two sentences",)),
    (42, ("Sentences must be given as text", "int")),
    (["a cat", "a dog"], ("Sentences must be given as text", "list")),
    ("\n".join(f"sentence {i}" for i in range(2001)), ("2,001 sentences", "limit is 2,000")),
], ids=["empty", "whitespace", "zero-width-only", "one-sentence", "none", "number", "list", "2001"])
def test_explore_refuses_text_it_cannot_use(text, words) -> None:
    refused(explore_tab.run_explore, text, GLOVE, 0, "groups", "kmeans", words=words)


def test_two_thousand_sentences_get_a_limit_message_at_once() -> None:
    text = "\n".join(f"a sentence about cats number {i}" for i in range(2000))
    started = time.perf_counter()
    message = refused(explore_tab.run_explore, text, GLOVE, 0, "groups", "kmeans",
                      words=("2,000 sentences", f"limit is {MAX_SENTENCES}", "Corpus map"))
    assert time.perf_counter() - started < 5, message  # refused before any model loads


@pytest.mark.parametrize(("models", "words"), [
    ([], ("Choose at least one model",)),
    (None, ("Choose at least one model",)),
    ([5], ("Model keys are text", "5")),
    ([None, 3.5], ("Model keys are text",)),
    ({"glove-6b-50d": 1}, ("list of model keys", "dict")),
    ([IMG], ("Unknown model", "&lt;img src=x onerror=alert(2)&gt;", "glove-6b-50d")),
    (["../../etc/passwd"], ("Unknown model", "Known models")),
], ids=["empty", "none", "number", "none-and-float", "dict", "markup", "path"])
def test_explore_refuses_model_choices_that_are_not_keys(models, words) -> None:
    refused(explore_tab.run_explore, "a cat\na dog", models, 0, "groups", "kmeans", words=words)


def test_explore_escapes_an_unknown_cluster_method() -> None:
    refused(explore_tab.run_explore, "a cat\na dog", GLOVE, 0, "groups", SCRIPT,
            words=("Unknown clustering method", "&lt;script&gt;", "kmeans"))


def test_one_model_key_given_as_text_is_one_model() -> None:
    data = explore_tab.run_explore("a cat sleeps\na dog barks", "glove-6b-50d", 0, "groups", "kmeans")[2]
    assert [m["key"] for m in data["models"]] == GLOVE and data["models"][0]["error"] is None


def test_duplicates_are_kept_noted_and_identical() -> None:
    text = "a cat sleeps on the bed\na cat sleeps on the bed\nstocks fell sharply\na cat sleeps on the bed"
    notes, _, data = explore_tab.run_explore(text, GLOVE, 2, "groups", "kmeans")[:3]
    assert "Sentences 1, 2 and 4 are identical" in notes
    assert data["sentences"] == text.split("\n")
    ranking = {row["index"]: row["cosine"] for row in data["models"][0]["ranking"]}
    assert ranking[0] == ranking[1] == ranking[3]  # the same text, the same vector
    json.dumps(data, allow_nan=False)


def test_emoji_right_to_left_zero_width_and_control_characters(tiny: str) -> None:
    lines = ["the cat 😀 sleeps 🐱", "مرحبا بالعالم", "שלום עולם", "the\u200b dog\u202e barks\x07 loudly",
             "🎉🎉🎉", "\u200b\u200d"]
    outputs = explore_tab.run_explore("\n".join(lines), [tiny, "glove-6b-50d"], 0, "groups", "hdbscan")
    notes, _, data = outputs[:3]
    assert data["sentences"] == ["the cat 😀 sleeps 🐱", "مرحبا بالعالم", "שלום עולם", "the dog barks loudly",
                                 "🎉🎉🎉"]  # invisible, bidi-override and control characters removed
    assert "Removed 5 invisible or control characters" in notes and "Skipped 1 blank line" in notes
    assert "contain no word this model knows" in notes  # GloVe knows no Arabic, Hebrew or emoji
    assert all(m["error"] is None for m in data["models"])
    json.dumps(data, allow_nan=False)  # all-zero vectors gave no NaN
    shown = strings(outputs[3:])
    for text in ("مرحبا بالعالم", "שלום עולם", "the cat 😀 sleeps 🐱"):
        assert any(text in s for s in shown), text
    assert not any("\u200b" in s or "\u202e" in s or "\x07" in s for s in shown)


def test_a_100000_character_sentence_is_cut_with_a_note(tiny: str) -> None:
    long = ("a man is playing a guitar in the park " * 2700)[:100_000]
    started = time.perf_counter()
    outputs = explore_tab.run_explore(f"{long}\na dog runs\nstocks fell", [tiny, "glove-6b-50d"], 0,
                                      "groups", "kmeans")
    assert time.perf_counter() - started < 30
    notes, _, data = outputs[:3]
    assert "Sentence 1 was longer than 20,000 characters and cut to that length" in notes
    assert "exceeded the model&#x27;s length limit and were truncated" in notes  # the tiny BERT: 64 tokens
    assert len(data["sentences"][0]) <= 20_000
    # Figures carry a short form of it only (hover text is capped), never 100,000 characters per cell.
    assert max(len(s) for s in strings(outputs[3:])) < 5_000


def test_markup_in_sentences_and_group_labels_is_shown_as_text_everywhere(tiny: str) -> None:
    text = "\n".join([f"{SCRIPT} | a cat {IMG} sleeps", f"{SCRIPT} | a kitten naps {LINK}",
                      f"{IMG} | <b onmouseover=alert(4)>stocks</b> fell", f"{IMG} | shares dropped {SCRIPT}"])
    outputs = explore_tab.run_explore(text, [tiny, "glove-6b-50d"], 1, "groups", "kmeans")
    data = outputs[2]
    assert data["groups"] == [SCRIPT, SCRIPT, IMG, IMG] and SCRIPT in data["sentences"][3]  # the API gets raw text
    shown = assert_no_raw_markup([outputs[:2], outputs[3:]])
    figures = [go.Figure(json.loads(o.plot)) for o in outputs[3:] if isinstance(o, PlotData)]
    assert len(figures) == 6  # heatmap, ranking and map for each model
    heatmap, ranking, scatter = figures[:3]
    assert "&lt;script&gt;" in heatmap.data[0].x[0] and "&lt;img src=x" in heatmap.layout.yaxis.ticktext[0]
    assert any("&lt;script&gt;" in c for c in ranking.data[0].customdata)
    assert "&lt;a href" in ranking.layout.title.subtitle.text  # the query, sentence 2
    assert {trace.name for trace in scatter.data} == {"&lt;script&gt;alert(1)&lt;/script&gt;",
                                                      "&lt;img src=x onerror=alert(2)&gt;"}
    assert any("&lt;b onmouseover" in s for s in shown)
    # Another query and another colouring reuse the results: still escaped.
    assert_no_raw_markup(explore_tab.rerank(text, data, 3))
    assert_no_raw_markup(explore_tab.recolour(data, "clusters"))
    # Dropdown option labels are plain text to Gradio (it escapes them): escaping here would show "&lt;".
    assert explore_tab.query_choices(text, 0)["choices"][3][0] == f"4. shares dropped {SCRIPT}"


@pytest.mark.parametrize("data", ["junk", {"sentences": ["a cat", "a dog"], "models": "x"},
                                  {"sentences": ["a cat", "a dog"], "models": [{"key": 5}]}, [1, 2]],
                         ids=["text", "models-text", "key-number", "list"])
def test_rerank_refuses_results_that_are_not_an_explorations(data) -> None:
    refused(explore_tab.rerank, "a cat\na dog", data, 1, words=("explore endpoint", "run the comparison"))


# --- Explore: uploaded sentence files ----------------------------------------------------------------


@pytest.mark.parametrize(("name", "content", "words"), [
    ("empty.txt", b"", ("empty.txt is empty",)),
    ("blank.csv", b"  \n\n \r\n", ("blank.csv is empty",)),
    ("image.csv", PNG_BYTES, ("image.csv is not UTF-8 text",)),
    ("nul.txt", b"a cat sleeps\x00\na dog barks\n", ("not UTF-8 text",)),
    ("latin1.txt", "un caf\xe9 noir\nun th\xe9 vert\n".encode("latin-1"), ("latin1.txt is not UTF-8",)),
    ("utf16.csv", "sentence\na cat\na dog\n".encode("utf-16"), ("utf16.csv is not UTF-8",)),
    ("pairs.csv", b"sentence1,score\na cat,1\na dog,2\n", ("no sentence column", "&#x27;sentence1&#x27;")),
    ("sheet.xlsx", b"PK\x03\x04rest", ("not a .txt, .csv or .tsv file",)),
    ("many.txt", "\n".join(f"line {i}" for i in range(20_001)).encode(), ("20,001 sentences", "limit is 20,000")),
], ids=["empty", "blank", "png", "nul", "latin-1", "utf-16", "missing-column", "xlsx", "20001-lines"])
def test_explore_upload_refuses_files_it_cannot_read(tmp_path: Path, name: str, content: bytes, words) -> None:
    refused(explore_tab.load_file, write(tmp_path / name, content), words=words)


def test_explore_upload_with_extra_columns_and_markup_loads_as_text(tmp_path: Path) -> None:
    upload = write(tmp_path / "mine.csv", f'id,category,sentence,notes\n1,"{SCRIPT}",a cat sleeps,x\n'
                                          f'2,pets,"{IMG} a dog barks",y\n3,,stocks fell,z\n')
    text, notes, *_ = explore_tab.load_file(upload)
    assert text.split("\n") == [f"{SCRIPT} | a cat sleeps", f"pets | {IMG} a dog barks",
                                "ungrouped | stocks fell"]  # a text box shows it as typed
    assert "had an empty group label" in notes and not RAW_MARKUP.search(notes)


def test_two_thousand_uploaded_sentences_open_in_the_corpus_map(tmp_path: Path) -> None:
    upload = write(tmp_path / "big.txt", "\n".join(f"topic{i % 7} | {SCRIPT} sentence number {i}" for i in range(2000)))
    started = time.perf_counter()
    text, notes, source, file, tabs = explore_tab.load_file(upload)
    assert text == gr.skip() and source == "file" and file == str(upload) and tabs["selected"] == "corpus"
    assert "2,000 sentences" in notes and not RAW_MARKUP.search(notes)
    _, _, card = corpus_tab.inspect_file(source, file)
    assert "big.txt: 2,000 sentences, labels from &#x27;label&#x27; (7)" in card and not RAW_MARKUP.search(card)
    assert time.perf_counter() - started < 5


# --- STS: uploaded scored pairs ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "content", "words"), [
    ("empty.csv", b"", ("empty.csv is empty",)),
    ("image.csv", PNG_BYTES, ("image.csv is not UTF-8 text", "looks binary")),
    ("latin1.csv", "sentence1,sentence2,score\ncaf\xe9,th\xe9,1\n".encode("latin-1"), ("not UTF-8", "byte")),
    ("utf16.csv", "sentence1,sentence2,score\na,b,1\nc,d,2\n".encode("utf-16"), ("not UTF-8",)),
    ("noscore.csv", b"sentence1,sentence2\na cat,a dog\na man,a woman\n", ("no score column", "sentence1, sentence2")),
    ("header.csv", b"sentence1,sentence2,score\n", ("0 usable scored pairs",)),
    ("allbad.csv", b"sentence1,sentence2,score\na,b,nan\nc,d,inf\ne,f,high\n",
     ("0 usable scored pairs", "line 2", "line 4", "&#x27;high&#x27;")),
    ("constant.csv", b"sentence1,sentence2,score\na,b,3\nc,d,3\n", ("Every score", "scores vary")),
], ids=["empty", "png", "latin-1", "utf-16", "missing-column", "header-only", "no-valid-score", "constant"])
def test_sts_upload_refuses_files_it_cannot_use(tmp_path: Path, name: str, content: bytes, words) -> None:
    refused(sts_tab.run_sts, "upload", write(tmp_path / name, content), GLOVE, words=words)


def test_sts_rejected_rows_are_listed_with_line_numbers_and_the_rest_is_scored(tmp_path: Path) -> None:
    rows = ["sentence1,sentence2,score", "a cat sleeps,a cat naps,4.5", "a dog barks,a dog howls,nan",
            "a man runs,stocks fell,0.5", "the sun shines,the sea is calm,inf", f"{SCRIPT},a bird sings,{IMG}",
            "a girl reads,,3", "a boy eats bread,a boy eats an apple,3.5", "one field only"]
    upload = write(tmp_path / "pairs.csv", "\n".join(rows) + "\n")
    status, table = list(sts_tab.run_sts("upload", upload, GLOVE))[-1][:2]
    for line, why in [(3, "score &#x27;nan&#x27; is not a finite number"),
                      (5, "score &#x27;inf&#x27; is not a finite number"),
                      (6, "score &#x27;&lt;img src=x onerror=alert(2)&gt;&#x27; is not a number"),
                      (7, "empty sentence2"), (9, "1 fields, expected at least 3")]:
        assert f"line {line}: {why}" in status
    assert "Some rows of pairs.csv were rejected" in status and "3 scored pairs" in status
    assert not RAW_MARKUP.search(status)
    assert table["data"][0][4] == "3"


def test_sts_out_of_range_scores_are_used_as_given_and_their_range_is_shown(tmp_path: Path) -> None:
    rows = ["sentence1,sentence2,score", "a cat sleeps,a cat naps,-3", "a man runs,stocks fell,1e9",
            "a dog barks,a dog howls,2", "a bird sings,a car drives,0.5"]
    upload = write(tmp_path / "odd.csv", "\n".join(rows) + "\n")
    status, table = list(sts_tab.run_sts("upload", upload, GLOVE))[-1][:2]
    assert "gold scores -3 to 1e+09" in status  # an outlier stands out before anyone reads the numbers
    pairs = read_scored_pairs(upload)
    assert pairs.scores == [-3, 1e9, 2, 0.5] and not pairs.problems
    assert table["data"][0][2] == f"{evaluate('glove-6b-50d', pairs).spearman * 100:.2f}"


def test_sts_extra_columns_are_ignored(tmp_path: Path) -> None:
    clean = write(tmp_path / "clean.csv", "sentence1,sentence2,score\na cat sleeps,a cat naps,4\n"
                                          "a man runs,stocks fell,0.5\na dog barks,a dog howls,3\n")
    extra = write(tmp_path / "extra.csv", "id,genre,sentence1,sentence2,score,source,comment\n"
                                          "1,x,a cat sleeps,a cat naps,4,y,z\n2,x,a man runs,stocks fell,0.5,y,z\n"
                                          "3,x,a dog barks,a dog howls,3,y,z\n")
    first = list(sts_tab.run_sts("upload", clean, GLOVE))[-1][1]["data"][0]
    second = list(sts_tab.run_sts("upload", extra, GLOVE))[-1][1]["data"][0]
    assert first[:5] == second[:5]


def test_sts_two_thousand_pairs_run_in_reasonable_time(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    words = "cat dog man woman car road tree house music guitar food rice sea sun rain city".split()
    lines = ["sentence1,sentence2,score"]
    for i in range(2000):
        a, b = (" ".join(rng.choice(words, 5)) for _ in range(2))
        lines.append(f"{a} {i},{b},{rng.uniform(0, 5):.2f}")
    upload = write(tmp_path / "big.csv", "\n".join(lines) + "\n")
    started = time.perf_counter()
    steps = list(sts_tab.run_sts("upload", upload, GLOVE))
    assert time.perf_counter() - started < 30
    status, table, bars, scatter = steps[-1][:4]
    assert "2,000 scored pairs" in status and table["data"][0][4] == "2,000" and table["data"][0][2]
    assert len(scatter["value"].data[0].x) == 2000


def test_sts_markup_in_sentences_and_model_names_is_shown_as_text(tmp_path: Path) -> None:
    upload = write(tmp_path / "pairs.csv", f'sentence1,sentence2,score\n"{SCRIPT} a cat",a cat naps,4\n'
                                           f'"{LINK}",stocks fell,0.5\na dog barks,"{IMG}",3\n')
    steps = list(sts_tab.run_sts("upload", upload, [*GLOVE, SCRIPT]))
    status, table, bars, *scatters = steps[-1]
    # The table is left out: Gradio shows its "str" cells as text (it escapes them).
    shown = assert_no_raw_markup([step[:1] + step[2:] for step in steps])
    assert any("&lt;script&gt;" in s for s in shown) and any("&lt;a href" in s for s in shown)
    row = table["data"][1]  # the unknown "model" is a row with the reason, not a crash
    assert row[2] == "–" and "Unknown model" in row[-1]


@pytest.mark.parametrize(("dataset", "path", "models", "words"), [
    (None, None, GLOVE, ("Choose the data",)),
    ("upload", None, GLOVE, ("Upload a CSV/TSV file",)),
    ("upload", 5, GLOVE, ("Upload a CSV/TSV file",)),
    (SCRIPT, None, GLOVE, ("Unknown STS benchmark split", "&lt;script&gt;")),
    ("dev", None, [5], ("Model keys are text",)),
    ("dev", None, "glove-6b-50d" * 3, ()),
], ids=["no-dataset", "no-file", "path-number", "markup-split", "model-number", "one-long-key"])
def test_sts_refuses_requests_it_cannot_run(tiny_sts_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                            dataset, path, models, words) -> None:
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    if words:
        refused(sts_tab.run_sts, dataset, path, models, words=words)
    else:  # one unknown key given as text: one row saying so
        table = list(sts_tab.run_sts(dataset, path, models))[-1][1]
        assert len(table["data"]) == 1 and "Unknown model" in table["data"][0][-1]


# --- Models tab --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "words"), [
    ("../../etc/passwd", ("outside the folders models may be loaded from",)),
    ("a b", ("not a valid Hugging Face model id",)),
    ("//", ("outside the folders",)),
    ("org/name/extra", ("not a valid Hugging Face model id",)),
    ("x" * 300, ("not a valid Hugging Face model id",)),
    ("", ("Enter a Hugging Face model id",)),
    ("   ", ("Enter a Hugging Face model id",)),
    ("/etc", ("outside the folders",)),
    ("/", ("outside the folders",)),
    ("~", ("outside the folders",)),
    ("C:\\Windows\\System32", ("outside the folders",)),
    ("file:///etc/passwd", ("not a valid Hugging Face model id",)),
    (f"org/{IMG}", ("not a valid Hugging Face model id", "&lt;img")),
    (None, ("Enter a Hugging Face model id",)),
    (5, ("model id or folder is text", "int")),
    (["bert-base-uncased"], ("model id or folder is text", "list")),
], ids=["dotdot", "space", "slashes", "three-parts", "300-chars", "empty", "blank", "etc", "root", "home",
        "windows", "url", "markup", "none", "number", "list"])
def test_add_model_refuses_malformed_ids_and_outside_paths(name, words) -> None:
    before = get_registry().keys()
    started = time.perf_counter()
    refused(models_tab.add_model, name, "mean", words=words)
    assert time.perf_counter() - started < 5 and get_registry().keys() == before


def test_add_model_refuses_a_hub_id_offline_quickly() -> None:
    started = time.perf_counter()
    refused(models_tab.add_model, "no-such-org/no-such-model", "mean",
            words=("no-such-org/no-such-model", "Hugging Face Hub", "not reachable"))
    assert time.perf_counter() - started < 5


def test_add_model_refuses_folders_outside_the_allowed_roots(tmp_path: Path, tiny_bert: Path,
                                                             isolated) -> None:
    elsewhere = tmp_path / "elsewhere"  # a real model, but not under models/, the cache or MODEL_PATHS
    elsewhere.mkdir()
    (elsewhere / "config.json").write_text("{}")
    refused(models_tab.add_model, str(elsewhere), "mean", words=("outside the folders",))
    refused(models_tab.add_model, str(tiny_bert), "mean", words=("outside the folders",))
    # A link inside models/ that points outside is judged by where it leads.
    (isolated.models_dir / "sneaky").symlink_to(elsewhere, target_is_directory=True)
    refused(models_tab.add_model, str(isolated.models_dir / "sneaky"), "mean", words=("outside the folders",))
    refused(models_tab.add_model, str(isolated.models_dir / ".." / "elsewhere"), "mean",
            words=("outside the folders",))


def test_add_model_refuses_folders_in_the_roots_without_a_usable_model(isolated) -> None:
    (isolated.models_dir / "empty").mkdir()
    refused(models_tab.add_model, str(isolated.models_dir / "empty"), "mean", words=("holds no model",))
    broken = isolated.models_dir / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    refused(models_tab.add_model, str(broken), "mean", words=("incomplete or corrupt", "no model weights"))
    refused(models_tab.add_model, "bert-base-uncased", SCRIPT, words=("Pooling", "&lt;script&gt;"))
    assert "broken" not in get_registry().keys()


# --- Train tab -----------------------------------------------------------------------------------------


class RecordingJobs:
    """Stands in for the job manager: records what would have started (nothing should)."""

    def __init__(self):
        self.started = []

    def start(self, config) -> str:
        self.started.append(config)
        return "job"

    def snapshot(self):
        raise AssertionError("a refused request must not reach the job view")


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> RecordingJobs:
    manager = RecordingJobs()
    monkeypatch.setattr(train_tab, "training_jobs", lambda: manager)
    return manager


@pytest.fixture
def saved_model(tiny_sbert_in_models: str, isolated) -> tuple[str, Path, dict[str, str]]:
    """A model already saved in ``models/``, with the hashes of its files."""
    folder = isolated.models_dir / tiny_sbert_in_models
    return tiny_sbert_in_models, folder, folder_hashes(folder)


def form(**changes) -> list:
    """The Train tab's fields: a small, valid GloVe NLI run (see ``conftest.train_form``)."""
    return train_form("hostile-run", **changes)


@pytest.mark.parametrize(("output", "words"), [
    ("../evil", ("path separator",)),
    ("a/b", ("path separator",)),
    ("a\\b", ("path separator",)),
    ("..", ("&#x27;..&#x27;",)),
    (".hidden", ("starts with &#x27;.&#x27;",)),
    ("CON", ("reserved device name",)),
    ("nul", ("reserved device name",)),
    ("COM1", ("reserved device name",)),
    ("lpt1.txt", ("reserved device name",)),
    ("model.", ("ends with &#x27;.&#x27;",)),
    ("", ("Give the new model a name",)),
    ("x" * 200, ("200 characters", "limit is 64")),
    ("glove-6b-50d", ("built-in model",)),
    ("ALL-MPNET-BASE-V2", ("built-in model",)),
    (IMG, ("may only contain", "&lt;img src=x")),
], ids=["dotdot-evil", "slash", "backslash", "dotdot", "hidden", "CON", "nul", "COM1", "lpt1.txt",
        "trailing-dot", "empty", "200-chars", "builtin", "builtin-upper", "markup"])
def test_training_refuses_unsafe_output_names(jobs: RecordingJobs, saved_model, isolated, output, words) -> None:
    listing = sorted(p.name for p in isolated.models_dir.iterdir())
    refused(train_tab.start_training, *form(output=output), words=words)
    assert jobs.started == [] and sorted(p.name for p in isolated.models_dir.iterdir()) == listing
    assert not (isolated.models_dir.parent / "evil").exists()


def test_training_never_overwrites_a_saved_model_unasked(jobs: RecordingJobs, saved_model) -> None:
    name, folder, hashes = saved_model
    refused(train_tab.start_training, *form(output=name), words=("already exists", "allow overwriting"))
    refused(train_tab.start_training, *form(output=f"  {name} "), words=("already exists",))
    with pytest.raises(ValueError, match="already exists"):  # the job manager checks again
        TrainingJobs().start(config_for("glove-6b-50d", "nli-softmax", name, device="cpu"))
    assert jobs.started == [] and folder_hashes(folder) == hashes
    assert name in get_registry().keys()


@pytest.mark.parametrize(("changes", "words"), [
    ({"epochs": 0}, ("Epochs", "more than 0")),
    ({"epochs": -1}, ("Epochs", "more than 0")),
    ({"epochs": math.nan}, ("Epochs must be a finite number",)),
    ({"epochs": math.inf}, ("Epochs must be a finite number",)),
    ({"batch_size": 0}, ("Batch size must be between 1 and 4,096",)),
    ({"batch_size": 100_000}, ("Batch size must be between 1 and 4,096", "100,000")),
    ({"batch_size": 2.5}, ("Batch size must be a whole number",)),
    ({"learning_rate": math.nan}, ("Learning rate must be a finite number",)),
    ({"learning_rate": math.inf}, ("Learning rate must be a finite number",)),
    ({"learning_rate": -1}, ("Learning rate", "more than 0")),
    ({"learning_rate": 0}, ("Learning rate", "more than 0")),
    ({"max_pairs": -5}, ("Maximum number of training pairs", "-5")),
    ({"warmup_ratio": 2}, ("Warm-up ratio",)),
    ({"seed": -1}, ("Seed",)),
    ({"base": "no-such-model"}, ("Unknown model", "no-such-model")),
    ({"base": IMG}, ("Unknown model", "&lt;img src=x")),
    ({"base": 5}, ("model is named by its key", "int")),
    ({"base": ["glove-6b-50d"]}, ("model is named by its key", "list")),
    ({"base": "bert-base-uncased-cls"}, ("cannot be trained here", "Hugging Face Hub")),
    ({"objective": SCRIPT}, ("Objective", "&lt;script&gt;")),
    ({"concatenation": []}, ("Select at least one part",)),
    ({"data": "upload", "upload": None}, ("Upload a training file",)),
    ({"batch_size": math.nan}, ("Batch size", "whole number")),
    ({"seed": math.inf}, ("Seed", "whole number")),
    ({"batch_size": "x"}, ("Batch size", "whole number")),
    ({"output": 7}, ("name must be text",)),
    ({"precision": "fp16"}, ("fp16 is not supported on the CPU",)),
], ids=lambda value: None if isinstance(value, tuple) else "-".join(f"{k}={v!s:.12}" for k, v in value.items()))
def test_training_refuses_absurd_settings(jobs: RecordingJobs, changes: dict, words) -> None:
    refused(train_tab.start_training, *form(**changes), words=words)
    assert jobs.started == []


@pytest.mark.parametrize(("changes", "words"), [
    ({"max_pairs": 0}, ("Maximum number of training pairs", "between 1")),  # the tab's 0 means "all"
    ({"max_pairs": -5}, ("Maximum number of training pairs",)),
    ({"epochs": math.nan}, ("Epochs must be a finite number",)),
    ({"batch_size": 100_000}, ("Batch size",)),
    ({"learning_rate": -1.0}, ("Learning rate",)),
])
def test_the_job_manager_refuses_absurd_configs_before_starting(changes: dict, words) -> None:
    config = config_for("glove-6b-50d", "nli-softmax", "direct-run", device="cpu", **changes)
    manager = TrainingJobs()
    with pytest.raises(ValueError) as excinfo:
        manager.start(config)
    assert_clear(str(excinfo.value), *words)
    assert not manager.snapshot().active


# --- the launched app: nothing crashes the server ----------------------------------------------------


def test_the_server_answers_hostile_api_calls_with_messages_and_keeps_serving(
        tiny_sts_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    import httpx
    from gradio_client import Client, handle_file
    from gradio_client.exceptions import AppError

    from sbert_demo.ui.app import build_app, configure_queue

    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo = configure_queue(build_app(warm_up=False))
    launch_here(demo, port)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        named = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
        image = write(tmp_path / "image.csv", PNG_BYTES)
        calls = [
            (("", GLOVE, 0, "groups", "kmeans"), "/explore", ("Enter at least two sentences",)),
            (("a cat\na dog", [5], 0, "groups", "kmeans"), "/explore", ("Model keys are text",)),
            (("a cat\na dog", [IMG], 0, "groups", "kmeans"), "/explore", ("Unknown model", "&lt;img")),
            (("a cat\na dog", "junk", 1), "/rank", ("explore endpoint",)),
            ((None, None, GLOVE), "/sts", ("Choose the data",)),
            (("upload", handle_file(image), GLOVE), "/sts", ("not UTF-8 text",)),
            (("../../etc/passwd", "mean"), "/add_model", ("outside the folders",)),
            (("no-such-org/no-such-model", "mean"), "/add_model", ("not reachable",)),
            ((123, "dev"), "/sts_csv", ("The results to save are not the benchmark",)),
            (({"data": "rows"}, "dev"), "/sts_csv", ("The results to save are not the benchmark",)),
            (("\u200b\u200b", "A sentence.", GLOVE), "/explain", ("Sentence A is empty",)),
        ]
        if "/train_start" in named:
            calls.append((form(output="../evil"), "/train_start", ("path separator",)))
            calls.append((form(epochs=-1), "/train_start", ("Epochs",)))
        for args, api_name, words in calls:
            with pytest.raises(AppError) as excinfo:
                client.predict(*args, api_name=api_name)
            assert_clear(str(excinfo.value.message), *words)
        # A server path the caller did not upload is never read (raw HTTP: gradio_client would upload
        # a local path itself).
        secret = write(tmp_path / "secret.csv", "sentence1,sentence2,score\nsecret one,secret two,1\nx,y,2\n")
        api = f"http://127.0.0.1:{port}/gradio_api/call/sts"
        for path in ("/etc/passwd", secret):
            event = httpx.post(api, json={"data": ["upload", {"path": path, "meta": {"_type": "gradio.FileData"}},
                                                   GLOVE]}, timeout=30).json()["event_id"]
            answer = httpx.get(f"{api}/{event}", timeout=60).text
            assert answer.startswith("event: error") and "secret" not in answer and "root:" not in answer
        answer = client.predict("a cat sleeps\na dog barks\nstocks fell", GLOVE, 0, "groups", "kmeans",
                                api_name="/explore")
        assert answer[2]["models"][0]["error"] is None and len(answer[2]["sentences"]) == 3
    finally:
        demo.close()


# --- afterwards, everything still works ----------------------------------------------------------------


def test_after_all_that_a_normal_exploration_works() -> None:
    text = "pets | a cat sleeps on the bed\npets | a dog runs in the park\nmoney | stocks fell sharply\n" \
           "money | the bank raised rates"
    notes, summary, data = explore_tab.run_explore(text, GLOVE, 0, "groups", "kmeans")[:3]
    model = data["models"][0]
    assert model["error"] is None and model["summary"]["gap"] > 0 and "Within groups" in summary
    assert [row["index"] for row in model["ranking"]][0] == 1  # the other pet is closest to the cat


def test_a_broken_cache_folder_is_reported_once_and_exploring_still_works(tmp_path, monkeypatch) -> None:
    from sbert_demo.ui import common

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("SBERT_DEMO_CACHE", str(blocker / "cache"))
    reload_settings()
    warnings: list[str] = []
    monkeypatch.setattr(common.gr, "Warning", lambda message, *a, **k: warnings.append(message))
    text = "pets | A cat sleeps.\npets | A kitten naps.\nmoney | Stocks fell today."
    for _ in range(2):
        data = explore_tab.run_explore(text, GLOVE, 0, "groups", "kmeans")[2]
        assert [m["key"] for m in data["models"]] == GLOVE and not data["models"][0].get("error")
    assert len(warnings) == 1 and "embedding cache" in warnings[0] and "off" in warnings[0]


def test_markup_in_a_corpus_stays_text_everywhere_the_corpus_map_shows_it(tmp_path: Path) -> None:
    from sbert_demo.explore.corpus_map import corpus_results

    rows = "\n".join(f'"{SCRIPT} a cat number {i} sleeps","{IMG}"' if i % 2 else f'"a dog {i} barks {IMG}",pets'
                     for i in range(40))
    upload = write(tmp_path / "marked.csv", "text,label\n" + rows + "\n")
    card, notes, state, data, clusters, found, view, *slots = corpus_tab.run_map("file", upload, None, None, GLOVE,
                                                                                 "labels", 2)
    assert SCRIPT not in view and IMG not in view  # the map view's link carries no corpus text
    for html_text in (card, notes, clusters):
        assert not RAW_MARKUP.search(html_text), html_text
    names = [trace.name for trace in slots[1].data]
    assert any("&lt;img" in name for name in names) and not any(RAW_MARKUP.search(name) for name in names)
    found, *slots = corpus_tab.highlight(state, "labels", "<script>", "words")
    assert "20 of 40 sentences match" in found and not RAW_MARKUP.search(found)
    corpus_results.clear()
