"""A cross-encoder trained here (a tiny BERT, seconds), its place in the registry as a pair scorer,
and what cross-encoding costs (timed runs, so a change of n shows in the times)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sbert_demo import cli
from sbert_demo.benchmark.cost import check_n, measure_cost, pairs
from sbert_demo.benchmark.evaluation import evaluate
from sbert_demo.config import reload_settings
from sbert_demo.data.benchmarks import sts_split
from sbert_demo.explore.exploration import explore
from sbert_demo.models.kinds import EMBEDS, SCORES_PAIRS, kind_of
from sbert_demo.models.registry import get_registry

NAME = "tiny-ce"


@pytest.fixture
def trained_cross_encoder(tiny_sbert_in_models: str, tiny_sts_dir: Path, monkeypatch: pytest.MonkeyPatch,
                          isolated) -> Path:
    """A cross-encoder trained from the CLI on the tiny STS data, starting from the tiny BERT."""
    monkeypatch.setenv("SBERT_DEMO_DATA", str(tiny_sts_dir))
    reload_settings()
    code = cli.main(["train", "--base", tiny_sbert_in_models, "--objective", "cross-encoder", "--output", NAME,
                     "--epochs", "2", "--batch-size", "2", "--lr", "1e-3"])
    assert code == 0
    return isolated.models_dir / NAME


def test_it_trains_from_the_cli_and_loads_with_plain_cross_encoder(trained_cross_encoder: Path) -> None:
    from sentence_transformers import CrossEncoder

    card = json.loads((trained_cross_encoder / "sbert_demo_card.json").read_text())
    assert card["kind"] == "cross-encoder" and card["objective"] == "cross-encoder"
    assert card["before"] is None and set(card["after"]) == {"dev", "test"}  # no "before": an untrained head
    plain = CrossEncoder(str(trained_cross_encoder))  # the library alone loads it
    dev = sts_split("dev")
    expected = plain.predict(list(zip(dev.sentences1, dev.sentences2)), convert_to_numpy=True)
    result = evaluate(NAME, dev)
    assert result.ok and np.allclose(result.cosine, expected, atol=1e-5)  # the app's scores are the library's
    assert card["after"]["dev"] == pytest.approx(result.spearman, abs=1e-6)


def test_it_joins_the_registry_as_a_pair_scorer_and_views_that_need_vectors_refuse_it(trained_cross_encoder) -> None:
    entry = get_registry().get(NAME)
    kind = kind_of(entry)
    assert entry.kind == "cross-encoder" and kind.can(SCORES_PAIRS) and not kind.can(EMBEDS)
    result = explore(["A cat sleeps.", "A kitten naps.", "Stocks fell."], None, [NAME, "glove-6b-50d"])
    refused = result.models[0]
    assert "gives no sentence vectors, so it cannot draw heatmaps and maps" in refused.error
    again = evaluate(NAME, sts_split("dev"))  # pair scores come back from the cache
    assert again.cached


def test_an_embedding_model_cannot_train_a_cross_encoder_from_word_vectors(capsys) -> None:
    assert cli.main(["train", "--base", "glove-6b-50d", "--objective", "cross-encoder", "--output", "x"]) == 2
    assert "reads both sentences with a transformer" in capsys.readouterr().err


def test_the_cost_comes_from_timed_runs(tiny_sbert_in_models: str) -> None:
    small = measure_cost(200, tiny_sbert_in_models)
    large = measure_cost(2_000, tiny_sbert_in_models)
    for report in (small, large):
        ce, bi = report.cross_encoder, report.bi_encoder
        assert ce["pairs_timed"] == 256 and not ce["trained"] and ce["key"] is None
        assert ce["extrapolated_s"] == pytest.approx(pairs(report.n) / ce["pairs_per_s"], rel=1e-3)
        assert bi["total_s"] == pytest.approx(bi["encode_s"] + bi["mining_s"], abs=2e-3)
        assert report.rerank["reranked"] is None and len(report.rerank["retrieved"]) == 20  # untrained: no scores
        i, j, cosine = bi["top_pairs"][0]
        assert i != j and cosine >= bi["top_pairs"][-1][2]
        # Each line passes through its measured dot: the curve and the dot are the same measurement
        # (retrieve + re-rank: one query against the corpus embedded once, as the dot was timed).
        at_n = report.curve(sizes=(report.n,))
        dots = {"cross_encoder": ce["extrapolated_s"], "bi_encoder": bi["total_s"],
                "retrieve_rerank": report.rerank["retrieve_s"] + report.rerank["rerank_s"]}
        for line, dot in dots.items():
            assert at_n[line][0] == pytest.approx(dot, rel=0.02), (line, at_n[line][0], dot)
    assert large.bi_encoder["encode_s"] > small.bi_encoder["encode_s"]  # really encoded, not from the cache
    tenfold = large.curve(sizes=(20_000,))["retrieve_rerank"][0]  # a query grows with the search only: far below
    assert tenfold < large.curve(sizes=(20_000,))["bi_encoder"][0] / 10  # encoding the whole corpus again
    # All pairs: ten times the sentences, a hundred times the work, at the rate each run measured (two timings on a
    # shared machine differ, so their ratio alone is no check: the work is compared, each at its own rate).
    work = [r.cross_encoder["extrapolated_s"] * r.cross_encoder["pairs_per_s"] for r in (small, large)]
    assert work[1] / work[0] == pytest.approx(pairs(2_000) / pairs(200), rel=1e-3) and work[1] / work[0] > 100
    json.dumps(large.as_json())


def test_cost_with_a_trained_cross_encoder_re_ranks(trained_cross_encoder: Path, tiny_sbert_in_models: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_DATA", "")  # the shipped corpus again (the model trained on tiny STS data)
    reload_settings()
    report = measure_cost(300, tiny_sbert_in_models, NAME, query="A man is playing a guitar.")
    assert report.cross_encoder["trained"] and report.cross_encoder["key"] == NAME
    reranked = report.rerank["reranked"]
    assert sorted(i for i, _ in reranked) == sorted(i for i, _ in report.rerank["retrieved"])
    scores = [score for _, score in reranked]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("n", [0, 1, 200_000, 2.5, "many"])
def test_cost_refuses_sizes_it_cannot_measure(n) -> None:
    with pytest.raises(ValueError, match="sentences|whole number"):
        check_n(n)


def test_cost_refuses_a_bi_encoder_as_the_cross_encoder(tiny_sbert_in_models: str) -> None:
    with pytest.raises(ValueError, match="embeds sentences; choose a cross-encoder"):
        measure_cost(100, tiny_sbert_in_models, "glove-6b-50d")


def test_the_cost_view_shows_the_measurements(tiny_sbert_in_models: str) -> None:
    pytest.importorskip("gradio")
    from sbert_demo.ui import cost as cost_tab

    summary, figure, found, reranked, data = cost_tab.run_cost(300, tiny_sbert_in_models, "", "a man plays guitar")
    assert "300" in summary and "pairs/s" in summary and "untrained" in summary
    assert [trace.name for trace in figure.data[:3]][0].startswith("cross-encoder")
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "log"
    assert "The most similar pairs among all 44,850" in found and "Re-ranking needs a trained cross-encoder" in reranked
    assert data["n"] == 300 and data["cross_encoder"]["pairs_timed"] == 256
    choices = cost_tab.cross_encoder_choices()
    assert choices[0][1] == "" and all(not kind_of(get_registry().get(key)).can(EMBEDS) for _, key in choices[1:])


def test_the_cost_plot_keeps_its_time_marks_on_the_log_axis() -> None:
    """The 1 s / 1 min / 1 h / 1 day marks sit at their seconds on the log axis (an annotation there
    takes the log: "1 min" at y=60 would stretch the axis to 10^60), and the n axis is labelled per decade."""
    import math

    from sbert_demo.benchmark.plots import cost_plot

    curve = {"n": [100, 1_000, 10_000, 100_000], "cross_encoder": [1.0, 100.0, 1e4, 1e6],
             "bi_encoder": [0.1, 1.0, 10.0, 100.0], "retrieve_rerank": [0.01, 0.02, 0.05, 0.1]}
    figure = cost_plot(curve, 2_000, {"cross_encoder": 40.0, "bi_encoder": 0.5},
                       {"n": 10_000, "cross_encoder_s": 65 * 3600, "bi_encoder_s": 5}, "a CPU")
    marks = {a.text: a.y for a in figure.layout.annotations if a.text in ("1 s", "1 min", "1 h", "1 day")}
    assert marks == {"1 s": 0.0, "1 min": math.log10(60), "1 h": math.log10(3600), "1 day": math.log10(86400)}
    assert list(figure.layout.xaxis.tickvals) == [100, 1_000, 10_000, 100_000]
    assert list(figure.layout.xaxis.ticktext) == ["100", "1,000", "10,000", "100,000"]
