"""Names of trained models: safe as a folder name on every OS, and never a built-in registry key.

A trained model lives in ``models/<name>/`` and its name is its registry key, so the name is
checked before any work starts: letters, digits, ``-``, ``_`` and ``.`` (not first or last), at most 64
characters, no ``..``, no Windows device names, no built-in key.

Example::

    >>> sanitize_model_name("  minilm-stsb ")
    'minilm-stsb'
"""

from __future__ import annotations

import re
from pathlib import Path

from ..config import settings

MAX_NAME_LENGTH = 64
_ALLOWED = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}


def sanitize_model_name(name: str) -> str:
    """The name stripped of surrounding spaces, or ValueError naming the rule it breaks."""
    from ..registry import BUILTIN

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
    if text.lower() in {entry.key.lower() for entry in BUILTIN}:
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
