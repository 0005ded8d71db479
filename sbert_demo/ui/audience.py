"""Audience tab: the room sends sentences from phones, and they land live on the presenter's map.

* **Join** (``/join/CODE``, the QR code's link: :mod:`sbert_demo.ui.join`, no Gradio page) and the tab's own box
  (``?board=CODE``): one box and Send; after sending, where the sentence landed (its nearest sentences on the
  board, with cosines, and its cluster).
* **Presenter** (``?board=CODE&key=SECRET``, the link shown once when the board is created): the
  board's map (newest highlighted), clusters named by their words, the latest sentences'
  similarities, the count and the closest pair, refreshed every second without a click; the
  model switched live re-projects the whole board. Lock, hide, clear and export need the secret.

Endpoints: ``board_create``, ``board_join``, ``board_send`` (answered at once with the sentence's id),
``board_landing`` (where that sentence landed), ``board_state`` (anyone with the code)
and ``board_lock``, ``board_hide``, ``board_clear``, ``board_model``, ``board_export`` (the secret).
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path
from urllib.parse import urljoin

import gradio as gr
import numpy as np

from ..audience.board import LATEST, landing_now, picture
from ..audience.qr import qr_image
from ..audience.store import (EXPORT_HEADERS, KEEP_HOURS, MAX_CHARS, MAX_SENTENCES, PER_MINUTE, board_store,
                              export_rows, normalise_code)
from ..encoding.encoder import encode
from ..explore import plots
from ..explore.exports import write_table_csv
from ..explore.similarity import cosine_matrix
from ..models.registry import get_registry
from ..models.kinds import EMBEDS
from ..models.per_model import resolve_for
from ..plot_style import wrap
from ..views import NAIVE_MODEL
from . import snippets
from .common import action, model_choices, user_errors
from .links import page_address
from .model_select import Refresher
from .visitor import address, visitor

# The presenter's board asks this often; a tick while its last answer is awaited is dropped (Gradio's trigger
# mode "once"), so a picture that takes a little over the period waited for a second tick: with 2 s, 500 phones'
# sentences reached the board in 5.5 s (p95), with 1 s in less (bench/audience.py). A tick with nothing new is skipped.
REFRESH_SECONDS = 1.0


def _live() -> dict:
    """The update that starts the presenter's two-second refresh (a new dict each time: Gradio consumes it)."""
    return gr.update(active=True)


NO_BOARD = "Create a board first (or open your presenter link): there is no board on this page yet."


def check_board_model(model: object) -> str:
    """``model`` if a board can be shown under it: a registry model that embeds sentences, available here,
    and that encodes a sentence on the path the board uses (the fast one); else a ValueError that says why."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError("Choose the model the board is shown under.")
    resolved = resolve_for(model, EMBEDS, "show an audience board")
    if not get_registry().availability(resolved.entry.key).available:
        raise ValueError(f"{resolved.entry.label} is not available here; choose another model for the board.")
    try:
        encode(resolved, ["A sentence from the room."], fast=True)
    except ValueError as exc:
        raise ValueError(f"A board cannot be shown under {resolved.entry.label}: {exc}") from None
    return resolved.entry.key


def _flag(value: object, what: str = "whether the board is closed") -> bool:
    """A yes/no from a page (a checkbox) or a script (true, false, "true", "false", 1, 0)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.strip().lower() in ("true", "1", "yes")
    raise ValueError(f"Say {what} with true or false.")


def _board_code(code: object) -> object:
    """The page's board (a ValueError when it has none yet, before any presenter action)."""
    if code is None or (isinstance(code, str) and not code.strip()):
        raise ValueError(NO_BOARD)
    return code


def links(base: str, code: str, secret: str | None = None) -> tuple[str, str | None]:
    """The join link (the phone page, :mod:`~sbert_demo.ui.join`: code only, safe for a slide and the QR code) and
    the presenter's link (the app's page with the secret)."""
    base = base.split("?")[0]
    join = urljoin(base, f"join/{code}")
    return join, (f"{base}?board={code}&key={secret}" if secret else None)


def _label(key: str) -> str:
    try:
        return get_registry().get(key).label
    except ValueError:
        return key


