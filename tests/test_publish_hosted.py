"""Published where it is really hosted.

* Hugging Face's rules at any corpus size: at most 10,000 entries a folder and fewer than 100,000 files in all,
  checked on the layout a million-sentence map with two searchable models is written in (the writers publish
  uses, with empty rows: file names and counts, no real embedding);
* the talk without npm: its QR code drawn by segno from the site's address, or said and shown as the address
  (the whole npm-less ``publish --talk`` runs in tests/test_talk_browser.py, on a machine that kept the talk).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.publish.folder import HUB_FILES_LIMIT, HUB_FOLDER_LIMIT, layout
from sbert_demo.publish.search import FILES_PER_FOLDER, ROWS_CHUNK, chunk_name, write_chunks, write_tokens
from sbert_demo.atlas.store import CHUNK

N = 1_000_000


def test_a_million_sentence_site_keeps_every_folder_within_the_hubs_limits(tmp_path: Path) -> None:
    site = tmp_path / "site"
    texts = site / "data" / "texts"
    texts.mkdir(parents=True)
    for chunk in range(math.ceil(N / CHUNK)):  # the sentences, as the map's folder names them (atlas/store.py)
        (texts / f"{chunk}.json.gz").touch()
    minilm, static = site / "search" / "1", site / "search" / "0"
    minilm.mkdir(parents=True)
    static.mkdir(parents=True)
    write_chunks(np.zeros((N, 1), dtype=np.int8), minilm, "rows")  # MiniLM's int8 rows, 64 sentences a file
    write_chunks(np.zeros((30_522, 1), dtype=np.int8), minilm, "words")  # its word table
    write_tokens([[]] * N, static)  # a static model's token ids, 64 sentences a file
    chunks = math.ceil(N / ROWS_CHUNK)
    assert chunks == 15_625  # flat, 15,625 files in one folder: past the Hub's 10,000
    largest, where, files = layout(site)
    assert largest <= FILES_PER_FOLDER <= HUB_FOLDER_LIMIT, (largest, where)
    assert files == math.ceil(N / CHUNK) + 2 * chunks + math.ceil(30_522 / ROWS_CHUNK) < HUB_FILES_LIMIT
    assert (minilm / chunk_name("rows", chunks - 1, ".i8")).stat().st_size == N - (chunks - 1) * ROWS_CHUNK
    assert (static / chunk_name("tokens", 0, ".u16")).read_bytes() == bytes(4 * (ROWS_CHUNK + 1))  # offsets only
    assert sorted(p.name for p in (minilm / "rows").iterdir()) == sorted(str(f) for f in range(16))


def test_the_page_finds_a_chunk_where_the_writer_put_it() -> None:
    """The page's rule (atlas_search.js, chunkFile) is the writer's (chunk_name), with the count it reads from
    tokenizer.json."""
    script = (Path(__file__).resolve().parents[1] / "sbert_demo" / "atlas" / "assets" / "atlas_search.js").read_text()
    assert "`${kind}/${Math.floor(chunk / (model.tokenizer.per_folder || 1000))}/${chunk}${suffix}`" in script
    assert FILES_PER_FOLDER == 1000
    for chunk in (0, 999, 1000, 15_624):
        assert chunk_name("rows", chunk, ".i8") == f"rows/{math.floor(chunk / FILES_PER_FOLDER)}/{chunk}.i8"


@pytest.mark.parametrize("site_url", ["https://example.org/talk-site/", None])
def test_without_npm_the_talks_qr_code_is_drawn_here_or_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            site_url: str | None) -> None:
    from sbert_demo.publish import talk

    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no npm, and no package vendored in this test's cache
    site = tmp_path / "site"
    (site / "talk").mkdir(parents=True)
    said: list[str] = []
    drawn = talk._qr_code(site, site / "talk", site_url, lambda f, what: None, said.append)
    if site_url:
        assert drawn == "qr.svg" and said == []
        svg = (site / "talk" / "qr.svg").read_text(encoding="utf-8")
        assert svg.startswith("<?xml") and "<svg" in svg
    else:
        assert drawn is None and not (site / "talk" / "qr.svg").exists()
        assert said and "npm is not installed here" in said[0] and "--site-url" in said[0]
    page = (talk.ASSETS / "talk_site.html").read_text(encoding="utf-8")
    assert "qrcode.js" not in talk._without(page, talk.QR_SCRIPTS) and "talk_site.js" in talk._without(page, talk.QR_SCRIPTS)


def test_the_bench_corpus_stops_reading_once_it_has_its_sentences(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build_corpus reads its sources in turn and stops at --sentences (it read every source whole first, 590 s
    for 100,000), and writes one Parquet file the app's upload takes."""
    import sys

    import pyarrow.parquet as pq
    from conftest import script

    build = script("build_corpus")
    read: dict[str, int] = {}

    def source(name: str, count: int):
        for i in range(count):
            read[name] = i + 1
            yield name, f"The {name.replace('_', ' ')} source says sentence number {i} plainly."

    assert [label for label, _ in build.interleaved([source("a", 2), source("b", 4)])] == ["a", "b", "a", "b", "b", "b"]
    for name in ("wordnet", "man_pages", "perl_pods", "fortunes", "docstrings", "html_manuals"):
        monkeypatch.setattr(build, name, lambda name=name: source(name, 10**9))  # endless: only a stop ends it
    monkeypatch.setattr(build, "dictionary", lambda name: source(f"dict-{name}", 10**9))
    monkeypatch.setattr(sys, "argv", ["build_corpus.py", "--sentences", "900", "--out", str(tmp_path / "corpus")])
    build.main()
    table = pq.read_table(tmp_path / "corpus" / "corpus.parquet")
    assert table.num_rows == 900 and table.column_names == ["text", "source"]
    assert list(tmp_path.joinpath("corpus").iterdir()) == [tmp_path / "corpus" / "corpus.parquet"]
    assert len(set(table.column("source").to_pylist())) == 9 and max(read.values()) <= 101  # a hundred from each
