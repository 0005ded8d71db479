"""The SBERT paper's Table 1, live: Spearman x 100 on seven STS sets, for any models of the registry.

Each cell is computed as the paper computes it: the cosine of each pair's two sentence vectors (a
pair scorer's own score for a cross-encoder) against the gold scores, ``scipy.stats.spearmanr``,
one Spearman per set over all of that set's rated pairs (:mod:`sbert_demo.data.sts_sets`); the
average is the mean of the seven. A model encodes the seven sets' 26,139 distinct sentences in one
length-sorted pass; embeddings (and pair scores) are kept in the persistent cache, so a second table
only reads them. :data:`PAPER` holds the paper's own rows as reference marks.

Example::

    >>> (row,) = table1(["glove-6b-50d"], sets=("sts13", "stsb"))
    >>> sorted(row.as_json())
    ['avg', 'runtime', 'sts13', 'stsb']
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from ..data.sts_sets import TABLE1_SETS, TITLES, sts_set
from ..formatting import x100
from ..encoding.encoder import encode
from ..encoding.estimate import ToEncode, to_encode
from ..models.kinds import EMBEDS, SCORES_PAIRS, kind_of
from ..models.loading import ResolvedModel
from ..models.per_model import ModelOutcome, Progress, chosen_models, iter_per_model, resolve_for
from ..models.registry import Registry
from .evaluation import evaluate

MAX_MODELS = 8
ENCODING_SHARE = 0.95  # of a model's progress: encoding every set's sentences (the sets' scores are the rest)
# Reimers & Gurevych (2019), Table 1: Spearman x 100 on STS12, STS13, STS14, STS15, STS16, STSb, SICK-R, and
# their average, for the baselines and SBERT trained on NLI (no STS training data).
PAPER: dict[str, tuple[float, ...]] = {
    "Avg. GloVe embeddings": (55.14, 70.66, 59.73, 68.25, 63.66, 58.02, 53.76, 61.32),
    "Avg. BERT embeddings": (38.78, 57.98, 57.98, 63.15, 61.06, 46.35, 58.40, 54.81),
    "BERT CLS-vector": (20.16, 30.01, 20.09, 36.88, 38.08, 16.50, 42.63, 29.19),
    "SBERT-NLI-base": (70.97, 76.53, 73.19, 79.09, 74.30, 77.03, 72.91, 74.89),
    "SBERT-NLI-large": (72.27, 78.46, 74.90, 80.99, 76.25, 79.23, 73.75, 76.55),
}
COLUMNS = (*TABLE1_SETS, "avg")


@dataclass(frozen=True)
class Table1Row(ModelOutcome):
    scores: dict[str, float] = field(default_factory=dict)  # set -> Spearman in [-1, 1]
    sets: tuple[str, ...] = TABLE1_SETS  # the sets asked for (the row is complete when it has all)
    cached: bool = True  # every number came from cached embeddings or pair scores

    @property
    def complete(self) -> bool:
        return all(name in self.scores for name in self.sets)

    @property
    def average(self) -> float | None:
        """The mean over the sets asked for, once every one of them is scored."""
        if not self.complete or not self.sets:
            return None
        return sum(self.scores[name] for name in self.sets) / len(self.sets)

    def as_json(self) -> dict:
        """``{"sts12": …, …, "avg": …, "runtime": "…"}``: Spearman x 100, two decimals."""
        row: dict = {name: round(self.scores[name] * 100, 2) for name in self.sets if name in self.scores}
        row["avg"] = None if self.average is None else round(self.average * 100, 2)
        row["runtime"] = self.runtime
        if self.error:
            row["error"] = self.error
        return row

    def cells(self) -> list[str]:
        """The row's numbers for a table: each set, then the average (x 100)."""
        return [x100(self.scores.get(name)) for name in self.sets] + [x100(self.average)]


def check_sets(sets: Sequence[str] | None) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(s.strip().lower() for s in sets)) if sets else TABLE1_SETS
    unknown = [name for name in chosen if name not in TABLE1_SETS]
    if unknown or not chosen:
        raise ValueError(f"Unknown STS set {unknown[0] if unknown else ''!r}; choose from {', '.join(TABLE1_SETS)}.")
    return tuple(name for name in TABLE1_SETS if name in chosen)  # always in the paper's order


