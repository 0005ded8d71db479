"""sbert-demo: explore why siamese sentence embeddings (SBERT) beat naive ones.

Layers, lowest first; a module imports only from its own layer or lower ones (``tests/test_layout.py``
checks every import, lazy ones included, and that the core never imports gradio):

* foundation: :mod:`.config` (settings, built once: flags, then the environment, then defaults),
  :mod:`.shared` (the one cache primitive and the list of all process-wide state), :mod:`.views` (each
  view's default models and limits, declared once), :mod:`.formatting` (numbers as people read them),
  :mod:`.hub` (is the Hugging Face Hub reachable), :mod:`.plot_style` (the palette, the look of figures);
* :mod:`.models` — what models exist, one object per kind of model, and the one per-model runner;
  :mod:`.data` — benchmark data, user files (one table reader, one text check), example sentences;
* :mod:`.encoding` — texts to embeddings: device and precision, loaded models, the embedding cache;
* :mod:`.explore` — similarities, maps and clusters of a sentence set; :mod:`.benchmark` — STS evaluation;
* :mod:`.training` — SBERT fine-tuning runs and background jobs;
* leaves: :mod:`.ui` (the Gradio app, one module per tab) and :mod:`.cli` (``python -m sbert_demo``).

May import: nothing (each subpackage says what it may import).
"""

__version__ = "0.1.0"
