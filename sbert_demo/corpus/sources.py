"""Large corpora read as streams: files, folders of Parquet shards and Hugging Face datasets.

Up to :data:`MAX_SENTENCES` distinct sentences from

* a ``.parquet``, ``.csv``, ``.tsv``, ``.txt`` or ``.jsonl`` file, or a folder of Parquet shards
  (read a record batch at a time with pyarrow: a million rows never sit in memory as a table);
* a Hugging Face dataset (``datasets.load_dataset`` with a config, a split and columns): from the Hub
  where it is reachable, and here from local files (``load_dataset("parquet", data_files=...)``) or a
  dataset folder saved with ``save_to_disk``.

The text column is the one named, else found by name (:data:`~sbert_demo.data.corpora.TEXT_COLUMNS`);
a label column likewise (``""``: none). Texts are cleaned as typed ones are, cut at
:data:`~sbert_demo.data.corpora.MAX_SENTENCE_CHARS` characters, blank ones dropped and repeats kept once.
What cannot be used gets a sentence that says what to do: no text column, a column of numbers, an
empty file, more rows than the limit, a dataset that does not exist or cannot be reached offline.

The corpus's :attr:`LargeCorpus.content_id` hashes its sentences and labels in order: the same
corpus, from whatever file, has the same id, and its embeddings and maps are found again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..data.corpora import LABEL_COLUMNS, MAX_SENTENCE_CHARS, NO_LABEL, TEXT_COLUMNS, cell_text
from ..data.tables import find_column, no_text_column
from ..data.tables import not_utf8
from ..data.text import clean_text, is_blank
from .access import NotShared
from ..data.fields import Field, infer_all

MAX_SENTENCES = 1_000_000  # one 2-core machine maps this many in minutes (bench/million.py)
MAX_UPLOAD_BYTES = 300 * 2**20  # the one limit of a corpus file uploaded to the app, whatever its rows
SUFFIXES = (".parquet", ".csv", ".tsv", ".txt", ".jsonl")
BATCH_ROWS = 65_536
FIRST_CHUNK = 1 << 20  # what decides, in well under a second, that a text file is text: lines, no NUL bytes
MAX_LINE_CHARS = 4 << 20  # a line (a row, a record) is read whole: past this it is no sentence's, and refused
NUMBER = re.compile(r"^[\s+-]*[\d.,eE+-]+\s*$")

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class SourceSpec:
    """Where a corpus comes from: a file or folder (``path``) or a dataset (``dataset``, with ``config``,
    ``split`` and ``data_files``), and which columns hold the text and the labels."""

    path: str | None = None
    dataset: str | None = None
    config: str | None = None
    split: str = "train"
    data_files: tuple[str, ...] = ()
    text_column: str | None = None
    label_column: str | None = None  # None: found by name; "": no labels
    fields: tuple[str, ...] | None = None  # the columns kept beside the text (None: every one)
    visitor: bool = False  # named by a visitor of the app: only what :mod:`.access` allows is read

    @property
    def name(self) -> str:
        if self.path:
            return Path(self.path).name
        files = f" ({len(self.data_files)} files)" if self.data_files else ""
        return f"{self.dataset}{'/' + self.config if self.config else ''}:{self.split}{files}"


@dataclass(frozen=True)
class LargeCorpus:
    name: str
    sentences: list[str] = field(repr=False)
    labels: list[str] | None = field(repr=False)
    text_column: str | None = None
    label_name: str | None = None
    rows: int = 0  # rows read (before blanks and repeats were dropped)
    notes: tuple[str, ...] = ()
    fields: tuple[Field, ...] = field(default=(), repr=False)  # its other columns, a value per sentence

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def content_id(self) -> str:
        """What the corpus is, whatever its file: a hash of its sentences and labels in order."""
        digest = hashlib.sha256()
        for i, sentence in enumerate(self.sentences):
            digest.update(sentence.encode("utf-8", "surrogatepass") + b"\0")
            if self.labels is not None:
                digest.update(self.labels[i].encode("utf-8", "surrogatepass") + b"\1")
        return digest.hexdigest()[:24]

    def describe(self) -> str:
        labels = f", labels from '{self.label_name}' ({len(set(self.labels)):,})" if self.labels is not None else ""
        return f"{self.name}: {len(self):,} sentences{f' from {self.text_column!r}' if self.text_column else ''}{labels}"


def checked(spec: SourceSpec) -> SourceSpec:
    """``spec`` as it may be read: a visitor's passes :mod:`.access`'s allow list (a dataset id or a shared
    folder, never a path or data files of their choosing), anything else as given."""
    if not spec.visitor:
        return spec
    from .access import check_visitor_dataset, check_visitor_parts, visitor_roots

    if spec.path or spec.data_files or not spec.dataset:
        raise ValueError("Name a Hugging Face dataset by its id, or upload a file.")
    roots, forbidden = visitor_roots()
    dataset = check_visitor_dataset(spec.dataset, roots, forbidden)
    check_visitor_parts(spec.config, spec.split)
    return replace(spec, dataset=dataset)


def read_source(spec: SourceSpec, max_sentences: int = MAX_SENTENCES, progress: Progress | None = None) -> LargeCorpus:
    """The corpus ``spec`` names, read in batches (a ValueError that says what to do when it cannot be)."""
    spec = checked(spec)
    if spec.dataset:
        columns, total, batches = _dataset_batches(spec)
    elif spec.path:
        columns, total, batches = _file_batches(Path(spec.path).expanduser())
    else:
        raise ValueError("Give a corpus: a file (.parquet, .csv, .tsv, .txt, .jsonl), a folder of Parquet files "
                         "or a Hugging Face dataset.")
    if total is not None and total > 2 * max_sentences:  # repeats are dropped, but not this many
        raise ValueError(f"{spec.name} has {total:,} rows; a corpus map takes at most {max_sentences:,} sentences. "
                         "Give a sample of it (e.g. its first shards, or a dataset split like 'train[:1000000]').")
    text, label = _columns(spec, columns)
    plain = bool(spec.path) and Path(spec.path).suffix.lower() == ".txt"  # a .txt's "label | " is its labels only
    return _collect(spec, text, label, total, batches, max_sentences, progress,
                    [] if plain else [name for name in columns if name != text])


def row_count(path: str | Path) -> int:
    """About how many rows a file (or folder of Parquet files) holds, cheaply: Parquet's metadata, else its
    lines; 0 where it cannot be read (reading it then says why)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        if path.is_dir():
            return sum(pq.ParquetFile(part).metadata.num_rows for part in sorted(path.glob("*.parquet")))
        if path.suffix.lower() == ".parquet":
            return pq.ParquetFile(path).metadata.num_rows
        lines = 0
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 22):
                lines += chunk.count(b"\n")
        return lines
    except (OSError, pa.ArrowException):
        return 0


