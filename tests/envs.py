"""Virtual environments the slow tests install, built once per machine and reused while their requirements
are unchanged.

An environment lives outside the clone (``$SBERT_DEMO_TEST_ENVS``, by default ``~/.cache/sbert-demo/test-envs``)
in a folder named after the SHA-256 of what it installs (the requirements' text and the Python that runs
it). It is built in a temporary folder and renamed into place once ``pip`` succeeded, so a half-built one is
never reused; changed requirements give a new name, so the check installs from nothing again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

# How a ZeroGPU Space's interpreter answers environment markers (hub-docs spaces-zerogpu.md: CPython 3.10.13).
ZERO_GPU_PYTHON = {"python_version": "3.10", "python_full_version": "3.10.13", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "sys_platform": "linux", "platform_system": "Linux",
                   "platform_machine": "x86_64", "os_name": "posix"}


def envs_root() -> Path:
    return Path(os.environ.get("SBERT_DEMO_TEST_ENVS") or Path.home() / ".cache" / "sbert-demo" / "test-envs")


def requirements_for(path: Path, environment: dict[str, str]) -> list[str]:
    """``path``'s requirements (no ``-r`` lines) whose markers hold in ``environment``, markers dropped: the
    set an interpreter answering ``environment`` installs (pip judges markers by the Python it runs on)."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if not text or text.startswith("-"):
            continue
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            requirement.marker = None
            kept.append(str(requirement))
    return kept


def built_env(name: str, requirements: list[str], timeout: int = 1800) -> tuple[Path, bool]:
    """The environment installing ``requirements`` (lines for pip): (its folder, whether it was built now)."""
    text = "\n".join(requirements) + "\n"
    digest = hashlib.sha256(f"{sys.version}\n{text}".encode()).hexdigest()[:16]
    root = envs_root()
    folder = root / f"{name}-{digest}"
    if (folder / "bin" / "python").is_file() and (folder / "requirements.txt").read_text() == text:
        return folder, False
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".{folder.name}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(staging)], check=True)
    (staging / "requirements.txt").write_text(text)
    install = subprocess.run([str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r",
                              str(staging / "requirements.txt")], capture_output=True, text=True, timeout=timeout)
    if install.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise AssertionError(f"pip install for {name} failed:\n{install.stderr[-3000:]}")
    # a venv's scripts name their folder: rebuilt paths would point at the staging folder, so move by renaming
    # and run the interpreter as ``bin/python -m ...`` only
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)
    for old in root.glob(f"{name}-*"):
        if old != folder:
            shutil.rmtree(old, ignore_errors=True)  # an earlier set of requirements
    return folder, True
