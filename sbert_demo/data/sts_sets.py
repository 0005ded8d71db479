"""The seven STS sets of the SBERT paper's Table 1: SemEval STS 2012–2016, STSb test and SICK-R.

Local files come first (the data folder, ``data/`` by default: ``sts12-16/<year>/`` and
``sick/SICK_test_annotated.txt``, shipped with their licences); the Hub copies MTEB uses
(``mteb/sts12-sts`` ... ``mteb/sickr-sts``) are the fallback where the Hub answers. As in the paper
and MTEB, a year's set is all of that year's rated pairs concatenated (every subset, 2012's MSRvid
included); pairs without a gold score are skipped.

Example::

    >>> [len(sts_set(name)) for name in TABLE1_SETS]
    [3108, 1500, 3750, 3000, 1186, 1379, 4927]
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..hub import hub_reachable
from ..shared import memoize
from .benchmarks import data_folder, load_hub, sts_split, unavailable
from .files import check_scored, parse_number
from .records import ScoredPairs, capped

logger = logging.getLogger(__name__)

TABLE1_SETS = ("sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sick-r")
TITLES = {"sts12": "STS12", "sts13": "STS13", "sts14": "STS14", "sts15": "STS15", "sts16": "STS16",
          "stsb": "STSb", "sick-r": "SICK-R"}
YEARS = {"sts12": 2012, "sts13": 2013, "sts14": 2014, "sts15": 2015, "sts16": 2016}
HUB_IDS = {"sts12": "mteb/sts12-sts", "sts13": "mteb/sts13-sts", "sts14": "mteb/sts14-sts",
           "sts15": "mteb/sts15-sts", "sts16": "mteb/sts16-sts", "sick-r": "mteb/sickr-sts"}
SICK_FILE = Path("sick") / "SICK_test_annotated.txt"


def sts_set(name: str, data_dir: str | Path | None = None) -> ScoredPairs:
    """One of :data:`TABLE1_SETS`: its scored pairs (a copy the caller may change)."""
    if name not in TABLE1_SETS:
        raise ValueError(f"Unknown STS set {name!r}; choose one of {', '.join(TABLE1_SETS)}.")
    if name == "stsb":
        return sts_split("test", data_dir)
    folder = data_folder(data_dir)
    files = _files(name, folder)
    if files:
        pairs = _parse(name, tuple((str(path), path.stat().st_mtime_ns) for path in files))
        return ScoredPairs(list(pairs.sentences1), list(pairs.sentences2), list(pairs.scores), pairs.name,
                           list(pairs.problems), pairs.score_range)
    tried = [folder / ("sts12-16" if name != "sick-r" else "sick")]
    if not hub_reachable():
        example = f"sts12-16/{YEARS[name]}/*.test.tsv" if name in YEARS else str(SICK_FILE)
        raise unavailable(TITLES[name], example, HUB_IDS[name], folder, tried)
    rows = load_hub(HUB_IDS[name], None, "test")
    return ScoredPairs(list(rows["sentence1"]), list(rows["sentence2"]), [float(s) for s in rows["score"]],
                       f"{TITLES[name]} (Hub)", score_range=(0.0, 5.0) if name in YEARS else (1.0, 5.0))


def _files(name: str, folder: Path) -> list[Path]:
    if name == "sick-r":
        path = folder / SICK_FILE
        return [path] if path.is_file() else []
    year = folder / "sts12-16" / str(YEARS[name])
    files = sorted(year.glob("*.test.tsv"))
    msrvid = year / "STS.input.MSRvid.txt"
    return files + ([msrvid, year / "STS.gs.MSRvid.txt"] if msrvid.is_file() else [])


@memoize(maxsize=8)
def _parse(name: str, files: tuple[tuple[str, int], ...]) -> ScoredPairs:
    """Read the set's files (``(path, mtime)`` pairs: a changed file is read again)."""
    sentences1, sentences2, scores, problems = [], [], [], []
    paths = [Path(path) for path, _ in files]
    if name == "sick-r":
        _read_sick(paths[0], sentences1, sentences2, scores, problems)
    else:
        for path in (p for p in paths if p.name.endswith(".test.tsv")):
            _read_scored_tsv(path, sentences1, sentences2, scores, problems)
        inputs = next((p for p in paths if p.name == "STS.input.MSRvid.txt"), None)
        if inputs is not None:
            _read_input_and_gold(inputs, inputs.with_name("STS.gs.MSRvid.txt"), sentences1, sentences2, scores,
                                 problems)
    pairs = ScoredPairs(sentences1, sentences2, scores, TITLES[name], capped(problems),
                        score_range=(1.0, 5.0) if name == "sick-r" else (0.0, 5.0))
    check_scored(pairs, TITLES[name])
    logger.info("Read %d %s pairs from %d file(s)", len(pairs), TITLES[name], len(paths))
    return pairs


