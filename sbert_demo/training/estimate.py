"""How long a training run will take, before it starts (for the Train tab's "about N minutes").

A run's time is start-up + scoring the base model (free when its embeddings are cached) +
optimiser steps + dev-curve evaluations + saving + scoring the trained model. A step costs a fixed
overhead plus a cost per text (a pair is two texts, a triplet three); the costs below were measured
on this project's 2-core build machine, one training thread, other jobs running (so they lean slow):

=====================================  ==========  ===========  =========================
model (kind, precision)                step cost   per text     measured
=====================================  ==========  ===========  =========================
GloVe average + dense (fp32)           1.5 ms      0.04 ms      1,229 steps of 32 NLI pairs
                                                                in 3.0 s (idle) to 5.8 s (busy)
all-MiniLM-L6-v2, CPU bf16             10 ms       7.5 ms       64 pairs/s at batch 16
all-MiniLM-L6-v2, CPU fp32             10 ms       23 ms        21 pairs/s at batch 16
=====================================  ==========  ===========  =========================

Where the base model's runtimes were measured on this CPU (what the app does once per machine and
model version, :mod:`sbert_demo.encoding.runtime_choice`), bf16 costs fp32's cost divided by the
measured bf16 speed-up, and scoring STSb runs at the measured rate of the lossless runtime; the base
model's STSb embeddings already in the cache cost nothing. On a Xeon whose bf16 is slower than fp32
this took the MiniLM estimate from 43 s for a 121 s run (bf16 chosen by the CPU flags) to 74.5 s for
a 73.0 s run (fp32, chosen by the measurement); 2,048 pairs: 146 s estimated, 155 s taken.

Larger transformers scale with layers x hidden size² (BERT/mpnet base ≈ 8x MiniLM). Encoding for
evaluation: GloVe ~20,000 texts/s, MiniLM ~600 texts/s (bf16) or ~180 (fp32) on one CPU thread.

On a GPU (``bench/gpu.py`` on an NVIDIA H200, all-MiniLM-L6-v2, batch 32, each run a fresh process
through the job manager) a step is bound by kernel launches and the trainer's Python, not by
arithmetic: 38 ms in fp32 and 75 ms with bf16 autocast (its casts are more launches; fp32 trained
1.7-1.9x faster there, to the same STSb), whatever the batch's texts; the process takes ~12 s before
its first step (CUDA context, model, data), and the first run on a fresh machine ~23 s more (cold
caches: 55 s for a 32 s run), which is left out. Launch-bound work grows with the layers and the
forward passes per step, not hidden size², hence ``size ** (1/3)`` (BERT/mpnet base ≈ 2x MiniLM). The
former rule (CPU bf16 / 40) had put those runs at 14-27 s; they took 25-119 s.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..models import assets
from ..models.kinds import kind_of
from .settings import TrainConfig

MINILM_COST = 384 * 384 * 6  # hidden² x layers of all-MiniLM-L6-v2
STARTUP_S = 8.0  # child process + torch/transformers imports + model load
GLOVE = {"step_s": 0.0015, "text_s": 0.00004, "encode_text_s": 1 / 20_000}
MINILM_CPU = {"bf16": {"step_s": 0.010, "text_s": 0.0075, "encode_text_s": 1 / 600},
              "fp32": {"step_s": 0.010, "text_s": 0.023, "encode_text_s": 1 / 180}}
GPU = {"fp32": {"step_s": 0.038, "text_s": 0.00001}, "mixed": {"step_s": 0.075, "text_s": 0.00001},
       "startup_s": 12.0, "encode_text_s": 1 / 11_000}  # H200, MiniLM (above)
THREAD_SCALING = 0.6  # n threads run about n ** 0.6 times as fast as one
DEV_TEST_TEXTS = 5_600  # distinct sentences of STSb dev + test
CURVE_TEXTS = {True: 1_000, False: 2_900}  # distinct sentences of the 500-pair sample / all of dev
HUB_SIZES = {"nli": 942_069, "mnrl": 557_850}  # all-nli pair-class / triplet train splits


@dataclass(frozen=True)
class Estimate:
    startup_s: float
    before_s: float
    training_s: float
    curve_s: float
    save_s: float
    after_s: float
    steps: int
    examples: int

    @property
    def total_s(self) -> float:
        return self.startup_s + self.before_s + self.training_s + self.curve_s + self.save_s + self.after_s


BASE_SIZE = 8.0  # a BERT-base-sized transformer (hidden 768, 12 layers) relative to MiniLM-L6


def _relative_size(entry, location: Path | None) -> float:
    """Compute per text relative to all-MiniLM-L6-v2, from the model's config.json when readable (a
    packaged model's before it is prepared); a BERT-base-sized model when there is none yet (Hub)."""
    try:
        text = (location / "config.json").read_bytes() if location is not None and location.is_dir() else None
        if text is None and entry.asset is not None:
            text = assets.read_asset_file(entry.asset, "config.json")
        config = json.loads(text)
        return config["hidden_size"] ** 2 * config["num_hidden_layers"] / MINILM_COST
    except (OSError, ValueError, KeyError, TypeError):  # no local copy yet (Hub), or not a transformer
        return BASE_SIZE


def _examples(config: TrainConfig) -> int:
    from ..data import benchmarks

    source = config.data_source
    if source == "stsb":
        count = len(benchmarks.sts_split("train"))
    elif source == "nli":
        try:
            count = len(benchmarks.nli_triplets() if config.objective == "mnrl" else benchmarks.nli_pairs())
        except ValueError:
            count = HUB_SIZES["mnrl" if config.objective == "mnrl" else "nli"]
    else:
        with open(source, "rb") as handle:
            count = max(0, sum(1 for line in handle if line.strip()) - 1)
    return min(count, config.max_pairs) if config.max_pairs else count


