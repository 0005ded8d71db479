"""The presenter view: a fixed eight-step story in large type, one click (or key) per step.

Open it with ``?view=talk`` (large type, high contrast) or the Talk tab. The story, its numbers and
its figures are the core's (:mod:`sbert_demo.talk`); this module lays the step out and keeps the
page in one place:

* **One step state.** The radio ``step`` is the only step there is: the buttons and keys change it
  in the browser (no server round trip), and the title, figures, QR code and address all follow it.
  Every change is stamped (:data:`STAMP_JS`), and a step's answer that is no longer the newest of its
  page is dropped: a step still computing, or the live training's stream, stops the moment the
  presenter moves on (:data:`shown_steps`), and the step they moved to follows at once. A page has one
  answer under way at a time (page.js asks through the hidden ``talk-show`` once the last one has ended,
  for the newest step only), so an older step's answer never lands after a newer one's; a change that
  Gradio fires again with the step unchanged keeps its stamp and asks for nothing.
* **Every step at once.** A step's numbers are kept once computed (:mod:`sbert_demo.talk.rehearsal`);
  ``python -m sbert_demo prepare`` or **Rehearse** on the title slide computes all of them before the
  talk. A step asked for before then shows its title and a progress box at once, never an empty frame.
* **Training once.** Step 7 replays the talk's last training run (kept on disk) and trains only when
  none was kept, or on **Train again**; its model lives in the cache folder, never in ``models/``.
* **Phones.** The page tells the server its width with each step: a phone (the room following along
  from the QR code) gets figures drawn for 390 px, a compact row of controls and tables for numbers
  that no figure could hold.

Keys: → / PageDown / N next, ← / PageUp / P previous, F full screen, Q the QR code of the presenter
view (the room follows on their phones; at step 8 the board's join link). ``?view=talk&step=8&board=
CODE&key=SECRET`` (the link step 8 gives its presenter) opens step 8 on that board again, and a reload of
the presenter keeps its board (the browser keeps it for the tab, out of the address bar). A phone opened
from the presenter's QR code (``&follow=TOKEN``) follows the presenter's steps until it moves to another
step by itself. Such a page is a follower for good (its role is fixed when it opens): it never gets the
presenter's controls (Rehearse, Start a board, Train again), the server refuses them from it, and once the
presenter starts a board, the follower's step 8 gives the board's send link, pushed with the step.
"""

from __future__ import annotations

import html
import re
import secrets
import time

import gradio as gr

from ..audience.board import picture
from ..audience.qr import qr_image
from ..audience.store import board_store, normalise_code
from ..models.registry import get_registry
from ..shared import BoundedCache
from ..talk import slides, training
from ..talk.rehearsal import rehearsal
from ..talk.story import NAIVE, ROOM_STEP, SIAMESE, STEPS, check_step
from . import snippets
from .audience import REFRESH_SECONDS, board_map, links
from .common import QUIET, action, clear_failure, failures_inline, last_failure, user_errors
from .links import TabParts, page_address
from .page_work import watched

PRESENTER, FOLLOWER = "presenter", "follower"  # a page's role, fixed when it opens (a QR code's ?follow= a follower)
FOLLOWERS_CANNOT = "A page following the presenter cannot do that; it is the presenter's to do."
POLL_S = 0.25  # how often a step being computed (or the training) is looked at
TRAINING_POLL_S = 0.5
# A step change's layout to draw for and its stamp (page.js: a counter of this page); without a step, a new stamp.
STAMP_JS = "(s) => window.sbertDemoTalkStamp(s)"
NEW_STAMP_JS = "() => window.sbertDemoTalkStamp()"
# Ask for the step's answer (page.js clicks the hidden "talk-show" once the page's previous answer has ended),
# and say that an answer ended.
ASK_JS = "() => window.sbertDemoTalkAsk()"
ANSWERED_JS = "() => window.sbertDemoTalkAnswered()"
# The room's board kept by the browser for this tab (sessionStorage), so a reload of the presenter keeps it.
REMEMBERED_JS = "() => window.sbertDemoTalkRoom()"
REMEMBER_JS = "(s) => window.sbertDemoTalkRoom(s)"
MAX_SESSIONS = 2000

# session -> (the newest stamp seen, its step): a step's answer older than the page's newest is dropped.
shown_steps: BoundedCache[str, tuple[float, int | None]] = BoundedCache("talk: newest step per page", MAX_SESSIONS)


