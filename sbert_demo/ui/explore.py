"""Explore tab: one sentence set, up to four models side by side.

Per model: the cosine heatmap (one colour scale shared by all models), the summary numbers, a
ranking against a chosen query sentence and a 2-D map coloured by group or automatic cluster.
The Run button's endpoint (``api_name="explore"``) returns the same numbers as JSON.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr
from gradio.components.plot import PlotData

from ..data.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS, get_example
from ..corpus.sources import MAX_SENTENCES as MAX_LARGE_SENTENCES
from ..data.corpora import MAX_CORPUS_SENTENCES
from ..data.sentences import MAX_FILE_BYTES, parse_sentences, read_sentence_file
from ..explore import plots
from ..explore.exports import export_models
from ..explore.exploration import (MAX_MODELS, MAX_SENTENCES, Exploration, explore, format_sentences, rankings,
                                   request_key, resolve_all)
from ..models.registry import requested_keys
from ..explore.similarity import group_order
from ..shared import BoundedCache
from ..views import VIEWS
from . import corpus, snippets
from .common import action, user_errors, warn_once_about_the_cache
from .links import TabParts
from .model_select import default_models, model_dropdown, picker

COLOUR_CHOICES = [("given groups", "groups"), ("automatic clusters", "clusters")]
CLUSTER_CHOICES = [("k-means (k by silhouette)", "kmeans"), ("HDBSCAN", "hdbscan")]
DEFAULT_MODELS = VIEWS["explore"].default_models
SLOT_OUTPUTS = 6  # column, header, heatmap, ranking, map, map caption


# --- handlers ------------------------------------------------------------------------------------

YOURS = "yours"  # the example picker's entry once the sentences are the user's own
YOURS_DESCRIPTION = ("Your own sentences. Pick an example set above to start again from one; a link (Copy link) "
                     "carries these sentences.")


@user_errors
def load_example(key: str) -> tuple:
    if key == YOURS:  # set by mark_edited: the text box already holds the user's sentences
        return gr.skip(), snippets.paragraph(YOURS_DESCRIPTION)
    example = get_example(key)
    return example.text, snippets.paragraph(example.description)


def mark_edited(text: str | None, key: str | None):
    """After the sentence box changes (typed, pasted, a file loaded, a link): the picker says "Your
    sentences" once the text is no longer the chosen example's (and names the set again if the edit is
    undone)."""
    example = EXAMPLE_SETS.get(key) if isinstance(key, str) else None
    if example is not None and (text or "").strip() == example.text:
        return gr.skip()
    if example is None and key == YOURS:
        matching = next((e.key for e in EXAMPLE_SETS.values() if e.text == (text or "").strip()), None)
        return matching if matching is not None else gr.skip()
    return YOURS


@user_errors
def load_file(path: str | None) -> tuple:
    """Small files fill the text box; a file with more sentences than the heatmaps show (or a Parquet
    file, or one over the text box's size limit) opens in the corpus map instead."""
    if not path:
        return gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
    name = Path(path).name
    if corpus.routed_upload(path) or Path(path).stat().st_size > MAX_FILE_BYTES:
        return _to_corpus_map(path, f"{name} opened in the corpus map (too large for the sentence box).")
    parsed = read_sentence_file(path, max_sentences=MAX_CORPUS_SENTENCES)
    if len(parsed.sentences) > MAX_SENTENCES:
        return _to_corpus_map(path, f"{name} has {len(parsed.sentences):,} sentences, more than the {MAX_SENTENCES} "
                                    "a heatmap can show, so it opened in the corpus map: press “Map the corpus”.")
    text, notes = format_sentences(parsed.sentences, parsed.groups)
    return (text, snippets.notes_box(parsed.notes + notes, title="Loaded the file"), gr.skip(), gr.skip(),
            gr.skip())


def _to_corpus_map(path: str, note: str) -> tuple:
    return gr.skip(), snippets.notes_box([note], title="Corpus map"), "file", path, gr.update(selected="corpus")


def query_choices(text: str, current: int | None) -> dict:
    """Query choices follow the text box; while it cannot be parsed the list is simply empty
    (typing must not pop errors; Run reports the problem)."""
    try:
        sentences = parse_sentences(text or "").sentences
    except ValueError:
        return gr.update(choices=[], value=None)
    choices = [(f"{i + 1}. {snippets.shorten(s, 90)}", i) for i, s in enumerate(sentences)]
    value = current if isinstance(current, int) and 0 <= current < len(sentences) else 0
    return gr.update(choices=choices, value=value)


FIGURES_KEPT = 32  # finished Explore pages (figures and tables) kept in memory, ~0.15 MB each
pages: BoundedCache[tuple, list] = BoundedCache("finished Explore pages", FIGURES_KEPT)


def _kept(text: str, model_keys: list[str], query: int | None, colour_by: str, cluster_method: str) -> tuple:
    """(the request parsed, its models resolved, its page's key, the page if it was drawn already)."""
    parsed = parse_sentences(text or "")
    query_index = query if isinstance(query, int) and 0 <= query < len(parsed.sentences) else 0
    # Each model is resolved once for the request (its files looked at once), then handed down.
    models = resolve_all(model_keys or []) if len(requested_keys(model_keys)) <= MAX_MODELS else None
    # A repeated request (a talk audience opening the same example) gets the page already drawn: the
    # key holds each model's fingerprint and runtime, so a retrained model is never shown stale.
    key = None if not models else request_key(parsed.sentences, parsed.groups, models, query_index, cluster_method)
    key = None if key is None else (key, tuple(parsed.notes), colour_by)
    return parsed, query_index, models, key, (pages.get(key) if key is not None else None)


def show_drawn(text: str, model_keys: list[str], query: int | None, colour_by: str, cluster_method: str,
               request: gr.Request) -> list:
    """When the page opens on Explore as it is (no link changing it): the default page drawn before the app was
    served, on screen before any click; nothing is computed here (where it was not drawn, nothing changes)."""
    params = dict(getattr(request, "query_params", {}) or {})
    outputs = 3 + MAX_MODELS * SLOT_OUTPUTS
    if set(params) - {"tab", "view"} or params.get("tab", "explore") != "explore" or params.get("view"):
        return [gr.skip()] * outputs
    try:
        kept = _kept(text, model_keys, query, colour_by, cluster_method)[-1]
    except ValueError:  # the box holds something a click would refuse: the click says so
        kept = None
    return list(kept) if kept is not None else [gr.skip()] * outputs


@user_errors
def run_explore(text: str, model_keys: list[str], query: int | None, colour_by: str, cluster_method: str,
                progress=gr.Progress()) -> list:
    parsed, query_index, models, key, kept = _kept(text, model_keys, query, colour_by, cluster_method)
    if kept is not None:
        return list(kept)
    result = explore(parsed.sentences, parsed.groups, models or model_keys or [], query_index, cluster_method,
                     progress=lambda fraction, what: progress(fraction, desc=what))
    warn_once_about_the_cache()
    data = result.as_json()
    outputs = [snippets.notes_box(parsed.notes + result.notes), snippets.summary_table(data), data]
    zmin, zmax = plots.shared_range([m.sim for m in result.succeeded])
    for slot in range(MAX_MODELS):
        model = result.models[slot] if slot < len(result.models) else None
        outputs += _slot_outputs(result, data, slot, model, colour_by, zmin, zmax)
    # Figures leave as Gradio's own serialised form (PlotData: the figure's JSON), which gr.Plot passes
    # through as it is: serialised once here, and a repeat costs neither drawing nor serialising again.
    outputs = [PlotData(type="plotly", plot=o.to_json()) if _is_figure(o) else o for o in outputs]
    if key is not None and not any(m.error for m in result.models):
        pages.put(key, outputs)
    return outputs


@user_errors
def export_run(text: str, model_keys: list[str], example_key: str | None, progress=gr.Progress()) -> list[str]:
    """Each model's embeddings of the sentences as .npy, .csv and Embedding Projector TSVs."""
    parsed = parse_sentences(text or "")
    example = EXAMPLE_SETS.get(example_key) if isinstance(example_key, str) else None
    set_name = example.key if example is not None and example.text == (text or "").strip() else "my-sentences"
    files = export_models(set_name, model_keys or [], parsed.sentences, parsed.groups,
                          progress=lambda fraction, what: progress(fraction, desc=what))
    return [str(path) for path in files]


def _is_figure(value) -> bool:
    return type(value).__module__.startswith("plotly") and hasattr(value, "to_json")


@user_errors
def rerank(text: str, data: dict | None, query: int | None) -> list:
    """New rankings for another query sentence, without recomputing maps or clusters."""
    if not _current(data, text) or not isinstance(query, int):
        return [gr.skip()] * MAX_MODELS
    sentences = data["sentences"]
    keys = [m["key"] for m in data["models"] if not m.get("error")]
    figures = {key: _ranking_figure(label, sentences, query, ranking)
               for key, label, ranking in rankings(sentences, keys, query)}
    return [figures.get(m["key"], gr.skip()) if m else gr.skip() for m in _slots(data)]


@user_errors
def recolour(data: dict | None, colour_by: str) -> list:
    if not data or not data.get("models"):
        return [gr.skip()] * (2 * MAX_MODELS)
    outputs = []
    for model in _slots(data):
        if model is None or model.get("error"):
            outputs += [gr.skip(), gr.skip()]
        else:
            outputs += [_map_figure(model, data, colour_by), snippets.map_caption(model, data, colour_by)]
    return outputs


# --- figures from results ------------------------------------------------------------------------

def _current(data: dict | None, text: str) -> bool:
    """Whether the shown results belong to the sentences now in the text box.

    The ``rank`` endpoint takes the results from API callers too, so their shape is checked.
    """
    if not data:
        return False
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("key"), str)
                                               for m in models):
        raise ValueError("The results to re-rank are not what the explore endpoint returned; run the "
                         "comparison first and pass its JSON unchanged.")
    try:
        return bool(data and data.get("sentences") == parse_sentences(text or "").sentences)
    except ValueError:
        return False


