"""The whole web app: header, one tab per module, footer, queue settings and a background warm-up.

``build_app()`` only lays out the page; nothing heavy is loaded until someone asks for it. With
``warm_up=True`` a daemon thread loads the default model and compiles UMAP's kernels while the
server starts, so the first click is quick but start-up never waits for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import threading

import gradio as gr

from ..views import SIAMESE_MODEL
from . import explore, figure_export, models, sts, talk, why
from .links import TabParts
from .model_select import Refresher, keep_in_sync
from .sharing import wire_links

logger = logging.getLogger(__name__)

TITLE = "SBERT demo: sentence similarity, naive vs. siamese"
DEFAULT_MODEL = SIAMESE_MODEL  # warmed up in the STS tab's runtime
QUEUE_MAX_SIZE = 64  # waiting events beyond this are refused with "queue full" instead of piling up
DEFAULT_CONCURRENCY = 2  # the machine has few cores; more parallel encodes only slow each other down
MAX_FILE_SIZE = "20mb"

HEADER = """
<div class="app-header">
  <h1>Sentence similarity: naive embeddings vs. SBERT</h1>
  <p>Averaged GloVe vectors and plain BERT (CLS, mean or max pooling) make unrelated sentences look
  alike; siamese sentence embeddings (SBERT) put sentences that mean the same close together.<br>
  Explore your own sentences side by side, or measure it live on the STS benchmark.</p>
</div>
"""

FOOTER = """
<div class="app-footer">
  Based on N. Reimers and I. Gurevych,
  <a href="https://arxiv.org/abs/1908.10084" target="_blank" rel="noopener">Sentence-BERT: Sentence
  Embeddings using Siamese BERT-Networks</a>, EMNLP 2019. Models load on first use; embeddings are cached.
</div>
"""

# Colours match ``plot_style.FAMILY_COLORS`` (Okabe-Ito): naive orange, siamese blue, fine-tuned green.
CSS = """
.app-header h1 { font-size: 1.6rem; font-weight: 600; margin: 0.2rem 0 0.3rem; }
.app-header p { margin: 0; color: var(--body-text-color-subdued); line-height: 1.45; }
.app-footer { margin-top: 1.5rem; font-size: 0.85rem; color: var(--body-text-color-subdued); text-align: center; }
.tab-intro p { color: var(--body-text-color-subdued); margin: 0.1rem 0 0.4rem; }
.muted { color: var(--body-text-color-subdued); font-size: 0.9rem; margin: 0.25rem 0; }
.badge { display: inline-block; margin-left: 0.45rem; padding: 0.05rem 0.5rem; border-radius: 999px;
         font-size: 0.75rem; font-weight: 600; color: white; vertical-align: middle; }
