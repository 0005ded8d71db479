"""A new kind of model is one module and one registration line; views ask capabilities, never names.

The dummy kind below scores sentence pairs by their word overlap and makes no sentence vectors.
Registered, it appears in the registry and in the pickers of views that score pairs (the STS
benchmark, where it runs), is left out of the pickers of views that need sentence vectors, and is
refused by them, with the kind's own sentence, when asked for anyway (through the API, or a link).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from sbert_demo.benchmark.evaluation import evaluate_many
from sbert_demo.data.records import ScoredPairs
from sbert_demo.explore.exploration import explore
from sbert_demo.models import kinds
from sbert_demo.models.entries import Availability, ModelEntry
from sbert_demo.models.kinds import EMBEDS, SCORES_PAIRS, ModelKind
from sbert_demo.models.registry import get_registry

KEY = "word-overlap"


class WordOverlapKind(ModelKind):
    """Jaccard overlap of the two sentences' lower-cased words: a pair scorer without vectors."""

    name = "word-overlap"
    description = "word-overlap pair scorer"
    capabilities = frozenset({SCORES_PAIRS})
    matmul_heavy = False
    token_limited = False

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return (ModelEntry(key=KEY, label="Word overlap (Jaccard)", family="naive", kind=self.name,
                           source="-", builtin=True),)

    def availability(self, entry: ModelEntry, registry) -> Availability:
        return Availability(True, location=None, hub_id=None)

    def identity_files(self, entry, status, registry) -> tuple:
        return ()

    def load(self, entry, status, device, notify=None, registry=None):
        return "jaccard"

    def score_pairs(self, model, firsts, seconds, progress=None) -> np.ndarray:
        def words(text: str) -> set[str]:
            return set(text.lower().replace(".", " ").split())

        return np.array([len(words(a) & words(b)) / len(words(a) | words(b)) for a, b in zip(firsts, seconds)])


@pytest.fixture
def overlap_kind() -> Iterator[ModelKind]:
    kind = kinds.register_kind(WordOverlapKind())  # the one registration line
    try:
        yield kind
    finally:
        kinds.unregister_kind(kind.name)


PAIRS = ScoredPairs(["A man plays a guitar.", "A cat sleeps.", "Stocks fell sharply.", "A dog runs."],
                    ["A man plays the guitar.", "The cat is asleep.", "A woman is cooking.", "The dog runs fast."],
                    [5.0, 3.5, 0.0, 3.8], "tiny")


def test_a_registered_kind_is_in_the_registry(overlap_kind) -> None:
    registry = get_registry()
    assert KEY in registry.keys() and registry.get(KEY).kind == overlap_kind.name
    assert registry.availability(KEY).available


def test_pickers_offer_it_only_where_its_capability_is_needed(overlap_kind) -> None:
    pytest.importorskip("gradio")
    from sbert_demo.ui.common import model_choices

    assert KEY in {key for _, key in model_choices(needs=SCORES_PAIRS)}
    assert KEY not in {key for _, key in model_choices(needs=EMBEDS, fixes=True)}
    assert not any(key.startswith(f"{KEY}+") for _, key in model_choices(fixes=True))  # no fixes of a scorer


def test_the_sts_benchmark_runs_it(overlap_kind) -> None:
    (result,) = evaluate_many([KEY], PAIRS)
    assert result.error is None and result.n == 4
    expected = [4 / 5, 1 / 6, 0.0, 2 / 5]  # Jaccard of each pair's words
    np.testing.assert_allclose(result.cosine, expected)
    assert result.spearman == pytest.approx(1.0)  # the same order as the gold scores 5, 3.5, 0, 3.8


def test_a_view_that_needs_sentence_vectors_refuses_it_with_a_sentence(overlap_kind) -> None:
    result = explore(["A cat sleeps.", "A kitten naps.", "Stocks fell."], None, [KEY, "glove-6b-50d"])
    refused, glove = result.models
    assert glove.ok and refused.key == KEY
    assert refused.error == ("Word overlap (Jaccard) is a word-overlap pair scorer and gives no sentence vectors, "
                             "so it cannot draw heatmaps and maps of sentences.")
    assert any("Word overlap (Jaccard) was skipped" in note for note in result.notes)
    with pytest.raises(ValueError, match="gives no sentence vectors"):
        explore(["A cat sleeps.", "A kitten naps."], None, [KEY])
