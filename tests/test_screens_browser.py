"""The page fits the screens it is shown on, measured in headless Chromium (issue 22).

* phones (390x844 and 360x800, touch): every tab one tap away (no hidden menu), nothing wider than
  the screen on any tab, text at 16 px or more;
* a laptop (1366x768): each tab's main button inside the first screen, a finished run's result
  scrolled into view, one error display per failure, no table cell that breaks a number or a
  heading inside a word.

The presenter view's fit at projector sizes is measured in ``test_why_browser.py``, where its seven
computed steps run, and in ``test_audience_browser.py`` (step 8, the room's board). Screenshots: ``test-artifacts/screen-*.png``.
"""

from __future__ import annotations

import json

import pytest
from test_browser import ARTIFACTS, capture, choose_models

pytestmark = pytest.mark.browser

PHONES = [(390, 844), (360, 800)]
LAPTOP = (1366, 768)
TABS = ["Explore", "STS benchmark", "Why naive fails", "Train", "Models", "Talk", "Audience"]
# tab, the part of it to open (or None), its main button (the Models tab: its table)
MAIN_BUTTONS = [("Explore", None, "#explore-run"), ("STS benchmark", None, "#sts-run"),
                ("STS benchmark", "Table 1: seven STS sets", "#table1-run"),
                ("STS benchmark", "The cost: cross- vs bi-encoder", "#cost-run"),
                ("Why naive fails", None, "#why-explain"), ("Train", None, "#train-start"), ("Models", None, "#models-table"),
                ("Talk", None, "#talk-next")]

