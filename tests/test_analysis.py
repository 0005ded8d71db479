"""Why naive embeddings fail: training-free fixes, exact pair explanations, the cone, before/after.

Known answers: the fixes' linear algebra on constructed data; explanations that must sum to the
model's own cosine (plain sentence-transformers) on the tiny BERT and on GloVe; the reference
STSb numbers of GloVe's fixes (fast: GloVe encodes STSb in seconds); GloVe's cone.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sbert_demo.config import reload_settings

from sbert_demo import cli
from sbert_demo.analysis import anisotropy as cone
from sbert_demo.analysis import explanation, plots
from sbert_demo.analysis.training_effect import trained_models, training_effect
from sbert_demo.encoding import fixes
from sbert_demo.encoding.encoder import encode, fingerprint
from sbert_demo.models import variants
from sbert_demo.models.registry import get_registry

GLOVE = "glove-6b-50d"
A, B = "A man is playing a guitar.", "Someone plays the guitar on stage."


# --- variants: keys and registry ------------------------------------------------------------------

@pytest.mark.parametrize("text, kind, dims", [("center", "center", None), ("abtt3", "abtt", 3),
                                              ("whiten", "whiten", None), ("whiten128", "whiten", 128),
                                              ("WHITEN", "whiten", None)])
def test_parse_fix(text: str, kind: str, dims: int | None) -> None:
    assert variants.parse_fix(text) == variants.Fix(kind, dims)


@pytest.mark.parametrize("text", ["whitening", "abtt", "abtt0", "center2", "", "whiten99999"])
def test_bad_fix_is_refused_with_the_valid_ones(text: str) -> None:
    with pytest.raises(ValueError, match="center|between 1 and"):
        variants.parse_fix(text)


def test_registry_knows_variants_of_every_model() -> None:
    registry = get_registry()
    entry = registry.get(f"{GLOVE}+whiten")
    assert (entry.key, entry.base, entry.fix, entry.family) == (f"{GLOVE}+whiten", GLOVE, "whiten", "naive")
    assert entry.label == "GloVe average (6B, 50d) + whitened"
    assert registry.availability(entry).available
    assert registry.get(f"{GLOVE}+abtt3").label.endswith("all-but-the-top 3")
    assert f"{GLOVE}+whiten" not in registry.keys()  # variants are asked for, not listed as models
    with pytest.raises(ValueError, match="Unknown model 'nope'"):
        registry.get("nope+whiten")
    with pytest.raises(ValueError, match=r"Unknown model 'glove-6b-50d\+sharpen'.*\+whiten"):
        registry.get(f"{GLOVE}+sharpen")
    with pytest.raises(ValueError, match="one fix at a time"):
        registry.get(f"{GLOVE}+center+whiten")


def test_variants_cannot_be_trained() -> None:
    from sbert_demo.training import config_for

    with pytest.raises(ValueError, match="train glove-6b-50d itself"):
        config_for(f"{GLOVE}+whiten", "nli-softmax", "x")


# --- the fixes' linear algebra --------------------------------------------------------------------

def _cloud(n: int = 400, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)) * [5, 3, 2, 1, 0.5] + [4, 4, 4, 4, 4]


def test_center_subtracts_the_mean() -> None:
    x = _cloud()
    fitted = fixes.fit("center", x)
    assert np.allclose(fitted.mean, x.mean(axis=0)) and fitted.matrix is None
    out = fitted.apply(x[:3])
    expected = (x[:3] - x.mean(axis=0)) / np.linalg.norm(x[:3] - x.mean(axis=0), axis=1, keepdims=True)
    assert np.allclose(out, expected, atol=1e-6)


def test_all_but_the_top_removes_the_top_directions() -> None:
    x = _cloud()
    fitted = fixes.fit("abtt2", x)
    centred = x - x.mean(axis=0)
    mapped = centred @ fitted.matrix
    _, _, directions = np.linalg.svd(centred, full_matrices=False)
    # Nothing is left along the two widest directions; the other three are untouched.
    assert np.abs(mapped @ directions[:2].T).max() < 1e-9
    assert np.allclose(mapped @ directions[2:].T, centred @ directions[2:].T, atol=1e-9)


def test_all_but_the_top_removes_scikit_learns_principal_components() -> None:
    from sklearn.decomposition import PCA

    x = _cloud(seed=3)
    components = PCA(n_components=3, svd_solver="full").fit(x).components_  # the library's own path
    fitted = fixes.fit("abtt3", x)
    centred = x - x.mean(axis=0)
    expected = centred - centred @ components.T @ components
    assert np.allclose(centred @ fitted.matrix, expected, atol=1e-9)


def test_the_fixes_of_a_model_share_one_encoding_of_the_collection(isolated, monkeypatch, tmp_path) -> None:
    collection = tmp_path / "fit.txt"
    collection.write_text("\n".join(f"The {w} is on the table by the door." for w in
                                    ("cat", "dog", "cup", "book", "phone", "pen", "plate", "knife", "hat", "bag")))
    monkeypatch.setenv("SBERT_DEMO_FIT_SENTENCES", str(collection))
    reload_settings()
    passes = []
    original = fixes.Moments.of
    monkeypatch.setattr(fixes.Moments, "of", classmethod(lambda cls, v: passes.append(len(v)) or original(v)))
    for fix in ("center", "abtt3", "whiten"):
        encode(f"{GLOVE}+{fix}", ["A man plays the guitar.", "Someone is cooking rice."])
    assert passes == [10]  # one encoding of the ten sentences, one pass over its vectors, three fits


def test_whitening_gives_identity_covariance_and_keeps_n_dims() -> None:
    x = _cloud()
    fitted = fixes.fit("whiten", x)
    assert np.allclose(np.cov((x - fitted.mean) @ fitted.matrix, rowvar=False), np.eye(5), atol=1e-8)
    kept = fixes.fit("whiten3", x)
    assert kept.matrix.shape == (5, 3) and kept.apply(x).shape == (400, 3)
    with pytest.raises(ValueError, match="asks for 9 dimensions, but the model's vectors have 5"):
        fixes.fit("whiten9", x)
    with pytest.raises(ValueError, match="at least 10 sentences"):
        fixes.fit("center", x[:3])


def test_fitted_fix_survives_a_restart_and_a_damaged_file(isolated) -> None:
    calls = []

    def build():
        calls.append(1)
        return fixes.fit("whiten", _cloud())

    first = fixes.cached_fit("key", build)
    fixes.fitted_fixes.clear()  # a new process: read from disk
    again = fixes.cached_fit("key", build)
    assert len(calls) == 1 and np.allclose(first.matrix, again.matrix)
    for path in (isolated.cache_dir / "fixes").glob("*.npz"):
        path.write_bytes(b"not a zip")
    fixes.fitted_fixes.clear()
    fixes.cached_fit("key", build)
    assert len(calls) == 2


# --- variants through encode and eval (GloVe: the whole STSb train in seconds) --------------------

def test_variant_vectors_are_the_base_vectors_through_the_fit(isolated, monkeypatch, tmp_path) -> None:
    collection = tmp_path / "fit.txt"
    sentences = [f"A {w} is on the table." for w in ("cat", "dog", "cup", "book", "phone", "pen", "plate",
                                                       "knife", "hat", "bag", "lamp", "key")]
    collection.write_text("\n".join(sentences))
    monkeypatch.setenv("SBERT_DEMO_FIT_SENTENCES", str(collection))
    reload_settings()
    texts = ["A man plays the guitar.", "Someone is cooking rice."]
    base = encode(GLOVE, texts).embeddings
    fitted = encode(f"{GLOVE}+center", texts)
    mean = encode(GLOVE, sentences).embeddings.astype(np.float64).mean(axis=0)
    expected = (base - mean) / np.linalg.norm(base - mean, axis=1, keepdims=True)
    assert np.allclose(fitted.embeddings, expected, atol=1e-5)
    assert "center fitted on fit.txt (12 sentences)" in fitted.runtime
    other = fingerprint(f"{GLOVE}+center")
    collection.write_text("\n".join(sentences[::-1]))
    assert fingerprint(f"{GLOVE}+center") != other  # another collection, another fingerprint


def test_eval_of_glove_fixes_matches_the_reference_numbers(tmp_path) -> None:
    out = tmp_path / "fixes.json"
    keys = [GLOVE, f"{GLOVE}+center", f"{GLOVE}+abtt3", f"{GLOVE}+whiten"]
    assert cli.main(["eval", "--models", ",".join(keys), "--split", "test", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    measured = {key: rows[key]["spearman"] * 100 for key in keys}
    reference = {GLOVE: 55.60, f"{GLOVE}+center": 58.31, f"{GLOVE}+abtt3": 61.06, f"{GLOVE}+whiten": 63.70}
    for key, expected in reference.items():
        assert measured[key] == pytest.approx(expected, abs=0.3), key
    assert "whiten fitted on STSb train (11,498 sentences)" in rows[f"{GLOVE}+whiten"]["runtime"]


# --- exact pair explanations ----------------------------------------------------------------------

def _plain_cosine(model, a: str, b: str) -> float:
    vectors = model.encode([a, b], convert_to_numpy=True)
    return float(vectors[0] @ vectors[1] / (np.linalg.norm(vectors[0]) * np.linalg.norm(vectors[1])))


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_contributions_sum_to_plain_sentence_transformers_cosine(add_tiny_bert, tiny_bert, plain_sbert,
                                                                  pooling: str) -> None:
    entry = add_tiny_bert(pooling)
    result = explanation.explain_model(entry.key, "the cat sat on the mat", "a dog sat on the rug")
    assert result.exact and result.method == f"{pooling} pooling (exact)"
    assert result.tokens_a[0] == "[CLS]" and result.tokens_a[-1] == "[SEP]"  # pooled, so shown
    assert result.special_a[0] and not result.special_a[1]
    assert result.contributions.shape == (len(result.tokens_a), len(result.tokens_b))
    assert math.isclose(result.contributions.sum(), result.cosine, abs_tol=1e-4)
    assert math.isclose(result.cosine, _plain_cosine(plain_sbert(tiny_bert, pooling), "the cat sat on the mat",
                                                     "a dog sat on the rug"), abs_tol=1e-3)
    if pooling == "max":  # one token pair per dimension: at most `dim` cells are non-zero
        assert np.count_nonzero(result.contributions) <= 32


def test_cls_pooling_gets_leave_one_out_deltas(add_tiny_bert, tiny_bert, plain_sbert) -> None:
    entry = add_tiny_bert("cls")
    a, b = "the cat sat on the mat", "a dog sat on the rug"
    result = explanation.explain_model(entry.key, a, b)
    assert not result.exact and result.contributions is None and "CLS pooling" in result.why_not_exact
    model = plain_sbert(tiny_bert, "cls")
    assert math.isclose(result.cosine, _plain_cosine(model, a, b), abs_tol=1e-3)
    # "cat" is token 2 of A ([CLS] the cat ...): its delta is the cosine of A without it.
    assert result.tokens_a[2] == "cat"
    without = _plain_cosine(model, "the sat on the mat", b)
    assert math.isclose(result.leave_one_out_a[2], without - result.cosine, abs_tol=1e-3)
    assert math.isnan(result.leave_one_out_a[0])  # [CLS] itself is not left out
    row = result.as_json()
    assert row["exact"] is False and row["contributions"] is None and len(row["leave_one_out_b"]) == len(row["tokens_b"])


def test_leave_one_out_through_a_fix_skips_the_tokens_not_left_out(add_tiny_bert, tmp_path, monkeypatch) -> None:
    collection = tmp_path / "fit.txt"
    collection.write_text("\n".join(f"the {w} sat on the mat" for w in ("cat", "dog", "man", "boy", "girl", "bird",
                                                                       "horse", "cow", "fish", "mouse", "car", "bus")))
    monkeypatch.setenv("SBERT_DEMO_FIT_SENTENCES", str(collection))
    reload_settings()
    entry = add_tiny_bert("cls")
    result = explanation.explain_model(f"{entry.key}+center", "the cat sat on the mat", "a dog sat on the rug")
    assert not result.exact
    assert math.isnan(result.leave_one_out_a[0]) and math.isnan(result.leave_one_out_a[-1])  # [CLS], [SEP]
    assert not np.isnan(result.leave_one_out_a[1:-1]).any()
    own = encode(f"{entry.key}+center", ["the cat sat on the mat", "a dog sat on the rug"]).embeddings
    assert math.isclose(result.cosine, float(own[0] @ own[1]), abs_tol=1e-3)


def test_glove_and_its_whitened_variant_are_exact() -> None:
    for key in (GLOVE, f"{GLOVE}+whiten"):
        result = explanation.explain_model(key, A, B)
        own = encode(key, [A, B]).embeddings
        assert result.exact and result.tokens_a == ["man", "playing", "guitar"]  # stop words dropped
        assert math.isclose(result.contributions.sum(), result.cosine, abs_tol=1e-4)
        assert math.isclose(result.cosine, float(own[0] @ own[1]), abs_tol=1e-3), key
    shares = explanation.explain_model(GLOVE, A, B).shares()
    top = explanation.explain_model(GLOVE, A, B).top_pairs(1)[0]
    assert (top[0], top[1]) == (2, 1) and shares["identical words"] == pytest.approx(top[2])  # guitar-guitar
    assert shares["special tokens"] == 0.0


def test_shares_of_special_tokens_and_stop_words(add_tiny_bert) -> None:
    entry = add_tiny_bert("mean")
    result = explanation.explain_model(entry.key, "the cat", "the cat")
    c = result.contributions  # tokens: [CLS] the cat [SEP]
    shares = result.shares()
    special = c[0, :].sum() + c[3, :].sum() + c[1:3, 0].sum() + c[1:3, 3].sum()
    assert shares["special tokens"] == pytest.approx(special)
    assert shares["stop words"] == pytest.approx(c[1, 1] + c[1, 2] + c[2, 1])  # "the" in either
    assert shares["identical words"] == pytest.approx(c[1, 1] + c[2, 2])


@pytest.mark.parametrize("a, b, expected", [
    ("", B, "Sentence A is empty"),
    (A, "   ", "Sentence B is empty"),
    (A, 5, "Sentence B must be text, not int"),
    ("x" * 20_001, B, "20,001 characters"),
])
def test_bad_sentences_are_refused(a, b, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        explanation.explain_pair([GLOVE], a, b)


def test_hostile_sentences_get_sentences_per_model(add_tiny_bert) -> None:
    entry = add_tiny_bert("mean")
    long = " ".join(["word"] * 2000)
    results = explanation.explain_pair([GLOVE, entry.key], long, B)
    assert "has 2,000 tokens" in results[0].error and "Shorten it" in results[0].error
    assert results[1].notes and "reads only the first 64" in results[1].notes[0]
    emoji = explanation.explain_pair([GLOVE], "🎸🎸", B)[0]
    assert "knows none of the words of sentence A" in emoji.error
    one_word = explanation.explain_model(GLOVE, "guitar", "guitar")
    assert one_word.cosine == pytest.approx(1.0) and one_word.contributions.shape == (1, 1)
    html = explanation.explain_model(entry.key, "<b>cat</b>", "the cat")
    figure = plots.contribution_heatmap(html.contributions, html.tokens_a, html.tokens_b, "t")
    assert all("<b>" not in label for label in figure.data[0].y)


def test_explain_pair_limits_models() -> None:
    with pytest.raises(ValueError, match="at most 4 models"):
        explanation.explain_pair([GLOVE, "a", "b", "c", "d"], A, B)
    with pytest.raises(ValueError, match="at least one model"):
        explanation.explain_pair([], A, B)


def test_explain_cli_writes_the_documented_json(tmp_path, capsys) -> None:
    out = tmp_path / "explain.json"
    assert cli.main(["explain", "--models", f"{GLOVE},{GLOVE}+whiten", "--a", A, "--b", B, "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert set(rows) == {GLOVE, f"{GLOVE}+whiten"}
    for row in rows.values():
        assert {"cosine", "tokens_a", "tokens_b", "contributions", "exact"} <= set(row) and row["exact"]
        assert math.isclose(np.sum(row["contributions"]), row["cosine"], abs_tol=1e-4)
    assert "guitar   guitar" in capsys.readouterr().out
    assert cli.main(["explain", "--models", "nope", "--a", A, "--b", B]) == 2


# --- the cone -------------------------------------------------------------------------------------

def test_random_pairs_are_fixed_and_never_a_sentence_with_itself() -> None:
    pairs = cone.random_pairs(50, 2000, seed=3)
    assert (pairs[:, 0] != pairs[:, 1]).all() and pairs.max() < 50
    assert (pairs == cone.random_pairs(50, 2000, seed=3)).all()


def test_auc_known_answers() -> None:
    base = dict(key="k", label="k", family="naive", random=np.zeros(3))
    assert cone.Anisotropy(similar=np.array([0.9, 0.8]), unrelated=np.array([0.1, 0.2]), **base).auc == 1.0
    assert cone.Anisotropy(similar=np.array([0.5, 0.5]), unrelated=np.array([0.5, 0.5]), **base).auc == 0.5


def test_glove_lives_in_a_cone_and_whitening_opens_it(tmp_path, capsys) -> None:
    out = tmp_path / "cone.json"
    assert cli.main(["anisotropy", "--models", f"{GLOVE},{GLOVE}+whiten", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert rows[GLOVE]["mean_random_cosine"] == pytest.approx(0.50, abs=0.02)
    assert rows[GLOVE]["n_random"] == 2000 and rows[GLOVE]["n_similar"] > 1000
    assert abs(rows[f"{GLOVE}+whiten"]["mean_random_cosine"]) < 0.05
    assert rows[f"{GLOVE}+whiten"]["auc_similar_vs_unrelated"] > rows[GLOVE]["auc_similar_vs_unrelated"] > 0.85
    results = cone.anisotropy_many([GLOVE, "nope"])
    assert results[1].error and "Unknown model" in results[1].error and results[1].key == "nope"
    figure = plots.anisotropy_histograms([results[0]])
    assert [trace.name for trace in figure.data] == list(plots.HISTOGRAM_COLORS)


# --- before / after training ----------------------------------------------------------------------

def test_training_effect_compares_a_trained_model_with_its_base(tiny_sbert_in_models, isolated) -> None:
    card = {"base": GLOVE, "before": {"dev": 0.6552, "test": 0.5561}, "after": {"dev": 0.6808, "test": 0.5878}}
    (isolated.models_dir / tiny_sbert_in_models / "sbert_demo_card.json").write_text(json.dumps(card))
    assert (tiny_sbert_in_models, tiny_sbert_in_models) in [(k, k) for _, k in trained_models()]
    sentences = ["A man plays the guitar.", "Someone plays a guitar.", "The stock market fell."]
    effect = training_effect(tiny_sbert_in_models, sentences)
    glove = encode(GLOVE, sentences).embeddings
    assert np.allclose(effect.before, glove @ glove.T, atol=1e-5)
    tiny = encode(tiny_sbert_in_models, sentences).embeddings
    assert np.allclose(effect.after, tiny @ tiny.T, atol=1e-5)
    assert [(row.split, row.before, row.after) for row in effect.scores()] == [("dev", 0.6552, 0.6808),
                                                                              ("test", 0.5561, 0.5878)]
    moved = effect.moved_pairs()
    assert len(moved) == 3 and abs(moved[0][3] - moved[0][2]) >= abs(moved[-1][3] - moved[-1][2])
    figure = plots.difference_heatmap(effect.before, effect.after, sentences, "diff")
    assert np.allclose(np.diag(figure.data[0].z), 0) and figure.data[0].zmid == 0


def test_training_effect_needs_a_model_trained_here() -> None:
    with pytest.raises(ValueError, match="no record of a base model"):
        training_effect("all-MiniLM-L6-v2", ["a b", "c d"])


# --- a machine made ready before the first visitor --------------------------------------------------

def test_prepare_loads_each_model_on_both_paths_and_says_why_one_cannot(capsys) -> None:
    from sbert_demo.explore.prepare import prepare

    prepared, umap_s = prepare([GLOVE, "bert-base-uncased-mean"], maps=False)
    glove, bert = prepared
    assert (glove.key, glove.error) == (GLOVE, None) and umap_s is None
    assert glove.lossless.startswith("PyTorch fp32") and glove.fast.startswith("PyTorch fp32")
    assert "needs the Hugging Face Hub" in bert.error and not bert.lossless  # offline: no BERT here
    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.encoding.encoder import cached_share

    dev = sts_split("dev")  # the STS tab's first run finds every STSb dev embedding made already
    assert cached_share(GLOVE, [*dev.sentences1, *dev.sentences2]) == 1.0
    assert cached_share(GLOVE, ["A sentence STSb dev does not have, about the preparation."]) == 0.0
    assert cli.main(["prepare", "--models", "no-such-model"]) == 2
    assert "Unknown model 'no-such-model'" in capsys.readouterr().err
