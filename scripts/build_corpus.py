"""A real corpus of a million distinct sentences for the corpus benchmarks, from text that installs here.

    python scripts/build_corpus.py [--out ~/.cache/sbert-demo/bench-corpus] [--sentences 1000000]

Sources, each sentence labelled by where it came from:

* **WordNet** (Debian's ``wordnet-base``): every synset's gloss and its quoted examples
  (``/usr/share/wordnet/data.*``), labelled ``wordnet:<noun|verb|adj|adv>``;
* **dictionaries** in dictd format: GCIDE (the GNU Collaborative International Dictionary of
  English, ``dict-gcide``), FOLDOC (``dict-foldoc``) and the Jargon File (``dict-jargon``);
* **manuals**: the HTML documentation of Python (``python3-doc``), PostgreSQL (``postgresql-doc-15``),
  Git (``git-doc``), Django, pandas and SQLAlchemy (``python-django-doc``, ``python-pandas-doc``,
  ``python-sqlalchemy-doc``), Apache (``apache2-doc``) and Debian's policy (``debian-policy``), Perl's pod pages (``perl-doc``) and the manual pages in ``/usr/share/man``
  (``manpages-dev``), labelled ``docs:<python|postgresql|git>``, ``perl`` and ``man``;
* **fortunes** (``fortunes``), labelled ``fortune``;
* **Python docstrings** of the standard library and of the packages installed beside this project,
  labelled ``python:<package>``.

``sudo apt-get install wordnet-base dict-gcide dict-foldoc dict-jargon python3-doc postgresql-doc-15
git-doc python-django-doc python-pandas-doc python-sqlalchemy-doc apache2-doc debian-policy perl-doc
manpages-dev fortunes`` first (the script says which sources it skipped and uses what is there: with none of
them, the Python docstrings of what ``scripts/setup.sh --dev`` installs). The sources are read in turn, a
sentence from each, so reading stops as soon as ``--sentences`` distinct ones are in hand, with every source
in the mix. Sentences of 20 to 300 characters, mostly letters, are kept once each (case and spacing aside),
shuffled with a fixed seed, and written as one Parquet file, ``--out/corpus.parquet`` (``text``, ``source``;
row groups of 100,000 rows): what the app's upload takes as it is (up to 300 MB) and what the benches read as a
folder. Nothing here is committed (``.gitignore``): the corpus is built where the bench runs.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import random
import re
import site
import sys
import sysconfig
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

SHARD_ROWS = 100_000
PACKAGES = {"wordnet-base": "/usr/share/wordnet/data.noun", "dict-gcide": "/usr/share/dictd/gcide.dict.dz",
            "dict-foldoc": "/usr/share/dictd/foldoc.dict.dz", "dict-jargon": "/usr/share/dictd/jargon.dict.dz",
            "python3-doc": "/usr/share/doc/python3.11/html", "postgresql-doc-15": "/usr/share/doc/postgresql-doc-15",
            "git-doc": "/usr/share/doc/git-doc", "python-django-doc": "/usr/share/doc/python-django-doc",
            "python-pandas-doc": "/usr/share/doc/python-pandas-doc",
            "python-sqlalchemy-doc": "/usr/share/doc/python-sqlalchemy-doc", "apache2-doc": "/usr/share/doc/apache2-doc",
            "debian-policy": "/usr/share/doc/debian-policy", "perl-doc": "/usr/share/perl", "manpages-dev": "/usr/share/man/man2",
            "fortunes": "/usr/share/games/fortunes"}
MIN_CHARS, MAX_CHARS = 20, 300
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def keep(text: str) -> str | None:
    """The sentence tidied (one line, single spaces), or None when it is not prose worth mapping."""
    text = " ".join(text.replace("``", '"').split())
    if not MIN_CHARS <= len(text) <= MAX_CHARS:
        return None
    letters = sum(c.isalpha() for c in text)
    if letters < 0.7 * len(text) or any(token in text for token in (">>>", "::", "http", "{", "}", "=", "_", "\\")):
        return None
    return text


def wordnet(folder: Path = Path("/usr/share/wordnet")) -> Iterator[tuple[str, str]]:
    for part in ("noun", "verb", "adj", "adv"):
        path = folder / f"data.{part}"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith(" ") or "|" not in line:
                continue
            gloss = line.split("|", 1)[1].strip()
            pieces = [p.strip() for p in gloss.split(";")]
            definition = [p for p in pieces if not p.startswith('"')]
            if definition:
                yield f"wordnet:{part}", definition[0][:1].upper() + definition[0][1:] + "."
            for example in (p.strip('"') for p in pieces if p.startswith('"')):
                yield f"wordnet:{part}", example[:1].upper() + example[1:] + ("" if example.endswith((".", "?", "!")) else ".")


def dictionary(name: str) -> Iterator[tuple[str, str]]:
    """Definitions of a dictd dictionary (``/usr/share/dictd/<name>.dict.dz``), a paragraph at a time."""
    path = Path(f"/usr/share/dictd/{name}.dict.dz")
    if not path.is_file():
        return
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as entries:
        paragraph: list[str] = []
        for line in [*entries, ""]:
            line = line.strip()
            if line:
                paragraph.append(line)
                continue
            # Definitions are numbered ("1. ...") or follow the headword; cross-references, etymologies
            # and markup in brackets or braces are dropped.
            text = " ".join(paragraph)
            paragraph = []
            text = re.sub(r"\[[^\]]*\]|\{[^}]*\}|<[^>]*>", "", re.sub(r"^\d+\.\s*", "", text)).strip()
            if text and text[0].isupper():
                for sentence in SENTENCE_END.split(text):
                    yield name, sentence


class _Prose(HTMLParser):
    """The text of a page's paragraphs, list items and definitions."""

    BLOCKS = {"p", "li", "dd", "td"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth, self.parts, self.paragraphs = 0, [], []

    def handle_starttag(self, tag, attrs) -> None:
        if tag in self.BLOCKS:
            self.depth += 1

    def handle_endtag(self, tag) -> None:
        if tag in self.BLOCKS and self.depth:
            self.depth -= 1
            if not self.depth:
                self.paragraphs.append(" ".join("".join(self.parts).split()))
                self.parts = []

    def handle_data(self, data) -> None:
        if self.depth:
            self.parts.append(data)


def html_manuals() -> Iterator[tuple[str, str]]:
    roots = {"python": Path("/usr/share/doc/python3.11/html"), "postgresql": Path("/usr/share/doc/postgresql-doc-15"),
             "git": Path("/usr/share/doc/git-doc"), "django": Path("/usr/share/doc/python-django-doc"),
             "pandas": Path("/usr/share/doc/python-pandas-doc"), "sqlalchemy": Path("/usr/share/doc/python-sqlalchemy-doc"),
             "apache": Path("/usr/share/doc/apache2-doc"), "debian-policy": Path("/usr/share/doc/debian-policy")}
    for name, root in roots.items():
        for path in sorted(p for p in root.rglob("*.html") if p.is_file()) if root.is_dir() else ():
            reader = _Prose()
            reader.feed(path.read_text(encoding="utf-8", errors="replace"))
            for paragraph in reader.paragraphs:
                for sentence in SENTENCE_END.split(paragraph):
                    yield f"docs:{name}", sentence


def perl_pods() -> Iterator[tuple[str, str]]:
    for path in sorted(Path("/usr/share/perl").glob("*/pod/*.pod")):
        for paragraph in path.read_text(encoding="utf-8", errors="replace").split("\n\n"):
            if paragraph[:1].isalpha():  # prose: not a command (=head) or a verbatim (indented) block
                text = re.sub(r"[A-Z]<+([^<>]*)>+", r"\1", " ".join(paragraph.split()))
                for sentence in SENTENCE_END.split(text):
                    yield "perl", sentence


def man_pages() -> Iterator[tuple[str, str]]:
    for path in sorted(Path("/usr/share/man").glob("man[1-8]/*.gz")):
        try:
            lines = gzip.open(path, "rt", encoding="utf-8", errors="replace").read().splitlines()
        except OSError:
            continue
        text = " ".join(line for line in lines if line and not line.startswith((".", "'")))
        text = re.sub(r"\\f[BIRP]|\\\(..|\\[-&e]", "", text)
        for sentence in SENTENCE_END.split(text):
            yield "man", sentence


def fortunes(folder: Path = Path("/usr/share/games/fortunes")) -> Iterator[tuple[str, str]]:
    for path in sorted(p for p in folder.glob("*") if p.is_file() and not p.suffix):
        for entry in path.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            for sentence in SENTENCE_END.split(" ".join(entry.split())):
                yield "fortune", sentence


def docstrings() -> Iterator[tuple[str, str]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    roots = [stdlib, *(Path(p) for p in site.getsitepackages() if Path(p).is_dir())]
    roots += [p for p in stdlib.glob("site-packages") if p not in roots]  # the interpreter's own packages
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            package = path.relative_to(root).parts[0].split(".")[0]
            try:
                tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, ValueError, OSError, RecursionError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node, clean=True)
                    if not doc:
                        continue
                    for paragraph in doc.split("\n\n"):
                        for sentence in SENTENCE_END.split(" ".join(paragraph.split())):
                            yield f"python:{package}", sentence


def interleaved(sources: list[Iterator[tuple[str, str]]]) -> Iterator[tuple[str, str]]:
    """A sentence from each source in turn, until every source is done: a consumer that stops early has read a
    little of each, not all of the first ones."""
    live = list(sources)
    while live:
        for source in list(live):
            try:
                yield next(source)
            except StopIteration:
                live.remove(source)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(Path.home() / ".cache" / "sbert-demo" / "bench-corpus"))
    parser.add_argument("--sentences", type=int, default=1_000_000)
    args = parser.parse_args()
    import pyarrow as pa
    import pyarrow.parquet as pq

    missing = [name for name, path in PACKAGES.items() if not Path(path).exists()]
    if missing:
        print(f"Not installed: {', '.join(missing)} (sudo apt-get install {' '.join(missing)}); using the rest.",
              file=sys.stderr)
    seen: set[str] = set()
    rows: list[tuple[str, str]] = []
    sources = [wordnet(), dictionary("gcide"), dictionary("foldoc"), dictionary("jargon"), html_manuals(), perl_pods(),
               man_pages(), fortunes(), docstrings()]
    for label, text in interleaved(sources):
        text = keep(text)
        if text is None:
            continue
        key = " ".join(text.casefold().split())
        if key in seen:
            continue
        seen.add(key)
        rows.append((text, label))
        if len(rows) % 100_000 == 0:
            print(f"{len(rows):,} distinct sentences so far", file=sys.stderr)
        if len(rows) >= args.sentences:
            break  # enough: the rest of every source is never read
    if len(rows) < args.sentences:
        print(f"Only {len(rows):,} distinct sentences were found (asked for {args.sentences:,}).", file=sys.stderr)
    random.Random(0).shuffle(rows)
    rows = rows[: args.sentences]
    out = Path(args.out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.parquet"):  # an earlier build's file or shards: the folder holds this corpus alone
        old.unlink()
    table = pa.table({"text": [t for t, _ in rows], "source": [s for _, s in rows]})
    pq.write_table(table, out / "corpus.parquet", row_group_size=SHARD_ROWS)
    labels: dict[str, int] = {}
    for _, label in rows:
        family = label.split(":")[0]
        labels[family] = labels.get(family, 0) + 1
    print(f"Wrote {len(rows):,} distinct sentences to {out} ({', '.join(f'{k} {v:,}' for k, v in labels.items())}).")


if __name__ == "__main__":
    main()
