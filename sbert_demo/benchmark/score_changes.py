"""The before/after table of a model trained here: STSb Spearman of its base and of it, per split.

One table, read from the model card (or a running job) and shown by the Train tab, the "Before /
after training" view, the model's README and the command line, each in its own markup.

Example::

    >>> [(row.split, row.before, row.after, round(row.change, 4)) for row in
    ...  score_changes({"dev": 0.6552, "test": 0.5561}, {"dev": 0.7012, "test": 0.5904})]
    [('dev', 0.6552, 0.7012, 0.046), ('test', 0.5561, 0.5904, 0.0343)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class ScoreChange:
    split: str  # "dev" or "test"
    before: float | None  # Spearman in [-1, 1] of the base model
    after: float | None  # ... and of the trained model (None while it is not scored yet)

    @property
    def change(self) -> float | None:
        return None if self.before is None or self.after is None else self.after - self.before


def score_changes(before: Mapping[str, float] | None, after: Mapping[str, float] | None,
                  keep_empty: bool = True) -> list[ScoreChange]:
    """One row per STSb split; ``keep_empty=False`` drops splits with neither number."""
    before, after = before or {}, after or {}
    rows = [ScoreChange(split, before.get(split), after.get(split)) for split in SPLITS]
    return [row for row in rows if keep_empty or row.before is not None or row.after is not None]
