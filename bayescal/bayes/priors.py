"""Priors of the Bayesian channel models, as one validated object.

Every channel model has three families of parameters: false-positive rates
``a[annotator]``, sensitivities ``b[annotator]`` and prevalences
``prevalence[group]``. Each gets a Beta prior. Orientation (``a < b``) is a
constraint of the model (see :mod:`bayescal.bayes.models`), so the joint prior
of an oriented pair ``(a_j, b_j)`` is the product of the two Beta densities
restricted to ``a_j < b_j``.

Defaults (weakly informative):

``a ~ Beta(2, 2)``, ``b ~ Beta(2, 2)``
    Symmetric, so that the orientation constraint is the only thing telling
    ``a`` from ``b``; the mass it puts near 0 and 1 is small but not zero
    (density 0.12 at 0.02), which keeps NUTS away from the logit boundary
    without ruling out very accurate annotators. With the order constraint
    the implied prior means are ``E[a] = 0.37``, ``E[b] = 0.63``.
``prevalence ~ Beta(1, 1)``
    Uniform: score groups at the ends of the score range routinely have
    prevalences near 0 or 1, and a uniform prior does not pull them inward.

Priors from an earlier audit (:meth:`ChannelPriors.from_fit`)
-------------------------------------------------------------
Each annotator's ``a_j`` and ``b_j`` (and, on request, each score group's
prevalence) gets the Beta with the mean ``m`` and variance ``v`` of the earlier
posterior draws (moment matching: ``alpha + beta = m (1 - m) / v - 1``,
``alpha = m (alpha + beta)``), or of a point fit with its standard errors. The
**drift discount** ``inflate`` divides both parameters: the prior keeps its mean
and counts as ``1 / inflate`` of the items behind the earlier estimate (its
variance grows about ``inflate``-fold). ``inflate = 1`` is the plain sequential
update (right when the annotators have not changed; the sequential-update check
of the tests); the default 2 treats an earlier audit as worth half its items,
for annotators who may have drifted since (retraining, fatigue, a new guideline).
Annotators the earlier fit does not know keep the default prior. Prevalences are
not carried over by default: they describe the items, which usually change
between audits more than the annotators do.

With ``joint=True`` the earlier posterior's correlations are kept as well: the
covered rates get ``Beta(1, 1)`` and, on top, one multivariate normal on their
log-odds (:class:`JointLogitNormal`, mean and covariance of the earlier draws,
covariance times ``inflate``). Independent Beta priors drop the correlations
between an annotator's rates and the prevalences (and between annotators), and
the sequential update then misses the full-data posterior by a few tenths of a
posterior sd (measured in ``tests/knowledge/test_priors.py``); the joint prior
reproduces it within Monte Carlo error when the earlier posterior is close to
normal on the log-odds scale (hundreds of items or more).

Configuration errors (unknown keys, non-positive or non-finite parameters,
wrong shapes) are collected and raised together as one
:class:`~bayescal.errors.ConfigError`, so a typo is never silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from bayescal.errors import ConfigError

__all__ = ["Beta", "JointLogitNormal", "ChannelPriors", "DEFAULT_PRIORS"]


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
        if not (np.all(np.isfinite(self.mean)) and np.all(np.isfinite(self.cov))):
            raise ConfigError("joint prior: mean and cov must be finite.")
        try:
            chol = np.linalg.cholesky(self.cov)
        except np.linalg.LinAlgError:
            raise ConfigError(
                "joint prior: cov is not positive definite (too few or collinear draws)."
            ) from None
        if not np.allclose(self.cov, self.cov.T, rtol=1e-10, atol=0):
            raise ConfigError("joint prior: cov must be symmetric.")
        self.precision = np.linalg.inv(self.cov)
        self.precision = (self.precision + self.precision.T) / 2
        #: log normalising constant of the normal: -n/2 log(2 pi) - log det(cov) / 2
        self.log_norm = float(-0.5 * n * np.log(2 * np.pi) - np.log(np.diag(chol)).sum())

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


DEFAULT_PRIORS = {"a": (2.0, 2.0), "b": (2.0, 2.0), "prevalence": (1.0, 1.0)}
_KEYS = tuple(DEFAULT_PRIORS)
_BETA_KEYS = {"alpha", "beta", "dist"}


class ChannelPriors:
    """Beta priors for ``a``, ``b`` and ``prevalence``, validated at construction.

    Parameters
    ----------
    config : mapping, optional
        ``{"a": ..., "b": ..., "prevalence": ...}``; any subset. Merged with
        keyword arguments (keywords win).
    **priors
        Each value is a :class:`Beta`, a pair ``(alpha, beta)`` or a mapping
        ``{"alpha": ..., "beta": ...}`` (optionally ``"dist": "Beta"``).
        ``alpha`` and ``beta`` may be 1-D (one value per annotator for ``a``/``b``,
        per score group for ``prevalence``); lengths are checked when a model
        is built.

    Raises
    ------
    ConfigError
        Listing every problem found: unknown keys, unknown fields, distributions
        other than Beta, non-positive parameters.

    Examples
    --------
    >>> p = ChannelPriors(a=(1, 9), prevalence={"alpha": 2, "beta": 2})
    >>> p
    ChannelPriors(a=Beta(1, 9), b=Beta(2, 2), prevalence=Beta(2, 2))
    >>> ChannelPriors(sensitivity=(2, 2), a=(0, 1))
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: 2 problems in channel priors:
      - unknown prior 'sensitivity'; known priors are 'a', 'b', 'prevalence'
      - prior 'a': alpha must be finite and > 0; got 0
    """

    def __init__(self, config: Mapping | None = None, **priors):
        merged: dict = {}
        errors: list[str] = []
        if config is not None:
            if not isinstance(config, Mapping):
                raise ConfigError(f"priors config must be a mapping; got {type(config).__name__}.")
            merged.update(config)
        merged.update(priors)
        parsed = {}
        for key in merged:
            if key not in _KEYS:
                errors.append(
                    f"unknown prior {key!r}; known priors are " + ", ".join(repr(k) for k in _KEYS)
                )
        for key in _KEYS:
            value = merged.get(key, DEFAULT_PRIORS[key])
            beta, errs = _parse_one(key, value)
            errors.extend(errs)
            parsed[key] = beta
        if errors:
            head = "1 problem" if len(errors) == 1 else f"{len(errors)} problems"
            raise ConfigError(
                f"{head} in channel priors:\n" + "\n".join(f"  - {e}" for e in errors)
            )
        self.a: Beta = parsed["a"]
        self.b: Beta = parsed["b"]
        self.prevalence: Beta = parsed["prevalence"]
        #: where the priors came from (set by :meth:`from_fit`; None for hand-written priors)
        self.origin: dict | None = None
        #: optional :class:`JointLogitNormal` on top of the Beta priors (``from_fit(joint=True)``)
        self.joint: JointLogitNormal | None = None

    @classmethod
    def coerce(cls, priors) -> ChannelPriors:
        """``None`` -> defaults, a mapping -> validated, a ChannelPriors unchanged."""
        if priors is None:
            return cls()
        if isinstance(priors, ChannelPriors):
            return priors
        if isinstance(priors, Mapping):
            return cls(priors)
        raise ConfigError(
            f"priors must be None, a mapping or a ChannelPriors; got {type(priors).__name__}."
        )

    @classmethod
    def from_fit(
        cls,
        fit,
        *,
        inflate: float = 2.0,
        annotators=None,
        prevalence: bool = False,
        se: Mapping | None = None,
        joint: bool = False,
    ) -> ChannelPriors:
        """Moment-matched Beta priors per annotator from an earlier fit (module docstring).

        Parameters
        ----------
        fit : ChannelFit
            A posterior (``fit.a`` with two or more draws), channel draws from
            :func:`bayescal.channels.bootstrap.bootstrap_channels`, or a point fit with
            ``se``.
        inflate : float, default 2.0
            Drift discount >= 1: the earlier audit counts as ``1 / inflate`` of its items.
        annotators : list of str, optional
            The new data's annotators, in its order; default the fit's. Names the earlier
            fit does not know get the default ``Beta(2, 2)``.
        prevalence : bool, default False
            Carry the prevalence of each score group over too (the new data must then
            use the same groups, checked by length when the model is built).
        se : mapping, optional
            ``{"a": (K,), "b": (K,)}`` (and ``"prevalence"``) standard errors of a point
            fit (one draw); ignored for fits with draws.
        joint : bool, default False
            Keep the earlier posterior's correlations: a :class:`JointLogitNormal` on
            the log-odds of every carried-over rate (needs draws; module docstring).

        Returns
        -------
        ChannelPriors
            With ``origin``: which annotators came from the earlier fit, ``inflate``,
            and the earlier means.

        Raises
        ------
        ConfigError
            ``inflate < 1``, a point fit without ``se``, a standard error that is not
            positive or at least ``sqrt(m (1 - m))`` (no Beta has it), or a mean of 0 or 1.

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
        """
        inflate = check_inflate(inflate)
        old = [str(x) for x in fit.annotators]
        new = old if annotators is None else [str(x) for x in annotators]
        keys = ("a", "b", "prevalence") if prevalence else ("a", "b")
        moments = {key: _fit_moments(fit, key, se) for key in keys}
        errors, parsed, means = [], {}, {}
        for key in keys:
            m, v = moments[key]
            labels = (
                old if key != "prevalence" else [str(g) for g in fit.prevalence["group"].values]
            )
            alpha, beta, errs = _match_beta(key, labels, m, v, inflate)
            errors.extend(errs)
            means[key] = dict(zip(labels, m.tolist()))
            if key == "prevalence":
                parsed[key] = (alpha, beta)
                continue
            default_al, default_be = DEFAULT_PRIORS[key]
            index = {name: j for j, name in enumerate(old)}
            parsed[key] = (
                np.array([alpha[index[n]] if n in index else default_al for n in new]),
                np.array([beta[index[n]] if n in index else default_be for n in new]),
            )
        if errors:
            raise ConfigError("cannot build priors from this fit: " + "; ".join(errors) + ".")
        if joint:
            parsed, joint_prior = _joint_from_draws(fit, new, old, prevalence, inflate, parsed)
        priors = cls(**parsed)
        if joint:
            priors.joint = joint_prior
        priors.origin = origin_record(fit, new, old, inflate, means, joint=bool(joint))
        return priors

    def to_dict(self) -> dict:
        """Plain, JSON-friendly description (stored in InferenceData attrs)."""
        out = {}
        for key in _KEYS:
            p = getattr(self, key)
            out[key] = {
                "dist": "Beta",
                "alpha": np.asarray(p.alpha).tolist(),
                "beta": np.asarray(p.beta).tolist(),
            }
        if self.joint is not None:
            out["joint"] = self.joint.to_dict()
        return out

    def __eq__(self, other) -> bool:
        return isinstance(other, ChannelPriors) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        joint = "" if self.joint is None else f", joint=LogitNormal({self.joint.index.size} rates)"
        return f"ChannelPriors(a={self.a!r}, b={self.b!r}, prevalence={self.prevalence!r}{joint})"


def origin_record(fit, new, known, inflate: float, means: dict, **extra) -> dict:
    """Where priors from an earlier audit came from (``priors.origin``, both tracks): the new
    data's annotators the earlier fit knew (``from_fit``) and did not (``default``),
    ``inflate``, the earlier means and the earlier fit's method, plus ``extra``."""
    return {
        "inflate": inflate,
        "from_fit": [n for n in new if n in known],
        "default": [n for n in new if n not in known],
        "earlier_means": means,
        "method": getattr(fit, "method", None),
        **extra,
    }


def check_inflate(inflate) -> float:
    """The drift discount of priors from an earlier audit: a finite number >= 1, or ConfigError.

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
    return inflate


def _parse_one(key: str, value) -> tuple[Beta | None, list[str]]:
    where = f"prior {key!r}"
    if isinstance(value, Beta):
        return value, []
    if isinstance(value, Mapping):
        errors = [
            f"{where}: unknown field {f!r}; use 'alpha' and 'beta'"
            for f in value
            if f not in _BETA_KEYS
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


def _fit_moments(fit, key: str, se) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``fit.<key>`` over its draws, or the point and ``se**2``."""
    draws = np.asarray(getattr(fit, key).values, dtype=np.float64)
    if draws.shape[0] >= 2:
        return draws.mean(axis=0), draws.var(axis=0, ddof=1)
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
    return m * total / inflate, (1 - m) * total / inflate, errors


def _joint_from_draws(fit, new, old, prevalence, inflate, parsed):
    """Beta(1, 1) for the carried-over rates and the normal of their earlier log-odds."""
    if np.asarray(fit.a.values).shape[0] < 2:
        raise ConfigError("joint=True needs posterior draws (a point fit has no correlations).")
    k = len(new)
    index = {name: j for j, name in enumerate(old)}
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
