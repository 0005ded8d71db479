"""The "Why" tab: why naive embeddings fail, shown exactly, and what helps without training.

Three views, each a thin handler over :mod:`sbert_demo.analysis`: which token pairs make two
sentences similar (exact for mean and max pooling), the cone of naive vectors (cosine histograms
of random, similar and unrelated STSb pairs), and a model trained here beside its base.
"""

from __future__ import annotations

import numpy as np
import gradio as gr

from ..analysis import anisotropy as cone
from ..analysis import explanation
from ..analysis import plots as why_plots
from ..analysis.training_effect import MAX_SENTENCES, trained_models, training_effect
from ..data.examples import EXAMPLE_SETS
from ..data.sentences import parse_sentences
from ..explore import plots as explore_plots
from ..formatting import signed_x100, x100
from ..models.registry import get_registry
from ..views import VIEWS
from . import snippets
from .common import action, user_errors
from .links import TabParts
from .model_select import Refresher, model_dropdown, picker

EXPLAIN_DEFAULTS = VIEWS["why"].default_models
CONE_DEFAULTS = VIEWS["cone"].default_models
PAIRS = [
    ["A man is playing a guitar.", "Someone plays the guitar on stage."],
    ["How can I lose weight quickly?", "What is the fastest way to slim down?"],
    ["A dog bites a man.", "A man bites a dog."],
    ["The stock market fell sharply today.", "A cat is sleeping on the sofa."],
]
SPLITS = [("STSb train", "train"), ("STSb dev", "dev"), ("STSb test", "test")]
BEFORE_AFTER_SET = "paraphrase-questions"


# --- handlers ------------------------------------------------------------------------------------

def _available(keys: tuple[str, ...]) -> list[str]:
    registry = get_registry()
    return [key for key in keys if registry.availability(key).available]


@user_errors
def run_explain(sentence_a: str, sentence_b: str, model_keys: list[str], progress=gr.Progress()) -> list:
    """(summary HTML, *one figure per model slot)."""
    progress(0, desc="Reading token vectors")
    results = explanation.explain_pair(model_keys, sentence_a, sentence_b,
                                       progress=lambda fraction, what: progress(fraction, desc=what))
    done = [r for r in results if r.ok]
    maps = [r.contributions for r in done if r.exact]
    zmax = max((float(np.abs(m).max()) for m in maps), default=None) or None
    figures = [_explanation_figure(r, zmax) for r in done]
    slots = [gr.update(visible=True, value=f) for f in figures]
    slots += [gr.update(visible=False, value=None)] * (explanation.MAX_MODELS - len(slots))
    return [explain_summary(results), *slots]


def _explanation_figure(result: explanation.PairExplanation, zmax: float | None):
    title = f"{result.label}: cosine {result.cosine:.3f}"
    if result.exact:
        return why_plots.contribution_heatmap(
            result.contributions, result.tokens_a, result.tokens_b, title, zmax,
            subtitle=f"{result.method}: the cells sum to the cosine. Colours shared across models.")
    return why_plots.leave_one_out_bars(result.leave_one_out_a, result.leave_one_out_b, result.tokens_a,
                                        result.tokens_b, title, subtitle="Approximate: leave one token out.")


def explain_summary(results: list) -> str:
    """One card per model: cosine, method, the shares, the top pairs (user text escaped)."""
    cards = []
    for result in results:
        if result.error:
            cards.append(snippets.message(f"Skipped {result.key}: {result.error}", "warning"))
            continue
        head = (f'<div class="model-head"><span class="model-name">{snippets.esc(result.label)}</span>'
                f'{snippets.badge(result.family)}</div>')
        stats = [("cosine", f"{result.cosine:.3f}"), ("method", result.method)]
        if result.exact:
            stats += [(name, _share(value, result.cosine)) for name, value in result.shares().items()]
        cells = "".join(f'<div><span class="stat-value">{snippets.esc(v)}</span>'
                        f'<span class="stat-name">{snippets.esc(n)}</span></div>' for n, v in stats)
        body = f'<div class="stats">{cells}</div>'
        if result.exact:
            rows = [[result.tokens_a[i], result.tokens_b[j], f"{value:+.4f}", _share(value, result.cosine)]
                    for i, j, value in result.top_pairs()]
            body += snippets.html_table(["token in A", "token in B", "contribution", "of the cosine"], rows,
                                        css="summary-table top-pairs", numeric=(2, 3), stacked=True)
        else:
            body += snippets.paragraph(f"Not exact: {result.why_not_exact}")
        body += snippets.notes_box(result.notes, title="Notes")
        cards.append(f'<div class="why-card">{head}{body}</div>')
    return f'<div class="why-cards">{"".join(cards)}</div>'


def _share(value: float, cosine: float) -> str:
    return f"{value:+.3f}" + (f" ({value / cosine:.0%})" if abs(cosine) > 1e-6 else "")


