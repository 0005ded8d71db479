"""Hugging Face ZeroGPU: the work that wants a GPU runs inside functions decorated with ``spaces.GPU``.

On a ZeroGPU Space (the ``spaces`` package's own switch, ``SPACES_ZERO_GPU=true``) a GPU is lent to a
call of a decorated function, for the ``duration`` it asks (seconds, or a callable given the call's own
arguments), in a process ``spaces`` forks for the call; outside such calls there is no GPU and CUDA
must not be initialised. So here:

* :func:`gpu_function` decorates a function (or generator) with ``spaces.GPU(duration=...)`` on
  ZeroGPU and returns it unchanged everywhere else (no import of ``spaces``, today's behaviour);
* inside a decorated call :func:`inside_gpu_call` is true, and the device choice
  (:func:`sbert_demo.encoding.devices.detect_hardware`) sees the GPU; outside it sees only the CPU,
  so start-up, warm-up and every small request run on the CPU without touching CUDA;
* what goes to the GPU: encoding large batches (:func:`sbert_demo.encoding.encoder.encode`, the STS
  tab, Table 1, corpus embeddings) and training (:mod:`sbert_demo.training.jobs` runs the job inside a
  decorated generator whose events stream back, instead of its usual child process).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable

ZERO_GPU_VARIABLE = "SPACES_ZERO_GPU"
_inside = False


def zero_gpu() -> bool:
    """Whether this process runs on a ZeroGPU Space (as the ``spaces`` package decides it)."""
    return os.environ.get(ZERO_GPU_VARIABLE, "").lower() in ("1", "t", "true")


def inside_gpu_call() -> bool:
    """Whether a GPU is lent right now (inside a :func:`gpu_function` call on ZeroGPU)."""
    return _inside


def _scoped(function: Callable) -> Callable:
    """``function`` with :func:`inside_gpu_call` true while it runs (in the process ``spaces`` forks)."""
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def generator(*args, **kwargs):
            global _inside
            _inside = True
            try:
                yield from function(*args, **kwargs)
            finally:
                _inside = False

        return generator

    @functools.wraps(function)
    def call(*args, **kwargs):
        global _inside
        _inside = True
        try:
            return function(*args, **kwargs)
        finally:
            _inside = False

    return call


def gpu_function(duration: int | Callable[..., float]) -> Callable[[Callable], Callable]:
    """Decorate with ``spaces.GPU(duration=duration)`` on ZeroGPU; elsewhere leave the function as it is."""

    def decorate(function: Callable) -> Callable:
        if not zero_gpu():
            return function
        import spaces

        asked = duration if not callable(duration) else (lambda *a, **k: max(10, math.ceil(duration(*a, **k))))
        return spaces.GPU(duration=asked)(_scoped(function))

    return decorate
