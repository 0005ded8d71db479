"""Which device, back-end and numeric precision to run on.

The decision is a pure function of a :class:`Hardware` description so it can be tested without a
GPU; :func:`detect_hardware` fills that description from torch on the current machine.

Precision rules (inference and training):

* CUDA: bf16 where the GPU supports it (Ampere and newer), else fp16.
* CPU: bf16 only where the CPU has native bf16 instructions (AVX512-BF16 or AMX): there it made
  MiniLM ~2.6x and mpnet ~3.4x faster with the same STSb Spearman to 0.01 on one Xeon, and slower
  on another (no AMX), which is why inference measures it (:mod:`.runtime_choice`) and training
  follows that measurement (:func:`sbert_demo.training.settings.training_device`). Elsewhere bf16
  is emulated and slower than fp32, so fp32.
* Apple MPS: fp32 (autocast on MPS is still incomplete for the ops these models use).

Back-end rules (inference on the CPU; ``SBERT_DEMO_BACKEND`` auto | torch | onnx). With everything
on "auto", a local transformer's CPU runtime is **measured** instead (:mod:`.runtime_choice`, the
default): these rules are what ``SBERT_DEMO_RUNTIME_CHOICE=rules`` keeps, and the answer for a model
not yet on disk (a Hub model before its download):

* a CPU with native bf16 keeps PyTorch bf16 (Spearman unchanged; faster than ONNX Runtime on the
  Xeon it was measured on, slower on others: hence the measurement);
* any other CPU runs transformers with ONNX Runtime (:mod:`.onnx_export`, :mod:`.onnx_encoder`):
  fp32 for numbers that are reported (STS tab, ``eval``: the same Spearman as PyTorch fp32 to 0.01,
  1.34-1.57x faster, depending on the CPU), int8 weights where speed matters more than the last
  0.5 of Spearman (Explore: ``fast=True``; about 2x). Measured on AMD EPYC CPUs (AVX2, no bf16):
  see README "Benchmarks".
* an explicit ``SBERT_DEMO_PRECISION=fp32`` with back-end auto means the plain PyTorch fp32 path;
  GPUs and word-vector models (GloVe) always run in PyTorch.
"""

from __future__ import annotations

import importlib.util
import logging
import platform
from dataclasses import dataclass

from ..config import BACKENDS, INFERENCE_PRECISIONS, settings
from ..shared import memoize
from .cpu import cpu_flags

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hardware:
    cuda: bool = False
    cuda_name: str | None = None
    cuda_bf16: bool = False
    mps: bool = False
    cpu_bf16: bool = False
    cpu_threads: int = 1
    onnx: bool = False  # onnxruntime is installed
    cpu_name: str = ""
    openvino: bool = False  # openvino is installed (it reads the ONNX graphs: needs onnx too)
    nncf: bool = False  # nncf is installed (OpenVINO int8)


ENGINES = {"torch": "PyTorch", "onnx": "ONNX Runtime", "openvino": "OpenVINO"}


@dataclass(frozen=True)
class DeviceChoice:
    device: str  # "cuda", "mps" or "cpu"
    precision: str  # "bf16", "fp16", "fp32" or "int8" (ONNX only)
    name: str  # human-readable, e.g. "NVIDIA H100 (CUDA), bf16"
    backend: str = "torch"  # "torch", "onnx" or "openvino"

    @property
    def runtime(self) -> str:
        """What produced the numbers, for every place that shows them, e.g. "ONNX Runtime int8, CPU (2 threads)"."""
        where, _, _ = self.name.rpartition(", ")
        return f"{ENGINES.get(self.backend, self.backend)} {self.precision}, {where or self.name}"

    @property
    def cache_tag(self) -> str:
        """The part of an embedding-cache key that says how vectors were computed (for int8 also the
        quantisation recipe's version: a new recipe gives other vectors)."""
        if self.backend == "onnx" and self.precision == "int8":
            from .onnx_export import FORMATS, recipe

            return f"onnx|{recipe('int8')}-{FORMATS['int8']}|{self.device}"
        if self.backend == "openvino" and self.precision == "int8":
            from .openvino_export import FORMAT

            return f"openvino|int8-{FORMAT}|{self.device}"
        return f"{self.backend}|{self.precision}|{self.device}"

    @property
    def autocast_dtype(self):
        """The reduced torch dtype (for ``torch.autocast`` in training, for the weights in inference),
        or None for fp32."""
        import torch

        return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)