def _columns(spec: SourceSpec, columns: list[str]) -> tuple[str, str | None]:
    if not columns:
        raise ValueError(f"{spec.name} is empty; a corpus needs at least two sentences.")
    text_at = find_column(columns, TEXT_COLUMNS, spec.text_column, "text", spec.name)
    if text_at is None:
        raise ValueError(no_text_column(spec.name, columns, TEXT_COLUMNS))
    label_at = None if spec.label_column == NO_LABEL else find_column(columns, LABEL_COLUMNS, spec.label_column,
                                                                      "label", spec.name)
    if label_at == text_at:
        raise ValueError(f"'{columns[text_at]}' cannot be both the text and the label column; choose another.")
    return columns[text_at], None if label_at is None else columns[label_at]


def _collect(spec: SourceSpec, text: str, label: str | None, total: int | None,
             batches: Iterator[dict[str, list]], max_sentences: int, progress: Progress | None,
             others: list[str] = ()) -> LargeCorpus:
    sentences: list[str] = []
    labels: list[str] = []
    kept = [name for name in (others if spec.fields is None else spec.fields) if name in others]
    cells: dict[str, list] = {name: [] for name in kept}  # each kept column's cell of each kept sentence
    seen: set[bytes] = set()
    rows = blank = cut = repeats = removed = cleaned = 0
    checked = False
    for batch in batches:
        texts = batch.get(text)
        if texts is None:
            raise ValueError(f"{spec.name} has no column {text!r} in every part; choose the text column again.")
        if not checked:  # a column of numbers is not text: say so instead of mapping digits
            sample = [str(t) for t in texts[:1000] if t is not None and str(t).strip()]
            if sample and sum(bool(NUMBER.match(t)) for t in sample) >= 0.9 * len(sample):
                raise ValueError(f"The column {text!r} of {spec.name} holds numbers, not text; choose the text column.")
            checked = bool(sample)
        names = batch.get(label) if label else None
        taken: list[int] = []  # the rows of this batch kept, for the other columns' cells
        for i, value in enumerate(texts):
            rows += 1
            sentence = cell_text(value)
            if not sentence.isprintable():
                sentence, gone = clean_text(sentence)
                removed, cleaned = removed + gone, cleaned + bool(gone)
            sentence = " ".join(sentence.split())
            if not sentence or is_blank(sentence):
                blank += 1
                continue
            if len(sentence) > MAX_SENTENCE_CHARS:
                sentence, cut = sentence[:MAX_SENTENCE_CHARS], cut + 1
            key = hashlib.blake2b(sentence.encode("utf-8", "surrogatepass"), digest_size=12).digest()
            if key in seen:
                repeats += 1
                continue
            if len(sentences) >= max_sentences:
                raise ValueError(f"{spec.name} holds more than {max_sentences:,} distinct sentences; a corpus map takes "
                                 f"at most {max_sentences:,}. Give a sample of it.")
            seen.add(key)
            sentences.append(sentence)
            taken.append(i)
            if names is not None:
                labels.append(" ".join(cell_text(names[i]).split()) or "(none)")
        for name in kept:  # a batch's column at once (a part without the column: missing)
            column = batch.get(name)
            cells[name].extend([None] * len(taken) if column is None else
                               column if len(taken) == len(column) else [column[i] for i in taken])
        if progress:
            progress(min(0.99, rows / total) if total else 0.0, f"Reading {spec.name}: {rows:,} rows")
    if len(sentences) < 2:
        raise ValueError(f"{spec.name} has {len(sentences)} usable sentence(s); a corpus needs at least two.")
    notes = [f"{count:,} {what}" for count, what in (
        (blank, "blank rows skipped"), (repeats, "repeated sentences kept once"),
        (cut, f"texts cut at {MAX_SENTENCE_CHARS:,} characters"),
        (removed, f"invisible or control characters removed from {cleaned:,} texts (emoji sequences kept whole)"))
        if count]
    labelled = label is not None and len(labels) == len(sentences)  # a .txt without "label | " has none
    fields, left_out = infer_all(cells, [name for name in (spec.fields or kept)])
    return LargeCorpus(spec.name, sentences, labels if labelled else None, text, label if labelled else None, rows,
                       tuple(notes + left_out), fields)