# --- handlers ------------------------------------------------------------------------------------

@user_errors
def create_board(model: str, request: gr.Request) -> tuple:
    """A new board under ``model``: (code, secret, the presenter's panel HTML, the model, the timer started)."""
    model = check_board_model(model)
    board = board_store().create(model)
    return board.code, board.secret, _invite(page_address(request), board.code, board.secret), model, _live()


def _invite(base: str, code: str, secret: str | None) -> str:
    join, presenter = links(base, code, secret)
    keep = ("" if presenter is None else  # folded: the screen is projected, the secret must not be
            f'<details class="muted"><summary>Your presenter link (holds the board\'s secret: do not show it)</summary>'
            f'<code>{html.escape(presenter)}</code><br>Lock, hide, clear and export need it; open it again to get '
            f"back to this board.</details>")
    return (f'<div class="board-invite">{qr_image(join, f"QR code: join board {code}")}'
            f'<div><p class="board-code">Board <strong>{html.escape(code)}</strong></p>'
            f'<p>Open <code>{html.escape(join)}</code> on your phone (or scan the code) and send a sentence.</p>'
            f"{keep}</div></div>")


@user_errors
def api_create_board(model: str, request: gr.Request) -> dict:
    """A new board under ``model``: its code, the presenter's secret (returned only here) and both links."""
    code, secret, _, model, _ = create_board(model, request)
    join, presenter = links(page_address(request), code, secret)
    return {"code": code, "secret": secret, "model": model, "join_link": join, "presenter_link": presenter}


@user_errors
def api_lock(code: str, secret: str, locked: bool | str) -> str:
    return _text(set_locked(code, secret, locked))


@user_errors
def api_hide(code: str, secret: str, sentence_id: int, and_later: bool = False) -> str:
    """Hide sentence ``sentence_id`` of the board, and with ``and_later`` every one sent after it (a flood)."""
    return _text(hide_sentence(code, secret, sentence_id, and_later))


@user_errors
def api_clear(code: str, secret: str) -> str:
    return _text(clear_board(code, secret))


@user_errors
def api_model(code: str, secret: str, model: str) -> str:
    return _text(set_model(code, secret, model))


@user_errors
def api_export(code: str, secret: str) -> str:
    """The board as CSV text (every sentence, hidden ones marked), for the presenter's script."""
    return Path(export_board(code, secret)).read_text(encoding="utf-8")


