"""A published corpus map as a static folder: the map view with no server behind it.

:func:`publish_map` writes, from a map the app or ``python -m sbert_demo map`` made (:mod:`sbert_demo.atlas`)::

    index.html  atlas.css  atlas.js  atlas_data.js  atlas_search.js    the map view's page (:mod:`sbert_demo.atlas.page`)
    site.json  README.md (a Static Space's front matter)                its title and links (app, playground, talk)
    data/...                            the map's own folder, copied as it is (:mod:`sbert_demo.atlas.store`), every
                                        pair of its models compared first (:mod:`sbert_demo.atlas.compare`, kept)
    search/<m>/...  vendor/...          search by meaning in the page (:mod:`.search`) with a static model or a
                                        small transformer of the map; ONNX Runtime Web for the latter (:mod:`.vendor`)
    playground.html  playground.js      sentences typed by the visitor, compared under those models in the page
    talk/...                            the talk (:mod:`.talk`), with ``talk=True``

The page is the app's map view reading the same files: the selection's table, its counts per cluster, the word
filter and the CSV are computed in the page (``atlas_data.js``), in the app as here. Nothing is fetched from
anywhere else: no CDN, no server code, no build step where it is hosted.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib import parse

from ..atlas import compare
from ..atlas.page import copy_page
from ..atlas.store import Atlas, open_atlas
from . import folder

FORMAT = "2"
# Cross-origin isolation, which a Static Space sends when its front matter asks (the page loads nothing from another
# origin, so nothing is blocked): ONNX Runtime Web may then use several threads (SharedArrayBuffer) in MiniLM's search.
ISOLATION_HEADERS = {"cross-origin-embedder-policy": "require-corp", "cross-origin-opener-policy": "same-origin",
                     "cross-origin-resource-policy": "cross-origin"}

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Site:
    """A published folder: where it is, what it holds and how big it is."""
    folder: Path
    sentences: int
    models: tuple[str, ...]
    pairs: int
    search: tuple[str, ...]
    files: int
    bytes: int
    notes: tuple[str, ...] = ()  # what was left out and why (a model's search in the page, the talk's QR code)
    talk_steps: int = 0  # the talk's steps (0: no talk)

    def describe(self) -> str:
        talk = f"the talk ({self.talk_steps} steps) in talk/; " if self.talk_steps else ""
        if not self.models:
            return (f"{self.folder}: {talk}{self.files} files, {self.bytes / 1e6:,.1f} MB"
                    + "".join(f"\n{note}" for note in self.notes))
        return (f"{self.folder}: {self.sentences:,} sentences, {len(self.models)} map(s) ({', '.join(self.models)}), "
                f"{self.pairs} comparison(s), search by meaning with {', '.join(self.search) or 'no model'}; {talk}"
                f"{self.files} files, {self.bytes / 1e6:,.1f} MB" + "".join(f"\n{note}" for note in self.notes))


def publish_map(atlas: Atlas | str | None, out: Path, *, app_url: str | None = None, search: bool = True,
                talk: bool = False, title: str | None = None, progress: Progress | None = None,
                site_url: str | None = None) -> Site:
    """Write the static folder of ``atlas`` (an :class:`Atlas` or its id), with the talk in ``talk/`` when
    ``talk`` (or the talk alone, without a map), into ``out`` (created, or an empty folder, or one published
    before, where only what publish wrote is replaced: :mod:`.folder`); return what it holds."""
    if atlas is None and not talk:
        raise ValueError("Name a map to publish (--map ID or latest), the talk (--talk), or both.")
    atlas = open_atlas(atlas) if isinstance(atlas, str) else atlas
    app_url = check_app_url(app_url)
    site_url = check_app_url(site_url, "--site-url")
    say = progress or (lambda fraction, what: None)
    out = Path(out).expanduser().absolute()
    try:
        return _publish(atlas, folder.claim(out), app_url, search, talk, title, say, site_url)
    except OSError as exc:  # a folder that cannot be written, a disk that is full: a sentence, not a traceback
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        raise ValueError(f"Could not publish into {out}: {exc.strerror or exc}{where}. Name a folder you can "
                         "write to.") from None


def _publish(atlas: Atlas | None, target: folder.Target, app_url: str | None, search: bool, talk: bool,
             title: str | None, say: Progress, site_url: str | None = None) -> Site:
    built = folder.staging(target)
    share = 0.5 if atlas is not None and talk else 1.0  # of the progress bar, the map's
    try:
        pairs, searched, notes = (_map(atlas, built, app_url, search, title, talk,
                                       lambda f, what: say(share * f, what)) if atlas is not None else ([], [], []))
        notes = list(notes)
        steps = 0
        if talk:
            from .talk import publish_talk

            steps = publish_talk(built, app_url=app_url, with_map=atlas is not None, site_url=site_url,
                                 progress=lambda f, what: say(1 - share + share * f if atlas is not None else f, what),
                                 skipped=notes.append)
            if atlas is None:
                _talk_only(built)
        files = folder.install(target, built)
    except BaseException:
        folder.discard(target, built)
        raise
    say(1.0, "written")
    models = atlas.models if atlas is not None else []
    return Site(target.folder, atlas.n if atlas is not None else 0, tuple(m["label"] for m in models), len(pairs),
                tuple(models[m]["label"] for m in searched), len(files), sum(p.stat().st_size for p in files),
                tuple(notes), steps)


def _map(atlas: Atlas, staging: Path, app_url: str | None, search: bool, title: str | None, talk: bool,
         say: Progress) -> tuple[list, list[int], list[str]]:
    """The map's part of the folder: (the pairs of models compared, the models searched, why others are not)."""
    pairs = list(compare.compare_all(atlas, lambda f, what: say(0.7 * f, what)))  # kept ones are read
    if atlas.meta.get("fields") and not (atlas.data / "agreement.json").is_file():
        from ..atlas.agreement import agreement_all

        agreement_all(atlas)  # how each model agrees with the corpus's own columns, for the page
    say(0.7, "the map's files")
    shutil.copytree(atlas.data, staging / "data", ignore=shutil.ignore_patterns(".*"))
    searched: list[int] = []
    notes: list[str] = []
    sizes: dict[str, int] = {}
    if search:
        from .search import first_download, publish_search

        searched = publish_search(atlas, staging, lambda f, what: say(0.72 + 0.26 * f, what), notes.append)
        sizes = {str(m): first_download(staging, m) for m in searched}
    (staging / "data" / "meta.json").write_text(json.dumps({**atlas.meta, "search": searched, "search_bytes": sizes}),
                                                encoding="utf-8")
    copy_page(staging, playground=bool(searched))
    site = {"site": FORMAT, "map": atlas.id, "name": atlas.meta["name"], "title": title or atlas.meta["name"],
            "app_url": app_url, "playground": bool(searched), "talk": talk}
    (staging / "site.json").write_text(json.dumps(site, ensure_ascii=False), encoding="utf-8")
    (staging / "README.md").write_text(space_readme(title or atlas.meta["name"], atlas.n,
                                                    [m["label"] for m in atlas.models], talk), encoding="utf-8")
    return pairs, searched, notes


