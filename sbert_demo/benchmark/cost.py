"""Why sentence embeddings exist: what finding the most similar pairs costs, measured on this machine.

The SBERT paper: "finding the most similar pair in a collection of 10,000 sentences requires about
50 million inference computations (~65 hours) with BERT" as a cross-encoder, "about 5 seconds with
SBERT" (a V100 GPU). Here, on the CPU in front of you:

* **cross-encoder**: the model is timed on a real sample of pairs drawn from the sentences, and the
  time for all n·(n−1)/2 pairs is extrapolated from that rate (running them all would take hours);
* **bi-encoder**: the n sentences are really encoded (not from the cache) and every pair compared
  with sentence-transformers' ``paraphrase_mining_embeddings``; the most similar pairs it finds are
  shown (duplicates and paraphrases in the corpus);
* **retrieve & re-rank**: for one query, the bi-encoder's top k, then the cross-encoder on those
  k only: the practical answer, timed.

Times for other n follow from the measured rates: the cross-encoder is linear in pairs, encoding
linear in sentences, the all-pairs comparison quadratic in sentences. The sentences are the shipped
STS benchmark's (15,457 distinct), then the NLI premises, up to :data:`MAX_N`.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.benchmarks import nli_pairs
from ..data.corpora import stsb_corpus
from ..encoding import devices, model_cache
from ..encoding.encoder import encode
from ..models.kinds import EMBEDS, SCORES_PAIRS, kind_of
from ..models.kinds.cross_encoder import CrossEncoderKind
from ..models.per_model import Progress, resolve_for
from ..models.registry import Registry

MIN_N, MAX_N = 2, 20_000
SAMPLE_PAIRS = 256  # cross-encoder pairs really run to measure its rate
TOP_PAIRS = 10  # pairs of different wording shown
TOP_K = 20  # candidates the bi-encoder retrieves for re-ranking
CURVE_N = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
PAPER = {"n": 10_000, "cross_encoder_s": 65 * 3600, "bi_encoder_s": 5.0, "hardware": "V100 GPU"}
DEFAULT_QUERY = "A man is playing a guitar."


@dataclass(frozen=True)
class CostReport:
    n: int
    cpu: str
    cross_encoder: dict[str, Any]  # key, label, trained, runtime, pairs_timed, seconds, pairs_per_s, extrapolated_s
    bi_encoder: dict[str, Any]  # key, label, runtime, encode_s, mining_s, total_s, top_pairs [[i, j, cos]]
    rerank: dict[str, Any]  # query, top_k, retrieve_s, rerank_s, retrieved [[i, cos]], reranked [[i, score]] | None
    sentences: list[str] = field(repr=False, default_factory=list)
    notes: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        """How many times longer the cross-encoder takes than the bi-encoder for all pairs of n sentences."""
        return self.cross_encoder["extrapolated_s"] / max(self.bi_encoder["total_s"], 1e-9)

    def curve(self, sizes: tuple[int, ...] = CURVE_N) -> dict[str, list[float]]:
        """Seconds for each n in ``sizes``, from the measured rates (see the module docstring)."""
        encode_rate = self.n / max(self.bi_encoder["encode_s"], 1e-9)
        mining_per_pair = self.bi_encoder["mining_s"] / max(pairs(self.n), 1)
        return {
            "n": list(sizes),
            "cross_encoder": [pairs(n) / self.cross_encoder["pairs_per_s"] for n in sizes],
            "bi_encoder": [n / encode_rate + pairs(n) * mining_per_pair for n in sizes],
            # one query against a corpus embedded beforehand (the bi-encoder's one-off work above): the
            # query's encoding, a search linear in n, the cross-encoder on the top k; the measured dot is
            # the same three at the measured n
            "retrieve_rerank": [self.rerank.get("encode_query_s", 0.0)
                                + self.rerank.get("search_s", self.rerank["retrieve_s"]) * n / max(self.n, 1)
                                + self.rerank["rerank_s"] for n in sizes],
        }

    def as_json(self) -> dict:
        """The JSON of ``python -m sbert_demo cost --json`` (numbers rounded to 4 decimals)."""
        return _rounded({"n": self.n, "cpu": self.cpu, "cross_encoder": self.cross_encoder,
                         "bi_encoder": self.bi_encoder, "rerank": self.rerank, "ratio": self.ratio, "paper": PAPER,
                         "notes": list(self.notes), "curve": self.curve()})


def _rounded(value):
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def pairs(n: int) -> int:
    return n * (n - 1) // 2


def check_n(n: object) -> int:
    """``n`` as a number of sentences (a whole number, or text that is one), or a ValueError that says why."""
    if isinstance(n, str):
        try:
            n = float(n.strip().replace(",", "").replace("_", ""))
        except ValueError:
            raise ValueError(f"The number of sentences must be a whole number, not {n[:40]!r}.") from None
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if not isinstance(n, int) or isinstance(n, bool):
        raise ValueError(f"The number of sentences must be a whole number, not {n!r}.")
    if not MIN_N <= n <= MAX_N:
        raise ValueError(f"{n:,} sentences: the measured run takes {MIN_N} to {MAX_N:,} sentences (the plot "
                         f"extrapolates to 100,000 from the rates measured on them).")
    return n


def corpus_sentences(n: int) -> list[str]:
    """The first ``n`` distinct sentences of the shipped STS benchmark, then of the NLI premises."""
    sentences = list(stsb_corpus().sentences)
    if n > len(sentences):
        seen = set(sentences)
        for premise in nli_pairs(seed=0).premises:
            if premise not in seen:
                seen.add(premise)
                sentences.append(premise)
            if len(sentences) >= n:
                break
    if len(sentences) < n:
        raise ValueError(f"The shipped corpus has {len(sentences):,} distinct sentences; ask for at most that many.")
    return sentences[:n]


def _cross_encoder(key: str | None, bi_encoder, registry: Registry | None) -> tuple[Any, dict]:
    """The cross-encoder to time: the one chosen, else the bi-encoder's transformer with a new head
    (timed only: an untrained head's scores mean nothing)."""
    if key:
        model = resolve_for(key, SCORES_PAIRS, "score pairs", registry)
        if kind_of(model.entry).can(EMBEDS):
            raise ValueError(f"{model.entry.label} embeds sentences; choose a cross-encoder (train one in the Train "
                             "tab: objective cross-encoder) or none, to time an untrained one.")
        loaded = model_cache.load(model, registry)  # its measured runtime (PyTorch: fp32, or bf16 if faster)
        return loaded.model, {"key": model.entry.key, "label": model.entry.label, "trained": True,
                              "runtime": loaded.device.runtime}
    status = bi_encoder.status
    if status.location is None or not kind_of(bi_encoder.entry).matmul_heavy:
        raise ValueError(f"{bi_encoder.entry.label} has no transformer to time as a cross-encoder; choose a "
                         "cross-encoder or a transformer bi-encoder.")
    choice = devices.current(backend="torch")
    ce = CrossEncoderKind.untrained(status.location, choice.device)
    if choice.autocast_dtype is not None:
        ce.to(choice.autocast_dtype)
    return ce, {"key": None, "label": f"{bi_encoder.entry.label} as a cross-encoder (untrained head: timed only)",
                "trained": False, "runtime": choice.runtime}


def measure_cost(n: int = 10_000, bi_encoder: str = "all-MiniLM-L6-v2", cross_encoder: str | None = None,
                 query: str = DEFAULT_QUERY, registry: Registry | None = None, progress: Progress | None = None,
                 seed: int = 0) -> CostReport:
    """Time both ways of finding similar pairs among ``n`` shipped sentences (see the module docstring)."""
    n = check_n(n)
    say = progress or (lambda fraction, what: None)
    query = " ".join(str(query or DEFAULT_QUERY).split())[:500] or DEFAULT_QUERY
    sentences = corpus_sentences(n)
    bi = resolve_for(bi_encoder, EMBEDS, "encode the sentences", registry)
    say(0.0, f"{bi.entry.label}: encoding {n:,} sentences (not from the cache, so it is timed)")
    started = time.perf_counter()
    encoded = encode(bi, sentences, registry=registry, fast=True, use_cache=False,
                     progress=lambda done, total: say(0.6 * done / max(total, 1),
                                                      f"{bi.entry.label}: encoding {done:,} / {total:,}"))
    encode_s = time.perf_counter() - started
    say(0.6, f"Comparing all {pairs(n):,} pairs (paraphrase mining)")
    top, mining_s = _mine(encoded.embeddings)
    say(0.75, "Timing the cross-encoder on a sample of pairs")
    ce_model, ce_info = _cross_encoder(cross_encoder, bi, registry)
    rng = random.Random(seed)
    sample = [tuple(rng.sample(range(n), 2)) for _ in range(min(SAMPLE_PAIRS, pairs(n)))]
    started = time.perf_counter()
    CrossEncoderKind().score_pairs(ce_model, [sentences[i] for i, _ in sample], [sentences[j] for _, j in sample])
    ce_s = time.perf_counter() - started
    rate = len(sample) / max(ce_s, 1e-9)
    ce_info.update(pairs_timed=len(sample), seconds=ce_s, pairs_per_s=rate, extrapolated_s=pairs(n) / rate)
    say(0.9, "Retrieve with the bi-encoder, re-rank with the cross-encoder")
    rerank = _retrieve_and_rerank(bi, encoded.embeddings, sentences, query, ce_model, ce_info["trained"], registry)
    say(1.0, "Done")
    bi_info = {"key": bi.entry.key, "label": bi.entry.label, "runtime": encoded.runtime, "encode_s": encode_s,
               "mining_s": mining_s, "total_s": encode_s + mining_s, "top_pairs": [[i, j, c] for i, j, c in top]}
    cpu = f"{devices.cpu_name()}, {devices.detect_hardware().cpu_threads} threads"
    notes = () if ce_info["trained"] else (
        "No cross-encoder was chosen: the bi-encoder's transformer with a new, untrained head was timed (a pair "
        "costs the same trained or not); re-ranking needs a trained one (Train tab, objective cross-encoder).",)
    return CostReport(n, cpu, ce_info, bi_info, rerank, sentences, notes)


MINED = 500  # pairs kept from the mining, so the top different (not merely re-cased) pairs can be shown


def _mine(embeddings: np.ndarray) -> tuple[list[tuple[int, int, float]], float]:
    """The most similar pairs among all pairs of ``embeddings`` (sentence-transformers' paraphrase
    mining: every pair compared, in chunks), timed."""
    import torch
    from sentence_transformers.util import paraphrase_mining_embeddings

    tensor = torch.from_numpy(np.ascontiguousarray(embeddings))
    started = time.perf_counter()
    found = paraphrase_mining_embeddings(tensor, top_k=5, max_pairs=MINED)
    seconds = time.perf_counter() - started
    return [(int(i), int(j), float(score)) for score, i, j in found], seconds


def same_words(first: str, second: str) -> bool:
    """Whether two sentences differ only in case, spacing and punctuation (a corpus's near-duplicates)."""
    def words(text: str) -> list[str]:
        return "".join(c.lower() if c.isalnum() else " " for c in text).split()

    return words(first) == words(second)


def split_pairs(report: CostReport, count: int = TOP_PAIRS) -> tuple[list, int]:
    """The ``count`` most similar pairs of different wording, and how many of the mined pairs were the
    same sentence up to case, spacing and punctuation."""
    different, duplicates = [], 0
    for i, j, cosine in report.bi_encoder["top_pairs"]:
        if same_words(report.sentences[i], report.sentences[j]):
            duplicates += 1
        elif len(different) < count:
            different.append((i, j, cosine))
    return different, duplicates


def _retrieve_and_rerank(bi, embeddings: np.ndarray, sentences: list[str], query: str, ce_model: Any,
                         trained: bool, registry: Registry | None) -> dict:
    import torch
    from sentence_transformers.util import semantic_search

    started = time.perf_counter()
    probe = encode(bi, [query], registry=registry, fast=True, use_cache=False).embeddings
    encoded_s = time.perf_counter()
    hits = semantic_search(torch.from_numpy(probe), torch.from_numpy(np.ascontiguousarray(embeddings)),
                           top_k=min(TOP_K, len(sentences)))[0]
    searched_s = time.perf_counter()
    retrieved = [[int(hit["corpus_id"]), float(hit["score"])] for hit in hits]
    scores = CrossEncoderKind().score_pairs(ce_model, [query] * len(retrieved), [sentences[i] for i, _ in retrieved])
    rerank_s = time.perf_counter() - searched_s
    order = np.argsort(-np.asarray(scores), kind="stable")
    reranked = [[retrieved[k][0], float(scores[k])] for k in order] if trained else None
    return {"query": query, "top_k": len(retrieved), "retrieve_s": searched_s - started,
            "encode_query_s": encoded_s - started, "search_s": searched_s - encoded_s, "rerank_s": rerank_s,
            "retrieved": retrieved, "reranked": reranked}


def describe(report: CostReport) -> list[str]:
    """The report in sentences, for the page and the command line."""
    ce, bi = report.cross_encoder, report.bi_encoder
    return [
        f"Cross-encoder ({ce['label']}, {ce['runtime']}): {ce['pairs_timed']} pairs timed, "
        f"{ce['pairs_per_s']:,.0f} pairs/s, so all {pairs(report.n):,} pairs of {report.n:,} sentences would take "
        f"{_duration(ce['extrapolated_s'])}.",
        f"Bi-encoder ({bi['label']}, {bi['runtime']}): encoding {report.n:,} sentences took {bi['encode_s']:.1f} s "
        f"and comparing every pair {bi['mining_s']:.2f} s: {bi['total_s']:.1f} s in all.",
        f"Here the cross-encoder would take {report.ratio:,.0f}x as long. The paper (on a {PAPER['hardware']}): "
        f"~65 hours against ~5 s for 10,000 sentences.",
    ]


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