def note_step(step: int | None, stamp: float | None, request: gr.Request) -> None:
    """Remember the page's newest step (queue-free: it must overtake the step still being answered)."""
    session = getattr(request, "session_hash", None) or ""
    if not isinstance(stamp, (int, float)):
        return
    seen = shown_steps.get(session)
    if seen is None or stamp >= seen[0]:
        shown_steps.put(session, (float(stamp), step))


def _stale(request: gr.Request, stamp: float | None) -> bool:
    seen = shown_steps.get(getattr(request, "session_hash", None) or "")
    return seen is not None and isinstance(stamp, (int, float)) and seen[0] > stamp


def _title(step: int) -> tuple[str, str]:
    return f"## {step + 1} / {len(STEPS)} · {STEPS[step].name}", STEPS[step].caption


def table_html(table) -> str:
    if not table:
        return ""
    headers, rows = table
    return snippets.html_table(list(headers), [list(row) for row in rows], numeric=[len(headers) - 1])


def waiting_html(step: int, fraction: float, what: str, seconds: float) -> str:
    """The box a step shows while its numbers are computed for the first time on this machine."""
    return (f'<div class="talk-wait" role="status"><span class="talk-spinner" aria-hidden="true"></span>'
            f"<div><strong>Computing step {step + 1} for the first time on this machine: "
            f"{fraction:.0%}</strong> · {html.escape(what)} · {seconds:.0f} s<br>"
            "<span class=\"muted\">Rehearse on the title slide (or <code>python -m sbert_demo prepare</code>) "
            "computes every step before the talk; each then opens at once.</span></div></div>")


def intro_html(role: str | None = PRESENTER) -> str:
    """The title slide: the eight steps, and (for the presenter) whether each answers at once on this machine."""
    ready = rehearsal().ready()
    if role == FOLLOWER:
        items = "".join(f"<li>{html.escape(s.name)}</li>" for s in STEPS)
        return (f'<div class="talk-intro"><ol>{items}</ol><p>This page follows the presenter: each step shows '
                "here as it shows on the screen.</p></div>")
    items = "".join(f'<li class="{"ready" if ok else "not-ready"}">{html.escape(s.name)}'
                    f'{"" if ok else " <span class=muted>(computed when first shown)</span>"}</li>'
                    for s, ok in zip(STEPS, ready))
    state = ("Every step is ready: each opens at once." if all(ready) else
             f"{sum(ready)} of {len(STEPS)} steps are ready. <strong>Rehearse</strong> computes the rest now "
             "(a few minutes the first time on a machine), so that none is computed on stage.")
    return f'<div class="talk-intro"><ol>{items}</ol><p>{state}</p></div>'


# Outputs of a step: title, caption, left, right, waiting box, table, intro, Train again, the room's row.
# The room's row comes with the step's figures, in one update: the screen is never left with neither.
def _shown(step: int, slide: slides.Slide, note: str = "", train_again: bool = False) -> tuple:
    title, caption = _title(step)
    return (title, caption + (f" **{note}**" if note else ""),
            gr.update(value=slide.left, visible=slide.left is not None),
            gr.update(value=slide.right, visible=slide.right is not None),
            gr.update(value="", visible=False), gr.update(value=table_html(slide.table), visible=bool(slide.table)),
            gr.update(visible=False), gr.update(visible=train_again), gr.update(visible=step == ROOM_STEP))


def _waiting(step: int, box: str) -> tuple:
    title, caption = _title(step)
    return (title, caption, gr.update(visible=False), gr.update(visible=False), gr.update(value=box, visible=True),
            gr.update(visible=False), gr.update(visible=False), gr.update(visible=False), gr.update(visible=False))


def _computed_step(step: int, layout: str, request: gr.Request, stamp, progress):
    data = rehearsal().result(step)
    if data is None:
        work = rehearsal().start(step)
        yield _waiting(step, waiting_html(step, 0.0, work.what, 0.0))
        last = time.monotonic()
        while not work.wait(POLL_S):
            if _stale(request, stamp):
                return  # the presenter moved on: the work goes on in the background, kept for later
            progress(work.fraction, desc=work.what)
            if time.monotonic() - last > 1.0:  # the box's count moves once a second
                last = time.monotonic()
                yield _waiting(step, waiting_html(step, work.fraction, work.what, time.monotonic() - work.started))
        if work.error:
            raise ValueError(work.error)
        data = work.result
    if not _stale(request, stamp):
        yield _shown(step, slides.slide(step, data, layout))


