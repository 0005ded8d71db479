# Sourced by scripts/test.sh, scripts/setup.sh --dev and .ci/run: the tests' prepared cache folder on this machine.
# `python -m sbert_demo prepare` as a deployment runs it (mpnet joined, every candidate runtime's ONNX Runtime and
# OpenVINO artefacts built and timed, UMAP compiled, static-minilm distilled; tests/conftest.py, prepare_folder),
# made once, on the quiet machine (scripts/setup.sh --dev makes it; a whole test run whose folder is missing makes it
# before its first test, a run of named files prepares for itself as before), and linked by every test run after: the
# apps the tests start and the tests' own cache folders.
# It lives outside the clone ($SBERT_DEMO_TEST_CACHES, by default ~/.cache/sbert-demo/test-prepared; about 2 GB), in
# a folder named after what makes it: what is installed (the requirements, setup.sh, the Python), the app's code and
# data, the tests' prepare, this CPU and its core count. A change to any of them prepares (and measures) again from
# nothing. Each run holds a shared lock on its folder while it runs; another version's folder that no run holds is
# removed, so the machine keeps the folders in use and the newest.
# Sets SBERT_DEMO_TEST_MEASURED and SBERT_DEMO_TEST_PREPARED (tests/conftest.py), unless they are set already.
if [ -z "${SBERT_DEMO_TEST_MEASURED:-}" ]; then
  _tests_root="${SBERT_DEMO_TEST_CACHES:-$HOME/.cache/sbert-demo/test-prepared}"
  _tests_key="$( { python3 --version; find requirements*.txt scripts/setup.sh scripts/test-cache.sh sbert_demo data \
    tests/conftest.py tests/test_browser.py -type f -not -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum;
    grep -m2 -E '^(model name|flags)' /proc/cpuinfo; nproc; } | sha256sum | cut -c1-16)"
  export SBERT_DEMO_TEST_MEASURED="$_tests_root/$_tests_key"
  export SBERT_DEMO_TEST_PREPARED="${SBERT_DEMO_TEST_PREPARED:-$SBERT_DEMO_TEST_MEASURED}"
  mkdir -p "$_tests_root"
  if command -v flock >/dev/null; then
    exec 9>"$SBERT_DEMO_TEST_MEASURED.inuse"  # held by this shell and what it execs (pytest) until it ends
    flock -s 9
    for _tests_old in "$_tests_root"/*; do  # a version's folder, its .lock and .inuse files, whichever are left
      _tests_old="${_tests_old%.lock}"
      _tests_old="${_tests_old%.inuse}"
      { [ -e "$_tests_old" ] || [ -e "$_tests_old.lock" ] || [ -e "$_tests_old.inuse" ]; } || continue
      [ "$_tests_old" != "$SBERT_DEMO_TEST_MEASURED" ] || continue
      { flock -n -x 8 && rm -rf "$_tests_old" "$_tests_old.lock" "$_tests_old.inuse"; } 8>"$_tests_old.inuse" \
        2>/dev/null || true
    done
  fi
  if [ -f "$SBERT_DEMO_TEST_MEASURED/prepared.ok" ]; then
    echo "The tests link this machine's prepared cache: $SBERT_DEMO_TEST_MEASURED" >&2
  else
    echo "The tests' prepared cache is made by scripts/setup.sh --dev or before a whole run's first test (3 to 6" \
      "minutes on 2 cores), once for this code and machine: $SBERT_DEMO_TEST_MEASURED" >&2
  fi
  unset _tests_root _tests_key _tests_old
fi
