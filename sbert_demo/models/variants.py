"""Training-free fixes as registry variants: ``K+center``, ``K+abttD``, ``K+whiten[N]``.

A variant is the base model ``K`` followed by a linear map fitted on a sentence collection (the
STS benchmark's train sentences by default, :mod:`sbert_demo.encoding.fixes`):

* ``center`` — subtract the mean vector;
* ``abttD`` — all-but-the-top (Mu & Viswanath 2018): subtract the mean, then remove the top ``D``
  principal directions;
* ``whiten`` / ``whitenN`` — BERT-whitening (Su et al. 2021): subtract the mean, multiply by
  ``U·diag(1/√s)`` from the SVD of the covariance; keep the first ``N`` dimensions when given.

This module only reads and writes keys; nothing here computes a vector.

>>> parse_fix("abtt3")
Fix(kind='abtt', dims=3)
>>> split_key("glove-6b-50d+whiten128")
('glove-6b-50d', 'whiten128')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .entries import ModelEntry

SEPARATOR = "+"
STANDARD_FIXES = ("center", "abtt3", "whiten")  # offered in the model pickers beside each model
_PATTERN = re.compile(r"^(center|abtt(\d{1,4})|whiten(\d{1,5})?)$")
MAX_DIMS = 4096


@dataclass(frozen=True)
class Fix:
    kind: str  # center | abtt | whiten
    dims: int | None = None  # abtt: directions removed; whiten: dimensions kept (None: all)

    @property
    def name(self) -> str:
        return f"{self.kind}{self.dims}" if self.dims is not None else self.kind

    @property
    def label(self) -> str:
        if self.kind == "abtt":
            return f"all-but-the-top {self.dims}"
        if self.kind == "whiten":
            return "whitened" if self.dims is None else f"whitened to {self.dims} dims"
        return "centred"


def parse_fix(text: str) -> Fix:
    """The fix a key suffix names, or a ValueError listing the valid ones."""
    match = _PATTERN.match(text.strip().lower())
    if not match:
        raise ValueError(f"{text!r} is not a training-free fix; use center, abttD (e.g. abtt3) or "
                         f"whiten / whitenN (e.g. whiten128), as in glove-6b-50d+whiten.")
    if match.group(2) is not None:
        fix = Fix("abtt", int(match.group(2)))
    elif match.group(1).startswith("whiten"):
        fix = Fix("whiten", int(match.group(3)) if match.group(3) else None)
    else:
        fix = Fix("center")
    if fix.dims is not None and not 1 <= fix.dims <= MAX_DIMS:
        raise ValueError(f"{fix.name}: the number of dimensions must be between 1 and {MAX_DIMS}.")
    return fix


def split_key(key: str) -> tuple[str, str | None]:
    """``(base key, fix)`` of a registry key; fix is None for a plain model.

    The fix follows the last ``+``: model keys themselves may contain ``+`` only if no fix follows.
    """
    base, sep, suffix = key.rpartition(SEPARATOR)
    if not sep or not base or not _PATTERN.match(suffix.strip().lower()):
        return key, None
    return base, suffix.strip().lower()


def variant_entry(base: ModelEntry, fix_name: str) -> ModelEntry:
    """The registry record of ``base`` followed by the fix ``fix_name``."""
    if base.fix is not None:
        raise ValueError(f"{base.key} already has a training-free fix; apply one fix at a time.")
    fix = parse_fix(fix_name)
    return replace(
        base,
        key=f"{base.key}{SEPARATOR}{fix.name}",
        label=f"{base.label} + {fix.label}",
        description=f"{base.label}, {fix.label} (a training-free fix fitted on a sentence collection).",
        builtin=False,
        base=base.key,
        fix=fix.name,
    )
