"""The map view (sbert_demo.atlas, sbert_demo.ui.atlas): a map's folder as its writer leaves it, neighbours two
models share (against numpy's exact neighbours of the models' own embeddings), the app serving the folder as
files, and the page in headless Chromium: what it computes from the files (a selection's table, counts, the
word filter in several scripts and emoji, the CSV) against answers computed here, drawn, hovered, lassoed (the
table's count against the points inside the polygon computed here), exported, compared, at a laptop, a
projector and a phone.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from test_browser import capture, free_port

from sbert_demo.atlas import compare
from sbert_demo.atlas.store import Atlas, open_atlas, publish

SENTENCES = ["A cat sleeps on the sofa.", "=HYPERLINK(\"http://x\")", "A kitten naps on a couch.", "Stocks fell sharply.",
             "Markets dropped today.", "A dog barks at the mailman.", "The puppy is barking.", "+1 for the plan"]
N = 600  # sentences the page test maps
TEXT_PROBLEMS = (Path(__file__).parent / "browser_assets" / "text_problems.js").read_text(encoding="utf-8")


def small_atlas() -> Atlas:
    coords = {"a": np.array([[0, 0], [1, 1], [0.1, 0], [5, 5], [5.2, 5], [2, 8], [2.1, 8], [3, 3]], dtype=float),
              "b": np.arange(16, dtype=float).reshape(8, 2)}
    clusters = {"a": np.array([0, 1, 0, 2, 2, 3, 3, 1]), "b": np.array([0, 0, 0, 1, 1, 1, 2, 2])}
    words = {"a": {0: ("cat", "sofa"), 1: ("plan",), 2: ("stocks",), 3: ("dog",)}, "b": {}}
    labels = ["pets", "junk", "pets", "money", "money", "pets", "pets", "junk"]
    return Atlas.of_arrays("tiny", SENTENCES, coords, clusters, words, labels=labels, label_name="topic",
                           models={"a": {"label": "Model A"}, "b": {"label": "Model B"}})


def test_a_maps_folder_holds_what_its_page_reads(monkeypatch) -> None:
    from sbert_demo.atlas import store

    monkeypatch.setattr(store, "CHUNK", 3)  # three sentences a chunk: 8 sentences in 3 files
    atlas = small_atlas()
    data = atlas.data
    assert open_atlas(atlas.id).meta == atlas.meta and atlas.n == 8 and atlas.meta["chunk"] == 3
    xy = atlas.coords(0).reshape(-1, 2)
    assert xy.dtype == np.float32 and xy.min() == -1 and xy.max() == 1  # scaled into [-1, 1], same on both axes
    np.testing.assert_allclose(xy[3], [(5 - 2.6) / 4, (5 - 4) / 4], rtol=1e-6)  # middle (2.6, 4), half the longest side 4
    assert np.fromfile(data / "clusters-1.u16", dtype="<u2").tolist() == [0, 0, 0, 1, 1, 1, 2, 2]
    assert np.fromfile(data / "labels.u16", dtype="<u2").tolist() == [0, 1, 0, 2, 2, 0, 0, 1]
    assert atlas.meta["labels"] == ["pets", "junk", "money"] and atlas.meta["label_name"] == "topic"
    chunks = [json.loads(gzip.decompress((data / "texts" / f"{c}.json.gz").read_bytes())) for c in range(3)]
    assert chunks == [SENTENCES[0:3], SENTENCES[3:6], SENTENCES[6:8]] and atlas.texts() == SENTENCES
    kept = json.loads((data / "csv.json").read_text(encoding="utf-8"))  # what a spreadsheet would run, as text
    assert kept["rows"] == {"1": "'=HYPERLINK(\"http://x\")", "7": "'+1 for the plan"} and kept["label_name"] == "topic"
    model = atlas.models[0]
    assert (model["label"], model["key"], model["k"]) == ("Model A", "a", 4)
    assert {c["cluster"]: (c["words"], c["size"]) for c in model["clusters"]}[0] == (["cat", "sofa"], 2)
    assert not [p for p in atlas.folder.rglob("*") if p.is_file() and data not in p.parents]  # all of it for the page
    again = Atlas.of_arrays("tiny", SENTENCES, {"a": atlas.coords(0).reshape(-1, 2)}, {"a": atlas.clusters(0)})
    assert again.id != atlas.id  # another map of the same sentences is another id


def test_an_unknown_map_says_where_to_make_one() -> None:
    with pytest.raises(ValueError, match="not a map's id"):
        open_atlas("../../etc")
    with pytest.raises(ValueError, match="not on this server"):
        open_atlas("0" * 24)


def test_shared_neighbours_match_numpy_on_the_models_own_embeddings(shipped_sentences) -> None:
    from sbert_demo.encoding.encoder import encode

    sentences = shipped_sentences[0][:400]
    keys = ["glove-6b-50d", "wordllama-l2-256"]
    fake = {key: np.random.default_rng(i).normal(size=(400, 2)) for i, key in enumerate(keys)}
    atlas = Atlas.of_arrays("stsb-400", sentences, fake, {key: np.zeros(400, dtype=int) for key in keys})
    counts = compare.shared(atlas, 1, 0)
    expected = []
    for key in keys:
        unit = encode(key, sentences, use_cache=False, fast=True).embeddings.astype(np.float64)
        unit /= np.linalg.norm(unit, axis=1, keepdims=True)
        scores = unit @ unit.T
        np.fill_diagonal(scores, -np.inf)
        expected.append(np.argsort(-scores, axis=1, kind="stable")[:, :compare.K])
    overlap = np.array([len(set(a) & set(b)) for a, b in zip(*expected)])
    assert (counts == overlap).mean() > 0.97  # ties at the 10th neighbour may fall either way
    assert abs(counts.mean() - overlap.mean()) < 0.05 and 0 < counts.mean() < compare.K
    worst = compare.disagreements(atlas, 0, 1)
    assert [r["shared"] for r in worst["rows"]] == sorted(counts)[:compare.DISAGREE_TOP]
    assert json.loads((atlas.data / "disagree-0-1.json").read_text(encoding="utf-8")) == worst  # for the page
    first = worst["rows"][0]
    assert first["text"] == sentences[first["row"]] and len(first["a"]) == len(first["b"]) == 5
    assert [n["row"] for n in first["a"]] == list(compare.neighbours(atlas, 0)[first["row"], :5])
    with pytest.raises(ValueError, match="two different models"):
        compare.shared(atlas, 1, 1)


def test_a_map_drawn_in_explore_is_compared_from_its_cached_vectors_without_loading_a_model(
        shipped_sentences, monkeypatch) -> None:
    """Explore's map keeps its vectors in the embedding cache: comparing (or publishing) that map reads them there
    and loads no model; the shards hold the map's own vectors. A corpus larger than Explore maps keeps its vectors
    in its shards only (sbert_demo/corpus/embed.py)."""
    from sbert_demo.corpus import embed as embed_module
    from sbert_demo.corpus.sources import LargeCorpus
    from sbert_demo.data.corpora import Corpus
    from sbert_demo.encoding import model_cache
    from sbert_demo.encoding.embedding_cache import embedding_cache
    from sbert_demo.encoding.encoder import encode
    from sbert_demo.explore.corpus_map import map_corpus
    from sbert_demo.models import loading

    sentences, keys = shipped_sentences[0][:400], ["glove-6b-50d", "wordllama-l2-256"]
    atlas = publish(map_corpus(Corpus("stsb-400", sentences, None, "source"), keys, 4))
    drawn = {key: encode(key, sentences, fast=True) for key in keys}  # what the map drew, read back from the cache
    assert all(encoded.computed == 0 for encoded in drawn.values())
    model_cache.model_cache.reset()
    with monkeypatch.context() as patch:
        patch.setattr(loading, "build_model", lambda *a, **k: pytest.fail("comparing Explore's map loaded a model"))
        counts = compare.shared(atlas, 0, 1)
        embedded = [embed_module.embed_corpus(LargeCorpus("stsb-400", sentences, None), key) for key in keys]
    assert counts.shape == (400,) and 0 < counts.mean() < compare.K
    for key, found in zip(keys, embedded):
        assert found.computed == 0 and found.n == 400
        assert np.min(np.sum(found.matrix(np.float32) * drawn[key].embeddings, axis=1)) > 0.999  # fp16 on disk

    monkeypatch.setattr(embed_module, "MAX_CORPUS_SENTENCES", 300)  # now past what Explore maps
    larger = shipped_sentences[0][400:800]
    found = embed_module.embed_corpus(LargeCorpus("stsb-next-400", larger, None), keys[0])
    assert found.computed == 400 and embedding_cache().count_cached(found.fingerprint, larger) == 0


def test_shared_neighbours_say_how_far_they_are_and_how_long_is_left(shipped_sentences, monkeypatch) -> None:
    """Each step's share and time left reach the CLI's progress and the map view's /working answer while the
    computation runs; afterwards nothing is under way."""
    sentences = shipped_sentences[0][:300]
    keys = ["glove-6b-50d", "wordllama-l2-256"]
    fake = {key: np.random.default_rng(i).normal(size=(300, 2)) for i, key in enumerate(keys)}
    atlas = Atlas.of_arrays("stsb-300", sentences, fake, {key: np.zeros(300, dtype=int) for key in keys})
    clock = iter(range(0, 10_000, 3))  # every reading of the clock 3 s later: a slow machine
    monkeypatch.setattr(compare, "clock", lambda: float(next(clock)))
    heard, asked = [], []

    def progress(fraction: float, what: str) -> None:
        heard.append((fraction, what))
        asked.append(compare.progress_of(atlas, 1, 0))  # what the page's poll gets at that moment

    compare.shared(atlas, 0, 1, progress=progress)
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(heard) >= 4
    assert all(what.split(" · ")[-2 if "left" in what else -1].endswith("%") for _, what in heard)
    assert any(what.endswith(" left") and "about" in what for _, what in heard[1:])
    assert all(a is not None and 0 <= a["fraction"] <= 1 for a in asked)
    assert any(a["left"] and a["left"].startswith("about") for a in asked)
    assert compare.progress_of(atlas, 0, 1) is None


def test_map_compare_finds_each_models_neighbours_once_and_a_publish_then_computes_nothing(
        shipped_sentences, tmp_path, monkeypatch, capsys) -> None:
    """``map --compare`` with three models compares every pair (each model's neighbours found once, kept); a
    publish of that map then writes the three comparisons as they are, computing no neighbours."""
    from sbert_demo.cli import main

    corpus = tmp_path / "three.txt"
    corpus.write_text("\n".join(shipped_sentences[0][:20]), encoding="utf-8")  # PCA: no UMAP to compile
    keys = ["glove-6b-50d", "wordllama-l2-256", "all-MiniLM-L6-v2"]
    found, real = [], compare._neighbours

    def counted(atlas, m, *args):
        found.append(m)
        return real(atlas, m, *args)

    monkeypatch.setattr(compare, "_neighbours", counted)
    assert main(["map", "--file", str(corpus), "--models", ",".join(keys), "--k", "4"]) == 0
    made = open_atlas(re.search(r"/atlas/\?map=(\w+)", capsys.readouterr().out).group(1))
    assert not compare.compared(made) and found == []  # without --compare: nothing compared yet
    assert main(["map", "--file", str(corpus), "--models", ",".join(keys), "--k", "4", "--compare"]) == 0
    printed = capsys.readouterr().out
    atlas = open_atlas(re.search(r"/atlas/\?map=(\w+)", printed).group(1))
    assert atlas.id == made.id
    assert sorted(found) == [0, 1, 2] and compare.compared(atlas)  # each model once, every pair kept
    lines = [line for line in printed.splitlines() if "nearest neighbours on average" in line]
    assert len(lines) == 3 and lines[0].startswith("GloVe") and "MiniLM" in lines[2]
    for (a, b), line in zip(compare.pairs(atlas), lines):
        counts = compare.shared(atlas, a, b)
        assert f"share {counts.mean():.2f} of each sentence's 10" in line and 0 < counts.mean() < compare.K

    def refused(*args):
        raise AssertionError("publish computed neighbours the map had kept")

    monkeypatch.setattr(compare, "_neighbours", refused)
    assert main(["publish", "--map", atlas.id, "--out", str(tmp_path / "site"), "--no-search"]) == 0
    told = capsys.readouterr()
    assert "3 map(s)" in told.out and "3 comparison(s)" in told.out
    assert "Comparing" not in told.err  # nothing left to compare first
    for a, b in compare.pairs(atlas):
        written = np.fromfile(tmp_path / "site" / "data" / f"shared-{a}-{b}.u8", dtype="u1")
        assert written.tolist() == compare.shared(atlas, a, b).tolist()


@pytest.fixture
def shipped_sentences():
    from sbert_demo.data.corpora import stsb_corpus

    corpus = stsb_corpus(Path(__file__).resolve().parents[1] / "data")
    return corpus.sentences, corpus.labels


# --- HTTP ----------------------------------------------------------------------------------------

@pytest.fixture
def client():
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from sbert_demo.ui.atlas import routes

    return TestClient(Starlette(routes=routes()))


def test_the_app_serves_a_maps_folder_as_files_and_nothing_beside_it(client) -> None:
    atlas = small_atlas()
    files = f"/atlas/data/{atlas.id}"
    points = client.get(f"{files}/points-0.f32")
    assert points.status_code == 200 and points.content == (atlas.data / "points-0.f32").read_bytes()
    again = client.get(f"{files}/points-0.f32", headers={"If-None-Match": points.headers["etag"]})
    assert again.status_code == 304 and again.content == b""  # asked again: not sent again
    part = client.get(f"{files}/points-0.f32", headers={"Range": "bytes=8-15"})
    assert part.status_code == 206 and part.content == points.content[8:16]
    assert client.get(f"{files}/texts/0.json.gz").content[:2] == b"\x1f\x8b"  # the page unpacks it
    assert client.get(f"{files}/meta.json").json()["n"] == 8
    (atlas.folder / "neighbours-0-k10.i32").write_bytes(b"server only")
    for path in (f"{files}/../neighbours-0-k10.i32", f"{files}/..%2Fneighbours-0-k10.i32", f"{files}/nothing.u8",
                 "/atlas/data/../../etc/passwd", f"/atlas/data/{'0' * 24}/meta.json", "/atlas/data/x/meta.json"):
        assert client.get(path).status_code == 404, path
    assert client.post(f"{files}/meta.json").status_code == 405
    moved = client.get(f"/atlas?map={atlas.id}", follow_redirects=False)
    assert moved.status_code == 308 and moved.headers["location"] == f"/atlas/?map={atlas.id}"
    page = client.get(f"/atlas/?map={atlas.id}").text
    assert all(f'src="{name}"' in page for name in ("atlas_data.js", "atlas_search.js", "atlas.js"))
    assert "WebGL" in client.get("/atlas/atlas.js").text
    assert client.get("/atlas/..%2Fapp.py").status_code == 404 and client.get("/atlas/store.py").status_code == 404


@pytest.mark.parametrize("method, path, message", [
    ("post", "/compare/0/0", "two different models"),
    ("post", "/compare/0/5", "has 2 model(s)"),
    ("get", "/working/x/1", "has 2 model(s)"),
    ("post", "/agreement", "no category column"),
])
def test_bad_requests_get_a_sentence_not_a_traceback(client, method, path, message) -> None:
    atlas = small_atlas()
    answer = getattr(client, method)(f"/atlas/api/{atlas.id}{path}")
    assert answer.status_code == 400 and message in answer.json()["error"], answer.text
    unknown = client.post(f"/atlas/api/{'0' * 24}/compare/0/1")
    assert unknown.status_code == 400 and "not on this server" in unknown.json()["error"]


# --- the page ------------------------------------------------------------------------------------

@pytest.fixture
def atlas_server():
    """The map view's routes served on a free port in this process (the app serves the same routes)."""
    import uvicorn
    from starlette.applications import Starlette

    from sbert_demo.ui.atlas import routes

    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes()), port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{server.config.port}"
    server.should_exit = True
    thread.join(10)


