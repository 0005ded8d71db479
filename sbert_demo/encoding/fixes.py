"""Training-free fixes for anisotropic embeddings: fitting and applying the linear maps.

Naive sentence vectors (averaged GloVe, plain BERT) crowd into a narrow cone: every pair has a high
cosine. Three post-processing steps, fitted on a sentence collection without any labels, open the
cone (keys and their meaning: :mod:`sbert_demo.models.variants`):

* center:  x - μ
* abttD:   (x - μ) minus its projection on the top D principal directions (Mu & Viswanath 2018)
* whiten:  (x - μ) · U · diag(1/√s), U, s from the SVD of the covariance (Su et al. 2021);
  whitenN keeps the first N columns.

They are fitted on the L2-normalised vectors :func:`~.encoder.encode` returns: with the STSb
train sentences (both columns, all 11,498, duplicates kept) that recipe gives GloVe STSb test
Spearman 58.31 / 61.07 / 63.72 (centre / abtt3 / whiten), against 55.60 without a fix. The maps
are a few lines of numpy (scikit-learn's PCA(whiten=True) divides by √(s) too, but centres per
call and cannot do all-but-the-top); fitted maps are cached on disk per base-model fingerprint and
fitting collection, and in memory.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import settings
from ..data.benchmarks import sts_split
from ..data.sentences import read_sentence_file
from ..models.variants import Fix, parse_fix
from ..shared import BoundedCache

logger = logging.getLogger(__name__)

MIN_FIT_SENTENCES = 10
MAX_FIT_SENTENCES = 50_000
_MEMORY = 32  # fitted maps kept in memory


@dataclass(frozen=True)
class FittedFix:
    """``apply(x) = normalise((x - mean) @ matrix)``; ``matrix`` None means the identity."""

    name: str
    mean: np.ndarray  # (dim,)
    matrix: np.ndarray | None  # (dim, out_dim)
    fitted_on: int  # number of sentences
    collection: str = ""  # what they were, e.g. "STSb train"

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """The fixed vectors, L2-normalised.

        Every row goes through the map, the all-zero vector of a text with no known word included
        (it becomes the direction of -mean): that is how the reference numbers were measured.
        """
        vectors = np.asarray(vectors, dtype=np.float64)
        out = vectors - self.mean
        if self.matrix is not None:
            out = out @ self.matrix
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 1e-12)
        return out.astype(np.float32)


@dataclass(frozen=True)
class Moments:
    """What every fix is fitted from: the collection's mean and covariance (rows as given, duplicates
    and all-zero rows kept). Computed once per model and collection and shared by its fixes."""

    mean: np.ndarray  # (dim,)
    covariance: np.ndarray  # (dim, dim), ddof=1 as np.cov
    n: int

    @classmethod
    def of(cls, vectors: np.ndarray) -> Moments:
        vectors = np.asarray(vectors, dtype=np.float64)
        if vectors.ndim != 2:
            raise ValueError("Fitting a fix needs one vector per sentence.")
        n = len(vectors)
        mean = vectors.mean(axis=0) if n else np.zeros(vectors.shape[1])
        centred = vectors - mean
        return cls(mean, centred.T @ centred / max(n - 1, 1), n)


def fit(fix: Fix | str, vectors: np.ndarray | Moments, collection: str = "") -> FittedFix:
    """Fit ``fix`` on ``vectors`` (one row per sentence of ``collection``), or on their :class:`Moments`.

    abtt's top directions are the covariance's top eigenvectors (the top right singular vectors of the
    centred rows: the same directions, without a second pass over the rows); whiten uses the SVD of
    the covariance (Su et al. 2021's recipe).

    >>> x = np.random.default_rng(0).normal(size=(500, 4)) * [1, 2, 3, 4] + 5
    >>> w = fit("whiten", x)
    >>> np.round(np.cov((x - w.mean) @ w.matrix, rowvar=False), 6).tolist() == np.eye(4).tolist()
    True
    """
    fix = parse_fix(fix) if isinstance(fix, str) else fix
    moments = vectors if isinstance(vectors, Moments) else Moments.of(vectors)
    n, dim = moments.n, len(moments.mean)
    # Rows of sentences with no known word (all zero) stay in: the reference numbers keep all 11,498.
    if n < MIN_FIT_SENTENCES:
        raise ValueError(f"Fitting {fix.name} needs at least {MIN_FIT_SENTENCES} sentences; there are {n}.")
    if fix.dims is not None and fix.dims > dim:
        raise ValueError(f"{fix.name} asks for {fix.dims} dimensions, but the model's vectors have {dim}.")
    matrix = None
    if fix.kind == "abtt":
        _, vectors_by_value = np.linalg.eigh(moments.covariance)  # ascending eigenvalues
        top = vectors_by_value[:, ::-1][:, : fix.dims].T
        matrix = np.eye(dim) - top.T @ top  # removes the projection on the top directions
    elif fix.kind == "whiten":
        u, s, _ = np.linalg.svd(moments.covariance)
        matrix = u / np.sqrt(np.maximum(s, 1e-12))
        if fix.dims is not None:
            matrix = matrix[:, : fix.dims]
    return FittedFix(fix.name, moments.mean, matrix, n, collection)


def fit_collection() -> tuple[str, list[str]]:
    """``(name, sentences)`` the fixes are fitted on: ``SBERT_DEMO_FIT_SENTENCES`` (a .txt/.csv/.tsv
    sentence file) when set, else both columns of the STS benchmark's train split."""
    path = settings().fit_sentences
    if path is not None:
        parsed = read_sentence_file(path, max_sentences=MAX_FIT_SENTENCES, max_chars=2000)
        return path.name, parsed.sentences
    train = sts_split("train")
    return "STSb train", [*train.sentences1, *train.sentences2]


def collection_id(sentences: Sequence[str]) -> str:
    """A short fingerprint of a fitting collection (order and duplicates count)."""
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(sentence.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:16]


fitted_fixes: BoundedCache[str, FittedFix] = BoundedCache("fitted training-free fixes", _MEMORY)
# A model's moments on the fitting collection: its three fixes (and any abttD / whitenN) share one
# encoding of the collection and one pass over its vectors.
fitted_moments: BoundedCache[str, Moments] = BoundedCache("moments of fitting collections", 8)


def cached_fit(key: str, build: Callable[[], FittedFix]) -> FittedFix:
    """The fitted map under ``key``: from memory, else from its ``.npz`` file under the cache folder,
    else ``build()`` (once, however many users ask) and written there."""
    return fitted_fixes.get_or_build(f"{settings().cache_dir}|{key}", lambda: _read(key) or _write(key, build()))


def _path(key: str) -> Path:
    return settings().cache_dir / "fixes" / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.npz"


def _read(key: str) -> FittedFix | None:
    path = _path(key)
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["key"]) != key or "collection" not in data:  # another key, or older code's file
                return None
            matrix = data["matrix"] if data["matrix"].size else None
            return FittedFix(str(data["name"]), data["mean"], matrix, int(data["fitted_on"]),
                             str(data["collection"]))
    except FileNotFoundError:
        return None
    except Exception as exc:  # a damaged file: fit again
        logger.warning("Ignoring the damaged fitted fix %s (%s)", path, exc)
        return None


def _write(key: str, fitted: FittedFix) -> FittedFix:
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{threading.get_ident()}.tmp.npz")
        np.savez(temporary, key=key, name=fitted.name, mean=fitted.mean, fitted_on=fitted.fitted_on,
                 collection=fitted.collection,
                 matrix=fitted.matrix if fitted.matrix is not None else np.zeros(0))
        temporary.replace(path)
    except OSError as exc:  # read-only or full cache folder: keep it in memory only
        logger.warning("Could not store the fitted fix in %s (%s)", path.parent, exc)
    return fitted
