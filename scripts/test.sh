#!/usr/bin/env bash
# Run the test suite (fast + browser tests; add "-m slow" for the reference-number checks).
# Tests read the benchmark data shipped in data/ (no environment variable needed).
# Two pytest-xdist workers where the machine has two cores or more: the Gradio pages' browser tests (and the MCP
# tools, served by the same app) one after another in one worker, started first; every other file whole in
# whichever worker is free (tests/conftest.py). SBERT_DEMO_TEST_WORKERS=N sets the number; 0 runs one process.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests' processes share the cores (two workers, the apps they start, Chromium): OpenMP threads that wait sleep
# instead of spinning, so that one process's waiting threads do not take the time another's need (the default run:
# a fifth less CPU for the same tests on a 2-core AMD EPYC; two PyTorch encodings side by side: 5.5 s each instead
# of 10.5 s, 2.9 s alone). The run's measured cache times its runtimes without it, as a deployment does
# (tests/conftest.py, prepare_folder).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
# This machine's prepared cache for the tests, made once for this code and linked by every run (scripts/test-cache.sh).
. scripts/test-cache.sh
cores="$(nproc 2>/dev/null || echo 1)"
workers="${SBERT_DEMO_TEST_WORKERS:-$([ "$cores" -ge 2 ] && echo 2 || echo 0)}"
if [ "$workers" = "0" ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
