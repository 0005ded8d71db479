"""Tests for sbert_demo.encoding.devices: device and precision chosen from a described machine (no GPU needed)."""

from __future__ import annotations

import pytest

from sbert_demo.config import reload_settings

from sbert_demo.encoding.devices import Hardware, choose

H100 = Hardware(cuda=True, cuda_name="NVIDIA H100", cuda_bf16=True, cpu_bf16=True, cpu_threads=16)
T4 = Hardware(cuda=True, cuda_name="Tesla T4", cuda_bf16=False, cpu_threads=4)
CPU_BF16 = Hardware(cpu_bf16=True, cpu_threads=8)
CPU_PLAIN = Hardware(cpu_bf16=False, cpu_threads=2)
MAC = Hardware(mps=True, cpu_threads=8)
BARE = Hardware()


@pytest.mark.parametrize(
    ("hardware", "device", "precision", "name"),
    [
        (H100, "cuda", "bf16", "NVIDIA H100 (CUDA), bf16"),
        (T4, "cuda", "fp16", "Tesla T4 (CUDA), fp16"),
        (CPU_BF16, "cpu", "bf16", "CPU (8 threads), bf16"),
        (CPU_PLAIN, "cpu", "fp32", "CPU (2 threads), fp32"),
        (MAC, "mps", "fp32", "Apple GPU (MPS), fp32"),
        (BARE, "cpu", "fp32", "CPU (1 thread), fp32"),
        (Hardware(cuda=True), "cuda", "fp16", "GPU (CUDA), fp16"),  # no name reported
    ],
)
def test_auto_choice(hardware: Hardware, device: str, precision: str, name: str) -> None:
    choice = choose(hardware)
    assert (choice.device, choice.precision, choice.name) == (device, precision, name)


@pytest.mark.parametrize("hardware", [H100, T4, CPU_BF16, CPU_PLAIN, MAC, BARE])
def test_not_matmul_heavy_keeps_fp32(hardware: Hardware) -> None:
    """Averaged word vectors have nothing for reduced precision to speed up."""
    assert choose(hardware, matmul_heavy=False).precision == "fp32"


@pytest.mark.parametrize(
    ("hardware", "device", "precision", "expected"),
    [
        (H100, "cpu", "auto", ("cpu", "bf16")),  # the CPU of that machine has bf16 too
        (T4, "cpu", "auto", ("cpu", "fp32")),
        (H100, "cuda", "fp32", ("cuda", "fp32")),
        (H100, "cuda", "fp16", ("cuda", "fp16")),
        (T4, "cuda", "fp16", ("cuda", "fp16")),
        (CPU_PLAIN, "cpu", "bf16", ("cpu", "bf16")),  # explicit request wins even where emulated
        (CPU_BF16, "cpu", "fp32", ("cpu", "fp32")),
        (MAC, "mps", "auto", ("mps", "fp32")),
        (MAC, "cpu", "auto", ("cpu", "fp32")),
        (BARE, "auto", "fp32", ("cpu", "fp32")),
    ],
)
def test_explicit_requests_honoured(hardware, device, precision, expected) -> None:
    choice = choose(hardware, device, precision)
    assert (choice.device, choice.precision) == expected


@pytest.mark.parametrize(
    ("hardware", "device", "precision", "message"),
    [
        (CPU_BF16, "cpu", "fp16", "fp16 is not supported on the CPU"),
        (CPU_BF16, "auto", "fp16", "fp16 is not supported on the CPU"),
        (CPU_PLAIN, "cuda", "auto", "CUDA was requested but no CUDA GPU"),
        (MAC, "cuda", "fp32", "CUDA was requested but no CUDA GPU"),
        (CPU_BF16, "mps", "auto", "Apple MPS was requested but is not available"),
        (T4, "cuda", "bf16", "no bf16 support"),
        (T4, "auto", "bf16", "no bf16 support"),
        (CPU_PLAIN, "tpu", "auto", "Device 'tpu' is not valid"),
        (CPU_PLAIN, "", "auto", "Device '' is not valid"),
        (CPU_PLAIN, "cpu", "int4", "Precision 'int4' is not valid"),
        (CPU_PLAIN, "cpu", "int8", "needs onnxruntime, which is not installed"),
        (CPU_PLAIN, "cpu", "", "Precision '' is not valid"),
    ],
)
def test_impossible_requests_refused(hardware, device, precision, message) -> None:
    with pytest.raises(ValueError, match=message):
        choose(hardware, device, precision)


@pytest.mark.parametrize(("precision", "dtype"), [("bf16", "bfloat16"), ("fp16", "float16"), ("fp32", None)])
def test_autocast_dtype(precision: str, dtype: str | None) -> None:
    import torch

    device = "cuda" if precision == "fp16" else "cpu"
    hardware = H100 if device == "cuda" else CPU_BF16
    choice = choose(hardware, device, precision)
    assert choice.autocast_dtype == (getattr(torch, dtype) if dtype else None)


def test_current_reads_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.encoding import devices

    monkeypatch.setattr(devices, "detect_hardware", lambda: CPU_BF16)
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")
    monkeypatch.setenv("SBERT_DEMO_DEVICE", "auto")
    reload_settings()
    assert devices.current().precision == "bf16"
    assert devices.current(matmul_heavy=False).precision == "fp32"
    assert devices.current(precision="fp32").precision == "fp32"
    monkeypatch.setenv("SBERT_DEMO_DEVICE", "cuda")
    reload_settings()
    with pytest.raises(ValueError, match="CUDA was requested"):
        devices.current()
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "fp8")
    with pytest.raises(ValueError, match="SBERT_DEMO_PRECISION='fp8' is not valid"):
        reload_settings()
        devices.current()
