"""Sentences the app says that must be true (a newcomer's full run found several that were not)."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from sbert_demo.data.records import ScoredPairs
from sbert_demo.ui import sts as sts_tab


def _pairs(n: int) -> ScoredPairs:
    return ScoredPairs([f"A sentence {i}." for i in range(n)], [f"Another one {i}." for i in range(n)],
                       [float(i % 5) for i in range(n)], name="my-pairs.csv")


def test_eight_uploaded_pairs_say_they_are_too_few_to_rank_models() -> None:
    status = sts_tab._status(_pairs(8), ["glove-6b-50d", "all-MiniLM-L6-v2"])
    assert "With only 8 pairs a Spearman is too uncertain to rank models" in status and "±0.72" in status
    assert "too uncertain" not in sts_tab._status(_pairs(1500), ["glove-6b-50d"])
    assert "means nothing" in sts_tab.spearman_uncertainty(3)


def test_the_docs_say_which_runtime_gives_the_reference_numbers() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md").read_text()
    section = text[text.index("## Reference numbers"):]
    assert "PyTorch fp32" in section and "88.12 / 83.44" in section and "OpenVINO bf16" in section
