"""Corpora for the corpus map: up to 20,000 sentences from a user's file, or the built-in one.

A corpus file is ``.txt`` (one sentence per line, optionally ``label | sentence``, as in the text
box), or a table (``.csv``, ``.tsv``, ``.parquet``) with a text column and an optional label
column. Columns are found by name (``sentence``, ``text``, ... and ``label``, ``group``, ``genre``,
...) unless the user names them. Sentences are cleaned like typed ones; repeats are dropped (a map
draws each sentence once). The built-in corpus is every distinct sentence of the shipped STS
benchmark, labelled by the data set it came from (news headlines, image captions, forums, ...).

Example::

    >>> corpus = stsb_corpus()
    >>> len(corpus.sentences) > 15000, corpus.label_name
    (True, 'source')
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

from .benchmarks import STS_SPLITS, data_folder
from .fields import infer_all
from .sentences import ParsedSentences, clean_records, parse_lines
from .tables import check_size, decode_upload, find_column, no_text_column, not_utf8, read_table

logger = logging.getLogger(__name__)

MAX_CORPUS_SENTENCES = 20_000  # a map stays readable and a CPU encodes it in about a minute
MAX_CORPUS_BYTES = 50 * 1024 * 1024
MAX_SENTENCE_CHARS = 2_000  # longer texts are cut; the models read far less than this anyway
CORPUS_SUFFIXES = (".txt", ".csv", ".tsv", ".parquet")
TEXT_COLUMNS = ("sentence", "text", "sentences", "query", "document", "content", "title", "body")
LABEL_COLUMNS = ("label", "group", "topic", "category", "genre", "source", "class", "cluster")
NO_LABEL = ""  # a label column named as "" means: no labels, colour by clusters
STSB_CORPUS = "STS benchmark sentences"


@dataclass(frozen=True)
class Corpus:
    name: str  # the file name, or the built-in corpus's title
    sentences: list[str]
    labels: list[str] | None  # one per sentence, or None
    label_name: str | None  # the column (or "label" for a .txt) the labels came from
    columns: tuple[str, ...] = ()  # a table's columns, for choosing others; () for .txt
    text_column: str | None = None
    notes: list[str] = field(default_factory=list)
    fields: tuple = ()  # its other columns, typed (.fields.Field), a value per sentence

    def __len__(self) -> int:
        return len(self.sentences)

    def describe(self) -> str:
        """One line about it, e.g. "news.csv: 12,000 sentences from 'text', labels from 'topic' (8)"."""
        source = f" from '{self.text_column}'" if self.text_column else ""
        labels = (f", labels from '{self.label_name}' ({len(set(self.labels)):,})" if self.labels is not None
                  else ", no labels")
        return f"{self.name}: {len(self.sentences):,} sentences{source}{labels}"


def read_corpus(path: str | Path, text_column: str | None = None, label_column: str | None = None,
                max_sentences: int = MAX_CORPUS_SENTENCES) -> Corpus:
    """Read a corpus file. ``label_column=""`` means no labels; None finds one by name if there is one."""
    path = Path(path)
    name = path.name
    suffix = path.suffix.lower()
    if suffix not in CORPUS_SUFFIXES:
        raise ValueError(f"{name} is not a {', '.join(CORPUS_SUFFIXES[:-1])} or {CORPUS_SUFFIXES[-1]} file; "
                         "upload one of those.")
    if not path.is_file():
        raise ValueError(f"The file {name} was not found; upload it again.")
    check_size(path, MAX_CORPUS_BYTES, f" for a corpus (and {max_sentences:,} sentences)")
    if suffix == ".txt":
        data = path.read_bytes()
        if not data.strip():
            raise ValueError(f"{name} is empty; it needs at least two sentences.")
        text = decode_upload(data, name, "save it as UTF-8 plain text and upload it again.")
        parsed = parse_lines(text, name, max_sentences, MAX_SENTENCE_CHARS, drop_repeats=True)
        return _corpus(name, parsed, "label" if parsed.groups is not None else None, (), None)
    header, rows = _parquet_rows(path, max_sentences) if suffix == ".parquet" else _text_rows(path)
    text_at = find_column(header, TEXT_COLUMNS, text_column, "text", name)
    if text_at is None:
        raise ValueError(no_text_column(name, header, TEXT_COLUMNS))
    label_at = None if label_column == NO_LABEL else find_column(header, LABEL_COLUMNS, label_column, "label", name)
    if label_at == text_at:
        raise ValueError(f"'{header[text_at]}' cannot be both the text and the label column; choose another.")
    records = [(line, None if label_at is None else _cell(fields, label_at), _cell(fields, text_at))
               for line, fields in rows]
    parsed = clean_records(records, "Row", name, max_sentences, MAX_SENTENCE_CHARS, drop_repeats=True)
    label_name = None if label_at is None or parsed.groups is None else header[label_at]
    corpus = _corpus(name, parsed, label_name, tuple(header), header[text_at])
    # every other column, a value per sentence kept (its row's), typed; the text and the label are not repeated
    by_line = dict(rows)
    kept = [by_line[number] for number in parsed.numbers]
    others = {header[at]: [_cell(cells, at) for cells in kept] for at in range(len(header)) if at not in (text_at, label_at)}
    fields, left_out = infer_all(others)
    return replace(corpus, fields=fields, notes=corpus.notes + [f"Column {note[len('the column '):]}." for note in left_out])


def corpus_columns(path: str | Path) -> list[str]:
    """A table's column names (none for .txt), so a user can choose when none is found by name."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.ParquetFile(path).schema_arrow.names)
        except (pa.ArrowException, OSError):
            return []
    if suffix in (".csv", ".tsv"):
        try:
            return _text_rows(path)[0]
        except ValueError:
            return []
    return []


