"""A persistent compile cache for UMAP's numba kernels, so only the first start ever compiles them.

umap-learn (and pynndescent under it) compile their numba functions the first time a map is made:
~50 s on a 2-core AMD EPYC, after *every* start, because most of umap's ``@numba.njit`` functions
are declared without ``cache=True``. numba can cache any dispatcher that has not compiled yet
(``Dispatcher.enable_caching``), so :func:`enable` turns caching on for every such function in the
loaded umap and pynndescent modules, with the cache in the app's cache folder
(``<SBERT_DEMO_CACHE>/numba``). numba checks each cached entry against the function's source file
and the CPU, so an upgraded library or another machine recompiles instead of loading stale code.
Functions numba cannot cache (closures over dynamic globals) just compile as before.
"""

from __future__ import annotations

import logging
import sys
import threading

from ..config import settings
from ..shared import BoundedCache

logger = logging.getLogger(__name__)

_PACKAGES = ("umap", "pynndescent")
_lock = threading.Lock()
enabled_for: BoundedCache[str, bool] = BoundedCache("numba cache folder in use", 1)


def enable() -> int:
    """Import umap with caching on for its uncompiled numba functions; the number of functions."""
    with _lock:
        folder = settings().cache_dir / "numba"
        if str(folder) in enabled_for:
            return 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
            import numba

            numba.config.CACHE_DIR = str(folder)  # read when a function's cache is created, below
            import umap  # noqa: F401  (imports pynndescent too)
            from numba.core.dispatcher import Dispatcher
        except (ImportError, OSError) as exc:
            logger.info("UMAP kernels are not cached across starts: %s", exc)
            return 0
        count = 0
        for name, module in list(sys.modules.items()):
            if module is None or name.split(".")[0] not in _PACKAGES:
                continue
            for value in list(vars(module).values()):
                if isinstance(value, Dispatcher) and not value.overloads and type(value._cache).__name__ == "NullCache":
                    try:
                        value.enable_caching()
                        count += 1
                    except Exception:  # e.g. defined in a notebook or a closure: compiled per start
                        pass
        enabled_for.put(str(folder), True)
        logger.info("numba compile cache for %d UMAP functions in %s", count, folder)
        return count


def compiled_here() -> bool:
    """Whether UMAP's kernels were compiled into this cache folder already (files only; imports nothing)."""
    folder = settings().cache_dir / "numba"
    return folder.is_dir() and any(folder.rglob("*.nbi"))
