"""A Space's start on CPU basic against a simulated ZeroGPU start, side by side.

Each start is ``python app.py`` as a Space runs it (``SPACE_ID`` set: the warm-up also embeds STSb dev for the
STS tab), on loopback, in a fresh cache folder that links this machine's prepared parts (``prepare`` first), so
both kinds find the same machine. The ZeroGPU start adds ``SPACES_ZERO_GPU=true`` and puts the stand-in ``spaces``
of ``tests/test_zerogpu.py`` first on the path (it does what spaces 0.51.3 does where the app can tell:
``torch.cuda.is_available`` answers True, each GPU function runs in a reused forked worker, arguments pickled), and
counts the GPU calls the app makes. The kinds start in turn, ``--rounds`` times (default 2), so that a busy moment
of a shared machine hits both alike; each kind's best start counts.

For each start: seconds until the first page is served, seconds until the warm-up finished (the app's log line),
and the GPU calls made (the target: none, and the page served as fast as on the CPU).

    python bench/spaces_start.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from load import free_port, stop_app, wait_ready  # noqa: E402
from test_zerogpu import STAND_IN  # noqa: E402

from sbert_demo.explore.prepare import link_prepared  # noqa: E402

WARMED = re.compile(r"Warm-up finished in the background")
# the stand-in's record of calls, also written to a file the bench reads (the app's process keeps the list)
COUNTED = STAND_IN + '''

class _Written(list):
    def append(self, call):
        super().append(call)
        with open(os.environ["SPACES_CALLS_FILE"], "a", encoding="utf-8") as handle:
            handle.write(json.dumps(call) + "\\n")


import json
CALLS = _Written()
'''


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def one_start(kind: str, root: Path) -> dict:
    cache = link_prepared(root / "cache")
    (root / "stand-in").mkdir(exist_ok=True)
    (root / "stand-in" / "spaces.py").write_text(COUNTED, encoding="utf-8")
    calls = root / "calls.jsonl"
    env = {**os.environ, "SPACE_ID": "bench/sbert-demo", "SBERT_DEMO_CACHE": str(cache),
           "SBERT_DEMO_MODELS": str(root / "models"), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "SPACES_CALLS_FILE": str(calls)}
    env.pop("SPACES_ZERO_GPU", None)
    if kind == "ZeroGPU":
        env.update(SPACES_ZERO_GPU="true", SPACES_ZERO_DEVICE_API_URL="http://127.0.0.1:9/",
                   PYTHONPATH=os.pathsep.join([str(root / "stand-in"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    port = free_port()
    log_path = root / "server.log"
    started = time.perf_counter()
    with open(log_path, "w") as log:
        server = subprocess.Popen([sys.executable, "app.py", "--host", "127.0.0.1", "--port", str(port)],
                                  cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{port}/", timeout=600, server=server, poll_s=0.1)
        served = time.perf_counter() - started
        deadline = time.monotonic() + 900
        while not WARMED.search(log_path.read_text(errors="replace")):
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"{kind}: the warm-up did not finish; see {log_path}")
            time.sleep(0.2)
        warmed = time.perf_counter() - started
    finally:
        stop_app(server)
    made = [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
    return {"kind": kind, "served": served, "warmed": warmed, "calls": made}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; a Space's start (SPACE_ID set) on a prepared machine")
    runs = []
    with tempfile.TemporaryDirectory(prefix="spaces-start-") as scratch:
        for round_ in range(args.rounds):
            for kind in ("CPU basic", "ZeroGPU"):
                run = one_start(kind, Path(scratch) / f"{kind.replace(' ', '-')}-{round_}")
                runs.append(run)
                print(f"  round {round_ + 1} {kind:9s}: first page served after {run['served']:5.1f} s, warm-up done "
                      f"after {run['warmed']:5.1f} s, GPU calls {len(run['calls'])}", flush=True)
    kinds = ("CPU basic", "ZeroGPU")
    for what, label in (("served", "first page"), ("warmed", "warm-up done")):
        times = {kind: sorted(r[what] for r in runs if r["kind"] == kind) for kind in kinds}
        best = {kind: t[0] for kind, t in times.items()}
        middle = {kind: statistics.median(t) for kind, t in times.items()}
        print(f"{label}: best of {args.rounds} CPU basic {best['CPU basic']:.1f} s, ZeroGPU {best['ZeroGPU']:.1f} s "
              f"({best['ZeroGPU'] / best['CPU basic']:.2f}x); median {middle['CPU basic']:.1f} s and "
              f"{middle['ZeroGPU']:.1f} s ({middle['ZeroGPU'] / middle['CPU basic']:.2f}x); the starts of one kind "
              f"ranged over {max(t[-1] - t[0] for t in times.values()):.1f} s")
    print(f"GPU calls at ZeroGPU starts: {sum(len(r['calls']) for r in runs if r['kind'] == 'ZeroGPU')}")

if __name__ == "__main__":
    main()
