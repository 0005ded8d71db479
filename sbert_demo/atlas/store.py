"""A corpus map as the folder its page reads: written once when the map is made, served by the app as files
and copied as it is by ``publish``.

:func:`publish` writes a finished :class:`~sbert_demo.explore.corpus_map.CorpusMap` (any size: the Explore
tab's, or a million sentences from :mod:`sbert_demo.corpus.large_map`) under ``<cache>/corpora/atlas/<id>/``.
Its ``data/`` folder is everything the page (:mod:`sbert_demo.atlas.page`) reads::

    meta.json                 the corpus, its models, their cluster names (coarse: the k-means clusters' words;
                              fine: 2-D regions named by their own c-TF-IDF words, for a zoomed-in view)
    points-<m>.f32            x, y per sentence (little-endian float32, scaled into [-1, 1])
    clusters-<m>.u16  labels.u16
    field-<f>.<type>          the corpus's own columns (:mod:`sbert_demo.data.fields`): a category's codes (u8
                              up to 255 values, else u16), a number's or a date's values (days since 1970;
                              i16 where they are whole and small, else f32), each with its missing code in
                              ``meta.json``
    texts/<c>.json.gz         the sentences by chunks of :data:`CHUNK` (gzipped JSON), fetched when needed
    csv.json                  the cells a spreadsheet would run as formulas, as the CSV export writes them
    shared-<a>-<b>.u8  disagree-<a>-<b>.json    two models compared (:mod:`.compare`), once asked

Beside ``data/`` lie what only the server reads (each model's nearest neighbours). The id hashes the sentences
and every map, so the same map is written once and a link to it works after a restart. Everything a visitor's
selection asks (its table, counts per cluster, the word filter, the CSV) is computed in the page.

Example::

    >>> import numpy as np
    >>> atlas = Atlas.of_arrays("pets", ["A cat sleeps.", "A dog barks.", "Stocks fell."],
    ...                         {"demo": np.array([[0.0, 0.0], [1.0, 0.5], [4.0, 2.0]])}, {"demo": np.array([0, 0, 1])})
    >>> atlas.texts()[2], atlas.coords(0).reshape(-1, 2)[2].tolist()
    ('Stocks fell.', [1.0, 0.5])
    >>> sorted(p.name for p in atlas.data.iterdir())
    ['clusters-0.u16', 'csv.json', 'meta.json', 'points-0.f32', 'texts']
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import settings
from ..explore.exports import spreadsheet_safe
from ..formatting import MISSING
from ..shared import BoundedCache, memoize

FORMAT = "3"
CHUNK = 2000  # sentences per text file: a hover or a table page fetches one or a few (~150 KB each, ~50 gzipped)
FINE_REGIONS = 64  # named regions of the 2-D map shown when zoomed in
WORDS_SAMPLE = 60_000  # sentences read to name the fine regions
MAX_LABELS = 65_535
ID = re.compile(r"^[0-9a-f]{16,64}$")


def atlas_root() -> Path:
    return settings().cache_dir / "corpora" / "atlas"


def _unit_square(coords: np.ndarray) -> np.ndarray:
    """``coords`` moved and scaled (same factor on both axes) into [-1, 1], as float32."""
    coords = np.asarray(coords, dtype=np.float64)
    low, high = coords.min(axis=0), coords.max(axis=0)
    middle, half = (low + high) / 2, max(float((high - low).max()) / 2, 1e-9)
    return ((coords - middle) / half).astype("<f4")


def _region_labels(coords: np.ndarray, sentences: Sequence[str], regions: int = FINE_REGIONS) -> list[dict]:
    """The map cut into ``regions`` places (k-means on the 2-D points), each named by its distinctive words."""
    from sklearn.cluster import MiniBatchKMeans

    from ..corpus.clusters import cluster_names

    n = len(coords)
    if n < regions * 4:
        return []
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(n, min(n, WORDS_SAMPLE), replace=False))
    model = MiniBatchKMeans(regions, random_state=0, n_init=3, batch_size=4096).fit(coords[rows])
    labels = model.predict(coords[rows])
    words = cluster_names([sentences[i] for i in rows], labels)
    sizes = np.bincount(labels, minlength=regions) * (n / len(rows))
    return [{"x": float(x), "y": float(y), "words": list(words.get(r, ()))[:3], "size": int(sizes[r])}
            for r, (x, y) in enumerate(model.cluster_centers_) if words.get(r)]


def _centres(coords: np.ndarray, clusters: np.ndarray) -> dict[int, list[float]]:
    """Each cluster's median point: where its name is written on the map."""
    return {int(c): np.median(coords[clusters == c], axis=0).round(5).tolist() for c in np.unique(clusters)}


