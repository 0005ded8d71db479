"""The STS benchmark: Spearman / Pearson of cosine similarity against gold scores, and its figures.

* :mod:`.evaluation` — :func:`~.evaluation.evaluate` one model, :func:`~.evaluation.evaluate_many` several;
* :mod:`.score_changes` — the one before/after table of a model trained here (STSb per split);
* :mod:`.plots` — Spearman bars against the SBERT paper's numbers, gold score against cosine.

May import: config, shared, views, formatting, plot_style, models, data, encoding, gpu.
"""
