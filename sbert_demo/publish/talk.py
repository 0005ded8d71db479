"""The talk as static pages: the presenter view's eight steps in a published folder, with no server behind it.

:func:`publish_talk` writes ``talk/`` into a published folder::

    talk/index.html  talk.js  talk.css     the presenter page (keys → / ← / Q / F, the step in the address)
    talk/steps.json                        each step's title and caption (the story's, :mod:`sbert_demo.talk.story`)
    talk/steps/<n>-screen.json             step n's figures for a projector or laptop (plotly JSON), its note
    talk/steps/<n>-phone.json              and table: the same slides the app draws (:mod:`sbert_demo.talk.slides`)
    vendor/plotly.min.js  vendor/qrcode*.js   drawing the figures; the QR code of the page's own address

The figures are computed here, once: the steps this machine kept (``python -m sbert_demo prepare``), the rest
computed now, and step 7 the talk's kept training run (trained now if none was kept). Step 8, the room's
board, needs the app: the page says so and links to the app's presenter view at that step when ``app_url``
is given.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

Progress = Callable[[float, str], None]
ASSETS = Path(__file__).resolve().parent / "assets"  # the talk page's own files
PAGE_FILES = ("talk_site.js", "talk_site.css")
# The QR code generator's scripts in the talk's page, left out where it was not vendored (no npm).
QR_SCRIPTS = ('<script src="../vendor/qrcode.js"></script>\n', '<script src="../vendor/qrcode_UTF8.js"></script>\n')
# The room's step without the app: no board to send to, so the caption says what the step does in the app.
ROOM_CAPTION = ("In the app, the room sends its own sentences from their phones and sees them mapped live: averaged "
                "GloVe left, SBERT right, the same words in two maps.")


def publish_talk(site: Path, *, app_url: str | None = None, with_map: bool = True,
                 progress: Progress | None = None, site_url: str | None = None,
                 skipped: Callable[[str], None] | None = None) -> int:
    """Write the talk into ``site/talk/`` (and its scripts into ``site/vendor/``); the number of its steps (each
    drawn as figures, but the room's, which needs the app and says so).
    A ValueError, in a sentence, when a step cannot be computed here."""
    from ..talk import slides, training
    from ..talk.rehearsal import rehearsal
    from ..talk.story import ROOM_STEP, STEPS, TRAINING_STEP
    from .vendor import plotly_js

    say = progress or (lambda fraction, what: None)
    problems = rehearsal().rehearse(progress=lambda f, what: say(0.9 * f, what))
    if problems:
        raise ValueError("The talk could not be computed here: " + " ".join(problems))
    folder = site / "talk"
    (folder / "steps").mkdir(parents=True)
    say(0.9, "drawing the slides")
    drawn = 0
    for step in range(len(STEPS)):
        if step == ROOM_STEP:
            continue
        run = training.current() if step == TRAINING_STEP else None
        if step == TRAINING_STEP and (run is None or not run.finished):
            raise ValueError("The talk's training run (step 7) did not finish here; train it again with "
                             "python -m sbert_demo prepare.")
        for layout in slides.LAYOUTS:
            shown = (slides.training_slide(run, layout) if run is not None
                     else slides.slide(step, rehearsal().result(step), layout))
            figures = [json.loads(figure.to_json()) for figure in (shown.left, shown.right) if figure is not None]
            table = {"headers": list(shown.table[0]), "rows": [list(row) for row in shown.table[1]]} if shown.table else None
            (folder / "steps" / f"{step + 1}-{layout}.json").write_text(
                json.dumps({"figures": figures, "note": shown.note, "table": table}, ensure_ascii=False),
                encoding="utf-8")
        drawn += 1
    qr = _qr_code(site, folder, site_url, say, skipped or (lambda why: None))
    story = {"steps": [{"name": s.name, "caption": ROOM_CAPTION if s.room else s.caption, "room": s.room} for s in STEPS],
             "app": _talk_address(app_url, ROOM_STEP) if app_url else None, "qr": qr}
    (folder / "steps.json").write_text(json.dumps(story, ensure_ascii=False), encoding="utf-8")
    page = (ASSETS / "talk_site.html").read_text(encoding="utf-8")
    if qr != "page":  # no QR code generator vendored: the page does not ask for its scripts
        page = _without(page, QR_SCRIPTS)
    if not with_map:  # the folder's front page is the talk itself
        page = page.replace('<a class="home" href="../index.html" id="home" title="The published corpus map">SBERT demo</a>',
                            '<span class="home">SBERT demo</span>')
    (folder / "index.html").write_text(page, encoding="utf-8")
    for name in PAGE_FILES:
        shutil.copyfile(ASSETS / name, folder / name)
    plotly_js(site / "vendor")
    say(1.0, f"the talk written: {len(STEPS)} steps, {drawn} of them drawn as figures")
    return len(STEPS)


def _talk_address(app_url: str, step: int) -> str:
    """The app's presenter view at ``step`` (0-based), from the app's (checked) address."""
    from urllib import parse

    parts = parse.urlsplit(app_url)
    return parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", f"view=talk&step={step + 1}", ""))


def _qr_code(site: Path, folder: Path, site_url: str | None, say: Progress, skipped: Callable[[str], None]) -> str | None:
    """How the talk's page draws its QR code: "page" (qrcode-generator from npm, vendored: the page's own address at
    view time), "qr.svg" (drawn here by segno, of ``site_url``'s talk, where npm cannot give the generator), or
    None (the page shows its address as text), with a sentence for ``skipped`` then."""
    from ..audience.qr import qr_svg
    from ..config import settings
    from .vendor import QRCODE, copy_into

    try:
        copy_into(QRCODE, settings(), site / "vendor", lambda what: say(0.95, what))
        return "page"
    except ValueError as exc:
        if site_url:
            (folder / "qr.svg").write_text(qr_svg(site_url.rstrip("/") + "/talk/"), encoding="utf-8")
            return "qr.svg"
        skipped(f"The talk's QR code shows as its address: {exc} Or give --site-url, the address the folder will "
                "be served from, and the code is drawn here.")
        return None


def _without(page: str, lines: tuple[str, ...]) -> str:
    """``page`` without each of ``lines`` (each must be there once: a page changed without this is said)."""
    for line in lines:
        if page.count(line) != 1:
            raise ValueError(f"The talk's page no longer holds {line.strip()!r}; publish cannot leave it out.")
        page = page.replace(line, "")
    return page
