"""Label targets built from annotator counts: distributions, voted labels, samples.

Conventions
-----------
- An annotator distribution ``pi`` is a row of counts divided by its sum.
- The voted label is ``argmax_k pi_k``; ties go to the lowest class index
  (``numpy.argmax``), a deterministic rule that does not consume randomness.
"""

from __future__ import annotations

import numpy as np

from bayescal._typing import ArrayLike, RandomState
from bayescal.ambiguity.simplex import entropy
from bayescal.ambiguity.validation import check_random_state, check_targets
from bayescal.errors import ConfigError, DataError

__all__ = [
    "to_distribution",
    "voted_labels",
    "one_hot",
    "sample_labels",
    "sample_counts",
    "subsample_annotations",
    "annotation_entropy",
]


def _as_2d(targets) -> np.ndarray:
    t = np.asarray(targets)
    if t.ndim != 2:
        raise DataError(
            "targets must be counts or distributions of "
            f"shape (n_items, n_classes), got shape {t.shape}."
        )
    if t.shape[1] < 2:
        raise DataError(
            f"targets have {t.shape[1]} class column(s); at least two classes are needed."
        )
    return t


def to_distribution(targets: ArrayLike) -> np.ndarray:
    """Normalise counts (or distributions) to row distributions.

    Tao et al., Sec. 3: ``pi(x)`` estimated by vote frequencies (SPEC §2).

    Parameters
    ----------
    targets : array-like of shape (n_items, n_classes)
        Non-negative annotator counts or probabilities, every row with a positive sum.

    Returns
    -------
    ndarray of shape (n_items, n_classes)

    Examples
    --------
    >>> to_distribution([[3, 1], [0, 2]])
    array([[0.75, 0.25],
           [0.  , 1.  ]])
    """
    t = _as_2d(targets)
    return check_targets(t, n_items=t.shape[0], n_classes=t.shape[1])


def voted_labels(targets: ArrayLike) -> np.ndarray:
    """Majority (voted) label of each row; ties go to the lowest class index.

    Tao et al., Sec. 3: ``y* = argmax pi`` (SPEC §2).

    Parameters
    ----------
    targets : array-like of shape (n_items, n_classes)

    Returns
    -------
    ndarray of int64, shape (n_items,)

    Examples
    --------
    >>> voted_labels([[3, 1, 0], [1, 2, 2]])
    array([0, 1])
    """
    return to_distribution(targets).argmax(axis=1).astype(np.int64)


def one_hot(labels: ArrayLike, n_classes: int) -> np.ndarray:
    """One-hot rows of shape (n_items, n_classes) for integer ``labels``.

    Tao et al., Sec. 3, Eq. 2 targets.

    Examples
    --------
    >>> one_hot([1, 0], 2)
    array([[0., 1.],
           [1., 0.]])
    """
    y = np.asarray(labels)
    if y.ndim != 1:
        raise DataError(f"labels must be one-dimensional (n_items,), got shape {y.shape}.")
    return check_targets(y, n_items=y.shape[0], n_classes=int(n_classes))


def _sample_kernel(pi: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    # Inverse-CDF sampling for all items and draws at once; the last cumulative
    # value is forced to 1 so rounding can never produce the out-of-range index K.
    cdf = np.cumsum(pi, axis=1)
    cdf[:, -1] = 1.0
    u = rng.random((pi.shape[0], n_draws))
    return (u[:, :, None] >= cdf[:, None, :]).sum(axis=2)


def sample_labels(targets: ArrayLike, n_draws: int, *, random_state: RandomState) -> np.ndarray:
    """Draw ``n_draws`` labels per item from its annotator distribution.

    Tao et al., Sec. 4: ``ECE_true`` draws ``y~ ~ pi(x)`` (S = 100; SPEC §2).

    Parameters
    ----------
    targets : array-like of shape (n_items, n_classes)
        Counts or distributions.
    n_draws : int
        Draws per item (S).
    random_state : int or numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_items, n_draws)

    Examples
    --------
    >>> sample_labels([[0, 1], [1, 0]], 3, random_state=0)
    array([[1, 1, 1],
           [0, 0, 0]])
    """
    if int(n_draws) < 1:
        raise ConfigError(f"n_draws must be >= 1, got {n_draws}.")
    pi = to_distribution(targets)
    return _sample_kernel(pi, int(n_draws), check_random_state(random_state)).astype(np.int64)


def sample_counts(targets: ArrayLike, n_samples: int, *, random_state: RandomState) -> np.ndarray:
    """Counts of ``n_samples`` labels drawn with replacement from each row's distribution.

    Tao et al., Sec. 6.1 (MCTS draws S annotations per item).

    Returns
    -------
    ndarray of int64, shape (n_items, n_classes)
    """
    if int(n_samples) < 1:
        raise ConfigError(f"n_samples must be >= 1, got {n_samples}.")
    pi = to_distribution(targets)
    rng = check_random_state(random_state)
    return rng.multinomial(int(n_samples), pi).astype(np.int64)


def subsample_annotations(counts: ArrayLike, m: int, *, random_state: RandomState) -> np.ndarray:
    """Keep ``m`` of each item's annotations, drawn without replacement.

    Tao et al., Sec. 7 annotation-count ablation.

    The draw is multivariate hypergeometric, done class by class as a chain of
    univariate hypergeometric draws (vectorised over items).

    Parameters
    ----------
    counts : array-like of int, shape (n_items, n_classes)
        Annotator counts; every row must hold at least ``m`` annotations.
    m : int
        Annotations to keep per item (>= 1).
    random_state : int or numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_items, n_classes), rows summing to ``m``.

    Examples
    --------
    >>> subsample_annotations([[5, 5], [10, 0]], 4, random_state=0).sum(axis=1)
    array([4, 4])
    """
    c = np.asarray(counts)
    _as_2d(c)
    if not np.issubdtype(c.dtype, np.integer):
        if not (np.all(np.isfinite(c)) and np.all(c == np.round(c))):
            raise DataError("counts must be whole numbers of annotations to subsample them.")
        c = c.astype(np.int64)
    if (c < 0).any():
        raise DataError("counts must be non-negative.")
    m = int(m)
    if m < 1:
        raise ConfigError(f"m must be >= 1, got {m}.")
    total = c.sum(axis=1)
    short = total < m
    if short.any():
        raise DataError(
            f"{int(short.sum())} item(s) have fewer than m = {m} annotations "
            f"(smallest row total {int(total.min())}); choose m <= {int(total.min())}."
        )
    rng = check_random_state(random_state)
    out = np.zeros_like(c, dtype=np.int64)
    remaining_pool = total.astype(np.int64)
    remaining_draw = np.full(c.shape[0], m, dtype=np.int64)
    for k in range(c.shape[1] - 1):
        good = c[:, k].astype(np.int64)
        bad = remaining_pool - good
        take = rng.hypergeometric(good, bad, remaining_draw)
        out[:, k] = take
        remaining_pool -= good
        remaining_draw -= take
    out[:, -1] = remaining_draw
    return out


def annotation_entropy(targets: ArrayLike, *, normalise: bool = True) -> np.ndarray:
    """Entropy of each item's annotator distribution, divided by ``log K`` by default.

    Tao et al., Proposition 2 (error grows with annotation entropy).

    Returns
    -------
    ndarray of shape (n_items,) in [0, 1] when ``normalise``.

    Examples
    --------
    >>> annotation_entropy([[1, 1], [2, 0]])
    array([1., 0.])
    """
    pi = to_distribution(targets)
    h = entropy(pi)
    return h / np.log(pi.shape[1]) if normalise else h