def _gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)  # the same bytes for the same chunk


@dataclass(frozen=True)
class Atlas:
    """A corpus map's folder: ``meta`` (the corpus, its models, their cluster names) and the files in ``data``."""

    id: str
    folder: Path
    meta: dict

    @property
    def data(self) -> Path:
        """The folder the page reads (the app serves it, ``publish`` copies it)."""
        return self.folder / "data"

    # --- writing ---------------------------------------------------------------------------------

    @classmethod
    def of_arrays(cls, name: str, sentences: Sequence[str], coords: dict[str, np.ndarray],
                  clusters: dict[str, np.ndarray], words: dict[str, dict] | None = None,
                  labels: Sequence[str] | None = None, label_name: str | None = None,
                  models: dict[str, dict] | None = None, root: Path | None = None, fields: Sequence = ()) -> Atlas:
        """Write sentences with per model (key → array) 2-D points and clusters; returns the atlas."""
        if not sentences:
            raise ValueError("There are no sentences to publish.")
        digest = hashlib.sha256(f"{FORMAT}|{name}".encode())
        for sentence in sentences:
            digest.update(sentence.encode("utf-8", "surrogatepass") + b"\n")
        for key in coords:
            digest.update(key.encode() + np.ascontiguousarray(coords[key], dtype="<f4").tobytes()
                          + np.ascontiguousarray(clusters[key], dtype="<i4").tobytes())
        if labels is not None:
            digest.update("\n".join(map(str, labels)).encode("utf-8", "surrogatepass"))
        shown = [f for f in fields if f.kind in ("category", "number", "date")]  # text is no facet: said in meta
        for found in shown:
            digest.update(f"{found.name}|{found.kind}|{found.categories}".encode("utf-8", "surrogatepass")
                          + np.ascontiguousarray(found.values).tobytes())
        atlas_id = digest.hexdigest()[:24]
        folder = (root or atlas_root()) / atlas_id
        if (folder / "data" / "meta.json").is_file():
            return open_atlas(atlas_id, root)
        work = folder.with_name(f".{atlas_id}.{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        data = work / "data"
        (data / "texts").mkdir(parents=True)
        entries = []
        for m, key in enumerate(coords):
            unit = _unit_square(coords[key])
            groups = np.asarray(clusters[key], dtype=np.int64)
            unit.tofile(data / f"points-{m}.f32")
            np.clip(groups, 0, MAX_LABELS).astype("<u2").tofile(data / f"clusters-{m}.u16")
            named = {int(c): list(w) for c, w in (words or {}).get(key, {}).items()}
            sizes = np.bincount(np.clip(groups, 0, None))
            entries.append({"label": key, "family": "", "method": "", **(models or {}).get(key, {}), "key": key,
                            "k": int(groups.max()) + 1,
                            "clusters": [{"cluster": c, "words": named.get(c, [])[:4], "x": xy[0], "y": xy[1],
                                          "size": int(sizes[c])} for c, xy in _centres(unit, groups).items()],
                            "regions": _region_labels(unit, sentences)})
        label_names = None
        if labels is not None:
            label_names = list(dict.fromkeys(map(str, labels)))
            if len(label_names) > MAX_LABELS:
                raise ValueError(f"The corpus has {len(label_names):,} different labels; the map colours up to "
                                 f"{MAX_LABELS:,}.")
            index = {label: i for i, label in enumerate(label_names)}
            np.fromiter((index[str(label)] for label in labels), dtype="<u2", count=len(labels)).tofile(
                data / "labels.u16")
        _write_texts(data, sentences, label_names or [], label_name, shown)
        meta = {"format": FORMAT, "id": atlas_id, "name": name, "n": len(sentences), "chunk": CHUNK,
                "label_name": label_name, "labels": label_names, "models": entries,
                "fields": [_write_field(data, f, found) for f, found in enumerate(shown)],
                "fields_left": [found.describe() for found in fields if found.kind == "text"]}
        (data / "meta.json").write_text(json.dumps(meta), encoding="utf-8")  # last: a folder with it is complete
        try:
            os.replace(work, folder)
        except OSError:  # another process wrote the same map first
            shutil.rmtree(work, ignore_errors=True)
        return open_atlas(atlas_id, root)

    # --- reading ---------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return int(self.meta["n"])

    @property
    def models(self) -> list[dict]:
        return self.meta["models"]

    def model_index(self, m: object) -> int:
        try:
            m = int(m)
        except (TypeError, ValueError):
            m = -1
        if not 0 <= m < len(self.models):
            raise ValueError(f"This map has {len(self.models)} model(s); ask for one numbered 0 to "
                             f"{len(self.models) - 1}.")
        return m

    def coords(self, m: int) -> np.ndarray:
        """Model ``m``'s points as float32 x, y, x, y ... in [-1, 1] (what the page draws)."""
        return np.fromfile(self.data / f"points-{self.model_index(m)}.f32", dtype="<f4")

    def clusters(self, m: int) -> np.ndarray:
        return np.fromfile(self.data / f"clusters-{self.model_index(m)}.u16", dtype="<u2")

    def labels(self) -> np.ndarray | None:
        path = self.data / "labels.u16"
        return np.fromfile(path, dtype="<u2") if path.is_file() else None

    def field(self, f: int) -> np.ndarray:
        """The map's column ``f`` as :mod:`sbert_demo.data.fields` keeps it: a category's codes as uint16
        (65,535: none), a number's or a date's values as float64 (NaN: none)."""
        about = self.meta["fields"][f]
        dtype, none = FIELD_TYPES[about["type"]]
        stored = np.fromfile(self.data / about["file"], dtype=dtype)
        if about["kind"] == "category":
            return np.where(stored == none, 65_535, stored.astype(np.uint16)).astype(np.uint16)
        values = stored.astype(np.float64)
        return values if none is None else np.where(stored == none, np.nan, values)

    def texts(self) -> list[str]:
        """Every sentence, in row order (read from the page's chunks once, then kept for a few maps)."""
        return _texts(str(self.data), self.n)


# A column's values in the fewest bytes that hold them, and the code that says "none": a category's codes in
# one byte up to 255 values; a number's or a date's in two where every value is whole and small (a year, a
# rating, a day), else float32 with NaN for none.
FIELD_TYPES = {"u8": ("<u1", 255), "u16": ("<u2", 65_535), "i16": ("<i2", -32_768), "f32": ("<f4", None)}


def _field_type(found) -> str:
    if found.kind == "category":
        return "u8" if len(found.categories) < 255 else "u16"
    known = found.values[~np.isnan(found.values)]
    whole = bool(known.size) and np.all(known == np.round(known)) and np.all(np.abs(known) <= 32_767)
    return "i16" if whole else "f32"


def _write_field(data: Path, f: int, found) -> dict:
    """One of the corpus's columns as the page reads it (``field-<f>.<type>``, :data:`FIELD_TYPES`) and what it
    is: a category's values and counts, a number's or a date's least and largest value."""
    kind = _field_type(found)
    dtype, none = FIELD_TYPES[kind]
    about = {"name": found.name, "kind": found.kind, "missing": found.missing, "note": found.note,
             "file": f"field-{f}.{kind}", "type": kind, "none": none}
    if found.kind == "category":
        values = np.where(found.values == 65_535, none, found.values)
        values.astype(dtype).tofile(data / about["file"])
        known = found.values[found.values != 65_535]
        return {**about, "categories": list(found.categories),
                "counts": np.bincount(known, minlength=len(found.categories)).tolist()}
    values = found.values if none is None else np.where(np.isnan(found.values), none, found.values)
    values.astype(dtype).tofile(data / about["file"])
    known = found.values[~np.isnan(found.values)]
    return {**about, "min": float(known.min()), "max": float(known.max())}


def _write_texts(data: Path, sentences: Sequence[str], label_names: list[str], label_name: str | None,
                 fields: Sequence = ()) -> None:
    """The sentences by chunks of :data:`CHUNK` (gzipped JSON: a third of the bytes), and the cells the CSV export
    writes otherwise than shown (``csv.json``: text a spreadsheet would run as a formula, kept as text)."""
    unsafe: dict[str, str] = {}
    for start in range(0, len(sentences), CHUNK):
        chunk = list(sentences[start:start + CHUNK])
        (data / "texts" / f"{start // CHUNK}.json.gz").write_bytes(
            _gzipped(json.dumps(chunk, ensure_ascii=False).encode("utf-8", "surrogatepass")))
        for row, text in enumerate(chunk, start):
            safe = spreadsheet_safe(text)
            if safe != text:
                unsafe[str(row)] = safe
    csv = {"rows": unsafe, "labels": [spreadsheet_safe(name) for name in label_names], "missing": MISSING,
           "label_name": label_name or "label",
           "fields": [[spreadsheet_safe(value) for value in found.categories] for found in fields],
           "field_names": [spreadsheet_safe(found.name) for found in fields]}
    (data / "csv.json").write_text(json.dumps(csv, ensure_ascii=False), encoding="utf-8")


@memoize(maxsize=4)
def _texts(data: str, n: int) -> list[str]:
    texts: list[str] = []
    for c in range(-(-n // CHUNK)):
        texts += json.loads(gzip.decompress((Path(data) / "texts" / f"{c}.json.gz").read_bytes()))
    return texts


@memoize(maxsize=16)
def _meta(folder: str) -> dict:
    return json.loads((Path(folder) / "data" / "meta.json").read_text(encoding="utf-8"))


def open_atlas(atlas_id: object, root: Path | None = None) -> Atlas:
    """The map ``atlas_id``, or a ValueError that says it is not (or no longer) here."""
    if not isinstance(atlas_id, str) or not ID.match(atlas_id):
        raise ValueError("That is not a map's id: open the map from Explore → Corpus map.")
    folder = (root or atlas_root()) / atlas_id
    try:
        meta = _meta(str(folder))
    except (OSError, ValueError):
        raise ValueError("This map is not on this server (its cache may have been cleared): map the corpus again "
                         "in Explore → Corpus map.") from None
    return Atlas(atlas_id, folder, meta)


published: BoundedCache[int, tuple] = BoundedCache("published corpus maps", 8)


def publish(result) -> Atlas:
    """Write a finished corpus map (:class:`~sbert_demo.explore.corpus_map.CorpusMap`): its succeeded models.
    The same result object asked again (a search linking into the view) is not hashed again: a million
    sentences take seconds to hash."""
    kept = published.get(id(result))
    if kept is not None and kept[0] is result:
        return kept[1]
    atlas = _publish(result)
    published.put(id(result), (result, atlas))
    return atlas


def _publish(result) -> Atlas:
    models = result.succeeded
    if not models:
        raise ValueError("No model could map the corpus, so there is nothing to show.")
    corpus = result.corpus
    return Atlas.of_arrays(
        corpus.name, corpus.sentences, {m.key: m.coords for m in models},
        {m.key: m.clustering.labels for m in models}, {m.key: m.cluster_words for m in models},
        labels=corpus.labels, label_name=corpus.label_name,
        models={m.key: {"label": m.label, "family": m.family, "method": m.method} for m in models},
        fields=getattr(corpus, "fields", ()))
