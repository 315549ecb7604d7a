"""Affine maps of the logits: vector scaling, Platt, Dirichlet (hard and soft targets).

All are fitted by L-BFGS-B on the mean cross-entropy with analytic gradients.
The maps act on the logits as given; for a model that only stores
probabilities, pass ``log p`` (then the Dirichlet map is exactly Kull et al.'s
``softmax(W log p + b)``).
"""

from __future__ import annotations

import numbers

import numpy as np

from bayescal._typing import ArrayLike
from bayescal.ambiguity.calibrators.base import (
    Calibrator,
    cross_entropy,
    hard_targets,
    lbfgs,
    soft_targets,
)
from bayescal.ambiguity.simplex import log_softmax
from bayescal.ambiguity.validation import check_logits
from bayescal.errors import ConfigError, DataError

__all__ = [
    "VectorScaling",
    "PlattScaling",
    "SoftPlattScaling",
    "DirichletCalibration",
    "SoftDirichletCalibration",
    "dirichlet_map",
]


def _one_hot(y, k):
    t = np.zeros((y.shape[0], k))
    t[np.arange(y.shape[0]), y] = 1.0
    return t


def _check_reg(name, value):
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and value >= 0):
        raise ConfigError(f"{name} must be a non-negative number, got {value!r}.")
    return float(value)


class VectorScaling(Calibrator):
    """Per-class temperatures ``z_k / T_k`` fitted against the annotator distribution (VS).

    Tao et al., Sec. 6.1 (VS: the soft-label objective, Eq. 3, with per-class
    temperatures).

    Fitted attributes: ``temperatures_`` (n_classes,), ``converged_``, ``n_iter_``, ``loss_``.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> VectorScaling().fit(z, [[3, 1], [1, 3]]).temperatures_.shape
    (2,)
    """

    target = "soft"

    def __init__(self):
        pass

    def _fit(self, z, targets):
        t = soft_targets(targets, *z.shape)

        def fun(theta):
            g = z * np.exp(-theta)[None, :]
            loss, G = cross_entropy(g, t)
            return loss, -(G * g).sum(axis=0)

        k = z.shape[1]
        res, gmax = lbfgs(fun, np.zeros(k), bounds=[(np.log(1e-2), np.log(1e2))] * k)
        self.temperatures_ = np.exp(res.x)
        self._record(res, gmax)

    def _predict_proba(self, z):
        return np.exp(log_softmax(z / self.temperatures_[None, :]))


class _Platt(Calibrator):
    def __init__(self, *, l2: float = 1e-4) -> None:
        self.l2 = l2

    def _targets(self, z, targets):
        # The hard and soft subclasses define the targets; this base is never fitted itself.
        raise TypeError(
            f"{type(self).__name__} is an abstract base: use its Hard or Soft subclass."
        )

    def _fit(self, z, targets):
        lam = _check_reg("l2", self.l2)
        t = self._targets(z, targets)
        n, k = z.shape

        def fun(theta):
            w, b = theta[:k], theta[k:]
            loss, G = cross_entropy(z * w + b, t)
            dw = (G * z).sum(axis=0) + 2 * lam * (w - 1.0) / k
            db = G.sum(axis=0) + 2 * lam * b / k
            return loss + lam * (((w - 1.0) ** 2).sum() + (b**2).sum()) / k, np.concatenate(
                [dw, db]
            )

        res, gmax = lbfgs(fun, np.concatenate([np.ones(k), np.zeros(k)]))
        self.coef_ = res.x[:k].copy()
        self.intercept_ = res.x[k:].copy()
        self._record(res, gmax)

    def _predict_proba(self, z):
        return np.exp(log_softmax(z * self.coef_ + self.intercept_))


class PlattScaling(_Platt):
    """Per-class Platt map ``softmax(w_k z_k + b_k)`` fitted on voted labels.

    Tao et al., Sec. 6 baselines (Platt scaling on voted labels, the loss of Eq. 2).

    Parameters
    ----------
    l2 : float, default 1e-4
        Ridge penalty ``l2 / K * (||w - 1||^2 + ||b||^2)`` pulling towards the
        identity map; it keeps the fit finite when a class is separable.

    Fitted attributes: ``coef_`` (K,), ``intercept_`` (K,), ``converged_``, ``n_iter_``, ``loss_``.

    Examples
    --------
    >>> import numpy as np
    >>> PlattScaling().fit(np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), [0, 1, 1]).coef_.shape
    (2,)
    """

    target = "hard"

    def _targets(self, z, targets):
        return _one_hot(hard_targets(targets, *z.shape), z.shape[1])