def inside(xy: np.ndarray, polygon: list[list[float]]) -> np.ndarray:
    """Rows whose point is inside ``polygon`` (even-odd rule, float32 as the page computes it)."""
    x, y = xy[:, 0].astype(np.float32), xy[:, 1].astype(np.float32)
    found = np.zeros(len(xy), dtype=bool)
    corners = np.asarray(polygon, dtype=np.float64)
    for (ax, ay), (bx, by) in zip(corners, np.roll(corners, 1, axis=0)):
        crosses = (ay > y) != (by > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            found ^= crosses & (x < (bx - ax) * (y - ay) / (by - ay) + ax)
    return np.flatnonzero(found)


@pytest.mark.browser
@pytest.mark.static_page
def test_the_page_draws_hovers_lassoes_compares_and_exports(browser, atlas_server, shipped_sentences, tmp_path) -> None:
    from sbert_demo.data.corpora import Corpus
    from sbert_demo.explore.corpus_map import map_corpus

    sentences, labels = shipped_sentences[0][:N], shipped_sentences[1][:N]
    result = map_corpus(Corpus(f"stsb-{N}", sentences, labels, "source"), ["glove-6b-50d", "wordllama-l2-256"], 6)
    atlas = publish(result)
    polygon = [[-0.6, -0.6], [0.5, -0.7], [0.6, 0.4], [-0.5, 0.6]]
    expected = inside(atlas.coords(0).reshape(-1, 2), polygon)
    assert 30 < len(expected) < N
    for name, (width, height) in {"laptop": (1366, 768), "projector": (1280, 720), "phone": (390, 844)}.items():
        phone = width < 640
        context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone,
                                      accept_downloads=True)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{atlas_server}/atlas/?map={atlas.id}")
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        assert f"2 maps of {N} sentences drawn" in page.inner_text("#status")
        # hover (laptop) or tap (phone) a point: its own sentence
        row = int(expected[0])
        x, y = page.evaluate(f"atlas.screenOf(0, {row})")
        if phone:
            page.touchscreen.tap(x, y)
        else:
            page.mouse.move(x, y)
        page.wait_for_selector("#tip:not([hidden])")
        shown = int(page.get_attribute("#tip", "data-row"))
        assert sentences[shown] in page.inner_text("#tip")
        # a lasso in the first map: the table counts exactly the points inside it
        page.evaluate(f"atlas.lasso(0, {polygon})")
        page.wait_for_selector("#selection:not([hidden])")
        assert page.inner_text("#sel-title").startswith(f"{len(expected):,} sentences selected in GloVe")
        first_rows = [int(r) for r in page.eval_on_selector_all("#table tr[data-row]", "rs => rs.map(r => r.dataset.row)")]
        assert first_rows == expected[:50].tolist()
        assert page.evaluate("location.hash").startswith("#lasso=0:")
        greyed = page.evaluate("atlas.state.views[1].colours.filter((v, i) => i % 4 === 3 && v < 255).length")
        assert greyed == N - len(expected)  # the other map shows the same sentences, the rest grey
        problems = page.evaluate(TEXT_PROBLEMS)
        assert problems == [], (name, problems)
        capture(page, tmp_path / f"atlas-{name}.png")
        if name == "laptop":
            with page.expect_download() as started:
                page.click("#export")
            exported = list(csv.reader(io.StringIO(Path(started.value.path()).read_text(encoding="utf-8"))))
            assert [int(r[0]) for r in exported[1:]] == expected.tolist()
            page.select_option("#colour", "shared")
            page.wait_for_function("atlas.state.shared && atlas.state.colour === 'shared'", timeout=120_000)
            counts = compare.shared(atlas, 0, 1)
            assert page.evaluate("Array.from(atlas.state.shared.slice(0, 50))") == counts[:50].tolist()
            page.click("#disagree")
            page.wait_for_selector("#cmp-list li[data-row]")
            worst = int(page.get_attribute("#cmp-list > li", "data-row"))
            assert counts[worst] == counts.min()
            # a deep link opens the same selection: the lasso's rows exactly, then a click in "Where they disagree"
            def reopened() -> list[int]:
                again = context.new_page()
                again.goto(page.url)
                again.wait_for_selector("body[data-ready='1']")
                again.wait_for_selector("#selection:not([hidden])")
                rows = again.evaluate("Array.from(atlas.state.selection)")
                again.close()
                return rows
            assert reopened() == page.evaluate("Array.from(atlas.state.selection)") == expected.tolist()
            page.click("#cmp-list > li .text")
            clicked = sorted({int(r) for r in page.get_attribute("#cmp-list > li", "data-rows").split(",")})
            page.wait_for_function(f"atlas.state.selection && atlas.state.selection.length === {len(clicked)}")
            assert page.evaluate("location.hash").startswith("#rows=")
            assert reopened() == clicked
            odd = [[-0.6123456789, -0.5987654321], [0.5012345678, -0.7098765432], [0.6111111111, 0.4222222222],
                   [-0.4999999999, 0.6000000001]]  # a lasso drawn by hand: the link keeps what it selected
            page.evaluate(f"atlas.lasso(0, {odd})")
            assert page.evaluate("location.hash").startswith("#lasso=0:")
            assert reopened() == page.evaluate("Array.from(atlas.state.selection)")
        if phone:  # one map at a time: the second model's tab shows its map
            page.click("#tabs button:nth-child(2)")
            assert page.is_visible(".panel[data-model='1'] canvas") and not page.is_visible(".panel[data-model='0']")
        assert errors == []
        context.close()


