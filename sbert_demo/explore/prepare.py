"""Getting a machine ready once, before anyone clicks: what a first request would otherwise wait for.

The first use of a model on a new machine does work that is kept for every later start: mpnet's five
pip parts are joined (and checked), each transformer's CPU runtimes are measured (its ONNX artefacts
built on the way, :mod:`sbert_demo.encoding.runtime_choice`), and UMAP's numba kernels are compiled
(:mod:`.numba_cache`). Measured on a 2-core Xeon from an empty cache folder: 158–160 s in all, most
of it mpnet (ONNX fp32 export 32 s, int8 50 s, the timings). A first STS dev run that paid for it
took 190 s; on a prepared cache folder 40–49 s (bench/first.py), nearly all of it the encoding of
STSb dev's 2,910 sentences (mpnet 34 s in fp32). So the STSb dev embeddings of these models are made
here too (``benchmark``), kept in the embedding cache: the first STS run reads them.

:func:`prepare` does it for the models a first visit uses (Explore's defaults, also the STS tab's
three): ``python -m sbert_demo prepare`` after installing (``scripts/setup.sh`` runs it), and the
app's background warm-up at every start (where it only loads what is already prepared).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..encoding import model_cache
from ..encoding.encoder import encode
from ..gpu import on_the_cpu
from ..models.registry import get_registry
from ..views import VIEWS
from .projection import start_compiling, warm_up

FIRST_MODELS = VIEWS["explore"].default_models  # GloVe, MiniLM, mpnet: Explore's and the STS tab's first run
# What a prepared cache folder holds that every later start reuses (ONNX and OpenVINO artefacts, joined models,
# runtime decisions, compiled UMAP, fitted fixes, distilled static models); never embeddings, shards or maps.
PREPARED_PARTS = ("onnx", "openvino", "models", "runtime", "numba", "fixes", "static")


@dataclass(frozen=True)
class Prepared:
    """One model made ready (or why not): the runtimes it will use and the seconds it took here."""
    key: str
    seconds: float
    lossless: str = ""  # e.g. "ONNX Runtime fp32, CPU (2 threads)": the reported numbers' runtime
    fast: str = ""  # Explore's runtime
    error: str | None = None
    lossless_verdict: str = ""  # e.g. "OpenVINO int8, 2.40x PyTorch fp32; 18% ahead of …, rounds within 3%: sure"
    fast_verdict: str = ""


def prepare(keys: Sequence[str] = FIRST_MODELS, say: Callable[[str], None] | None = None,
            maps: bool = True, benchmark: bool = True, remeasure: bool = False) -> tuple[list[Prepared], float | None]:
    """Each available model of ``keys`` loaded on the fast path (Explore) and then the lossless one (reported
    numbers), its runtimes measured and its artefacts built where this machine has none yet; then (``benchmark``)
    each model's embeddings of STSb dev, the STS tab's first run, where the cache lacks them. The work that measures
    nothing, UMAP's kernels compiled (``maps``) and the models a first load builds (a static model's distillation),
    is done by child processes beside the last measured transformer's artefact builds (mpnet's: minutes of one
    core's work, the other core idle) and waited for before its runtimes are timed, which needs the machine to
    itself (the run's measured prepare on a 2-core AMD EPYC Zen 3: 322.5 s with the static model distilled after
    the timings). Returns (one :class:`Prepared` per key, UMAP's seconds from the compile's start, or None). A model
    that cannot be prepared is reported, never raised: the app then tries again on first use and says why it
    cannot. ``remeasure``: each transformer's runtimes measured again, the new rounds added to the kept ones."""
    with on_the_cpu():  # on ZeroGPU a restart spends none of the visitors' GPU minutes (sbert_demo.gpu)
        return _prepare(keys, say, maps, benchmark, remeasure)


class _Beside:
    """The child processes that prepare what measures nothing, started once, waited for before a timing."""

    def __init__(self, maps: bool, built: Sequence[str], say: Callable[[str], None] | None):
        self.maps, self.built, self.say = maps, built, say
        self.children: list[subprocess.Popen] = []
        self.started = False
        self.compile_started: float | None = None  # where UMAP's kernels are compiled here, not loaded

    def start(self) -> None:
        if self.started:
            return
        self.started = True
        if self.maps and (compiling := start_compiling()) is not None:
            self.compile_started = time.perf_counter()
            self.children.append(compiling)
        if self.built:
            if self.say:
                self.say(f"Building {', '.join(self.built)} in a child process beside the rest")
            self.children.append(start_loading(self.built))

    def wait(self) -> None:
        for child in self.children:
            child.wait()  # a child that failed leaves its work to this process, which does it below