def _slots(data: dict) -> list[dict | None]:
    models = list(data.get("models", []))
    return models + [None] * (MAX_MODELS - len(models))


def _slot_outputs(result: Exploration, data: dict, slot: int, model, colour_by: str,
                  zmin: float, zmax: float) -> list:
    if model is None:
        return [gr.update(visible=False), "", None, None, None, ""]
    model_data = data["models"][slot]
    if model.error:
        return [gr.update(visible=True), snippets.model_header(model_data), None, None, None, ""]
    sentences = result.sentences
    heatmap = plots.heatmap(model.sim, sentences, f"{model.label}: cosine similarity", zmin=zmin, zmax=zmax,
                            order=group_order(result.groups, len(sentences)), groups=result.groups, column=True)
    ranking = _ranking_figure(model.label, sentences, result.query_index, model.ranking)
    return [gr.update(visible=True), snippets.model_header(model_data), heatmap, ranking,
            _map_figure(model_data, data, colour_by), snippets.map_caption(model_data, data, colour_by)]


def _ranking_figure(label: str, sentences: list[str], query: int, ranking) -> object:
    others = [f"{i + 1}. {sentences[i]}" for i, _ in ranking]
    scores = [score for _, score in ranking]
    return plots.ranking_bars(f"{query + 1}. {sentences[query]}", others, scores, f"{label}: closest to the query",
                              labels_outside=True)