# --- files -------------------------------------------------------------------------------------------

def _file_batches(path: Path) -> tuple[list[str], int | None, Iterator[dict[str, list]]]:
    """(column names, row count if known, batches as {column: values})."""
    if path.is_dir():
        parts = sorted(path.glob("*.parquet"))
        if not parts:
            raise ValueError(f"The folder {path.name} holds no .parquet files; give a folder of Parquet shards or a file.")
        return _parquet(parts, path.name)
    if not path.is_file():
        raise ValueError(f"{path.name} was not found; check the path.")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"{path.name} is not a {', '.join(SUFFIXES[:-1])} or {SUFFIXES[-1]} file; give one of those.")
    if path.stat().st_size == 0:
        raise ValueError(f"{path.name} is empty; a corpus needs at least two sentences.")
    if suffix == ".parquet":
        return _parquet([path], path.name)
    check_text_start(path)
    if suffix in (".csv", ".tsv"):
        return _delimited(path, "\t" if suffix == ".tsv" else ",")
    if suffix == ".jsonl":
        return _jsonl(path)
    return ["text", "label"], None, _txt(path)


def _parquet(parts: list[Path], name: str):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        files = [pq.ParquetFile(p) for p in parts]
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{name} is not readable as Parquet ({exc}); write it again.") from None
    columns = list(files[0].schema_arrow.names)
    total = sum(f.metadata.num_rows for f in files)

    def batches():
        for handle in files:
            try:
                for batch in handle.iter_batches(batch_size=BATCH_ROWS):
                    yield batch.to_pydict()
            except (pa.ArrowException, OSError) as exc:
                raise ValueError(f"A part of {name} could not be read ({exc}); write it again.") from None

    return columns, total, batches()


