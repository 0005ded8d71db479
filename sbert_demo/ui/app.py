"""The whole web app: header, one tab per module, footer, queue settings and a background warm-up.

``build_app()`` only lays out the page; nothing heavy is loaded until someone asks for it. With
``warm_up=True`` a daemon thread loads the default model and compiles UMAP's kernels while the
server starts, so the first click is quick but start-up never waits for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import threading

import gradio as gr

from ..corpus.access import check_configured_roots
from . import audience, explore, models, sts, talk, tools, why
from .common import MAX_FILE_SIZE
from .links import TabParts
from .model_select import Refresher, keep_in_sync
from .page_assets import asset, launch_assets
from .sharing import wire_links

logger = logging.getLogger(__name__)

TITLE = "SBERT demo: sentence similarity, naive vs. siamese"
# Waiting events beyond this are refused with "queue full" instead of piling up. A room: 100 phones
# sending at once must all get in line (64 refused 1,570 requests of bench/load.py's default scenario).
QUEUE_MAX_SIZE = 256
DEFAULT_CONCURRENCY = 2  # the machine has few cores; more parallel encodes only slow each other down
# Queue positions and ETAs go to every waiting page once a second, not at every start of a job:
# Gradio's "auto" sent each of 100 waiting pages a message per start (bench/load.py's default
# scenario, Zen 4: the app's CPU per request 42.9 -> 26.8 ms, 13.0 -> 18.3 requests/s).
STATUS_UPDATE_S = 1.0
# Gradio recomputes a pandas summary of its recent events after every event, for a monitoring page
# this app does not open: 3 ms per event at 1,000 recorded, 9 ms at 10,000 (a long talk).
ANALYTICS_SETTINGS = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": "1000", "GRADIO_ANALYTICS_MAX_EVENTS": "1000"}


def theme() -> gr.themes.Base:
    # System fonts: nothing to download (the app must work offline), and the webfonts bundled with
    # Gradio rendered some capitals of "SBERT" as small capitals in Chromium.
    font = ["Inter", "ui-sans-serif", "system-ui", "Segoe UI", "Helvetica Neue", "Arial", "sans-serif"]
    return gr.themes.Default(primary_hue="blue", secondary_hue="orange", neutral_hue="slate", font=font)


# Words Gradio's status tracker announces to screen readers but its English table lacks (it read out
# the key itself, "common.complete", after every finished event).
MISSING_WORDS = {"common.complete": "Complete"}


def launch_options() -> dict:
    """Keyword arguments for ``Blocks.launch`` (Gradio 6 takes theme, CSS and the page script there)."""
    from starlette.middleware import Middleware

    from . import atlas, join
    from .bodies import BodyGuard
    from .config_cache import SharedConfig
    from .visitor import VisitorCookie

    # BodyGuard: Gradio's JSON endpoints (API, queue, MCP) get bounded bodies of bounded depth, refused with a
    # sentence before Gradio reads them (a JSON-RPC message nested 50,000 deep was a 500 from MCP's transport).
    # VisitorCookie: a browser keeps one name across reloads (the board's sentences a minute from one phone).
    # SharedConfig: the pages that open together (a room scanning the board's QR code) share one page config.
    middleware = [Middleware(BodyGuard), Middleware(VisitorCookie), Middleware(SharedConfig)]
    return {"theme": theme(), "max_file_size": MAX_FILE_SIZE, "i18n": gr.I18n(en=MISSING_WORDS),
            "app_kwargs": {"routes": atlas.routes() + join.routes(), "middleware": middleware}, **launch_assets()}


def configure_queue(demo: gr.Blocks) -> gr.Blocks:
    """Bounded queue; each tab's main action has its own ``concurrency_id`` so STS runs never block
    Explore, and at most ``DEFAULT_CONCURRENCY`` events of one kind run at once."""
    for name, value in ANALYTICS_SETTINGS.items():  # read when the queue is made; the user's own win
        os.environ.setdefault(name, value)
    return demo.queue(default_concurrency_limit=DEFAULT_CONCURRENCY, max_size=QUEUE_MAX_SIZE,
                      status_update_rate=STATUS_UPDATE_S)


def _warm_up() -> None:
    from ..encoding.remeasure import remeasure_when_idle
    from ..explore.prepare import prepare
    from ..hub import hub_reachable

    try:
        # The (time-boxed) Hub probe is answered beside the rest, before the first page load asks.
        threading.Thread(target=hub_reachable, name="sbert-demo-hub-probe", daemon=True).start()
        # The first page's models on both paths (Explore's fast one, the STS tab's lossless one), so the
        # first map and the first benchmark wait for none of them; UMAP's kernels. Quick where
        # ``python -m sbert_demo prepare`` (scripts/setup.sh) has run; otherwise the machine's one-off
        # preparation happens here, in the background. STSb dev's embeddings (the STS tab's first run,
        # mpnet 34 s) are made by setup.sh's prepare, and here on a Space, where no setup step runs; a
        # local start does not spend the CPU on them behind the user's back.
        prepared, umap_s = prepare(benchmark=bool(os.environ.get("SPACE_ID")))
        for model in prepared:
            if model.error:
                logger.info("Warm-up: %s is not ready: %s", model.key, model.error)
        logger.info("Warm-up finished in the background: %s ready; UMAP compiled (%.1f s).",
                    ", ".join(f"{m.key} ({m.seconds:.1f} s)" for m in prepared if not m.error), umap_s or 0.0)
        # a runtime decision made while the machine was busy is measured again once it is idle
        remeasure_when_idle([m.key for m in prepared if not m.error])
    except Exception:  # a failed warm-up only means the first request does the loading itself
        logger.exception("Background warm-up failed")


def start_warm_up() -> threading.Thread:
    thread = threading.Thread(target=_warm_up, name="sbert-demo-warm-up", daemon=True)
    thread.start()
    return thread


def prepared_here() -> bool:
    """Whether ``python -m sbert_demo prepare`` has made this machine ready for the first page: the
    runtimes of the Explore tab's default models measured here and UMAP's kernels compiled. Reads files
    only."""
    from ..encoding import model_cache
    from ..explore.numba_cache import compiled_here
    from ..models import loading
    from ..models.kinds import kind_of
    from .explore import default_request

    for key in default_request()[1]:
        model = loading.resolve(key)
        if model.identity is None or (kind_of(model.entry).matmul_heavy
                                      and model_cache.known_runtime(model.entry, model.identity, fast=True) is None):
            return False
    return compiled_here()


def draw_first_page() -> float | None:
    """On a prepared machine, before the page is served: the default Explore request answered once (its
    models loaded on the fast path, UMAP's kernels read from their cache), so the first visitor's request
    is answered from the drawn page. Returns the seconds it took, or None where the machine is not
    prepared (the background warm-up then prepares it, and the first request shares that work)."""
    import time

    from .explore import draw_default_page

    if not prepared_here():
        logger.info("This machine is not prepared (python -m sbert_demo prepare): it is made ready in the background.")
        return None
    from ..gpu import on_the_cpu

    started = time.perf_counter()
    try:
        with on_the_cpu():  # start-up never asks ZeroGPU for a GPU
            draw_default_page()
    except Exception:  # never stops the app from starting; the first request then computes it
        logger.exception("Drawing the default Explore page before serving failed")
        return None
    seconds = time.perf_counter() - started
    logger.info("The default Explore page was drawn in %.1f s, before the page is served.", seconds)
    return seconds


def _optional_tabs() -> list[tuple[str, object]]:
    """Tabs whose modules may not exist in every build (Train; it says itself when training is
    switched off with ``SBERT_DEMO_ALLOW_TRAINING=0``)."""
    if importlib.util.find_spec(f"{__package__}.train") is None:
        return []
    return [("Train", importlib.import_module(f"{__package__}.train"))]


def build_app(warm_up: bool = True) -> gr.Blocks:
    """The Blocks app with every tab, not launched; call :func:`configure_queue` before launching. A ValueError
    where the settings would share what is not a visitor's (a dataset root holding the cache or the uploads)."""
    check_configured_roots()
    with gr.Blocks(title=TITLE, fill_width=True) as demo:
        with gr.Row(equal_height=True, elem_classes="header-row"):
            gr.HTML(asset("header.html"))
            share = gr.Column(scale=0, min_width=300, elem_classes="share-box")
        share_notes = gr.Column(elem_id="share-notes")  # what a link could not restore, above the tabs
        pages = [("Explore", explore), ("STS benchmark", sts), ("Why naive fails", why), *_optional_tabs(),
                 ("Models", models), ("Talk", talk), ("Audience", audience)]
        linkable: dict[str, dict] = {}
        tab_events: list[tuple] = []  # (link tab, its select event, the tab it is a part of or None)
        every_refresher: list[Refresher] = []
        # Every tab one tap away on a phone: tabs wrap onto more rows instead of hiding behind a menu.
        with gr.Tabs(elem_id="main-tabs", overflow_behavior="wrap") as tabs:
            for name, module in pages:
                tab_id = name.lower().split()[0]
                with gr.Tab(name, id=tab_id) as tab:
                    built = module.build_tab() or []
                refreshers: list[Refresher] = built.refreshers if isinstance(built, TabParts) else built
                linkable[tab_id] = built.linkable if isinstance(built, TabParts) else {}
                tab_events.append((tab_id, tab.select, None))
                for part_id, (part, part_linkable) in (built.parts if isinstance(built, TabParts) else {}).items():
                    linkable.setdefault(part_id, {}).update(part_linkable)
                    tab_events.append((part_id, part.select, tab_id))
                keep_in_sync(refreshers, tab.select)
                every_refresher += refreshers
        # One chain when a page opens: bring the pickers up to date, then apply the link (two
        # separate load events would race, and the older selection could win).
        wire_links(demo, (share, share_notes), tabs, tab_events, linkable, every_refresher)
        gr.HTML(asset("footer.html"), elem_id="page-footer")
        tools.build()  # endpoints for assistants (MCP with --mcp) and scripts
    if warm_up:
        start_warm_up()
    return demo
