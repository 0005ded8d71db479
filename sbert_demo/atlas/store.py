"""A corpus map published for the map view: binary arrays a browser draws, and the sentences it asks for.

:func:`publish` writes a finished :class:`~sbert_demo.explore.corpus_map.CorpusMap` (any size: the
Explore tab's, or a million sentences from :mod:`sbert_demo.corpus.large_map`) under
``<cache>/corpora/atlas/<id>/``: per model ``coords-<m>.f32`` (x, y interleaved, little-endian float32,
scaled into [-1, 1]), ``clusters-<m>.u16``, the cluster names and where to write them (coarse: the
k-means clusters' words; fine: 2-D regions named by their own c-TF-IDF words, for a zoomed-in view),
the given labels as ``labels.u16`` and ``texts.parquet``. The id hashes the sentences and every map,
so the same map is published once and a link to it works after a restart.

:class:`Atlas` reads it back and answers the page: a sentence by row, a selection's rows (paged,
filtered by words), its count per cluster under each model, and its CSV (formula-like text kept as
text). Points never travel with their text: the page fetches a sentence when it is hovered.

Example::

    >>> import numpy as np
    >>> atlas = Atlas.of_arrays("pets", ["A cat sleeps.", "A dog barks.", "Stocks fell."],
    ...                         {"demo": np.array([[0.0, 0.0], [1.0, 0.5], [4.0, 2.0]])}, {"demo": np.array([0, 0, 1])})
    >>> atlas.sentence(2)["text"], atlas.coords(0).reshape(-1, 2)[2].tolist()
    ('Stocks fell.', [1.0, 0.5])
    >>> [(row["cluster"], row["count"]) for row in atlas.counts(np.array([0, 1]))[0]["clusters"]]
    [(0, 2)]
"""

from __future__ import annotations

import csv
import hashlib
import io
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

FORMAT = "1"
FINE_REGIONS = 64  # named regions of the 2-D map shown when zoomed in
WORDS_SAMPLE = 60_000  # sentences read to name the fine regions
PAGE_MAX = 200
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