def _training_step(step: int, layout: str, request: gr.Request, stamp, role: str | None):
    run = training.current()
    if run is None:  # never trained here: train now, live
        run = training.start()
    while True:
        if _stale(request, stamp):
            return  # the run goes on in the background; coming back replays or follows it
        yield _shown(step, slides.training_slide(run, layout), slides.training_slide(run, layout).note
                     or run.message, train_again=not run.active and role != FOLLOWER)
        if not run.active:
            if run.state == "failed":
                raise ValueError(run.error or "The training run failed.")
            return
        time.sleep(TRAINING_POLL_S)
        run = training.current() or run


def _room_step(step: int, room: dict | None, layout: str):
    left = right = None
    if room:
        _, left, right = room_view(room, room_sentences(room))
    yield _shown(step, slides.Slide(left, right))


@user_errors
def show_step(step: int | None, room: dict | None, layout: str | None, stamp: float | None,
              request: gr.Request, role: str | None = PRESENTER, progress=gr.Progress()):
    """Yield (title, caption, left, right, waiting box, table, intro, Train again, room's row) for step ``step``
    (0-based; None: the title slide), drawn for ``layout`` ("screen" or "phone")."""
    if step is None:
        title = f"## {len(STEPS)} steps: why siamese sentence embeddings beat naive ones"
        yield (title, "Click **Next** (or press →) to start; **Present** (or F) fills the screen.",
               gr.update(visible=False), gr.update(visible=False), gr.update(visible=False),
               gr.update(visible=False), gr.update(value=intro_html(role), visible=True), gr.update(visible=False),
               gr.update(visible=False))
        return
    step = check_step(step)
    layout = slides.check_layout(layout)
    note_step(step, stamp, request)  # a direct call (the API, a first page) counts as the newest too
    if STEPS[step].room:
        yield from _room_step(step, room, layout)
    elif STEPS[step].compute is None:
        if role == FOLLOWER and training.current() is None:  # a phone never starts the training run
            yield _shown(step, slides.Slide(None, None), "The presenter's screen shows this step's training run.")
            return
        yield from _training_step(step, layout, request, stamp, role)
    else:
        yield from _computed_step(step, layout, request, stamp, progress)


def presenter_only(role: str | None) -> None:
    """A ValueError for a page that follows the presenter (its role was fixed when it opened)."""
    if role != PRESENTER:
        raise ValueError(FOLLOWERS_CANNOT)


@user_errors
def train_again(role: str | None = PRESENTER) -> None:
    """Step 7's **Train again**: a new run of the talk's training (then the step follows it)."""
    presenter_only(role)
    training.start()


@user_errors
def rehearse(role: str | None = PRESENTER, progress=gr.Progress()) -> str:
    """Compute every step (and train step 7) now; the title slide then says every step is ready."""
    presenter_only(role)
    problems = rehearsal().rehearse(progress=watched(progress))
    if problems:
        raise ValueError(" ".join(problems))
    return intro_html()


# --- the room (step 8) -------------------------------------------------------------------------------

def room_sentences(room: dict) -> list:
    """The visible sentences on the room's board (a ValueError once it is gone)."""
    store = board_store()
    return store.sentences(store.get(room["code"]).code)


def room_view(room: dict, sentences: list) -> tuple[str, object, object]:
    """(status HTML, GloVe's map, MiniLM's map) of ``sentences``, the room's board as just read; a map
    is None below three sentences."""
    pictures = [picture(key, sentences, room["code"]) for key in (NAIVE, SIAMESE)]
    registry = get_registry()
    figures = [None if shown.coords is None else slides._fit(
                   board_map(shown, key, f"{registry.get(key).label}: the room's {len(sentences)} sentences"),
                   slides.SCREEN)
               for key, shown in zip((NAIVE, SIAMESE), pictures)]
    return room_status(room, pictures), *figures