WORLD = ["Кошка спит на диване.", "Η γάτα κοιμάται.", "猫がソファで寝ている。", "我的猫很可爱", "แมวนอนอยู่บนโซฟา",
         "My 🐶 loves the park.", "Family 👨‍👩‍👧‍👦 dinner tonight.", "A dog 🐕 runs.", "Éclair au chocolat.", "ｱｲｽを食べる",
         "人々が集まる", "コーヒーを飲む", "A scatter plot.", "Concatenate the cats.", "㇀ is a stroke", "Flags 🇫🇷 and 🇯🇵."]
WORDS = {  # the word filter: each word at a word's start, any case; unspaced scripts and emoji anywhere
    "кошка": [0], "ΓΆΤΑ": [1], "猫": [2, 3], "ソファ": [2], "แมว": [4], "🐶": [5], "👨‍👩‍👧‍👦": [6], "👩": [6], "éclair": [8],
    "ｱ": [9], "々": [10], "ー": [11], "㇀": [14], "cat": [13], "CATS the": [13], "🇯🇵": [15], "🇫": [15], "dog 🐕": [7],
    "🐕 🐶": [], "at": [],
}


@pytest.mark.browser
@pytest.mark.static_page
def test_the_page_computes_selections_counts_the_word_filter_and_the_csv(browser, atlas_server) -> None:
    """What a visitor's selection asks is computed in the page from the map's files (atlas_data.js): its table
    page, its counts per cluster, the word filter in five scripts and emoji, the CSV, each against an answer
    worked out here."""
    tiny = small_atlas()
    rng = np.random.default_rng(1)
    world = Atlas.of_arrays("world", WORLD, {"w": rng.normal(size=(len(WORLD), 2))},
                            {"w": np.zeros(len(WORLD), dtype=int)})
    page = browser.new_page()
    for atlas in (tiny, world):
        page.goto(f"{atlas_server}/atlas/?map={atlas.id}")
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        if atlas is world:
            break
        chosen = page.evaluate("atlasSource.selection([6, 0, 5, 2, 0], 1, 2, '')")
        assert (chosen["count"], chosen["pages"], [r["row"] for r in chosen["rows"]]) == (4, 2, [5, 6])
        assert chosen["rows"][0] == {"row": 5, "text": "A dog barks at the mailman.", "label": "pets", "clusters": [3, 1], "fields": []}
        assert chosen["counts"][0]["clusters"] == [{"cluster": 0, "count": 2, "size": 2, "words": ["cat", "sofa"]},
                                                   {"cluster": 3, "count": 2, "size": 2, "words": ["dog"]}]
        assert chosen["counts"][1]["clusters"] == [{"cluster": 0, "count": 2, "size": 3, "words": []},
                                                   {"cluster": 1, "count": 1, "size": 3, "words": []},
                                                   {"cluster": 2, "count": 1, "size": 2, "words": []}]
        filtered = page.evaluate("atlasSource.selection([0, 2, 5, 6], 0, 50, 'bark')")
        assert [r["row"] for r in filtered["rows"]] == [5, 6] and (filtered["matching"], filtered["count"]) == (2, 4)
        assert page.evaluate("atlasSource.selection([0, 2], 0, 50, 'CAT ON')")["matching"] == 1
        assert page.evaluate("atlasSource.sentence(5)") == {
            "row": 5, "text": "A dog barks at the mailman.", "label": "pets",
            "clusters": [{"cluster": 3, "words": ["dog"]}, {"cluster": 1, "words": []}]}
        exported = page.evaluate("atlasSource.exported([7, 1, 7]).then((blob) => blob.text())")
        assert exported == ('row,sentence,topic,cluster (Model A),cluster (Model B)\r\n'
                            '1,"\'=HYPERLINK(""http://x"")",junk,1,0\r\n7,\'+1 for the plan,junk,1,2\r\n')
        assert list(csv.reader(io.StringIO(exported)))[1][1] == "'=HYPERLINK(\"http://x\")"  # as Python reads it
        refused = page.evaluate("atlasSource.exported([]).then(() => '', (error) => error.message)")
        assert refused.startswith("Select some sentences first")
    everything = json.dumps(list(range(len(WORLD))))
    found = {word: [r["row"] for r in page.evaluate(f"atlasSource.selection({everything}, 0, 50, {json.dumps(word)})")["rows"]]
             for word in WORDS}
    assert found == WORDS
    page.close()


