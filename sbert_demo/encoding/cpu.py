"""The CPU's feature flags, read once: what the runtime choice, the bf16 check and the int8 recipe
(:func:`.onnx_export.recipe`) ask of the machine."""

from __future__ import annotations

from ..shared import memoize


@memoize(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them (empty where /proc/cpuinfo cannot be read)."""
    try:
        for line in open("/proc/cpuinfo", encoding="ascii", errors="ignore"):
            if line.startswith(("flags", "Features")):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()