def room_status(room: dict, pictures=()) -> str:
    """Under the step: the count, how to join, each model's closest pair (the audience's words escaped,
    never HTML), and the presenter's link folded away (it holds the board's secret)."""
    registry = get_registry()
    join, _ = links(room["base"], room["code"])
    presenter = f"{room['base']}?view=talk&step={ROOM_STEP + 1}&board={room['code']}&key={room['secret']}"
    count = len(pictures[0].sentences) if pictures else len(room_sentences(room))  # a link's board may hold some
    pairs = []
    for shown in pictures:
        if shown.closest is not None:
            i, j, cosine = shown.closest
            pairs.append(f"<li>Closest under {html.escape(registry.get(shown.model).label)} ({cosine:.2f}): "
                         f"“{html.escape(shown.sentences[i])}” · “{html.escape(shown.sentences[j])}”</li>")
    closest = f'<ul class="room-pairs">{"".join(pairs)}</ul>' if pairs else ""
    more = "" if count >= 3 else " The maps appear from 3 sentences."
    return (f'<div class="room-open"><div class="room-line"><span class="stat-value">{count}</span> sentences on '
            f"board <strong>{html.escape(room['code'])}</strong>: send yours at <code>{html.escape(join)}</code> "
            f"(Q: its QR code).{more} "
            f'<details class="muted"><summary>presenter link</summary>(holds the board\'s secret: do not show it) '
            f"<code>{html.escape(presenter)}</code> opens this step on this board again; the Audience tab with "
            f"<code>?board=…&amp;key=…</code> locks, hides, clears and exports.</details></div>{closest}</div>")


@user_errors
def start_room(role: str | None, request: gr.Request) -> tuple:
    """A board for the room under the siamese model: (the room, the timer on, "CODE:SECRET" for the browser to
    keep for this tab, so that a reload keeps the board). Its status shows once the browser has kept it
    (:func:`show_room`)."""
    presenter_only(role)
    board = board_store().create(SIAMESE)
    room = {"code": board.code, "secret": board.secret, "base": page_address(request)}
    return room, gr.update(active=True), f"{board.code}:{board.secret}"


def show_room(room: dict | None) -> tuple:
    """The started board's status, and the Start button gone."""
    return (room_status(room) if room else gr.skip()), gr.update(visible=False)


def room_from_link(remembered: str | None, request: gr.Request) -> tuple:
    """``?view=talk&step=8&board=CODE&key=SECRET`` opens the room step on that board, and so does a reload of
    a presenter page that had a board (``remembered``: "CODE:SECRET", kept by the browser for this tab, never
    in the address a projector shows): (the room, its status, the timer, what went wrong: a wrong secret or an
    unknown board, said at the room step)."""
    params = dict(getattr(request, "query_params", {}) or {})
    if params.get("board") and params.get("key") and params.get("step"):
        code, secret, said = params["board"], params["key"], True
    elif isinstance(remembered, str) and remembered.count(":") == 1 and len(remembered) <= 200:
        (code, secret), said = remembered.split(":"), False
    else:
        return gr.skip(), gr.skip(), gr.skip(), gr.skip()
    try:
        board = board_store().check_secret(normalise_code(code), secret)
    except ValueError as exc:  # a link's board is said at the room step; a remembered one that ended is let go
        return (gr.skip(), snippets.message(str(exc), "error"), gr.skip(), str(exc)) if said else (
            gr.skip(), gr.skip(), gr.skip(), gr.skip())
    room = {"code": board.code, "secret": secret, "base": page_address(request)}
    return room, room_status(room), gr.update(active=params.get("step") == str(ROOM_STEP + 1)), None


# --- the room follows the presenter ---------------------------------------------------------------------

FOLLOW_S = 1.5  # how often a phone that follows a presenter asks for the presenter's step
FOLLOW_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,32}")
# a presenter page's token (in its QR code's link) -> (the step it shows, its room's board code or None), for the
# phones that follow it
presenters: BoundedCache[str, tuple[int | None, str | None]] = BoundedCache(
    "talk: the step and board each presenter shows", MAX_SESSIONS, ttl_s=12 * 3600)


def page_roles(request: gr.Request) -> tuple:
    """When a page opens: (its own token, the presenter it follows (``?follow=TOKEN`` from a QR code) or None,
    the follow timer on for a follower, its role, Rehearse shown to the presenter only, the title slide)."""
    followed = dict(getattr(request, "query_params", {}) or {}).get("follow", "")
    followed = followed if FOLLOW_TOKEN.fullmatch(followed or "") else None
    role = FOLLOWER if followed else PRESENTER
    return (secrets.token_urlsafe(12), followed, gr.update(active=followed is not None), role,
            gr.update(visible=role == PRESENTER), intro_html(role))


