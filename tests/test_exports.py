"""Exports: embeddings as .npy / .csv / Embedding Projector TSVs and the STS table as CSV.

The Projector pair must parse back to the very same float32 vectors, the .npy must equal what
``encode`` (and so the API) returns, and user text must not break the TSV columns.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.encoding.encoder import encode
from sbert_demo.explore import exports


def read_projector(vector_file, metadata_file) -> tuple[np.ndarray, list[list[str]]]:
    """The vectors and metadata rows of a Projector TSV pair, read as the Embedding Projector does."""
    vectors = np.loadtxt(vector_file, delimiter="\t", dtype=np.float32, ndmin=2)
    with metadata_file.open(encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle]
    return vectors, rows

SENTENCES = ["A cat sleeps.", "A dog\tbarks\nloudly.", "<b>Stocks</b> fell, \"sharply\"."]
GROUPS = ["pets", "pets", "money"]


def test_projector_files_parse_back_to_the_same_vectors(tmp_path: Path) -> None:
    vectors = np.random.default_rng(0).normal(size=(3, 7)).astype(np.float32)
    files = exports.export_embeddings("My set", {"glove-6b-50d+whiten": vectors}, SENTENCES, GROUPS, root=tmp_path)
    names = [f.name for f in files]
    assert names == ["My-set__glove-6b-50d+whiten.npy", "My-set__glove-6b-50d+whiten.csv",
                     "My-set__glove-6b-50d+whiten__vectors.tsv", "My-set__glove-6b-50d+whiten__metadata.tsv"]
    back, metadata = read_projector(files[2], files[3])
    assert np.array_equal(back, vectors)
    assert metadata == [["sentence", "group"], ["A cat sleeps.", "pets"], ["A dog barks loudly.", "pets"],
                        ["<b>Stocks</b> fell, \"sharply\".", "money"]]
    assert np.array_equal(np.load(files[0]), vectors)
    with files[1].open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:3] == ["sentence", "group", "d0"] and rows[2][0] == "A dog\tbarks\nloudly."  # kept, quoted
    assert np.array_equal(np.array(rows[1][2:], dtype=np.float32), vectors[0])


def test_metadata_without_groups_has_no_header(tmp_path: Path) -> None:
    vectors = np.eye(3, dtype=np.float32)
    files = exports.export_embeddings("x", {"m": vectors}, SENTENCES, None, root=tmp_path)
    assert read_projector(files[2], files[3])[1] == [["A cat sleeps."], ["A dog barks loudly."],
                                                             ["<b>Stocks</b> fell, \"sharply\"."]]


def test_npy_equals_the_embeddings_explore_uses() -> None:
    files = exports.export_models("pets", ["glove-6b-50d"], SENTENCES, GROUPS)
    assert np.array_equal(np.load(files[0]), encode("glove-6b-50d", SENTENCES, fast=True).embeddings)


def test_bad_exports_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="run a comparison first"):
        exports.export_embeddings("x", {}, SENTENCES, root=tmp_path)
    with pytest.raises(ValueError, match="2 vectors for 3 sentences"):
        exports.export_embeddings("x", {"m": np.eye(2)}, SENTENCES, root=tmp_path)
    with pytest.raises(ValueError, match="at least one model"):
        exports.export_models("x", [], SENTENCES)
    with pytest.raises(ValueError, match="run the benchmark first"):
        exports.write_table_csv("sts", ["a"], [])


def test_old_export_folders_are_cleaned_up(tmp_path: Path) -> None:
    old = tmp_path / f"{exports.PREFIX}old"
    old.mkdir()
    hour_ago = time.time() - 2 * exports.KEEP_S
    os.utime(old, (hour_ago, hour_ago))
    exports.export_embeddings("x", {"m": np.eye(3)}, SENTENCES, root=tmp_path)
    assert not old.exists() and len(list(tmp_path.glob(f"{exports.PREFIX}*"))) == 1


def test_explore_and_sts_handlers_write_files() -> None:
    from sbert_demo.ui import explore as explore_tab
    from sbert_demo.ui import sts as sts_tab

    example = explore_tab.EXAMPLE_SETS["paraphrase-questions"]
    files = explore_tab.export_run(example.text, ["glove-6b-50d"], example.key)
    assert Path(files[0]).name == "paraphrase-questions__glove-6b-50d.npy"
    edited = explore_tab.export_run(example.text + "\nOne more line.", ["glove-6b-50d"], example.key)
    assert Path(edited[0]).name == "my-sentences__glove-6b-50d.npy"
    table = list(sts_tab.run_sts("test", None, ["glove-6b-50d"], ["whiten"]))[-1][1]
    update = sts_tab.table_csv(table, "test")
    assert update["visible"]
    path = Path(update["value"])
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert path.name == "sts-test-results.csv" and rows[0] == sts_tab.HEADERS
    assert [row[:3] for row in rows[1:]] == [row[:3] for row in table["data"]]