def _delimited(path: Path, delimiter: str):
    import pyarrow as pa
    from pyarrow import csv

    try:
        reader = csv.open_csv(path, read_options=csv.ReadOptions(block_size=1 << 24),
                              parse_options=csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
                              convert_options=csv.ConvertOptions(strings_can_be_null=True))
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path.name} could not be read as {'TSV' if delimiter == chr(9) else 'CSV'} ({exc}); save it "
                         "as UTF-8 with a header row.") from None
    columns = list(reader.schema.names)
    if any(pa.types.is_binary(t) or pa.types.is_large_binary(t) for t in reader.schema.types):
        raise not_utf8(path.name, "save it as UTF-8 CSV and upload it again.")  # Arrow keeps such a column as bytes

    def batches():
        try:
            for batch in reader:
                yield {name: [None if v is None else str(v) for v in batch.column(i).to_pylist()]
                       for i, name in enumerate(columns)}
        except (pa.ArrowException, OSError) as exc:
            if "UTF8" in str(exc) or "utf-8" in str(exc).lower():
                raise not_utf8(path.name, "save it as UTF-8 CSV and upload it again.") from None
            raise ValueError(f"{path.name} could not be read past a point ({exc}); save it again as UTF-8.") from None

    return columns, None, batches()


def check_text_start(path: Path) -> None:
    """Refuse, from its first MB alone, a file that cannot be lines of text: NUL bytes (a binary file, a sparse
    one) or no line break where more follows (a sentence per line, a row per line); a ValueError that says so."""
    with path.open("rb") as handle:
        start = handle.read(FIRST_CHUNK)
        more = bool(handle.read(1))
    if b"\x00" in start:
        raise ValueError(f"{path.name} holds NUL bytes in its first MB: it is a binary file, not text. Save the corpus "
                         "as UTF-8 text (.txt, .csv, .tsv, .jsonl) or as .parquet.")
    if more and b"\n" not in start and b"\r" not in start:
        raise ValueError(f"{path.name} has no line break in its first MB; a corpus file holds one sentence (or row) "
                         "per line. Save it with one per line.")


