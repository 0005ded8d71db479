"""A corpus's embeddings on disk, in shards keyed by their content: written as they are computed, read
back a shard at a time, never the whole corpus as float32 in memory.

A shard is :data:`SHARD` consecutive sentences of a corpus. Its key hashes the embedding cache's keys
of its sentences (:func:`~sbert_demo.encoding.embedding_cache.text_key`), so the same sentences in the
same order have the same shard whatever corpus or file they came from, and a shard once written is
found again: a run killed in the middle (``kill -9``) continues from the shards it finished, a second
opening of a corpus reads them all. Each shard is one file,
``<cache>/corpora/vectors/<model fingerprint>/<key>.<dtype>.npy``, written to a temporary name and
renamed (a reader never sees half a shard): fp16 (half of float32's room, cosines within 1e-3) or int8
(a quarter, each vector scaled by its largest value: a ``(n, dim + 4)`` int8 array whose last four bytes
hold the scale). A shard that cannot be read (cut short, damaged) counts as missing and is computed again.

Example::

    >>> import tempfile, numpy as np
    >>> store = ShardStore(Path(tempfile.mkdtemp()), "model-x", "fp16")
    >>> key = shard_key(["A cat.", "A dog."])
    >>> store.write(key, np.eye(2, 4, dtype=np.float32)); store.read(key).shape
    (2, 4)
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..encoding.embedding_cache import text_key
from ..encoding.quantise import int8_rows

logger = logging.getLogger(__name__)

SHARD = 8_192  # sentences a shard: a few seconds of encoding, 6-12 MB on disk
DTYPES = ("fp16", "int8")


@dataclass(frozen=True)
class Shard:
    start: int
    end: int
    key: str

    def __len__(self) -> int:
        return self.end - self.start


def shard_key(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text_key(text))
    return digest.hexdigest()[:32]


def plan(sentences: Sequence[str], size: int = SHARD) -> list[Shard]:
    """The corpus cut into shards of ``size`` sentences, each with its content key."""
    return [Shard(start, min(start + size, len(sentences)), shard_key(sentences[start: start + size]))
            for start in range(0, len(sentences), size)]


class ShardStore:
    """The shards of one model's (one fingerprint's) embeddings, in one dtype."""

    def __init__(self, root: Path, fingerprint: str, dtype: str = "fp16"):
        if dtype not in DTYPES:
            raise ValueError(f"Embeddings are kept as {' or '.join(DTYPES)}, not {dtype!r}.")
        self.folder = Path(root) / "vectors" / hashlib.sha256(fingerprint.encode()).hexdigest()[:24]
        self.dtype = dtype

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.{self.dtype}.npy"

    def has(self, key: str, rows: int | None = None) -> bool:
        """Whether the shard is complete on disk: its header read, its vectors not (a re-open of a million
        sentences checks 123 shards in a blink instead of reading 0.8 GB)."""
        return self._mapped(key, rows) is not None

    def _mapped(self, key: str, rows: int | None) -> np.ndarray | None:
        try:
            stored = np.load(self.path(key), mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError):  # missing, or cut short (np.load checks the size)
            return None
        if stored.ndim != 2 or (rows is not None and stored.shape[0] != rows):
            return None
        return stored

    def read(self, key: str, rows: int | None = None) -> np.ndarray | None:
        """The shard's vectors as float32 (unit length as written), or None when it is missing or damaged."""
        stored = self._mapped(key, rows)
        return None if stored is None else self._decoded(stored)

    def picked(self, key: str, picks: np.ndarray, rows: int | None = None) -> np.ndarray | None:
        """Only the rows ``picks`` of the shard (read from the memory-mapped file), as :meth:`read` gives them."""
        stored = self._mapped(key, rows)
        return None if stored is None else self._decoded(stored[picks])

    def _decoded(self, stored: np.ndarray) -> np.ndarray:
        if self.dtype == "fp16":
            return _widened(stored)
        scales = np.ascontiguousarray(stored[:, -4:]).view(np.float32)
        return np.asarray(stored[:, :-4], dtype=np.float32) * scales

    def write(self, key: str, vectors: np.ndarray) -> None:
        """Keep ``vectors`` (float32, one row per sentence) as the shard ``key``; an OSError (a full disk)
        leaves no partial file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.dtype == "fp16":
            stored = np.asarray(vectors, dtype=np.float16)
        else:
            quantised, scales = int8_rows(vectors)
            stored = np.concatenate([quantised, scales[:, None].view(np.int8)], axis=1)
        final = self.path(key)
        temporary = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        try:
            with temporary.open("wb") as handle:
                np.save(handle, stored, allow_pickle=False)
            os.replace(temporary, final)
        finally:
            temporary.unlink(missing_ok=True)

    def missing(self, shards: Sequence[Shard]) -> list[Shard]:
        return [shard for shard in shards if not self.has(shard.key, len(shard))]


def _widened(half: np.ndarray) -> np.ndarray:
    """float16 -> float32 through torch: numpy casts one number at a time (~5 ns each on a Xeon), torch's cast is
    vectorised and 4x quicker; it is most of the time of rescoring a corpus's neighbours (:mod:`.search`)."""
    import torch

    return torch.from_numpy(np.require(half, requirements=["C_CONTIGUOUS", "WRITEABLE"])).float().numpy()
