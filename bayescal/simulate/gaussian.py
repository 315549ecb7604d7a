"""The Gaussian recalibration setting of Appendix G.2.

``P(Y = 1) = 1/2``, ``X | Y = 1 ~ N(-1, 1)``, ``X | Y = 0 ~ N(1, 1)`` and the fixed predictor
``Z = sigmoid(0.3 - X)`` (the toy predictor). Bayes' rule gives
``P(Y = 1 | X = x) = sigmoid(-2 x)``, and with ``x = 0.3 - logit(z)`` the true calibration
curve is ``m(z) = sigmoid(2 logit(z) - 0.6)``. Two annotators, independent given ``Y``, with
(false-positive, false-negative) rates ``(0.05, 0.25)`` and ``(0.05, 0.05)``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from bayescal._random import check_random_state
from bayescal.simulate._checks import check_n_items, check_rates
from bayescal.simulate.flips import simulate_flip_data
from bayescal.simulate.toy import toy_score

__all__ = ["GAUSSIAN_FP", "GAUSSIAN_FN", "gaussian_true_curve", "simulate_gaussian"]

GAUSSIAN_FP = (0.05, 0.05)
GAUSSIAN_FN = (0.25, 0.05)


def gaussian_true_curve(z):
    """True calibration curve ``m(z) = sigmoid(2 logit(z) - 0.6)`` of the Gaussian setting.

    Parameters
    ----------
    z : array-like of shape (...)
        Scores in [0, 1] (0 and 1 map to 0 and 1).

    Returns
    -------
    numpy.ndarray of shape (...)
        ``P(Y = 1 | Z = z)``.

    Examples
    --------
    >>> round(float(gaussian_true_curve(0.5)), 6)
    0.354344
    """
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return special.expit(2.0 * special.logit(z) - 0.6)


def simulate_gaussian(
    n: int, *, random_state, fp=GAUSSIAN_FP, fn=GAUSSIAN_FN, missing=0.0, annotators=None
):
    """Simulate the Gaussian recalibration setting of Appendix G.2.

    Parameters
    ----------
    n : int
        Number of items.
    random_state : int, numpy.random.Generator or None
        Source of randomness (keyword-only and required).
    fp : array-like of shape (n_annotators,), default (0.05, 0.05)
        False-positive rates ``a_j``.
    fn : array-like of shape (n_annotators,), default (0.25, 0.05)
        False-negative rates; ``b_j = 1 - fn_j``.
    missing : float or array-like of shape (n_annotators,), default 0.0
        Probability that an answer is missing, independent of ``Y``.
    annotators : sequence of str, optional
        Annotator names; default ``"a1" .. "aK"``.

    Returns
    -------
    bayescal.data.container.Annotations
        Scores ``Z``, noisy labels and the clean ``truth``; ``gaussian_true_curve(data.score)``
        gives ``m(Z)`` (the Oracle reference of Appendix G.1).

    Notes
    -----
    Draw order from the generator: ``Y``, Gaussian noise, annotations, then missingness (only
    if some rate is positive).

    Examples
    --------
    >>> data = simulate_gaussian(500, random_state=0)
    >>> data.n_items, data.annotators
    (500, ['a1', 'a2'])
    """
    n = check_n_items(n)
    a = check_rates(fp, "fp")
    b = 1.0 - check_rates(fn, "fn", size=a.size)
    rng = check_random_state(random_state)

    y = rng.random(n) < 0.5
    x = np.where(y, -1.0, 1.0)
    x += rng.standard_normal(n)
    z = toy_score(x)
    del x
    return simulate_flip_data(z, y, a, b, random_state=rng, missing=missing, annotators=annotators)
