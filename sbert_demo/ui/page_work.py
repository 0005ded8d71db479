"""Long work tied to the page that asked for it: a closed page stops its run, one heavy run per visitor.

Gradio stops a generator between two answers when its page goes away, but a handler computing one
answer (a model's Table 1 row: minutes) would run on after its visitor left, slowing everyone else's.
So the heavy handlers report progress through :func:`watched`: each report asks whether the page that
started the run is still there (Gradio marks a run's event not alive once the page's event stream
closes), and raises :class:`PageClosed` when it is not. :class:`PageClosed` is a ``BaseException``, so
no ``except Exception`` or ``except ValueError`` in the core takes it for a model's failure and goes on
with the next one; :func:`sbert_demo.ui.common.user_errors` ends the run quietly with it, and the run's
concurrency slot is free again.

:func:`heavy_run` lets one visitor (its visitor cookie, else its page) run one heavy job at a time: a
second one, from another tab, is refused with a sentence while the first is under way; a first one
whose page closed does not hold the place.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..shared import BoundedCache

logger = logging.getLogger(__name__)


class PageClosed(BaseException):
    """The page that started this run closed: the run stops here."""


def _active_events() -> list:
    """The events Gradio's queue runs now (none outside a queued event)."""
    from gradio.context import LocalContext

    queue = getattr(LocalContext.blocks.get(None), "_queue", None)
    return [event for job in getattr(queue, "active_jobs", []) for event in job or ()]


def _event():
    """Gradio's event this thread runs for (None outside a queued event)."""
    from gradio.context import LocalContext

    event_id = LocalContext.event_id.get(None)
    return next((event for event in _active_events() if event._id == event_id), None) if event_id else None


def _active(event) -> bool:
    """Whether ``event`` still runs on its page: among Gradio's active jobs (a cancelled run leaves them) and alive
    (a closed page's run is marked not alive)."""
    return any(e is event for e in _active_events()) and bool(event.alive)


def page_open(event: object = None) -> bool:
    """Whether the page that started this run (``event``, else the one this thread runs for) is still there;
    True outside a queued event (a script, a test, an event that skips the queue)."""
    event = event or _event()
    return event is None or _active(event)


def check_page(event: object = None) -> None:
    """Raise :class:`PageClosed` when the page that started this run has gone."""
    if not page_open(event):
        raise PageClosed()


def watched(progress: Callable[..., object]) -> Callable[..., None]:
    """``progress`` (a ``gr.Progress``) for reports as the core makes them, ``(fraction, what)``, or as Gradio's,
    ``(fraction, desc=what)``; each first checks that the page that started the run (found when this is made,
    in the handler) is still there: :class:`PageClosed` stops the work where it is."""
    event = _event()

    def report(fraction: float, what: str | None = None, desc: str | None = None) -> None:
        if event is not None:
            check_page(event)
        progress(fraction, desc=desc if desc is not None else what)

    return report


# visitor -> (what it runs, the event running it); a visitor whose run ended without a word (its page closed before
# the run's first report) is let go by the next look, or after a day
_running: BoundedCache[str, tuple[str, object]] = BoundedCache("page_work: each visitor's heavy run", 10_000,
                                                              ttl_s=24 * 3600)
_lock = threading.Lock()


class heavy_run:
    """``with heavy_run(who, "Table 1"):`` one heavy run per visitor; a ValueError (a sentence) while another
    of theirs is under way on a page that is still open."""

    def __init__(self, who: str, what: str) -> None:
        self.who, self.what, self.event = who, what, _event()

    def __enter__(self) -> heavy_run:
        with _lock:
            other = _running.get(self.who)
            if other is not None and other[1] is not self.event and _active(other[1]):
                raise ValueError(f"Your {other[0]} run is still under way in another tab; wait for it to finish, or "
                                 "close that tab to stop it, then start this one.")
            _running.put(self.who, (self.what, self.event))
        return self

    def __exit__(self, *exc) -> None:
        with _lock:
            if (_running.get(self.who) or (None, None))[1] is self.event:
                _running.pop(self.who)
