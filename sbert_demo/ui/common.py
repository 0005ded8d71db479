"""What every tab shares: turning core errors into messages, and the model choices.

The one place where exceptions become what a user sees. The core raises ``ValueError`` with a
sentence; :func:`user_errors` shows it as a ``gr.Error`` (HTML-escaped: Gradio renders the
message as HTML and it may quote user input). Anything else is a bug: it is logged with its
traceback and the user gets a short apology, never the traceback.

A toast fades after ten seconds, and a presenter who looked away must still see why an action
failed, so the sentence is also kept for the browser session that caused it: an
:func:`action` empties its message box, runs, and on failure writes the sentence there
(``.failure()``), where it stays until the action is triggered again.
"""

from __future__ import annotations

import functools
import html
import inspect
import logging
from collections.abc import Callable, Iterable

import gradio as gr
from gradio.context import LocalContext

from ..corpus.sources import MAX_UPLOAD_BYTES
from ..encoding.embedding_cache import embedding_cache
from ..models.kinds import EMBEDS, kind_of
from ..models.registry import get_registry
from ..models.variants import STANDARD_FIXES, variant_entry
from ..shared import BoundedCache
from .page_work import PageClosed

logger = logging.getLogger(__name__)

# Uploads: a corpus of a million sentences (the others check their own, smaller limits); the page, the docs and
# Gradio's refusal all say this one number.
MAX_FILE_SIZE = f"{MAX_UPLOAD_BYTES // 2**20}mb"
UNEXPECTED = "Something went wrong on the server ({kind}); it has been logged. Please try again."
FAILED = "The last action failed; see the message above or the server log."
MAX_SESSIONS = 1000  # sessions whose last failure is kept until shown (oldest forgotten first)

failures: BoundedCache[str, str] = BoundedCache("last failure per browser session", MAX_SESSIONS)


def _remember(message: str) -> None:
    """Keep ``message`` for the browser session of the running event (if there is one)."""
    request = LocalContext.request.get(None)
    session = getattr(request, "session_hash", None)
    if session:
        failures.put(session, message)


def to_gr_error(exc: BaseException) -> gr.Error:
    if isinstance(exc, gr.Error):  # converted already (a handler that calls another one): escaped once
        _remember(getattr(exc, "sentence", exc.message))
        return exc
    if isinstance(exc, PageClosed):  # nobody is there to read it: the run ends, its slot free, nothing logged
        logger.info("A run stopped: its page closed")
        message = "The page that started this run closed, so the run stopped."
    elif isinstance(exc, ValueError):
        message = str(exc)
    else:
        logger.exception("Unexpected error in a UI handler", exc_info=exc)
        message = UNEXPECTED.format(kind=type(exc).__name__)
    _remember(message)
    error = gr.Error(html.escape(message), print_exception=False)
    error.sentence = message  # the words themselves, for the page's own failure box (which escapes them)
    return error


def last_failure(request: gr.Request) -> str:
    """The sentence of this session's last failure, as an error box (the ``.failure()`` step)."""
    message = failures.pop(getattr(request, "session_hash", None) or "")
    return failure_box(message or FAILED)


def failure_box(message: str) -> str:
    return f'<div class="notes notes-error" role="alert"><strong>Failed:</strong> {html.escape(message)}</div>'


def clear_failure() -> str:
    return ""


QUIET = {"queue": False, "show_progress": "hidden", "api_visibility": "private"}


CHANGES = ("change", "key_up")  # the events whose listeners Gradio runs again for the last value ("always_last")


def reveal_js(elem_id: str) -> str:
    """Client-side step that scrolls ``#elem_id`` into view unless it is on screen already (``page.js``)."""
    return f"() => window.sbertDemoReveal({elem_id!r})"  # a call into page.js, whose function it is