# Elements whose right edge passes the viewport, except inside a box that scrolls or clips sideways
# (a wide table scrolling in its own box is what a phone should get).
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const clipped = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const x = getComputedStyle(p).overflowX;
      if (x === "auto" || x === "scroll" || x === "hidden" || x === "clip") {
        if (p.getBoundingClientRect().right <= width + 1) { return true; }
      }
    }
    return false;
  };
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.offsetParent === null && getComputedStyle(el).position !== "fixed") { continue; }
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) { continue; }
    if (r.right > width + 1 && !clipped(el)) {
      out.push(`${el.tagName.toLowerCase()}#${el.id}.${String(el.className).slice(0, 40)} right=${Math.round(r.right)}`);
    }
  }
  return {scroll: document.documentElement.scrollWidth, width: width, out: out.slice(0, 8)};
}"""

# Numbers and single words in table cells that the browser laid out on more than one line, or cut
# short (a cell's text wider than the cell). Returns [cells looked at, [the broken ones]].
BROKEN_CELLS = """(selector) => {
  const cells = [...document.querySelectorAll(selector)].filter((cell) => cell.offsetParent !== null);
  const broken = [];
  for (const cell of cells) {
    const text = cell.innerText.trim();
    // one word or number only; paths and long keys may end in "…" (their cell's title shows them whole)
    if (!text || text.includes(" ") || text.includes("\\n") || text.length > 24) { continue; }
    const lines = new Set();  // the line boxes of the cell's text
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) { continue; }
      const range = document.createRange();
      range.selectNodeContents(node);
      [...range.getClientRects()].filter((r) => r.width > 0).forEach((r) => lines.add(Math.round(r.top)));
    }
    const span = cell.querySelector("span") || cell;
    if (lines.size > 1 || span.scrollWidth > span.clientWidth + 1) { broken.push(text); }
  }
  return [cells.length, broken];
}"""
CELLS = "{0} .body-cell, {0} .header-cell"
# A bar chart's category labels as drawn, and each bar's number with whether it lies inside the figure.
BAR_LABELS = """(selector) => {
  const gd = document.querySelector(`${selector} .js-plotly-plot`), box = gd.getBoundingClientRect();
  return {ticks: [...gd.querySelectorAll(".ytick text")].map((t) => t.textContent),
          numbers: [...gd.querySelectorAll(".bartext")].map((t) => {
            const r = t.getBoundingClientRect();
            return [t.textContent, r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1];
          })};
}"""


def _open(browser, url: str, size: tuple[int, int], phone: bool = False):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=phone, is_mobile=phone)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url)
    page.wait_for_selector("#explore-run", state="attached")
    page.wait_for_function("document.documentElement.dataset.linked === 'yes'")  # the pickers refreshed on load
    page.wait_for_timeout(300)
    return context, page


def _tab(page, name: str):
    return page.locator("#main-tabs > .tab-wrapper").get_by_role("tab", name=name, exact=True)


@pytest.mark.parametrize("size", PHONES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_on_a_phone_every_tab_is_one_tap_away_and_nothing_is_wider_than_the_screen(browser, app_url, size) -> None:
    context, page = _open(browser, app_url, size, phone=True)
    for name in TABS:
        tab = _tab(page, name)
        assert tab.is_visible(), f"the {name} tab is hidden (behind a menu?)"
        box = tab.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= size[0] + 1, (name, box)
        tab.tap()
        page.wait_for_timeout(600)
        found = page.evaluate(OVERFLOWING)
        assert found["scroll"] <= found["width"] and not found["out"], (name, found)
        capture(page, ARTIFACTS / f"screen-phone-{size[0]}-{name.split()[0].lower()}.png")
    # Text people read is at least 16 px; the header does not wrap a word per line.
    _tab(page, "Explore").tap()
    sizes = page.evaluate("""() => ['.tab-intro p', '#explore-text textarea', '.app-header p']
        .map((s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize))""")
    assert min(sizes) >= 16, sizes
    title = page.locator(".app-header h1").bounding_box()
    assert title["height"] <= 3 * 32, title  # at most three lines
    context.close()


@pytest.mark.slow  # ~27 s: every tab's main action
def test_on_a_laptop_each_main_button_is_in_the_first_screen(browser, app_url) -> None:
    context, page = _open(browser, app_url, LAPTOP)
    below = []
    for tab, part, button in MAIN_BUTTONS:
        _tab(page, tab).click()
        if part:
            page.get_by_role("tab", name=part, exact=True).click()
        page.wait_for_selector(button, state="visible")
        page.evaluate("window.scrollTo(0, 0)")
        box = page.locator(button).bounding_box()
        if not (box["y"] >= 0 and box["y"] + min(box["height"], 60) <= LAPTOP[1]):  # a table: its top rows
            below.append((button, round(box["y"])))
    assert below == [], below
    context.close()


def test_a_finished_run_scrolls_its_result_into_view_and_a_failure_shows_once(browser, app_url) -> None:
    context, page = _open(browser, app_url, LAPTOP)
    choose_models(page, "#explore-models", ("glove-6b-50d",))
    page.click("#explore-run")
    page.wait_for_function("document.querySelectorAll('#explore-summary tbody tr').length === 1")
    page.wait_for_timeout(1500)  # the smooth scroll
    top = page.locator("#explore-summary").bounding_box()["y"]
    assert 0 <= top <= LAPTOP[1] * 0.75, top
    capture(page, ARTIFACTS / "screen-laptop-explore-result.png")
    # A failure: one sentence in the page, no toast beside it.
    page.evaluate("window.scrollTo(0, 0)")
    page.fill("#explore-text textarea", "")
    page.click("#explore-run")
    page.wait_for_function("document.querySelector('#explore-progress').innerText.includes('Failed')")
    page.wait_for_timeout(1000)
    assert page.locator(".toast-body").count() == 0
    context.close()


@pytest.mark.parametrize("size", [PHONES[0], pytest.param(LAPTOP, marks=pytest.mark.slow)], ids=["phone", "laptop"])
def test_no_table_cell_breaks_a_number_or_a_word(browser, app_url, size) -> None:
    phone = size[0] < 640
    context, page = _open(browser, app_url, size, phone=phone)
    press = (lambda locator: locator.tap()) if phone else (lambda locator: locator.click())
    press(_tab(page, "STS benchmark"))
    choose_models(page, "#sts-models", ("glove-6b-50d", "all-MiniLM-L6-v2"))
    press(page.locator("#sts-run"))
    shown = "#sts-cards" if phone else "#sts-table"  # a phone: the results as cards, the wide table hidden
    page.wait_for_function(f"document.querySelector('{shown}').innerText.includes('MiniLM')", timeout=240_000)
    page.wait_for_timeout(800)
    if phone:  # every number on screen beside its column's name (not a table scrolled sideways)
        assert page.locator("#sts-cards tbody tr").count() == 2
        assert not page.locator("#sts-table").is_visible()
        looked_at, broken, names = page.evaluate(CARD_CELLS, "#sts-cards td")
        assert looked_at >= 2 * 8 and broken == [], (looked_at, broken)  # an empty note has no line
        assert names[:3] == ['"family"', '"Spearman x100"', '"Pearson x100"'], names
        spearman = page.eval_on_selector_all("#sts-cards td:nth-child(3)", "cells => cells.map((c) => c.innerText)")
        assert len(spearman) == 2 and all(text.replace(".", "").isdigit() for text in spearman), spearman
        # the bars lie flat: each model's name whole on its left, each number at its bar's end inside the figure
        page.wait_for_timeout(500)  # the page fits a narrow figure once it is drawn
        bars = page.evaluate(BAR_LABELS, "#sts-bars")
        assert len(bars["numbers"]) == 2 and all(inside for _, inside in bars["numbers"]), bars
        assert sorted(text for text, _ in bars["numbers"]) == sorted(f"{float(v):.1f}" for v in spearman), bars
        assert not any("…" in tick for tick in bars["ticks"]) and any("MiniLM-L6-v2" in t for t in bars["ticks"]), bars
    else:
        assert not page.locator("#sts-cards").is_visible()
        looked_at, broken = page.evaluate(BROKEN_CELLS, CELLS.format("#sts-table"))
        assert looked_at >= 2 * 9 and broken == [], (looked_at, broken)  # headers and two rows at least
    capture(page, ARTIFACTS / f"screen-{size[0]}-sts-table.png", full_page=True)
    press(_tab(page, "Models"))
    shown = "#models-cards" if phone else "#models-table"  # a phone: the registry as cards, the table hidden
    page.wait_for_function(f"document.querySelector('{shown}').innerText.includes('glove-6b-50d')")
    if phone:
        looked_at, broken, _ = page.evaluate(CARD_CELLS, "#models-cards td")
    else:
        looked_at, broken = page.evaluate(BROKEN_CELLS, CELLS.format("#models-table"))
    assert looked_at >= 14 and broken == [], (looked_at, broken)
    context.close()


# Cells of a result table that a phone does not show whole without scrolling sideways: outside the screen,
# text cut in its cell, or parts of it drawn over each other. Returns [cells looked at, [the bad ones], the column names the cells show].
CARD_CELLS = """(selector) => {
  const width = document.documentElement.clientWidth;
  const cells = [...document.querySelectorAll(selector)].filter((cell) => cell.offsetParent !== null);
  const bad = [];
  for (const cell of cells) {
    const r = cell.getBoundingClientRect();
    if (r.left < -1 || r.right > width + 1 || cell.scrollWidth > cell.clientWidth + 1) {
      bad.push(`${cell.innerText.trim().slice(0, 30)} [${Math.round(r.left)}, ${Math.round(r.right)}]`);
    }
    for (const child of cell.children) {  // a number squeezed out of its own box
      if (child.scrollWidth > child.clientWidth + 1) bad.push(`${child.innerText.trim().slice(0, 30)}: cut`);
    }
    const parts = [...cell.children].map((child) => child.getBoundingClientRect()).filter((b) => b.width > 0);
    parts.forEach((a, i) => parts.slice(i + 1).forEach((b) => {  // a number and its bar side by side, not on top
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) {
        bad.push(`${cell.innerText.trim().slice(0, 30)}: its parts overlap`);
      }
    }));
  }
  const names = cells.map((cell) => getComputedStyle(cell, "::before").content).filter((c) => c && c !== "none");
  return [cells.length, bad, names];
}"""


def test_on_a_phone_result_tables_are_cards_with_every_column_on_screen(browser, app_url) -> None:
    """Explore's summary and the Why tab's token pairs at 390x844: each row a card, every cell inside the
    screen with its column's name beside it (they were tables scrolled sideways, the numbers off screen)."""
    size = PHONES[0]
    context, page = _open(browser, app_url, size, phone=True)
    choose_models(page, "#explore-models", ("glove-6b-50d",))
    page.locator("#explore-run").tap()
    page.wait_for_function("document.querySelectorAll('#explore-summary tbody tr').length === 1")
    looked_at, bad, names = page.evaluate(CARD_CELLS, "#explore-summary td")
    assert looked_at == 7 and bad == [], (looked_at, bad)
    assert names[:3] == ['"Mean cosine, all pairs"', '"Within groups"', '"Between groups"'], names
    page.locator("#explore-summary").scroll_into_view_if_needed()
    capture(page, ARTIFACTS / "screen-phone-390-explore-summary.png")
    _tab(page, "Why naive fails").tap()
    choose_models(page, "#why-models", ("glove-6b-50d",))
    page.locator("#why-explain").tap()
    page.wait_for_function("document.querySelectorAll('#why-explain-summary .top-pairs tbody tr').length >= 3")
    looked_at, bad, names = page.evaluate(CARD_CELLS, "#why-explain-summary .top-pairs td")
    assert looked_at >= 12 and bad == [], (looked_at, bad)
    assert '"contribution"' in names and '"of the cosine"' in names, names
    contributions = page.eval_on_selector_all("#why-explain-summary .top-pairs td:nth-child(3)",
                                              "cells => cells.map((c) => c.innerText.trim())")
    assert all(len(text) == 7 and text[0] in "+-" for text in contributions), contributions  # "+0.1234", whole
    page.locator("#why-explain-summary").scroll_into_view_if_needed()
    capture(page, ARTIFACTS / "screen-phone-390-why-pairs.png")
    _tab(page, "Models").tap()  # the registry: a card a model, its long reasons and paths inside the screen
    page.wait_for_function("document.querySelectorAll('#models-cards tbody tr').length >= 10")
    looked_at, bad, names = page.evaluate(CARD_CELLS, "#models-cards td")
    assert looked_at >= 60 and bad == [], (looked_at, bad)
    assert '"loads from / why not"' in names and '"runs here on"' in names, names
    assert not page.locator("#models-table").is_visible()
    page.locator("#models-cards").scroll_into_view_if_needed()
    capture(page, ARTIFACTS / "screen-phone-390-models.png")
    context.close()