def _lines(path: Path) -> list[str]:
    # The files have no quoting and sentences may hold quote characters: split on tabs, not csv.
    return [line.rstrip("\r") for line in path.read_text(encoding="utf-8-sig").split("\n")]


def _add(first: str, second: str, score_text: str, where: str, sentences1: list, sentences2: list, scores: list,
         problems: list) -> None:
    if not score_text.strip():
        return  # a pair without a gold rating: skipped, as in the paper and MTEB
    found: list[str] = []
    score = parse_number(score_text, "score", 0, found)
    if score is None or not first.strip() or not second.strip():
        problems.append(f"{where}: " + ("an empty sentence" if score is not None else f"score {score_text.strip()!r} "
                                        "is not a number"))
        return
    sentences1.append(first.strip())
    sentences2.append(second.strip())
    scores.append(score)


def _read_scored_tsv(path: Path, sentences1: list, sentences2: list, scores: list, problems: list) -> None:
    """``score<TAB>sentence1<TAB>sentence2`` per line (the collection's format)."""
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            problems.append(f"{path.name} line {number}: {len(fields)} fields, expected 3")
            continue
        _add(fields[1], fields[2], fields[0], f"{path.name} line {number}", sentences1, sentences2, scores, problems)


def _read_input_and_gold(inputs: Path, gold: Path, sentences1: list, sentences2: list, scores: list,
                         problems: list) -> None:
    """SemEval's original layout: ``sentence1<TAB>sentence2`` per line, the scores in a second file."""
    pairs = [line for line in _lines(inputs) if line.strip()]
    golds = [line for line in _lines(gold)][: len(pairs)] if gold.is_file() else []
    if len(golds) != len(pairs):
        problems.append(f"{inputs.name}: {len(pairs)} pairs but {len(golds)} gold scores; skipped")
        return
    for number, (line, score) in enumerate(zip(pairs, golds), start=1):
        fields = line.split("\t")
        if len(fields) < 2:
            problems.append(f"{inputs.name} line {number}: no tab between the sentences")
            continue
        _add(fields[0], fields[1], score, f"{inputs.name} line {number}", sentences1, sentences2, scores, problems)


def _read_sick(path: Path, sentences1: list, sentences2: list, scores: list, problems: list) -> None:
    """SICK's release: a header, then ``pair_ID sentence_A sentence_B relatedness_score entailment``."""
    lines = _lines(path)
    header = lines[0].split("\t") if lines else []
    try:
        a, b, score = (header.index(column) for column in ("sentence_A", "sentence_B", "relatedness_score"))
    except ValueError:
        raise ValueError(f"{path.name} has no sentence_A, sentence_B and relatedness_score columns; restore "
                         "the shipped file (git checkout -- data/sick).") from None
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if not line.strip():
            continue
        if len(fields) <= max(a, b, score):
            problems.append(f"{path.name} line {number}: {len(fields)} fields")
            continue
        _add(fields[a], fields[b], fields[score], f"{path.name} line {number}", sentences1, sentences2, scores,
             problems)
