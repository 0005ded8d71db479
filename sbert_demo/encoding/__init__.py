"""Texts to embeddings: where a model runs, the loaded models, and the persistent embedding cache.

* :mod:`.devices` — device, back-end and precision (CUDA / MPS / CPU; PyTorch / ONNX Runtime; bf16 / fp16 / fp32 / int8);
* :mod:`.runtime_choice` — the CPU runtime measured fastest per model and machine (kept in the cache folder);
* :mod:`.onnx_export` — ONNX artefacts (fp32 fused, int8) built once per model fingerprint, checked against PyTorch;
* :mod:`.onnx_encoder` — :class:`~.onnx_encoder.OnnxEncoder`: embeddings from an artefact, batches on every core;
* :mod:`.model_cache` — :func:`~.model_cache.load`: a registry model on its device, from a bounded LRU;
* :mod:`.encoder` — :func:`~.encoder.encode`: texts in, an L2-normalised float32 matrix out;
* :mod:`.embedding_cache` — SQLite cache of embeddings keyed by model fingerprint and text;
* :mod:`.pair_scores` — a score per sentence pair: cosine of vectors, or a pair scorer's own score;
* :mod:`.fixes` — training-free fixes (centre, all-but-the-top, whitening): fitting, applying, caching.

data: only for the sentence collection the fixes are fitted on.

May import: config, shared, views, formatting, hub, models, data, gpu.
"""
