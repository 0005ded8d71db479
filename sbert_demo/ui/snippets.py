"""Small HTML pieces the tabs show: notes, summary tables, badges, captions.

Every value that may come from a user (sentences, group names, file names, model ids, error
text) is escaped here, so no tab has to remember to. Styles live in ``ui/app.py`` (``CSS``).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from ..formatting import MISSING

FAMILY_NAMES = {"naive": "naive", "siamese": "siamese", "fine-tuned": "trained here", "cross-encoder": "cross-encoder",
                "static": "static"}


class Markup(str):
    """HTML built here from escaped pieces: a table cell holding it is not escaped again."""


def esc(value: object) -> str:
    return html.escape(str(value))


def _cell(value: object) -> str:
    return value if isinstance(value, Markup) else esc(value)


def html_table(headers: Sequence[str | tuple[str, str]], rows: Iterable[Sequence[object]],
               css: str = "summary-table", numeric: Iterable[int] = (), stacked: bool = False,
               titled: bool = False) -> Markup:
    """A table; every cell and header is escaped unless it is :class:`Markup` (the one place that
    escapes table text). A header may be ``(text, tooltip)``; ``numeric`` columns get class ``num``.
    ``stacked``: on a phone each row is a card, each cell on a line of its own after its column's name
    (``data-label``, app.css), instead of a table wider than the screen; ``titled``: the first cell is the
    card's title (a model's name), without its column's name.

    >>> print(html_table(["model", ("cosine", "of the pair")], [["<b>", "0.91"]], numeric=(1,), stacked=True))
    <table class="summary-table stacked"><thead><tr><th>model</th><th title="of the pair">cosine</th></tr></thead><tbody><tr><td data-label="model">&lt;b&gt;</td><td class="num" data-label="cosine">0.91</td></tr></tbody></table>
    """
    numeric = set(numeric)
    names = [str(h[0] if isinstance(h, tuple) else h) for h in headers]
    head = "".join(f'<th title="{esc(h[1])}">{_cell(h[0])}</th>' if isinstance(h, tuple) else f"<th>{_cell(h)}</th>"
                   for h in headers)
    label = (lambda i: f' data-label="{esc(_plain(names[i]))}"' if i < len(names) else "") if stacked else (lambda i: "")
    body = "".join("<tr>" + "".join(f'<td class="num"{label(i)}>{_cell(v)}</td>' if i in numeric
                                    else f"<td{label(i)}>{_cell(v)}</td>" for i, v in enumerate(row)) + "</tr>"
                   for row in rows)
    css = f"{css} stacked" + (" titled" if titled else "") if stacked else css
    return Markup(f'<table class="{esc(css)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def filled(rows: Iterable[Sequence[object]]) -> list:
    """The rows of a table with at least one cell that is not blank."""
    return [row for row in rows if any(str(cell).strip() for cell in row)]


def cards(headers: Sequence[str | tuple[str, str]], rows: Iterable[Sequence[object]],
          numeric: Iterable[int] = ()) -> str:
    """A results table as the cards a phone shows instead of the wide one (app.css shows one or the other by
    width): each filled row a card titled by its first cell, each other cell a line after its column's name;
    empty when no row is filled.

    >>> cards(["model", "x"], [["", " "]])
    ''
    """
    rows = filled(rows)
    return html_table(headers, rows, numeric=numeric, stacked=True, titled=True) if rows else ""


def _plain(text: str) -> str:
    """A header's text without its markup (a header may be :class:`Markup`)."""
    return re.sub(r"<[^>]*>", "", text)


def change_cell(text: str, value: float | None) -> Markup:
    """A change (e.g. ``+3.43``) coloured by its sign with the palette's up/down classes."""
    if value is None:
        return Markup(esc(text))
    return Markup(f'<span class="{"change-up" if value >= 0 else "change-down"}">{esc(text)}</span>')


