"""The map view for corpora up to a million sentences: a map's folder and the page that reads it.

:mod:`.store` writes a finished map, once, as the files its page reads (points, clusters and labels as binary
arrays, the sentences in chunks, cluster names) under an id a link can carry. :mod:`.compare` adds, per pair
of models, how many of each sentence's ten nearest neighbours they share and which sentences they disagree
on most. :mod:`.page` holds the page itself (``assets/``: WebGL points, lasso, linked table, and the one
module that computes a selection's table, counts, word filter and CSV), which the app serves beside the
folder (:mod:`sbert_demo.ui.atlas`) and ``publish`` copies beside a copy of it.

May import: config, shared, views, formatting, plot_style, hub, gpu, models, data, encoding, explore, corpus.
"""
