"""The page config shared by the pages that open together (sbert_demo/ui/config_cache.py), on a real ASGI stack:
the requests that arrive while one is computed get its answer, byte for byte; another address, a login or
another path is asked for itself; a config older than KEEP_S is computed again."""

from __future__ import annotations

import asyncio
import json

import pytest

from sbert_demo.ui.config_cache import SharedConfig


def run_async(coroutine):
    """``asyncio.run`` in a thread of its own: the test's thread may already run an event loop (Playwright's)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def counting_app():
    asked = []

    async def app(scope, receive, send):
        asked.append(scope["path"])
        await asyncio.sleep(0.05)  # the deep copy takes a while: the others arrive meanwhile
        host = dict(scope["headers"]).get(b"host", b"").decode()
        body = json.dumps({"root": f"http://{host}", "n": len(asked)}).encode()
        status = 500 if scope["path"] == "/broken" else 200
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body[:10], "more_body": True})
        await send({"type": "http.response.body", "body": body[10:], "more_body": False})

    return app, asked


async def get(app, path="/config", host=b"room.example", method="GET", cookie=b""):
    scope = {"type": "http", "method": method, "path": path, "query_string": b"", "scheme": "http", "root_path": "",
             "headers": [(b"host", host), (b"cookie", cookie)]}
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_pages_that_open_together_share_one_config() -> None:
    inner, asked = counting_app()
    shared = SharedConfig(inner)

    async def room():
        return await asyncio.gather(*(get(shared) for _ in range(50)))

    answers = run_async(room())
    assert len(asked) == 1  # fifty pages, one config computed
    assert {a for a in answers} == {(200, json.dumps({"root": "http://room.example", "n": 1}).encode())}
    assert run_async(get(shared)) == answers[0]  # within KEEP_S: the same answer
    other = run_async(get(shared, host=b"other.example"))  # another address: its own root URL
    assert json.loads(other[1]) == {"root": "http://other.example", "n": 2}
    assert run_async(get(shared, cookie=b"access-token-abc=1"))[1] != answers[0][1]  # a login's: never shared
    assert run_async(get(shared, path="/info")) and asked[-1] == "/info"  # other paths pass
    assert run_async(get(shared, method="POST")) and len(asked) == 5
    assert run_async(get(shared, path="/broken"))[0] == 500
    shared.kept.ttl_s = 0.0  # older than KEEP_S: computed again
    assert json.loads(run_async(get(shared))[1])["n"] == 7


def test_a_failed_config_is_not_kept() -> None:
    calls = []

    async def flaky(scope, receive, send):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the app failed")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}", "more_body": False})

    shared = SharedConfig(flaky)
    with pytest.raises(RuntimeError):
        run_async(get(shared))
    assert run_async(get(shared)) == (200, b"{}") and len(calls) == 2
