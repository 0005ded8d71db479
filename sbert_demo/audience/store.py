"""Boards and their sentences in SQLite (WAL) under the cache folder.

One connection per call (SQLite serialises writers itself; WAL lets readers go on while a phone
writes), so a hundred phones sending at once lose nothing, and a restart of the app keeps every
board. A board has a short code people type (five letters, no look-alikes), a model, a lock and a
secret that only the presenter's link carries (stored as its SHA-256, compared in constant time).

Limits, each refused with a sentence and nothing stored: a sentence of at most :data:`MAX_CHARS`
characters, not blank (nothing visible, :func:`~sbert_demo.data.text.is_blank`), not already on the
board (case and spacing ignored); :data:`PER_MINUTE` sentences a minute from one browser (its visitor
cookie, kept across reloads: :mod:`sbert_demo.ui.visitor`; else its session), and
:data:`PER_ADDRESS_MINUTE` a minute from one network address to all boards (a ceiling high enough for a
whole room of phones behind one venue's address; a script that opens a new session for every sentence
still meets the board's size and the presenter's lock and hide); :data:`COOKIELESS_PER_MINUTE` a minute to one
board from all browsers without the visitor cookie together (a script that drops it to send as a new phone each
time); :data:`MAX_SENTENCES` shown on a board (a hidden sentence frees its place) and :data:`MAX_KEPT` kept,
hidden ones included. The presenter hides one sentence, or one and every later one (a flood, in one action,
the sentences sent before it kept). Addresses are kept only as a salted hash. Boards older than
:data:`KEEP_HOURS` hours are removed when a board is created.

Example::

    >>> import tempfile, pathlib
    >>> store = BoardStore(pathlib.Path(tempfile.mkdtemp()) / "boards.sqlite")
    >>> board = store.create("glove-6b-50d")
    >>> store.add(board.code, "A cat sleeps.", sender="phone-1").text
    'A cat sleeps.'
    >>> store.add(board.code, "a  CAT sleeps.", sender="phone-2")
    Traceback (most recent call last):
    ...
    ValueError: That sentence is already on the board.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..config import settings
from ..data.text import check_text, clean_text
from ..shared import process_wide

MAX_CHARS = 200
PER_MINUTE = 3
# One network address, every board: a ceiling, not a rate. At a venue every phone on the Wi-Fi shares one public
# address, so it lets a full room of MAX_SENTENCES phones each send one in the same minute (120 refused 380 of
# 500 such sentences); a script that opens a new session for each sentence still stops at the board's size.
PER_ADDRESS_MINUTE = 600
MAX_SENTENCES = 500  # shown on a board: hidden ones do not count
MAX_KEPT = 5 * MAX_SENTENCES  # kept on a board, hidden ones included: a flood hidden again and again stops here
# Browsers without the visitor cookie, together, on one board: a phone that loads the page has the cookie; a script
# that drops it to count as a new phone for every sentence meets this rate (and the network's ceiling).
COOKIELESS_PER_MINUTE = 20
COOKIE_SENDER = "visitor:"  # how a sender named by its visitor cookie begins (sbert_demo.ui.visitor)
KEEP_HOURS = 48
CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"  # no I or O: read off a slide, typed on a phone
CODE_LENGTH = 5

SCHEMA = """
CREATE TABLE IF NOT EXISTS boards (
    code TEXT PRIMARY KEY, secret_hash TEXT NOT NULL, model TEXT NOT NULL,
    locked INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS sentences (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    board TEXT NOT NULL REFERENCES boards(code) ON DELETE CASCADE,
    text TEXT NOT NULL, norm TEXT NOT NULL, sender TEXT NOT NULL, created REAL NOT NULL,
    hidden INTEGER NOT NULL DEFAULT 0, UNIQUE (board, norm));
CREATE INDEX IF NOT EXISTS sentences_by_sender ON sentences (board, sender, created);
"""
# Added after the first release: a store written before it gains the column when opened.
ADDRESS_COLUMN = "ALTER TABLE sentences ADD COLUMN address TEXT NOT NULL DEFAULT ''"
ADDRESS_INDEX = "CREATE INDEX IF NOT EXISTS sentences_from_address ON sentences (address, created)"
MAX_ID = 2 ** 62  # a sentence number beyond SQLite's integers is no sentence of any board


@dataclass(frozen=True)
class Board:
    code: str
    model: str
    locked: bool
    created: float
    secret: str | None = None  # only when just created: it is never stored in clear


@dataclass(frozen=True)
class Sentence:
    id: int
    text: str
    created: float
    hidden: bool


def normalise_code(code: object) -> str:
    """A board code as typed (any case, spaces) in its canonical form, or a ValueError."""
    if not isinstance(code, str):
        raise ValueError("Give the board's code, the letters on the presenter's slide.")
    letters = re.sub(r"[\s-]+", "", code).upper()
    if len(letters) != CODE_LENGTH or any(c not in CODE_LETTERS for c in letters):
        raise ValueError(f"{code.strip()[:20]!r} is not a board code: a code is {CODE_LENGTH} letters, "
                         "as on the presenter's slide.")
    return letters


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


class BoardStore:
    """Every board and sentence, in one SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            if "address" not in {row[1] for row in db.execute("PRAGMA table_info(sentences)")}:
                db.execute(ADDRESS_COLUMN)
            db.execute(ADDRESS_INDEX)
            self._salt = self._read_salt(db)

    @staticmethod
    def _read_salt(db: sqlite3.Connection) -> str:
        """This store's own salt for hashing addresses (made once, kept in the file)."""
        db.execute("CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT OR IGNORE INTO settings VALUES ('address_salt', ?)", (secrets.token_hex(16),))
        return db.execute("SELECT value FROM settings WHERE name = 'address_salt'").fetchone()[0]

    def _address_key(self, address: str) -> str:
        return hashlib.sha256(f"{self._salt}|{address}".encode("utf-8", "surrogatepass")).hexdigest()[:24]

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # autocommit; BEGIN where needed
        try:
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA synchronous=NORMAL")  # with WAL: durable across an app crash
            yield db
        finally:
            db.close()

    # --- boards ----------------------------------------------------------------------------------

    def create(self, model: str, now: float | None = None) -> Board:
        """A new board with a fresh code and secret (returned once); old boards are removed."""
        now = time.time() if now is None else now
        self.remove_older_than(now - KEEP_HOURS * 3600)
        secret = secrets.token_urlsafe(18)
        with self._connection() as db:
            for _ in range(100):
                code = "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))
                try:
                    db.execute("INSERT INTO boards (code, secret_hash, model, created) VALUES (?, ?, ?, ?)",
                               (code, _digest(secret), model, now))
                    return Board(code, model, False, now, secret)
                except sqlite3.IntegrityError:  # the code is taken: draw again
                    continue
        raise ValueError("Could not find a free board code; try again.")

    def get(self, code: object) -> Board:
        code = normalise_code(code)
        with self._connection() as db:
            row = db.execute("SELECT code, model, locked, created FROM boards WHERE code = ?", (code,)).fetchone()
        if row is None:
            raise ValueError(f"There is no board {code}: check the code on the slide (boards are removed after "
                             f"{KEEP_HOURS} hours).")
        return Board(row[0], row[1], bool(row[2]), row[3])

    def check_secret(self, code: object, secret: object) -> Board:
        """The board, if ``secret`` is its presenter's; else a ValueError (the same for a wrong and a missing one)."""
        board = self.get(code)
        with self._connection() as db:
            stored = db.execute("SELECT secret_hash FROM boards WHERE code = ?", (board.code,)).fetchone()[0]
        given = _digest(secret) if isinstance(secret, str) and secret else ""
        if not hmac.compare_digest(stored, given):
            raise ValueError("Only the presenter can do that: open the board from the presenter's link.")
        return board

    def set_model(self, code: str, secret: str, model: str) -> Board:
        board = self.check_secret(code, secret)
        with self._connection() as db:
            db.execute("UPDATE boards SET model = ? WHERE code = ?", (model, board.code))
        return self.get(board.code)

    def set_locked(self, code: str, secret: str, locked: bool) -> Board:
        board = self.check_secret(code, secret)
        if not isinstance(locked, bool):
            raise ValueError("Say whether the board is closed with true or false.")
        with self._connection() as db:
            db.execute("UPDATE boards SET locked = ? WHERE code = ?", (int(bool(locked)), board.code))
        return self.get(board.code)

    def remove_older_than(self, cutoff: float) -> int:
        with self._connection() as db:
            return db.execute("DELETE FROM boards WHERE created < ?", (cutoff,)).rowcount

    # --- sentences -------------------------------------------------------------------------------

    def add(self, code: object, text: object, sender: str, now: float | None = None, address: str = "") -> Sentence:
        """Put ``text`` on the board, or say with a ValueError why not (and store nothing). ``sender``: the
        browser (its visitor cookie, else its session); ``address``: the network address it came from ("" where
        unknown)."""
        now = time.time() if now is None else now
        text = check_text(text, "The sentence")
        clean = " ".join(clean_text(text)[0].split())  # the length is the clean text's: what the board shows
        if len(clean) > MAX_CHARS:
            raise ValueError(f"That sentence has {len(clean):,} characters; keep it to {MAX_CHARS}.")
        board = self.get(code)
        if board.locked:
            raise ValueError("The presenter has closed this board to new sentences.")
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")  # the checks and the insert as one step among all the phones
            try:
                recent = db.execute("SELECT COUNT(*) FROM sentences WHERE board = ? AND sender = ? AND created > ?",
                                    (board.code, sender, now - 60)).fetchone()[0]
                if recent >= PER_MINUTE:
                    raise ValueError(f"You have sent {PER_MINUTE} sentences in the last minute; wait a moment.")
                where = self._address_key(address) if address else ""
                if where and db.execute("SELECT COUNT(*) FROM sentences WHERE address = ? AND created > ?",
                                        (where, now - 60)).fetchone()[0] >= PER_ADDRESS_MINUTE:
                    raise ValueError(f"{PER_ADDRESS_MINUTE} sentences came from your network in the last minute; "
                                     "wait a moment.")
                if not sender.startswith(COOKIE_SENDER) and db.execute(
                        "SELECT COUNT(*) FROM sentences WHERE board = ? AND created > ? AND sender NOT LIKE ?",
                        (board.code, now - 60, COOKIE_SENDER + "%")).fetchone()[0] >= COOKIELESS_PER_MINUTE:
                    raise ValueError(f"{COOKIELESS_PER_MINUTE} sentences came to this board from browsers that keep no "
                                     "cookie in the last minute; open the board's page in your browser, or wait a "
                                     "moment.")
                shown, kept = db.execute("SELECT COUNT(*) - COALESCE(SUM(hidden), 0), COUNT(*) FROM sentences "
                                         "WHERE board = ?", (board.code,)).fetchone()
                if shown >= MAX_SENTENCES:
                    raise ValueError(f"The board is full ({MAX_SENTENCES} sentences).")
                if kept >= MAX_KEPT:
                    raise ValueError(f"The board keeps at most {MAX_KEPT:,} sentences, hidden ones included, and "
                                     "holds that many; the presenter can start a new board.")
                try:
                    cursor = db.execute("INSERT INTO sentences (board, text, norm, sender, created, address) "
                                        "VALUES (?, ?, ?, ?, ?, ?)", (board.code, clean, _norm(clean), sender, now, where))
                except sqlite3.IntegrityError:
                    raise ValueError("That sentence is already on the board.") from None
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return Sentence(cursor.lastrowid, clean, now, False)

    def sentences(self, code: object, include_hidden: bool = False) -> list[Sentence]:
        board = self.get(code)
        with self._connection() as db:
            rows = db.execute("SELECT id, text, created, hidden FROM sentences WHERE board = ? "
                              + ("" if include_hidden else "AND hidden = 0 ") + "ORDER BY id", (board.code,)).fetchall()
        return [Sentence(r[0], r[1], r[2], bool(r[3])) for r in rows]

    def count(self, code: object) -> int:
        """How many sentences the board shows (hidden ones aside): what :meth:`sentences` would list, counted."""
        board = self.get(code)
        with self._connection() as db:
            return db.execute("SELECT COUNT(*) FROM sentences WHERE board = ? AND hidden = 0",
                              (board.code,)).fetchone()[0]

    def hide(self, code: str, secret: str, sentence_id: int, and_later: bool = False) -> int:
        """Hide sentence ``sentence_id`` (and, with ``and_later``, every one sent after it: a flood in one action);
        how many were hidden now."""
        board = self.check_secret(code, secret)
        if isinstance(sentence_id, bool) or not isinstance(sentence_id, int) or not 1 <= sentence_id <= MAX_ID:
            raise ValueError(f"There is no sentence #{str(sentence_id)[:24]} on board {board.code}: choose one from "
                             "the list of its sentences.")
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                if db.execute("SELECT 1 FROM sentences WHERE board = ? AND id = ?",
                              (board.code, sentence_id)).fetchone() is None:
                    raise ValueError(f"There is no sentence #{sentence_id} on board {board.code}.")
                changed = db.execute("UPDATE sentences SET hidden = 1 WHERE board = ? AND hidden = 0 AND "
                                     + ("id >= ?" if and_later else "id = ?"), (board.code, sentence_id)).rowcount
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return changed

    def clear(self, code: str, secret: str) -> int:
        board = self.check_secret(code, secret)
        with self._connection() as db:
            return db.execute("DELETE FROM sentences WHERE board = ?", (board.code,)).rowcount


EXPORT_HEADERS = ("id", "sentence", "sent (UTC)", "hidden")


def export_rows(store: BoardStore, code: object) -> list[list[object]]:
    """Every sentence of a board (hidden ones marked) as rows under :data:`EXPORT_HEADERS`."""
    import datetime as dt

    return [[s.id, s.text, dt.datetime.fromtimestamp(s.created, dt.timezone.utc).isoformat(timespec="seconds"),
             "yes" if s.hidden else "no"] for s in store.sentences(code, include_hidden=True)]


@process_wide
def board_store() -> BoardStore:
    """The app's store, in ``<cache>/audience/boards.sqlite``."""
    return BoardStore(settings().cache_dir / "audience" / "boards.sqlite")
