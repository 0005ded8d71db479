"""What models exist and how they load: the one registry everything asks.

* :mod:`.entries` — :class:`~.entries.ModelEntry` (what a model is) and
  :class:`~.entries.Availability` (whether and from where it loads now); the built-in models;
* :mod:`.registry` — :func:`~.registry.get_registry`: built-ins, trained folders, models added at run time;
* :mod:`.local` — folders under ``models/``: completeness checks, user-added ids and folders;
* :mod:`.assets` — models shipped inside pip packages (MiniLM, GloVe, the mpnet pieces);
* :mod:`.loading` — entry → ``SentenceTransformer``, and the fingerprint of a model's files;
* :mod:`.info` — facts read from files without loading a model (embedding size).

Nothing here imports torch at import time, so listing models stays instant.

May import: config, shared, views, formatting, hub.
"""
