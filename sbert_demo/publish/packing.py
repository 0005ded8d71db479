"""Large files a published page fetches whole, stored gzipped: the page unpacks them itself
(``DecompressionStream``, ``atlas_data.js``'s ``gunzipped``), so the folder and the visitor's download are
smaller on any host, whether or not it compresses what it serves (ONNX Runtime Web's WebAssembly: 14.2 MB,
3.7 MB gzipped; MiniLM's graph for the page: 11.7 MB, 10.3 MB).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.bin").write_bytes(b"abc" * 1000)
    >>> packed = gzip_file(folder / "a.bin")
    >>> packed.name, (folder / "a.bin").exists(), gzip.decompress(packed.read_bytes()) == b"abc" * 1000
    ('a.bin.gz', False, True)
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path


def gzip_file(source: Path, target: Path | None = None) -> Path:
    """``source`` gzipped into ``target`` (by default beside it, ``.gz`` added, and ``source`` removed); the same
    bytes for the same file (no time stamp in the header). Returns the gzipped file's path."""
    out = target or source.with_name(source.name + ".gz")
    with open(source, "rb") as raw, open(out, "wb") as handle, \
            gzip.GzipFile(filename="", mode="wb", fileobj=handle, compresslevel=9, mtime=0) as packed:
        shutil.copyfileobj(raw, packed, 1 << 20)
    if target is None:
        source.unlink()
    return out
