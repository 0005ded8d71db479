"""The link to the current view: restored when a page opens (:mod:`.links` reads the URL) and
written by the "Copy link" button, which also puts it on the clipboard."""

from __future__ import annotations

import gradio as gr

from ..data.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
from . import snippets
from .explore import query_choices
from .links import SUB_TABS, make_link, parse_link
from .page_assets import asset
from .talk import STEPS

# (tab, name) of every component a link can set or read (the description is only set).
SLOTS = [("explore", "example"), ("explore", "description"), ("explore", "text"), ("explore", "models"),
         ("explore", "query"), ("explore", "colour"), ("explore", "clusters"), ("explore", "mode"),
         ("corpus", "models"), ("corpus", "source"), ("sts", "models"), ("sts", "data"), ("sts", "mode"),
         ("table1", "models"), ("why", "models"), ("talk", "step")]
def apply_link(request: gr.Request) -> tuple[str | None, str, dict]:
    """``(tab to select or None, notes, {slot: update})`` from the page's URL; slots not named stay as they are."""
    state = parse_link(dict(getattr(request, "query_params", {}) or {}))
    if state.step is not None and state.step >= len(STEPS):
        state.notes.append(f"Ignored step={state.step + 1}; the presenter view has steps 1 to {len(STEPS)}.")
        state.step = None
    updates: dict[tuple[str, str], object] = {}
    text = None
    if state.example:
        example = EXAMPLE_SETS[state.example]
        text = example.text
        updates[("explore", "example")] = example.key
        updates[("explore", "description")] = snippets.paragraph(example.description)
        updates[("explore", "text")] = text
    elif state.sentences is not None:
        text = state.sentences
        updates[("explore", "text")] = text
    if text is not None or state.query is not None:
        current = text if text is not None else EXAMPLE_SETS[DEFAULT_EXAMPLE].text
        updates[("explore", "query")] = query_choices(current, state.query or 0)
    if state.models:
        updates[(_picker_tab(state.tab), "models")] = gr.update(value=state.models)
    if state.tab in ("explore", "corpus"):
        updates[("explore", "mode")] = gr.update(selected="corpus" if state.tab == "corpus" else "compare")
    if state.tab in ("sts", "table1", "cost"):
        updates[("sts", "mode")] = gr.update(selected="stsb" if state.tab == "sts" else state.tab)
    for name in ("colour", "clusters"):
        if getattr(state, name):
            updates[("explore", name)] = getattr(state, name)
    if state.data:
        updates[("sts", "data")] = state.data
    if state.step is not None:
        updates[("talk", "step")] = state.step
    notes = snippets.notes_box(state.notes, title="Some of the link could not be used", kind="warning")
    return state.tab, notes, updates


def _picker_tab(tab: str | None) -> str:
    """The tab whose model picker a link's ``models`` fill."""
    return tab if tab in ("corpus", "sts", "table1", "why") else "explore"


def copy_link(tab: str | None, current: dict[tuple[str, str], object]) -> list[str]:
    """``(query string, note)`` describing the current view; ``current`` holds the slots' values."""
    tab = tab or "explore"
    models = current.get((_picker_tab(tab), "models"))
    link, note = make_link(tab, example=current.get(("explore", "example")), text=current.get(("explore", "text")),
                           models=[m for m in models or [] if isinstance(m, str)],
                           query=current.get(("explore", "query")), colour=current.get(("explore", "colour")),
                           clusters=current.get(("explore", "clusters")), data=current.get(("sts", "data")),
                           step=current.get(("talk", "step")))
    if tab == "corpus" and current.get(("corpus", "source")) == "file":
        note = ("The link opens the corpus map with these models and the built-in corpus: an uploaded file cannot "
                "travel in a link, so share the file too.")
    return [link, snippets.message(note, "warning") if note else ""]


