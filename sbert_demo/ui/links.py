"""Deep links: the page's state in its URL, restored when the page opens, and the "Copy link" button.

Query parameters (all optional; unknown or malformed ones are ignored with a note, never an error):

* ``tab`` — ``explore``, ``corpus`` (Explore's corpus map), ``sts``, ``table1`` and ``cost`` (parts of
  the STS tab), ``why``, ``train``, ``models`` or ``talk``; ``view=talk`` opens the presenter view (the
  Talk tab in large type); ``board`` — an audience board's code (its join link: the phone page),
  with ``key`` its presenter's secret (the presenter's link), read by :mod:`.audience` (with
  ``view=talk&step=8``: the presenter view's room step on that board, read by :mod:`.talk`);
* ``set`` — a built-in example set (Explore), or ``sentences`` — the text box itself (one sentence
  per line, ``group | sentence`` allowed; links longer than :data:`MAX_LINK_CHARS` are not made);
* ``models`` — comma-separated registry keys (variants such as ``glove-6b-50d+whiten`` too), for the
  tab the link opens (Explore by default);
* ``query`` — the query sentence's number (1-based); ``colour`` — ``groups`` or ``clusters``;
  ``clusters`` — ``kmeans`` or ``hdbscan``; ``data`` — the STS tab's ``dev`` or ``test``;
* ``step`` — the presenter view's step (1-based; the QR code it shows carries the step on screen).

Example: ``?tab=explore&set=paraphrase-questions&models=glove-6b-50d,all-MiniLM-L6-v2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import urlencode

from ..data.examples import EXAMPLE_SETS
from ..data.sentences import parse_sentences
from ..models.registry import get_registry
from ..views import MODEL_TABS, TABS, VIEWS

SUB_TABS = {"corpus": "explore", "table1": "sts", "cost": "sts"}  # a link tab that is a part of another tab
MAX_LINK_CHARS = 2000  # what every browser, chat app and slide tool keeps of a URL
CHOICES = {"colour": ("groups", "clusters"), "clusters": ("kmeans", "hdbscan"), "data": ("dev", "test")}
KNOWN = {"tab", "view", "set", "sentences", "models", "query", "step", "board", "key", *CHOICES}  # board, key: ui.audience


class TabParts(NamedTuple):
    """What a tab builder returns: components to keep in step with the registry, the components a
    link can set, by name (e.g. ``{"models": dropdown}``), and the tab's own sub-tabs a link can open
    (``{link tab: (gr.Tab, its linkable components)}``, e.g. Explore's corpus map)."""

    refreshers: list
    linkable: dict
    parts: dict = {}


@dataclass
class LinkState:
    tab: str | None = None
    example: str | None = None
    sentences: str | None = None
    models: list[str] | None = None
    query: int | None = None  # 0-based
    colour: str | None = None
    clusters: str | None = None
    data: str | None = None
    step: int | None = None  # 0-based: the presenter view's step
    notes: list[str] = field(default_factory=list)


def _models(text: str, tab: str, notes: list[str]) -> list[str] | None:
    registry = get_registry()
    keys, unknown = [], []
    # A "+" typed into a URL (glove-6b-50d+whiten) arrives as a space: read it back as "+".
    for key in dict.fromkeys(k.strip().replace(" ", "+") for k in text.split(",") if k.strip()):
        try:
            keys.append(registry.get(key).key)
        except ValueError:
            unknown.append(key)
    if unknown:
        notes.append(f"Ignored unknown model(s) {', '.join(repr(k[:60]) for k in unknown[:5])}; see the Models tab.")
    limit = VIEWS[tab].max_models if tab in VIEWS else VIEWS["explore"].max_models
    if len(keys) > limit:
        notes.append(f"Kept the first {limit} models; this tab compares at most {limit}.")
    return keys[:limit] or None


def parse_link(params: Mapping[str, str]) -> LinkState:
    """The state a URL's query parameters ask for; what cannot be used becomes a note."""
    state = LinkState()
    notes = state.notes
    params = {str(k): str(v) for k, v in params.items() if not str(k).startswith("__")}  # Gradio's own
    unknown = sorted(set(params) - KNOWN)
    if unknown:
        notes.append(f"Ignored unknown link parameter(s): {', '.join(repr(u[:40]) for u in unknown[:5])}.")
    view = params.get("view", "").strip().lower()
    if view and view != "talk":
        notes.append(f"Ignored view={view[:40]!r}; the only view is talk (the presenter view).")
    # A board's join or presenter link opens the Audience tab (with view=talk: in the presenter's large type);
    # with a step too, the presenter view at that step (step 8 shows the board: ui.talk).
    board = params.get("board", "").strip() and not params.get("step", "").strip()
    tab = params.get("tab", "").strip().lower() or ("audience" if board else "") or (
        "talk" if view == "talk" else "")
    if tab:
        if tab in TABS:
            state.tab = tab
        else:
            notes.append(f"Ignored tab={tab[:40]!r}; choose one of {', '.join(TABS)}.")
    if "sentences" in params:
        text = params["sentences"]
        try:
            parsed = parse_sentences(text)
            if len(parsed.sentences) < 2:
                raise ValueError("a link needs at least two sentences")
            state.sentences = text
        except ValueError as exc:
            notes.append(f"Ignored the sentences in the link: {exc}")
    if "set" in params:
        key = params["set"].strip()
        if key in EXAMPLE_SETS and state.sentences is None:
            state.example = key
        elif key not in EXAMPLE_SETS:
            notes.append(f"Ignored set={key[:40]!r}; example sets: {', '.join(EXAMPLE_SETS)}.")
    if params.get("models", "").strip():
        state.models = _models(params["models"], state.tab if state.tab in MODEL_TABS else "explore", notes)
    if "query" in params:
        state.query = _query(params["query"], state, notes)
    if params.get("step", "").strip():
        state.step = _step(params["step"].strip(), notes)
        if state.step is not None and state.tab is None:
            state.tab = "talk"
    for name, valid in CHOICES.items():
        value = params.get(name, "").strip().lower()
        if not value:
            continue
        if value in valid:
            setattr(state, name, value)
        else:
            notes.append(f"Ignored {name}={value[:40]!r}; choose {' or '.join(valid)}.")
    return state


def _step(text: str, notes: list[str]) -> int | None:
    """0-based; whether the step exists is checked where the steps are known (:mod:`.sharing`)."""
    if text.isdigit() and int(text) >= 1:
        return int(text) - 1
    notes.append(f"Ignored step={text[:20]!r}; give the presenter view's step number, e.g. step=3.")
    return None


def _query(text: str, state: LinkState, notes: list[str]) -> int | None:
    source = state.sentences if state.sentences is not None else (
        EXAMPLE_SETS[state.example].text if state.example else None)
    count = len(parse_sentences(source).sentences) if source is not None else None
    try:
        number = int(text)
    except ValueError:
        notes.append(f"Ignored query={text[:20]!r}; give the query sentence's number, e.g. query=3.")
        return None
    if number < 1 or (count is not None and number > count):
        notes.append(f"Ignored query={number}: there is no sentence number {number}.")
        return None
    return number - 1


def make_link(tab: str, *, example: str | None = None, text: str | None = None,
              models: Sequence[str] | None = None, query: int | None = None, colour: str | None = None,
              clusters: str | None = None, data: str | None = None, step: int | None = None) -> tuple[str, str | None]:
    """``(query string, note)`` for the current state; the note says what a link cannot hold.

    >>> make_link("explore", example="paraphrase-questions", text=None, models=["glove-6b-50d"])[0]
    '?tab=explore&set=paraphrase-questions&models=glove-6b-50d'
    """
    params: dict[str, str] = {"tab": tab if tab in TABS else "explore"}
    note = None
    if tab == "explore":
        same_as_example = example in EXAMPLE_SETS and (text is None or text.strip() == EXAMPLE_SETS[example].text)
        if same_as_example:
            params["set"] = example
        elif text and text.strip():
            params["sentences"] = text.strip()
    if models:
        params["models"] = ",".join(models)
    if tab == "explore":
        if isinstance(query, int) and query > 0:
            params["query"] = str(query + 1)
        params.update({k: v for k, v in (("colour", colour), ("clusters", clusters)) if v})
    if tab == "sts" and data in CHOICES["data"]:
        params["data"] = data
    if tab == "talk" and isinstance(step, int) and step >= 0:
        params["step"] = str(step + 1)
    link = "?" + urlencode(params, safe=",|")
    if len(link) > MAX_LINK_CHARS and "sentences" in params:
        del params["sentences"]
        link = "?" + urlencode(params, safe=",|")
        note = (f"These sentences do not fit in a link (links hold up to {MAX_LINK_CHARS:,} characters): the "
                "link keeps the models and options. Share the sentences as a file and upload it.")
    return link, note


def page_address(request: object) -> str:
    """The page's address without its query, as the browser sees it (behind a proxy such as Spaces too):
    the base of a link or QR code the app shows. ``"/"`` when no HTTP request is behind the call."""
    try:
        referer = request.headers.get("referer")
        if referer:  # the page the request came from, e.g. https://someone-sbert-demo.hf.space/?tab=talk
            return referer.split("?")[0].split("#")[0]
        from gradio.route_utils import get_root_url

        return get_root_url(request.request, request.url.path, None) + "/"
    except Exception:  # an API call without an HTTP request behind it: a relative link
        return "/"
