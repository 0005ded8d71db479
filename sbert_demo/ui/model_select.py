"""The model multi-select every tab uses, kept in step with the registry while the app runs.

Choices are asked from the registry when the page loads and whenever a tab is selected, so a
model trained or added while the app runs shows up everywhere without a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import gradio as gr

from ..models.kinds import EMBEDS, kind_of
from ..models.registry import get_registry
from .common import model_choices, user_errors


def default_models(families: Iterable[str] = ("naive", "siamese"), limit: int | None = None,
                   needs: str = EMBEDS) -> list[str]:
    """Keys of the available registry models of ``families`` that can do what a view ``needs``, in
    registry order."""
    registry = get_registry()
    wanted = set(families)
    keys = [e.key for e in registry.entries()
            if e.family in wanted and kind_of(e).can(needs) and registry.availability(e).available]
    return keys[:limit] if limit else keys


def model_dropdown(value: Sequence[str], max_choices: int, label: str = "Models", info: str | None = None,
                   elem_id: str | None = None, needs: str = EMBEDS) -> gr.Dropdown:
    """A multi-select of the registry models that can do what the view ``needs`` (unavailable ones
    stay listed and say so).

    ``allow_custom_value``: Gradio checks values against the choices the page was built with, which
    would refuse models added or trained since (e.g. from ``gradio_client``); the handlers ask the
    registry instead, which names the known models when a key is wrong.
    """
    dropdown = gr.Dropdown(choices=model_choices(fixes=True, needs=needs), value=list(value), multiselect=True,
                           max_choices=max_choices, allow_custom_value=True, label=label, info=info, elem_id=elem_id)
    dropdown.needs = needs  # what picker() refreshes it with
    return dropdown


@user_errors
def refresh_models(selected: list[str] | None, needs: str = EMBEDS) -> dict:
    """Fresh choices for a model multi-select; the selection keeps the models that still exist (and
    typed variants, e.g. ``glove-6b-50d+whiten128``, whose base still exists)."""
    choices = model_choices(fixes=True, needs=needs)
    known = {key for _, key in choices}
    kept = [key for key in selected or [] if key in known or _known_variant(key)]
    if kept == list(selected or []):
        # Nothing to drop: the selection is not sent back, since this answer can land after the selection
        # has changed (a link's models arriving while its tab is selected, or the user's own clicks).
        return gr.update(choices=choices)
    return gr.update(choices=choices, value=kept)


def _known_variant(key: object) -> bool:
    try:
        return isinstance(key, str) and get_registry().get(key).fix is not None
    except ValueError:
        return False


class Refresher(NamedTuple):
    """A component to bring up to date with the registry, and the handler that does it.

    ``fn`` takes the component's current value and returns its update.
    """

    fn: Callable[[object], object]
    component: gr.components.Component


def picker(dropdown: gr.Dropdown) -> Refresher:
    needs = getattr(dropdown, "needs", EMBEDS)
    return Refresher(lambda selected: refresh_models(selected, needs), dropdown)


def keep_in_sync(refreshers: Iterable[Refresher], *triggers) -> None:
    """Run each refresher on every trigger (e.g. ``demo.load``, ``tab.select``)."""
    for fn, component in refreshers:
        gr.on(triggers=list(triggers), fn=fn, inputs=component, outputs=component,
              queue=False, show_progress="hidden", api_visibility="private")
