"""A hostile visitor's run against a running app, over HTTP only: what an independent hostile run found, repeated.

Every case of that run (issue: "No visitor reads what is not theirs"), sent the way a visitor sends it: the
page's endpoints through ``gradio_client`` (uploads included), the map view's routes with ``httpx`` or a plain
socket. The app is a black box here; the only things read on the server's side are its memory (``--pid``, for
the 1.5 GB body) and, to name the places a visitor must not read, its cache folder (``--cache``). Each case
prints ``ok`` or ``FAILED`` with what came back; the exit status is the number of failures (0: none found).

1. the Corpus map's dataset field naming server folders: a private CSV folder, a ``save_to_disk`` folder,
   Gradio's upload folder, the cache's store of visitors' corpora, the cache root, ``/etc``, ``~``, ``..``;
2. a 1.5 GB body streamed to ``/atlas/api/ID/compare/0/1`` (the server's memory before and after);
3. Latin-1 corpora: a CSV of 20,500 rows, a ``.jsonl`` of 40 (no bytes literals, no U+FFFD);
4. races: 8 simultaneous ``compare/0/1``, ``compare/1/0`` and reads of the comparison's files on a freshly
   mapped corpus;
5. numbers and places: 2**63, 10**30, -(2**63)-1 as model numbers, ``..`` and an encoded ``..`` out of a map's
   folder, a chunk numbered past any corpus, a range past the file's end, a ``.jsonl`` line nested 100,000 deep;
6. other scripts: a corpus named ``猫と犬のコーパス.csv`` keeps its name, and its texts in кошка, γάτα, éclair and
   猫 come back as they were sent (the page's word filter on them: tests/test_atlas.py, in Chromium);
7. one upload limit: a 56 MB CSV of 15,000 rows is mapped;
8. a room behind one address: 500 sentences sent to one board from 500 sessions all land;
9. a 1.5 GB body streamed to the phone page's ``/join/CODE/send`` is refused at its 4 kB limit, nothing stored (the
   server's memory before and after).

    python app.py --port 7860 &
    python scripts/hostile.py --url http://127.0.0.1:7860/ --pid <the app's pid> --cache <its cache folder>
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import select
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from gradio_client import Client, handle_file

PRIVATE = "private server note"
MODELS = ["glove-6b-50d", "wordllama-l2-256"]  # two lookup tables from their packages: maps in seconds, two to compare


class Run:
    """The app under test and what the cases found."""

    def __init__(self, url: str, pid: int | None, cache: Path | None, scratch: Path) -> None:
        self.url, self.pid, self.cache, self.scratch = url.rstrip("/") + "/", pid, cache, scratch
        self.client = Client(self.url, verbose=False, httpx_kwargs={"timeout": 600})
        self.http = httpx.Client(base_url=self.url, timeout=600)
        self.failures: list[str] = []

    def check(self, case: str, ok: bool, seen: object) -> None:
        print(f"  {'ok    ' if ok else 'FAILED'} {case}: {str(seen)[:300]}", flush=True)
        if not ok:
            self.failures.append(case)

    def map(self, source: str, path: Path | None = None, dataset: str = "",
            models: list[str] | None = None) -> tuple[list | None, str]:
        """The Corpus map tab's button: (its answer, "") or (None, the sentence it refused with)."""
        try:
            answer = self.client.predict(source, handle_file(str(path)) if path else None, None, None,
                                         models or MODELS[:1], "labels", 5, "", "words", dataset,
                                         api_name="/corpus_map")
            return answer, ""
        except Exception as refused:  # gradio_client's AppError carries the page's sentence
            return None, str(refused)

    def atlas_id(self, answer: list) -> str:
        view = next(part for part in answer if isinstance(part, str) and "atlas/?map=" in part)
        return view.split("atlas/?map=", 1)[1].split('"', 1)[0].split("&", 1)[0]

    def wait_until_quiet(self, timeout_s: float = 600) -> float:
        """Wait until the app's process is idle (under a tenth of a core over 3 s: a warm-up in the background would
        grow its memory too); the seconds waited."""
        if not self.pid:
            return 0.0
        started = time.monotonic()

        def cpu_s() -> float:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

        while time.monotonic() - started < timeout_s:
            before = cpu_s()
            time.sleep(3)
            if cpu_s() - before < 0.3:
                break
        return time.monotonic() - started

    def rss_mb(self) -> float | None:
        return rss_mb(self.pid) if self.pid else None


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"process {pid} reports no VmRSS")


