"""One user's whole visit, in headless Chromium against ``python app.py`` with the real offline
models and data: load an example set, compare three models, switch the map to automatic clusters,
run the STS comparison, train a siamese GloVe model, find it in the Explore tab's model list and
use it. Asserts on what the page shows; screenshots go to ``test-artifacts/journey-*.png``.
"""

from __future__ import annotations

import re

import pytest

from sbert_demo.config import reload_settings
from test_browser import (
    THREE,
    VIEWPORT,
    choose_models,
    gaps,
    plot_traces,
    run_explore,
    shoot,
)

pytestmark = pytest.mark.browser

TRAINED = "journey-glove"


def gap_of(found: dict[str, float], name: str) -> float:
    """The within-minus-between gap of the summary row whose label contains ``name``."""
    return next(value for label, value in found.items() if name in label)


@pytest.mark.slow  # ~85 s: the app started and every tab used in order
def test_a_whole_visit(browser, real_app, monkeypatch: pytest.MonkeyPatch) -> None:
    url, models_dir = real_app.url, real_app.models_dir  # the run's app on the real models (tests/conftest.py)
    monkeypatch.setenv("SBERT_DEMO_MODELS", str(models_dir))  # so this process's registry sees what the app trains
    reload_settings()
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(url)
    page.wait_for_selector("#explore-run")

    # Explore: the paraphrase set with GloVe, MiniLM and mpnet, side by side.
    run_explore(page, THREE, timeout_s=300)
    assert plot_traces(page, ".heatmap") == [1, 1, 1]
    assert plot_traces(page, ".map") == [6, 6, 6]  # coloured by the six given groups
    gap = gaps(page)
    glove_gap = gap_of(gap, "GloVe")
    assert gap_of(gap, "MiniLM") > glove_gap + 0.2, gap
    assert gap_of(gap, "mpnet") > glove_gap + 0.2, gap
    shoot(page, "journey-1-explore.png")

    # The map, recoloured by automatic clusters: the siamese models find the six groups.
    page.get_by_label("automatic clusters").check()
    page.wait_for_function("[...document.querySelectorAll('.map-caption')].some(c => /k-means found/.test(c.innerText))")
    captions = page.locator(".map-caption").all_inner_texts()
    assert any("ARI 1.00" in c for c in captions), captions
    shoot(page, "journey-2-map-clusters.png")

    # STS benchmark, dev split: GloVe and MiniLM reproduce the reference numbers.
    page.get_by_role("tab", name="STS benchmark").click()
    choose_models(page, "#sts-models", THREE[:2])
    page.click("#sts-run")
    page.wait_for_function("document.querySelectorAll('.sts-scatter .js-plotly-plot').length === 2 && "
                           "document.querySelector('#sts-table').innerText.includes('MiniLM')", timeout=300_000)
    cells = [line.strip() for line in page.inner_text("#sts-table").splitlines() if line.strip()]
    glove = cells.index("GloVe average (6B, 50d)")
    minilm = cells.index("SBERT all-MiniLM-L6-v2")
    assert cells[glove + 1:glove + 3] == ["naive", "65.52"], cells  # model, family, Spearman x100
    assert cells[minilm + 1] == "siamese", cells
    assert float(cells[minilm + 2]) == pytest.approx(86.72, abs=0.05), cells  # exact in fp32; bf16 within 0.05
    assert plot_traces(page, "#sts-bars")[0] >= 1
    shoot(page, "journey-3-sts.png")

    # Train: siamese GloVe with the NLI softmax objective on 20,000 pairs.
    page.get_by_role("tab", name="Train").click()
    page.wait_for_selector("#train-start")
    page.fill("#train-max-pairs input", "20000")
    page.fill("#train-output input", TRAINED)
    page.click("#train-start")
    page.wait_for_function("/Finished/.test(document.querySelector('#train-status').innerText)", timeout=300_000)
    results = page.locator("#train-results").inner_text()
    test_row = next(line for line in results.splitlines() if line.startswith("STSb test"))
    before, after = (float(x) for x in re.findall(r"\d+\.\d+", test_row)[:2])
    assert before == pytest.approx(55.60, abs=0.01)
    assert after > before
    assert plot_traces(page, "#train-curves")[0] == 2  # loss and dev Spearman
    shoot(page, "journey-4-trained.png")

    # The new model is in the Explore tab's list and works there.
    page.get_by_role("tab", name="Explore").click()
    page.locator("#explore-models input").click()
    option = page.get_by_role("option", name=re.compile(rf"^{TRAINED} .*· trained here$"))  # not its fixes
    option.wait_for()
    option.click()
    page.keyboard.press("Escape")
    choose_models(page, "#explore-models", ("all-MiniLM-L6-v2", TRAINED))
    page.click("#explore-run")
    page.wait_for_function(f"[...document.querySelectorAll('#explore-summary tbody tr')].some(r => r.innerText.includes('{TRAINED}'))")
    assert gap_of(gaps(page), TRAINED) == gap_of(gaps(page), TRAINED)  # a number, not a failed column
    shoot(page, "journey-5-explore-trained.png")
    context.close()
