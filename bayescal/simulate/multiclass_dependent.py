"""Multiclass items with conditionally dependent annotators and known truth.

Items, scores and clean classes are those of
:func:`bayescal.simulate.multiclass.simulate_multiclass` (a
:class:`~bayescal.simulate.multiclass.MulticlassPopulation` of profiles). Within
each dependence group every item draws one difficulty ``u ~ N(0, 1)``; annotator
``j`` of the group, true class ``y``, is correct with probability
``Phi(c_jy + s_jy u)``, ``c_jy = Phi^{-1}(T_j[y, y]) sqrt(1 + s_jy^2)``, and
otherwise names a wrong class ``a`` with probability ``T_j[y, a] / (1 - T_j[y, y])``
(:mod:`bayescal.bayes.dependence`). The *marginal* confusions stay
``T_j``; the correctness of a group's answers is positively dependent given ``Y``.
The population's exact calibration errors (:meth:`MulticlassPopulation.binned_ece`)
do not involve the annotators, so they are the truth an interval must cover.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.simulate._checks import check_loading_groups, check_n_items
from bayescal.simulate.multiclass import MulticlassPopulation, multiclass_population

__all__ = ["MulticlassDependentTruth", "simulate_multiclass_dependent"]


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
    u = np.zeros((n, k))
    for g in groups:
        u[:, list(g)] = rng.standard_normal(n)[:, None]
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
    corr = {}
    for g in groups:
        for i, j in enumerate(g):
            for m in g[i + 1 :]:
                rho = s[j] * s[m] / np.sqrt((1 + s[j] ** 2) * (1 + s[m] ** 2))
                corr[f"{pop.annotators[j]}~{pop.annotators[m]}"] = tuple(float(r) for r in rho)
    truth = MulticlassDependentTruth(
        confusion=t, loading=s, groups=groups, correlation=corr, population=pop
    )
    return data, truth