def action(triggers: Iterable, fn: Callable, inputs, outputs, *, failures_to: gr.components.Component,
           reveal: str | None = None, **listener: object):
    """``gr.on(triggers, fn, inputs, outputs, **listener)`` whose failure stays readable.

    One chain, so the order is fixed: empty ``failures_to``, run ``fn``, and if it fails write the
    sentence into ``failures_to``, where it stays until a trigger fires again; that box is the one
    place the failure shows (no toast beside it; API callers still get the sentence). ``reveal``: the
    elem_id of the result, scrolled into view when ``fn`` succeeds, so a long run's result is not
    left below the fold. Returns the dependency of ``fn`` (its ``api_name`` is the endpoint, as with
    a plain listener).

    A trigger that fires twice must still leave the last answer on the page: Gradio fires a ``.change``
    again when the component mounts with the value a handler set (a File routed into a tab not shown
    yet), and a chained step is skipped while its previous run is pending. So a chain started by a
    change runs ``fn`` once more after the pending run ("always_last", as Gradio's own ``.change``
    does), and where ``failures_to`` is one of the outputs ``fn`` runs at once: its answer replaces the
    box, and no empty string from a second trigger's clearing can land after it.
    """
    triggers = list(triggers)
    if any(getattr(trigger, "event_name", "") in CHANGES for trigger in triggers):
        listener.setdefault("trigger_mode", "always_last")
    if any(output is failures_to for output in (outputs if isinstance(outputs, (list, tuple)) else [outputs])):
        event = gr.on(triggers, failures_inline(fn), inputs, outputs, **listener)
    else:
        started = gr.on(triggers, clear_failure, None, failures_to, **QUIET)
        event = started.then(failures_inline(fn), inputs, outputs, **listener)
    event.failure(last_failure, None, failures_to, **QUIET)
    if reveal:
        event.success(None, js=reveal_js(reveal), **QUIET)
    return event


def _converting(handler: Callable, catch: type[BaseException] | tuple[type[BaseException], ...], convert: Callable[[BaseException], BaseException]) -> Callable:
    """``handler`` (plain, generator or coroutine) whose ``catch`` exceptions are raised as ``convert(exc)``."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def awaited(*args, **kwargs):
            try:
                return await handler(*args, **kwargs)
            except catch as exc:
                raise convert(exc) from exc

        return awaited

    if inspect.isgeneratorfunction(handler):

        @functools.wraps(handler)
        def generator(*args, **kwargs):
            try:
                yield from handler(*args, **kwargs)
            except catch as exc:
                raise convert(exc) from exc

        return generator

    @functools.wraps(handler)
    def plain(*args, **kwargs):
        try:
            return handler(*args, **kwargs)
        except catch as exc:
            raise convert(exc) from exc

    return plain


def failures_inline(fn: Callable) -> Callable:
    """``fn`` whose :class:`gr.Error` carries ``visible=False``: :func:`action` shows the sentence in
    the page, so Gradio's toast would only show it a second time."""
    def quiet(error: gr.Error) -> gr.Error:
        hidden = gr.Error(error.message, duration=error.duration, visible=False, title=error.title,
                          print_exception=False)
        hidden.sentence = getattr(error, "sentence", error.message)
        return hidden

    return _converting(fn, gr.Error, quiet)


def user_errors(handler: Callable) -> Callable:
    """Decorate a UI handler (plain or generator) so failures reach the user as sentences (and a run whose page
    closed ends: :class:`~.page_work.PageClosed`)."""
    return _converting(handler, (Exception, PageClosed), to_gr_error)


def tool_errors(handler: Callable) -> Callable:
    """Like :func:`user_errors` for endpoints no page renders (tools for assistants): the sentence as plain
    text, not escaped for HTML."""
    def plain(exc: BaseException) -> gr.Error:
        error = to_gr_error(exc)
        return gr.Error(error.sentence, print_exception=False) if hasattr(error, "sentence") else error

    return _converting(handler, Exception, plain)


def warn_once_about_the_cache() -> None:
    """If the persistent embedding cache stopped working (read-only or full disk), say so once."""
    notice = embedding_cache().take_notice()
    if notice:
        gr.Warning(html.escape(notice))


def model_choices(available_only: bool = False, fixes: bool = False, needs: str | None = None) -> list[tuple[str, str]]:
    """``(label, key)`` pairs for model dropdowns, asked fresh from the registry each time.

    Unavailable models stay listed (marked) so users learn why they cannot be used; models whose
    kind lacks the capability the view ``needs`` are not offered (the view refuses them with a
    sentence if they are asked for anyway). ``fixes`` adds, after them, the standard training-free
    variants (centred, all-but-the-top 3, whitened) of every available model that embeds sentences;
    any other (``K+whiten128``) can be typed.
    """
    registry = get_registry()
    choices, fixed = [], []
    for entry in registry.entries():
        kind = kind_of(entry)
        if needs is not None and not kind.can(needs):
            continue
        available = registry.availability(entry).available
        if available_only and not available:
            continue
        family = {"fine-tuned": "trained here"}.get(entry.family, entry.family)
        mark = "" if available else " (unavailable)"
        choices.append((f"{entry.label} · {family}{mark}", entry.key))
        if fixes and available and kind.can(EMBEDS):
            fixed += [(f"{variant.label} · training-free fix", variant.key)
                      for variant in (variant_entry(entry, fix) for fix in STANDARD_FIXES)]
    return choices + fixed
