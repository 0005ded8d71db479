"""Which CPU runtime a transformer runs on, chosen by measuring it on this machine.

Rules from CPU flags (:func:`.devices.choose`) gave a different wrong answer on each new CPU: with
native bf16 they kept PyTorch bf16, where ONNX Runtime int8 was twice as fast on one CPU (AMD EPYC
Zen 4) and slower on another. So with ``SBERT_DEMO_BACKEND`` and ``SBERT_DEMO_PRECISION`` on
``auto`` (and ``SBERT_DEMO_RUNTIME_CHOICE=measure``, the default), the first use of a transformer on
the CPU times every candidate runtime on this machine:

* **lossless** (every number that is reported): PyTorch fp32, PyTorch bf16 where the CPU has native
  bf16, ONNX Runtime fp32;
* **fast** (Explore): the same, and ONNX Runtime int8.

Each candidate embeds a probe of sentences, half typed ones (the app's example sets) and half benchmark
ones (STSb dev): 64 to warm up, then 128 timed, in **interleaved rounds** (A B C … A B C …, every
candidate loaded first), so that a moment when the machine is busy hits every candidate alike instead
of ruining one. Its first timed round pays for input shapes it has not seen (which PyTorch bf16 pays
dearly for), the others do not; its score is the time of its first round plus that of its *best* later
round (as ``timeit`` counts: the best round is the one least disturbed; its **spread** is how far the
second best is from it). The lossless path (reported numbers: thousands of sentences a run, whose shapes
repeat) counts the best later round alone (:meth:`Measured.score`). A candidate whose later rounds disagree by more than half is timed again,
beside the others. A candidate must keep the numbers: every
pairwise cosine of the timed sentences (a cross-encoder: its score of each sentence with the next)
within :data:`MAX_DRIFT` of PyTorch fp32's (ONNX artefacts pass their own, stricter checks when built,
:mod:`.onnx_export`). The fastest candidate that keeps them wins each path. Candidates that cannot
run (no onnxruntime, an artefact that fails its check) are left out, with the reason kept.

A path whose winner beat the runner-up by less than their rounds' spread is **unsure**: it is used, and
measured again when the app is idle (:func:`remeasure`; never during a visitor's request), the new
rounds added to the old ones (each candidate's best round kept), until the margin is larger than the
spread. ``python -m sbert_demo prepare --remeasure`` measures again on demand.

The decision is kept in ``<cache>/runtime/<machine>/<model identity>.json`` and in memory: the
machine is the CPU model, the flags that matter, the thread count and the torch and onnxruntime
versions, so another CPU or another model version is measured again. ``bench/encode.py`` prints every
candidate's rates. ``SBERT_DEMO_RUNTIME_CHOICE=rules`` keeps the flag rules; an explicit back-end or
precision is always obeyed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..shared import BoundedCache, memoize
from .cpu import cpu_flags
from .devices import Hardware

logger = logging.getLogger(__name__)

FORMAT = "8"  # bump when the measurement or a candidate changes: older decisions are measured again
# "5": the OpenVINO candidates; "6": interleaved rounds (spread, unsure paths, the date), no OpenVINO bf16 on AMX;
# "7": the lossless path scored on the best later round; "8": OpenVINO bf16 on AMX again (its wrong vectors and
# crashes came from a compiled-model cache shared with fp32, openvino_encoder.compiled_cache)
# The largest change of any of the 8,128 pairwise cosines of the timed sentences against PyTorch fp32.
# What it stands for is STSb Spearman within FAST_SPEARMAN (fast) and 0.05 (lossless). Measured (Xeon, VNNI):
# mpnet int8 with 8-bit weights 0.064 at Spearman +0.06 to +0.23, with every matrix in int8 0.217 at +0.47;
# MiniLM int8 0.051 at +0.00; bf16 0.003. 0.07 keeps the first and refuses the second.
MAX_DRIFT = {"lossless": 0.02, "fast": 0.07}
# How far (Spearman x 100) the fast path's numbers may move from PyTorch fp32's, as the app says it. int8's
# quantisation noise moves one split's Spearman by a few tenths either way, and the drift bound above cannot tell
# +0.2 from +0.4: mpnet in ONNX Runtime int8 (per-token variant, probe drift 0.028) on a Xeon with AMX: STSb dev
# +0.38, test +0.04, 500 / 1,500 train pairs +0.33 / +0.28 (its variant with the outlier down-projections in fp32:
# dev +0.28, test +0.04); the same on a Xeon without AMX (dev +0.38); OpenVINO int8 dev +0.07, train -0.24 / -0.11.
FAST_SPEARMAN = 0.5
RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_int8", "avx512_vnni", "avx_vnni")


@dataclass(frozen=True)
class Candidate:
    backend: str  # "torch" or "onnx"
    precision: str  # "fp32", "bf16" or "int8"

    @property
    def name(self) -> str:
        """``"onnx-int8"``, ``"torch-bf16"`` ..."""
        return f"{self.backend}-{self.precision}"

    @property
    def label(self) -> str:
        from .devices import ENGINES

        return f"{ENGINES.get(self.backend, self.backend)} {self.precision}"

    @property
    def lossless(self) -> bool:
        return self.precision != "int8"


REFERENCE = Candidate("torch", "fp32")


def round_spread(rates: Sequence[float], single: float = 1.0) -> float:
    """(best - second best) / best of ``rates`` (sentences per second): how far a best round may be from the truth;
    ``single`` where there are fewer than two rounds."""
    best = sorted(rates, reverse=True)[:2]
    return (best[0] - best[1]) / best[0] if len(best) == 2 and best[0] else single


@dataclass(frozen=True)
class Measured:
    """One candidate on the probe: sentences/s on its first timed round (input shapes it has not seen) and on
    each later round, the largest pairwise-cosine change against PyTorch fp32, or why it could not run."""

    candidate: Candidate
    cold: float = 0.0
    warm: float = 0.0  # the best later round
    drift: float = 0.0
    refused: str | None = None
    rounds: tuple[float, ...] = ()  # every later round's rate, in the order timed

    @property
    def seconds(self) -> float:
        """The time of the first round and of the best later one for one sentence each (lower is faster)."""
        return 1 / self.cold + 1 / self.warm if self.cold and self.warm else float("inf")

    def score(self, fast: bool) -> float:
        """Seconds a sentence on the path's work (lower is faster). Fast (Explore: a few sentences a request, new
        input shapes every time): the first round and the best later one. Lossless (reported numbers: thousands
        of sentences a run, whose shapes repeat): the best later round; on STSb dev's 2,910 sentences every
        runtime's first call ran within 10% of its best (Xeon with AMX, bench/encode.py)."""
        if fast:
            return self.seconds
        return 1 / self.warm if self.warm else float("inf")

    @property
    def spread(self) -> float:
        """How far its best round may be from the truth: (best - second best) / best over its later rounds (a
        round slowed by a busy moment does not count; two best rounds that agree do), 1 for a single round."""
        return round_spread(self.rounds)

    def joined(self, other: Measured) -> Measured:
        """Both measurements' rounds together (the best of each kept): what measuring again adds."""
        if self.refused or other.refused:
            return other if self.refused else self
        rounds = self.rounds + other.rounds
        return Measured(self.candidate, max(self.cold, other.cold), max(rounds, default=0.0),
                        max(self.drift, other.drift), None, rounds)