def _cost_curve(slowest_s: float, per_second: float) -> dict:
    """A cost report's curve: a cross-encoder that would take ``slowest_s`` for 100,000 sentences, a bi-encoder
    embedding ``per_second`` sentences a second, a query retrieved and re-ranked."""
    import numpy as np

    sizes = np.logspace(2, 5, 30)
    return {"n": sizes.tolist(), "cross_encoder": (slowest_s * (sizes / sizes[-1]) ** 2).tolist(),
            "bi_encoder": (sizes / per_second).tolist(), "retrieve_rerank": (0.01 + sizes / 1e7).tolist()}


def _cost_step(slowest_s: float, per_second: float, layout: str):
    """The talk's step 6 as :mod:`sbert_demo.talk.slides` draws it, from a cost report with :func:`_cost_curve`'s
    rates, measured at 2,000 sentences."""
    from sbert_demo.talk import slides

    curve = _cost_curve(slowest_s, per_second)

    class Report:  # what the talk's cost step reads of a cost report
        n, cpu, ratio = 2_000, "AMD EPYC (AVX-512, 2 cores)", 1_080.0
        cross_encoder = {"extrapolated_s": slowest_s * 4e-4}
        bi_encoder = {"total_s": 2_000 / per_second}
        rerank = {"retrieve_s": 0.01, "rerank_s": 0.2}

        @staticmethod
        def curve():
            return curve

    return slides._cost(Report(), layout).left


