"""The benchmark data sets: STS benchmark splits and NLI pairs / triplets.

Local files come first: an explicit folder, else ``SBERT_DEMO_DATA``, else the copy shipped in the
repository (``data/``: STSb train/dev/test and 39,313 labelled SNLI/MultiNLI pairs, gzip-compressed,
with their licences), so a fresh clone works offline. The Hugging Face Hub is the fallback, tried
only when it answers. ``datasets`` is imported inside the functions that need it so the CLI starts
fast. The records are defined in :mod:`.records` and user files are read by :mod:`.files`.

Example::

    >>> dev = sts_split("dev")
    >>> len(dev), dev.scores[0]
    (1500, 5.0)
"""

from __future__ import annotations

import logging
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..config import SHIPPED_DATA, settings
from ..hub import HUB_UNREACHABLE, hub_reachable
from ..shared import memoize
from .files import check_scored, parse_number, read_nli_file
from .records import NliPairs, ScoredPairs, Triplets, capped

logger = logging.getLogger(__name__)

STS_SPLITS = ("train", "dev", "test")


STS_HUB = "sentence-transformers/stsb"


NLI_HUB = "sentence-transformers/all-nli"


NLI_PATTERNS = ("*.csv", "*.csv.gz")


def data_folder(data_dir: str | Path | None = None) -> Path:
    """``data_dir`` when given, else ``SBERT_DEMO_DATA``, else the data shipped in the repository."""
    if data_dir is not None and str(data_dir).strip():
        return Path(data_dir).expanduser()
    return settings().data_dir


def unavailable(what: str, example: str, hub_id: str, folder: Path, tried: list[Path]) -> ValueError:
    """Why ``what`` cannot be read, and the three ways to fix it, as one sentence."""
    if not folder.is_dir():
        missing = f"the data folder {folder} does not exist"
    else:
        missing = f"there is no file at {' or '.join(str(p) for p in tried)}"
    if folder.resolve() != SHIPPED_DATA.resolve():
        fix = f"unset SBERT_DEMO_DATA (and --data-dir) to use the data shipped with the app in {SHIPPED_DATA}"
    else:
        fix = f"restore the repository's data folder ({SHIPPED_DATA}, e.g. with git checkout -- data)"
    return ValueError(
        f"{what} data is not available: {missing}, and {HUB_UNREACHABLE}. To fix it, {fix}; or set "
        f"SBERT_DEMO_DATA (or --data-dir) to a folder containing {example}; or run where the Hugging "
        f"Face Hub is reachable (dataset {hub_id})."
    )


def load_hub(repo_id: str, subset: str | None, split: str) -> Any:
    """``datasets.load_dataset`` with its failures turned into a sentence."""
    import datasets

    logger.info("Loading %s %s/%s from the Hugging Face Hub", repo_id, subset or "", split)
    try:
        return datasets.load_dataset(repo_id, subset, split=split)
    except Exception as exc:  # network, auth and format errors all mean the same to a user
        raise ValueError(f"Could not load {repo_id} ({split}) from the Hugging Face Hub: {exc}. "
                         "Set SBERT_DEMO_DATA or pass --data-dir to use local files.") from exc


def _shuffled(count: int, seed: int, limit: int | None) -> list[int]:
    if limit is not None and limit < 1:
        raise ValueError(f"The number of examples to keep must be at least 1, not {limit}.")
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order[:limit] if limit is not None else order


def sts_split(split: str, data_dir: str | Path | None = None) -> ScoredPairs:
    """One split of the STS benchmark, scores 0..5 from local files (0..1 from the Hub).

    ``split`` is ``train``, ``dev`` (or ``validation``) or ``test``. Files are looked for in
    ``data_dir``, else ``SBERT_DEMO_DATA``, else the shipped ``data/``, as
    ``stsbenchmark/sts-<split>.csv`` or ``sts-<split>.csv``; without them the Hub copy is used
    when the Hub answers.
    """
    split = split.strip().lower()
    split = "dev" if split == "validation" else split
    if split not in STS_SPLITS:
        raise ValueError(f"Unknown STS benchmark split {split!r}; choose one of "
                         f"{', '.join(STS_SPLITS)} (or validation for dev).")
    folder = data_folder(data_dir)
    tried = [folder / "stsbenchmark" / f"sts-{split}.csv", folder / f"sts-{split}.csv"]
    for path in tried:
        if path.is_file():
            stat = path.resolve().stat()
            return _copy_pairs(_parse_sts_file(str(path.resolve()), stat.st_mtime_ns, split))
    logger.warning("No STS benchmark %s file in %s; trying the Hub", split, folder)
    if not hub_reachable():
        raise unavailable("STS benchmark", f"stsbenchmark/sts-{split}.csv", STS_HUB, folder, tried)
    return _copy_pairs(_hub_sts(split))