def shorten(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def paragraph(text: str) -> str:
    return f'<p class="muted">{esc(text)}</p>'


def badge(family: str) -> str:
    kind = family if family in FAMILY_NAMES else "other"
    return f'<span class="badge badge-{kind}">{esc(FAMILY_NAMES.get(family, family))}</span>'


def notes_box(notes: Iterable[str], title: str = "Notes", kind: str = "info") -> str:
    """An info (or warning) box listing ``notes``; empty string when there are none."""
    items = "".join(f"<li>{esc(note)}</li>" for note in notes)
    if not items:
        return ""
    return f'<div class="notes notes-{kind}"><strong>{esc(title)}</strong><ul>{items}</ul></div>'


def message(text: str, kind: str = "ok") -> str:
    return f'<div class="notes notes-{kind}">{esc(text)}</div>'


def _number(value: float | None, digits: int = 2) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def _bar(value: float | None, family: str, scale: float = 1.0) -> str:
    """A number with a thin bar under it, so differences between models are seen at a glance."""
    if value is None:
        return MISSING
    width = max(0.0, min(1.0, value / scale)) * 100 if scale > 0 else 0
    return (f'<div class="num">{value:.2f}</div>'
            f'<div class="bar"><span class="bar-{esc(family)}" style="width:{width:.0f}%"></span></div>')


def summary_table(data: dict) -> str:
    """The comparison table of an exploration (``Exploration.as_json()``): one row per model."""
    grouped = data.get("groups") is not None
    rows = []
    for model in data.get("models", []):
        runtime = f'<div class="muted runtime">{esc(model["runtime"])}</div>' if model.get("runtime") else ""
        name = Markup(f'{esc(model["label"])} {badge(model["family"])}{runtime}')
        if model.get("error"):
            rows.append([name, f"Skipped: {model['error']}", "", "", "", "", ""])
            continue
        summary, clusters = model["summary"], model["clusters"]
        family = model["family"]
        rows.append([name, Markup(_bar(summary["mean_pairwise"], family)), _number(summary["within_group"]),
                     _number(summary["between_group"]), Markup(_bar(summary["gap"], family)),
                     Markup(f'{clusters["k"]} <span class="muted">({esc(_method_name(clusters["method"]))})</span>'),
                     _number(clusters["ari"])])
    hint = "" if grouped else (
        '<p class="muted">Add group labels (<code>group | sentence</code>) to measure within- versus '
        "between-group similarity and how well automatic clusters recover the groups.</p>")
    headers = ["Model", ("Mean cosine, all pairs", "Mean cosine over all pairs of different sentences"),
               "Within groups", "Between groups",
               ("Gap (within − between)", "Within-group minus between-group mean cosine: larger separates meaning "
                                          "better"),
               "Auto clusters", ("ARI vs. groups", "Adjusted Rand index of the automatic clusters against the given "
                                                   "groups")]
    return (f'<div class="summary">{html_table(headers, rows, stacked=True, titled=True)}'
            '<p class="muted">A high mean cosine means everything looks alike; a large gap means '
            f"sentences with the same meaning stand out.</p>{hint}</div>")


def _method_name(method: str) -> str:
    return {"kmeans": "k-means", "hdbscan": "HDBSCAN"}.get(method, method)


def model_header(model: dict) -> str:
    """Name, family badge and the headline numbers at the top of a model's column."""
    name = f'<span class="model-name">{esc(model["label"])}</span>'
    head = f'<div class="model-head">{name}{badge(model["family"])}</div>'
    if model.get("error"):
        return head + message(f"Skipped: {model['error']}", "warning")
    summary = model["summary"]
    source = "from the embedding cache" if model.get("cached") else "encoded now"
    stats = [("mean cosine", summary["mean_pairwise"]), ("within", summary["within_group"]),
             ("between", summary["between_group"]), ("gap", summary["gap"])]
    cells = "".join(f'<div><span class="stat-value">{_number(value)}</span><span class="stat-name">{name}</span></div>'
                    for name, value in stats if value is not None or name == "mean cosine")
    return (f'{head}<div class="model-meta">{esc(model["key"])} · {model["seconds"]:.2f} s · {source}</div>'
            f'<div class="stats">{cells}</div>')


def map_caption(model: dict, data: dict, colour_by: str) -> str:
    clusters, projection = model["clusters"], model.get("map")
    parts = []
    if projection is None:
        return paragraph("A 2-D map needs at least three sentences.")
    if colour_by == "groups" and data.get("groups") is None:
        parts.append("No groups were given, so points are coloured by automatic cluster.")
    found = f"{_method_name(clusters['method'])} found {clusters['k']} cluster{'s' * (clusters['k'] != 1)}"
    if clusters.get("silhouette") is not None:
        found += f" (silhouette {clusters['silhouette']:.2f})"
    parts.append(found + ".")
    if clusters.get("ari") is not None:
        parts.append(f"Agreement with the given groups: ARI <b>{clusters['ari']:.2f}</b> "
                     "(1 = same partition, 0 = chance).")
    return f'<p class="muted caption">{" ".join(parts)}</p>'

