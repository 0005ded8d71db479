"""Hugging Face's libraries imported once per process, by one thread at a time.

transformers replaces its package with a lazy module while its ``__init__`` runs, so a second thread that
imports it at the same moment finds the package in ``sys.modules`` before its names resolve, and fails with
"cannot import name 'AutoTokenizer' from 'transformers'". The app's start does exactly that: the first page
is drawn while the background warm-up loads the next model, each in its own thread, and the model whose
import failed ran in another runtime for the rest of the process (MiniLM and mpnet on OpenVINO, loaded side
by side: 3 starts in 3; ``tests/test_onnx.py``). So every model load imports them through
:func:`import_hugging_face` first: the first caller imports, the others wait for it, later calls cost a lock.
"""

from __future__ import annotations

import threading

# What model loading reaches for: the package, the classes the graph encoders and exports name, and
# sentence-transformers (which imports transformers' model classes when it is imported).
NAMES = ("AutoConfig", "AutoModel", "AutoTokenizer")
_lock = threading.Lock()


def import_hugging_face() -> None:
    """Import transformers (its auto classes resolved) and sentence-transformers, if no thread has yet; a thread
    that comes while another imports waits until the names resolve."""
    with _lock:
        import sentence_transformers  # noqa: F401
        import transformers

        for name in NAMES:
            getattr(transformers, name)
