"""Static embeddings distilled from a sentence transformer: the step the field took after the paper.

Each token of a teacher's vocabulary is run through the teacher once, the vectors are reduced and
weighted (model2vec's recipe, :mod:`sbert_demo.models.distill`), and a sentence becomes the average
of its tokens' vectors: no transformer at inference, so encoding is a table look-up, hundreds of
times faster than the teacher, for a few points of STS. The distilled model is made on first use
(a progress message says so; ~40 s for MiniLM, ~3 min for mpnet on two CPU cores) and kept in the
cache folder (``<cache>/static/<key>/``) with the teacher's fingerprint and the recipe's version; a
retrained teacher or a new recipe makes it again. It embeds sentences, so every view takes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...config import settings
from ...formatting import about
from ..distill import PCA_DIMS, distil, distilled_from
from ..entries import Availability, ModelEntry
from ..identity import fingerprint
from .base import EMBEDS, SCORES_PAIRS, ModelKind

TEACHERS = {"static-minilm": ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2"),
            "static-mpnet": ("all-mpnet-base-v2", "all-mpnet-base-v2")}  # key -> (teacher key, short name)


class StaticKind(ModelKind):
    name = "static"
    description = "static embedding (a distilled table of token vectors)"
    capabilities = frozenset({EMBEDS, SCORES_PAIRS})
    matmul_heavy = False  # a look-up and an average: nothing for reduced precision or ONNX Runtime to speed up
    token_limited = False
    # A batch is a tokenizer call and one EmbeddingBag: measured on STSb dev (2,910 sentences, 2 cores),
    # 11,400 sentences/s in batches of 32, 28,600 in batches of 1,024 (model2vec's StaticModel: 30,600).
    batch_size = 1024
    built_on_first_load = True  # distilled from its teacher: MiniLM's 29,528 tokens, 41-45 s on a 2-core AMD EPYC
    train_fields = frozenset()

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return tuple(
            ModelEntry(key=key, label=f"Static, distilled from {short}", family="static", kind=self.name,
                       source=teacher, builtin=True,
                       description=f"{short}'s token vectors, distilled once (PCA to 256 dims, Zipf-weighted) and "
                                   "averaged: no transformer at inference.")
            for key, (teacher, short) in TEACHERS.items())

    def availability(self, entry: ModelEntry, registry: Any) -> Availability:
        """Available exactly when the teacher is (cheap: nothing is read or joined to answer)."""
        teacher = registry.get(entry.source)
        status = registry.availability(teacher)
        if not status.available:
            return Availability(False, f"{entry.label} is distilled from {teacher.label}, which cannot load here: "
                                       f"{status.reason}")
        return Availability(True, location=settings().cache_dir / "static" / entry.key)

    def _teacher(self, entry: ModelEntry, registry: Any) -> tuple[ModelEntry, Availability, tuple[Path, ...]]:
        """The teacher's entry, where it loads from (prepared: mpnet joined) and its identity files."""
        teacher = registry.get(entry.source)
        status = registry.availability(teacher)
        kind = registry.kind(teacher)
        if not status.available or status.location is None:
            raise ValueError(f"{entry.label} is distilled from a local copy of {teacher.label}; there is none here.")
        kind.prepare(teacher, status)
        return teacher, status, tuple(kind.identity_files(teacher, status, registry))

    def identity_files(self, entry: ModelEntry, status: Availability, registry: Any) -> tuple[Path, ...]:
        """The teacher's files: a retrained or reinstalled teacher makes another static model."""
        return self._teacher(entry, registry)[2]

    def load(self, entry: ModelEntry, status: Availability, device: str,
             notify: Callable[[str], None] | None = None, registry: Any = None) -> Any:
        from sentence_transformers import SentenceTransformer

        if not status.available:
            raise ValueError(status.reason or f"{entry.label} is not available.")
        folder = Path(status.location)
        teacher, teacher_status, files = self._teacher(entry, registry)
        teacher_identity = fingerprint(teacher.kind, teacher.pooling, teacher_status.location, files)
        if distilled_from(folder) != teacher_identity:
            if notify:
                notify(f"Preparing {entry.label}: distilling it from {teacher.label}'s vocabulary, once per teacher "
                       "version (minutes on a small CPU); the time left shows once the first tokens are done")
            distil(Path(teacher_status.location), folder, _counter(entry.label, notify) if notify else None,
                   teacher_identity)
        return SentenceTransformer(str(folder), device=device, local_files_only=True, trust_remote_code=False)

    def dimension(self, entry: ModelEntry, status: Availability) -> int | None:
        return PCA_DIMS


def _counter(label: str, notify: Callable[[str], None]) -> Callable[[int, int], None]:
    """A distillation's progress as a sentence with the time left, from the rate measured so far."""
    started = time.monotonic()

    def count(done: int, total: int) -> None:
        elapsed = time.monotonic() - started
        left = f", {about(elapsed / done * (total - done))} left" if done and elapsed >= 1 else ""
        notify(f"Preparing {label} (distilled once per teacher version): {done:,} / {total:,} tokens{left}")

    return count
