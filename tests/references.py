"""Plain sentence-transformers' Spearman on Table 1's sets, shipped as benchmark data (tests/references.json).

The slow Table 1 checks (tests/test_table1_slow.py) compare the app's numbers with the library's own path:
``SentenceTransformer.encode`` of every distinct sentence of the sets in one call, the library's cosine of each pair,
``scipy.stats.spearmanr`` (:func:`test_table1.plain_vectors`, :func:`test_table1.plain_spearman`). Those numbers
depend only on the model's files, the sentences and the libraries, never on the app, so they are computed once and
shipped beside the tests, with what they were made from: each model's files and each set's pairs by SHA-256, the
libraries' versions and the CPU. A test run reads them instead of encoding MiniLM's seven sets (26,139 distinct
sentences) and mpnet's STSb test again on every fresh machine; the checks say when a set's pairs or a model's files
no longer match what the numbers were made from.

Made again, from nothing, by running this file (about 4 minutes on 2 cores)::

    .venv/bin/python tests/references.py

Across CPUs and library builds these numbers move by less than 0.001 (x100), far inside the checks' 0.05.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

FILE = Path(__file__).resolve().parent / "references.json"
LIBRARIES = ("sentence-transformers", "transformers", "tokenizers", "torch", "numpy", "scipy")
MODELS = {"all-MiniLM-L6-v2": "minilm", "all-mpnet-base-v2": "mpnet"}  # the model, the folder it is read from
SETS = {"all-MiniLM-L6-v2": ("sts12", "sts13", "sts14", "sts15", "sts16", "stsb", "sick-r"),
        "all-mpnet-base-v2": ("stsb",)}  # mpnet, six times slower, on STSb (the sets' reader is the same for all)


def files_digest(folder: Path) -> str:
    """SHA-256 of a model folder's files (links followed: the joined mpnet weights), by relative path."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        with open(path, "rb") as handle:
            digest.update(f"{path.relative_to(folder)}:{hashlib.file_digest(handle, 'sha256').hexdigest()}\n".encode())
    return digest.hexdigest()


def pairs_digest(name: str) -> str:
    """SHA-256 of a set's rated pairs as tests/test_table1.py reads them from data/."""
    from test_table1 import reference_pairs

    firsts, seconds, scores = reference_pairs(name)
    rows = "\n".join(f"{a}\t{b}\t{s!r}" for a, b, s in zip(firsts, seconds, scores))
    return hashlib.sha256(rows.encode()).hexdigest()


def shipped() -> dict:
    return json.loads(FILE.read_text(encoding="utf-8"))


def plain_spearman_shipped(model: str, folder: Path, names: Sequence[str]) -> dict[str, float]:
    """The shipped Spearman of plain sentence-transformers for ``model`` on ``names``, after checking that the
    model's files in ``folder`` and each set's pairs are the ones the numbers were made from."""
    data = shipped()
    entry = data["models"][model]
    again = f"they were made from other files; make them again: .venv/bin/python {Path(__file__).name}"
    assert entry["files"] == files_digest(folder), f"{model}'s shipped reference numbers: {again}"
    for name in names:
        assert data["sets"][name] == pairs_digest(name), f"{name}'s shipped reference numbers: {again}"
    return {name: entry["spearman"][name] for name in names}


def make() -> dict:
    """Every shipped number computed again from nothing, with the library's own path."""
    import platform

    import torch

    from sbert_demo.data.sts_sets import TABLE1_SETS
    from sbert_demo.encoding.devices import detect_hardware
    from sbert_demo.models import assets
    from test_table1 import plain_spearman, plain_vectors

    assert tuple(SETS["all-MiniLM-L6-v2"]) == tuple(TABLE1_SETS), "MiniLM's reference sets are Table 1's"
    torch.manual_seed(0)
    folders = {"all-MiniLM-L6-v2": assets.minilm_folder(), "all-mpnet-base-v2": assets.ensure_mpnet()}
    models = {}
    for model, names in SETS.items():
        folder = folders[model]
        vectors = plain_vectors(folder, names)  # every set's sentences in one call, as the app encodes them
        models[model] = {"files": files_digest(folder),
                         "spearman": {name: plain_spearman(name, vectors) for name in names}}
        print(model, {name: round(value * 100, 2) for name, value in models[model]["spearman"].items()}, flush=True)
    names = sorted({name for sets in SETS.values() for name in sets})
    return {"what": "Spearman of plain sentence-transformers (encode in fp32 on CPU, the library's cosine, scipy) "
                    "on each set's rated pairs, made by tests/references.py",
            "made_with": {**{name: version(name) for name in LIBRARIES}, "python": platform.python_version(),
                          "cpu": detect_hardware().cpu_name},
            "models": models, "sets": {name: pairs_digest(name) for name in names}}


if __name__ == "__main__":
    sys.path.insert(0, str(FILE.parent))
    sys.path.insert(0, str(FILE.parent.parent))
    FILE.write_text(json.dumps(make(), indent=1) + "\n", encoding="utf-8")
    print(f"written: {FILE}")
