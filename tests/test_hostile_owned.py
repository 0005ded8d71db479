"""Nobody reads or loses what is theirs: the six holes an independent hostile run found, each case refused
with a sentence (or kept) now.

1. a dataset root that holds the cache or the uploads is refused when the app starts, and per request; a link
   under a root that leads out of it is never read (nor a state or README naming files elsewhere);
2. ``publish`` replaces only what it wrote (its manifest); a stranger's folder is refused;
3. ``publish`` says every OS error in a sentence, and an npm that hangs is stopped after its bounded wait;
4. the published README's front matter reads back as YAML for any title, its text escaped;
5. hidden sentences free their place on a board, a flood is hidden in one action, browsers without the
   visitor cookie share one rate a board;
6. a binary or sparse file is refused from its first MB;

and what was also seen: a first load that prepares a model says so with the time left, a room link's status
counts the board's sentences at once, and a negative sentence number is judged against the corpus's range.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from sbert_demo.config import reload_settings

REPO = Path(__file__).resolve().parents[1]


def share_roots(monkeypatch: pytest.MonkeyPatch, *roots: Path) -> None:
    monkeypatch.setenv("SBERT_DEMO_DATASET_ROOTS", os.pathsep.join(str(r) for r in roots))
    reload_settings()


def csv_folder(folder: Path, note: str = "private server note") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part.csv").write_text("text\n" + "".join(f"{note} {i}\n" for i in range(30)))
    return folder


def read_dataset(value: str):
    from sbert_demo.ui import corpus as corpus_tab

    return corpus_tab.load_corpus("dataset", None, None, None, value)


# --- 1. dataset roots as sets, at start and per request -------------------------------------------------

@pytest.mark.parametrize("which", ["cache", "models", "uploads", "temp"])
def test_a_root_that_holds_a_private_folder_is_refused_at_start(tmp_path: Path, isolated, which: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A root holding the cache, the models, Gradio's uploads or the folder exports go to: the app says which
    setting to change and does not build."""
    import tempfile

    from sbert_demo.corpus.access import check_configured_roots, gradio_temp_dir
    from sbert_demo.ui.app import build_app

    holder = {"cache": isolated.cache_dir.parent, "models": isolated.models_dir.parent,
              "uploads": gradio_temp_dir().parent, "temp": Path(tempfile.gettempdir()).parent}[which]
    share_roots(monkeypatch, tmp_path / "fine", holder)
    with pytest.raises(ValueError, match="SBERT_DEMO_DATASET_ROOTS names .* which holds") as caught:
        check_configured_roots()
    assert str(holder) in str(caught.value) and "Traceback" not in str(caught.value)
    with pytest.raises(ValueError, match="SBERT_DEMO_DATASET_ROOTS"):
        build_app(warm_up=False)