@user_errors
def run_cone(model_keys: list[str], split: str, progress=gr.Progress()) -> list:
    """(summary HTML, histogram figure)."""
    if split not in {value for _, value in SPLITS}:
        raise ValueError(f"Choose the STSb split to sample pairs from: {', '.join(v for _, v in SPLITS)}.")
    results = cone.anisotropy_many(model_keys, split, progress=lambda fraction, what: progress(fraction, desc=what))
    done = [r for r in results if r.ok]
    figure = why_plots.anisotropy_histograms(done) if done else None
    return [cone_summary(results), figure]


def cone_summary(results: list) -> str:
    rows = []
    for result in results:
        name = snippets.Markup(f'{snippets.esc(result.label)} {snippets.badge(result.family)}'
                               f'<div class="muted runtime">{snippets.esc(result.runtime)}</div>')
        if result.error:
            rows.append([name, f"Skipped: {result.error}", "", "", ""])
            continue
        rows.append([name, f"{result.mean_random_cosine:.3f}", f"{result.similar.mean():.3f}",
                     f"{result.unrelated.mean():.3f}", f"{result.auc:.3f}"])
    headers = ["Model", ("Mean cosine, random pairs", "Mean cosine of random sentence pairs: 0 means directions "
                                                       "are spread out"),
               "similar pairs (gold ≥ 4)", "unrelated pairs (gold ≤ 1)",
               ("AUC similar vs. unrelated", "How well cosine separates similar from unrelated pairs: 1 perfect, "
                                             "0.5 chance")]
    return (snippets.html_table(headers, rows, numeric=(1, 2, 3, 4), stacked=True, titled=True)
            + '<p class="muted">Naive vectors crowd into a cone: random pairs score high, so a cosine of 0.8 '
            "means little. Training-free fixes (centre, all-but-the-top, whitening) open the cone; SBERT "
            "needs none of them.</p>")


def refresh_trained(current: str | None) -> dict:
    choices = trained_models()
    keys = [key for _, key in choices]
    return gr.update(choices=choices, value=current if current in keys else (keys[0] if keys else None))


@user_errors
def run_before_after(model_key: str | None, text: str, progress=gr.Progress()) -> list:
    """(summary HTML, before heatmap, after heatmap, difference heatmap)."""
    if not model_key or not isinstance(model_key, str):
        raise ValueError("Choose a model trained here (train one in the Train tab: GloVe on NLI takes seconds).")
    parsed = parse_sentences(text, max_sentences=MAX_SENTENCES)
    progress(0, desc="Encoding with both models")
    effect = training_effect(model_key, parsed.sentences)
    zmin, zmax = explore_plots.shared_range([effect.before, effect.after])
    before = explore_plots.heatmap(effect.before, effect.sentences, f"Before: {effect.base_label}", zmin, zmax)
    after = explore_plots.heatmap(effect.after, effect.sentences, f"After: {effect.label}", zmin, zmax)
    diff = why_plots.difference_heatmap(effect.before, effect.after, effect.sentences,
                                        "What training changed (after − before)")
    return [before_after_summary(effect, parsed.notes), before, after, diff]


def before_after_summary(effect, notes: list[str]) -> str:
    rows = [[f"STSb {row.split}", x100(row.before), x100(row.after),
             snippets.change_cell(signed_x100(row.change), row.change)] for row in effect.scores()]
    table = snippets.html_table(["Spearman x100 (from the model card)", effect.base_label, effect.label, "change"],
                                rows, numeric=(1, 2, 3)) if rows else snippets.paragraph(
        "The model card holds no STSb numbers.")
    moved = "".join(
        f"<li>{snippets.esc(snippets.shorten(effect.sentences[i], 60))} ↔ "
        f"{snippets.esc(snippets.shorten(effect.sentences[j], 60))}: {b:.2f} → {a:.2f}</li>"
        for i, j, b, a in effect.moved_pairs())
    return (table + (f"<p class='muted'>Pairs training moved most:</p><ul class='moved'>{moved}</ul>" if moved else "")
            + snippets.notes_box(notes))


def load_example(key: str) -> str:
    example = EXAMPLE_SETS.get(key)
    return example.text if example else gr.skip()


# --- layout and wiring ---------------------------------------------------------------------------

