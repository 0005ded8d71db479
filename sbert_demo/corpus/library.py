"""Corpora opened before, kept: their cleaned sentences in the cache folder, found again by what their
source is, so opening the same file (or dataset files) again after a restart reads one Parquet file
instead of reading, cleaning and de-duplicating the source again.

A source's identity is each of its files' path, size and modification time, with the columns chosen
(a changed file is read again); a dataset on the Hub has none (it is read each time). The kept copy
is ``<cache>/corpora/texts/<identity>.parquet`` (``text``, ``label``) with a JSON of what was read.

Example::

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "pets.txt").write_text("A cat sleeps.\\nA dog barks.\\nA bird sings.\\n")
    >>> first = open_corpus(SourceSpec(path=str(folder / "pets.txt")))
    >>> open_corpus(SourceSpec(path=str(folder / "pets.txt"))).content_id == first.content_id
    True
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from ..data.fields import Field
from .embed import corpora_root
from .sources import MAX_SENTENCES, LargeCorpus, Progress, SourceSpec, checked, read_source


def source_identity(spec: SourceSpec) -> str | None:
    """Paths, sizes and modification times of the source's files, and the columns asked for; None for a
    dataset on the Hub (its revision is the Hub's business)."""
    paths: list[Path] = []
    if spec.path:
        root = Path(spec.path).expanduser()
        paths = sorted(root.glob("*.parquet")) if root.is_dir() else [root]
    elif spec.data_files:
        paths = sorted(Path(p).expanduser() for pattern in spec.data_files for p in _glob(pattern))
    elif spec.dataset and Path(spec.dataset).expanduser().is_dir():
        paths = sorted(p for p in Path(spec.dataset).expanduser().rglob("*") if p.is_file())
    if not paths:
        return None
    try:
        files = [f"{p.resolve()}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in paths]
    except OSError:
        return None
    described = {**asdict(spec), "files": files, "data_files": list(spec.data_files), "kept": 2}  # 2: with its fields
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:24]


def _glob(pattern: str) -> list[Path]:
    path = Path(pattern).expanduser()
    return list(path.parent.glob(path.name)) if any(c in path.name for c in "*?[") else [path]


def open_corpus(spec: SourceSpec, max_sentences: int = MAX_SENTENCES, progress: Progress | None = None) -> LargeCorpus:
    """The corpus of ``spec``: the kept copy when its source has not changed, else read (and kept). A visitor's
    source passes the allow list first, so no kept copy of another's source is handed out by naming it."""
    spec = checked(spec)
    identity = source_identity(spec)
    folder = corpora_root() / "texts"
    kept = None if identity is None else _read(folder, identity)
    if kept is not None and len(kept) <= max_sentences:
        if progress:
            progress(1.0, f"{kept.name}: {len(kept):,} sentences, as read before")
        return kept
    corpus = read_source(spec, max_sentences, progress)
    if identity is not None:
        _write(folder, identity, corpus)
    return corpus


def _read(folder: Path, identity: str) -> LargeCorpus | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = json.loads((folder / f"{identity}.json").read_text(encoding="utf-8"))
        table = pq.read_table(folder / f"{identity}.parquet")
    except (OSError, ValueError, pa.ArrowException):
        return None
    labels = table.column("label").to_pylist() if meta.get("label_name") else None
    fields = tuple(Field(about["name"], about["kind"], _values(table.column(f"field:{f}"), about["kind"]),
                         tuple(about["categories"]), about["missing"], about["note"])
                   for f, about in enumerate(meta.get("fields", ())))
    return LargeCorpus(meta["name"], table.column("text").to_pylist(), labels, meta.get("text_column"),
                       meta.get("label_name"), meta.get("rows", 0), tuple(meta.get("notes", ())), fields)


def _values(column, kind: str):
    import numpy as np

    if kind == "text":
        return np.array(column.to_pylist(), dtype=object)
    return column.to_numpy(zero_copy_only=False).astype(np.uint16 if kind == "category" else np.float64)


def _write(folder: Path, identity: str, corpus: LargeCorpus) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{identity}.{os.getpid()}.parquet"
        columns = {"text": corpus.sentences, "label": corpus.labels or [None] * len(corpus)}
        for f, found in enumerate(corpus.fields):  # the corpus's own columns, as their types keep them
            columns[f"field:{f}"] = found.values.tolist() if found.kind == "text" else found.values
        pq.write_table(pa.table(columns), temporary)
        os.replace(temporary, folder / f"{identity}.parquet")
        meta = {"name": corpus.name, "text_column": corpus.text_column, "label_name": corpus.label_name,
                "rows": corpus.rows, "notes": list(corpus.notes), "content_id": corpus.content_id,
                "fields": [{"name": f.name, "kind": f.kind, "categories": list(f.categories), "missing": f.missing,
                            "note": f.note} for f in corpus.fields]}
        (folder / f"{identity}.json").write_text(json.dumps(meta), encoding="utf-8")  # last: the copy is complete
    except OSError:  # a full or read-only disk: read from the source next time
        pass
