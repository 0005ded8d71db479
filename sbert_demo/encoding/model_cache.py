"""Loaded models on a device: the bounded LRU every user of the process shares, and :func:`load`.

:func:`load` resolves an entry (:func:`sbert_demo.models.loading.resolve`), chooses the device and
precision (:mod:`sbert_demo.encoding.devices`) and returns the model from :class:`ModelCache`,
building it on first use. Each model is built once even when many users ask at the same moment.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import settings
from ..models import loading
from ..models.entries import ModelEntry
from ..models.registry import Registry
from ..shared import process_wide
from . import devices

logger = logging.getLogger(__name__)


def _size_mb(model: Any) -> float:
    try:
        tensors = [*model.parameters(), *model.buffers()]
        return sum(t.numel() * t.element_size() for t in tensors) / 2**20
    except Exception:
        return 0.0


class ModelCache:
    """A bounded LRU of loaded models, safe for concurrent users (each model is loaded once)."""

    def __init__(self, max_models: int, max_mb: int):
        self.max_models, self.max_mb = max_models, max_mb
        self._models: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}

    def get(self, identity: str, build: Callable[[], Any]) -> Any:
        with self._lock:
            if identity in self._models:
                self._models.move_to_end(identity)
                return self._models[identity][0]
            key_lock = self._loading.setdefault(identity, threading.Lock())
        with key_lock:
            with self._lock:
                if identity in self._models:
                    return self._models[identity][0]
            model = build()
            with self._lock:
                self._models[identity] = (model, _size_mb(model))
                self._loading.pop(identity, None)
                self._evict()
            return model

    def _evict(self) -> None:
        while len(self._models) > 1 and (
            len(self._models) > self.max_models or sum(mb for _, mb in self._models.values()) > self.max_mb
        ):
            identity, _ = self._models.popitem(last=False)
            logger.info("Unloaded model %s (least recently used)", identity)

    def loaded(self) -> list[str]:
        with self._lock:
            return list(self._models)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


@process_wide
def model_cache() -> ModelCache:
    """The LRU of loaded models shared by every user of the process."""
    config = settings()
    return ModelCache(config.max_loaded_models, config.max_loaded_model_mb)


@dataclass(frozen=True)
class LoadedModel:
    entry: ModelEntry
    model: Any  # SentenceTransformer
    identity: str
    device: devices.DeviceChoice


def load(entry: ModelEntry | str, registry: Registry | None = None, precision: str | None = None) -> LoadedModel:
    """Load (or fetch from the LRU) the model for ``entry`` on the automatically chosen device."""
    entry, status, identity = loading.resolve(entry, registry)
    choice = devices.current(matmul_heavy=entry.kind != "glove", precision=precision)

    def build():
        try:
            model = loading.build_model(entry, status, choice.device)
            if choice.autocast_dtype is not None:
                # Inference only: weights cast once beat autocast's per-operation casts (measured here:
                # MiniLM 802 vs 734 sentences/s, mpnet 157 vs 140, STSb Spearman unchanged to 0.01).
                model.to(choice.autocast_dtype)
            return model
        except ValueError:
            raise
        except Exception as exc:  # corrupt weights, missing tokenizer files, Hub errors ...
            logger.exception("Loading %s failed", entry.key)
            raise ValueError(f"{entry.label} could not be loaded from {status.where}: {exc}") from exc

    if identity is None:  # a Hub model not downloaded yet: download, then fingerprint the snapshot
        model = build()
        identity = loading.model_identity(entry, status) or f"hub:{status.hub_id}"
        model = model_cache().get(f"{identity}:{choice.device}:{choice.precision}", lambda: model)
    else:
        model = model_cache().get(f"{identity}:{choice.device}:{choice.precision}", build)
    return LoadedModel(entry=entry, model=model, identity=identity, device=choice)
