"""Every data set the app reads, as plain Python records.

Three shapes cover the demo: scored sentence pairs (STS benchmark, user uploads), NLI pairs with a
label, and (anchor, positive, negative) triplets. Local files come first (``SBERT_DEMO_DATA`` or
an explicit folder); the Hugging Face Hub is the fallback, tried only when it answers. ``datasets``
is imported inside the functions that need it so the CLI starts fast.

Example::

    >>> dev = sts_split("dev", "../shared/data")
    >>> len(dev), dev.scores[0]
    (1500, 5.0)
"""

from __future__ import annotations

import csv
import io
import logging
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from .config import settings
from .hub import HUB_UNREACHABLE, hub_reachable

logger = logging.getLogger(__name__)

STS_SPLITS = ("train", "dev", "test")
NLI_LABELS = ("entailment", "neutral", "contradiction")
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_PROBLEMS = 20

STS_HUB = "sentence-transformers/stsb"
NLI_HUB = "sentence-transformers/all-nli"

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
class ScoredPairs:
    """Sentence pairs with gold similarity scores exactly as given (any range).

    ``score_range`` is the nominal range when known (STSb files: 0..5, the Hub copy: 0..1) and is
    what :meth:`scaled` maps to 0..1 by default.
    """

    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]
    name: str
    problems: list[str] = field(default_factory=list)
    score_range: tuple[float, float] | None = None

    def __len__(self) -> int:
        return len(self.scores)

    def scaled(self, low: float | None = None, high: float | None = None) -> ScoredPairs:
        """A copy with scores mapped from ``low..high`` to 0..1.

        Bounds default to ``score_range`` when known, else to the scores' own min..max.
        """
        default_low, default_high = self.score_range or (min(self.scores), max(self.scores))
        low = default_low if low is None else low
        high = default_high if high is None else high
        if not high > low:
            raise ValueError(f"Cannot scale scores of {self.name}: the upper bound {high} must be "
                             f"above the lower bound {low}.")
        outside = [s for s in self.scores if not low - 1e-9 <= s <= high + 1e-9]
        if outside:
            raise ValueError(f"{len(outside)} scores of {self.name} lie outside {low}..{high} "
                             f"(e.g. {outside[0]}); pass bounds that contain every score.")
        scores = [min(1.0, max(0.0, (s - low) / (high - low))) for s in self.scores]
        return replace(self, scores=scores, score_range=(0.0, 1.0))


@dataclass(frozen=True)
class NliPairs:
    """Premise/hypothesis pairs with label ids indexing :data:`NLI_LABELS`."""

    premises: list[str]
    hypotheses: list[str]
    labels: list[int]
    name: str
    problems: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class Triplets:
    """(anchor, positive, hard negative) sentence triplets."""

    anchors: list[str]
    positives: list[str]
    negatives: list[str]
    name: str
    problems: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.anchors)


# ---------------------------------------------------------------------------------------------
# Where data comes from


def _folder(data_dir: str | Path | None) -> Path | None:
    if data_dir is not None and str(data_dir).strip():
        return Path(data_dir).expanduser()
    return settings().data_dir


def _unavailable(what: str, example: str, hub_id: str, tried: list[Path]) -> ValueError:
    looked = ""
    if tried:
        looked = f"No file at {' or '.join(str(p) for p in tried)}, and {HUB_UNREACHABLE}. "
    return ValueError(
        f"{looked}{what} data is not available: set SBERT_DEMO_DATA or pass --data-dir to a folder "
        f"containing {example}, or run where the Hugging Face Hub is reachable (dataset {hub_id})."
    )


def _load_hub(repo_id: str, subset: str | None, split: str) -> Any:
    """``datasets.load_dataset`` with its failures turned into a sentence."""
    import datasets

    logger.info("Loading %s %s/%s from the Hugging Face Hub", repo_id, subset or "", split)
    try:
        return datasets.load_dataset(repo_id, subset, split=split)
    except Exception as exc:  # network, auth and format errors all mean the same to a user
        raise ValueError(f"Could not load {repo_id} ({split}) from the Hugging Face Hub: {exc}. "
                         "Set SBERT_DEMO_DATA or pass --data-dir to use local files.") from exc


