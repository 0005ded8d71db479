"""What a training run is asked to do: one frozen :class:`TrainConfig`, its defaults and its checks.

The config is plain data (strings and numbers) so it pickles into a child process, prints in a
model card and round-trips through JSON. :func:`config_for` fills the hyperparameters that suit the
base model's kind and the device (the SBERT paper's settings for transformers: batch 16, learning
rate 2e-5, 10 % linear warm-up; a much larger learning rate for the GloVe average, whose only
trainable part is a small dense layer). :meth:`TrainConfig.validate` turns absurd values into a
sentence a user can act on. :func:`training_device` says where and in which precision the run
trains (see :mod:`sbert_demo.training.arguments` for the measurements behind the rules).

Example::

    >>> config = config_for("glove-6b-50d", "nli-softmax", "glove-nli", device="cpu")
    >>> config.batch_size, config.learning_rate, config.data_source
    (32, 0.001, 'nli')
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..config import PRECISIONS, settings
from ..encoding import devices
from ..models.entries import POOLINGS
from ..models.kinds import TRAINABLE, kind_of
from ..models.registry import get_registry
from .saving import output_folder

OBJECTIVES = ("nli-softmax", "cosine", "mnrl", "cross-encoder")
OBJECTIVE_LABELS = {
    "nli-softmax": "NLI classification (softmax over u, v, |u-v|)",
    "cosine": "Similarity regression (cosine vs. gold score, MSE)",
    "mnrl": "Multiple-negatives ranking (anchor, positive, hard negative)",
    "cross-encoder": "Cross-encoder (both sentences read together, score regression)",
}
DATA_SOURCES = ("nli", "stsb")  # or a file path
DEFAULT_DATA = {"nli-softmax": "nli", "cosine": "stsb", "mnrl": "nli", "cross-encoder": "stsb"}
SCORED_OBJECTIVES = ("cosine", "cross-encoder")  # trained on scored pairs (STSb train or a file)
CONCAT_PARTS = ("u,v", "|u-v|", "u*v")  # the paper's ablation (Table 6)
ACTIVATIONS = ("tanh", "relu", "identity")
MAX_EPOCHS = 100
MAX_BATCH = 4096
MAX_SEQ_LENGTH = 8192
# Settings only some kinds of model train with (a kind lists its own in ``train_fields``).
KIND_FIELDS = frozenset({"pooling", "max_seq_length", "dense_dim", "dense_activation"})


@dataclass(frozen=True)
class TrainConfig:
    """One training run. ``data`` is ``nli``, ``stsb`` or a file path ("" picks the objective's default)."""

    base: str
    objective: str
    output: str
    data: str = ""
    max_pairs: int | None = None
    epochs: float = 1.0
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.1
    max_seq_length: int | None = None  # None keeps the model's own limit
    eval_steps: int = 0  # 0: about CURVE_POINTS evaluations over the run
    seed: int = 42
    precision: str = "auto"
    pooling: str = "mean"  # for plain transformers only
    concatenation: str = "u,v,|u-v|"  # softmax classifier input
    dense_dim: int = 256  # GloVe average only: the trainable dense layer
    dense_activation: str = "tanh"
    overwrite: bool = False

    @property
    def data_source(self) -> str:
        return self.data.strip() or DEFAULT_DATA.get(self.objective, "nli")

    @property
    def data_is_file(self) -> bool:
        return self.data_source not in DATA_SOURCES

    def concat_flags(self) -> tuple[bool, bool, bool]:
        """``(u and v, |u-v|, u*v)`` for ``SoftmaxLoss``."""
        return parse_concatenation(self.concatenation)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})

    def hyperparameters(self, kind: str = "transformer") -> dict[str, Any]:
        """The settings a model card lists: those that apply to this objective and to the base model's
        kind (``kind``: its name; a kind's own settings are its ``train_fields``)."""
        skip = {"base", "objective", "output", "data", "overwrite"} | (KIND_FIELDS - kind_of(kind).train_fields)
        if self.objective != "nli-softmax":
            skip.add("concatenation")
        return {k: v for k, v in self.as_dict().items() if k not in skip}

    def validate(self) -> TrainConfig:
        """Return self, or raise ValueError naming the first problem (cheap: no model is loaded)."""
        _check_choice("Objective", self.objective, OBJECTIVES)
        _check_number("Epochs", self.epochs, low=0, high=MAX_EPOCHS, low_inclusive=False)
        _check_int("Batch size", self.batch_size, 1, MAX_BATCH)
        _check_number("Learning rate", self.learning_rate, low=0, high=1, low_inclusive=False)
        _check_number("Warm-up ratio", self.warmup_ratio, low=0, high=1)
        if self.max_pairs is not None:
            _check_int("Maximum number of training pairs", self.max_pairs, 1, 10**9)
        if self.max_seq_length is not None:
            _check_int("Maximum sequence length", self.max_seq_length, 8, MAX_SEQ_LENGTH)
        _check_int("Evaluation interval (steps)", self.eval_steps, 0, 10**9)
        _check_int("Seed", self.seed, 0, 2**32 - 1)
        _check_choice("Precision", self.precision, PRECISIONS)
        _check_choice("Pooling", self.pooling, POOLINGS)
        _check_int("Dense layer size", self.dense_dim, 1, 16384)
        _check_choice("Dense activation", self.dense_activation, ACTIVATIONS)
        self.concat_flags()
        self._check_data()
        output_folder(self.output, self.overwrite)
        self._check_base()
        self._check_device()
        return self

    def _check_device(self) -> None:
        """An impossible device/precision pair (fp16 on a CPU) is refused now, not inside the run."""
        device_label(self)

    def _check_base(self) -> None:
        registry = get_registry()
        entry = registry.get(self.base)
        _refuse_fixed(entry)
        kind = kind_of(entry)
        if not kind.can(TRAINABLE):
            raise ValueError(kind.refusal(entry, TRAINABLE, "be trained here"))
        if self.objective == "cross-encoder" and not kind.matmul_heavy:
            raise ValueError(f"A cross-encoder reads both sentences with a transformer; {entry.label} has none. "
                             "Start from all-MiniLM-L6-v2 (or mpnet, or BERT).")
        status = registry.availability(entry)
        if not status.available:
            raise ValueError(f"The base model {entry.label} cannot be trained here: {status.reason}")

    def _check_data(self) -> None:
        source = self.data_source
        if source == "stsb" and self.objective not in SCORED_OBJECTIVES:
            raise ValueError(f"The {self.objective} objective needs NLI data (labelled pairs or triplets), "
                             "not STSb scores; choose the NLI data or a file, or the cosine objective.")
        if source == "nli" and self.objective in SCORED_OBJECTIVES:
            raise ValueError(f"The {self.objective} objective needs scored pairs (STSb train or a file with a "
                             "score column), not NLI labels; choose STSb train or a file.")
        if source not in DATA_SOURCES and not Path(source).expanduser().is_file():
            raise ValueError(f"Training data {source!r} is neither 'nli', 'stsb' nor an existing file.")


