"""Texts to embeddings: where a model runs, the loaded models, and the persistent embedding cache.

* :mod:`.devices` — device and numeric precision (CUDA / MPS / CPU; bf16 / fp16 / fp32);
* :mod:`.model_cache` — :func:`~.model_cache.load`: a registry model on its device, from a bounded LRU;
* :mod:`.encoder` — :func:`~.encoder.encode`: texts in, an L2-normalised float32 matrix out;
* :mod:`.embedding_cache` — SQLite cache of embeddings keyed by model fingerprint and text.

May import: config, shared, hub, models.
"""
