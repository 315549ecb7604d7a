"""The toy study of Section 6.1, with exact population calibration errors.

``X ~ 0.5 N(-1, 1) + 0.5 N(1, 1)``, a fixed predictor ``Z = f(X) = sigmoid(0.3 - X)``, and
``Y | Z ~ Bernoulli(m(Z))`` for one of three calibration curves:

- ``"calibrated"``: ``m(z) = z``;
- ``"shifted"``: ``m(z) = sigmoid(0.65 logit(z) - 0.3)``;
- ``"nonlinear"``: ``m(z) = clip(z + 0.12 sin(2 pi z), 0.02, 0.98)``.

Three annotators flip ``Y`` with false-positive rates ``(0.08, 0.13, 0.18)`` and
false-negative rates ``(0.16, 0.11, 0.06)``.

Population references are integrals over ``x`` (``z = sigmoid(0.3 - x)`` is a bijection, and
bin edges in ``z`` map to ``x = 0.3 - logit(z)``), computed with adaptive quadrature split at
every kink of ``m`` and every sign change of ``m(z) - z``, so the integrand is smooth on each
piece. Results agree with the paper's values (Appendix G.2) to better than ``1e-11``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special

from bayescal._random import check_random_state
from bayescal.errors import ConfigError
from bayescal.simulate._checks import check_n_items, check_rates
from bayescal.simulate.flips import simulate_flip_data

__all__ = [
    "TOY_CONDITIONS",
    "TOY_FP",
    "TOY_FN",
    "TOY_INTERCEPT",
    "toy_curve",
    "toy_score",
    "simulate_toy",
    "toy_population_ece",
    "toy_population_bin_moments",
    "toy_population_binned_ece",
]

TOY_CONDITIONS = ("calibrated", "shifted", "nonlinear")
TOY_FP = (0.08, 0.13, 0.18)
TOY_FN = (0.16, 0.11, 0.06)
TOY_INTERCEPT = 0.3
_MIXTURE_MEANS = (-1.0, 1.0)

# Quadrature accuracy: far below the 1e-9 the reference values are quoted to.
_EPSABS = 1e-14
_EPSREL = 1e-12
_LIMIT = 200


def _calibrated(z):
    return np.asarray(z, dtype=np.float64).copy()


def _shifted(z):
    z = np.asarray(z, dtype=np.float64)
    return special.expit(0.65 * special.logit(z) - 0.3)


def _nonlinear_unclipped(z):
    return z + 0.12 * np.sin(2.0 * np.pi * z)


def _nonlinear(z):
    z = np.asarray(z, dtype=np.float64)
    return np.clip(_nonlinear_unclipped(z), 0.02, 0.98)


def _nonlinear_kinks() -> tuple[float, ...]:
    # z + 0.12 sin(2 pi z) has derivative >= 1 - 0.24 pi > 0, so each clip level is hit once.
    return tuple(
        optimize.brentq(
            lambda z, c=level: _nonlinear_unclipped(z) - c, 0.0, 1.0, xtol=1e-15, rtol=1e-15
        )
        for level in (0.02, 0.98)
    )


@dataclass(frozen=True)
class _Curve:
    func: Callable[[np.ndarray], np.ndarray]
    kinks: Callable[[], tuple[float, ...]]


_CURVES = {
    "calibrated": _Curve(_calibrated, tuple),
    "shifted": _Curve(_shifted, tuple),
    "nonlinear": _Curve(_nonlinear, _nonlinear_kinks),
}


def _check_condition(condition) -> _Curve:
    if not isinstance(condition, str) or condition not in _CURVES:
        raise ConfigError(
            f"unknown toy condition {condition!r}; choose one of {', '.join(TOY_CONDITIONS)}."
        )
    return _CURVES[condition]


def toy_curve(condition: str) -> Callable[[np.ndarray], np.ndarray]:
    """Return the calibration curve ``m(z) = P(Y = 1 | Z = z)`` of a toy condition.

    Parameters
    ----------
    condition : {"calibrated", "shifted", "nonlinear"}
        Which curve of Section 6.1.

    Returns
    -------
    callable
        Vectorised ``m``: array-like of shape (...) in [0, 1] -> float64 array of the same shape.

    Examples
    --------
    >>> m = toy_curve("shifted")
    >>> float(m(0.5)) < 0.5
    True
    """
    return _check_condition(condition).func


def toy_score(x):
    """The toy predictor ``f(x) = sigmoid(0.3 - x)``.

    Parameters
    ----------
    x : array-like of shape (...)
        Inputs.

    Returns
    -------
    numpy.ndarray of shape (...)
        Scores in (0, 1).

    Examples
    --------
    >>> float(toy_score(0.3))
    0.5
    """
    return special.expit(TOY_INTERCEPT - np.asarray(x, dtype=np.float64))


def _score_to_x(z):
    """Inverse of :func:`toy_score`; ``z = 0`` maps to ``+inf`` and ``z = 1`` to ``-inf``."""
    with np.errstate(divide="ignore"):
        return TOY_INTERCEPT - special.logit(np.asarray(z, dtype=np.float64))


def _mixture_pdf(x):
    return (
        0.5 * sum(np.exp(-0.5 * (x - mean) ** 2) for mean in _MIXTURE_MEANS) / np.sqrt(2.0 * np.pi)
    )


def _sign_changes(diff: Callable[[np.ndarray], np.ndarray]) -> list[float]:
    """Points where ``diff(z)`` changes sign, scanned on a logit grid and refined.

    A root that falls exactly on a grid point (``z = 1/2`` for the nonlinear curve) shows up
    as a run of zeros between nonzero values; the ends of every such run are returned.
    """
    t = np.linspace(-30.0, 30.0, 6001)
    d = diff(special.expit(t))
    nonzero = np.flatnonzero(d != 0)
    roots: list[float] = []
    for left, right in zip(nonzero[:-1], nonzero[1:]):
        if right > left + 1:
            roots.extend({float(t[left + 1]), float(t[right - 1])})
        elif np.sign(d[left]) != np.sign(d[right]):
            root = optimize.brentq(
                lambda s: float(diff(special.expit(s))), t[left], t[right], xtol=1e-14, rtol=1e-15
            )
            roots.append(root)
    return [float(special.expit(root)) for root in roots]


def _x_breakpoints(curve: _Curve) -> np.ndarray:
    """Points in ``x`` where the integrand of the population error is not smooth."""
    kinks = list(curve.kinks())
    crossings = _sign_changes(lambda z: curve.func(z) - z)
    return np.unique(_score_to_x(np.asarray(kinks + crossings, dtype=np.float64)))


def _integral(func, lo: float, hi: float, breaks: np.ndarray) -> float:
    """Integrate ``func(x) * pdf(x)`` over ``[lo, hi]`` (limits may be infinite), split at
    ``breaks``."""
    inner = breaks[(breaks > lo) & (breaks < hi)]
    points = np.concatenate([[lo], inner, [hi]])
    total = 0.0
    for left, right in zip(points[:-1], points[1:]):
        value, _ = integrate.quad(
            lambda x: func(x) * _mixture_pdf(x),
            left,
            right,
            epsabs=_EPSABS,
            epsrel=_EPSREL,
            limit=_LIMIT,
        )
        total += value
    return total


def _residual(curve: _Curve):
    def residual(x):
        z = special.expit(TOY_INTERCEPT - x)
        return float(curve.func(z) - z)

    return residual


def toy_population_ece(condition: str) -> float:
    """Exact population calibration error ``E|m(Z) - Z|`` of a toy condition.

    Parameters
    ----------
    condition : {"calibrated", "shifted", "nonlinear"}
        Which curve of Section 6.1.

    Returns
    -------
    float
        ``ECE(f)``; accurate to about ``1e-12`` (adaptive quadrature over ``x``, split at
        the kinks of the clipped curve and where ``m(z) - z`` changes sign).

    Examples
    --------
    >>> round(toy_population_ece("shifted"), 11)
    0.08962637465
    """
    curve = _check_condition(condition)
    residual = _residual(curve)
    return _integral(lambda x: abs(residual(x)), -np.inf, np.inf, _x_breakpoints(curve))


def _check_edges(edges) -> np.ndarray:
    """Return bin edges on [0, 1] from a bin count or explicit edges, or raise ConfigError."""
    what = "edges must be a number of bins or increasing edges from 0 to 1"
    if np.ndim(edges) == 0:
        try:
            count = int(edges)
        except (TypeError, ValueError):
            raise ConfigError(f"{what}, got {edges!r}.") from None
        if isinstance(edges, bool) or count != edges or count < 1:
            raise ConfigError(f"number of bins must be a positive int, got {edges!r}.")
        return np.linspace(0.0, 1.0, count + 1)
    try:
        arr = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}, got {edges!r}.") from None
    if arr.ndim != 1 or arr.size < 2:
        raise ConfigError(
            f"edges must be a 1-D array with at least two entries, got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ConfigError("edges contain NaN or infinite values.")
    if arr[0] != 0.0 or arr[-1] != 1.0:
        first, last = float(arr[0]), float(arr[-1])
        raise ConfigError(f"edges must start at 0 and end at 1, got {first!r} ... {last!r}.")
    steps = np.flatnonzero(np.diff(arr) <= 0)
    if steps.size:
        i = int(steps[0])
        raise ConfigError(
            f"edges must be strictly increasing; edges[{i}] = {float(arr[i])!r} "
            f">= edges[{i + 1}] = {float(arr[i + 1])!r}."
        )
    return arr


def toy_population_bin_moments(condition: str, edges=10) -> np.ndarray:
    """Signed population bin moments ``E[(m(Z) - Z) 1(Z in B_l)]`` of a toy condition.

    Parameters
    ----------
    condition : {"calibrated", "shifted", "nonlinear"}
        Which curve of Section 6.1.
    edges : int or array-like of shape (n_bins + 1,), default 10
        Number of equal-width bins on [0, 1], or increasing edges starting at 0 and ending
        at 1. Bin ``l`` is ``[edges[l], edges[l + 1])`` (boundaries have probability zero).

    Returns
    -------
    numpy.ndarray of shape (n_bins,)
        Signed moments; they sum to ``E[m(Z) - Z]``.

    Examples
    --------
    >>> toy_population_bin_moments("calibrated", 4)
    array([0., 0., 0., 0.])
    """
    curve = _check_condition(condition)
    x_edges = _score_to_x(_check_edges(edges))
    breaks = _x_breakpoints(curve)
    residual = _residual(curve)
    # z increases as x decreases, so bin l spans x in (x_edges[l + 1], x_edges[l]).
    return np.array(
        [_integral(residual, hi_x, lo_x, breaks) for lo_x, hi_x in zip(x_edges[:-1], x_edges[1:])],
        dtype=np.float64,
    )


def toy_population_binned_ece(condition: str, edges=10) -> float:
    """Binned population calibration error ``sum_l |E[(m(Z) - Z) 1(Z in B_l)]|``.

    Parameters
    ----------
    condition : {"calibrated", "shifted", "nonlinear"}
        Which curve of Section 6.1.
    edges : int or array-like of shape (n_bins + 1,), default 10
        Number of equal-width bins, or increasing edges from 0 to 1.

    Returns
    -------
    float
        ``ECE_B(f)``; never larger than :func:`toy_population_ece` (Jensen).

    Examples
    --------
    >>> toy_population_binned_ece("shifted", 10) <= toy_population_ece("shifted")
    True
    """
    return float(np.abs(toy_population_bin_moments(condition, edges)).sum())


def simulate_toy(
    n: int,
    condition: str = "calibrated",
    *,
    random_state,
    fp=TOY_FP,
    fn=TOY_FN,
    missing=0.0,
    annotators=None,
):
    """Simulate the toy study of Section 6.1.

    Parameters
    ----------
    n : int
        Number of items.
    condition : {"calibrated", "shifted", "nonlinear"}, default "calibrated"
        Calibration curve ``m`` used to draw ``Y | Z``.
    random_state : int, numpy.random.Generator or None
        Source of randomness (keyword-only and required).
    fp : array-like of shape (n_annotators,), default (0.08, 0.13, 0.18)
        False-positive rates ``a_j``.
    fn : array-like of shape (n_annotators,), default (0.16, 0.11, 0.06)
        False-negative rates; ``b_j = 1 - fn_j``.
    missing : float or array-like of shape (n_annotators,), default 0.0
        Probability that an answer is missing, independent of ``Y``.
    annotators : sequence of str, optional
        Annotator names; default ``"a1" .. "aK"``.

    Returns
    -------
    bayescal.data.container.Annotations
        Scores ``Z``, noisy labels and the clean ``truth``. ``toy_curve(condition)(data.score)``
        gives ``m(Z)`` for oracle references.

    Notes
    -----
    Draw order from the generator: mixture component, Gaussian noise, ``Y``, annotations, then
    missingness (only if some rate is positive).

    Examples
    --------
    >>> data = simulate_toy(1000, "shifted", random_state=0)
    >>> data.n_items, data.n_annotators
    (1000, 3)
    """
    n = check_n_items(n)
    curve = _check_condition(condition)
    a = check_rates(fp, "fp")
    b = 1.0 - check_rates(fn, "fn", size=a.size)
    rng = check_random_state(random_state)

    x = np.where(rng.random(n) < 0.5, _MIXTURE_MEANS[0], _MIXTURE_MEANS[1])
    x += rng.standard_normal(n)
    z = toy_score(x)
    del x
    y = rng.random(n) < curve.func(z)
    return simulate_flip_data(z, y, a, b, random_state=rng, missing=missing, annotators=annotators)
