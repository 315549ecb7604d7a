"""Temperature and Platt maps fit by the corrected log loss (Hanada & Futami, Sec. 5.1, App. E.2).

Both act on the clipped logit ``s(z) = logit(clip(z, eps, 1 - eps))``:

- temperature: ``g_T(z) = sigmoid(s(z) / T)``, ``T`` in a box (default [0.05, 20]);
- Platt: ``g_uv(z) = sigmoid(u s(z) + v)``, ``(u, v)`` in a box (default
  ``u`` in [0, 10], ``v`` in [-10, 10]; ``u`` in [-10, 10] is the other setting
  Hanada & Futami use).

The clip ``eps`` (default ``1e-6``, so ``|s| <= 13.8``) is part of the method: the
bounded input logit and compact boxes keep predictions away from 0 and 1 and
keep the corrected loss bounded below although corrected labels ``U`` can leave
[0, 1] (Hanada & Futami, App. E.2).

The fitted parameters minimise the corrected empirical risk
``mean_i -U_i log g(Z_i) - (1 - U_i) log(1 - g(Z_i))
= mean_i log(1 + exp(x_i' theta)) - theta' mean_i U_i x_i`` with
``x_i = s_i`` (inverse temperature ``theta = 1 / T``) or ``x_i = (s_i, 1)``.
The objective is convex in ``theta`` whatever the sign of ``U`` (its Hessian is
``mean sigma (1 - sigma) x x'``), so one start suffices (Hanada & Futami's four Platt
starts would find the same optimum). It depends on the targets only through
``mean_i U_i x_i``, which is why a whole channel posterior is fitted from a few
sums per draw (:mod:`bayescal.recal.ensemble`). The solver is a projected Newton
method on the box with an Armijo search (exact to the projected-gradient
tolerance ``1e-10``), checked against scipy's bounded L-BFGS-B, which it falls
back to if it ever stalls.

Note on the temperature box: Hanada & Futami bound the *inverse* temperature by
[0.05, 20]; since that interval is closed under ``x -> 1 / x``, the box on ``T``
is the same set. The loss is convex in ``1 / T``, which is what is optimised.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.special import log_softmax, logsumexp

from bayescal._blas import one_blas_thread
from bayescal._typing import ArrayLike
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.data.validation import as_numeric
from bayescal.errors import ConfigError, ConvergenceWarning, DataError
from bayescal.metrics.weights import DEFAULT_SHRINKAGE
from bayescal.recal.base import RecalibrationMap, check_box
from bayescal.recal.targets import (
    DEFAULT_PROB_CLIP,
    DEFAULT_WEIGHTS,
    corrected_target_stats,
    probs_to_logits,
)

__all__ = [
    "TemperatureMap",
    "PlattMap",
    "clipped_logit",
    "DEFAULT_CLIP",
    "MulticlassRecalibrator",
    "CorrectedTemperatureScaling",
    "CorrectedVectorScaling",
    "corrected_cross_entropy",
    "check_draws",
]

#: Default score clip before taking logits.
DEFAULT_CLIP = 1e-6

_PG_TOL = 1e-10  # projected-gradient tolerance of the Newton solver
_ACCEPT_TOL = 1e-7  # accepted as converged below this (floating-point floor)


def clipped_logit(score: ArrayLike, eps: float = DEFAULT_CLIP) -> np.ndarray:
    """``logit(clip(z, eps, 1 - eps))`` of shape (n_items,).

    Hanada & Futami, App. E.2: the score's logit, clipped as in the paper's fits.

    Examples
    --------
    >>> clipped_logit([0.0, 0.5, 1.0], eps=0.01).round(3).tolist()
    [-4.595, 0.0, 4.595]
    """
    z = np.asarray(score, dtype=np.float64)
    return special.logit(np.clip(z, eps, 1.0 - eps))


def _check_clip(eps) -> float:
    eps = float(eps)
    if not 0.0 < eps < 0.5:
        raise ConfigError(f"clip must be in (0, 0.5); got {eps}.")
    return eps


# ----------------------------------------------------------------- solver
# The objective is written with element-wise products and sums over columns
# (d <= 2) rather than BLAS matrix-vector products: for one long column the
# BLAS path was 50x slower on the reference machine.
def _linear(theta, X):
    t = theta[0] * X[0]
    for j in range(1, len(X)):
        t = t + theta[j] * X[j]
    return t


def _softplus(t):
    # log(1 + exp(t)) without overflow; cheaper than np.logaddexp(0, t)
    return np.maximum(t, 0.0) + np.log1p(np.exp(-np.abs(t)))


def _loss(theta, X, m):
    return float(_softplus(_linear(theta, X)).mean() - theta @ m)


def _grad_hess(theta, X, m):
    p = special.expit(_linear(theta, X))
    w = p * (1.0 - p)
    d = len(X)
    g = np.array([(p * X[j]).mean() for j in range(d)]) - m
    H = np.empty((d, d))
    for j in range(d):
        wx = w * X[j]
        for k in range(j, d):
            H[j, k] = H[k, j] = (wx * X[k]).mean()
    return g, H


def _objective(theta, X, m):
    g, H = _grad_hess(theta, X, m)
    return _loss(theta, X, m), g, H


def _columns(X):
    return [np.ascontiguousarray(X[:, j]) for j in range(X.shape[1])]


def _projected_gradient(theta, g, lo, hi):
    active = ((theta <= lo) & (g > 0)) | ((theta >= hi) & (g < 0))
    return np.where(active, 0.0, g), active


def box_newton(
    X: np.ndarray,
    m: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    x0: np.ndarray,
    *,
    max_iter: int = 200,
) -> dict:
    """Minimise ``mean log(1 + exp(X theta)) - theta' m`` over the box [lo, hi].

    Hanada & Futami, App. E.2 (corrected log loss over a compact box; SPEC §1).

    Parameters
    ----------
    X : ndarray of shape (n_items, d)
    m : ndarray of shape (d,)
        ``mean_i U_i x_i``.
    lo, hi : ndarray of shape (d,)
    x0 : ndarray of shape (d,)

    Returns
    -------
    dict with ``theta``, ``loss``, ``n_iter``, ``converged``, ``pg`` (final max |projected
    gradient|).
    """
    X = X if isinstance(X, list) else _columns(X)
    theta = np.clip(np.asarray(x0, dtype=np.float64), lo, hi)
    f, g, H = _objective(theta, X, m)
    pg_max = np.inf
    it = 0
    while it < max_iter:
        it += 1
        pg, active = _projected_gradient(theta, g, lo, hi)
        pg_max = float(np.max(np.abs(pg)))
        if pg_max < _PG_TOL:
            break
        free = ~active
        d = np.zeros_like(theta)
        Hf = H[np.ix_(free, free)] + 1e-14 * np.eye(int(free.sum()))
        d[free] = -np.linalg.solve(Hf, g[free])
        step = 1.0
        moved = False
        while step > 1e-14:
            new = np.clip(theta + step * d, lo, hi)
            fn = _loss(new, X, m)
            if fn <= f + 1e-4 * float(g @ (new - theta)):
                moved = not np.array_equal(new, theta)
                break
            step *= 0.5
        if not moved:
            break
        theta, f = new, fn
        g, H = _grad_hess(theta, X, m)
    pg, _ = _projected_gradient(theta, g, lo, hi)
    pg_max = float(np.max(np.abs(pg)))
    converged = pg_max < _ACCEPT_TOL
    if not converged:
        theta, f, pg_max, converged = _lbfgsb(X, m, lo, hi, theta)
    return {"theta": theta, "loss": f, "n_iter": it, "converged": converged, "pg": pg_max}


def _lbfgsb(X, m, lo, hi, x0):
    from scipy.optimize import minimize

    X = X if isinstance(X, list) else _columns(X)

    def fun(th):
        f, g, _ = _objective(th, X, m)
        return f, g

    with one_blas_thread():  # tiny BLAS calls per iteration: threads only cost (bayescal._blas)
        res = minimize(
            fun,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=list(zip(lo, hi)),
            options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 2000},
        )
    f, g, _ = _objective(res.x, X, m)
    pg, _ = _projected_gradient(res.x, g, lo, hi)
    pg_max = float(np.max(np.abs(pg)))
    return res.x, f, pg_max, pg_max < _ACCEPT_TOL


def _target_moments(X, t):
    """``mean_i t_i x_i`` of shape (d,)."""
    return np.array([(X[:, j] * t).mean() for j in range(X.shape[1])])


def fit_many(
    X: np.ndarray, M: np.ndarray, lo: np.ndarray, hi: np.ndarray, x0: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit one parameter vector per row of ``M`` (shape (S, d)), warm-starting each from the last.

    Hanada & Futami, App. E.2, once per channel draw.

    Returns arrays ``theta`` (S, d), ``loss`` (S,), ``converged`` (S,).
    """
    S = M.shape[0]
    theta = np.empty((S, X.shape[1]))
    X = _columns(X)
    loss = np.empty(S)
    conv = np.empty(S, dtype=bool)
    start = np.asarray(x0, dtype=np.float64)
    for s in range(S):
        r = box_newton(X, M[s], lo, hi, start)
        theta[s], loss[s], conv[s] = r["theta"], r["loss"], r["converged"]
        start = r["theta"]
    return theta, loss, conv


