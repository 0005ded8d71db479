"""The one protocol every kind of model implements, and what views may ask of it.

A kind answers, for an entry of its kind: is it available and from where, which files make its
identity, how it loads, how large its vectors are, whether its work is matrix products (so reduced
precision and ONNX Runtime pay off), whether it has a token limit, how it trains and which training
settings apply, and its **capabilities**. Views ask capabilities, never kind names or model keys:
a model that only scores pairs is refused by a view that needs sentence vectors, with a sentence.

The defaults below are those of a transformer that may come from the Hugging Face Hub: found in a
pip package, a folder under ``models/``, the local Hugging Face cache, or the Hub itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable
from typing import Any

from ...config import settings
from ...hub import cached_snapshot, hub_reachable, needs_hub_message
from .. import assets, local
from ..entries import Availability, ModelEntry

EMBEDS = "embeds sentences"  # one vector per sentence: maps, heatmaps, clustering, search, cosine scores
SCORES_PAIRS = "scores sentence pairs"  # a similarity per pair (bi-encoders by cosine, cross-encoders jointly)
TRAINABLE = "trainable here"  # the Train tab and ``python -m sbert_demo train`` can fine-tune it
CAPABILITIES = (EMBEDS, SCORES_PAIRS, TRAINABLE)

# What each capability makes possible, for the sentence that refuses a model without it.
_NEEDED_FOR = {EMBEDS: "sentence vectors", SCORES_PAIRS: "a similarity score for each sentence pair",
               TRAINABLE: "training here"}

# Keys that name an output size in sentence-transformers module configs (Pooling, Dense) and in
# Hugging Face model configs, in the order they are looked for.
_MODULE_DIMENSION_KEYS = ("embedding_dimension", "word_embedding_dimension", "out_features")
_CONFIG_DIMENSION_KEYS = ("hidden_size", "d_model", "dim", "n_embd")


class ModelKind:
    """A kind of model. Subclasses set the attributes and override what differs."""

    name: str = ""  # what a registry entry's ``kind`` holds
    description: str = ""
    capabilities: frozenset[str] = frozenset({EMBEDS, SCORES_PAIRS, TRAINABLE})
    matmul_heavy: bool = True  # reduced precision and ONNX Runtime pay off (not for a table look-up)
    onnx: bool = True  # exported to ONNX Runtime when that is the fastest (a sentence embedder's graph)
    token_limited: bool = True  # texts past the model's token limit are cut (and the cut is reported)
    batch_size: int | None = None  # texts per forward pass when the kind needs another size than the caller's
    built_on_first_load: bool = False  # its first load makes something kept (a distillation): prepare, in a child
    layout: str = "sentence-transformers"  # the folder layout it loads from (:func:`local.folder_problem`)
    train_fields: frozenset[str] = frozenset({"max_seq_length"})  # training settings beyond the common ones
    # Part of the model's identity: a new value when the kind computes its vectors another way, so
    # embeddings cached from the old way are not reused (for this kind only).
    encoding_version: str = ""

    def can(self, capability: str) -> bool:
        return capability in self.capabilities

    @property
    def pooling_choice(self) -> bool:
        """Whether each entry (and each training run) chooses its pooling (plain transformers)."""
        return "pooling" in self.train_fields

    def refusal(self, entry: ModelEntry, capability: str, purpose: str) -> str:
        """The sentence that refuses ``entry`` for a view needing ``capability`` (to ``purpose``)."""
        return (f"{entry.label} is a {self.description or self.name} and gives no "
                f"{_NEEDED_FOR.get(capability, capability)}, so it cannot {purpose}.")

    # --- which entries exist ---------------------------------------------------------------------

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        """The models of this kind the app offers out of the box."""
        return ()

    def claims_folder(self, folder: Path) -> bool:
        """Whether a folder under ``models/`` holds a model of this kind (asked in registration order)."""
        return False

    def folder_entry(self, folder: Path, card: dict) -> ModelEntry:
        """The entry of a model of this kind trained here (``card``: its ``sbert_demo_card.json``)."""
        return ModelEntry(key=folder.name, label=card.get("label") or folder.name, family="fine-tuned",
                          kind=self.name, source=str(folder.resolve()),
                          description=card.get("summary", "Trained locally."))

    # --- where it loads from ---------------------------------------------------------------------

    def availability(self, entry: ModelEntry, registry: Any) -> Availability:
        """Whether ``entry`` can load now, and from where; decided offline within a few seconds.

        ``registry`` (the :class:`~sbert_demo.models.registry.Registry` asking) answers for other
        entries, e.g. a distilled model's teacher."""
        if entry.asset is not None and (location := assets.asset_location(entry.asset)) is not None:
            return Availability(True, location=location)
        if not entry.hub_ids:  # a local folder: a model trained here or one a user added by path
            return local.availability(Path(entry.source), self.layout)
        copy = _local_copy(entry.hub_ids)
        if copy is not None:
            return Availability(True, location=copy)
        if hub_reachable():
            return Availability(True, hub_id=entry.hub_ids[0])
        return Availability(False, needs_hub_message(entry.label, entry.install_hint))

    def prepare(self, entry: ModelEntry, status: Availability) -> None:
        """Make the files ready before they are fingerprinted or loaded (e.g. join a split package)."""
        if entry.asset is not None and status.location == assets.asset_location(entry.asset):
            assets.prepare_asset(entry.asset)

    def identity_files(self, entry: ModelEntry, status: Availability, registry: Any) -> tuple[Path, ...]:
        """The files (or folders) whose names, sizes and times make the model's identity."""
        location = status.location
        if location is None and status.hub_id:
            location = cached_snapshot(status.hub_id)
        return () if location is None else (Path(location),)

    # --- loading ---------------------------------------------------------------------------------

    def load(self, entry: ModelEntry, status: Availability, device: str,
             notify: Callable[[str], None] | None = None, registry: Any = None) -> Any:
        """The model, on ``device``, from where ``status`` says it is (never with remote code);
        ``notify`` hears what is prepared first."""
        raise NotImplementedError(f"{self.name} models cannot be loaded")

    @staticmethod
    def from_folder_or_hub(model_class: type, entry: ModelEntry, status: Availability, device: str) -> Any:
        """``model_class`` (a sentence-transformers class) from the local folder ``status`` names, else
        from its Hub id; never with remote code."""
        if not status.available:
            raise ValueError(status.reason or f"{entry.label} is not available.")
        source = str(status.location) if status.location is not None else status.hub_id
        return model_class(source, device=device, local_files_only=status.location is not None,
                           trust_remote_code=False)

    def score_pairs(self, model: Any, firsts: list[str], seconds: list[str],
                    progress: Callable[[int, int], None] | None = None) -> Any:
        """A score per pair, for a kind that scores pairs without sentence vectors (a cross-encoder)."""
        raise NotImplementedError(f"{self.name} models score pairs by the cosine of their sentence vectors")

    def dimension(self, entry: ModelEntry, status: Availability) -> int | None:
        """The sentence-vector size read from files without loading the model; None when unknown."""
        if entry.asset is not None and (pooling := assets.read_asset_file(entry.asset, "1_Pooling/config.json")):
            return _config_dimension(json.loads(pooling), _MODULE_DIMENSION_KEYS)
        folder = status.location
        if folder is None and status.hub_id:
            folder = cached_snapshot(status.hub_id)
        if folder is None or not Path(folder).is_dir():
            return None
        return folder_dimension(Path(folder))

    # --- training --------------------------------------------------------------------------------

    def training_defaults(self, device: str) -> dict[str, Any]:
        """Hyperparameters that suit this kind on ``device`` (the SBERT paper's for transformers:
        batch 16, lr 2e-5, 10 % warm-up; NLI capped at 10,000 pairs on a CPU so a run takes minutes)."""
        if device == "cpu":
            return {"batch_size": 16, "learning_rate": 2e-5, "warmup_ratio": 0.1, "max_pairs": 10_000,
                    "max_seq_length": 128}
        return {"batch_size": 32, "learning_rate": 2e-5, "warmup_ratio": 0.1, "max_pairs": None,
                "max_seq_length": None}

    def trainable_model(self, entry: ModelEntry, status: Availability, device: str, options: dict[str, Any],
                        registry: Any = None) -> Any:
        """A fresh model to train (``options``: the run's pooling, dense layer ...); by default the model itself."""
        return self.load(entry, status, device, registry=registry)