def _capped(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [f"… and {len(problems) - MAX_PROBLEMS} more rejected rows"]


def _shuffled(count: int, seed: int, limit: int | None) -> list[int]:
    if limit is not None and limit < 1:
        raise ValueError(f"The number of examples to keep must be at least 1, not {limit}.")
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order[:limit] if limit is not None else order


# ---------------------------------------------------------------------------------------------
# STS benchmark


def sts_split(split: str, data_dir: str | Path | None = None) -> ScoredPairs:
    """One split of the STS benchmark, scores 0..5 from local files (0..1 from the Hub).

    ``split`` is ``train``, ``dev`` (or ``validation``) or ``test``. Files are looked for in
    ``data_dir``, else ``SBERT_DEMO_DATA``, as ``stsbenchmark/sts-<split>.csv`` or
    ``sts-<split>.csv``; without them the Hub copy is used when the Hub answers.
    """
    split = split.strip().lower()
    split = "dev" if split == "validation" else split
    if split not in STS_SPLITS:
        raise ValueError(f"Unknown STS benchmark split {split!r}; choose one of "
                         f"{', '.join(STS_SPLITS)} (or validation for dev).")
    folder = _folder(data_dir)
    tried = [] if folder is None else [folder / "stsbenchmark" / f"sts-{split}.csv",
                                       folder / f"sts-{split}.csv"]
    for path in tried:
        if path.is_file():
            stat = path.resolve().stat()
            return _copy_pairs(_parse_sts_file(str(path.resolve()), stat.st_mtime_ns, split))
    if folder is not None:
        logger.warning("No STS benchmark %s file in %s; trying the Hub", split, folder)
    if not hub_reachable():
        raise _unavailable("STS benchmark", f"stsbenchmark/sts-{split}.csv", STS_HUB, tried)
    return _copy_pairs(_hub_sts(split))


def _copy_pairs(pairs: ScoredPairs) -> ScoredPairs:
    """A copy whose lists callers may change without touching the cache."""
    return replace(pairs, sentences1=list(pairs.sentences1), sentences2=list(pairs.sentences2),
                   scores=list(pairs.scores), problems=list(pairs.problems))


@lru_cache(maxsize=8)
def _parse_sts_file(path: str, mtime_ns: int, split: str) -> ScoredPairs:
    """Parse the original STSb format: tabs, no header, no quoting, first seven columns."""
    # The csv module cannot read this file: sentences contain unbalanced quote characters.
    text = Path(path).read_text(encoding="utf-8-sig")
    sentences1, sentences2, scores, problems = [], [], [], []
    # str.splitlines would also split on form feeds and Unicode separators inside sentences.
    for line_no, line in enumerate(text.split("\n"), start=1):
        fields = line.rstrip("\r").split("\t")
        if not line.strip():
            continue
        if len(fields) < 7:
            problems.append(f"line {line_no}: {len(fields)} tab-separated fields, expected 7")
            continue
        first, second = fields[5].strip(), fields[6].strip()
        if not first or not second:
            problems.append(f"line {line_no}: empty sentence")
            continue
        score = _number(fields[4], "score", line_no, problems)
        if score is None:
            continue
        sentences1.append(first)
        sentences2.append(second)
        scores.append(score)
    logger.info("Read %d STS benchmark pairs from %s", len(scores), path)
    pairs = ScoredPairs(sentences1, sentences2, scores, f"STSb {split}", _capped(problems),
                        score_range=(0.0, 5.0))
    _check_scored(pairs, path)
    return pairs


@lru_cache(maxsize=3)
def _hub_sts(split: str) -> ScoredPairs:
    hub_split = "validation" if split == "dev" else split
    rows = _load_hub(STS_HUB, None, hub_split)
    return ScoredPairs(list(rows["sentence1"]), list(rows["sentence2"]),
                       [float(s) for s in rows["score"]], f"STSb {split} (Hub)",
                       score_range=(0.0, 1.0))


# ---------------------------------------------------------------------------------------------
# User files: one reader of delimited text shared by every format


@dataclass(frozen=True)
class _Table:
    path: Path
    header: list[str]
    records: list[tuple[int, list[str]]]  # (line where the record starts, its fields)


def _decoded_text(path: Path) -> str:
    if not path.is_file():
        raise ValueError(f"File not found: {path}.")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{path.name} is {size / 2**20:.0f} MB; the limit is "
                         f"{MAX_FILE_BYTES // 2**20} MB. Use a smaller sample of it.")
    raw = path.read_bytes()
    hint = "save it as UTF-8 CSV (comma- or tab-separated text with a header row)."
    if b"\x00" in raw:
        raise ValueError(f"{path.name} is not UTF-8 text (it looks binary, e.g. a spreadsheet); "
                         + hint)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not UTF-8 text (undecodable byte at position "
                         f"{exc.start}); {hint}") from None
    if not text.strip():
        raise ValueError(f"{path.name} is empty; it needs a header row and at least two rows.")
    return text


def _delimiter(path: Path, header_line: str) -> str:
    if path.suffix.lower() in (".tsv", ".tab"):
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


# ---------------------------------------------------------------------------------------------
# NLI training data


def _nli_files(data_dir: str | Path | None) -> tuple[Path | None, list[Path]]:
    folder = _folder(data_dir)
    if folder is None:
        return None, []
    return folder / "nli", sorted((folder / "nli").glob("*.csv"))