def publish_step(step: int | None, room: dict | None, token: str | None, followed: str | None,
                 role: str | None) -> None:
    """A presenter's step (and board) change, for the phones that follow it (a follower publishes nothing)."""
    if token and not followed and role == PRESENTER:
        presenters.put(token, (step, room["code"] if room else None))


def leave_follow(followed: str | None) -> tuple:
    """A follower that moves by itself (a key, Back or Next, a step chosen) leaves follow mode: (whom it follows,
    the follow timer)."""
    return (None, gr.update(active=False)) if followed else (gr.skip(), gr.skip())


def follow_presenter(followed: str | None, step: int | None, board: str | None) -> tuple:
    """A follower's tick: (the presenter's step when it moved, the presenter's board when it changed; each
    skipped otherwise)."""
    if not followed or followed not in presenters:
        return gr.skip(), gr.skip()
    shown, code = presenters.get(followed)
    return (gr.skip() if shown == step or shown is None else shown), (gr.skip() if code == board else code)


def room_tick(step: int | None, room: dict | None, shown_key: str | None) -> tuple:
    """Every two seconds at the room step: the maps again when a sentence arrived (skipped otherwise)."""
    if step != ROOM_STEP or not room:
        return gr.skip(), gr.skip(), gr.skip(), shown_key
    try:
        sentences = room_sentences(room)  # read once: the key and the maps come from the same rows
        key = ",".join(str(s.id) for s in sentences)
        if key == shown_key:
            return gr.skip(), gr.skip(), gr.skip(), shown_key
        status, left, right = room_view(room, sentences)
    except ValueError as exc:
        return snippets.message(str(exc), "error"), gr.skip(), gr.skip(), shown_key
    return (status, gr.update(value=left, visible=left is not None), gr.update(value=right, visible=right is not None),
            key)


def room_controls(step: int | None, room: dict | None, problem: str | None, role: str | None = PRESENTER,
                  board: str | None = None, request: gr.Request = None) -> tuple:
    """(Start button, timer, maps' key, hint) at ``step``: the room's timer runs at the room step only
    (phones that follow along have no board: their pages never tick). Without a board the hint says how
    to start one, or why the link's board could not be opened; a follower is given the presenter's board's
    send link once it has one. The row itself shows with the step's figures (:func:`show_step`), so that
    the screen never holds neither."""
    here = step == ROOM_STEP
    if role == FOLLOWER:
        return gr.update(visible=False), gr.update(active=False), None, (
            gr.skip() if not here else _send_here(board, request) if board else
            '<div class="room-line">When the presenter starts a board, its send link appears here.</div>')
    hint = (snippets.message(problem, "error") if problem else
            '<div class="room-line"><span class="wide-only">No board yet: start one, and the room joins with its '
            "QR code (Q) or link; each sentence sent lands on both maps within seconds.</span>"
            '<span class="narrow-only">When the presenter starts a board, its QR code appears on the screen: scan '
            "it to send your sentence, and watch where it lands under GloVe and under SBERT.</span></div>")
    return (gr.update(visible=here and not room), gr.update(active=here and bool(room)), None,
            gr.skip() if room or not here else hint)


def follow_along(step: int | None, room: dict | None, token: str | None, followed: str | None,
                 request: gr.Request) -> str:
    """The presenter view's QR code (Q or the QR button shows it over the step): the room opens the
    same steps on their phones, at the step on the screen, and follows the presenter from there on; at the
    room step, the board's join page."""
    if step == ROOM_STEP and room:
        join, _ = links(page_address(request), room["code"])
        return (f'<div class="talk-qr-card">{qr_image(join, "QR code: send a sentence to the board")}'
                f"<p>Send a sentence to board <strong>{html.escape(room['code'])}</strong>:<br>"
                f"<code>{html.escape(join)}</code></p></div>")
    leader = followed or token
    link = (page_address(request) + "?view=talk" + (f"&step={step + 1}" if isinstance(step, int) else "")
            + (f"&follow={leader}" if leader else ""))
    return (f'<div class="talk-qr-card">{qr_image(link, "QR code: open the presenter view on your phone")}'
            f"<p>Follow along on your phone:<br><code>{html.escape(link)}</code></p></div>")


