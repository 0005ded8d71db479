#!/usr/bin/env bash
# Run the test suite (fast + browser tests; add "-m slow" for the reference-number checks).
# Tests read the benchmark data shipped in data/ (no environment variable needed).
# Two pytest-xdist workers: the Gradio pages' browser tests one after another in one of them (first), every other
# test file whole in whichever is free (tests/conftest.py). SBERT_DEMO_TEST_WORKERS=0 runs everything in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${SBERT_DEMO_TEST_WORKERS:-2}"
if [ "$workers" = "0" ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
