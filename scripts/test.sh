#!/usr/bin/env bash
# Run the test suite (fast + browser tests; add "-m slow" for the reference-number checks).
# Tests read the benchmark data shipped in data/ (no environment variable needed).
# One process by default. SBERT_DEMO_TEST_WORKERS=2 runs two pytest-xdist workers: the Gradio pages' browser tests
# one after another in one of them (first), every other test file whole in whichever is free (tests/conftest.py).
# Not the default: on 2 cores an STS-tab run in a browser test twice never finished while the other worker was busy.
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${SBERT_DEMO_TEST_WORKERS:-0}"
if [ "$workers" = "0" ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
