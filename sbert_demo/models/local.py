"""Model folders on disk: whether a folder is complete, the card training writes, where user-added
folders may come from.

A listed folder that is incomplete or corrupt is reported unavailable with the reason, so one broken
folder never breaks the app. Which folders under ``models/`` are listed, and as which kind, the kinds
decide (:func:`sbert_demo.models.kinds.scan`).
"""

from __future__ import annotations

import json
import logging
import os
import struct
from pathlib import Path

from ..config import settings
from .entries import Availability

logger = logging.getLogger(__name__)

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
CARD_FILE = "sbert_demo_card.json"  # written by training: base, objective, scores


def read_card(folder: Path) -> dict:
    try:
        return json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _safetensors_problem(path: Path) -> str | None:
    """Check a safetensors file's header against its size: catches truncated or garbled files."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            (header_len,) = struct.unpack("<Q", handle.read(8))
            if header_len <= 0 or 8 + header_len > size:
                return f"{path.name} is truncated or not a safetensors file"
            header = json.loads(handle.read(header_len))
        end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
        if 8 + header_len + end != size:
            return f"{path.name} is truncated ({size:,} bytes, expected {8 + header_len + end:,})"
    except (OSError, ValueError, KeyError, struct.error, TypeError) as exc:
        return f"{path.name} cannot be read ({exc.__class__.__name__})"
    return None


def folder_problem(folder: Path, layout: str = "sentence-transformers") -> str | None:
    """Why ``folder`` is not a complete model folder of ``layout`` (``sentence-transformers``:
    modules.json and its module folders; ``transformer``: a Hugging Face folder with config.json),
    or None when it looks complete."""
    if not folder.is_dir():
        return f"{folder} does not exist or is not a folder"
    module_dirs = [folder]
    if layout == "sentence-transformers":
        try:
            modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
            module_dirs = [folder / m.get("path", "") for m in modules]
        except OSError:
            return "modules.json is missing"
        except (ValueError, AttributeError):
            return "modules.json is not valid JSON"
        if not modules:
            return "modules.json lists no modules"
        missing = [str(d.relative_to(folder)) for d in module_dirs if not d.is_dir()]
        if missing:
            return f"module folder {missing[0]} is missing"
    elif not (folder / "config.json").is_file():
        return "config.json is missing"
    weights = [d / name for d in module_dirs for name in WEIGHT_FILES if (d / name).is_file()]
    if not weights:
        return "no model weights (model.safetensors) were found"
    for path in weights:
        problem = _safetensors_problem(path) if path.suffix == ".safetensors" else None
        if problem:
            return problem
    return None


def availability(folder: Path, layout: str = "sentence-transformers") -> Availability:
    problem = folder_problem(folder, layout)
    if problem:
        return Availability(False, f"The model folder {folder.name} is incomplete or corrupt: {problem}.")
    return Availability(True, location=folder)


def allowed_roots() -> list[Path]:
    """Folders that user-given model paths must lie in (``SBERT_DEMO_MODEL_PATHS`` adds more)."""
    config = settings()
    return [p.resolve() for p in (config.models_dir, config.cache_dir, *config.model_paths)]


def is_pathlike(text: str) -> bool:
    """Whether what a user typed names a folder rather than a Hub id."""
    return text.startswith(("/", ".", "~")) or "\\" in text or os.sep in text and Path(text).exists()


def allowed_folder(text: str) -> Path:
    """The folder ``text`` names, or a ValueError when it lies outside the folders models may come from."""
    folder = Path(text).expanduser().resolve()
    if not any(folder == root or root in folder.parents for root in allowed_roots()):
        roots = ", ".join(str(r) for r in allowed_roots())
        raise ValueError(
            f"{text} is outside the folders models may be loaded from ({roots}); "
            "copy the model into models/ or list its parent in SBERT_DEMO_MODEL_PATHS."
        )
    return folder
