"""A persistent cache of sentence embeddings, keyed by model identity and the exact text.

Stored in one SQLite file under ``SBERT_DEMO_CACHE``: SQLite gives atomic transactions and safe
concurrent readers and writers (WAL mode) across threads and processes, so a write interrupted by a
crash leaves no half-written entry. Each vector also carries a CRC32, so a damaged row is detected
and recomputed. A corrupt database file is moved aside and started afresh; a cache folder that is
read-only or full turns persistence off (said once, in the log and in :attr:`EmbeddingCache.problem`)
and the app keeps working without it.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import sqlite3
import threading
import time
import zlib
from pathlib import Path

import numpy as np

from ..config import settings
from ..shared import BoundedCache

logger = logging.getLogger(__name__)

_SCHEMA = """CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL, text_hash BLOB NOT NULL, dim INTEGER NOT NULL, crc INTEGER NOT NULL,
    truncated INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, text_hash)) WITHOUT ROWID"""
_CHUNK = 500


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """``get_many``/``put_many`` of float32 vectors; every failure degrades to a cache miss."""

    def __init__(self, path: Path):
        self.path = path
        self.problem: str | None = None
        self._notice_given = False
        self._local = threading.local()
        self._lock = threading.Lock()
        # counts of cached texts, kept until the store changes: this process's writes (``_writes``) and any other
        # connection's (SQLite's data_version); an estimate asks for the same 26,139 sentences again and again
        self._counted: BoundedCache[tuple, int] = BoundedCache("cached-text counts", 64, registered=False)
        self._writes = 0
        self._opened = itertools.count()  # each thread's connection a number of its own (an id() may come again)

    def _disable(self, why: str) -> None:
        with self._lock:
            if self.problem is None:
                self.problem = f"The embedding cache at {self.path} is off ({why}); embeddings are recomputed."
                logger.warning(self.problem)

    def take_notice(self) -> str | None:
        """:attr:`problem` the first time it is asked for, then None: the app says it once."""
        with self._lock:
            if self.problem is None or self._notice_given:
                return None
            self._notice_given = True
            return self.problem

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        connection.execute("PRAGMA busy_timeout=30000")
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(_SCHEMA)
        connection.execute("SELECT count(*) FROM vectors LIMIT 1").fetchone()
        return connection

    def _connection(self) -> sqlite3.Connection | None:
        if self.problem is not None:
            return None
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            return connection
        try:
            connection = self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) or not self.path.exists():
                self._disable(str(exc))
                return None
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            logger.warning("The embedding cache %s is corrupt (%s); moved it to %s", self.path, exc, aside)
            self.path.replace(aside)
            try:
                connection = self._open()
            except (sqlite3.DatabaseError, OSError) as again:
                self._disable(str(again))
                return None
        except OSError as exc:
            self._disable(exc.strerror or str(exc))
            return None
        self._local.connection, self._local.number = connection, next(self._opened)
        return connection

    def get_many(self, model: str, texts: list[str]) -> dict[int, tuple[np.ndarray, bool]]:
        """``{position: (vector, was_truncated)}`` for cached texts; misses and damaged rows are absent."""
        connection = self._connection()
        if connection is None or not texts:
            return {}
        keys = [text_key(t) for t in texts]
        found: dict[bytes, tuple[np.ndarray, bool]] = {}
        try:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                query = f"SELECT text_hash, dim, crc, truncated, vec FROM vectors WHERE model=? AND text_hash IN ({','.join('?' * len(chunk))})"
                for text_hash, dim, crc, truncated, vec in connection.execute(query, (model, *chunk)):
                    if len(vec) == dim * 4 and zlib.crc32(vec) == crc:
                        found[bytes(text_hash)] = (np.frombuffer(vec, dtype=np.float32), bool(truncated))
                    else:
                        logger.warning("A damaged embedding cache entry was found; it will be recomputed.")
        except sqlite3.DatabaseError as exc:
            self._disable(str(exc))
            return {}
        return {i: found[k] for i, k in enumerate(keys) if k in found}

    def count_cached(self, model: str, texts: list[str]) -> int:
        """How many of ``texts`` (distinct) are cached, reading no vector: what an estimate needs."""
        connection = self._connection()
        if connection is None or not texts:
            return 0
        keys = list(dict.fromkeys(text_key(t) for t in texts))
        found = 0
        try:
            with self._lock:
                writes = self._writes
            seen = (self._local.number, connection.execute("PRAGMA data_version").fetchone()[0], writes, model,
                    hashlib.sha256(b"".join(keys)).digest())
            if (known := self._counted.get(seen)) is not None:
                return known
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                query = f"SELECT COUNT(*) FROM vectors WHERE model=? AND text_hash IN ({','.join('?' * len(chunk))})"
                found += connection.execute(query, (model, *chunk)).fetchone()[0]
        except sqlite3.DatabaseError as exc:
            self._disable(str(exc))
            return 0
        self._counted.put(seen, found)
        return found

    def put_many(self, model: str, texts: list[str], vectors: np.ndarray, truncated: set[int] = frozenset()) -> None:
        """Store ``vectors[i]`` for ``texts[i]``; ``truncated`` holds positions the model cut short."""
        connection = self._connection()
        if connection is None or not texts:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        rows = []
        for i, (text, vector) in enumerate(zip(texts, vectors)):
            blob = vector.tobytes()
            rows.append((model, text_key(text), vector.shape[0], zlib.crc32(blob), int(i in truncated), blob))
        try:
            with connection:
                connection.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.DatabaseError as exc:  # read-only folder, disk full, ...
            self._disable(str(exc))
        finally:
            with self._lock:
                self._writes += 1  # what was counted before may have changed

    def count(self, model: str | None = None) -> int:
        connection = self._connection()
        if connection is None:
            return 0
        if model is None:
            return connection.execute("SELECT count(*) FROM vectors").fetchone()[0]
        return connection.execute("SELECT count(*) FROM vectors WHERE model=?", (model,)).fetchone()[0]


caches: BoundedCache[Path, EmbeddingCache] = BoundedCache("embedding cache per cache folder", 8)


def embedding_cache() -> EmbeddingCache:
    """The cache for the current ``SBERT_DEMO_CACHE`` folder (one object per folder)."""
    path = settings().cache_dir / "embeddings.sqlite"
    return caches.get_or_build(path, lambda: EmbeddingCache(path))
