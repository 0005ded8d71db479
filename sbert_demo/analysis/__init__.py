"""Why naive embeddings fail, shown exactly: pair explanations, anisotropy, before/after training.

* :mod:`.tokens` — the token vectors a model's pooling sees, from the model's own pipeline;
* :mod:`.explanation` — :func:`~.explanation.explain_pair`: each token pair's share of a cosine
  (exact for mean and max pooling; leave-one-out elsewhere);
* :mod:`.anisotropy` — :func:`~.anisotropy.anisotropy`: cosines of random, similar and unrelated
  STSb pairs, the mean random cosine and the AUC separating similar from unrelated;
* :mod:`.training_effect` — a model trained here beside its base on the same sentences;
* :mod:`.plots` — their figures (pure functions of arrays and labels).

The training-free fixes themselves (``K+whiten`` ...) are registry variants:
:mod:`sbert_demo.models.variants` and :mod:`sbert_demo.encoding.fixes`.

May import: config, shared, views, formatting, plot_style, models, data, encoding, explore, benchmark, gpu.
"""