def sentence_like(text: str) -> bool:
    """An answer a person can read: no traceback, no exception class named, not empty."""
    return bool(text.strip()) and "Traceback" not in text and "Error:" not in text.replace("AppError", "")


def raw_post(url: str, body: bytes | Iterable[bytes], declared: int | None = None) -> tuple[int, str]:
    """POST over a plain socket: ``body`` whole (with its length, or ``declared``), or an iterable of chunks sent one
    by one with chunked transfer encoding (never held together: a 1.5 GB body costs a chunk). Sending stops once
    the server has answered (it may refuse before the end). (status, the answer's body); status 0: no answer."""
    where = urlsplit(url)
    chunked = not isinstance(body, bytes)
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {declared or len(body)}"
    head = (f"POST {where.path} HTTP/1.1\r\nHost: {where.netloc}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nConnection: close\r\n{length}\r\n\r\n").encode()
    pieces = (b"%x\r\n%s\r\n" % (len(c), c) for c in itertools.chain(body, [b""])) if chunked else iter([body])
    answer = b""
    with socket.create_connection((where.hostname, where.port or 80), timeout=120) as connection:
        try:
            connection.sendall(head)
            for piece in pieces:
                connection.sendall(piece)
                if select.select([connection], [], [], 0)[0]:
                    break  # answered before the body was whole
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused mid-body: the server stopped reading
        try:
            while data := connection.recv(65536):
                answer += data
        except ConnectionResetError:
            pass  # the server dropped what it had not read, after its answer
    head, _, rest = answer.partition(b"\r\n\r\n")
    status = int(head.split()[1]) if head.startswith(b"HTTP/") else 0
    return status, rest.decode("utf-8", "replace")