def _text(message_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", message_html)).strip()


def board_about(code: str) -> dict:
    """What a phone sees before sending: the board's model and how many sentences it holds."""
    board = board_store().get(code)
    return {"code": board.code, "model": board.model, "model_label": _label(board.model),
            "sentences": board_store().count(board.code), "locked": board.locked, "max_chars": MAX_CHARS}


join_board = user_errors(board_about)


def store_sentence(code: str, sentence: str, request) -> dict:
    """Put the sentence on the board, sent by the browser behind ``request`` (its visitor cookie, its network
    address): the sentence as stored, its number and the board's count, or a ValueError that says why not."""
    store = board_store()
    added = store.add(code, sentence, sender=visitor(request), address=address(request))
    # From here on the sentence is on the board: the phone is told so, whatever happens to its landing.
    board = store.get(code)
    return {"code": board.code, "id": added.id, "sentence": added.text, "model": board.model,
            "sentences": store.count(board.code)}


@user_errors
def send_sentence(code: str, sentence: str, request: gr.Request) -> tuple[str, dict]:
    """Put the sentence on the board and say so at once: (the phone's HTML, the same as JSON). Where it landed
    (its nearest sentences and group) follows from :func:`where_it_landed`, chained after it on the page: a send
    is one small write, answered in milliseconds however many phones send, and the grouping is batched behind
    it (:func:`landing_now`), so a full room's sends never wait for the board's model."""
    result = store_sentence(code, sentence, request) | {"nearest": [], "cluster": None, "pending": True}
    return _landing_html(result), result


async def landing_of(code: str, sentence_id: object) -> dict:
    """Where sentence ``sentence_id`` of board ``code`` landed, for now: its nearest sentences on the board and
    its group, as the board was last grouped (awaited in the app's event loop: a room's phones wait for the
    board's grouping without a thread each); a ValueError when it is not on the board."""
    board, number = board_store().get(str(code)), _sentence_id(sentence_id)
    landed = await landing_now(board.model, board.code, lambda: board_store().sentences(board.code), number)
    return {"code": board.code, "id": number, "sentence": landed.sentence, "model": board.model,
            "model_label": _label(board.model), "cluster": landed.cluster,
            "nearest": [{"sentence": text, "cosine": cosine} for text, cosine in landed.nearest]}


async def where_it_landed(result: dict | None) -> tuple:
    """The second half of a send on the app's page: where it landed (:func:`landing_of`), as HTML and JSON."""
    if not isinstance(result, dict) or not result.get("pending"):
        return gr.skip(), gr.skip()
    try:
        result = await landing_of(str(result.get("code")), result.get("id"))
    except ValueError as exc:
        result = {key: result.get(key) for key in ("code", "id", "sentence", "model")} | {
            "nearest": [], "cluster": None, "note": f"Where it landed could not be worked out ({exc}); it is on the board."}
    return _landing_html(result), result


@user_errors
async def api_landing(code: str, sentence_id: int) -> dict:
    """Where a sent sentence landed (``board_send`` answers with its id): its nearest sentences and group."""
    return await landing_of(code, sentence_id)


def _sentence_id(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < 1:
        raise ValueError("a sentence's number is a whole number from 1")
    return int(value)


def _landing_html(result: dict) -> str:
    rows = "".join(f"<li><span class='num'>{item['cosine']:.2f}</span> {html.escape(item['sentence'])}</li>"
                   for item in result["nearest"])
    nearest = (f"<p>Closest on the board under {html.escape(_label(result['model']))}:</p><ol>{rows}</ol>" if rows
               else "<p>Finding where it landed on the board…</p>" if result.get("pending")
               else "<p>You are the first on the board: look at the screen as others join.</p>")
    cluster = (f"<p>For now it is in the group <strong>{html.escape(result['cluster'])}</strong>, as the screen "
               "draws it; the groups change as more sentences arrive.</p>"
               if result.get("cluster") else "")
    if result.get("note"):
        nearest, cluster = f"<p>{html.escape(result['note'])}</p>", ""
    return (f'<div class="notes notes-ok board-landed"><p>Sent: “{html.escape(result["sentence"])}”</p>'
            f"{nearest}{cluster}</div>")


def board_state(code: str) -> dict:
    """Everything on the board as JSON: sentences (visible ones), clusters, the closest pair."""
    store = board_store()
    board = store.get(code)
    sentences = store.sentences(board.code)
    try:
        shown = picture(board.model, sentences, board.code)
    except ValueError as exc:  # the board's model cannot run here now: its sentences are still the board's
        return {"code": board.code, "model": board.model, "locked": board.locked, "count": len(sentences),
                "sentences": [{"id": s.id, "text": s.text, "cluster": None, "x": None, "y": None} for s in sentences],
                "closest_pair": None, "problem": f"The board's model cannot be used here now: {exc}"}
    pair = shown.closest
    return {"code": board.code, "model": board.model, "locked": board.locked, "count": len(sentences),
            "sentences": [{"id": s.id, "text": s.text, "cluster": shown.cluster_names.get(c) if shown.coords is not None
                           else None, "x": None if shown.coords is None else round(float(shown.coords[i, 0]), 4),
                           "y": None if shown.coords is None else round(float(shown.coords[i, 1]), 4)}
                          for i, (s, c) in enumerate(zip(sentences, shown.clusters or [0] * len(sentences)))],
            "closest_pair": None if pair is None else {"a": sentences[pair[0]].text, "b": sentences[pair[1]].text,
                                                       "cosine": pair[2]}}


@user_errors
def api_board_state(code: str) -> dict:
    return board_state(code)


def refresh(code: str | None, shown_key: str | None) -> tuple:
    """The presenter's board, every second: skipped when nothing changed since the last answer.
    (summary, map, latest heatmap, the sentences Hide offers, the key of what is shown)."""
    if not code:
        return gr.skip(), gr.skip(), gr.skip(), gr.skip(), shown_key
    try:
        store = board_store()
        board = store.get(code)
        sentences = store.sentences(board.code)
        key = f"{board.model}|{board.locked}|{','.join(str(s.id) for s in sentences)}"
        if key == shown_key:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip(), shown_key
        try:
            shown = picture(board.model, sentences, board.code)
        except ValueError as exc:
            raise ValueError(f"The board's model cannot be used here now ({exc}); choose another model.") from None
    except ValueError as exc:
        return snippets.message(str(exc), "error"), gr.skip(), gr.skip(), gr.skip(), shown_key
    return (_summary(board, sentences, shown), board_map(shown, board.model), _latest(shown, board.model),
            _hide_choices(sentences), key)


def _hide_choices(sentences) -> dict:
    """The board's sentences for Hide, newest first, by number and text (a dropdown shows text, not HTML)."""
    choices = [(f"#{s.id} {snippets.shorten(s.text, 70)}", s.id) for s in reversed(sentences)]
    return gr.update(choices=choices)  # the presenter's choice stays while sentences arrive


def _summary(board, sentences, shown) -> str:
    pair = shown.closest
    closest = ("" if pair is None else
               f"<p>Closest pair so far (cosine {pair[2]:.2f}): “{html.escape(sentences[pair[0]].text)}” and "
               f"“{html.escape(sentences[pair[1]].text)}”</p>")
    state = " · <strong>closed</strong> to new sentences" if board.locked else ""
    return (f'<div class="board-summary"><p><span class="stat-value">{len(sentences)}</span> sentences on board '
            f"<strong>{html.escape(board.code)}</strong> under {html.escape(_label(board.model))}{state}</p>"
            f"{closest}</div>")


def board_map(shown, model: str, title: str | None = None):
    """The board's map under ``model`` (None below three sentences), the newest sentence ringed."""
    if shown.coords is None:
        return None
    names = [shown.cluster_names[c] for c in shown.clusters]
    hover = [f"#{sentence_id} {text}" for sentence_id, text in zip(shown.ids, shown.sentences)]  # the number that Hide takes
    figure = plots.scatter_map(shown.coords, hover, names, title or f"The room's sentences under {_label(model)}",
                               note=f"{shown.method}; newest ringed")
    newest = len(shown.sentences) - 1
    # The newest sentence ringed and written beside its point (escaped: Plotly reads tags in text),
    # wrapped, on the side of the point that has room: text to the right of a point in the left half,
    # to its left in the right half, so it stays inside the map; the legend sits below the map.
    low, high = shown.coords[:, 0].min(), shown.coords[:, 0].max()
    right_half = (shown.coords[newest, 0] - low) / ((high - low) or 1.0) > 0.5
    figure.add_scatter(x=[shown.coords[newest, 0]], y=[shown.coords[newest, 1]], mode="markers", showlegend=False,
                       marker=dict(size=22, color="rgba(0,0,0,0)", line=dict(width=3, color="black")),
                       hoverinfo="skip")
    figure.add_annotation(x=shown.coords[newest, 0], y=shown.coords[newest, 1], text=wrap(shown.sentences[newest],
                          24, 72), showarrow=False, xanchor="right" if right_half else "left", xshift=-16 if right_half
                          else 16, align="right" if right_half else "left", bgcolor="rgba(255,255,255,0.85)")
    figure.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.02, x=0))
    return figure


