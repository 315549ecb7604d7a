"""Priors of the Bayesian channel model for every number of classes, as one validated object.

The model's parameters are the annotators' confusion rows ``T_j[y, :]`` and the
class prevalence row of each prevalence group. :class:`ChannelPriors` holds their
priors in one of two *families*:

``"dirichlet"`` (any C; the default for C > 2)
    Each confusion row ``T_j[y, :]`` is a *nested* row: its own class
    ``T_j[y, y] ~ Beta(diagonal, M)`` and the wrong answers' shares of the rest,
    ``T_j[y, a] / (1 - T_j[y, y]) ~ Dirichlet(split, ..., split)``, independent.
    ``diagonal`` defaults to 2; ``M``, the row's off-diagonal mass, is ``C - 1``
    times ``off_diagonal`` when that is given, else 1; ``split`` defaults to
    ``off_diagonal`` when that is given (then the row is exactly the
    ``Dirichlet(diagonal, off_diagonal, ...)`` of earlier versions), else 0.5. A
    symmetric ``Dirichlet(prevalence)`` (default 1) per prevalence row.

    ``shares`` centres the wrong answers' shares. ``"even"`` is the symmetric
    ``Dirichlet(split, ..., split)`` above. ``"pooled"`` (the default when the chains
    start at a point fit, which every audit does) keeps its total ``(C - 1) split`` but
    centres it on a mix of even shares and the shares of each row's errors pooled over
    the *other* annotators of that fit (:func:`pooled_error_shares`), the pooled part
    weighted ``0.5 N / (N + C - 1)`` by the ``N`` errors it rests on
    (:func:`share_pooling_weight`): an
    empirical-Bayes step that tells every annotator where the others err, without its
    own answers centring its own prior. With even shares an
    accurate annotator's first error to the neighbouring class costs about
    ``1 / (C - 1)`` of prior probability, so the posterior explained its few errors as
    the others' and put its diagonal above the truth; where errors go only to two
    neighbouring classes the intervals held 0.62 of the true diagonals at C = 20 and
    200 items per class (``models/multiclass.md``). Without a start fit the shares are
    even (the SBC tests draw their truth that way).

    The default row thus holds a *fixed* 3 pseudo-answers on its diagonal (2 on the
    own class, 1 on the wrong ones) whatever C: its prior mean diagonal is 2/3 and
    its pull on a row fitted from ``n`` items of that class is ``3 / (n + 3)`` of the
    gap between 2/3 and the data, for every C. (Until issue 22 the default was
    ``off_diagonal = 1`` per entry, ``C + 1`` pseudo-answers with a prior mean
    diagonal of ``2 / (C + 1)``: at C = 10 and 90 items per class it pulled
    diagonals of 0.9 down to 0.82.) The split of 0.5 per wrong answer keeps the
    sampler's geometry sane at any C: the Dirichlet row with the same diagonal
    marginal (``off_diagonal = 1 / (C - 1)`` per entry, the default before the split
    was separated) gives wrong answers without data a density ``x^(1/(C-1))`` on the
    log-ratio scale, an exponential tail of scale ``C - 1``, on which NUTS hit its
    tree-depth cap and did not converge at C = 20 (R-hat 3.8); a split of 1 samples
    as well but smooths sparse real confusions more (``models/multiclass.md``). At
    C = 3 the row with even shares is exactly the Dirichlet ``(2, 0.5, 0.5)`` it was. The
    density on the simplex is ``prod_a T[y, a]^(alpha_a - 1) (1 - T[y, y])^kappa`` with
    ``kappa = M - (C - 1) split`` (:meth:`ChannelPriors.confusion_kernel`);
    :meth:`ChannelPriors.confusion_alpha` gives the Dirichlet rows with the same
    mean and the same Beta diagonal. At C = 2 there is nothing to split and both
    are the row ``(2, 1)``, so two-class Dirichlet fits are unchanged (and the
    two-class default family stays the Beta family below). ``diagonal = 2 > 1``
    makes each row's own class the most likely answer a priori, which selects one
    labelling of the latent classes (``models/multiclass.md``). Full arrays
    ``confusion`` (K, C, C) and ``prevalence_rows`` (L', C) replace the scalars
    with Dirichlet rows (:meth:`ChannelPriors.from_fit` builds these).
``"beta"`` (C = 2 only; the binary default)
    false-positive rates ``a_j = T_j[0, 1]``, sensitivities ``b_j = T_j[1, 1]`` and
    prevalences ``P(Y = 1)`` each get a Beta: ``a ~ Beta(2, 2)``, ``b ~ Beta(2, 2)``
    (symmetric, so the orientation constraint ``a < b`` of the binary model is the
    only thing telling ``a`` from ``b``; density 0.12 at 0.02 keeps NUTS away from
    the logit boundary without ruling out very accurate annotators; with the order
    constraint ``E[a] = 0.37``, ``E[b] = 0.63``) and ``prevalence ~ Beta(1, 1)``
    (uniform: score groups at the ends of the score range routinely have
    prevalences near 0 or 1). A Beta on ``a_j`` is the Dirichlet
    ``(beta, alpha)`` on row 0, so :meth:`ChannelPriors.confusion_alpha` gives
    every family's rows; what the Beta family adds is the orientation constraint
    of :mod:`bayescal.bayes.models`.

Priors from an earlier audit (:meth:`ChannelPriors.from_fit`)
-------------------------------------------------------------
The family follows the earlier fit (a binary fit gives Beta priors, a multiclass
fit Dirichlet rows). Beta: each annotator's ``a_j`` and ``b_j`` (and, on request,
each score group's prevalence) gets the Beta with the mean ``m`` and variance
``v`` of the earlier draws (``alpha + beta = m (1 - m) / v - 1``, ``alpha = m (alpha +
beta)``), or of a point fit with its standard errors. Dirichlet: a row's
concentration ``alpha = s m`` matches the mean exactly and the row's total
variance (``s + 1 = sum_a m_a (1 - m_a) / sum_a v_a``): one scalar ``s`` cannot carry
correlations between rows or any within-row covariance other than ``-m_a m_b / (s +
1)``, so the sequential update misses the full-data posterior by this
moment-matching error on top of Monte Carlo error
(``tests/knowledge/test_multiclass_priors.py``, ``models/priors.md``).

The **drift discount** ``inflate`` divides every concentration: the prior keeps
its mean and counts as ``1 / inflate`` of the items behind the earlier estimate
(its variance grows about ``inflate``-fold). ``inflate = 1`` is the plain
sequential update; the default 2 treats an earlier audit as worth half its items,
for annotators who may have drifted since. The prior's weight is stated in
``origin["pseudo_items"]``: per annotator and true class, the concentration of
its row (for the Beta family ``alpha + beta`` of ``a`` for class 0 and of ``b`` for
class 1), i.e. how many items of that class the prior counts as; the fit stores it
in its ``priors`` attribute. ``inflate`` is bounded (:func:`check_inflate`):

- above by :data:`MAX_INFLATE` = 1e6, where even an audit of a million items
  counts as one item, less than the default prior's two: beyond it the earlier
  audit says nothing and auditing without priors is the honest choice;
- and every discounted concentration must be at least :data:`MIN_CONCENTRATION`
  = ln 2 / 744.4 (9.3e-4): a Gamma(c) variate, from which Beta and Dirichlet draws
  are made, is below the smallest double 2^-1074 = e^-744.4 with probability about
  ``exp(-744.4 c)``, so below that bound more than half of the prior's draws of that
  entry are exactly 0 in double precision: the prior then sits on the boundary,
  where the likelihood is zero (``--priors-inflate 1e308`` made every annotator
  "in conflict" this way, issue 23).

Annotator names are checked (issue 23): names repeated in the earlier fit or the
new data are refused with the names; an earlier fit that shares no annotator with
the new data is refused (it would silently be the default prior for everyone);
when some new annotators are unknown to it, they keep the default prior, are
named in a :class:`~bayescal.errors.BayescalWarning` and listed in
``origin["default"]``. Prevalences are not carried over by default: they
describe the items, which usually change between audits more than the annotators.

Joint form (``joint=True``): the earlier posterior's correlations are kept. The
covered rates (rows) get ``Beta(1, 1)`` (``Dirichlet(1)``) and, on top, one
multivariate normal of the earlier draws, covariance times ``inflate``: on the
log-odds of the rates (:class:`JointLogitNormal`, Beta family) or on the additive
log-ratio coordinates ``log x_a - log x_r`` of the rows (:class:`JointRatioNormal`,
Dirichlet family; ``r`` the row's own class for a confusion row, the earlier mean's
largest class for a prevalence row). The models add the normal's log density and
remove the Jacobian of the covered coordinates, so the prior on them is exactly the
normal. Its estimated covariance moves the update's posterior means by about
``sqrt((D + 3) / (4 N_v))`` posterior sd (:func:`covariance_shift`), so a joint prior
wants a long earlier run.

Configuration errors (unknown keys, non-positive or non-finite parameters, wrong
shapes) are collected and raised together as one :class:`~bayescal.errors.ConfigError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from bayescal.errors import BayescalWarning, ConfigError
from bayescal.options import MAX_INFLATE

__all__ = [
    "Beta",
    "JointLogitNormal",
    "JointRatioNormal",
    "ChannelPriors",
    "DEFAULT_PRIORS",
    "FAMILIES",
    "MAX_INFLATE",
    "MIN_CONCENTRATION",
    "check_inflate",
    "covariance_shift",
    "dirichlet_from_moments",
    "pooled_error_shares",
    "share_pooling_weight",
    "SHARES",
]

#: The prior families: Beta channels (C = 2, ordered logit) and Dirichlet rows (any C).
FAMILIES = ("beta", "dirichlet")
#: Smallest concentration whose Gamma draws are exactly 0 in double precision less than half
#: the time: P(Gamma(c) < 2**-1074) ~ exp(-744.4 c) = 1/2 at c = ln 2 / 744.4.
MIN_CONCENTRATION = float(np.log(2.0) / -np.log(np.nextafter(0.0, 1.0)))


@dataclass(frozen=True)
class Beta:
    """A Beta(alpha, beta) prior; ``alpha``/``beta`` scalars or 1-D per annotator/group.

    Examples
    --------
    >>> Beta(2, 5).mean
    0.2857142857142857
    """

    alpha: object
    beta: object

    def __post_init__(self):
        errors = _beta_errors("Beta", self.alpha, self.beta)
        if errors:
            raise ConfigError("; ".join(errors))

    @property
    def mean(self):
        al, be = np.asarray(self.alpha, float), np.asarray(self.beta, float)
        out = al / (al + be)
        return float(out) if out.ndim == 0 else out

    def expand(self, size: int, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, beta)`` broadcast to shape ``(size,)``; ConfigError on a length mismatch."""
        al = np.asarray(self.alpha, dtype=np.float64)
        be = np.asarray(self.beta, dtype=np.float64)
        errors = []
        for name, arr in (("alpha", al), ("beta", be)):
            if arr.ndim == 1 and arr.size != size:
                errors.append(
                    f"prior {what!r}: {name} has {arr.size} values "
                    f"but the model has {size} {what} entries"
                )
        if errors:
            raise ConfigError("; ".join(errors) + ". Give one value or one per entry.")
        return np.broadcast_to(al, (size,)).copy(), np.broadcast_to(be, (size,)).copy()

    def __repr__(self) -> str:
        def fmt(x):
            x = np.asarray(x)
            return f"{float(x):g}" if x.ndim == 0 else "[" + ", ".join(f"{v:g}" for v in x) + "]"

        return f"Beta({fmt(self.alpha)}, {fmt(self.beta)})"