def _warn_unconverged(name, pg):
    import warnings

    warnings.warn(
        f"{name}: the optimiser stopped with max |projected gradient| = {pg:.2e}; the fitted map "
        "may be slightly off. Check for extreme scores or too few items.",
        ConvergenceWarning,
        stacklevel=4,
    )


# ----------------------------------------------------------------- maps
class TemperatureMap(RecalibrationMap):
    """Temperature scaling ``g(z) = sigmoid(s(z) / T)`` fitted by the corrected log loss.

    Hanada & Futami, Sec. 5.1 and App. E.2 (temperature map, T in a compact box).

    Parameters
    ----------
    bounds : (float, float), default (0.05, 20.0)
        Compact box for the temperature ``T`` (positive, lower <= upper).
    clip : float, default 1e-6
        Scores are clipped to ``[clip, 1 - clip]`` before the logit.

    Attributes
    ----------
    temperature_ : float
    inverse_temperature_ : float
    loss_ : float
        Corrected log loss at the fit (can be negative when targets leave [0, 1]).
    at_bound_ : bool
        True when ``T`` sits on its box.
    converged_ : bool
    n_items_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(0, 3, 2000)
    >>> y = (rng.random(2000) < 1 / (1 + np.exp(-s / 2))).astype(float)
    >>> m = TemperatureMap().fit(1 / (1 + np.exp(-s)), y)
    >>> bool(1.7 < m.temperature_ < 2.3)
    True
    """

    _fitted_attr = "temperature_"

    def __init__(
        self, *, bounds: tuple[float, float] = (0.05, 20.0), clip: float = DEFAULT_CLIP
    ) -> None:
        self.bounds = bounds
        self.clip = clip

    def _box(self):
        lo, hi = check_box(self.bounds, "bounds (temperature)", positive=True)
        return np.array([1.0 / hi]), np.array([1.0 / lo])

    def _validate_params(self):
        self._box()
        _check_clip(self.clip)

    def features(self, z: np.ndarray) -> np.ndarray:
        return clipped_logit(z, _check_clip(self.clip))[:, None]

    def _fit(self, z, t):
        X = self.features(z)
        lo, hi = self._box()
        r = box_newton(X, _target_moments(X, t), lo, hi, np.array([1.0]))
        self._set(r["theta"], r["loss"], r["converged"], lo, hi)
        if not r["converged"]:
            _warn_unconverged(type(self).__name__, r["pg"])

    def _set(self, theta, loss, converged, lo, hi):
        beta = float(theta[0])
        self.inverse_temperature_ = beta
        self.temperature_ = 1.0 / beta
        self.loss_ = float(loss)
        self.at_bound_ = bool(beta <= lo[0] or beta >= hi[0])
        self.converged_ = bool(converged)

    def _predict(self, z):
        return special.expit(self.inverse_temperature_ * clipped_logit(z, _check_clip(self.clip)))


