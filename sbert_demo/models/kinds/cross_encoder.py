"""A cross-encoder: one transformer reads both sentences together and outputs one similarity score.

It makes no sentence vectors, so it appears only where pairs are scored (the STS benchmark, Table 1,
the cost of finding similar pairs, re-ranking) and views that need vectors refuse it with a
sentence. No package ships cross-encoder weights, so one is trained here (``python -m sbert_demo
train --objective cross-encoder``, the Train tab) from the bundled MiniLM and saved by
sentence-transformers' ``CrossEncoder``, loadable anywhere with ``CrossEncoder(path)``; the public
``cross-encoder/stsb-*`` models are listed too and load where the Hugging Face Hub is reachable.
Its scores are the model's similarity in 0..1 (a sigmoid on one logit): only their order is
compared with the gold scores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..entries import Availability, ModelEntry
from .base import SCORES_PAIRS, ModelKind, model_type

PREDICT_BATCH = 32
PROGRESS_EVERY = 256  # pairs between progress reports


def _hub_model(repo: str, label: str, description: str) -> ModelEntry:
    return ModelEntry(key=repo.split("/")[-1], label=label, family="cross-encoder", kind=CrossEncoderKind.name,
                      source=repo, builtin=True, hub_ids=(repo,), description=description)


class CrossEncoderKind(ModelKind):
    name = "cross-encoder"
    description = "cross-encoder (it scores a pair by reading both sentences together)"
    capabilities = frozenset({SCORES_PAIRS})
    onnx = False  # PyTorch only (fp32, or bf16 where measured faster): the ONNX export is for sentence embedders
    train_fields = frozenset({"max_seq_length"})

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return (
            _hub_model("cross-encoder/stsb-distilroberta-base", "Cross-encoder STSb DistilRoBERTa",
                       "A public cross-encoder trained on STSb (6 layers): the paper's Table 2 setting."),
            _hub_model("cross-encoder/stsb-roberta-base", "Cross-encoder STSb RoBERTa base",
                       "A public cross-encoder trained on STSb (12 layers)."),
        )

    def claims_folder(self, folder: Path) -> bool:
        return model_type(folder) == "CrossEncoder"

    def load(self, entry: ModelEntry, status: Availability, device: str, notify: Any = None, registry: Any = None) -> Any:
        from sentence_transformers import CrossEncoder

        return self.from_folder_or_hub(CrossEncoder, entry, status, device)

    @staticmethod
    def untrained(transformer_folder: Path, device: str = "cpu", max_length: int | None = None) -> Any:
        """A cross-encoder made of a transformer and a new, random head: what cross-encoding with that
        transformer costs (its speed does not depend on training), never its scores."""
        from sentence_transformers import CrossEncoder

        return CrossEncoder(str(transformer_folder), num_labels=1, device=device, local_files_only=True,
                            trust_remote_code=False, max_length=max_length)

    def dimension(self, entry: ModelEntry, status: Availability) -> int | None:
        return None  # no sentence vectors

    def score_pairs(self, model: Any, firsts: list[str], seconds: list[str],
                    progress: Callable[[int, int], None] | None = None) -> Any:
        """The model's score for each pair, computed in chunks so progress can be reported."""
        import numpy as np

        scores = np.zeros(len(firsts), dtype=np.float64)
        for start in range(0, len(firsts), PROGRESS_EVERY):
            end = min(len(firsts), start + PROGRESS_EVERY)
            chunk = list(zip(firsts[start:end], seconds[start:end]))
            scores[start:end] = np.asarray(model.predict(chunk, batch_size=PREDICT_BATCH, show_progress_bar=False,
                                                         convert_to_numpy=True), dtype=np.float64).reshape(-1)
            if progress:
                progress(end, len(firsts))
        return scores