@pytest.mark.browser
@pytest.mark.static_page
def test_the_page_colours_lists_and_exports_the_corpus_columns(browser, atlas_server) -> None:
    """The corpus's own columns on the page: the map coloured by a category (each point its value's colour, a
    legend with the counts) or a number (a ramp), the table and the CSV carry every column, missing as empty."""
    import pandas as pd

    from sbert_demo.data.fields import infer

    rng = np.random.default_rng(3)
    n = 90
    frame = pd.DataFrame({"genre": rng.choice(["news", "=forum", "captions"], n), "score": rng.uniform(0, 5, n).round(2)})
    frame.loc[5, "genre"] = None
    fields = [infer("genre", frame["genre"].tolist()), infer("+score <b>", frame["score"].tolist())]
    atlas = Atlas.of_arrays("columns.csv", [f"sentence {i}" for i in range(n)], {"glove-6b-50d": rng.normal(size=(n, 2))},
                            {"glove-6b-50d": rng.integers(0, 3, n)}, fields=fields)
    page = browser.new_page()
    page.goto(f"{atlas_server}/atlas/?map={atlas.id}&colour=field:0")
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    counts = frame["genre"].value_counts()
    legend = page.inner_text("#legend")
    for value, count in counts.items():
        assert f"{value} {count}" in legend
    assert "none 1" in legend and page.evaluate("atlas.state.colour") == "field:0"
    colours = page.evaluate("Array.from(atlas.state.views[0].colours)")
    order = fields[0].categories
    first = {value: tuple(colours[4 * i: 4 * i + 3]) for i, value in enumerate(frame["genre"]) if value}
    assert len({first[v] for v in order}) == 3  # three values, three colours
    for i, value in enumerate(frame["genre"]):
        if value:
            assert tuple(colours[4 * i: 4 * i + 3]) == first[value]
    page.select_option("#colour", "field:1")
    page.wait_for_function("atlas.state.colour === 'field:1'")
    assert "+score <b>: 0" in page.inner_text("#legend") and "(blue)" in page.inner_text("#legend")
    low, high = int(frame["score"].idxmin()), int(frame["score"].idxmax())
    colours = page.evaluate("Array.from(atlas.state.views[0].colours)")
    assert colours[4 * low] > colours[4 * high] and colours[4 * low + 2] < colours[4 * high + 2]  # red to blue
    page.evaluate("atlas.select([5, 7])")
    page.wait_for_selector("#selection:not([hidden])")
    assert f"genre: {frame['genre'][7]} · +score <b>: {frame['score'][7]:g}" in page.inner_text("#table")
    exported = page.evaluate("atlasSource.exported([5, 7]).then((blob) => blob.text())")
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0][-2:] == ["genre", "'+score <b>"]  # a formula-like name kept as text
    assert rows[1][-2:] == ["", f"{frame['score'][5]:g}"]  # no genre: empty
    seven = frame["genre"][7]
    assert rows[2][-2] == ("'" + seven if seven.startswith("=") else seven)  # a formula-like value kept as text
    # nothing compared yet: the app offers to, once; its table is what Python finds from the same neighbours
    assert page.inner_text("#agreement-go") == "Compare each model with genre" and page.is_hidden("#agreement-tables table")
    page.click("#agreement-go")
    page.wait_for_selector("#agreement-tables table", timeout=120_000)
    from sbert_demo.atlas.agreement import agreement

    found = agreement(atlas, 0, 0)
    assert page.inner_text("#agreement-tables td.num").strip() == f"{found['agreement']:.2f}"
    assert page.is_hidden("#agreement-go") and (atlas.data / "agreement.json").is_file()
    page.click("#agreement-tables th[data-key='ari'] button")  # sortable by any heading
    assert page.get_attribute("#agreement-tables th[data-key='ari']", "aria-sort") == "descending"
    page.click("details.by-value summary")  # per value: its share, and the value its neighbours carry instead
    shown = page.inner_text("table.values tbody")
    for value in found["values"]:
        assert f"{value['value']} {value['count']} · chance {value['chance']:.2f}\t{value['agreement']:.2f}" in shown
    page.close()


