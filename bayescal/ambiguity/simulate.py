"""Simulators for the ambiguity track.

- :func:`gaussian_three_class`: the paper's Section 4 motivating example
  (three 2-D Gaussian clusters, the middle one ambiguous with
  ``pi = (0, 0.7, 0.3)``), and :func:`run_motivating_example`, which trains a
  small MLP on voted labels and compares voted-label calibrators.
- :func:`dawid_skene_annotations`: class-conditional synthetic annotators
  drawn from any confusion matrix; :func:`isic2019_confusion` ships the
  paper's 8x8 ISIC 2019 matrix (Appendix I, Table 6).
- :class:`MLP`: a numpy two-hidden-layer tanh network trained by L-BFGS
  with analytic back-propagation (no deep-learning dependency).
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from importlib import resources

import numpy as np
import xarray as xr
from scipy.optimize import minimize

from bayescal._typing import ArrayLike, RandomState
from bayescal.ambiguity.calibrators import (
    HistogramBinning,
    PlattScaling,
    SoftTemperatureScaling,
    TemperatureScaling,
    Uncalibrated,
)
from bayescal.ambiguity.metrics import ece_true, ece_voted
from bayescal.ambiguity.simplex import log_softmax
from bayescal.ambiguity.validation import check_labels, check_random_state
from bayescal.base import BaseEstimator, check_is_fitted
from bayescal.dims import CLASS
from bayescal.errors import ConfigError, ConvergenceWarning, DataError

__all__ = [
    "GaussianExample",
    "gaussian_three_class",
    "MLP",
    "run_motivating_example",
    "isic2019_confusion",
    "dawid_skene_annotations",
]

#: Cluster means, covariance diagonals (read as variances) and annotator distributions of Section 4.
GAUSSIAN_CLUSTERS = (
    ((-3.2, 1.1), (0.60, 0.45), (1.0, 0.0, 0.0)),
    ((0.0, 0.0), (1.15, 0.75), (0.0, 0.70, 0.30)),
    ((3.2, -1.1), (0.60, 0.45), (0.0, 0.0, 1.0)),
)


@dataclass(frozen=True)
class GaussianExample:
    """Items of the three-cluster example.

    Attributes
    ----------
    X : ndarray of shape (n_items, 2)
    pi : ndarray of shape (n_items, 3)
        Annotator distribution of each item's cluster.
    voted : ndarray of shape (n_items,)
        Voted label (0, 1, 1 for the middle cluster since 0.7 > 0.3, or 2).
    cluster : ndarray of shape (n_items,)
        0, 1 (the ambiguous one) or 2.
    """

    X: np.ndarray
    pi: np.ndarray
    voted: np.ndarray
    cluster: np.ndarray


def gaussian_three_class(n_per_cluster: int, *, random_state: RandomState = 0) -> GaussianExample:
    """Draw the Section 4 example: ``n_per_cluster`` points from each of three Gaussians.

    ``x ~ N((-3.2, 1.1), diag(0.60, 0.45))`` with ``pi = (1, 0, 0)``;
    ``x ~ N((0, 0), diag(1.15, 0.75))`` with ``pi = (0, 0.70, 0.30)``;
    ``x ~ N((3.2, -1.1), diag(0.60, 0.45))`` with ``pi = (0, 0, 1)``. The
    paper writes ``diag(...)`` without saying variance or standard deviation;
    we read the entries as variances. Items are returned shuffled.

    Examples
    --------
    >>> ex = gaussian_three_class(10, random_state=0)
    >>> ex.X.shape, ex.pi.shape, sorted(set(ex.voted.tolist()))
    ((30, 2), (30, 3), [0, 1, 2])
    """
    if not (isinstance(n_per_cluster, numbers.Integral) and n_per_cluster >= 1):
        raise ConfigError(f"n_per_cluster must be a positive integer, got {n_per_cluster!r}.")
    rng = check_random_state(random_state)
    n = int(n_per_cluster)
    cluster = np.repeat(np.arange(3), n)
    means = np.array([c[0] for c in GAUSSIAN_CLUSTERS])
    sds = np.sqrt(np.array([c[1] for c in GAUSSIAN_CLUSTERS]))
    pis = np.array([c[2] for c in GAUSSIAN_CLUSTERS])
    X = means[cluster] + sds[cluster] * rng.standard_normal((3 * n, 2))
    perm = rng.permutation(3 * n)
    cluster = cluster[perm]
    return GaussianExample(
        X=X[perm], pi=pis[cluster], voted=pis[cluster].argmax(axis=1), cluster=cluster
    )


class MLP(BaseEstimator):
    """Two-hidden-layer tanh network for multinomial classification, trained by L-BFGS.

    Loss: mean cross-entropy on integer labels + ``l2 * ||weights||^2`` (biases
    unpenalised), full batch, analytic gradients.

    Parameters
    ----------
    hidden : int, default 64
        Units per hidden layer.
    l2 : float, default 1e-4
    max_iter : int, default 500
    random_state : int or numpy.random.Generator, default 0
        Glorot-uniform initialisation.

    Attributes
    ----------
    params_ : list of ndarray
        ``[W1, b1, W2, b2, W3, b3]``.
    converged_, n_iter_, loss_

    Examples
    --------
    >>> ex = gaussian_three_class(20, random_state=1)
    >>> net = MLP(hidden=4, l2=1e-2, max_iter=500).fit(ex.X, ex.voted)
    >>> net.logits(ex.X).shape
    (60, 3)
    """

    def __init__(
        self,
        *,
        hidden: int = 64,
        l2: float = 1e-4,
        max_iter: int = 500,
        random_state: RandomState = 0,
    ) -> None:
        self.hidden = hidden
        self.l2 = l2
        self.max_iter = max_iter
        self.random_state = random_state

    _fitted_attr = "params_"
    # set by fit (annotations only: an unfitted network has none of them)
    params_: list[np.ndarray]
    n_iter_: int
    loss_: float
    converged_: bool

    def _shapes(self, d, k):
        h = int(self.hidden)
        return [(d, h), (h,), (h, h), (h,), (h, k), (k,)]

    def _unpack(self, theta, shapes):
        out, i = [], 0
        for s in shapes:
            size = int(np.prod(s))
            out.append(theta[i : i + size].reshape(s))
            i += size
        return out

    @staticmethod
    def _forward(X, params):
        W1, b1, W2, b2, W3, b3 = params
        h1 = np.tanh(X @ W1 + b1)
        h2 = np.tanh(h1 @ W2 + b2)
        return h1, h2, h2 @ W3 + b3

    def _objective(self, X, T, shapes):
        """Loss and analytic gradient of the flattened parameters (full batch)."""
        n = X.shape[0]
        lam = float(self.l2)

        def fun(theta):
            W1, b1, W2, b2, W3, b3 = p = self._unpack(theta, shapes)
            h1, h2, z = self._forward(X, p)
            ls = log_softmax(z)
            loss = -(T * ls).sum() / n + lam * ((W1**2).sum() + (W2**2).sum() + (W3**2).sum())
            dz = (np.exp(ls) - T) / n
            dW3 = h2.T @ dz + 2 * lam * W3
            db3 = dz.sum(axis=0)
            dh2 = (dz @ W3.T) * (1 - h2**2)
            dW2 = h1.T @ dh2 + 2 * lam * W2
            db2 = dh2.sum(axis=0)
            dh1 = (dh2 @ W2.T) * (1 - h1**2)
            dW1 = X.T @ dh1 + 2 * lam * W1
            db1 = dh1.sum(axis=0)
            return loss, np.concatenate([g.ravel() for g in (dW1, db1, dW2, db2, dW3, db3)])

        return fun

    def fit(self, X: ArrayLike, y: ArrayLike) -> MLP:
        """Fit on features ``X`` (n_items, n_features) and integer labels ``y`` (n_items,)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            raise DataError("X must be a finite array of shape (n_items, n_features).")
        y = check_labels(y, n_classes=int(np.max(y)) + 1, n_items=X.shape[0])
        k = int(y.max()) + 1
        if k < 2:
            raise DataError("y holds a single class; a classifier needs at least two.")
        if not (isinstance(self.hidden, numbers.Integral) and self.hidden >= 1):
            raise ConfigError(f"hidden must be a positive integer, got {self.hidden!r}.")
        rng = check_random_state(self.random_state)
        shapes = self._shapes(X.shape[1], k)
        init = []
        for s in shapes:
            if len(s) == 2:
                lim = np.sqrt(6.0 / (s[0] + s[1]))
                init.append(rng.uniform(-lim, lim, size=s))
            else:
                init.append(np.zeros(s))
        T = np.zeros((X.shape[0], k))
        T[np.arange(X.shape[0]), y] = 1.0
        fun = self._objective(X, T, shapes)
        res = minimize(
            fun,
            np.concatenate([p.ravel() for p in init]),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": int(self.max_iter), "gtol": 1e-6, "ftol": 1e-12},
        )
        self.params_ = self._unpack(res.x, shapes)
        self.n_iter_ = int(res.nit)
        self.loss_ = float(res.fun)
        self.converged_ = bool(res.success)
        if not self.converged_:
            warnings.warn(
                f"MLP: L-BFGS stopped after {res.nit} iterations ({res.message}); the network "
                "is usable but not at a stationary point. Raise max_iter if that matters.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def logits(self, X: ArrayLike) -> np.ndarray:
        """Logits of shape (n_items, n_classes)."""
        check_is_fitted(self, "call fit(X, y) first")
        return self._forward(np.asarray(X, dtype=np.float64), self.params_)[2]


def run_motivating_example(
    *,
    n_per_cluster: int = 500,
    hidden: int = 64,
    max_iter: int = 300,
    l2: float = 1e-4,
    n_draws: int = 100,
    random_state: RandomState = 0,
) -> dict:
    """Section 4: voted-label calibrators lower ECE_voted but not ECE_true.

    Three independent samples (train, calibration, test) of ``n_per_cluster``
    points per cluster; an :class:`MLP` is trained on voted labels; TS, Platt
    and HB-Hard are fitted on the calibration sample's voted labels (SLTS on
    its distributions, for contrast); all are scored on the test sample.
    ``hidden``, ``max_iter`` and ``l2`` (weight decay) are the :class:`MLP`'s:
    they decide how confident the network is on voted labels, hence whether
    TS sharpens (T < 1) or softens it.

    Returns
    -------
    dict
        ``{"methods": {name: {"ece_voted", "ece_true", "ece_true_ambiguous",
        "ece_true_clear", "T"?}}, "n_test": int}``, ECEs in percent; the
        stratified values are ECE_true over the middle cluster and over the
        two clear clusters.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # a 30-iteration MLP has not converged
    ...     out = run_motivating_example(n_per_cluster=30, hidden=4, max_iter=30, n_draws=5)
    >>> sorted(out["methods"])
    ['HB-Hard', 'Platt', 'SLTS', 'TS', 'Uncalibrated']
    """
    rng = check_random_state(random_state)
    train, cal, test = (gaussian_three_class(n_per_cluster, random_state=rng) for _ in range(3))
    net = MLP(hidden=hidden, l2=l2, max_iter=max_iter, random_state=rng).fit(train.X, train.voted)
    z_cal, z_test = net.logits(cal.X), net.logits(test.X)
    methods = {
        "Uncalibrated": (Uncalibrated(), cal.voted),
        "TS": (TemperatureScaling(), cal.voted),
        "Platt": (PlattScaling(), cal.voted),
        "HB-Hard": (HistogramBinning(), cal.voted),
        "SLTS": (SoftTemperatureScaling(), cal.pi),
    }
    amb = test.cluster == 1
    out = {}
    for name, (model, targets) in methods.items():
        p = model.fit(z_cal, targets).predict_proba(z_test)
        seed = int(rng.integers(2**32))
        row = {
            "ece_voted": 100 * float(ece_voted(p, test.voted).ece),
            "ece_true": 100 * float(ece_true(p, test.pi, n_draws=n_draws, random_state=seed).ece),
            "ece_true_ambiguous": 100
            * float(ece_true(p[amb], test.pi[amb], n_draws=n_draws, random_state=seed).ece),
            "ece_true_clear": 100
            * float(ece_true(p[~amb], test.pi[~amb], n_draws=n_draws, random_state=seed).ece),
        }
        if hasattr(model, "temperature_"):
            row["T"] = float(model.temperature_)
        out[name] = row
    return {"methods": out, "n_test": int(test.X.shape[0]), "mlp_converged": net.converged_}


def isic2019_confusion() -> xr.DataArray:
    """The paper's 8x8 ISIC 2019 inter-reader confusion matrix (Appendix I, Table 6).

    Returns
    -------
    xarray.DataArray of shape (8, 8)
        dims ``("class", "annotated_class")``: row = consensus diagnosis,
        column = a reader's label; rows sum to 1.

    Examples
    --------
    >>> C = isic2019_confusion()
    >>> C.sel({"class": "MEL", "annotated_class": "NV"}).item()
    0.14
    >>> round(float(np.diag(C.values).mean()), 4)
    0.7525
    """
    text = resources.files("bayescal.ambiguity").joinpath("data/isic2019_confusion.csv").read_text()
    lines = [ln.split(",") for ln in text.strip().splitlines()]
    names = lines[0][1:]
    rows = [ln[0] for ln in lines[1:]]
    values = np.array([[float(v) for v in ln[1:]] for ln in lines[1:]])
    return xr.DataArray(
        values,
        dims=(CLASS, "annotated_class"),
        coords={CLASS: rows, "annotated_class": names},
        attrs={"source": "Tao et al. 2026, Appendix I, Table 6"},
    )


def dawid_skene_annotations(
    consensus: ArrayLike, confusion: ArrayLike, m: int, *, random_state: RandomState = 0
) -> np.ndarray:
    """Counts of ``m`` class-conditional synthetic annotations per item (Dawid & Skene).

    Each annotation of item ``i`` is drawn independently from row
    ``consensus[i]`` of ``confusion``.

    Parameters
    ----------
    consensus : array-like of int, shape (n_items,)
    confusion : array-like of shape (n_classes, n_classes)
        Row-stochastic matrix (a DataArray from :func:`isic2019_confusion` works).
    m : int
        Annotations per item (the paper uses m = 9 for ISIC 2019).
    random_state : int or numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_items, n_classes), rows summing to ``m``.

    Examples
    --------
    >>> dawid_skene_annotations([0, 7], isic2019_confusion(), 9, random_state=0).sum(axis=1)
    array([9, 9])
    """
    C = np.asarray(confusion, dtype=np.float64)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 2:
        raise DataError(
            f"confusion must be a square matrix with at least two classes, got shape {C.shape}."
        )
    if (
        not np.all(np.isfinite(C))
        or (C < 0).any()
        or not np.allclose(C.sum(axis=1), 1.0, atol=1e-8)
    ):
        raise DataError(
            "confusion rows must be probability distributions (non-negative, summing to 1)."
        )
    y = check_labels(consensus, n_classes=C.shape[0], name="consensus")
    if not (isinstance(m, numbers.Integral) and m >= 1):
        raise ConfigError(f"m must be a positive integer, got {m!r}.")
    rng = check_random_state(random_state)
    return rng.multinomial(int(m), C[y] / C[y].sum(axis=1, keepdims=True)).astype(np.int64)
