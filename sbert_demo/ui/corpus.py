"""Explore → Corpus map: up to 1,000,000 sentences, map only, per model.

The corpus is the built-in STS benchmark sentences or an uploaded .txt / .csv / .tsv / .parquet / .jsonl
file (text column and optional label column, found by name or chosen). "Map the corpus" runs
:func:`~sbert_demo.explore.corpus_map.map_corpus` up to 20,000 sentences and
:func:`~sbert_demo.corpus.large_map.map_large_corpus` beyond (API ``/corpus_map``); colouring and search
only redraw the figures from the finished result, which stays on the server (``gr.State``). Every map
is published for the map view (``/atlas``, :mod:`sbert_demo.atlas`): WebGL points, lasso and a linked
table, models compared by their shared neighbours; past 20,000 sentences it is the only view.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import NamedTuple

import gradio as gr
import numpy as np

from ..atlas.store import publish
from ..corpus.large_map import map_large_corpus, search_large
from ..corpus.library import open_corpus
from ..corpus.sources import MAX_SENTENCES, MAX_UPLOAD_BYTES, LargeCorpus, SourceSpec, row_count
from ..data.corpora import (CORPUS_SUFFIXES, MAX_CORPUS_BYTES, MAX_CORPUS_SENTENCES, NO_LABEL, STSB_CORPUS, Corpus, corpus_columns,
                            read_corpus, stsb_corpus)
from ..explore import plots
from ..explore.corpus_map import (DEFAULT_K, MAX_K, CorpusMap, ModelMap, map_corpus,
                                  sample_sentences, search)
from ..formatting import MISSING
from ..views import VIEWS
from . import snippets
from .common import action, user_errors, warn_once_about_the_cache
from .model_select import Refresher, default_models, model_dropdown, picker
from .page_work import heavy_run, watched
from .visitor import visitor

SOURCES = [(f"{STSB_CORPUS} (built in)", "stsb"), ("my file", "file"), ("a Hugging Face dataset", "dataset")]
DATASET_HINT = "id, or id:config:split, e.g. sentence-transformers/stsb:default:train"
COLOURS = [("given labels", "labels"), ("k-means clusters", "clusters")]
SEARCH_CHOICES = [("words", "words"), ("meaning (100 nearest)", "meaning")]
NONE_CHOICE = ("(none: colour by clusters)", NO_LABEL)
DEFAULT_MODELS = VIEWS["corpus"].default_models
MAX_MODELS = VIEWS["corpus"].max_models
SLOT_OUTPUTS = 3  # column, map, caption
LINKED_MATCHES = 2000  # a search's matches carried to the map view in its link


# --- handlers ------------------------------------------------------------------------------------

FILE_TYPES = [*CORPUS_SUFFIXES, ".jsonl"]


def dataset_spec(dataset: str | None, text_column: str | None, label_column: str | None) -> SourceSpec:
    """``id``, ``id:config`` or ``id:config:split`` (default split: train) as a dataset source."""
    parts = [part.strip() for part in (dataset or "").split(":")]
    if not parts[0]:
        raise ValueError(f"Name the Hugging Face dataset: {DATASET_HINT}.")
    if len(parts) > 3:
        raise ValueError(f"A dataset is {DATASET_HINT}; {dataset!r} has too many ':'.")
    name, config, split = (parts + ["", ""])[:3]
    return SourceSpec(dataset=name, config=config or None, split=split or "train", text_column=text_column or None,
                      label_column="" if label_column == NO_LABEL else label_column or None, visitor=True)


def load_corpus(source: str, path: str | None, text_column: str | None,
                label_column: str | None, dataset: str | None = None) -> Corpus | LargeCorpus:
    """The corpus chosen: up to 20,000 rows read whole, beyond that streamed (a :class:`LargeCorpus`)."""
    if source == "stsb":
        return stsb_corpus()
    if source == "dataset":
        return open_corpus(dataset_spec(dataset, text_column, label_column))
    if source != "file":
        raise ValueError(f"Unknown corpus source {source!r}; choose 'stsb', 'file' or 'dataset'.")
    if not path:
        raise ValueError("Upload a corpus file first (.txt, .csv, .tsv, .parquet or .jsonl), or choose the built-in "
                         "corpus.")
    # Past 20,000 rows, past what is read whole, or JSON Lines: streamed (one upload limit for every corpus file).
    file = Path(path)
    streamed = file.suffix.lower() == ".jsonl" or (file.is_file() and file.stat().st_size > MAX_CORPUS_BYTES)
    if streamed or row_count(path) > MAX_CORPUS_SENTENCES:
        return open_corpus(SourceSpec(path=path, text_column=text_column or None,
                                      label_column="" if label_column == NO_LABEL else label_column or None))
    return read_corpus(path, text_column or None, label_column)


def _card(corpus: Corpus) -> str:
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in corpus.notes[:6])
    fields = getattr(corpus, "fields", ())  # its own columns, each with its type: colour and filter by them
    columns = "".join(f"<li>{html.escape(found.describe())}</li>" for found in fields[:12])
    more = f"<li>and {len(fields) - 12} more</li>" if len(fields) > 12 else ""
    return (f'<div class="corpus-card"><strong>{html.escape(corpus.describe())}</strong>'
            + (f"<ul>{notes}</ul>" if notes else "")
            + (f'<p>Its columns, to colour and filter the map view by:</p><ul>{columns}{more}</ul>' if columns else "")
            + "</div>")


UPLOAD_HINT = ("Upload a corpus file: .txt (one sentence per line, optionally 'label | sentence'), or .csv / .tsv / "
               f".parquet / .jsonl with a text column and an optional label column; up to {MAX_SENTENCES:,} sentences "
               "in a file of up to {size}. Past {small:,} sentences the map is laid out from a sample and shown in the "
               "map view only.")


def upload_hint() -> str:
    return UPLOAD_HINT.format(size=f"{MAX_UPLOAD_BYTES // 2**20} MB", small=MAX_CORPUS_SENTENCES)


@user_errors
def inspect_file(source: str, path: str | None) -> list:
    """When the source or the file changes: the file's columns to choose from (the ones found by name
    selected) and what the corpus holds, or why it cannot be read as it is."""
    hidden = gr.update(visible=False)
    if source == "dataset":  # read when mapped (a dataset may be large, or only on the Hub)
        return [gr.update(visible=True, choices=[], value=None), gr.update(visible=True, choices=[NONE_CHOICE],
                                                                           value=NO_LABEL),
                snippets.paragraph(f"Name a Hugging Face dataset ({DATASET_HINT}); it is read when you map it, up to "
                                   f"{MAX_SENTENCES:,} sentences.")]
    if source != "file":
        return [hidden, hidden, _card(load_corpus(source, None, None, None))]
    if not path:
        return [hidden, hidden, snippets.paragraph(upload_hint())]
    try:
        corpus = load_corpus(source, path, None, None)
        columns = list(getattr(corpus, "columns", ()) or corpus_columns(path))
        card = _card(corpus)
        text_value, label_value = corpus.text_column, corpus.label_name or NO_LABEL
    except ValueError as exc:  # e.g. no column named like text: let the user choose one
        columns = corpus_columns(path)
        if not columns:
            raise
        card, text_value, label_value = snippets.message(str(exc), "warning"), None, NO_LABEL
    if not columns:  # .txt: nothing to choose
        return [gr.update(visible=False, choices=[], value=None),
                gr.update(visible=False, choices=[NONE_CHOICE], value=NO_LABEL), card]
    return [gr.update(visible=True, choices=columns, value=text_value),
            gr.update(visible=True, choices=[NONE_CHOICE, *[(c, c) for c in columns]], value=label_value), card]


@user_errors
def describe_choice(source: str, path: str | None, text_column: str | None, label_column: str | None) -> str:
    if source == "file" and not path:
        return snippets.paragraph(upload_hint())
    return _card(load_corpus(source, path, text_column, label_column))


@user_errors
def run_map(source: str, path: str | None, text_column: str | None, label_column: str | None,
            model_keys: list[str], colour_by: str, k: float, query: str | None = None, mode: str = "words",
            dataset: str | None = "", request: gr.Request = None, progress=gr.Progress()) -> list:
    """Map the corpus; a search still in its box is applied to the new maps (its matches on top). The work
    stops where it is when its page closes."""
    report = watched(progress)
    report(0.0, "Reading the corpus")
    with heavy_run(visitor(request), "corpus map"):
        corpus = load_corpus(source, path, text_column, label_column, dataset)
        say = lambda fraction, what: report(0.95 * fraction, what)  # noqa: E731
        if isinstance(corpus, LargeCorpus):
            result = map_large_corpus(corpus, model_keys or [], int(k), progress=say)
        else:
            result = map_corpus(corpus, model_keys or [], k, progress=say)
    warn_once_about_the_cache()
    progress(0.96, desc="Publishing the map view")
    view = _map_view(result, large=isinstance(corpus, LargeCorpus))
    progress(0.98, desc="Drawing the maps")
    if isinstance(corpus, LargeCorpus):  # a million points are the map view's, not a Plotly figure's
        found, slots = "", _slots(result, colour_by, drawn=False)
    else:
        found, *slots = _searched(result, colour_by, query, mode)
    return [_card(corpus), snippets.notes_box(result.notes) if result.notes else "", result,
            result.as_json(), _clusters_table(result), found, view, *slots]


def _map_view(result: CorpusMap, large: bool) -> str:
    """The link to the map view of ``result`` (and, past 20,000 sentences, the view itself in the page)."""
    if not result.succeeded:
        return ""
    atlas = publish(result)
    href = f"/atlas/?map={atlas.id}"
    link = (f'<p class="atlas-link"><a href="{href}" target="_blank" rel="noopener">Open the map view ↗</a> '
            "<span class=\"muted\">WebGL maps of every sentence: lasso a group in one model's map and see where it "
            "lands in the others, a linked table and CSV, and where two models' neighbourhoods disagree.</span></p>")
    if not large:
        return link
    return link + f'<iframe class="atlas-frame" src="{href}" title="Map view of {html.escape(result.corpus.name)}"></iframe>'


@user_errors
def recolour(result: CorpusMap | None, colour_by: str, query: str | None = None, mode: str = "words") -> list:
    """Redraw in the other colouring; the search's matches, if any, stay on top."""
    if not isinstance(result, CorpusMap):
        return [gr.skip()] * (SLOT_OUTPUTS * MAX_MODELS)
    return _searched_slots(result, colour_by, query, mode)[1]


