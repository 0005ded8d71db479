"""The slow tests' virtual environments (tests/envs.py), built early and reused (slow: each build makes a venv).

An environment the selected tests need starts building when they are collected and a test that asks for it waits
for that build; a second ask reuses it; changed requirements build a new one from nothing and drop the old one.
Requirements here are pip comment lines: nothing to download, each set its own digest.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import early
import envs

pytestmark = [pytest.mark.slow, pytest.mark.compute]


def test_an_early_build_is_waited_for_then_reused_and_new_requirements_build_again(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("SBERT_DEMO_TEST_ENVS", str(tmp_path / "envs"))
    monkeypatch.setattr(early, "_started", {})
    monkeypatch.setattr(early, "_pool", ThreadPoolExecutor(max_workers=1))  # not behind the run's own early work
    monkeypatch.setitem(envs.WANTED, "empty", lambda: ["# the first set"])
    envs.build_early("empty")
    envs.build_early("empty")  # queued once
    (queued,) = early._started.values()
    folder, built = envs.built_env("empty", ["# the first set"])
    assert built and queued.done() and queued.result() == folder
    assert (folder / "bin" / "python").is_file() and (folder / "requirements.txt").read_text() == "# the first set\n"
    assert folder.name.startswith("empty-") and not list(folder.parent.glob(".empty-*"))  # no staging folder left

    monkeypatch.setattr(early, "_started", {})  # the next run: the folder is there
    envs.build_early("empty")
    assert early.started() == []  # nothing to build
    assert envs.built_env("empty", ["# the first set"]) == (folder, False)

    changed, built = envs.built_env("empty", ["# the second set"])
    assert built and changed != folder and changed.parent == folder.parent
    assert not folder.exists() and (changed / "bin" / "python").is_file()  # the earlier set's environment is gone


def test_two_builders_of_one_environment_build_it_once(tmp_path: Path, monkeypatch) -> None:
    """.ci/run builds the environments beside scripts/setup.sh (``python3 tests/envs.py NAME``) while a test run may
    ask for the same one: the second waits for the first and uses what it built."""
    monkeypatch.setenv("SBERT_DEMO_TEST_ENVS", str(tmp_path / "envs"))
    builds: list[Path] = []
    alone = envs._build_alone
    monkeypatch.setattr(envs, "_build_alone", lambda *args: builds.append(args[2]) or alone(*args))
    requirements = ["# built once"]
    folder = envs.env_folder("empty", requirements)
    with ThreadPoolExecutor(max_workers=2) as pool:
        both = list(pool.map(lambda _: envs._build("empty", requirements, folder, 600), range(2)))
    assert both == [folder, folder] and builds == [folder]
    assert envs.built_env("empty", requirements) == (folder, False)

    # the measured cache waits for a build in progress (tests/conftest.py, pytest_sessionstart)
    other = ["# another set"]
    with ThreadPoolExecutor(max_workers=1) as pool:
        building = pool.submit(envs._build, "empty", other, envs.env_folder("empty", other), 600)
        while len(builds) < 2:  # the build holds its lock
            time.sleep(0.01)
        envs.wait_for_builds()
        assert envs.ready(envs.env_folder("empty", other), other)  # renamed into place before the lock is let go
    assert building.result() == envs.env_folder("empty", other)
