"""Data: the shapes it comes in, the benchmark sets, user files and the built-in example sentences.

* :mod:`.records` — scored pairs, NLI pairs, triplets (plain records) and their ``datasets.Dataset``;
* :mod:`.benchmarks` — STS benchmark splits and NLI pairs / triplets, from local files or the Hub;
* :mod:`.tables` — the one reader of uploaded tables and the one way to find a column by name;
* :mod:`.text` — the one check of text from people (invisible-only text is blank everywhere);
* :mod:`.files` — user CSV/TSV tables of scored pairs, NLI pairs or triplets;
* :mod:`.sentences` — sentences typed in the text box or uploaded, with optional group labels;
* :mod:`.corpora` — corpora for the corpus map (.txt / .csv / .tsv / .parquet, up to 20,000
  sentences) and the built-in one (every distinct STSb sentence, labelled by source);
* :mod:`.examples` — the built-in example sentence sets.

May import: config, shared, views, formatting, hub.
"""