def test_a_corpus_past_the_figure_limit_is_mapped_from_a_sample_and_shown_in_the_map_view(
        tmp_path, monkeypatch, shipped_sentences) -> None:
    """The corpus tab past its figure limit (lowered here to 300 sentences): the sampled path, no Plotly
    figure, the map view in the page, and a search's matches linked into it."""
    import gradio as gr

    from sbert_demo.explore.corpus_map import CorpusMap
    from sbert_demo.ui import corpus as tab

    monkeypatch.setattr(tab, "MAX_CORPUS_SENTENCES", 300)
    upload = tmp_path / "big.csv"
    with upload.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "source"])
        writer.writerows(zip(shipped_sentences[0][:400], shipped_sentences[1][:400]))
    card, notes, state, data, clusters, found, view, *slots = tab.run_map(
        "file", str(upload), None, None, ["glove-6b-50d"], "clusters", 6, progress=lambda *a, **k: None)
    assert "big.csv: 400 sentences" in card and isinstance(state, CorpusMap) and len(state.corpus) == 400
    assert len(data["models"][0]["map"]["x"]) == 400  # the API keeps today's shape: every point's x and y
    atlas_id = re.search(r"/atlas/\?map=([0-9a-f]+)", view).group(1)
    assert "<iframe" in view and open_atlas(atlas_id).n == 400
    assert slots[0] == gr.update(visible=False) and slots[1] is None  # no Plotly figure of the points
    found, *slots = tab.highlight(state, "clusters", "man", "words")
    rows = [int(r) for r in re.search(r"#rows=([\d,]+)", found).group(1).split(",")]
    assert rows and all(re.search(r"(?<!\w)man", shipped_sentences[0][r], re.IGNORECASE) for r in rows)


