"""What a hostile visitor found, each case refused with a sentence (issue: nobody reads what is not theirs).

* the dataset field reads only Hub ids and folders under the operator's roots, on and off the Hub;
* one decoding rule: UTF-8 (with or without a BOM) or a refusal, for every file type;
* kept neighbour files are computed once while many requests ask for them;
* nesting checked at the edge (the map view takes no bodies: the page computes its selections);
* one upload limit; a venue's one address does not throttle its room (tests/test_audience.py);
* the CLI refuses a silent Ray address, a malformed one and a bad shard size in seconds;
* Gradio's JSON endpoints (MCP's JSON-RPC among them) get bounded bodies of bounded depth.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from sbert_demo.atlas import compare
from sbert_demo.atlas.store import Atlas
from sbert_demo.corpus import sources
from sbert_demo.corpus.access import check_visitor_dataset, gradio_temp_dir
from sbert_demo.corpus.library import open_corpus
from sbert_demo.corpus.sources import MAX_UPLOAD_BYTES, SourceSpec
from sbert_demo.ui import corpus as corpus_tab
from sbert_demo.ui.bodies import MAX_DEPTH, BodyGuard
from sbert_demo.ui.common import MAX_FILE_SIZE

REFUSED = "is not a Hugging Face dataset id"


def map_dataset(value: str) -> list:
    """The Corpus map tab's "Map the corpus" with a dataset value, as the page sends it."""
    return corpus_tab.run_map("dataset", None, None, None, ["glove-6b-50d"], "labels", 5, dataset=value,
                              progress=lambda *a, **k: None)


def read_dataset(value: str):
    """The corpus the tab reads for a dataset value (what "Map the corpus" then maps)."""
    return corpus_tab.load_corpus("dataset", None, None, None, value)


def refused_dataset(value: str) -> str:
    with pytest.raises(gr.Error) as caught:
        map_dataset(value)
    message = str(caught.value.message)
    assert "Traceback" not in message and "Error" not in message, message
    return message


def saved_dataset(folder: Path, sentence: str) -> Path:
    """A folder written by ``save_to_disk`` holding a private note (what the hostile run read)."""
    import datasets

    datasets.Dataset.from_dict({"text": [f"{sentence} {i}" for i in range(30)]}).save_to_disk(str(folder))
    return folder


def csv_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part.csv").write_text("text\n" + "".join(f"private server note {i}\n" for i in range(30)))
    return folder


@pytest.fixture
def private_places(tmp_path: Path, isolated) -> dict[str, Path]:
    """The places the hostile run read: a private folder elsewhere, the app's store of other visitors' corpora,
    Gradio's upload folder with another visitor's upload, and a save_to_disk folder."""
    texts = csv_folder(isolated.cache_dir / "corpora" / "texts")
    uploads = csv_folder(gradio_temp_dir() / "hostile-test-upload")
    return {"private": csv_folder(tmp_path / "private"), "corpora": texts, "uploads": uploads,
            "saved": saved_dataset(tmp_path / "saved", "private server note"), "cache": isolated.cache_dir}


@pytest.fixture
def hub_plays_reachable(monkeypatch: pytest.MonkeyPatch) -> list:
    """The Hub answers (as on a Space): ``datasets.load_dataset`` is recorded and gives a small public dataset."""
    import datasets

    calls = []

    def load_dataset(path, name=None, split=None, **kwargs):
        calls.append((path, name, split, kwargs))
        return datasets.Dataset.from_dict({"text": [f"a public sentence {i}" for i in range(40)]})

    monkeypatch.setattr("sbert_demo.hub.hub_reachable", lambda *a, **k: True)
    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    return calls


@pytest.mark.parametrize("place", ["private", "corpora", "uploads", "saved", "cache"])
def test_a_visitor_cannot_read_server_folders_offline(private_places: dict, place: str) -> None:
    message = refused_dataset(str(private_places[place]))
    assert REFUSED in message and "upload a file" in message
    assert "private server note" not in message


@pytest.mark.parametrize("place", ["private", "corpora", "uploads", "saved", "cache"])
def test_a_visitor_cannot_read_server_folders_with_the_hub_reachable(private_places: dict, place: str,
                                                                     hub_plays_reachable: list) -> None:
    refused_dataset(str(private_places[place]))
    assert hub_plays_reachable == []  # refused before anything was asked to load it


