"""The tests' prepared cache on this machine (scripts/test-cache.sh, sourced by scripts/test.sh, scripts/setup.sh --dev
and .ci/run): one folder per version of the code and machine, outside the clone, kept while a run holds it.

Each check sources the real script in bash, in a scratch root (``SBERT_DEMO_TEST_CACHES``), with ``flock`` holding
other runs' folders as a running test run does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = """. scripts/test-cache.sh
echo "measured=$SBERT_DEMO_TEST_MEASURED"
echo "prepared=$SBERT_DEMO_TEST_PREPARED"
if flock -n -x "$SBERT_DEMO_TEST_MEASURED.inuse" true; then echo "own=free"; else echo "own=held"; fi
"""

pytestmark = pytest.mark.skipif(subprocess.run(["bash", "-c", "command -v flock"], capture_output=True).returncode,
                                reason="util-linux flock is not installed")


def source(root: Path, **extra: str) -> tuple[dict[str, str], str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("SBERT_DEMO_TEST_MEASURED", "SBERT_DEMO_TEST_PREPARED")}
    env.update(SBERT_DEMO_TEST_CACHES=str(root), **extra)
    done = subprocess.run(["bash", "-c", SOURCE], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    said = dict(line.split("=", 1) for line in done.stdout.splitlines())
    return said, done.stderr


def hold(path: Path) -> subprocess.Popen:
    """A shared lock on ``path`` held as a running test run holds its folder's; returned once it is held."""
    holder = subprocess.Popen(["flock", "-s", str(path), "sleep", "120"], start_new_session=True)
    deadline = time.monotonic() + 30
    while subprocess.run(["flock", "-n", "-x", str(path), "true"]).returncode == 0:
        assert time.monotonic() < deadline, "the lock was never taken"
        time.sleep(0.05)
    return holder


def test_one_folder_per_version_made_first_then_linked_and_folders_in_use_kept(tmp_path: Path) -> None:
    root = tmp_path / "test-prepared"
    (root / "0123456789abcdef").mkdir(parents=True)  # another version's folder that a run is using
    (root / "0123456789abcdef" / "prepared.ok").write_text("ok\n")
    (root / "fedcba9876543210").mkdir()  # another version's folder that nobody holds
    (root / "fedcba9876543210.lock").write_text("")
    (root / "00000000ffffffff.inuse").write_text("")  # left by a run of named files that prepared nothing there
    holder = hold(root / "0123456789abcdef.inuse")
    try:
        said, told = source(root)
    finally:
        os.killpg(holder.pid, signal.SIGKILL)  # flock and the command that holds the lock with it
        holder.wait()
    folder = Path(said["measured"])
    assert folder.parent == root and re.fullmatch(r"[0-9a-f]{16}", folder.name), said
    assert said["prepared"] == said["measured"]  # the apps and the measuring tests link one folder
    assert said["own"] == "held"  # while the shell that sourced it (and what it execs) runs
    assert (root / "0123456789abcdef" / "prepared.ok").is_file()  # in use by another run: kept
    assert not (root / "fedcba9876543210").exists() and not (root / "fedcba9876543210.lock").exists()
    assert not (root / "00000000ffffffff.inuse").exists()
    assert (root / "0123456789abcdef.inuse").exists()  # still held
    assert "made by scripts/setup.sh --dev" in told and str(folder) in told

    folder.mkdir()
    (folder / "prepared.ok").write_text("ok\n")
    again, told = source(root)
    assert again["measured"] == str(folder)  # the same code on the same machine: the same folder
    assert "link this machine's prepared cache" in told
    assert not (root / "0123456789abcdef").exists()  # nobody holds it now: the newest alone is kept


def test_a_folder_already_named_is_left_as_it_is(tmp_path: Path) -> None:
    named = tmp_path / "mine"
    (tmp_path / "root" / "fedcba9876543210").mkdir(parents=True)
    said, told = source(tmp_path / "root", SBERT_DEMO_TEST_MEASURED=str(named))
    assert said["measured"] == str(named) and said["prepared"] == ""
    assert (tmp_path / "root" / "fedcba9876543210").is_dir() and told == ""
