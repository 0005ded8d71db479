"""Which device and which numeric precision to run on.

The decision is a pure function of a :class:`Hardware` description so it can be tested without a
GPU; :func:`detect_hardware` fills that description from torch on the current machine.

Precision rules (inference and training):

* CUDA: bf16 where the GPU supports it (Ampere and newer), else fp16.
* CPU: bf16 only where the CPU has native bf16 instructions (AVX512-BF16 or AMX): there it makes
  MiniLM ~2.6x and mpnet ~3.4x faster with the same STSb Spearman to 0.01. Elsewhere
  bf16 is emulated and slower than fp32, so fp32.
* Apple MPS: fp32 (autocast on MPS is still incomplete for the ops these models use).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

from ..config import PRECISIONS, settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hardware:
    cuda: bool = False
    cuda_name: str | None = None
    cuda_bf16: bool = False
    mps: bool = False
    cpu_bf16: bool = False
    cpu_threads: int = 1


@dataclass(frozen=True)
class DeviceChoice:
    device: str  # "cuda", "mps" or "cpu"
    precision: str  # "bf16", "fp16" or "fp32"
    name: str  # human-readable, e.g. "NVIDIA H100 (CUDA, bf16)"

    @property
    def autocast_dtype(self):
        """The reduced torch dtype (for ``torch.autocast`` in training, for the weights in inference),
        or None for fp32."""
        import torch

        return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)


def _cpu_has_native_bf16() -> bool:
    try:
        import torch

        if hasattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported"):
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:
        pass
    try:
        flags = open("/proc/cpuinfo", encoding="ascii", errors="ignore").read()
        return "avx512_bf16" in flags or "amx_bf16" in flags
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def detect_hardware() -> Hardware:
    """Describe this machine's accelerators (imports torch; cached)."""
    import torch

    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    return Hardware(
        cuda=cuda,
        cuda_name=torch.cuda.get_device_name(0) if cuda else None,
        cuda_bf16=bool(cuda and torch.cuda.is_bf16_supported()),
        mps=mps,
        cpu_bf16=_cpu_has_native_bf16(),
        cpu_threads=torch.get_num_threads(),
    )


def choose(
    hardware: Hardware,
    device: str = "auto",
    precision: str = "auto",
    matmul_heavy: bool = True,
) -> DeviceChoice:
    """Pick device and precision; explicit requests win when the hardware can honour them.

    ``matmul_heavy=False`` (e.g. averaged word vectors) keeps fp32 on "auto": there is nothing for
    reduced precision to speed up.

    >>> choose(Hardware(cpu_bf16=True)).precision
    'bf16'
    >>> choose(Hardware(cuda=True, cuda_name="T4")).precision
    'fp16'
    """
    if precision not in PRECISIONS:
        raise ValueError(f"Precision {precision!r} is not valid; choose one of {', '.join(PRECISIONS)}.")
    if device == "auto":
        device = "cuda" if hardware.cuda else "mps" if hardware.mps else "cpu"
    elif device == "cuda" and not hardware.cuda:
        raise ValueError("CUDA was requested but no CUDA GPU is visible to PyTorch; use device 'auto' or 'cpu'.")
    elif device == "mps" and not hardware.mps:
        raise ValueError("Apple MPS was requested but is not available here; use device 'auto' or 'cpu'.")
    elif device not in ("cpu", "cuda", "mps"):
        raise ValueError(f"Device {device!r} is not valid; choose auto, cpu, cuda or mps.")

    if precision == "auto":
        if not matmul_heavy or device == "mps":
            precision = "fp32"
        elif device == "cuda":
            precision = "bf16" if hardware.cuda_bf16 else "fp16"
        else:
            precision = "bf16" if hardware.cpu_bf16 else "fp32"
    elif precision == "fp16" and device == "cpu":
        raise ValueError("fp16 is not supported on the CPU; use bf16 or fp32.")
    elif precision == "bf16" and device == "cuda" and not hardware.cuda_bf16:
        raise ValueError("This GPU has no bf16 support; use fp16 or fp32.")

    threads = f"{hardware.cpu_threads} thread{'' if hardware.cpu_threads == 1 else 's'}"
    label = {"cuda": f"{hardware.cuda_name or 'GPU'} (CUDA)", "mps": "Apple GPU (MPS)"}.get(device, f"CPU ({threads})")
    return DeviceChoice(device=device, precision=precision, name=f"{label}, {precision}")


def current(matmul_heavy: bool = True, precision: str | None = None) -> DeviceChoice:
    """The choice for this machine under the current settings (``SBERT_DEMO_DEVICE`` / ``_PRECISION``)."""
    config = settings()
    return choose(detect_hardware(), config.device, precision or config.precision, matmul_heavy)