class PlattMap(RecalibrationMap):
    """Platt scaling ``g(z) = sigmoid(u s(z) + v)`` fitted by the corrected log loss.

    Hanada & Futami, Sec. 5.1 and App. E.2 (Platt map, u and v in compact boxes).

    Parameters
    ----------
    slope_bounds : (float, float), default (0.0, 10.0)
        Box for the slope ``u`` (Hanada & Futami also use (-10, 10)).
    intercept_bounds : (float, float), default (-10.0, 10.0)
        Box for the intercept ``v``.
    clip : float, default 1e-6
        Scores are clipped to ``[clip, 1 - clip]`` before the logit.

    Attributes
    ----------
    slope_, intercept_ : float
    loss_ : float
        Corrected log loss at the fit.
    at_bound_ : bool
        True when a parameter sits on its box.
    converged_ : bool
    n_items_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(0, 2, 4000)
    >>> y = (rng.random(4000) < 1 / (1 + np.exp(-(0.5 * s - 0.3)))).astype(float)
    >>> m = PlattMap().fit(1 / (1 + np.exp(-s)), y)
    >>> bool(abs(m.slope_ - 0.5) < 0.1 and abs(m.intercept_ + 0.3) < 0.15)
    True
    """

    _fitted_attr = "slope_"

    def __init__(
        self,
        *,
        slope_bounds: tuple[float, float] = (0.0, 10.0),
        intercept_bounds: tuple[float, float] = (-10.0, 10.0),
        clip: float = DEFAULT_CLIP,
    ) -> None:
        self.slope_bounds = slope_bounds
        self.intercept_bounds = intercept_bounds
        self.clip = clip

    def _box(self):
        u = check_box(self.slope_bounds, "slope_bounds")
        v = check_box(self.intercept_bounds, "intercept_bounds")
        return np.array([u[0], v[0]]), np.array([u[1], v[1]])

    def _validate_params(self):
        self._box()
        _check_clip(self.clip)

    def features(self, z: np.ndarray) -> np.ndarray:
        s = clipped_logit(z, _check_clip(self.clip))
        return np.column_stack([s, np.ones_like(s)])

    def _fit(self, z, t):
        X = self.features(z)
        lo, hi = self._box()
        r = box_newton(X, _target_moments(X, t), lo, hi, np.array([1.0, 0.0]))
        self._set(r["theta"], r["loss"], r["converged"], lo, hi)
        if not r["converged"]:
            _warn_unconverged(type(self).__name__, r["pg"])

    def _set(self, theta, loss, converged, lo, hi):
        self.slope_, self.intercept_ = float(theta[0]), float(theta[1])
        self.loss_ = float(loss)
        self.at_bound_ = bool(np.any((theta <= lo) | (theta >= hi)))
        self.converged_ = bool(converged)

    def _predict(self, z):
        return special.expit(
            self.slope_ * clipped_logit(z, _check_clip(self.clip)) + self.intercept_
        )


