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
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Each test starts a fresh interpreter that imports the whole app (~25 s) and computes in it: no page, no app
# served, no timing to keep, only limits far above its time (a run 600 s, the training job 300 s: at most 80 s and
# 21 s at the lowest CPU priority beside the pages, 2-core AMD EPYC). -m compute: .ci/run runs it there.
pytestmark = [pytest.mark.slow, pytest.mark.compute]

STAND_IN = '''
"""A stand-in for Hugging Face's ``spaces`` 0.51.3 in ZeroGPU mode, for a machine without CUDA. It does
what the real package does where the app can tell (read in ``spaces/zero/torch/patching.py`` and
``spaces/zero/wrappers.py``):

* at import, ``torch.cuda.is_available`` answers True and CUDA's low-level initialisation raises;
* each decorated function gets one worker process, forked at its first call and reused by later calls;
  a call's arguments and results travel pickled through queues (a PicklingError is the caller's);
* in the worker the patches are undone before the task runs (``torch.unpatch()``);
* an exception in the worker reaches the caller as ``gr.Error`` titled "ZeroGPU worker error" with only
  the exception's class name, unless it is a ``gr.Error`` (raised as it is).

``CALLS`` records (function name, duration asked, seconds the call took) in the calling process.
"""
import inspect, multiprocessing, os, time, traceback

import gradio as gr
import torch

CALLS = []
_forked = False
_context = multiprocessing.get_context("fork")
_real = (torch.cuda.is_available, getattr(torch._C, "_cuda_init", None))


def _cuda_init_raise():
    raise RuntimeError("Low-level CUDA init (`torch._C._cuda_init`) reached. This means ZeroGPU's PyTorch CUDA "
                       "emulation mode did not intercept a CUDA operation in your code.")


if os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true"):
    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA has been initialized before importing the `spaces` package.")
    torch.cuda.is_available = lambda: True
    torch._C._cuda_init = _cuda_init_raise


def _serve(task, arguments, results):
    global _forked
    _forked = True
    torch.cuda.is_available = _real[0]
    if _real[1] is None:
        del torch._C._cuda_init
    else:
        torch._C._cuda_init = _real[1]
    while True:
        args, kwargs = arguments.get()
        try:
            if inspect.isgeneratorfunction(task):
                for item in task(*args, **kwargs):
                    results.put(("ok", item))
                results.put(("end", None))
            else:
                results.put(("ok", task(*args, **kwargs)))
        except Exception as error:
            results.put(("error", (error if isinstance(error, gr.Error) else None, type(error).__name__,
                                   traceback.format_exc())))


def GPU(task=None, *, duration=None, size=None):
    def decorate(task):
        worker = {}

        def send(args, kwargs):
            asked = duration(*args, **kwargs) if callable(duration) else duration
            if "process" not in worker or not worker["process"].is_alive():
                arguments, results = _context.SimpleQueue(), _context.SimpleQueue()
                process = _context.Process(target=_serve, args=(task, arguments, results), daemon=True)
                process.start()
                worker.update(process=process, arguments=arguments, results=results)
            worker["arguments"].put((args, kwargs))  # pickled here, as spaces does
            return asked, time.perf_counter()

        def receive():
            while not worker["results"]._reader.poll(0.5):
                if not worker["process"].is_alive():
                    raise gr.Error("GPU task aborted", title="ZeroGPU worker error")
            kind, value = worker["results"].get()
            if kind == "error":
                gradio_error, name, trace = value
                print(trace)
                if gradio_error is not None:
                    raise gradio_error
                raise gr.Error(name, title="ZeroGPU worker error")
            return kind, value

        if inspect.isgeneratorfunction(task):
            def handler(*args, **kwargs):
                if _forked:
                    yield from task(*args, **kwargs)
                    return
                asked, started = send(args, kwargs)
                try:
                    while (answer := receive())[0] == "ok":
                        yield answer[1]
                finally:
                    CALLS.append((task.__name__, asked, round(time.perf_counter() - started, 1)))
        else:
            def handler(*args, **kwargs):
                if _forked:
                    return task(*args, **kwargs)
                asked, started = send(args, kwargs)
                try:
                    return receive()[1]
                finally:
                    CALLS.append((task.__name__, asked, round(time.perf_counter() - started, 1)))
        handler.__name__ = task.__name__
        handler.zerogpu = None
        return handler
    return decorate(task) if callable(task) else decorate
'''


