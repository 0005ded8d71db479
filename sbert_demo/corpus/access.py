"""Where a visitor's corpus may come from: an allow list, never a deny list.

A visitor of the app names a corpus in one of three ways, and only these:

* **their own upload**: a file Gradio received from their browser (Gradio gives a handler only paths
  in its upload folder; a path typed anywhere is never read);
* **a Hugging Face dataset id** (``name`` or ``owner/name``, with an optional config and split), read
  from the Hub without the operator's token, so only public datasets are reachable;
* **a local dataset folder** only under a root the operator names in ``SBERT_DEMO_DATASET_ROOTS``
  (none by default, so none on a Space). Roots and folders are checked as sets against the app's private
  folders (:func:`private_folders`: the cache folder, the models folder, Gradio's upload folder, where the
  app writes exports): a root that holds one of them or lies inside one is refused when the app starts
  (:func:`check_roots`, a sentence naming the setting), and a folder named by a visitor that holds or
  lies in one is refused too. Every file read there is resolved first (:func:`check_visitor_folder`,
  :func:`check_visitor_files`): a link that leads out of its root is refused with a sentence, and so is a
  ``save_to_disk`` folder whose state names a file outside it.

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

import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
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
MAX_FOLDER_ENTRIES = 100_000  # a shared dataset folder is walked whole before it is read: past this, refused
ROOTS_SETTING = "SBERT_DEMO_DATASET_ROOTS"


class NotShared(ValueError):
    """A file a shared dataset folder would have its reader read that lies outside the folders shared (a link, a
    saved state, a README's pattern): said as it is, never as a dataset that could not be loaded."""


@dataclass(frozen=True)
class Private:
    """A folder no visitor may read by naming it: neither it, a folder inside it (``inside_too``), nor a
    folder that holds it."""

    path: Path
    what: str
    inside_too: bool = True

    def overlaps(self, folder: Path) -> str | None:
        """How ``folder`` (resolved) meets this folder ("holds", "lies inside"), or None."""
        mine = _resolved(self.path)
        if _inside(mine, folder):
            return "holds"
        if self.inside_too and _inside(folder, mine):
            return "lies inside"
        return None


def private_folders(cache_dir: Path, models_dir: Path) -> tuple[Private, ...]:
    """The app's folders that hold what is not a visitor's to read: other visitors' uploads and exports, the
    cache (kept corpora, embeddings, boards), trained models."""
    return (Private(cache_dir, "the app's cache folder (SBERT_DEMO_CACHE)"),
            Private(models_dir, "the models folder (SBERT_DEMO_MODELS)"),
            Private(gradio_temp_dir(), "Gradio's folder of visitors' uploads (GRADIO_TEMP_DIR)"),
            # exports are written to the system's temporary folder: a root holding it is refused, not one inside it
            Private(Path(tempfile.gettempdir()), "the temporary folder visitors' exports are written to", False))


def check_roots(roots: Iterable[Path], private: Iterable[Private]) -> None:
    """When the app starts: a ValueError naming :data:`ROOTS_SETTING` where a root holds or lies inside a
    private folder (visitors naming it could read other visitors' uploads or the cache)."""
    private = list(private)
    for root in roots:
        folder = _resolved(Path(root))
        met = [f"{how} {kept.what}, {kept.path}" for kept in private if (how := kept.overlaps(folder))]
        if met:
            raise ValueError(f"{ROOTS_SETTING} names {root}, which {'; and '.join(met)}: visitors naming it could "
                             "read other visitors' files. Name folders that hold only the datasets to share.")


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


def check_visitor_dataset(value: str, roots: Iterable[Path], forbidden: Iterable[Private | Path]) -> str:
    """``value`` when a visitor may read it: a Hub id that names nothing here, or a local folder under one of
    ``roots``, that neither holds nor lies inside a ``forbidden`` folder, whose files and links all stay under
    its root; else a ValueError that says what may be named."""
    value = value.strip()
    roots = [_resolved(Path(r)) for r in roots]
    private = [f if isinstance(f, Private) else Private(Path(f), str(f)) for f in forbidden]
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
    root = _shared_root(folder, roots, private)
    if root is None:
        listed = ", ".join(str(r) for r in roots)
        raise ValueError(f"{value[:100]!r} is not a Hugging Face dataset id, nor a dataset folder this server shares "
                         f"(those lie under {listed}); name one like {EXAMPLE}, or upload a file.")
    if not folder.is_dir():
        raise ValueError(f"There is no dataset folder {value[:100]!r} here; check the name.")
    check_visitor_folder(folder, root)
    return str(folder)


def check_visitor_folder(folder: Path, root: Path) -> None:
    """Every entry of a shared ``folder`` (walked whole, and the folders its links lead to) stays under ``root``
    once resolved, and a ``save_to_disk`` state names only files beside it; else a ValueError that says which
    does not."""
    queue, walked, seen = [folder], set(), 0
    while queue:
        top = queue.pop()
        if top in walked:
            continue
        walked.add(top)
        for where, folders, files in os.walk(top, followlinks=False):
            seen += len(folders) + len(files)
            if seen > MAX_FOLDER_ENTRIES:
                raise ValueError(f"The dataset folder {folder.name} holds more than {MAX_FOLDER_ENTRIES:,} files and "
                                 "folders; share a folder that holds one dataset.")
            for name in folders + files:
                path = Path(where) / name
                if path.is_symlink():
                    target = _resolved(path)
                    if not _inside(target, root):
                        raise NotShared(f"{name} in the dataset folder {folder.name} is a link to a file outside "
                                         "the folders this server shares; it is not read.")
                    if target.is_dir():
                        queue.append(target)  # a link to a folder under the root: what it holds is checked too
                elif name == "state.json":
                    _check_state(path, folder)
            folders[:] = [name for name in folders if not (Path(where) / name).is_symlink()]


def check_visitor_files(files: Iterable[str], roots: Iterable[Path], forbidden: Iterable[Private]) -> None:
    """The data files a dataset folder's loader resolved (its README may name patterns): each one, resolved,
    under a root and in no private folder; else a :class:`NotShared`."""
    roots = [_resolved(Path(r)) for r in roots]
    for name in files:
        if _shared_root(_resolved(Path(str(name))), roots, forbidden) is None:
            raise NotShared(f"The dataset names a data file outside the folders this server shares "
                             f"({Path(str(name)).name}); it is not read.")


def _check_state(state: Path, folder: Path) -> None:
    try:
        listed = json.loads(state.read_text(encoding="utf-8")).get("_data_files", [])
        names = [item["filename"] for item in listed]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        raise ValueError(f"{state.relative_to(folder)} in the dataset folder {folder.name} is not a saved dataset's "
                         "state; save the dataset again.") from None
    if not all(isinstance(n, str) and n and "/" not in n and "\\" not in n and n not in (".", "..") for n in names):
        raise NotShared(f"{state.relative_to(folder)} in the dataset folder {folder.name} names files outside its "
                         "folder; they are not read.")


def _shared_root(path: Path, roots: Iterable[Path], private: Iterable[Private]) -> Path | None:
    """The root ``path`` (resolved) lies under, where that root is shareable (checked again per request) and
    ``path`` neither holds nor lies in a private folder; else None."""
    private = list(private)
    if any(p.overlaps(path) for p in private):
        return None
    return next((root for root in roots if _inside(path, root) and not any(p.overlaps(root) for p in private)), None)


def check_visitor_parts(config: str | None, split: str) -> None:
    """The config and split of a visitor's dataset are names, never paths or patterns."""
    if config and not CONFIG.match(config):
        raise ValueError(f"{config[:60]!r} is not a dataset config name (letters, digits, '-', '_', '.').")
    if not SPLIT.match(split or ""):
        raise ValueError(f"{(split or '')[:60]!r} is not a split name (e.g. train, validation, test).")


def check_configured_roots() -> None:
    """:func:`check_roots` on the settings' roots, where the app starts."""
    check_roots(*visitor_roots())


def visitor_roots() -> tuple[tuple[Path, ...], tuple[Private, ...]]:
    """(the roots the operator shares, the folders never shared) from the settings."""
    from ..config import settings

    config = settings()
    return tuple(config.dataset_roots), private_folders(config.cache_dir, config.models_dir)
