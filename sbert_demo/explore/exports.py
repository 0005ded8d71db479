"""Files to take home from an Explore run: embeddings as ``.npy`` / ``.csv`` and Embedding Projector TSVs.

For each model, in one fresh folder under the system's temporary directory:

* ``<set>__<model>.npy`` — the (n, dim) float32 matrix, one row per sentence, as the API returns it;
* ``<set>__<model>.csv`` — sentence, group, then one column per dimension (``d0`` …);
* ``<set>__<model>__vectors.tsv`` and ``<set>__<model>__metadata.tsv`` — what
  projector.tensorflow.org's "Load" asks for: tab-separated vectors without a header, and a
  metadata table whose header row names its columns (``sentence``, ``group``).

Folders older than :data:`KEEP_S` are removed whenever a new export is written, so a long-running
server does not fill its disk. Tabs and line breaks inside sentences become spaces in the TSVs
(the Projector splits on them); the ``.csv`` keeps the text as it is (quoted).
"""

from __future__ import annotations

import csv
import re
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

PREFIX = "sbert-demo-export-"
KEEP_S = 3600.0
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(text: str, limit: int = 60) -> str:
    """A file-name piece: letters, digits and ``._+-`` only.

    >>> safe_name("glove-6b-50d+whiten"), safe_name("My set / v2")
    ('glove-6b-50d+whiten', 'My-set-v2')
    """
    return _UNSAFE.sub("-", text).strip("-.")[:limit] or "export"


def _flat(text: str) -> str:
    return " ".join(str(text).split())


def clean_old(root: Path | None = None, keep_s: float = KEEP_S) -> None:
    """Remove export folders older than ``keep_s`` seconds."""
    root = root or Path(tempfile.gettempdir())
    cutoff = time.time() - keep_s
    for folder in root.glob(f"{PREFIX}*"):
        try:
            if folder.is_dir() and folder.stat().st_mtime < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def write_projector(folder: Path, stem: str, vectors: np.ndarray, sentences: Sequence[str],
                    groups: Sequence[str] | None) -> list[Path]:
    """``<stem>__vectors.tsv`` and ``<stem>__metadata.tsv`` for the Embedding Projector."""
    vector_file, metadata_file = folder / f"{stem}__vectors.tsv", folder / f"{stem}__metadata.tsv"
    np.savetxt(vector_file, vectors, delimiter="\t", fmt="%.9g")
    with metadata_file.open("w", encoding="utf-8", newline="") as out:
        if groups is None:  # one column: the Projector wants no header then
            out.writelines(f"{_flat(s)}\n" for s in sentences)
        else:
            out.write("sentence\tgroup\n")
            out.writelines(f"{_flat(s)}\t{_flat(g)}\n" for s, g in zip(sentences, groups))
    return [vector_file, metadata_file]


def write_csv(path: Path, vectors: np.ndarray, sentences: Sequence[str], groups: Sequence[str] | None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["sentence", "group", *(f"d{i}" for i in range(vectors.shape[1]))])
        for i, sentence in enumerate(sentences):
            writer.writerow([sentence, groups[i] if groups else "", *(f"{x:.9g}" for x in vectors[i])])
    return path


def export_embeddings(set_name: str, embeddings: Mapping[str, np.ndarray], sentences: Sequence[str],
                      groups: Sequence[str] | None = None, root: Path | None = None) -> list[Path]:
    """Write every model's files into a new folder; return the paths (four per model)."""
    if not embeddings:
        raise ValueError("There are no embeddings to export: run a comparison first.")
    for key, vectors in embeddings.items():
        if vectors.shape[0] != len(sentences):
            raise ValueError(f"{key} has {vectors.shape[0]} vectors for {len(sentences)} sentences.")
    if groups is not None and len(groups) != len(sentences):
        raise ValueError(f"There are {len(groups)} groups for {len(sentences)} sentences.")
    clean_old(root)
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=root))
    files: list[Path] = []
    for key, vectors in embeddings.items():
        stem = f"{safe_name(set_name)}__{safe_name(key)}"
        vectors = np.asarray(vectors, dtype=np.float32)
        np.save(folder / f"{stem}.npy", vectors)
        files += [folder / f"{stem}.npy", write_csv(folder / f"{stem}.csv", vectors, sentences, groups),
                  *write_projector(folder, stem, vectors, sentences, groups)]
    return files


def export_models(set_name: str, model_keys: Sequence[str], sentences: Sequence[str],
                  groups: Sequence[str] | None = None, progress=None) -> list[Path]:
    """Embed ``sentences`` with each model as Explore does (same runtime, from the cache after a
    run) and write their files; ``progress(fraction, what)`` hears each model start."""
    from ..encoding.encoder import encode
    from ..models.registry import requested_keys

    keys = requested_keys(model_keys)
    if not keys:
        raise ValueError("Choose at least one model to export.")
    embeddings = {}
    for i, key in enumerate(keys):
        if progress:
            progress(i / len(keys), f"{key}: embeddings")
        embeddings[key] = encode(key, list(sentences), fast=True).embeddings
    return export_embeddings(set_name, embeddings, sentences, groups)


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: object) -> object:
    """Text a spreadsheet would run as a formula (``=HYPERLINK(...)``, ``+1``, ``@SUM``) kept as text by a
    leading apostrophe; numbers stay numbers.

    >>> spreadsheet_safe("=1+1"), spreadsheet_safe("-0.5"), spreadsheet_safe("-1+cmd|' /C calc'!A0"), spreadsheet_safe("A.")
    ("'=1+1", '-0.5', "'-1+cmd|' /C calc'!A0", 'A.')
    """
    if not isinstance(cell, str) or not cell.startswith(FORMULA_STARTS):
        return cell
    try:
        float(cell)  # a plain number, e.g. a negative score: a spreadsheet reads it as that number
        return cell
    except ValueError:
        return f"'{cell}"


def write_table_csv(name: str, headers: Sequence[str], rows: Sequence[Sequence[object]],
                    empty: str = "There are no results to save yet: run the benchmark first.") -> Path:
    """A table as ``<name>.csv`` in a new export folder (the STS tab's results, an audience board), text
    that a spreadsheet would run as a formula kept as text."""
    if not rows:
        raise ValueError(empty)
    clean_old()
    path = Path(tempfile.mkdtemp(prefix=PREFIX)) / f"{safe_name(name)}.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(headers)
        writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
    return path
