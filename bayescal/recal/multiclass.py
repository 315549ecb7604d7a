"""Multiclass recalibration fitted with the noise-corrected cross-entropy (SPEC §3).

Maps act on logits ``z`` (for a model that stores probabilities, ``z = log(max(p, eps))``,
see :func:`probs_to_logits`):

- :class:`CorrectedTemperatureScaling`: ``softmax(z / T)``, ``T`` in a box
  (default [0.05, 20], the binary box of Hanada & Futami, Sec. 5.1; SPEC §1);
- :class:`CorrectedVectorScaling`: ``softmax(w * z + b)`` with per-class scales
  ``w_k`` in a box (default [0.05, 20]) and biases ``b_k`` in a box (default
  [-10, 10]); the last bias is fixed at 0 because softmax ignores a common shift.

Both minimise the corrected cross-entropy

    L(theta) = mean_i -sum_k U_ik log softmax(g_theta(z_i))_k
             = mean_i logsumexp(g_theta(z_i)) - mean_i U_i . g_theta(z_i)

with the corrected one-hot targets ``U_i`` of :mod:`bayescal.metrics.multiclass`
(``E[U_i | Y_i, x_i] = e_{Y_i}``, rows summing to one), an unbiased estimate of
the clean cross-entropy of the map (the multiclass form of Hanada & Futami,
Eq. (E.2)). ``g_theta`` is linear in ``theta``, so ``L`` is convex whatever the
signs of ``U``; but ``U`` can be negative, and then ``L`` is unbounded below
over an unbounded parameter set (pushing ``p_k`` to 0 where ``U_ik < 0`` lowers
it without limit). The compact boxes are therefore part of the method, as in
the binary case; a solution on a box edge is reported (``at_bound_``).

``L`` depends on the targets only through ``M_k = mean_i U_ik z_ik`` and
``N_k = mean_i U_ik``, so a whole channel posterior is fitted from 2C numbers
per draw (:func:`fit_multiclass_posterior_map`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax, logsumexp

from bayescal._blas import one_blas_thread
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.data.validation import as_numeric
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.multiclass import corrected_onehot_targets
from bayescal.metrics.weights import DEFAULT_SHRINKAGE
from bayescal.recal.base import check_box
from bayescal.recal.targets import DEFAULT_WEIGHTS
from bayescal.summaries.patterns import item_states, unique_patterns

__all__ = [
    "MulticlassRecalibrator",
    "CorrectedTemperatureScaling",
    "CorrectedVectorScaling",
    "MulticlassMapEnsemble",
    "fit_multiclass_posterior_map",
    "corrected_cross_entropy",
    "corrected_target_stats",
    "probs_to_logits",
    "DEFAULT_PROB_CLIP",
]

#: Probabilities are raised to at least this before the log (log 1e-12 = -27.6):
#: a softmax output of exactly 0 would otherwise give an infinite logit.
DEFAULT_PROB_CLIP = 1e-12

_TARGET_SUM_TOL = 1e-6


def probs_to_logits(probs, eps: float = DEFAULT_PROB_CLIP) -> np.ndarray:
    """``log(max(p, eps))`` of shape (n_items, n_classes): logits that reproduce ``p``.

    Examples
    --------
    >>> probs_to_logits([[0.5, 0.5, 0.0]], eps=1e-4).round(3).tolist()
    [[-0.693, -0.693, -9.21]]
    """
    if not 0 < eps < 1:
        raise ConfigError(f"eps must be in (0, 1); got {eps}.")
    return np.log(np.maximum(np.asarray(probs, dtype=np.float64), eps))


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


def corrected_target_stats(
    data,
    channels,
    *,
    weights=DEFAULT_WEIGHTS,
    lam=DEFAULT_SHRINKAGE,
    eps: float = DEFAULT_PROB_CLIP,
):
    """Logits of the annotated items and the target statistics of every channel draw.

    The corrected cross-entropy needs the targets only through
    ``M[d, k] = mean_i U_ik z_ik`` and ``N[d, k] = mean_i U_ik``; both are sums
    over response patterns, so S draws cost S x P x C, not S x n x C.

    Parameters
    ----------
    data : MulticlassAnnotations
    channels : ChannelFit
    weights, lam
        Annotator weights of the corrected targets (default shrunk plug-in IV,
        as for binary recalibration).
    eps : float
        Probability clip before the log.

    Returns
    -------
    logits : ndarray of shape (n_annotated, C)
    M, N : ndarrays of shape (S, C)
    """

    if not isinstance(data, MulticlassAnnotations):
        raise DataError(f"expected MulticlassAnnotations; got {type(data).__name__}.")
    if channels.annotators != data.annotators or channels.n_classes != data.n_classes:
        raise DataError(
            f"channels are for annotators {channels.annotators} and {channels.n_classes} classes; "
            f"the data have {data.annotators} and {data.n_classes}."
        )
    keep = data.annotated
    z = probs_to_logits(data.probs[keep], eps)
    states, inv = unique_patterns(item_states(data.labels[keep], data.n_classes), data.n_classes)
    u = corrected_onehot_targets(states, channels, weights=weights, lam=lam)  # (S, P, C)
    n, c, p = z.shape[0], data.n_classes, states.shape[0]
    zsum = np.stack([np.bincount(inv, weights=z[:, k], minlength=p) for k in range(c)], axis=1)
    count = np.bincount(inv, minlength=p).astype(np.float64)
    m = np.einsum("spk,pk->sk", u, zsum) / n
    n_k = np.einsum("spk,p->sk", u, count) / n
    return z, m, n_k


def _check_draws(draws, channels) -> np.ndarray:
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
            channels.select_draws(_check_draws([draw], channels)),
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


class MulticlassMapEnsemble:
    """One fitted map per channel draw; predictions per draw and their mean.

    Attributes
    ----------
    maps_ : list of MulticlassRecalibrator
    draws_ : ndarray of the channel draws used
    """

    def __init__(self, maps, draws, eps):
        self.maps_ = list(maps)
        self.draws_ = np.asarray(draws)
        self.eps_ = float(eps)

    def predict_proba_draws(self, logits) -> np.ndarray:
        """Probabilities under every draw's map, shape (S, n_items, n_classes)."""
        return np.stack([m.predict_proba(logits) for m in self.maps_])

    def predict_proba(self, logits) -> np.ndarray:
        """The posterior-mean map: probabilities averaged over draws, (n_items, n_classes)."""
        return self.predict_proba_draws(logits).mean(axis=0)

    def __repr__(self) -> str:
        return f"<MulticlassMapEnsemble of {len(self.maps_)} {type(self.maps_[0]).__name__} maps>"


