"""The Why tab's handlers: what the page shows for pair explanations, the cone, before/after
training, training-free fix rows in the STS tab, and sentences (not tracebacks) for bad input."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from sbert_demo.ui import sts as sts_tab
from sbert_demo.ui import why

GLOVE = "glove-6b-50d"


def test_explain_shows_one_card_and_one_map_per_model(add_tiny_bert) -> None:
    tiny = add_tiny_bert("cls").key
    summary, *maps = why.run_explain("A man plays a guitar.", "<img src=x onerror=alert(1)> guitar",
                                     [GLOVE, f"{GLOVE}+whiten", tiny])
    assert summary.count('class="why-card"') == 3 and "<img" not in summary
    assert "mean pooling (exact)" in summary and "Not exact: CLS pooling" in summary
    assert [m["visible"] for m in maps] == [True, True, True, False]
    glove, whitened, cls = (m["value"] for m in maps[:3])
    # Exact maps share one colour range, centred on 0; the CLS model gets leave-one-out bars.
    assert glove.data[0].zmax == whitened.data[0].zmax == -glove.data[0].zmin and glove.data[0].zmid == 0
    assert cls.data[0].type == "bar" and "Approximate" in cls.layout.title.subtitle.text


@pytest.mark.parametrize("a, b, expected", [
    ("", "A sentence.", "Sentence A is empty"),
    ("A sentence.", None, "Sentence B must be text, not NoneType"),
])
def test_explain_bad_input_is_a_sentence(a, b, expected: str) -> None:
    with pytest.raises(gr.Error, match=expected):
        why.run_explain(a, b, [GLOVE])


def test_explain_unexplainable_model_is_skipped_with_its_reason() -> None:
    summary, *maps = why.run_explain("🎸", "guitar", [GLOVE])
    assert "Skipped glove-6b-50d" in summary and "knows none of the words" in summary
    assert not any(m["visible"] for m in maps)


def test_cone_table_and_histograms() -> None:
    summary, figure = why.run_cone([GLOVE, f"{GLOVE}+whiten"], "train")
    assert summary.count("<tr>") == 3 and "0.50" in summary
    assert len(figure.data) == 6  # three histograms per model
    with pytest.raises(gr.Error, match="Choose the STSb split"):
        why.run_cone([GLOVE], "validation")
    with pytest.raises(gr.Error, match="at most 4 models"):
        why.run_cone([GLOVE] + [f"{GLOVE}+whiten{n}" for n in range(1, 5)], "train")


def test_before_after_with_a_trained_model(tiny_sbert_in_models, isolated) -> None:
    card = {"base": GLOVE, "before": {"dev": 0.6552}, "after": {"dev": 0.6808}}
    (isolated.models_dir / tiny_sbert_in_models / "sbert_demo_card.json").write_text(json.dumps(card))
    assert why.refresh_trained(None)["value"] == tiny_sbert_in_models
    summary, before, after, difference = why.run_before_after(
        tiny_sbert_in_models, "A man plays the guitar.\nSomeone plays a guitar.\n<b>Stocks</b> fell.")
    assert "65.52" in summary and "68.08" in summary and "+2.56" in summary and "<b>Stocks" not in summary
    assert before.layout.title.text.startswith("Before: GloVe") and difference.data[0].zmid == 0
    with pytest.raises(gr.Error, match="Choose a model trained here"):
        why.run_before_after(None, "a\nb")
    with pytest.raises(gr.Error, match="no record of a base model"):
        why.run_before_after(GLOVE, "a b\nc d")


def test_sts_tab_adds_fix_rows_beside_each_model() -> None:
    assert sts_tab.check_models([GLOVE, "all-MiniLM-L6-v2"], ["center", "whiten"]) == [
        GLOVE, f"{GLOVE}+center", f"{GLOVE}+whiten",
        "all-MiniLM-L6-v2", "all-MiniLM-L6-v2+center", "all-MiniLM-L6-v2+whiten"]
    assert sts_tab.check_models([f"{GLOVE}+whiten"], ["center"]) == [f"{GLOVE}+whiten"]  # no fix of a fix
    with pytest.raises(ValueError, match="Unknown training-free fix 'sharpen'"):
        sts_tab.check_models([GLOVE], ["sharpen"])
    with pytest.raises(ValueError, match="make 24 rows; at most 16"):
        sts_tab.check_models([GLOVE] + [f"m{i}" for i in range(5)], ["center", "abtt3", "whiten"])
