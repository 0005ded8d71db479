"""Figures: structure, known values and HTML escaping of user text."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from sbert_demo.benchmark.plots import PAPER_STSB_TEST, gold_vs_cosine, sts_bar_chart
from sbert_demo.explore.plots import heatmap, ranking_bars, scatter_map, shared_range
from sbert_demo.plot_style import FAMILY_COLORS, NOISE_COLOR
from sbert_demo.training.curves import training_curves

EVIL = '<b>bold</b> & <a href="javascript:alert(1)">x</a> <img src=x onerror=alert(1)>'


def sentences(n: int) -> list[str]:
    return [EVIL] + [f"Sentence number {i}." for i in range(1, n)]


def similarity(n: int, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors @ vectors.T


def assert_no_raw_user_html(fig: go.Figure) -> None:
    text = fig.to_json()
    assert "<b>bold" not in text and "<a href" not in text and "<img" not in text
    assert "&lt;b&gt;bold&lt;" in text and "&amp; &lt;a href=" in text


# --- heatmap -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "has_text"), [(2, True), (15, True), (16, False), (40, False)])
def test_heatmap_prints_values_only_for_small_matrices(n, has_text):
    fig = heatmap(similarity(n), sentences(n), "model")
    assert (fig.data[0].texttemplate == "%{z:.2f}") is has_text
    assert fig.layout.yaxis.autorange == "reversed"


def test_heatmap_escapes_sentences_in_ticks_hover_and_title():
    fig = heatmap(similarity(3), sentences(3), "Model <script>", groups=["<g>", "a", "a"])
    assert fig.layout.yaxis.ticktext[0].startswith("1. &lt;b&gt;bold&lt;/b&gt;")
    assert fig.layout.yaxis.ticktext[0].endswith("…")
    assert fig.data[0].x[0].startswith("<b>1.</b> [&lt;g&gt;] &lt;b&gt;bold")
    assert fig.layout.title.text == "Model &lt;script&gt;"
    assert "%{y}" in fig.data[0].hovertemplate and "bold" not in fig.data[0].hovertemplate
    assert_no_raw_user_html(fig)


def test_heatmap_applies_order_and_keeps_original_numbers():
    sim = np.array([[1.0, 0.1, 0.9], [0.1, 1.0, 0.2], [0.9, 0.2, 1.0]])
    fig = heatmap(sim, ["a", "b", "a again"], "m", order=[0, 2, 1], groups=["x", "y", "x"])
    np.testing.assert_allclose(fig.data[0].z, [[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
    assert list(fig.layout.xaxis.ticktext) == ["1", "3", "2"]
    assert list(fig.layout.yaxis.ticktext) == ["1. a", "3. a again", "2. b"]
    assert len(fig.layout.shapes) == 2  # one boundary (x|y), drawn across and down


def test_heatmap_duplicates_stay_distinct_and_colour_range_is_used():
    fig = heatmap(np.ones((2, 2)), ["same", "same"], "m", zmin=0.3, zmax=1.0)
    assert len(set(fig.data[0].x)) == 2
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.3, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sim": np.eye(3), "sentences": ["a", "b"]}, "there are 2 sentences"),
        ({"sim": np.eye(2), "sentences": ["a", "b"], "order": [0, 0]}, "every sentence number"),
        ({"sim": np.eye(2), "sentences": ["a", "b"], "groups": ["g"]}, "1 group labels for 2"),
        ({"sim": np.eye(2), "sentences": ["a", "b"], "zmin": 1.0}, "colour range is empty"),
    ],
)
def test_heatmap_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        heatmap(title="m", **kwargs)


def test_long_sentences_are_wrapped_in_hover():
    long = "word " * 60
    fig = heatmap(np.eye(2), [long, "short"], "m")
    first = fig.data[0].x[0]
    assert first.count("<br>") >= 3
    assert all(len(line) <= 70 for line in first.split("<br>"))


@pytest.mark.parametrize(
    ("matrices", "expected"),
    [
        ([np.array([[1, -0.04], [-0.04, 1]]), np.array([[1, 0.5], [0.5, 1]])], (-0.1, 1.0)),
        ([np.array([[1, 0.3, 0.8], [0.3, 1, 0.9], [0.8, 0.9, 1]])], (0.3, 1.0)),
        ([np.array([[1, 0.57], [0.57, 1]]), np.array([[1, 0.62], [0.62, 1]])], (0.5, 1.0)),
        ([np.ones((3, 3))], (0.9, 1.0)),
        ([np.ones((1, 1)), np.zeros((0, 0))], (0.0, 1.0)),
        ([np.full((2, 2), -1.0)], (-1.0, 1.0)),
    ],
)
def test_shared_range(matrices, expected):
    assert shared_range(matrices) == pytest.approx(expected)


def test_shared_range_needs_a_matrix():
    with pytest.raises(ValueError, match="at least one"):
        shared_range([])


# --- ranking, scatter -------------------------------------------------------------------------


def test_ranking_bars_best_on_top_and_escaped():
    fig = ranking_bars("<i>query</i>", [EVIL, "b", "c"], [0.2, 0.9, -0.001], "Ranking")
    bars = fig.data[0]
    assert list(bars.x) == [0.9, 0.2, -0.001]
    assert list(bars.text) == ["0.90", "0.20", "0.00"]
    assert fig.layout.yaxis.autorange == "reversed"
    assert bars.customdata[1].startswith("&lt;b&gt;bold")
    assert fig.layout.title.subtitle.text == "Query: &lt;i&gt;query&lt;/i&gt;"
    assert_no_raw_user_html(fig)


def test_ranking_bars_show_the_top_fifteen_and_pan_to_the_rest():
    n = 480
    fig = ranking_bars("q", sentences(n), np.linspace(-0.2, 1, n), "r")
    assert len(fig.data[0].x) == n  # every sentence is there to pan to
    assert list(fig.layout.yaxis.range) == [14.5, -0.5] and fig.layout.dragmode == "pan"
    assert "top 15 of 480" in fig.layout.title.subtitle.text
    assert fig.layout.height == 120 + 26 * 15
    assert fig.layout.xaxis.range[0] == pytest.approx(-0.35)  # room for the negative bars' labels
    few = ranking_bars("q", sentences(5), np.linspace(0, 1, 5), "r")
    assert few.layout.yaxis.autorange == "reversed" and few.layout.yaxis.range is None


def test_ranking_bars_handles_empty_and_rejects_mismatch():
    assert len(ranking_bars("q", [], [], "t").data[0].x) == 0
    with pytest.raises(ValueError, match="2 scores for 1 items"):
        ranking_bars("q", ["a"], [0.1, 0.2], "t")


def test_scatter_map_one_trace_per_group_in_first_seen_order():
    coords = np.arange(10, dtype=float).reshape(5, 2)
    fig = scatter_map(coords, sentences(5), ["<b>g</b>", "a", "<b>g</b>", "b", "a"], "map",
                      note="Only <5> sentences")
    assert [trace.name for trace in fig.data] == ["&lt;b&gt;g&lt;/b&gt;", "a", "b"]
    assert list(fig.data[0].x) == [0.0, 4.0]
    assert fig.data[0].customdata[0][0].startswith("&lt;b&gt;bold")
    assert fig.layout.title.subtitle.text == "Only &lt;5&gt; sentences"
    assert_no_raw_user_html(fig)


def test_scatter_map_cluster_labels_sorted_with_grey_noise():
    coords = np.zeros((4, 2))
    fig = scatter_map(coords, list("abcd"), np.array([1, -1, 0, 1]), "clusters")
    assert [trace.name for trace in fig.data] == ["noise", "cluster 0", "cluster 1"]
    assert fig.data[0].marker.color == NOISE_COLOR
    assert fig.data[1].marker.color != fig.data[2].marker.color


def test_scatter_map_uses_webgl_for_many_points_and_allows_no_labels():
    fig = scatter_map(np.zeros((1001, 2)), ["s"] * 1001, None, "big")
    assert isinstance(fig.data[0], go.Scattergl) and fig.layout.showlegend is False
    assert isinstance(scatter_map(np.zeros((3, 2)), list("abc"), None, "t").data[0], go.Scatter)


def test_scatter_map_rejects_wrong_shapes():
    with pytest.raises(ValueError, match="there are 3 sentences"):
        scatter_map(np.zeros((2, 2)), list("abc"), None, "t")
    with pytest.raises(ValueError, match="2 colour labels for 3"):
        scatter_map(np.zeros((3, 2)), list("abc"), ["x", "y"], "t")


# --- STS, training -----------------------------------------------------------------------------


def test_sts_bar_chart_colours_families_and_draws_paper_lines():
    rows = [
        {"label": "Avg. GloVe", "family": "naive", "spearman": 58.0},
        {"label": "<b>SBERT</b>", "family": "siamese", "spearman": 77.1},
        {"label": "mine", "family": "fine-tuned", "spearman": float("nan")},
        {"label": "CLS", "family": "naive", "spearman": -12.0},
        {"label": "a cross-encoder", "family": "cross-encoder", "spearman": 80.0},
        {"label": "a static model", "family": "static", "spearman": 66.0},
    ]
    fig = sts_bar_chart(rows)
    bars = {trace.name: trace for trace in fig.data if isinstance(trace, go.Bar)}
    assert {name: trace.marker.color for name, trace in bars.items()} == FAMILY_COLORS
    assert list(bars["naive"].x) == [0, 3] and list(bars["naive"].y) == [58.0, -12.0]
    assert list(bars["fine-tuned"].text) == ["n/a"]
    assert fig.layout.xaxis.ticktext[1] == "&lt;b&gt;SBERT&lt;/b&gt;"
    assert fig.layout.yaxis.range[0] == -20 and fig.layout.yaxis.range[1] == 100
    lines = sorted(shape.y0 for shape in fig.layout.shapes)
    assert lines == sorted(PAPER_STSB_TEST.values())
    labels = {annotation.text for annotation in fig.layout.annotations}
    assert "SBERT-NLI-base (paper): 77.0" in labels and "BERT CLS (paper): 16.5" in labels
    assert {bar.constraintext for bar in bars.values()} == {"none"}  # numbers not shrunk to fit a thin bar


def test_sts_bar_chart_empty_and_without_references():
    assert len(sts_bar_chart([]).layout.shapes) == len(PAPER_STSB_TEST)
    assert len(sts_bar_chart([], references={}).layout.shapes) == 0


def test_the_papers_marks_sit_only_beside_a_run_of_their_split():
    """The paper reports STSb test: its marks are drawn beside a test run, named as test numbers, and
    never beside a dev run or uploaded pairs (whose title says so)."""
    rows = [{"label": "GloVe", "family": "naive", "spearman": 55.6}]
    test = sts_bar_chart(rows, split="test")
    assert len(test.layout.shapes) == len(PAPER_STSB_TEST) and "paper, STSb test" in [t.name for t in test.data]
    for split, where in (("dev", "STSb dev"), (None, "your pairs")):
        other = sts_bar_chart(rows, split=split)
        assert not other.layout.shapes and not other.layout.annotations
        assert other.layout.title.text == f"{where}: Spearman x 100"  # short enough for a phone
        assert "paper reports STSb test only" in other.layout.title.subtitle.text


def test_a_phones_sts_bars_lie_flat_with_their_names_level():
    rows = [{"label": "GloVe average (6B, 50d) + whitened", "family": "naive", "spearman": 63.7},
            {"label": "SBERT all-MiniLM-L6-v2", "family": "siamese", "spearman": 82.0}]
    fig = sts_bar_chart(rows, horizontal=True)
    assert {trace.orientation for trace in fig.data if isinstance(trace, go.Bar)} == {"h"}
    assert fig.layout.yaxis.ticktext[0] == "GloVe average<br>(6B, 50d) +<br>whitened"
    assert not fig.layout.annotations and len(fig.layout.shapes) == len(PAPER_STSB_TEST)  # values in the legend
    assert "SBERT-NLI-base 77.0" in [t.name for t in fig.data][-1]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"label": "x", "family": "local", "spearman": 1.0}, "choose one of naive, siamese, fine-tuned"),
        ({"label": "x", "spearman": 1.0}, "lacks family"),
    ],
)
def test_sts_bar_chart_rejects_bad_rows(row, message):
    with pytest.raises(ValueError, match=message):
        sts_bar_chart([row])


def test_family_colours_match_the_registry():
    entries = pytest.importorskip("sbert_demo.models.entries")
    assert set(FAMILY_COLORS) == set(entries.FAMILIES)


@pytest.mark.parametrize(("n", "trace_type"), [(0, go.Scatter), (3, go.Scatter), (1001, go.Scattergl)])
def test_gold_vs_cosine(n, trace_type):
    gold = np.linspace(0, 5, n)
    fig = gold_vs_cosine(gold, gold / 5, [EVIL] * n, ["b"] * n, "STSb <dev>")
    assert isinstance(fig.data[0], trace_type)
    assert len(fig.data[0].x) == n
    assert fig.layout.title.text == "STSb &lt;dev&gt;"
    if n:
        assert fig.data[0].customdata[0][0].startswith("&lt;b&gt;bold")
        assert_no_raw_user_html(fig)


def test_gold_vs_cosine_rejects_mismatch():
    with pytest.raises(ValueError, match="2 cosine scores for 1 items"):
        gold_vs_cosine([1.0], [0.1, 0.2], ["a"], ["b"], "t")


def test_training_curves_with_data_and_empty():
    fig = training_curves([0, 10, 20], [1.0, 0.5, 0.3], [20], [81.5], title="Run <1>")
    loss, spearman = fig.data
    assert list(loss.y) == [1.0, 0.5, 0.3] and loss.yaxis is None
    assert spearman.yaxis == "y2" and list(spearman.y) == [81.5]
    assert fig.layout.yaxis2.overlaying == "y" and fig.layout.title.text == "Run &lt;1&gt;"
    empty = training_curves([], [], [], [])
    assert len(empty.data) == 2 and empty.layout.annotations[0].text.startswith("No training")
    assert empty.layout.xaxis.title.text == "training step"


def test_training_curves_rejects_mismatch():
    with pytest.raises(ValueError, match="1 loss values for 2 items"):
        training_curves([0, 1], [0.5], [], [])


def test_every_figure_serialises():
    n = 4
    figures = [
        heatmap(similarity(n), sentences(n), "h", groups=list("aabb")),
        ranking_bars("q", sentences(n), np.linspace(0, 1, n), "r"),
        scatter_map(np.zeros((n, 2)), sentences(n), list("aabb"), "s", note="n"),
        sts_bar_chart([{"label": "m", "family": "siamese", "spearman": 80.0}]),
        gold_vs_cosine(np.ones(n), np.ones(n), sentences(n), sentences(n), "g"),
        training_curves([], [], [], []),
    ]
    for fig in figures:
        assert fig.layout.template.layout.paper_bgcolor == "white"
        assert 400 <= fig.layout.height <= 1200
        assert json.loads(fig.to_json())["data"] is not None


def test_figures_carry_a_lean_plotly_white_that_draws_the_same() -> None:
    """Each figure's JSON carries its template: plotly_white trimmed to what this app's trace types read
    (the same defaults for them), at under a quarter of the size, and Explore's figures use no other type."""
    import plotly.io as pio

    from sbert_demo.explore import plots as explore_plots
    from sbert_demo.plot_style import TRACE_TYPES, UNUSED_LAYOUT

    full = pio.templates["plotly_white"].to_plotly_json()
    lean = pio.templates[pio.templates.default].to_plotly_json()
    assert pio.templates.default == "sbert_demo"
    assert all(lean["data"][kind] == full["data"][kind] for kind in TRACE_TYPES)
    assert lean["layout"] == {k: v for k, v in full["layout"].items() if k not in UNUSED_LAYOUT}
    assert len(json.dumps(lean)) * 4 < len(json.dumps(full))
    sentences = [f"sentence number {i}" for i in range(30)]
    sim = np.eye(30)
    figures = [explore_plots.heatmap(sim, sentences, "h"), explore_plots.ranking_bars("q", sentences, sim[0], "r"),
               explore_plots.scatter_map(np.random.default_rng(0).normal(size=(30, 2)), sentences, [i % 3 for i in range(30)], "m")]
    assert {trace.type for figure in figures for trace in figure.data} <= set(TRACE_TYPES)
    assert all(json.loads(figure.to_json())["layout"]["template"] == lean for figure in figures)