@pytest.fixture(scope="module")
def plotly_page(browser):
    """One page with plotly.js loaded, where the figure tests below draw one figure after another."""
    from pathlib import Path

    import plotly

    plotly_js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_content(f"<div id='talk-left'><div id='figure'></div></div><script>{plotly_js}</script>")
    yield page
    context.close()


def _draw(page, figure, width: int, height: int):
    """``figure`` drawn by plotly.js at a ``width`` x ``height`` screen, in a column as wide as the talk's."""
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate("""([f, width]) => {
        document.getElementById('talk-left').style.width = width + 'px';
        Plotly.purge('figure');
        return Plotly.newPlot('figure', f.data, f.layout);
    }""", [json.loads(figure.to_json()), width - 40])
    return page


@pytest.mark.parametrize("slowest_s", [1e7, 3e7, 1e8, 1e9])
def test_the_talks_cost_step_keeps_its_subtitle_clear_of_the_top_tick_at_any_measured_rate(plotly_page, slowest_s) -> None:
    """The talk's step 6 (the cost argument) on a projector and a laptop: its y axis follows the rates this
    machine measured, and where they put a tick at the plot's top edge its label ("10^8") ran into the
    subtitle in large type. Drawn by plotly.js with every range the rates may give, nothing overlaps."""
    from pathlib import Path

    from sbert_demo.talk import slides

    figure = _cost_step(slowest_s, 300, slides.SCREEN)
    probe = (Path(__file__).parent / "browser_assets" / "text_problems.js").read_text(encoding="utf-8")
    for width, height in ((1366, 768), (1280, 720)):
        page = _draw(plotly_page, figure, width, height)
        assert page.evaluate("document.querySelectorAll('#figure .ytick').length") >= 3
        assert page.evaluate(probe) == [], (width, slowest_s)