def test_the_corpus_tab_reads_a_hugging_face_dataset(tmp_path, shipped_sentences, monkeypatch) -> None:
    """The tab's third source: a dataset by id (here a folder saved with ``save_to_disk`` under a root the
    operator shares, as the Hub is off), and a sentence for one the Hub would have to send."""
    import datasets

    from sbert_demo.config import reload_settings
    from sbert_demo.ui import corpus as tab

    monkeypatch.setenv("SBERT_DEMO_DATASET_ROOTS", str(tmp_path / "shared"))  # a folder of its own: not the cache's
    reload_settings()
    folder = tmp_path / "shared" / "saved"
    datasets.Dataset.from_dict({"sentence": shipped_sentences[0][:50], "topic": shipped_sentences[1][:50]}) \
        .save_to_disk(str(folder))
    corpus = tab.load_corpus("dataset", None, None, None, str(folder))
    assert corpus.sentences == list(dict.fromkeys(shipped_sentences[0][:50])) and corpus.label_name == "topic"
    with pytest.raises(ValueError, match="cannot be reached from here"):
        tab.load_corpus("dataset", None, None, None, "someone/some-dataset:default:train")
    with pytest.raises(ValueError, match="Name the Hugging Face dataset"):
        tab.load_corpus("dataset", None, None, None, " ")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.static_page
