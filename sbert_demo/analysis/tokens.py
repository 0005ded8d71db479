"""The token vectors a model's pooling sees, read from the model's own pipeline.

:func:`pooled_tokens` runs a ``SentenceTransformer``'s modules up to its Pooling module on one
sentence and keeps what pooling receives: the token embeddings, the attention mask (so padding is
out and special tokens are in exactly when the model pools them), the token strings, and the
model's final sentence vector. :func:`leave_one_out_vectors` re-runs the whole model with one
token removed at a time (the approximate explanation for poolings without an exact one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_LEAVE_ONE_OUT = 128  # tokens per sentence that get a leave-one-out delta (one forward pass each)
_BATCH = 16


@dataclass(frozen=True)
class SentenceTokens:
    tokens: list[str]  # the positions pooling counts, in order
    special: tuple[bool, ...]  # [CLS], [SEP], <s> ...
    vectors: np.ndarray = field(repr=False)  # (n, dim) float64: what pooling receives
    sentence_vector: np.ndarray = field(repr=False)  # the model's output for the sentence (float64)
    pooling: str  # mean | max | cls | ...
    after_pooling: str | None  # the first layer after pooling that is not a Normalize, if any
    input_ids: tuple[int, ...] = ()  # the counted positions' ids, for leave-one-out
    extra: dict[str, Any] = field(default_factory=dict, repr=False)  # other inputs the model takes
    notes: tuple[str, ...] = ()


def stop_word(word: str) -> bool:
    """scikit-learn's English stop words (the list GloVe's tokenizer here drops too)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return word.lower() in ENGLISH_STOP_WORDS


def _pooling(model) -> tuple[int, Any]:
    from sentence_transformers.sentence_transformer.modules import Pooling

    for index, module in enumerate(model):
        if isinstance(module, Pooling):
            return index, module
    raise ValueError("This model has no Pooling module, so its sentence vector cannot be traced back to tokens.")


def _token_strings(model, ids: list[int]) -> tuple[list[str], tuple[bool, ...]]:
    tokenizer = model.tokenizer
    if hasattr(tokenizer, "convert_ids_to_tokens"):  # a Hugging Face tokenizer
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        return tokenizer.convert_ids_to_tokens(ids), tuple(i in special for i in ids)
    vocab = tokenizer.get_vocab()  # sentence-transformers' WhitespaceTokenizer (GloVe)
    return [str(vocab[i]) for i in ids], (False,) * len(ids)


def _truncation_note(model, text: str, kept: int, name: str) -> tuple[str, ...]:
    tokenizer = model.tokenizer
    if not callable(tokenizer) or not hasattr(tokenizer, "convert_ids_to_tokens"):
        return ()
    full = len(tokenizer(text[: 100 * (model.max_seq_length or 512)], truncation=False)["input_ids"])
    if full <= kept:
        return ()
    return (f"Sentence {name} has {full:,} tokens; the model reads only the first {kept} (its limit), "
            "and so does this explanation.",)


def pooled_tokens(model, text: str, name: str = "A") -> SentenceTokens:
    """What ``model``'s Pooling module receives for ``text``, and the model's sentence vector."""
    import torch
    from sentence_transformers.sentence_transformer.modules import Normalize

    index, pooling = _pooling(model)
    modules = list(model)
    features = model.preprocess([text])
    features = {k: v.to(model.device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
    extra = {k: v for k, v in features.items() if k not in ("input_ids", "attention_mask")}
    with torch.inference_mode():
        for module in modules[:index]:
            features = module(features)
        token_vectors = features["token_embeddings"][0].double()
        mask = features["attention_mask"][0].bool()
        for module in modules[index:]:
            features = module(features)
        sentence_vector = features["sentence_embedding"][0].double().cpu().numpy()
    ids = features["input_ids"][0][mask].tolist()
    tokens, special = _token_strings(model, ids)
    mode = pooling.pooling_mode
    mode = mode if isinstance(mode, str) else "+".join(mode)
    after = next((type(m).__name__ for m in modules[index + 1:] if not isinstance(m, Normalize)), None)
    return SentenceTokens(
        tokens=tokens, special=special, vectors=token_vectors[mask].cpu().numpy(), sentence_vector=sentence_vector,
        pooling=mode, after_pooling=after, input_ids=tuple(ids), extra=extra,
        notes=_truncation_note(model, text, len(ids), name),
    )


def leave_one_out_vectors(model, side: SentenceTokens) -> np.ndarray:
    """(n, dim): the model's sentence vector without token k, for each counted token k.

    Special tokens and tokens past :data:`MAX_LEAVE_ONE_OUT` get an all-zero row (no delta).
    """
    import torch

    n = len(side.input_ids)
    out = np.zeros((n, len(side.sentence_vector)))
    positions = [k for k in range(min(n, MAX_LEAVE_ONE_OUT)) if not side.special[k]]
    if n < 2:
        return out
    for start in range(0, len(positions), _BATCH):
        chunk = positions[start : start + _BATCH]
        ids = torch.tensor([[t for j, t in enumerate(side.input_ids) if j != k] for k in chunk], device=model.device)
        features = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        if "token_type_ids" in side.extra:
            features["token_type_ids"] = torch.zeros_like(ids)
        if "sentence_lengths" in side.extra:  # WordEmbeddings
            features["sentence_lengths"] = torch.full((len(chunk),), n - 1, device=model.device)
        for key, value in side.extra.items():
            if key not in features and not isinstance(value, torch.Tensor):
                features[key] = value  # e.g. the modality tag
        with torch.inference_mode():
            vectors = model(features)["sentence_embedding"].double().cpu().numpy()
        out[chunk] = vectors
    return out
