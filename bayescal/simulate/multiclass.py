"""Multiclass items with noisy annotators, with exact population quantities (SPEC §3).

A population is a finite set of *profiles* ``t``, each with a weight ``w_t``, the
model's class probabilities ``p_t`` and the true class distribution
``m_t = P(Y | profile)``; annotator ``j`` answers through its confusion matrix
``T_j[y, a] = P(A_j = a | Y = y)`` and leaves an answer missing with
probability ``r_j``, independently of everything else. Because the profiles are
finite, every population quantity is an exact finite sum:

- pattern probabilities ``P(s | group) = sum_y rho[g, y] prod_j f_j(s_j | y)`` with
  ``f_j(a | y) = (1 - r_j) T_j[y, a]`` and ``f_j(missing | y) = r_j``;
- class prevalences per channel group ``rho[g, y]``;
- binned top-label and class-wise calibration moments
  ``D_m = sum_t w_t (m_t[c_t] - p_t[c_t]) 1(p_t[c_t] in B_m)`` (and per class ``k``
  with ``p_t[k]``), whose absolute sums are the population binned ECEs that
  NC-ECE estimates.

The default profiles draw a base class ``b_t`` (uniform, or ``prevalence``),
logits ``z_t = separation * e_{b_t} + N(0, I)``, and set ``m_t = softmax(z_t)``
(the truth) and ``p_t = softmax(temperature * z_t)`` (the model): temperature 1
is calibrated, above 1 over-confident, below 1 under-confident.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.simulate._checks import check_missing, check_n_items
from bayescal.simulate.toy import _check_edges

#: Largest pattern table enumerated exactly (as summaries.patterns.MAX_DENSE_CELLS).
MAX_EXACT_CELLS = 2**20

__all__ = [
    "MulticlassPopulation",
    "multiclass_population",
    "simulate_multiclass",
    "default_confusions",
    "simulate_subgroups",
    "subgroup_truth",
]


def _cell(x, edges):
    """Cell ``[e_l, e_{l+1})`` of each value, the last closed (the summaries' convention)."""
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)


def default_confusions(n_annotators: int, n_classes: int, *, random_state=0) -> np.ndarray:
    """Diagonally dominant confusion matrices for simulations.

    Annotator ``j`` answers correctly with probability ``acc_j ~ U[0.6, 0.9]``
    (the same for every class) and spreads ``1 - acc_j`` over the other classes
    with ``Dirichlet(2, ..., 2)`` weights per row, so every off-diagonal entry is
    below 0.4 < ``acc_j``.

    Parameters
    ----------
    n_annotators, n_classes : int
    random_state : None, int or Generator, default 0

    Returns
    -------
    ndarray of shape (n_annotators, n_classes, n_classes)

    Examples
    --------
    >>> t = default_confusions(3, 4, random_state=0)
    >>> t.shape, bool(np.allclose(t.sum(-1), 1))
    ((3, 4, 4), True)
    """
    k = check_n_items(n_annotators)
    c = check_n_items(n_classes)
    if c < 2:
        raise ConfigError(f"n_classes must be at least 2; got {c}.")
    rng = check_random_state(random_state)
    out = np.empty((k, c, c))
    for j in range(k):
        acc = rng.uniform(0.6, 0.9)
        for y in range(c):
            off = rng.dirichlet(np.full(c - 1, 2.0)) * (1.0 - acc)
            out[j, y] = np.insert(off, y, acc)
    return out


def _check_confusions(confusions, n_classes=None) -> np.ndarray:
    t = np.asarray(confusions, dtype=np.float64)
    if t.ndim != 3 or t.shape[1] != t.shape[2]:
        raise ConfigError(
            f"confusions must have shape (n_annotators, C, C); got {np.shape(confusions)}."
        )
    if n_classes is not None and t.shape[1] != n_classes:
        raise ConfigError(f"confusions are for {t.shape[1]} classes but classes gives {n_classes}.")
    if not np.all(np.isfinite(t)) or t.min() < 0 or t.max() > 1:
        raise ConfigError("confusions must hold probabilities in [0, 1].")
    dev = np.abs(t.sum(axis=2) - 1.0)
    if dev.max() > 1e-9:
        j, y = np.unravel_index(int(np.argmax(dev)), dev.shape)
        raise ConfigError(
            f"confusion rows must sum to one; annotator {j}, true class {y} sums to "
            f"{t[j, y].sum():.12g}."
        )
    return t


def _class_names(classes):
    if isinstance(classes, (int, np.integer)) and not isinstance(classes, bool):
        if classes < 2:
            raise ConfigError(f"classes must be at least 2; got {classes}.")
        return [str(y) for y in range(int(classes))]
    names = [str(x) for x in classes]
    if len(names) < 2 or len(set(names)) != len(names):
        raise ConfigError(
            f"classes must be an int >= 2 or at least two unique names; got {classes!r}."
        )
    return names


