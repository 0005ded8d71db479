"""Request bodies read with a limit before they are held, and JSON refused past a nesting depth.

* :func:`read_body` streams a request's body, counting, and stops at the limit: a 1.5 GB body costs
  the server one chunk of memory, not 1.5 GB (a ``Content-Length`` over the limit is refused unread).
* :func:`json_depth` measures how deeply a JSON text nests without parsing it (Python's parser
  raises ``RecursionError`` on 100,000 nested ``[``: a 500, not a sentence).
* :class:`BodyGuard` is an ASGI middleware in front of Gradio's own JSON endpoints (the API, the queue,
  MCP's JSON-RPC): bodies over :data:`GUARDED_BYTES` or nested past :data:`MAX_DEPTH` are answered with
  a 413 / 400 and a sentence before Gradio reads them. Uploads (``/upload``) have Gradio's own limit.

Example::

    >>> json_depth(b'{"rows": [1, 2, [3]], "q": "[[[[["}')
    3
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import numpy as np
from starlette.requests import Request

MAX_DEPTH = 64  # no request of this app nests past a handful of levels
GUARDED_BYTES = 8 * 1024 * 1024  # a Gradio API call or MCP message: a few hundred sentences as JSON
GUARDED_PREFIXES = ("/gradio_api/mcp", "/gradio_api/call", "/gradio_api/queue/join", "/gradio_api/run",
                    "/gradio_api/api", "/mcp")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


class BodyTooLarge(ValueError):
    """A body past its limit (answered with status 413)."""


def json_depth(data: bytes) -> int:
    """How deeply ``data`` (JSON text) nests: brackets inside strings do not count."""
    steps = _OPEN[np.frombuffer(_STRING.sub(b"", data), dtype=np.uint8)]
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0)) if steps.size else 0


def loads_bounded(data: bytes, what: str):
    """``data`` parsed as JSON, or a ValueError naming ``what`` when it is not JSON or nests too deeply."""
    if json_depth(data) > MAX_DEPTH:
        raise ValueError(f"{what} nests deeper than {MAX_DEPTH} levels; send plain JSON.")
    try:
        return json.loads(data or b"{}")
    except (ValueError, RecursionError):
        raise ValueError(f"{what} is not valid JSON.") from None


def too_large(limit: int) -> str:
    size = f"{limit / 2**20:.0f} MB" if limit >= 2**20 else f"{limit / 2**10:.0f} kB"
    return f"That request is larger than {size}; send less at once."


def scope_headers(scope) -> dict[str, str]:
    """An ASGI request's headers, their names in lower case."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def bounded(chunks: AsyncIterator[bytes], declared: str, limit: int) -> bytes:
    """The body that ``chunks`` make, counted as they arrive and refused (:class:`BodyTooLarge`) once past
    ``limit``, or unread where ``declared`` (its Content-Length) says it will be."""
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(too_large(limit))
    held, size = [], 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(too_large(limit))
        held.append(chunk)
    return b"".join(held)


async def read_body(request: Request, limit: int) -> bytes:
    """The body of ``request``, read chunk by chunk and refused (:class:`BodyTooLarge`) once past ``limit``."""
    return await bounded(request.stream(), request.headers.get("content-length", ""), limit)


class _Gone(Exception):
    """The client went away before its body was whole."""


async def _received(receive) -> AsyncIterator[bytes]:
    """The body chunks of an ASGI request's messages."""
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        yield message.get("body", b"")
        more = message.get("more_body", False)


class BodyGuard:
    """ASGI middleware: POST bodies to Gradio's JSON endpoints are read (bounded), checked for size and nesting,
    and handed on unchanged; the rest pass untouched."""

    def __init__(self, app, limit: int = GUARDED_BYTES, max_depth: int = MAX_DEPTH) -> None:
        self.app, self.limit, self.max_depth = app, limit, max_depth

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not _guarded(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        try:
            body = await bounded(_received(receive), scope_headers(scope).get("content-length", ""), self.limit)
        except BodyTooLarge as refused:
            await _refuse(send, 413, str(refused))
            return
        except _Gone:
            return
        if json_depth(body) > self.max_depth:
            await _refuse(send, 400, f"That request nests deeper than {self.max_depth} levels; send plain JSON.")
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _guarded(path: str) -> bool:
    return path.startswith(GUARDED_PREFIXES)


async def _refuse(send, status: int, sentence: str) -> None:
    body = json.dumps({"error": sentence}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
