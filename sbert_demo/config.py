"""Settings read from the environment, in one place.

Every setting has an environment variable so the app can be configured on hosts where nobody has a
terminal (Hugging Face Spaces): the variables are read each time :func:`settings` is called, which
keeps tests free to change them with ``monkeypatch.setenv``.

Example::

    >>> from sbert_demo.config import settings
    >>> settings().models_dir.name
    'models'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_DATA = REPO_ROOT / "data"  # STS benchmark and NLI pairs, with their licences (data/README.md)

PRECISIONS = ("auto", "bf16", "fp16", "fp32")  # what training (and PyTorch inference) can use
# Inference adds int8: weight-quantised ONNX Runtime artefacts (:mod:`sbert_demo.encoding.onnx_export`).
INFERENCE_PRECISIONS = (*PRECISIONS, "int8")
DEVICES = ("auto", "cpu", "cuda", "mps")
BACKENDS = ("auto", "torch", "onnx")  # who runs transformer inference on the CPU


@dataclass(frozen=True)
class Settings:
    models_dir: Path
    cache_dir: Path
    data_dir: Path  # SBERT_DEMO_DATA, else the data shipped in the repository
    fit_sentences: Path | None  # what training-free fixes are fitted on; None: STSb train
    device: str
    precision: str
    backend: str
    training_enabled: bool
    max_loaded_models: int
    max_loaded_model_mb: int
    hub_timeout_s: float


def _default_cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("sbert-demo"))


def _truthy(value: str) -> bool:
    return value.strip().lower() not in ("0", "false", "no", "off", "")


def _choice(name: str, value: str, valid: tuple[str, ...]) -> str:
    value = value.strip().lower()
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {', '.join(valid)}.")
    return value


def settings() -> Settings:
    """Read the current settings from the environment."""
    env = os.environ
    data_dir = env.get("SBERT_DEMO_DATA", "").strip()
    return Settings(
        models_dir=Path(env.get("SBERT_DEMO_MODELS", "") or REPO_ROOT / "models").expanduser(),
        cache_dir=Path(env.get("SBERT_DEMO_CACHE", "") or _default_cache_dir()).expanduser(),
        data_dir=Path(data_dir).expanduser() if data_dir else SHIPPED_DATA,
        fit_sentences=Path(fit).expanduser() if (fit := env.get("SBERT_DEMO_FIT_SENTENCES", "").strip()) else None,
        device=_choice("SBERT_DEMO_DEVICE", env.get("SBERT_DEMO_DEVICE", "auto"), DEVICES),
        precision=_choice("SBERT_DEMO_PRECISION", env.get("SBERT_DEMO_PRECISION", "auto"), INFERENCE_PRECISIONS),
        backend=_choice("SBERT_DEMO_BACKEND", env.get("SBERT_DEMO_BACKEND", "") or "auto", BACKENDS),
        training_enabled=_truthy(env.get("SBERT_DEMO_ALLOW_TRAINING", "1")),
        max_loaded_models=max(1, int(env.get("SBERT_DEMO_MAX_MODELS", "4"))),
        max_loaded_model_mb=max(1, int(env.get("SBERT_DEMO_MAX_MODEL_MB", "4096"))),
        hub_timeout_s=float(env.get("SBERT_DEMO_HUB_TIMEOUT", "2.0")),
    )


def quiet_libraries(verbose: bool = False) -> None:
    """Keep library chatter (weight-loading bars, load reports) out of the CLI's own progress."""
    if verbose:
        return
    # Read by huggingface_hub and transformers when they are first imported (after this point).
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