@pytest.mark.parametrize("n", [5, 20, 70, 1200])
def test_trusted_figures_are_what_plotly_validation_makes_of_them(n: int) -> None:
    """Explore's per-request figures skip plotly's validation (plot_style.trusted_figure): their JSON must
    be exactly the validated figure's, for every shape of input those builders take."""
    from sbert_demo.explore.similarity import group_order
    from sbert_demo.plot_style import SCATTERGL_MIN_N

    rng = np.random.default_rng(n)
    sentences = [f"<b>sentence</b> {i} & more {'words ' * (i % 7)}" for i in range(n)]
    sim = np.clip(rng.normal(0.3, 0.4, (n, n)), -1, 1)
    sim = (sim + sim.T) / 2
    np.fill_diagonal(sim, 1.0)
    groups = [f"group {i % 3}" for i in range(n)]
    figures = [heatmap(sim, sentences, "h"), heatmap(sim, sentences, "h", column=True, groups=groups,
                                                    order=group_order(groups, n)),
               ranking_bars("q", sentences, sim[0], "r"), ranking_bars("q", sentences, sim[1], "r", labels_outside=True),
               scatter_map(rng.normal(size=(n, 2)), sentences, [i % 4 for i in range(n)], "m"),
               scatter_map(rng.normal(size=(n, 2)), sentences, groups, "m", note="a note")]
    assert any(trace.type == "scattergl" for trace in figures[-1].data) == (n > SCATTERGL_MIN_N)
    for figure in figures:
        validated = go.Figure(figure.to_plotly_json())
        assert json.loads(figure.to_json()) == json.loads(validated.to_json())
