"""ZeroGPU (sbert_demo/gpu.py): on a ZeroGPU Space (``SPACES_ZERO_GPU=true``, the ``spaces`` package's own
switch) the GPU work runs inside ``spaces.GPU`` calls and nothing touches CUDA outside them; elsewhere
nothing changes.

The ``spaces`` package's ZeroGPU mode cannot be imported on this machine: it patches CUDA internals that
a CPU build of torch lacks (``torch._C._cuda_init``). So the ZeroGPU runs here put a stand-in ``spaces``
module first on the path that does what ``spaces.GPU`` does for the app (runs the call in a forked
process, streams a generator's items back, records the duration asked) and leaves CUDA alone, while
``torch.cuda``'s initialisation is made to fail loudly: any CUDA use outside a GPU call would show.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each test starts a fresh interpreter that imports the whole app (~25 s)

STAND_IN = '''
"""A stand-in for Hugging Face's ``spaces`` on a machine without CUDA: GPU(duration=...) forks each call."""
import inspect, multiprocessing, traceback

CALLS = []


def _forked(function, args, kwargs, writer):
    try:
        if inspect.isgeneratorfunction(function):
            for item in function(*args, **kwargs):
                writer.send(("item", item))
            writer.send(("end", None))
        else:
            writer.send(("value", function(*args, **kwargs)))
    except BaseException:
        writer.send(("error", traceback.format_exc()))


def GPU(task=None, *, duration=None, size=None):
    def decorate(function):
        def start(args, kwargs):
            CALLS.append((function.__name__, duration(*args, **kwargs) if callable(duration) else duration))
            reader, writer = multiprocessing.Pipe(duplex=False)
            process = multiprocessing.get_context("fork").Process(target=_forked, args=(function, args, kwargs, writer))
            process.start()
            return reader, process

        def receive(reader):
            kind, value = reader.recv()
            if kind == "error":
                raise RuntimeError(value)
            return kind, value

        if inspect.isgeneratorfunction(function):
            def stream(*args, **kwargs):
                reader, process = start(args, kwargs)
                while (answer := receive(reader))[0] == "item":
                    yield answer[1]
                process.join()
            stream.zerogpu = None
            return stream

        def plain(*args, **kwargs):
            reader, process = start(args, kwargs)
            value = receive(reader)[1]
            process.join()
            return value
        plain.zerogpu = None
        return plain
    return decorate(task) if callable(task) else decorate
'''


def run_on_zero_gpu(tmp_path: Path, script: str, zero_gpu: bool = True) -> dict:
    """Run ``script`` in a fresh interpreter as a ZeroGPU Space would start the app; return what it prints."""
    (tmp_path / "stand-in").mkdir(exist_ok=True)
    (tmp_path / "stand-in" / "spaces.py").write_text(STAND_IN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "stand-in"), str(REPO)]),
           "SBERT_DEMO_CACHE": str(tmp_path / "cache"), "SBERT_DEMO_MODELS": str(tmp_path / "models"),
           "SBERT_DEMO_DATA": str(REPO / "data"), "HF_HUB_OFFLINE": "1", "SBERT_DEMO_RUNTIME_CHOICE": "rules"}
    env.pop("SPACES_ZERO_GPU", None)
    if zero_gpu:
        env.update(SPACES_ZERO_GPU="true", SPACES_ZERO_DEVICE_API_URL="http://127.0.0.1:9/")
    prologue = textwrap.dedent("""
        import json, torch
        def no_cuda(*args, **kwargs):
            raise AssertionError("CUDA was initialised outside a GPU call")
        torch.cuda._lazy_init = no_cuda
        torch.cuda.init = no_cuda
    """)
    done = subprocess.run([sys.executable, "-c", prologue + textwrap.dedent(script)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_on_zero_gpu_the_gpu_work_is_decorated_and_cuda_stays_untouched(tmp_path: Path) -> None:
    seen = run_on_zero_gpu(tmp_path, """
        import app  # what Spaces runs: imports spaces first
        import spaces
        from sbert_demo.ui.app import build_app
        build_app(warm_up=False)
        from sbert_demo.encoding import devices, encoder
        from sbert_demo.training import worker
        import numpy as np
        sentences = [f"Sentence number {i} is about {w}." for i, w in enumerate(["cats", "dogs", "stocks"] * 200)]
        small = encoder.encode("glove-6b-50d", sentences[:10], use_cache=False)
        large = encoder.encode("glove-6b-50d", sentences, use_cache=False)
        print(json.dumps({
            "decorated": [hasattr(encoder._encode_on_gpu, "zerogpu"), hasattr(worker.train_on_gpu, "zerogpu")],
            "cuda_outside": devices.detect_hardware().cuda, "cuda_initialised": torch.cuda.is_initialized(),
            "calls": spaces.CALLS, "large": large.embeddings[:10].round(6).tolist(),
            "small": small.embeddings.round(6).tolist(), "rows": len(large.embeddings)}))
    """)
    assert seen["decorated"] == [True, True]
    assert seen["cuda_outside"] is False and seen["cuda_initialised"] is False
    assert seen["calls"] == [["_encode_on_gpu", 31]]  # only the large batch asked: 30 s + 600 sentences at 2,000/s
    assert seen["rows"] == 600 and seen["large"] == seen["small"]  # the GPU call's vectors came back


def test_without_zero_gpu_nothing_changes(tmp_path: Path) -> None:
    seen = run_on_zero_gpu(tmp_path, """
        from sbert_demo.encoding import encoder
        from sbert_demo.training import worker
        import sys
        print(json.dumps({"plain": [not hasattr(encoder._encode_on_gpu, "zerogpu"),
                                    not hasattr(worker.train_on_gpu, "zerogpu")],
                          "spaces_imported": "spaces" in sys.modules}))
    """, zero_gpu=False)
    assert seen == {"plain": [True, True], "spaces_imported": False}


def test_on_zero_gpu_training_runs_inside_the_gpu_call_and_streams_its_progress(tmp_path: Path) -> None:
    seen = run_on_zero_gpu(tmp_path, """
        import spaces
        from sbert_demo.training.jobs import training_jobs
        from sbert_demo.training.settings import config_for
        config = config_for("glove-6b-50d", "nli-softmax", "glove-gpu", max_pairs=256, batch_size=32)
        jobs = training_jobs()
        jobs.start(config)
        snap = jobs.wait(300)
        print(json.dumps({"state": snap.state, "model": snap.model_name, "steps": snap.step,
                          "losses": len(snap.losses), "calls": [c[0] for c in spaces.CALLS],
                          "cuda_initialised": torch.cuda.is_initialized(),
                          "saved": __import__("os").path.isdir(__import__("os").environ["SBERT_DEMO_MODELS"] + "/glove-gpu")}))
    """)
    assert seen["state"] == "finished", seen
    assert seen["model"] == "glove-gpu" and seen["saved"] and seen["steps"] > 0 and seen["losses"] > 0
    assert seen["calls"] == ["train_on_gpu"] and seen["cuda_initialised"] is False