def fit_multiclass_posterior_map(
    estimator,
    data,
    channels,
    *,
    weights=DEFAULT_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
    draws=None,
    eps: float = DEFAULT_PROB_CLIP,
) -> MulticlassMapEnsemble:
    """Fit one corrected map per channel draw (a map ensemble).

    Parameters
    ----------
    estimator : MulticlassRecalibrator
        A template; each draw gets a fresh copy with the same parameters.
    data : MulticlassAnnotations
    channels : ChannelFit
    weights, lam
        Annotator weights of the corrected targets.
    draws : array-like of int, optional
        Which draws to use (default all).
    eps : float

    Returns
    -------
    MulticlassMapEnsemble

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.simulate import multiclass_population, simulate_multiclass
    >>> pop = multiclass_population(3, temperature=2.0)
    >>> d = simulate_multiclass(3000, population=pop, random_state=0)
    >>> ens = fit_multiclass_posterior_map(CorrectedTemperatureScaling(), d,
    ...                                    ChannelFit.known_confusion(pop.confusion))
    >>> len(ens.maps_), bool(ens.maps_[0].temperature_ > 1)
    (1, True)
    """
    if not isinstance(estimator, MulticlassRecalibrator):
        raise ConfigError(
            f"estimator must be a MulticlassRecalibrator; got {type(estimator).__name__}."
        )
    idx = np.arange(channels.n_draws) if draws is None else _check_draws(draws, channels)
    z, m, n_k = corrected_target_stats(
        data, channels.select_draws(idx), weights=weights, lam=lam, eps=eps
    )
    maps = [
        type(estimator)(**estimator.get_params())._fit_stats(z, m[d], n_k[d], eps=eps)
        for d in range(idx.size)
    ]
    return MulticlassMapEnsemble(maps, idx, eps)