def _map_figure(model: dict, data: dict, colour_by: str) -> object | None:
    projection = model.get("map")
    if not projection:
        return None
    import numpy as np

    coords = np.column_stack([projection["x"], projection["y"]])
    by_groups = colour_by == "groups" and data.get("groups") is not None
    labels = data["groups"] if by_groups else model["clusters"]["labels"]
    return plots.scatter_map(coords, data["sentences"], labels,
                             f"{model['label']}: {projection['method']} map", note=projection.get("note"))


# --- layout and wiring ---------------------------------------------------------------------------

def default_request() -> tuple:
    """The arguments of the page's first Explore request as it opens (example, models, query, colouring,
    clustering): what most first visitors send, and what the app draws before it serves the page."""
    available = set(default_models(("naive", "siamese", "fine-tuned")))
    return (EXAMPLE_SETS[DEFAULT_EXAMPLE].text, [k for k in DEFAULT_MODELS if k in available], 0, "groups", "kmeans")


def draw_default_page() -> None:
    """The default request's page drawn and kept (:data:`pages`): its first visitor gets it at once."""
    run_explore(*default_request(), progress=lambda *args, **kwargs: None)


def build_tab() -> TabParts:
    """Build the Explore tab inside the current ``gr.Tab``; returns what to refresh when it is shown
    and what a link can set."""
    example = EXAMPLE_SETS[DEFAULT_EXAMPLE]
    with gr.Tabs(elem_id="explore-modes", overflow_behavior="wrap") as modes:
        with gr.Tab("Compare sentences", id="compare") as compare_tab:
            gr.Markdown("Paste sentences (one per line, optionally `group | sentence`), pick up to four models "
                        "and compare: naive embeddings rate almost everything as similar, siamese ones separate "
                        "meaning.", elem_classes="tab-intro")
            with gr.Row(equal_height=False):
                with gr.Column(scale=3):
                    with gr.Row(equal_height=True):
                        examples = gr.Dropdown([(e.title, e.key) for e in EXAMPLE_SETS.values()]
                                               + [("Your sentences", YOURS)], value=example.key,
                                               label="Example set", scale=2, elem_id="explore-example")
                        upload = gr.UploadButton("Upload .txt / .csv", file_types=[".txt", ".csv", ".tsv", ".parquet"],
                                                 type="filepath", scale=1, min_width=150, elem_id="explore-upload")
                    description = gr.HTML(snippets.paragraph(example.description), elem_classes="example-description")
                    text = gr.Textbox(example.text, lines=12, max_lines=20, label="Sentences",
                                      info="One per line; an optional group label before a '|' "
                                           "(e.g. travel | How do I renew my passport?)", elem_id="explore-text")
                with gr.Column(scale=2):
                    models = model_dropdown(default_request()[1], MAX_MODELS,
                                            label="Models (up to 4)", info="Naive (orange) vs. siamese SBERT (blue).",
                                            elem_id="explore-models")
                    # The main button right under the models: on a laptop's first screen, options below it.
                    run = gr.Button("Compare models", variant="primary", size="lg", elem_id="explore-run")
                    progress_box = gr.HTML(elem_classes="progress-box", elem_id="explore-progress")
                    # Custom values: the choices follow the text box, so the API may send any sentence number.
                    query = gr.Dropdown(label="Query sentence for the ranking", elem_id="explore-query",
                                        allow_custom_value=True, **_initial_query(example.text))
                    colour_by = gr.Radio(COLOUR_CHOICES, value="groups", label="Colour the map by")
                    cluster_method = gr.Radio(CLUSTER_CHOICES, value="kmeans", label="Automatic clusters",
                                              info="Takes effect on the next run.")
            notes = gr.HTML(elem_id="explore-notes")
            summary = gr.HTML(elem_id="explore-summary")
            slots = []
            with gr.Row(equal_height=False, elem_classes="model-columns"):
                for slot in range(MAX_MODELS):
                    with gr.Column(visible=False, min_width=320, elem_classes="model-column") as column:
                        slots += [column, gr.HTML(), gr.Plot(show_label=False, elem_classes="heatmap"),
                                  gr.Plot(show_label=False, elem_classes="ranking"),
                                  gr.Plot(show_label=False, elem_classes="map"), gr.HTML(elem_classes="map-caption")]
            with gr.Accordion("Numbers as JSON (what the API returns)", open=False):
                data = gr.JSON(show_label=False, elem_id="explore-json")
            with gr.Accordion("Export the embeddings", open=False, elem_id="explore-export-box"):
                gr.Markdown("Per model: `.npy` (the matrix), `.csv` (sentence, group, dimensions) and the two files "
                            "[projector.tensorflow.org](https://projector.tensorflow.org) loads (`vectors.tsv`, "
                            "`metadata.tsv`). Figures download from their toolbar as PNG (camera) or SVG.",
                            elem_classes="muted")
                with gr.Row(equal_height=True):
                    export = gr.Button("Export embeddings", scale=0, min_width=200, elem_id="explore-export")
                    export_notes = gr.HTML()
                exported = gr.File(label="Files", file_count="multiple", interactive=False, elem_id="explore-files")
        with gr.Tab(f"Corpus map (up to {MAX_LARGE_SENTENCES:,} sentences)", id="corpus",
                    elem_id="explore-corpus-tab") as corpus_tab:
            corpus_parts = corpus.build()

    examples.change(load_example, examples, [text, description], api_visibility="private", queue=False)
    action([upload.upload], load_file, upload, [text, notes, corpus_parts.source, corpus_parts.file, modes],
           failures_to=notes, api_visibility="private")
    text.change(query_choices, [text, query], query, api_visibility="private", queue=False,
                show_progress="hidden")
    # Any change of the sentences (typed, pasted, a file, a link) names them "Your sentences" unless they are
    # an example set's: .change, not .input, which a file or a link filling the box never fires.
    text.change(mark_edited, [text, examples], examples, api_visibility="private", queue=False,
                show_progress="hidden", trigger_mode="always_last")
    action([run.click], run_explore, [text, models, query, colour_by, cluster_method], [notes, summary, data, *slots],
           failures_to=progress_box, api_name="explore", reveal="explore-summary", concurrency_id="explore", show_progress_on=progress_box)
    gr.on(None, show_drawn, [text, models, query, colour_by, cluster_method], [notes, summary, data, *slots],
          queue=False, show_progress="hidden", api_visibility="private")  # the page drawn before serving, at once
    action([query.input], rerank, [text, data, query], slots[3::SLOT_OUTPUTS], failures_to=progress_box,
           api_name="rank", concurrency_id="explore", show_progress="minimal")
    action([export.click], export_run, [text, models, examples], exported, failures_to=export_notes,
           api_name="export", concurrency_id="explore", show_progress_on=export_notes)
    colour_by.change(recolour, [data, colour_by], [o for i in range(MAX_MODELS)
                                                   for o in slots[i * SLOT_OUTPUTS + 4:i * SLOT_OUTPUTS + 6]],
                     api_visibility="private", queue=False, show_progress="hidden")
    linkable = {"example": examples, "description": description, "text": text, "models": models, "query": query,
                "colour": colour_by, "clusters": cluster_method, "notes": notes, "mode": modes}
    parts = {"explore": (compare_tab, {}),
             "corpus": (corpus_tab, {"models": corpus_parts.models.component, "source": corpus_parts.source})}
    return TabParts([picker(models), corpus_parts.models], linkable, parts)


def _initial_query(text: str) -> dict:
    update = query_choices(text, 0)
    return {"choices": update["choices"], "value": update["value"]}