def _corpus(name: str, parsed: ParsedSentences, label_name: str | None, columns: tuple[str, ...],
            text_column: str | None) -> Corpus:
    labels = parsed.groups if label_name is not None else None
    return Corpus(name, parsed.sentences, labels, label_name, columns, text_column, list(parsed.notes))


def _cell(fields: list[str], index: int) -> str:
    return fields[index] if index < len(fields) else ""


def _text_rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    table = read_table(path)
    if not table.header:
        raise ValueError(f"{path.name} is empty; it needs a header row and at least two rows.")
    return table.header, table.records


def _parquet_rows(path: Path, max_sentences: int) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and rows of a Parquet file as text; refused before reading when it has far too many rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path.name} is not a readable Parquet file ({exc}); save it again.") from None
    rows = handle.metadata.num_rows
    if rows > 2 * max_sentences:  # repeats are dropped later, but this many rows cannot fit the limit
        raise ValueError(f"{path.name} has {rows:,} rows; the corpus map takes at most {max_sentences:,} "
                         "sentences. Upload a sample of it.")
    header = list(handle.schema_arrow.names)
    try:
        table = handle.read()
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path.name} could not be read ({exc}); save it again.") from None
    columns = [[cell_text(value) for value in table.column(i).to_pylist()] for i in range(table.num_columns)]
    return header, [(row + 1, [column[row] for column in columns]) for row in range(table.num_rows)]


def cell_text(value: object) -> str:
    """A table cell as text: None as empty, bytes as UTF-8 (anything else is refused, never shown as a bytes
    literal or with replacement characters), anything else as str."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8("A text cell", "write the table's text column as UTF-8.", position=exc.start) from None
    return value if isinstance(value, str) else str(value)


def stsb_corpus(data_dir: str | Path | None = None) -> Corpus:
    """Every distinct sentence of the local STS benchmark (train, dev, test), labelled by its source
    data set (``headlines``, ``images``, ``MSRvid``, ``answers-forums``, ...), with the fields of the first pair
    it is in: genre (captions, news, forums), source, year, the pair's score and its split."""
    folder = data_folder(data_dir)
    records: list[tuple[int, str, str]] = []
    about: list[tuple[str, list[str]]] = []  # each pair's fields: genre, source, year, id, score, the sentences
    for split in STS_SPLITS:
        path = next((p for p in (folder / "stsbenchmark" / f"sts-{split}.csv", folder / f"sts-{split}.csv")
                     if p.is_file()), None)
        if path is None:
            raise ValueError(f"The STS benchmark {split} file is not in {folder}; the built-in corpus needs the "
                             "shipped data (data/stsbenchmark).")
        # The original format: tabs, no header, no quoting; the second field names the source.
        for line in path.read_text(encoding="utf-8-sig").split("\n"):
            fields = line.rstrip("\r").split("\t")
            if len(fields) >= 7:
                records += [(len(records) + 1, fields[1].strip(), fields[5]),
                            (len(records) + 2, fields[1].strip(), fields[6])]
                about.append((split, fields))
    parsed = clean_records(records, "Sentence", STSB_CORPUS, MAX_CORPUS_SENTENCES, MAX_SENTENCE_CHARS,
                           drop_repeats=True)
    notes = [note for note in parsed.notes if not note.startswith("Dropped")]  # repeats are expected here
    first: dict[str, dict] = {}  # a sentence's fields: those of the first pair it is in
    for split, fields in about:
        for text in fields[5:7]:
            first.setdefault(" ".join(text.split()), {
                "genre": fields[0].removeprefix("main-"), "source": fields[1].strip(), "year": fields[2][:4],
                "score": fields[4], "split": split})
    rows = [first.get(" ".join(sentence.split()), {}) for sentence in parsed.sentences]
    columns = {name: [row.get(name) for row in rows] for name in ("genre", "source", "year", "score", "split")}
    return Corpus(STSB_CORPUS, parsed.sentences, parsed.groups, "source", (), None, notes, infer_all(columns)[0])
