"""A cache folder for one bench run that shares what this machine prepared once (ONNX and OpenVINO artefacts,
joined models, runtime decisions, compiled UMAP) and starts with nothing else: no embeddings, shards or maps."""

from __future__ import annotations

from pathlib import Path

PREPARED = ("onnx", "openvino", "models", "runtime", "numba", "fixes", "static")


def link_prepared(cache: Path, parts: tuple[str, ...] = PREPARED) -> Path:
    """Link ``parts`` of this machine's cache folder (those that exist) into ``cache``; return ``cache``."""
    from sbert_demo.config import settings

    cache.mkdir(parents=True, exist_ok=True)
    for part in parts:
        source = settings().cache_dir / part
        if source.exists() and not (cache / part).exists():
            (cache / part).symlink_to(source, target_is_directory=True)
    return cache