def test_the_page_at_scale_draws_and_lassoes_three_hundred_thousand_points(browser, atlas_server) -> None:
    """The map view with 300,000 points per model (two models, synthetic clusters, real page): drawn, a
    lasso of a tenth of them counted exactly and greyed in the other map, the table filled."""
    rng = np.random.default_rng(0)
    n = 300_000
    centres = rng.normal(size=(30, 2)) * 4
    groups = rng.integers(0, 30, n)
    first = centres[groups] + rng.normal(size=(n, 2))
    second = centres[(groups * 7) % 30] + rng.normal(size=(n, 2))  # the same groups, elsewhere
    words = ["river", "piano", "tensor", "market", "garden", "engine"]
    sentences = [f"Sentence {i} about the {words[g % 6]} number {g}." for i, g in enumerate(groups)]
    atlas = Atlas.of_arrays("synthetic-300k", sentences, {"a": first, "b": second}, {"a": groups, "b": groups})
    xy = atlas.coords(0).reshape(-1, 2)
    centre = np.median(xy, axis=0)
    half = np.sort(np.abs(xy - centre).max(axis=1))[n // 10]  # a square holding about a tenth of the points
    polygon = [[float(centre[0] - half), float(centre[1] - half)], [float(centre[0] + half), float(centre[1] - half)],
               [float(centre[0] + half), float(centre[1] + half)], [float(centre[0] - half), float(centre[1] + half)]]
    expected = inside(xy, polygon)
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.set_default_timeout(180_000)
    page.goto(f"{atlas_server}/atlas/?map={atlas.id}")
    page.wait_for_selector("body[data-ready='1']")
    assert "2 maps of 300,000 sentences drawn" in page.inner_text("#status")
    took = page.evaluate(f"atlas.lasso(0, {polygon})")
    assert page.inner_text("#sel-title").startswith(f"{len(expected):,} sentences selected")
    greyed = page.evaluate("atlas.state.views[1].colours.filter((v, i) => i % 4 === 3 && v < 255).length")
    assert greyed == n - len(expected)
    rows = [int(r) for r in page.eval_on_selector_all("#table tr[data-row]", "rs => rs.map(r => r.dataset.row)")]
    assert rows == expected[:50].tolist()
    print(f"lasso of {len(expected):,} of {n:,} points to the table: {took:.0f} ms")
    page.close()


@pytest.mark.browser
@pytest.mark.static_page
def test_a_one_model_map_shows_no_compare_menu(browser, atlas_server) -> None:
    """One model: nothing to compare, so no "Compare" menu (its label's display once overrode ``hidden``)."""
    rng = np.random.default_rng(0)
    atlas = Atlas.of_arrays("one.csv", [f"sentence {i}" for i in range(60)], {"glove-6b-50d": rng.normal(size=(60, 2))},
                            {"glove-6b-50d": rng.integers(0, 3, 60)})
    for width, height in ((1366, 768), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 640,
                                      has_touch=width < 640)
        page = context.new_page()
        page.goto(f"{atlas_server}/atlas/?map={atlas.id}")
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        assert page.get_attribute("#pair-box", "hidden") is not None and not page.is_visible("#pair-box")
        hidden_but_shown = page.evaluate("[...document.querySelectorAll('[hidden]')].filter((e) => "
                                         "getComputedStyle(e).display !== 'none').map((e) => e.id || e.tagName)")
        assert hidden_but_shown == []
        context.close()
