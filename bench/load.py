"""Load: 20 concurrent users exploring, without and then with a training job running.

Starts the app on loopback (a fresh models folder; the given data folder), warms it up, then runs
two phases of ``--seconds`` each (default 60) in which ``--clients`` (default 20) threads, each
with its own ``gradio_client.Client``, call the Explore endpoint (``/explore``) back to back:

1. exploration only;
2. the same while a training job runs in the app (started through the Train tab's endpoint:
   all-MiniLM-L6-v2, cosine regression on STSb train, which lasts longer than the phase);
   the job is cancelled afterwards.

Every request uses one of the built-in example sets plus one sentence unique to that request, so
each one really encodes (one new sentence per model), projects, clusters and draws. Printed per
phase: requests served, errors, p50/p95 latency; then the p95 ratio (target: at most 3x).

    python bench/load.py [--clients 20] [--seconds 60]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MODELS = ["glove-6b-50d", "all-MiniLM-L6-v2"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_app(port: int, models_dir: str) -> subprocess.Popen:
    env = {**os.environ, "SBERT_DEMO_MODELS": models_dir, "GRADIO_ANALYTICS_ENABLED": "False"}
    log = open(Path(models_dir) / "server.log", "w")
    return subprocess.Popen([sys.executable, "app.py", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_ready(url: str, timeout: float = 180) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"The app did not answer at {url} within {timeout:.0f} s.")


def explore_text(request: int, client: int) -> str:
    from sbert_demo.data.examples import EXAMPLE_SETS

    sets = list(EXAMPLE_SETS.values())
    text = sets[request % len(sets)].text
    return f"{text}\nload | Client {client} asks question number {request} about the weather."


def run_phase(url: str, clients: int, seconds: float) -> tuple[list[float], list[str]]:
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def user(number: int) -> None:
        client = Client(url, verbose=False)
        request = 0
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                client.predict(explore_text(request, number), MODELS, 0, "groups", "kmeans", api_name="/explore")
                with lock:
                    latencies.append(time.perf_counter() - started)
            except Exception as exc:  # every failure counts as an error of the phase
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
            request += 1

    threads = [threading.Thread(target=user, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors


def start_training(url: str) -> dict:
    from gradio_client import Client

    client = Client(url, verbose=False)
    return client.predict(
        base="all-MiniLM-L6-v2", pooling="mean", objective="cosine", concatenation=["u,v", "|u-v|"],
        data="stsb", upload=None, max_pairs=None, epochs=1, batch_size=16, learning_rate=2e-5,
        warmup_ratio=0.1, max_seq_length=128, eval_steps=0, seed=42, precision="auto", dense_dim=256,
        output="load-bench-minilm", overwrite=True, api_name="/train_start")


def training_status(url: str) -> dict:
    from gradio_client import Client

    return Client(url, verbose=False).predict(api_name="/train_status")


def cancel_training(url: str) -> None:
    from gradio_client import Client

    Client(url, verbose=False).predict(api_name="/train_cancel")


def report(name: str, latencies: list[float], errors: list[str], seconds: float) -> float:
    p50, p95 = (np.percentile(latencies, [50, 95]) if latencies else (float("nan"), float("nan")))
    print(f"{name:<22} served {len(latencies):5d} requests ({len(latencies) / seconds:5.2f}/s), "
          f"errors {len(errors)}, p50 {p50:6.2f} s, p95 {p95:6.2f} s", flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"    error: {error}")
    return float(p95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory(prefix="sbert-load-") as models_dir:
        server = start_app(port, models_dir)
        try:
            wait_ready(url)
            run_phase(url, clients=4, seconds=10)  # warm-up: models loaded, UMAP compiled, caches filled
            quiet = run_phase(url, args.clients, args.seconds)
            start_training(url)
            while training_status(url).get("state") in ("starting", "idle"):
                time.sleep(1)  # measure while the job really trains, not while its process starts
            busy = run_phase(url, args.clients, args.seconds)
            state = training_status(url)
            cancel_training(url)
            print(f"{args.clients} clients x {args.seconds:.0f} s per phase; training during phase 2: "
                  f"state {state.get('state')}, step {state.get('step')}/{state.get('total_steps')}")
            p95_quiet = report("explore only", *quiet, args.seconds)
            p95_busy = report("explore + training", *busy, args.seconds)
            print(f"p95 latency during training / without: {p95_busy / p95_quiet:.2f}x (target at most 3x)")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