@dataclass(frozen=True, eq=False)
class MulticlassPopulation:
    """A finite population of profiles with exact pattern and calibration quantities.

    Attributes
    ----------
    profile_probs : ndarray of shape (T, C)
        The model's class probabilities per profile.
    profile_truth : ndarray of shape (T, C)
        ``P(Y = y | profile)``.
    profile_weights : ndarray of shape (T,)
        Profile probabilities (sum to one).
    confusion : ndarray of shape (K, C, C)
    missing : ndarray of shape (K,)
    classes, annotators : list of str
    """

    profile_probs: np.ndarray
    profile_truth: np.ndarray
    profile_weights: np.ndarray
    confusion: np.ndarray
    missing: np.ndarray
    classes: list
    annotators: list

    @property
    def n_classes(self) -> int:
        return int(self.profile_probs.shape[1])

    @property
    def n_annotators(self) -> int:
        return int(self.confusion.shape[0])

    @property
    def prevalence(self) -> np.ndarray:
        """Overall ``P(Y = y)``, shape (C,)."""
        return self.profile_weights @ self.profile_truth

    def _group_index(self, groups):
        p = self.profile_probs
        if groups in (None, "predicted"):
            return p.argmax(axis=1), self.n_classes
        if groups == "all":
            return np.zeros(p.shape[0], dtype=np.int64), 1
        if isinstance(groups, str):
            raise ConfigError(
                f"groups must be 'predicted', 'all', an int or edges; got {groups!r}."
            )
        edges = _check_edges(groups)
        return _cell(p.max(axis=1), edges), edges.size - 1

    def class_prevalence(self, groups="predicted"):
        """Exact ``rho[g, y] = P(Y = y | group g)`` and group probabilities ``W_g``.

        Parameters
        ----------
        groups : "predicted", "all", int or edges
            As in :func:`bayescal.summaries.summary.summarize`.

        Returns
        -------
        rho : ndarray of shape (L, C); rows of empty groups are NaN
        weight : ndarray of shape (L,)
        """
        g, n_groups = self._group_index(groups)
        weight = np.bincount(g, weights=self.profile_weights, minlength=n_groups)
        num = np.zeros((n_groups, self.n_classes))
        np.add.at(num, g, self.profile_weights[:, None] * self.profile_truth)
        with np.errstate(invalid="ignore", divide="ignore"):
            return num / weight[:, None], weight

    def pattern_probabilities(self):
        """Exact ``P(s | Y = y)`` over all ``(C+1)**K`` patterns (missing = state C).

        Returns
        -------
        states : ndarray of shape ((C+1)**K, K), in the canonical code order
        probs : ndarray of shape (C, (C+1)**K); each row sums to one
        """
        c, k = self.n_classes, self.n_annotators
        cells = (c + 1) ** k
        if cells > MAX_EXACT_CELLS:
            raise ConfigError(
                f"{cells:,} pattern cells exceed MAX_EXACT_CELLS = {MAX_EXACT_CELLS:,}; exact "
                "pattern probabilities are for small C and K."
            )
        code = np.arange(cells)
        states = np.stack([(code // (c + 1) ** j) % (c + 1) for j in range(k)], axis=1)
        probs = np.ones((c, cells))
        for j in range(k):
            f = np.hstack(
                [(1 - self.missing[j]) * self.confusion[j], np.full((c, 1), self.missing[j])]
            )
            probs *= f[:, states[:, j]]
        return states.astype(np.int16), probs

    def expected_pattern_counts(self, n_items: float, groups="predicted"):
        """Exact expected counts of annotated items per group and pattern.

        Parameters
        ----------
        n_items : float
            Number of items (annotated or not).
        groups : "predicted", "all", int or edges

        Returns
        -------
        states : ndarray of shape (P, K)
            Every pattern with at least one answer, canonical order.
        counts : ndarray of shape (L, P), float
        """
        states, py = self.pattern_probabilities()
        rho, weight = self.class_prevalence(groups)
        rho = np.nan_to_num(rho)  # empty groups carry zero weight
        counts = n_items * weight[:, None] * (rho @ py)
        annotated = (states != self.n_classes).any(axis=1)
        return states[annotated], counts[:, annotated]

    def binned_moments(self, bins=10):
        """Exact signed population moments per bin (SPEC §3).

        Returns
        -------
        top : ndarray of shape (M,)
            ``sum_t w_t (m_t[c_t] - p_t[c_t]) 1(p_t[c_t] in B_m)``, bins on ``max p``.
        classwise : ndarray of shape (C, M)
            ``sum_t w_t (m_t[k] - p_t[k]) 1(p_t[k] in B_m)``, bins on ``p_k``.
        """
        edges = _check_edges(bins)
        m = edges.size - 1
        p, q, w = self.profile_probs, self.profile_truth, self.profile_weights
        c_t = p.argmax(axis=1)
        rows = np.arange(p.shape[0])
        top = np.bincount(
            _cell(p[rows, c_t], edges), weights=w * (q[rows, c_t] - p[rows, c_t]), minlength=m
        )
        cw = np.stack(
            [
                np.bincount(_cell(p[:, k], edges), weights=w * (q[:, k] - p[:, k]), minlength=m)
                for k in range(self.n_classes)
            ]
        )
        return top, cw

    def binned_ece(self, bins=10) -> dict:
        """Exact population binned top-label and class-wise ECE (mean over classes).

        Examples
        --------
        >>> pop = multiclass_population(3, temperature=1.0)
        >>> pop.binned_ece()["top_label"] < 1e-12  # calibrated: m_t = p_t
        True
        """
        top, cw = self.binned_moments(bins)
        return {"top_label": float(np.abs(top).sum()), "classwise": float(np.abs(cw).sum(1).mean())}


def multiclass_population(
    classes=3,
    confusions=None,
    *,
    n_annotators: int = 3,
    n_profiles: int = 400,
    temperature: float = 1.5,
    separation: float = 2.0,
    prevalence=None,
    missing=0.0,
    annotators=None,
    random_state=0,
) -> MulticlassPopulation:
    """Build the default population of profiles (see the module docstring).

    Parameters
    ----------
    classes : int or sequence of str, default 3
        Number of classes or their names.
    confusions : array-like of shape (K, C, C), optional
        Default :func:`default_confusions` for ``n_annotators`` annotators.
    n_annotators : int, default 3
        Used only without ``confusions``.
    n_profiles : int, default 400
    temperature : float, default 1.5
        Model probabilities ``softmax(temperature * z)``; 1 is calibrated.
    separation : float, default 2.0
        Logit boost of each profile's base class.
    prevalence : array-like of shape (C,), optional
        Distribution of the base classes; default uniform.
    missing : float or array-like of shape (K,), default 0.0
        Probability that each annotator's answer is missing.
    annotators : sequence of str, optional
    random_state : None, int or Generator, default 0
        Randomness of the profiles and default confusions (fixed by default, so
        the same arguments give the same population).

    Returns
    -------
    MulticlassPopulation

    Examples
    --------
    >>> pop = multiclass_population(4, temperature=2.0, random_state=1)
    >>> pop.profile_probs.shape, round(float(pop.profile_weights.sum()), 12)
    ((400, 4), 1.0)
    """
    names = _class_names(classes)
    c = len(names)
    rng = check_random_state(random_state)
    t = (
        default_confusions(n_annotators, c, random_state=rng)
        if confusions is None
        else _check_confusions(confusions, c)
    )
    k = t.shape[0]
    n_prof = check_n_items(n_profiles)
    for name, value in (("temperature", temperature), ("separation", separation)):
        if not (np.isfinite(value) and value > 0):
            raise ConfigError(f"{name} must be a positive number; got {value!r}.")
    base_p = np.full(c, 1.0 / c) if prevalence is None else np.asarray(prevalence, np.float64)
    if base_p.shape != (c,) or np.any(base_p < 0) or abs(base_p.sum() - 1) > 1e-9:
        raise ConfigError(
            f"prevalence must be {c} probabilities summing to one; got {prevalence!r}."
        )
    base = rng.choice(c, size=n_prof, p=base_p)
    z = rng.normal(size=(n_prof, c))
    z[np.arange(n_prof), base] += separation

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    ann = [f"a{j + 1}" for j in range(k)] if annotators is None else [str(a) for a in annotators]
    if len(ann) != k:
        raise ConfigError(f"{len(ann)} annotator names for {k} confusion matrices.")
    return MulticlassPopulation(
        profile_probs=softmax(temperature * z),
        profile_truth=softmax(z),
        profile_weights=np.full(n_prof, 1.0 / n_prof),
        confusion=t,
        missing=check_missing(missing, k),
        classes=names,
        annotators=ann,
    )


def simulate_multiclass(
    n,
    classes=3,
    confusions=None,
    *,
    population: MulticlassPopulation | None = None,
    random_state=None,
    **population_options,
) -> Annotations:
    """Draw items with noisy multiclass annotations from a population (SPEC §3).

    Each item draws a profile ``t`` (weights ``w_t``) and its class ``Y ~ m_t``;
    its probabilities are ``p_t``; annotator ``j`` answers ``A_j ~ T_j[Y, .]`` or
    leaves the answer missing with probability ``r_j``.

    Parameters
    ----------
    n : int
        Number of items.
    classes : int or sequence of str, default 3
    confusions : array-like of shape (K, C, C), optional
        Default :func:`default_confusions`.
    population : MulticlassPopulation, optional
        Draw from this population (then ``classes``, ``confusions`` and the
        population options must be left at their defaults). Its exact
        quantities (:meth:`MulticlassPopulation.binned_ece`, ...) describe the data.
    random_state : None, int or Generator
        Randomness of the items (the population has its own, fixed, seed).
    **population_options
        Passed to :func:`multiclass_population` (``n_annotators``, ``n_profiles``,
        ``temperature``, ``separation``, ``prevalence``, ``missing``, ``annotators``).

    Returns
    -------
    Annotations
        With ``truth``.

    Examples
    --------
    >>> data = simulate_multiclass(1000, 4, random_state=0)
    >>> data.n_items, data.n_classes, data.n_annotators, data.truth is not None
    (1000, 4, 3, True)
    """
    n = check_n_items(n)
    if population is None:
        population = multiclass_population(classes, confusions, **population_options)
    elif confusions is not None or population_options or classes != 3:
        raise ConfigError(
            "pass either population= or the arguments that build one (classes, confusions, "
            "population options), not both."
        )
    rng = check_random_state(random_state)
    pop = population
    c, k = pop.n_classes, pop.n_annotators
    joint = (pop.profile_weights[:, None] * pop.profile_truth).ravel()
    cell = rng.choice(joint.size, size=n, p=joint / joint.sum())
    profile, y = cell // c, cell % c
    labels = np.empty((n, k), dtype=np.float32)
    cum = np.cumsum(pop.confusion, axis=2)
    cum[:, :, -1] = 1.0  # guard against rounding below 1
    u = rng.random((n, k))
    for j in range(k):
        for cls in range(c):
            rows = np.flatnonzero(y == cls)
            labels[rows, j] = np.searchsorted(cum[j, cls], u[rows, j], side="right")
    gone = rng.random((n, k)) < pop.missing
    labels[gone] = np.nan
    return Annotations.from_arrays(
        pop.profile_probs[profile],
        labels,
        truth=y,
        annotators=pop.annotators,
        classes=pop.classes,
    )


def simulate_subgroups(populations, sizes, *, random_state=None) -> Annotations:
    """Items of several subgroups, each drawn from its own population, with ``group``.

    Parameters
    ----------
    populations : mapping of str -> MulticlassPopulation
        One population per subgroup (same classes and annotators); subgroups may differ
        in calibration (temperature), in channels (confusions), or in both.
    sizes : mapping of str -> int
        Items per subgroup (same keys).
    random_state : None, int or Generator

    Returns
    -------
    Annotations
        With ``truth`` and ``group`` (the subgroup names), subgroups in the given order.

    Examples
    --------
    >>> pops = {"A": multiclass_population(2, temperature=1.0),
    ...         "B": multiclass_population(2, temperature=2.0)}
    >>> d = simulate_subgroups(pops, {"A": 300, "B": 200}, random_state=0)
    >>> d.n_items, sorted(set(d.group))
    (500, ['A', 'B'])
    """
    if set(populations) != set(sizes):
        raise ConfigError(
            f"populations and sizes name different subgroups: {sorted(populations)} vs "
            f"{sorted(sizes)}."
        )
    rng = check_random_state(random_state)
    parts = [
        simulate_multiclass(sizes[g], population=populations[g], random_state=rng) for g in sizes
    ]
    first = parts[0]
    return Annotations.from_arrays(
        np.concatenate([d.probs for d in parts]),
        np.concatenate([d.labels for d in parts]),
        truth=np.concatenate([d.truth for d in parts]),
        annotators=first.annotators,
        classes=first.classes,
        group=np.concatenate([np.full(d.n_items, g, dtype=object) for g, d in zip(sizes, parts)]),
    )


def subgroup_truth(population: MulticlassPopulation, metric: str, bins=10) -> float:
    """The exact population NC-ECE target of :func:`bayescal.metrics.subgroups.subgroup_nc_ece`.

    ``metric``: ``"binary"`` (two classes: the binned ECE on ``p_1``), ``"top_label"``
    or ``"classwise"`` (mean over classes).

    Examples
    --------
    >>> round(subgroup_truth(multiclass_population(3, temperature=1.0), "top_label"), 12)
    0.0
    """
    top, cw = population.binned_moments(bins)
    if metric == "binary":
        if population.n_classes != 2:
            raise ConfigError("metric='binary' needs two classes.")
        return float(np.abs(cw[1]).sum())
    if metric == "top_label":
        return float(np.abs(top).sum())
    if metric == "classwise":
        return float(np.abs(cw).sum(axis=1).mean())
    raise ConfigError(f"metric must be 'binary', 'top_label' or 'classwise'; got {metric!r}.")
