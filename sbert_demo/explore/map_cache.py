"""Finished 2-D maps of 1,000 points or more, kept on disk so a corpus is laid out once.

A UMAP layout of 15,000 sentences takes ~7 s on two cores, far more than reading its embeddings
from the embedding cache. The key is the SHA-256 of the unit vectors themselves plus the map's
settings (umap-learn version, neighbours, seed), so any model, variant or data set that produces
the same vectors gets the same map, and anything that changes them misses. UMAP with a fixed seed
and exact neighbours is deterministic, so a cached map is the map that would be computed.

Files are ``<SBERT_DEMO_CACHE>/maps/<key>.npz``, written atomically (temporary file + rename);
a damaged file is recomputed, a read-only cache folder only turns the disk part off, and the
newest ``KEPT_FILES`` maps are kept.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..config import settings
from ..shared import KeyLocks

logger = logging.getLogger(__name__)

MIN_POINTS = 1_000  # smaller maps take under a second; the result caches in memory hold them
KEPT_FILES = 64  # ~160 KB per 10,000 points


def map_key(unit: np.ndarray, map_settings: str) -> str:
    digest = hashlib.sha256(map_settings.encode())
    digest.update(str(unit.shape).encode())
    digest.update(np.ascontiguousarray(unit, dtype=np.float64).tobytes())
    return digest.hexdigest()[:40]


class MapCache:
    def __init__(self) -> None:
        self._building = KeyLocks()  # the package's one lock rule (sbert_demo.shared)

    @staticmethod
    def folder() -> Path:
        return settings().cache_dir / "maps"

    def get_or_build(self, unit: np.ndarray, map_settings: str, build: Callable[[], np.ndarray]) -> np.ndarray:
        if unit.shape[0] < MIN_POINTS:
            return build()
        key = map_key(unit, map_settings)
        with self._building.hold(key):  # one layout per key when several users ask for the same corpus at once
            coords = self._read(key, unit.shape[0])
            if coords is None:
                coords = build()
                self._write(key, coords)
        return coords

    def _read(self, key: str, n: int) -> np.ndarray | None:
        path = self.folder() / f"{key}.npz"
        try:
            with np.load(path, allow_pickle=False) as data:
                coords = np.asarray(data["coords"], dtype=np.float64)
            if coords.shape != (n, 2):
                raise ValueError(f"shape {coords.shape}, expected {(n, 2)}")
            path.touch()  # newest-used files are the ones kept
            return coords
        except FileNotFoundError:
            return None
        except Exception as exc:  # damaged or foreign file: lay the map out again
            logger.warning("Ignoring the damaged map %s (%s)", path, exc)
            return None

    def _write(self, key: str, coords: np.ndarray) -> None:
        folder = self.folder()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            temporary = folder / f"{key}.{threading.get_ident()}.tmp.npz"
            np.savez(temporary, coords=coords)
            temporary.replace(folder / f"{key}.npz")
            self._prune(folder)
        except OSError as exc:  # read-only or full cache folder: the map is simply not kept
            logger.warning("Could not keep the map in %s (%s)", folder, exc)

    @staticmethod
    def _prune(folder: Path) -> None:
        def age(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:  # removed meanwhile by another process
                return 0.0

        for old in sorted(folder.glob("*.npz"), key=age, reverse=True)[KEPT_FILES:]:
            old.unlink(missing_ok=True)


maps = MapCache()
