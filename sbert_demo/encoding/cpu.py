"""The CPU's feature flags, read once, and the cores this process may use: what the runtime choice, the bf16 check and the int8 recipe
(:func:`.onnx_export.recipe`) ask of the machine."""

from __future__ import annotations

import os

from ..shared import memoize


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says it, else every core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


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