def _local_copy(hub_ids: tuple[str, ...]) -> Path | None:
    """A copy of one of ``hub_ids`` under ``models/`` (by its name) or in the local Hugging Face cache."""
    for hub_id in hub_ids:
        for name in (hub_id, hub_id.split("/")[-1], hub_id.replace("/", "--")):
            folder = settings().models_dir / name
            if (folder / "config.json").is_file():
                return folder
        snapshot = cached_snapshot(hub_id)
        if snapshot is not None:
            return snapshot
    return None


def _read_json(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _config_dimension(config: object, keys: tuple[str, ...]) -> int | None:
    if not isinstance(config, dict):
        return None
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def folder_dimension(folder: Path) -> int | None:
    """The sentence-embedding size of a model folder, from its config files; None if unknown."""
    modules = _read_json(folder / "modules.json")
    if isinstance(modules, list):
        # The last module that states a size decides it (Pooling, or a Dense layer after it).
        for module in reversed(modules):
            path = module.get("path", "") if isinstance(module, dict) else ""
            size = _config_dimension(_read_json(folder / path / "config.json"), _MODULE_DIMENSION_KEYS)
            if size and path:  # path "" is the transformer itself: its config.json is the HF one
                return size
    return _config_dimension(_read_json(folder / "config.json"), _CONFIG_DIMENSION_KEYS)


def model_type(folder: Path) -> str | None:
    """The sentence-transformers model class a folder was saved from ("SentenceTransformer",
    "CrossEncoder", ...), from ``config_sentence_transformers.json``; None without modules.json."""
    if not (folder / "modules.json").is_file():
        return None
    config = _read_json(folder / "config_sentence_transformers.json")
    return str(config.get("model_type", "SentenceTransformer")) if isinstance(config, dict) else "SentenceTransformer"