# ---------------------------------------------------------------- maps on C-class logits
_TARGET_SUM_TOL = 1e-6


def _check_logits(logits, n_classes=None) -> np.ndarray:
    z = as_numeric(logits, "logits")
    if z.ndim != 2 or z.shape[1] < 2:
        raise DataError(f"logits must be 2-D of shape (n_items, n_classes >= 2); got {z.shape}.")
    if z.shape[0] == 0:
        raise DataError("logits are empty: at least one item is needed.")
    if n_classes is not None and z.shape[1] != n_classes:
        raise DataError(f"logits have {z.shape[1]} classes; the map was fitted on {n_classes}.")
    bad = ~np.isfinite(z).all(axis=1)
    if bad.any():
        raise DataError(
            f"logits have non-finite values in {int(bad.sum())} row(s) (first at item "
            f"{int(np.flatnonzero(bad)[0])}); for probabilities with zeros use probs_to_logits."
        )
    return z


def _check_targets(targets, shape) -> np.ndarray:
    t = as_numeric(targets, "targets")
    if t.shape != shape:
        raise DataError(f"targets must have shape {shape} like the logits; got {t.shape}.")
    if not np.isfinite(t).all():
        raise DataError("targets must be finite.")
    dev = np.abs(t.sum(axis=1) - 1.0)
    if dev.max() > _TARGET_SUM_TOL:
        i = int(np.argmax(dev))
        raise DataError(
            f"target rows must sum to one (one-hot, soft or corrected one-hot targets); row {i} "
            f"sums to {t[i].sum():.10g}."
        )
    return t


