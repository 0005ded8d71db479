"""Which token pairs make two sentences similar: an exact answer for mean and max pooling.

Mean pooling: with token vectors u_i of sentence A (the n tokens its pooling counts) and v_j of
B (m tokens), a = Σu_i/n and b = Σv_j/m, so

    cos(a, b) = Σ_i Σ_j (u_i · v_j) / (n · m · ‖a‖ · ‖b‖)

and each term is token pair (i, j)'s share of the cosine: the terms sum to it exactly. Max
pooling: dimension d of a comes from one token (the arg-max), so a_d · b_d / (‖a‖ ‖b‖) belongs to
one token pair; exact too. Normalize layers after pooling do not change a cosine. A training-free
fix (``K+whiten``) is linear: with x̂ = a/‖a‖ the fixed vector is W(x̂ - μ) = Σ_i W(u_i/‖a‖ - μ)/n,
so mean-pooled variants decompose exactly over the mapped token vectors.

Anything else (CLS pooling, a Dense layer after pooling, max pooling followed by a fix) has no
such decomposition; there each token gets its leave-one-out delta (the cosine without the token
minus the cosine with it), which is labelled approximate.

The token vectors are the ones the model's own pipeline hands to its Pooling module (PyTorch
fp32, same tokenizer, same attention mask, special tokens included where the pooling counts them),
so the cosine equals ``SentenceTransformer.encode``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..data.text import check_text
from ..encoding import model_cache
from ..encoding.encoder import fitted_fix
from ..explore.similarity import normalize_rows
from ..models.kinds import EMBEDS
from ..models.loading import ResolvedModel
from ..models.per_model import ModelOutcome, Progress, chosen_models, resolve_for, run_per_model
from ..models.registry import Registry
from ..views import VIEWS
from .tokens import SentenceTokens, leave_one_out_vectors, pooled_tokens, stop_word

logger = logging.getLogger(__name__)

MAX_MODELS = VIEWS["why"].max_models
MAX_TOKENS = 512  # per sentence: a 512 x 512 map is the most a page (and a JSON file) carries well
MAX_CHARS = 20_000
TOP_PAIRS = 10


@dataclass(frozen=True)
class PairExplanation(ModelOutcome):
    cosine: float = float("nan")
    tokens_a: list[str] = field(default_factory=list)
    tokens_b: list[str] = field(default_factory=list)
    exact: bool = False
    method: str = ""  # e.g. "mean pooling (exact)"
    contributions: np.ndarray | None = field(default=None, repr=False)  # (n, m): sums to ``cosine``
    leave_one_out_a: np.ndarray | None = field(default=None, repr=False)  # (n,) when not exact
    leave_one_out_b: np.ndarray | None = field(default=None, repr=False)
    special_a: tuple[bool, ...] = ()
    special_b: tuple[bool, ...] = ()
    why_not_exact: str | None = None

    def top_pairs(self, k: int = TOP_PAIRS) -> list[tuple[int, int, float]]:
        """The ``k`` token pairs with the largest contributions (by absolute value)."""
        if self.contributions is None:
            return []
        flat = np.argsort(-np.abs(self.contributions), axis=None, kind="stable")[:k]
        return [(int(i), int(j), float(self.contributions[i, j]))
                for i, j in zip(*np.unravel_index(flat, self.contributions.shape))]

    def shares(self) -> dict[str, float]:
        """How much of the cosine pairs of identical words, stop words and special tokens carry.

        A pair counts as "stop words" or "special tokens" when either of its tokens is one.
        """
        if self.contributions is None:
            return {}
        a = [_word(t) for t in self.tokens_a]
        b = [_word(t) for t in self.tokens_b]
        special = np.logical_or.outer(np.array(self.special_a, bool), np.array(self.special_b, bool))
        identical = np.equal.outer(np.array(a, dtype=object), np.array(b, dtype=object)) & ~special
        stop = np.logical_or.outer(np.array([stop_word(w) for w in a], bool),
                                   np.array([stop_word(w) for w in b], bool)) & ~special
        total = self.contributions
        return {"identical words": float(total[identical].sum()), "stop words": float(total[stop].sum()),
                "special tokens": float(total[special].sum())}

    def as_json(self) -> dict:
        """The JSON object ``python -m sbert_demo explain --json`` writes per model."""
        row = {"cosine": self.cosine, "tokens_a": self.tokens_a, "tokens_b": self.tokens_b,
               "contributions": None if self.contributions is None else self.contributions.tolist(),
               "exact": self.exact, "method": self.method}
        if not self.exact:
            row["why_not_exact"] = self.why_not_exact
            row["leave_one_out_a"] = self.leave_one_out_a.tolist()
            row["leave_one_out_b"] = self.leave_one_out_b.tolist()
        else:
            row["shares"] = self.shares()
        if self.notes:
            row["notes"] = list(self.notes)
        return row


def _word(token: str) -> str:
    """A token as a word to compare: lower case, without word-piece markers."""
    return token.lower().removeprefix("##").removeprefix("▁").removeprefix("Ġ")


def check_sentence(text: object, name: str) -> str:
    return check_text(text, f"Sentence {name}", max_chars=MAX_CHARS, blank_hint="write a sentence to compare")


def _mean_contributions(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float]:
    a, b = u.mean(axis=0), v.mean(axis=0)
    scale = len(u) * len(v) * np.linalg.norm(a) * np.linalg.norm(b)
    return (u @ v.T) / scale, float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _max_contributions(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float]:
    a_from, b_from = u.argmax(axis=0), v.argmax(axis=0)
    a, b = u.max(axis=0), v.max(axis=0)
    norms = np.linalg.norm(a) * np.linalg.norm(b)
    contributions = np.zeros((len(u), len(v)))
    np.add.at(contributions, (a_from, b_from), a * b / norms)
    return contributions, float(a @ b / norms)


def explain_model(key: str | ResolvedModel, sentence_a: str, sentence_b: str,
                  registry: Registry | None = None) -> PairExplanation:
    """The explanation of one model's cosine for the pair; raises ValueError with a sentence."""
    model = resolve_for(key, EMBEDS, "explain a pair by its tokens", registry)
    entry = model.entry
    loaded = model_cache.load(model.base(registry), registry, precision="fp32", backend="torch")
    side_a = pooled_tokens(loaded.model, check_sentence(sentence_a, "A"), "A")
    side_b = pooled_tokens(loaded.model, check_sentence(sentence_b, "B"), "B")
    for name, side in (("A", side_a), ("B", side_b)):
        if not side.tokens:
            raise ValueError(f"{entry.label} knows none of the words of sentence {name} (stop words are "
                             "dropped); its vector is zero, so there is nothing to explain.")
        if len(side.tokens) > MAX_TOKENS:
            raise ValueError(f"Sentence {name} has {len(side.tokens):,} tokens for {entry.label}; explanations "
                             f"show up to {MAX_TOKENS} per sentence. Shorten it.")
    fitted = fitted_fix(model, registry=registry) if entry.fix is not None else None
    notes = tuple(note for side in (side_a, side_b) for note in side.notes)
    common = dict(tokens_a=side_a.tokens, tokens_b=side_b.tokens, special_a=side_a.special, special_b=side_b.special,
                  notes=notes, runtime=loaded.device.runtime)

    why = _why_not_exact(side_a, fitted is not None)
    if why is None:
        u, v = side_a.vectors, side_b.vectors
        if fitted is not None:  # exact through the linear fix: W(u_i / ‖a‖ - μ) per token
            u = _mapped(u, fitted)
            v = _mapped(v, fitted)
        decompose = _mean_contributions if side_a.pooling == "mean" else _max_contributions
        contributions, cosine = decompose(u, v)
        return PairExplanation.of(model, cosine=cosine, exact=True, method=f"{side_a.pooling} pooling (exact)",
                                  contributions=contributions, **common)
    full = np.stack([side_a.sentence_vector, side_b.sentence_vector])
    without_a = leave_one_out_vectors(loaded.model, side_a)
    without_b = leave_one_out_vectors(loaded.model, side_b)
    # Rows left all-zero are tokens not left out (special tokens, past the limit): decided before a fix,
    # which would map a zero row to a direction of its own.
    left_out_a, left_out_b = np.any(without_a, axis=1), np.any(without_b, axis=1)
    if fitted is not None:  # fitted on the base's L2-normalised vectors, so it applies to those
        full, without_a, without_b = (fitted.apply(normalize_rows(x)) for x in (full, without_a, without_b))
    unit_a, unit_b = normalize_rows(full)
    cosine = float(unit_a @ unit_b)
    delta_a = np.where(left_out_a, normalize_rows(without_a) @ unit_b - cosine, np.nan)
    delta_b = np.where(left_out_b, normalize_rows(without_b) @ unit_a - cosine, np.nan)
    return PairExplanation.of(model, cosine=cosine, exact=False, method="leave one token out (approximate)",
                              leave_one_out_a=delta_a, leave_one_out_b=delta_b, why_not_exact=why, **common)


