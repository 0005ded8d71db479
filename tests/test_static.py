"""Static embeddings distilled here: each step is model2vec's own (its functions, loaded from the
installed package), and the saved model's vectors are what sentence-transformers' StaticEmbedding and
model2vec's StaticModel compute from its files. A tiny BERT is the teacher (seconds)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.encoding.encoder import encode
from sbert_demo.models import distill
from sbert_demo.models.entries import ModelEntry
from sbert_demo.models.kinds import EMBEDS, kind_of
from sbert_demo.models.registry import get_registry

TEXTS = ["A man is playing a guitar.", "the cat sat on the mat", "Stocks fell sharply today!", "🎸 guitar 🎸"]


@pytest.fixture(scope="module")
def m2v():
    """model2vec's distillation functions (its ``distill`` package needs skeletoken, which pins an older
    transformers: the module is loaded on its own, from the installed file)."""
    model2vec = pytest.importorskip("model2vec")
    path = Path(model2vec.__file__).parent / "distill" / "inference.py"
    spec = importlib.util.spec_from_file_location("model2vec_distill_inference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_weights_and_pca_are_model2vecs(m2v) -> None:
    np.testing.assert_allclose(distill.zipf_sif_weights(1000), m2v.compute_weights(1000, sif_coefficient=1e-4))
    vectors = np.random.default_rng(0).normal(size=(400, 48)).astype(np.float32)
    expected = m2v.apply_pca(vectors.copy(), 32) * m2v.compute_weights(400, sif_coefficient=1e-4)[:, None]
    # float32 eigh (model2vec) and SVD (scikit-learn) agree to rounding on the last, near-degenerate components
    np.testing.assert_allclose(distill.distil_matrix(vectors, dims=32), expected, atol=1e-4)


def test_token_vectors_are_model2vecs(m2v, tiny_bert: Path) -> None:
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert))
    model = AutoModel.from_pretrained(str(tiny_bert)).eval()
    ids = list(range(5, 300))
    prefix, suffix = distill.special_tokens_around(tokenizer)
    assert (prefix, suffix) == ([tokenizer.cls_token_id], [tokenizer.sep_token_id])
    expected = m2v.create_embeddings(model, [[*prefix, i, *suffix] for i in ids], device="cpu",
                                     pad_token_id=tokenizer.pad_token_id, pooling="mean")
    np.testing.assert_allclose(distill.token_vectors(model, tokenizer, ids), expected, atol=1e-5)


@pytest.fixture
def static_tiny(tiny_sbert_in_models: str) -> str:
    """A static model distilled from the tiny sentence-transformers model (registered like a built-in)."""
    entry = ModelEntry(key="static-tiny", label="Static, distilled from tiny-sbert", family="static", kind="static",
                       source=tiny_sbert_in_models)
    get_registry().register(entry)
    return entry.key


def test_the_distilled_model_is_what_the_libraries_compute_from_its_files(static_tiny: str) -> None:
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    ours = encode(static_tiny, TEXTS).embeddings
    folder = get_registry().availability(static_tiny).location
    assert distill.distilled_from(folder) and folder == folder.parent.parent / "static" / static_tiny
    plain = SentenceTransformer(str(folder), device="cpu").encode(TEXTS, convert_to_numpy=True)
    np.testing.assert_allclose(ours, plain, atol=1e-6)  # sentence-transformers' StaticEmbedding
    model2vec = pytest.importorskip("model2vec")
    static = SentenceTransformer(str(folder), device="cpu")[0]
    matrix = static.embedding.weight.detach().numpy()
    m2v_model = model2vec.StaticModel(vectors=matrix, tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")),
                                      normalize=True)
    np.testing.assert_allclose(ours, m2v_model.encode(TEXTS, use_multiprocessing=False), atol=1e-5)
    assert matrix.shape[1] == 32  # the teacher's 32 dimensions (PCA keeps at most the teacher's)


def test_the_static_kind_embeds_follows_its_teacher_and_is_made_once(static_tiny: str, tiny_sbert_in_models,
                                                                     isolated, monkeypatch) -> None:
    registry = get_registry()
    assert kind_of(registry.get(static_tiny)).can(EMBEDS)
    first = encode(static_tiny, TEXTS[:2], use_cache=False).embeddings
    calls = []
    monkeypatch.setattr(distill, "_distil_into", lambda *a: calls.append(a))
    from sbert_demo.encoding import model_cache

    model_cache.model_cache.reset()
    again = encode(static_tiny, TEXTS[:2], use_cache=False).embeddings
    assert calls == [] and np.allclose(first, again)  # read from the cache folder, not distilled again
    monkeypatch.undo()
    from sbert_demo.models.loading import resolve

    before = resolve(static_tiny).identity
    config = isolated.models_dir / tiny_sbert_in_models / "config_sentence_transformers.json"
    config.write_text(config.read_text() + " ")  # the teacher changed: another identity, distilled again
    assert resolve(static_tiny).identity != before
    model_cache.model_cache.reset()
    encode(static_tiny, TEXTS[:1], use_cache=False)
    folder = get_registry().availability(static_tiny).location
    assert distill.distilled_from(folder) == resolve(tiny_sbert_in_models).identity


def test_a_static_model_says_why_when_its_teacher_cannot_load() -> None:
    entry = ModelEntry(key="static-bert", label="Static from BERT", family="static", kind="static",
                       source="bert-base-uncased-mean")
    get_registry().register(entry)
    status = get_registry().availability("static-bert")
    assert not status.available and "distilled from BERT base (mean)" in status.reason and "Hub" in status.reason


# --- WordLlama: a static table from its pip wheel ---------------------------------------------------

def test_wordllamas_vectors_are_what_wordllama_computes_from_its_wheels_files() -> None:
    """The kind loads the wheel's table and tokenizer as StaticEmbedding; WordLlama's own inference
    class on the same files gives the same vectors. (Its ``WordLlama.load()`` looks for the bundled
    tokenizer under ``tokenizer/`` while the wheel has ``tokenizers/``, so offline it tries the Hub.)"""
    pytest.importorskip("wordllama")
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    from sbert_demo.models.kinds.wordllama import KEY, TABLE, package_files

    weights, tokenizer = package_files()
    theirs = WordLlamaInference(load_file(str(weights))[TABLE], Tokenizer.from_file(str(tokenizer)))
    texts = [*TEXTS, "x" * 5000]  # WordLlama cuts nothing, and neither does the kind
    ours = encode(KEY, texts)
    np.testing.assert_allclose(ours.embeddings, theirs.embed(texts, norm=True), atol=1e-6)
    assert ours.embeddings.shape == (5, 256) and not ours.truncated
    entry = get_registry().get(KEY)
    assert entry.family == "static" and kind_of(entry).can(EMBEDS) and not kind_of(entry).matmul_heavy
    similar, unrelated = (float(ours.embeddings[0] @ ours.embeddings[i]) for i in (3, 2))
    assert similar > unrelated  # "🎸 guitar 🎸" is nearer the guitar player than falling stocks
