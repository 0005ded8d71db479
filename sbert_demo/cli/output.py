"""What the command line prints: fixed-width tables and scores x 100."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from ..formatting import MISSING


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain fixed-width table (numbers right-aligned)."""
    cells = [[str(h) for h in headers]] + [[MISSING if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_is_number(r[i]) for r in cells[1:]) and len(cells) > 1 for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric)).rstrip()

    return "\n".join([line(cells[0]), line(["-" * w for w in widths]), *map(line, cells[1:])])


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return text == MISSING




@contextmanager
def progress_bar(what: str) -> Iterator[Callable[[float, str], None]]:
    """A tqdm bar on stderr in per cent, fed by the core's ``progress(fraction, what)``."""
    from tqdm.auto import tqdm

    with tqdm(total=100, desc=what, unit="%", file=sys.stderr, dynamic_ncols=True) as bar:
        def progress(fraction: float, doing: str) -> None:
            bar.set_description(doing[:90])
            bar.update(max(0, round(100 * fraction) - bar.n))

        yield progress
        bar.update(100 - bar.n)
