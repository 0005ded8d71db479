"""The presenter view: a fixed eight-step story in large type, one click (or key) per step.

Open it with ``?view=talk`` (large type, high contrast) or the Talk tab. Every step runs offline
from a cold start with a progress bar, through the same core as the other tabs:

1. the cone: cosine histograms of random / similar / unrelated STSb pairs, GloVe vs. MiniLM;
2. paraphrases: similarity heatmaps, GloVe vs. MiniLM, on the paraphrased-questions set;
3. the STS benchmark: Spearman on STSb test against the SBERT paper's marks (whitened GloVe too);
4. seven benchmarks: the paper's Table 1 on STS12–16, STSb and SICK-R, computed live;
5. which words make two sentences similar: the exact pair explanation, GloVe vs. MiniLM;
6. the cost: a cross-encoder on every pair against a bi-encoder, timed on this machine;
7. training: siamese GloVe on the shipped NLI pairs, a few seconds, the dev curve rising;
8. the room: the audience's own sentences from their phones (an audience board, :mod:`.audience`),
   mapped live under GloVe and under MiniLM side by side.

Keys: → / PageDown / N for the next step, ← / PageUp / P for the previous one, F for full screen,
Q for a QR code of the presenter view (the room follows along on their phones; at step 8 the board's
join link). ``?view=talk&step=8&board=CODE&key=SECRET`` (the link step 8 gives its presenter) opens
step 8 on that board again, e.g. after a reload in the middle of a talk.
In the presenter view only the step shows (no header or tabs) and its figure is sized to the screen
that is left (``page.js``), at projector, laptop and phone sizes alike.
"""

from __future__ import annotations

import html
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from ..analysis import plots as why_plots
from ..analysis.anisotropy import anisotropy_many
from ..analysis.explanation import explain_pair
from ..audience.board import picture
from ..audience.qr import qr_image
from ..audience.store import board_store, normalise_code
from ..benchmark import plots as benchmark_plots
from ..benchmark.cost import PAPER as COST_PAPER
from ..benchmark.cost import measure_cost
from ..benchmark.evaluation import evaluate_many
from ..benchmark.table1 import PAPER, table1
from ..data.benchmarks import sts_split
from ..data.examples import EXAMPLE_SETS
from ..data.sts_sets import TABLE1_SETS, TITLES
from ..data.sentences import parse_sentences
from ..encoding.encoder import encode
from ..explore import plots as explore_plots
from ..explore.similarity import cosine_matrix
from ..models.registry import get_registry
from ..training import config_for, training_jobs
from ..training.curves import training_curves
from ..views import VIEWS
from . import snippets
from .audience import board_map, links
from .common import action, user_errors
from .links import TabParts, page_address
from .sts import bar_chart

NAIVE, SIAMESE = VIEWS["talk"].default_models
PAIR = ("A man is playing a guitar.", "Someone plays the guitar on stage.")
TALK_MODEL = "talk-siamese-glove"
FONT = 18
TALK_COST_N = 2_000  # sentences the cost step really runs (live, in seconds); the plot goes on to 100,000
TABLE1_PAPER_ROWS = ("Avg. GloVe embeddings", "BERT CLS-vector", "SBERT-NLI-base")  # few rows read from afar


@dataclass(frozen=True)
class Step:
    name: str
    caption: str
    run: Callable  # progress -> (left figure, right figure or None); a generator for the live training
    two_figures: bool = False
    room: bool = False  # the step shows the audience board: run(progress, room) with the page's board


def _large(figure, height: int = 560):
    figure.update_layout(font=dict(size=FONT), height=height, title_font=dict(size=FONT + 6))
    return figure


def _title(step: int) -> str:
    return f"## {step + 1} / {len(STEPS)} · {STEPS[step].name}", STEPS[step].caption


def _raise_first_failure(outcomes) -> None:
    """A step shows both models or none: the first model that could not run stops it, with its reason."""
    failed = next((outcome for outcome in outcomes if outcome.error), None)
    if failed is not None:
        raise ValueError(f"{failed.key}: {failed.error}")


def step_cone(progress) -> tuple:
    results = anisotropy_many([NAIVE, SIAMESE], "train", progress=lambda fraction, what: progress(fraction, desc=what))
    _raise_first_failure(results)
    return _large(why_plots.anisotropy_histograms(results)), None


