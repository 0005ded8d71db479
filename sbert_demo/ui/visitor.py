"""Who a request comes from: which browser, across reloads (a random visitor cookie), and from which network.

Gradio gives every page load a new session, so a limit kept per session (the audience board's sentences a
minute from one phone) started again at each reload. :class:`VisitorCookie`, an ASGI middleware, gives a browser
that loads a page without one a random, HttpOnly cookie (SameSite=Lax over plain HTTP; over HTTPS, as on a
Space, ``SameSite=None; Secure; Partitioned`` so that it also holds in the Space's frame); :func:`visitor` reads it
back from a handler's request, where it passes the allow list of what this app hands out (:data:`TOKEN`), and
falls back to the Gradio session otherwise (an API client, a browser that refuses cookies). The cookie names a
browser, nobody: it holds no data and is not signed; a script that drops it is a new session each time, as
before, and still meets the per-network ceiling. :func:`address` is that network: the socket's peer, or what a
proxy this app trusts (``trusted_proxies`` in the settings) put last in X-Forwarded-For.

Example::

    >>> from types import SimpleNamespace
    >>> visitor(SimpleNamespace(cookies={COOKIE: "A" * 22}, session_hash="s1"))
    'visitor:AAAAAAAAAAAAAAAAAAAAAA'
    >>> visitor(SimpleNamespace(cookies={COOKIE: "x; y"}, session_hash="s1"))
    's1'
"""

from __future__ import annotations

import re
import secrets

from starlette.requests import cookie_parser

from ..config import settings
from .bodies import scope_headers

COOKIE = "sbert_demo_visitor"
TOKEN = re.compile(r"[A-Za-z0-9_-]{22}")  # what secrets.token_urlsafe(16) gives
MAX_AGE = 30 * 24 * 3600


def visitor(request) -> str:
    """The browser behind a Gradio request: its visitor cookie, else its session, else "api"."""
    cookies = getattr(request, "cookies", None) or {}
    token = cookies.get(COOKIE, "") if hasattr(cookies, "get") else ""
    if isinstance(token, str) and TOKEN.fullmatch(token):
        return f"visitor:{token}"
    return getattr(request, "session_hash", None) or "api"


def address(request) -> str:
    """The network address a request came from: behind a proxy this app trusts (any peer on a Space, a proxy on
    this machine elsewhere), the one that proxy saw (the last entry of X-Forwarded-For, which a client cannot
    forge); else the socket's, whatever the client wrote in that header ("" where unknown)."""
    headers = getattr(request, "headers", None) or {}
    client = getattr(request, "client", None)
    peer = str(getattr(client, "host", "") or "")
    forwarded = [part.strip() for part in str(headers.get("x-forwarded-for", "")).split(",") if part.strip()]
    trusted = settings().trusted_proxies
    if forwarded and ("*" in trusted or peer in trusted):
        return forwarded[-1]
    return peer


def set_cookie(secure: bool) -> bytes:
    """A new visitor's Set-Cookie header value."""
    where = "SameSite=None; Secure; Partitioned" if secure else "SameSite=Lax"
    return f"{COOKIE}={secrets.token_urlsafe(16)}; Path=/; Max-Age={MAX_AGE}; HttpOnly; {where}".encode()


class VisitorCookie:
    """ASGI middleware: a page (an HTML answer to a GET) sent to a browser without a valid visitor cookie sets
    one; everything else passes untouched."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        headers = scope_headers(scope)
        if TOKEN.fullmatch(cookie_parser(headers.get("cookie", "")).get(COOKIE, "")):
            await self.app(scope, receive, send)
            return
        secure = scope.get("scheme") == "https" or headers.get("x-forwarded-proto", "").split(",")[0].strip() == "https"

        async def with_cookie(message) -> None:
            if message["type"] == "http.response.start":
                answer = dict((k.lower(), v) for k, v in message.get("headers", []))
                if answer.get(b"content-type", b"").startswith(b"text/html"):
                    message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", set_cookie(secure))]}
            await send(message)

        await self.app(scope, receive, with_cookie)
