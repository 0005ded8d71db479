"""``python -m sbert_demo board export CODE [--out FILE]``: an audience board's sentences as CSV.

Run on the machine the app runs on (it reads the boards in the cache folder, so it needs no
presenter secret); text a spreadsheet would run as a formula is kept as text.
"""

from __future__ import annotations

import argparse
import csv
import sys

from ..audience.store import EXPORT_HEADERS, board_store, export_rows
from ..explore.exports import spreadsheet_safe


def cmd_board_export(args: argparse.Namespace) -> int:
    store = board_store()
    board = store.get(args.code)
    rows = export_rows(store, board.code)
    out = open(args.out, "w", encoding="utf-8", newline="") if args.out else sys.stdout
    try:
        writer = csv.writer(out)
        writer.writerow(EXPORT_HEADERS)
        writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
    finally:
        if args.out:
            out.close()
    if args.out:
        print(f"Wrote {len(rows)} sentence(s) of board {board.code} to {args.out}", file=sys.stderr)
    return 0


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``board export`` to ``python -m sbert_demo``."""
    board = commands.add_parser("board", help="audience boards (the Audience tab)")
    actions = board.add_subparsers(dest="board_command", required=True)
    export = actions.add_parser("export", help="a board's sentences as CSV")
    export.add_argument("code", help="the board's code, e.g. KXQRT")
    export.add_argument("--out", help="the CSV file to write (default: print it)")
    export.set_defaults(run=cmd_board_export)