@user_errors
def highlight(result: CorpusMap | None, colour_by: str, query: str, mode: str) -> list:
    """Redraw the maps with the search's matches on top (an empty search clears the highlight)."""
    if not isinstance(result, CorpusMap):
        raise ValueError("Map a corpus first, then search it.")
    return _searched(result, colour_by, query, mode)


def _searched(result: CorpusMap, colour_by: str, query: str | None, mode: str) -> list:
    """[what the search found (HTML), *the slots drawn with its matches on top]."""
    found, slots = _searched_slots(result, colour_by, query, mode)
    if not found:
        return ["", *slots]
    sentences = result.corpus.sentences
    shown = result.succeeded[:1] if mode == "words" else result.succeeded  # words match the same everywhere
    lines = []
    for model in shown:
        matches, sentence = found[model.key]
        examples = "".join(f"<li>{html.escape(snippets.shorten(sentences[i], 140))}</li>" for i in matches[:5])
        head = "" if mode == "words" else f"<strong>{html.escape(model.label)}</strong>: "
        lines.append(f"<div><p>{head}{html.escape(sentence)}</p>" + (f"<ul>{examples}</ul>" if examples else "")
                     + "</div>")
    if len(sentences) > MAX_CORPUS_SENTENCES and result.succeeded:  # shown in the map view, selected
        lines.append(_select_in_map_view(result, found, shown))
    return [f'<div class="search-results">{"".join(lines)}</div>', *slots]


