"""Static embeddings distilled from a sentence transformer, the way model2vec does it.

Written here because model2vec's ``distill`` extra cannot be installed beside this project (it needs
``skeletoken``, which pins ``transformers < 5.4``); its inference part and sentence-transformers'
``StaticEmbedding`` load the result, and ``tests/test_static.py`` checks these steps against
model2vec's own functions (``model2vec.distill.inference``). The recipe (model2vec's defaults):

1. every token of the teacher's vocabulary except ``[unused…]`` placeholders goes through the
   transformer alone, between its special tokens (``[CLS] token [SEP]``), and the output vectors
   of that sequence are averaged: one vector per token;
2. PCA to 256 dimensions (scikit-learn, full SVD), fitted on those vectors, each component's sign
   chosen as model2vec chooses it;
3. each vector is weighted by SIF on a Zipf estimate of the token's frequency from its rank in the
   vocabulary (``1e-4 / (1e-4 + p)``, ``p ∝ 1 / (rank + 1)``), so frequent tokens count less.

A sentence's vector is then the mean of its tokens' vectors (no special tokens, unknown tokens left
out), normalised: a table look-up and an average, no transformer at all. The result is saved as a sentence-transformers model
(``StaticEmbedding`` + ``Normalize``), loadable anywhere with ``SentenceTransformer(path)``, with the
teacher's tokenizer kept as it is (placeholders get zero rows, so the token ids are the teacher's).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

RECIPE = "1"  # bump when the recipe changes: older distilled folders are made again
PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
REMOVE = re.compile(r"\[unused\d+\]")
BATCH = 256
MARKER = "sbert_demo_distilled.json"
Counter = Callable[[int, int], None]


def zipf_sif_weights(count: int, sif: float = SIF_COEFFICIENT) -> np.ndarray:
    """SIF weights of ``count`` tokens ranked by frequency (model2vec's ``compute_weights``)."""
    inverse_rank = 1 / np.arange(2, count + 2)
    probability = inverse_rank / inverse_rank.sum()
    return sif / (sif + probability)


def special_tokens_around(tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a text (``[CLS]`` / ``[SEP]``, ``<s>`` / ``</s>``)."""
    content = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    start = next(i for i in range(len(full)) if full[i:i + len(content)] == content)
    return full[:start], full[start + len(content):]


def token_vectors(model, tokenizer, token_ids: list[int], progress: Counter | None = None) -> np.ndarray:
    """One vector per token: the mean of the transformer's outputs for ``[CLS] token [SEP]``."""
    import torch

    prefix, suffix = special_tokens_around(tokenizer)
    sequences = [[*prefix, token_id, *suffix] for token_id in token_ids]
    accepts_types = "token_type_ids" in model.forward.__code__.co_varnames
    out = np.zeros((len(sequences), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(sequences), BATCH):
            batch = torch.tensor(sequences[start : start + BATCH], dtype=torch.long)  # all the same length
            inputs = {"input_ids": batch, "attention_mask": torch.ones_like(batch)}
            if accepts_types:
                inputs["token_type_ids"] = torch.zeros_like(batch)
            hidden = model(**inputs).last_hidden_state.float()
            out[start : start + len(batch)] = hidden.mean(dim=1).numpy()
            if progress:
                progress(min(start + BATCH, len(sequences)), len(sequences))
    return np.nan_to_num(out)


def distil_matrix(vectors: np.ndarray, dims: int = PCA_DIMS) -> np.ndarray:
    """PCA to ``dims`` dimensions, then the Zipf/SIF weights by rank (rows in frequency order)."""
    from sklearn.decomposition import PCA

    dims = min(dims, vectors.shape[1])
    if dims < vectors.shape[0]:
        vectors = PCA(n_components=dims, svd_solver="full").fit_transform(vectors)
        # A component's sign is arbitrary (no cosine depends on it); model2vec makes each one's largest
        # score positive, and so does this, so the vectors are model2vec's.
        largest = np.argmax(np.abs(vectors), axis=0)
        vectors = vectors * np.sign(vectors[largest, np.arange(vectors.shape[1])])
    return (vectors * zipf_sif_weights(len(vectors))[:, None]).astype(np.float32)


def distil(teacher_folder: Path, output: Path, progress: Counter | None = None, teacher: str = "") -> Path:
    """Distil the transformer in ``teacher_folder`` (a Hugging Face or sentence-transformers folder)
    into a static sentence-transformers model at ``output``, built in a temporary folder and renamed
    into place, so an interrupted run leaves nothing half-written; ``teacher`` (its fingerprint) is
    recorded beside it. Returns ``output``."""
    from filelock import FileLock

    output.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(output) + ".lock", timeout=3600):
        if distilled_from(output) == teacher:  # another process made it while this one waited
            return output
        staging = Path(tempfile.mkdtemp(prefix=f".{output.name}-", dir=output.parent))
        try:
            _distil_into(teacher_folder, staging, progress, teacher)
            if output.exists():
                shutil.rmtree(output)
            os.replace(staging, output)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return output


def distilled_from(folder: Path) -> str | None:
    """The teacher fingerprint a complete distilled folder of the current recipe records, else None."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker.get("teacher_identity") if marker.get("recipe") == RECIPE else None


def _distil_into(teacher_folder: Path, folder: Path, progress: Counter | None, teacher: str) -> None:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, StaticEmbedding
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(teacher_folder), local_files_only=True, use_fast=True,
                                              trust_remote_code=False)
    model = AutoModel.from_pretrained(str(teacher_folder), local_files_only=True, trust_remote_code=False).eval()
    vocabulary = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    kept = [token_id for token, token_id in vocabulary if not REMOVE.fullmatch(token)]
    logger.info("Distilling %d tokens of %s into static embeddings", len(kept), teacher_folder)
    distilled = distil_matrix(token_vectors(model, tokenizer, kept, progress))
    matrix = np.zeros((len(vocabulary), distilled.shape[1]), dtype=np.float32)
    matrix[kept] = distilled  # placeholders keep zero rows: the teacher's token ids stay as they are
    if tokenizer.unk_token_id is not None:
        # model2vec drops unknown tokens from a sentence; a zero row does the same once the mean is normalised.
        matrix[tokenizer.unk_token_id] = 0
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()  # a static model reads every token of a text
    static = StaticEmbedding(backend, embedding_weights=matrix, base_model=str(teacher_folder))
    SentenceTransformer(modules=[static, Normalize()], device="cpu").save(str(folder), create_model_card=False)
    (folder / MARKER).write_text(json.dumps({"recipe": RECIPE, "teacher": str(teacher_folder),
                                             "teacher_identity": teacher, "tokens": len(kept),
                                             "dimension": int(distilled.shape[1]), "pca_dims": PCA_DIMS,
                                             "sif_coefficient": SIF_COEFFICIENT}, indent=2), encoding="utf-8")
