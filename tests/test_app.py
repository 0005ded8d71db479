"""The web app without a browser: it builds without launching, its handlers return what the page
shows (checked against the core called directly), errors become escaped ``gr.Error`` sentences,
and the named API endpoints answer ``gradio_client`` with the same data.

Models: the tiny random BERT from ``conftest`` (registered by path) and the real GloVe average,
which loads in about a second.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
from conftest import launch_here

from sbert_demo.config import reload_settings

from sbert_demo.benchmark.evaluation import evaluate
from sbert_demo.data.examples import EXAMPLE_SETS
from sbert_demo.data.sentences import parse_sentences
from sbert_demo.encoding import model_cache
from sbert_demo.encoding.encoder import encode
from sbert_demo.explore.exploration import MAX_MODELS, explore, format_sentences
from sbert_demo.explore.similarity import cosine_matrix, summarize
from sbert_demo.models.info import registry_rows
from sbert_demo.models.kinds import folder_dimension
from sbert_demo.ui import explore as explore_tab
from sbert_demo.ui import models as models_tab
from sbert_demo.ui import sts as sts_tab
from sbert_demo.plot_style import FAMILY_COLORS
from sbert_demo.ui.app import build_app, configure_queue, launch_options
from sbert_demo.ui.model_select import refresh_models

ENDPOINTS = {"explore", "rank", "corpus_map", "sts", "explain", "anisotropy", "before_after", "models", "add_model",
             "board_create", "board_join", "board_send", "board_landing", "board_state", "board_lock", "board_hide", "board_clear",
             "board_model", "board_export"}  # all but Train's
GROUPED = """animals | a dog is running on the grass
animals | two dogs run on the grass
animals | a cat is sleeping on the bed
food | a woman is slicing an onion
food | the man is cooking rice
food | the boy is eating an apple
music | a man is playing a guitar
music | a boy is playing the piano
music | she sang a song
music | people are dancing to music"""
SLOT = explore_tab.SLOT_OUTPUTS


@pytest.fixture
def tiny(add_tiny_bert) -> str:
    return add_tiny_bert("mean").key


def public_endpoints(demo: gr.Blocks) -> dict[str, object]:
    return {fn.api_name: fn for fn in demo.fns.values() if fn.api_name and fn.api_visibility == "public"}


def _arrays(value):
    """Plotly's typed arrays ({"dtype", "bdata", "shape"}: how it serialises numpy) back to numpy."""
    if isinstance(value, dict) and set(value) <= {"dtype", "bdata", "shape"} and "bdata" in value:
        import base64

        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return array.reshape([int(n) for n in value["shape"].split(",")]) if "shape" in value else array
    if isinstance(value, dict):
        return {key: _arrays(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_arrays(item) for item in value]
    return value


def figure(output) -> go.Figure:
    """A figure the Explore handler returned, already serialised for gr.Plot (PlotData), as a Figure."""
    assert output.type == "plotly", output
    return go.Figure(_arrays(json.loads(output.plot)))


def error_text(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value.message)


# --- the app as a whole ----------------------------------------------------------------------------


def test_app_builds_without_launching_and_names_each_tabs_main_action() -> None:
    demo = configure_queue(build_app(warm_up=False))
    assert isinstance(demo, gr.Blocks)
    endpoints = public_endpoints(demo)
    assert ENDPOINTS <= set(endpoints)  # the Train tab, when present, adds its own
    tabs = [block.label for block in demo.blocks.values() if isinstance(block, gr.Tab)]
    assert tabs[:4] == ["Explore", "Compare sentences", "Corpus map (up to 1,000,000 sentences)", "STS benchmark"]
    assert tabs[-3:] == ["Models", "Talk", "Audience"]
    # Long jobs of one tab never share a concurrency group with another tab's.
    assert endpoints["sts"].concurrency_id != endpoints["explore"].concurrency_id
    assert endpoints["sts"].concurrency_limit == 1
    assert demo._queue.max_size is not None and demo._queue.default_concurrency_limit >= 1
    # Waiting pages hear their queue position and ETA once a second (not a message to every waiting page
    # at every job start), and Gradio's per-event pandas summary for its monitoring page is not redone.
    assert demo._queue.live_updates is False and demo._queue.update_intervals == 1.0
    assert demo._queue.ANAYLTICS_CACHE_FREQUENCY >= 1000


def test_a_change_that_fires_twice_still_leaves_its_answer() -> None:
    """An upload routed from the sentence box into Explore → Corpus map fires the file's .change twice (set by
    the handler, then again when the tab mounts the file). The card must end with the file's description:
    its handler runs straight from the triggers, again for the last value, and no step that empties a box
    is chained before a handler that writes the same box (its empty answer could land after the handler's)."""
    demo = build_app(warm_up=False)
    card = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "corpus-card")
    writers = {fn.name: fn for fn in demo.fns.values() if any(output is card for output in fn.outputs)}
    assert "clear_failure" not in writers, sorted(writers)
    assert {event for _, event in writers["inspect_file"].targets} == {"input", "change"}
    assert writers["inspect_file"].trigger_mode == "always_last"
    chained = [(demo.fns[fn.trigger_after], fn) for fn in demo.fns.values() if fn.trigger_after is not None]
    clears = [(before, after) for before, after in chained if before.name == "clear_failure" and not
              (after.trigger_only_on_failure or after.trigger_only_on_success)]
    assert len(clears) >= 5  # the Run buttons keep their failure box apart from their results
    for before, after in clears:
        assert not {o._id for o in before.outputs} & {o._id for o in after.outputs}, after.name
        changes = any(event in ("change", "key_up") for _, event in before.targets)
        assert after.trigger_mode == ("always_last" if changes else "once"), after.name


