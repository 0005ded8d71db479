"""Command line: ``python -m sbert_demo models | eval | train``.

A leaf over the core, like the web app: it parses arguments, calls one core function per command
and prints. User errors (unknown model, missing data, bad file) end with a one-line message and
exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

logger = logging.getLogger(__name__)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain fixed-width table (numbers right-aligned)."""
    cells = [[str(h) for h in headers]] + [["-" if v is None else str(v) for v in row] for row in rows]
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
        return text == "-"


def cmd_models(args: argparse.Namespace) -> int:
    from .registry import get_registry

    registry = get_registry()
    rows = []
    for entry in registry.entries():
        status = registry.availability(entry)
        rows.append([entry.key, entry.family, "yes" if status.available else "no",
                     status.where if status.available else status.reason])
    print(format_table(["key", "family", "available", "source / why not"], rows))
    return 0


def _load_pairs(args: argparse.Namespace):
    from .data import read_scored_pairs, sts_split

    if args.pairs:
        pairs = read_scored_pairs(args.pairs)
        for problem in pairs.problems:
            print(f"warning: {problem}", file=sys.stderr)
        return pairs
    return sts_split(args.split, args.data_dir)


def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from .evaluation import evaluate_many
    from .registry import get_registry

    keys = [k.strip() for k in args.models.split(",") if k.strip()]
    if not keys:
        raise ValueError("Name at least one model with --models (see: python -m sbert_demo models).")
    for key in keys:
        get_registry().get(key)  # an unknown key is a typo: stop with exit status 2 before any work
    pairs = _load_pairs(args)
    print(f"Evaluating {len(keys)} model(s) on {pairs.name} ({len(pairs):,} pairs)", file=sys.stderr)
    bars: dict[str, tqdm] = {}

    def progress(key: str, done: int, total: int) -> None:
        if key not in bars:
            bars[key] = tqdm(total=total, desc=f"{key:<24}", unit="sentence", file=sys.stderr, dynamic_ncols=True)
        bars[key].update(done - bars[key].n)

    results = []
    for result in evaluate_many(keys, pairs, progress=progress, precision=args.precision, batch_size=args.batch_size):
        if result.key in bars:
            bars.pop(result.key).close()
        results.append(result)
    rows = [[r.key, r.family, _x100(r.spearman), _x100(r.pearson), r.n, f"{r.seconds:.2f}",
             "yes" if r.cached else "no", r.error or "; ".join(r.notes)] for r in results]
    print(format_table(["model", "family", "spearman", "pearson", "pairs", "seconds", "cached", "note"], rows))
    if args.json:
        Path(args.json).write_text(json.dumps({r.key: r.as_json() for r in results}, indent=2) + "\n")
        print(f"Wrote {args.json}", file=sys.stderr)
    return 0 if all(r.error is None for r in results) else 1


def _x100(value: float | None) -> str | None:
    return None if value is None else f"{value * 100:.2f}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sbert_demo", description="Sentence similarity: naive vs SBERT.")
    parser.add_argument("--data-dir", help="folder with stsbenchmark/ and nli/ (default: $SBERT_DEMO_DATA, else the Hub)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("models", help="list the model registry").set_defaults(run=cmd_models)

    evaluate = commands.add_parser("eval", help="STS evaluation (Spearman/Pearson of cosine similarity)")
    evaluate.add_argument("--models", required=True, help="comma-separated registry keys")
    source = evaluate.add_mutually_exclusive_group()
    source.add_argument("--split", choices=["train", "dev", "test"], default="dev")
    source.add_argument("--pairs", help="CSV/TSV file of scored pairs (header: sentence1, sentence2, score)")
    evaluate.add_argument("--data-dir", dest="data_dir_sub", help=argparse.SUPPRESS)
    evaluate.add_argument("--json", help="write results as JSON to this file")
    evaluate.add_argument("--precision", choices=["auto", "bf16", "fp16", "fp32"], default=None)
    evaluate.add_argument("--batch-size", type=int, default=32)
    evaluate.set_defaults(run=cmd_eval)

    try:
        from .training.cli import add_train_parser
    except ImportError:  # training not installed in this build
        add_train_parser = None
    if add_train_parser:
        add_train_parser(commands)
    return parser


def quiet_libraries(verbose: bool = False) -> None:
    """Keep library chatter (weight-loading bars, load reports) out of the CLI's own progress."""
    if verbose:
        return
    # Read by huggingface_hub and transformers when they are first imported (after this point).
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.data_dir = getattr(args, "data_dir_sub", None) or args.data_dir
    if args.data_dir:
        os.environ["SBERT_DEMO_DATA"] = args.data_dir  # training and evaluation read it from settings
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    quiet_libraries(args.verbose)
    try:
        return args.run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