def parse_concatenation(text: str) -> tuple[bool, bool, bool]:
    """``"u,v,|u-v|"`` → ``(True, True, False)``; u and v always go together, as in the paper."""
    tokens = {t.strip().replace(" ", "") for t in str(text).split(",") if t.strip()}
    tokens = {"u" if t in ("(u", "u") else "v" if t in ("v)", "v") else t for t in tokens}
    unknown = tokens - {"u", "v", "|u-v|", "u*v"}
    if unknown:
        raise ValueError(f"Unknown concatenation part(s) {', '.join(sorted(unknown))}; combine "
                         f"{', '.join(CONCAT_PARTS)}.")
    if ("u" in tokens) != ("v" in tokens):
        raise ValueError("The concatenation uses u and v together or not at all (write u,v).")
    flags = ("u" in tokens, "|u-v|" in tokens, "u*v" in tokens)
    if not any(flags):
        raise ValueError(f"Select at least one part for the softmax classifier's input: {', '.join(CONCAT_PARTS)}.")
    return flags


def _check_choice(what: str, value: object, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise ValueError(f"{what} {value!r} is not valid; choose one of {', '.join(valid)}.")


def _check_number(what: str, value: object, low: float, high: float, low_inclusive: bool = True) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, not {value!r}.")
    too_low = value < low if low_inclusive else value <= low
    if too_low or value > high:
        bound = f"at least {low}" if low_inclusive else f"more than {low}"
        raise ValueError(f"{what} must be {bound} and at most {high}, not {value}.")


def _check_int(what: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, not {value!r}.")
    if not low <= value <= high:
        raise ValueError(f"{what} must be between {low:,} and {high:,}, not {value:,}.")


def defaults_for(kind: str, device: str) -> dict[str, Any]:
    """Hyperparameters that suit a base model's kind (its name) on ``device``: the kind says
    (:meth:`~sbert_demo.models.kinds.base.ModelKind.training_defaults`)."""
    return kind_of(kind).training_defaults(device)


def _refuse_fixed(entry) -> None:
    if entry.fix is not None:
        raise ValueError(f"{entry.key} is {entry.base} with a training-free fix fitted after encoding; "
                         f"train {entry.base} itself (compare the trained model with {entry.key} afterwards).")


def config_for(base: str, objective: str, output: str, *, device: str | None = None,
               **overrides: Any) -> TrainConfig:
    """A config with the defaults for ``base`` on ``device`` (default: this machine), then ``overrides``.

    Overrides that are None are ignored, so a CLI or a form can pass every field it has.
    Raises ValueError for an unknown base model.
    """
    entry = get_registry().get(base)
    _refuse_fixed(entry)
    if device is None:
        device = devices.current().device
    values: dict[str, Any] = {**defaults_for(entry.kind, device),
                              **{k: v for k, v in overrides.items() if v is not None}}
    return TrainConfig(base=entry.key, objective=objective, output=output, **values)


def training_threads(kind: str | None = None, beside_app: bool = True) -> int:
    """CPU threads for training: ``SBERT_DEMO_TRAIN_THREADS``, else every core for a run alone (the command line,
    ``beside_app=False``) and one core left for the visitors where the app serves pages beside the run.

    GloVe softmax keeps one thread: its ops are tiny, and it ran 10x faster on one thread than on two (OpenMP
    threads spin waiting for a busy core). MiniLM on STSb (bf16, 360 steps of 16 pairs) on an otherwise idle
    2-core AMD EPYC: 157 s of training on two threads, 222 s on one.
    """
    chosen = settings().train_threads
    if chosen:
        return chosen
    if kind is not None and not kind_of(kind).matmul_heavy:
        return 1
    cores = os.cpu_count() or 2
    return max(1, cores - 1) if beside_app else cores


def measured_runtimes(base: str, hardware: devices.Hardware | None = None):
    """The runtimes measured for inference with the model ``base`` on this CPU
    (:func:`sbert_demo.encoding.runtime_choice.stored`), or None where they never were (a Hub model
    not downloaded, a model trained here, a CPU where the app has not run it yet). Never measures."""
    from ..encoding import runtime_choice
    from ..models import loading

    try:
        identity = loading.resolve(base).identity
    except ValueError:
        return None
    if identity is None:
        return None
    return runtime_choice.stored(settings().cache_dir, hardware or devices.detect_hardware(), identity)


def training_device(precision: str, kind: str, hardware: devices.Hardware | None = None,
                    device: str | None = None, base: str | None = None) -> devices.DeviceChoice:
    """Where and in which precision a model of registry ``kind`` trains.

    ``precision`` "auto" follows ``SBERT_DEMO_PRECISION`` (itself "auto" unless set). On a CPU with
    native bf16 the rule says bf16; where the runtimes of ``base`` (its registry key) were measured on
    this CPU and PyTorch bf16 ran slower than fp32 (a Xeon without AMX: MiniLM 271 against 450
    sentences/s; training 67.8 s against 41.5 s for 32 steps of 16 pairs), it trains in fp32.

    >>> from sbert_demo.config import use_settings
    >>> with use_settings(settings().replace(precision="auto", device="auto")):
    ...     training_device("auto", "transformer", devices.Hardware(cuda=True, cuda_bf16=False)).precision
    'fp16'
    """
    if hardware is None:
        import torch

        hardware = replace(devices.detect_hardware(), cpu_threads=torch.get_num_threads())
    config = settings()
    precision = config.precision if precision == "auto" else precision
    if precision == "int8":  # an inference-only setting (ONNX weights); training follows the hardware
        precision = "auto"
    choice = devices.choose(hardware, device or config.device, precision, matmul_heavy=kind_of(kind).matmul_heavy,
                            backend="torch")
    if choice.device == "cpu" and choice.precision == "bf16" and precision == "auto" and base is not None:
        measured = measured_runtimes(base, hardware)
        speedup = None if measured is None else measured.speedup("torch-bf16")
        if speedup is not None and speedup < 1:
            choice = devices.choose(hardware, "cpu", "fp32", matmul_heavy=True, backend="torch")
    if choice.device == "mps" and choice.precision != "fp32":
        raise ValueError("Mixed-precision training on Apple MPS is not supported; use precision fp32 or auto.")
    return choice


def caution(config: TrainConfig) -> str | None:
    """What to know before starting ``config``, where the run is likely to make the model worse.

    The paper's NLI softmax objective trains a classifier on (u, v, |u-v|); from BERT it gives SBERT,
    but a model that is already a sentence embedding learns classification features instead of its
    cosine geometry. Measured with all-MiniLM-L6-v2 (bench/gpu.py, NVIDIA H200, all 39,313 NLI pairs,
    batch 32): STSb dev 86.7 -> 38.5 in bf16, 37.1 in fp32, while multiple-negatives ranking on the
    same data took it to 87.7. On a CPU, 6,400 pairs: 87.8 -> 85.1 on a 500-pair dev sample (a head
    learning 100x faster: 79.5; without the final normalisation: 85.4, so neither is the cause).
    """
    entry = get_registry().get(config.base)
    if config.objective == "nli-softmax" and entry.family == "siamese":
        return (f"{entry.label} is already a sentence-embedding model: the NLI softmax objective (the paper's "
                "recipe for plain BERT) teaches it classification features and lowers its STSb score "
                "(measured: all-MiniLM-L6-v2 on all 39,313 NLI pairs, STSb dev 86.7 → 38.5). To improve it, "
                "choose multiple-negatives ranking (86.7 → 87.7 on the same pairs) or cosine on STSb.")
    return None


def device_label(config: TrainConfig) -> str:
    """What the Train tab shows before a run, e.g. "NVIDIA H100 80GB HBM3 (CUDA), bf16"."""
    kind = get_registry().get(config.base).kind
    hardware = replace(devices.detect_hardware(), cpu_threads=training_threads(kind))
    return training_device(config.precision, kind, hardware, base=config.base).name
