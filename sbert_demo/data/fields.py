"""A corpus's own columns beside its text (a product, a genre, a source, a year, a rating): each kept per
sentence, its type inferred from its values and said, missing values kept as missing.

* **category** — up to :data:`MAX_CATEGORIES` distinct values: codes (uint16, :data:`MISSING` where a row
  has none) into its values, most frequent first;
* **number** — every value a number: float (NaN where missing);
* **date** — every value an ISO date or time (``2016-03-01``, ``2016-03-01T12:00``): days since 1970 as a
  float (NaN where missing);
* **text** — anything else (more distinct values than a category holds): not a facet; said so.

An empty column (every value missing) is left out, and said. A column mixing numbers and words is a category
when few values, else text, and its note says it mixed them.

    >>> genre = infer("genre", ["news", "forum", "news", None, "news"])
    >>> genre.kind, genre.categories, genre.values.tolist(), genre.missing
    ('category', ('news', 'forum'), [0, 1, 0, 65535, 0], 1)
    >>> infer("score", ["4.5", 3, "", "0.25"]).values.tolist()[:2], infer("score", ["4.5", 3]).kind
    ([4.5, 3.0], 'number')
    >>> infer("when", ["2016-03-01", "2016-03-02"]).values.tolist()
    [16861.0, 16862.0]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone

import numpy as np

MAX_CATEGORIES = 300  # more distinct values than this: text, not a facet
MISSING = 65_535  # a category's code where the row has no value
KINDS = ("category", "number", "date", "text")


@dataclass(frozen=True)
class Field:
    """One column of a corpus, a value per sentence: ``values`` are codes (category), floats (number, date: days
    since 1970) or strings (text); ``missing`` rows have none."""
    name: str
    kind: str
    values: np.ndarray
    categories: tuple[str, ...] = ()
    missing: int = 0
    note: str = ""

    def describe(self) -> str:
        """One line, e.g. "genre: category, 3 values (captions 50%, news 33%, forums 17%)"."""
        known = len(self.values) - self.missing
        if self.kind == "category":
            counts = np.bincount(self.values[self.values != MISSING], minlength=len(self.categories))
            top = ", ".join(f"{name} {count / max(known, 1):.0%}" for name, count in
                            zip(self.categories[:4], counts[:4]))
            what = f"category, {len(self.categories):,} value(s) ({top}{', …' if len(self.categories) > 4 else ''})"
        elif self.kind in ("number", "date"):
            shown = (lambda v: f"{v:g}") if self.kind == "number" else _day
            what = (f"{self.kind}, {shown(float(np.nanmin(self.values)))} to {shown(float(np.nanmax(self.values)))}"
                    if known else self.kind)
        else:
            what = "text (not a facet)"
        missing = f", {self.missing:,} missing" if self.missing else ""
        return f"{self.name}: {what}{missing}{f' ({self.note})' if self.note else ''}"


def _day(days: float) -> str:
    return datetime.fromtimestamp(days * 86400, timezone.utc).date().isoformat()


def _cell(value: object) -> str | None:
    """A cell as text, or None where it is missing (None, NaN, blank)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    text = " ".join(str(value).split())
    return text or None


def _number(text: str) -> float | None:
    try:
        number = float(text.replace("_", "#"))  # Python reads "1_000" as a number; a corpus's cell is not one
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _days(text: str) -> float | None:
    if len(text) < 10 or text[4] != "-":
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp() / 86400


# What Python's str.split() splits on, for Arrow's regular expressions (RE2's \\s is ASCII only)
SPACES = r"[\s\p{Z}\x{0B}\x{1C}-\x{1F}\x{85}]+"
NUMBER = r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$"  # a value float() reads (finite, no underscores)


def infer(name: str, cells: Sequence[object]) -> Field:
    """The column ``name`` (a value per sentence) with its type inferred from its values (the module's rules)."""
    found = _infer_arrow(name, cells)
    return found if found is not None else _infer_cells(name, cells)


