"""Numbers as people read them, the same in every table, page and command-line output.

Example::

    >>> x100(0.86716), x100(None), signed_x100(0.0343)
    ('86.72', '–', '+3.43')
"""

from __future__ import annotations

import math

MISSING = "–"  # a number that is not there (not computed, not available)


def x100(value: float | None, digits: int = 2) -> str:
    """A correlation (or any fraction) as points x 100, e.g. ``86.72``; :data:`MISSING` for None/NaN."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{value * 100:.{digits}f}"


def signed_x100(value: float | None, digits: int = 2) -> str:
    """A change in points x 100 with its sign, e.g. ``+3.43``."""
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{value * 100:+.{digits}f}"
