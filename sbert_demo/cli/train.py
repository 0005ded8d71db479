"""``python -m sbert_demo train``: one training run in this process, with tqdm progress.

Example::

    python -m sbert_demo --data-dir ../shared/data train --base glove-6b-50d \\
        --objective nli-softmax --batch-size 32 --lr 1e-3 --output glove-nli

Prints the before/after STSb table at the end; exit status 0, or 2 with a one-line message for a
user error (bad setting, unknown model, missing data, existing name without ``--overwrite``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..training.reporting import Reporter
from ..training.settings import CONCAT_PARTS, OBJECTIVES
from ..benchmark.score_changes import score_changes
from ..formatting import signed_x100, x100
from .output import format_table


class TqdmReporter(Reporter):
    """Phases and log lines as plain lines, training steps as one tqdm bar (on stderr)."""

    def __init__(self):
        self.bar: Any = None
        self.sample = ""

    def _write(self, line: str) -> None:
        from tqdm.auto import tqdm

        tqdm.write(line, file=sys.stderr)

    def phase(self, state: str, message: str = "") -> None:
        if self.bar is not None and self.bar.n >= (self.bar.total or 0):
            self.bar.close()
            self.bar = None
        if message and self.bar is None and state not in ("running", "finished"):
            self._write(f"[{state}] {message}")

    def progress(self, step: int, total: int, elapsed: float) -> None:
        from tqdm.auto import tqdm

        if self.bar is None:
            self.bar = tqdm(total=total, desc="training", unit="step", file=sys.stderr, dynamic_ncols=True)
        self.bar.update(step - self.bar.n)

    def loss(self, step: int, value: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{value:.4f}", refresh=False)

    def evaluation(self, step: int, spearman: float) -> None:
        self._write(f"step {step:>6,}: STSb dev Spearman {spearman * 100:.2f}{self.sample}")

    def detail(self, key: str, value: Any) -> None:
        if key == "curve_pairs":
            self.sample = f" ({value:,}-pair sample)" if value < 1500 else ""

    def log(self, line: str) -> None:
        self._write(line)


def _config(args: argparse.Namespace):
    from ..training.settings import config_for

    return config_for(
        args.base, args.objective, args.output,
        data=args.data, max_pairs=args.max_pairs, epochs=args.epochs, batch_size=args.batch_size,
        learning_rate=args.lr, warmup_ratio=args.warmup, max_seq_length=args.max_seq_length,
        eval_steps=args.eval_steps, seed=args.seed, precision=args.precision, pooling=args.pooling,
        concatenation=args.concat, dense_dim=args.dense_dim, overwrite=args.overwrite or None,
    )


def cmd_train(args: argparse.Namespace) -> int:
    from ..models.registry import get_registry
    from ..training.reporting import Cancelled
    from ..training.runner import apply_thread_limit, run_training

    from ..training.settings import caution

    config = _config(args).validate()
    if (warning := caution(config)) is not None:
        print(f"Note: {warning}", file=sys.stderr)
    threads = apply_thread_limit(get_registry().get(config.base).kind, beside_app=False)  # nothing served here
    print(f"Training {config.base} ({config.objective}) as {config.output}; "
          f"{threads} CPU thread(s)", file=sys.stderr)
    try:
        result = run_training(config, TqdmReporter())
    except Cancelled as exc:
        print(f"cancelled: {exc}", file=sys.stderr)
        return 130
    changes = score_changes(result.before, result.after)
    rows = [[f"{config.base} (before)", *(x100(row.before) for row in changes)],
            [f"{result.name} (after)", *(x100(row.after) for row in changes)]]
    if result.after:
        rows.append(["change", *(signed_x100(row.change) for row in changes)])
    print(format_table(["model", *(f"STSb {row.split}" for row in changes)], rows))
    print(f"Saved {result.folder} ({result.pairs:,} examples, {result.steps:,} steps, "
          f"{result.train_seconds:.1f} s training on {result.device}); "
          f"use it as --models {result.name}", file=sys.stderr)
    return 0


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``train`` subcommand to ``python -m sbert_demo``."""
    train = subparsers.add_parser("train", help="fine-tune a model the SBERT way and save it under models/")
    train.add_argument("--base", required=True, help="registry key of the model to start from")
    train.add_argument("--objective", required=True, choices=OBJECTIVES)
    train.add_argument("--output", required=True, help="name of the new model (models/NAME)")
    train.add_argument("--data", help="nli, stsb or a CSV/TSV file (default: nli, or stsb for cosine)")
    train.add_argument("--max-pairs", type=int, help="use at most this many training examples")
    train.add_argument("--epochs", type=float)
    train.add_argument("--batch-size", type=int)
    train.add_argument("--lr", type=float, help="peak learning rate (linear warm-up, then linear decay)")
    train.add_argument("--warmup", type=float, help="fraction of the steps spent warming up (default 0.1)")
    train.add_argument("--max-seq-length", type=int, help="truncate texts to this many tokens")
    train.add_argument("--eval-steps", type=int, help="score the STSb dev sample every N steps (0: auto)")
    train.add_argument("--seed", type=int)
    train.add_argument("--precision", choices=["auto", "bf16", "fp16", "fp32"])
    train.add_argument("--pooling", choices=["mean", "cls", "max"], help="for plain transformers")
    train.add_argument("--concat", help=f"softmax classifier input, from {','.join(CONCAT_PARTS)} "
                                        "(default u,v,|u-v|)")
    train.add_argument("--dense-dim", type=int, help="GloVe only: size of the trained dense layer (256)")
    train.add_argument("--overwrite", action="store_true", help="replace an existing model of that name")
    train.add_argument("--data-dir", dest="data_dir_sub", help=argparse.SUPPRESS)
    train.set_defaults(run=cmd_train)
    return train
