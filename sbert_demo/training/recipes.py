"""How a run builds, trains and scores its model: one recipe per kind of model trained.

* :class:`BiEncoderRecipe` — a ``SentenceTransformer`` with the SBERT objectives (NLI softmax,
  cosine regression, multiple-negatives ranking), ``SentenceTransformerTrainer``, the dev curve from
  ``EmbeddingSimilarityEvaluator``;
* :class:`~.cross_encoder.CrossEncoderRecipe` — a ``CrossEncoder`` on scored pairs.

The runner (:mod:`.runner`) asks :func:`recipe_for` and follows the same steps for both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..data.records import ScoredPairs
from .cross_encoder import OBJECTIVE as CROSS_ENCODER, CrossEncoderRecipe
from .settings import TrainConfig


class BiEncoderRecipe:
    metric = "eval_sts-dev_spearman_cosine"
    scores_before = True  # the base model's STSb numbers are the "before"

    @staticmethod
    def build_model(config: TrainConfig, device: str) -> Any:
        from .model_factory import build_trainable_model

        return build_trainable_model(config, device)

    @staticmethod
    def loss(config: TrainConfig, model: Any) -> Any:
        from .objectives import build_loss

        return build_loss(config, model)

    @staticmethod
    def evaluator(dev: ScoredPairs, sample: list[int]) -> Any:
        from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

        scaled = dev.scaled()
        return EmbeddingSimilarityEvaluator(
            [dev.sentences1[i] for i in sample], [dev.sentences2[i] for i in sample],
            [scaled.scores[i] for i in sample], batch_size=64, main_similarity="cosine",
            similarity_fn_names=["cosine"], name="sts-dev", show_progress_bar=False, write_csv=False,
        )

    @staticmethod
    def trainer(model: Any, args: Any, dataset: Any, loss: Any, evaluator: Any, callbacks: list) -> Any:
        from .trainer import SbertDemoTrainer

        return SbertDemoTrainer(model=model, args=args, train_dataset=dataset, loss=loss, evaluator=evaluator,
                                callbacks=callbacks)

    @staticmethod
    def arguments(kwargs: dict[str, Any]) -> Any:
        from sentence_transformers import SentenceTransformerTrainingArguments

        return SentenceTransformerTrainingArguments(**kwargs)

    @staticmethod
    def saved(folder: Path) -> dict[str, str]:
        return {}


def recipe_for(config: TrainConfig) -> type[BiEncoderRecipe] | type[CrossEncoderRecipe]:
    return CrossEncoderRecipe if config.objective == CROSS_ENCODER else BiEncoderRecipe
