"""Search by meaning in a published map's page: the query embedded in the page, the corpus searched there.

Two kinds of model can embed a query in the page (:func:`searchable`):

* a **static model** (:mod:`sbert_demo.models.kinds.static`): the normalised sum of its tokens' rows in a
  table. ``search/<m>/`` holds ``table.i8`` + ``table-scales.f32`` (the token table in int8, one scale per row:
  a quarter of fp32; the page's query vectors stay within cosine 0.9999 of Python's);
* a **transformer** small enough for the page (MiniLM; :data:`GRAPH_LIMIT_MB`): the app's own ONNX int8 graph
  (:mod:`sbert_demo.encoding.onnx_export`) run by ONNX Runtime Web (:mod:`.vendor`, wasm, vendored into the
  folder): the same vectors as the app's int8 path. Its word table (int8, a row a token) is taken out of the
  graph (:func:`web_graph`) into chunks the page fetches for a query's tokens only: ``model.onnx.gz`` is
  10 MB for MiniLM, not 24.

Both read ``tokenizer.json``: the WordPiece vocabulary, the BERT normaliser's switches and, for a transformer,
its special tokens and token limit (the same token ids as Hugging Face's ``tokenizers``).

The corpus's vectors (the map's own: :func:`~sbert_demo.corpus.embed.embed_corpus` reads them from the cache)
are shipped compactly, as sentence-transformers' embedding quantisation does:

* ``bits.u8``: one bit a dimension (the sign), fetched with the first query: a first pass scores every
  sentence by the float query against its signs and keeps :data:`CANDIDATES`;
* the candidates are scored again (rescoring) and the best :data:`TOP` kept, from files fetched by chunks of
  :data:`ROWS_CHUNK` sentences, only for the candidates: a transformer's vectors in int8 (``rows/<f>/<c>.i8``,
  scored by cosine with the int8 row itself, so no scale is shipped); a static model's sentences as token ids
  (``tokens/<f>/<c>.u16``), which the page embeds as it embeds the query (a tenth of the bytes, and the query's own vectors: no quantisation between them).

``bench/publish.py`` measures the page's own answers against exact fp32 search (recall@10).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..atlas.store import Atlas
from ..corpus.embed import embed_corpus
from ..corpus.sources import LargeCorpus
from ..encoding.quantise import int8_rows
from ..models.kinds import kind_of
from ..models.registry import get_registry

TOP = 10
CANDIDATES = 100  # the binary pass keeps ten times the answer for int8 rescoring
ROWS_CHUNK = 64  # int8 rows per file: rescoring 100 candidates fetches at most 100 small files (25 KB at 384-d)
# Chunk files per folder (``rows/<c // FILES_PER_FOLDER>/<c>.i8``): a million sentences make 15,625 chunks, and a
# Hugging Face repository takes at most 10,000 files in a folder; the page reads it from tokenizer.json.
FILES_PER_FOLDER = 1000
GRAPH_LIMIT_MB = 40  # a transformer whose graph the page downloads (MiniLM's: 12 MB; mpnet's, several times that, is not)
TRANSFORMERS = ("sentence-transformers", "transformer")

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class Searchable:
    """A model of the map the page can embed a query with: ``engine`` is "static" or "graph"."""
    m: int
    key: str
    engine: str


def searchable(atlas: Atlas) -> list[Searchable]:
    """The models of ``atlas`` the page can embed a query with: static models, and transformers (a
    sentence-transformers model the app exports to ONNX) with a BERT WordPiece tokenizer."""
    found = []
    for m, model in enumerate(atlas.models):
        try:
            entry = get_registry().get(model["key"])
        except (KeyError, ValueError):
            continue
        kind = kind_of(entry).name
        if kind == "static":
            found.append(Searchable(m, model["key"], "static"))
        elif kind in TRANSFORMERS and not entry.fix:
            found.append(Searchable(m, model["key"], "graph"))
    return found


def wordpiece(spec: dict, key: str) -> dict:
    """The page's tokenizer from a Hugging Face ``tokenizer.json`` (parsed); a ValueError when it is not BERT's
    WordPiece (the page's tokenizer knows that one only)."""
    normalizer, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec["model"]
    if normalizer.get("type") != "BertNormalizer" or pre.get("type") != "BertPreTokenizer" or model["type"] != "WordPiece":
        raise ValueError(f"{key}'s tokenizer is not BERT's WordPiece; the published page cannot embed with it.")
    vocab = sorted(model["vocab"].items(), key=lambda item: item[1])
    if [i for _, i in vocab] != list(range(len(vocab))):
        raise ValueError(f"{key}'s vocabulary has gaps; the published page cannot embed with it.")
    lowercase = bool(normalizer.get("lowercase", True))
    strip = normalizer.get("strip_accents")
    return {"vocab": [token for token, _ in vocab], "unk": model["vocab"][model["unk_token"]],
            "prefix": model.get("continuing_subword_prefix", "##"),
            "max_chars": int(model.get("max_input_chars_per_word", 100)),
            "lowercase": lowercase, "strip_accents": lowercase if strip is None else bool(strip),
            "clean_text": bool(normalizer.get("clean_text", True)),
            "chinese_chars": bool(normalizer.get("handle_chinese_chars", True))}


def special_tokens(spec: dict, key: str) -> tuple[int, int]:
    """The ids a single sentence is wrapped in ([CLS] … [SEP]), from the tokenizer's post-processor."""
    post = spec.get("post_processor") or {}
    if post.get("type") == "BertProcessing":
        return int(post["cls"][1]), int(post["sep"][1])
    if post.get("type") == "TemplateProcessing":
        single = post.get("single") or []
        names = [part["SpecialToken"]["id"] for part in single if "SpecialToken" in part]
        sequence = [i for i, part in enumerate(single) if "Sequence" in part]
        if len(names) == 2 and sequence == [1] and len(single) == 3:
            ids = [post["special_tokens"][name]["ids"] for name in names]
            if all(len(found) == 1 for found in ids):
                return int(ids[0][0]), int(ids[1][0])
    raise ValueError(f"{key}'s tokenizer wraps a sentence in a way the published page does not know.")


def static_parts(key: str) -> tuple[dict, np.ndarray, Any]:
    """(the tokenizer as the page reads it, the token table as float32, the Hugging Face tokenizer) of the
    static model ``key``."""
    from ..encoding import model_cache

    loaded = model_cache.load(key, precision="fp32", backend="torch")
    module = loaded.model[0]
    table = module.embedding.weight.detach().cpu().numpy().astype(np.float32)
    return wordpiece(json.loads(module.tokenizer.to_str()), key), table, module.tokenizer


def int8_graph(key: str) -> Path:
    """The folder of the app's checked ONNX int8 artefact of ``key`` (built if needed), as the app runs it."""
    from ..encoding import model_cache

    loaded = model_cache.load(key, precision="int8", backend="onnx")
    folder = getattr(loaded.model, "folder", None)
    if loaded.device.backend != "onnx" or folder is None:
        raise ValueError(f"{key} has no ONNX int8 graph here (it runs on {loaded.device.backend}); "
                         "the published page cannot embed with it.")
    return Path(folder)


def web_graph(source: Path, out: Path) -> tuple[dict, int]:
    """Write the app's int8 graph in ``source`` (:mod:`sbert_demo.encoding.onnx_export`) to ``out`` for the page:
    the same graph, its word table (int8, one scale a row, dequantised in the graph) taken out of it into
    ``words/<f>/<c>.i8`` (:data:`ROWS_CHUNK` rows a file) + ``word-scales.f32``, and the table's dequantised rows
    a graph input of the same name instead: the page fetches the rows of a query's tokens only and gives
    the graph a table of those rows, the ids renumbered into it (MiniLM: 12 MB of graph to download instead
    of 24; the same vectors, since the rows are dequantised exactly as the graph did). A graph whose word table
    is not such a table is copied whole. Returns (the tokenizer as the page reads it, with its special tokens,
    token limit and word-table layout; the graph's dimension)."""
    import onnx
    from onnx import helper, numpy_helper

    from ..encoding.onnx_encoder import GRAPH, MANIFEST

    manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    spec = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    key = manifest.get("key", source.parent.name)
    tokenizer = {**wordpiece(spec, key), "max_tokens": int(manifest["max_seq_length"])}
    tokenizer["cls"], tokenizer["sep"] = special_tokens(spec, key)
    model = onnx.load(str(source / GRAPH))
    graph = model.graph
    users = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    tables = [node for node in graph.node if node.op_type == "DequantizeLinear" and node.name.endswith(".dequantise")
              and [user.op_type for user in users.get(node.output[0], [])] in (["Gather"], ["EmbedLayerNormalization"])]
    if len(tables) != 1:
        shutil.copyfile(source / GRAPH, out / "model.onnx")
        return tokenizer, int(manifest["dimension"])
    node = tables[0]
    weights = {init.name: init for init in graph.initializer}
    rows, scales = (numpy_helper.to_array(weights[name]) for name in node.input[:2])
    scales.astype("<f4").tofile(out / "word-scales.f32")
    write_chunks(rows, out, "words")
    for name in node.input:
        graph.initializer.remove(weights[name])
    graph.node.remove(node)
    graph.input.append(helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, ["words", rows.shape[1]]))
    onnx.save(model, str(out / "model.onnx"))
    return {**tokenizer, "word_input": node.output[0], "words": int(rows.shape[0]),
            "word_dimension": int(rows.shape[1])}, int(manifest["dimension"])