def raw_get(url: str) -> tuple[int, str]:
    """GET a path exactly as written (``..`` and ``%2e`` left as they are, as a client that does not tidy them)."""
    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port or 80), timeout=60) as connection:
        connection.sendall(f"GET {where.path} HTTP/1.1\r\nHost: {where.netloc}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while data := connection.recv(65536):
            answer += data
    head, _, rest = answer.partition(b"\r\n\r\n")
    return (int(head.split()[1]) if head.startswith(b"HTTP/") else 0), rest.decode("utf-8", "replace")


def write_csv(path: Path, rows: Iterable[str], encoding: str = "utf-8") -> Path:
    with open(path, "w", encoding=encoding, newline="") as out:
        out.write("text\n")
        for row in rows:
            out.write(f'"{row}"\n')
    return path


# --- the cases ----------------------------------------------------------------------------------------------------

def dataset_field(run: Run) -> None:
    import datasets

    private = run.scratch / "private"
    private.mkdir()
    write_csv(private / "notes.csv", (f"{PRIVATE} {i}" for i in range(30)))
    saved = run.scratch / "saved"
    datasets.Dataset.from_dict({"text": [f"{PRIVATE} {i}" for i in range(30)]}).save_to_disk(str(saved))
    uploads = Path(os.environ.get("GRADIO_TEMP_DIR", Path(tempfile.gettempdir()) / "gradio"))
    places = {"a private folder": private, "a save_to_disk folder": saved, "Gradio's upload folder": uploads,
              "/etc": Path("/etc"), "~": "~", "..": "..", "a relative path": "data/stsbenchmark"}
    if run.cache:
        places |= {"the cache root": run.cache, "visitors' corpora": run.cache / "corpora" / "texts"}
    for name, place in places.items():
        answer, refused = run.map("dataset", dataset=str(place))
        read = answer is not None and PRIVATE in json.dumps(answer, default=str)
        run.check(f"dataset field: {name}", answer is None and sentence_like(refused) and PRIVATE not in refused,
                  "read its rows" if read else ("answered a map" if answer is not None else refused))


def giant_body(run: Run, atlas: str) -> None:
    run.http.post(f"atlas/api/{atlas}/compare/0/1")  # computed first: the body below is all that is left to answer
    waited = run.wait_until_quiet()
    before = run.rss_mb()
    chunk = b"0," * (1 << 19)  # 1 MB
    status, answer = raw_post(f"{run.url}atlas/api/{atlas}/compare/0/1",
                              itertools.chain([b'{"rows": ['], itertools.repeat(chunk, 1536)))
    after = run.rss_mb()
    grown = None if before is None else after - before
    run.check("1.5 GB body to /compare", status in (200, 413) and (grown is None or grown < 100),
              f"{status} {answer[:120]}; the server grew by {'?' if grown is None else f'{grown:.0f} MB'}"
              + (f" (measured once it was idle, {waited:.0f} s after asking)" if waited > 4 else ""))


def encodings(run: Run) -> None:
    rows = (f"café crème story {i} about a naïve señor" for i in range(20_500))
    csv = write_csv(run.scratch / "latin1.csv", rows, encoding="latin-1")
    jsonl = run.scratch / "latin1.jsonl"
    jsonl.write_bytes(b"".join(json.dumps({"text": f"café crème {i}"}, ensure_ascii=False).encode("latin-1") + b"\n"
                               for i in range(40)))
    for name, path in (("a Latin-1 CSV of 20,500 rows", csv), ("a Latin-1 .jsonl of 40 rows", jsonl)):
        answer, refused = run.map("file", path)
        shown = json.dumps(answer, default=str, ensure_ascii=False) if answer is not None else ""
        run.check(name, answer is None and sentence_like(refused) and "UTF-8" in refused,
                  refused or ("bytes literals shown" if "b'caf" in shown else
                              "U+FFFD shown" if "\ufffd" in shown else "mapped"))


def races(run: Run, atlas: str) -> None:
    asked = [("post", f"atlas/api/{atlas}/compare/0/1"), ("post", f"atlas/api/{atlas}/compare/1/0"),
             ("get", f"atlas/data/{atlas}/shared-0-1.u8")] * 8
    with ThreadPoolExecutor(len(asked)) as pool:
        answers = list(pool.map(lambda call: getattr(run.http, call[0])(call[1]), asked))
    compared = [a for a in answers[0::3] + answers[1::3]]
    failed = [f"{a.status_code} {a.text[:80]}" for a in compared if a.status_code != 200]
    read = [a for a in answers[2::3] if a.status_code == 200]  # a read before the first write ends is a 404
    whole = run.http.get(f"atlas/data/{atlas}/shared-0-1.u8").content
    same = len({a.content for a in compared}) == 1 and all(a.content == whole for a in read)
    run.check("16 simultaneous /compare and 8 reads of its file", not failed and same,
              failed or f"all 200, {'the same' if same else 'DIFFERENT'} answers; "
                        f"{len(read)} reads found the whole file, none a part")


def edges(run: Run, atlas: str) -> None:
    for number in (2**63, 10**30, -(2**63) - 1):
        answer = run.http.post(f"atlas/api/{atlas}/compare/{number}/0")
        run.check(f"/compare of model {number}", answer.status_code == 400 and sentence_like(answer.json()["error"]),
                  f"{answer.status_code} {answer.text[:120]}")
    for name, path in (("..", f"atlas/data/{atlas}/../{atlas}/neighbours-0-k10.i32"),
                       ("an encoded ..", f"atlas/data/{atlas}/%2e%2e/{atlas}/neighbours-0-k10.i32"),
                       ("a chunk past any corpus", f"atlas/data/{atlas}/texts/{10**30}.json.gz")):
        status, answer = raw_get(f"{run.url}{path}")
        run.check(f"a map's folder and {name}", status == 404, f"{status} {answer[:120]}")
    answer = run.http.get(f"atlas/data/{atlas}/points-0.f32", headers={"Range": f"bytes={10**12}-"})
    run.check("a range past the end", answer.status_code == 416, f"{answer.status_code} {answer.text[:120]}")
    deep = run.scratch / "deep.jsonl"
    deep.write_text('{"text": "a fine line"}\n{"text": ' + "[" * 100_000 + "]" * 100_000 + "}\n" +
                    "".join(f'{{"text": "line {i}"}}\n' for i in range(30)))
    answer, refused = run.map("file", deep)
    run.check("a .jsonl line nested 100,000 deep", answer is None and sentence_like(refused), refused or "mapped")


def scripts(run: Run) -> None:
    words = {"кошка": "кошка {} спит", "γάτα": "γάτα {} κοιμάται", "éclair": "éclair {} au chocolat",
             "猫": "猫 {} が好き", "cat": "cat {} sleeps on a mat"}
    corpus = write_csv(run.scratch / "猫と犬のコーパス.csv",
                       [t.format(i) for t in words.values() for i in range(12)] +
                       [f"dog {i} barks at the moon" for i in range(40)])
    answer, refused = run.map("file", corpus)
    if answer is None:
        run.check("a corpus named 猫と犬のコーパス.csv", False, refused)
        return
    atlas = run.atlas_id(answer)
    meta = run.http.get(f"atlas/data/{atlas}/meta.json").json()
    run.check("a corpus named 猫と犬のコーパス.csv", "猫と犬のコーパス" in meta.get("name", ""), meta.get("name"))
    texts = json.loads(gzip.decompress(run.http.get(f"atlas/data/{atlas}/texts/0.json.gz").content))
    for word, template in words.items():
        kept = sum(text == template.format(i) for text in texts for i in range(12))
        run.check(f"its sentences in {word}", kept == 12, f"{kept} of 12 as sent")


def upload_limit(run: Run) -> None:
    padding = " and then it went on" * 186  # ~3,740 characters a row: 15,000 rows make 56 MB
    corpus = write_csv(run.scratch / "big.csv", (f"sentence {i}{padding}" for i in range(15_000)))
    size = corpus.stat().st_size / 1e6
    answer, refused = run.map("file", corpus)
    run.check(f"a {size:.0f} MB CSV of 15,000 rows", answer is not None, refused or "mapped")


def room(run: Run) -> None:
    board = run.client.predict("glove-6b-50d", api_name="/board_create")
    code = board["code"]

    def send(i: int) -> str:
        """One phone: a session of its own (no cookie), one sentence, through the page's Send endpoint."""
        with httpx.Client(base_url=run.url, timeout=300) as phone:
            started = phone.post("gradio_api/call/board_send", json={"data": [code, f"phone {i} says hello"]})
            event = started.json()["event_id"]
            stream = phone.get(f"gradio_api/call/board_send/{event}").text
        return "ok" if "event: complete" in stream else stream[-200:]

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(send, range(500)))
    refused = [r for r in results if r != "ok"]
    state = run.client.predict(code, api_name="/board_join")
    run.check("500 phones behind one address, one sentence each", not refused and state["sentences"] == 500,
              f"{500 - len(refused)} accepted, {state['sentences']} on the board" + (f"; e.g. {refused[0]}" if refused else ""))