def corrected_cross_entropy(probs, targets) -> float:
    """Mean corrected cross-entropy ``mean_i -sum_k U_ik log p_ik``.

    Unbiased for the clean cross-entropy of fixed predictions when ``U`` are
    corrected one-hot targets; with one-hot targets it is the ordinary NLL.

    Parameters
    ----------
    probs : array-like of shape (n_items, n_classes)
        Predicted probabilities, strictly positive.
    targets : array-like of shape (n_items, n_classes)
        Rows summing to one (any real values).

    Returns
    -------
    float

    Examples
    --------
    >>> round(corrected_cross_entropy([[0.5, 0.5]], [[1.2, -0.2]]), 6)
    0.693147
    """
    p = as_numeric(probs, "probs")
    t = _check_targets(targets, p.shape)
    if not np.all(p > 0):
        raise DataError("probs must be strictly positive for the log loss; clip them first.")
    return float(-(t * np.log(p)).sum(axis=1).mean())


def check_draws(draws, channels) -> np.ndarray:
    idx = np.asarray(draws)
    if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
        raise ConfigError(f"draws must be a non-empty list of integers; got {draws!r}.")
    if idx.min() < 0 or idx.max() >= channels.n_draws:
        raise ConfigError(
            f"draw index out of range: the channels have {channels.n_draws} draw(s); got {draws!r}."
        )
    return idx.astype(np.int64)


