"""Load: a talk audience on one app — 50 users on the default example, 50 users with sets of their own.

Starts the app on loopback (a fresh models folder and a fresh embedding cache; the ONNX artefacts
and the UMAP compile cache of the user's cache folder are reused, as after any earlier start),
waits until it serves the page, then measures through ``gradio_client`` on the Explore endpoint
(``/explore``), exactly what the page sends by default (the default example and default models):

1. ``single``: one user repeating the default request: the single-user time (the same request is
   answered from the result cache after the first time; also timed in-process, without HTTP);
2. ``audience``: ``--clients`` users (default 50) for ``--seconds`` (default 60), each with its own
   ``gradio_client.Client``, sending the default request back to back (target: 0 errors, p95 <= 3 s);
3. ``unseen``: as many users, each sending a new 20-sentence set (distinct STSb train sentences)
   every time: every request encodes 20 sentences per model, projects and clusters (no target;
   bounded by the encoder's throughput on the CPU's cores, which all requests share);
4. with ``--with-training``: 20 users on unseen sets while a training job runs in the app.

Printed per phase: requests, errors, p50/p95 latency and the ratio of p95 to the single-user time.

    python bench/load.py [--clients 50] [--seconds 60] [--phases single,audience,unseen] [--with-training]
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

from sbert_demo.config import settings  # noqa: E402
from sbert_demo.data.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS  # noqa: E402
from sbert_demo.ui.explore import DEFAULT_MODELS  # noqa: E402

UNSEEN_SIZE = 20
MODELS: list[str] = []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_app(port: int, models_dir: str, link: tuple[str, ...] = ("onnx", "numba", "models")) -> subprocess.Popen:
    """The app on loopback with its own models folder and cache folder; ``link`` names the parts of
    the user's cache folder it reuses (built once per machine); the embeddings always start empty."""
    cache = Path(models_dir) / "cache"
    cache.mkdir(exist_ok=True)
    for shared in link:
        source = settings().cache_dir / shared
        if source.exists() and not (cache / shared).exists():
            (cache / shared).symlink_to(source, target_is_directory=True)
    env = {**os.environ, "SBERT_DEMO_MODELS": models_dir, "SBERT_DEMO_CACHE": str(cache),
           "GRADIO_ANALYTICS_ENABLED": "False"}
    log = open(Path(models_dir) / "server.log", "w")
    return subprocess.Popen([sys.executable, "app.py", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_ready(url: str, timeout: float = 180, server: subprocess.Popen | None = None, poll_s: float = 0.5) -> None:
    """Return once ``url`` answers; stop the bench if it does not within ``timeout`` or ``server`` exits."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if server is not None and server.poll() is not None:
            raise SystemExit(f"The app exited with {server.returncode}; see its server.log")
        time.sleep(poll_s)
    raise SystemExit(f"The app did not answer at {url} within {timeout:.0f} s.")


def stop_app(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


def default_models() -> list[str]:
    from sbert_demo.models.registry import get_registry

    registry = get_registry()
    return [key for key in DEFAULT_MODELS if registry.availability(key).available]


def unseen_sets() -> list[str]:
    from sbert_demo.data.benchmarks import sts_split

    train = sts_split("train")
    return list(dict.fromkeys([*train.sentences1, *train.sentences2]))


DEFAULT_TEXT = EXAMPLE_SETS[DEFAULT_EXAMPLE].text
_pool: list[str] = []


def default_request(client: int, request: int) -> str:
    return DEFAULT_TEXT


def unseen_request(client: int, request: int) -> str:
    """A 20-sentence set no other request sends (distinct STSb train sentences)."""
    if not _pool:
        _pool.extend(unseen_sets())
    start = ((client * 50 + request) * UNSEEN_SIZE) % (len(_pool) - UNSEEN_SIZE)
    return "\n".join(_pool[start : start + UNSEEN_SIZE])


def _user_group(url: str, numbers: list[int], stop_at: float, text_for, models: list[str]):
    """Users ``numbers`` as threads of one process, each with its own client, until ``stop_at``."""
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def user(number: int) -> None:
        client = Client(url, verbose=False)
        request = 0
        while time.time() < stop_at:
            started = time.perf_counter()
            try:
                client.predict(text_for(number, request), models, 0, "groups", "kmeans", api_name="/explore")
                with lock:
                    latencies.append(time.perf_counter() - started)
            except Exception as exc:  # every failure counts as an error of the phase
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
            request += 1

    threads = [threading.Thread(target=user, args=(i,), daemon=True) for i in numbers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors


def run_phase(url: str, clients: int, seconds: float, text_for) -> tuple[list[float], list[str]]:
    """``clients`` users sending ``text_for(client, request)`` to /explore back to back for ``seconds``.

    Users run as threads in groups of 10 per process (50 users in one Python process would measure
    the client's GIL, not the server): a talk audience is 50 separate browsers.
    """
    from concurrent.futures import ProcessPoolExecutor

    stop_at = time.time() + seconds
    groups = [list(range(start, min(start + 10, clients))) for start in range(0, clients, 10)]
    if len(groups) == 1:
        return _user_group(url, groups[0], stop_at, text_for, MODELS)
    latencies: list[float] = []
    errors: list[str] = []
    with ProcessPoolExecutor(len(groups)) as pool:
        for got, failed in pool.map(_user_group, [url] * len(groups), groups, [stop_at] * len(groups),
                                    [text_for] * len(groups), [MODELS] * len(groups)):
            latencies += got
            errors += failed
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


SERVER = None  # psutil.Process of the app, for its CPU time per request


def server_cpu() -> float:
    if SERVER is None:
        return 0.0
    times = SERVER.cpu_times()
    return times.user + times.system


def report(name: str, latencies: list[float], errors: list[str], seconds: float, single: float | None,
           cpu: float = 0.0) -> float:
    p50, p95 = (np.percentile(latencies, [50, 95]) if latencies else (float("nan"), float("nan")))
    ratio = f", p95 / single user {p95 / single:5.1f}x" if single else ""
    print(f"{name:<30} served {len(latencies):5d} requests ({len(latencies) / seconds:5.2f}/s), "
          f"errors {len(errors)}, p50 {p50:6.2f} s, p95 {p95:6.2f} s{ratio}", flush=True)
    if cpu and latencies:
        print(f"{'':30} app CPU {cpu / len(latencies) * 1000:6.1f} ms per request: the app alone could serve "
              f"~{os.cpu_count() * len(latencies) / cpu:5.1f} requests/s on {os.cpu_count()} cores; the rest of "
              f"the machine ran the {name.split()[0]} simulated users", flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"    error: {error}")
    return float(p95)


def in_process_repeat(models: list[str], repeats: int = 20) -> float:
    """Median seconds of the default exploration in this process once it has been done (result cache)."""
    from sbert_demo.explore.exploration import explore
    from sbert_demo.data.sentences import parse_sentences

    example = parse_sentences(EXAMPLE_SETS[DEFAULT_EXAMPLE].text)
    explore(example.sentences, example.groups, models)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        explore(example.sentences, example.groups, models)
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def main() -> None:
    global MODELS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--phases", default="single,audience,unseen")
    parser.add_argument("--with-training", action="store_true", help="also: 20 users on unseen sets while training")
    args = parser.parse_args()
    from sbert_demo.encoding import devices

    MODELS = default_models()
    hardware = devices.detect_hardware()
    print(f"CPU: {hardware.cpu_name}, native bf16: {'yes' if hardware.cpu_bf16 else 'no'}; models: "
          f"{', '.join(MODELS)}; example: {DEFAULT_EXAMPLE}", flush=True)
    default_text = DEFAULT_TEXT
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    phases = args.phases.split(",")
    with tempfile.TemporaryDirectory(prefix="sbert-load-") as models_dir:
        server = start_app(port, models_dir)
        global SERVER
        import psutil

        SERVER = psutil.Process(server.pid)
        try:
            wait_ready(url)
            from gradio_client import Client

            started = time.perf_counter()  # the first request computes (and waits for the warm-up)
            Client(url, verbose=False).predict(default_text, MODELS, 0, "groups", "kmeans", api_name="/explore")
            print(f"first default request after start: {time.perf_counter() - started:.2f} s", flush=True)
            single = None
            if "single" in phases:
                latencies, errors = run_phase(url, 1, min(args.seconds, 20), default_request)
                single = float(np.median(latencies)) if latencies else None
                report("single user, default request", latencies, errors, min(args.seconds, 20), None)
                print(f"single user, default request, in-process (no HTTP): median "
                      f"{in_process_repeat(MODELS):.3f} s", flush=True)
            if "audience" in phases:
                before = server_cpu()
                result = run_phase(url, args.clients, args.seconds, default_request)
                report(f"{args.clients} users, default request", *result, args.seconds, single, server_cpu() - before)
            if "unseen" in phases:
                before = server_cpu()
                result = run_phase(url, args.clients, args.seconds, unseen_request)
                report(f"{args.clients} users, own {UNSEEN_SIZE}-sentence sets", *result, args.seconds, single,
                       server_cpu() - before)
            if args.with_training:
                start_training(url)
                while training_status(url).get("state") in ("starting", "idle"):
                    time.sleep(1)  # measure while the job really trains, not while its process starts
                busy = run_phase(url, 20, args.seconds, unseen_request)
                state = training_status(url)
                cancel_training(url)
                print(f"training during the last phase: state {state.get('state')}, "
                      f"step {state.get('step')}/{state.get('total_steps')}")
                report("20 users, own sets + training", *busy, args.seconds, single)
        finally:
            stop_app(server)


if __name__ == "__main__":
    main()
