"""The map view for corpora up to a million sentences: a finished corpus map published for the browser.

:mod:`.store` writes a map's points as binary arrays (coordinates, clusters, labels) beside its sentences,
under an id a link can carry, and answers what the page asks: one sentence, a selection's rows, counts
and CSV. :mod:`.compare` says, per sentence, how many of its ten nearest neighbours two models share,
and which sentences they disagree on most. The page itself (WebGL points, lasso, linked table) is
``sbert_demo/ui/assets/atlas.*``, served by :mod:`sbert_demo.ui.atlas`.

May import: config, shared, views, formatting, plot_style, hub, gpu, models, data, encoding, explore, corpus.
"""
