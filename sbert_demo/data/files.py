"""User files: CSV/TSV tables of scored pairs, NLI pairs or triplets.

One reader of delimited text serves every format: it checks size and encoding, finds the columns
by name (with common aliases), and reports rejected rows with their line numbers instead of
dropping them silently.
"""

from __future__ import annotations

import csv
import gzip
import io
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .records import NLI_LABELS, NliPairs, ScoredPairs, Triplets, _capped

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 100 * 1024 * 1024


SENTENCE1_NAMES = ("sentence1", "sentence_1", "s1", "text1", "text_a", "sentence_a", "premise",
                   "anchor", "query", "first")


SENTENCE2_NAMES = ("sentence2", "sentence_2", "s2", "text2", "text_b", "sentence_b", "hypothesis",
                   "positive", "second")


SCORE_NAMES = ("score", "label", "similarity", "gold", "relatedness", "rating", "gold_score")


LABEL_NAMES = ("label", "gold_label", "labels", "class")


ANCHOR_NAMES = ("anchor", "query", "sentence", "sentence1", "premise", "text", "text1")


POSITIVE_NAMES = ("positive", "pos", "sentence2", "entailment", "text2")


NEGATIVE_NAMES = ("negative", "neg", "hard_negative", "sentence3", "contradiction", "text3")


@dataclass(frozen=True)
class _Table:
    path: Path
    header: list[str]
    records: list[tuple[int, list[str]]]  # (line where the record starts, its fields)


def decode_upload(data: bytes, name: str, hint: str) -> str:
    """An uploaded file's bytes as text; binary or non-UTF-8 files get a message ending in ``hint``."""
    if b"\x00" in data:
        raise ValueError(f"{name} is not UTF-8 text (it looks binary, e.g. a spreadsheet); {hint}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name} is not UTF-8 text (undecodable byte at position {exc.start}); {hint}") from None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped for ``.gz`` (the shipped NLI files are); at most ``MAX_FILE_BYTES``."""
    if path.suffix.lower() != ".gz":
        return path.read_bytes()
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)  # bounded: a small .gz may hold gigabytes
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path.name} is not a readable gzip file ({exc}); compress it again or "
                         "use the plain CSV.") from None
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path.name} holds more than {MAX_FILE_BYTES // 2**20} MB of text; use a smaller "
                         "sample of it.")
    return data


def check_size(path: Path, limit: int | None = None, what: str = "") -> None:
    """A ValueError naming the limit when the file at ``path`` is larger than ``limit`` bytes
    (default ``MAX_FILE_BYTES``)."""
    limit = MAX_FILE_BYTES if limit is None else limit
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path.name} is {size / 2**20:.0f} MB; the limit is {limit // 2**20} MB{what}. "
                         "Use a smaller sample of it.")


def _decoded_text(path: Path) -> str:
    if not path.is_file():
        raise ValueError(f"File not found: {path}.")
    check_size(path)
    text = decode_upload(_read_bytes(path), path.name,
                         "save it as UTF-8 CSV (comma- or tab-separated text with a header row).")
    if not text.strip():
        raise ValueError(f"{path.name} is empty; it needs a header row and at least two rows.")
    return text


def _delimiter(path: Path, header_line: str) -> str:
    suffixes = [suffix.lower() for suffix in path.suffixes[-2:]]  # "pairs.tsv.gz" is tab-separated too
    if ".tsv" in suffixes or ".tab" in suffixes:
        return "\t"
    # csv.Sniffer guesses badly from a single line; the header's most frequent separator is safer.
    counts = {d: header_line.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


def _read_table(path: str | Path) -> _Table:
    """Decode, size-check and split a delimited text file with a header row."""
    path = Path(path).expanduser()
    text = _decoded_text(path)
    first_line = next(line for line in text.splitlines() if line.strip())
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(path, first_line))
    header: list[str] | None = None
    records: list[tuple[int, list[str]]] = []
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
        raise ValueError(f"{path.name} line {line_no} cannot be read as CSV: {exc}.") from None
    return _Table(path, header or [], records)


_Wanted = dict[str, tuple[str | None, tuple[str, ...]]]  # role -> (explicit column, aliases)


def _columns(table: _Table, wanted: _Wanted) -> dict[str, int]:
    """Map each role to a header column: the explicit name if given, else the first alias found."""
    lowered = [h.lower() for h in table.header]
    found: dict[str, int] = {}
    # Explicit names first, so an alias never takes the column a user named for another role.
    for role, (explicit, aliases) in sorted(wanted.items(), key=lambda item: item[1][0] is None):
        candidates = [n.strip().lower() for n in ((explicit,) if explicit else aliases)]
        free = [lowered.index(n) for n in candidates if n in lowered]
        free = [i for i in free if i not in found.values()]  # one column never serves two roles
        if not free:
            accepted = f"'{explicit}'" if explicit else "one of " + ", ".join(aliases)
            raise ValueError(f"{table.path.name} has no {role} column (looked for {accepted}); its "
                             f"header has: {', '.join(table.header) or 'nothing'}.")
        found[role] = free[0]
    return found


def _records(table: _Table, columns: dict[str, int],
             problems: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """Each record's wanted fields, stripped; rows with missing or empty fields become problems."""
    needed = max(columns.values()) + 1
    for line_no, fields in table.records:
        if len(fields) < needed:
            problems.append(f"line {line_no}: {len(fields)} fields, expected at least {needed}")
            continue
        values = {role: fields[i].strip() for role, i in columns.items()}
        empty = [role for role, value in values.items() if not value]
        if empty:
            problems.append(f"line {line_no}: empty {' and '.join(empty)}")
            continue
        yield line_no, values


