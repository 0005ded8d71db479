"""Models tab: the registry as a table, and a form to add a model by Hub id or local folder.

Nothing here loads a model: the table reads configuration files only, and adding a model checks
that it can load (offline, a Hub id is refused at once with the reason).
"""

from __future__ import annotations

import gradio as gr

from ..encoding.model_cache import runtime_summary
from ..models.entries import POOLINGS
from ..models.info import looks_like_sentence_transformer, registry_rows
from ..models.kinds import kind_of
from ..models.registry import get_registry
from . import snippets
from .common import action, user_errors
from .model_select import Refresher

HEADERS = ["key", "label", "family", "kind", "dimension", "available", "loads from / why not", "runs here on"]
COLUMN_WIDTHS = ["17%", "11%", "10%", "16%", "8%", "8%", "15%", "15%"]  # one per column; keys and kinds whole
assert len(COLUMN_WIDTHS) == len(HEADERS)
POOLING_CHOICES = [("mean of token vectors", "mean"), ("[CLS] token", "cls"), ("max over tokens", "max")]
assert [value for _, value in POOLING_CHOICES] == list(POOLINGS)


# --- handlers ------------------------------------------------------------------------------------

@user_errors
def list_models() -> dict:
    rows = [[r.key, r.label, r.family, r.kind, "" if r.dimension is None else str(r.dimension),
             "yes" if r.available else "no", r.where, runtime_summary(r.key)] for r in registry_rows()]
    return {"headers": HEADERS, "data": rows}


@user_errors
def add_model(name_or_path: str, pooling: str) -> str:
    entry = get_registry().add(name_or_path, pooling or "mean")
    where = get_registry().availability(entry).where
    pooled = f", {entry.pooling} pooling" if kind_of(entry).pooling_choice else ""
    text = (f"Added {entry.key} ({entry.family}, {entry.kind}{pooled}) from {where}. "
            "It is now in the model lists of every tab.")
    return snippets.message(text, "ok")


def table_cards(table: object) -> str:
    """The table (a pandas DataFrame, as the page holds it) as the cards a phone shows instead: each model a
    card titled by its key, each column a line after its name (app.css shows one or the other by width)."""
    return snippets.cards(HEADERS, table.to_numpy().tolist() if hasattr(table, "to_numpy") else [])


def show_pooling(name_or_path: str) -> dict:
    """Pooling only matters for plain transformers; sentence-transformers models bring their own."""
    return gr.update(visible=not looks_like_sentence_transformer(name_or_path))


# --- layout and wiring ---------------------------------------------------------------------------

def build_tab() -> list[Refresher]:
    """Build the Models tab inside the current ``gr.Tab``; returns what to refresh when it is shown."""
    with gr.Row(equal_height=True):
        gr.Markdown("Every model the app can use. **naive**: averaged word vectors or plain BERT; "
                    "**siamese**: SBERT models trained on sentence pairs; **static**: tables of token vectors "
                    "(distilled here from SBERT, or WordLlama's), averaged, no transformer at inference; "
                    "**cross-encoder**: scores a pair by reading both sentences; **fine-tuned**: models trained "
                    "here (in `models/`).", elem_classes="tab-intro")
        refresh = gr.Button("Refresh", size="sm", scale=0, min_width=110, elem_id="models-refresh")
    table = gr.Dataframe(headers=HEADERS, interactive=False, wrap=True, show_label=False,
                         column_widths=COLUMN_WIDTHS, elem_id="models-table")
    cards = gr.HTML(elem_id="models-cards")  # the table as a phone shows it (app.css)
    gr.Markdown("### Add a model", elem_classes="section-title")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            name = gr.Textbox(label="Hugging Face model id or local folder", elem_id="models-name",
                              placeholder="sentence-transformers/all-MiniLM-L12-v2, bert-base-uncased, "
                                          "or /path/to/models/my-model")
        with gr.Column(scale=2):
            pooling = gr.Radio(POOLING_CHOICES, value="mean", label="Pooling (plain transformers only)",
                               elem_id="models-pooling")
    add = gr.Button("Add model", variant="primary", elem_id="models-add")
    message = gr.HTML(elem_id="models-message")

    action([refresh.click], list_models, None, table, failures_to=message, api_name="models",
           concurrency_id="models")
    table.change(table_cards, table, cards, api_visibility="private", queue=False, show_progress="hidden")
    name.change(show_pooling, name, pooling, api_visibility="private", queue=False, show_progress="hidden")
    # The table refreshes only after a success, so a refused model leaves it in view, unmarked.
    action([add.click, name.submit], add_model, [name, pooling], message, failures_to=message,
           api_name="add_model", concurrency_id="models", show_progress="hidden").success(
        list_models, None, table, api_visibility="private", queue=False)
    return [Refresher(refresh_table, table)]


def refresh_table(_shown: object) -> dict:
    return list_models()
