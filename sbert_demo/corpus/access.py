"""Where a visitor's corpus may come from: an allow list, never a deny list.

A visitor of the app names a corpus in one of three ways, and only these:

* **their own upload**: a file Gradio received from their browser (Gradio gives a handler only paths
  in its upload folder; a path typed anywhere is never read);
* **a Hugging Face dataset id** (``name`` or ``owner/name``, with an optional config and split), read
  from the Hub without the operator's token, so only public datasets are reachable;
* **a local dataset folder** only under a root the operator names in ``SBERT_DEMO_DATASET_ROOTS``
  (none by default, so none on a Space), never inside the cache folder, the models folder or Gradio's
  temporary folder, whichever root holds them.

A value shaped like a Hub id that also names something on this machine (``data``, ``models/x``,
relative to where the app runs) is a local path, and judged as one: ``datasets.load_dataset`` would
read a local folder of that name before it asked the Hub.

The command line is the user at the keyboard: it builds its sources without ``visitor=True`` and
reads any path it is given.

Example::

    >>> from pathlib import Path
    >>> check_visitor_dataset("sentence-transformers/stsb", roots=(), forbidden=())
    'sentence-transformers/stsb'
    >>> check_visitor_dataset("/etc", roots=(), forbidden=())
    Traceback (most recent call last):
    ...
    ValueError: '/etc' is not a Hugging Face dataset id; name one like owner/name (e.g. sentence-transformers/stsb), or upload a file.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

# A Hub repository id: an optional owner, then a name; letters, digits, '-', '_' and '.', no '--' or '..',
# neither starting nor ending with '-' or '.', at most 96 characters each (huggingface_hub's rule).
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"^(?:{_PART}/)?{_PART}$")
CONFIG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
SPLIT = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# datasets' packaged readers read whatever data files they are given: never a visitor's to name.
PACKAGED = frozenset({"parquet", "csv", "json", "text", "arrow", "pandas", "imagefolder", "audiofolder",
                      "videofolder", "webdataset", "xml", "sql", "generator", "cache"})
EXAMPLE = "owner/name (e.g. sentence-transformers/stsb)"


def gradio_temp_dir() -> Path:
    """Gradio's folder for uploads and served files (``GRADIO_TEMP_DIR``, else the system's temp/gradio)."""
    return Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):  # a loop of links, a name too long: nothing to read there
        return Path("/nonexistent")


def _names_a_local_path(value: str) -> bool:
    if value.startswith(("/", ".", "~", "\\")) or "\\" in value or value.count("/") > 1 or "\x00" in value:
        return True
    try:
        return Path(value).expanduser().exists()
    except (OSError, ValueError):
        return True


def check_visitor_dataset(value: str, roots: Iterable[Path], forbidden: Iterable[Path]) -> str:
    """``value`` when a visitor may read it: a Hub id that names nothing here, or a local folder under one of
    ``roots`` and under none of ``forbidden``; else a ValueError that says what may be named."""
    value = value.strip()
    roots = [_resolved(Path(r)) for r in roots]
    if not _names_a_local_path(value):
        if not HUB_ID.match(value) or "--" in value or ".." in value:
            raise ValueError(f"{value[:100]!r} is not a Hugging Face dataset id; name one like {EXAMPLE}.")
        if value.lower() in PACKAGED:
            raise ValueError(f"{value!r} reads local data files; name a dataset on the Hub, like {EXAMPLE}, or "
                             "upload a file.")
        return value
    if not roots:
        raise ValueError(f"{value[:100]!r} is not a Hugging Face dataset id; name one like {EXAMPLE}, or upload a file.")
    folder = _resolved(Path(value))
    if any(_inside(folder, _resolved(Path(f))) for f in forbidden) or not any(_inside(folder, r) for r in roots):
        listed = ", ".join(str(r) for r in roots)
        raise ValueError(f"{value[:100]!r} is not a Hugging Face dataset id, nor a dataset folder this server shares "
                         f"(those lie under {listed}); name one like {EXAMPLE}, or upload a file.")
    if not folder.is_dir():
        raise ValueError(f"There is no dataset folder {value[:100]!r} here; check the name.")
    return str(folder)


def check_visitor_parts(config: str | None, split: str) -> None:
    """The config and split of a visitor's dataset are names, never paths or patterns."""
    if config and not CONFIG.match(config):
        raise ValueError(f"{config[:60]!r} is not a dataset config name (letters, digits, '-', '_', '.').")
    if not SPLIT.match(split or ""):
        raise ValueError(f"{(split or '')[:60]!r} is not a split name (e.g. train, validation, test).")


def visitor_roots() -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(the roots the operator shares, the folders never shared) from the settings."""
    from ..config import settings

    config = settings()
    return tuple(config.dataset_roots), (config.cache_dir, config.models_dir, gradio_temp_dir())