def sign_bits(matrix: np.ndarray) -> np.ndarray:
    """One bit a dimension, set where the value is above 0, packed 8 to a byte (the first dimension the high bit)."""
    return np.packbits(matrix > 0, axis=1)


def publish_search(atlas: Atlas, site: Path, progress: Progress | None = None,
                   skipped: Callable[[str], None] | None = None) -> list[int]:
    """Write the search files of each searchable model of ``atlas`` under ``site/search/`` (and ONNX Runtime
    Web under ``site/vendor/`` for a transformer); the models written, static ones first. A model the page
    cannot embed with is left out and ``skipped`` hears why, in a sentence."""
    from ..config import settings
    from .packing import gzip_file
    from .vendor import ONNXRUNTIME_WEB, copy_into, vendored

    say = progress or (lambda fraction, what: None)
    models = searchable(atlas)
    texts = atlas.texts() if models else []  # read once for every model
    written = []
    for done, model in enumerate(models):
        label = atlas.models[model.m]["label"]
        out = site / "search" / str(model.m)
        out.mkdir(parents=True)
        say(done / max(1, len(models)), f"{label}: what the page embeds a query with")
        try:
            if model.engine == "static":
                tokenizer, table, hf_tokenizer = static_parts(model.key)
                if len(tokenizer["vocab"]) > 2**16:
                    raise ValueError(f"{label}'s vocabulary has more than 65,536 tokens; the page cannot search with it.")
                table_rows, table_scales = int8_rows(table)
                table_rows.tofile(out / "table.i8")
                table_scales.astype("<f4").tofile(out / "table-scales.f32")
                dimension = table.shape[1]
            else:
                waiting = lambda what, done=done: say(done / len(models), what)  # noqa: E731
                vendored(ONNXRUNTIME_WEB, settings(), waiting)  # before the graph: without it, no search
                tokenizer, dimension = web_graph(int8_graph(model.key), out)
                if (out / "model.onnx").stat().st_size > GRAPH_LIMIT_MB * 1e6:
                    raise ValueError(f"{label}'s graph is {(out / 'model.onnx').stat().st_size / 1e6:,.0f} MB, more "
                                     f"than a page should download to search ({GRAPH_LIMIT_MB} MB).")
                gzip_file(out / "model.onnx")  # the page unpacks it
                copy_into(ONNXRUNTIME_WEB, settings(), site / "vendor")
        except ValueError as exc:
            shutil.rmtree(out)
            if skipped:
                skipped(str(exc))
            continue
        (out / "tokenizer.json").write_text(json.dumps({**tokenizer, "key": model.key, "engine": model.engine,
                                                        "per_folder": FILES_PER_FOLDER,
                                                        "dimension": dimension}), encoding="utf-8")
        embedded = embed_corpus(LargeCorpus(atlas.meta["name"], texts, None), model.key,
                                progress=lambda f, what, done=done: say((done + 0.8 * f) / len(models), what))
        vectors = embedded.matrix(np.float32)
        sign_bits(vectors).tofile(out / "bits.u8")
        if model.engine == "static":  # rescored from their tokens, embedded in the page as the query is
            write_tokens([e.ids for e in hf_tokenizer.encode_batch(texts, add_special_tokens=False)], out)
        else:
            write_rows(vectors, out)
        written.append(model)
    return [model.m for model in sorted(written, key=lambda model: model.engine != "static")]  # the lightest first


