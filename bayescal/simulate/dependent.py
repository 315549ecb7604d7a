"""Conditionally dependent annotators with known truth: the toy study (Sec. 6.1) and
multiclass items (one latent item difficulty per dependence group in both).

**Binary** (:func:`simulate_dependent`). Scores and clean labels are those of
:func:`bayescal.simulate.simulate_toy`. Within
each dependence group every item draws one latent difficulty ``u ~ N(0, 1)``, and
annotator ``j`` of the group answers 1 with probability
``Phi(c_jy + s_jy u)``, ``c_jy = Phi^{-1}(p_jy) sqrt(1 + s_jy^2)`` (Qu, Tan &
Kutner 1996; :mod:`bayescal.bayes.dependence`), so its *marginal* channels stay
``a_j = p_j0``, ``b_j = p_j1`` while the answers of a group are positively
dependent given ``Y``. The population calibration error does not involve the
annotators, so the truth an interval must cover is the toy's exact binned ECE
(:func:`~bayescal.simulate.toy_population_binned_ece`), as in ``bench coverage``.

**Multiclass** (:func:`simulate_multiclass_dependent`). Items, scores and clean classes are
those of :func:`bayescal.simulate.multiclass.simulate_multiclass` (a
:class:`~bayescal.simulate.multiclass.MulticlassPopulation` of profiles). Annotator ``j``
of a group, true class ``y``, is correct with probability ``Phi(c_jy + s_jy u)``,
``c_jy = Phi^{-1}(T_j[y, y]) sqrt(1 + s_jy^2)``, and otherwise names a wrong class ``a``
with probability ``T_j[y, a] / (1 - T_j[y, y])``
(:mod:`bayescal.bayes.dependence`). The *marginal* confusions stay ``T_j``;
the correctness of a group's answers is positively dependent given ``Y``. The
population's exact calibration errors (:meth:`MulticlassPopulation.binned_ece`) do not
involve the annotators, so they are the truth an interval must cover.

Both draw the group difficulties with :func:`_group_difficulties` and name the latent
within-class correlations with :func:`_latent_correlations`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.simulate._checks import (
    check_loading_groups,
    check_missing,
    check_n_items,
    check_rates,
)
from bayescal.simulate.multiclass import MulticlassPopulation, multiclass_population
from bayescal.simulate.toy import (
    TOY_FN,
    TOY_FP,
    toy_curve,
    toy_population_binned_ece,
    toy_score,
)

__all__ = [
    "DependentTruth",
    "simulate_dependent",
    "MulticlassDependentTruth",
    "simulate_multiclass_dependent",
]


def _group_difficulties(rng: np.random.Generator, n: int, k: int, groups: list) -> np.ndarray:
    """(n, K) latent difficulties: one ``N(0, 1)`` draw per item and group, 0 outside groups."""
    u = np.zeros((n, k))
    for g in groups:
        u[:, list(g)] = rng.standard_normal(n)[:, None]
    return u


def _latent_correlations(s: np.ndarray, groups: list, names) -> dict[str, tuple[float, ...]]:
    """``{"j~m": (rho_y per class)}``, ``rho = s_j s_m / sqrt((1 + s_j^2)(1 + s_m^2))`` for
    every pair of a group; ``s`` is (K, classes)."""
    corr = {}
    for g in groups:
        for i, j in enumerate(g):
            for m in g[i + 1 :]:
                rho = s[j] * s[m] / np.sqrt((1 + s[j] ** 2) * (1 + s[m] ** 2))
                corr[f"{names[j]}~{names[m]}"] = tuple(float(r) for r in rho)
    return corr


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
    u = _group_difficulties(rng, n, k, groups)
    labels = (rng.random((n, k)) < ndtr(c + sy * u)).astype(np.float32)
    if np.any(miss > 0):
        labels[rng.random((n, k)) < miss] = np.nan
    data = Annotations.from_arrays(z, labels, truth=y.astype(np.int8), annotators=annotators)
    corr = _latent_correlations(s, groups, data.annotators)
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


@dataclass(frozen=True)
class MulticlassDependentTruth:
    """What generated a :func:`simulate_multiclass_dependent` data set.

    ``confusion`` (K, C, C): marginal confusions; ``loading`` (K, C): ``s_jy``
    (zero outside every group); ``groups``: tuples of annotator indices sharing ``u``;
    ``correlation``: latent within-class correlation per pair ``"j~k"`` and class;
    ``population``: the population (its ``binned_ece()`` is the truth).
    """

    confusion: np.ndarray
    loading: np.ndarray
    groups: list
    correlation: dict
    population: MulticlassPopulation


def simulate_multiclass_dependent(
    n: int,
    *,
    random_state,
    loading=1.0,
    groups="all",
    population: MulticlassPopulation | None = None,
    **population_options,
) -> tuple[Annotations, MulticlassDependentTruth]:
    """Simulate multiclass items whose grouped annotators share a latent item difficulty.

    Parameters
    ----------
    n : int
        Number of items.
    random_state : int, numpy.random.Generator or None
        Randomness of the items (keyword-only and required; the population has its own).
    loading : float or array-like of shape (K, C), default 1.0
        ``s_jy >= 0``; zero gives :func:`~bayescal.simulate.multiclass.simulate_multiclass`'s
        independent annotators (same draws of the classes).
    groups : "all" or sequence of sequences of annotator indices, default "all"
        Disjoint groups sharing one latent difficulty per item.
    population : MulticlassPopulation, optional
        Default :func:`~bayescal.simulate.multiclass.multiclass_population` with
        ``population_options`` (``classes``, ``confusions``, ``n_annotators``, ``missing``, ...).

    Returns
    -------
    (Annotations, MulticlassDependentTruth)

    Examples
    --------
    >>> data, truth = simulate_multiclass_dependent(
    ...     2000, loading=1.5, groups=[(0, 1)], n_annotators=4, random_state=0)
    >>> data.n_items, truth.groups, round(truth.correlation["a1~a2"][0], 3)
    (2000, [(0, 1)], 0.692)
    """
    n = check_n_items(n)
    if population is None:
        population = multiclass_population(**population_options)
    elif population_options:
        raise ConfigError("pass either population= or the options that build one, not both.")
    pop = population
    c, k = pop.n_classes, pop.n_annotators
    s, groups = check_loading_groups(loading, groups, k, c)
    rng = check_random_state(random_state)
    joint = (pop.profile_weights[:, None] * pop.profile_truth).ravel()
    cell = rng.choice(joint.size, size=n, p=joint / joint.sum())
    profile, y = cell // c, cell % c
    t = pop.confusion
    u = _group_difficulties(rng, n, k, groups)
    diag = np.einsum("jyy->jy", t)  # (K, C)
    sy = s[:, y].T  # (n, K)
    p_correct = ndtr(ndtri(diag[:, y].T) * np.sqrt(1.0 + sy**2) + sy * u)
    correct = rng.random((n, k)) < p_correct
    # a wrong answer: the off-diagonal row renormalised
    off = np.where(np.eye(c, dtype=bool)[None], 0.0, t)
    cum = np.cumsum(off / off.sum(axis=2, keepdims=True), axis=2)
    cum[:, :, -1] = 1.0
    draw = rng.random((n, k))
    labels = np.empty((n, k), dtype=np.float32)
    for j in range(k):
        wrong = np.minimum((draw[:, j, None] >= cum[j, y]).sum(axis=1), c - 1)
        labels[:, j] = np.where(correct[:, j], y, wrong)
    gone = rng.random((n, k)) < pop.missing
    labels[gone] = np.nan
    data = Annotations.from_arrays(
        pop.profile_probs[profile], labels, truth=y, annotators=pop.annotators, classes=pop.classes
    )
    corr = _latent_correlations(s, groups, pop.annotators)
    truth = MulticlassDependentTruth(
        confusion=t, loading=s, groups=groups, correlation=corr, population=pop
    )
    return data, truth