def _beta_errors(where: str, alpha, beta) -> list[str]:
    errors = []
    for name, val in (("alpha", alpha), ("beta", beta)):
        try:
            arr = np.asarray(val, dtype=np.float64)
        except (TypeError, ValueError):
            errors.append(
                f"{where}: {name} must be a number or a 1-D array of numbers; got {val!r}"
            )
            continue
        if arr.ndim > 1:
            errors.append(f"{where}: {name} must be a scalar or 1-D; got shape {arr.shape}")
        elif arr.size == 0:
            errors.append(f"{where}: {name} is empty")
        elif not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            errors.append(f"{where}: {name} must be finite and > 0; got {val!r}")
    return errors


#: Largest expected shift of an update's posterior means, in posterior sd, that a joint prior's
#: estimated covariance may cause before the audit flags it (``priors.joint_draws``).
JOINT_SHIFT_LIMIT = 0.1


def covariance_shift(z: np.ndarray) -> tuple[float, float]:
    """How far a joint prior's estimated covariance moves the update, from its draws.

    ``z`` holds the earlier draws on the normal's coordinates, shape (S, D). The
    sampling error of the covariance (a Wishart error of effective size ``N_v``, the
    smallest effective sample size of the mean of the squared deviations) moves each posterior mean
    of the update by about ``sqrt((D + 3) / (4 N_v))`` posterior sd when the two audits
    are of similar size (models/priors.md, "Sequential-update check": first order,
    checked against a parametric bootstrap). The draws are taken as one sequence
    (chains one after the other), which is what a fit's ``draw`` axis holds.

    Returns
    -------
    (shift_sd, n_v) : tuple of float

    Examples
    --------
    >>> z = np.random.default_rng(0).normal(size=(2000, 24))
    >>> shift, n_v = covariance_shift(z)
    >>> round(shift, 2)  # independent draws: N_v = S, sqrt(27 / 8000)
    0.06
    """
    import arviz as az  # weight: ArviZ on use

    z = np.asarray(z, dtype=np.float64)
    dev = (z - z.mean(axis=0)) ** 2
    # the ESS of the mean of the squares (not the rank-normalised bulk ESS): a covariance is
    # that mean, and its Monte Carlo error is var / ESS_mean
    n_v = float(np.asarray(az.ess({"x": dev[None, :, :]}, method="mean")["x"].values).min())
    return _shift(z.shape[1], n_v), n_v


def _shift(n_coords: int, n_v: float) -> float:
    """``sqrt((D + 3) / (4 N_v))``: :func:`covariance_shift`'s formula."""
    return float(np.sqrt((n_coords + 3) / (4 * n_v)))


class EarlierDraws:
    """What a joint prior built from earlier draws knows of them (both tracks' normals).

    ``draws_ess`` is set by ``from_fit`` (``None`` for a normal given by hand);
    ``shift_sd`` follows from it and the number of coordinates
    (:func:`covariance_shift`)."""

    draws_ess: float | None = None

    @property
    def shift_sd(self) -> float | None:
        """Expected shift of the update's posterior means (posterior sd), or ``None``."""
        return None if self.draws_ess is None else _shift(self.mean.size, self.draws_ess)

    def _set_normal(self, mean, cov, not_positive_definite: str) -> None:
        """Check and set ``mean``, ``cov`` (finite, symmetric, positive definite) and their
        ``chol``, ``precision`` and ``log_norm`` (-D/2 log(2 pi) - log det(cov) / 2)."""
        self.mean = np.asarray(mean, dtype=np.float64)
        self.cov = np.asarray(cov, dtype=np.float64)
        if not (np.all(np.isfinite(self.mean)) and np.all(np.isfinite(self.cov))):
            raise ConfigError("joint prior: mean and cov must be finite.")
        if not np.allclose(self.cov, self.cov.T, rtol=1e-10, atol=0):
            raise ConfigError("joint prior: cov must be symmetric.")
        try:
            self.chol = np.linalg.cholesky(self.cov)
        except np.linalg.LinAlgError:
            raise ConfigError(not_positive_definite) from None
        precision = np.linalg.inv(self.cov)
        self.precision = (precision + precision.T) / 2
        n = self.mean.size
        self.log_norm = float(-0.5 * n * np.log(2 * np.pi) - np.log(np.diag(self.chol)).sum())


class JointLogitNormal(EarlierDraws):
    """A multivariate normal prior on the log-odds of some channel rates and prevalences.

    Positions index the model's rates in the order ``[logit a (K), logit b (K),
    logit prevalence (L')]``; the models add ``log N(logit theta[index]; mean, cov)``
    and remove the log-odds Jacobian of the covered rates, so the prior density on
    the log-odds scale is exactly this normal (the rates' own Beta priors must then
    be ``Beta(1, 1)``; :meth:`ChannelPriors.from_fit` sets both).

    Parameters
    ----------
    index : array-like of int, shape (n,)
    mean : array-like, shape (n,)
    cov : array-like, shape (n, n), symmetric positive definite
    n_annotators, n_prevalence : int
        The model size the positions refer to (checked when a model is built);
        ``n_prevalence = 0`` when no prevalence is covered (any number then fits).

    Examples
    --------
    >>> j = JointLogitNormal([0, 2], [-2.0, 2.0], [[0.04, 0.01], [0.01, 0.09]], 1, 1)
    >>> j.precision.shape, round(j.log_norm, 3)
    ((2, 2), 0.99)
    """

    def __init__(self, index, mean, cov, n_annotators: int, n_prevalence: int):
        self.index = np.asarray(index, dtype=np.int64)
        self.mean = np.asarray(mean, dtype=np.float64)
        self.cov = np.asarray(cov, dtype=np.float64)
        self.n_annotators = int(n_annotators)
        self.n_prevalence = int(n_prevalence)
        n = self.index.size
        size = 2 * self.n_annotators + self.n_prevalence
        if self.mean.shape != (n,) or self.cov.shape != (n, n):
            raise ConfigError(
                f"joint prior: mean must have shape ({n},) and cov ({n}, {n}); got "
                f"{self.mean.shape} and {self.cov.shape}."
            )
        if (
            n == 0
            or np.unique(self.index).size != n
            or self.index.min() < 0
            or (self.index.max() >= size)
        ):
            raise ConfigError(
                f"joint prior: positions must be distinct, in 0..{size - 1}; got {self.index}."
            )
        self._set_normal(
            self.mean,
            self.cov,
            "joint prior: cov is not positive definite (too few or collinear draws).",
        )

    def to_dict(self) -> dict:
        return {
            "dist": "LogitNormal",
            "index": self.index.tolist(),
            "mean": self.mean.tolist(),
            "cov": self.cov.tolist(),
            "n_annotators": self.n_annotators,
            "n_prevalence": self.n_prevalence,
        }

    def check_size(self, n_annotators: int, n_prevalence: int) -> None:
        """ConfigError unless the model has the size the positions were made for."""
        carries_prevalence = self.n_prevalence > 0  # 0: no prevalence positions at all
        if n_annotators != self.n_annotators or (
            carries_prevalence and n_prevalence != self.n_prevalence
        ):
            raise ConfigError(
                f"the joint prior was made for {self.n_annotators} annotators and "
                f"{self.n_prevalence} prevalence(s); the model has {n_annotators} and "
                f"{n_prevalence}. Build the priors with the new data's annotators (and the "
                "same score groups when prevalences are carried over)."
            )