@dataclass(frozen=True)
class Decision:
    lossless: Candidate
    fast: Candidate
    measured: tuple[Measured, ...] = ()
    machine: str = ""
    sentences: int = 0
    seconds: float = 0.0  # the measurement's wall time, loading included
    notes: tuple[str, ...] = field(default=())
    decided: str = ""  # when it was measured (ISO 8601, UTC)

    def for_path(self, fast: bool) -> Candidate:
        return self.fast if fast else self.lossless

    def rate(self, name: str) -> float | None:
        """Sentences/s of the candidate ``name`` ("torch-bf16" ...) on the probe, its first and best later
        round together; None where it was not measured or could not run."""
        found = next((m for m in self.measured if m.candidate.name == name and m.refused is None), None)
        return None if found is None or found.seconds == float("inf") else 2 / found.seconds

    def speedup(self, name: str, over: str = REFERENCE.name) -> float | None:
        """How much faster ``name`` ran than ``over`` (PyTorch fp32) on this machine, e.g. 0.6 for
        PyTorch bf16 on a CPU whose bf16 is slower; None where either was not measured."""
        rate, reference = self.rate(name), self.rate(over)
        return None if rate is None or reference is None else rate / reference

    def margin(self, fast: bool) -> tuple[Candidate | None, float, float]:
        """(the runner-up on the path, by how much the winner beat it, the larger spread of the two's rounds),
        e.g. (ONNX Runtime fp32, 0.31, 0.04): 31% faster, rounds within 4%. No runner-up: (None, inf, 0)."""
        path = "fast" if fast else "lossless"
        allowed = sorted(_allowed(self.measured, path), key=lambda m: m.score(fast))
        if len(allowed) < 2:
            return None, float("inf"), 0.0
        winner, runner_up = allowed[0], allowed[1]
        return (runner_up.candidate, runner_up.score(fast) / winner.score(fast) - 1,
                max(winner.spread, runner_up.spread))

    def path_speedup(self, name: str, fast: bool) -> float | None:
        """How much faster ``name`` is than PyTorch fp32 on the path's work (:meth:`Measured.score`)."""
        found = {m.candidate.name: m for m in self.measured if m.refused is None}
        if name not in found or REFERENCE.name not in found or found[name].score(fast) == float("inf"):
            return None
        return found[REFERENCE.name].score(fast) / found[name].score(fast)

    def unsure(self, fast: bool) -> bool:
        """Whether the path's winner beat the runner-up by less than their rounds disagree."""
        _, margin, spread = self.margin(fast)
        return margin < spread

    def verdict(self, fast: bool) -> str:
        """One sentence for the path, e.g. "OpenVINO int8, 2.4x PyTorch fp32; 18% ahead of ONNX Runtime int8,
        rounds within 3%: sure"."""
        chosen = self.for_path(fast)
        speedup = self.path_speedup(chosen.name, fast)
        runner_up, margin, spread = self.margin(fast)
        said = f"{chosen.label}" + (f", {speedup:.2f}x {REFERENCE.label}" if speedup and chosen != REFERENCE else "")
        if runner_up is None:
            return f"{said}: the only candidate that keeps the numbers"
        sure = "unsure: measured again when the app is idle" if margin < spread else "sure"
        return f"{said}; {margin:.0%} ahead of {runner_up.label}, rounds within {spread:.0%}: {sure}"

    def joined(self, other: Decision) -> Decision:
        """This decision's rounds and ``other``'s together, picked again (``other``'s machine and date)."""
        mine = {m.candidate: m for m in self.measured}
        measured = tuple(mine[m.candidate].joined(m) if m.candidate in mine else m for m in other.measured)
        return Decision(pick(measured, fast=False), pick(measured, fast=True), measured, other.machine,
                        other.sentences, self.seconds + other.seconds, other.notes, other.decided)

    def summary(self) -> str:
        """One line per candidate, for logs and ``bench/encode.py``."""
        lines = []
        for m in self.measured:
            chosen = [path for path, c in (("lossless", self.lossless), ("fast", self.fast)) if c == m.candidate]
            if m.refused:
                lines.append(f"{m.candidate.label:<18} not used: {m.refused}")
            else:
                lines.append(f"{m.candidate.label:<18} {m.cold:8.1f} sent/s unseen, {m.warm:8.1f} best of "
                             f"{len(m.rounds)} again (spread {m.spread:.0%}), similarities within {m.drift:.3f} of fp32"
                             + (f"  <- {' and '.join(chosen)}" if chosen else ""))
        return "\n".join(lines)

    def as_json(self) -> dict:
        return {"format": FORMAT, "lossless": asdict(self.lossless), "fast": asdict(self.fast),
                "measured": [{**asdict(m), "candidate": asdict(m.candidate)} for m in self.measured],
                "machine": self.machine, "sentences": self.sentences, "seconds": self.seconds,
                "decided": self.decided}

    @classmethod
    def from_json(cls, data: dict) -> Decision | None:
        """The decision stored by :meth:`as_json`, or None for another format or a damaged file."""
        try:
            if data.get("format") != FORMAT:
                return None
            measured = tuple(Measured(**{**m, "candidate": Candidate(**m["candidate"]),
                                         "rounds": tuple(m.get("rounds") or ())}) for m in data["measured"])
            return cls(Candidate(**data["lossless"]), Candidate(**data["fast"]), measured, data["machine"],
                       int(data["sentences"]), float(data["seconds"]), decided=str(data.get("decided", "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def candidates(hardware: Hardware, onnx: bool = True) -> tuple[Candidate, ...]:
    """What may run a transformer on this CPU, the reference (PyTorch fp32) first (``onnx=False``: a
    model that runs in PyTorch only, e.g. a cross-encoder). OpenVINO reads the ONNX graphs, so it is a
    candidate where ONNX Runtime is; its bf16 hint only where the CPU has native bf16 (emulated, it is
    slower than fp32), its int8 where NNCF is installed."""
    found = [REFERENCE]
    if hardware.cpu_bf16:  # emulated bf16 is slower than fp32 everywhere: not worth timing
        found.append(Candidate("torch", "bf16"))
    if hardware.onnx and onnx:
        found += [Candidate("onnx", "fp32"), Candidate("onnx", "int8")]
        if hardware.openvino:
            found.append(Candidate("openvino", "fp32"))
            if hardware.cpu_bf16:
                found.append(Candidate("openvino", "bf16"))
            if hardware.nncf:
                found.append(Candidate("openvino", "int8"))
    return tuple(found)


def left_out(hardware: Hardware, onnx: bool = True) -> tuple[str, ...]:
    """Why runtimes that could run elsewhere are not candidates on this machine, as sentences."""
    if not onnx:
        return ()
    why = []
    if not hardware.onnx:
        why.append("ONNX Runtime (and OpenVINO, which reads its graphs) left out: onnxruntime is not installed.")
    elif not hardware.openvino:
        why.append("OpenVINO left out: openvino is not installed here (pip install -r requirements.txt).")
    elif not hardware.nncf:
        why.append("OpenVINO int8 left out: nncf is not installed here.")
    if hardware.onnx and hardware.openvino and not hardware.cpu_bf16:
        why.append("OpenVINO bf16 left out: this CPU has no native bf16 (emulated it is slower than fp32).")
    return tuple(why)


def _allowed(measured: tuple[Measured, ...], path: str) -> list[Measured]:
    return [m for m in measured if m.refused is None and m.drift <= MAX_DRIFT[path]
            and (path == "fast" or m.candidate.lossless)]


def pick(measured: tuple[Measured, ...], fast: bool) -> Candidate:
    """The fastest candidate that keeps the numbers for the path (the reference when none is faster).

    >>> a = Measured(Candidate("torch", "fp32"), cold=100, warm=120)
    >>> b = Measured(Candidate("onnx", "int8"), cold=300, warm=320, drift=0.01)
    >>> pick((a, b), fast=True).name, pick((a, b), fast=False).name
    ('onnx-int8', 'torch-fp32')
    """
    allowed = _allowed(measured, "fast" if fast else "lossless")
    return min(allowed, key=lambda m: m.score(fast)).candidate if allowed else REFERENCE


@memoize(maxsize=8)
def machine_identity(hardware: Hardware) -> str:
    """What the measurement depends on besides the model, e.g. "Intel(R) Xeon(R) … | avx2 avx512_bf16 … |
    2 threads | torch 2.13.0 | onnxruntime 1.23.2"."""
    import torch

    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for name in ("onnxruntime", "openvino", "nncf"):
        try:  # OpenVINO's own version names its build; the others' are their packages' (nncf's import takes 0.5 s)
            versions[name] = __import__(name).__version__ if name == "openvino" else version(name)
        except (ImportError, PackageNotFoundError):
            versions[name] = "none"
    flags = " ".join(f for f in RELEVANT_FLAGS if f in cpu_flags())
    return (f"{hardware.cpu_name} | {flags or 'no listed flags'} | {hardware.cpu_threads} threads | "
            f"torch {torch.__version__} | onnxruntime {versions['onnxruntime']} | openvino {versions['openvino']} | "
            f"nncf {versions['nncf']}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def decision_file(cache_dir: Path, machine: str, identity: str) -> Path:
    return cache_dir / "runtime" / _digest(machine) / f"{_digest(identity)}.json"


WARM_UP, TIMED = 64, 128  # probe sentences: 2 batches to warm up, then 4 timed (an even share for each core)
ROUNDS = 3  # timed rounds after the first (unseen shapes), every candidate in turn
EXTRA_ROUNDS = 2  # more, for candidates whose rounds disagreed by more than half (a busy moment)
DISAGREE = 0.5


def probe_sentences() -> tuple[list[str], list[str]]:
    """(warm-up, timed), each half short sentences people type (the example sets) and half benchmark
    sentences (STSb dev as shipped, every 20th distinct one). On short sentences alone PyTorch won for
    mpnet, on the benchmark ONNX Runtime did: the mix decides. Four timed batches, because ONNX
    Runtime spreads batches over the cores: with three, one core idles for a third of the time."""
    from ..config import SHIPPED_DATA
    from ..data.benchmarks import sts_split
    from ..data.examples import EXAMPLE_SETS
    from ..data.sentences import parse_sentences

    half = (WARM_UP + TIMED) // 2
    typed = list(dict.fromkeys(t for example in EXAMPLE_SETS.values()
                               for t in parse_sentences(example.text).sentences))
    benchmark = []
    if (SHIPPED_DATA / "stsbenchmark" / "sts-dev.csv").is_file():  # never the Hub: no waiting on the network
        dev = sts_split("dev", SHIPPED_DATA)
        benchmark = list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))[::20][:half]
    typed = (typed * (half // len(typed) + 1))[:half] if benchmark else (typed * 2)[:WARM_UP + TIMED]
    texts = [t for pair in zip(typed, benchmark) for t in pair] if benchmark else typed
    return texts[:WARM_UP], texts[WARM_UP:]


Embed = Callable[[list[str]], np.ndarray]  # texts -> L2-normalised vectors (a pair scorer: a score per pair)


def measure(runs: dict[Candidate, Callable[[], Embed]], notify: Callable[[str], None] | None = None,
            machine: str = "", rounds: int = ROUNDS, settle: Callable[[], None] | None = None) -> Decision:
    """Time each candidate (``runs[c]()`` loads it and returns its embedding function) on the probe, in
    interleaved rounds: all loaded and warmed up first, then round after round each candidate in turn.
    ``settle`` is called between the two: it waits for work its caller runs beside the loading (which builds the
    candidates' artefacts), so that the rounds time the machine alone."""
    from datetime import datetime, timezone

    started = time.perf_counter()
    warm_up, timed = probe_sentences()
    embeds: dict[Candidate, Embed] = {}
    refused: dict[Candidate, str] = {}
    for candidate, load in runs.items():
        if notify:
            notify(f"Loading {candidate.label} to time it (once per machine and model version)")
        try:
            embeds[candidate] = load()
            embeds[candidate](warm_up)
        except Exception as exc:  # no artefact, a failed check, a missing runtime: not a candidate here
            refused[candidate] = str(exc) or type(exc).__name__
    if settle:
        settle()
    rates: dict[Candidate, list[float]] = {c: [] for c in embeds}
    outputs: dict[Candidate, np.ndarray] = {}

    def one_round(who: list[Candidate], number: int) -> None:
        if notify:
            notify(f"Timing {len(who)} runtimes on {len(timed)} sentences, round {number} (each in turn)")
        for candidate in who:
            if candidate in refused:
                continue
            try:
                round_started = time.perf_counter()
                vectors = embeds[candidate](timed)
                rates[candidate].append(len(timed) / (time.perf_counter() - round_started))
                outputs.setdefault(candidate, vectors)
            except Exception as exc:
                refused[candidate] = str(exc) or type(exc).__name__

    order = list(embeds)
    for number in range(1, rounds + 2):  # the first round: unseen shapes; then ``rounds`` again
        one_round(order if number % 2 else order[::-1], number)  # alternate the order: none always goes first
    shaky = [c for c in order if c not in refused and len(rates[c]) > 2
             and (max(rates[c][1:]) - min(rates[c][1:])) / max(rates[c][1:]) > DISAGREE]
    for extra in range(EXTRA_ROUNDS if shaky else 0):  # a busy moment: those again, beside the others
        one_round(order, rounds + 2 + extra)
    reference = None
    measured = []
    for candidate in runs:
        if candidate in refused or candidate not in outputs:
            measured.append(Measured(candidate, refused=refused.get(candidate, "it did not run")))
            continue
        vectors = outputs[candidate]
        similarities = vectors @ vectors.T if vectors.ndim == 2 else vectors  # a pair scorer's scores as they are
        if reference is None:
            reference = similarities  # the first candidate that runs is PyTorch fp32, the reference
        later = tuple(rates[candidate][1:])
        measured.append(Measured(candidate, cold=rates[candidate][0], warm=max(later, default=0.0),
                                 drift=float(np.max(np.abs(similarities - reference))), rounds=later))
    measured = tuple(measured)
    return Decision(pick(measured, fast=False), pick(measured, fast=True), measured, machine, len(timed),
                    time.perf_counter() - started, decided=datetime.now(timezone.utc).isoformat(timespec="seconds"))


def _without_threads(machine: str) -> str:
    return " | ".join(part for part in machine.split(" | ") if not part.endswith(" threads"))


def stored(cache_dir: Path, hardware: Hardware, identity: str) -> Decision | None:
    """The decision stored for the model ``identity`` on this CPU (measured with any thread count:
    training asks from a process that runs on fewer threads than inference), or None where it was
    never measured here. Reads files only; never measures."""
    mine = _without_threads(machine_identity(hardware))
    for path in sorted((cache_dir / "runtime").glob(f"*/{_digest(identity)}.json")):
        decision = _read(path)
        if decision is not None and _without_threads(decision.machine) == mine:
            return decision
    return None


def _read(path: Path) -> Decision | None:
    try:
        return Decision.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def _write(path: Path, decision: Decision) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(decision.as_json(), out, indent=1)
    os.replace(temporary, path)  # one rename: a reader sees the old file or the new one


decisions: BoundedCache[tuple[str, str, str], Decision] = BoundedCache("runtime decisions", 64)


def decided(cache_dir: Path, hardware: Hardware, identity: str, label: str,
            runs: Callable[[], dict[Candidate, Callable[[], Embed]]],
            notify: Callable[[str], None] | None = None,
            measured: Callable[[Decision], None] | None = None, again: bool = False,
            settle: Callable[[], None] | None = None) -> Decision:
    """The decision for the model ``identity`` on this machine: from memory, from the cache folder, or
    measured now (once, however many ask at the same moment) and stored; ``measured`` hears a new one.
    ``again``: measured now whatever is kept, its rounds added to the kept decision's (:meth:`Decision.joined`).
    ``settle``: :func:`measure`'s, called only where this measures."""
    machine = machine_identity(hardware)
    path = decision_file(cache_dir, machine, identity)
    key = (str(cache_dir), machine, identity)

    def build() -> Decision:
        stored = _read(path)
        stored = stored if stored is not None and stored.machine == machine else None
        if stored is not None and not again:
            return stored
        if notify:
            notify(f"{'Measuring again' if again else 'Choosing'} the fastest runtime for {label} on this CPU"
                   f"{'' if again else ' (once per machine and model version)'}")
        decision = measure(runs(), notify, machine, settle=settle)
        if stored is not None:
            decision = stored.joined(decision)
        try:
            _write(path, decision)
        except OSError as exc:  # a read-only cache folder: measured again after a restart
            logger.warning("The runtime decision for %s could not be stored: %s", label, exc)
        logger.info("Runtime for %s on %s (measured in %.1f s):\n  lossless: %s\n  fast: %s\n%s", label, machine,
                    decision.seconds, decision.verdict(False), decision.verdict(True), decision.summary())
        if measured:
            measured(decision)
        return decision

    if again:
        return decisions.rebuild(key, build)
    return decisions.get_or_build(key, build)


def kept(cache_dir: Path, hardware: Hardware, identity: str) -> Decision | None:
    """The decision in memory or in the cache folder for ``identity`` on this machine; never measures."""
    machine = machine_identity(hardware)
    found = decisions.get((str(cache_dir), machine, identity))
    if found is not None:
        return found
    stored = _read(decision_file(cache_dir, machine, identity))
    return stored if stored is not None and stored.machine == machine else None