def test_start_up_does_not_wait_for_the_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from sbert_demo.ui import app as ui_app

    release = threading.Event()
    monkeypatch.setattr(ui_app, "_warm_up", release.wait)
    started = time.perf_counter()
    build_app(warm_up=True)
    assert time.perf_counter() - started < 30
    warmers = [t for t in threading.enumerate() if t.name == "sbert-demo-warm-up"]
    assert warmers and all(t.daemon and t.is_alive() for t in warmers)
    release.set()


def test_a_train_tab_module_is_included_after_sts(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.machinery
    import sys
    import types

    module = types.ModuleType("sbert_demo.ui.train")
    module.__spec__ = importlib.machinery.ModuleSpec("sbert_demo.ui.train", None)
    module.build_tab = lambda: gr.Markdown("training here") and []
    monkeypatch.setitem(sys.modules, "sbert_demo.ui.train", module)
    demo = build_app(warm_up=False)
    tabs = [block.label for block in demo.blocks.values() if isinstance(block, gr.Tab)]
    assert tabs == ["Explore", "Compare sentences", "Corpus map (up to 1,000,000 sentences)", "STS benchmark",
                    "STS benchmark", "Table 1: seven STS sets", "The cost: cross- vs bi-encoder",
                    "Why naive fails", "Explain a pair", "The cone (anisotropy)",
                    "Before / after training", "Train", "Models", "Talk", "Audience"]


def test_launch_options_carry_theme_and_css() -> None:
    options = launch_options()
    assert isinstance(options["theme"], gr.themes.Base)
    stylesheet = "".join(path.read_text() for path in options["css_paths"])
    assert ".badge-siamese" in stylesheet and "var(--sd-siamese)" in stylesheet
    assert f"--sd-siamese: {FAMILY_COLORS['siamese']};" in options["css"]  # the palette's one source
    assert options["js"].lstrip().startswith("() => {") and "talk-next" in options["js"]


def test_no_stylesheet_script_or_colour_code_lives_in_python() -> None:
    """CSS, JS and page HTML are files under ui/assets; colour codes live in plot_style's palette only."""
    import ast
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "sbert_demo"
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        strings = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        assert not any(re.search(r"[.#][\w-]+\s*\{[^}]*:", s) for s in strings), f"CSS in {path.name}"
        assert not any("document.querySelector" in s or "=> {" in s for s in strings), f"JS in {path.name}"
        # What Python may hand Gradio's js= is one call of a function page.js defines.
        calls = [s for s in strings if "=>" in s]
        one_call = r"\(\) => window\.sbertDemo\w+\(((['\"][\w-]+['\"])?\))?|\(s\) => window\.sbertDemo\w+\(s(, -?\d+)?\)"
        assert all(re.fullmatch(one_call, s) for s in calls), calls
        if path.name != "plot_style.py":
            assert not re.search(r"#[0-9A-Fa-f]{6}\b", text), f"a colour code in {path.name}"


def test_app_script_picks_host_and_port(monkeypatch: pytest.MonkeyPatch) -> None:
    import app

    for name in ("SPACE_ID", "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"):
        monkeypatch.delenv(name, raising=False)
    args = app.parse_args([])
    assert (args.host, args.port, args.share) == ("127.0.0.1", 7860, False)
    monkeypatch.setenv("SPACE_ID", "someone/sbert-demo")
    assert app.parse_args([]).host == "0.0.0.0"
    monkeypatch.setenv("GRADIO_SERVER_NAME", "10.0.0.5")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "9000")
    assert (app.parse_args([]).host, app.parse_args([]).port) == ("10.0.0.5", 9000)
    assert app.parse_args(["--host", "::1", "--port", "1234", "--share"]).share