def _unspaced(character: str) -> bool:
    """Whether ``character`` is of a script written without spaces between words (Chinese, Japanese, Thai ...)."""
    import unicodedata

    return unicodedata.name(character, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER"))


def word_start(word: str) -> str:
    """An RE2 pattern (Arrow's regex) for ``word`` at the start of a word, in every script: RE2's ``\\b`` knows
    ASCII letters only, so "кошка", "γάτα" and "éclair" never matched after it. Scripts without spaces match
    anywhere."""
    escaped = re.escape(word)
    return escaped if _unspaced(word[0]) else rf"(?:^|[^\p{{L}}\p{{N}}\p{{M}}_]){escaped}"


@dataclass(frozen=True)
class Atlas:
    """A published map: ``meta`` (the corpus, its models, their cluster names) and its folder's arrays."""

    id: str
    folder: Path
    meta: dict

    # --- writing ---------------------------------------------------------------------------------

    @classmethod
    def of_arrays(cls, name: str, sentences: Sequence[str], coords: dict[str, np.ndarray],
                  clusters: dict[str, np.ndarray], words: dict[str, dict] | None = None,
                  labels: Sequence[str] | None = None, label_name: str | None = None,
                  models: dict[str, dict] | None = None, root: Path | None = None) -> Atlas:
        """Publish sentences with per model (key → array) 2-D points and clusters; returns the atlas."""
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
        atlas_id = digest.hexdigest()[:24]
        folder = (root or atlas_root()) / atlas_id
        if (folder / "meta.json").is_file():
            return open_atlas(atlas_id, root)
        work = folder.with_name(f".{atlas_id}.{os.getpid()}")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        entries = []
        for m, key in enumerate(coords):
            unit = _unit_square(coords[key])
            groups = np.asarray(clusters[key], dtype=np.int64)
            unit.tofile(work / f"coords-{m}.f32")
            np.clip(groups, 0, MAX_LABELS).astype("<u2").tofile(work / f"clusters-{m}.u16")
            named = {int(c): list(w) for c, w in (words or {}).get(key, {}).items()}
            centres = _centres(unit, groups)
            sizes = np.bincount(np.clip(groups, 0, None))
            entries.append({"label": key, "family": "", "method": "", **(models or {}).get(key, {}), "key": key, "k": int(groups.max()) + 1,
                            "clusters": [{"cluster": c, "words": named.get(c, [])[:4], "x": xy[0], "y": xy[1],
                                          "size": int(sizes[c])} for c, xy in centres.items()],
                            "regions": _region_labels(unit, sentences)})
        label_names = None
        if labels is not None:
            label_names = list(dict.fromkeys(map(str, labels)))
            if len(label_names) > MAX_LABELS:
                raise ValueError(f"The corpus has {len(label_names):,} different labels; the map colours up to "
                                 f"{MAX_LABELS:,}.")
            index = {label: i for i, label in enumerate(label_names)}
            np.fromiter((index[str(label)] for label in labels), dtype="<u2", count=len(labels)).tofile(
                work / "labels.u16")
        _write_texts(work / "texts.parquet", sentences)
        meta = {"format": FORMAT, "id": atlas_id, "name": name, "n": len(sentences), "label_name": label_name,
                "labels": label_names, "models": entries}
        (work / "meta.json").write_text(json.dumps(meta), encoding="utf-8")  # last: a folder with it is complete
        try:
            os.replace(work, folder)
        except OSError:  # another process published the same map first
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

    def _array(self, name: str, dtype: str) -> np.ndarray:
        return np.fromfile(self.folder / name, dtype=dtype)

    def coords(self, m: int) -> np.ndarray:
        """Model ``m``'s points as float32 x, y, x, y ... in [-1, 1] (what the page draws)."""
        return self._array(f"coords-{self.model_index(m)}.f32", "<f4")

    def clusters(self, m: int) -> np.ndarray:
        return self._array(f"clusters-{self.model_index(m)}.u16", "<u2")

    def labels(self) -> np.ndarray | None:
        path = self.folder / "labels.u16"
        return np.fromfile(path, dtype="<u2") if path.is_file() else None

    def texts(self):
        return _texts(str(self.folder / "texts.parquet"))

    def check_rows(self, rows: object) -> np.ndarray:
        """``rows`` as sorted distinct row numbers of this corpus, or a ValueError that says what is wrong."""
        try:
            rows = np.asarray(rows, dtype=np.int64).ravel()
        except (TypeError, ValueError, OverflowError):
            raise ValueError("A selection is a list of sentence numbers (whole numbers from 0).") from None
        if rows.size and (rows.min() < 0 or rows.max() >= self.n):
            raise ValueError(f"Sentence numbers run from 0 to {self.n - 1:,}; "
                             f"{int(rows.max() if rows.max() >= self.n else rows.min()):,} is not one of them.")
        return np.unique(rows)

    def _label_of(self, rows: np.ndarray) -> list[str | None]:
        labels = self.labels()
        names = self.meta.get("labels") or []
        return [None] * len(rows) if labels is None else [names[int(v)] for v in labels[rows]]

    def sentence(self, row: object) -> dict:
        """One sentence with its label and its cluster (and the cluster's words) under each model."""
        if isinstance(row, bool):
            raise ValueError("A sentence number is a whole number.")
        (row,) = self.check_rows([row])
        text = self.texts().take([int(row)]).to_pylist()[0]
        clusters = []
        for m, model in enumerate(self.models):
            cluster = int(self.clusters(m)[row])
            words = next((c["words"] for c in model["clusters"] if c["cluster"] == cluster), [])
            clusters.append({"cluster": cluster, "words": words})
        return {"row": int(row), "text": text, "label": self._label_of(np.array([row]))[0], "clusters": clusters}

    def matching(self, rows: np.ndarray, query: str) -> np.ndarray:
        """The rows whose sentence has every word of ``query`` (any case)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        words = re.findall(r"\w+", query.lower())  # RE2 folds case itself (simple folding)
        if not words or not len(rows):
            return rows
        taken = self.texts().take(pa.array(rows))
        keep = np.ones(len(rows), dtype=bool)
        for word in words:
            keep &= np.asarray(pc.match_substring_regex(taken, word_start(word), ignore_case=True)
                               .fill_null(False).to_numpy(zero_copy_only=False))
        return rows[keep]

    def counts(self, rows: np.ndarray) -> list[dict]:
        """Per model: the selection's sentences per cluster (largest first), with each cluster's words and size."""
        out = []
        for m, model in enumerate(self.models):
            found = np.bincount(self.clusters(m)[rows], minlength=model["k"]) if len(rows) else np.zeros(model["k"])
            about = {c["cluster"]: c for c in model["clusters"]}
            order = [int(c) for c in np.argsort(-found, kind="stable") if found[c]]
            out.append({"model": model["label"], "clusters": [
                {"cluster": c, "count": int(found[c]), "size": about.get(c, {}).get("size", 0),
                 "words": about.get(c, {}).get("words", [])} for c in order]})
        return out

    def selection(self, rows: object, page: int = 0, size: int = 50, query: str = "") -> dict:
        """A selection as the page's table shows it: its size, one page of its rows (after the word filter)
        and its counts per cluster under each model."""
        rows = self.check_rows(rows)
        size = max(1, min(int(size), PAGE_MAX))
        shown = self.matching(rows, query or "")
        pages = max(1, -(-len(shown) // size))
        page = max(0, min(int(page), pages - 1))
        chosen = shown[page * size:(page + 1) * size]
        texts = self.texts().take(chosen).to_pylist() if len(chosen) else []
        clusters = [self.clusters(m)[chosen] for m in range(len(self.models))]
        labels = self._label_of(chosen)
        table = [{"row": int(r), "text": t, "label": labels[i], "clusters": [int(c[i]) for c in clusters]}
                 for i, (r, t) in enumerate(zip(chosen, texts))]
        return {"count": int(len(rows)), "matching": int(len(shown)), "page": page, "pages": pages, "rows": table,
                "counts": self.counts(rows)}

    def csv(self, rows: object) -> str:
        """The selection as CSV: row, sentence, label, each model's cluster (formula-like text kept as text)."""
        rows = self.check_rows(rows)
        if not len(rows):
            raise ValueError("Select some sentences first (lasso or box on a map), then export them.")
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["row", "sentence", self.meta.get("label_name") or "label",
                         *[f"cluster ({m['label']})" for m in self.models]])
        labels = self._label_of(rows)
        clusters = [self.clusters(m)[rows] for m in range(len(self.models))]
        for i, (row, text) in enumerate(zip(rows, self.texts().take(rows).to_pylist())):
            writer.writerow([int(row), spreadsheet_safe(text), spreadsheet_safe(labels[i] or MISSING),
                             *[int(c[i]) for c in clusters]])
        return out.getvalue()


def _write_texts(path: Path, sentences: Sequence[str]) -> None:
    """The sentences in row order (labels live in ``labels.u16``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": pa.array(list(sentences), type=pa.large_string())}), path)


@memoize(maxsize=4)
def _texts(path: str):
    import pyarrow.parquet as pq

    return pq.read_table(path).column("text").combine_chunks()


@memoize(maxsize=16)
def _meta(folder: str) -> dict:
    return json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8"))


def open_atlas(atlas_id: object, root: Path | None = None) -> Atlas:
    """The published map ``atlas_id``, or a ValueError that says it is not (or no longer) here."""
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
    """Publish a finished corpus map (:class:`~sbert_demo.explore.corpus_map.CorpusMap`): its succeeded models.
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
        models={m.key: {"label": m.label, "family": m.family, "method": m.method} for m in models})
