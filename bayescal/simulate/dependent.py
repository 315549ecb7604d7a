"""The toy study (Sec. 6.1) with conditionally dependent annotators and known truth.

Scores and clean labels are those of :func:`bayescal.simulate.simulate_toy`. Within
each dependence group every item draws one latent difficulty ``u ~ N(0, 1)``, and
annotator ``j`` of the group answers 1 with probability
``Phi(c_jy + s_jy u)``, ``c_jy = Phi^{-1}(p_jy) sqrt(1 + s_jy^2)`` (Qu, Tan &
Kutner 1996; :mod:`bayescal.bayes.dependence`), so its *marginal* channels stay
``a_j = p_j0``, ``b_j = p_j1`` while the answers of a group are positively
dependent given ``Y``. The population calibration error does not involve the
annotators, so the truth an interval must cover is the toy's exact binned ECE
(:func:`~bayescal.simulate.toy_population_binned_ece`), as in ``bench coverage``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.simulate._checks import (
    check_loading_groups,
    check_missing,
    check_n_items,
    check_rates,
)
from bayescal.simulate.toy import (
    TOY_FN,
    TOY_FP,
    toy_curve,
    toy_population_binned_ece,
    toy_score,
)

__all__ = ["DependentTruth", "simulate_dependent"]


@dataclass(frozen=True)
class DependentTruth:
    """What generated a :func:`simulate_dependent` data set.

    ``a``, ``b`` (K,): marginal channels; ``loading`` (K, 2): ``s_jy`` (zero for
    annotators in no group); ``groups``: tuples of annotator indices sharing ``u``;
    ``correlation``: latent within-class correlation per pair ``"j~k"`` and class;
    ``population_binned_ece``: the exact binned ECE with ``bin_edges``.
    """

    a: np.ndarray
    b: np.ndarray
    loading: np.ndarray
    groups: list
    correlation: dict
    condition: str
    population_binned_ece: float
    bin_edges: np.ndarray


def simulate_dependent(
    n: int,
    condition: str = "shifted",
    *,
    random_state,
    loading=1.0,
    groups="all",
    fp=TOY_FP,
    fn=TOY_FN,
    missing=0.0,
    bin_edges=10,
    annotators=None,
) -> tuple[Annotations, DependentTruth]:
    """Simulate the toy study with conditionally dependent annotators.

    Parameters
    ----------
    n : int
        Number of items.
    condition : {"calibrated", "shifted", "nonlinear"}, default "shifted"
    random_state : int, numpy.random.Generator or None
        Source of randomness (keyword-only and required).
    loading : float or array-like of shape (K, 2), default 1.0
        ``s_jy >= 0`` (one value for every annotator and class, or per annotator
        and class). Zero gives the independence model.
    groups : "all" or sequence of sequences of annotator indices, default "all"
        Annotators sharing one latent difficulty (disjoint).
    fp, fn : array-like of shape (K,)
        Marginal false-positive and false-negative rates (``b = 1 - fn``).
    missing : float or array-like of shape (K,), default 0.0
        Probability that an answer is missing, independent of everything else.
    bin_edges : int or array-like, default 10
        Bins of the population binned ECE in the truth.
    annotators : sequence of str, optional

    Returns
    -------
    (Annotations, DependentTruth)

    Examples
    --------
    >>> data, truth = simulate_dependent(2000, loading=1.5, random_state=0)
    >>> data.n_items, truth.groups, round(truth.correlation["a1~a2"][0], 3)
    (2000, [(0, 1, 2)], 0.692)
    """
    n = check_n_items(n)
    a = check_rates(fp, "fp")
    b = 1.0 - check_rates(fn, "fn", size=a.size)
    k = a.size
    miss = check_missing(missing, k)
    s, groups = check_loading_groups(loading, groups, k, 2)
    curve = toy_curve(condition)
    rng = check_random_state(random_state)
    x = np.where(rng.random(n) < 0.5, -1.0, 1.0) + rng.standard_normal(n)
    z = toy_score(x)
    y = rng.random(n) < curve(z)
    p = np.where(y[:, None], b, a)  # (n, K) marginal probability of answering 1
    sy = np.where(y[:, None], s[:, 1], s[:, 0])
    c = ndtri(p) * np.sqrt(1.0 + sy**2)
    u = np.zeros((n, k))
    for g in groups:
        u[:, list(g)] = rng.standard_normal(n)[:, None]
    labels = (rng.random((n, k)) < ndtr(c + sy * u)).astype(np.float32)
    if np.any(miss > 0):
        labels[rng.random((n, k)) < miss] = np.nan
    data = Annotations.from_arrays(z, labels, truth=y.astype(np.int8), annotators=annotators)
    corr = {}
    for g in groups:
        for i, j in enumerate(g):
            for m in g[i + 1 :]:
                name = f"{data.annotators[j]}~{data.annotators[m]}"
                corr[name] = tuple(
                    float(s[j, y_] * s[m, y_] / np.sqrt((1 + s[j, y_] ** 2) * (1 + s[m, y_] ** 2)))
                    for y_ in (0, 1)
                )
    edges = np.linspace(0, 1, bin_edges + 1) if np.ndim(bin_edges) == 0 else np.asarray(bin_edges)
    truth = DependentTruth(
        a=a,
        b=b,
        loading=s,
        groups=groups,
        correlation=corr,
        condition=condition,
        population_binned_ece=toy_population_binned_ece(condition, edges),
        bin_edges=edges,
    )
    return data, truth