class JointRatioNormal(EarlierDraws):
    """A multivariate normal prior on log-ratio coordinates of confusion and prevalence rows.

    Coordinate ``d`` is ``log x[row_d, a_d] - log x[row_d, r_d]``, where ``row_d`` is a
    confusion row ``j * C + y`` (``kind_d = 0``) or a prevalence row ``q`` (``kind_d =
    1``); see the module docstring for how the models use it.

    Parameters
    ----------
    kind, row, answer, reference : array-like of int, shape (D,)
    mean : array-like, shape (D,)
    cov : array-like, shape (D, D), symmetric positive definite
    n_annotators, n_classes, n_prevalence : int
        The model size the coordinates refer to (checked when a model is built);
        ``n_prevalence = 0`` when no prevalence row is covered.

    Examples
    --------
    >>> j = JointRatioNormal([0, 0], [0, 0], [1, 2], [0, 0], [-2.0, -3.0], np.eye(2) * 0.1,
    ...                      1, 3, 0)
    >>> j.covered_rows(1, 3)[0].tolist()
    [[True, False, False]]
    """

    def __init__(
        self, kind, row, answer, reference, mean, cov, n_annotators, n_classes, n_prevalence
    ):
        self.kind, self.row, self.answer, self.reference = (
            np.asarray(x, dtype=np.int64) for x in (kind, row, answer, reference)
        )
        self.mean = np.asarray(mean, dtype=np.float64)
        self.cov = np.asarray(cov, dtype=np.float64)
        self.n_annotators, self.n_classes = int(n_annotators), int(n_classes)
        self.n_prevalence = int(n_prevalence)
        d = self.mean.size
        if self.cov.shape != (d, d) or any(x.shape != (d,) for x in (self.kind, self.row)):
            raise ConfigError(
                f"joint prior: mean ({d},), cov ({d}, {d}) and one kind / row / class per "
                "coordinate are needed."
            )
        self._set_normal(
            self.mean,
            self.cov,
            "joint prior: the covariance of the earlier draws is not positive definite (too few "
            "draws for the number of coordinates, or a row that never moved); use joint=False "
            "or an earlier posterior with more draws.",
        )

    def covered_rows(self, n_annotators: int, n_prevalence: int):
        """Boolean masks of the rows the normal covers: confusion (K, C), prevalence (L',)."""
        self.check_size(n_annotators, n_prevalence)
        conf = np.zeros(n_annotators * self.n_classes, dtype=bool)
        conf[self.row[self.kind == 0]] = True
        prev = np.zeros(n_prevalence, dtype=bool)
        prev[self.row[self.kind == 1]] = True
        return conf.reshape(n_annotators, self.n_classes), prev

    def check_size(self, n_annotators: int, n_prevalence: int) -> None:
        """ConfigError unless the model has the size the coordinates were made for."""
        if n_annotators != self.n_annotators or (
            self.n_prevalence > 0 and n_prevalence != self.n_prevalence
        ):
            raise ConfigError(
                f"the joint prior was made for {self.n_annotators} annotators and "
                f"{self.n_prevalence} prevalence rows; the model has {n_annotators} and "
                f"{n_prevalence}. Build it for the new data (annotators=data.annotators) and "
                "carry prevalences only between audits with the same channel groups."
            )

    def logp_and_grad(self, log_t, log_r):
        """``log N(z; mean, cov)`` and its gradient with respect to ``log_t`` / ``log_r``.

        ``log_t`` (K, C, C) and ``log_r`` (L', C) are the logs of the rows; the gradient
        arrays have the same shapes (numpy reference of the numba kernel's term).
        """
        c = self.n_classes
        flat_t, flat_r = log_t.reshape(-1, c), log_r
        z = np.where(
            self.kind == 0,
            flat_t[self.row * (self.kind == 0), self.answer]
            - flat_t[self.row * (self.kind == 0), self.reference],
            flat_r[self.row * (self.kind == 1), self.answer]
            - flat_r[self.row * (self.kind == 1), self.reference],
        )
        dev = z - self.mean
        gz = -self.precision @ dev
        gt, gr = np.zeros_like(flat_t), np.zeros_like(flat_r)
        for d in range(z.size):
            target = gt if self.kind[d] == 0 else gr
            target[self.row[d], self.answer[d]] += gz[d]
            target[self.row[d], self.reference[d]] -= gz[d]
        return float(-0.5 * dev @ self.precision @ dev + self.log_norm), gt.reshape(log_t.shape), gr

    def sample_rows(self, rng, size: int):
        """Draws of the covered rows from the normal.

        Returns ``{"confusion": {(j, y): (size, C)}, "prevalence": {q: (size, C)}}``.
        """
        return self._rows(self.mean + rng.standard_normal((size, self.mean.size)) @ self.chol.T)

    def centre_rows(self):
        """The covered rows at the normal's mean (the prior's median rows), as
        :meth:`sample_rows` with one draw."""
        return self._rows(self.mean[None])

    def _rows(self, z):
        size = z.shape[0]
        logs: dict = {}
        for d in range(self.mean.size):
            key = (int(self.kind[d]), int(self.row[d]))
            logs.setdefault(key, np.zeros((size, self.n_classes)))
            logs[key][:, self.answer[d]] = z[:, d]  # the reference class stays at 0
        out: dict = {"confusion": {}, "prevalence": {}}
        for (kind, row), v in logs.items():
            e = np.exp(v - v.max(axis=1, keepdims=True))
            rows = e / e.sum(axis=1, keepdims=True)
            if kind == 0:
                out["confusion"][divmod(row, self.n_classes)] = rows
            else:
                out["prevalence"][row] = rows
        return out

    def to_dict(self) -> dict:
        return {
            "dist": "RatioNormal",
            "kind": self.kind.tolist(),
            "row": self.row.tolist(),
            "answer": self.answer.tolist(),
            "reference": self.reference.tolist(),
            "mean": self.mean.tolist(),
            "cov": self.cov.tolist(),
            "n_annotators": self.n_annotators,
            "n_classes": self.n_classes,
            "n_prevalence": self.n_prevalence,
        }


def dirichlet_from_moments(mean, var, *, inflate: float = 1.0, where=None):
    """Moment-matched Dirichlet concentrations per row, divided by ``inflate`` (module docstring).

    Parameters
    ----------
    mean, var : array-like of shape (..., C)
        Row means (each summing to one) and per-entry variances.
    inflate : float, default 1
    where : callable, optional
        Row index tuple -> text naming the row in messages.

    Returns
    -------
    alpha : ndarray of shape (..., C)
    errors : list of str
        One message per row that no Dirichlet matches (a mean entry of 0 or 1, or a
        total variance of zero or at least ``sum m (1 - m)``).

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([0.5, 0.3, 0.2]); s = 99.0
    >>> alpha, errors = dirichlet_from_moments(m, m * (1 - m) / (s + 1))
    >>> alpha.round(6).tolist(), errors
    ([49.5, 29.7, 19.8], [])
    """
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(var, dtype=np.float64)
    spread = (m * (1 - m)).sum(axis=-1)
    total = v.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = spread / total - 1.0
    bad = ~((m > 0).all(axis=-1) & (total > 0) & (s > 0) & np.isfinite(s))
    where = where or (lambda idx: f"row {idx}")
    errors = [
        f"{where(idx)} has mean {np.round(m[idx], 4).tolist()} and total variance "
        f"{total[idx]:.4g}: a Dirichlet needs every mean entry > 0 and a total variance in "
        f"(0, sum m (1 - m) = {spread[idx]:.4g})"
        for idx in np.ndindex(bad.shape)
        if bad[idx]
    ]
    return m * np.where(bad, 1.0, s)[..., None] / inflate, errors


DEFAULT_PRIORS = {"a": (2.0, 2.0), "b": (2.0, 2.0), "prevalence": (1.0, 1.0)}
#: Default Dirichlet concentrations: confusion rows (diagonal, off-diagonal) and prevalence.
DEFAULT_DIAGONAL = 2.0
#: Total default concentration of a row's C - 1 off-diagonal entries (each gets
#: ``DEFAULT_OFF_DIAGONAL_MASS / (C - 1)``), so a row's pseudo-answers do not grow with C.
DEFAULT_OFF_DIAGONAL_MASS = 1.0
DEFAULT_PREVALENCE = 1.0
#: Default concentration of each wrong answer in the split of a row's error mass among the
#: C - 1 wrong answers (``split``). With it the default row is the nested prior
#: ``T[y, y] ~ Beta(2, 1)``, shares ``~ Dirichlet`` of total ``0.5 (C - 1)`` (even shares
#: ``Dirichlet(0.5, ..., 0.5)``, pooled ones centred, module docstring): with even shares at
#: C = 3 exactly the Dirichlet row (2, 0.5, 0.5) of the earlier default, for larger C shares
#: that NUTS samples well (``models/multiclass.md``, measured against 1 and 0.25).
DEFAULT_SPLIT = 0.5
#: How ``to_dict`` / ``repr`` show the default off-diagonal concentration and split.
OFF_DIAGONAL_RULE = f"{DEFAULT_OFF_DIAGONAL_MASS:g}/(C-1)"
SPLIT_RULE = f"{DEFAULT_SPLIT:g} (off_diagonal when given)"
#: How the nested rows' wrong-answer shares are centred (``shares``): ``"pooled"`` (default)
#: on a mix of even shares and the shares of each row's errors pooled over the other
#: annotators of the point fit where the chains start (:func:`pooled_error_shares`);
#: ``"even"`` on even shares, ``Dirichlet(split, ..., split)``. (``bench channels --shares``
#: lists the same two names without importing this module.)
SHARES = ("pooled", "even")
#: Largest weight of the pooled error shares in a ``"pooled"`` row's share mean (the rest
#: even): every wrong answer keeps at least ``(1 - SHARE_POOLING) * split`` of concentration,
#: so answers nobody gives stay at a density NUTS samples (0.8 left 0.1 at C = 20: R-hat 3.5;
#: ``models/multiclass.md``). A row's weight is this times ``N / (N + C - 1)``
#: (:func:`share_pooling_weight`): the others' ``N`` wrong answers against one pseudo-error
#: per wrong answer, so few errors spread over many classes centre the row little.
SHARE_POOLING = 0.5
_BETA_PRIORS = tuple(DEFAULT_PRIORS)
_BETA_FIELDS = {"alpha", "beta", "dist"}
_DIRICHLET_SCALARS = {
    "diagonal": DEFAULT_DIAGONAL,
    "off_diagonal": None,  # None: DEFAULT_OFF_DIAGONAL_MASS / (C - 1) per entry
    "split": None,  # None: off_diagonal when given (a Dirichlet row), else DEFAULT_SPLIT
    "prevalence": DEFAULT_PREVALENCE,
}
#: Full concentration arrays and their number of dimensions (priors from an earlier audit).
_DIRICHLET_ARRAYS = {"confusion": 3, "prevalence_rows": 2}


