"""Monte Carlo standard errors of numbers computed from a capped set of draws (issue 23).

Several stages use at most a fixed number of evenly thinned channel draws (the interval's
``JOINT_DRAWS``, the recalibration band's ``DEFAULT_MAX_DRAWS``, the annotation ranking's
and the item posteriors' ``MAX_DRAWS``). What they report is an average or a quantile
over those draws; its Monte Carlo standard error (MCSE) is the error the cap adds, the
spread the number would have over re-runs with other draws of the same posterior.

Both estimators read the draws in their order (axis 0) in non-overlapping batches
(:func:`batches`: ``a = floor(sqrt(D))`` batches of ``L = D // a`` draws, the last
``D - a L`` draws left out of the variance only), so correlation between neighbouring
draws (a Markov chain thinned too little, replicates that share a draw) widens the
error instead of hiding in it:

- :func:`mean_mcse`: ``sqrt(L var(batch means) / D)``, the batch-means estimator of
  the standard error of a mean (Flegal & Jones 2010);
- :func:`quantile_mcse`: the quantile's error through the indicator ``[x <= q]`` (Vehtari
  et al. 2021, as ArviZ's ``mcse(method="quantile")``): the indicator's effective sample
  size ``S`` from its batch means, then half the distance between the empirical
  quantiles at ``p -/+ sqrt(p (1 - p) / S)``.

One draw (a point fit) has no Monte Carlo error: both return 0. With fewer than four
draws (fewer than two batches of two) the error cannot be estimated: ``nan``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["batches", "mean_mcse", "quantile_mcse"]


def batches(n_draws: int) -> tuple[int, int]:
    """``(a, L)``: the number of batches and the draws per batch for ``n_draws`` draws."""
    a = max(2, math.isqrt(int(n_draws)))
    return a, int(n_draws) // a


def _batch_means(x: np.ndarray) -> tuple[np.ndarray, int]:
    a, size = batches(x.shape[0])
    return x[: a * size].reshape(a, size, *x.shape[1:]).mean(axis=1), size


def mean_mcse(values) -> np.ndarray | float:
    """MCSE of the mean over axis 0 of ``values`` (draws first, in draw order).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> se = mean_mcse(rng.normal(size=(400, 2)))  # iid: about 1 / sqrt(400) = 0.05
    >>> se.shape, bool(np.all((0.025 < se) & (se < 0.1)))
    ((2,), True)
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.shape[0]
    if n == 1:
        return _zero_like(x)
    if n < 4:
        return _zero_like(x) + np.nan
    means, size = _batch_means(x)
    out = np.sqrt(size * means.var(axis=0, ddof=1) / n)
    return float(out) if out.ndim == 0 else out


def quantile_mcse(values, prob: float) -> np.ndarray | float:
    """MCSE of the ``prob`` quantile over axis 0 of ``values`` (draws first, in order).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> se = quantile_mcse(rng.normal(size=4000), 0.05)
    >>> 0.017 < se < 0.067  # iid normal: sqrt(.05 .95 / 4000) / phi(1.645) = 0.033
    True
    """
    x = np.asarray(values, dtype=np.float64)
    p = float(prob)
    n = x.shape[0]
    if n == 1:
        return _zero_like(x)
    if n < 4:
        return _zero_like(x) + np.nan
    order = np.sort(x, axis=0)
    q = _at(order, np.full(x.shape[1:], p))
    means, size = _batch_means((x <= q).astype(np.float64))
    var = size * means.var(axis=0, ddof=1)  # the indicator's variance times its autocorrelation
    pq = p * (1.0 - p)
    with np.errstate(invalid="ignore", divide="ignore"):
        ess = np.clip(np.where(var > 0, n * pq / var, n), 1.0, n)
    half = np.sqrt(pq / ess)
    out = 0.5 * (_at(order, np.minimum(p + half, 1.0)) - _at(order, np.maximum(p - half, 0.0)))
    return float(out) if out.ndim == 0 else out


def _at(order: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Linear-interpolation quantiles (NumPy's default) of sorted columns at ``p`` each."""
    n = order.shape[0]
    pos = np.asarray(p, dtype=np.float64) * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = pos - lo
    low = np.take_along_axis(order, lo[None, ...], axis=0)[0]
    high = np.take_along_axis(order, hi[None, ...], axis=0)[0]
    return low + frac * (high - low)


def _zero_like(x: np.ndarray) -> np.ndarray | float:
    shape = x.shape[1:]
    return 0.0 if not shape else np.zeros(shape)