def _select_in_map_view(result: CorpusMap, found: dict, shown: list) -> str:
    """The link that selects a search's matches in the map view: every model's (a sentence any of them found),
    and it says whose they are."""
    matches = np.unique(np.concatenate([found[model.key][0][:LINKED_MATCHES] for model in shown]))
    href = f"/atlas/?map={publish(result).id}#rows={','.join(map(str, matches.tolist()))}"
    whose = "" if len(shown) == 1 else f" (the {len(matches):,} sentences any of {len(shown)} models found)"
    return (f'<p><a href="{html.escape(href)}" target="_blank" rel="noopener">Select them in the map view{whose} ↗'
            "</a></p>")


def _searched_slots(result: CorpusMap, colour_by: str, query: str | None, mode: str) -> tuple[dict, list]:
    """The search's findings per model ({} for an empty search) and the slots drawn with its matches on top."""
    query = (query or "").strip()
    drawn = len(result.corpus) <= MAX_CORPUS_SENTENCES  # larger maps are the map view's to draw
    if not query:
        return {}, _slots(result, colour_by, drawn=drawn)
    found = search(result, query, mode) if drawn else search_large(result, query, mode)
    return found, _slots(result, colour_by, {key: matches for key, (matches, _) in found.items()}, query,
                         drawn=drawn)


def _initial_card() -> str:
    try:
        return _card(stsb_corpus())
    except ValueError as exc:  # the shipped data was removed: say so where the corpus would be described
        return snippets.message(str(exc), "warning")


# --- figures -------------------------------------------------------------------------------------