def _family_of(merged: Mapping, family: str | None, default: str = "beta") -> str:
    """The family asked for, or the one the keys name (``default`` when they name none)."""
    if family is not None:
        if family not in FAMILIES:
            raise ConfigError(f"prior family must be one of {FAMILIES}; got {family!r}.")
        return family
    beta = {"a", "b"} & set(merged)
    dirichlet = ({"diagonal", "off_diagonal"} | set(_DIRICHLET_ARRAYS)) & set(merged)
    if beta and dirichlet:
        raise ConfigError(
            f"priors mix the Beta family's {sorted(beta)} with the Dirichlet family's "
            f"{sorted(dirichlet)}; give one family (a, b, prevalence for two classes, or "
            "diagonal, off_diagonal, prevalence for Dirichlet rows)."
        )
    if beta:
        return "beta"
    return "dirichlet" if dirichlet else default


@dataclass(frozen=True)
class ConfusionKernel:
    """The confusion rows' prior density on the simplex, per annotator ``j`` and row ``y``:
    ``exp(log_norm) * prod_a T[y, a]^(alpha[y, a] - 1) * (1 - T[y, y])^kappa[y]``
    (:meth:`ChannelPriors.confusion_kernel`; ``kappa = 0``: a Dirichlet row)."""

    #: (K, C, C) exponents plus one
    alpha: np.ndarray
    #: (K, C) exponent of the row's error mass ``1 - T[y, y]``
    kappa: np.ndarray
    #: (K, C) log normalising constant of each row
    log_norm: np.ndarray

    @classmethod
    def dirichlet(cls, alpha: np.ndarray) -> ConfusionKernel:
        """Dirichlet rows ``alpha`` (K, C, C): ``kappa = 0`` and the Dirichlet normaliser."""
        alpha = np.asarray(alpha, dtype=np.float64)
        return cls(
            alpha=alpha, kappa=np.zeros(alpha.shape[:-1]), log_norm=dirichlet_log_norm(alpha)
        )


def pooled_error_shares(confusion: np.ndarray) -> np.ndarray:
    """Each annotator's rows centred on where the *other* annotators err, (K, C, C).

    ``confusion`` (K, C, C) are point confusions (the EM fit where the chains start). Row
    ``y`` of annotator ``j`` is ``sum_{i != j} T_i[y, a]`` over the wrong answers ``a``,
    normalised (zero diagonal): the errors pooled over the other annotators, so an
    annotator's own answers do not centre its own prior (with them in, the prior used its
    errors twice and covered 0.84 instead of 0.89 at C = 3, 90 items per class,
    ``models/multiclass.md``). A row whose other annotators make no errors, and every row of
    a single annotator, gets even shares.

    Examples
    --------
    >>> t = np.array([[[0.9, 0.1, 0.0], [0.0, 0.8, 0.2], [0.3, 0.0, 0.7]]])
    >>> u = np.array([[[0.8, 0.0, 0.2], [0.0, 0.9, 0.1], [0.0, 0.0, 1.0]]])
    >>> pooled_error_shares(np.concatenate([t, u]))[0].tolist()  # annotator 0 from 1's errors
    [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]
    """
    t = np.asarray(confusion, dtype=np.float64)
    c = t.shape[-1]
    eye = np.eye(c, dtype=bool)
    own = np.where(eye, 0.0, t)
    errors = own.sum(axis=0, keepdims=True) - own  # (K, C, C): the others' errors
    total = errors.sum(axis=-1, keepdims=True)
    even = np.broadcast_to(np.where(eye, 0.0, 1.0 / (c - 1)), errors.shape)
    # float round-off of the subtraction leaves ~1e-17 where the others have no errors
    has = total > 1e-12
    return np.where(has, np.clip(errors, 0.0, None) / np.where(has, total, 1.0), even)


def share_pooling_weight(confusion: np.ndarray, class_counts: np.ndarray) -> np.ndarray:
    """Each row's weight of the pooled error shares, (K, C): ``SHARE_POOLING * N / (N + C - 1)``.

    ``N`` is the expected number of wrong answers the *other* annotators gave in row ``y``,
    ``sum_{i != j} class_counts[i, y] * (1 - T_i[y, y])``, with ``class_counts`` (K, C) the
    expected items of each true class that each annotator answered. Its shares
    (:func:`pooled_error_shares`) are then an estimate from ``N`` answers of a pattern over
    ``C - 1`` wrong answers, and the weight shrinks them toward even by one pseudo-error
    per wrong answer. With the fixed weight of 0.5, 3000 items at C = 50 (about 25 of the
    others' errors per row over 49 wrong answers) left most shares at concentration 0.25,
    and tuning took 3.6 times the leapfrog steps of even shares (``models/multiclass.md``).

    Examples
    --------
    >>> t = np.array([[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]] * 3)
    >>> share_pooling_weight(t, np.full((3, 3), 20.0)).round(3).tolist()[0]  # N = 8 per row
    [0.4, 0.4, 0.4]
    """
    t = np.asarray(confusion, dtype=np.float64)
    n = np.asarray(class_counts, dtype=np.float64)
    c = t.shape[-1]
    if n.shape != t.shape[:-1] or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ConfigError(
            f"class_counts must be ({t.shape[0]}, {c}) finite counts >= 0, one per annotator "
            "and true class; got shape " + str(n.shape) + "."
        )
    wrong = n * (1.0 - np.diagonal(t, axis1=-2, axis2=-1).clip(0.0, 1.0))  # (K, C)
    others = wrong.sum(axis=0, keepdims=True) - wrong
    others = np.clip(others, 0.0, None)  # round-off of the subtraction
    return SHARE_POOLING * others / (others + (c - 1))


def _check_share_mean(share_mean: np.ndarray, n_annotators: int, n_classes: int) -> np.ndarray:
    shares = np.asarray(share_mean, dtype=np.float64)
    eye = np.eye(n_classes, dtype=bool)
    shape_ok = shares.shape in ((n_classes, n_classes), (n_annotators, n_classes, n_classes))
    ok = (
        shape_ok
        and np.all(np.isfinite(shares))
        and np.all(shares >= 0)
        and np.all(shares[..., eye] == 0)
        and np.allclose(shares.sum(axis=-1), 1.0)
    )
    if not ok:
        raise ConfigError(
            f"share_mean must be ({n_classes}, {n_classes}) or ({n_annotators}, {n_classes}, "
            f"{n_classes}) rows of wrong-answer shares: finite, >= 0, a zero diagonal, each "
            "row summing to 1 (pooled_error_shares)."
        )
    return shares


def _check_share_weight(weight, n_annotators: int, n_classes: int) -> np.ndarray:
    """(K, C) pooling weights, :data:`SHARE_POOLING` everywhere when None."""
    if weight is None:
        return np.full((n_annotators, n_classes), SHARE_POOLING)
    w = np.asarray(weight, dtype=np.float64)
    if (
        w.shape != (n_annotators, n_classes)
        or not np.all(np.isfinite(w))
        or np.any(w < 0)
        or np.any(w > SHARE_POOLING)
    ):
        raise ConfigError(
            f"share_weight must be ({n_annotators}, {n_classes}) weights in [0, "
            f"{SHARE_POOLING}] (share_pooling_weight); got shape {w.shape}."
        )
    return w


def dirichlet_log_norm(alpha: np.ndarray) -> np.ndarray:
    """``log Gamma(sum alpha) - sum log Gamma(alpha)`` over the last axis."""
    from scipy.special import gammaln

    alpha = np.asarray(alpha, dtype=np.float64)
    return gammaln(alpha.sum(-1)) - gammaln(alpha).sum(-1)