# The text labels of the plot's markers that a line runs through, or that the figure cuts off; every x tick's label.
LABELS_AND_LINES = """() => {
    const plot = document.querySelector('#figure .main-svg').getBoundingClientRect();
    const lines = [...document.querySelectorAll('#figure .scatterlayer .trace path.js-line')];
    const crossed = [], cut = [];
    for (const text of document.querySelectorAll('#figure .scatterlayer .trace .textpoint text')) {
        const box = text.getBoundingClientRect();
        if (box.left < plot.left - 1 || box.right > plot.right + 1 || box.top < plot.top - 1 || box.bottom > plot.bottom + 1)
            cut.push(text.textContent);
        for (const line of lines) {
            const m = line.getScreenCTM(), length = line.getTotalLength();
            for (let s = 0; s <= length; s += 1) {
                const p = line.getPointAtLength(s);
                const x = m.a * p.x + m.c * p.y + m.e, y = m.b * p.x + m.d * p.y + m.f;
                if (x > box.left && x < box.right && y > box.top && y < box.bottom) {
                    crossed.push(text.textContent + ' / ' + line.style.stroke);
                    break;
                }
            }
        }
    }
    const ticks = [...document.querySelectorAll('#figure .xtick text')].filter(t => t.getBoundingClientRect().width > 0)
        .map(t => t.textContent);
    return {crossed, cut, ticks};
}"""


@pytest.mark.parametrize("per_second", [60, 1_000, 8_000])  # a slow CPU, this one, a GPU
@pytest.mark.parametrize("slowest_s", [3e7, 1e9])
def test_the_talks_cost_step_labels_the_papers_times_clear_of_the_lines_on_every_screen(plotly_page, slowest_s,
                                                                                        per_second) -> None:
    """Step 6's two crosses, the SBERT paper's 65 h and 5 s on a V100, carry their labels beside them where no line
    runs (they were written over the cross-encoder's and the bi-encoder's lines: which side is free depends on the
    rates measured), inside the plot; on a phone, where no side is wide enough, the legend names them. The x axis
    labels every decade up to 100,000 (a phone cut its last label off), and no text overlaps (on a phone the top
    tick's label reached into the title)."""
    from pathlib import Path

    from sbert_demo.talk import slides

    probe = (Path(__file__).parent / "browser_assets" / "text_problems.js").read_text(encoding="utf-8")
    for layout, (width, height) in ((slides.SCREEN, (1366, 768)), (slides.SCREEN, (1280, 720)),
                                    (slides.PHONE, (390, 844))):
        page = _draw(plotly_page, _cost_step(slowest_s, per_second, layout), width, height)
        found = page.evaluate(LABELS_AND_LINES)
        assert found["crossed"] == [] and found["cut"] == [], (layout, width, found)
        assert found["ticks"] == ["100", "1,000", "10,000", "100,000"], (layout, width, found)
        assert page.evaluate(probe) == [], (layout, width)
        legend = page.evaluate("[...document.querySelectorAll('#figure .legendtext')].map(t => t.textContent).join(' ')")
        if layout == slides.PHONE:
            assert page.evaluate("document.querySelectorAll('#figure .textpoint text').length") == 0
            assert "SBERT paper on a V100" in legend and "65 h" in legend and "5 s" in legend, legend
        else:
            assert page.evaluate("document.querySelectorAll('#figure .textpoint text').length") == 2


@pytest.mark.parametrize("per_second", [60, 1_000, 8_000])
@pytest.mark.parametrize("width", [1366, 390, 360])
def test_the_cost_tabs_plot_labels_the_papers_times_clear_of_the_lines_and_inside_the_figure(plotly_page, width,
                                                                                             per_second) -> None:
    """The Cost tab draws the same plot (benchmark.plots.cost_plot) at a laptop's and two phones' widths: the paper's
    labels beside their crosses on the side no line runs, whole on a phone too (the right-hand side reaches into
    the margin). (The page's own script wraps a narrow figure's legend, which this plot alone leaves wide.)"""
    from pathlib import Path

    from sbert_demo.benchmark.cost import PAPER as COST_PAPER
    from sbert_demo.benchmark.plots import cost_plot

    curve = _cost_curve(3e7, per_second)
    measured = {"cross_encoder": 3e7 * 4e-4, "bi_encoder": 2_000 / per_second, "retrieve_rerank": 0.2}
    figure = cost_plot(curve, 2_000, measured, COST_PAPER, "AMD EPYC (AVX-512, 2 cores)")
    probe = (Path(__file__).parent / "browser_assets" / "text_problems.js").read_text(encoding="utf-8")
    page = _draw(plotly_page, figure, width, 844)
    found = page.evaluate(LABELS_AND_LINES)
    assert found["crossed"] == [] and found["cut"] == [] and len(found["ticks"]) == 4, found
    assert page.evaluate("document.querySelectorAll('#figure .textpoint text').length") == 2
    if width > 640:
        assert page.evaluate(probe) == []