def step_paraphrases(progress) -> tuple:
    example = EXAMPLE_SETS["paraphrase-questions"]
    parsed = parse_sentences(example.text)
    sentences, groups = parsed.sentences, parsed.groups
    sims = []
    for i, key in enumerate((NAIVE, SIAMESE)):
        progress(i / 2, desc=f"{key}: embeddings")
        sims.append(cosine_matrix(encode(key, sentences, fast=True).embeddings))
    zmin, zmax = explore_plots.shared_range(sims)
    registry = get_registry()
    # On a slide the blocks are labelled by topic (24 sentence labels would overlap); hover names each pair.
    return tuple(_large(explore_plots.label_blocks(explore_plots.heatmap(sim, sentences, registry.get(key).label,
                                                                         zmin, zmax, groups=groups), groups), 620)
                 for key, sim in zip((NAIVE, SIAMESE), sims))


def step_benchmark(progress) -> tuple:
    pairs = sts_split("test")
    keys = [NAIVE, f"{NAIVE}+whiten", SIAMESE]
    results = []
    for result in evaluate_many(keys, pairs, progress=lambda fraction, what: progress(fraction, desc=what)):
        _raise_first_failure([result])
        results.append(result)
    return _large(bar_chart(results)), None


def step_table1(progress) -> tuple:
    rows = table1([NAIVE, f"{NAIVE}+whiten", SIAMESE], progress=lambda fraction, what: progress(fraction, desc=what))
    _raise_first_failure(rows)
    values = [(row.label, [row.scores[name] * 100 for name in TABLE1_SETS] + [row.average * 100]) for row in rows]
    columns = [TITLES[name] for name in TABLE1_SETS] + ["avg"]
    figure = benchmark_plots.table1_heatmap(values, columns, {name: PAPER[name] for name in TABLE1_PAPER_ROWS},
                                            title="Seven STS sets, Spearman x 100 (paper: 300-d GloVe, BERT base)")
    return _large(figure, 520), None


def step_cost(progress) -> tuple:
    report = measure_cost(TALK_COST_N, SIAMESE, progress=lambda fraction, what: progress(fraction, desc=what))
    figure = benchmark_plots.cost_plot(report.curve(), report.n, {
        "cross_encoder": report.cross_encoder["extrapolated_s"], "bi_encoder": report.bi_encoder["total_s"]},
        COST_PAPER, report.cpu)
    figure.update_layout(title=dict(text=f"{report.n:,} sentences on this CPU: cross-encoder "
                                         f"{report.cross_encoder['extrapolated_s'] / 3600:.1f} h, bi-encoder "
                                         f"{report.bi_encoder['total_s']:.1f} s ({report.ratio:,.0f}x)"))
    return _large(figure, 560), None


def step_explain(progress) -> tuple:
    progress(0.1, desc="Reading token vectors")
    results = explain_pair([NAIVE, SIAMESE], *PAIR)
    _raise_first_failure(results)
    zmax = max(float(abs(r.contributions).max()) for r in results)
    return tuple(_large(why_plots.contribution_heatmap(r.contributions, r.tokens_a, r.tokens_b,
                                                        f"{r.label}: cosine {r.cosine:.2f}", zmax), 560)
                 for r in results)


def step_training(progress):
    """A generator: the curve after each report of the background job."""
    jobs = training_jobs()  # start() refuses with a sentence when training is switched off
    if not jobs.snapshot().active:
        jobs.start(config_for(NAIVE, "nli-softmax", TALK_MODEL, overwrite=True))
    while True:
        snap = jobs.snapshot()
        progress(snap.fraction, desc=snap.message or snap.state)
        figure = training_curves([s for s, _ in snap.losses], [v for _, v in snap.losses],
                                 [s for s, _ in snap.evals], [v * 100 for _, v in snap.evals],
                                 "Siamese GloVe on NLI: loss and STSb dev Spearman x 100")
        caption = None
        if snap.before and snap.after:
            caption = (f"STSb test {snap.before['test'] * 100:.2f} → {snap.after['test'] * 100:.2f} after "
                       f"{snap.train_elapsed_s:.1f} s of training.")
        yield _large(figure), caption
        if not snap.active:
            if snap.state == "failed":
                raise ValueError(snap.error or "The training run failed.")
            return
        time.sleep(0.5)


def step_room(progress, room: dict | None = None) -> tuple:
    """The board's two maps now (the two-second timer keeps them up to date), or none before a board is started."""
    if not room:
        return None, None
    progress(0.2, desc="Mapping the room's sentences")
    _, left, right = room_view(room, room_sentences(room))
    return left, right


def room_sentences(room: dict) -> list:
    """The visible sentences on the room's board (a ValueError once it is gone)."""
    store = board_store()
    return store.sentences(store.get(room["code"]).code)