class ChannelPriors:
    """Priors of the channel model in one family, validated at construction (module docstring).

    Parameters
    ----------
    config : mapping, optional
        Any subset of the family's priors, merged with the keywords (keywords win).
    family : {"beta", "dirichlet"}, optional
        Default: the family the keys name (``a`` / ``b``: Beta; ``diagonal``,
        ``off_diagonal``, ``confusion``, ``prevalence_rows``: Dirichlet), Beta when
        they name neither. Models ask for theirs with :meth:`coerce`.
    **priors
        Beta family: ``a``, ``b``, ``prevalence``, each a :class:`Beta`, a pair
        ``(alpha, beta)`` or ``{"alpha": .., "beta": ..}`` (scalars or one value per
        annotator / score group). Dirichlet family: ``diagonal``, ``off_diagonal``,
        ``split`` (scalar or one per annotator; module docstring), ``prevalence``
        (scalar or one per prevalence row), or the full arrays ``confusion`` (K, C, C)
        and ``prevalence_rows`` (L', C). Sizes are checked when a model is built.

    Raises
    ------
    ConfigError
        Listing every problem found: unknown keys or fields, other distributions,
        non-positive or non-finite parameters, keys of both families.

    Examples
    --------
    >>> ChannelPriors(a=(1, 9), prevalence={"alpha": 2, "beta": 2})
    ChannelPriors(a=Beta(1, 9), b=Beta(2, 2), prevalence=Beta(2, 2))
    >>> ChannelPriors(diagonal=5)
    ChannelPriors(diagonal=5, off_diagonal=1/(C-1), prevalence=1)
    >>> ChannelPriors(family="dirichlet").confusion_alpha(1, 4)[0].sum(axis=1).round(12).tolist()
    [3.0, 3.0, 3.0, 3.0]
    >>> ChannelPriors(sensitivity=(2, 2), a=(0, 1))
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: 2 problems in channel priors:
      - unknown prior 'sensitivity'; known priors are 'a', 'b', 'prevalence'
      - prior 'a': alpha must be finite and > 0; got 0
    """

    def __init__(
        self,
        config: Mapping | None = None,
        *,
        family: str | None = None,
        default_family: str = "beta",
        **priors,
    ):
        merged: dict = {}
        if config is not None:
            if not isinstance(config, Mapping):
                raise ConfigError(f"priors config must be a mapping; got {type(config).__name__}.")
            merged.update(config)
        merged.update(priors)
        shares = merged.pop("shares", SHARES[0])
        self.family: str = _family_of(merged, family, default_family)
        known = (
            _BETA_PRIORS
            if self.family == "beta"
            else (*_DIRICHLET_SCALARS, *_DIRICHLET_ARRAYS, "shares")
        )
        errors = [
            f"unknown prior {key!r}; known priors are " + ", ".join(repr(k) for k in known)
            for key in merged
            if key not in known
        ]
        self._beta: dict[str, Beta] = {}
        self.diagonal = self.off_diagonal = self.split = self.prevalence_concentration = None
        self.confusion: np.ndarray | None = None
        self.prevalence_rows: np.ndarray | None = None
        #: centre of the nested rows' wrong-answer shares (:data:`SHARES`)
        self.shares: str = shares if shares in SHARES else SHARES[0]
        if shares not in SHARES:
            errors.append(f"prior 'shares' must be one of {SHARES}; got {shares!r}")
        elif shares != SHARES[0] and self.family == "beta":
            errors.append("prior 'shares' centres Dirichlet rows; the Beta family has none")
        if self.family == "beta":
            for key in _BETA_PRIORS:
                beta, errs = _parse_one(key, merged.get(key, DEFAULT_PRIORS[key]))
                errors.extend(errs)
                if beta is not None:
                    self._beta[key] = beta
        else:
            scalars = {
                key: _positive(f"prior {key!r}", merged.get(key, default), errors)
                for key, default in _DIRICHLET_SCALARS.items()
            }
            self.diagonal, self.off_diagonal = scalars["diagonal"], scalars["off_diagonal"]
            self.split = scalars["split"]
            self.prevalence_concentration = scalars["prevalence"]
            self.confusion = _positive("prior 'confusion'", merged.get("confusion"), errors, 3)
            self.prevalence_rows = _positive(
                "prior 'prevalence_rows'", merged.get("prevalence_rows"), errors, 2
            )
        if errors:
            head = "1 problem" if len(errors) == 1 else f"{len(errors)} problems"
            raise ConfigError(
                f"{head} in channel priors:\n" + "\n".join(f"  - {e}" for e in errors)
            )
        #: where the priors came from (set by :meth:`from_fit`; None for hand-written priors)
        self.origin: dict | None = None
        #: the joint normal on top of the rows (``from_fit(joint=True)``): a
        #: :class:`JointLogitNormal` (Beta family) or :class:`JointRatioNormal` (Dirichlet)
        self.joint: JointLogitNormal | JointRatioNormal | None = None

    # ----------------------------------------------------------------- Beta family
    def _beta_prior(self, key: str) -> Beta:
        if self.family != "beta":
            raise ConfigError(
                f"the prior {key!r} is a Beta of the two-class family; these priors are "
                "Dirichlet rows (use confusion_alpha / prevalence_alpha)."
            )
        return self._beta[key]

    @property
    def a(self) -> Beta:
        """Beta prior of the false-positive rates ``a_j = T_j[0, 1]`` (Beta family)."""
        return self._beta_prior("a")

    @property
    def b(self) -> Beta:
        """Beta prior of the sensitivities ``b_j = T_j[1, 1]`` (Beta family)."""
        return self._beta_prior("b")

    @property
    def prevalence(self) -> Beta:
        """Beta prior of each score group's ``P(Y = 1)`` (Beta family)."""
        return self._beta_prior("prevalence")

    @property
    def logit_joint(self) -> JointLogitNormal | None:
        """The Beta family's joint normal on log-odds, or None without a joint prior."""
        if self.joint is None or isinstance(self.joint, JointLogitNormal):
            return self.joint
        raise ConfigError(
            "the joint prior is a normal on Dirichlet rows' log-ratios; the two-class model "
            "with Beta priors takes one on log-odds (ChannelPriors.from_fit of a binary fit)."
        )

    # ----------------------------------------------------------------- both families
    @classmethod
    def coerce(cls, priors, family: str | None = None, *, default: str = "beta") -> ChannelPriors:
        """``None`` -> defaults, a mapping -> validated, a ChannelPriors unchanged; in
        ``family`` (a ChannelPriors of another family is a ConfigError), else in the family
        the keys name or ``default``."""
        if priors is None:
            return cls(family=family or default)
        if isinstance(priors, Mapping):
            return cls(priors, family=family, default_family=default)
        if not isinstance(priors, ChannelPriors):
            raise ConfigError(
                f"priors must be None, a mapping or a ChannelPriors; got {type(priors).__name__}."
            )
        if family is not None and priors.family != family:
            raise ConfigError(
                f"this model takes priors of the {family!r} family; got {priors.family!r} "
                "priors (Beta priors are for the two-class model with its orientation "
                "constraint, Dirichlet rows for the C-class model)."
            )
        return priors

    @staticmethod
    def _expand(arr, size: int, what: str) -> np.ndarray:
        if arr.ndim == 1 and arr.size != size:
            raise ConfigError(
                f"prior {what!r} has {arr.size} values but the model has {size}; give one value "
                "or one per entry."
            )
        return np.broadcast_to(arr, (size,)).astype(np.float64)

    def confusion_alpha(self, n_annotators: int, n_classes: int) -> np.ndarray:
        """Dirichlet concentrations of the confusion rows, shape (K, C, C), in either family
        (a Beta(alpha, beta) on ``a_j`` is the row ``(beta, alpha)``; C = 2 only)."""
        if self.family == "beta":
            self._two_classes(n_classes)
            a_al, a_be = self.a.expand(n_annotators, "annotator")
            b_al, b_be = self.b.expand(n_annotators, "annotator")
            return np.stack([np.stack([a_be, a_al], -1), np.stack([b_be, b_al], -1)], axis=1)
        if self.confusion is not None:
            want = (n_annotators, n_classes, n_classes)
            if self.confusion.shape != want:
                raise ConfigError(
                    f"prior 'confusion' has shape {self.confusion.shape} but the model has "
                    f"{want} (annotators, classes, classes); build it for the new data's "
                    "annotators (ChannelPriors.from_fit(..., annotators=data.annotators))."
                )
            return self.confusion.copy()
        diag = self._expand(self.diagonal, n_annotators, "diagonal")
        off = self.off_diagonal_alpha(n_annotators, n_classes)
        eye = np.eye(n_classes)[None]
        return diag[:, None, None] * eye + off[:, None, None] * (1.0 - eye)

    def off_diagonal_alpha(self, n_annotators: int, n_classes: int) -> np.ndarray:
        """Concentration of each off-diagonal entry per annotator, shape (K,) (Dirichlet
        family): ``off_diagonal`` when given, else ``DEFAULT_OFF_DIAGONAL_MASS / (C - 1)``,
        so the default row's total stays ``diagonal + 1`` pseudo-answers for every C."""
        if self.off_diagonal is None:
            return np.full(n_annotators, DEFAULT_OFF_DIAGONAL_MASS / (n_classes - 1))
        return self._expand(self.off_diagonal, n_annotators, "off_diagonal")

    def split_alpha(self, n_annotators: int, n_classes: int) -> np.ndarray:
        """Concentration of each wrong answer's share of a row's error mass, shape (K,)
        (Dirichlet family, scalar rows): ``split`` when given, else ``off_diagonal`` when
        given (the row is then a Dirichlet), else ``DEFAULT_SPLIT``. At C = 2 there is one
        wrong answer and nothing to split: the off-diagonal concentration itself."""
        if n_classes == 2 or (self.split is None and self.off_diagonal is not None):
            return self.off_diagonal_alpha(n_annotators, n_classes)
        if self.split is None:
            return np.full(n_annotators, DEFAULT_SPLIT)
        return self._expand(self.split, n_annotators, "split")

    def nested(self, n_classes: int) -> bool:
        """Whether the rows are the nested prior (a Beta diagonal, Dirichlet shares of the
        rest; module docstring) rather than Dirichlet rows."""
        return (
            self.family == "dirichlet"
            and self.confusion is None
            and n_classes > 2
            and (self.split is not None or self.off_diagonal is None)
        )

    def confusion_kernel(
        self,
        n_annotators: int,
        n_classes: int,
        share_mean: np.ndarray | None = None,
        share_weight: np.ndarray | None = None,
    ) -> ConfusionKernel:
        """The confusion rows' prior density as the model uses it (:class:`ConfusionKernel`).

        Scalar Dirichlet-family rows are the nested prior ``T[y, y] ~ Beta(diagonal, M)``
        (``M`` the row's off-diagonal mass, ``C - 1`` times ``off_diagonal``) with the wrong
        answers' shares ``T[y, a] / (1 - T[y, y]) ~ Dirichlet(split, ..., split)``; on the
        simplex its density is ``prod_a T[y, a]^(alpha_a - 1) (1 - T[y, y])^kappa`` with
        ``alpha`` = (``diagonal`` on the own class, ``split`` elsewhere) and
        ``kappa = M - (C - 1) split`` (0 when ``split = M / (C - 1)``: the Dirichlet row of
        :meth:`confusion_alpha`). Full arrays, the Beta family and C = 2 are Dirichlet rows.

        ``share_mean`` (C, C) or per annotator (K, C, C), rows of wrong-answer shares with a
        zero diagonal, centres the nested shares (``shares="pooled"``,
        :func:`pooled_error_shares`): the share of answer ``a`` in row ``y`` gets
        ``split * (C - 1) * ((1 - w) / (C - 1) + w * share_mean[y, a])`` with ``w`` the
        row's ``share_weight`` (K, C) in ``[0, SHARE_POOLING]`` (:func:`share_pooling_weight`;
        default :data:`SHARE_POOLING`), the same total as even shares (so ``kappa`` and the
        diagonal's Beta stay). Ignored by Dirichlet rows.

        Examples
        --------
        >>> kernel = ChannelPriors(family="dirichlet").confusion_kernel(1, 4)
        >>> kernel.alpha[0, 0].tolist(), kernel.kappa[0].tolist()
        ([2.0, 0.5, 0.5, 0.5], [-0.5, -0.5, -0.5, -0.5])
        >>> mean = np.array([[0, 1, 0, 0], [.5, 0, .5, 0], [0, .5, 0, .5], [0, 0, 1, 0]])
        >>> ChannelPriors(family="dirichlet").confusion_kernel(1, 4, mean).alpha[0, 0].tolist()
        [2.0, 1.0, 0.25, 0.25]
        """
        from scipy.special import betaln

        alpha = self.confusion_alpha(n_annotators, n_classes)
        kappa = np.zeros((n_annotators, n_classes))
        if self.nested(n_classes):
            split = self.split_alpha(n_annotators, n_classes)[:, None]
            mass = self.off_diagonal_alpha(n_annotators, n_classes)[:, None] * (n_classes - 1)
            kappa = np.broadcast_to(mass - (n_classes - 1) * split, kappa.shape).copy()
            eye = np.eye(n_classes, dtype=bool)[None]
            shares = np.full((n_classes, n_classes), 1.0 / (n_classes - 1))
            if share_mean is not None:
                shares = _check_share_mean(share_mean, n_annotators, n_classes)
                w = _check_share_weight(share_weight, n_annotators, n_classes)[..., None]
                shares = (1.0 - w) / (n_classes - 1) + w * shares
            # each row's wrong answers keep the total (C - 1) split, so kappa is unchanged
            shares = np.broadcast_to(shares, (n_annotators, n_classes, n_classes))
            off = split[:, :, None] * (n_classes - 1) * shares
            alpha = np.where(eye, alpha, off)
        diag = np.diagonal(alpha, axis1=-2, axis2=-1)
        off = alpha.sum(-1) - diag  # the wrong answers' total in the exponents
        # Dirichlet(alpha) normaliser, then the nested one where kappa != 0:
        # -log B(d, M) + log Gamma(sum split) - sum log Gamma(split) (module docstring)
        log_norm = dirichlet_log_norm(alpha) + betaln(diag, off) - betaln(diag, off + kappa)
        return ConfusionKernel(alpha=alpha, kappa=kappa, log_norm=log_norm)

    def sample_confusion(
        self, rng: np.random.Generator, draws: int, n_annotators: int, n_classes: int
    ) -> np.ndarray:
        """Draws of every annotator's confusion rows from the prior rows (no joint normal),
        shape (draws, K, C, C): Dirichlet rows, or the nested rows of
        :meth:`confusion_kernel` with even shares (a Beta diagonal, Dirichlet shares of the
        rest; the pooled centre needs a start fit, which prior draws do not have)."""
        kernel = self.confusion_kernel(n_annotators, n_classes)
        shape = (draws, n_annotators, n_classes, n_classes)
        t = rng.gamma(np.broadcast_to(kernel.alpha, shape))
        t /= t.sum(axis=-1, keepdims=True)
        nested = kernel.kappa != 0
        if nested.any():
            eye = np.eye(n_classes, dtype=bool)
            diag = np.diagonal(kernel.alpha, axis1=-2, axis2=-1)
            off = kernel.alpha.sum(-1) - diag + kernel.kappa  # M
            d = rng.beta(np.broadcast_to(diag, shape[:-1]), np.broadcast_to(off, shape[:-1]))
            shares = np.where(eye, 0.0, t)
            shares /= shares.sum(axis=-1, keepdims=True)
            rows = shares * (1.0 - d)[..., None] + np.where(eye, d[..., None], 0.0)
            t = np.where(nested[None, :, :, None], rows, t)
        return t

    def prevalence_alpha(self, n_rows: int, n_classes: int) -> np.ndarray:
        """Dirichlet concentrations of the prevalence rows, shape (L', C), in either family."""
        if self.family == "beta":
            self._two_classes(n_classes)
            al, be = self.prevalence.expand(n_rows, "group")
            return np.stack([be, al], axis=-1)
        if self.prevalence_rows is not None:
            if self.prevalence_rows.shape != (n_rows, n_classes):
                raise ConfigError(
                    f"prior 'prevalence_rows' has shape {self.prevalence_rows.shape} but the "
                    f"model has {(n_rows, n_classes)} (prevalence rows, classes): carry "
                    "prevalences over only between audits with the same channel groups."
                )
            return self.prevalence_rows.copy()
        conc = self._expand(self.prevalence_concentration, n_rows, "prevalence")
        return np.repeat(conc[:, None], n_classes, 1)

    def _two_classes(self, n_classes: int) -> None:
        if n_classes != 2:
            raise ConfigError(
                f"Beta priors (a, b) are for two classes; the data have {n_classes}. Give "
                "Dirichlet rows (diagonal, off_diagonal, prevalence) instead."
            )

    def confusion_mean(self, n_annotators: int, n_classes: int) -> np.ndarray:
        """Prior centre of every confusion row, (K, C, C): the Dirichlet mean, or for rows
        under a :class:`JointRatioNormal` the row at its mean log-ratios (for display)."""
        alpha = self.confusion_alpha(n_annotators, n_classes)
        out = alpha / alpha.sum(axis=-1, keepdims=True)
        if isinstance(self.joint, JointRatioNormal):
            for (j, y), rows in self.joint.centre_rows()["confusion"].items():
                out[j, y] = rows[0]
        return out

    @property
    def invariant(self) -> bool:
        """True when the prior is unchanged by relabelling the latent classes (never for the
        Beta family, whose orientation constraint fixes the labelling)."""
        if self.family == "beta" or self.joint is not None:
            return False
        if self.confusion is not None:
            # every entry of an annotator's rows equal: a permutation of rows and columns
            # leaves the array as it is
            flat = self.confusion.reshape(self.confusion.shape[0], -1)
            same = bool(np.all(flat == flat[:, :1]))
        else:
            if self.off_diagonal is None:  # 1 / (C - 1): invariant only for C = 2, diagonal 1
                same = False
            else:
                split = self.off_diagonal if self.split is None else self.split
                diag, off, share = np.broadcast_arrays(
                    np.asarray(self.diagonal), np.asarray(self.off_diagonal), np.asarray(split)
                )
                same = bool(np.array_equal(diag, off) and np.array_equal(off, share))
        if self.prevalence_rows is not None:
            same &= bool(np.all(self.prevalence_rows == self.prevalence_rows[:, :1]))
        return same

    @classmethod
    def from_fit(
        cls,
        fit,
        *,
        inflate: float = 2.0,
        annotators=None,
        classes=None,
        prevalence: bool = False,
        se: Mapping | None = None,
        joint: bool = False,
    ) -> ChannelPriors:
        """Moment-matched priors per annotator from an earlier fit (module docstring).

        Parameters
        ----------
        fit : ChannelFit
            A posterior (two or more draws; e.g. :func:`~bayescal.bayes.fit_channels_bayes`
            or a loaded ``posterior.nc``), channel draws from
            :func:`bayescal.channels.bootstrap.bootstrap_channels`, or a point fit with
            ``se``. A binary fit gives Beta priors, a multiclass fit Dirichlet rows.
        inflate : float, default 2.0
            Drift discount in [1, :data:`MAX_INFLATE`]: the earlier audit counts as
            ``1 / inflate`` of its items.
        annotators : list of str, optional
            The new data's annotators, in its order; default the fit's. Names the earlier
            fit does not know keep the family's default prior (and are warned about).
        classes : list of str, optional
            The new data's classes; must equal a multiclass fit's (checked when given).
        prevalence : bool, default False
            Carry each group's prevalence over too (the new data must use the same
            groups, checked when the model is built).
        se : mapping, optional
            Standard errors of a point fit (one draw): ``{"a": (K,), "b": (K,)[,
            "prevalence": (L,)]}`` for a binary fit, ``{"confusion": (K, C, C)[,
            "prevalence": (L, C)]}`` for a multiclass one; ignored for fits with draws.
        joint : bool, default False
            Keep the earlier posterior's correlations (one normal on all carried-over
            coordinates; needs draws).

        Returns
        -------
        ChannelPriors
            With ``origin``: which annotators came from the earlier fit (``from_fit``) and
            which keep the default (``default``), ``inflate``, the earlier means and the
            prior's weight in items (``pseudo_items``).

        Raises
        ------
        ConfigError
            ``inflate`` out of range, repeated annotator names, no annotator shared with
            the new data, other classes, a point fit without ``se``, or moments no
            Beta / Dirichlet matches.

        Examples
        --------
        >>> import numpy as np
        >>> from bayescal.channels.result import ChannelFit
        >>> rng = np.random.default_rng(0)
        >>> fit = ChannelFit.from_draws(
        ...     rng.beta(20, 180, (4000, 1)), rng.beta(160, 40, (4000, 1)),
        ...     rng.beta(50, 50, (4000, 1)), annotators=["ann"], groups=["all"],
        ...     group_counts=[100], method="bayes_marginal")
        >>> p = ChannelPriors.from_fit(fit, inflate=1.0)
        >>> round(float(p.a.mean[0]), 2), 180 < float(p.a.alpha[0] + p.a.beta[0]) < 220
        (0.1, True)
        >>> halved = ChannelPriors.from_fit(fit)  # default drift discount: half the weight
        >>> bool(np.isclose(halved.a.alpha[0], p.a.alpha[0] / 2))
        True
        >>> rows = rng.dirichlet([80.0, 15.0, 5.0], size=(4000, 1, 3))  # one annotator
        >>> fit3 = ChannelFit.from_confusion(
        ...     rows, np.full((4000, 1, 3), 1 / 3), annotators=["ann"], classes=["a", "b", "c"],
        ...     groups=["all"], group_counts=[100], method="bayes_multiclass")
        >>> p3 = ChannelPriors.from_fit(fit3, inflate=1.0)
        >>> row = p3.confusion[0, 0]  # close to the Dirichlet(80, 15, 5) drawn from
        >>> p3.family, (row / row.sum()).round(2).tolist(), round(float(row.sum()) / 100, 1)
        ('dirichlet', [0.8, 0.15, 0.05], 1.0)
        """
        inflate = check_inflate(inflate)
        old = [str(x) for x in fit.annotators]
        new = old if annotators is None else [str(x) for x in annotators]
        index = _shared_annotators(old, new)
        build = _beta_from_fit if getattr(fit, "layout", "binary") == "binary" else _rows_from_fit
        options, means, extra, joint_prior = build(
            fit, new, index, inflate, classes=classes, prevalence=prevalence, se=se, joint=joint
        )
        priors = cls(**options)
        priors.joint = joint_prior
        priors.origin = {
            "inflate": inflate,
            "from_fit": [n for n in new if n in index],
            "default": [n for n in new if n not in index],
            "unused": [n for n in old if n not in set(new)],
            "earlier_means": means,
            "method": getattr(fit, "method", None),
            "joint": bool(joint),
            **extra,
        }
        return priors

    def to_dict(self) -> dict:
        """Plain, JSON-friendly description (stored in InferenceData attrs), with ``origin``
        (the annotators from the earlier fit and the prior's weight in items) when set."""
        out: dict = {"family": self.family}
        if self.family == "beta":
            for key in _BETA_PRIORS:
                p = self._beta[key]
                out[key] = {
                    "dist": "Beta",
                    "alpha": np.asarray(p.alpha).tolist(),
                    "beta": np.asarray(p.beta).tolist(),
                }
        else:
            out["diagonal"] = np.asarray(self.diagonal).tolist()
            # the default is a rule, not a number: 1 / (C - 1) per entry (fixed row total)
            out["off_diagonal"] = (
                OFF_DIAGONAL_RULE
                if self.off_diagonal is None
                else np.asarray(self.off_diagonal).tolist()
            )
            out["split"] = SPLIT_RULE if self.split is None else np.asarray(self.split).tolist()
            out["shares"] = self.shares
            out["prevalence"] = np.asarray(self.prevalence_concentration).tolist()
            for key in _DIRICHLET_ARRAYS:
                if getattr(self, key) is not None:
                    out[key] = getattr(self, key).tolist()
        if self.joint is not None:
            out["joint"] = self.joint.to_dict()
        if self.origin is not None:
            out["origin"] = self.origin
        return out

    def __eq__(self, other) -> bool:
        return isinstance(other, ChannelPriors) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        if self.family == "beta":
            joint = (
                "" if self.joint is None else f", joint=LogitNormal({self.joint.mean.size} rates)"
            )
            return (
                f"ChannelPriors(a={self.a!r}, b={self.b!r}, prevalence={self.prevalence!r}{joint})"
            )

        def show(x):
            return f"{float(x):g}" if x.ndim == 0 else "[" + ", ".join(f"{v:g}" for v in x) + "]"

        if self.confusion is not None:
            rows = f"confusion=<{self.confusion.shape[0]} x {self.confusion.shape[1]} rows>"
        else:
            off = OFF_DIAGONAL_RULE if self.off_diagonal is None else show(self.off_diagonal)
            rows = f"diagonal={show(self.diagonal)}, off_diagonal={off}"
            if self.split is not None:
                rows += f", split={show(self.split)}"
            if self.shares != SHARES[0]:
                rows += f", shares={self.shares!r}"
        if self.prevalence_rows is not None:
            prev = f"prevalence_rows=<{self.prevalence_rows.shape[0]} rows>"
        else:
            prev = f"prevalence={show(self.prevalence_concentration)}"
        joint = "" if self.joint is None else f", joint=RatioNormal({self.joint.mean.size} coords)"
        return f"ChannelPriors({rows}, {prev}{joint})"


