"""Settings, built once: command-line flags first, then the environment, then the defaults.

Every setting has an environment variable, so the app can be configured on hosts where nobody has a
terminal (Hugging Face Spaces). :func:`settings` returns the settings in use: built from the
environment on first use and kept; the command line swaps in its own for one command with
:func:`use_settings` (its ``--data-dir`` and ``--fit-sentences`` flags win over the environment), and
a training process receives the app's settings with its job. Nothing in the package writes
``os.environ`` to talk to its own code; :func:`quiet_libraries` only sets the Hugging Face
libraries' own switches.

Example::

    >>> from sbert_demo.config import settings, use_settings
    >>> settings() is settings()  # built once
    True
    >>> with use_settings(settings().replace(precision="fp32")):
    ...     settings().precision
    'fp32'
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from .shared import process_wide, register

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_DATA = REPO_ROOT / "data"  # STS benchmark, NLI pairs, STS12-16, SICK, with their licences (data/README.md)

PRECISIONS = ("auto", "bf16", "fp16", "fp32")  # what training (and PyTorch inference) can use
# Inference adds int8: weight-quantised ONNX Runtime artefacts (:mod:`sbert_demo.encoding.onnx_export`).
INFERENCE_PRECISIONS = (*PRECISIONS, "int8")
DEVICES = ("auto", "cpu", "cuda", "mps")
BACKENDS = ("auto", "torch", "onnx", "openvino")  # who runs transformer inference on the CPU
RUNTIME_CHOICES = ("measure", "rules")  # how "auto" picks a transformer's CPU runtime
PATH_LISTS = ("model_paths", "dataset_roots")
LOCAL_PROXIES = ("127.0.0.1", "::1")
HUB_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


@dataclass(frozen=True)
class Settings:
    models_dir: Path  # SBERT_DEMO_MODELS: trained models
    cache_dir: Path  # SBERT_DEMO_CACHE: embeddings, ONNX artefacts, maps, fixes, the joined mpnet
    data_dir: Path  # SBERT_DEMO_DATA (--data-dir), else the data shipped in the repository
    fit_sentences: Path | None  # SBERT_DEMO_FIT_SENTENCES (--fit-sentences); None: STSb train
    device: str  # SBERT_DEMO_DEVICE
    precision: str  # SBERT_DEMO_PRECISION
    backend: str  # SBERT_DEMO_BACKEND
    training_enabled: bool  # SBERT_DEMO_ALLOW_TRAINING
    max_loaded_models: int  # SBERT_DEMO_MAX_MODELS
    max_loaded_model_mb: int  # SBERT_DEMO_MAX_MODEL_MB
    hub_timeout_s: float  # SBERT_DEMO_HUB_TIMEOUT
    model_paths: tuple[Path, ...] = ()  # SBERT_DEMO_MODEL_PATHS: more folders user-added models may come from
    dataset_roots: tuple[Path, ...] = ()  # SBERT_DEMO_DATASET_ROOTS: local dataset folders a visitor may name (none)
    train_threads: int | None = None  # SBERT_DEMO_TRAIN_THREADS; None: all cores but one
    train_nice: int = 10  # SBERT_DEMO_TRAIN_NICE: how far the training process yields the CPU to the app
    hub_offline: bool = False  # HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE, HF_DATASETS_OFFLINE)
    hub_endpoint: str = "https://huggingface.co"  # HF_ENDPOINT
    runtime_choice: str = "measure"  # SBERT_DEMO_RUNTIME_CHOICE: measure the CPU runtimes, or the CPU-flag rules
    inference_threads: int | None = None  # SBERT_DEMO_INFERENCE_THREADS; None: every core this process may use
    npm_tarballs: Path | None = None  # SBERT_DEMO_NPM_TARBALLS: `npm pack` tarballs a published page vendors; None: npm
    # SBERT_DEMO_TRUSTED_PROXIES: the peers whose X-Forwarded-For names a visitor's address (comma-separated; "*" any
    # peer, the default on a Space, where its proxy is the only way in); elsewhere a proxy on this machine only
    trusted_proxies: tuple[str, ...] = LOCAL_PROXIES

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None, **flags: Any) -> Settings:
        """Settings from ``flags`` (those not None), then ``environ`` (default ``os.environ``), then defaults."""
        env = os.environ if environ is None else environ
        data_dir = env.get("SBERT_DEMO_DATA", "").strip()
        fit = env.get("SBERT_DEMO_FIT_SENTENCES", "").strip()
        threads = env.get("SBERT_DEMO_TRAIN_THREADS", "").strip()
        built = cls(
            models_dir=Path(env.get("SBERT_DEMO_MODELS", "") or REPO_ROOT / "models").expanduser(),
            cache_dir=Path(env.get("SBERT_DEMO_CACHE", "") or _default_cache_dir()).expanduser(),
            data_dir=Path(data_dir).expanduser() if data_dir else SHIPPED_DATA,
            fit_sentences=Path(fit).expanduser() if fit else None,
            device=_choice("SBERT_DEMO_DEVICE", env.get("SBERT_DEMO_DEVICE", "auto"), DEVICES),
            precision=_choice("SBERT_DEMO_PRECISION", env.get("SBERT_DEMO_PRECISION", "auto"), INFERENCE_PRECISIONS),
            backend=_choice("SBERT_DEMO_BACKEND", env.get("SBERT_DEMO_BACKEND", "") or "auto", BACKENDS),
            training_enabled=_truthy(env.get("SBERT_DEMO_ALLOW_TRAINING", "1")),
            max_loaded_models=max(1, _whole("SBERT_DEMO_MAX_MODELS", env.get("SBERT_DEMO_MAX_MODELS", "4"))),
            max_loaded_model_mb=max(1, _whole("SBERT_DEMO_MAX_MODEL_MB", env.get("SBERT_DEMO_MAX_MODEL_MB", "4096"))),
            hub_timeout_s=float(env.get("SBERT_DEMO_HUB_TIMEOUT", "2.0")),
            model_paths=tuple(Path(p).expanduser() for p in env.get("SBERT_DEMO_MODEL_PATHS", "").split(os.pathsep) if p),
            dataset_roots=tuple(Path(p).expanduser() for p in env.get("SBERT_DEMO_DATASET_ROOTS", "").split(os.pathsep)
                                if p.strip()),
            train_threads=max(1, _whole("SBERT_DEMO_TRAIN_THREADS", threads)) if threads else None,
            train_nice=_whole("SBERT_DEMO_TRAIN_NICE", env.get("SBERT_DEMO_TRAIN_NICE", "10") or "0"),
            hub_offline=any(_truthy(env.get(name, "")) for name in HUB_OFFLINE_VARIABLES),
            hub_endpoint=(env.get("HF_ENDPOINT", "") or "https://huggingface.co").rstrip("/"),
            runtime_choice=_choice("SBERT_DEMO_RUNTIME_CHOICE", env.get("SBERT_DEMO_RUNTIME_CHOICE", "") or "measure",
                                   RUNTIME_CHOICES),
            inference_threads=(max(1, _whole("SBERT_DEMO_INFERENCE_THREADS", env["SBERT_DEMO_INFERENCE_THREADS"]))
                               if env.get("SBERT_DEMO_INFERENCE_THREADS", "").strip() else None),
            npm_tarballs=(Path(env["SBERT_DEMO_NPM_TARBALLS"].strip()).expanduser()
                          if env.get("SBERT_DEMO_NPM_TARBALLS", "").strip() else None),
            trusted_proxies=tuple(p.strip() for p in env.get("SBERT_DEMO_TRUSTED_PROXIES", "").split(",") if p.strip())
            or (("*",) if env.get("SPACE_ID", "").strip() else LOCAL_PROXIES),
        )
        return built.replace(**{name: value for name, value in flags.items() if value is not None})

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (paths given as text become paths)."""
        paths = {"models_dir", "cache_dir", "data_dir", "fit_sentences"}
        return replace(self, **{k: Path(v).expanduser() if k in paths and isinstance(v, str) else v
                                for k, v in changes.items()})

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON values, to hand the settings to a training process."""
        return {k: (str(v) if isinstance(v, Path) else [str(p) for p in v] if k in PATH_LISTS else v)
                for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Settings:
        """The inverse of :meth:`as_dict`."""
        known = {f.name: values[f.name] for f in fields(cls) if f.name in values}
        for name in ("models_dir", "cache_dir", "data_dir"):
            known[name] = Path(known[name])
        known["fit_sentences"] = Path(known["fit_sentences"]) if known.get("fit_sentences") else None
        for name in PATH_LISTS:
            known[name] = tuple(Path(p) for p in known.get(name) or ())
        if "trusted_proxies" in known:
            known["trusted_proxies"] = tuple(known["trusted_proxies"])
        return cls(**known)


def _default_cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("sbert-demo"))


def _truthy(value: str) -> bool:
    return value.strip().lower() not in ("0", "false", "no", "off", "")


def _whole(name: str, value: str) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a whole number.") from None


def _choice(name: str, value: str, valid: tuple[str, ...]) -> str:
    value = value.strip().lower()
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {', '.join(valid)}.")
    return value


@process_wide
def _from_environment() -> Settings:
    """The environment's settings, read once per process (``shared.reset_all`` reads them again)."""
    return Settings.from_environment()


class _Swaps(list):
    """Settings swapped in by :func:`use_settings`, innermost last."""

    def reset(self) -> None:
        self.clear()


_swapped = register("settings swapped in by use_settings", _Swaps())
_swap_lock = threading.Lock()


def settings() -> Settings:
    """The settings in use: those swapped in by :func:`use_settings`, else the environment's."""
    with _swap_lock:
        if _swapped:
            return _swapped[-1]
    return _from_environment()


@contextmanager
def use_settings(chosen: Settings) -> Iterator[Settings]:
    """Use ``chosen`` (for the whole process) until the block ends: one command of the CLI, a
    training process's job, a test."""
    with _swap_lock:
        _swapped.append(chosen)
    try:
        yield chosen
    finally:
        with _swap_lock:
            _swapped.remove(chosen)


def reload_settings() -> Settings:
    """Read the environment again (tests that change a variable call this)."""
    _from_environment.reset()  # type: ignore[attr-defined]
    return settings()


def quiet_libraries(verbose: bool = False) -> None:
    """Keep library chatter (weight-loading bars, load reports) out of the CLI's own progress.

    These are the Hugging Face libraries' own switches, read when they are first imported.
    """
    if verbose:
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
