"""Gradio's page config, computed once for the pages that open together.

Every page that opens asks ``GET /config``: the whole app's layout, components and events, about 0.5 MB, which
Gradio deep-copies from its live config for each request (about 85 ms of one core on a 2-core AMD EPYC Zen 3,
under the GIL). A room of 500 phones that scan the board's QR code asks it 500 times in a minute: 40 s of the
interpreter, during which sends and the presenter's board wait (``bench/audience.py``).

:class:`SharedConfig` (ASGI middleware) answers the requests for the same config (same path and query, same
address the page was asked at, same encodings accepted) that arrive while one is computed, or within
:data:`KEEP_S` of it, with that one answer. Requests that carry credentials (an ``Authorization`` header or
Gradio's login cookie) are never shared: their config names their user.
"""

from __future__ import annotations

import asyncio

from ..shared import BoundedCache

KEEP_S = 5.0
PATHS = frozenset({"/config", "/config/"})
KEYED_HEADERS = (b"host", b"x-forwarded-host", b"x-forwarded-proto", b"x-forwarded-port", b"x-forwarded-prefix",
                 b"accept-encoding", b"accept-language")
MAX_KEPT = 32


class SharedConfig:
    """ASGI middleware: concurrent and recent identical ``GET /config`` requests share one answer."""

    def __init__(self, app) -> None:
        self.app = app
        self.kept: BoundedCache[tuple, tuple[dict, list[bytes]]] = BoundedCache(  # key -> (start message, body)
            "shared page configs", MAX_KEPT, ttl_s=KEEP_S)
        self.computing: dict[tuple, asyncio.Future] = {}

    async def __call__(self, scope, receive, send) -> None:
        key = self._key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        kept = self.kept.get(key)
        if kept is not None:
            await self._replay(kept, send)
            return
        waiting = self.computing.get(key)
        if waiting is not None:
            answer = await asyncio.shield(waiting)
            if answer is not None:
                await self._replay(answer, send)
                return
            await self.app(scope, receive, send)  # the one computed failed: this one asks for itself
            return
        future = self.computing[key] = asyncio.get_running_loop().create_future()
        start: dict = {}
        body: list[bytes] = []
        whole = []

        async def keep(message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.append(message.get("body", b""))
                if not message.get("more_body", False):
                    whole.append(True)
            await send(message)

        answer = None
        try:
            await self.app(scope, receive, keep)
            if start.get("status") == 200 and whole:  # a whole answer, sent whole
                answer = (start, body)
                self.kept.put(key, answer)
        finally:
            del self.computing[key]
            future.set_result(answer)

    @staticmethod
    def _key(scope) -> tuple | None:
        if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("path") not in PATHS:
            return None
        headers = dict(scope.get("headers") or [])
        if b"authorization" in headers or b"access-token" in headers.get(b"cookie", b""):
            return None
        return (scope.get("scheme"), scope.get("root_path", ""), scope.get("path"), scope.get("query_string", b""),
                *(headers.get(name, b"") for name in KEYED_HEADERS))

    @staticmethod
    async def _replay(answer: tuple, send) -> None:
        start, body = answer
        await send(start)
        for at, chunk in enumerate(body):
            await send({"type": "http.response.body", "body": chunk, "more_body": at < len(body) - 1})
        if not body:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
