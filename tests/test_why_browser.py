"""The Why tab in headless Chromium, on the shipped data, with a GloVe model trained by the CLI.

Each view is driven as a user would: explain a pair (GloVe, GloVe whitened, MiniLM), measure the
cone (GloVe, GloVe whitened, MiniLM), compare the trained model with its base; plus the STS tab with
the training-free fixes as rows, and hostile input in the pair boxes. Screenshots:
``test-artifacts/why-*.png`` (look at them).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import REPO, choose_models, free_port, open_page, plot_traces, serve, server_state, shoot

from sbert_demo.explore.prepare import PREPARED_PARTS, link_prepared

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # ~270 s: an app with a model trained for it

TRIO = ("glove-6b-50d", "glove-6b-50d+whiten", "all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def why_app(tmp_path_factory: pytest.TempPathFactory, shipped_data: Path, prepared_cache: Path) -> Iterator[str]:
    root = tmp_path_factory.mktemp("why-app")
    # the run's prepared machine (runtimes, artefacts, UMAP); the fitted fixes computed here (the talk's cold start
    # from this folder: tests/test_talk_browser.py)
    link_prepared(root / "cache", prepared_cache, [part for part in PREPARED_PARTS if part != "fixes"])
    env = {**os.environ, "SBERT_DEMO_DATA": str(shipped_data), "SBERT_DEMO_CACHE": str(root / "cache"),
           "SBERT_DEMO_MODELS": str(root / "models"), "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(root / "hf"),
           "GRADIO_ANALYTICS_ENABLED": "False"}
    for name in ("SBERT_DEMO_PRECISION", "SBERT_DEMO_FIT_SENTENCES", "GRADIO_SERVER_PORT"):
        env.pop(name, None)
    trained = subprocess.run([sys.executable, "-m", "sbert_demo", "train", "--base", "glove-6b-50d", "--objective",
                              "nli-softmax", "--output", "glove-nli"], cwd=REPO, env=env, capture_output=True,
                             text=True, timeout=600)
    assert trained.returncode == 0, trained.stderr[-2000:]
    yield from serve(env, ["--port", str(free_port())], "server-why.log")


@pytest.fixture
def why_page(browser, why_app: str):
    context, page = open_page(browser, why_app, timeout_ms=240_000)
    page.get_by_role("tab", name="Why naive fails").click()
    page.wait_for_timeout(1500)  # the pickers refresh when a tab is shown; let that land before choosing
    yield page
    context.close()


def test_explain_a_pair(why_page) -> None:
    page = why_page
    choose_models(page, "#why-models", ("glove-6b-50d", "all-MiniLM-L6-v2"))
    page.locator("#why-models input").click()  # a training-free variant, picked from the list
    page.locator("#why-models input").press_sequentially("whitened")
    page.get_by_role("option", name="GloVe average (6B, 50d) + whitened · training-free fix").click()
    page.wait_for_function("document.querySelectorAll('#why-models .token').length === 3")
    page.click("#why-explain")
    page.wait_for_function("document.querySelectorAll('.why-map .js-plotly-plot').length === 3")
    summary = page.inner_text("#why-explain-summary")
    assert summary.count("mean pooling (exact)") == 3 and "guitar" in summary
    assert "0.913" in summary  # GloVe's cosine for the default pair
    assert plot_traces(page, ".why-map") == [1, 1, 1]
    shoot(page, "why-explain.png")


@pytest.mark.parametrize("a, b, expected", [
    ("", "A sentence.", "Sentence A is empty"),
    ("🎸🎸🎸", "guitar", "knows none of the words"),
    ('<img src=x onerror="window.__xss=1"> guitar', "<b>guitar</b>", "mean pooling (exact)"),
    (" ".join(["word"] * 2000), "A short sentence.", "has 2,000 tokens"),
])
def test_explain_hostile_input(why_page, a: str, b: str, expected: str) -> None:
    page = why_page
    choose_models(page, "#why-models", ("glove-6b-50d", "all-MiniLM-L6-v2"))
    page.locator("#why-a textarea").fill(a)
    page.locator("#why-b textarea").fill(b)
    page.click("#why-explain")
    page.wait_for_function(f"document.body.innerText.includes({expected!r})")
    assert "Traceback" not in page.inner_text("body")
    assert page.evaluate("() => window.__xss === undefined")  # nothing ran
    if a.startswith("<img"):
        page.wait_for_function("document.querySelectorAll('.why-map .js-plotly-plot').length >= 1")
        assert "2. <" in page.inner_text(".why-map")  # MiniLM's first word piece, shown as text
        shoot(page, "why-explain-html.png")
    if a.startswith("word"):
        shoot(page, "why-explain-long.png")


def test_the_cone(why_page) -> None:
    page = why_page
    page.get_by_role("tab", name="The cone (anisotropy)").click()
    choose_models(page, "#why-cone-models", TRIO)
    page.click("#why-cone-run")
    page.wait_for_function("document.querySelectorAll('#why-cone-plot .js-plotly-plot').length === 1")
    summary = page.inner_text("#why-cone-summary")
    assert "0.504" in summary and "0.033" in summary  # GloVe and MiniLM, random STSb-train pairs
    assert plot_traces(page, "#why-cone-plot") == [9]
    shoot(page, "why-cone.png")


def test_before_and_after_training(why_page) -> None:
    page = why_page
    page.get_by_role("tab", name="Before / after training").click()
    page.click("#why-before-after")
    page.wait_for_function("document.querySelectorAll('#why-difference .js-plotly-plot').length === 1")
    summary = page.inner_text("#why-before-after-summary")
    assert "65.52" in summary and "STSb test" in summary  # GloVe's dev score before training, from the card
    shoot(page, "why-before-after.png")


def test_sts_tab_rows_for_training_free_fixes(why_page) -> None:
    page = why_page
    page.get_by_role("tab", name="STS benchmark").click()
    choose_models(page, "#sts-models", ("glove-6b-50d",))
    page.get_by_label("whitened").check()
    page.get_by_label("all-but-the-top 3").check()
    page.get_by_label("STSb test").check()
    page.click("#sts-run")
    try:
        page.wait_for_function("document.querySelector('#sts-table').innerText.includes('whitened') && "
                               "document.querySelectorAll('.sts-scatter .js-plotly-plot').length === 3")
    except Exception:  # what the page and the app were doing, in the failure's message
        pytest.fail(f"The STS run did not finish: {server_state(page, '#sts-status', 'server-why.log')}")
    table = page.inner_text("#sts-table")
    spearman = {label: float(value) for label, value in
                re.findall(r"(GloVe average \(6B, 50d\)[^\n]*)\s+naive\s+(\d+\.\d+)", table)}
    assert list(spearman) == ["GloVe average (6B, 50d)", "GloVe average (6B, 50d) + all-but-the-top 3",
                              "GloVe average (6B, 50d) + whitened"], table  # each fix beside its model
    assert list(spearman.values()) == pytest.approx([55.61, 61.06, 63.70], abs=0.1)
    shoot(page, "why-sts-fixes.png")