def _costs(config: TrainConfig, kind: str, device: str, precision: str, size: float,
           measured=None) -> dict[str, float]:
    """Seconds per step, per trained text and per encoded text on one CPU thread (or the GPU).

    ``measured`` is the base model's inference runtimes timed on this CPU (:mod:`sbert_demo.encoding.
    runtime_choice`), when they were: bf16 then costs what the measurement says relative to fp32
    (bf16 is 2.6-3x faster than fp32 on some CPUs and slower on others, where training runs in fp32),
    and scoring STSb runs at the measured rate of the lossless runtime."""
    if not kind_of(kind).matmul_heavy:  # a word-vector average: look-ups, not matrix products
        return dict(GLOVE)
    if device != "cpu":  # launch-bound: per step and forward pass (a pair is two, a cross-encoder's one),
        layers = size ** (1 / 3)  # growing with the layers (see the module docstring)
        return {"step_s": GPU["fp32" if precision == "fp32" else "mixed"]["step_s"] * layers * _passes(config) / 2,
                "text_s": GPU["fp32"]["text_s"] * size, "encode_text_s": GPU["encode_text_s"] * layers}
    costs = {key: value * (size if key != "step_s" else 1.0) for key, value in MINILM_CPU["fp32"].items()}
    if precision == "bf16":
        speedup = None if measured is None else measured.speedup("torch-bf16")
        costs = ({key: value / speedup if key != "step_s" else value for key, value in costs.items()}
                 if speedup else {key: value * (size if key != "step_s" else 1.0)
                                  for key, value in MINILM_CPU["bf16"].items()})
    return costs


def _passes(config: TrainConfig) -> int:
    """Forward passes per training step: one per text column (a cross-encoder reads both at once)."""
    from .cross_encoder import OBJECTIVE as CROSS_ENCODER

    return 1 if config.objective == CROSS_ENCODER else 3 if config.objective == "mnrl" else 2


def _scoring_text_s(measured, fallback: float) -> float:
    """Seconds per text, on one thread, to score STSb with the lossless runtime: its measured rate
    (timed on all the machine's threads, as the app encodes) where it was measured here."""
    from ..encoding import devices

    rate = None if measured is None else measured.rate(measured.lossless.name)
    if not rate:
        return fallback
    return max(1, devices.detect_hardware().cpu_threads) ** THREAD_SCALING / rate


def _uncached(key: str) -> float:
    """The share of STSb dev and test that the base model still has to encode (1 where unknown)."""
    from ..data.benchmarks import sts_split
    from ..encoding.encoder import cached_share

    try:
        texts = [t for split in ("dev", "test") for pairs in [sts_split(split)]
                 for t in (*pairs.sentences1, *pairs.sentences2)]
        share = cached_share(key, texts)
    except (ValueError, OSError):
        share = None
    return 1.0 if share is None else 1.0 - share


def estimate(config: TrainConfig, device: str | None = None, threads: int | None = None) -> Estimate:
    """The expected duration of each phase of ``config``'s run (reads the data once to count it)."""
    from ..models.registry import get_registry
    from .arguments import curve_size, schedule
    from .recipes import recipe_for
    from .settings import measured_runtimes, training_device, training_threads

    registry = get_registry()
    entry = registry.get(config.base)
    choice = training_device(config.precision, entry.kind, device=device, base=entry.key)
    size = _relative_size(entry, registry.availability(entry).location)
    measured = measured_runtimes(entry.key) if kind_of(entry).matmul_heavy else None
    costs = _costs(config, entry.kind, choice.device, choice.precision, size, measured)
    scoring = costs["encode_text_s"]
    if choice.device == "cpu" and measured is not None:
        scoring = _scoring_text_s(measured, scoring)
    if choice.device == "cpu":  # measured on one thread; more threads help sub-linearly
        speedup = max(1, threads or training_threads(entry.kind)) ** THREAD_SCALING
        costs = {key: value / speedup for key, value in costs.items()}
        scoring /= speedup
    examples = _examples(config)
    plan = schedule(config, examples, entry.kind, choice.device)
    step_s = costs["step_s"] + costs["text_s"] * config.batch_size * max(2, _passes(config))
    sampled = curve_size(entry.kind, choice.device) is not None
    gpu = choice.device != "cpu" and kind_of(entry).matmul_heavy
    return Estimate(
        startup_s=GPU["startup_s"] if gpu else STARTUP_S,
        before_s=DEV_TEST_TEXTS * scoring * _uncached(entry.key) if recipe_for(config).scores_before else 0.0,
        training_s=plan.total_steps * step_s,
        curve_s=math.ceil(plan.total_steps / plan.eval_steps) * CURVE_TEXTS[sampled] * costs["encode_text_s"],
        save_s=2.0,
        after_s=DEV_TEST_TEXTS * scoring,
        steps=plan.total_steps,
        examples=examples,
    )


def estimate_seconds(config: TrainConfig, device: str | None = None) -> float:
    """Expected wall-clock seconds of the whole run (see the module docstring for the numbers).

    >>> 10 < estimate_seconds(TrainConfig("glove-6b-50d", "nli-softmax", "x", batch_size=32)) < 60  # 39,313 pairs
    True
    """
    return estimate(config, device).total_s