def _copy_pairs(pairs: ScoredPairs) -> ScoredPairs:
    """A copy whose lists callers may change without touching the cache."""
    return replace(pairs, sentences1=list(pairs.sentences1), sentences2=list(pairs.sentences2),
                   scores=list(pairs.scores), problems=list(pairs.problems))


@memoize(maxsize=8)
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
        score = parse_number(fields[4], "score", line_no, problems)
        if score is None:
            continue
        sentences1.append(first)
        sentences2.append(second)
        scores.append(score)
    logger.info("Read %d STS benchmark pairs from %s", len(scores), path)
    pairs = ScoredPairs(sentences1, sentences2, scores, f"STSb {split}", capped(problems),
                        score_range=(0.0, 5.0))
    check_scored(pairs, path)
    return pairs


@memoize(maxsize=3)
def _hub_sts(split: str) -> ScoredPairs:
    hub_split = "validation" if split == "dev" else split
    rows = load_hub(STS_HUB, None, hub_split)
    return ScoredPairs(list(rows["sentence1"]), list(rows["sentence2"]),
                       [float(s) for s in rows["score"]], f"STSb {split} (Hub)",
                       score_range=(0.0, 1.0))


def _nli_files(data_dir: str | Path | None) -> tuple[Path, list[Path]]:
    """The data folder and its NLI files (plain or gzip-compressed CSV), in name order."""
    folder = data_folder(data_dir)
    files = {path for pattern in NLI_PATTERNS for path in (folder / "nli").glob(pattern)}
    return folder, sorted(files)


@memoize(maxsize=2)
def _local_nli(files: tuple[tuple[str, int], ...]) -> NliPairs:
    """All labelled pairs of the given (path, mtime) files, in file order."""
    parts = [read_nli_file(path) for path, _ in files]
    problems = [f"{part.name}: {note}" for part in parts for note in part.problems]
    return NliPairs([p for part in parts for p in part.premises],
                    [h for part in parts for h in part.hypotheses],
                    [label for part in parts for label in part.labels], "NLI (local)", problems)


def _nli_source(data_dir: str | Path | None, kind: str) -> NliPairs | None:
    """The local NLI pairs, or None when the Hub should be used instead."""
    folder, files = _nli_files(data_dir)
    if files:
        return _local_nli(tuple((str(f.resolve()), f.stat().st_mtime_ns) for f in files))
    logger.warning("No NLI files (*.csv, *.csv.gz) in %s; trying the Hub", folder / "nli")
    if not hub_reachable():
        tried = [folder / "nli" / pattern for pattern in NLI_PATTERNS]
        raise unavailable(f"NLI {kind}", "nli/*.csv or nli/*.csv.gz", NLI_HUB, folder, tried)
    return None


def nli_pairs(data_dir: str | Path | None = None, max_pairs: int | None = None,
              seed: int = 42) -> NliPairs:
    """Labelled NLI pairs, shuffled with ``seed`` and cut to ``max_pairs``.

    Local files ``<data folder>/nli/*.csv[.gz]`` (SNLI/MultiNLI, 39,313 labelled pairs shipped in ``data/``)
    come first; else ``sentence-transformers/all-nli`` (pair-class, train) from the Hub.
    """
    local = _nli_source(data_dir, "pairs")
    if local is None:
        rows = load_hub(NLI_HUB, "pair-class", "train")
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
        rows = load_hub(NLI_HUB, "triplet", "train")
        rows = rows.select(_shuffled(len(rows), seed, max_triplets))
        return Triplets(list(rows["anchor"]), list(rows["positive"]), list(rows["negative"]),
                        "all-nli triplet (Hub)")
    built = triplets_from_pairs(local)
    order = _shuffled(len(built), seed, max_triplets)
    return Triplets([built.anchors[i] for i in order], [built.positives[i] for i in order],
                    [built.negatives[i] for i in order], built.name)
