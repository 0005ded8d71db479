"""JSON routes beside the Gradio app: a handler's value as JSON, its failures as ``{"error": sentence}``.

:func:`json_route` wraps a handler of a Starlette request (plain: run in a worker thread; a coroutine: awaited in
the event loop) so that a ValueError is the visitor's doing (status 400, its sentence), a body past its limit is
a 413 (:class:`~sbert_demo.ui.bodies.BodyTooLarge`), and anything else is logged and answered with a 500 and a
sentence, never a traceback.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .bodies import BodyTooLarge
from .common import UNEXPECTED

logger = logging.getLogger(__name__)


def json_route(work: Callable[[Request], object], what: str = "the app") -> Callable:
    """A Starlette endpoint answering ``work(request)`` as JSON; ``what`` names the part of the app in the log."""
    awaited = inspect.iscoroutinefunction(work)

    async def endpoint(request: Request) -> Response:
        try:
            value = await work(request) if awaited else await run_in_threadpool(work, request)
            return JSONResponse(value, headers={"Cache-Control": "no-store"})
        except BodyTooLarge as exc:
            return JSONResponse({"error": str(exc)}, status_code=413)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except Exception as exc:  # noqa: BLE001 - logged; the page gets a sentence
            logger.exception("Unexpected error in %s", what, exc_info=exc)
            return JSONResponse({"error": UNEXPECTED.format(kind=type(exc).__name__)}, status_code=500)

    return endpoint
