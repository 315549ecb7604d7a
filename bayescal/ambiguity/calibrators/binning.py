"""Non-parametric maps of the top-label confidence: histogram binning and isotonic regression.

They change only the top-class probability; the rest ``1 - new confidence``
is spread over the other classes in proportion to their original
probabilities (SPEC §2). New confidences are clipped to ``[eps, 1 - eps]`` so
that no class gets probability exactly 0 or 1.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.optimize import isotonic_regression

from bayescal._typing import ArrayLike
from bayescal.ambiguity.calibrators.base import (
    _FIT_HINT,
    Calibrator,
    hard_targets,
    soft_targets,
)
from bayescal.ambiguity.simplex import log_softmax, set_top_confidence
from bayescal.base import check_is_fitted
from bayescal.errors import ConfigError

__all__ = ["HistogramBinning", "SoftHistogramBinning", "SoftIsotonicRegression"]


def _top_confidence(z):
    p = np.exp(log_softmax(z))
    c = p.argmax(axis=1)
    return c, p[np.arange(z.shape[0]), c]


def _check_eps(eps):
    if not (isinstance(eps, numbers.Real) and 0 < eps < 0.5):
        raise ConfigError(f"eps must be a number in (0, 0.5), got {eps!r}.")
    return float(eps)


class _Histogram(Calibrator):
    def __init__(self, *, n_bins: int = 15, binning: str = "mass", eps: float = 1e-6) -> None:
        self.n_bins = n_bins
        self.binning = binning
        self.eps = eps

    def _fit(self, z, targets):
        if not (isinstance(self.n_bins, numbers.Integral) and self.n_bins >= 1):
            raise ConfigError(f"n_bins must be a positive integer, got {self.n_bins!r}.")
        _check_eps(self.eps)
        c, conf = _top_confidence(z)
        y = self._hit(z, targets, c)
        b = int(self.n_bins)
        if self.binning == "mass":
            inner = np.quantile(conf, np.arange(1, b) / b)
        elif self.binning == "width":
            inner = np.linspace(0.0, 1.0, b + 1)[1:-1]
        else:
            raise ConfigError(f"binning must be 'mass' or 'width', got {self.binning!r}.")
        idx = np.searchsorted(inner, conf, side="right")
        cnt = np.bincount(idx, minlength=b)
        tot = np.bincount(idx, weights=y, minlength=b)
        # Empty bins (coinciding quantiles, or no calibration item) get the overall mean.
        self.bin_edges_ = inner
        self.bin_values_ = np.where(cnt > 0, tot / np.maximum(cnt, 1), y.mean())
        self.bin_counts_ = cnt
        self.converged_ = True
        self.n_iter_ = 0

    def _predict_proba(self, z):
        _, conf = _top_confidence(z)
        new = self.bin_values_[np.searchsorted(self.bin_edges_, conf, side="right")]
        return set_top_confidence(z, np.clip(new, self.eps, 1.0 - self.eps))


class HistogramBinning(_Histogram):
    """HB-Hard: top-label confidence replaced by the voted-label accuracy of its bin.

    Tao et al., Sec. 6 baselines (HB-Hard).

    Parameters
    ----------
    n_bins : int, default 15
    binning : {"mass", "width"}, default "mass"
        Equal-mass bins (calibration quantiles; Zadrozny & Elkan) or equal-width bins.
    eps : float, default 1e-6
        New confidences are clipped to ``[eps, 1 - eps]``.

    Fitted attributes: ``bin_edges_`` (n_bins - 1 inner edges), ``bin_values_``,
    ``bin_counts_``, ``converged_`` (always True), ``n_iter_`` (0).

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[3.0, 0.0], [3.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> hb = HistogramBinning(n_bins=2).fit(z, [0, 1, 1, 1])
    >>> hb.predict_proba([[3.0, 0.0]]).round(3)
    array([[0.5, 0.5]])
    """

    target = "hard"

    def _hit(self, z, targets, c):
        return (hard_targets(targets, *z.shape) == c).astype(np.float64)


class SoftHistogramBinning(_Histogram):
    """HB-Soft: top-label confidence replaced by the bin mean of ``pi_c``.

    Tao et al., Sec. 6.1 (HB-Soft).

    Same parameters as :class:`HistogramBinning`.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[3.0, 0.0], [3.0, 0.0]])
    >>> SoftHistogramBinning(n_bins=1).fit(z, [[3, 1], [1, 1]]).bin_values_
    array([0.625])
    """

    target = "soft"

    def _hit(self, z, targets, c):
        return soft_targets(targets, *z.shape)[np.arange(z.shape[0]), c]


class SoftIsotonicRegression(Calibrator):
    """IR-Soft: isotonic (non-decreasing) map from top-label confidence to ``pi_c``.

    Tao et al., Sec. 6.1 (IR-Soft: PAVA from confidence to ``pi_c``).

    Fitted by the pool-adjacent-violators algorithm (:func:`scipy.optimize.isotonic_regression`)
    on the distinct confidences (ties pooled with their counts as weights);
    predictions interpolate linearly between fitted points and are constant
    outside the calibration range (scikit-learn's ``out_of_bounds="clip"``).

    Parameters
    ----------
    eps : float, default 1e-6
        New confidences are clipped to ``[eps, 1 - eps]``.

    Fitted attributes: ``x_thresholds_``, ``y_thresholds_``, ``converged_`` (True), ``n_iter_`` (0).

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[0.5, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    >>> ir = SoftIsotonicRegression().fit(z, [[1, 1], [3, 1], [1, 1], [9, 1]])
    >>> bool(np.all(np.diff(ir.y_thresholds_) >= 0))
    True
    """

    target = "soft"

    def __init__(self, *, eps: float = 1e-6) -> None:
        self.eps = eps

    def _fit(self, z, targets):
        _check_eps(self.eps)
        c, conf = _top_confidence(z)
        y = soft_targets(targets, *z.shape)[np.arange(z.shape[0]), c]
        xu, inv = np.unique(conf, return_inverse=True)
        w = np.bincount(inv).astype(np.float64)
        ym = np.bincount(inv, weights=y) / w
        res = isotonic_regression(ym, weights=w, increasing=True)
        self.x_thresholds_ = xu
        self.y_thresholds_ = np.asarray(res.x, dtype=np.float64)
        self.converged_ = True
        self.n_iter_ = 0

    def predict_confidence(self, confidence: ArrayLike) -> np.ndarray:
        """The fitted monotone map applied to top-label confidences, shape (n_items,)."""
        check_is_fitted(self, _FIT_HINT)
        return np.interp(
            np.asarray(confidence, dtype=np.float64), self.x_thresholds_, self.y_thresholds_
        )

    def _predict_proba(self, z):
        _, conf = _top_confidence(z)
        new = np.interp(conf, self.x_thresholds_, self.y_thresholds_)
        return set_top_confidence(z, np.clip(new, self.eps, 1.0 - self.eps))
