"""Reference vectors from plain sentence-transformers, kept per machine and reused while nothing they depend on
changed.

The slow Table 1 checks compare the app's numbers with the library's own path: ``SentenceTransformer.encode`` of
every distinct sentence of the sets (tests/test_table1.py :func:`plain_vectors`). Those vectors depend only on the
model's files, the sentences, the libraries that encode them, this CPU and the reference code, never on the app, so
they are kept outside the clone (``$SBERT_DEMO_TEST_REFERENCES``, by default
``~/.cache/sbert-demo/test-references``) in a file named after the SHA-256 of all of those. A second run on the same
machine reads them instead of encoding the sets again (MiniLM's seven sets: 26,139 sentences); any change to the
model, the data, a library, the CPU or tests/test_table1.py encodes them again from nothing. The app's side of each
check is computed in every run. A file is written under a temporary name and renamed into place, so a half-written
one is never read; for each model and set list only the newest file is kept.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path

import numpy as np

CODE = Path(__file__).resolve().parent / "test_table1.py"  # the reference's reader and encoding
LIBRARIES = ("sentence-transformers", "transformers", "tokenizers", "torch", "numpy")


def references_root() -> Path:
    return Path(os.environ.get("SBERT_DEMO_TEST_REFERENCES")
                or Path.home() / ".cache" / "sbert-demo" / "test-references")


def _key(folder: Path, sentences: Sequence[str]) -> str:
    from sbert_demo.encoding.devices import detect_hardware
    from sbert_demo.encoding.runtime_choice import machine_identity

    digest = hashlib.sha256()
    for name in LIBRARIES:
        digest.update(f"{name}=={version(name)}\n".encode())
    digest.update(machine_identity(detect_hardware()).encode())  # the CPU, its flags and threads, as the app names it
    digest.update(CODE.read_bytes())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):  # links followed: the joined mpnet weights
        with open(path, "rb") as handle:
            digest.update(f"{path.relative_to(folder)}:{hashlib.file_digest(handle, 'sha256').hexdigest()}".encode())
    digest.update("\n".join(sentences).encode())
    return digest.hexdigest()[:16]


def kept_vectors(label: str, folder: Path, sentences: Sequence[str],
                 encode: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
    """``encode(sentences)`` (one float32 row per sentence) as kept on this machine for the model in ``folder``,
    encoded and kept where there is no file for what they depend on (module docstring). ``label`` names the
    model and sets in the file's name."""
    root = references_root()
    path = root / f"{label}-{_key(folder, sentences)}.npy"
    try:
        vectors = np.load(path)
        if vectors.shape[0] == len(sentences) and np.isfinite(vectors).all():
            return vectors
    except (OSError, ValueError):  # none kept yet, or a file that cannot be read: encoded again below
        pass
    vectors = np.asarray(encode(sentences), dtype=np.float32)
    root.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    with open(partial, "wb") as handle:
        np.save(handle, vectors)
    os.replace(partial, path)
    for older in root.glob(f"{label}-*.npy"):
        if older != path:
            older.unlink(missing_ok=True)
    return vectors