def phone_body(run: Run) -> None:
    """A 1.5 GB body streamed to the phone page's send: refused at its 4 kB limit, the server's memory unchanged."""
    code = run.client.predict("glove-6b-50d", api_name="/board_create")["code"]
    before = run.rss_mb()
    status, answer = raw_post(f"{run.url}join/{code}/send", itertools.chain(
        [b'{"sentence": "'], itertools.repeat(b"a" * (1 << 20), 1536)))
    grown = None if before is None else run.rss_mb() - before
    run.check("1.5 GB body to the phone page's send", status == 413 and "larger than 4 kB" in answer
              and (grown is None or grown < 100), f"{status} {answer[:120]}; the server grew by "
              f"{'?' if grown is None else f'{grown:.0f} MB'}")
    stored = run.client.predict(code, api_name="/board_join")["sentences"]
    run.check("nothing stored from it", stored == 0, f"{stored} sentences on the board")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:7860/")
    parser.add_argument("--pid", type=int, help="the app's process, to read its memory around the 1.5 GB body")
    parser.add_argument("--cache", type=Path, help="the app's cache folder, to name it and its corpora as places")
    parser.add_argument("--skip", default="", help="cases to leave out, by name: e.g. room,upload_limit")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    with tempfile.TemporaryDirectory(prefix="hostile-") as scratch:
        run = Run(args.url, args.pid, args.cache, Path(scratch))
        print(f"hostile run against {run.url}", flush=True)
        fresh = write_csv(run.scratch / "fresh.csv", (f"fresh sentence {i} about {w}" for i in range(150)
                                                      for w in ("music", "food")))
        answer, refused = run.map("file", fresh, models=MODELS)
        if answer is None:
            print(f"could not map a plain corpus with {MODELS}: {refused}")
            return 1
        atlas = run.atlas_id(answer)
        cases: list[tuple[str, Callable[[], None]]] = [
            ("dataset_field", lambda: dataset_field(run)), ("races", lambda: races(run, atlas)),
            ("giant_body", lambda: giant_body(run, atlas)), ("encodings", lambda: encodings(run)),
            ("edges", lambda: edges(run, atlas)), ("scripts", lambda: scripts(run)),
            ("upload_limit", lambda: upload_limit(run)), ("room", lambda: room(run)),
            ("phone_body", lambda: phone_body(run))]
        for name, case in cases:
            if name in skip:
                print(f"{name}: left out")
                continue
            started = time.monotonic()
            print(f"{name}:", flush=True)
            try:
                case()
            except Exception as broke:  # the run goes on; a case that could not be sent counts as found
                run.check(f"{name} (could not be sent)", False, f"{type(broke).__name__}: {broke}")
            print(f"  ({time.monotonic() - started:.0f} s)", flush=True)
        print(f"{len(run.failures)} found" + (": " + ", ".join(run.failures) if run.failures else ""))
        return len(run.failures)


if __name__ == "__main__":
    sys.exit(main())
