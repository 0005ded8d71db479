"""Search by meaning in a published map's page, with a static model the map was made with.

A static model (:mod:`sbert_demo.models.kinds.static`) embeds a sentence as the normalised sum of its tokens'
rows in a table: the page can do that itself. For each such model of the map, :func:`publish_search` writes
``search/<m>/``:

* ``tokenizer.json``: the WordPiece vocabulary and the BERT normaliser's switches, for ``atlas_search.js``'s
  tokenizer (the same token ids as Hugging Face's ``tokenizers``);
* ``table.i8`` + ``table-scales.f32``: the token table in int8 with one scale per row (a quarter of fp32; the
  page's query vectors stay within cosine 0.9999 of Python's);
* ``rows.i8`` + ``row-scales.f32``: every corpus sentence's vector in int8 (256 bytes a sentence at 256
  dimensions), fetched with the first query and scored whole (int8 rescoring's recall@10 against exact fp32
  search: 0.99 and more).

:func:`search_like_the_page` scores the same way in numpy, so recall@10 against exact fp32 search is measured
where the folder is written (``bench/publish.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..atlas.store import Atlas
from ..corpus.embed import embed_corpus
from ..corpus.sources import LargeCorpus
from ..models.kinds import kind_of
from ..models.registry import get_registry

TOP = 10

Progress = Callable[[float, str], None]


def searchable(atlas: Atlas) -> list[int]:
    """The models of ``atlas`` the page can embed a query with: static models whose tokenizer it reads."""
    found = []
    for m, model in enumerate(atlas.models):
        try:
            entry = get_registry().get(model["key"])
        except (KeyError, ValueError):
            continue
        if kind_of(entry).name == "static":
            found.append(m)
    return found


def static_parts(key: str) -> tuple[dict, np.ndarray]:
    """(the tokenizer as the page reads it, the token table as float32) of the static model ``key``; a
    ValueError when its tokenizer is not a BERT WordPiece one (the page's tokenizer knows that one only)."""
    from ..encoding import model_cache

    loaded = model_cache.load(key, precision="fp32", backend="torch")
    module = loaded.model[0]
    spec = json.loads(module.tokenizer.to_str())
    normalizer, pre, model = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}, spec["model"]
    if normalizer.get("type") != "BertNormalizer" or pre.get("type") != "BertPreTokenizer" or model["type"] != "WordPiece":
        raise ValueError(f"{key}'s tokenizer is not BERT's WordPiece; the published page cannot embed with it.")
    vocab = sorted(model["vocab"].items(), key=lambda item: item[1])
    if [i for _, i in vocab] != list(range(len(vocab))):
        raise ValueError(f"{key}'s vocabulary has gaps; the published page cannot embed with it.")
    lowercase = bool(normalizer.get("lowercase", True))
    strip = normalizer.get("strip_accents")
    tokenizer = {"vocab": [token for token, _ in vocab], "unk": model["vocab"][model["unk_token"]],
                 "prefix": model.get("continuing_subword_prefix", "##"),
                 "max_chars": int(model.get("max_input_chars_per_word", 100)),
                 "lowercase": lowercase, "strip_accents": lowercase if strip is None else bool(strip),
                 "clean_text": bool(normalizer.get("clean_text", True)),
                 "chinese_chars": bool(normalizer.get("handle_chinese_chars", True))}
    table = module.embedding.weight.detach().cpu().numpy().astype(np.float32)
    return tokenizer, table


def int8_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``matrix`` as int8 rows and one float32 scale per row (the row's largest magnitude over 127)."""
    scales = np.abs(matrix).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    return np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8), scales.astype(np.float32)


def publish_search(atlas: Atlas, folder: Path, progress: Progress | None = None) -> list[int]:
    """Write the search files of each searchable model of ``atlas`` under ``folder``; the models written."""
    say = progress or (lambda fraction, what: None)
    models = searchable(atlas)
    written = []
    for done, m in enumerate(models):
        key = atlas.models[m]["key"]
        out = folder / str(m)
        out.mkdir(parents=True)
        say(done / max(1, len(models)), f"{atlas.models[m]['label']}: the token table and the tokenizer")
        tokenizer, table = static_parts(key)
        (out / "tokenizer.json").write_text(json.dumps({**tokenizer, "key": key, "dimension": table.shape[1]}),
                                            encoding="utf-8")
        quantised, scales = int8_rows(table)
        quantised.tofile(out / "table.i8")
        scales.astype("<f4").tofile(out / "table-scales.f32")
        corpus = LargeCorpus(atlas.meta["name"], atlas.texts().to_pylist(), None)
        embedded = embed_corpus(corpus, key, progress=lambda f, what: say((done + 0.8 * f) / len(models), what))
        rows, row_scales = int8_rows(embedded.matrix(np.float32))
        rows.tofile(out / "rows.i8")
        row_scales.astype("<f4").tofile(out / "row-scales.f32")
        written.append(m)
    return written


def embed_like_the_page(token_ids: list[list[int]], quantised: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Each text's vector as the page makes it: the sum of its tokens' int8 rows times their scales,
    normalised (a text with no known token: zeros)."""
    out = np.zeros((len(token_ids), quantised.shape[1]), dtype=np.float32)
    for i, ids in enumerate(token_ids):
        if ids:
            out[i] = (quantised[ids].astype(np.float32) * scales[ids, None]).sum(axis=0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


def search_like_the_page(query: np.ndarray, rows: np.ndarray, row_scales: np.ndarray, top: int = TOP) -> np.ndarray:
    """The page's search for one query vector: every sentence's int8 row times its scale against the query;
    the ``top`` rows, best first (ties by row)."""
    scores = (rows.astype(np.float32) @ query) * row_scales
    return np.argsort(-scores, kind="stable")[:top]


def recall_at(vectors: np.ndarray, queries: np.ndarray, top: int = TOP) -> float:
    """Recall@``top`` of the page's search against exact fp32 search over ``vectors`` (rows normalised)."""
    rows, scales = int8_rows(vectors)
    hits = 0
    for query in queries:
        exact = set(np.argsort(-(vectors @ query), kind="stable")[:top].tolist())
        hits += len(exact & set(search_like_the_page(query, rows, scales, top).tolist()))
    return hits / (top * len(queries))
