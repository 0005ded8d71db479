"""What models exist and how they load: the one registry everything asks.

* :mod:`.entries` — :class:`~.entries.ModelEntry` (what a model is) and
  :class:`~.entries.Availability` (whether and from where it loads now);
* :mod:`.kinds` — one object per kind of model (transformer, word vectors, sentence-transformers):
  availability, identity files, loading, training defaults and **capabilities**, and the built-in
  models; a new kind is one module and one line there;
* :mod:`.registry` — :func:`~.registry.get_registry`: built-ins, trained folders, models added at run time;
* :mod:`.local` — model folders on disk: completeness checks, model cards, where user folders may lie;
* :mod:`.assets` — models shipped inside pip packages (MiniLM, GloVe, the mpnet pieces), by name;
* :mod:`.loading` — :func:`~.loading.resolve`: a :class:`~.loading.ResolvedModel` (entry, where,
  identity) made once per request and handed down; the kind builds the model;
* :mod:`.per_model` — the one way to run something for each chosen model: one outcome shape (a value
  or a readable failure), one runner (resolve once, capability check, progress), one count check;
* :mod:`.info` — facts read from files without loading a model (embedding size);
* :mod:`.libraries` — Hugging Face's libraries imported once, one thread at a time, before a model loads.

Nothing here imports torch at import time, so listing models stays instant.

May import: config, shared, views, formatting, hub.
"""