def first_download(site: Path, m: int) -> int:
    """Bytes the page downloads before its first answer with model ``m`` (the chunks of rows it rescores with
    not counted): what the search menu tells a visitor."""
    from .vendor import ONNXRUNTIME_WEB

    folder = site / "search" / str(m)
    files = [p for p in folder.iterdir() if p.is_file()]  # the rescoring's and the word table's chunks are in folders
    if (folder / "model.onnx.gz").is_file():
        files += [site / "vendor" / name for name in ONNXRUNTIME_WEB.published()]
    return sum(p.stat().st_size for p in files)


def write_rows(vectors: np.ndarray, out: Path) -> None:
    """The corpus's vectors in int8 for rescoring: ``rows/<f>/<c>.i8`` (:data:`ROWS_CHUNK` a file). No scales: the
    page scores a candidate by the cosine of the query with its int8 row (a row's scale divides out), 4 bytes a
    sentence fewer (4 MB at a million)."""
    write_chunks(int8_rows(vectors)[0], out, "rows")


def chunk_name(kind: str, chunk: int, suffix: str) -> str:
    """Where chunk ``chunk`` of ``kind`` (rows, tokens, words) lies in a model's search folder: at most
    :data:`FILES_PER_FOLDER` files a folder, at any corpus size.

    >>> chunk_name("rows", 15_624, ".i8")
    'rows/15/15624.i8'
    """
    return f"{kind}/{chunk // FILES_PER_FOLDER}/{chunk}{suffix}"


