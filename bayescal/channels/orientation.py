"""Label orientation of latent-class channel models, for both tracks.

A latent-class mixture is identified only up to a relabelling of its latent
classes: ``(mu, a, b)`` and ``(1 - mu, b, a)`` give the same binary data
(SPEC §1), and any permutation of the rows of every confusion matrix, applied
with the same permutation of the prevalences, gives the same multiclass data
(SPEC §3). One designated annotator fixes the labelling:

- binary (Hanada & Futami, Sec. 4.2; SPEC §1): one global label exchange so
  that the designated annotator has ``a < b``;
- multiclass (SPEC §3): the relabelling that maximises the designated
  annotator's diagonal ``sum_y T[y, y]`` (an assignment problem, solved
  exactly), after which diagonal dominance ``T[y, y] > T[y, a]`` for every
  ``a != y`` is checked and reported when it fails. With C = 2 the assignment
  is the binary exchange: it keeps the labels when ``(1 - a) + b > a + (1 - b)``,
  that is when ``a < b``.

Also here: :func:`orient_index`, the one resolver of the designated annotator
(a name or a position), shared by every estimator.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from bayescal.errors import ConfigError

__all__ = [
    "orient_index",
    "exchange_binary_labels",
    "dominant_diagonal_permutation",
    "relabel_classes",
    "diagonal_dominance_failures",
]


def orient_index(annotators: Sequence[str], orient) -> int:
    """Position of the designated annotator.

    Parameters
    ----------
    annotators : sequence of str
        Annotator names in data order.
    orient : int or str
        A position ``0 .. K-1`` or an annotator name.

    Returns
    -------
    int

    Raises
    ------
    ConfigError
        Unknown name, position out of range, or neither an int nor a str
        (a bool or a float such as 1.5 is refused rather than truncated).

    Examples
    --------
    >>> orient_index(["ann", "bob", "cy"], "bob"), orient_index(["ann", "bob", "cy"], 2)
    (1, 2)
    """
    names = [str(a) for a in annotators]
    if isinstance(orient, str):
        if orient not in names:
            raise ConfigError(f"orient={orient!r} is not an annotator; annotators are {names}.")
        return names.index(orient)
    if isinstance(orient, bool) or not isinstance(orient, numbers.Integral):
        raise ConfigError(
            f"orient must be an annotator name or an integer position; got {orient!r} "
            f"({type(orient).__name__})."
        )
    j = int(orient)
    if not 0 <= j < len(names):
        raise ConfigError(f"orient index {j} out of range for {len(names)} annotators.")
    return j


def exchange_binary_labels(a, b, mu, j: int):
    """One global label exchange per start so that annotator ``j`` has ``a_j < b_j``.

    Parameters
    ----------
    a, b : ndarray of shape (R, K)
        Channels of R starts (or draws).
    mu : ndarray of shape (R, L)
        Prevalences ``P(Y = 1 | group)``.
    j : int
        The designated annotator.

    Returns
    -------
    a, b, mu : ndarrays of the same shapes, exchanged where ``a[:, j] > b[:, j]``.

    Examples
    --------
    >>> import numpy as np
    >>> a, b, mu = exchange_binary_labels(np.array([[0.9]]), np.array([[0.2]]),
    ...                                   np.array([[0.3]]), 0)
    >>> a.tolist(), b.tolist(), mu.round(2).tolist()
    ([[0.2]], [[0.9]], [[0.7]])
    """
    flip = a[:, j] > b[:, j]
    a2 = np.where(flip[:, None], b, a)
    b2 = np.where(flip[:, None], a, b)
    mu2 = np.where(flip[:, None], 1.0 - mu, mu)
    return a2, b2, mu2


def dominant_diagonal_permutation(confusion) -> np.ndarray:
    """Relabelling that maximises the diagonal of one confusion matrix (SPEC §3).

    Latent class ``h`` becomes class ``perm[h]``; ``perm`` maximises
    ``sum_h T[h, perm[h]]`` (scipy's exact linear assignment; ties are broken
    by scipy's deterministic order).

    Parameters
    ----------
    confusion : array-like of shape (C, C)
        Rows: latent class; columns: answered class.

    Returns
    -------
    ndarray of shape (C,), int

    Examples
    --------
    >>> dominant_diagonal_permutation([[0.1, 0.9], [0.8, 0.2]]).tolist()
    [1, 0]
    """
    from scipy.optimize import linear_sum_assignment

    t = np.asarray(confusion, dtype=np.float64)
    rows, cols = linear_sum_assignment(t, maximize=True)
    perm = np.empty(t.shape[0], dtype=np.int64)
    perm[rows] = cols
    return perm


def relabel_classes(confusion, prevalence, perm):
    """Apply a relabelling ``h -> perm[h]`` of the latent classes.

    Parameters
    ----------
    confusion : ndarray of shape (K, C, C)
        Rows: latent class (relabelled); columns: answered class (unchanged).
    prevalence : ndarray of shape (L, C)
        Latent-class prevalence per group (relabelled).
    perm : ndarray of shape (C,)

    Returns
    -------
    confusion, prevalence : relabelled copies.

    Examples
    --------
    >>> import numpy as np
    >>> t, rho = relabel_classes(np.array([[[0.1, 0.9], [0.8, 0.2]]]), np.array([[0.3, 0.7]]),
    ...                          np.array([1, 0]))
    >>> t[0].tolist(), rho.tolist()
    ([[0.8, 0.2], [0.1, 0.9]], [[0.7, 0.3]])
    """
    inv = np.argsort(perm)  # new class y came from latent class inv[y]
    return confusion[:, inv, :].copy(), prevalence[:, inv].copy()


def diagonal_dominance_failures(confusion) -> list[tuple[int, int, float, float]]:
    """Rows of a confusion matrix that are not diagonally dominant.

    Parameters
    ----------
    confusion : array-like of shape (C, C)

    Returns
    -------
    list of (true_class, competing_class, T[y, y], T[y, a])
        One entry per row ``y`` where some ``T[y, a] >= T[y, y]``, naming the
        largest competitor; empty when ``T[y, y] > T[y, a]`` for every ``a != y``.

    Examples
    --------
    >>> diagonal_dominance_failures([[0.7, 0.3], [0.6, 0.4]])
    [(1, 0, 0.4, 0.6)]
    """
    t = np.asarray(confusion, dtype=np.float64)
    out = []
    for y in range(t.shape[0]):
        others = t[y].copy()
        others[y] = -np.inf
        a = int(np.argmax(others))
        if others[a] >= t[y, y]:
            out.append((y, a, float(t[y, y]), float(others[a])))
    return out
