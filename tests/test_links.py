"""Deep links: parsing a URL's query parameters into the page's state, and writing them back."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from sbert_demo.data.examples import EXAMPLE_SETS
from sbert_demo.ui import sharing
from sbert_demo.ui.links import MAX_LINK_CHARS, make_link, parse_link


def test_a_full_link_round_trips() -> None:
    link, note = make_link("explore", example="bag-of-words-traps", text=EXAMPLE_SETS["bag-of-words-traps"].text,
                           models=["glove-6b-50d", "glove-6b-50d+whiten"], query=2, colour="clusters",
                           clusters="hdbscan")
    assert note is None
    state = parse_link(dict(parse_qsl(urlsplit(link).query)))
    assert (state.tab, state.example, state.models, state.query, state.colour, state.clusters) == (
        "explore", "bag-of-words-traps", ["glove-6b-50d", "glove-6b-50d+whiten"], 2, "clusters", "hdbscan")
    assert state.notes == []


def test_custom_sentences_travel_in_the_link_until_they_are_too_long() -> None:
    text = "pets | A cat sleeps.\npets | A dog barks.\nThe bus is late."
    link, note = make_link("explore", example="paraphrase-questions", text=text, models=["glove-6b-50d"])
    assert note is None and parse_link(dict(parse_qsl(link[1:]))).sentences == text
    long_text = "\n".join(f"Sentence {i} says something." for i in range(200))
    link, note = make_link("explore", example=None, text=long_text, models=["glove-6b-50d"])
    assert "sentences" not in link and "do not fit in a link" in note and len(link) < MAX_LINK_CHARS


@pytest.mark.parametrize("params, expected", [
    ({"tab": "nowhere"}, "Ignored tab='nowhere'"),
    ({"set": "nope"}, "Ignored set='nope'"),
    ({"models": "glove-6b-50d,nope"}, "Ignored unknown model(s) 'nope'"),
    ({"set": "bag-of-words-traps", "query": "99"}, "there is no sentence number 99"),
    ({"query": "first"}, "Ignored query='first'"),
    ({"colour": "pink"}, "Ignored colour='pink'"),
    ({"step": "two"}, "Ignored step='two'"),
    ({"step": "0"}, "Ignored step='0'"),
    ({"sentences": "only one"}, "Enter at least two"),
    ({"models": "glove-6b-50d whiten"}, None),  # "+" typed into a URL arrives as a space
    ({"foo": "1", "<script>": "x"}, "Ignored unknown link parameter(s)"),
    ({"models": ",".join(["glove-6b-50d+whiten"] + [f"glove-6b-50d+whiten{n}" for n in range(1, 6)])},
     "Kept the first 4 models"),
])
def test_malformed_links_are_ignored_with_a_note(params: dict, expected: str) -> None:
    state = parse_link(params)
    if expected is None:
        assert state.notes == [] and state.models == ["glove-6b-50d+whiten"]
        return
    assert any(expected in note for note in state.notes), state.notes


def test_gradio_parameters_are_not_ours_to_complain_about() -> None:
    assert parse_link({"__theme": "dark"}).notes == []


class _Request:
    def __init__(self, params: dict):
        self.query_params = params


def test_apply_link_sets_the_tab_and_components() -> None:
    tab, notes, by_slot = sharing.apply_link(_Request({"tab": "sts", "models": "glove-6b-50d", "data": "test"}))
    assert tab == "sts" and notes == ""
    assert by_slot[("sts", "models")]["value"] == ["glove-6b-50d"] and by_slot[("sts", "data")] == "test"
    query_update = sharing.apply_link(_Request({"set": "bag-of-words-traps", "query": "2"}))[2][("explore", "query")]
    assert query_update["value"] == 1 and len(query_update["choices"]) == 16


def test_a_corpus_map_link_opens_explores_corpus_part_with_its_models() -> None:
    state = parse_link({"tab": "corpus", "models": "glove-6b-50d,all-MiniLM-L6-v2,a,b,c"})
    assert state.tab == "corpus" and state.models == ["glove-6b-50d", "all-MiniLM-L6-v2"]
    assert state.notes == ["Ignored unknown model(s) 'a', 'b', 'c'; see the Models tab."]
    tab, notes, by_slot = sharing.apply_link(_Request({"tab": "corpus", "models": "glove-6b-50d"}))
    assert tab == "corpus" and "unknown model" not in notes
    assert by_slot[("corpus", "models")]["value"] == ["glove-6b-50d"] and ("explore", "models") not in by_slot
    assert by_slot[("explore", "mode")]["selected"] == "corpus"
    assert sharing.apply_link(_Request({"tab": "explore"}))[2][("explore", "mode")]["selected"] == "compare"
    assert ("explore", "mode") not in sharing.apply_link(_Request({"tab": "sts"}))[2]
    current = {("corpus", "models"): ["glove-6b-50d"], ("corpus", "source"): "stsb", ("explore", "models"): ["x"]}
    link, note = sharing.copy_link("corpus", current)
    assert link == "?tab=corpus&models=glove-6b-50d" and note == ""
    link, note = sharing.copy_link("corpus", {**current, ("corpus", "source"): "file"})
    assert link == "?tab=corpus&models=glove-6b-50d" and "uploaded file cannot travel in a link" in note


def test_a_step_link_opens_the_presenter_view_at_that_step() -> None:
    link, _ = make_link("talk", step=2)
    assert link == "?tab=talk&step=3"
    state = parse_link({"view": "talk", "step": "3"})
    assert (state.tab, state.step, state.notes) == ("talk", 2, [])
    assert parse_link({"step": "1"}).tab == "talk"  # a step alone means the Talk tab
    tab, notes, by_slot = sharing.apply_link(_Request({"view": "talk", "step": "5"}))
    assert tab == "talk" and notes == "" and by_slot[("talk", "step")] == 4
    assert sharing.copy_link("talk", {("talk", "step"): 4})[0] == "?tab=talk&step=5"
    tab, notes, by_slot = sharing.apply_link(_Request({"view": "talk", "step": "9"}))  # there are eight
    assert tab == "talk" and "Ignored step=9; the presenter view has steps 1 to 8" in notes
    assert ("talk", "step") not in by_slot


def test_a_board_link_opens_the_join_page_or_with_a_step_the_presenter_views_room() -> None:
    assert parse_link({"board": "ABCDE"}).tab == "audience"  # a phone's join link
    assert parse_link({"view": "talk", "board": "ABCDE", "key": "s"}).tab == "audience"  # the board's presenter
    state = parse_link({"view": "talk", "step": "8", "board": "ABCDE", "key": "s"})  # the Talk tab's room step
    assert (state.tab, state.step, state.notes) == ("talk", 7, [])
