"""The app's tools for AI assistants: named endpoints with plain arguments and JSON answers.

Each tool answers JSON text (``json.loads`` reads it; MCP hands a tool's answer over as text, and Gradio
wrote a dict there as a Python literal), its numbers rounded as the docstring says.

``python app.py --mcp`` serves them over MCP (``/gradio_api/mcp/``; Gradio reads each docstring's
description and ``Args:`` for the tool's schema); they are also ordinary API endpoints
(``gradio_client``). Bad arguments are answered with the same sentences the page shows.
"""

from __future__ import annotations

import json

import gradio as gr
import numpy as np

from ..benchmark.evaluation import evaluate_many
from ..data.benchmarks import sts_split
from ..data.sentences import parse_sentences
from ..encoding.encoder import encode
from ..explore.similarity import cosine_matrix
from ..models.kinds import EMBEDS
from ..models.per_model import resolve_for
from ..models.registry import get_registry
from .common import tool_errors

MAX_TOOL_MODELS = 4
SPLITS = ("dev", "test")


def _models(models: str | list[str] | None) -> list[str]:
    keys = [k.strip() for k in (models.split(",") if isinstance(models, str) else models or []) if k and k.strip()]
    if not keys:
        raise ValueError("Name at least one model, e.g. 'glove-6b-50d,all-MiniLM-L6-v2' (available_models lists them).")
    if len(keys) > MAX_TOOL_MODELS:
        raise ValueError(f"Compare at most {MAX_TOOL_MODELS} models at a time; {len(keys)} were given.")
    return keys


def as_json(answer: object) -> str:
    """A tool's answer as JSON text (non-ASCII sentences kept as they are)."""
    return json.dumps(answer, ensure_ascii=False)


@tool_errors
def compare_sentences(sentences: str, models: str = "glove-6b-50d,all-MiniLM-L6-v2") -> str:
    """Compare sentences under several embedding models: every pair's cosine similarity per model.

    Naive models (averaged GloVe, BERT pooling) rate unrelated sentences alike; siamese SBERT models
    separate paraphrases from mere topic overlap. Use this to show or check that on any sentences.

    Args:
        sentences: two to fifty sentences, one per line.
        models: comma-separated model keys, e.g. "glove-6b-50d,all-MiniLM-L6-v2" (see available_models).

    Returns:
        JSON: {"sentences": [...], "models": [{"key", "label", "cosine": n x n matrix rounded to 4 decimals,
        "most_similar_pair": [i, j, cosine]}]}
    """
    parsed = parse_sentences(sentences or "")
    texts = parsed.sentences
    if len(texts) < 2 or len(texts) > 50:
        raise ValueError(f"Give two to fifty sentences, one per line; {len(texts)} were given.")
    out = []
    for key in _models(models):
        model = resolve_for(key, EMBEDS, "compare sentences")
        sim = cosine_matrix(encode(model, texts, fast=False).embeddings).astype(np.float64)  # rounds to 4 decimals
        upper = np.triu_indices(len(texts), 1)
        best = int(np.argmax(sim[upper]))
        i, j = int(upper[0][best]), int(upper[1][best])
        out.append({"key": model.entry.key, "label": model.entry.label, "cosine": np.round(sim, 4).tolist(),
                    "most_similar_pair": [i, j, round(float(sim[i, j]), 4)]})
    return as_json({"sentences": texts, "models": out})


@tool_errors
def sts_spearman(models: str = "glove-6b-50d,all-MiniLM-L6-v2", split: str = "dev") -> str:
    """Spearman correlation (x100) between each model's cosine similarities and human similarity scores on
    the STS benchmark (the measure of the SBERT paper, Reimers & Gurevych 2019).

    Args:
        models: comma-separated model keys (see available_models); cross-encoders score the pairs directly.
        split: "dev" (1,500 pairs) or "test" (1,379 pairs; the paper reports test).

    Returns:
        JSON: {"split", "pairs", "models": [{"key", "label", "spearman", "pearson", "runtime"} or {"key", "error"}]},
        Spearman and Pearson x100 rounded to 2 decimals
    """
    if split not in SPLITS:
        raise ValueError(f"The split is 'dev' or 'test', not {split!r}.")
    pairs = sts_split(split)
    rows = []
    for result in evaluate_many(_models(models), pairs):
        row = {"key": result.key, "label": result.label}
        if result.error:
            row["error"] = result.error
        else:
            row.update(spearman=round(100 * result.spearman, 2), pearson=round(100 * result.pearson, 2),
                       runtime=result.runtime)
        rows.append(row)
    return as_json({"split": split, "pairs": len(pairs), "models": rows})


@tool_errors
def available_models() -> str:
    """The models this app can use: key, family (naive, siamese, static, cross-encoder, fine-tuned), and
    whether it is available here (and if not, why).

    Returns:
        JSON: [{"key", "label", "family", "available", "why_not"}]
    """
    registry = get_registry()
    rows = []
    for entry in registry.entries():
        status = registry.availability(entry)
        rows.append({"key": entry.key, "label": entry.label, "family": entry.family, "available": status.available,
                     "why_not": None if status.available else status.reason})
    return as_json(rows)


def build() -> None:
    """Register the tools (no components: they are endpoints only)."""
    gr.api(compare_sentences, api_name="compare_sentences", concurrency_id="explore")
    gr.api(sts_spearman, api_name="sts_spearman", concurrency_id="sts", concurrency_limit=1)
    gr.api(available_models, api_name="available_models", queue=False)
