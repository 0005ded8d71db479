"""A real corpus of a million distinct sentences for the corpus benchmarks, from text that installs here.

    python scripts/build_corpus.py [--out ~/.cache/sbert-demo/bench-corpus] [--sentences 1000000]

Sources, each sentence labelled by where it came from:

* **WordNet** (Debian's ``wordnet-base``): every synset's gloss and its quoted examples
  (``/usr/share/wordnet/data.*``), labelled ``wordnet:<noun|verb|adj|adv>``;
* **GCIDE** (Debian's ``dict-gcide``, the GNU Collaborative International Dictionary of English):
  definitions (``/usr/share/dictd/gcide.dict.dz``), labelled ``gcide``;
* **Python docstrings** of the packages installed beside this project (the virtual environment's
  ``site-packages``), split into sentences, labelled ``python:<package>``.

``sudo apt-get install wordnet-base dict-gcide`` first (the script says so if they are missing; it
uses what is there). Sentences of 20 to 300 characters, mostly letters, are kept once each (case and
spacing aside), shuffled with a fixed seed, and written as Parquet shards of 100,000 rows (``text``,
``source``) to ``--out``. Nothing here is committed (``.gitignore``): the corpus is built where the
bench runs.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import random
import re
import site
import sys
from collections.abc import Iterator
from pathlib import Path

SHARD_ROWS = 100_000
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


def gcide(path: Path = Path("/usr/share/dictd/gcide.dict.dz")) -> Iterator[tuple[str, str]]:
    if not path.is_file():
        return
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as dictionary:
        for line in dictionary:
            line = line.strip()
            # Definitions are numbered ("1. ...") or follow the headword's part of speech; cross-references
            # and etymologies in brackets are dropped.
            line = re.sub(r"\[[^\]]*\]", "", re.sub(r"^\d+\.\s*", "", line)).strip()
            if line and line[0].isupper():
                for sentence in SENTENCE_END.split(line):
                    yield "gcide", sentence


def docstrings() -> Iterator[tuple[str, str]]:
    roots = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(Path.home() / ".cache" / "sbert-demo" / "bench-corpus"))
    parser.add_argument("--sentences", type=int, default=1_000_000)
    args = parser.parse_args()
    import pyarrow as pa
    import pyarrow.parquet as pq

    missing = [name for name, path in (("wordnet-base", "/usr/share/wordnet/data.noun"),
                                       ("dict-gcide", "/usr/share/dictd/gcide.dict.dz")) if not Path(path).exists()]
    if missing:
        print(f"Not installed: {', '.join(missing)} (sudo apt-get install {' '.join(missing)}); using the rest.",
              file=sys.stderr)
    seen: set[str] = set()
    rows: list[tuple[str, str]] = []
    for source in (wordnet(), gcide(), docstrings()):
        for label, text in source:
            text = keep(text)
            if text is None:
                continue
            key = " ".join(text.casefold().split())
            if key in seen:
                continue
            seen.add(key)
            rows.append((text, label))
        print(f"{len(rows):,} distinct sentences so far", file=sys.stderr)
    if len(rows) < args.sentences:
        print(f"Only {len(rows):,} distinct sentences were found (asked for {args.sentences:,}).", file=sys.stderr)
    random.Random(0).shuffle(rows)
    rows = rows[: args.sentences]
    out = Path(args.out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.parquet"):
        old.unlink()
    for number, start in enumerate(range(0, len(rows), SHARD_ROWS)):
        chunk = rows[start: start + SHARD_ROWS]
        table = pa.table({"text": [t for t, _ in chunk], "source": [s for _, s in chunk]})
        pq.write_table(table, out / f"part-{number:04d}.parquet")
    labels: dict[str, int] = {}
    for _, label in rows:
        family = label.split(":")[0]
        labels[family] = labels.get(family, 0) + 1
    print(f"Wrote {len(rows):,} distinct sentences to {out} ({', '.join(f'{k} {v:,}' for k, v in labels.items())}).")


if __name__ == "__main__":
    main()