def test_model_pickers_refresh_from_the_registry(add_tiny_bert) -> None:
    update = refresh_models(["glove-6b-50d", "gone-model"])
    assert update["value"] == ["glove-6b-50d"]
    assert "tiny-bert@cls" not in [key for _, key in update["choices"]]
    add_tiny_bert("cls")  # e.g. added in the Models tab while the app runs
    assert "tiny-bert@cls" in [key for _, key in refresh_models([])["choices"]]


# --- Explore -------------------------------------------------------------------------------------


def test_explore_handler_shows_what_the_core_computes(tiny: str) -> None:
    outputs = explore_tab.run_explore(GROUPED, [tiny, "glove-6b-50d"], 2, "groups", "kmeans")
    assert len(outputs) == 3 + MAX_MODELS * SLOT
    notes, summary_html, data = outputs[:3]
    parsed = parse_sentences(GROUPED)
    assert data["sentences"] == parsed.sentences and data["query"] == parsed.sentences[2]
    for model in data["models"]:
        expected = summarize(cosine_matrix(encode(model["key"], parsed.sentences).embeddings), parsed.groups)
        assert model["summary"]["gap"] == pytest.approx(expected.gap, abs=1e-4)
        assert f"{expected.mean_pairwise:.2f}" in summary_html
        assert [row["index"] for row in model["ranking"]][:1] != [2]  # the query is not ranked
        assert len(model["ranking"]) == len(parsed.sentences) - 1
        assert model["map"]["method"] == "PCA" and len(model["map"]["x"]) == len(parsed.sentences)
        assert model["clusters"]["ari"] is not None
    json.dumps(data)  # what the API returns is plain JSON
    first = outputs[3:3 + SLOT]
    assert first[0]["visible"] is True
    heatmap, ranking, scatter = (figure(o) for o in first[2:5])
    assert isinstance(heatmap.data[0], go.Heatmap) and np.shape(heatmap.data[0].z) == (10, 10)
    assert isinstance(ranking.data[0], go.Bar) and len(ranking.data[0].x) == 9
    assert len(scatter.data) == 3  # one trace per group
    assert "ARI" in first[5]
    for slot in range(2, MAX_MODELS):  # unused columns are hidden
        assert outputs[3 + slot * SLOT]["visible"] is False


def test_explore_skips_unavailable_models_and_says_why(tiny: str) -> None:
    outputs = explore_tab.run_explore(GROUPED, ["bert-base-uncased-cls", tiny], 0, "clusters", "hdbscan")
    notes, data = outputs[0], outputs[2]
    assert "BERT base (CLS) was skipped" in notes and "Hugging Face Hub" in notes
    assert data["models"][0]["error"] and data["models"][1]["error"] is None
    assert "Skipped" in outputs[3 + 1]  # the skipped model's column header
    assert outputs[3 + 2] is None  # and no heatmap for it


def test_explore_few_sentences_fall_back_to_pca_and_escape_user_text() -> None:
    text = "a cat sleeps\n\n<b>a dog</b> barks\nstocks fell"
    outputs = explore_tab.run_explore(text, ["glove-6b-50d"], 0, "groups", "kmeans")
    notes, summary_html, data = outputs[:3]
    assert "Skipped 1 blank line" in notes
    assert data["models"][0]["map"]["method"] == "PCA"
    assert "PCA" in figure(outputs[3 + 4]).layout.title.subtitle.text
    assert "<b>a dog</b>" not in str(figure(outputs[3 + 2]).layout.yaxis.ticktext)  # escaped in the figure
    assert "Add group labels" in summary_html


