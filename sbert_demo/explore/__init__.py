"""Exploring one sentence set: similarities, summaries, 2-D maps, clusters and their figures.

* :mod:`.similarity` — cosine matrices, within/between-group summaries, rankings (pure numpy);
* :mod:`.projection` — UMAP / PCA maps and automatic clusters;
* :mod:`.numba_cache` — UMAP's numba kernels compiled once per machine, not once per start;
* :mod:`.map_cache` — finished maps of 1,000+ points kept on disk, keyed by the vectors themselves;
* :mod:`.exploration` — :func:`~.exploration.explore`: all of it for up to four models, as data, with
  a bounded cache of finished results;
* :mod:`.cluster_words` — each cluster's most distinctive words (class-based TF-IDF);
* :mod:`.corpus_map` — :func:`~.corpus_map.map_corpus`: a whole corpus (up to 20,000 sentences), map
  only, with named clusters and search by words or meaning;
* :mod:`.plots` — the Explore tab's figures (pure functions of arrays and labels);
* :mod:`.prepare` — :func:`~.prepare.prepare`: a machine made ready once (runtimes measured, artefacts
  built, UMAP compiled) before the first visitor;
* :mod:`.exports` — embeddings as .npy / .csv / Embedding Projector TSVs, tables as CSV, in
  temporary folders that are cleaned up.

May import: config, shared, views, formatting, plot_style, models, data, encoding, gpu.
"""