def _latest(shown, model: str):
    if len(shown.sentences) < 2:
        return None
    start = max(0, len(shown.sentences) - LATEST)
    sim = cosine_matrix(np.asarray(shown.embeddings)[start:])
    zmin, zmax = plots.shared_range([sim])
    return plots.heatmap(sim, list(shown.sentences[start:]), f"The latest {len(sim)}: cosine under {_label(model)}",
                         zmin, zmax)


@user_errors
def set_model(code: str, secret: str, model: str) -> str:
    board_store().check_secret(_board_code(code), secret)  # the secret first: a guess learns nothing of models
    board = board_store().set_model(code, secret, check_board_model(model))
    return snippets.message(f"The board is now shown under {_label(board.model)}.", "info")


@user_errors
def set_locked(code: str, secret: str, locked: bool | str) -> str:
    board = board_store().set_locked(_board_code(code), secret, _flag(locked))
    return snippets.message("Closed to new sentences." if board.locked else "Open to new sentences.", "info")


@user_errors
def hide_sentence(code: str, secret: str, number: float | None, and_later: bool | str = False) -> str:
    _board_code(code)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) \
            or int(number) != number:
        raise ValueError("Choose the sentence to hide (the list holds the board's sentences, newest first).")
    later = _flag(and_later, "whether every later sentence is hidden too")
    hidden = board_store().hide(code, secret, int(number), and_later=later)
    if later:
        return snippets.message(f"Sentence #{int(number)} and every later one are hidden from the board ({hidden} "
                                "now); the sentences sent before it stay.", "info")
    return snippets.message(f"Sentence #{int(number)} is hidden from the board.", "info")


