"""The most distinctive words of each cluster (or label): class-based TF-IDF.

All sentences of a class are treated as one document, so a word scores high when it is frequent
in that class and rare across the corpus (Grootendorst 2022, BERTopic's c-TF-IDF):

    W(t, c) = tf(t, c) * log(1 + A / f(t))

with tf(t, c) the frequency of word t in class c divided by the number of words in c, f(t) the
frequency of t in all classes and A the average number of words per class. Words are counted by
scikit-learn's ``CountVectorizer`` (lower-cased, English stop words removed, words of two or more
letters); BERTopic itself is not a dependency (it pulls its own UMAP/HDBSCAN stack), and the
formula is the two lines in :func:`class_tfidf`.

Example::

    >>> words = distinctive_words(["a guitar song", "guitar music", "stocks fell", "stock market fell"],
    ...                           [0, 0, 1, 1], top=1)
    >>> words[0], words[1]
    (('guitar',), ('fell',))
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

import numpy as np

TOP_WORDS = 4
TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"  # words of two or more letters: no numbers, no "_"
# "don't" would count as "don" and "it's" as "it"+"s": contractions and possessives lose their ending
# first, and the stems "can't" and "won't" leave ("ca", "wo") are stop words too.
_ENDINGS = re.compile(r"(?:n['’]t|['’](?:s|re|ve|ll|d|m|t))\b", re.IGNORECASE)
_EXTRA_STOP_WORDS = ("ca", "wo", "ai", "does", "did", "doing", "just", "really")


def _preprocess(text: str) -> str:
    return _ENDINGS.sub("", text.lower())


def class_tfidf(counts, class_of_row: np.ndarray, n_classes: int) -> np.ndarray:
    """c-TF-IDF weights (classes x words) from a sentences x words count matrix."""
    from scipy import sparse

    rows = np.arange(len(class_of_row))
    membership = sparse.csr_matrix((np.ones(len(rows)), (class_of_row, rows)), shape=(n_classes, len(rows)))
    per_class = np.asarray((membership @ counts).todense(), dtype=np.float64)  # classes x words
    words_in_class = per_class.sum(axis=1, keepdims=True)
    tf = np.divide(per_class, words_in_class, out=np.zeros_like(per_class), where=words_in_class > 0)
    frequency = per_class.sum(axis=0)
    average_words = per_class.sum() / max(n_classes, 1)
    idf = np.log(1 + average_words / np.maximum(frequency, 1))
    return tf * idf


def distinctive_words(sentences: Sequence[str], labels: Sequence[Hashable], top: int = TOP_WORDS,
                      skip: Sequence[Hashable] = (-1,)) -> dict[Hashable, tuple[str, ...]]:
    """Up to ``top`` words per label, most distinctive first; labels in ``skip`` (HDBSCAN's noise)
    get none. A label whose sentences have no countable word gets an empty tuple."""
    from sklearn.feature_extraction.text import CountVectorizer

    if len(sentences) != len(labels):
        raise ValueError(f"There are {len(labels)} labels for {len(sentences)} sentences.")
    classes = [label for label in dict.fromkeys(labels) if label not in set(skip)]
    if not classes:
        return {}
    index = {label: i for i, label in enumerate(classes)}
    kept = [i for i, label in enumerate(labels) if label in index]
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    vectorizer = CountVectorizer(preprocessor=_preprocess, token_pattern=TOKEN_PATTERN,
                                 stop_words=sorted(ENGLISH_STOP_WORDS.union(_EXTRA_STOP_WORDS)))
    try:
        counts = vectorizer.fit_transform([sentences[i] for i in kept])
    except ValueError:  # nothing but stop words, numbers or punctuation
        return {label: () for label in classes}
    weights = class_tfidf(counts, np.array([index[labels[i]] for i in kept]), len(classes))
    vocabulary = vectorizer.get_feature_names_out()
    words: dict[Hashable, tuple[str, ...]] = {}
    for label, row in zip(classes, weights):
        best = np.argsort(-row, kind="stable")[:top]
        words[label] = tuple(str(vocabulary[j]) for j in best if row[j] > 0)
    return words
