"""Model folders on disk: what ``models/`` holds, whether a folder is complete, and user-added models.

A folder under ``models/`` is listed when it is a sentence-transformers folder (``modules.json``).
Folders whose names start with a dot are work in progress (training builds there and renames at the
end) and are never listed. A listed folder that is incomplete or corrupt is reported unavailable
with the reason, so one broken folder never breaks the app.
"""

from __future__ import annotations

import json
import logging
import os
import re
import struct
from pathlib import Path

from ..config import settings
from ..hub import cached_snapshot, hub_reachable
from .entries import POOLINGS, Availability, ModelEntry

logger = logging.getLogger(__name__)

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
CARD_FILE = "sbert_demo_card.json"  # written by training: base, objective, scores
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


def scan(models_dir: Path) -> list:
    """Entries for the sentence-transformers folders directly under ``models_dir``."""
    if not models_dir.is_dir():
        return []
    entries = []
    for folder in sorted(models_dir.iterdir(), key=lambda p: p.name.lower()):
        if folder.name.startswith(".") or not folder.is_dir():
            continue
        if not (folder / "modules.json").exists() and (folder / "config.json").is_file():
            continue  # a plain transformer copy (e.g. models/bert-base-uncased), used as a source
        card = read_card(folder)
        entries.append(
            ModelEntry(
                key=folder.name,
                label=card.get("label") or folder.name,
                family="fine-tuned",
                kind="sentence-transformers",
                source=str(folder.resolve()),
                description=card.get("summary", "Trained locally."),
            )
        )
    return entries


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


def folder_problem(folder: Path, kind: str = "sentence-transformers") -> str | None:
    """Why ``folder`` is not a complete model of ``kind``, or None when it looks complete."""
    if not folder.is_dir():
        return f"{folder} does not exist or is not a folder"
    module_dirs = [folder]
    if kind == "sentence-transformers":
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


def availability(folder: Path, kind: str = "sentence-transformers"):
    problem = folder_problem(folder, kind)
    if problem:
        return Availability(False, f"The model folder {folder.name} is incomplete or corrupt: {problem}.")
    return Availability(True, location=folder)


def allowed_roots() -> list[Path]:
    """Folders that user-given model paths must lie in (``SBERT_DEMO_MODEL_PATHS`` adds more)."""
    config = settings()
    extra = [Path(p).expanduser() for p in os.environ.get("SBERT_DEMO_MODEL_PATHS", "").split(os.pathsep) if p]
    return [p.resolve() for p in (config.models_dir, config.cache_dir, *extra)]


def _is_pathlike(text: str) -> bool:
    return text.startswith(("/", ".", "~")) or "\\" in text or os.sep in text and Path(text).exists()


def entry_for_user_model(name_or_path: str, pooling: str = "mean"):
    """Build (but do not register) an entry for a Hub id or a local folder given by a user."""
    if name_or_path is not None and not isinstance(name_or_path, str):
        raise ValueError(f"A model id or folder is text, not a {type(name_or_path).__name__}.")
    text = (name_or_path or "").strip()
    if not text:
        raise ValueError("Enter a Hugging Face model id (like sentence-transformers/all-MiniLM-L12-v2) or a folder.")
    if pooling not in POOLINGS:
        raise ValueError(f"Pooling {pooling!r} is not valid; choose one of {', '.join(POOLINGS)}.")
    if _is_pathlike(text):
        folder = Path(text).expanduser().resolve()
        if not any(folder == root or root in folder.parents for root in allowed_roots()):
            roots = ", ".join(str(r) for r in allowed_roots())
            raise ValueError(
                f"{text} is outside the folders models may be loaded from ({roots}); "
                "copy the model into models/ or list its parent in SBERT_DEMO_MODEL_PATHS."
            )
        if (folder / "modules.json").is_file():
            kind, family, key = "sentence-transformers", "siamese", folder.name
        elif (folder / "config.json").is_file():
            kind, family, key = "transformer", "naive", f"{folder.name}@{pooling}"
        else:
            raise ValueError(f"{text} holds no model: expected modules.json or config.json in it.")
        return ModelEntry(key=key, label=key, family=family, kind=kind, source=str(folder),
                          pooling=pooling if kind == "transformer" else None)
    if ".." in text or not _HUB_ID.match(text):
        raise ValueError(
            f"{text!r} is not a valid Hugging Face model id; ids look like 'org/name' "
            "(letters, digits, '.', '_' and '-')."
        )
    kind = _hub_kind(text)
    family = "siamese" if kind == "sentence-transformers" else "naive"
    key = text if kind == "sentence-transformers" else f"{text}@{pooling}"
    return ModelEntry(key=key, label=key, family=family, kind=kind, source=text,
                      pooling=pooling if kind == "transformer" else None, hub_ids=(text,))


def _hub_kind(repo_id: str) -> str:
    """sentence-transformers when the repo (cached or on the Hub) has modules.json."""
    snapshot = cached_snapshot(repo_id)
    if snapshot is not None:
        return "sentence-transformers" if (snapshot / "modules.json").is_file() else "transformer"
    if hub_reachable():
        try:
            from huggingface_hub import file_exists

            return "sentence-transformers" if file_exists(repo_id, "modules.json") else "transformer"
        except Exception as exc:  # the id may not exist; availability will say so when loading
            logger.info("Could not inspect %s on the Hub: %s", repo_id, exc)
    return "transformer"