def _talk_only(staging: Path) -> None:
    """A folder with the talk and no map: its front page opens the talk."""
    (staging / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=talk/">'
        "<title>The talk · SBERT demo</title></head><body><p><a href=\"talk/\">Open the talk</a></p></body></html>\n",
        encoding="utf-8")
    (staging / "site.json").write_text(json.dumps({"site": FORMAT, "map": None, "name": "the talk"}), encoding="utf-8")
    (staging / "README.md").write_text(space_readme("Why siamese sentence embeddings beat naive ones", 0, [], talk=True),
                                       encoding="utf-8")


def check_app_url(app_url: str | None, flag: str = "--app-url") -> str | None:
    """An address the pages name (the app's, or the site's own with ``--site-url``): an http(s) address or none
    (a ValueError says so)."""
    if app_url is None or not app_url.strip():
        return None
    parts = parse.urlsplit(app_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{flag} must be an http(s) address, e.g. https://you-sbert-demo.hf.space/ "
                         f"({app_url[:80]!r} is not).")
    return app_url.strip()


def space_readme(title: str, sentences: int, models: Sequence[str], talk: bool = False) -> str:
    r"""The folder's README: a Static Space's front matter (uploading the folder makes the Space; written by a YAML
    library, so any title reads back as it is) and what it is (the title escaped for Markdown and HTML).

    >>> import yaml
    >>> readme = space_readme('ti\'tle\\q "x"\n<img src=x>', 3, ["GloVe"])
    >>> yaml.safe_load(readme.split("---")[1])["title"]
    'ti\'tle\\q "x" <img src=x>'
    >>> "<img" in readme.split("---", 2)[2]
    False
    """
    import yaml

    safe = " ".join(title.split())[:60] or "Corpus map"
    what = []
    if models:
        what.append(f"A map of {sentences:,} sentences under {_markdown(', '.join(models))}: hover a point to read "
                    "it, lasso a group, compare how the models group the same sentences, search by meaning.")
    if talk:
        what.append("The talk (`talk/`): why siamese sentence embeddings beat naive ones, in eight steps; → and ← "
                    "move, F fills the screen, Q shows the page's QR code.")
    front = {"title": safe, "emoji": "🧭", "colorFrom": "indigo", "colorTo": "green", "sdk": "static",
             "app_file": "index.html", "pinned": False, "custom_headers": ISOLATION_HEADERS}
    return ("---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=10_000) + "---\n\n"
            f"# {_markdown(safe)}\n\n"
            + " ".join(what) + " Published by sbert-demo (`python -m sbert_demo publish`); everything runs in the "
            "browser from this folder.\n")


def _markdown(value: str) -> str:
    """Text shown as itself in Markdown: its markup characters escaped, HTML's as entities."""
    escaped = "".join("\\" + c if c in "\\`*_{}[]()#+-.!|~" else c for c in value)
    return _text(escaped)


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