def write_chunks(rows: np.ndarray, out: Path, kind: str) -> None:
    """int8 ``rows`` by files of :data:`ROWS_CHUNK` (``out/<kind>/<f>/<c>.i8``, :func:`chunk_name`: what the page
    fetches when it needs a row)."""
    for start in range(0, len(rows), ROWS_CHUNK):
        path = out / chunk_name(kind, start // ROWS_CHUNK, ".i8")
        path.parent.mkdir(parents=True, exist_ok=True)
        rows[start : start + ROWS_CHUNK].tofile(path)


def write_tokens(token_ids: list[list[int]], out: Path) -> None:
    """A static model's corpus for rescoring: each sentence's token ids, :data:`ROWS_CHUNK` sentences a file
    (``tokens/<f>/<c>.u16``: the chunk's ``count + 1`` offsets as uint32, then the ids as uint16), about 26 bytes
    a sentence where its int8 vector would take one a dimension."""
    for start in range(0, len(token_ids), ROWS_CHUNK):
        chunk = token_ids[start : start + ROWS_CHUNK]
        offsets = np.cumsum([0] + [len(ids) for ids in chunk]).astype("<u4")
        ids = np.fromiter((i for row in chunk for i in row), dtype="<u2", count=int(offsets[-1]))
        path = out / chunk_name("tokens", start // ROWS_CHUNK, ".u16")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(offsets.tobytes())
            handle.write(ids.tobytes())