@user_errors
def clear_board(code: str, secret: str) -> str:
    removed = board_store().clear(_board_code(code), secret)
    return snippets.message(f"Cleared {removed} sentence(s).", "info")


def export_board(code: str, secret: str) -> str:
    """The board as a CSV file (every sentence, hidden ones marked): its path."""
    store = board_store()
    board = store.check_secret(_board_code(code), secret)
    return str(write_table_csv(f"board-{board.code}", EXPORT_HEADERS, export_rows(store, board.code),
                               empty="The board has no sentences yet."))


@user_errors
def export_for_page(code: str, secret: str) -> dict:
    return gr.update(value=export_board(code, secret), visible=True)


def open_from_link(request: gr.Request) -> tuple:
    """``?board=CODE`` fills the phone's code box; ``&key=SECRET`` opens the presenter's board too."""
    params = dict(getattr(request, "query_params", {}) or {})
    code, secret = params.get("board"), params.get("key")
    if not code or params.get("step"):  # with a step: the presenter view's room step opens the board (ui.talk)
        return gr.skip(), None, None, gr.skip(), gr.skip(), gr.skip()
    try:
        code = normalise_code(code)
        if secret:
            board = board_store().check_secret(code, secret)
            return code, code, secret, _invite(page_address(request), code, secret), board.model, _live()
        board_store().get(code)
        return code, None, None, gr.skip(), gr.skip(), gr.skip()
    except ValueError as exc:
        return gr.skip(), None, None, snippets.message(str(exc), "error"), gr.skip(), gr.skip()


# --- layout and wiring ---------------------------------------------------------------------------