class MulticlassRecalibrator(BaseEstimator):
    """Base class: a map from logits (n_items, C) to probabilities, fitted on targets.

    scikit-learn conventions through :class:`bayescal.base.BaseEstimator`:
    keyword-only ``__init__`` that only stores parameters, validation in ``fit``,
    fitted attributes ending in ``_``, :class:`~bayescal.errors.NotFittedError`
    before ``fit``, ``sklearn.base.clone`` works. Subclasses implement
    ``_n_params(C)``, ``_bounds(C)``, ``_start(C)``, ``_apply(theta, z)`` and
    ``_grad(theta, z, probs, M, N)`` and store ``_store(theta)``.
    """

    _fitted_attr = "n_classes_"

    # ------------------------------------------------------------ the family (subclasses)
    def _bounds(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError(f"{type(self).__name__} must implement _bounds(c).")

    def _start(self, c: int) -> np.ndarray:
        raise NotImplementedError

    def _apply(self, theta: np.ndarray, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _linear(self, theta: np.ndarray, m: np.ndarray, n_k: np.ndarray) -> float:
        raise NotImplementedError

    def _grad(self, theta, z, probs, m, n_k) -> np.ndarray:
        raise NotImplementedError

    def _store(self, theta: np.ndarray) -> None:
        raise NotImplementedError

    def _theta(self) -> np.ndarray:
        raise NotImplementedError

    # ------------------------------------------------------------ fit
    def fit(self, logits, targets):
        """Fit to logits and targets (one-hot, soft, or corrected one-hot rows summing to one).

        Parameters
        ----------
        logits : array-like of shape (n_items, n_classes)
        targets : array-like of shape (n_items, n_classes)

        Returns
        -------
        self
        """
        z = _check_logits(logits)
        t = _check_targets(targets, z.shape)
        return self._fit_stats(z, (t * z).mean(axis=0), t.mean(axis=0))

    def fit_corrected(
        self,
        data,
        channels,
        *,
        weights=DEFAULT_WEIGHTS,
        lam=DEFAULT_SHRINKAGE,
        draw=None,
        eps: float = DEFAULT_PROB_CLIP,
    ):
        """Fit to corrected one-hot targets built from ``data`` and ``channels``.

        Parameters
        ----------
        data : MulticlassAnnotations
            Recalibration items (ideally independent of the channel sample).
        channels : ChannelFit
            One draw; for a posterior pass ``draw=`` or use
            :func:`fit_multiclass_posterior_map`.
        weights, lam
            Annotator weights (default shrunk plug-in inverse variance).
        draw : int, optional
        eps : float
            Probability clip before the log.

        Returns
        -------
        self
        """
        if draw is None:
            if channels.n_draws > 1:
                raise ConfigError(
                    f"channels have {channels.n_draws} draws; pass draw= to fit one, or use "
                    "fit_multiclass_posterior_map(...) to fit every draw."
                )
            draw = 0
        z, m, n_k = corrected_target_stats(
            data,
            channels.select_draws(check_draws([draw], channels)),
            weights=weights,
            lam=lam,
            eps=eps,
        )
        return self._fit_stats(z, m[0], n_k[0], eps=eps)

    def _fit_stats(self, z, m, n_k, eps: float = DEFAULT_PROB_CLIP):
        from scipy.optimize import minimize

        c = z.shape[1]
        lo, hi = self._bounds(c)

        def fun(theta):
            g = self._apply(theta, z)
            lse = logsumexp(g, axis=1)
            probs = np.exp(g - lse[:, None])
            return float(lse.mean() - self._linear(theta, m, n_k)), self._grad(
                theta, z, probs, m, n_k
            )

        with one_blas_thread():  # tiny BLAS calls per iteration (bayescal._blas)
            res = minimize(
                fun,
                np.clip(self._start(c), lo, hi),
                jac=True,
                method="L-BFGS-B",
                bounds=list(zip(lo, hi)),
                options={"gtol": 1e-10, "ftol": 0.0, "maxiter": 2000},
            )
        _, g = fun(res.x)
        free = ~(((res.x <= lo) & (g > 0)) | ((res.x >= hi) & (g < 0)))
        self.n_classes_ = c
        self._store(res.x)
        self.loss_ = float(res.fun)
        self.n_iter_ = int(res.nit)
        self.converged_ = bool(np.abs(g[free]).max(initial=0.0) < 1e-6)
        self.at_bound_ = bool(np.any((res.x <= lo) | (res.x >= hi)))
        self.eps_ = float(eps)
        return self

    # ------------------------------------------------------------ predict
    def predict_proba(self, logits) -> np.ndarray:
        """Recalibrated probabilities of shape (n_items, n_classes)."""
        self._check_fitted()
        z = _check_logits(logits, self.n_classes_)
        return np.exp(log_softmax(self._apply(self._theta(), z), axis=1))

    def recalibrate(self, data):
        """The same annotations with recalibrated probabilities (for held-out evaluation)."""
        self._check_fitted()
        return data.with_probs(self.predict_proba(probs_to_logits(data.probs, self.eps_)))

    def _check_fitted(self) -> None:
        check_is_fitted(self, "call fit(logits, targets) or fit_corrected(data, channels) first")


class CorrectedTemperatureScaling(MulticlassRecalibrator):
    """Temperature scaling ``softmax(z / T)`` fitted with the corrected cross-entropy.

    Parameters
    ----------
    temperature_bounds : (float, float), default (0.05, 20.0)
        Compact box for ``T``; the loss is optimised in ``1 / T`` (convex), and
        the interval is closed under ``x -> 1/x``, so the box is the same set.

    Attributes
    ----------
    temperature_ : float
    loss_, n_iter_, converged_, at_bound_

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> ts = CorrectedTemperatureScaling().fit(z, [[0.75, 0.25], [0.25, 0.75]])
    >>> round(ts.temperature_, 4)  # softmax(z / T) = (0.75, 0.25) when 2 / T = log 3
    1.8205
    """

    def __init__(self, *, temperature_bounds=(0.05, 20.0)):
        self.temperature_bounds = temperature_bounds

    def _bounds(self, c):
        lo, hi = check_box(self.temperature_bounds, "temperature_bounds", positive=True)
        return np.array([1.0 / hi]), np.array([1.0 / lo])

    def _start(self, c):
        return np.array([1.0])

    def _apply(self, theta, z):
        return theta[0] * z

    def _linear(self, theta, m, n_k):
        return theta[0] * m.sum()

    def _grad(self, theta, z, probs, m, n_k):
        return np.array([(probs * z).sum(axis=1).mean() - m.sum()])

    def _store(self, theta):
        self.inverse_temperature_ = float(theta[0])
        self.temperature_ = 1.0 / float(theta[0])

    def _theta(self):
        return np.array([self.inverse_temperature_])


class CorrectedVectorScaling(MulticlassRecalibrator):
    """Vector scaling ``softmax(w * z + b)`` fitted with the corrected cross-entropy.

    Parameters
    ----------
    scale_bounds : (float, float), default (0.05, 20.0)
        Box for each per-class scale ``w_k``.
    bias_bounds : (float, float), default (-10.0, 10.0)
        Box for each bias ``b_k`` (the last class's bias is fixed at 0).

    Attributes
    ----------
    scales_ : ndarray of shape (n_classes,)
    biases_ : ndarray of shape (n_classes,)
    loss_, n_iter_, converged_, at_bound_

    Examples
    --------
    >>> import numpy as np
    >>> z = np.log([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]])
    >>> vs = CorrectedVectorScaling().fit(z, np.eye(3))
    >>> vs.scales_.shape, float(vs.biases_[-1])
    ((3,), 0.0)
    """

    def __init__(self, *, scale_bounds=(0.05, 20.0), bias_bounds=(-10.0, 10.0)):
        self.scale_bounds = scale_bounds
        self.bias_bounds = bias_bounds

    def _bounds(self, c):
        slo, shi = check_box(self.scale_bounds, "scale_bounds")
        blo, bhi = check_box(self.bias_bounds, "bias_bounds")
        lo = np.concatenate([np.full(c, slo), np.full(c - 1, blo)])
        hi = np.concatenate([np.full(c, shi), np.full(c - 1, bhi)])
        return lo, hi

    def _start(self, c):
        return np.concatenate([np.ones(c), np.zeros(c - 1)])

    @staticmethod
    def _split(theta, c):
        return theta[:c], np.append(theta[c:], 0.0)

    def _apply(self, theta, z):
        w, b = self._split(theta, z.shape[1])
        return z * w + b

    def _linear(self, theta, m, n_k):
        w, b = self._split(theta, m.size)
        return w @ m + b @ n_k

    def _grad(self, theta, z, probs, m, n_k):
        gw = (probs * z).mean(axis=0) - m
        gb = probs.mean(axis=0) - n_k
        return np.concatenate([gw, gb[:-1]])

    def _store(self, theta):
        self.scales_, self.biases_ = self._split(
            np.asarray(theta, dtype=np.float64), self.n_classes_
        )

    def _theta(self):
        return np.concatenate([self.scales_, self.biases_[:-1]])
