"""Class-conditional flip annotators over any scores.

Annotator ``j`` answers 1 with probability ``a_j`` when the clean label is 0 and with
probability ``b_j`` when it is 1 (SPEC §1, Assumption 1), independently across annotators
given the clean label (Assumption 2). An answer is missing with probability ``missing_j``,
independently of everything else, so missingness is independent of ``Y`` (the condition under
which renormalised corrected labels stay unbiased).
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import DataError
from bayescal.simulate._checks import check_missing, check_rates, check_truth

__all__ = ["simulate_annotations", "simulate_flip_data"]


def simulate_annotations(truth, a, b, *, random_state, missing=0.0) -> np.ndarray:
    """Draw class-conditional noisy binary annotations for given clean labels.

    Parameters
    ----------
    truth : array-like of shape (n_items,)
        Clean labels, 0/1 (bool, int or float).
    a : array-like of shape (n_annotators,)
        False-positive rates ``a_j = P(A_j = 1 | Y = 0)``.
    b : array-like of shape (n_annotators,)
        Sensitivities ``b_j = P(A_j = 1 | Y = 1)`` (one minus the false-negative rate).
    random_state : int, numpy.random.Generator or None
        Source of randomness (keyword-only and required; ``None`` means fresh OS entropy).
    missing : float or array-like of shape (n_annotators,), default 0.0
        Probability that an answer is missing, per annotator or shared; drawn independently
        of the clean label, the score and the other answers.

    Returns
    -------
    numpy.ndarray of shape (n_items, n_annotators), float32
        0.0 / 1.0 answers, NaN where missing.

    Notes
    -----
    Uniforms are drawn in float32 (to halve memory at ``n = 10**7``), so every realised rate
    is a multiple of ``2**-24`` away from the requested one at most: an error below ``6e-8``.
    The generator is consumed in a fixed order (answers, then missingness only when some
    rate is positive), so a seed reproduces the same matrix.

    Examples
    --------
    >>> labels = simulate_annotations([0, 1, 1, 0], a=[0.1, 0.2], b=[0.9, 0.8], random_state=0)
    >>> labels.shape, labels.dtype
    ((4, 2), dtype('float32'))
    """
    y = check_truth(truth)
    a = check_rates(a, "a")
    b = check_rates(b, "b", size=a.size)
    miss = check_missing(missing, a.size)
    rng = check_random_state(random_state)

    n, k = y.size, a.size
    # P(A_ij = 1) for every cell, then one comparison against float32 uniforms.
    prob = np.where(y[:, None], b.astype(np.float32), a.astype(np.float32))
    labels = rng.random((n, k), dtype=np.float32)
    np.less(labels, prob, out=prob, casting="unsafe")
    del labels
    labels = prob  # float32 holding 0.0 / 1.0
    if np.any(miss > 0):
        gone = rng.random((n, k), dtype=np.float32) < miss.astype(np.float32)
        labels[gone] = np.nan
    return labels


def simulate_flip_data(score, truth, a, b, *, random_state, missing=0.0, annotators=None):
    """Simulate flip annotators over given scores and clean labels, as a container.

    Parameters
    ----------
    score : array-like of shape (n_items,)
        Predictor scores in [0, 1] (validated by the container).
    truth : array-like of shape (n_items,)
        Clean labels, 0/1; stored as ``truth`` in the result.
    a, b : array-like of shape (n_annotators,)
        False-positive rates and sensitivities (``b = 1 - false-negative rate``).
    random_state : int, numpy.random.Generator or None
        Source of randomness (keyword-only and required).
    missing : float or array-like of shape (n_annotators,), default 0.0
        Per-annotator (or shared) probability of a missing answer, independent of ``Y``.
    annotators : sequence of str, optional
        Annotator names; default ``"a1" .. "aK"``.

    Returns
    -------
    bayescal.data.container.Annotations
        Scores, labels (NaN = missing) and truth.

    Examples
    --------
    >>> data = simulate_flip_data([0.2, 0.7, 0.9], [0, 1, 1], a=[0.1, 0.1, 0.2],
    ...                           b=[0.9, 0.8, 0.9], random_state=1)
    >>> data.n_items, data.n_annotators
    (3, 3)
    """
    y = check_truth(truth)
    score_arr = np.asarray(score)
    if score_arr.shape != y.shape:
        raise DataError(
            f"score has shape {score_arr.shape} but truth has shape {y.shape}; they must match."
        )
    labels = simulate_annotations(y, a, b, random_state=random_state, missing=missing)
    return Annotations.from_arrays(
        score_arr, labels, truth=y.astype(np.int8), annotators=annotators
    )
