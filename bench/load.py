"""Load: a talk audience on one app, in named scenarios.

Starts the app on loopback (a fresh models folder and a fresh embedding cache; the ONNX artefacts,
runtime decisions and the UMAP compile cache of the user's cache folder are reused, as after any
earlier start), waits until it serves the page, then measures simulated phones on the Explore
endpoint (``/explore``) with the default models, as the page sends it (:class:`PageUser`: the page's
own queue protocol, light enough to share the app's cores; ``--client gradio``: ``gradio_client``):

* ``single``: one user repeating the default request (answered from the result cache after the first
  time; also timed in-process, without HTTP): the single-user time;
* ``talk``: 50 users, each sending a new unseen 20-sentence set (distinct STSb and STS12-16 sentences),
  waiting for the answer, thinking 10 s, and again, for 120 s (target: 0 errors, p95 <= 5 s);
* ``stampede``: the same without thinking, 60 s (target: 0 errors, >= 4 requests/s);
* ``default``: 100 users sending the default request back to back, 60 s (target: p95 <= 5 s);
* with ``--with-training``: 20 users on unseen sets while a training job runs in the app.

Each user opens the app (fetches its config, as a page does) in the seconds before a scenario's
clock starts; a user whose page does not open counts an error and tries again. Printed per scenario:
requests, errors, requests/s, p50/p95/max latency, the app's CPU time per request (the server
process's user + system time over the scenario, divided by the requests served) beside the rest of
the machine's (the simulated users), and how many requests were shown a queue position and ETA; with
``--profile``, that CPU shared out by stage from py-spy's samples of the app.
``--clients`` and ``--seconds`` override every scenario's users and duration (e.g. a quick check).

    python bench/load.py [--phases single,talk,stampede,default] [--clients N] [--seconds S] [--with-training]
                         [--client page|gradio] [--profile]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sbert_demo.explore.prepare import link_prepared  # noqa: E402
from sbert_demo.data.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS  # noqa: E402
from sbert_demo.ui.explore import DEFAULT_MODELS  # noqa: E402

UNSEEN_SIZE = 20
MODELS: list[str] = []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_app(port: int, models_dir: str,
              link: tuple[str, ...] = ("onnx", "numba", "models", "runtime")) -> subprocess.Popen:
    """The app on loopback with its own models folder and cache folder; ``link`` names the parts of
    the user's cache folder it reuses (built once per machine); the embeddings always start empty."""
    cache = link_prepared(Path(models_dir) / "cache", parts=link)
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
    """Distinct sentences no example holds: STSb (train, dev, test) and the SemEval STS 2012-2016 sets."""
    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.data.sts_sets import TITLES, sts_set

    pairs = [sts_split(split) for split in ("train", "dev", "test")] + [sts_set(name) for name in TITLES]
    return list(dict.fromkeys(s for p in pairs for s in [*p.sentences1, *p.sentences2]))


DEFAULT_TEXT = EXAMPLE_SETS[DEFAULT_EXAMPLE].text
_pool: list[str] = []


def default_request(client: int, request: int) -> str:
    return DEFAULT_TEXT


