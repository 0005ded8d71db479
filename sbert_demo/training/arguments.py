"""The schedule of a run (steps, warm-up, evaluations) and its ``SentenceTransformerTrainingArguments``.

The device and precision come from :func:`sbert_demo.training.settings.training_device`, which
follows :func:`sbert_demo.encoding.devices.choose` with one training rule on top:

* CUDA: bf16 where the GPU supports it, else fp16 (mixed precision with loss scaling).
* CPU with native bf16 (AVX512-BF16/AMX): bf16 autocast for transformers where it is faster. Measured
  on all-MiniLM-L6-v2, cosine loss, STSb train, batch 16, lr 2e-5, one epoch, one thread: as accurate
  (STSb test 85.01 bf16 vs 85.02 fp32, dev 89.25 both) and, on one Xeon, faster (training 165 s vs
  361 s on the busy shared machine, 64 vs 21 pairs/s on a short quiet run: 2.2-3.0x); on another Xeon
  (AVX512-BF16 without AMX) slower (32 steps: 67.8 s vs 41.5 s). So where the base model's runtimes
  were measured on this CPU (:mod:`sbert_demo.encoding.runtime_choice`) and PyTorch bf16 ran slower
  than fp32, it trains in fp32.
* CPU without it, the GloVe average (nothing matmul-heavy to speed up) and Apple MPS: fp32.

The flags are a pure function of that choice, so they are tested without a GPU;
:func:`training_arguments` only builds the object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..encoding import devices
from ..models.kinds import kind_of
from .settings import TrainConfig

CURVE_POINTS = {"cpu": 4, "cheap": 10, "gpu": 10}  # dev evaluations per run when eval_steps is 0
CURVE_PAIRS = 500  # STSb dev pairs scored during training by transformers on a CPU (else all 1,500)
LOSS_POINTS = 100  # loss values per run, about


@dataclass(frozen=True)
class Schedule:
    steps_per_epoch: int
    total_steps: int
    warmup_steps: int
    eval_steps: int  # 0: no evaluation during training
    logging_steps: int


def schedule(config: TrainConfig, examples: int, kind: str, device: str) -> Schedule:
    """Steps as the Trainer counts them (last partial batch kept), warm-up, evaluation and logging."""
    per_epoch = max(1, math.ceil(examples / config.batch_size))
    total = max(1, math.ceil(per_epoch * config.epochs))
    warmup = math.ceil(total * config.warmup_ratio)
    if config.eval_steps:
        eval_steps = config.eval_steps
    else:
        points = CURVE_POINTS["cheap" if _cheap(kind) else "cpu" if device == "cpu" else "gpu"]
        eval_steps = max(1, math.ceil(total / points))
    return Schedule(per_epoch, total, warmup, eval_steps, max(1, total // LOSS_POINTS))


def _cheap(kind: str) -> bool:
    """Whether the kind's model encodes at table-look-up speed (word vectors: no matrix products)."""
    return not kind_of(kind).matmul_heavy


def curve_size(kind: str, device: str) -> int | None:
    """The full dev split where scoring it is cheap (GloVe: ~0.05 s; a GPU), a sample elsewhere.

    Scoring all 1,500 dev pairs with MiniLM on one CPU thread takes ~5 s (bf16); 500 pairs ~1.6 s.
    """
    return None if _cheap(kind) or device != "cpu" else CURVE_PAIRS


def precision_flags(choice: devices.DeviceChoice) -> dict[str, bool]:
    """The Trainer's device and mixed-precision switches for ``choice``."""
    return {"use_cpu": choice.device == "cpu", "bf16": choice.precision == "bf16",
            "fp16": choice.precision == "fp16"}


def argument_kwargs(config: TrainConfig, choice: devices.DeviceChoice, plan: Schedule,
                    output_dir: str | Path, evaluate: bool = True) -> dict[str, Any]:
    """Everything ``SentenceTransformerTrainingArguments`` gets, as a plain dict (testable anywhere)."""
    from .objectives import batch_sampler

    return {
        "output_dir": str(output_dir),
        "num_train_epochs": config.epochs,
        "per_device_train_batch_size": config.batch_size,
        "learning_rate": config.learning_rate,
        "warmup_steps": plan.warmup_steps,  # an int: transformers 5 reads floats below 1 as ratios
        "lr_scheduler_type": "linear",
        "seed": config.seed,
        "data_seed": config.seed,
        "batch_sampler": batch_sampler(config),
        "dataloader_drop_last": False,
        "dataloader_pin_memory": choice.device == "cuda",
        "eval_strategy": "steps" if evaluate else "no",
        "eval_steps": plan.eval_steps if evaluate else None,
        "logging_strategy": "steps",
        "logging_steps": plan.logging_steps,
        "logging_first_step": True,
        "save_strategy": "no",  # the project saves once, atomically (saving.py)
        "report_to": "none",
        "disable_tqdm": True,  # progress goes through the project's reporter instead
        **precision_flags(choice),
    }


def training_arguments(config: TrainConfig, choice: devices.DeviceChoice, plan: Schedule,
                       output_dir: str | Path, evaluate: bool = True) -> Any:
    """The recipe's arguments object (``SentenceTransformerTrainingArguments`` or the cross-encoder's)."""
    from .recipes import recipe_for

    return recipe_for(config).arguments(argument_kwargs(config, choice, plan, output_dir, evaluate))