def _infer_cells(name: str, cells: Sequence[object]) -> Field:
    """The module's rules, a cell at a time."""
    texts = [_cell(value) for value in cells]
    known = [t for t in texts if t is not None]
    missing = len(texts) - len(known)
    if not known:
        return Field(name, "empty", np.zeros(0), missing=missing)
    for kind, read in (("number", _number), ("date", _days)):
        parsed = [None if t is None else read(t) for t in texts]
        failed = sum(p is None for p in parsed) - missing
        if not failed:
            return Field(name, kind, np.array([np.nan if p is None else p for p in parsed], dtype=np.float64),
                         missing=missing)
    counts = Counter(known)
    mixed = sum(_number(t) is not None for t in counts) not in (0, len(counts))
    note = "numbers and words mixed" if mixed else ""
    if len(counts) > MAX_CATEGORIES:
        return Field(name, "text", np.array(texts, dtype=object), missing=missing,
                     note=f"{note}; " * bool(note) + f"{len(counts):,} distinct values, more than a facet's "
                          f"{MAX_CATEGORIES}")
    categories = tuple(value for value, _ in counts.most_common())
    index = {value: i for i, value in enumerate(categories)}
    codes = np.array([MISSING if t is None else index[t] for t in texts], dtype=np.uint16)
    return Field(name, "category", codes, categories, missing, note)


def _infer_arrow(name: str, cells: Sequence[object]) -> Field | None:
    """The module's rules over an Arrow array, in Arrow's loops (a million cells in a fraction of a second), for a
    column of numbers or of text; None for anything else (mixed types, booleans, date objects), which the cell by
    cell rules take."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(cells, from_pandas=True)  # None and NaN: missing
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    if pa.types.is_null(array.type):
        return Field(name, "empty", np.zeros(0), missing=len(array))
    if pa.types.is_integer(array.type) or pa.types.is_floating(array.type):
        values = pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False)
        known = ~np.isnan(values)
        if not known.any() or not np.isfinite(values[known]).all():
            return None
        return Field(name, "number", values, missing=int((~known).sum()))
    if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
        return None
    text = pc.utf8_trim_whitespace(pc.replace_substring_regex(array, SPACES, " "))
    text = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
    missing = text.null_count
    if missing == len(text):
        return Field(name, "empty", np.zeros(0), missing=missing)
    try:
        number = pc.cast(text, pa.float64())
        if pc.all(pc.is_finite(number)).as_py():
            return Field(name, "number", number.to_numpy(zero_copy_only=False), missing=missing)
    except pa.ArrowInvalid:
        pass
    if pc.all(pc.match_substring_regex(text, r"^\d{4}-.{5}")).as_py():  # the module's dates: 2016-03-01...
        try:
            when = pc.cast(text, pa.timestamp("ms")).cast(pa.int64()).to_numpy(zero_copy_only=False)
        except pa.ArrowInvalid:
            return None  # a time zone, or another form fromisoformat reads: the cell by cell rules
        return Field(name, "date", when.astype(np.float64) / 86_400_000, missing=missing)
    counted = pc.value_counts(text.drop_null())  # in order of first appearance
    values, counts = counted.field("values"), counted.field("counts").to_numpy()
    numeric = pc.sum(pc.match_substring_regex(values, NUMBER)).as_py() or 0
    note = "numbers and words mixed" if numeric not in (0, len(values)) else ""
    if len(values) > MAX_CATEGORIES:
        return Field(name, "text", np.array(text.to_pylist(), dtype=object), missing=missing,
                     note=f"{note}; " * bool(note) + f"{len(values):,} distinct values, more than a facet's "
                          f"{MAX_CATEGORIES}")
    order = np.argsort(-counts, kind="stable")  # most frequent first, ties as first seen (Counter.most_common)
    categories = pa.array(values.to_pylist(), pa.string()).take(pa.array(order))
    codes = pc.index_in(text, value_set=categories).to_numpy(zero_copy_only=False)
    codes = np.where(np.isnan(codes.astype(np.float64)), MISSING, codes).astype(np.uint16)
    return Field(name, "category", codes, tuple(categories.to_pylist()), missing, note)


def infer_all(columns: dict[str, Sequence[object]], chosen: Sequence[str] | None = None) -> tuple[tuple[Field, ...],
                                                                                                 list[str]]:
    """Each column of ``columns`` (name → a value per sentence; ``chosen``: only these, in this order) with its
    type, and a note for each one left out (empty) or asked for and not there."""
    notes = []
    names = list(columns) if chosen is None else list(chosen)
    fields = []
    for name in names:
        if name not in columns:
            notes.append(f"the column {name!r} is not in the corpus (columns: {', '.join(list(columns)[:12])})")
            continue
        found = infer(name, columns[name])
        if found.kind == "empty":
            notes.append(f"the column {name!r} is empty (every value missing): left out")
            continue
        fields.append(found)
    return tuple(fields), notes
