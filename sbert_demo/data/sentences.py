"""Parsing sentences typed in the text box or uploaded as a file.

The text box holds one sentence per line, optionally prefixed by a group label:
``group | sentence``. Groups let the app measure within-group versus between-group similarity.

Example::

    >>> parsed = parse_sentences("pets | A cat sleeps.\\npets | A dog barks.\\nThe bus is late.")
    >>> parsed.groups
    ['pets', 'pets', 'ungrouped']
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from .tables import alternatives, decode_upload, find_column, parse_delimited
from .text import clean_text

logger = logging.getLogger(__name__)

UNGROUPED = "ungrouped"
MAX_GROUP_CHARS = 40
MAX_FILE_BYTES = 5 * 1024 * 1024
SENTENCE_COLUMNS = ("sentence", "text", "sentences", "query")
GROUP_COLUMNS = ("group", "label", "topic", "category", "cluster")
_MAX_LISTED = 5  # notes list at most this many items before summarising


@dataclass(frozen=True)
class ParsedSentences:
    sentences: list[str]
    groups: list[str] | None
    notes: list[str]  # remarks for the user, e.g. "Skipped 3 blank lines."
    numbers: list[int] | None = None  # each sentence's record number in its source (clean_records)


# One input record before cleaning: (line number in the source, group label or None, sentence).
_Record = tuple[int, "str | None", str]


def parse_sentences(
    text: str, max_sentences: int = 2000, max_chars: int = 20000
) -> ParsedSentences:
    """Parse the text box: one sentence per line, optionally ``group | sentence``.

    Example::

        >>> parse_sentences("a | x\\n\\n b|y").sentences
        ['x', 'y']
    """
    if not isinstance(text, str):
        raise ValueError(f"Sentences must be given as text, not as {type(text).__name__}.")
    return parse_lines(text, None, max_sentences, max_chars)


def read_sentence_file(
    path: str | Path, max_sentences: int = 2000, max_chars: int = 20000
) -> ParsedSentences:
    """Read sentences from a .txt file (text-box format) or a .csv/.tsv file with a header.

    CSV/TSV files need a sentence column (one of ``SENTENCE_COLUMNS``) and may have a group column
    (one of ``GROUP_COLUMNS``). The limits are those of :func:`parse_sentences`.
    """
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise ValueError(f"The file {name} was not found; upload it again.")
    suffix = path.suffix.lower()
    if suffix not in (".txt", ".csv", ".tsv"):
        raise ValueError(f"{name} is not a .txt, .csv or .tsv file; upload one of those.")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{name} is {size / 1024**2:.1f} MB; files up to {MAX_FILE_BYTES // 1024**2} MB are "
            "accepted. Upload a smaller file."
        )
    data = path.read_bytes()
    if not data.strip():
        raise ValueError(f"{name} is empty; it needs at least two sentences.")
    text = decode_upload(data, name, "save it as UTF-8 plain text or CSV and upload it again.")
    if suffix == ".txt":
        return parse_lines(text, name, max_sentences, max_chars)
    return clean_records(_table_records(text, name), "Row", name, max_sentences, max_chars)


def parse_lines(
    text: str, source: str | None, max_sentences: int, max_chars: int, drop_repeats: bool = False
) -> ParsedSentences:
    """Text-box lines (``group | sentence`` or a sentence) as sentences; ``source`` names the file, if any."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":  # a final newline ends the last line; it is not a blank line
        lines.pop()
    records: list[_Record] = []
    long_labels: list[int] = []
    for number, line in enumerate(lines, start=1):
        group, sentence = _split_group(line)
        if group is None and "|" in line:
            long_labels.append(number)
        records.append((number, group, sentence))
    parsed = clean_records(records, "Line", source, max_sentences, max_chars, drop_repeats)
    if long_labels and parsed.groups is not None:
        parsed.notes.append(
            f"{_numbered('Line', long_labels)} {_verb(long_labels, 'has', 'have')} a '|' after "
            f"more than {MAX_GROUP_CHARS} characters, so the whole line was read as the sentence."
        )
    return parsed


def _split_group(line: str) -> tuple[str | None, str]:
    head, sep, tail = line.partition("|")
    if sep and len(head.strip()) <= MAX_GROUP_CHARS:
        return head.strip(), tail
    return None, line


def _table_records(text: str, name: str) -> list[_Record]:
    header, rows = parse_delimited(text, name)
    columns = [cell.lower() for cell in header]
    sentence_col = find_column(columns, SENTENCE_COLUMNS)
    if sentence_col is None:
        found = ", ".join(repr(c) for c in columns[:10]) or "none"
        raise ValueError(
            f"{name} has no sentence column. Name one header column "
            f"{alternatives(SENTENCE_COLUMNS)}, and optionally one "
            f"{alternatives(GROUP_COLUMNS)} (columns found: {found})."
        )
    group_col = find_column(columns, GROUP_COLUMNS)
    return [(line, None if group_col is None else _cell(row, group_col).strip(), _cell(row, sentence_col))
            for line, row in rows]


def _cell(row: list[str], index: int) -> str:
    return row[index] if index < len(row) else ""


