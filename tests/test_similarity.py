"""Cosine matrices, summaries, rankings and group ordering, checked against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sbert_demo.explore.similarity import SimilaritySummary, cosine_matrix, group_order, rank_against, summarize

# a and b are 45 degrees apart; c and d point the same way (d is longer); {a, b} is orthogonal to
# {c, d}. Expected cosine: ab = 1/sqrt(2), cd = 1, everything across = 0.
TOY = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]])
R = 1 / math.sqrt(2)
TOY_SIM = np.array([[1, R, 0, 0], [R, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]])


def test_cosine_matrix_of_toy_vectors():
    sim = cosine_matrix(TOY)
    assert sim.dtype == np.float32
    np.testing.assert_allclose(sim, TOY_SIM, atol=1e-6)
    assert np.array_equal(sim, sim.T)


def test_cosine_matrix_zero_rows_and_opposites():
    sim = cosine_matrix(np.array([[0.0, 0.0], [2.0, 0.0], [-3.0, 0.0]]))
    np.testing.assert_array_equal(sim, [[0, 0, 0], [0, 1, -1], [0, -1, 1]])


def test_cosine_matrix_is_clipped_and_diagonal_exact():
    vectors = np.random.default_rng(0).normal(size=(50, 7)).astype(np.float32)
    sim = cosine_matrix(vectors)
    assert np.all(np.diag(sim) == 1.0)
    assert sim.min() >= -1.0 and sim.max() <= 1.0
    assert np.array_equal(sim, sim.T)


def test_cosine_matrix_of_nothing_is_empty():
    assert cosine_matrix(np.zeros((0, 4))).shape == (0, 0)


@pytest.mark.parametrize(
    ("embeddings", "message"),
    [
        (np.array([1.0, 2.0]), "2-D array"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN or infinite"),
        (np.array([[np.inf, 0.0], [0.0, 1.0]]), "NaN or infinite"),
    ],
)
def test_cosine_matrix_rejects_bad_input(embeddings, message):
    with pytest.raises(ValueError, match=message):
        cosine_matrix(embeddings)


def test_summary_within_between_gap_by_hand():
    summary = summarize(cosine_matrix(TOY), ["x", "x", "y", "y"])
    assert summary.n == 4
    assert summary.mean_pairwise == pytest.approx((R + 1) / 6, abs=1e-6)
    assert summary.within_group == pytest.approx((R + 1) / 2, abs=1e-6)
    assert summary.between_group == pytest.approx(0.0, abs=1e-6)
    assert summary.gap == pytest.approx((R + 1) / 2, abs=1e-6)


@pytest.mark.parametrize(
    ("groups", "within", "between"),
    [
        (None, None, None),
        (["a", "b", "c", "d"], None, (R + 1) / 6),  # all singletons: no within pairs
        (["a", "a", "a", "a"], (R + 1) / 6, None),  # one group: no between pairs
        (["a", "b", "a", "b"], 0.0, (R + 1) / 4),
    ],
)
def test_summary_none_when_not_computable(groups, within, between):
    summary = summarize(TOY_SIM, groups)
    for value, expected in ((summary.within_group, within), (summary.between_group, between)):
        assert value == (None if expected is None else pytest.approx(expected))
    assert (summary.gap is None) == (within is None or between is None)


def test_summary_of_two_sentences():
    assert summarize(np.array([[1.0, 0.5], [0.5, 1.0]])) == SimilaritySummary(2, 0.5, None, None, None)


@pytest.mark.parametrize(
    ("sim", "groups", "message"),
    [
        (np.ones((1, 1)), None, "at least two"),
        (np.ones((0, 0)), None, "at least two"),
        (np.ones((2, 3)), None, "square"),
        (np.eye(3), ["a", "b"], "2 group labels for 3 sentences"),
    ],
)
def test_summary_rejects_bad_input(sim, groups, message):
    with pytest.raises(ValueError, match=message):
        summarize(sim, groups)


def test_rank_against_sorts_by_score_then_index():
    sim = np.array([[1, 0.5, 0.9, 0.5], [0.5, 1, 0, 0], [0.9, 0, 1, 0], [0.5, 0, 0, 1]])
    assert rank_against(sim, 0) == [(2, 0.9), (1, 0.5), (3, 0.5)]
    assert rank_against(sim, 3) == [(0, 0.5), (1, 0.0), (2, 0.0)]
    assert [i for i, _ in rank_against(cosine_matrix(TOY), 2)] == [3, 0, 1]


@pytest.mark.parametrize("query", [-1, 4, 10, 1.0, True, "0"])
def test_rank_against_rejects_bad_query(query):
    with pytest.raises(ValueError):
        rank_against(np.eye(4), query)


@pytest.mark.parametrize(
    ("groups", "n", "expected"),
    [
        (["b", "a", "b", "c", "a"], 5, [0, 2, 1, 4, 3]),
        (["x", "x", "y"], 3, [0, 1, 2]),
        (None, 4, [0, 1, 2, 3]),
        (None, 0, []),
        ([], 0, []),
    ],
)
def test_group_order(groups, n, expected):
    assert group_order(groups, n) == expected


def test_group_order_rejects_wrong_length():
    with pytest.raises(ValueError, match="give one per sentence"):
        group_order(["a"], 2)
