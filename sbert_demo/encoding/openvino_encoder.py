"""Sentence embeddings with OpenVINO, from the project's own graphs: the ONNX fp32 artefact
(:mod:`.onnx_export`, read as it is) or the int8 model NNCF made from it (:mod:`.openvino_export`).

Three runtimes, each a candidate of :mod:`.runtime_choice` (measured like the others, kept only where
it is the fastest that keeps the numbers):

* **fp32**: the ONNX graph compiled for the CPU in fp32;
* **bf16**: the same graph with OpenVINO's bf16 inference-precision hint, on CPUs with native bf16
  (AVX512-BF16; AMX where present): OpenVINO keeps accuracy-sensitive parts (softmax, layer norms)
  in fp32 itself;
* **int8**: NNCF's post-training quantisation, its remaining fp32 parts with the bf16 hint where the
  CPU has native bf16.

Batching as ONNX Runtime's (:class:`~.onnx_encoder.GraphEncoder`: length-sorted batches, one per
core on the shared pool, in order): the model is compiled for throughput with one stream per core
and one thread per stream, and each pool thread keeps its own infer request. Compiled models are
kept in ``<cache>/openvino/compiled/<hint>`` (OpenVINO's model cache, one folder per inference precision), so a
restart does not compile again. OpenVINO names a kept blob after the graph file's path: the path is resolved first, so
that processes reaching one prepared artefact through cache folders of their own (links to a prepared machine's
parts: the test run's apps, the benches, Ray workers) import one blob instead of each compiling and writing its own
(mpnet: 3.7 s and a 436 MB blob per process, measured on a 2-core AMD EPYC).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from ..config import settings
from ..shared import process_wide
from .cpu import usable_cores
from .onnx_encoder import GraphEncoder

# OpenVINO's inference precision for each runtime of ours; int8 runs its quantised operations in
# int8 whatever the hint, and its other operations in bf16 where the CPU has it (hint_for).
HINTS = {"fp32": "f32", "bf16": "bf16"}


def hint_for(precision: str, cpu_bf16: bool) -> str:
    if precision == "int8":
        return "bf16" if cpu_bf16 else "f32"
    return HINTS[precision]


@process_wide
def core():
    """The process's OpenVINO runtime."""
    import openvino as ov

    runtime = ov.Core()
    # OpenVINO's Python binding looks up numpy's C API on the first array it hands out, inside a C++ static
    # initialiser; two pool threads doing that first at once, one holding the GIL, deadlock (seen with a
    # UMAP compile running beside the first request). Done here, once, in one thread.
    _ = ov.Tensor(np.zeros(1, dtype=np.float32)).data
    return runtime


def compiled_cache(hint: str) -> dict[str, str]:
    """The compiled-model cache for one inference precision, as a compile option (none where the cache folder is
    read-only: compiled at every start instead). One folder per precision: OpenVINO 2026.4 names a graph's blob
    the same whatever the hint, so a bf16 compile imported the fp32 blob; on an AMX Xeon that gave wrong vectors
    (cosine 0 with the right ones) and crashed the process (a bus error or a segmentation fault in infer)."""
    shared = settings().cache_dir / "openvino" / "compiled"
    folder = shared / hint
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in shared.glob("*.blob"):  # blobs of the one shared folder an earlier version kept: never read now
            stale.unlink(missing_ok=True)
    except OSError:
        return {}
    return {"CACHE_DIR": str(folder)}


def pinned(threads: int) -> bool:
    """Whether OpenVINO may pin its threads to cores: only where they take every core this process may use.
    Fewer threads are pinned from the first core on, so processes beside each other (Ray actors of one thread
    each) all landed on core 0: two actors ran at the speed of one."""
    return threads >= usable_cores()


class OpenVinoEncoder(GraphEncoder):
    """``folder`` holds the tokenizer and manifest, ``graph`` the model (``.onnx`` or ``.xml``)."""

    def __init__(self, folder: Path, graph: Path, precision: str, cpu_bf16: bool, threads: int | None = None,
                 keep_compiled: bool = True):
        """``keep_compiled``: the compiled model kept for the next start (False for a graph in a folder that is about
        to move, such as an export's check: its blob would be named after a path no later start reads)."""
        super().__init__(folder, threads)
        self.precision = precision
        self.hint = hint_for(precision, cpu_bf16)
        config = {"INFERENCE_PRECISION_HINT": self.hint, "PERFORMANCE_HINT": "THROUGHPUT",
                  "NUM_STREAMS": str(self.threads), "INFERENCE_NUM_THREADS": self.threads,
                  "ENABLE_CPU_PINNING": pinned(self.threads), **(compiled_cache(self.hint) if keep_compiled else {})}
        # the blob's name hashes the path it was compiled from: the real one, the same through any linked cache folder
        self.compiled = core().compile_model(str(Path(graph).resolve()), "CPU", config)
        self.output = self.compiled.output(0)
        self.size_mb = sum(p.stat().st_size for p in Path(graph).parent.glob(Path(graph).stem + ".*")) / 2**20
        self._local = threading.local()

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        request = getattr(self._local, "request", None)
        if request is None:  # one per thread of the pool: requests of one compiled model run side by side
            request = self._local.request = self.compiled.create_infer_request()
        result = request.infer(self.padded(ids))
        return np.array(result[self.output], dtype=np.float32)  # a copy: the request reuses its buffer