def move(step: int | None, delta: int) -> int:
    """The step after moving ``delta`` from ``step`` (the first step from the title slide), within the story."""
    current = step if isinstance(step, int) else -1 if delta > 0 else 0
    return max(0, min(len(STEPS) - 1, current + delta))




def build_tab() -> TabParts:
    """Build the Talk tab inside the current ``gr.Tab``."""
    with gr.Row(equal_height=True, elem_id="talk-nav"):
        back = gr.Button("◀ Back", scale=0, min_width=110, elem_id="talk-back")
        step = gr.Radio([(f"{i + 1}. {s.name}", i) for i, s in enumerate(STEPS)], value=None,
                        show_label=False, elem_id="talk-steps")
        forward = gr.Button("Next ▶", variant="primary", scale=0, min_width=110, elem_id="talk-next")
        qr = gr.Button("QR", scale=0, min_width=70, elem_id="talk-qr-button")
        present = gr.Button("Present", scale=0, min_width=110, elem_id="talk-present")
    title = gr.Markdown(f"## {len(STEPS)} steps: why siamese sentence embeddings beat naive ones",
                        elem_classes="talk-title", elem_id="talk-title")
    caption = gr.Markdown("Click **Next** (or press →) to start; **Present** (or F) fills the screen.",
                          elem_classes="talk-caption", elem_id="talk-caption")
    failure = gr.HTML(elem_id="talk-failure")
    with gr.Row(visible=False, equal_height=True, elem_id="talk-room-row") as room_row:  # the room step only
        room_status = gr.HTML(elem_id="talk-room")
        start = gr.Button("Start a board", variant="primary", scale=0, min_width=180,
                          elem_id="talk-room-start")
    with gr.Column(elem_id="talk-intro-box") as intro_box:
        intro = gr.HTML(elem_id="talk-intro")
        # shown to the presenter's page once it opens (page_roles): a phone from the QR code never gets it
        rehearse_button = gr.Button("Rehearse: compute every step now", scale=0, elem_id="talk-rehearse",
                                    visible=False)
    waiting = gr.HTML(visible=False, elem_id="talk-waiting")
    with gr.Row(equal_height=False):
        left = gr.Plot(show_label=False, visible=False, elem_id="talk-left")
        right = gr.Plot(show_label=False, visible=False, elem_id="talk-right")
    table = gr.HTML(visible=False, elem_id="talk-table")
    again = gr.Button("Train again (a new live run)", visible=False, scale=0, elem_id="talk-train-again")
    # What page.js clicks to ask for the step's answer: one answer of the page under way at a time.
    ask = gr.Button("Show the step", elem_id="talk-show", elem_classes="preload")
    # Plotly's script fetched while the title slide shows, not at step 1's key press: an empty figure off screen.
    gr.Plot(value=slides.blank_figure(), show_label=False, elem_id="talk-preload", elem_classes="preload")
    # What the browser tells the server with each step change: the layout to draw for and the change's stamp.
    layout = gr.Textbox(visible=False, elem_id="talk-layout")
    stamp = gr.Number(visible=False, elem_id="talk-stamp")
    # :func:`move` in the browser (page.js): the buttons and keys change the step with no server round
    # trip, so a burst of key presses lands on the step it counts to.
    forward.click(None, step, step, js="(s) => window.sbertDemoMove(s, 1)", **QUIET)
    back.click(None, step, step, js="(s) => window.sbertDemoMove(s, -1)", **QUIET)
    present.click(None, js="() => window.sbertDemoPresent()")  # a call into page.js, whose function it is
    qr_card = gr.HTML(elem_id="talk-qr")  # shown over the step by page.js (the QR button or Q)
    qr.click(None, js="() => window.sbertDemoQr()")
    # The room's board {code, secret, base}; what its maps show; why a link's board could not be opened.
    room, shown_key, link_problem = gr.State(None), gr.State(None), gr.State(None)
    room_timer = gr.Timer(REFRESH_SECONDS, active=False)
    # This page's token (a presenter's QR code names it) and the presenter it follows (a phone from that code).
    token, followed, follow_timer = gr.State(None), gr.State(None), gr.Timer(FOLLOW_S, active=False)
    # The page's role, fixed when it opens (presenter, or follower from a QR code), and the board of the presenter
    # a follower follows (its send link at step 8).
    role, followed_board = gr.State(PRESENTER), gr.State(None)
    remembered = gr.Textbox(visible=False, elem_id="talk-room-memory")  # this tab's board, kept over a reload
    opened = gr.on(None, page_roles, None, [token, followed, follow_timer, role, rehearse_button, intro], **QUIET)
    # The QR code when the page opens, and again at each step (it opens the room's phones at that step).
    gr.on([ask.click, room.change], follow_along, [step, room, token, followed], qr_card, **QUIET)
    opened.then(follow_along, [step, room, token, followed], qr_card, **QUIET)
    opened.then(publish_step, [step, room, token, followed, role], None, **QUIET)
    gr.on([ask.click, room.change], publish_step, [step, room, token, followed, role], None, **QUIET)
    gr.on([forward.click, back.click, step.input], leave_follow, followed, [followed, follow_timer], **QUIET)
    follow_timer.tick(follow_presenter, [followed, step, followed_board], [step, followed_board],
                      show_progress="hidden", api_visibility="private", concurrency_id="talk-follow",
                      concurrency_limit=None)
    gr.on(None, room_from_link, remembered, [room, room_status, room_timer, link_problem], js=REMEMBERED_JS, **QUIET)
    gr.on([ask.click, room.change, link_problem.change, followed_board.change], room_controls,
          [step, room, link_problem, role, followed_board], [start, room_timer, shown_key, room_status], **QUIET)
    step.change(None, step, js="(s) => window.sbertDemoStepInUrl(s)", **QUIET)  # the address follows the step
    shown = [title, caption, left, right, waiting, table, intro_box, again, room_row]
    # A step change is stamped and noted at once (an answer under way for an older change stops), then asked for.
    # One answer per page at a time: a step's answer reaches the page after every older one has ended, never
    # before (Gradio's "always_last" lets two answers start together when changes come quickly).
    stamped = step.change(None, step, [layout, stamp], js=STAMP_JS, **QUIET)
    stamped.then(note_step, [step, stamp], None, **QUIET)
    stamped.then(None, js=ASK_JS, **QUIET)
    ask.click(clear_failure, None, failure, **QUIET)
    showing = ask.click(failures_inline(show_step), [step, room, layout, stamp, role], shown, api_name="talk_step",
                        concurrency_id="talk", concurrency_limit=4, show_progress_on=waiting,
                        trigger_mode="always_last")
    showing.then(None, js=ANSWERED_JS, **QUIET)
    showing.failure(None, js=ANSWERED_JS, **QUIET)  # Gradio runs no .then after a failure
    showing.failure(last_failure, None, failure, **QUIET)
    action([rehearse_button.click], rehearse, role, intro, failures_to=failure, api_visibility="private",
           concurrency_id="talk-rehearse", concurrency_limit=1)
    action([again.click], train_again, role, None, failures_to=failure, api_visibility="private",
           concurrency_id="board").success(None, None, [layout, stamp], js=NEW_STAMP_JS, **QUIET).then(
        note_step, [step, stamp], None, **QUIET).then(None, js=ASK_JS, **QUIET)  # the new run, as a step change
    action([start.click], start_room, role, [room, room_timer, remembered], failures_to=failure,
           api_visibility="private", concurrency_id="board").success(
        None, remembered, None, js=REMEMBER_JS, **QUIET).success(  # kept by the browser: a reload keeps the board
        show_room, room, [room_status, start], **QUIET).success(
        None, js="() => window.sbertDemoQr('show')", **QUIET)  # the room scans first; Q hides it
    room_timer.tick(room_tick, [step, room, shown_key], [room_status, left, right, shown_key],
                    show_progress="hidden", api_visibility="private", concurrency_id="board-refresh",
                    concurrency_limit=2)
    return TabParts([], {"step": step})


def _send_here(code: str, request: gr.Request | None) -> str:
    """A follower's step 8 once the presenter's board is open: the board's send link."""
    join, _ = links(page_address(request) if request is not None else "/", code)
    return (f'<div class="room-line room-send">The board <strong>{html.escape(code)}</strong> is open: '
            f'<a class="room-send-link" href="{html.escape(join, quote=True)}" target="_blank" rel="noopener">send '
            "your sentence</a> and watch where it lands on the screen, under GloVe and under SBERT.</div>")
