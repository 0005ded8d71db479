"""WordLlama: a table of token vectors that ships inside its pip wheel (no download, no distillation).

WordLlama (D. Miller, 2024) trains a small table of token vectors from a large language model's
input embeddings (``l2_supercat``: the Llama 2 vocabulary, 32,000 tokens, 256 dimensions kept of a
Matryoshka-trained 1,024) with a contrastive objective on sentence pairs; a sentence is the mean of
its tokens' vectors. That is the arithmetic of the static models distilled here
(:mod:`.static`), so the wheel's own files (its safetensors table and its tokenizer JSON) load as
sentence-transformers' ``StaticEmbedding`` and run through the same encoder, caches and views. The
tests check the vectors against WordLlama's own ``WordLlamaInference.embed``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..entries import Availability, ModelEntry
from .static import StaticKind

KEY = "wordllama-l2-256"
CONFIG, DIMS = "l2_supercat", 256
FILES = (f"weights/{CONFIG}_{DIMS}.safetensors", f"tokenizers/{CONFIG}_tokenizer_config.json")
TABLE = "embedding.weight"


def package_files() -> tuple[Path, Path] | None:
    """The weights and tokenizer files inside the installed ``wordllama`` package, or None."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    weights, tokenizer = (root / name for name in FILES)
    return (weights, tokenizer) if weights.is_file() and tokenizer.is_file() else None


class WordLlamaKind(StaticKind):
    """A static table as the distilled ones (the same capabilities, batches and no token limit:
    WordLlama cuts nothing), read from the wheel instead of distilled."""
    name = "wordllama"
    description = "static embedding (WordLlama's token table, shipped in its wheel)"

    def builtin_entries(self) -> tuple[ModelEntry, ...]:
        return (ModelEntry(key=KEY, label="WordLlama (Llama 2 tokens, 256d)", family="static", kind=self.name,
                           source="wordllama", builtin=True,
                           description="A token-vector table trained from Llama 2's input embeddings, averaged: no "
                                       "transformer at inference (pip package wordllama, weights in the wheel)."),)

    def availability(self, entry: ModelEntry, registry: Any) -> Availability:
        files = package_files()
        if files is None:
            return Availability(False, f"{entry.label} needs the wordllama package (pip install wordllama: its "
                                       "weights ship in the wheel).")
        return Availability(True, location=files[0].parent.parent)

    def identity_files(self, entry: ModelEntry, status: Availability, registry: Any) -> tuple[Path, ...]:
        files = package_files()
        if files is None:
            raise ValueError(f"{entry.label} is not installed here.")
        return files

    def load(self, entry: ModelEntry, status: Availability, device: str,
             notify: Callable[[str], None] | None = None, registry: Any = None) -> Any:
        from safetensors.numpy import load_file
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
        from tokenizers import Tokenizer

        files = package_files()
        if not status.available or files is None:
            raise ValueError(status.reason or f"{entry.label} is not available.")
        weights, tokenizer = files
        # float16 in the wheel; WordLlama computes in float32 too (WordLlamaInference casts it).
        table = load_file(str(weights))[TABLE].astype("float32")
        module = StaticEmbedding(Tokenizer.from_file(str(tokenizer)), embedding_weights=table)
        return SentenceTransformer(modules=[module], device=device)

    def dimension(self, entry: ModelEntry, status: Availability) -> int | None:
        return DIMS
