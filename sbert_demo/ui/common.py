"""What every tab shares: turning core errors into messages, and the model choices.

The one place where exceptions become what a user sees. The core raises ``ValueError`` with a
sentence; :func:`user_errors` shows it as a ``gr.Error`` (HTML-escaped: Gradio renders the
message as HTML and it may quote user input). Anything else is a bug: it is logged with its
traceback and the user gets a short apology, never the traceback.
"""

from __future__ import annotations

import functools
import html
import inspect
import logging
from collections.abc import Callable

import gradio as gr

from ..encoding.embedding_cache import embedding_cache
from ..models.registry import get_registry

logger = logging.getLogger(__name__)

UNEXPECTED = "Something went wrong on the server ({kind}); it has been logged. Please try again."


def to_gr_error(exc: BaseException) -> gr.Error:
    if isinstance(exc, gr.Error):
        return exc
    if isinstance(exc, ValueError):
        return gr.Error(html.escape(str(exc)), print_exception=False)
    logger.exception("Unexpected error in a UI handler", exc_info=exc)
    return gr.Error(UNEXPECTED.format(kind=type(exc).__name__), print_exception=False)


def user_errors(handler: Callable) -> Callable:
    """Decorate a UI handler (plain or generator) so failures reach the user as sentences."""
    if inspect.isgeneratorfunction(handler):

        @functools.wraps(handler)
        def wrapped_generator(*args, **kwargs):
            try:
                yield from handler(*args, **kwargs)
            except Exception as exc:
                raise to_gr_error(exc) from exc

        return wrapped_generator

    @functools.wraps(handler)
    def wrapped(*args, **kwargs):
        try:
            return handler(*args, **kwargs)
        except Exception as exc:
            raise to_gr_error(exc) from exc

    return wrapped


def warn_once_about_the_cache() -> None:
    """If the persistent embedding cache stopped working (read-only or full disk), say so once."""
    notice = embedding_cache().take_notice()
    if notice:
        gr.Warning(html.escape(notice))


def model_choices(available_only: bool = False) -> list[tuple[str, str]]:
    """``(label, key)`` pairs for model dropdowns, asked fresh from the registry each time.

    Unavailable models stay listed (marked) so users learn why they cannot be used.
    """
    registry = get_registry()
    choices = []
    for entry in registry.entries():
        available = registry.availability(entry).available
        if available_only and not available:
            continue
        family = {"fine-tuned": "trained here"}.get(entry.family, entry.family)
        mark = "" if available else " (unavailable)"
        choices.append((f"{entry.label} · {family}{mark}", entry.key))
    return choices
