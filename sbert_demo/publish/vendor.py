"""ONNX Runtime Web, vendored into a published folder: the page runs a transformer's graph with it, loading
nothing from anywhere else (no CDN).

The package comes from npm once per machine (``npm pack``, the version and its sha512 pinned below) into the
cache (``<cache>/vendor/onnxruntime-web-<version>/``); only the three files the page needs are kept: the wasm
build's script (``ort.wasm.min.js``), its loader and its WebAssembly (single-threaded SIMD; the page asks for
more threads only where the host sends cross-origin isolation headers). ``SBERT_DEMO_ORT_WEB`` may name the
package's tarball (``onnxruntime-web-<version>.tgz``) on a machine with no npm; it is checked the same way.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "onnxruntime-web"
VERSION = "1.30.0"
INTEGRITY = "sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAfKYQ=="
FILES = ("ort.wasm.min.js", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
LICENSE = (f"{PACKAGE} {VERSION} (https://www.npmjs.com/package/{PACKAGE}), MIT License, "
           "Copyright (c) Microsoft Corporation. The files here are the package's dist/ files, unchanged.\n")


def onnxruntime_web(cache_dir: Path) -> Path:
    """The folder holding :data:`FILES` (and ``LICENSE``), fetched and checked once per machine; a ValueError
    saying what is missing when neither npm nor ``SBERT_DEMO_ORT_WEB`` can provide the package."""
    folder = Path(cache_dir) / "vendor" / f"{PACKAGE}-{VERSION}"
    if all((folder / name).is_file() for name in FILES):
        return folder
    with tempfile.TemporaryDirectory(prefix="ort-web-") as scratch:
        tarball = _tarball(Path(scratch))
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=_parent(folder)))
        try:
            with tarfile.open(tarball, "r:gz") as archive:
                for name in FILES:
                    member = archive.getmember(f"package/dist/{name}")
                    source = archive.extractfile(member)
                    if source is None:
                        raise ValueError(f"The {PACKAGE} package has no dist/{name}.")
                    with source, open(staging / name, "wb") as out:
                        shutil.copyfileobj(source, out)
            (staging / "LICENSE").write_text(LICENSE, encoding="utf-8")
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(staging, folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def _parent(folder: Path) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    return folder.parent


def _tarball(scratch: Path) -> Path:
    named = os.environ.get("SBERT_DEMO_ORT_WEB", "").strip()
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise ValueError(f"SBERT_DEMO_ORT_WEB names {path}, which is not a file; name {PACKAGE}-{VERSION}.tgz.")
    else:
        npm = shutil.which("npm")
        if npm is None:
            raise ValueError(f"Searching with a transformer in the page needs {PACKAGE} {VERSION} from npm, and npm "
                             f"is not installed here: install Node.js, or set SBERT_DEMO_ORT_WEB to the package's "
                             f"tarball (npm pack {PACKAGE}@{VERSION}).")
        done = subprocess.run([npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(scratch), "--silent"],
                              capture_output=True, text=True, timeout=600)
        found = sorted(scratch.glob("*.tgz"))
        if done.returncode != 0 or not found:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ValueError(f"npm could not fetch {PACKAGE} {VERSION} ({last}); the page can search with the static "
                             f"model only. Set SBERT_DEMO_ORT_WEB to the package's tarball on a machine without "
                             f"the registry.")
        path = found[0]
    digest = "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()
    if digest != INTEGRITY:
        raise ValueError(f"{path.name} is not {PACKAGE} {VERSION} as published on npm (its sha512 differs).")
    return path
