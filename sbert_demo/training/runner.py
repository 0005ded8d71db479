"""One training run from start to finish: data, base scores, training, atomic save, new scores.

:func:`run_training` is what the CLI calls in-process and what the job manager runs in a child
process. Training itself is ``SentenceTransformerTrainer`` with the project's one callback
(:class:`~sbert_demo.training.trainer.TrainingCallback`); the STSb-dev curve during training uses
sentence-transformers' ``EmbeddingSimilarityEvaluator`` on a fixed sample of dev pairs (cheap),
while the before/after table uses the full dev and test splits through
:func:`sbert_demo.benchmark.evaluation.evaluate`, so the embeddings of the base and of the saved model land
in the shared embedding cache and every tab sees the same numbers.

Order of events: starting → evaluating (base) → running (with short "evaluating" spells) →
saving → evaluating (trained model) → finished. A cancel before the save raises
:class:`~sbert_demo.training.reporting.Cancelled` and leaves nothing in ``models/``; after the save
the model is complete and is kept, and a cancel only skips its final scores.
"""

from __future__ import annotations

import logging
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..benchmark.evaluation import StsResult, correlations, evaluate
from ..data.benchmarks import sts_split
from ..data.records import ScoredPairs
from ..models.registry import get_registry
from .arguments import CURVE_PAIRS, Schedule, curve_size, schedule, training_arguments
from .model_factory import trainable_parameters
from .objectives import TrainingData, describe_objective, training_data
from .recipes import recipe_for
from .reporting import Cancelled, Reporter, check_cancel
from .saving import save_model, write_card
from .settings import TrainConfig, training_device, training_threads

logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class TrainResult:
    name: str
    folder: Path
    before: dict[str, float] | None  # {"dev": spearman, "test": spearman} in [-1, 1]; None: nothing to score
    after: dict[str, float] | None  # None when the final scoring was cancelled
    train_seconds: float  # the optimisation loop, curve evaluations included
    eval_seconds: float  # of which the curve evaluations
    total_seconds: float
    steps: int
    pairs: int
    device: str
    precision: str
    card: dict[str, Any] = field(repr=False, default_factory=dict)


@dataclass
class _Trained:
    model: Any
    plan: Schedule
    seconds: float
    eval_seconds: float
    cancelled: bool


def apply_thread_limit(kind: str | None = None, beside_app: bool = True) -> int:
    """Set torch's CPU threads for training (see :func:`training_threads`); return the number."""
    import torch

    threads = training_threads(kind, beside_app)
    torch.set_num_threads(threads)
    return threads


def _cancellable(cancel: Any):
    def progress(done: int, total: int) -> None:
        check_cancel(cancel)

    return progress


def score_sts(key: str, dev: ScoredPairs, test: ScoredPairs, cancel: Any = None) -> dict[str, StsResult]:
    """STSb dev and test results of a registry model (cached embeddings are reused)."""
    return {split: evaluate(key, pairs, progress=_cancellable(cancel))
            for split, pairs in (("dev", dev), ("test", test))}


def curve_sample(dev: ScoredPairs, seed: int, size: int | None = CURVE_PAIRS) -> list[int]:
    """Positions of the dev pairs scored during training: all, or a fixed random sample in file order."""
    if size is None or len(dev) <= size:
        return list(range(len(dev)))
    return sorted(random.Random(seed).sample(range(len(dev)), size))


def curve_evaluator(config: TrainConfig, dev: ScoredPairs, sample: list[int]) -> Any:
    """The dev-curve evaluator of ``config``'s recipe, on the sampled dev pairs."""
    return recipe_for(config).evaluator(dev, sample)


def train_model(config: TrainConfig, kind: str, choice: Any, data: TrainingData, dev: ScoredPairs,
                sample: list[int], reporter: Reporter, cancel: Any = None, evaluator: Any = None) -> _Trained:
    """Build the model, train it with the Trainer, return it (in memory) with timings.

    ``evaluator`` replaces the dev-curve evaluator (``bench/train.py`` passes a timed one).
    """
    from transformers import set_seed

    from .trainer import TrainingCallback

    recipe = recipe_for(config)
    set_seed(config.seed)  # a dense layer, the softmax classifier or a cross-encoder's head start random
    model = recipe.build_model(config, choice.device)
    plan = schedule(config, len(data), kind, choice.device)
    callback = TrainingCallback(reporter, cancel, metric=recipe.metric)
    work = Path(tempfile.mkdtemp(prefix="sbert-demo-train-"))  # the Trainer's scratch output_dir
    try:
        args = training_arguments(config, choice, plan, work)
        evaluator = recipe.evaluator(dev, sample) if evaluator is None else evaluator
        trainer = recipe.trainer(model, args, data.dataset, recipe.loss(config, model), evaluator, [callback])
        reporter.log(f"{plan.total_steps:,} steps of {config.batch_size} ({plan.warmup_steps:,} warm-up), "
                     f"STSb dev ({len(sample):,} pairs) scored every {plan.eval_steps:,} steps; "
                     f"{trainable_parameters(model, trainer.loss):,} trainable parameters")
        check_cancel(cancel)
        reporter.phase("running", "Training")
        started = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cancelled = callback.cancelled or (cancel is not None and cancel.is_set())
    return _Trained(model, plan, seconds, callback.eval_seconds, cancelled)


