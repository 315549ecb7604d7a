"""Shared machinery of the post-hoc calibrators: interface, targets, optimiser.

Every calibrator follows the scikit-learn contract: keyword-only ``__init__``
that stores parameters, validation in :meth:`Calibrator.fit`, fitted
attributes ending in ``_``, :class:`~bayescal.errors.NotFittedError` before
fit (all from :class:`bayescal.base.BaseEstimator`), and a convergence record
(``converged_``, ``n_iter_``, ``loss_``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Self

import numpy as np
from scipy.optimize import minimize

from bayescal._blas import one_blas_thread
from bayescal._typing import ArrayLike
from bayescal.ambiguity.simplex import log_softmax
from bayescal.ambiguity.validation import check_labels, check_logits, check_targets
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.errors import ConvergenceWarning

__all__ = ["Calibrator", "Uncalibrated", "hard_targets", "soft_targets"]

# L-BFGS-B settings shared by every parametric calibrator. ``ftol = 0`` lets the
# run continue until the projected gradient is below GTOL or the line search can
# no longer decrease the loss in floating point; the fit is accepted as converged
# when the final max-abs gradient is below ACCEPT_GTOL.
GTOL = 1e-10
ACCEPT_GTOL = 1e-6
MAXITER = 2000
_FIT_HINT = "call fit(logits, targets) first"


def soft_targets(targets: ArrayLike, n_items: int, n_classes: int) -> np.ndarray:
    """Distributions (n_items, n_classes) from labels (one-hot), counts or distributions.

    Tao et al., Sec. 6.1: the annotator distribution is the target of Eq. 3.
    """
    return check_targets(targets, n_items=n_items, n_classes=n_classes)


def hard_targets(targets: ArrayLike, n_items: int, n_classes: int) -> np.ndarray:
    """Voted labels (n_items,) from labels, or from counts / distributions by argmax

    Tao et al., Sec. 3: the voted label ``y* = argmax pi`` of Eq. 2.
    (ties: lowest index)."""
    t = np.asarray(targets)
    if t.ndim == 1:
        return check_labels(t, n_classes=n_classes, n_items=n_items)
    return check_targets(t, n_items=n_items, n_classes=n_classes).argmax(axis=1)


def cross_entropy(g: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean soft-target cross-entropy of logits ``g`` and its gradient with respect to ``g``.

    Tao et al., Sec. 6.1, Eq. 3 (soft-label objective).

    ``L = mean_i -sum_k t_ik log softmax(g_i)_k``; rows of ``t`` sum to one, so
    ``dL/dg = (softmax(g) - t) / n``.
    """
    ls = log_softmax(g)
    n = g.shape[0]
    loss = float(-(t * ls).sum() / n)
    return loss, (np.exp(ls) - t) / n


class Calibrator(BaseEstimator):
    """Base class: a map from logits (n_items, n_classes) to calibrated probabilities.

    Tao et al., Sec. 6 (post-hoc calibrators on cached logits).

    Subclasses set ``target`` (``"hard"``: voted labels; ``"soft"``: annotator
    distributions; ``"voted-only"``: voted labels turned into pseudo-soft
    targets) and implement ``_fit(z, targets)`` and ``_predict_proba(z)``.
    Parameters, ``repr`` and the fitted-state check come from
    :class:`bayescal.base.BaseEstimator`, so ``sklearn.base.clone`` works.
    """

    target = "soft"
    oracle = False
    _fitted_attr = "n_classes_"

    def fit(self, logits: ArrayLike, targets: ArrayLike) -> Self:
        """Fit the map.

        Parameters
        ----------
        logits : array-like of shape (n_items, n_classes)
            Finite logits (for a model that stores probabilities, pass ``log p``).
        targets : array-like of shape (n_items,) or (n_items, n_classes)
            Voted labels, or annotator counts / distributions. Hard calibrators
            reduce counts to the voted label (ties: lowest index); soft
            calibrators turn labels into one-hot rows.

        Returns
        -------
        self
        """
        return self._fit_logits(logits, targets)

    def _fit_logits(self, logits: ArrayLike, targets: ArrayLike | None) -> Self:
        # the body of fit; targets is None only for a subclass that takes its labels
        # another way (MonteCarloTemperatureScaling's recorded annotations)
        z = check_logits(logits)
        self.n_classes_ = z.shape[1]
        self._fit(z, targets)
        return self

    def _fit(self, z: np.ndarray, targets: ArrayLike | None) -> None:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__name__} must implement _fit(z, targets).")

    def _predict_proba(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError(f"{type(self).__name__} must implement _predict_proba(z).")

    def predict_proba(self, logits: ArrayLike) -> np.ndarray:
        """Calibrated probabilities of shape (n_items, n_classes); rows sum to one."""
        check_is_fitted(self, _FIT_HINT)
        z = check_logits(logits, n_classes=self.n_classes_)
        p = self._predict_proba(z)
        return p / p.sum(axis=1, keepdims=True)

    def _record(self, res, grad_max: float) -> None:
        self.n_iter_ = int(res.nit)
        self.loss_ = float(res.fun)
        self.converged_ = bool(res.success or grad_max < ACCEPT_GTOL)
        self.optimizer_message_ = str(res.message)
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__}: L-BFGS stopped after {res.nit} iterations with "
                f"max |gradient| = {grad_max:.2e} ({res.message}); the fitted map may be off. "
                "Check the logits for extreme values or use more calibration items.",
                ConvergenceWarning,
                stacklevel=3,
            )


def lbfgs(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    *,
    bounds: list[tuple[float | None, float | None]] | None = None,
    maxiter: int = MAXITER,
    gtol: float = GTOL,
) -> tuple[Any, float]:
    """Minimise ``fun(x) -> (loss, grad)`` with L-BFGS-B at the fixed tolerances above.

    ``gtol`` is looser only where a fit is scored rather than kept (the ODIR grid search).

    The optimiser of Tao et al.'s parametric calibrators (Sec. 6.1; App. M tolerances).

    Returns the scipy result and the final max-abs (projected) gradient.
    """
    with one_blas_thread():  # tiny BLAS calls per iteration: threads only cost (bayescal._blas)
        res = minimize(
            fun,
            np.asarray(x0, dtype=np.float64),
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": maxiter, "gtol": gtol, "ftol": 0.0, "maxcor": 30},
        )
    g = np.asarray(res.jac, dtype=np.float64)
    if bounds is not None:
        lo = np.array([b[0] if b[0] is not None else -np.inf for b in bounds])
        hi = np.array([b[1] if b[1] is not None else np.inf for b in bounds])
        at_lo = (res.x <= lo) & (g > 0)
        at_hi = (res.x >= hi) & (g < 0)
        g = np.where(at_lo | at_hi, 0.0, g)
    return res, float(np.max(np.abs(g))) if g.size else 0.0


class Uncalibrated(Calibrator):
    """The identity map: ``softmax(logits)``. A reference, fits nothing.

    Tao et al., Sec. 7 tables: the uncalibrated reference.

    Examples
    --------
    >>> import numpy as np
    >>> Uncalibrated().fit(np.zeros((2, 3)), [0, 1]).predict_proba([[0.0, 0.0, 0.0]]).round(3)
    array([[0.333, 0.333, 0.333]])
    """

    target = "none"

    def __init__(self) -> None:
        pass

    def _fit(self, z, targets):
        # Validated so that bad targets fail here as for every other method.
        soft_targets(targets, z.shape[0], z.shape[1])
        self.converged_ = True
        self.n_iter_ = 0

    def _predict_proba(self, z):
        return np.exp(log_softmax(z))
