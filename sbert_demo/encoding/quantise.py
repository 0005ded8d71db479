"""Vectors in int8 with one scale per row: the one recipe behind the corpus's int8 shards
(:mod:`sbert_demo.corpus.shards`), an int8 ONNX graph's word-embedding table (:mod:`.onnx_export`) and a
published page's token table and corpus rows (:mod:`sbert_demo.publish.search`).

    >>> rows, scales = int8_rows(np.array([[0.5, -1.0, 0.25], [0.0, 0.0, 0.0]], dtype=np.float32))
    >>> rows.tolist(), [round(float(s) * 127, 4) for s in scales]
    ([[64, -127, 32], [0, 0, 0]], [1.0, 127.0])
"""

from __future__ import annotations

import numpy as np


def int8_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``matrix`` as int8 rows and one float32 scale per row (the row's largest magnitude over 127; 1 for a row
    of zeros): ``rows * scales[:, None]`` is the matrix again, each value within half a step."""
    scales = (np.abs(matrix).max(axis=1) / 127.0).astype(np.float32)
    scales[scales == 0] = 1.0
    return np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8), scales
