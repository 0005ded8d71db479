"""The tools for assistants answer JSON text with the rounding their docstrings promise (MCP hands a tool's
answer over as text: a dict arrived as a Python literal, and float32 cosines as 0.913100004196167)."""

from __future__ import annotations

import json

from sbert_demo.ui import tools


def test_compare_sentences_answers_json_rounded_to_four_decimals() -> None:
    text = tools.compare_sentences("A man plays a guitar.\nSomeone plays the guitar.\nStocks fell.", "glove-6b-50d")
    answer = json.loads(text)
    cosines = answer["models"][0]["cosine"]
    assert len(cosines) == 3 and cosines[0][0] == 1.0
    assert all(len(repr(value).split(".")[-1]) <= 4 for row in cosines for value in row), cosines
    assert answer["models"][0]["most_similar_pair"][:2] == [0, 1]


def test_available_models_answers_json() -> None:
    rows = json.loads(tools.available_models())
    glove = next(row for row in rows if row["key"] == "glove-6b-50d")
    assert glove["available"] is True and glove["why_not"] is None
    assert any(row["available"] is False and row["why_not"] for row in rows)  # BERT base offline says why