@pytest.mark.parametrize(("text", "models", "expected"), [
    ("", ["glove-6b-50d"], "Enter at least two sentences"),
    ("only one sentence", ["glove-6b-50d"], "Only one sentence"),
    ("a cat\na dog", [], "Choose at least one model"),
    ("a cat\na dog", ["glove-6b-50d", "a", "b", "c", "d"], "at most 4 models"),
    ("a cat\na dog", ["<img src=x>"], "&lt;img src=x&gt;"),
])
def test_explore_errors_are_escaped_sentences(text: str, models: list[str], expected: str) -> None:
    with pytest.raises(gr.Error) as excinfo:
        explore_tab.run_explore(text, models, 0, "groups", "kmeans")
    assert expected in error_text(excinfo) and "Traceback" not in error_text(excinfo)


def test_rerank_and_recolour_reuse_the_shown_results(tiny: str) -> None:
    data = explore_tab.run_explore(GROUPED, [tiny], 0, "groups", "kmeans")[2]
    figures = explore_tab.rerank(GROUPED, data, 6)
    assert "7. a man is playing a guitar" in figures[0].layout.title.subtitle.text
    expected = explore(parse_sentences(GROUPED).sentences, None, [tiny], query_index=6).models[0].ranking
    assert list(figures[0].data[0].x) == pytest.approx([score for _, score in expected])
    assert figures[1:] == [gr.skip()] * (MAX_MODELS - 1)
    # Edited text: the old results no longer match, so nothing is re-ranked.
    assert explore_tab.rerank(GROUPED + "\nnew line", data, 1) == [gr.skip()] * MAX_MODELS
    maps = explore_tab.recolour(data, "clusters")
    k = data["models"][0]["clusters"]["k"]
    assert len(maps[0].data) == k and "found" in maps[1]


def test_query_choices_follow_the_text_without_raising() -> None:
    update = explore_tab.query_choices("a | one\na | two\nthree", 5)
    assert update["choices"] == [("1. one", 0), ("2. two", 1), ("3. three", 2)] and update["value"] == 0
    assert explore_tab.query_choices("just one", 0)["choices"] == []


def test_the_example_picker_follows_edits_of_the_sentences() -> None:
    original = EXAMPLE_SETS["paraphrase-questions"].text
    assert explore_tab.mark_edited(original + "\nA new line.", "paraphrase-questions") == explore_tab.YOURS
    assert explore_tab.mark_edited(original + "  ", "paraphrase-questions") == gr.skip()  # no real change
    assert explore_tab.mark_edited(original, explore_tab.YOURS) == "paraphrase-questions"  # the edit undone
    assert explore_tab.mark_edited("Mine.\nAlso mine.", explore_tab.YOURS) == gr.skip()
    text, description = explore_tab.load_example(explore_tab.YOURS)
    assert text == gr.skip() and "Your own sentences" in description


def test_examples_and_uploads_fill_the_text_box(tmp_path: Path) -> None:
    text, description = explore_tab.load_example("paraphrase-questions")
    assert text == EXAMPLE_SETS["paraphrase-questions"].text and "questions" in description
    upload = tmp_path / "mine.csv"
    upload.write_text('topic,sentence\npets,"A cat, asleep."\npets,A dog | barking\nwork,\n', encoding="utf-8")
    text, notes, *rest = explore_tab.load_file(str(upload))
    assert rest == [gr.skip()] * 3  # the corpus map and the sub-tab are left alone
    parsed = parse_sentences(text)
    assert parsed.sentences == ["A cat, asleep.", "A dog / barking"] and parsed.groups == ["pets", "pets"]
    assert "replaced by &#x27;/&#x27;" in notes  # escaped: notes are HTML
    sheet = tmp_path / "x.xlsx"
    sheet.write_bytes(b"PK\x03\x04")
    with pytest.raises(gr.Error, match="not a .txt"):
        explore_tab.load_file(str(sheet))


def test_format_sentences_round_trips_through_the_parser() -> None:
    parsed = parse_sentences(EXAMPLE_SETS["near-duplicates"].text)
    text, notes = format_sentences(parsed.sentences, parsed.groups)
    again = parse_sentences(text)
    assert (again.sentences, again.groups, notes) == (parsed.sentences, parsed.groups, [])


# --- STS -----------------------------------------------------------------------------------------