def run_on_zero_gpu(tmp_path: Path, script: str, zero_gpu: bool = True, prepared: Path | None = None) -> dict:
    """Run ``script`` in a fresh interpreter as a ZeroGPU Space would start the app (its cache folder linking the
    run's ``prepared`` one where given: mpnet joined, artefacts built, UMAP compiled); return what it prints."""
    if prepared is not None:
        from sbert_demo.explore.prepare import link_prepared

        link_prepared(tmp_path / "cache", prepared)
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
        sentences = [f"Sentence number {i} is about {w}." for i, w in enumerate(["cats", "dogs", "stocks"] * 200)]
        glove = encoder.encode("glove-6b-50d", sentences, use_cache=False)  # a lookup table: never a GPU call
        after_glove = list(spaces.CALLS)
        small = encoder.encode("all-MiniLM-L6-v2", sentences[:10], use_cache=False)  # on the CPU, here
        large = encoder.encode("all-MiniLM-L6-v2", sentences, use_cache=False)  # in a GPU call (600 sentences)
        again = encoder.encode("all-MiniLM-L6-v2", sentences[::-1], use_cache=False)  # the same worker, reused
        errors = []
        for texts in (sentences[:10], sentences):  # the same bad setting on the CPU and inside a GPU call
            try:
                encoder.encode("all-MiniLM-L6-v2", texts, precision="fp64", use_cache=False)
            except Exception as error:
                errors.append([type(error).__name__, str(error)])
        print(json.dumps({
            "decorated": [hasattr(encoder._encode_on_gpu, "zerogpu"), hasattr(worker.train_on_gpu, "zerogpu")],
            "is_available_patched": torch.cuda.is_available(),
            "cuda_outside": devices.detect_hardware().cuda, "cuda_initialised": torch.cuda.is_initialized(),
            "after_glove": after_glove, "glove_rows": len(glove.embeddings),
            "calls": [[name, asked] for name, asked, _ in spaces.CALLS],
            "drift": float(abs(large.embeddings[:10] - small.embeddings).max()),
            "again": float(abs(again.embeddings[::-1] - large.embeddings).max()), "rows": len(large.embeddings),
            "errors": errors}))
    """)
    assert seen["decorated"] == [True, True]
    assert seen["is_available_patched"] is True  # as spaces patches it: the app must not ask it outside a call
    assert seen["cuda_outside"] is False and seen["cuda_initialised"] is False
    assert seen["after_glove"] == [] and seen["glove_rows"] == 600
    # the large batch asked twice (30 s + 600 sentences at 2,000/s each time), the error's call once more
    assert seen["calls"] == [["_encode_on_gpu", 31]] * 3
    assert seen["rows"] == 600 and seen["drift"] < 1e-4 and seen["again"] < 1e-4  # the call's vectors came back
    assert seen["errors"][0][0] == "ValueError" and "Precision 'fp64' is not valid" in seen["errors"][0][1]
    assert seen["errors"][1] == seen["errors"][0]  # the app's sentence, not "ZeroGPU worker error: ValueError"


def test_a_zero_gpu_start_asks_for_no_gpu(tmp_path: Path, prepared_cache: Path) -> None:
    """The Space's start-up as app.py runs it (SPACE_ID set: the warm-up also embeds STSb dev for the STS tab's
    first run, and a prepared machine draws the first page): all of it on the CPU, no GPU call. The warm-up embeds
    STSb dev's first 600 sentences instead of its 2,910: more than ``GPU_BATCH_MIN`` (512), so each model's
    benchmark encoding would ask for a GPU if start-up were not kept on the CPU (the whole set only took longer)."""
    seen = run_on_zero_gpu(tmp_path, """
        import os, time
        os.environ["SPACE_ID"] = "sbert-demo/test"
        import app
        import spaces
        from sbert_demo.ui import app as ui_app
        from sbert_demo.explore import prepare
        from sbert_demo.encoding.encoder import GPU_BATCH_MIN, encode
        from sbert_demo.gpu import on_the_cpu
        whole = prepare._benchmark_sentences()
        benchmark = whole[:600]
        assert len(benchmark) == 600 > GPU_BATCH_MIN and len(whole) == 2910
        prepare._benchmark_sentences = lambda: benchmark
        started = time.perf_counter()
        demo = ui_app.build_app(warm_up=False)
        ui_app.start_warm_up().join()  # the warm-up thread a start runs, waited for
        drawn = ui_app.draw_first_page()
        calls = list(spaces.CALLS)
        with on_the_cpu():  # read back without a GPU call
            kept = {key: encode(key, benchmark).computed for key in prepare.FIRST_MODELS}
        print(json.dumps({"calls": calls, "drawn": drawn is not None, "cuda": torch.cuda.is_initialized(),
                          "kept": kept, "seconds": round(time.perf_counter() - started, 1)}))
    """, prepared=prepared_cache)
    assert seen["calls"] == [] and seen["cuda"] is False
    # the warm-up embedded the benchmark's sentences with each first-visit model: a second encoding computes none
    assert seen["kept"] == {"glove-6b-50d": 0, "all-MiniLM-L6-v2": 0, "all-mpnet-base-v2": 0}
    assert seen["drawn"]  # the warm-up prepared the machine, so the first page was drawn before serving


def test_a_visitors_work_asks_for_the_calls_expected(tmp_path: Path, prepared_cache: Path) -> None:
    """Explore's first page stays on the CPU; STSb dev with MiniLM is one call; a Table 1 run with MiniLM (on STSb
    test, where a GPU would do all seven sets alike) is one call: its first pass; the set then reads the cache
    without a call. The calls ask what their sentences need."""
    seen = run_on_zero_gpu(tmp_path, """
        import app
        import spaces
        from sbert_demo.benchmark.evaluation import evaluate
        from sbert_demo.benchmark.table1 import set_sentences, table1, check_sets
        from sbert_demo.data.benchmarks import sts_split
        from sbert_demo.ui.explore import draw_default_page
        from sbert_demo.config import SHIPPED_DATA
        draw_default_page()
        explore = len(spaces.CALLS)
        dev = sts_split("dev", SHIPPED_DATA)
        sts = evaluate("all-MiniLM-L6-v2", dev)
        after_sts = [[name, asked, took] for name, asked, took in spaces.CALLS]
        rows = table1(["all-MiniLM-L6-v2"], sets=["stsb"])
        print(json.dumps({"explore": explore, "sts": [after_sts, round(sts.spearman * 100, 2)],
                          "table1": [[name, asked] for name, asked, _ in spaces.CALLS[len(after_sts):]],
                          "scores": rows[0].scores, "texts": len(set_sentences(check_sets(["stsb"]))),
                          "dev": len(set([*dev.sentences1, *dev.sentences2]))}))
    """, prepared=prepared_cache)
    assert seen["explore"] == 0
    (sts_calls, spearman) = seen["sts"]
    assert [call[:2] for call in sts_calls] == [["_encode_on_gpu", math.ceil(30 + seen["dev"] / 2000)]]
    # the call ran in the forked worker (it took measurable time); how long it took here on a CPU says nothing about
    # a GPU slice, so it is not compared with the duration asked
    assert 0 < sts_calls[0][2]
    assert abs(spearman - 86.72) < 0.1  # the vectors came back from the call
    assert seen["table1"] == [["_encode_on_gpu", math.ceil(30 + seen["texts"] / 2000)]]
    assert list(seen["scores"]) == ["stsb"] and 81 < seen["scores"]["stsb"] * 100 < 84  # MiniLM on STSb test


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
