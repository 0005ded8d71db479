"""Audience board under load: 100 phones each sending 3 sentences within 60 s while the presenter's
board refreshes (every second, as its page does), with MiniLM (issue 23).

Starts the app on loopback (a fresh models folder and an empty board store; what ``prepare`` built in the
user's cache folder is reused: ONNX and OpenVINO artefacts, the runtime choice, UMAP's compiled kernels; the
cache folder should be a prepared one, ``SBERT_DEMO_CACHE`` names another), creates a board through
``/board_create``, then:

* ``--phones`` phones (default 100) open the page the board's QR code opens, then send 3 distinct STSb sentences
  at random moments of ``--seconds`` (default 60) and ask where each landed, as that page does; all of them in
  one asyncio loop, with a connection and a visitor cookie each, so that the simulated room leaves the cores to
  the app. ``--page join`` (the default, the QR code's page, :mod:`sbert_demo.ui.join`): the page and its files,
  ``/join/CODE/about``, then ``POST /join/CODE/send`` and ``/join/CODE/landing/N``. ``--page app`` (the app's own
  Audience tab, ``?board=CODE`` without the QR code): Gradio's page config and first event, then ``/board_send``
  and ``/board_landing`` in the page's own protocol (``load.PageUser``);
* the presenter asks ``/board_state`` (the board's picture: the same work as the page's) at each tick of the
  page's timer (``REFRESH_SECONDS``; a tick while an answer is awaited is dropped, as the page's is) and notes
  when each accepted sentence first appears on it.

* a new visitor's page asks ``/config`` every second meanwhile (what a page that opens asks first).

Printed: the CPU, sends accepted / refused / failed, the sentences in SQLite against the accepted
sends (lost: accepted but not stored; told failed: stored although the phone was told the send failed),
the send latency (p50/p95; target p95 <= 2 s), the time from an accepted send to the presenter's board
(p50/p95/max; target p95 <= 5 s), ``/config``'s (p95), and how much of the cores the app and this process (the
simulated phones) took while the room sent.

    python bench/audience.py [--phones 100] [--seconds 60] [--model all-MiniLM-L6-v2] [--page join|app]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import LightHttp, PageUser, free_port, start_app, stop_app, wait_ready  # noqa: E402

from sbert_demo.data.benchmarks import sts_split  # noqa: E402
from sbert_demo.explore.prepare import PREPARED_PARTS  # noqa: E402
from sbert_demo.encoding.devices import cpu_name  # noqa: E402
from sbert_demo.ui.audience import REFRESH_SECONDS as POLL_S  # noqa: E402
from sbert_demo.ui.visitor import COOKIE  # noqa: E402

PER_PHONE = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phones", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--page", choices=("join", "app"), default="join",
                        help="the QR code's page (join) or the app's Audience tab (app)")
    args = parser.parse_args()
    from gradio_client import Client

    dev = sts_split("dev")
    pool = [s for s in dict.fromkeys([*dev.sentences1, *dev.sentences2]) if len(s) <= 200]
    random.Random(0).shuffle(pool)
    sentences = pool[: args.phones * PER_PHONE]
    print(f"CPU: {cpu_name()}; {args.phones} phones x {PER_PHONE} sentences within {args.seconds:.0f} s; "
          f"model {args.model}; the phones' page: {PAGES[args.page]}; the presenter refreshes every {POLL_S:g} s")

    with tempfile.TemporaryDirectory(prefix="sbert-demo-audience-") as models_dir:
        port = free_port()
        server = start_app(port, models_dir, link=PREPARED_PARTS)  # all a prepared machine has built
        url = f"http://127.0.0.1:{port}/"
        try:
            wait_ready(url, server=server)
            presenter = Client(url, verbose=False)
            code = presenter.predict(args.model, api_name="/board_create")["code"]
            presenter.predict(code, api_name="/board_state")  # the presenter's page is open before the room joins
            accepted: dict[str, float] = {}  # sentence -> when its send returned
            refused, failed, send_s = [], [], []
            landing_s: list[float] = []  # from a send to the phone told where it landed
            landing_failed: list[str] = []
            told_group = 0
            seen: dict[str, float] = {}
            lock = threading.Lock()
            done = threading.Event()
            start = time.monotonic()
            opened: list[float] = []

            async def open_page() -> JoinPhone | AppPhone | None:
                """A phone opens the page the room uses (the QR code's, or the app's Audience tab)."""
                page = (JoinPhone if args.page == "join" else AppPhone)(url, code)
                asked = time.monotonic()
                try:
                    await page.open()
                except Exception as exc:  # noqa: BLE001 - the page did not open: every send of it fails
                    failed.extend([f"the page did not open: {type(exc).__name__}: {exc}"[:160]] * PER_PHONE)
                    await page.close()
                    return None
                opened.append(time.monotonic() - asked)
                return page

            async def phone(index: int, page: JoinPhone | AppPhone | None) -> None:
                """A phone with the page open: Send, then where it landed, as the page asks once the send is
                answered."""
                nonlocal told_group
                if page is None:
                    return
                rng = random.Random(index)
                moments = sorted(rng.uniform(0, args.seconds) for _ in range(PER_PHONE))
                for k, moment in enumerate(moments):
                    await asyncio.sleep(max(0.0, start + moment - time.monotonic()))
                    text = sentences[index * PER_PHONE + k]
                    sent = time.monotonic()
                    try:
                        answer = await page.send(text)
                        accepted[" ".join(text.split())] = time.monotonic()
                        send_s.append(time.monotonic() - sent)
                    except Exception as exc:  # noqa: BLE001 - a refusal or failure is what is counted
                        (refused if any(why in str(exc) for why in ("already on the board", "minute", "is full"))
                         else failed).append(f"{type(exc).__name__}: {exc}"[:160])
                        continue
                    try:  # where it landed (the page's next step)
                        where = await page.landing(answer["id"])
                        landing_s.append(time.monotonic() - sent)
                        told_group += bool(where["cluster"]) or len(where["nearest"]) > 0
                    except Exception as exc:  # noqa: BLE001 - counted
                        landing_failed.append(f"{type(exc).__name__}: {exc}"[:160])
                await page.close()

            def room() -> None:  # every phone in one event loop: light enough to leave the cores to the app
                async def everyone() -> None:
                    nonlocal start
                    pages = await asyncio.gather(*(open_page() for _ in range(args.phones)))
                    p50, p95 = np.percentile(opened, [50, 95]) if opened else (float("nan"),) * 2
                    print(f"{len(opened)} pages opened in {time.monotonic() - start:.1f} s; "
                          f"a page p50 {p50:.2f} s, p95 {p95:.2f} s; then the room sends within {args.seconds:.0f} s",
                          flush=True)
                    start = time.monotonic()  # the room has the page open, as it does once the QR code is up
                    await asyncio.gather(*(phone(i, page) for i, page in enumerate(pages)))

                asyncio.run(everyone())

            poll_failures: list[str] = []

            def watch() -> None:
                """The presenter's page: its timer ticks every POLL_S seconds, and a tick while the last answer is
                still awaited is dropped (Gradio's trigger mode "once"), so the next ask is at the next tick."""
                first = time.monotonic()
                while not done.is_set():
                    try:
                        state = presenter.predict(code, api_name="/board_state")
                    except Exception as exc:  # noqa: BLE001 - counted: the presenter's page would show it
                        poll_failures.append(str(exc)[:160])
                    else:
                        now = time.monotonic()
                        with lock:
                            for item in state["sentences"]:
                                seen.setdefault(item["text"], now)
                    done.wait(POLL_S - (time.monotonic() - first) % POLL_S)

            config_s: list[float] = []

            def visitor() -> None:  # a page opening while the room sends: its first request
                import urllib.request

                while not done.is_set():
                    asked = time.monotonic()
                    try:
                        urllib.request.urlopen(url + "config", timeout=60).read()
                        config_s.append(time.monotonic() - asked)
                    except OSError as exc:
                        poll_failures.append(f"/config: {exc}"[:160])
                    done.wait(1.0)

            app_cpu, phones_cpu = psutil.Process(server.pid), psutil.Process()
            cpu_before = (_cpu(app_cpu), _cpu(phones_cpu), time.monotonic())
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            opener = threading.Thread(target=visitor, daemon=True)
            opener.start()
            room()
            cpu_share = [(_cpu(app_cpu) - cpu_before[0]), (_cpu(phones_cpu) - cpu_before[1]),
                         time.monotonic() - cpu_before[2]]
            time.sleep(5)  # the last sentences reach the board
            done.set()
            watcher.join()
            opener.join()
            stored = sqlite3.connect(Path(models_dir) / "cache" / "audience" / "boards.sqlite").execute(
                "SELECT COUNT(*) FROM sentences WHERE board = ?", (code,)).fetchone()[0]
        finally:
            stop_app(server)

    delays = np.array([seen[s] - t for s, t in accepted.items() if s in seen])
    never = [s for s in accepted if s not in seen]
    print(f"sends: {len(accepted)} accepted, {len(refused)} refused with a sentence (duplicates, rate, a full board), "
          f"{len(failed)} failed; "
          f"presenter refreshes that failed: {len(poll_failures)}")
    for message in failed[:5]:
        print(f"  failed: {message}")
    cores = psutil.cpu_count() or 1
    app_s, phones_s, wall = cpu_share
    print(f"CPU while the room opened its pages and sent ({wall:.0f} s, {cores} cores): the app {app_s:.0f} s "
          f"({100 * app_s / (cores * wall):.0f}% of the cores), the simulated phones and presenter (this process) "
          f"{phones_s:.0f} s ({100 * phones_s / (cores * wall):.0f}%)")
    told_failed = max(0, stored - len(accepted))
    print(f"in SQLite: {stored} sentences; lost: {max(0, len(accepted) - stored)}; stored although told failed: "
          f"{told_failed}; never on the presenter's board: {len(never)}")
    send_p95 = float(np.percentile(send_s, 95)) if send_s else float("nan")
    print(f"send latency: p50 {np.percentile(send_s, 50) if send_s else float('nan'):.2f} s, p95 {send_p95:.2f} s "
          f"(target p95 <= 2 s: {'met' if send_p95 <= 2 else 'NOT met'})")
    if landing_s:
        print(f"send -> the phone told where it landed (board_landing, as the page asks next): p50 "
              f"{np.percentile(landing_s, 50):.2f} s, p95 {np.percentile(landing_s, 95):.2f} s; {told_group} told "
              f"their nearest or group, {len(landing_failed)} failed")
        for message in landing_failed[:3]:
            print(f"  failed: {message}")
    if config_s:
        print(f"/config while the room sends: p50 {np.percentile(config_s, 50):.2f} s, p95 "
              f"{np.percentile(config_s, 95):.2f} s, max {max(config_s):.2f} s ({len(config_s)} asked)")
    if len(delays):
        p95 = float(np.percentile(delays, 95))
        print(f"accepted -> on the presenter's board: p50 {np.percentile(delays, 50):.2f} s, p95 {p95:.2f} s, "
              f"max {delays.max():.2f} s (target p95 <= 5 s: {'met' if p95 <= 5 else 'NOT met'})")


PAGES = {"join": "the QR code's page (/join/CODE)", "app": "the app's Audience tab (Gradio)"}


class JoinPhone:
    """A phone on the QR code's page: the page and its three files, the board's about, then sends and landings
    (one keep-alive connection, :class:`load.LightHttp`; the visitor cookie the page's answer sets, kept)."""

    def __init__(self, url: str, code: str):
        self.http = LightHttp(f"{url.rstrip('/')}/join/")
        self.code = code

    async def open(self) -> None:
        for path in (self.code, "assets/palette.css", "assets/join.css", "assets/join.js", f"{self.code}/about"):
            await self._answer(await self.http.request("GET", path))
        if COOKIE not in self.http.cookies:
            raise RuntimeError("the page set no visitor cookie")

    @staticmethod
    async def _answer(answer: tuple[int, bytes]) -> dict:
        import json

        status, content = answer
        if status != 200:
            raise RuntimeError(json.loads(content).get("error", content[:150]) if content.startswith(b"{")
                               else f"{status} {content[:150]!r}")
        return json.loads(content) if content.startswith(b"{") else {}

    async def send(self, text: str) -> dict:
        return await self._answer(await self.http.request("POST", f"{self.code}/send", {"sentence": text}))

    async def landing(self, number: int) -> dict:
        return await self._answer(await self.http.request("GET", f"{self.code}/landing/{number}"))

    async def close(self) -> None:
        await self.http.close()


class AppPhone:
    """A phone on the app's Audience tab: Gradio's page config and the page's first event (the board's join),
    which gives it its session, then ``/board_send`` and ``/board_landing`` in the page's own protocol."""

    def __init__(self, url: str, code: str):
        self.page = PageUser(url)
        self.page.http.cookies.set(COOKIE, secrets.token_urlsafe(16))
        self.code = code

    async def open(self) -> None:
        await self.page.open("board_send")
        joined = await self.page.http.post(f"{self.page.prefix}/run/board_join",
                                           json={"data": [self.code], "session_hash": self.page.session_hash})
        joined.raise_for_status()

    async def send(self, text: str) -> dict:
        return (await self.page.predict(self.code, text))[1]

    async def landing(self, number: int) -> dict:
        response = await self.page.http.post(f"{self.page.prefix}/run/board_landing",
                                              json={"data": [self.code, number]})
        response.raise_for_status()
        return response.json()["data"][0]

    async def close(self) -> None:
        await self.page.close()


def _cpu(process: "psutil.Process") -> float:
    """CPU seconds of a process and its children so far."""
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


if __name__ == "__main__":
    main()
