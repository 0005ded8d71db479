"""Corpora past 20,000 sentences (issue "a million sentences"): every source format, the shard store
(resumable, content-keyed, fp16 and int8), the sampled layout, clusters, the search index, the large
map kept on disk, the command line, and every kind of bad input as a sentence.

The shipped STS and NLI sentences are the corpus (tens of thousands of real sentences); GloVe keeps it
quick, MiniLM where a transformer matters. A million points and Ray are in the slow tests and
bench/million.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.corpus import library, sources
from sbert_demo.corpus.clusters import cluster
from sbert_demo.corpus.embed import embed_corpus, store_for
from sbert_demo.corpus.large_map import map_large_corpus
from sbert_demo.corpus.layout import layout_rows
from sbert_demo.corpus.search import EXPANSION_SEARCH, CorpusIndex, exact_top
from sbert_demo.corpus.shards import ShardStore, plan, shard_key
from sbert_demo.corpus.sources import LargeCorpus, SourceSpec, read_source
from sbert_demo.encoding.encoder import CHUNK

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shipped_sentences() -> tuple[list[str], list[str]]:
    """Distinct real sentences and their source: the STS benchmark, then NLI premises and hypotheses."""
    from sbert_demo.data.benchmarks import nli_pairs
    from sbert_demo.data.corpora import stsb_corpus

    corpus = stsb_corpus(REPO / "data")
    sentences, labels = list(corpus.sentences), list(corpus.labels)
    seen = set(sentences)
    pairs = nli_pairs(seed=0, data_dir=REPO / "data")
    for text in [*pairs.premises, *pairs.hypotheses]:
        if text not in seen:
            seen.add(text)
            sentences.append(text)
            labels.append("nli")
    return sentences, labels


def write_parquet(path: Path, sentences: list[str], labels: list[str] | None = None, text: str = "text") -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {text: sentences, **({"topic": labels} if labels is not None else {})}
    pq.write_table(pa.table(columns), path)
    return path


# --- sources -------------------------------------------------------------------------------------------

def test_every_format_gives_the_same_corpus(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sentences = ["A cat sleeps on the sofa.", "A kitten naps on the couch.", "Stocks fell sharply.",
                 "Markets slid after the news.", "A cat sleeps on the sofa."]  # a repeat, kept once
    topics = ["pets", "pets", "money", "money", "pets"]
    write_parquet(tmp_path / "c.parquet", sentences, topics)
    shards = tmp_path / "shards"
    shards.mkdir()
    write_parquet(shards / "part-0.parquet", sentences[:2], topics[:2])
    write_parquet(shards / "part-1.parquet", sentences[2:], topics[2:])
    (tmp_path / "c.csv").write_text("text,topic\n" + "".join(f'"{s}",{t}\n' for s, t in zip(sentences, topics)))
    (tmp_path / "c.tsv").write_text("sentence\ttopic\n" + "".join(f"{s}\t{t}\n" for s, t in zip(sentences, topics)))
    (tmp_path / "c.txt").write_text("".join(f"{t} | {s}\n" for s, t in zip(sentences, topics)))
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"text": s, "topic": t}) + "\n" for s, t in zip(sentences, topics)))
    import datasets

    datasets.Dataset.from_dict({"text": sentences, "topic": topics}).save_to_disk(str(tmp_path / "saved"))
    specs = [SourceSpec(path=str(tmp_path / name)) for name in ("c.parquet", "shards", "c.csv", "c.tsv", "c.txt", "c.jsonl")]
    specs += [SourceSpec(dataset="parquet", data_files=(str(tmp_path / "c.parquet"),), split="train"),
              SourceSpec(dataset=str(tmp_path / "saved"))]
    for spec in specs:
        corpus = read_source(spec)
        assert corpus.sentences == sentences[:4] and corpus.labels == topics[:4], spec
        assert corpus.rows == 5 and "1 repeated sentences kept once" in corpus.notes, spec
    assert len({read_source(spec).content_id for spec in specs}) == 1  # the same corpus, whatever its file
    no_labels = read_source(SourceSpec(path=str(tmp_path / "c.parquet"), label_column=""))
    assert no_labels.labels is None and no_labels.content_id != read_source(specs[0]).content_id
    del pa, pq


@pytest.mark.parametrize("name, content, words", [
    ("empty.csv", "", "empty"),
    ("numbers.csv", "text,label\n" + "".join(f"{i * 3.5},x\n" for i in range(50)), "holds numbers, not text"),
    ("no_text.csv", "id,score\n1,2\n3,4\n", "has no text column"),
    ("one.txt", "Just one sentence.\n", "at least two"),
    ("blank.txt", "\u200b\n\u3164\n   \n", "at least two"),
    ("table.xlsx", "not really", "is not a"),
    ("broken.jsonl", '{"text": "A cat."}\nnot json\n', "Line 2"),
])
def test_bad_files_get_a_sentence(tmp_path: Path, name: str, content: str, words: str) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(ValueError, match=words):
        read_source(SourceSpec(path=str(tmp_path / name)))


def test_too_many_rows_and_unreachable_datasets_say_what_to_do(tmp_path: Path) -> None:
    write_parquet(tmp_path / "big.parquet", [f"Sentence number {i}." for i in range(500)])
    with pytest.raises(ValueError, match=r"has 500 rows; a corpus map takes at most 100 sentences. Give a sample"):
        read_source(SourceSpec(path=str(tmp_path / "big.parquet")), max_sentences=100)
    (tmp_path / "big.txt").write_text("".join(f"Sentence number {i}.\n" for i in range(150)))
    with pytest.raises(ValueError, match="more than 100 distinct sentences"):
        read_source(SourceSpec(path=str(tmp_path / "big.txt")), max_sentences=100)
    with pytest.raises(ValueError, match="cannot be reached from here"):
        read_source(SourceSpec(dataset="someone/no-such-dataset"))
    with pytest.raises(ValueError, match="was not found|could not be loaded"):
        read_source(SourceSpec(dataset="parquet", data_files=(str(tmp_path / "missing-*.parquet"),)))
    with pytest.raises(ValueError, match="holds no .parquet"):
        (tmp_path / "empty-folder").mkdir()
        read_source(SourceSpec(path=str(tmp_path / "empty-folder")))


def test_an_opened_corpus_is_kept_and_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_parquet(tmp_path / "c.parquet", [f"Sentence {i} about cats." for i in range(40)], ["x"] * 40)
    first = library.open_corpus(SourceSpec(path=str(path)))
    monkeypatch.setattr(library, "read_source", lambda *a, **k: pytest.fail("read the source again"))
    again = library.open_corpus(SourceSpec(path=str(path)))
    assert again.sentences == first.sentences and again.content_id == first.content_id
    os.utime(path, (time.time() + 10, time.time() + 10))  # a changed file is read again
    monkeypatch.setattr(library, "read_source", read_source)
    assert library.open_corpus(SourceSpec(path=str(path))).content_id == first.content_id


# --- shards and embedding ----------------------------------------------------------------------------

def test_shards_are_keyed_by_content_and_keep_their_vectors(tmp_path: Path) -> None:
    sentences = [f"Sentence {i}." for i in range(10)]
    assert [s.key for s in plan(sentences, 4)] == [s.key for s in plan(list(sentences), 4)]
    assert plan(sentences, 4)[0].key == shard_key(sentences[:4]) != plan(sentences[1:], 4)[0].key
    vectors = np.random.default_rng(0).normal(size=(6, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for dtype, bound in (("fp16", 1e-3), ("int8", 2e-2)):
        store = ShardStore(tmp_path, "model", dtype)
        store.write("k", vectors)
        back = store.read("k", 6)
        assert np.abs(back - vectors).max() < bound and store.read("k", 7) is None, dtype
    store.path("k").write_bytes(store.path("k").read_bytes()[:50])  # cut short: counts as missing
    assert store.read("k") is None and not store.has("k")


def test_an_interrupted_run_continues_from_the_shards_done(shipped_sentences, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.corpus import embed as embed_module

    corpus = LargeCorpus("shipped", shipped_sentences[0][:3000], None)
    calls = []
    real = embed_module.encode

    def failing(*args, **kwargs):
        calls.append(len(args[1]))
        if len(calls) == 4:  # the model loaded (one sentence), two shards written, then
            raise KeyboardInterrupt  # the run stops in the middle
        return real(*args, **kwargs)

    monkeypatch.setattr(embed_module, "encode", failing)
    with pytest.raises(KeyboardInterrupt):
        embed_corpus(corpus, "glove-6b-50d", shard_size=500)
    monkeypatch.setattr(embed_module, "encode", real)
    embedded = embed_corpus(corpus, "glove-6b-50d", shard_size=500)
    assert calls[:3] == [1, 500, 500]
    assert embedded.computed == 3000 - 2 * 500  # two shards were kept: only the other four computed
    assert embed_corpus(corpus, "glove-6b-50d", shard_size=500).computed == 0  # a second open reads them all
    whole = np.concatenate([v for _, v in embedded.vectors()])
    direct = real("glove-6b-50d", corpus.sentences, use_cache=False, fast=True).embeddings
    assert np.min(np.sum(whole * direct, axis=1)) > 0.999  # fp16 on disk: the same vectors


def test_a_full_disk_keeps_what_was_done_and_says_so(shipped_sentences, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = LargeCorpus("shipped", shipped_sentences[0][:2000], None)
    written = []
    real = ShardStore.write

    def full(self, key, vectors):
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(key)
        real(self, key, vectors)

    monkeypatch.setattr(ShardStore, "write", full)
    with pytest.raises(ValueError, match=r"No space left on device\): 1,000 of 2,000 sentences are embedded and kept"):
        embed_corpus(corpus, "glove-6b-50d", shard_size=500)
    monkeypatch.setattr(ShardStore, "write", real)
    # the shard that could not be written is in the embedding cache (a corpus Explore's size shares it): only the
    # last shard is computed again
    assert embed_corpus(corpus, "glove-6b-50d", shard_size=500).computed == 500


@pytest.mark.slow  # ~35 s: a real kill -9 of the CLI mid-run (CI runs it with the slow checks)
def test_killed_in_the_middle_from_the_command_line_it_goes_on(shipped_sentences, tmp_path: Path, isolated) -> None:
    """``kill -9`` while ``embed`` writes shards (MiniLM, PyTorch fp32: slow enough to catch), then the same
    command again: it finishes, computing only what was not written."""
    path = write_parquet(tmp_path / "c.parquet", shipped_sentences[0][:6000])
    env = {**os.environ, "SBERT_DEMO_CACHE": str(isolated.cache_dir), "SBERT_DEMO_PRECISION": "fp32",
           "SBERT_DEMO_BACKEND": "torch", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "sbert_demo", "embed", str(path), "--model", "all-MiniLM-L6-v2",
               "--shard-size", "1000"]
    running = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    shards = isolated.cache_dir / "corpora" / "vectors"
    deadline = time.monotonic() + 240
    while not (shards.exists() and list(shards.rglob("*.npy"))) and time.monotonic() < deadline:
        time.sleep(0.2)
    running.send_signal(signal.SIGKILL)
    running.wait()
    done = len(list(shards.rglob("*.npy")))
    assert 1 <= done < 6, done  # killed after a shard or more, before the last
    finished = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert len(list(shards.rglob("*.npy"))) == 6 and not list(shards.rglob("*.tmp"))
    row = next(line for line in finished.stdout.splitlines() if line.startswith("all-MiniLM-L6-v2"))
    total, computed = (int(x.replace(",", "")) for x in row.split()[1:3])
    # only what was not written before: the shard being written when it was killed may be partly kept in the
    # embedding cache (a corpus Explore's size shares it, CHUNK sentences at a time), the shards after it not at all
    kept = total - 1000 * done - computed
    assert 0 <= kept < 1000 and kept % CHUNK == 0, (total, done, computed)


# --- the map at scale --------------------------------------------------------------------------------

def test_placed_sentences_land_beside_their_neighbours() -> None:
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(4, 24))
    unit = np.concatenate([c + 0.15 * rng.normal(size=(250, 24)) for c in centres]).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    coords, sample = layout_rows(unit, sample_size=200)
    truth = np.repeat(np.arange(4), 250)
    placed = np.setdiff1d(np.arange(1000), sample)
    middles = np.array([coords[sample][truth[sample] == g].mean(axis=0) for g in range(4)])
    nearest = np.argmin(((coords[placed][:, None, :] - middles[None]) ** 2).sum(axis=2), axis=1)
    assert (nearest == truth[placed]).mean() > 0.95  # a placed sentence lands among its own group


def test_clusters_and_search_at_scale(shipped_sentences) -> None:
    sentences = shipped_sentences[0][:12_000]
    embedded = embed_corpus(LargeCorpus("shipped", sentences, None), "glove-6b-50d")
    labels = cluster(embedded, 8)
    assert labels.shape == (12_000,) and set(np.unique(labels)) == set(range(8))
    index = CorpusIndex.open_or_build(embedded)
    queries = [sentences[i] for i in range(0, 12_000, 600)]
    found = index.search(queries, 10)
    # each finds itself first (GloVe gives sentences with the same words the same vector: such a twin may tie);
    # the graph is approximate and built by every core at once, so one of the twenty may be missed (the
    # recall against exact search is checked below)
    first = [(i, hits[:2]) for i, hits in zip(range(0, 12_000, 600), found)]
    assert sum(hits[0][1] > 0.999 for _, hits in first) >= 19, first
    assert sum(hits[0][0] == i for i, hits in first) >= 15, first
    vectors = np.concatenate([v for _, v in embedded.vectors()])[::600]
    exact = exact_top(embedded, vectors, 10)
    approximate = index.search_vectors(vectors, 10)
    recall = np.mean([len(set(e) & {r for r, _ in a}) / 10 for e, a in zip(exact, approximate)])
    assert recall >= 0.9
    assert CorpusIndex.path(embedded).is_file()  # kept: opened again without building
    # every sentence's own neighbours at once (the map view's comparison), itself left out
    each = index.neighbours_of_each(10)
    assert each.shape == (12_000, 10) and not (each == np.arange(12_000)[:, None]).any()
    rows = np.arange(0, 12_000, 600)
    exact_others = exact_top(embedded, vectors, 11)
    recall = np.mean([len(set(e[e != r][:10]) & set(each[r])) / 10 for e, r in zip(exact_others, rows)])
    assert recall >= 0.85
    assert index.index.expansion_search == EXPANSION_SEARCH  # a user's query is searched as wide as before
    # the graph only proposes (an int8 copy): the order and the cosines given are the shards' own vectors'
    unit = embedded.matrix(np.float32)
    for (row, cosine), query in ((hits[0], v) for hits, v in zip(approximate, vectors)):
        assert abs(cosine - float(unit[row] @ query / np.linalg.norm(query))) < 1e-5
    picks = np.array([[11_999, 0], [8_192, 8_191]])
    assert np.array_equal(embedded.rows(picks), unit[picks])  # rows across shards, any shape


@pytest.mark.slow  # ~17 s: a sampled layout end to end
def test_a_large_map_has_todays_shape_and_is_read_back(shipped_sentences, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.corpus import large_map

    sentences, labels = shipped_sentences
    corpus = LargeCorpus("shipped", sentences[:22_000], labels[:22_000], label_name="source")
    result = map_large_corpus(corpus, ["glove-6b-50d"], k=6, sample_size=4_000)
    (model,) = result.models
    assert model.error is None and model.coords.shape == (22_000, 2) and model.clustering.k == 6
    assert "UMAP of 4,000 sampled sentences" in model.note and model.agreement is not None
    data = result.as_json()
    assert len(data["models"][0]["map"]["x"]) == 22_000 and data["n"] == 22_000 and len(data["labels"]) == 22_000
    assert set(data["models"][0]["clusters"]["words"]) == {str(i) for i in range(6)}
    monkeypatch.setattr(large_map, "layout", lambda *a, **k: pytest.fail("laid out again"))
    again = map_large_corpus(corpus, ["glove-6b-50d"], k=6, sample_size=4_000)
    assert again.models[0].cached and np.array_equal(again.models[0].coords, model.coords)


@pytest.mark.slow  # ~11 s: the CLI in a fresh process
def test_the_command_line_maps_a_large_file(shipped_sentences, tmp_path: Path) -> None:
    from sbert_demo import cli

    path = write_parquet(tmp_path / "c.parquet", shipped_sentences[0][:21_000], shipped_sentences[1][:21_000])
    out = tmp_path / "map.json"
    assert cli.main(["map", "--file", str(path), "--models", "glove-6b-50d", "--k", "5", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["n"] > 20_000 and len(data["models"][0]["map"]["y"]) == data["n"] and data["label_name"] == "topic"
    assert cli.main(["embed", str(path), "--model", "glove-6b-50d"]) == 0  # embedded already: read back
    assert cli.main(["embed", str(tmp_path / "nope.parquet"), "--model", "glove-6b-50d"]) == 2
