"""This machine's prepared cache for the tests, made before any test run: ``scripts/setup.sh --dev`` runs it after
sourcing scripts/test-cache.sh, which names the folder (``SBERT_DEMO_TEST_MEASURED``); a test run's start makes it
where this did not (tests/conftest.py, ``prepare_for_runs``)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's sbert_demo, as pytest finds it

import conftest  # noqa: E402  (after the path it imports from)

if __name__ == "__main__":
    if not os.environ.get("SBERT_DEMO_TEST_MEASURED", "").strip():
        sys.exit("No folder to prepare: source scripts/test-cache.sh first (scripts/setup.sh --dev does).")
    started = time.perf_counter()
    conftest.prepare_for_runs()
    print(f"The tests' prepared cache is ready ({time.perf_counter() - started:.0f} s): "
          f"{os.environ['SBERT_DEMO_TEST_MEASURED']}")