def _utf8_lines(path: Path, hint: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a UTF-8 file (a BOM is dropped); any other encoding is refused with a sentence,
    never read with replacement characters, and so is a line longer than :data:`MAX_LINE_CHARS` (memory stays
    bounded however the file is made)."""
    number = 0
    try:
        with path.open(encoding="utf-8-sig", errors="strict") as handle:
            while line := handle.readline(MAX_LINE_CHARS + 1):
                number += 1
                if len(line) > MAX_LINE_CHARS:
                    raise ValueError(f"Line {number:,} of {path.name} is longer than {MAX_LINE_CHARS:,} characters; "
                                     "a corpus holds one sentence (or row) per line.")
                if "\x00" in line:
                    raise ValueError(f"Line {number:,} of {path.name} holds NUL bytes: the file is not all text. "
                                     "Save the corpus as UTF-8 text.")
                yield number, line
    except UnicodeDecodeError:
        raise not_utf8(path.name, hint, line=number + 1) from None


def _json_record(line: str, number: int, name: str):
    try:
        return json.loads(line)
    except RecursionError:  # a line nested deeper than any record is
        raise ValueError(f"Line {number:,} of {name} is nested too deeply to be a record; fix or remove it.") from None
    except ValueError:
        raise ValueError(f"Line {number:,} of {name} is not a JSON object; fix or remove it.") from None


def _jsonl(path: Path):
    hint = "save it as UTF-8 JSON Lines and upload it again."
    lines = _utf8_lines(path, hint)
    number, first = next(((n, line) for n, line in lines if line.strip()), (1, ""))
    lines.close()
    record = _json_record(first, number, path.name) if first else {}
    if not isinstance(record, dict):
        raise ValueError(f"{path.name} is not JSON Lines (one JSON object per line); save it again.")
    columns = list(record.keys())

    def batches():
        batch: dict[str, list] = {name: [] for name in columns}
        for number, line in _utf8_lines(path, hint):
            if not line.strip():
                continue
            record = _json_record(line, number, path.name)
            for name in columns:
                batch[name].append(record.get(name) if isinstance(record, dict) else None)
            if len(batch[columns[0]]) >= BATCH_ROWS:
                yield batch
                batch = {name: [] for name in columns}
        yield batch

    return columns, None, batches()


def _txt(path: Path):
    """One sentence per line, optionally ``label | sentence`` (as in the text box)."""
    texts: list[str] = []
    labels: list[str] = []
    labelled = None
    for _, line in _utf8_lines(path, "save it as UTF-8 plain text and upload it again."):
        label, bar, sentence = line.partition("|")
        if labelled is None and line.strip():
            labelled = bool(bar) and 0 < len(label.strip()) <= 60
        if labelled and bar:
            texts.append(sentence)
            labels.append(label.strip())
        else:
            texts.append(line)
            labels.append("(none)")
        if len(texts) >= BATCH_ROWS:
            yield {"text": texts, "label": labels if labelled else None}
            texts, labels = [], []
    yield {"text": texts, "label": labels if labelled else None}


# --- Hugging Face datasets ----------------------------------------------------------------------------

def _dataset_batches(spec: SourceSpec):
    from ..hub import hub_reachable

    import datasets

    local = Path(spec.dataset).expanduser()
    hub_only = spec.visitor and not local.is_absolute()  # a visitor's id that passed the allow list
    folder = not hub_only and local.is_dir()  # read here, Hub or not: save_to_disk's, or a folder of data files
    saved = folder and any((local / n).is_file() for n in ("dataset_info.json", "state.json", "dataset_dict.json"))
    if not folder and not (spec.dataset in ("parquet", "csv", "json", "text") and spec.data_files) and not hub_reachable():
        raise ValueError(f"The dataset {spec.dataset!r} is on the Hugging Face Hub, which cannot be reached from here; "
                         + ("upload the corpus as a file instead." if spec.visitor else
                            "give local files (e.g. --dataset parquet --data-files 'part-*.parquet') or a folder saved "
                            "with save_to_disk."))
    try:
        if saved:
            loaded = datasets.load_from_disk(str(local))
        elif spec.visitor and folder:
            loaded = _shared_folder(local, spec)
        else:
            # A visitor reads public datasets only: never with the operator's token.
            loaded = datasets.load_dataset(str(local) if folder else spec.dataset, spec.config, split=spec.split,
                                           data_files=list(spec.data_files) or None,
                                           **({"token": False} if spec.visitor else {}))
    except NotShared:  # a file outside the shared folders: said as it is
        raise
    except FileNotFoundError as exc:
        raise ValueError(f"The dataset {spec.dataset!r} was not found ({str(exc)[:200]}); check its name or files.") from None
    except Exception as exc:  # datasets raises many kinds (DatasetNotFoundError, ConnectionError, ValueError ...)
        raise ValueError(f"The dataset {spec.dataset!r} could not be loaded ({str(exc)[:200]}); check its name, "
                         "config, split and files.") from None
    if isinstance(loaded, datasets.DatasetDict):
        if spec.split not in loaded:
            raise ValueError(f"The dataset folder {local.name} has no split {spec.split!r} (it has {', '.join(loaded)}).")
        loaded = loaded[spec.split]
    columns = list(loaded.column_names)

    def batches():
        for batch in loaded.iter(batch_size=BATCH_ROWS):
            yield batch

    return columns, loaded.num_rows, batches()


def _shared_folder(local: Path, spec: SourceSpec):
    """A folder of data files under a root the operator shares, as ``load_dataset`` reads it, with every data
    file its loader resolves (its README may name patterns) checked to lie under a root before one is read."""
    import datasets

    from .access import check_visitor_files, visitor_roots

    builder = datasets.load_dataset_builder(str(local), spec.config, token=False)
    check_visitor_files([name for files in (builder.config.data_files or {}).values() for name in files],
                        *visitor_roots())
    builder.download_and_prepare()
    return builder.as_dataset(split=spec.split)
