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


def duration(seconds: float | None) -> str:
    """``65`` → ``"1 min 05 s"``; ``None`` → ``"–"``."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    total = max(0, round(seconds))
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def about(seconds: float | None) -> str:
    """A rounded duration for estimates: ``"about 40 s"``, ``"about 4 min"``, ``"about 1 h 20 min"``."""
    if seconds is None or not math.isfinite(seconds):
        return "unknown"
    if seconds < 60:
        return f"about {max(5, round(seconds / 5) * 5)} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60:02d} min"