def room_view(room: dict, sentences: list) -> tuple[str, object, object]:
    """(status HTML, GloVe's map, MiniLM's map) of ``sentences``, the room's board as just read; a map
    is None below three sentences."""
    pictures = [picture(key, sentences, room["code"]) for key in (NAIVE, SIAMESE)]
    registry = get_registry()
    figures = [None if shown.coords is None else
               _large(board_map(shown, key, f"{registry.get(key).label}: the room's {len(sentences)} sentences"), 560)
               for key, shown in zip((NAIVE, SIAMESE), pictures)]
    return room_status(room, pictures), *figures


def room_status(room: dict, pictures=()) -> str:
    """Under the step: the count, how to join, each model's closest pair (the audience's words escaped,
    never HTML), and the presenter's link folded away (it holds the board's secret)."""
    registry = get_registry()
    join, _ = links(room["base"], room["code"])
    presenter = f"{room['base']}?view=talk&step={ROOM_STEP + 1}&board={room['code']}&key={room['secret']}"
    count = len(pictures[0].sentences) if pictures else 0
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
def start_room(request: gr.Request) -> tuple:
    """A board for the room under the siamese model: (the room, its status, the timer on)."""
    board = board_store().create(SIAMESE)
    room = {"code": board.code, "secret": board.secret, "base": page_address(request)}
    return room, room_status(room), gr.update(active=True)


def room_from_link(request: gr.Request) -> tuple:
    """``?view=talk&step=8&board=CODE&key=SECRET`` opens the room step on that board: (the room, its
    status, the timer, what went wrong: a wrong secret or an unknown board, said at the room step)."""
    params = dict(getattr(request, "query_params", {}) or {})
    if not (params.get("board") and params.get("key") and params.get("step")):
        return gr.skip(), gr.skip(), gr.skip(), gr.skip()
    try:
        board = board_store().check_secret(normalise_code(params["board"]), params["key"])
    except ValueError as exc:
        return gr.skip(), snippets.message(str(exc), "error"), gr.skip(), str(exc)
    room = {"code": board.code, "secret": params["key"], "base": page_address(request)}
    return room, room_status(room), gr.update(active=params["step"] == str(ROOM_STEP + 1)), None


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
    return status, left, gr.update(value=right, visible=True), key


def room_controls(step: int | None, room: dict | None, problem: str | None) -> tuple:
    """The room's row shows at the room step only, and its timer runs only there (phones that follow
    along have no board: their pages never tick). Without a board it says how to start one, or why
    the link's board could not be opened."""
    here = step == ROOM_STEP
    hint = (snippets.message(problem, "error") if problem else
            '<div class="room-line">No board yet: start one, and the room joins with its QR code (Q) or link; '
            "each sentence sent lands on both maps within seconds.</div>")
    return (gr.update(visible=here), gr.update(visible=here and not room), gr.update(active=here and bool(room)),
            None, gr.skip() if room or not here else hint)


STEPS = [
    Step("The cone", "Naive sentence vectors all point the same way: even random pairs of sentences score a cosine "
                     "of 0.5 with averaged GloVe. SBERT spreads them out (0.03), so a high cosine means something.",
         step_cone),
    Step("Paraphrases", "Questions that mean the same thing, worded differently. Averaged GloVe rates almost every "
                        "pair alike; SBERT lights up the blocks of paraphrases.", step_paraphrases, two_figures=True),
    Step("The benchmark", "Spearman correlation with human similarity scores on STSb test, beside the SBERT paper's "
                          "marks. Whitening GloVe (no training) helps; siamese training helps far more.", step_benchmark),
    Step("Seven benchmarks", "One benchmark can be a fluke; seven are the argument. The paper's Table 1, computed "
                             "live on STS12–16, STSb and SICK-R: SBERT leads on every one.", step_table1),
    Step("Why", "Each cell is one token pair's exact share of the cosine (mean pooling). GloVe adds up every word "
                "against every word; SBERT's tokens already carry their context.", step_explain, two_figures=True),
    Step("The cost", "Why embeddings at all: a cross-encoder must read every pair; a bi-encoder reads each sentence "
                     "once. Timed live on this machine, extrapolated to 100,000 sentences.", step_cost),
    Step("Training", "Siamese training of GloVe on the NLI pairs shipped with this app, live: the STSb dev Spearman "
                     "rises within seconds.", step_training),
    Step("Your sentences", "Scan the QR code and send a sentence. Left averaged GloVe, right SBERT: the same words, "
                           "two maps. Which one groups what you meant?", step_room, two_figures=True, room=True),
]
ROOM_STEP = len(STEPS) - 1