@lru_cache(maxsize=2)
def _local_nli(files: tuple[tuple[str, int], ...]) -> NliPairs:
    """All labelled pairs of the given (path, mtime) files, in file order."""
    parts = [read_nli_file(path) for path, _ in files]
    problems = [f"{part.name}: {note}" for part in parts for note in part.problems]
    return NliPairs([p for part in parts for p in part.premises],
                    [h for part in parts for h in part.hypotheses],
                    [label for part in parts for label in part.labels], "NLI (local)", problems)


def _nli_source(data_dir: str | Path | None, kind: str) -> NliPairs | None:
    """The local NLI pairs, or None when the Hub should be used instead."""
    nli_dir, files = _nli_files(data_dir)
    if files:
        return _local_nli(tuple((str(f.resolve()), f.stat().st_mtime_ns) for f in files))
    if nli_dir is not None:
        logger.warning("No NLI files (*.csv) in %s; trying the Hub", nli_dir)
    if not hub_reachable():
        tried = [nli_dir / "*.csv"] if nli_dir is not None else []
        raise _unavailable(f"NLI {kind}", "nli/*.csv", NLI_HUB, tried)
    return None


def nli_pairs(data_dir: str | Path | None = None, max_pairs: int | None = None,
              seed: int = 42) -> NliPairs:
    """Labelled NLI pairs, shuffled with ``seed`` and cut to ``max_pairs``.

    Local files ``<data_dir>/nli/*.csv`` (SNLI/MultiNLI, 39,313 labelled pairs in the shared data)
    come first; else ``sentence-transformers/all-nli`` (pair-class, train) from the Hub.
    """
    local = _nli_source(data_dir, "pairs")
    if local is None:
        rows = _load_hub(NLI_HUB, "pair-class", "train")
        order = _shuffled(len(rows), seed, max_pairs)
        rows = rows.select(order)
        return NliPairs(list(rows["premise"]), list(rows["hypothesis"]),
                        [int(label) for label in rows["label"]], "all-nli pair-class (Hub)")
    order = _shuffled(len(local), seed, max_pairs)
    return NliPairs([local.premises[i] for i in order], [local.hypotheses[i] for i in order],
                    [local.labels[i] for i in order], local.name, list(local.problems))


def triplets_from_pairs(pairs: NliPairs) -> Triplets:
    """Each premise with every entailed hypothesis and a contradiction of the same premise.

    Contradictions are taken in order, cycling when a premise has fewer of them than entailments;
    premises lacking either kind are skipped.
    """
    by_premise: dict[str, tuple[list[str], list[str]]] = {}
    for premise, hypothesis, label in zip(pairs.premises, pairs.hypotheses, pairs.labels):
        entailed, contradicted = by_premise.setdefault(premise, ([], []))
        if label == 0:
            entailed.append(hypothesis)
        elif label == 2:
            contradicted.append(hypothesis)
    anchors, positives, negatives = [], [], []
    for premise, (entailed, contradicted) in by_premise.items():
        if contradicted:
            for i, positive in enumerate(entailed):
                anchors.append(premise)
                positives.append(positive)
                negatives.append(contradicted[i % len(contradicted)])
    return Triplets(anchors, positives, negatives, f"{pairs.name} triplets")


def nli_triplets(data_dir: str | Path | None = None, max_triplets: int | None = None,
                 seed: int = 42) -> Triplets:
    """Hard-negative triplets built from the local NLI pairs, else the Hub's all-nli triplets."""
    local = _nli_source(data_dir, "triplets")
    if local is None:
        rows = _load_hub(NLI_HUB, "triplet", "train")
        rows = rows.select(_shuffled(len(rows), seed, max_triplets))
        return Triplets(list(rows["anchor"]), list(rows["positive"]), list(rows["negative"]),
                        "all-nli triplet (Hub)")
    built = triplets_from_pairs(local)
    order = _shuffled(len(built), seed, max_triplets)
    return Triplets([built.anchors[i] for i in order], [built.positives[i] for i in order],
                    [built.negatives[i] for i in order], built.name)


# ---------------------------------------------------------------------------------------------
# Conversion for the trainer


def to_dataset(records: ScoredPairs | NliPairs | Triplets) -> Any:
    """A ``datasets.Dataset`` with the column names sentence-transformers losses expect.

    ScoredPairs → sentence1, sentence2, score (scale first with :meth:`ScoredPairs.scaled`);
    NliPairs → premise, hypothesis, label; Triplets → anchor, positive, negative.
    """
    from datasets import Dataset

    if isinstance(records, ScoredPairs):
        columns = {"sentence1": records.sentences1, "sentence2": records.sentences2,
                   "score": [float(s) for s in records.scores]}
    elif isinstance(records, NliPairs):
        columns = {"premise": records.premises, "hypothesis": records.hypotheses,
                   "label": records.labels}
    elif isinstance(records, Triplets):
        columns = {"anchor": records.anchors, "positive": records.positives,
                   "negative": records.negatives}
    else:
        raise TypeError("to_dataset takes ScoredPairs, NliPairs or Triplets, "
                        f"not {type(records).__name__}.")
    return Dataset.from_dict(columns)