def cpu_name() -> str:
    """The CPU model as /proc/cpuinfo (or the platform) names it."""
    try:
        for line in open("/proc/cpuinfo", encoding="ascii", errors="ignore"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_has_native_bf16() -> bool:
    try:
        import torch

        if hasattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported"):
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except Exception:
        pass
    return bool({"avx512_bf16", "amx_bf16"} & cpu_flags())


def detect_hardware() -> Hardware:
    """Describe this machine's accelerators (imports torch; cached). On ZeroGPU the GPU exists only inside
    a ``spaces.GPU`` call (:mod:`sbert_demo.gpu`): outside one, CUDA is not asked about at all."""
    from ..gpu import inside_gpu_call, zero_gpu

    if zero_gpu():
        return _detect(cuda_allowed=inside_gpu_call())
    return _detect(cuda_allowed=True)


@memoize(maxsize=2)
def _detect(cuda_allowed: bool) -> Hardware:
    import torch

    cuda = cuda_allowed and torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    return Hardware(
        cuda=cuda,
        cuda_name=torch.cuda.get_device_name(0) if cuda else None,
        cuda_bf16=bool(cuda and torch.cuda.is_bf16_supported()),
        mps=mps,
        cpu_bf16=_cpu_has_native_bf16(),
        cpu_threads=torch.get_num_threads(),
        onnx=importlib.util.find_spec("onnxruntime") is not None,
        cpu_name=cpu_name(),
        openvino=importlib.util.find_spec("openvino") is not None,
        nncf=importlib.util.find_spec("nncf") is not None,
    )


def choose(
    hardware: Hardware,
    device: str = "auto",
    precision: str = "auto",
    matmul_heavy: bool = True,
    backend: str = "auto",
    fast: bool = False,
) -> DeviceChoice:
    """Pick device, back-end and precision; explicit requests win when the hardware can honour them.

    ``matmul_heavy=False`` (e.g. averaged word vectors) keeps PyTorch fp32: there is nothing for
    reduced precision to speed up. ``fast=True`` allows a path that trades up to 0.5 Spearman for
    speed (int8 weights); without it the choice is lossless.

    >>> choose(Hardware(cpu_bf16=True)).precision
    'bf16'
    >>> choose(Hardware(cuda=True, cuda_name="T4")).precision
    'fp16'
    >>> choose(Hardware(onnx=True), fast=True).runtime
    'ONNX Runtime int8, CPU (1 thread)'
    """
    if precision not in INFERENCE_PRECISIONS:
        raise ValueError(f"Precision {precision!r} is not valid; choose one of {', '.join(INFERENCE_PRECISIONS)}.")
    if backend not in BACKENDS:
        raise ValueError(f"Back-end {backend!r} is not valid; choose one of {', '.join(BACKENDS)}.")
    if device == "auto":
        device = "cuda" if hardware.cuda else "mps" if hardware.mps else "cpu"
    elif device == "cuda" and not hardware.cuda:
        raise ValueError("CUDA was requested but no CUDA GPU is visible to PyTorch; use device 'auto' or 'cpu'.")
    elif device == "mps" and not hardware.mps:
        raise ValueError("Apple MPS was requested but is not available here; use device 'auto' or 'cpu'.")
    elif device not in ("cpu", "cuda", "mps"):
        raise ValueError(f"Device {device!r} is not valid; choose auto, cpu, cuda or mps.")

    engine = "torch"
    if not matmul_heavy:  # word vectors: one lookup and an average; no ONNX, nothing to gain from auto bf16
        if precision in ("auto", "int8"):
            precision = "fp32"
        elif precision == "fp16" and device == "cpu":
            raise ValueError("fp16 is not supported on the CPU; use bf16 or fp32.")
        elif precision == "bf16" and device == "cuda" and not hardware.cuda_bf16:
            raise ValueError("This GPU has no bf16 support; use fp16 or fp32.")
    elif device != "cpu":
        if backend in ("onnx", "openvino") or precision == "int8":
            raise ValueError(f"The {ENGINES.get(backend, 'ONNX Runtime')} back-end (and int8) runs on the CPU here; "
                             "use device cpu, or back-end auto with precision auto.")
        if precision == "auto":
            precision = "fp32" if device == "mps" else "bf16" if hardware.cuda_bf16 else "fp16"
        elif precision == "bf16" and device == "cuda" and not hardware.cuda_bf16:
            raise ValueError("This GPU has no bf16 support; use fp16 or fp32.")
    else:
        engine, precision = _cpu_choice(hardware, backend, precision, fast)

    threads = f"{hardware.cpu_threads} thread{'' if hardware.cpu_threads == 1 else 's'}"
    label = {"cuda": f"{hardware.cuda_name or 'GPU'} (CUDA)", "mps": "Apple GPU (MPS)"}.get(device, f"CPU ({threads})")
    return DeviceChoice(device=device, precision=precision, name=f"{label}, {precision}", backend=engine)


def _cpu_choice(hardware: Hardware, backend: str, precision: str, fast: bool) -> tuple[str, str]:
    """(back-end, precision) for a transformer on the CPU."""
    if precision == "fp16":
        raise ValueError("fp16 is not supported on the CPU; use bf16 or fp32.")
    if backend == "openvino":  # asked for by name: OpenVINO on the project's ONNX graphs (:mod:`.openvino_encoder`)
        if not (hardware.openvino and hardware.onnx):
            raise ValueError("The OpenVINO back-end needs openvino and onnxruntime (it reads the ONNX graphs this "
                             "app exports): pip install -r requirements.txt.")
        if precision == "int8" and not hardware.nncf:
            raise ValueError("OpenVINO int8 needs nncf, which quantises the model: pip install -r requirements.txt.")
        if precision == "bf16" and not hardware.cpu_bf16:
            raise ValueError("This CPU has no native bf16; use OpenVINO with precision fp32 or int8.")
        if precision == "auto":
            precision = ("int8" if fast and hardware.nncf else "bf16" if hardware.cpu_bf16 else "fp32")
        return "openvino", precision
    wants_onnx = backend == "onnx" or precision == "int8" or (
        backend == "auto" and precision == "auto" and not hardware.cpu_bf16)
    if backend == "torch" or not wants_onnx:
        if precision == "int8":
            raise ValueError("int8 runs on the ONNX back-end; set the back-end to onnx or auto.")
        if precision == "auto":
            precision = "bf16" if hardware.cpu_bf16 else "fp32"
        return "torch", precision
    if not hardware.onnx:
        if backend == "onnx" or precision == "int8":
            raise ValueError("The ONNX back-end needs onnxruntime, which is not installed: pip install -r requirements.txt.")
        return "torch", "fp32"
    if precision == "bf16":
        raise ValueError("bf16 runs on the PyTorch back-end; use precision fp32 or int8 with ONNX.")
    if precision == "auto":
        precision = "int8" if fast else "fp32"
    return "onnx", precision


def current(matmul_heavy: bool = True, precision: str | None = None, fast: bool = False,
            backend: str | None = None) -> DeviceChoice:
    """The choice for this machine under the current settings (``SBERT_DEMO_DEVICE`` / ``_PRECISION`` /
    ``_BACKEND``)."""
    config = settings()
    return choose(detect_hardware(), config.device, precision or config.precision, matmul_heavy,
                  backend or config.backend, fast)
