"""User files: CSV/TSV tables of scored pairs, NLI pairs or triplets.

The table is read by :mod:`.tables` (size, encoding, columns by name with common aliases); here
each row becomes a record, and rejected rows are reported with their line numbers instead of
being dropped silently.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from pathlib import Path

from .records import NLI_LABELS, NliPairs, ScoredPairs, Triplets, capped
from .tables import Table, find_columns, read_table

logger = logging.getLogger(__name__)

SENTENCE1_NAMES = ("sentence1", "sentence_1", "s1", "text1", "text_a", "sentence_a", "premise",
                   "anchor", "query", "first")


SENTENCE2_NAMES = ("sentence2", "sentence_2", "s2", "text2", "text_b", "sentence_b", "hypothesis",
                   "positive", "second")


SCORE_NAMES = ("score", "label", "similarity", "gold", "relatedness", "rating", "gold_score")


LABEL_NAMES = ("label", "gold_label", "labels", "class")


ANCHOR_NAMES = ("anchor", "query", "sentence", "sentence1", "premise", "text", "text1")


POSITIVE_NAMES = ("positive", "pos", "sentence2", "entailment", "text2")


NEGATIVE_NAMES = ("negative", "neg", "hard_negative", "sentence3", "contradiction", "text3")


def _records(table: Table, columns: dict[str, int],
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


def parse_number(value: str, what: str, line_no: int, problems: list[str]) -> float | None:
    """``value`` as a finite number, else None with a problem naming the line."""
    try:
        number = float(value)
    except ValueError:
        problems.append(f"line {line_no}: {what} {value.strip()!r} is not a number")
        return None
    if not math.isfinite(number):
        problems.append(f"line {line_no}: {what} {value.strip()!r} is not a finite number")
        return None
    return number


def check_scored(pairs: ScoredPairs, source: str) -> None:
    """A ValueError unless ``pairs`` has at least two pairs and scores that vary (a correlation needs both)."""
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
    table = read_table(path)
    columns = find_columns(table, {"sentence1": (sentence1_column, SENTENCE1_NAMES),
                               "sentence2": (sentence2_column, SENTENCE2_NAMES),
                               "score": (score_column, SCORE_NAMES)})
    sentences1, sentences2, scores, problems = [], [], [], []
    for line_no, values in _records(table, columns, problems):
        score = parse_number(values["score"], "score", line_no, problems)
        if score is not None:
            sentences1.append(values["sentence1"])
            sentences2.append(values["sentence2"])
            scores.append(score)
    pairs = ScoredPairs(sentences1, sentences2, scores, name or table.path.name, capped(problems))
    check_scored(pairs, table.path.name)
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
    table = read_table(path)
    columns = find_columns(table, {"premise": (None, SENTENCE1_NAMES),
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
    notes = capped(problems)
    if unlabelled:
        notes.append(f"{unlabelled} rows without a gold label ('-') skipped")
    return NliPairs(premises, hypotheses, labels, name or table.path.name, notes)


def read_triplets_file(path: str | Path, name: str | None = None) -> Triplets:
    """Read (anchor, positive, negative) triplets from a CSV/TSV file with a header row."""
    table = read_table(path)
    columns = find_columns(table, {"anchor": (None, ANCHOR_NAMES),
                               "positive": (None, POSITIVE_NAMES),
                               "negative": (None, NEGATIVE_NAMES)})
    problems: list[str] = []
    rows = [values for _, values in _records(table, columns, problems)]
    if len(rows) < 2:
        raise ValueError(f"{table.path.name} has {len(rows)} usable triplets; at least 2 are "
                         f"needed. {'; '.join(problems[:5])}".rstrip())
    return Triplets([r["anchor"] for r in rows], [r["positive"] for r in rows],
                    [r["negative"] for r in rows], name or table.path.name, capped(problems))
