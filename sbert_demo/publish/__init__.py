"""Publishing for free: a corpus map as a static folder any web server (a free Static Space, GitHub Pages,
``python -m http.server``) serves, with no Python behind it.

* :mod:`.site` writes the folder: the map view's page and script, every file its server would have
  answered from (points, clusters, labels, sentences in chunks, shared neighbours, where models disagree);
  what depends on a visitor's selection (the table, its counts, the CSV) is computed in the page.
* :mod:`.search` adds search by meaning in the page for a static model of the map: the tokenizer's vocabulary,
  the model's token table and the corpus's vectors in int8.

The page's own files are the map view's (``sbert_demo/ui/assets/atlas*``), copied as they are.

May import: config, shared, views, formatting, plot_style, hub, gpu, models, data, encoding, explore, corpus, atlas.
"""