def unseen_request(client: int, request: int, offset: int = 0) -> str:
    """A 20-sentence set no other request sends (distinct STS sentences); scenarios run one after the
    other take different ``offset``s, so none of them finds another's sentences in the cache."""
    if not _pool:
        _pool.extend(unseen_sets())
    index = offset + request * 50 + client  # request-major: 50 users' n-th sets side by side
    start = index % (len(_pool) // UNSEEN_SIZE) * UNSEEN_SIZE  # 1,422 sets; past them they come again
    return "\n".join(_pool[start : start + UNSEEN_SIZE])


@dataclass(frozen=True)
class Scenario:
    clients: int
    seconds: float
    text_for: Callable[[int, int], str]
    think_s: float = 0.0  # each user's pause between getting an answer and sending again
    what: str = ""


SCENARIOS = {
    "talk": Scenario(50, 120, unseen_request, 10.0, "50 users, own 20-sentence sets, 10 s thinking"),
    # after the talk's 50 users x at most 12 sets: the stampede finds none of its sentences in the cache
    "stampede": Scenario(50, 60, functools.partial(unseen_request, offset=600), 0.0,
                         "50 users, own 20-sentence sets, no thinking"),
    "default": Scenario(100, 60, default_request, 0.0, "100 users, default request"),
}


CLIENT = "page"  # or "gradio": --client
PAGE_USERS_PER_PROCESS = 25  # asyncio users are light: a few processes hold a room


class LightHttp:
    """One phone's keep-alive HTTP/1.1 connection, in a few lines of asyncio: GET and POST with a JSON body, answers
    with a Content-Length or chunked, the cookies the app sets kept. With 500 phones in one process, httpx's
    AsyncClient answered 56 requests a second where the app served 650-940 (a plain asyncio client, the same
    routes): the bench measured its clients; this one leaves the cores to the app."""

    def __init__(self, url: str):
        from urllib.parse import urlsplit

        where = urlsplit(url)
        self.host, self.port, self.base = where.hostname, where.port or 80, where.path.rstrip("/")
        self.cookies: dict[str, str] = {}
        self.reader = self.writer = None

    async def request(self, method: str, path: str, json_body=None) -> tuple[int, bytes]:
        """One request; on a kept connection the server closed meanwhile (uvicorn closes one idle for 5 s) before any
        byte of the answer, sent again on a new one, as a browser does."""
        import asyncio

        if self.writer is not None:
            try:
                return await self._request(method, path, json_body)
            except (asyncio.IncompleteReadError, ConnectionError) as closed:
                if getattr(closed, "partial", b""):
                    raise
                await self.close()
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return await self._request(method, path, json_body)

    async def _request(self, method: str, path: str, json_body=None) -> tuple[int, bytes]:
        import json

        body = b"" if json_body is None else json.dumps(json_body).encode()
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        head = (f"{method} {self.base}/{path.lstrip('/')} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                + (f"Cookie: {cookie}\r\n" if cookie else "")
                + (f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if json_body is not None
                   else "") + "\r\n")
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = [line.partition(":") for line in lines[1:] if line]
        fields = {name.strip().lower(): value.strip() for name, _, value in headers}
        for name, _, value in headers:
            if name.strip().lower() == "set-cookie":
                key, _, rest = value.strip().partition("=")
                self.cookies[key] = rest.split(";")[0]
        if "content-length" in fields:
            content = await self.reader.readexactly(int(fields["content-length"]))
        else:  # chunked
            content = b""
            while size := int((await self.reader.readuntil(b"\r\n")).strip(), 16):
                content += (await self.reader.readexactly(size + 2))[:-2]
            await self.reader.readuntil(b"\r\n")
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return status, content

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


class PageUser:
    """A phone with the app open, speaking the page's own queue protocol (Gradio's ``sse_v3``, as its
    JavaScript client does): it fetches the app's config once, then for each request joins the queue
    (``POST /gradio_api/queue/join``) and reads the session's event stream (``GET
    /gradio_api/queue/data``: queue position and ETA, start, result) until the server closes it.

    One asyncio task per user with its own keep-alive connection: the simulated room must not eat the
    cores it shares with the app. ``gradio_client`` (``--client gradio``) spends ~80 ms of CPU per
    request in its threads (a new HTTP connection per call, the answer re-concatenated per chunk):
    with 100 of them the bench measured the clients, not the app."""

    def __init__(self, url: str):
        import uuid

        import httpx

        self.http = httpx.AsyncClient(base_url=url.rstrip("/"), timeout=300)
        self.session_hash = uuid.uuid4().hex[:11]
        self.fn_index: int | None = None
        self.queued = True
        self.waits: list[dict] = []  # the queue estimations the last request showed its user

    async def open(self, api_name: str) -> None:
        response = await self.http.get("/config")  # as the page loads
        response.raise_for_status()
        config = response.json()
        self.prefix = config.get("api_prefix", "/gradio_api")
        dependency = next(d for d in config["dependencies"] if d.get("api_name") == api_name)
        self.fn_index, self.queued = dependency["id"], dependency.get("queue") is not False

    async def predict(self, *data) -> list:
        import json

        if not self.queued:  # an event outside the queue: one POST, its answer in the response (as the page does)
            answered = await self.http.post(f"{self.prefix}/run/predict", json={
                "data": list(data), "event_data": None, "fn_index": self.fn_index, "trigger_id": None,
                "session_hash": self.session_hash})
            if answered.status_code != 200:
                raise RuntimeError(f"the app answered with an error: {answered.text[:150]}")
            return answered.json()["data"]
        joined = await self.http.post(f"{self.prefix}/queue/join", json={
            "data": list(data), "event_data": None, "fn_index": self.fn_index, "trigger_id": None,
            "session_hash": self.session_hash})
        if joined.status_code == 503:
            raise RuntimeError("the queue is full")
        joined.raise_for_status()
        event_id = joined.json()["event_id"]
        result, self.waits = None, []
        async with self.http.stream("GET", f"{self.prefix}/queue/data",
                                    params={"session_hash": self.session_hash}) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                kind = message.get("msg")
                if kind == "estimation" and message.get("event_id") == event_id:
                    self.waits.append(message)
                elif kind == "process_completed" and message.get("event_id") == event_id:
                    if not message.get("success"):
                        raise RuntimeError(f"the app answered with an error: {str(message.get('output'))[:150]}")
                    result = message["output"]["data"]
                elif kind in ("close_stream", "unexpected_error"):
                    break
        if result is None:
            raise RuntimeError("the event stream ended without a result")
        return result

    async def close(self) -> None:
        await self.http.aclose()


def _page_users(url: str, numbers: list[int], start_at: float, stop_at: float, text_for,
                models: list[str], think_s: float) -> tuple[list[float], list[str], int]:
    """:class:`PageUser` s ``numbers`` in one event loop: (latencies, errors, requests shown their queue
    position and an ETA; Gradio sends them when a request joins the queue and each second while it waits)."""
    import asyncio

    latencies: list[float] = []
    errors: list[str] = []
    shown = [0]

    async def user(number: int) -> None:
        page = PageUser(url)
        while page.fn_index is None and time.time() < stop_at:
            try:
                await page.open("explore")
            except Exception as exc:  # the page did not open: an error a user sees
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
                await asyncio.sleep(1)
        await asyncio.sleep(max(0.0, start_at - time.time()))
        if think_s:  # a room does not press Enter in the same second
            await asyncio.sleep(random.Random(number).uniform(0, think_s))
        request = 0
        while page.fn_index is not None and time.time() < stop_at:
            started = time.perf_counter()
            try:
                await page.predict(text_for(number, request), models, 0, "groups", "kmeans")
                latencies.append(time.perf_counter() - started)
                shown[0] += any(w.get("rank_eta") is not None for w in page.waits)
            except Exception as exc:  # every failure counts as an error of the phase
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
            request += 1
            if think_s and time.time() + think_s < stop_at:
                await asyncio.sleep(think_s)
            elif think_s:
                break
        await page.close()

    async def room() -> None:
        await asyncio.gather(*(user(number) for number in numbers))

    asyncio.run(room())
    return latencies, errors, shown[0]


def _user_group(url: str, numbers: list[int], start_at: float, stop_at: float, text_for, models: list[str],
                think_s: float = 0.0, client: str = "page") -> tuple[list[float], list[str], int]:
    """Users ``numbers`` of one process: :class:`PageUser` s in one event loop, or (``client``
    "gradio") threads with a ``gradio_client`` each. Each opens the app (fetches its config, as a page
    does) before ``start_at``, then sends requests until ``stop_at``, thinking ``think_s`` seconds after
    each answer (users start spread over the first think time). A client that cannot connect counts as
    an error and tries again. Returns (latencies, errors, requests shown a queue position and ETA)."""
    if client == "page":
        return _page_users(url, numbers, start_at, stop_at, text_for, models, think_s)
    from gradio_client import Client

    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def failed(exc: Exception) -> None:
        with lock:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    def user(number: int) -> None:
        client = None
        while client is None and time.time() < stop_at:
            try:
                # A browser waits for its answer: gradio_client's own 5 s limit on each HTTP call (a busy
                # server's /queue/join) had turned waits into "ReadTimeout" errors no page shows.
                client = Client(url, verbose=False, httpx_kwargs={"timeout": 300})
            except Exception as exc:  # the page did not open: an error a user sees
                failed(exc)
                time.sleep(1)
        time.sleep(max(0.0, start_at - time.time()))
        request = 0
        if think_s:  # a room does not press Enter in the same second
            time.sleep(random.Random(number).uniform(0, think_s))
        while client is not None and time.time() < stop_at:
            started = time.perf_counter()
            try:
                client.predict(text_for(number, request), models, 0, "groups", "kmeans", api_name="/explore")
                with lock:
                    latencies.append(time.perf_counter() - started)
            except Exception as exc:  # every failure counts as an error of the phase
                failed(exc)
            request += 1
            if think_s and time.time() + think_s < stop_at:
                time.sleep(think_s)
            elif think_s:
                break

    threads = [threading.Thread(target=user, args=(i,), daemon=True) for i in numbers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors, 0


@dataclass
class Phase:
    latencies: list[float]
    errors: list[str]
    shown_wait: int  # requests whose user was shown a queue position and an ETA
    cpu: float  # the app's CPU seconds over the phase
    machine_cpu: float = 0.0  # the whole machine's (the app, the simulated users, the rest)


def run_phase(url: str, clients: int, seconds: float, text_for, think_s: float = 0.0,
              on_start: Callable[[], None] | None = None) -> Phase:
    """``clients`` users sending ``text_for(client, request)`` to /explore for ``seconds``, each
    thinking ``think_s`` between an answer and the next request. The users open the app first, within
    a few seconds before (the room's phones have the page open when the talk asks for sentences); the
    app's CPU counts from the start of the ``seconds``.

    Users run in several processes (page users 25 to a process, ``gradio_client`` users 10: one
    Python process for all would measure the clients' GIL, not the server).
    """
    from concurrent.futures import ProcessPoolExecutor

    start_at = time.time() + max(10.0, 0.3 * clients)
    stop_at = start_at + seconds
    cpu_at_start: list[float] = []

    def started() -> None:  # the clock starts: the app's CPU from here, and the profile (``on_start``)
        cpu_at_start.extend([server_cpu(), machine_cpu()])
        if on_start is not None:
            on_start()

    timer = threading.Timer(start_at - time.time(), started)
    timer.start()
    size = PAGE_USERS_PER_PROCESS if CLIENT == "page" else 10
    groups = [list(range(start, min(start + size, clients))) for start in range(0, clients, size)]
    phase = Phase([], [], 0, 0.0)
    n = len(groups)
    arguments = ([url] * n, groups, [start_at] * n, [stop_at] * n, [text_for] * n, [MODELS] * n, [think_s] * n,
                 [CLIENT] * n)
    if n == 1:
        outcomes = [_user_group(*(column[0] for column in arguments))]
    else:
        with ProcessPoolExecutor(n) as pool:
            outcomes = list(pool.map(_user_group, *arguments))
    for latencies, errors, shown in outcomes:
        phase.latencies += latencies
        phase.errors += errors
        phase.shown_wait += shown
    timer.join()
    if cpu_at_start:
        phase.cpu, phase.machine_cpu = server_cpu() - cpu_at_start[0], machine_cpu() - cpu_at_start[1]
    return phase


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


def machine_cpu() -> float:
    import psutil

    times = psutil.cpu_times()
    return times.user + times.system + times.nice


def server_cpu() -> float:
    if SERVER is None:
        return 0.0
    times = SERVER.cpu_times()
    return times.user + times.system


def report(name: str, phase: Phase, seconds: float, single: float | None) -> float:
    latencies, errors = phase.latencies, phase.errors
    p50, p95, top = (np.percentile(latencies, [50, 95, 100]) if latencies else [float("nan")] * 3)
    ratio = f", p95 / single user {p95 / single:5.1f}x" if single else ""
    print(f"{name:<30} served {len(latencies):5d} requests ({len(latencies) / seconds:5.2f}/s), "
          f"errors {len(errors)}, p50 {p50:6.2f} s, p95 {p95:6.2f} s, max {top:6.2f} s{ratio}", flush=True)
    if phase.cpu and latencies:
        others = max(0.0, phase.machine_cpu - phase.cpu)
        print(f"{'':30} app CPU {phase.cpu / len(latencies) * 1000:6.1f} ms per request: the app alone could "
              f"serve ~{os.cpu_count() * len(latencies) / phase.cpu:5.1f} requests/s on {os.cpu_count()} cores; "
              f"the simulated users and the rest of the machine {others / len(latencies) * 1000:6.1f} ms per "
              f"request", flush=True)
    if CLIENT == "page" and latencies:
        print(f"{'':30} {phase.shown_wait} of {len(latencies)} requests were shown their queue position "
              f"and an ETA", flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"    error: {error}")
    return float(p95)


# Where the app's time goes, by the first of these found in a sampled stack (the innermost stage
# wins: figures drawn inside the handler count as figures, not as the handler).
STAGES = (
    ("encoding (the models)", ("sbert_demo/encoding/onnx_encoder.py", "sbert_demo/encoding/encoder.py",
                               "sentence_transformers", "torch/")),
    ("clustering (k-means, silhouette)", ("auto_clusters",)),
    ("2-D map (PCA up to 20 sentences, UMAP)", ("project_2d", "umap/")),
    ("figures (Plotly)", ("sbert_demo/explore/plots.py", "plot_style.py", "_slot_outputs",
                          "_ranking_figure", "_map_figure")),
    ("figures to JSON", ("to_json",)),
    ("similarities, summary, ranking", ("sbert_demo/explore/similarity.py",)),
    ("the rest of the handler", ("sbert_demo/",)),
    ("Gradio (queue, JSON, HTTP)", ("gradio/", "starlette/", "uvicorn/", "fastapi/", "anyio/", "asyncio/",
                                    "orjson", "httpx", "h11")),
)


# Samples of a thread waiting (py-spy's idle detection misses these) are not CPU and are left out.
WAITS = ("select (selectors.py", "Condition.wait (threading.py", "Event.wait (threading.py", "block_thread (",
         "_wait_for_tstate_lock (", "sleep (")


def start_profile(pid: int, out: Path) -> tuple:
    """py-spy sampling the app (its Python stacks, idle threads left out) until :func:`print_profile`."""
    import shutil

    binary = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if binary is None:
        raise SystemExit("--profile needs py-spy: pip install -r requirements-dev.txt")
    spy = subprocess.Popen([binary, "record", "--pid", str(pid), "--format", "raw", "--output", str(out),
                            "--rate", "100", "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return spy, out


def print_profile(spy: subprocess.Popen, out: Path, cpu: float, requests: int) -> None:
    """The scenario's app CPU per request, shared out by stage in proportion to py-spy's samples."""
    import signal

    spy.send_signal(signal.SIGINT)  # py-spy writes its file when interrupted
    try:
        spy.wait(timeout=60)
    except subprocess.TimeoutExpired:
        spy.kill()
    counts = {name: 0 for name, _ in STAGES} | {"other": 0}
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines() if out.exists() else []:
        stack, _, number = line.rpartition(" ")
        frames = stack.split(";")
        if any(frames[-1].startswith(wait) or wait in frames[-1] for wait in WAITS):
            continue
        stage = next((name for name, marks in STAGES for frame in reversed(frames) if any(m in frame for m in marks)),
                     "other")
        counts[stage] += int(number) if number.isdigit() else 0
    total = sum(counts.values())
    if not total or not requests:
        print("    (no profile samples: is py-spy installed? pip install -r requirements-dev.txt)")
        return
    per_request = cpu / requests * 1000
    print(f"    ({total:,} samples; the stacks: {out})")
    for name, count in sorted(counts.items(), key=lambda item: -item[1]):
        if count:
            print(f"    {name:<34} {count / total:6.1%}  ~{per_request * count / total:7.1f} ms CPU per request")


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
    parser.add_argument("--clients", type=int, default=None, help="users in every scenario (default: its own)")
    parser.add_argument("--seconds", type=float, default=None, help="length of every scenario (default: its own)")
    parser.add_argument("--phases", default="single,talk,stampede,default",
                        help=f"single and any of: {', '.join(SCENARIOS)}")
    parser.add_argument("--with-training", action="store_true", help="also: 20 users on unseen sets while training")
    parser.add_argument("--client", choices=("page", "gradio"), default="page",
                        help="each user's client: the page's queue protocol in asyncio (light: the users share "
                             "the app's cores here) or gradio_client (~80 ms of CPU per request)")
    parser.add_argument("--profile", action="store_true",
                        help="sample the app with py-spy during each scenario and print its CPU by stage")
    args = parser.parse_args()
    global CLIENT
    CLIENT = args.client
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
                seconds = min(args.seconds or 20, 20)
                phase = run_phase(url, 1, seconds, default_request)
                single = float(np.median(phase.latencies)) if phase.latencies else None
                report("single user, default request", phase, seconds, None)
                print(f"single user, default request, in-process (no HTTP): median "
                      f"{in_process_repeat(MODELS):.3f} s", flush=True)
            unknown = [p for p in phases if p not in SCENARIOS and p != "single"]
            if unknown:
                raise SystemExit(f"Unknown phase(s) {', '.join(unknown)}; choose from single, {', '.join(SCENARIOS)}.")
            for name in [p for p in phases if p in SCENARIOS]:
                scenario = SCENARIOS[name]
                clients, seconds = args.clients or scenario.clients, args.seconds or scenario.seconds
                raw = Path(tempfile.gettempdir()) / f"sbert-load-{name}.raw"  # kept: py-spy's stacks, for a closer look
                spies: list[tuple] = []
                phase = run_phase(url, clients, seconds, scenario.text_for, scenario.think_s,
                                  (lambda: spies.append(start_profile(server.pid, raw))) if args.profile else None)
                label = f"{name}: {scenario.what}" if not args.clients else f"{name}: {clients} users"
                report(label, phase, seconds, single)
                for spy in spies:
                    print_profile(*spy, phase.cpu, len(phase.latencies))
            if args.with_training:
                start_training(url)
                while training_status(url).get("state") in ("starting", "idle"):
                    time.sleep(1)  # measure while the job really trains, not while its process starts
                busy = run_phase(url, 20, args.seconds or 60, unseen_request)
                state = training_status(url)
                cancel_training(url)
                print(f"training during the last phase: state {state.get('state')}, "
                      f"step {state.get('step')}/{state.get('total_steps')}")
                report("20 users, own sets + training", busy, args.seconds or 60, single)
        finally:
            stop_app(server)


if __name__ == "__main__":
    main()