class SoftPlattScaling(_Platt):
    """SoftPlatt: the Platt family fitted against the annotator distribution.

    Tao et al., Sec. 6.1 (SoftPlatt: KL against the annotator distribution, Eq. 3).

    Examples
    --------
    >>> import numpy as np
    >>> SoftPlattScaling().fit(
    ...     np.array([[2.0, 0.0], [0.0, 1.0]]), [[3, 1], [1, 3]]
    ... ).intercept_.shape
    (2,)
    """

    target = "soft"

    def _targets(self, z, targets):
        return soft_targets(targets, *z.shape)


def dirichlet_map(logits: ArrayLike, W: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Probabilities ``softmax(z W^T + b)`` of the Dirichlet (full affine) map.

    Tao et al., Sec. 6.1 (the Dirichlet / full affine map).

    Parameters
    ----------
    logits : array-like of shape (n_items, n_classes)
    W : array-like of shape (n_classes, n_classes)
    b : array-like of shape (n_classes,)

    Returns
    -------
    ndarray of shape (n_items, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[1.0, 0.0, -1.0]])
    >>> np.allclose(dirichlet_map(z, np.eye(3), np.zeros(3)), np.exp(z) / np.exp(z).sum())
    True
    """
    z = check_logits(logits)
    k = z.shape[1]
    W = np.asarray(W, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if W.shape != (k, k) or b.shape != (k,):
        raise DataError(
            f"W must have shape ({k}, {k}) and b shape ({k},); got {W.shape} and {b.shape}."
        )
    return np.exp(log_softmax(z @ W.T + b))


class _Dirichlet(Calibrator):
    def __init__(self, *, lambda_offdiag: float = 1e-3, lambda_bias: float = 1e-3) -> None:
        self.lambda_offdiag = lambda_offdiag
        self.lambda_bias = lambda_bias

    def _targets(self, z, targets):
        # The hard and soft subclasses define the targets; this base is never fitted itself.
        raise TypeError(
            f"{type(self).__name__} is an abstract base: use its Hard or Soft subclass."
        )

    def _fit(self, z, targets):
        lo = _check_reg("lambda_offdiag", self.lambda_offdiag)
        lb = _check_reg("lambda_bias", self.lambda_bias)
        t = self._targets(z, targets)
        n, k = z.shape
        off = ~np.eye(k, dtype=bool)
        c_off = lo / (k * (k - 1))
        c_b = lb / k

        def fun(theta):
            W = theta[: k * k].reshape(k, k)
            b = theta[k * k :]
            loss, G = cross_entropy(z @ W.T + b, t)
            dW = G.T @ z + 2 * c_off * np.where(off, W, 0.0)
            db = G.sum(axis=0) + 2 * c_b * b
            pen = c_off * float((W[off] ** 2).sum()) + c_b * float(b @ b)
            return loss + pen, np.concatenate([dW.ravel(), db])

        res, gmax = lbfgs(fun, np.concatenate([np.eye(k).ravel(), np.zeros(k)]))
        self.coef_ = res.x[: k * k].reshape(k, k).copy()
        self.intercept_ = res.x[k * k :].copy()
        self._record(res, gmax)

    def _predict_proba(self, z):
        return np.exp(log_softmax(z @ self.coef_.T + self.intercept_))


class DirichletCalibration(_Dirichlet):
    """Dirichlet calibration ``softmax(W z + b)`` on voted labels (Dirichlet-Hard;
    Kull et al. 2019).

    Tao et al., Sec. 6 baselines (Dirichlet-Hard, voted-label loss Eq. 2).

    ODIR penalty ``lambda_offdiag / (K (K - 1)) * sum_{i != j} W_ij^2 +
    lambda_bias / K * sum_j b_j^2`` added to the mean NLL; started at ``W = I, b = 0``.

    Parameters
    ----------
    lambda_offdiag, lambda_bias : float, default 1e-3

    Fitted attributes: ``coef_`` (K, K), ``intercept_`` (K,), ``converged_``, ``n_iter_``,
    ``loss_``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(100, 3))
    >>> DirichletCalibration().fit(z, z.argmax(axis=1)).coef_.shape
    (3, 3)
    """

    target = "hard"

    def _targets(self, z, targets):
        return _one_hot(hard_targets(targets, *z.shape), z.shape[1])


class SoftDirichletCalibration(_Dirichlet):
    """Dirichlet-Soft: the ODIR-penalised Dirichlet map fitted against the annotator distribution.

    Tao et al., Sec. 6.1 (Dirichlet-Soft: KL against the annotator distribution,
    Eq. 3, with ODIR regularisation).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(100, 3))
    >>> p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    >>> np.allclose(SoftDirichletCalibration().fit(z, p).coef_, np.eye(3), atol=0.05)
    True
    """

    target = "soft"

    def _targets(self, z, targets):
        return soft_targets(targets, *z.shape)