def _spearman_on(result: StsResult, dev: ScoredPairs, sample: list[int]) -> float:
    gold = [dev.scores[i] for i in sample]
    return correlations(gold, result.cosine[sample])[0]


def build_card(config: TrainConfig, data: TrainingData, trained: _Trained, choice: Any,
               before: dict[str, float] | None, after: dict[str, float] | None) -> dict[str, Any]:
    """The facts ``sbert_demo_card.json`` and ``README.md`` hold about a trained model."""
    entry = get_registry().get(config.base)
    change = ""
    if after and before:
        change = f"; STSb test {before['test'] * 100:.2f} → {after['test'] * 100:.2f}"
    elif after:
        change = f"; STSb test {after['test'] * 100:.2f}"
    return {**recipe_for(config).saved(Path(config.output)),
        "label": f"{config.output} ({config.objective} on {entry.key})",
        "summary": f"{entry.label} fine-tuned with {describe_objective(config)} on {data.description}{change}.",
        "base": entry.key,
        "base_label": entry.label,
        "objective": config.objective,
        "objective_detail": describe_objective(config),
        "data": data.description,
        "pairs": len(data),
        "hyperparameters": {**config.hyperparameters(entry.kind), "steps": trained.plan.total_steps,
                            "warmup_steps": trained.plan.warmup_steps},
        "device": choice.name,
        "precision": choice.precision,
        "duration_s": round(trained.seconds, 2),
        "before": before,
        "after": after,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sbert_demo_version": __version__,
    }


def _spearmans(results: dict[str, StsResult]) -> dict[str, float]:
    return {split: float(result.spearman) for split, result in results.items()}


def run_training(config: TrainConfig, reporter: Reporter | None = None, cancel: Any = None) -> TrainResult:
    """Train, save and score one model; raise ValueError for bad settings, Cancelled when cancelled."""
    reporter = reporter or Reporter()
    clock = time.perf_counter()
    config = config.validate()
    entry = get_registry().get(config.base)
    choice = training_device(config.precision, entry.kind, base=entry.key)
    reporter.phase("starting", "Reading the training data")
    reporter.detail("device", choice.name)
    reporter.log(f"Training {entry.label} on {choice.name}")
    data = training_data(config)
    reporter.log(f"Data: {data.description}")
    dev, test = sts_split("dev"), sts_split("test")
    check_cancel(cancel)
    sample = curve_sample(dev, config.seed, curve_size(entry.kind, choice.device))
    before = None
    if recipe_for(config).scores_before:
        reporter.phase("evaluating", f"Scoring the base model {entry.label} on STSb dev and test")
        base = score_sts(entry.key, dev, test, cancel)
        before = _spearmans(base)
        reporter.detail("before", before)
        reporter.log(f"Base model: STSb dev {before['dev'] * 100:.2f}, test {before['test'] * 100:.2f}")
        reporter.evaluation(0, _spearman_on(base["dev"], dev, sample))
    else:
        reporter.log("No score before training: an untrained cross-encoder's head is random, its scores mean nothing.")
    reporter.detail("curve_pairs", len(sample))
    trained = train_model(config, entry.kind, choice, data, dev, sample, reporter, cancel)
    if trained.cancelled:
        raise Cancelled("Training was cancelled; nothing was saved.")
    reporter.log(f"Trained in {trained.seconds:.1f} s ({trained.eval_seconds:.1f} s of it on the dev curve)")
    reporter.phase("saving", f"Saving models/{config.output}")
    card = build_card(config, data, trained, choice, before, None)
    folder = save_model(trained.model, config.output, card, overwrite=config.overwrite)
    reporter.detail("model_name", config.output)
    trained.model = None  # free it before the saved copy is loaded for scoring
    after = _score_saved(config.output, dev, test, cancel, reporter)
    card = build_card(config, data, trained, choice, before, after)
    write_card(folder, card)
    if after:
        reporter.detail("after", after)
    reporter.phase("finished", card["summary"])
    return TrainResult(config.output, folder, before, after, trained.seconds, trained.eval_seconds,
                       time.perf_counter() - clock, trained.plan.total_steps, len(data), choice.name,
                       choice.precision, card)


def _score_saved(name: str, dev: ScoredPairs, test: ScoredPairs, cancel: Any,
                 reporter: Reporter) -> dict[str, float] | None:
    reporter.phase("evaluating", f"Scoring the trained model {name} on STSb dev and test")
    try:
        after = _spearmans(score_sts(name, dev, test, cancel))
    except Cancelled:
        reporter.log(f"Final scoring cancelled; the model is saved as {name}.")
        return None
    reporter.log(f"Trained model: STSb dev {after['dev'] * 100:.2f}, test {after['test'] * 100:.2f}")
    return after