def test_a_root_inside_the_cache_is_refused_at_start_and_a_root_beside_it_is_not(
        tmp_path: Path, isolated, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.corpus.access import check_configured_roots

    share_roots(monkeypatch, isolated.cache_dir / "corpora")
    with pytest.raises(ValueError, match="lies inside the app's cache folder"):
        check_configured_roots()
    share_roots(monkeypatch, tmp_path / "shared")
    check_configured_roots()  # a folder of its own: fine


def test_the_app_does_not_start_on_a_root_that_holds_the_uploads(tmp_path: Path, isolated) -> None:
    """``python app.py`` with such a root: one sentence naming the setting, no traceback, a non-zero exit."""
    env = {**os.environ, "SBERT_DEMO_DATASET_ROOTS": str(tmp_path), "GRADIO_TEMP_DIR": str(tmp_path / "gradio"),
           "SBERT_DEMO_CACHE": str(isolated.cache_dir), "SBERT_DEMO_MODELS": str(isolated.models_dir)}
    done = subprocess.run([sys.executable, "app.py", "--port", "1"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0
    assert "SBERT_DEMO_DATASET_ROOTS names" in done.stderr and "Gradio's folder of visitors' uploads" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


def test_a_root_holding_another_visitors_upload_reads_nothing_of_it(tmp_path: Path, isolated,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile case: the root holds Gradio's upload folder, with another visitor's corpus; naming the root,
    or the upload's folder under it, reads nothing (per request too, where the start was not checked)."""
    root = tmp_path / "everything"
    uploads = root / "gradio"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(uploads))
    csv_folder(uploads / "abc123", "another visitor's upload")
    share_roots(monkeypatch, root)
    for named in (root, uploads, uploads / "abc123"):
        with pytest.raises(ValueError, match="nor a dataset folder this server shares") as caught:
            read_dataset(str(named))
        assert "another visitor" not in str(caught.value)


def test_a_link_out_of_its_root_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "shared"
    csv_folder(root / "talks", "a shared sentence")
    share_roots(monkeypatch, root)
    assert len(read_dataset(str(root / "talks"))) == 30
    secret = csv_folder(tmp_path / "elsewhere", "a private note") / "part.csv"
    (root / "talks" / "more.csv").symlink_to(secret)  # a data file that leads out
    with pytest.raises(ValueError, match="is a link to a file outside the folders this server shares") as caught:
        read_dataset(str(root / "talks"))
    assert "private note" not in str(caught.value)
    (root / "talks" / "more.csv").unlink()
    (root / "talks" / "deeper").symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # a folder that leads out
    with pytest.raises(ValueError, match="is a link to a file outside"):
        read_dataset(str(root / "talks"))
    (root / "talks" / "deeper").unlink()
    other = csv_folder(root / "other", "another shared sentence")
    (root / "talks" / "more.csv").symlink_to(other / "part.csv")  # a link that stays under the root: read
    (root / "talks" / "beside").symlink_to(other, target_is_directory=True)
    (other / "loop").symlink_to(root / "talks", target_is_directory=True)  # a loop of links ends
    read = read_dataset(str(root / "talks"))
    assert len(read) == 60 and "another shared sentence 29" in read.sentences


def test_a_saved_dataset_whose_state_names_a_file_elsewhere_is_not_read(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    root = tmp_path / "shared"
    saved = root / "saved"
    datasets.Dataset.from_dict({"text": [f"a saved sentence {i}" for i in range(30)]}).save_to_disk(str(saved))
    share_roots(monkeypatch, root)
    assert len(read_dataset(str(saved))) == 30
    outside = tmp_path / "private"
    datasets.Dataset.from_dict({"text": [f"a private note {i}" for i in range(30)]}).save_to_disk(str(outside))
    state = json.loads((saved / "state.json").read_text())
    arrow = next(outside.glob("*.arrow")).name
    state["_data_files"] = [{"filename": f"../../private/{arrow}"}]
    (saved / "state.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match="names files outside its folder") as caught:
        read_dataset(str(saved))
    assert "private note" not in str(caught.value)


def test_a_readme_whose_patterns_lead_out_of_the_root_is_not_read(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder's README may name its data files; patterns that resolve outside every root are refused before a
    file is read."""
    root = tmp_path / "shared"
    folder = csv_folder(root / "talks", "a shared sentence")
    csv_folder(tmp_path / "private", "a private note")
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                      "  - split: train\n    path: ../../private/*.csv\n---\n")
    share_roots(monkeypatch, root)
    with pytest.raises(ValueError) as caught:
        corpus = read_dataset(str(folder))
        pytest.fail(f"read {len(corpus)} sentences: {corpus.sentences[:2]}")
    assert "private note" not in str(caught.value)


# --- 2 and 3. publish owns only what it wrote; every refusal a sentence ----------------------------------

@pytest.fixture
def one_map(isolated):
    from sbert_demo.atlas.store import Atlas

    rng = np.random.default_rng(0)
    sentences = [f"sentence {i} about cats" for i in range(40)]
    return Atlas.of_arrays("cats.csv", sentences, {"glove-6b-50d": rng.normal(size=(40, 2))},
                           {"glove-6b-50d": rng.integers(0, 3, 40)})


def test_publishing_again_keeps_what_the_user_added(tmp_path: Path, one_map) -> None:
    from sbert_demo.publish.folder import MANIFEST
    from sbert_demo.publish.site import publish_map

    out = tmp_path / "site"
    first = publish_map(one_map, out, search=False)
    written = json.loads((out / MANIFEST).read_text())
    assert written["made"] is True and "index.html" in written["files"] and "data/meta.json" in written["files"]
    assert first.files == len(written["files"])
    (out / "keep.txt").write_text("mine")
    (out / "CNAME").write_text("maps.example.org")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (out / "data" / "notes.md").write_text("my notes beside the data")
    (out / "data" / "old-0.bin").write_bytes(b"x")  # as if publish had written it before and no longer does
    listed = json.loads((out / MANIFEST).read_text())
    listed["files"].append("data/old-0.bin")
    (out / MANIFEST).write_text(json.dumps(listed))
    again = publish_map(one_map, out, search=False, title="Cats again")
    assert (out / "keep.txt").read_text() == "mine" and (out / "CNAME").read_text() == "maps.example.org"
    assert (out / ".git" / "HEAD").is_file() and (out / "data" / "notes.md").is_file()
    assert not (out / "data" / "old-0.bin").exists()  # publish's own stale file went
    assert json.loads((out / "site.json").read_text(encoding="utf-8"))["title"] == "Cats again"  # the page shows it
    assert again.files == first.files
    assert not [p for p in out.iterdir() if p.name.startswith(".sbert-demo-staging-")]


def test_a_strangers_folder_is_refused_and_left_as_it_was(tmp_path: Path, one_map) -> None:
    from sbert_demo.publish.site import publish_map

    blog = tmp_path / "blog"
    (blog / "posts").mkdir(parents=True)
    (blog / "site.json").write_text('{"title": "my blog"}')
    (blog / "keep.txt").write_text("mine")
    (blog / "posts" / "2026.md").write_text("a post")
    before = sorted(str(p.relative_to(blog)) for p in blog.rglob("*"))
    with pytest.raises(ValueError, match="holds other files, and publish did not write it"):
        publish_map(one_map, blog, search=False)
    assert sorted(str(p.relative_to(blog)) for p in blog.rglob("*")) == before
    assert (blog / "site.json").read_text() == '{"title": "my blog"}'


def test_a_file_publish_would_write_over_is_refused_before_anything_moves(tmp_path: Path, one_map) -> None:
    from sbert_demo.publish.folder import MANIFEST
    from sbert_demo.publish.site import publish_map

    out = tmp_path / "site"
    publish_map(one_map, out, search=False)
    listed = json.loads((out / MANIFEST).read_text())
    listed["files"].remove("atlas.css")  # now the user's, as far as publish knows
    (out / MANIFEST).write_text(json.dumps(listed))
    (out / "atlas.css").write_text("/* my own styles */")
    with pytest.raises(ValueError, match="would write over atlas.css"):
        publish_map(one_map, out, search=False)
    assert (out / "atlas.css").read_text() == "/* my own styles */"


@pytest.mark.parametrize("where,words", [("/proc/sbert-out", "Could not publish into /proc/sbert-out"),
                                         ("/dev/null/site", "Could not publish into /dev/null/site")])
def test_publish_says_an_os_error_in_a_sentence(where: str, words: str, one_map, isolated) -> None:
    env = {**os.environ, "SBERT_DEMO_CACHE": str(isolated.cache_dir)}
    done = subprocess.run([sys.executable, "-m", "sbert_demo", "publish", "--map", one_map.id, "--out", where,
                           "--no-search"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert words in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_an_npm_that_hangs_is_stopped_after_its_wait_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """npm's wait is bounded (the module's NPM_WAIT_S, 60 s; 2 s here), said while it waits, and a hang ends in a
    sentence, its children killed too (a child holding npm's output would otherwise keep the caller waiting)."""
    from sbert_demo.config import Settings
    from sbert_demo.publish import vendor

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "npm"
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'npm.pid'}\nsleep 300 &\necho $! > {tmp_path / 'child.pid'}\n"
                    "wait\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(vendor, "NPM_WAIT_S", 2)
    heard = []
    started = time.monotonic()
    with pytest.raises(ValueError, match="npm did not fetch qrcode-generator 2.0.4 within 2 s"):
        vendor.vendored(vendor.QRCODE, Settings.from_environment({"SBERT_DEMO_CACHE": str(tmp_path / "cache")}),
                        heard.append)
    assert time.monotonic() - started < 60  # not the child's 300 s
    assert heard == ["fetching qrcode-generator 2.0.4 with npm (at most 2 s)"]
    child = int((tmp_path / "child.pid").read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/status")
    assert not status.exists() or "\nState:\tZ" in status.read_text()  # gone, or dead and not yet reaped
    assert not (tmp_path / "cache" / "vendor" / vendor.QRCODE.folder_name).exists()


# --- 4. the README's front matter ---------------------------------------------------------------------

@pytest.mark.parametrize("title", ['ti\'tle\\q "quoted"', "two\nlines", "<img src=x onerror=alert(1)>",
                                   "a: b # c", "- [x]", "yes", "🧭 emoji ‮ rtl", "*bold* _it_ `code` [a](b)", ""])
def test_the_front_matter_reads_back_as_yaml_and_the_text_is_inert(title: str) -> None:
    from sbert_demo.publish.site import space_readme

    readme = space_readme(title, 40, ["GloVe <b>bold</b>", "MiniLM"], talk=True)
    assert readme.startswith("---\n")
    _, front, body = readme.split("---\n", 2)
    matter = yaml.safe_load(front)
    assert matter["title"] == (" ".join(title.split())[:60] or "Corpus map")
    assert matter["sdk"] == "static" and matter["app_file"] == "index.html" and matter["pinned"] is False
    assert matter["custom_headers"] == {"cross-origin-embedder-policy": "require-corp",  # threads in the page
                                        "cross-origin-opener-policy": "same-origin",
                                        "cross-origin-resource-policy": "cross-origin"}
    assert "<img" not in body and "<b>" not in body
    heading = body.strip().splitlines()[0]
    for mark in "*_`[":
        assert mark not in heading.replace("\\" + mark, "")


# --- 5. the board's limit counts what is shown; a flood in one action ----------------------------------

@pytest.fixture
def store(tmp_path: Path):
    from sbert_demo.audience.store import BoardStore

    return BoardStore(tmp_path / "boards.sqlite")


def phone(i: int) -> str:
    return f"visitor:{i:022d}"


def test_hidden_sentences_free_their_place(store) -> None:
    from sbert_demo.audience.store import MAX_SENTENCES

    board = store.create("glove-6b-50d")
    sent = [store.add(board.code, f"Flood sentence {i}.", sender=phone(i), now=1000.0 + i) for i in range(MAX_SENTENCES)]
    with pytest.raises(ValueError, match="The board is full"):
        store.add(board.code, "One too many.", sender=phone(999), now=2000.0)
    for s in sent[4:]:
        store.hide(board.code, board.secret, s.id)
    assert len(store.sentences(board.code)) == 4
    added = store.add(board.code, "A real phone's sentence.", sender=phone(999), now=2000.0)
    assert [s.text for s in store.sentences(board.code)][-1] == added.text == "A real phone's sentence."


def test_a_flood_is_hidden_in_one_action_and_the_sentences_before_it_stay(store) -> None:
    board = store.create("glove-6b-50d")
    room = [store.add(board.code, f"The room says {i}.", sender=phone(i), now=1000.0 + i) for i in range(5)]
    flood = [store.add(board.code, f"spam {i}", sender=phone(100 + i), now=1100.0 + i) for i in range(60)]
    assert store.hide(board.code, board.secret, flood[0].id, and_later=True) == 60
    assert [s.id for s in store.sentences(board.code)] == [s.id for s in room]
    assert store.hide(board.code, board.secret, flood[0].id, and_later=True) == 0  # already hidden
    with pytest.raises(ValueError, match="Only the presenter"):
        store.hide(board.code, "a guess", room[0].id, and_later=True)
    assert len(store.sentences(board.code)) == 5


def test_the_presenters_page_hides_a_flood_in_one_action(store, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.ui import audience

    monkeypatch.setattr(audience, "board_store", lambda: store)
    board = store.create("glove-6b-50d")
    store.add(board.code, "Before the flood.", sender=phone(1), now=1000.0)
    first = store.add(board.code, "spam 0", sender=phone(2), now=1001.0)
    store.add(board.code, "spam 1", sender=phone(3), now=1002.0)
    said = audience.hide_sentence(board.code, board.secret, first.id, True)
    assert "every later one are hidden" in said and "(2 now)" in said
    assert [s.text for s in store.sentences(board.code)] == ["Before the flood."]
    assert "are hidden" in audience.api_hide(board.code, board.secret, first.id, "true")


def test_browsers_without_the_cookie_share_one_rate_a_board(store) -> None:
    """A script that drops the cookie is a new session each time: together such sends meet the board's rate;
    phones with the cookie are not held by it."""
    from sbert_demo.audience.store import COOKIELESS_PER_MINUTE

    board = store.create("glove-6b-50d")
    outcomes = []
    for i in range(72):
        try:
            store.add(board.code, f"A cookieless sentence {i}.", sender=f"session-{i}", address="203.0.113.5",
                      now=1000.0 + i * 0.9)
            outcomes.append("ok")
        except ValueError as exc:
            outcomes.append(str(exc))
    landed = outcomes.count("ok")
    assert COOKIELESS_PER_MINUTE <= landed <= 2 * COOKIELESS_PER_MINUTE, landed  # 72 in 65 s before
    assert all("keep no cookie" in o for o in outcomes if o != "ok")
    store.add(board.code, "A phone with its cookie.", sender=phone(1), address="203.0.113.5", now=1065.0)


def test_a_board_keeps_a_bounded_number_of_sentences_hidden_ones_included(store, monkeypatch) -> None:
    from sbert_demo.audience import store as module

    monkeypatch.setattr(module, "MAX_KEPT", 30)
    board = store.create("glove-6b-50d")
    for i in range(30):
        added = store.add(board.code, f"Sentence {i}.", sender=phone(i), now=1000.0 + i)
        store.hide(board.code, board.secret, added.id)
    with pytest.raises(ValueError, match="keeps at most 30 sentences, hidden ones included"):
        store.add(board.code, "One more.", sender=phone(99), now=2000.0)


# --- 6. binary and sparse files refused from their first MB ------------------------------------------------

@pytest.mark.parametrize("suffix", [".txt", ".csv", ".jsonl", ".tsv"])
def test_a_sparse_file_of_nul_bytes_is_refused_at_once(tmp_path: Path, suffix: str) -> None:
    from sbert_demo.corpus.sources import SourceSpec, read_source

    sparse = tmp_path / f"zeros{suffix}"
    with sparse.open("wb") as handle:
        handle.truncate(2 * 10**9)  # 2 GB of NUL bytes, taking no disk
    with pytest.raises(ValueError, match="holds NUL bytes in its first MB: it is a binary file"):
        read_source(SourceSpec(path=str(sparse)))


def test_a_file_without_line_breaks_is_refused_and_a_long_line_later_too(tmp_path: Path) -> None:
    from sbert_demo.corpus import sources
    from sbert_demo.corpus.sources import SourceSpec, read_source

    one_line = tmp_path / "one.txt"
    one_line.write_text("word " * 400_000)  # 2 MB, no line break
    with pytest.raises(ValueError, match="no line break in its first MB"):
        read_source(SourceSpec(path=str(one_line)))
    later = tmp_path / "later.txt"
    later.write_text("A first sentence.\nA second one.\n" + "x" * (sources.MAX_LINE_CHARS + 10) + "\n")
    with pytest.raises(ValueError, match="Line 3 of later.txt is longer than"):
        read_source(SourceSpec(path=str(later)))
    nul_later = tmp_path / "nul.jsonl"
    nul_later.write_bytes(b'{"text": "fine"}\n' * 70_000 + b'{"text": "a\x00b"}\n')
    with pytest.raises(ValueError, match="holds NUL bytes"):
        read_source(SourceSpec(path=str(nul_later)))


def test_the_corpus_tab_refuses_a_binary_upload_before_counting_its_lines(tmp_path: Path) -> None:
    from sbert_demo.ui import corpus as corpus_tab

    upload = tmp_path / "zeros.csv"
    with upload.open("wb") as handle:
        handle.truncate(200 * 2**20)
    with pytest.raises(ValueError, match="binary file"):
        corpus_tab.load_corpus("file", str(upload), None, None)


# --- also seen -----------------------------------------------------------------------------------------------

def test_a_distillation_says_it_is_preparing_and_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.models.kinds import static

    clock = iter([100.0, 110.0, 120.0])
    monkeypatch.setattr(static.time, "monotonic", lambda: next(clock))
    heard = []
    count = static._counter("Static, distilled from mpnet", heard.append)
    count(3_000, 30_000)
    count(6_000, 30_000)
    # 3,000 tokens in 10 s: 27,000 left, about 90 s; then 6,000 in 20 s: 24,000 left, about 80 s
    assert heard == ["Preparing Static, distilled from mpnet (distilled once per teacher version): 3,000 / 30,000 "
                     "tokens, about 2 min left",
                     "Preparing Static, distilled from mpnet (distilled once per teacher version): 6,000 / 30,000 "
                     "tokens, about 1 min left"]


def test_a_model_prepared_on_first_load_tells_the_views_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view's per-model run hears what a first load prepares (a distillation), where the load passes no
    ``notify`` of its own."""
    from sbert_demo.models import loading
    from sbert_demo.models.per_model import ModelOutcome, run_per_model

    def run_one(resolved, step):
        listener = loading._listener.get()
        assert listener is not None
        listener("Preparing something: 10 / 100 tokens, about 30 s left")
        return ModelOutcome.of(resolved)

    heard = []
    run_per_model(["glove-6b-50d"], run_one, ModelOutcome, progress=lambda f, what: heard.append(what))
    assert "Preparing something: 10 / 100 tokens, about 30 s left" in heard
    assert loading._listener.get() is None


def test_a_room_link_counts_the_boards_sentences_at_once(store, monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.ui import talk

    monkeypatch.setattr(talk, "board_store", lambda: store)
    board = store.create("all-MiniLM-L6-v2")
    for i in range(6):
        store.add(board.code, f"Sentence number {i} from the room.", sender=phone(i), now=time.time())
    status = talk.room_status({"code": board.code, "secret": board.secret, "base": "http://127.0.0.1:7860/"})
    assert '<span class="stat-value">6</span> sentences on board' in status
