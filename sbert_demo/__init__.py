"""sbert-demo: explore why siamese sentence embeddings (SBERT) beat naive ones.

The core package (registry, encoders, caches, STS evaluation, training, plots) never imports
gradio; the web app lives in :mod:`sbert_demo.ui` and the command line in :mod:`sbert_demo.cli`.
"""

__version__ = "0.1.0"