def check_inflate(inflate) -> float:
    """The drift discount of priors from an earlier audit: a number in [1, MAX_INFLATE], or
    ConfigError saying what the bound means (module docstring).

    Examples
    --------
    >>> check_inflate("2")
    2.0
    """
    try:
        inflate = float(inflate)
    except (TypeError, ValueError):
        raise ConfigError(f"inflate must be a number >= 1; got {inflate!r}.") from None
    if not np.isfinite(inflate) or inflate < 1:
        raise ConfigError(
            f"inflate must be a finite number >= 1 (1 = no drift discount); got {inflate!r}."
        )
    if inflate > MAX_INFLATE:
        raise ConfigError(
            f"inflate {inflate!r} is above the limit {MAX_INFLATE:,.0f}: it would count an "
            "earlier audit of a million items as less than one item, i.e. say nothing. Audit "
            "without --priors instead (or give a drift discount such as 2-10)."
        )
    return inflate


def _shared_annotators(old: list[str], new: list[str]) -> dict[str, int]:
    """``{name: position in the earlier fit}``, after refusing repeated names and an earlier
    fit that shares no annotator with the new data; new names it lacks are warned about."""
    for what, names in (("the earlier fit (priors)", old), ("the new data", new)):
        seen, twice = set(), []
        for n in names:
            if n in seen and n not in twice:
                twice.append(n)
            seen.add(n)
        if twice:
            raise ConfigError(
                f"{what} names annotator(s) {twice} more than once, so which one's channel "
                "is meant is ambiguous; give each annotator one unique name."
            )
    index = {name: j for j, name in enumerate(old)}
    unknown = [n for n in new if n not in index]
    # a name that differs only in spaces or case is the likelier cause than a new annotator
    loose = {" ".join(str(n).split()).casefold(): n for n in old}
    near = [
        f"{n!r} ~ {loose[key]!r}"
        for n in unknown
        if (key := " ".join(str(n).split()).casefold()) in loose
    ]
    spelled = (
        f" Names that differ only in spaces or case: {', '.join(near)}; rename them to match."
        if near
        else ""
    )
    if new and len(unknown) == len(new):
        raise ConfigError(
            f"none of the new data's annotators {new} is in the earlier fit (annotators "
            f"{old}): priors from it would be the default priors for everyone. Check that the "
            "names are spelled the same in both audits, or audit without priors." + spelled
        )
    if unknown:
        warnings.warn(
            f"priors from the earlier fit: annotator(s) {unknown} are not in it and keep the "
            "default prior (listed in priors.origin['default'] and the report's priors "
            "section)." + spelled,
            BayescalWarning,
            stacklevel=3,
        )
    return index


