"""Temperature-type calibrators: one global (or per-item) temperature on the logits.

- :class:`TemperatureScaling` (TS): voted-label NLL (Guo et al.).
- :class:`SoftTemperatureScaling` (SLTS): cross-entropy against ``pi`` (Eq. 3).
- :class:`MonteCarloTemperatureScaling` (MCTS): ``S`` sampled annotations per item.
- :class:`OracleTemperatureScaling`: SLTS fitted on the test split (an upper bound).
- :class:`LabelSmoothingTemperatureScaling`: LS-TS and its ablations C-LS,
  Ent-LS, Fixed-LS (pseudo-soft targets from voted labels and the model).
- :class:`AdaptiveTemperatureScaling` (ATS): per-item temperature from logit features.

The temperature is optimised on ``theta = log T`` with analytic gradients and
L-BFGS-B, ``T`` in [1e-2, 1e2].
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from bayescal._typing import ArrayLike, RandomState
from bayescal.ambiguity.calibrators.base import (
    _FIT_HINT,
    Calibrator,
    cross_entropy,
    hard_targets,
    lbfgs,
    soft_targets,
)
from bayescal.ambiguity.simplex import entropy, log_softmax
from bayescal.ambiguity.validation import check_labels, check_logits, check_random_state
from bayescal.base import check_is_fitted
from bayescal.errors import ConfigError, DataError

__all__ = [
    "TemperatureScaling",
    "SoftTemperatureScaling",
    "MonteCarloTemperatureScaling",
    "OracleTemperatureScaling",
    "LabelSmoothingTemperatureScaling",
    "AdaptiveTemperatureScaling",
    "fit_temperature",
]

LOG_T_BOUNDS = (np.log(1e-2), np.log(1e2))


def fit_temperature(logits: np.ndarray, targets: np.ndarray) -> tuple[float, Any, float]:
    """Temperature minimising the mean cross-entropy of ``softmax(logits / T)`` against ``targets``.

    Tao et al., Sec. 6.1, Eq. 3 (and Eq. 2 with one-hot targets).

    Private-kernel twin of the TS-family classes: ``logits`` (n, K) validated
    floats, ``targets`` (n, K) rows summing to one.

    Returns
    -------
    T : float
    result : scipy.optimize.OptimizeResult
    grad_max : float
        Final max-abs projected gradient with respect to ``log T``.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> T, _, _ = fit_temperature(z, np.array([[0.75, 0.25], [0.25, 0.75]]))
    >>> round(T, 4)  # softmax(z / T) = (0.75, 0.25) when 2 / T = log 3
    1.8205
    """

    def fun(theta):
        g = logits * np.exp(-theta[0])
        loss, G = cross_entropy(g, targets)
        return loss, np.array([-(G * g).sum()])

    res, gmax = lbfgs(fun, np.zeros(1), bounds=[LOG_T_BOUNDS])
    return float(np.exp(res.x[0])), res, gmax


class _GlobalTemperature(Calibrator):
    """Shared predict for every single-temperature calibrator."""

    def _fit_on(self, z, t):
        T, res, gmax = fit_temperature(z, t)
        self.temperature_ = T
        self._record(res, gmax)

    def _predict_proba(self, z):
        return np.exp(log_softmax(z / self.temperature_))


class TemperatureScaling(_GlobalTemperature):
    """Temperature scaling on voted labels (TS; Guo et al. 2017, Eq. 2).

    Tao et al., Sec. 3, Eq. 2 (the voted-label loss).

    Fitted attributes: ``temperature_``, ``converged_``, ``n_iter_``, ``loss_``.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[4.0, 0.0], [0.0, 4.0], [4.0, 0.0], [4.0, 0.0]])
    >>> ts = TemperatureScaling().fit(z, [0, 1, 0, 1])
    >>> bool(ts.temperature_ > 1)  # one of four is wrong: soften the logits
    True
    """

    target = "hard"

    def __init__(self):
        pass

    def _fit(self, z, targets):
        y = hard_targets(targets, *z.shape)
        t = np.zeros_like(z)
        t[np.arange(z.shape[0]), y] = 1.0
        self._fit_on(z, t)


class SoftTemperatureScaling(_GlobalTemperature):
    """Soft-label temperature scaling (SLTS): cross-entropy against the annotator distribution
    (Eq. 3).

    Tao et al., Sec. 6.1, Eq. 3.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> round(SoftTemperatureScaling().fit(z, [[3, 1], [1, 3]]).temperature_, 4)
    1.8205
    """

    target = "soft"

    def __init__(self):
        pass

    def _fit(self, z, targets):
        self._fit_on(z, soft_targets(targets, *z.shape))


class OracleTemperatureScaling(SoftTemperatureScaling):
    """ORACLE: SLTS fitted on the evaluation (test) split itself.

    Tao et al., Sec. 7 tables (Oracle TS: an upper reference).

    An upper reference for what a single temperature can reach on the test
    annotator distributions; it looks at the test labels and is never a
    method to recommend or to compare as an equal. ``oracle = True`` marks it
    so reports can label it.

    Examples
    --------
    >>> OracleTemperatureScaling.oracle
    True
    """

    oracle = True


class MonteCarloTemperatureScaling(_GlobalTemperature):
    """MCTS: temperature fitted on ``n_samples`` single annotations per item.

    Tao et al., Sec. 6.1 (MCTS: Eq. 3 estimated by sampled annotations).

    The loss ``-(1/nS) sum_{i,s} log softmax(z_i / T)_{a_is}`` equals SLTS on the
    empirical distribution of each item's samples, which is how it is computed.

    Parameters
    ----------
    n_samples : int, default 1
        Annotations drawn per item (``S``) from its annotator distribution.
    random_state : int or numpy.random.Generator, default 0

    Notes
    -----
    ``fit(logits, targets)`` draws the samples from ``targets`` (counts or
    distributions). To use recorded annotations instead, pass
    ``fit(logits, annotations=A)`` with integer labels ``A`` of shape
    (n_items, S) (``-1`` = missing; every item needs one). Fitted attributes:
    ``temperature_``, ``sample_counts_`` (n_items, n_classes), ``converged_``,
    ``n_iter_``, ``loss_``.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[2.0, 0.0], [0.0, 2.0]] * 50)
    >>> m = MonteCarloTemperatureScaling(n_samples=1, random_state=0).fit(z, [[3, 1], [1, 3]] * 50)
    >>> 1.0 < m.temperature_ < 3.0
    True
    """

    target = "soft"

    def __init__(self, *, n_samples: int = 1, random_state: RandomState = 0) -> None:
        self.n_samples = n_samples
        self.random_state = random_state

    def fit(
        self,
        logits: ArrayLike,
        targets: ArrayLike | None = None,
        *,
        annotations: ArrayLike | None = None,
    ) -> MonteCarloTemperatureScaling:
        """Fit on samples drawn from ``targets``, or on recorded ``annotations``.

        Parameters
        ----------
        logits : array-like of shape (n_items, n_classes)
        targets : array-like of shape (n_items, n_classes), optional
            Counts or distributions to draw ``n_samples`` labels per item from.
        annotations : array-like of int, shape (n_items, S), optional
            Recorded single annotations (``-1`` for missing).
        """
        if (targets is None) == (annotations is None):
            raise ConfigError(
                "pass exactly one of targets (to sample from) or annotations (recorded labels)."
            )
        self._annotations = annotations
        try:
            return self._fit_logits(logits, targets)
        finally:
            del self._annotations

    def _fit(self, z, targets):
        n, k = z.shape
        if self._annotations is not None:
            a = np.asarray(self._annotations)
            if a.ndim == 1:
                a = a[:, None]
            if a.ndim != 2 or a.shape[0] != n:
                raise DataError(f"annotations must have shape (n_items={n}, S), got {a.shape}.")
            flat = check_labels(np.where(a < 0, 0, a).ravel(), n_classes=k, name="annotations")
            present = (a >= 0).ravel()
            rows = np.repeat(np.arange(n), a.shape[1])
            counts = np.bincount(rows * k + flat, weights=present, minlength=n * k).reshape(n, k)
        else:
            s = self.n_samples
            if not isinstance(s, numbers.Integral) or s < 1:
                raise ConfigError(f"n_samples must be a positive integer, got {s!r}.")
            pi = soft_targets(targets, n, k)
            counts = (
                check_random_state(self.random_state).multinomial(int(s), pi).astype(np.float64)
            )
        self.sample_counts_ = counts.astype(np.int64)
        self._fit_on(z, soft_targets(counts, n, k))


class LabelSmoothingTemperatureScaling(_GlobalTemperature):
    """Temperature scaling on pseudo-soft targets built from voted labels only (LS-TS family).

    Tao et al., Sec. 6.1 (LS-TS and the C-LS / Ent-LS / Fixed-LS variants, App. L).

    Targets ``(1 - e_i) onehot(y*_i) + e_i / K``, then SLTS. With ``p`` the
    uncalibrated softmax on the calibration set:

    - ``smoothing="global"`` (LS-TS): ``e = mean_i (1 - p_{i, y*_i})``;
    - ``"class"`` (C-LS): ``e_k`` = that mean over items with ``y* = k``
      (a class without items gets the global ``e``);
    - ``"entropy"`` (Ent-LS): ``e_i = H(p_i) / log K``;
    - a float in [0, 1] (Fixed-LS uses 0.1): that constant.

    Fitted attributes: ``temperature_``, ``smoothing_`` (float, (K,) or (n,)),
    ``converged_``, ``n_iter_``, ``loss_``.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[3.0, 0.0], [0.0, 3.0], [2.0, 0.0]])
    >>> ls = LabelSmoothingTemperatureScaling(smoothing=0.1).fit(z, [0, 1, 0])
    >>> ls.smoothing_
    0.1
    """

    target = "voted-only"

    def __init__(self, *, smoothing: str | float = "global") -> None:
        self.smoothing = smoothing

    def _fit(self, z, targets):
        n, k = z.shape
        y = hard_targets(targets, n, k)
        p = np.exp(log_softmax(z))
        miss = 1.0 - p[np.arange(n), y]
        s = self.smoothing
        if isinstance(s, str):
            if s == "global":
                e = float(miss.mean())
                e_i = np.full(n, e)
            elif s == "class":
                cnt = np.bincount(y, minlength=k)
                tot = np.bincount(y, weights=miss, minlength=k)
                e = np.where(cnt > 0, tot / np.maximum(cnt, 1), miss.mean())
                e_i = e[y]
            elif s == "entropy":
                e = entropy(p) / np.log(k)
                e_i = e
            else:
                raise ConfigError(
                    "smoothing must be 'global', 'class', "
                    f"'entropy' or a float in [0, 1], got {s!r}."
                )
        elif isinstance(s, numbers.Real) and not isinstance(s, bool) and 0.0 <= float(s) <= 1.0:
            e = float(s)
            e_i = np.full(n, e)
        else:
            raise ConfigError(
                f"smoothing must be 'global', 'class', 'entropy' or a float in [0, 1], got {s!r}."
            )
        t = np.repeat((e_i / k)[:, None], k, axis=1)
        t[np.arange(n), y] += 1.0 - e_i
        self.smoothing_ = e
        self._fit_on(z, t)


def _ats_features(z: np.ndarray) -> np.ndarray:
    # [max logit, normalised entropy, top-1 minus top-2 probability, top-1 probability]
    p = np.exp(log_softmax(z))
    ps = np.sort(p, axis=1)
    return np.column_stack(
        [z.max(axis=1), entropy(p) / np.log(z.shape[1]), ps[:, -1] - ps[:, -2], ps[:, -1]]
    )


def _softplus(a):
    return np.logaddexp(0.0, a)


def _sigmoid(a):
    return np.exp(-np.logaddexp(0.0, -a))


class AdaptiveTemperatureScaling(Calibrator):
    """ATS: per-item temperature ``T_i = softplus(w^T phi_i + b) + 0.1`` on voted labels.

    Tao et al., App. L (ATS, annotation-free per-instance temperature).

    ``phi_i`` = (max logit, normalised prediction entropy, top-1 minus top-2
    probability, top-1 probability), standardised with the calibration mean and
    standard deviation (stored). Loss: voted-label NLL + ``l2 * ||w||^2``.
    Started from the TS solution (``w = 0``, ``b`` giving ``T_TS``), so ATS can
    only move away from TS where the voted-label loss prefers it.

    Parameters
    ----------
    l2 : float, default 1e-3

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(200, 3)) * 3
    >>> ats = AdaptiveTemperatureScaling().fit(z, z.argmax(axis=1))
    >>> ats.coef_.shape
    (4,)
    """

    target = "hard"

    def __init__(self, *, l2: float = 1e-3) -> None:
        self.l2 = l2

    def _temperatures(self, z, w, b):
        a = ((_ats_features(z) - self.feature_mean_) / self.feature_scale_) @ w + b
        return _softplus(a) + 0.1, a

    def _fit(self, z, targets):
        if not (isinstance(self.l2, numbers.Real) and self.l2 >= 0):
            raise ConfigError(f"l2 must be a non-negative number, got {self.l2!r}.")
        n, k = z.shape
        y = hard_targets(targets, n, k)
        t = np.eye(k)[y]
        phi = _ats_features(z)
        self.feature_mean_ = phi.mean(axis=0)
        sd = phi.std(axis=0)
        self.feature_scale_ = np.where(sd > 1e-12, sd, 1.0)
        f = (phi - self.feature_mean_) / self.feature_scale_
        T0, _, _ = fit_temperature(z, t)
        b0 = float(np.log(np.expm1(max(T0 - 0.1, 1e-3))))
        lam = float(self.l2)

        def fun(theta):
            w, b = theta[:4], theta[4]
            a = f @ w + b
            T = _softplus(a) + 0.1
            g = z / T[:, None]
            loss, G = cross_entropy(g, t)
            dT = -(G * g).sum(axis=1) / T * _sigmoid(a)
            grad = np.concatenate([f.T @ dT + 2 * lam * w, [dT.sum()]])
            return loss + lam * float(w @ w), grad

        res, gmax = lbfgs(fun, np.concatenate([np.zeros(4), [b0]]))
        self.coef_ = res.x[:4].copy()
        self.intercept_ = float(res.x[4])
        self._record(res, gmax)

    def predict_temperature(self, logits: ArrayLike) -> np.ndarray:
        """Per-item temperatures of shape (n_items,)."""
        check_is_fitted(self, _FIT_HINT)
        z = check_logits(logits, n_classes=self.n_classes_)
        return self._temperatures(z, self.coef_, self.intercept_)[0]

    def _predict_proba(self, z):
        T, _ = self._temperatures(z, self.coef_, self.intercept_)
        return np.exp(log_softmax(z / T[:, None]))
