"""Training speed: this project's trainer against a plain ``SentenceTransformerTrainer``.

Both train the same model (built the same way from the same seed), on the same examples, with the
same ``SentenceTransformerTrainingArguments`` (batch size, precision, learning-rate schedule,
steps, CPU threads) in the same process, taking turns (plain, project, plain, project, ...); the
best run of each counts, which keeps other processes on a shared machine from deciding the ratio.

* plain: ``SentenceTransformerTrainer(model, args, train_dataset, loss, evaluator)`` as the
  library documents it (its default callbacks, model card tracking and log printer included);
* plain defaults: ``SentenceTransformerTrainer(model, train_dataset=..., loss=...)`` with
  ``SentenceTransformerTrainingArguments`` left at their defaults (fp32, batch 8, PyTorch's own
  thread count, no evaluator): what a user who follows the library's quick start would run, and
  the ratio a user sees;
* sbert_demo: :func:`sbert_demo.training.runner.train_model`, i.e. ``SbertDemoTrainer`` with the
  live-progress callback (progress, loss curve, cancel check every step) and a reporter that
  stores every event, as the job manager does.

Fairness of the evaluation: both run the same STSb-dev evaluator (the one the project uses for its
curve) on the same schedule (``eval_steps``), and that evaluator is timed in both; pairs/s are
computed over the training time *without* evaluation, so the number compares the training loops
and their live reporting, not the evaluation. Totals with evaluation are printed too.

    python bench/train.py [--base glove-6b-50d --objective nli-softmax --max-pairs 20000]
    python bench/train.py --base all-MiniLM-L6-v2 --objective cosine --max-pairs 512

Data from ``--data-dir`` / ``SBERT_DEMO_DATA``, else the data shipped in ``data/``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from sbert_demo.data.benchmarks import sts_split
from sbert_demo.models.registry import get_registry
from sbert_demo.training import runner
from sbert_demo.training.arguments import schedule, training_arguments
from sbert_demo.training.objectives import build_loss, training_data
from sbert_demo.training.reporting import Reporter
from sbert_demo.training.settings import config_for, training_device


class Recording(Reporter):
    """Keeps every event, like the job manager's state does."""

    def __init__(self):
        self.events: list[tuple] = []

    def progress(self, step, total, elapsed):
        self.events.append(("progress", step, total, elapsed))

    def loss(self, step, value):
        self.events.append(("loss", step, value))

    def evaluation(self, step, spearman):
        self.events.append(("evaluation", step, spearman))


def timed(evaluator):
    """The same evaluator, counting the seconds spent in it."""
    class Timed(type(evaluator)):
        def __call__(self, *args, **kwargs):
            started = time.perf_counter()
            try:
                return super().__call__(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

    evaluator.__class__ = Timed
    evaluator.seconds = 0.0
    return evaluator


def run_plain(config, kind, choice, data, dev, sample) -> tuple[float, float]:
    from sentence_transformers import SentenceTransformerTrainer
    from transformers import set_seed

    from sbert_demo.training.model_factory import build_trainable_model

    set_seed(config.seed)
    model = build_trainable_model(config, choice.device)
    plan = schedule(config, len(data), kind, choice.device)
    evaluator = timed(runner.curve_evaluator(config, dev, sample))
    quiet = io.StringIO()  # the plain trainer prints its logs and a widget-examples bar
    with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        trainer = SentenceTransformerTrainer(model=model, args=training_arguments(config, choice, plan, work),
                                             train_dataset=data.dataset, loss=build_loss(config, model),
                                             evaluator=evaluator)
        started = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - started
    return seconds, evaluator.seconds


DEFAULT_THREADS = None  # PyTorch's own thread count, read before the project's limit is applied


def run_plain_default(config, kind, choice, data, dev, sample) -> tuple[float, float]:
    import torch
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from transformers import set_seed

    from sbert_demo.training.model_factory import build_trainable_model

    set_seed(config.seed)
    project_threads = torch.get_num_threads()
    torch.set_num_threads(DEFAULT_THREADS)
    model = build_trainable_model(config, "cpu" if choice.device == "cpu" else choice.device)
    quiet = io.StringIO()
    try:
        with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            arguments = SentenceTransformerTrainingArguments(output_dir=work, num_train_epochs=config.epochs,
                                                             report_to="none", save_strategy="no")
            trainer = SentenceTransformerTrainer(model=model, args=arguments, train_dataset=data.dataset,
                                                 loss=build_loss(config, model))
            started = time.perf_counter()
            trainer.train()
            seconds = time.perf_counter() - started
    finally:
        torch.set_num_threads(project_threads)
    return seconds, 0.0


def run_project(config, kind, choice, data, dev, sample) -> tuple[float, float]:
    import threading

    evaluator = timed(runner.curve_evaluator(config, dev, sample))
    trained = runner.train_model(config, kind, choice, data, dev, sample, Recording(), threading.Event(),
                                 evaluator=evaluator)
    return trained.seconds, evaluator.seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="glove-6b-50d")
    parser.add_argument("--objective", default="nli-softmax")
    parser.add_argument("--max-pairs", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--lr", type=float)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each trainer (best counts)")
    parser.add_argument("--data-dir")
    args = parser.parse_args()
    if args.data_dir:
        os.environ["SBERT_DEMO_DATA"] = args.data_dir

    global DEFAULT_THREADS
    import torch

    DEFAULT_THREADS = torch.get_num_threads()
    kind = get_registry().get(args.base).kind
    runner.apply_thread_limit(kind)  # both trainers run on the project's training thread count
    config = config_for(args.base, args.objective, "bench", max_pairs=args.max_pairs,
                        batch_size=args.batch_size, learning_rate=args.lr)
    choice = training_device(config.precision, kind, base=config.base)
    data = training_data(config)
    dev = sts_split("dev")
    sample = runner.curve_sample(dev, config.seed, runner.curve_size(kind, choice.device))
    plan = schedule(config, len(data), kind, choice.device)
    print(f"{args.base}, {args.objective}: {len(data):,} examples, batch {config.batch_size}, "
          f"{plan.total_steps:,} steps, {choice.name}; dev evaluation "
          f"({len(sample):,} pairs) every {plan.eval_steps} steps in both", flush=True)

    best = {"plain": 0.0, "plain defaults": 0.0, "sbert_demo": 0.0}
    for repeat in range(args.repeats):
        for name, run in (("plain", run_plain), ("plain defaults", run_plain_default), ("sbert_demo", run_project)):
            seconds, eval_seconds = run(config, kind, choice, data, dev, sample)
            rate = len(data) * config.epochs / (seconds - eval_seconds)
            best[name] = max(best[name], rate)
            print(f"  run {repeat + 1} {name:<14} {seconds:7.2f} s total, {eval_seconds:5.2f} s evaluating, "
                  f"{rate:9,.0f} training pairs/s", flush=True)
    ratio = best["sbert_demo"] / best["plain"]
    print(f"training pairs/s (best of {args.repeats}): plain SentenceTransformerTrainer, same arguments "
          f"{best['plain']:,.0f} | sbert_demo trainer {best['sbert_demo']:,.0f} | same-settings ratio {ratio:.2f}x")
    print(f"against SentenceTransformerTrainer with its default arguments (fp32, batch 8, "
          f"{DEFAULT_THREADS} threads) {best['plain defaults']:,.0f} pairs/s | ratio "
          f"{best['sbert_demo'] / best['plain defaults']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