def clean_records(
    records: list[_Record], unit: str, source: str | None, max_sentences: int, max_chars: int,
    drop_repeats: bool = False,
) -> ParsedSentences:
    """Clean the records, check the count and describe every change in a note.

    ``drop_repeats`` keeps only the first occurrence of each sentence (with its label): a corpus map
    draws each sentence once. Otherwise repeats are kept and named in a note.
    """
    sentences: list[str] = []
    labels: list[str | None] = []
    numbers: list[int] = []
    blank = removed = 0
    label_only: list[int] = []
    empty_label: list[int] = []
    for number, group, sentence in records:
        sentence, removed_here = clean_text(sentence)
        sentence = sentence.strip()
        if group is not None:
            group, removed_group = clean_text(group)
            group = group.strip()
            removed_here += removed_group
        removed += removed_here
        if not sentence:
            if group:
                label_only.append(number)
            else:
                blank += 1
            continue
        if group == "":
            empty_label.append(number)
        sentences.append(sentence)
        labels.append(group)
        numbers.append(number)
    if not drop_repeats:  # otherwise counted once the repeats are gone
        _check_count(len(sentences), source, max_sentences)

    notes: list[str] = []
    unit_plural = unit.lower() + "s"
    if blank:
        notes.append(f"Skipped {blank} blank {unit_plural if blank > 1 else unit.lower()}.")
    if label_only:
        notes.append(
            f"{_numbered(unit, label_only)} {_verb(label_only, 'has', 'have')} a group label but "
            "no sentence and was skipped."
        )
    if removed:
        notes.append(f"Removed {removed} invisible or control character{'s' * (removed > 1)}.")
    notes.extend(_truncate(sentences, max_chars))
    if drop_repeats:
        sentences, labels, numbers = _drop_repeats(sentences, labels, numbers, notes)
        _check_count(len(sentences), source, max_sentences)
    groups = _fill_groups(labels, unit, empty_label, notes)
    if not drop_repeats:
        notes.extend(_duplicate_notes(sentences))
    for note in notes:
        logger.debug("parse note: %s", note)
    return ParsedSentences(sentences, groups, notes, numbers)


def _check_count(count: int, source: str | None, max_sentences: int) -> None:
    if count == 0:
        if source is None:
            raise ValueError("Enter at least two sentences, one per line.")
        raise ValueError(f"{source} contains no sentences; it needs at least two.")
    if count == 1:
        if source is None:
            raise ValueError("Only one sentence was found. Enter at least two, one per line.")
        raise ValueError(f"{source} contains only one sentence; it needs at least two.")
    if count > max_sentences:
        where = "The text" if source is None else source
        raise ValueError(
            f"{where} has {count:,} sentences; the limit is {max_sentences:,}. "
            "Remove some sentences and try again."
        )


def _truncate(sentences: list[str], max_chars: int) -> list[str]:
    """Cut over-long sentences in place; return the note about it, if any."""
    cut = [i for i, sentence in enumerate(sentences) if len(sentence) > max_chars]
    for i in cut:
        sentences[i] = sentences[i][:max_chars].rstrip()
    if not cut:
        return []
    numbers = [i + 1 for i in cut]
    return [
        f"{_numbered('Sentence', numbers)} {_verb(numbers, 'was', 'were')} longer than "
        f"{max_chars:,} characters and cut to that length."
    ]


def _fill_groups(
    labels: list[str | None], unit: str, empty_label: list[int], notes: list[str]
) -> list[str] | None:
    """Replace missing labels with 'ungrouped'; None when no line has a label at all."""
    if not any(labels):
        return None
    if empty_label:
        notes.append(
            f"{_numbered(unit, empty_label)} had an empty group label; "
            f"{_verb(empty_label, 'it was', 'they were')} put in group '{UNGROUPED}'."
        )
    unlabelled = sum(label is None for label in labels)
    if unlabelled:
        plural = unlabelled > 1
        notes.append(
            f"{unlabelled} {unit.lower()}{'s' * plural} had no group label; "
            f"{'they were' if plural else 'it was'} put in group '{UNGROUPED}'."
        )
    return [label or UNGROUPED for label in labels]


def _drop_repeats(sentences: list[str], labels: list[str | None], numbers: list[int],
                  notes: list[str]) -> tuple[list[str], list[str | None], list[int]]:
    first: dict[str, int] = {}
    for i, sentence in enumerate(sentences):
        first.setdefault(sentence, i)
    if len(first) == len(sentences):
        return sentences, labels, numbers
    kept = sorted(first.values())
    dropped = len(sentences) - len(kept)
    notes.append(f"Dropped {dropped:,} repeated sentence{'s' * (dropped > 1)} (the first occurrence and its "
                 "label are kept): the map shows each sentence once.")
    return [sentences[i] for i in kept], [labels[i] for i in kept], [numbers[i] for i in kept]


def _duplicate_notes(sentences: list[str]) -> list[str]:
    positions: dict[str, list[int]] = {}
    for number, sentence in enumerate(sentences, start=1):
        positions.setdefault(sentence, []).append(number)
    repeated = [numbers for numbers in positions.values() if len(numbers) > 1]
    if len(repeated) <= 3:
        return [f"Sentences {_join(numbers)} are identical." for numbers in repeated]
    extra = sum(len(numbers) - 1 for numbers in repeated)
    return [
        f"{extra} sentences repeat earlier ones (for example, sentences {_join(repeated[0])} are "
        "identical). Repeats are kept."
    ]


def _numbered(unit: str, numbers: list[int]) -> str:
    """'Line 5', 'Lines 5 and 8', or '12 lines (first: line 5)' when the list is long."""
    if len(numbers) == 1:
        return f"{unit} {numbers[0]}"
    if len(numbers) <= _MAX_LISTED:
        return f"{unit}s {_join(numbers)}"
    return f"{len(numbers)} {unit.lower()}s (the first is {unit.lower()} {numbers[0]})"


def _verb(numbers: list[int], singular: str, plural: str) -> str:
    return singular if len(numbers) == 1 else plural


def _join(numbers: list[int]) -> str:
    text = [str(n) for n in numbers]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]
