"""Naming and saving a trained model so that the registry only ever sees complete folders.

A trained model lives in ``models/<name>/`` and its name is its registry key, so the name is
checked before any work starts (:func:`sanitize_model_name`): letters, digits, ``-``, ``_`` and
``.`` (not first or last), at most 64 characters, no ``..``, no Windows device names, no built-in key.

The model is written to ``models/.tmp-<name>-<random>`` (dot-folders are never listed), checked,
and renamed to ``models/<name>`` in one ``os.replace``: a cancelled or crashed run leaves at most
a hidden folder, which a later save removes once it is an hour old. Overwriting moves the old
folder aside to a dot-folder first, swaps, then deletes it, so the name never points at half a model.

Besides the sentence-transformers files, a model gets ``README.md`` (a model card for people) and
``sbert_demo_card.json`` (the same facts for the app: label, summary, base, objective, data, scores).
``SentenceTransformer.save`` is called with ``create_model_card=False``: its own card generation
looks up base models and datasets on the Hub, which stalls offline.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from ..benchmark.score_changes import score_changes
from ..config import settings
from ..formatting import x100
from ..models.kinds import builtin_entries
from ..models.local import CARD_FILE, folder_problem

logger = logging.getLogger(__name__)

MAX_NAME_LENGTH = 64
_ALLOWED = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


def sanitize_model_name(name: str) -> str:
    """The name stripped of surrounding spaces, or ValueError naming the rule it breaks."""
    text = (name or "").strip() if isinstance(name, str) else ""
    if not text:
        raise ValueError("Give the new model a name (letters, digits, '-', '_' or '.').")
    if "/" in text or "\\" in text:
        raise ValueError(f"The model name {text!r} contains a path separator; use a plain name like 'my-model'.")
    if ".." in text:
        raise ValueError(f"The model name {text!r} contains '..'; use a plain name like 'my-model'.")
    if len(text) > MAX_NAME_LENGTH:
        raise ValueError(f"The model name is {len(text)} characters long; the limit is {MAX_NAME_LENGTH}.")
    if text.startswith("."):
        raise ValueError(f"The model name {text!r} starts with '.'; such folders are hidden work in progress.")
    if text.endswith("."):  # Windows drops a final dot: 'model.' would write into 'model'
        raise ValueError(f"The model name {text!r} ends with '.'; remove it (some systems drop it, so it "
                         f"could land on {text.rstrip('.')!r}).")
    if not _ALLOWED.match(text):
        raise ValueError(f"The model name {text!r} may only contain letters, digits, '-', '_' and '.'.")
    if text.split(".")[0].upper() in _WINDOWS_RESERVED:
        raise ValueError(f"{text!r} is a reserved device name on Windows; choose another model name.")
    if text.lower() in {entry.key.lower() for entry in builtin_entries()}:
        raise ValueError(f"{text!r} is the name of a built-in model; choose another name for the trained one.")
    return text


def output_folder(name: str, overwrite: bool = False, models_dir: Path | None = None) -> Path:
    """``models/<name>`` for a new model; ValueError when it exists and ``overwrite`` is not set."""
    name = sanitize_model_name(name)
    folder = (models_dir or settings().models_dir) / name
    if folder.exists() and not overwrite:
        raise ValueError(f"A model named {name!r} already exists in {folder.parent}; choose another name "
                         "or allow overwriting it.")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} exists and is not a folder; choose another model name.")
    return folder


STALE_AFTER_S = 3600.0
_WORK_PREFIXES = (".tmp-", ".old-")


def remove_stale_work(models_dir: Path, older_than_s: float = STALE_AFTER_S) -> list[Path]:
    """Delete hidden work folders left by crashed saves; return what was removed."""
    removed = []
    if not models_dir.is_dir():
        return removed
    for folder in models_dir.iterdir():
        if folder.name.startswith(_WORK_PREFIXES) and folder.is_dir():
            if time.time() - folder.stat().st_mtime > older_than_s:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _write_text_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def write_card(folder: Path, card: dict[str, Any]) -> None:
    """(Re)write ``sbert_demo_card.json`` and ``README.md``; neither changes the model's identity."""
    _write_text_atomically(folder / CARD_FILE, json.dumps(card, indent=2, ensure_ascii=False) + "\n")
    _write_text_atomically(folder / "README.md", render_readme(card))


def save_model(model: Any, name: str, card: dict[str, Any], overwrite: bool = False,
               models_dir: Path | None = None) -> Path:
    """Write ``model`` and its card to ``models/<name>`` atomically; return the folder."""
    folder = output_folder(name, overwrite, models_dir)
    folder.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_work(folder.parent)
    work = folder.parent / f".tmp-{folder.name}-{secrets.token_hex(4)}"
    try:
        model.save(str(work), create_model_card=False)
        write_card(work, card)
        _match_permissions(work)
        problem = folder_problem(work)
        if problem:
            raise ValueError(f"The saved model is incomplete ({problem}); nothing was kept.")
        _move_into_place(work, folder, overwrite)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    logger.info("Saved %s", folder)
    return folder


def _match_permissions(folder: Path) -> None:
    """Give every file the permissions of ``modules.json`` (safetensors writes weights as 0600)."""
    mode = (folder / "modules.json").stat().st_mode & 0o777
    for path in folder.rglob("*"):
        if path.is_file() and path.stat().st_mode & 0o777 != mode:
            path.chmod(mode)


def _move_into_place(work: Path, folder: Path, overwrite: bool) -> None:
    if not folder.exists():
        try:
            os.replace(work, folder)
            return
        except OSError:
            if not folder.exists():
                raise
    if not overwrite:  # created by someone else while this run trained
        raise ValueError(f"A model named {folder.name!r} appeared while training; choose another name "
                         "or allow overwriting it.")
    old = folder.parent / f".old-{folder.name}-{secrets.token_hex(4)}"
    os.replace(folder, old)
    try:
        os.replace(work, folder)
    except BaseException:
        os.replace(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)


def render_readme(card: dict[str, Any]) -> str:
    """A markdown model card from the JSON card."""
    rows = "\n".join(f"| STSb {row.split} | {x100(row.before)} | {x100(row.after)} |"
                     for row in score_changes(card.get("before"), card.get("after")))
    params = "\n".join(f"| {key} | {value} |" for key, value in (card.get("hyperparameters") or {}).items())
    return f"""# {card.get("label", "")}

{card.get("summary", "")}

Trained with sbert-demo (sentence-transformers); load it with
`SentenceTransformer("<this folder>")`.

- **Base model:** {card.get("base", "-")}
- **Objective:** {card.get("objective", "-")}
- **Training data:** {card.get("data", "-")}
- **Device:** {card.get("device", "-")}
- **Training time:** {card.get("duration_s", 0):.1f} s
- **Created:** {card.get("created", "-")}

## STS benchmark (Spearman of cosine similarity x 100)

| split | before (base) | after |
|---|---|---|
{rows}

## Hyperparameters

| setting | value |
|---|---|
{params}
"""