def _slots(result: CorpusMap, colour_by: str, matches: dict | None = None, query: str = "",
           drawn: bool = True) -> list:
    outputs = []
    for slot in range(MAX_MODELS):
        model = result.models[slot] if slot < len(result.models) else None
        if model is None:
            outputs += [gr.update(visible=False), None, ""]
        elif model.error:
            outputs += [gr.update(visible=True), None, snippets.message(f"{model.label} was skipped: {model.error}",
                                                                          "warning")]
        elif not drawn:
            outputs += [gr.update(visible=False), None, ""]
        else:
            highlighted = None if matches is None else matches.get(model.key)
            outputs += [gr.update(visible=True), _figure(result, model, colour_by, highlighted, query),
                        _caption(result, model, colour_by)]
    return outputs


def _figure(result: CorpusMap, model: ModelMap, colour_by: str, highlighted, query: str):
    corpus = result.corpus
    by_labels = colour_by == "labels" and corpus.labels is not None
    labels = corpus.labels if by_labels else model.clustering.labels.tolist()
    words = result.label_words if by_labels else model.cluster_words
    name = f"matches for \u201c{query[:40]}\u201d ({len(highlighted):,})" if highlighted is not None else "matches"
    return plots.corpus_scatter(model.coords, corpus.sentences, labels, f"{model.label}: {model.method} map",
                                words=words, highlight=highlighted, highlight_name=name,
                                subtitle=f"{len(corpus):,} sentences of {corpus.name}")


def _caption(result: CorpusMap, model: ModelMap, colour_by: str) -> str:
    clustering = model.clustering
    parts = [f"{snippets.badge(model.family)} {model.seconds:.1f} s · "
             + ("embeddings from the cache" if model.cached else "encoded now")
             + (f" · {html.escape(model.runtime)}" if model.runtime else "")]
    found = f"k-means: {clustering.k} clusters"
    if clustering.silhouette is not None:
        found += f" (silhouette {clustering.silhouette:.2f})"
    parts.append(found)
    if model.agreement is not None:
        parts.append(f"agreement with the labels: ARI <b>{model.agreement:.2f}</b>")
    if colour_by == "labels" and result.corpus.labels is None:
        parts.append("no labels given, so colours are clusters")
    if model.note:
        parts.append(html.escape(model.note))
    return f'<p class="muted caption">{" · ".join(parts)}</p>'


def _clusters_table(result: CorpusMap) -> str:
    """Per model, each cluster's size, its words and the sentences nearest its middle on the map."""
    blocks = []
    for model in result.succeeded:
        rows = []
        for cluster, size in model.clusters_by_size():
            words = ", ".join(model.cluster_words.get(cluster, ())) or MISSING
            examples = snippets.Markup("<br>".join(snippets.esc(snippets.shorten(s, 110))
                                                   for s in sample_sentences(result, model, cluster)))
            rows.append([cluster, f"{size:,}", snippets.Markup(f"<strong>{snippets.esc(words)}</strong>"), examples])
        blocks.append(f"<h4>{snippets.esc(model.label)}</h4>" + snippets.html_table(
            ["cluster", "sentences", "distinctive words (c-TF-IDF)", "near its middle"], rows, css="clusters-table"))
    if result.label_words:
        rows = [[label, ", ".join(words) or MISSING] for label, words in result.label_words.items()]
        blocks.append(f"<h4>Given labels ({snippets.esc(result.corpus.label_name or '')})</h4>"
                      + snippets.html_table(["label", "distinctive words"], rows, css="clusters-table"))
    return "".join(blocks)


# --- layout and wiring ---------------------------------------------------------------------------

class CorpusParts(NamedTuple):
    """What the rest of Explore and the links use: an upload too big for the heatmaps lands in ``source``
    and ``file``; ``models`` is the picker's registry refresher."""

    source: gr.Radio
    file: gr.File
    models: Refresher