@dataclass(frozen=True)
class Cost:
    """What one model's row will cost here, said before it runs (:mod:`sbert_demo.encoding.estimate`)."""

    key: str
    label: str
    left: ToEncode | None  # None: a pair scorer (scored pair by pair, no estimate) or a model that cannot run

    @property
    def seconds(self) -> float | None:
        return None if self.left is None else self.left.seconds


def set_sentences(sets: Sequence[str]) -> list[str]:
    """The distinct sentences of ``sets``, in order."""
    return list(dict.fromkeys(t for name in sets for t in (*sts_set(name).sentences1, *sts_set(name).sentences2)))


def costs(models: Sequence[str], sets: Sequence[str] | None = None, fast: bool = False,
          registry: Registry | None = None, max_models: int = MAX_MODELS) -> list[Cost]:
    """Each model's cost on this machine: its sentences not cached yet and the rate it encodes them at."""
    keys = chosen_models(models, max_models, "score on the STS sets")
    texts = set_sentences(check_sets(sets))
    found = []
    for key in keys:
        try:
            model = resolve_for(key, SCORES_PAIRS, "score sentence pairs", registry)
        except ValueError:
            found.append(Cost(key, key, None))
            continue
        left = to_encode(key, texts, fast, registry) if kind_of(model.entry).can(EMBEDS) else None
        found.append(Cost(key, model.entry.label, left))
    return found


def weights(found: Sequence[Cost]) -> list[float]:
    """Progress shares: each model's expected seconds (an unknown one counted as a minute), at least one."""
    return [max(1.0, cost.seconds if cost.seconds is not None else 60.0) for cost in found]


def iter_table1(models: Sequence[str], sets: Sequence[str] | None = None, registry: Registry | None = None,
                progress: Progress | None = None, max_models: int = MAX_MODELS, shares: Sequence[float] | None = None,
                **encode_options) -> Iterator[Table1Row]:
    """Each model's row as it fills in, set by set (the last row yielded for a model is its row).
    ``shares``: each model's share of the progress (:func:`weights`), equal by default."""
    keys = chosen_models(models, max_models, "score on the STS sets")
    sets = check_sets(sets)

    def run_one(model: ResolvedModel, step: Progress) -> Iterator[Table1Row]:
        started = time.perf_counter()
        row = Table1Row.of(model, sets=sets)
        label = model.entry.label
        share = 0.0
        if kind_of(model.entry).can(EMBEDS):
            # Every set's sentences in one pass, longest first: batches of like length across all sets (less
            # padding than set by set), each sentence once, and one progress from 0 to the end; the sets
            # below then read their vectors from the cache.
            texts = set_sentences(sets)
            share = ENCODING_SHARE
            first = encode(model, texts, registry=registry, **encode_options,
                           progress=lambda done, total: step(share * done / max(total, 1),
                                                             f"{label}: {done:,} / {total:,} sentences of the "
                                                             f"{len(sets)} sets"))
            # The sets below read this pass's vectors from the cache: the row is "from the cache" only when this
            # pass found every sentence there (a cold run encoded 26,139 and said "every number from the cache").
            row = replace(row, cached=first.computed == 0)
        for position, name in enumerate(sets):
            pairs = sts_set(name)

            def counted(done: int, total: int, position: int = position, name: str = name) -> None:
                step(share + (1 - share) * (position + done / max(total, 1)) / len(sets),
                     f"{label}: {TITLES[name]}, {done:,} / {total:,}")

            result = evaluate(model, pairs, registry, progress=counted, **encode_options)
            row = replace(row, scores={**row.scores, name: float(result.spearman)}, runtime=result.runtime,
                          cached=row.cached and result.cached, notes=tuple(dict.fromkeys(row.notes + result.notes)),
                          seconds=time.perf_counter() - started)
            yield row

    yield from iter_per_model(keys, run_one, Table1Row, progress=progress, needs=SCORES_PAIRS,
                              purpose="score sentence pairs", registry=registry, failed_values={"sets": sets},
                              weights=shares)


def table1(models: Sequence[str], sets: Sequence[str] | None = None, registry: Registry | None = None,
           progress: Progress | None = None, **encode_options) -> list[Table1Row]:
    """Every model's complete row (or its failure), in the order asked."""
    rows: dict[str, Table1Row] = {}
    for row in iter_table1(models, sets, registry, progress, **encode_options):
        rows[row.key] = row
    return list(rows.values())
