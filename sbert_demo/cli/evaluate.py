"""``python -m sbert_demo models``, ``eval``, ``table1`` and ``cost``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..formatting import x100
from ..models.registry import get_registry
from .output import format_table, progress_bar


def cmd_models(args: argparse.Namespace) -> int:
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


def cmd_table1(args: argparse.Namespace) -> int:
    from ..benchmark.table1 import PAPER, iter_table1
    from ..data.sts_sets import TITLES

    keys = [k.strip() for k in args.models.split(",") if k.strip()]
    for key in keys:
        get_registry().get(key)  # a typo stops with exit status 2 before any work
    sets = [s for s in (args.sets or "").split(",") if s.strip()] or None
    rows = {}
    with progress_bar("table 1") as progress:
        for row in iter_table1(keys, sets, progress=progress, max_models=max(1, len(keys))):
            rows[row.key] = row
    rows = list(rows.values())
    columns = [TITLES[name] for name in rows[0].sets] + ["avg"] if rows else []
    table = [[r.key, *r.cells(), r.runtime if r.ok else r.error] for r in rows]
    if sets is None:  # the paper's rows for reference, when the table is the paper's
        table += [[f"paper: {name}", *(f"{v:.2f}" for v in values), ""] for name, values in PAPER.items()]
    print(format_table(["model", *columns, "computed with"], table))
    if args.json:
        Path(args.json).write_text(json.dumps({r.key: r.as_json() for r in rows}, indent=2) + "\n")
        print(f"Wrote {args.json}", file=sys.stderr)
    return 0 if all(r.ok for r in rows) else 1


def cmd_cost(args: argparse.Namespace) -> int:
    from ..benchmark.cost import describe, measure_cost, pairs, split_pairs

    with progress_bar("cost") as progress:
        report = measure_cost(args.n, args.bi_encoder, args.cross_encoder, args.query or "", progress=progress)
    print(f"{report.n:,} sentences ({pairs(report.n):,} pairs) on {report.cpu}")
    for line in describe(report):
        print(line)
    different, duplicates = split_pairs(report)
    print(f"\nThe most similar pairs the bi-encoder found ({duplicates} of the top {len(report.bi_encoder['top_pairs'])} "
          "are the same sentence up to case and spacing; these are worded differently):")
    rows = [[f"{cos:.3f}", report.sentences[i][:70], report.sentences[j][:70]] for i, j, cos in different]
    print(format_table(["cosine", "sentence", "sentence"], rows))
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(report.as_json(), indent=2) + "\n")
        print(f"Wrote {args.json}", file=sys.stderr)
    return 0


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``models``, ``eval``, ``table1`` and ``cost`` to ``python -m sbert_demo``."""
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

    table = commands.add_parser("table1", help="the SBERT paper's Table 1: Spearman x 100 on STS12-16, STSb and "
                                               "SICK-R, beside the paper's rows")
    table.add_argument("--models", required=True, help="comma-separated registry keys")
    table.add_argument("--sets", help="comma-separated sets (default all: sts12,sts13,sts14,sts15,sts16,stsb,sick-r)")
    table.add_argument("--json", help="write {model: {set: spearman x 100, avg, runtime}} to this file")
    table.set_defaults(run=cmd_table1)

    cost = commands.add_parser("cost", help="what finding the most similar pairs costs: a cross-encoder on every "
                                            "pair (timed, extrapolated) against a bi-encoder (really run)")
    cost.add_argument("--n", type=int, default=10_000, help="sentences of the shipped corpus (2-20,000; default 10,000)")
    cost.add_argument("--bi-encoder", default="all-MiniLM-L6-v2", help="registry key of the bi-encoder")
    cost.add_argument("--cross-encoder", help="registry key of a cross-encoder (default: the bi-encoder's transformer "
                                              "with an untrained head, timed only)")
    cost.add_argument("--query", help="the query for retrieve & re-rank")
    cost.add_argument("--json", help="write the measurements as JSON to this file")
    cost.set_defaults(run=cmd_cost)