def _check_concentrations(alpha: np.ndarray, where) -> list[str]:
    """Messages for the discounted concentrations below :data:`MIN_CONCENTRATION`."""
    return [
        f"{where(idx)} has a concentration {alpha[idx]:.3g} after the drift discount, below "
        f"{MIN_CONCENTRATION:.2g}: most of its draws are exactly 0 in double precision. Use "
        "a smaller inflate"
        for idx in np.ndindex(alpha.shape)
        if alpha[idx] < MIN_CONCENTRATION
    ]


def _pseudo_items(alpha: np.ndarray, names: list[str], rows: list[str]) -> dict:
    """``{name: {row: concentration sum}}``: how many items each prior row counts as."""
    total = alpha.sum(axis=-1)
    return {n: {r: float(total[i, y]) for y, r in enumerate(rows)} for i, n in enumerate(names)}


def _positive(name: str, value, errors: list[str], ndim: int | None = None):
    """Positive finite numbers: a scalar or 1-D array (``ndim=None``), else exactly ``ndim``-D
    with two or more classes on the last axis; problems appended to ``errors``."""
    if value is None:
        return None
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        errors.append(f"{name} must be a number or an array of numbers; got {value!r}")
        return None
    if ndim is None and (arr.ndim > 1 or arr.size == 0):
        errors.append(f"{name} must be a scalar or a non-empty 1-D array; got shape {arr.shape}")
        return None
    if ndim is not None and (arr.ndim != ndim or arr.size == 0 or arr.shape[-1] < 2):
        errors.append(f"{name} must be a {ndim}-D array with >= 2 classes; got shape {arr.shape}")
        return None
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        errors.append(f"{name} must be finite and > 0; got {value!r}")
        return None
    return arr


def _parse_one(key: str, value) -> tuple[Beta | None, list[str]]:
    where = f"prior {key!r}"
    if isinstance(value, Beta):
        return value, []
    if isinstance(value, Mapping):
        errors = [
            f"{where}: unknown field {f!r}; use 'alpha' and 'beta'"
            for f in value
            if f not in _BETA_FIELDS
        ]
        dist = value.get("dist", "Beta")
        if dist != "Beta":
            errors.append(
                f"{where}: only Beta priors are supported (rates live in [0, 1]); got dist={dist!r}"
            )
        missing = [f for f in ("alpha", "beta") if f not in value]
        if missing:
            errors.append(f"{where}: missing {' and '.join(missing)}")
        if errors:
            return None, errors
        alpha, beta = value["alpha"], value["beta"]
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        alpha, beta = value
    else:
        return None, [
            f"{where}: give Beta(alpha, beta), a pair (alpha, "
            f"beta) or {{'alpha': .., 'beta': ..}}; got {value!r}"
        ]
    errors = _beta_errors(where, alpha, beta)
    if errors:
        return None, errors
    return Beta(alpha, beta), []


# ------------------------------------------------------------------- from_fit: Beta family
def _fit_moments(fit, key: str, se) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``fit.<key>`` over its draws, or the point and ``se**2``."""
    draws = np.asarray(getattr(fit, key).values, dtype=np.float64)
    if draws.shape[0] >= 2:
        return _draw_moments(draws, repr(key))
    if se is None or key not in se:
        raise ConfigError(
            f"the fit has one draw (a point fit), so its uncertainty about {key!r} is unknown: "
            "pass se={'a': ..., 'b': ...} (standard errors), or turn an EM fit into draws with "
            "bayescal.channels.bootstrap.bootstrap_channels(summary, fit)."
        )
    sd = np.asarray(se[key], dtype=np.float64)
    if sd.shape != draws.shape[1:]:
        raise ConfigError(f"se[{key!r}] must have shape {draws.shape[1:]}; got {sd.shape}.")
    return draws[0], sd**2


def _draw_moments(draws: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance over the first axis of ``draws``; a variance that underflows is an
    error that says so, not a "variance 0".

    Draws near 1e-200 that differ by 10% have a variance near 1e-402, below the smallest
    float64 number: it rounds to 0 although the draws are not equal, and no Beta or
    Dirichlet can be moment-matched to it.

    Examples
    --------
    >>> m, v = _draw_moments(np.array([[0.2], [0.4]]), "'a'")
    >>> m.round(3).tolist(), v.round(3).tolist()
    ([0.3], [0.02])
    >>> _draw_moments(np.array([[1e-200], [1.1e-200]]), "'a'")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: the draws of 'a' at 1 coordinate(s) are at most 1.1e-200 ...
    """
    m, v = draws.mean(axis=0), draws.var(axis=0, ddof=1)
    top = np.abs(draws).max(axis=0)
    scale = np.where(top > 0, top, 1.0)
    under = (v == 0) & ((draws / scale).var(axis=0) > 0)
    if under.any():
        raise ConfigError(
            f"the draws of {what} at {int(under.sum())} coordinate(s) are at most "
            f"{float(top[under].min()):.3g} and not all equal, but their variance is below the "
            f"smallest float64 number ({np.finfo(np.float64).tiny:.3g}) and rounds to 0, so no "
            "prior can be matched to them; a sampled audit does not put a probability this "
            "close to 0 or 1: give the posterior.nc of a sampled audit."
        )
    return m, v


