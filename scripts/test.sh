#!/usr/bin/env bash
# Run the test suite (fast + browser tests; add "-m slow" for the reference-number checks).
# The offline STS/NLI data is read from $SBERT_DEMO_DATA (default: ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
export SBERT_DEMO_DATA="${SBERT_DEMO_DATA:-$(cd .. && pwd)/shared/data}"
exec .venv/bin/python -m pytest "$@"
