"""Response patterns of C-class answers: the observed patterns, in one canonical order.

An item's response pattern ``s`` holds one state per annotator: the answered
class ``0 .. C-1``, or ``C`` when the annotator did not answer (for two classes:
0, 1 and 2 = missing). Everything the channel estimators and the noise-corrected
metrics need from an item is its pattern and its probabilities, so counting
patterns is the one pass over the items.

Only *observed* patterns are kept: the pattern space has ``(C+1)**K`` cells
(3**16 = 43 million for 16 binary annotators) but a data set of n items shows
at most n of them, so memory follows the data, not K. Observed patterns are
ordered by the code ``sum_j s_j (C+1)**j`` (annotator 0 is the least
significant digit); a dense table is used to find them while ``(C+1)**K <=
MAX_DENSE_CELLS`` and ``numpy.unique`` beyond it, with identical results.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "item_states",
    "unique_patterns",
    "pattern_labels",
    "pattern_codes",
    "MAX_DENSE_CELLS",
]

#: Largest number of pattern (or cell) codes counted with a dense table
#: (2**20 = 1,048,576 cells, 8 MiB of counts; for example C = 10 up to K = 5).
MAX_DENSE_CELLS = 2**20

#: Above this number of cells the code ``sum_j s_j (C+1)**j`` could overflow int64,
#: so patterns are compared row by row.
_INT64_LIMIT = 2**62


def item_states(labels, n_classes: int) -> np.ndarray:
    """States of each item's answers, shape (n_items, K), int16: class index or C (missing).

    Examples
    --------
    >>> item_states(np.array([[0.0, np.nan], [2.0, 1.0]]), 3).tolist()
    [[0, 3], [2, 1]]
    """
    lab = np.asarray(labels)
    return np.where(np.isnan(lab), n_classes, lab).astype(np.int16)


def _powers(n_classes: int, k: int) -> np.ndarray:
    return (n_classes + 1) ** np.arange(k, dtype=np.int64)


def pattern_codes(states, n_classes: int) -> np.ndarray:
    """The code ``sum_j s_j (C+1)**j`` of each pattern (int64; only below ``_INT64_LIMIT``).

    Examples
    --------
    >>> pattern_codes(np.array([[0, 0], [2, 1]]), 2).tolist()
    [0, 5]
    """
    states = np.asarray(states)
    return states.astype(np.int64) @ _powers(n_classes, states.shape[1])


def unique_patterns(states, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Observed patterns in canonical order and each row's pattern index.

    Canonical order is the order of the code ``sum_j s_j (C+1)**j`` (equivalently,
    lexicographic over the reversed annotator order), whichever counting path
    is used (dense table, ``numpy.unique`` on codes, or on rows when the code
    would overflow int64).

    Parameters
    ----------
    states : ndarray of shape (n, K)
        Entries ``0 .. C`` (``C`` = missing).
    n_classes : int

    Returns
    -------
    unique : ndarray of shape (P, K), int16
    inverse : ndarray of shape (n,), int64

    Examples
    --------
    >>> u, inv = unique_patterns(np.array([[1, 0], [0, 1], [1, 0]]), 2)
    >>> u.tolist(), inv.tolist()
    ([[1, 0], [0, 1]], [0, 1, 0])
    """
    states = np.asarray(states)
    n, k = states.shape
    cells = (n_classes + 1) ** k  # Python int: no overflow
    if cells >= _INT64_LIMIT:
        rev, inverse = np.unique(states[:, ::-1], axis=0, return_inverse=True)
        return rev[:, ::-1].astype(np.int16), inverse.reshape(-1).astype(np.int64)
    code = pattern_codes(states, n_classes)
    if cells <= MAX_DENSE_CELLS:
        present = np.bincount(code, minlength=cells) > 0
        uniq = np.flatnonzero(present)
        rank = np.cumsum(present) - 1
        inverse = rank[code]
    else:
        uniq, inverse = np.unique(code, return_inverse=True)
    out = (uniq[:, None] // _powers(n_classes, k)[None, :]) % (n_classes + 1)
    return out.astype(np.int16), inverse.reshape(-1).astype(np.int64)


def pattern_labels(states, n_classes: int) -> np.ndarray:
    """Readable pattern coordinates: ``"02."`` for C <= 10, ``"0,11,."`` beyond; ``.`` = missing.

    Examples
    --------
    >>> pattern_labels(np.array([[0, 2, 3]]), 3).tolist()
    ['02.']
    >>> pattern_labels(np.array([[0, 1, 2]]), 2).tolist()
    ['01.']
    """
    states = np.asarray(states)
    if states.shape[0] == 0:
        return np.zeros(0, dtype=object)
    symbols = np.array([str(c) for c in range(n_classes)] + ["."], dtype=object)
    chars = symbols[states.astype(np.int64)]
    if states.shape[1] == 0:
        return np.array([""] * states.shape[0], dtype=object)
    sep = "" if n_classes <= 10 else ","
    # one join per pattern (at most one per item), not per (pattern, annotator) formatting
    return np.array([sep.join(row) for row in chars.tolist()], dtype=object)