def _mapped(tokens: np.ndarray, fitted) -> np.ndarray:
    pooled = tokens.mean(axis=0)
    norm = np.linalg.norm(pooled)
    scaled = tokens / norm if norm > 0 else tokens
    out = scaled - fitted.mean
    return out @ fitted.matrix if fitted.matrix is not None else out


def _why_not_exact(side: SentenceTokens, fixed: bool) -> str | None:
    """One sentence on why there is no exact decomposition, or None when there is one."""
    if side.pooling not in ("mean", "max"):
        return (f"{side.pooling.upper() if side.pooling == 'cls' else side.pooling} pooling takes the sentence "
                "vector from one position that attends to every token, so no sum over token pairs gives the "
                "cosine; shown instead: what removing each token changes.")
    if side.after_pooling:
        return (f"a {side.after_pooling} layer after pooling mixes the pooled dimensions non-linearly, so the "
                "token-pair terms no longer add up to the cosine; shown instead: what removing each token changes.")
    if fixed and side.pooling == "max":
        return ("a training-free fix after max pooling mixes dimensions that came from different tokens; "
                "shown instead: what removing each token changes.")
    return None


def explain_pair(model_keys: Sequence[str], sentence_a: str, sentence_b: str,
                 registry: Registry | None = None, progress: Progress | None = None) -> list[PairExplanation]:
    """One explanation per model, in order; a model that cannot explain has ``error`` set."""
    keys = chosen_models(model_keys, MAX_MODELS, "explain")
    check_sentence(sentence_a, "A")
    check_sentence(sentence_b, "B")

    def run_one(model: ResolvedModel, step: Progress) -> PairExplanation:
        step(0.0, f"{model.entry.label}: reading token vectors")
        return explain_model(model, sentence_a, sentence_b, registry)

    return run_per_model(keys, run_one, PairExplanation, progress=progress, purpose="explain a pair by its tokens",
                         registry=registry)