def _number(value: str, what: str, line_no: int, problems: list[str]) -> float | None:
    try:
        number = float(value)
    except ValueError:
        problems.append(f"line {line_no}: {what} {value.strip()!r} is not a number")
        return None
    if not math.isfinite(number):
        problems.append(f"line {line_no}: {what} {value.strip()!r} is not a finite number")
        return None
    return number


def _check_scored(pairs: ScoredPairs, source: str) -> None:
    if len(pairs) < 2:
        detail = f" Rejected rows: {'; '.join(pairs.problems[:5])}." if pairs.problems else ""
        raise ValueError(f"{source} has {len(pairs)} usable scored pairs; at least 2 are needed."
                         + detail)
    if min(pairs.scores) == max(pairs.scores):
        raise ValueError(f"Every score in {source} is {pairs.scores[0]}; correlation with "
                         "model similarities is undefined unless the scores vary.")


def read_scored_pairs(path: str | Path, sentence1_column: str | None = None,
                      sentence2_column: str | None = None, score_column: str | None = None,
                      name: str | None = None) -> ScoredPairs:
    """Read scored sentence pairs from a CSV/TSV file with a header row.

    Columns are found by name, case-insensitively (``sentence1``/``text_a``/``premise``...,
    ``sentence2``/``text_b``/``hypothesis``..., ``score``/``label``/``similarity``...) unless
    given explicitly. Bad rows are skipped and described, with line numbers, in ``problems``.
    """
    table = _read_table(path)
    columns = _columns(table, {"sentence1": (sentence1_column, SENTENCE1_NAMES),
                               "sentence2": (sentence2_column, SENTENCE2_NAMES),
                               "score": (score_column, SCORE_NAMES)})
    sentences1, sentences2, scores, problems = [], [], [], []
    for line_no, values in _records(table, columns, problems):
        score = _number(values["score"], "score", line_no, problems)
        if score is not None:
            sentences1.append(values["sentence1"])
            sentences2.append(values["sentence2"])
            scores.append(score)
    pairs = ScoredPairs(sentences1, sentences2, scores, name or table.path.name, _capped(problems))
    _check_scored(pairs, table.path.name)
    if problems:
        logger.warning("%s: %d rows rejected", table.path.name, len(problems))
    return pairs


def _label_id(value: str) -> int | None:
    value = value.strip().lower()
    if value in NLI_LABELS:
        return NLI_LABELS.index(value)
    return int(value) if value in ("0", "1", "2") else None


def read_nli_file(path: str | Path, name: str | None = None) -> NliPairs:
    """Read NLI pairs (premise, hypothesis, label) from a CSV/TSV file with a header row.

    Labels are names from :data:`NLI_LABELS` or ids 0..2; rows labelled ``-`` (no gold label, as
    in SNLI) are skipped with one summary note; other bad rows are listed in ``problems``.
    """
    table = _read_table(path)
    columns = _columns(table, {"premise": (None, SENTENCE1_NAMES),
                               "hypothesis": (None, SENTENCE2_NAMES),
                               "label": (None, LABEL_NAMES)})
    premises, hypotheses, labels, problems = [], [], [], []
    unlabelled = 0
    for line_no, values in _records(table, columns, problems):
        label = _label_id(values["label"])
        if values["label"] == "-":
            unlabelled += 1
        elif label is None:
            problems.append(f"line {line_no}: label {values['label']!r} is not one of "
                            f"{', '.join(NLI_LABELS)} or 0..2")
        else:
            premises.append(values["premise"])
            hypotheses.append(values["hypothesis"])
            labels.append(label)
    if len(labels) < 2:
        raise ValueError(f"{table.path.name} has {len(labels)} usable labelled pairs; at least 2 "
                         f"are needed. {'; '.join(problems[:5])}".rstrip())
    notes = _capped(problems)
    if unlabelled:
        notes.append(f"{unlabelled} rows without a gold label ('-') skipped")
    return NliPairs(premises, hypotheses, labels, name or table.path.name, notes)


def read_triplets_file(path: str | Path, name: str | None = None) -> Triplets:
    """Read (anchor, positive, negative) triplets from a CSV/TSV file with a header row."""
    table = _read_table(path)
    columns = _columns(table, {"anchor": (None, ANCHOR_NAMES),
                               "positive": (None, POSITIVE_NAMES),
                               "negative": (None, NEGATIVE_NAMES)})
    problems: list[str] = []
    rows = [values for _, values in _records(table, columns, problems)]
    if len(rows) < 2:
        raise ValueError(f"{table.path.name} has {len(rows)} usable triplets; at least 2 are "
                         f"needed. {'; '.join(problems[:5])}".rstrip())
    return Triplets([r["anchor"] for r in rows], [r["positive"] for r in rows],
                    [r["negative"] for r in rows], name or table.path.name, _capped(problems))