def wire_links(demo: gr.Blocks, boxes: tuple[gr.Column, gr.Column], tabs: gr.Tabs, tab_events: list, linkable: dict,
               refreshers: list) -> None:
    """The Copy link button and the link box in ``boxes[0]``, notes in ``boxes[1]``; when a page loads, ``refreshers`` bring
    their components up to date with the registry, then the link's state is applied."""
    present = [slot for slot in SLOTS if slot[1] in linkable.get(slot[0], {})]
    with boxes[0]:
        copy = gr.Button("Copy link to this view", size="sm", elem_id="copy-link")
        link = gr.Textbox(show_label=False, interactive=False, max_lines=1, placeholder="A link to what you see",
                          elem_id="share-link")
    with boxes[1]:
        notes = gr.HTML(elem_id="link-notes")
    current_tab = gr.State("explore")
    # A tab with parts (Explore: compare, corpus map) remembers which part shows, for when it is selected again.
    shown = {parent: gr.State(parent) for _, _, parent in tab_events if parent}
    quiet = dict(queue=False, show_progress="hidden", api_visibility="private")
    for tab_id, select, parent in tab_events:
        if parent:
            select(lambda tab_id=tab_id: (tab_id, tab_id), None, [current_tab, shown[parent]], **quiet)
        elif tab_id in shown:
            select(lambda part: part, shown[tab_id], current_tab, **quiet)
        else:
            select(lambda tab_id=tab_id: tab_id, None, current_tab, **quiet)

    # Two steps: the tab (and its part) a link opens, then, once page.js has seen the tab's model picker
    # (or step list) drawn, the values. A tab draws its components only when first selected (gr.Tab's render_children),
    # and a value sent in the same answer as the selection was lost now and then (a flaky browser test).
    selectors = [slot for slot in present if slot[1] == "mode"]
    values = [slot for slot in present if slot[1] != "mode"]
    picker = gr.State("")
    pending = gr.State([])  # the link's values, read once with the tab and sent once it is drawn

    def open_tab(request: gr.Request) -> list:
        tab, notes_html, updates = apply_link(request)
        parts = [tab if tab and SUB_TABS.get(tab, tab) == parent else gr.skip() for parent in shown]
        own = linkable.get(tab or "explore", {})  # the tab's model picker, else its first component a link sets
        anchor = own.get("models") or next(iter(own.values()), None)
        return [gr.update(selected=SUB_TABS.get(tab, tab)) if tab else gr.skip(), tab or "explore", *parts, notes_html,
                getattr(anchor, "elem_id", None) or "", [updates.get(slot, gr.skip()) for slot in values],
                *(updates.get(slot, gr.skip()) for slot in selectors)]

    def refresh_all(*values) -> list:
        updates = []
        for (fn, _), value in zip(refreshers, values):
            update = fn(value)
            if isinstance(value, list) and isinstance(update, dict):
                # A model multi-select: its choices are brought up to date, but its selection is not sent
                # back; on a busy server this answer can land after the user has already changed it.
                update = {key: item for key, item in update.items() if key != "value"}
            updates.append(update)
        return updates

    components = [component for _, component in refreshers]
    demo.load(refresh_all, components, components, queue=False, show_progress="hidden",
              api_visibility="private").then(
        open_tab, None, [tabs, current_tab, *shown.values(), notes, picker, pending,
                         *(linkable[t][n] for t, n in selectors)],
        queue=False, show_progress="hidden", api_visibility="private").then(
        None, picker, picker, js=asset("link_drawn.js"), queue=False, show_progress="hidden").then(
        lambda sent: list(sent), pending, [linkable[t][n] for t, n in values], queue=False, show_progress="hidden",
        api_visibility="private").then(
        None, js=asset("link_applied.js"), queue=False, show_progress="hidden")
    readable = [slot for slot in present if slot[1] not in ("description", "mode")]

    def copy_handler(tab: str, *values) -> list[str]:
        return copy_link(tab, dict(zip(readable, values)))

    copy.click(copy_handler, [current_tab, *(linkable[t][n] for t, n in readable)], [link, notes],
               queue=False, show_progress="hidden", api_name="link").then(
        None, [link, notes], [link, notes], js=asset("copy_link.js"), queue=False, show_progress="hidden")