def _prepare(keys: Sequence[str], say: Callable[[str], None] | None, maps: bool,
             benchmark: bool, remeasure: bool) -> tuple[list[Prepared], float | None]:
    registry = get_registry()
    seconds = dict.fromkeys(keys, 0.0)
    runtimes: dict[tuple[str, bool], str] = {}
    errors: dict[str, str] = {}
    for key in keys:
        status = registry.availability(key)
        if not status.available:
            errors[key] = status.reason
    verdicts: dict[str, tuple[str, str]] = {}
    measuring = [key for key in keys if key not in errors and model_cache.measures_runtime(key, registry)]
    beside = _Beside(maps, [key for key in keys if key not in errors and registry.kind(key).built_on_first_load],
                     say)
    for number, key in enumerate(measuring, start=1):
        last = number == len(measuring)
        if last:  # the children beside its artefacts' builds, which leave a core idle
            beside.start()
        started = time.perf_counter()
        try:  # the runtimes measured here (or read back), again where asked
            decision = model_cache.runtime_decision(key, notify=say, again=remeasure,
                                                    settle=beside.wait if last else None)
            verdicts[key] = decision.verdict(False), decision.verdict(True)
        except ValueError:
            pass  # no local transformer (a Hub model not downloaded): the encode below says why
        seconds[key] += time.perf_counter() - started
    beside.start()  # where nothing is measured
    for fast in (True, False):
        for key in keys:
            if key in errors:
                continue
            started = time.perf_counter()
            try:
                runtimes[key, fast] = encode(key, ["Getting ready."], use_cache=False, fast=fast, notify=say).runtime
            except ValueError as exc:
                errors[key] = str(exc)
            seconds[key] += time.perf_counter() - started
    sentences = _benchmark_sentences() if benchmark else []
    for key in keys if sentences else ():
        if key in errors:
            continue
        started = time.perf_counter()
        if say:
            say(f"{registry.get(key).label}: STSb dev's {len(sentences):,} sentences for the STS tab's first run")
        try:
            encode(key, sentences)
        except ValueError as exc:
            errors[key] = str(exc)
        seconds[key] += time.perf_counter() - started
    beside.wait()
    umap_s = None
    if maps:
        loading = time.perf_counter()
        warm_up()  # loads what the child compiled (or compiles, had it failed)
        umap_s = time.perf_counter() - (beside.compile_started or loading)
    return [Prepared(key, seconds[key], runtimes.get((key, False), ""), runtimes.get((key, True), ""), errors.get(key),
                     *verdicts.get(key, ("", ""))) for key in keys], umap_s


def start_loading(keys: Sequence[str]) -> subprocess.Popen:
    """A child process that loads ``keys`` once each into this cache folder, so that what their first load builds
    (a static model's distillation) is made beside the caller's other work; loading them here afterwards finds it
    made (or, had the child failed, makes it)."""
    from ..config import settings

    code = ("import sys\nfrom sbert_demo.encoding.encoder import encode\n"
            "for key in sys.argv[1:]:\n    encode(key, ['Getting ready.'], use_cache=False)\n")
    return subprocess.Popen([sys.executable, "-c", code, *keys], cwd=Path(__file__).resolve().parents[2],
                            env={**os.environ, "SBERT_DEMO_CACHE": str(settings().cache_dir)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _benchmark_sentences() -> list[str]:
    """STSb dev's distinct sentences where the data ships with the project (never a download here)."""
    from ..config import SHIPPED_DATA
    from ..data.benchmarks import sts_split

    if not (SHIPPED_DATA / "stsbenchmark" / "sts-dev.csv").is_file():
        return []
    dev = sts_split("dev", SHIPPED_DATA)
    return list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))


def link_prepared(cache: Path, source: Path | None = None, parts: Sequence[str] = PREPARED_PARTS) -> Path:
    """Link ``parts`` of a prepared cache folder (``source``, by default this machine's) that exist into ``cache``,
    so that it starts as a prepared machine does, with nothing else (no embeddings, shards or maps); ``cache``."""
    from ..config import settings

    source = source or settings().cache_dir
    cache.mkdir(parents=True, exist_ok=True)
    for part in parts:
        if (source / part).exists() and not (cache / part).exists():
            (cache / part).symlink_to(source / part, target_is_directory=True)
    return cache
