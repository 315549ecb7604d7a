"""Base-3 encoding of response patterns: 0, 1, or missing for each annotator.

Pattern index ``sum_j s_j * 3**j`` with state ``s_j`` 0 (answered 0), 1
(answered 1) or 2 (missing). Everything the binary estimators need from an item
is its pattern (and its score), so counting patterns is the one pass.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from bayescal.errors import DataError

#: Largest number of annotators for which 3**K pattern cells are built
#: (3**12 = 531,441 cells). Above it use the per-item path: Dawid-Skene EM on
#: per-item arrays, or drop rarely active annotators.
MAX_PATTERN_ANNOTATORS = 12

MISSING_STATE = 2
STATE_CHARS = ("0", "1", ".")

__all__ = [
    "MAX_PATTERN_ANNOTATORS",
    "check_pattern_k",
    "encode_patterns",
    "pattern_states",
    "states_of",
    "pattern_labels",
    "pattern_index",
]


def check_pattern_k(k: int) -> None:
    if k > MAX_PATTERN_ANNOTATORS:
        # 3**k itself is never built: at K = 5000 it has 2386 digits.
        cells = f"{3**k:,}" if k <= 40 else f"a number with {int(k * math.log10(3)) + 1} digits"
        raise DataError(
            f"{k} annotators give 3**{k} ({cells}) response-pattern cells, above the limit of "
            f"{MAX_PATTERN_ANNOTATORS} annotators (bayescal.summaries.MAX_PATTERN_ANNOTATORS). "
            "Use the per-item path (bayescal.channels.em.dawid_skene_em_items) or keep the "
            "annotators with the most answers."
        )


def encode_patterns(labels: np.ndarray) -> np.ndarray:
    """Pattern index of each row of ``labels`` (float with NaN = missing).

    Parameters
    ----------
    labels : ndarray of shape (n_items, K)

    Returns
    -------
    ndarray of shape (n_items,), int64
    """
    k = labels.shape[1]
    check_pattern_k(k)
    idx = np.zeros(labels.shape[0], dtype=np.int64)
    power = 1
    for j in range(k):
        col = labels[:, j]
        # state: 0 -> 0, 1 -> 1, NaN -> 2; NaN != NaN so (col == 1) is False there.
        state = np.where(np.isnan(col), MISSING_STATE, col == 1).astype(np.int64)
        idx += state * power
        power *= 3
    return idx


def pattern_states(k: int) -> np.ndarray:
    """States of every pattern, shape (3**K, K) with entries 0, 1, 2 (missing).

    The table depends on K only, so it is built once per K and shared: the
    returned array is read-only (copy it to modify). At K = 12 it holds
    531,441 x 12 int8 (6.4 MB); rebuilding it on every summary and every
    estimator call cost seconds per audit.

    Examples
    --------
    >>> pattern_states(2)[[0, 5]].tolist()
    [[0, 0], [2, 1]]
    >>> pattern_states(2).flags.writeable
    False
    """
    check_pattern_k(k)
    return _pattern_states(k)


@functools.cache  # keys are 0..MAX_PATTERN_ANNOTATORS: bounded
def _pattern_states(k: int) -> np.ndarray:
    idx = np.arange(3**k, dtype=np.int64)
    power = 3 ** np.arange(k, dtype=np.int64)
    states = ((idx[:, None] // power[None, :]) % 3).astype(np.int8)
    states.setflags(write=False)
    return states


def states_of(patterns, k: int) -> np.ndarray:
    """States of the given pattern indices only, shape (len(patterns), K), int8.

    The same rows as ``pattern_states(k)[patterns]`` without building all 3**K of
    them: metrics over posterior draws need the patterns that hold items, which are
    at most as many as the items, however large 3**K is.

    Parameters
    ----------
    patterns : array-like of int, shape (n,)
        Pattern indices in ``[0, 3**K)``.
    k : int
        Number of annotators.

    Examples
    --------
    >>> states_of([5, 0], 2).tolist()
    [[2, 1], [0, 0]]
    """
    check_pattern_k(k)
    idx = np.asarray(patterns, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= 3**k):
        raise DataError(f"pattern indices must lie in [0, 3**{k}); got {idx.min()}..{idx.max()}.")
    power = 3 ** np.arange(k, dtype=np.int64)
    return ((idx[:, None] // power[None, :]) % 3).astype(np.int8)


def pattern_labels(k: int) -> np.ndarray:
    """Coordinate strings such as ``"01."`` for each pattern (annotator order).

    Built once per K and shared, read-only, like :func:`pattern_states`
    (3**12 = 531,441 strings took about 1.5 s to join, and every summary of an
    audit needs them).

    Parameters
    ----------
    k : int
        Number of annotators.

    Returns
    -------
    ndarray of shape (3**K,), object (str)

    Examples
    --------
    >>> pattern_labels(2).tolist()
    ['00', '10', '.0', '01', '11', '.1', '0.', '1.', '..']
    """
    check_pattern_k(k)
    return _pattern_labels(k)


@functools.cache  # keys are 0..MAX_PATTERN_ANNOTATORS: bounded
def _pattern_labels(k: int) -> np.ndarray:
    if k == 0:
        labels = np.array([""], dtype=object)
    else:
        # One character per (pattern, annotator), contiguous in annotator order, so
        # viewing each row as one K-character string is the join without a Python loop.
        chars = np.array(STATE_CHARS, dtype="<U1")[_pattern_states(k)]
        labels = np.ascontiguousarray(chars).view(f"<U{k}").reshape(-1).astype(object)
    labels.setflags(write=False)
    return labels


def pattern_index(k: int) -> pd.Index:
    """:func:`pattern_labels` as a shared (immutable) pandas Index, the ``pattern`` coordinate.

    xarray builds an index for every coordinate; from a plain object array of
    3**12 strings that takes about 0.3 s per summary, from an existing Index
    almost nothing, and the labels are the same.

    Examples
    --------
    >>> list(pattern_index(1))
    ['0', '1', '.']
    """
    check_pattern_k(k)
    return _pattern_index(k)


@functools.cache  # keys are 0..MAX_PATTERN_ANNOTATORS: bounded
def _pattern_index(k: int) -> pd.Index:
    return pd.Index(_pattern_labels(k), dtype=object, name="pattern")