@pytest.mark.parametrize("value", ["data/stsbenchmark", "data", "./data", "../x", "~", "~/x", "models",
                                   "csv", "parquet", "a/b/c", "/etc", "owner//name", "a..b", "x" * 200])
def test_paths_and_packaged_readers_are_no_dataset_ids(value: str, hub_plays_reachable: list,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # where the app runs: data/ and models/ exist here
    refused_dataset(value)
    assert hub_plays_reachable == []


def test_a_hub_id_is_read_from_the_hub_without_the_operators_token(hub_plays_reachable: list) -> None:
    assert len(read_dataset("someone/public-set:default:train")) == 40
    (path, name, split, kwargs), = hub_plays_reachable
    assert (path, name, split, kwargs["token"]) == ("someone/public-set", "default", "train", False)


@pytest.mark.parametrize("value,words", [("owner/name:../../etc:train", "config name"),
                                         ("owner/name:default:../x", "split name"),
                                         ("owner/name:default:train*", "split name")])
def test_configs_and_splits_are_names(value: str, words: str, hub_plays_reachable: list) -> None:
    assert words in refused_dataset(value)
    assert hub_plays_reachable == []


def test_offline_a_hub_id_says_the_hub_is_needed() -> None:
    message = refused_dataset("sentence-transformers/stsb")
    # a visitor is told what the page offers, not the command line's flags
    assert "cannot be reached" in message and "upload the corpus as a file" in message and "--" not in message


def test_folders_under_the_operators_roots_are_read_and_nothing_else(tmp_path: Path, isolated,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from sbert_demo.config import reload_settings

    root = tmp_path / "shared-datasets"
    saved_dataset(root / "talks", "a shared sentence")
    monkeypatch.setenv("SBERT_DEMO_DATASET_ROOTS", f"{root}{os.pathsep}{isolated.cache_dir}")
    reload_settings()
    assert len(read_dataset(str(root / "talks"))) == 30
    # a folder of data files there is read here too, with no Hub (it said the Hub could not be reached)
    notes = read_dataset(str(csv_folder(root / "notes")))
    assert len(notes) == 30 and "private server note 7" in notes.sentences
    # The cache folder lies under a root here: still never readable by naming it.
    message = refused_dataset(str(csv_folder(isolated.cache_dir / "corpora" / "texts")))
    assert "nor a dataset folder this server shares" in message
    refused_dataset(str(saved_dataset(tmp_path / "elsewhere", "private")))
    (root / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    refused_dataset(str(root / "link"))  # judged by where it leads
    refused_dataset(str(root / ".." / "elsewhere"))


def test_a_kept_copy_of_the_operators_corpus_is_not_handed_to_a_visitor(tmp_path: Path) -> None:
    folder = saved_dataset(tmp_path / "operator", "the operator's own note")
    assert len(open_corpus(SourceSpec(dataset=str(folder)))) == 30  # the CLI, at the keyboard: kept
    refused_dataset(str(folder))


def test_the_allow_list_alone() -> None:
    assert check_visitor_dataset(" sentence-transformers/stsb ", (), ()) == "sentence-transformers/stsb"
    assert check_visitor_dataset("imdb", (), ()) == "imdb"
    for value in ("/", "\\\\server\\share", "a\x00b", "owner/name/extra", "-x", "x-"):
        with pytest.raises(ValueError, match="Hugging Face dataset id"):
            check_visitor_dataset(value, (), ())


# --- a map's files ------------------------------------------------------------------------------------------

@pytest.fixture
def published(isolated) -> Atlas:
    rng = np.random.default_rng(0)
    sentences = [f"кошка {i} sleeps" for i in range(12)] + [f"γάτα {i} κοιμάται" for i in range(12)] + [
        f"éclair {i} au chocolat" for i in range(12)] + [f"猫 {i} が好き" for i in range(12)] + [
        f"cat {i} sleeps on a mat" for i in range(12)] + [f"dog {i} barks at the moon" for i in range(40)]
    coords = {key: rng.normal(size=(len(sentences), 2)) for key in ("glove-6b-50d", "wordllama-l2-256")}  # no distilling
    clusters = {key: rng.integers(0, 3, len(sentences)) for key in coords}
    return Atlas.of_arrays("猫と犬のコーパス.csv", sentences, coords, clusters)


# --- decoding ----------------------------------------------------------------------------------------

def _latin1(path: Path, rows: int, kind: str) -> Path:
    lines = [f"café crème story {i}" for i in range(rows)]
    if kind == "csv":
        body = "text\n" + "\n".join(lines) + "\n"
    elif kind == "jsonl":
        body = "".join('{"text": "%s"}\n' % line for line in lines)
    else:
        body = "\n".join(lines) + "\n"
    path.write_bytes(body.encode("latin-1"))
    return path


@pytest.mark.parametrize("kind,rows", [("csv", 20_500), ("csv", 40), ("jsonl", 40), ("jsonl", 20_500),
                                       ("txt", 40), ("txt", 20_500)])
def test_latin1_is_refused_with_one_sentence_whatever_the_file(tmp_path: Path, kind: str, rows: int) -> None:
    path = _latin1(tmp_path / f"corpus.{kind}", rows, kind)
    with pytest.raises(gr.Error) as caught:
        corpus_tab.describe_choice("file", str(path), None, None)
    message = str(caught.value.message)
    assert "is not UTF-8 text" in message and "Latin-1" in message, message
    assert "b'" not in message and "\ufffd" not in message


@pytest.mark.parametrize("kind", ["csv", "jsonl", "txt"])
def test_utf8_with_a_byte_order_mark_reads_the_same(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"corpus.{kind}"
    _latin1(path, 30, kind)
    text = path.read_bytes().decode("latin-1")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    corpus = sources.read_source(SourceSpec(path=str(path)))
    assert corpus.sentences[0] == "café crème story 0" and len(corpus) == 30


def test_a_deeply_nested_json_line_gets_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text('{"text": "fine"}\n{"text": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(ValueError, match="Line 2 of deep.jsonl is nested too deeply"):
        sources.read_source(SourceSpec(path=str(path)))


def test_binary_parquet_cells_that_are_not_utf8_are_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "bytes.parquet"
    pq.write_table(pa.table({"text": pa.array([f"caf\xe9 {i}".encode("latin-1") for i in range(30)],
                                              type=pa.binary())}), path)
    with pytest.raises(ValueError, match="is not UTF-8 text"):
        sources.read_source(SourceSpec(path=str(path)))


# --- races -------------------------------------------------------------------------------------------

def test_simultaneous_comparisons_compute_each_file_once(published: Atlas, monkeypatch: pytest.MonkeyPatch) -> None:
    """8 requests at once for /shared/0/1, /shared/1/0 and /disagree on a fresh map (1 to 4 of 8 failed when
    threads wrote the same temporary file)."""
    made = []
    real = compare._neighbours

    def counted(atlas, m, k, progress, embedded):
        made.append(m)
        time.sleep(0.2)  # long enough that every request arrives while the first computes
        return real(atlas, m, k, progress, embedded)

    monkeypatch.setattr(compare, "_neighbours", counted)
    calls = [lambda: compare.shared(published, 0, 1), lambda: compare.shared(published, 1, 0),
             lambda: compare.disagreements(published, 0, 1)] * 8
    with ThreadPoolExecutor(8) as pool:
        results = [f.result() for f in [pool.submit(call) for call in calls]]
    assert sorted(made) == [0, 1]
    shared = [r for r in results if isinstance(r, np.ndarray)]
    assert all(np.array_equal(s, shared[0]) for s in shared)
    assert not [p.name for p in published.folder.rglob("*.tmp")]


# --- one upload limit --------------------------------------------------------------------------------

def test_one_upload_limit_for_every_corpus_file(tmp_path: Path) -> None:
    """A 56 MB CSV of 15,000 rows was refused ("the limit is 50 MB") while the page offered 300 MB."""
    path = tmp_path / "long.csv"
    with path.open("w", encoding="utf-8") as handle:
        handle.write("text\n")
        for i in range(15_000):
            handle.write(f"Sentence {i} " + "word " * 760 + "\n")
    assert path.stat().st_size > 56 * 10**6
    card = corpus_tab.describe_choice("file", str(path), None, None)
    assert "15,000 sentences" in card
    assert MAX_FILE_SIZE == f"{MAX_UPLOAD_BYTES // 2**20}mb" and "300 MB" in corpus_tab.upload_hint()
    assert "300 MB" in (Path(__file__).resolve().parents[1] / "docs" / "corpus.md").read_text()


# --- the CLI -----------------------------------------------------------------------------------------

def _cli(*argv: str) -> tuple[int, str]:
    result = subprocess.run([sys.executable, "-m", "sbert_demo", *argv], capture_output=True, text=True, timeout=120,
                            env=os.environ.copy())
    return result.returncode, result.stderr


def _silent_listener() -> tuple[socket.socket, int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener, listener.getsockname()[1]


def test_the_cli_refuses_a_silent_or_foreign_ray_address_in_seconds(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("A cat sleeps.\nA dog barks.\nA bird sings.\n")
    listener, port = _silent_listener()  # accepts and never answers (as the app's HTTP port did not speak Ray)
    try:
        started = time.time()
        code, err = _cli("embed", str(corpus), "--model", "glove-6b-50d", "--ray", f"127.0.0.1:{port}")
        assert code == 2 and "No Ray cluster answered" in err and "Traceback" not in err, err
        assert time.time() - started < 60
    finally:
        listener.close()


@pytest.mark.parametrize("address", [":6379", "h" * 3000 + ":6379", "host:notaport", "host:99999"])
def test_the_cli_refuses_a_malformed_ray_address_with_a_sentence(tmp_path: Path, address: str) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("A cat sleeps.\nA dog barks.\nA bird sings.\n")
    code, err = _cli("embed", str(corpus), "--model", "glove-6b-50d", "--ray", address)
    assert code == 2 and "is not a Ray address" in err and "Traceback" not in err and "idna" not in err, err


@pytest.mark.parametrize("size", ["0", "-5", "many"])
def test_the_cli_refuses_a_bad_shard_size(tmp_path: Path, size: str) -> None:
    code, err = _cli("embed", "x.txt", "--model", "glove-6b-50d", "--shard-size", size)
    assert code == 2 and "a shard holds 1 to 1,000,000 sentences" in err and "Traceback" not in err, err


# --- Gradio's JSON endpoints (MCP) -------------------------------------------------------------------

def _echo_app() -> TestClient:
    from starlette.middleware import Middleware
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def echo(request):
        body = await request.body()
        return JSONResponse({"bytes": len(body)})

    return TestClient(Starlette(routes=[Route("/gradio_api/mcp/messages/", echo, methods=["POST"]),
                                        Route("/other", echo, methods=["POST"])],
                                middleware=[Middleware(BodyGuard, limit=1 << 20)]))


def test_a_json_rpc_message_nested_fifty_thousand_deep_gets_a_sentence() -> None:
    client = _echo_app()
    deep = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    answer = client.post("/gradio_api/mcp/messages/", content=deep)
    assert answer.status_code == 400 and f"deeper than {MAX_DEPTH} levels" in answer.json()["error"]
    plain = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"a": [[["[[[[[[["]]]}}'
    assert client.post("/gradio_api/mcp/messages/", content=plain).json() == {"bytes": len(plain)}
    assert client.post("/gradio_api/mcp/messages/", content=b"x" * (2 << 20)).status_code == 413
    assert client.post("/other", content=b"[" * 50_000).json() == {"bytes": 50_000}  # not Gradio's JSON: untouched


def test_the_launched_app_puts_the_guard_in_front_of_gradio() -> None:
    from sbert_demo.ui.app import launch_options
    from sbert_demo.ui.config_cache import SharedConfig
    from sbert_demo.ui.visitor import VisitorCookie

    middleware = launch_options()["app_kwargs"]["middleware"]
    assert [m.cls for m in middleware] == [BodyGuard, VisitorCookie, SharedConfig]  # the guard first


def test_a_web_server_is_not_taken_for_ray() -> None:
    """The app's own HTTP port answered Ray's connection for ten minutes; now the first bytes tell."""
    from http.server import HTTPServer, SimpleHTTPRequestHandler

    from sbert_demo.corpus.ray_embed import speaks_grpc

    server = HTTPServer(("127.0.0.1", 0), SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        started = time.time()
        assert not speaks_grpc(f"127.0.0.1:{server.server_address[1]}", seconds=5)
        assert time.time() - started < 6
    finally:
        server.shutdown()
