"""The three shapes of data the app reads, as plain Python records.

Scored sentence pairs (STS benchmark, user uploads), NLI pairs with a label, and (anchor, positive,
negative) triplets; :func:`to_dataset` turns any of them into a ``datasets.Dataset`` for training.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

logger = logging.getLogger(__name__)

NLI_LABELS = ("entailment", "neutral", "contradiction")


MAX_PROBLEMS = 20


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


def capped(problems: list[str]) -> list[str]:
    """At most ``MAX_PROBLEMS`` rejected rows, then one line counting the rest."""
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return problems[:MAX_PROBLEMS] + [f"… and {len(problems) - MAX_PROBLEMS} more rejected rows"]


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
