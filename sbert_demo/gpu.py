"""Hugging Face ZeroGPU: the work that wants a GPU runs inside functions decorated with ``spaces.GPU``.

On a ZeroGPU Space (the ``spaces`` package's own switch, ``SPACES_ZERO_GPU=true``) a GPU is lent to a
call of a decorated function, for the ``duration`` it asks (seconds, or a callable given the call's own
arguments), in a process ``spaces`` forks for the call; outside such calls there is no GPU and CUDA
must not be initialised. So here:

* :func:`gpu_function` decorates a function (or generator) with ``spaces.GPU(duration=...)`` on
  ZeroGPU and returns it unchanged everywhere else (no import of ``spaces``, today's behaviour);
* inside a decorated call :func:`inside_gpu_call` is true, and the device choice
  (:func:`sbert_demo.encoding.devices.detect_hardware`) sees the GPU; outside it sees only the CPU,
  so start-up, warm-up and every small request run on the CPU without touching CUDA (``spaces``
  patches ``torch.cuda.is_available`` to answer True outside calls: the app never asks it there);
* what goes to the GPU (:func:`wants_gpu_call`): a visitor's large batch of a model that multiplies
  matrices (:func:`sbert_demo.encoding.encoder.encode`: the STS tab, Table 1, corpus embeddings) and
  training (:mod:`sbert_demo.training.jobs` runs the job inside a decorated generator whose events
  stream back, instead of its usual child process). Never a lookup-table model (GloVe, static models,
  WordLlama), and nothing inside :func:`on_the_cpu` (start-up, the warm-up, ``prepare``): a restart
  spends none of the visitors' daily GPU minutes;
* ``spaces`` pickles a call's arguments into a worker process it forks once and reuses, and re-raises
  a worker's exception as "ZeroGPU worker error" with only its class name. So a decorated function's
  exception travels back as a value (:class:`Raised`) and is raised again here, the app's own sentence
  intact.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import math
import os
import pickle
from collections.abc import Callable, Iterator

ZERO_GPU_VARIABLE = "SPACES_ZERO_GPU"
_inside = False
_cpu_only: contextvars.ContextVar[bool] = contextvars.ContextVar("sbert_demo_cpu_only", default=False)


def zero_gpu() -> bool:
    """Whether this process runs on a ZeroGPU Space (as the ``spaces`` package decides it)."""
    return os.environ.get(ZERO_GPU_VARIABLE, "").lower() in ("1", "t", "true")


def inside_gpu_call() -> bool:
    """Whether a GPU is lent right now (inside a :func:`gpu_function` call on ZeroGPU)."""
    return _inside


@contextlib.contextmanager
def on_the_cpu() -> Iterator[None]:
    """Work inside this block (in this thread) never asks ZeroGPU for a GPU: start-up, the warm-up and
    ``prepare`` run on the CPU, so a restart spends no GPU call."""
    token = _cpu_only.set(True)
    try:
        yield
    finally:
        _cpu_only.reset(token)


def wants_gpu_call(matmul_heavy: bool, items: int, minimum: int) -> bool:
    """Whether work on ``items`` inputs goes to a ZeroGPU call: on ZeroGPU, outside a call and outside
    :func:`on_the_cpu`, for a model that multiplies matrices (a lookup table gains nothing on a GPU),
    ``minimum`` inputs or more (a call costs seconds to start)."""
    return (zero_gpu() and not inside_gpu_call() and not _cpu_only.get() and matmul_heavy
            and items >= minimum)


class Raised:
    """An exception raised inside a GPU call, carried back as a value (``spaces`` would keep only its class
    name). A copy that cannot be pickled keeps its sentence as a RuntimeError."""

    def __init__(self, error: BaseException) -> None:
        try:
            pickle.loads(pickle.dumps(error))
            self.error: BaseException = error
        except Exception:
            self.error = RuntimeError(f"{type(error).__name__}: {error}")


_STARTED_IN = os.getpid()


def _forked_worker() -> None:
    """In the worker ``spaces`` forked: one CPU thread for torch. The app's process ran torch's OpenMP threads
    before the fork (the warm-up, small requests), and GNU OpenMP is not fork-safe: the worker's first parallel
    region on the CPU (a large copy back from the GPU) would wait for threads that do not exist. With one
    thread torch never enters one; on the GPU the CPU only tokenizes and copies."""
    if os.getpid() != _STARTED_IN:
        import torch

        torch.set_num_threads(1)


@contextlib.contextmanager
def _in_gpu_call() -> Iterator[None]:
    global _inside
    _forked_worker()
    _inside = True
    try:
        yield
    finally:
        _inside = False


def _around(function: Callable, scope: Callable[[], contextlib.AbstractContextManager], each: Callable,
            failed: Callable | None = None) -> Callable:
    """``function`` (plain or a generator) run inside ``scope()``, its value (or each value it yields) passed
    through ``each``; an exception it raises given to ``failed`` (when set) and its answer returned (or yielded)."""
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def generator(*args, **kwargs):
            with scope():
                try:
                    for item in function(*args, **kwargs):
                        yield each(item)
                except Exception as error:
                    if failed is None:
                        raise
                    yield failed(error)

        return generator

    @functools.wraps(function)
    def call(*args, **kwargs):
        with scope():
            try:
                value = function(*args, **kwargs)
            except Exception as error:
                if failed is None:
                    raise
                return failed(error)
            return each(value)

    return call


def _scoped(function: Callable) -> Callable:
    """``function`` as it runs in the process ``spaces`` forks: :func:`inside_gpu_call` true while it runs,
    an exception returned (or yielded) as :class:`Raised`."""
    return _around(function, _in_gpu_call, lambda value: value, Raised)


def _raised_again(value: object) -> object:
    if isinstance(value, Raised):
        raise value.error
    return value


def _unwrapped(decorated: Callable) -> Callable:
    """``decorated`` (a ``spaces.GPU`` function) with a :class:`Raised` value raised again in this process."""
    call = _around(decorated, contextlib.nullcontext, _raised_again)
    call.zerogpu = getattr(decorated, "zerogpu", None)
    return call


def gpu_function(duration: int | Callable[..., float]) -> Callable[[Callable], Callable]:
    """Decorate with ``spaces.GPU(duration=duration)`` on ZeroGPU; elsewhere leave the function as it is."""

    def decorate(function: Callable) -> Callable:
        if not zero_gpu():
            return function
        import spaces

        asked = duration if not callable(duration) else (lambda *a, **k: max(10, math.ceil(duration(*a, **k))))
        return _unwrapped(spaces.GPU(duration=asked)(_scoped(function)))

    return decorate