def test_sts_streams_a_row_per_model_with_the_core_numbers(tiny: str, tiny_sts_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    steps = list(sts_tab.run_sts("dev", None, ["glove-6b-50d", tiny, "bert-base-uncased-cls"]))
    assert len(steps) == 1 + 3
    tables = [step[1]["data"] for step in steps]
    assert [len(rows) for rows in tables] == [0, 1, 2, 3]  # the table fills in model by model
    status, table, bars, *scatters = steps[-1]
    from sbert_demo.data.benchmarks import sts_split

    pairs = sts_split("dev")
    for row, key in zip(table["data"], ["glove-6b-50d", tiny]):
        result = evaluate(key, pairs)
        assert row[2] == f"{result.spearman * 100:.2f}" and row[3] == f"{result.pearson * 100:.2f}"
    assert table["data"][2][2] == "–" and "Hugging Face Hub" in table["data"][2][-1]
    assert "6 scored pairs" in status
    names = [trace.name for trace in bars.data]
    # A dev run: the paper's marks are STSb *test* numbers, so none is drawn beside it, and the title says why.
    assert names == ["naive"] and not bars.layout.shapes
    assert bars.layout.title.text.startswith("STSb dev") and "paper reports STSb test only" in bars.layout.title.subtitle.text
    # one bar per line, the model's name on its left, its number at its end: nothing turned or cut on a phone
    assert {trace.orientation for trace in bars.data} == {"h"} and not bars.layout.annotations
    test_bars = sts_tab.bar_chart([evaluate("glove-6b-50d", sts_split("test"))], "test")
    assert [trace.name for trace in test_bars.data][-1].startswith("paper, STSb test<br>") and test_bars.layout.shapes
    assert steps[0][3]["visible"] and steps[0][4]["visible"] and not steps[0][5]["visible"]
    first_scatter = steps[1][3]
    assert first_scatter["visible"] and len(first_scatter["value"].data[0].x) == len(pairs)
    # Each later yield repeats every slot's update, value included: the page applies a generator's diffs in place,
    # and a skip after a figure deleted it before the plot had drawn it (two cached models, one scatter empty).
    assert all("value" in scatter for step in steps for scatter in step[3:])
    assert [step[3]["value"] is first_scatter["value"] for step in steps[1:]] == [True] * 3
    # and in a dict of its own each time: Gradio takes "value" out of the update it is handed
    assert len({id(scatter) for step in steps for scatter in step[3:]}) == len(steps) * sts_tab.MAX_SCATTERS
    assert steps[2][4]["visible"] and len(steps[2][4]["value"].data[0].x) == len(pairs)
    again = list(sts_tab.run_sts("dev", None, ["glove-6b-50d", tiny]))[-1][1]["data"]
    assert [row[6] for row in again] == ["yes", "yes"]  # cached embeddings: returns at once


def test_sts_upload_problems_are_shown_with_line_numbers(tmp_path: Path) -> None:
    upload = tmp_path / "pairs.csv"
    upload.write_text("sentence1,sentence2,score\na cat sleeps,a cat naps,4.5\nx,y,high\n"
                      "a dog runs,stocks fell,0.5\n<b>a</b>,b,3\n", encoding="utf-8")
    status = list(sts_tab.run_sts("upload", str(upload), ["glove-6b-50d"]))[-1][0]
    assert "line 3" in status and "&#x27;high&#x27;" in status
    with pytest.raises(gr.Error, match="Upload a CSV/TSV file"):
        list(sts_tab.run_sts("upload", None, ["glove-6b-50d"]))
    with pytest.raises(gr.Error, match="Choose at least one model"):
        list(sts_tab.run_sts("upload", str(upload), []))


# --- Models --------------------------------------------------------------------------------------


def test_models_table_lists_dimensions_without_loading(tiny_sbert_in_models: str, tiny_bert: Path) -> None:
    table = models_tab.list_models()
    rows = {row[0]: row for row in table["data"]}
    assert rows["glove-6b-50d"][4] == "50" and rows["glove-6b-50d"][5] == "yes"
    assert rows[tiny_sbert_in_models][4] == "32" and rows[tiny_sbert_in_models][2] == "fine-tuned"
    assert rows["bert-base-uncased-cls"][5] == "no" and "Hub" in rows["bert-base-uncased-cls"][6]
    assert model_cache.model_cache().keys() == []
    assert folder_dimension(tiny_bert) == 32
    assert {r.key for r in registry_rows()} == set(rows)


def test_adding_models(add_tiny_bert, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    started = time.perf_counter()
    with pytest.raises(gr.Error) as excinfo:
        models_tab.add_model("bert-base-uncased", "mean")
    assert time.perf_counter() - started < 5
    assert "Hugging Face Hub" in error_text(excinfo) and "not reachable" in error_text(excinfo)
    with pytest.raises(gr.Error, match="not a valid Hugging Face model id"):
        models_tab.add_model("<script>alert(1)</script>", "mean")
    monkeypatch.setenv("SBERT_DEMO_MODEL_PATHS", str(tiny_bert.parent))
    reload_settings()
    message = models_tab.add_model(str(tiny_bert), "max")
    assert "Added tiny-bert@max" in message
    assert "tiny-bert@max" in [row[0] for row in models_tab.list_models()["data"]]
    assert models_tab.show_pooling(str(tiny_bert))["visible"] is True
    assert models_tab.show_pooling("sentence-transformers/all-MiniLM-L6-v2")["visible"] is False


# --- the named endpoints over HTTP ---------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def launched_app(tiny_sts_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    demo = configure_queue(build_app(warm_up=False))
    yield launch_here(demo, free_port())
    demo.close()


def test_gradio_client_gets_what_the_page_shows(launched_app: str, tiny: str) -> None:
    from gradio_client import Client

    client = Client(launched_app, verbose=False)
    named = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert ENDPOINTS <= {name.lstrip("/") for name in named}

    shown = explore_tab.run_explore(GROUPED, ["glove-6b-50d", tiny], 1, "groups", "kmeans")
    answer = client.predict(GROUPED, ["glove-6b-50d", tiny], 1, "groups", "kmeans", api_name="/explore")
    assert answer[1] == shown[1]  # the summary table
    for theirs, ours in zip(answer[2]["models"], shown[2]["models"]):
        assert theirs["summary"] == ours["summary"] and theirs["ranking"] == ours["ranking"]

    ranked = client.predict(GROUPED, answer[2], 4, api_name="/rank")
    assert "5. the man is cooking rice" in json.loads(ranked[0]["plot"])["layout"]["title"]["subtitle"]["text"]

    table = client.predict("dev", None, ["glove-6b-50d", tiny], api_name="/sts")[1]
    shown_table = list(sts_tab.run_sts("dev", None, ["glove-6b-50d", tiny]))[-1][1]
    # model, family, Spearman, Pearson, pairs: the same; seconds and "cached" differ between runs
    assert [row[:5] for row in table["data"]] == [row[:5] for row in shown_table["data"]]

    fixed = client.predict("test", None, ["glove-6b-50d"], ["whiten"], api_name="/sts")[1]
    shown_fixed = list(sts_tab.run_sts("test", None, ["glove-6b-50d"], ["whiten"]))[-1][1]
    assert [row[:5] for row in fixed["data"]] == [row[:5] for row in shown_fixed["data"]]
    assert [row[0] for row in fixed["data"]] == ["GloVe average (6B, 50d)", "GloVe average (6B, 50d) + whitened"]
    explained = client.predict("A man plays a guitar.", "<b>A guitar</b> is played.", ["glove-6b-50d"],
                               api_name="/explain")
    assert "guitar" in explained[0] and "<b>A guitar" not in explained[0] and "exact" in explained[0]

    listed = client.predict(api_name="/models")
    assert [row[0] for row in listed["data"]] == [row[0] for row in models_tab.list_models()["data"]]
    with pytest.raises(Exception, match="Hugging Face Hub"):
        client.predict("bert-base-uncased", "mean", api_name="/add_model")


def test_gradio_client_maps_an_uploaded_corpus(launched_app: str, tmp_path: Path) -> None:
    from gradio_client import Client, handle_file

    from sbert_demo.explore.corpus_map import corpus_results

    upload = tmp_path / "corpus.csv"
    rows = [line.split(" | ")[::-1] for line in GROUPED.splitlines()]  # (sentence, topic)
    upload.write_text("text,topic\n" + "\n".join(",".join(row) for row in rows) + "\n", encoding="utf-8")
    client = Client(launched_app, verbose=False)
    answer = client.predict("file", handle_file(str(upload)), "text", "topic", ["glove-6b-50d"], "clusters", 3,
                            api_name="/corpus_map")
    data = next(part for part in answer if isinstance(part, dict) and "label_words" in part)
    assert data["n"] == 10 and data["label_name"] == "topic" and data["models"][0]["clusters"]["k"] == 3
    assert data["label_words"]["music"] and len(data["models"][0]["map"]["x"]) == 10
    corpus_results.clear()
    with pytest.raises(Exception, match="Upload a corpus file first"):
        client.predict("file", None, None, None, ["glove-6b-50d"], "labels", 12, api_name="/corpus_map")