.badge-naive { background: #E69F00; } .badge-siamese { background: #0072B2; }
.badge-fine-tuned { background: #009E73; } .badge-other { background: #777; }
.notes { border-radius: 8px; padding: 0.6rem 0.9rem; margin: 0.3rem 0; font-size: 0.9rem; }
.notes ul { margin: 0.3rem 0 0 1.1rem; padding: 0; }
.notes-info { background: rgba(0, 114, 178, 0.08); border-left: 4px solid #0072B2; }
.notes-warning { background: rgba(230, 159, 0, 0.12); border-left: 4px solid #E69F00; }
.notes-error { background: rgba(213, 94, 0, 0.10); border-left: 4px solid #D55E00; }
.notes-ok { background: rgba(0, 158, 115, 0.10); border-left: 4px solid #009E73; }
.summary-table { width: 100%; border-collapse: collapse; font-size: 0.92rem; }
.summary-table th { text-align: left; font-weight: 600; padding: 0.4rem 0.6rem;
                    border-bottom: 2px solid var(--border-color-primary); }
.summary-table td { padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--border-color-primary);
                    vertical-align: middle; }
.summary-table .num { font-variant-numeric: tabular-nums; font-weight: 600; }
.summary-table .bar { height: 5px; width: 100%; max-width: 160px; background: var(--border-color-primary);
                      border-radius: 3px; margin-top: 3px; }
.summary-table .bar span { display: block; height: 100%; border-radius: 3px; }
.bar-naive { background: #E69F00; } .bar-siamese { background: #0072B2; } .bar-fine-tuned { background: #009E73; }
.model-head { display: flex; align-items: center; flex-wrap: wrap; }
.model-name { font-weight: 600; font-size: 1.05rem; }
.model-meta { color: var(--body-text-color-subdued); font-size: 0.8rem; margin: 0.1rem 0 0.3rem; }
.stats { display: flex; gap: 1.1rem; flex-wrap: wrap; }
.stats div { display: flex; flex-direction: column; }
.stat-value { font-size: 1.15rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.stat-name { font-size: 0.75rem; color: var(--body-text-color-subdued); }
.caption { margin: 0 0.4rem; }
.progress-box { min-height: 4.5rem; }
#explore-upload { align-self: end; }
.share-box { align-self: center; }
#share-link textarea, #share-link input { font-size: 0.8rem; }
.why-cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0.8rem; }
.why-cards > .notes { align-self: start; }
.why-card { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 0.6rem 0.8rem; }
.why-card .top-pairs { margin-top: 0.5rem; font-size: 0.85rem; }
.why-card .top-pairs td { padding: 0.2rem 0.5rem; }
.corpus-card { font-size: 0.92rem; margin: 0.3rem 0.2rem; }
.corpus-card ul { margin: 0.3rem 0 0 1.1rem; padding: 0; color: var(--body-text-color-subdued); }
.search-results { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 0.3rem 1rem;
                  font-size: 0.9rem; }
.search-results p { margin: 0.2rem 0; } .search-results ul { margin: 0 0 0 1.1rem; padding: 0; }
.clusters-table { width: 100%; border-collapse: collapse; font-size: 0.85rem; margin-bottom: 0.8rem; }
.clusters-table th { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 2px solid var(--border-color-primary); }
.clusters-table td { padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--border-color-primary);
                     vertical-align: top; }
"""


def theme() -> gr.themes.Base:
    # System fonts: nothing to download (the app must work offline), and the webfonts bundled with
    # Gradio rendered some capitals of "SBERT" as small capitals in Chromium.
    font = ["Inter", "ui-sans-serif", "system-ui", "Segoe UI", "Helvetica Neue", "Arial", "sans-serif"]
    return gr.themes.Default(primary_hue="blue", secondary_hue="orange", neutral_hue="slate", font=font)


def launch_options() -> dict:
    """Keyword arguments for ``Blocks.launch`` (Gradio 6 takes theme and CSS there)."""
    page_js = f"() => {{ ({talk.JS})(); ({figure_export.JS})(); }}"  # Gradio runs one function on load
    return {"theme": theme(), "css": CSS + talk.CSS, "js": page_js, "max_file_size": MAX_FILE_SIZE}


def configure_queue(demo: gr.Blocks) -> gr.Blocks:
    """Bounded queue; each tab's main action has its own ``concurrency_id`` so STS runs never block
    Explore, and at most ``DEFAULT_CONCURRENCY`` events of one kind run at once."""
    return demo.queue(default_concurrency_limit=DEFAULT_CONCURRENCY, max_size=QUEUE_MAX_SIZE)


def _warm_up() -> None:
    from ..encoding.encoder import encode
    from ..explore.projection import warm_up
    from ..hub import hub_reachable
    from ..models.registry import get_registry
    from .explore import DEFAULT_MODELS

    try:
        # The (time-boxed) Hub probe is answered beside the rest, before the first page load asks.
        threading.Thread(target=hub_reachable, name="sbert-demo-hub-probe", daemon=True).start()
        warm_up()  # UMAP's kernels (from the compile cache after the first start): the first map needs them
        registry = get_registry()
        for key in DEFAULT_MODELS:  # the first page's models in Explore's runtime, so the first map waits for none
            if registry.availability(key).available:
                encode(key, ["Warming up."], use_cache=False, fast=True)
        encode(DEFAULT_MODEL, ["Warming up the default model."], use_cache=False)  # the STS tab's runtime
        logger.info("Warm-up finished: Explore's default models loaded (ONNX artefacts built if this CPU "
                    "uses them), UMAP compiled.")
    except Exception:  # a failed warm-up only means the first request does the loading itself
        logger.exception("Background warm-up failed")


def start_warm_up() -> threading.Thread:
    thread = threading.Thread(target=_warm_up, name="sbert-demo-warm-up", daemon=True)
    thread.start()
    return thread


def _optional_tabs() -> list[tuple[str, object]]:
    """Tabs whose modules may not exist in every build (Train; it says itself when training is
    switched off with ``SBERT_DEMO_ALLOW_TRAINING=0``)."""
    if importlib.util.find_spec(f"{__package__}.train") is None:
        return []
    return [("Train", importlib.import_module(f"{__package__}.train"))]


def build_app(warm_up: bool = True) -> gr.Blocks:
    """The Blocks app with every tab, not launched; call :func:`configure_queue` before launching."""
    with gr.Blocks(title=TITLE, fill_width=True) as demo:
        with gr.Row(equal_height=True, elem_classes="header-row"):
            gr.HTML(HEADER)
            share = gr.Column(scale=0, min_width=300, elem_classes="share-box")
        share_notes = gr.Column()  # what a link could not restore, above the tabs
        pages = [("Explore", explore), ("STS benchmark", sts), ("Why naive fails", why), *_optional_tabs(),
                 ("Models", models), ("Talk", talk)]
        linkable: dict[str, dict] = {}
        tab_events: list[tuple] = []  # (link tab, its select event, the tab it is a part of or None)
        every_refresher: list[Refresher] = []
        with gr.Tabs() as tabs:
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
        gr.HTML(FOOTER)
    if warm_up:
        start_warm_up()
    return demo
