"""A model's identity: a fingerprint of the files it comes from (names, sizes, modification times).

A model retrained in place gets a new identity and never reuses stale embeddings; a README or the
card this app writes do not count (they do not change vectors).

Example::

    >>> len(fingerprint("glove", None, Path("/nonexistent"), ()))
    32
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

# Bump when the way embeddings are computed changes, so cached vectors from older code are ignored.
ENCODING_VERSION = "2"
_IGNORED_FILES = {"README.md", "desktop.ini", ".gitattributes", "sbert_demo_card.json"}


def stat_signature(path: Path) -> list[str]:
    """``name:size:mtime`` of ``path`` (a file) or of every file under it (a folder)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    rows = []
    for file in files:
        if file.name in _IGNORED_FILES or file.name.endswith(".lock"):
            continue
        stat = file.stat()
        rows.append(f"{file.relative_to(path) if path.is_dir() else file.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return rows


def fingerprint(kind: str, pooling: str | None, location: Path, files: Iterable[Path]) -> str:
    """The identity of a model of ``kind`` (and ``pooling``) loaded from ``location``, made of ``files``."""
    signature = [row for path in files for row in stat_signature(Path(path))]
    digest = hashlib.sha256()
    for part in (ENCODING_VERSION, kind, pooling or "", str(Path(location).resolve()), *signature):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:32]