def _match_beta(key, labels, m, v, inflate):
    """Moment-matched Beta parameters divided by ``inflate``; problems as messages."""
    errors = []
    for name, mj, vj in zip(labels, m, v):
        if not (0 < mj < 1) or not (0 < vj < mj * (1 - mj)):
            errors.append(
                f"{key}[{name}] has mean {mj:.4g} and variance {vj:.4g}: a Beta needs a mean in "
                "(0, 1) and a variance in (0, mean (1 - mean))"
            )
    with np.errstate(divide="ignore", invalid="ignore"):
        total = m * (1 - m) / v - 1
    alpha, beta = m * total / inflate, (1 - m) * total / inflate
    if not errors:
        pair = np.stack([alpha, beta], axis=-1)
        errors = _check_concentrations(pair, lambda idx: f"{key}[{labels[idx[0]]}]")
    return alpha, beta, errors


def _beta_from_fit(fit, new, index, inflate, *, classes, prevalence, se, joint):
    """Options of the Beta family from a binary fit, the earlier means, origin extras and the
    joint normal (or None)."""
    del classes  # a binary fit's classes are the two of the binary data
    old = [str(x) for x in fit.annotators]
    keys = ("a", "b", "prevalence") if prevalence else ("a", "b")
    errors, parsed, means = [], {}, {}
    for key in keys:
        m, v = _fit_moments(fit, key, se)
        labels = old if key != "prevalence" else [str(g) for g in fit.prevalence["group"].values]
        alpha, beta, errs = _match_beta(key, labels, m, v, inflate)
        errors.extend(errs)
        means[key] = dict(zip(labels, m.tolist()))
        if key == "prevalence":
            parsed[key] = (alpha, beta)
            continue
        default_al, default_be = DEFAULT_PRIORS[key]
        parsed[key] = (
            np.array([alpha[index[n]] if n in index else default_al for n in new]),
            np.array([beta[index[n]] if n in index else default_be for n in new]),
        )
    if errors:
        raise ConfigError("cannot build priors from this fit: " + "; ".join(errors) + ".")
    carried = [n for n in new if n in index]
    rows = np.stack([np.stack(parsed[key], axis=-1) for key in ("a", "b")], axis=1)  # (K, 2, 2)
    extra = {
        "prevalence": bool(prevalence),
        "pseudo_items": _pseudo_items(rows[[new.index(n) for n in carried]], carried, ["0", "1"]),
    }
    joint_prior = None
    if joint:
        parsed, joint_prior = _logit_joint_from_draws(fit, new, index, prevalence, inflate, parsed)
    return parsed, means, extra, joint_prior


def _logit_joint_from_draws(fit, new, index, prevalence, inflate, parsed):
    """Beta(1, 1) for the carried-over rates and the normal of their earlier log-odds."""
    if np.asarray(fit.a.values).shape[0] < 2:
        raise ConfigError("joint=True needs posterior draws (a point fit has no correlations).")
    k = len(new)
    columns, positions = [], []
    for block, key in enumerate(("a", "b")):
        draws = np.asarray(getattr(fit, key).values, dtype=np.float64)
        al, be = (np.array(x, dtype=np.float64) for x in parsed[key])
        for j, name in enumerate(new):
            if name in index:
                columns.append(draws[:, index[name]])
                positions.append(block * k + j)
                al[j] = be[j] = 1.0
        parsed[key] = (al, be)
    n_prev = 0
    if prevalence:
        draws = np.asarray(fit.prevalence.values, dtype=np.float64)
        n_prev = draws.shape[1]
        columns += [draws[:, q] for q in range(n_prev)]
        positions += [2 * k + q for q in range(n_prev)]
        parsed["prevalence"] = (np.ones(n_prev), np.ones(n_prev))
    x = np.column_stack(columns)
    if not np.all((x > 0) & (x < 1)):
        raise ConfigError("joint=True needs rates strictly inside (0, 1) in every draw.")
    z = np.log(x) - np.log1p(-x)
    cov = np.atleast_2d(np.cov(z, rowvar=False)) * inflate
    joint = JointLogitNormal(positions, z.mean(axis=0), cov, k, n_prev)
    joint.draws_ess = covariance_shift(z)[1]
    return parsed, joint


# ------------------------------------------------------------- from_fit: Dirichlet family
def _moments(draws, se, what):
    """Mean and variance over draws, or a point fit's value and ``se**2``."""
    if draws.shape[0] >= 2:
        return _draw_moments(draws, f"the {what}")
    if se is None:
        raise ConfigError(
            f"the fit has one draw (a point fit), so its uncertainty about the {what} is "
            "unknown: pass se= (standard errors of the same shape), or sample the earlier "
            "audit's posterior with fit_channels_bayes."
        )
    sd = np.asarray(se, dtype=np.float64)
    if sd.shape != draws.shape[1:]:
        raise ConfigError(f"se for the {what} must have shape {draws.shape[1:]}; got {sd.shape}.")
    if not np.all(np.isfinite(sd) & (sd > 0)):
        raise ConfigError(f"se for the {what} must be finite and > 0.")
    return draws[0], sd**2


def _rows_from_fit(fit, new, index, inflate, *, classes, prevalence, se, joint):
    """Options of the Dirichlet family from a multiclass fit, as :func:`_beta_from_fit`."""
    fit_classes = [str(c) for c in fit.classes]
    if classes is not None and [str(c) for c in classes] != fit_classes:
        raise ConfigError(
            f"the earlier fit has classes {fit_classes}, the new data {list(classes)}: priors "
            "carry over only between audits with the same classes in the same order."
        )
    se = {} if se is None else dict(se)
    unknown = sorted(set(se) - {"confusion", "prevalence"})
    if unknown:
        raise ConfigError(f"se keys must be 'confusion' and 'prevalence'; got {unknown}.")
    old = [str(a) for a in fit.annotators]
    c = len(fit_classes)
    conf_m, conf_v = _moments(
        np.asarray(fit.confusion.values, np.float64), se.get("confusion"), "confusion"
    )

    def row_name(idx):
        return f"confusion row {old[idx[0]]!r} / true class {fit_classes[idx[1]]!r}"

    alpha_old, errors = dirichlet_from_moments(conf_m, conf_v, inflate=inflate, where=row_name)
    if not errors:
        errors = _check_concentrations(alpha_old, row_name)
    alpha = ChannelPriors(family="dirichlet").confusion_alpha(len(new), c)
    for j, name in enumerate(new):
        if name in index:
            alpha[j] = alpha_old[index[name]]
    options: dict = {"confusion": alpha}
    carried = [n for n in new if n in index]
    means: dict = {"confusion": {name: conf_m[index[name]].tolist() for name in carried}}
    extra: dict = {
        "prevalence": bool(prevalence),
        "prevalence_groups": None,
        "pseudo_items": _pseudo_items(alpha[[new.index(n) for n in carried]], carried, fit_classes),
    }
    if prevalence:
        groups = [str(g) for g in fit.class_prevalence["group"].values]
        prev_m, prev_v = _moments(
            np.asarray(fit.class_prevalence.values, np.float64), se.get("prevalence"), "prevalence"
        )
        beta, errs = dirichlet_from_moments(
            prev_m,
            prev_v,
            inflate=inflate,
            where=lambda idx: f"prevalence of group {groups[idx[0]]!r}",
        )
        errors += errs
        options["prevalence_rows"] = beta
        means["prevalence"] = dict(zip(groups, prev_m.tolist()))
        extra["prevalence_groups"] = groups
    if errors:
        raise ConfigError("cannot build priors from this fit: " + "; ".join(errors) + ".")
    joint_prior = None
    if joint:
        options, joint_prior = _ratio_joint_from_draws(
            fit, new, index, prevalence, inflate, options
        )
    return options, means, extra, joint_prior


def _ratio_joint_from_draws(fit, new, index, prevalence, inflate, options):
    """Dirichlet(1) for the carried rows and the normal of their earlier log-ratios."""
    conf = np.asarray(fit.confusion.values, dtype=np.float64)  # (S, K_old, C, C)
    if conf.shape[0] < 2:
        raise ConfigError("joint=True needs posterior draws (a point fit has no correlations).")
    c = conf.shape[-1]
    kind, row, answer, reference, columns = [], [], [], [], []
    for j, name in enumerate(new):
        if name not in index:
            continue
        for y in range(c):
            logs = np.log(conf[:, index[name], y])
            for a in range(c):
                if a != y:
                    kind.append(0), row.append(j * c + y), answer.append(a), reference.append(y)
                    columns.append(logs[:, a] - logs[:, y])
            options["confusion"][j, y] = 1.0
    n_prev = 0
    if prevalence:
        prev = np.asarray(fit.class_prevalence.values, dtype=np.float64)  # (S, L, C)
        n_prev = prev.shape[1]
        for q in range(n_prev):
            logs = np.log(prev[:, q])
            r = int(prev[:, q].mean(axis=0).argmax())
            for a in range(c):
                if a != r:
                    kind.append(1), row.append(q), answer.append(a), reference.append(r)
                    columns.append(logs[:, a] - logs[:, r])
        options["prevalence_rows"] = np.ones((n_prev, c))
    z = np.column_stack(columns)
    if not np.all(np.isfinite(z)):
        raise ConfigError("joint=True needs rows strictly inside the simplex in every draw.")
    cov = np.atleast_2d(np.cov(z, rowvar=False)) * inflate
    joint = JointRatioNormal(kind, row, answer, reference, z.mean(axis=0), cov, len(new), c, n_prev)
    joint.draws_ess = covariance_shift(z)[1]
    return options, joint