def follow_along(step: int | None, room: dict | None, request: gr.Request) -> str:
    """The presenter view's QR code (Q or the QR button shows it over the step): the room opens the
    same steps on their phones, at the step on the screen; at the room step, the board's join page."""
    if step == ROOM_STEP and room:
        join, _ = links(page_address(request), room["code"])
        return (f'<div class="talk-qr-card">{qr_image(join, "QR code: send a sentence to the board")}'
                f"<p>Send a sentence to board <strong>{html.escape(room['code'])}</strong>:<br>"
                f"<code>{html.escape(join)}</code></p></div>")
    link = page_address(request) + "?view=talk" + (f"&step={step + 1}" if isinstance(step, int) else "")
    return (f'<div class="talk-qr-card">{qr_image(link, "QR code: open the presenter view on your phone")}'
            f"<p>Follow along on your phone:<br><code>{html.escape(link)}</code></p></div>")


@user_errors
def show_step(step: int | None, room: dict | None = None, progress=gr.Progress()):
    """Yield (title, caption, left figure, right figure) for step ``step`` (0-based)."""
    if not isinstance(step, int) or not 0 <= step < len(STEPS):
        raise ValueError(f"Choose a step from 1 to {len(STEPS)}.")
    title, caption = _title(step)
    yield title, caption, gr.update(value=None), gr.update(value=None, visible=STEPS[step].two_figures)
    result = STEPS[step].run(progress, room) if STEPS[step].room else STEPS[step].run(progress)
    if not inspect.isgenerator(result):
        left, right = result
        yield title, caption, left, gr.update(value=right, visible=right is not None)
        return
    for figure, outcome in result:  # the live training run, report by report
        yield title, caption + (f" **{outcome}**" if outcome else ""), figure, gr.update(visible=False)


def move(step: int | None, delta: int) -> int:
    current = step if isinstance(step, int) else 0
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
    title = gr.Markdown(f"## {len(STEPS)} steps: why siamese sentence embeddings beat naive ones", elem_classes="talk-title",
                        elem_id="talk-title")
    caption = gr.Markdown("Click **Next** (or press →) to start; **Present** (or F) fills the screen. Each step "
                          "computes live, offline.",
                          elem_classes="talk-caption", elem_id="talk-caption")
    failure = gr.HTML(elem_id="talk-failure")
    with gr.Row(visible=False, equal_height=True, elem_id="talk-room-row") as room_row:  # the room step only
        room_status = gr.HTML(elem_id="talk-room")
        start = gr.Button("Start a board", variant="primary", scale=0, min_width=180,
                          elem_id="talk-room-start")
    with gr.Row(equal_height=False):
        left = gr.Plot(show_label=False, elem_id="talk-left")
        right = gr.Plot(show_label=False, visible=False, elem_id="talk-right")
    forward.click(lambda s: move(s, 1) if isinstance(s, int) else 0, step, step, queue=False,
                  api_visibility="private")
    back.click(lambda s: move(s, -1), step, step, queue=False, api_visibility="private")
    present.click(None, js="() => window.sbertDemoPresent()")  # a call into page.js, whose function it is
    qr_card = gr.HTML(elem_id="talk-qr")  # shown over the step by page.js (the QR button or Q)
    qr.click(None, js="() => window.sbertDemoQr()")
    # The room's board {code, secret, base}; what its maps show; why a link's board could not be opened.
    room, shown_key, link_problem = gr.State(None), gr.State(None), gr.State(None)
    room_timer = gr.Timer(2.0, active=False)
    quiet = dict(queue=False, show_progress="hidden", api_visibility="private")
    # The QR code when the page opens, and again at each step (it opens the room's phones at that step).
    gr.on([step.change, room.change], follow_along, [step, room], qr_card, **quiet)
    gr.on(None, follow_along, [step, room], qr_card, **quiet)
    gr.on(None, room_from_link, None, [room, room_status, room_timer, link_problem], **quiet)
    gr.on([step.change, room.change, link_problem.change], room_controls, [step, room, link_problem],
          [room_row, start, room_timer, shown_key, room_status], **quiet)
    action([step.change], show_step, [step, room], [title, caption, left, right], failures_to=failure,
           api_name="talk_step", concurrency_id="talk", show_progress_on=left)
    action([start.click], start_room, None, [room, room_status, room_timer], failures_to=failure,
           api_visibility="private", concurrency_id="board").success(
        lambda: gr.update(visible=False), None, start, **quiet).success(
        None, js="() => window.sbertDemoQr('show')", **quiet)  # the room scans first; Q hides it
    room_timer.tick(room_tick, [step, room, shown_key], [room_status, left, right, shown_key],
                    show_progress="hidden", api_visibility="private", concurrency_id="board-refresh",
                    concurrency_limit=2)
    return TabParts([], {"step": step})
