"""Training a cross-encoder here: sentence-transformers' ``CrossEncoder`` and ``CrossEncoderTrainer``.

No package ships cross-encoder weights, so the paper's Table 2 comparison is trained here: the base
model's transformer (the bundled MiniLM by default) reads each STSb train pair together and learns
to output its gold score scaled to 0..1 through one logit and a sigmoid (``BinaryCrossEntropyLoss``,
the library's recipe for STSb). The dev curve is ``CrossEncoderCorrelationEvaluator``'s Spearman.
The saved folder is a plain ``CrossEncoder`` folder (``CrossEncoder(path)`` loads it anywhere) and
joins the registry as a pair scorer (:mod:`sbert_demo.models.kinds.cross_encoder`).

An untrained cross-encoder's scores come from a random head and mean nothing, so the run has no
"before" score: the before/after table shows "–" there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.records import ScoredPairs
from ..models.kinds import kind_of
from ..models.kinds.cross_encoder import CrossEncoderKind
from ..models.registry import get_registry
from .settings import TrainConfig

OBJECTIVE = "cross-encoder"
CURVE_METRIC = "eval_sts-dev_spearman"
CARD_KIND = "cross-encoder"  # what the model card says the saved folder is


class CrossEncoderRecipe:
    """How a cross-encoder run builds, trains and scores its model (the bi-encoder recipe's twin)."""

    metric = CURVE_METRIC
    scores_before = False  # an untrained head's scores are not shown as if they meant something

    @staticmethod
    def build_model(config: TrainConfig, device: str) -> Any:
        registry = get_registry()
        entry = registry.get(config.base)
        status = registry.availability(entry)
        if not status.available:
            raise ValueError(status.reason or f"{entry.label} is not available.")
        if not kind_of(entry).matmul_heavy or status.location is None:
            raise ValueError(f"A cross-encoder starts from a transformer on this machine; {entry.label} is not one "
                             "(choose all-MiniLM-L6-v2, all-mpnet-base-v2 or a BERT folder).")
        kind_of(entry).prepare(entry, status)
        model = CrossEncoderKind.untrained(status.location, device, config.max_seq_length)
        model.model_card_data.local_files_only = True
        return model

    @staticmethod
    def loss(config: TrainConfig, model: Any) -> Any:
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

        return BinaryCrossEntropyLoss(model)

    @staticmethod
    def evaluator(dev: ScoredPairs, sample: list[int]) -> Any:
        from sentence_transformers.cross_encoder.evaluation import CrossEncoderCorrelationEvaluator

        scaled = dev.scaled()
        return CrossEncoderCorrelationEvaluator([[dev.sentences1[i], dev.sentences2[i]] for i in sample],
                                                [scaled.scores[i] for i in sample], name="sts-dev", batch_size=64,
                                                show_progress_bar=False, write_csv=False)

    @staticmethod
    def trainer(model: Any, args: Any, dataset: Any, loss: Any, evaluator: Any, callbacks: list) -> Any:
        from .trainer import quiet_trainer

        from sentence_transformers.cross_encoder import CrossEncoderTrainer

        return quiet_trainer(CrossEncoderTrainer)(model=model, args=args, train_dataset=dataset, loss=loss,
                                                  evaluator=evaluator, callbacks=callbacks)

    @staticmethod
    def arguments(kwargs: dict[str, Any]) -> Any:
        from sentence_transformers.cross_encoder import CrossEncoderTrainingArguments

        return CrossEncoderTrainingArguments(**kwargs)

    @staticmethod
    def saved(folder: Path) -> dict[str, str]:
        return {"kind": CARD_KIND}
