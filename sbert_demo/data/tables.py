"""One reader of tables that people upload, and one way to find a column by name.

Every file format the app takes in columns (scored pairs, NLI pairs, triplets, sentence files with
groups, corpora) is read here: size and encoding are checked (``.gz`` is unpacked, bounded), the
separator is taken from the file name or the header, each record keeps the line it starts on so a
rejected row can be named, and columns are found by name among common aliases, case-insensitively,
or by the name a user gives.

Example::

    >>> header, records = parse_delimited("sentence,group\\nA cat.,pets\\n", "pets.csv")
    >>> header, records, find_column(header, ("text", "sentence"))
    (['sentence', 'group'], [(2, ['A cat.', 'pets'])], 0)
    >>> alternatives(("text", "sentence", "query"))
    "'text', 'sentence' or 'query'"
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 100 * 1024 * 1024
CSV_HINT = "save it as UTF-8 CSV (comma- or tab-separated text with a header row)."

Records = list[tuple[int, list[str]]]  # (line where the record starts, its fields)


@dataclass(frozen=True)
class Table:
    path: Path
    header: list[str]
    records: Records


def not_utf8(name: str, hint: str, position: int | None = None, line: int | None = None) -> ValueError:
    """The one refusal of a file that is not UTF-8 (every reader of text files says it so; none guesses another
    encoding or reads on with replacement characters)."""
    where = (f" (undecodable byte at position {position})" if position is not None
             else f" (undecodable text on line {line:,})" if line is not None else "")
    return ValueError(f"{name} is not UTF-8 text{where}, e.g. Latin-1 or Windows-1252; {hint}")


def decode_upload(data: bytes, name: str, hint: str) -> str:
    """An uploaded file's bytes as text (UTF-8, a BOM dropped); binary or non-UTF-8 files get a message ending
    in ``hint``."""
    if b"\x00" in data:
        raise ValueError(f"{name} is not UTF-8 text (it looks binary, e.g. a spreadsheet); {hint}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise not_utf8(name, hint, position=exc.start) from None


def check_size(path: Path, limit: int | None = None, what: str = "") -> None:
    """A ValueError naming the limit when the file at ``path`` is larger than ``limit`` bytes
    (default ``MAX_FILE_BYTES``)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path.name} is {size / 2**20:.0f} MB; the limit is {limit // 2**20} MB{what}. "
                         "Use a smaller sample of it.")


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes, gunzipped for ``.gz`` (the shipped NLI files are); at most ``limit``
    (default ``MAX_FILE_BYTES``)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    if path.suffix.lower() != ".gz":
        return path.read_bytes()
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read(limit + 1)  # bounded: a small .gz may hold gigabytes
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path.name} is not a readable gzip file ({exc}); compress it again or "
                         "use the plain CSV.") from None
    if len(data) > limit:
        raise ValueError(f"{path.name} holds more than {limit // 2**20} MB of text; use a smaller sample of it.")
    return data


def read_text(path: str | Path, max_bytes: int | None = None, hint: str = CSV_HINT,
              empty: str = "it needs a header row and at least two rows") -> str:
    """A user's text file, checked: it exists, is at most ``max_bytes``, is UTF-8 and is not empty."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ValueError(f"File not found: {path}.")
    check_size(path, max_bytes)
    text = decode_upload(read_bytes(path, max_bytes), path.name, hint)
    if not text.strip():
        raise ValueError(f"{path.name} is empty; {empty}.")
    return text


def guess_delimiter(name: str, header_line: str) -> str:
    """Tab for ``.tsv``/``.tab`` (also gzipped); else the header's most frequent of , tab ; | (else ,)."""
    suffixes = [suffix.lower() for suffix in Path(name).suffixes[-2:]]  # "pairs.tsv.gz" is tab-separated too
    if ".tsv" in suffixes or ".tab" in suffixes:
        return "\t"
    # csv.Sniffer guesses badly from a single line; the header's most frequent separator is safer.
    counts = {d: header_line.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


def parse_delimited(text: str, name: str) -> tuple[list[str], Records]:
    """The header (stripped) and the records of delimited ``text``; blank lines are skipped."""
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=guess_delimiter(name, first_line))
    header: list[str] | None = None
    records: Records = []
    line_no = 1
    try:
        for fields in reader:
            if fields and any(f.strip() for f in fields):
                if header is None:
                    header = [f.strip() for f in fields]
                else:
                    records.append((line_no, fields))
            line_no = reader.line_num + 1
    except csv.Error as exc:
        raise ValueError(f"{name} line {line_no} cannot be read as CSV: {exc}.") from None
    return header or [], records


def read_table(path: str | Path, max_bytes: int | None = None) -> Table:
    """Decode, size-check and split a delimited text file with a header row."""
    path = Path(path).expanduser()
    header, records = parse_delimited(read_text(path, max_bytes), path.name)
    return Table(path, header, records)


def find_column(header: list[str], aliases: tuple[str, ...], explicit: str | None = None,
                role: str = "", source: str = "", taken: set[int] = frozenset()) -> int | None:
    """The header column for ``role``: ``explicit`` when given (a ValueError when it is missing), else
    the first of ``aliases`` present; columns in ``taken`` are never used twice. Case-insensitive."""
    lowered = [column.strip().lower() for column in header]
    if explicit:
        wanted = explicit.strip().lower()
        if wanted not in lowered:
            raise ValueError(f"{source} has no column '{explicit}' for the {role}; its columns are "
                             f"{', '.join(header[:12]) or 'none'}.")
        return lowered.index(wanted)
    return next((lowered.index(a) for a in aliases if a in lowered and lowered.index(a) not in taken), None)


def find_columns(table: Table, wanted: dict[str, tuple[str | None, tuple[str, ...]]]) -> dict[str, int]:
    """Each role's column (``wanted``: role -> (explicit name or None, aliases)), one column per role;
    a ValueError names the first role without one and the columns there are."""
    found: dict[str, int] = {}
    # Explicit names first, so an alias never takes the column a user named for another role.
    for role, (explicit, aliases) in sorted(wanted.items(), key=lambda item: item[1][0] is None):
        names = (explicit,) if explicit else aliases
        index = find_column(table.header, tuple(n.strip().lower() for n in names), None, role,
                            table.path.name, set(found.values()))
        if index is None:
            accepted = f"'{explicit}'" if explicit else "one of " + ", ".join(aliases)
            raise ValueError(f"{table.path.name} has no {role} column (looked for {accepted}); its "
                             f"header has: {', '.join(table.header) or 'nothing'}.")
        found[role] = index
    return found


def no_text_column(source: str, header: list[str], aliases: tuple[str, ...]) -> str:
    """The sentence for a table without a text column: which names are looked for, what its header holds, and,
    when that first row reads like data (a sentence, a number), that it has no header row."""
    said = (f"{source} has no text column; name one {alternatives(aliases[:4])} or choose it (columns found: "
            f"{', '.join(header[:12]) or 'none'}).")
    looks_like_data = any(len(cell.split()) >= 3 or cell.strip().lstrip("-").replace(".", "", 1).isdigit()
                          for cell in header)
    return said + (" Its first row reads like data: add a header row (e.g. text,label,...) as the first line."
                   if looks_like_data else "")


def alternatives(names: tuple[str, ...]) -> str:
    """``'a', 'b' or 'c'``: the names a column may have, for a message."""
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