def _explain_section() -> tuple[Refresher, gr.Dropdown]:
    gr.Markdown("**Which token pairs make two sentences similar?** For mean pooling the cosine is exactly a "
                "sum over token pairs (u_i·v_j / (n·m·‖a‖·‖b‖)); for max pooling each dimension comes from one "
                "pair. Other poolings get approximate leave-one-out deltas.", elem_classes="tab-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            sentence_a = gr.Textbox(PAIRS[0][0], label="Sentence A", max_lines=4, elem_id="why-a")
            sentence_b = gr.Textbox(PAIRS[0][1], label="Sentence B", max_lines=4, elem_id="why-b")
            gr.Examples(PAIRS, [sentence_a, sentence_b], label="Pairs to try", elem_id="why-pairs")
        with gr.Column(scale=2):
            models = model_dropdown(_available(EXPLAIN_DEFAULTS), explanation.MAX_MODELS, label=f"Models (up to {explanation.MAX_MODELS})",
                                    info="Variants such as glove-6b-50d+whiten are explained exactly too.",
                                    elem_id="why-models")
            run = gr.Button("Explain the similarity", variant="primary", size="lg", elem_id="why-explain")
            progress_box = gr.HTML(elem_classes="progress-box", elem_id="why-explain-progress")
    summary = gr.HTML(elem_id="why-explain-summary")
    with gr.Row(equal_height=False, elem_classes="why-maps"):
        maps = [gr.Plot(show_label=False, visible=False, min_width=420, elem_classes="why-map")
                for _ in range(explanation.MAX_MODELS)]
    action([run.click], run_explain, [sentence_a, sentence_b, models], [summary, *maps], failures_to=progress_box,
           api_name="explain", reveal="why-explain-summary", concurrency_id="why", show_progress_on=progress_box)
    return picker(models), models


def _cone_section() -> Refresher:
    gr.Markdown("**The cone.** Cosine of 2,000 random sentence pairs, of gold-similar and of gold-unrelated "
                "STSb pairs. Naive vectors all point the same way, so every cosine is high.",
                elem_classes="tab-intro")
    with gr.Row(equal_height=True):
        models = model_dropdown(_available(CONE_DEFAULTS), cone.MAX_MODELS, label=f"Models (up to {cone.MAX_MODELS})",
                                elem_id="why-cone-models")
        split = gr.Radio(SPLITS, value="train", label="Pairs from", scale=0, min_width=260)
        with gr.Column(scale=0, min_width=200):
            run = gr.Button("Measure the cone", variant="primary", elem_id="why-cone-run")
    progress_box = gr.HTML(elem_classes="progress-box", elem_id="why-cone-progress")
    summary = gr.HTML(elem_id="why-cone-summary")
    figure = gr.Plot(show_label=False, elem_id="why-cone-plot")
    action([run.click], run_cone, [models, split], [summary, figure], failures_to=progress_box,
           api_name="anisotropy", reveal="why-cone-summary", concurrency_id="why", show_progress_on=progress_box)
    return picker(models)


def _before_after_section() -> Refresher:
    gr.Markdown("**Before and after training.** A model trained in the Train tab beside its base, on the same "
                "sentences: both similarity maps, their difference, and the STSb numbers from its model card.",
                elem_classes="tab-intro")
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            model = gr.Dropdown(trained_models(), label="Model trained here", allow_custom_value=True,
                                info="Models trained in the Train tab appear here.", elem_id="why-trained")
            example = gr.Dropdown([(e.title, e.key) for e in EXAMPLE_SETS.values()], value=BEFORE_AFTER_SET,
                                  label="Example set")
            run = gr.Button("Compare with its base", variant="primary", elem_id="why-before-after")
            progress_box = gr.HTML(elem_classes="progress-box", elem_id="why-before-after-progress")
        with gr.Column(scale=3):
            text = gr.Textbox(EXAMPLE_SETS[BEFORE_AFTER_SET].text, lines=8, max_lines=14, label="Sentences",
                              elem_id="why-sentences")
    summary = gr.HTML(elem_id="why-before-after-summary")
    with gr.Row(equal_height=False):
        before, after = gr.Plot(show_label=False), gr.Plot(show_label=False)
    difference = gr.Plot(show_label=False, elem_id="why-difference")
    example.change(load_example, example, text, api_visibility="private", queue=False)
    action([run.click], run_before_after, [model, text], [summary, before, after, difference],
           failures_to=progress_box, api_name="before_after", reveal="why-before-after-summary", concurrency_id="why",
           show_progress_on=progress_box)
    return Refresher(refresh_trained, model)


def build_tab() -> TabParts:
    """Build the Why tab inside the current ``gr.Tab``; returns what to refresh when it is shown
    and what a link can set."""
    gr.Markdown("Why do naive embeddings fail, and what helps short of siamese training?",
                elem_classes="tab-intro")
    with gr.Tabs(elem_id="why-parts", overflow_behavior="wrap"):
        with gr.Tab("Explain a pair", id="why-explain-tab"):
            explain_models, models = _explain_section()
        with gr.Tab("The cone (anisotropy)", id="why-cone-tab"):
            cone_models = _cone_section()
        with gr.Tab("Before / after training", id="why-training-tab"):
            trained = _before_after_section()
    return TabParts([explain_models, cone_models, trained], {"models": models})
