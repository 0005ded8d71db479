"""``python -m sbert_demo models`` and ``python -m sbert_demo eval``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..formatting import x100
from .output import format_table, progress_bar


def cmd_models(args: argparse.Namespace) -> int:
    from ..models.registry import get_registry

    registry = get_registry()
    rows = []
    for entry in registry.entries():
        status = registry.availability(entry)
        rows.append([entry.key, entry.family, "yes" if status.available else "no",
                     status.where if status.available else status.reason])
    print(format_table(["key", "family", "available", "source / why not"], rows))
    print("\nTraining-free fixes: any key followed by +center, +abttD (e.g. +abtt3) or +whiten[N] "
          "(e.g. glove-6b-50d+whiten), fitted on the STSb train sentences (--fit-sentences to change).",
          file=sys.stderr)
    return 0


def _load_pairs(args: argparse.Namespace):
    from ..data.benchmarks import sts_split
    from ..data.files import read_scored_pairs

    if args.pairs:
        pairs = read_scored_pairs(args.pairs)
        for problem in pairs.problems:
            print(f"warning: {problem}", file=sys.stderr)
        return pairs
    return sts_split(args.split)


def cmd_eval(args: argparse.Namespace) -> int:
    from ..benchmark.evaluation import evaluate_many
    from ..models.registry import get_registry

    keys = [k.strip() for k in args.models.split(",") if k.strip()]
    if not keys:
        raise ValueError("Name at least one model with --models (see: python -m sbert_demo models).")
    for key in keys:
        get_registry().get(key)  # an unknown key is a typo: stop with exit status 2 before any work
    pairs = _load_pairs(args)
    print(f"Evaluating {len(keys)} model(s) on {pairs.name} ({len(pairs):,} pairs)", file=sys.stderr)
    with progress_bar("evaluating") as progress:
        results = list(evaluate_many(keys, pairs, progress=progress, precision=args.precision,
                                     batch_size=args.batch_size))
    rows = [[r.key, r.family, x100(r.spearman), x100(r.pearson), r.n, f"{r.seconds:.2f}",
             "yes" if r.cached else "no", r.runtime, r.error or "; ".join(r.notes)] for r in results]
    print(format_table(["model", "family", "spearman", "pearson", "pairs", "seconds", "cached", "computed with",
                        "note"], rows))
    if args.json:
        Path(args.json).write_text(json.dumps({r.key: r.as_json() for r in results}, indent=2) + "\n")
        print(f"Wrote {args.json}", file=sys.stderr)
    return 0 if all(r.error is None for r in results) else 1


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``models`` and ``eval`` to ``python -m sbert_demo``."""
    commands.add_parser("models", help="list the model registry").set_defaults(run=cmd_models)

    evaluate = commands.add_parser("eval", help="STS evaluation (Spearman/Pearson of cosine similarity)")
    evaluate.add_argument("--models", required=True, help="comma-separated registry keys")
    source = evaluate.add_mutually_exclusive_group()
    source.add_argument("--split", choices=["train", "dev", "test"], default="dev")
    source.add_argument("--pairs", help="CSV/TSV file of scored pairs (header: sentence1, sentence2, score)")
    evaluate.add_argument("--data-dir", dest="data_dir_sub", help=argparse.SUPPRESS)
    evaluate.add_argument("--json", help="write results as JSON to this file")
    evaluate.add_argument("--precision", choices=["auto", "bf16", "fp16", "fp32", "int8"], default=None,
                          help="auto: lossless and fastest for this machine (SBERT_DEMO_PRECISION; back-end: SBERT_DEMO_BACKEND)")
    evaluate.add_argument("--batch-size", type=int, default=32)
    evaluate.set_defaults(run=cmd_eval)
