"""Sentence embeddings from an ONNX artefact (:mod:`.onnx_export`) with ONNX Runtime, without PyTorch.

How it is fast on a CPU without bf16 (measured on an AMD EPYC Zen 3 with 2 cores, README "Speed"):

* texts are tokenised once (the model's own fast tokenizer, saved beside the graph, so token ids
  are those of sentence-transformers), sorted by token count and cut into batches padded only to
  their own longest text; a few texts (an Explore request) go in batches of at least
  :data:`SMALL_BATCH` that keep every core busy, :data:`LOOKAHEAD` batches each, instead of one batch
  padded to the longest of them on one core (20 unseen STS sentences, Xeon: mpnet int8 14.4 -> 10.7 ms
  of CPU per sentence and 288 -> 118 ms until the answer; MiniLM 2.5 -> 1.6 ms, 50 -> 19 ms);
* batches run concurrently on a process-wide pool of one worker per core, each call with one
  intra-op thread: ONNX Runtime releases the GIL, and per-core batches beat one batch split
  across cores (no synchronisation inside every matrix product). All users of the process share
  the pool, so fifty simultaneous requests queue for the cores instead of oversubscribing them;
* a call keeps a few batches ahead in that pool (:data:`LOOKAHEAD` per core) while its caller
  takes finished ones in order (:meth:`OnnxEncoder.stream`): no core waits at the end of a
  progress step (cutting the work into separately run chunks cost 8% of MiniLM's throughput
  on STSb dev), and another request's batches still interleave with a long one's.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..models.libraries import import_hugging_face
from ..shared import process_wide
from .cpu import usable_cores

GRAPH = "model.onnx"  # an artefact folder (built by :mod:`.onnx_export`): the graph, the tokenizer files,
MANIFEST = "manifest.json"  # and the manifest (precision, token limit, dimension, sizes and checksums)
LOOKAHEAD = 2  # batches in flight per core: one running, one queued behind it
SMALL_BATCH = 4  # below this, a batch's fixed cost outweighs the padding it saves


def cpu_workers() -> int:
    """Cores this process runs graph batches on: ``SBERT_DEMO_INFERENCE_THREADS`` (a Ray worker sharing a
    machine takes one), else every core it may use."""
    from ..config import settings

    return settings().inference_threads or usable_cores()


@process_wide
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(cpu_workers(), thread_name_prefix="onnx")


class GraphEncoder:
    """``embed(texts)`` -> (unit-length float32 vectors, positions the token limit cut short), for a
    transformer exported as a graph: the tokenising, length-sorted batching and in-order streaming over
    the shared pool, for any runtime that runs one batch (:meth:`_run`) on one core at a time
    (ONNX Runtime here, OpenVINO in :mod:`.openvino_encoder`)."""

    def __init__(self, folder: Path, threads: int | None = None):
        import_hugging_face()  # never two threads at once (the app's start loads models side by side)
        from transformers import AutoTokenizer

        manifest = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
        self.folder = Path(folder)
        self.max_seq_length = manifest["max_seq_length"]
        self.dimension = manifest["dimension"]
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.pad_id = self.tokenizer.pad_token_id or 0
        self.threads = threads or cpu_workers()

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def tokenize(self, texts: list[str]) -> tuple[list[list[int]], set[int]]:
        """Token ids per text (truncated to the model's limit) and the positions that were truncated."""
        batch = self.tokenizer(texts, truncation=True, max_length=self.max_seq_length)
        cut = {i for i, encoding in enumerate(batch.encodings) if encoding.overflowing}
        return batch["input_ids"], cut

    def padded(self, ids: list[list[int]]) -> dict[str, np.ndarray]:
        """The graph's inputs for one batch, padded to its longest text."""
        longest = max(len(row) for row in ids)
        input_ids = np.full((len(ids), longest), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), longest), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        return {"input_ids": input_ids, "attention_mask": mask}

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        """The sentence embeddings (before normalising) of one batch of token ids."""
        raise NotImplementedError

    def stream(self, texts: list[str],
               batch_size: int = 32) -> tuple[set[int], Iterator[tuple[np.ndarray, np.ndarray]]]:
        """The positions the token limit cut short, and an iterator over (positions, unit-length vectors)
        per batch, longest texts first; batches run ahead on the shared pool while earlier ones are taken."""
        ids, cut = self.tokenize(texts)
        order = np.argsort([-len(row) for row in ids], kind="stable")
        batch_size = min(batch_size, max(SMALL_BATCH, math.ceil(len(ids) / (LOOKAHEAD * self.threads))))
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

        def run(batch: np.ndarray) -> np.ndarray:
            vectors = self._run([ids[i] for i in batch])
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)

        def in_order() -> Iterator[tuple[np.ndarray, np.ndarray]]:
            if self.threads == 1 or len(batches) == 1:
                yield from ((batch, run(batch)) for batch in batches)
                return
            pending = deque()
            try:
                for batch in batches:
                    pending.append((batch, _pool().submit(run, batch)))
                    if len(pending) >= LOOKAHEAD * self.threads:
                        done, future = pending.popleft()
                        yield done, future.result()
                while pending:
                    done, future = pending.popleft()
                    yield done, future.result()
            finally:  # the caller stopped early (an error, a cancelled request): drop what has not started
                for _, future in pending:
                    future.cancel()

        return cut, in_order()

    def embed(self, texts: list[str], batch_size: int = 32) -> tuple[np.ndarray, set[int]]:
        """Unit-length vectors of ``texts`` (in their order) and the positions the token limit cut short."""
        cut, batches = self.stream(texts, batch_size)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for positions, vectors in batches:
            out[positions] = vectors
        return out, cut


class OnnxEncoder(GraphEncoder):
    """An ONNX Runtime artefact (:mod:`.onnx_export`): one session, one intra-op thread per call."""

    def __init__(self, folder: Path, threads: int | None = None):
        import onnxruntime as ort

        super().__init__(folder, threads)
        self.precision = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))["precision"]
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(self.folder / GRAPH), options, providers=["CPUExecutionProvider"])
        self.size_mb = (self.folder / GRAPH).stat().st_size / 2**20

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        return self.session.run(None, self.padded(ids))[0]
