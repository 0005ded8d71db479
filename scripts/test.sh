#!/usr/bin/env bash
# Run the test suite (fast + browser tests; add "-m slow" for the reference-number checks).
# Tests read the benchmark data shipped in data/ (no environment variable needed).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest "$@"
