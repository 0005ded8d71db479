"""A corpus embedded past one machine: Ray Data's ``map_batches`` over a pool of actors.

Each actor loads the model once, on the runtime this project chooses on its node (the measured one,
as a single process would: the decision files of the shared cache folder, or measured there), and
writes the same shards as :func:`.embed.embed_corpus` (:mod:`.shards`: content-keyed, so a shard a
worker finished is never computed again, by any path). The driver plans the shards, sends the missing
ones (their sentences) to the pool and reports progress as shards come back; the app opens what it
wrote like any other corpus. On a GPU node each actor takes a GPU (``num_gpus=1``).

``address``: None starts a local Ray cluster for the run (every core of this machine); ``"auto"`` joins
the cluster running on this machine (``ray start --head``); ``"host:port"`` joins that one. The workers
must see the same cache folder (one machine, or a shared file system: docs/corpus.md, "Ray"). Ray is optional:
without it, this module says how to install it, and everything else works.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import numpy as np

from ..config import settings
from ..formatting import about
from ..models.kinds import EMBEDS
from ..models.per_model import resolve_for
from .embed import Embedded, corpora_root, store_for
from .shards import SHARD, plan
from .sources import LargeCorpus, Progress

logger = logging.getLogger(__name__)

RAY_MISSING = "Ray is not installed here: pip install 'ray[data]' (then run again with --ray)."
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


class ShardWriter:
    """A Ray actor: the model loaded once; each batch of shards encoded and written to the shard store."""

    def __init__(self, model: str, app_settings: dict, fast: bool, dtype: str, fingerprint: str, threads: int):
        import torch

        from ..config import Settings, use_settings
        from ..encoding.encoder import encode
        from .shards import ShardStore

        self.settings = Settings.from_dict({**app_settings, "inference_threads": threads})
        torch.set_num_threads(threads)
        self.model, self.fast, self._encode, self._use = model, fast, encode, use_settings
        with use_settings(self.settings):
            self.store = ShardStore(corpora_root(), fingerprint, dtype)
            encode(model, ["Getting ready."], use_cache=False, fast=fast)  # loads it, once per actor

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        with self._use(self.settings):
            for key, texts in zip(batch["key"], batch["texts"]):
                vectors = self._encode(self.model, list(texts), use_cache=False, fast=self.fast).embeddings
                self.store.write(str(key), vectors)
        return {"key": batch["key"], "rows": np.array([len(t) for t in batch["texts"]])}


# HTTP/2's connection preface and an empty SETTINGS frame: a gRPC server (Ray's GCS, Ray Client) answers
# with its own SETTINGS frame at once; a web server, or a listener that never speaks, does not.
HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
CONNECT_SECONDS = 10.0


def split_address(address: str) -> tuple[str, int]:
    """(host, port) of ``[ray://]host:port``, or a ValueError that says what an address looks like."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or len(host) > 253 or any(
            c.isspace() or c in "/?#@" for c in host):
        raise ValueError(f"{address[:80]!r} is not a Ray address; give HOST:PORT (e.g. 10.0.0.5:6379), 'auto' "
                         "for the cluster running here, or --ray alone to start a local one.")
    return host, int(port)


def speaks_grpc(address: str, seconds: float = CONNECT_SECONDS) -> bool:
    """Whether a gRPC server (as Ray's head is) answers at ``address`` within ``seconds`` (Ray itself retries a
    silent or foreign address for minutes)."""
    import socket

    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=seconds) as connection:
            connection.settimeout(seconds)
            connection.sendall(HTTP2_HELLO)
            head = connection.recv(9)
    except (OSError, UnicodeError, ValueError):
        return False
    return len(head) == 9 and head[3] == 0x04  # frame type 4: SETTINGS


def connect(address: str | None, workers: int | None):
    """Ray, initialised: joined to ``address`` or a local cluster started for the run (True when started)."""
    try:
        import ray
    except ImportError:
        raise ValueError(RAY_MISSING) from None
    if ray.is_initialized():
        return ray, False
    if address not in (None, "auto") and not speaks_grpc(address):
        raise ValueError(f"No Ray cluster answered at {address} within {CONNECT_SECONDS:.0f} s (nothing listens "
                         "there, or something that is not Ray); start one with 'ray start --head' on that machine, "
                         "or run with --ray alone to start a local one.")
    # The workers import this package: from the folder that holds it (on a real cluster, every node has the
    # project installed or shares it: docs/corpus.md, "Ray").
    paths = [str(PACKAGE_PARENT), *filter(None, [os.environ.get("PYTHONPATH")])]
    runtime_env = {"env_vars": {"PYTHONPATH": os.pathsep.join(paths), "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "0"),
                                "TOKENIZERS_PARALLELISM": "false"}}
    try:
        if address is None:
            ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING, runtime_env=runtime_env)
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                     runtime_env=runtime_env)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = "this machine (ray start --head)" if address == "auto" else address
        raise ValueError(f"No Ray cluster answered at {where} ({str(exc)[:160]}); start one there, or run with "
                         "--ray alone to start a local one.") from None
    return ray, True


def embed_with_ray(corpus: LargeCorpus, model: str, *, address: str | None = None, workers: int | None = None,
                   fast: bool = True, dtype: str = "fp16", progress: Progress | None = None,
                   shard_size: int = SHARD) -> Embedded:
    """:func:`.embed.embed_corpus` on a Ray cluster: ``workers`` actors (default: one per CPU the cluster
    has, one thread each; one per GPU where it has GPUs)."""
    resolved = resolve_for(model, EMBEDS, "embed a corpus")
    store, fingerprint = store_for(resolved, fast, dtype)  # the runtime measured here first, for every actor
    shards = plan(corpus.sentences, shard_size)
    todo = store.missing(shards)
    say = progress or (lambda fraction, what: None)
    ray, started_here = connect(address, workers)
    began, computed = time.perf_counter(), 0
    try:
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        pool = workers or (gpus or max(1, int(resources.get("CPU", 1))))
        if todo:
            items = [{"key": s.key, "texts": corpus.sentences[s.start: s.end]} for s in todo]
            # One shard in flight per actor: Ray Data's default queues several on the first actor ready
            # while the others still load their model, which leaves them idle on a corpus of few shards.
            pool_strategy = ray.data.ActorPoolStrategy(size=pool, max_tasks_in_flight_per_actor=1)
            dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
                ShardWriter, batch_size=1, compute=pool_strategy, num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1,
                fn_constructor_kwargs=dict(model=resolved.entry.key, app_settings=settings().as_dict(), fast=fast,
                                           dtype=dtype, fingerprint=fingerprint, threads=1))
            total, done_before = len(corpus), len(corpus) - sum(len(s) for s in todo)
            for row in dataset.iter_rows():
                computed += int(row["rows"])
                elapsed = time.perf_counter() - began
                say((done_before + computed) / total,
                    f"{resolved.entry.label} on Ray ({pool} workers): {done_before + computed:,} of {total:,} sentences "
                    f"· {computed / elapsed:,.0f}/s · {about((total - done_before - computed) * elapsed / computed)} left")
    finally:
        if started_here:
            ray.shutdown()
    missing = store.missing(shards)
    if missing:
        raise ValueError(f"{len(missing)} shard(s) were not written by the Ray workers (see their logs); run again to "
                         "compute them.")
    first = store.read(shards[0].key, len(shards[0]))
    return Embedded(resolved.entry.key, resolved.entry.label, fingerprint, f"Ray, {pool} workers", first.shape[1],
                    tuple(shards), store, computed, time.perf_counter() - began)