def build() -> CorpusParts:
    gr.Markdown(f"Map a whole corpus, up to {MAX_SENTENCES:,} sentences: beyond the 500 a heatmap can "
                f"show, Explore draws the map only (past {MAX_CORPUS_SENTENCES:,}, in the map view, laid out from a sample). Colour by the file's labels or by k-means clusters, each named "
                "by its most distinctive words (class-based TF-IDF); search highlights sentences by words or by "
                "meaning. Embeddings and maps are cached, so a second run is quick.", elem_classes="tab-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            source = gr.Radio(SOURCES, value="stsb", label="Corpus", elem_id="corpus-source")
            file = gr.File(label="Corpus file (.txt, .csv, .tsv, .parquet, .jsonl)", file_types=FILE_TYPES,
                           type="filepath", visible=False, elem_id="corpus-file")
            dataset = gr.Textbox("", label="Hugging Face dataset", placeholder=DATASET_HINT, visible=False, max_lines=1,
                                 info="Read with datasets.load_dataset (needs the Hub, or the dataset in the local "
                                      "Hugging Face cache); the text column is found by name or typed below.",
                                 elem_id="corpus-dataset")
            with gr.Row():
                text_column = gr.Dropdown(label="Text column", visible=False, allow_custom_value=True,
                                          elem_id="corpus-text-column")
                label_column = gr.Dropdown(label="Label column", visible=False, allow_custom_value=True,
                                           elem_id="corpus-label-column")
            card = gr.HTML(_initial_card(), elem_id="corpus-card")
        with gr.Column(scale=2):
            available = set(default_models(("naive", "siamese", "fine-tuned")))
            models = model_dropdown([k for k in DEFAULT_MODELS if k in available], MAX_MODELS,
                                    label="Models (up to 4)", info="Each model maps the whole corpus.",
                                    elem_id="corpus-models")
            colour_by = gr.Radio(COLOURS, value="labels", label="Colour the map by", elem_id="corpus-colour")
            k = gr.Slider(2, MAX_K, value=DEFAULT_K, step=1, label="k-means clusters", elem_id="corpus-k")
            run = gr.Button("Map the corpus", variant="primary", size="lg", elem_id="corpus-run")
            progress_box = gr.HTML(elem_classes="progress-box", elem_id="corpus-progress")
    notes = gr.HTML(elem_id="corpus-notes")
    view = gr.HTML(elem_id="corpus-view")
    with gr.Row(equal_height=True):
        query = gr.Textbox(label="Search the corpus", placeholder="e.g. guitar, or: someone makes music", scale=4,
                           info="Words: sentences with every word (at a word's start, any case). Meaning: the 100 "
                                "sentences each model puts closest.", elem_id="corpus-search")
        mode = gr.Radio(SEARCH_CHOICES, value="words", label="Match by", scale=2, elem_id="corpus-search-mode")
        find = gr.Button("Highlight", scale=1, min_width=120, elem_id="corpus-find")
    found = gr.HTML(elem_id="corpus-found")
    state = gr.State()
    slots = []
    with gr.Row(equal_height=False, elem_classes="model-columns", elem_id="corpus-maps"):
        for _ in range(MAX_MODELS):
            with gr.Column(visible=False, min_width=480, elem_classes="model-column corpus-column") as column:
                slots += [column, gr.Plot(show_label=False, elem_classes="corpus-map"),
                          gr.HTML(elem_classes="map-caption")]
    with gr.Accordion("Clusters and their words", open=False, elem_id="corpus-clusters-box"):
        clusters = gr.HTML(elem_id="corpus-clusters")
    data = gr.JSON(visible=False)  # what the API returns; the page shows the figures

    source.change(lambda s: [gr.update(visible=s == "file"), gr.update(visible=s == "dataset")], source,
                  [file, dataset], queue=False, api_visibility="private", show_progress="hidden")
    # source.input, not .change: an upload routed here from the sentence box sets both at once, and two
    # answers racing could leave the older one on the card.
    action([source.input, file.change], inspect_file, [source, file], [text_column, label_column, card],
           failures_to=card, api_visibility="private", show_progress="hidden")
    action([text_column.input, label_column.input], describe_choice, [source, file, text_column, label_column],
           card, failures_to=card, api_visibility="private", show_progress="hidden")
    action([run.click], run_map, [source, file, text_column, label_column, models, colour_by, k, query, mode, dataset],
           [card, notes, state, data, clusters, found, view, *slots], failures_to=progress_box, api_name="corpus_map", reveal="corpus-search",
           # a map of 20,000 sentences takes a minute: one at a time, and never holding a slot of Explore's
           concurrency_id="corpus", concurrency_limit=1, show_progress_on=progress_box)
    action([find.click, query.submit], highlight, [state, colour_by, query, mode], [found, *slots],
           failures_to=found, api_visibility="private", concurrency_id="corpus-search", show_progress="minimal")
    colour_by.change(recolour, [state, colour_by, query, mode], slots, api_visibility="private", show_progress="hidden")
    return CorpusParts(source, file, picker(models))


def routed_upload(path: str) -> bool:
    """Whether an upload to the sentence box belongs in the corpus map instead (Parquet is read only here)."""
    return Path(path).suffix.lower() == ".parquet"
