"""A published folder stays the user's: ``publish`` replaces only the files it wrote there.

``publish`` builds a site in a staging folder inside the target (the same file system, so every file moves
in with one rename), then moves its files in and keeps their list in the target's :data:`MANIFEST`, with
whether it made the folder. Publishing again replaces and removes only the files of that list: a
``CNAME``, a ``.git`` folder or the user's own notes stay where they are. A folder that holds anything and
no such list is someone else's and is refused, and so is a site whose file would land on one that
``publish`` did not write. Every refusal is a sentence; nothing is touched before it is decided.

Example::

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "blog").mkdir(); _ = (root / "blog" / "post.md").write_text("mine")
    >>> claim(root / "blog")
    Traceback (most recent call last):
    ...
    ValueError: ... holds other files, and publish did not write it (it has no .sbert-demo-publish.json); publish into a new or empty folder, or into one publish wrote before.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MANIFEST = ".sbert-demo-publish.json"
STAGING_PREFIX = ".sbert-demo-staging-"
# Hugging Face's limits on a repository (a Space is one): files and folders a folder, files a repository.
HUB_FOLDER_LIMIT, HUB_FILES_LIMIT = 10_000, 100_000


@dataclass(frozen=True)
class Target:
    """Where a site is published: the folder, whether ``publish`` made it, and the files it wrote there before."""

    folder: Path
    made: bool
    owned: frozenset[str]  # paths relative to the folder, with '/'


def claim(folder: Path) -> Target:
    """The folder ``publish`` may write: a new one, an empty one, or one it wrote before (its manifest says
    which files are its own); else a ValueError that says why."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise ValueError(f"{folder} is not a folder; name a folder to publish into.")
    if not folder.exists():
        return Target(folder, True, frozenset())
    manifest = folder / MANIFEST
    if not manifest.is_file():
        if any(entry.name != MANIFEST for entry in folder.iterdir()):
            raise ValueError(f"{folder} holds other files, and publish did not write it (it has no {MANIFEST}); "
                             "publish into a new or empty folder, or into one publish wrote before.")
        return Target(folder, False, frozenset())
    try:
        listed = json.loads(manifest.read_text(encoding="utf-8"))
        files, made = listed["files"], bool(listed.get("made", False))
        if not isinstance(files, list) or not all(isinstance(p, str) and _relative(p) for p in files):
            raise TypeError(files)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{folder / MANIFEST} is not the list publish keeps of what it wrote ({type(exc).__name__}); "
                         "publish into a new folder instead.") from None
    return Target(folder, made, frozenset(files))


def staging(target: Target) -> Path:
    """A new staging folder inside the target (made, with the target when publish makes it)."""
    target.folder.mkdir(parents=True, exist_ok=True)
    made = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=target.folder))
    made.chmod(0o755)  # mkdtemp's folder is its owner's only: a web server running as another user reads the site
    return made


def discard(target: Target, built: Path) -> None:
    """A failed publish: the staging folder removed, and the target too where publish made it and it is empty."""
    shutil.rmtree(built, ignore_errors=True)
    if target.made and target.folder.is_dir() and not any(target.folder.iterdir()):
        target.folder.rmdir()


def install(target: Target, built: Path) -> list[Path]:
    """Move the site in ``built`` into the target, replacing only what publish wrote before and removing what
    it wrote before and no longer writes; the site's files, in the target. A ValueError, before anything
    moves, where a file would land on one publish did not write."""
    new = sorted(PurePosixPath(p.relative_to(built)).as_posix() for p in built.rglob("*") if p.is_file())
    clashes = [p for p in new if p not in target.owned and _taken(target.folder, p)]
    if clashes:
        raise ValueError(f"Publishing would write over {', '.join(clashes[:3])} in {target.folder}, which publish did "
                         "not write; move them away or publish into another folder.")
    _write_manifest(target, target.owned | set(new))  # an interrupted move still knows every file it may own
    for name in new:
        destination = target.folder / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if destination.is_dir() and not destination.is_symlink():
            shutil.rmtree(destination)  # a folder publish wrote before where it now writes a file
        os.replace(built / name, destination)
    for name in sorted(target.owned - set(new)):
        stale = target.folder / name
        if stale.is_file() or stale.is_symlink():
            stale.unlink()
            _prune(target.folder, stale.parent)
    shutil.rmtree(built, ignore_errors=True)
    _write_manifest(target, set(new))
    return [target.folder / name for name in new]


def _taken(folder: Path, name: str) -> bool:
    """Whether ``name`` (or a folder on its way) is something in ``folder`` that is not a folder to write into."""
    path = folder
    for part in PurePosixPath(name).parts[:-1]:
        path = path / part
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            return True
    final = folder / name
    return final.is_symlink() or final.exists()


def _prune(folder: Path, emptied: Path) -> None:
    """Remove the folders publish emptied, up to the target (never one that still holds anything)."""
    while emptied != folder and folder in emptied.parents:
        try:
            emptied.rmdir()
        except OSError:  # not empty: the user's files are in it
            return
        emptied = emptied.parent


def _write_manifest(target: Target, files: set[str]) -> None:
    body = json.dumps({"written_by": "sbert-demo publish", "made": target.made, "files": sorted(files)}, indent=1)
    scratch = target.folder / (MANIFEST + ".tmp")
    scratch.write_text(body + "\n", encoding="utf-8")
    os.replace(scratch, target.folder / MANIFEST)


def _relative(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name and "\x00" not in name


def layout(folder: Path) -> tuple[int, str, int]:
    """(the most entries any folder holds, that folder relative to ``folder``, the files in all): what a host's
    limits are about (:data:`HUB_FOLDER_LIMIT` a folder, :data:`HUB_FILES_LIMIT` in all on Hugging Face)."""
    largest, where, total = 0, ".", 0
    for path, folders, files in os.walk(folder):
        total += len(files)
        if len(folders) + len(files) > largest:
            largest, where = len(folders) + len(files), os.path.relpath(path, folder)
    return largest, where, total