def build_tab() -> list[Refresher]:
    """Build the Audience tab inside the current ``gr.Tab``."""
    gr.Markdown(f"The room joins in: create a board, show its QR code, and every sentence sent from a phone lands "
                f"on the map within seconds. Sentences: at most {MAX_CHARS} characters, {PER_MINUTE} a minute per "
                f"phone, {MAX_SENTENCES} a board; boards are removed after {KEEP_HOURS} hours.",
                elem_classes="tab-intro", elem_id="board-intro")
    with gr.Column(elem_id="board-join"):
        gr.Markdown("### Send a sentence to the board", elem_classes="join-title")
        code = gr.Textbox(label="Board code", max_lines=1, placeholder="e.g. KXQRT", elem_id="board-code")
        sentence = gr.Textbox(label="Your sentence", max_lines=3, max_length=MAX_CHARS,
                              placeholder="Any sentence: a question, a feeling, a fact…", elem_id="board-sentence")
        send = gr.Button("Send", variant="primary", size="lg", elem_id="board-send")
        landed = gr.HTML(elem_id="board-landed")
    landed_json = gr.JSON(visible=False)
    with gr.Accordion("Presenter: the board on the screen", open=True, elem_id="board-presenter"):
        with gr.Row(equal_height=True):
            model = gr.Dropdown(model_choices(available_only=True, needs=EMBEDS), value=NAIVE_MODEL,
                                label="Model (switch it live: the board re-projects)", elem_id="board-model", scale=3,
                                min_width=320)  # on a phone the button goes below: the model's name stays whole
            create = gr.Button("Create a board", variant="primary", scale=1, elem_id="board-create")
        with gr.Row(equal_height=False):  # the QR code beside the map: one projector screen
            with gr.Column(scale=1, min_width=320):
                invite = gr.HTML(elem_id="board-invite")
                summary = gr.HTML(elem_id="board-summary")
            with gr.Column(scale=2, min_width=320):
                map_plot = gr.Plot(show_label=False, elem_id="board-map")
        latest = gr.Plot(show_label=False, elem_id="board-latest")
        # The presenter's controls wait for a board (created here or opened from the presenter's link).
        with gr.Row(equal_height=True):
            lock = gr.Checkbox(label="Closed to new sentences", elem_id="board-lock", min_width=220, interactive=False)
            hide_number = gr.Dropdown([], value=None, label="Hide a sentence (newest first; #number as on the map)",
                                      elem_id="board-hide-choice", scale=3, min_width=300, interactive=False)
            hide = gr.Button("Hide", elem_id="board-hide", interactive=False)
            hide_later = gr.Button("Hide it and every later one", elem_id="board-hide-later", interactive=False)
            clear = gr.Button("Clear the board", variant="stop", elem_id="board-clear", interactive=False)
            export = gr.Button("Export CSV", elem_id="board-export", interactive=False)
        notes = gr.HTML(elem_id="board-notes")
        exported = gr.File(label="The board as CSV", interactive=False, visible=False, elem_id="board-file")
    board_code, secret, shown_key = gr.State(None), gr.State(None), gr.State(None)
    # Ticks only on the presenter's page, once a board is open there: every other page (a phone, any
    # other tab) would otherwise ask the server every second for nothing.
    timer = gr.Timer(REFRESH_SECONDS, active=False)
    quiet = dict(queue=False, show_progress="hidden", api_visibility="private")

    gr.on(None, open_from_link, None, [code, board_code, secret, invite, model, timer], **quiet)  # on page load
    action([create.click], create_board, model, [board_code, secret, invite, model, timer], failures_to=invite,
           api_visibility="private", concurrency_id="board", reveal="board-invite")  # the QR code on screen
    board_code.change(lambda code: [gr.update(interactive=bool(code))] * 6, board_code,
                      [lock, hide_number, hide, hide_later, clear, export], **quiet)
    # A send is one small write, outside the queue (a room's 1,500 sends queued behind each other had waited
    # 85 s); where it landed follows, awaited without a thread each while the board is grouped (landing_now).
    sent = action([send.click, sentence.submit], send_sentence, [code, sentence], [landed, landed_json],
                  failures_to=landed, api_name="board_send", queue=False, show_progress="hidden")
    sent.then(lambda: "", None, sentence, **quiet)
    sent.success(where_it_landed, landed_json, [landed, landed_json], show_progress="hidden",
                 api_visibility="private", concurrency_limit=None)
    timer.tick(refresh, [board_code, shown_key], [summary, map_plot, latest, hide_number, shown_key],
               show_progress="hidden", api_visibility="private", concurrency_id="board-refresh",
               concurrency_limit=2)
    presenter = dict(failures_to=notes, api_visibility="private", queue=False, show_progress="hidden")
    action([model.input], set_model, [board_code, secret, model], notes, **presenter)
    action([lock.input], set_locked, [board_code, secret, lock], notes, **presenter)
    for button, later in ((hide, False), (hide_later, True)):
        action([button.click], lambda code, key, number, later=later: hide_sentence(code, key, number, later),
               [board_code, secret, hide_number], notes, **presenter).success(
            lambda: None, None, hide_number, **quiet)  # the hidden sentences leave the list at the next refresh
    action([clear.click], clear_board, [board_code, secret], notes, **presenter)
    action([export.click], export_for_page, [board_code, secret], exported, failures_to=notes, api_visibility="private")
    # The same for scripts (the presenter's code and secret are arguments there, not page state).
    for fn, name in ((api_create_board, "board_create"), (join_board, "board_join"), (api_board_state, "board_state"),
                     (api_landing, "board_landing"),
                     (api_lock, "board_lock"), (api_hide, "board_hide"), (api_clear, "board_clear"),
                     (api_model, "board_model"), (api_export, "board_export")):
        gr.api(fn, api_name=name, queue=False)
    return [Refresher(lambda value: gr.update(choices=model_choices(available_only=True, needs=EMBEDS)), model)]
