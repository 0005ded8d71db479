"""What each view of the app shows by default and how many models it compares, declared once.

The tabs, their deep links (``?tab=...&models=...``) and the core functions behind them all read
these: a limit or a default model changes here and nowhere else.

Example::

    >>> VIEWS["explore"].max_models, VIEWS["sts"].max_models
    (4, 8)
    >>> view("corpus").default_models
    ('glove-6b-50d', 'all-MiniLM-L6-v2')
"""

from __future__ import annotations

from dataclasses import dataclass

NAIVE_MODEL = "glove-6b-50d"  # the naive model every story starts from (offline, instant)
SIAMESE_MODEL = "all-MiniLM-L6-v2"  # the siamese model it is compared with (offline, small)
STRONG_MODEL = "all-mpnet-base-v2"


@dataclass(frozen=True)
class View:
    name: str  # the link's tab id
    title: str
    default_models: tuple[str, ...] = ()  # () where the view offers every available model instead
    max_models: int = 4  # side-by-side columns stay readable up to four


VIEWS: dict[str, View] = {view.name: view for view in (
    View("explore", "Explore", (NAIVE_MODEL, SIAMESE_MODEL, STRONG_MODEL)),
    View("corpus", "Corpus map", (NAIVE_MODEL, SIAMESE_MODEL)),
    View("sts", "STS benchmark", (), max_models=8),  # default: every available naive and siamese model
    View("table1", "Table 1", (NAIVE_MODEL, f"{NAIVE_MODEL}+whiten", SIAMESE_MODEL, STRONG_MODEL), max_models=8),
    View("cost", "The cost of cross-encoding", (SIAMESE_MODEL,), max_models=1),
    View("why", "Why naive fails", (NAIVE_MODEL, SIAMESE_MODEL)),  # the pair explanation
    View("cone", "The cone", (NAIVE_MODEL, f"{NAIVE_MODEL}+whiten", SIAMESE_MODEL)),
    View("before-after", "Before / after training", (), max_models=1),
    View("train", "Train", (NAIVE_MODEL,), max_models=1),
    View("models", "Models", ()),
    View("talk", "Talk", (NAIVE_MODEL, SIAMESE_MODEL), max_models=2),
)}

# The tabs a link can open, in the page's order (``corpus`` is a part of Explore; ``table1`` and ``cost``
# are parts of the STS tab).
TABS = ("explore", "corpus", "sts", "table1", "cost", "why", "train", "models", "talk", "audience")
# Tabs whose model picker a link fills.
MODEL_TABS = ("explore", "corpus", "sts", "table1", "why")


def view(name: str) -> View:
    """The view called ``name`` (a ValueError naming the views otherwise)."""
    try:
        return VIEWS[name]
    except KeyError:
        raise ValueError(f"Unknown view {name!r}; views: {', '.join(VIEWS)}.") from None
