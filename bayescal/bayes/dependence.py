"""Conditional dependence between annotators: a latent "hard item" random effect per group.

One module for every number of classes C: the C-class model (``models/dependence.md``,
"Multiclass"; section "C classes" below) is the one model, and the binary functions
(:func:`class_pattern_logp`, :func:`pattern_logp_dependent`, ...) are its two-class view
on channels ``a``, ``b`` (the confusion ``[[1 - a, a], [1 - b, b]]``): at C = 2 coupling
the correctness of the answers is coupling ``A = 1`` with the shared difficulty's sign
flipped for class 0, and ``u ~ N(0, 1)`` (and the rule's nodes) are symmetric, so the
pattern probabilities agree to rounding (``tests/knowledge/test_dependence_two_classes.py``).
What stays binary-only is the binary parametrisation kept for its model card: the PyMC
model on ``ab`` (Beta channels, ordered logit, designated annotator,
:func:`build_pymc_dependence_model`) and the subset-moment identification count
(:func:`check_identified`).

Model, two classes (Qu, Tan & Kutner 1996, Biometrics 52, Eq. 2; probit random effects)
-----------------------------------------------------------------------------------
Annotators are partitioned into *dependence groups*. Within a group, each item
carries one latent difficulty ``u ~ N(0, 1)`` shared by the group's annotators,
independent of everything else given the class ``Y``:

    P(A_j = 1 | Y = y, u) = Phi(c_jy + s_jy u),   c_jy = Phi^{-1}(p_jy) sqrt(1 + s_jy^2),

with ``p_j0 = a_j`` and ``p_j1 = b_j``. Integrating ``u`` out gives
``P(A_j = 1 | Y = y) = Phi(c_jy / sqrt(1 + s_jy^2)) = p_jy``: the *marginal*
channels stay ``a_j``, ``b_j``, so NC-ECE (linear in the marginal channels,
Hanada & Futami, Eq. 7) consumes the draws unchanged. ``s_jy >= 0`` is the
loading; two annotators ``j, k`` of one group have latent within-class correlation
``s_jy s_ky / sqrt((1 + s_jy^2)(1 + s_ky^2))`` (positive dependence only: shared
blind spots, not anti-correlated errors). Groups are independent given ``Y``:

    P(s | y) = prod_groups [ int prod_{j in group, answered} P(s_j | y, u) dphi(u) ]
               * prod_{ungrouped j, answered} P(s_j | y),

and a missing answer contributes no factor (exact marginalisation, so pattern
probabilities sum to one within each missingness mask). The class is summed out
as in the independence model (:mod:`bayescal.bayes.models`), on the same
pattern counts, gold tables, orientation and priors of ``a``, ``b`` and the
prevalence; ``s = 0`` is exactly the independence model.

Dependence spec: ``"all"`` (one group of every annotator) or pairs
``"r1:r2,r3:r4"``. Overlapping pairs are merged into one group (connected
components: ``"r1:r2,r2:r3"`` puts r1, r2, r3 on one shared ``u``), which is
reported in the result (``dependence_groups``).

Integral over ``u``
-------------------
A fixed trapezoid rule on ``[-HALF_WIDTH, HALF_WIDTH]`` with Gaussian weights
(normalised to sum to one). For integrands analytic in a strip, the trapezoid rule
converges geometrically; it does much better than Gauss-Hermite here because
``Phi(c + s u)`` is step-like for large ``s``: measured against a 200 000-node
reference, Gauss-Hermite with 160 nodes errs by 2.6e-7 in log P at ``s = 3`` while
this rule with 120 nodes errs by < 1e-14 on every cell of probability >= 1e-12
(:func:`quadrature_error`, tested at the prior's 99.9% quantile of the loading).

Prior of the loadings
---------------------
``s_jy ~ HalfNormal(LOADING_SIGMA)`` with ``LOADING_SIGMA = 1``: the mode at 0 (no
dependence) keeps the independence model inside the prior; half the mass is on
latent correlations below 0.31 for two equal loadings, and the 99.9% quantile
(s = 3.29, correlation 0.92) is still inside the range where the quadrature is exact.

C classes (Qu, Tan & Kutner 1996, probit random effects, on the correctness of each
answer; Dawid & Skene 1979 for the rest)
-----------------------------------------------------------------------------------
Annotators are partitioned into dependence groups (:func:`parse_dependence`). Per
item, each group draws one difficulty ``u ~ N(0, 1)``, independent of ``Y`` and of
the other groups. Annotator ``j`` of a group, true class ``y``, answers

    P(A_j = y | y, u)      = Phi(c_jy + s_jy u),  c_jy = Phi^{-1}(T_j[y, y]) sqrt(1 + s_jy^2),
    P(A_j = a | y, u)      = (1 - Phi(c_jy + s_jy u)) T_j[y, a] / (1 - T_j[y, y]),  a != y,

independently given ``(Y, u)``. By the probit-normal identity
``E_u Phi(c + s u) = Phi(c / sqrt(1 + s^2))``, ``P(A_j = a | Y = y) = T_j[y, a]``
for every ``a``: **the confusion matrices stay the marginal channels** the
multiclass NC-ECE consumes (corrected one-hot targets, SPEC §3), and ``s = 0`` is
the independence model (:mod:`bayescal.bayes.multiclass`) exactly. ``s_jy >= 0``
couples the *correctness* of the group's answers (a hard item is hard for all of
them); which wrong class a wrong answer names is drawn independently from the
annotator's off-diagonal row. So the model does not describe copying of a
particular wrong answer (two annotators agreeing on the same wrong class more
often than their rows imply); the pair-agreement check
(:func:`bayescal.bayes.diagnostics.pattern_ppc`) is where that would show.

Given ``y`` the pattern likelihood factorises over groups; within a group the
integral over ``u`` depends only on which members answered correctly, wrongly or
not at all, so

    P(s | y) = prod_G [ I_G(y, sub_G(s, y)) prod_{j in G, s_j != y answered} T_j[y, s_j] /
               (1 - T_j[y, y]) ] prod_{ungrouped j answered} T_j[y, s_j],
    I_G(y, v) = int phi(u) prod_{j in G, v_j != missing} Phi(+-(c_jy + s_jy u)) du,

with the same trapezoid rule (:func:`quadrature`, ``N_NODES`` nodes; its error is
measured above). The class is summed out with the
prevalence of the item's channel group, on the multiclass summary's observed
pattern counts; gold items enter at their known class, as in the independence model.

Priors: those of :func:`~bayescal.bayes.multiclass.build_multiclass_pymc_model`
(Dirichlet rows, reference-log-ratio transform, joint prior from an earlier audit)
on a spec with no cells, plus ``loading[dependent_annotator, class] ~
HalfNormal(LOADING_SIGMA)``, the two-class prior (reasons above).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Generic, TypeVar

import numpy as np
from scipy import stats
from scipy.special import ndtr, ndtri

from bayescal.bayes.models import (
    BuiltModel,
    ChannelModelSpec,
    build_pymc_model,
    multinomial_constant,
    sample_counts_from_logp,
)
from bayescal.bayes.multiclass import (
    MulticlassModelSpec,
    build_multiclass_pymc_model,
)
from bayescal.errors import ConfigError, IdentificationError

__all__ = [
    "LOADING_SIGMA",
    "N_NODES",
    "HALF_WIDTH",
    "DependenceSpec",
    "parse_dependence",
    "make_dependence_spec",
    "quadrature",
    "quadrature_error",
    "multiclass_class_pattern_logp",
    "multiclass_pattern_logp_dependent",
    "class_pattern_logp",
    "pattern_logp_dependent",
    "group_loglik_dependent",
    "implied_correlation",
    "pair_labels",
    "check_identified",
    "check_multiclass_identified",
    "build_pymc_dependence_model",
    "build_pymc_multiclass_dependence_model",
    "sample_counts_dependent",
    "sample_multiclass_counts_dependent",
    "sample_loadings_prior",
    "MulticlassDependenceSpec",
    "make_multiclass_dependence_spec",
    "multiclass_implied_correlation",
]

#: scale of the HalfNormal prior of every loading s_jy (see the module docstring)
LOADING_SIGMA = 1.0
#: trapezoid nodes on [-HALF_WIDTH, HALF_WIDTH] (error < 1e-10 in log P up to s = 3.3, measured)
N_NODES = 120
HALF_WIDTH = 9.0
CLASS = "class"
LOADED = "dependent_annotator"

#: the independence model's spec the dependence model sits on: two classes (``a``, ``b``)
#: or C classes (confusion matrices)
SpecT = TypeVar("SpecT", ChannelModelSpec, MulticlassModelSpec)


def quadrature(n_nodes: int = N_NODES, half_width: float = HALF_WIDTH):
    """Nodes and weights of ``int f(u) phi(u) du``: trapezoid rule with Gaussian weights.

    Returns
    -------
    (nodes, weights) : ndarrays of shape (n_nodes,)
        Weights are ``phi(u) h`` renormalised to sum to one, so that ``f = 1`` is
        integrated exactly (the ``s = 0`` reduction is then exact up to rounding).

    Examples
    --------
    >>> u, w = quadrature(120)
    >>> round(float(w.sum()), 12), round(float((w * u**2).sum()), 12)
    (1.0, 1.0)
    """
    if int(n_nodes) != n_nodes or n_nodes < 3 or n_nodes % 2 == 1:
        raise ConfigError(f"n_nodes must be an even integer >= 4; got {n_nodes!r}.")
    u = np.linspace(-half_width, half_width, int(n_nodes))
    w = stats.norm.pdf(u)
    return u, w / w.sum()


@dataclasses.dataclass
class DependenceSpec(Generic[SpecT]):
    """An independence model's spec plus the dependence groups, the loadings' prior and rule.

    ``base`` is the two-class :class:`~bayescal.bayes.models.ChannelModelSpec` or the
    C-class :class:`~bayescal.bayes.multiclass.MulticlassModelSpec`; ``groups`` lists
    the dependence groups as tuples of annotator indices (at least two each);
    ``loaded`` the indices of annotators in some group, in annotator order (the
    loadings' ``dependent_annotator`` dimension), with one loading per true class each.
    """

    base: SpecT
    groups: list[tuple[int, ...]]
    sigma: float = LOADING_SIGMA
    n_nodes: int = N_NODES

    def __post_init__(self) -> None:
        self.nodes, self.weights = quadrature(self.n_nodes)
        self.loaded = np.array(sorted(j for g in self.groups for j in g), dtype=np.int64)

    @property
    def annotators(self) -> list:
        return self.base.annotators

    @property
    def n_classes(self) -> int:
        """Classes carrying one loading each (C; 2 on the binary spec)."""
        return self.base.n_classes

    @property
    def n_loadings(self) -> int:
        return self.n_classes * self.loaded.size

    @property
    def group_names(self) -> list[list[str]]:
        return [[self.base.annotators[j] for j in g] for g in self.groups]

    def with_counts(self, counts) -> DependenceSpec[SpecT]:
        """The same model on other pattern counts over the same patterns (SBC, bench)."""
        return DependenceSpec(self.base.with_counts(counts), self.groups, self.sigma, self.n_nodes)

    def loadings_full(self, loading) -> np.ndarray:
        """Loadings (..., n_loaded, C) placed in a (..., K, C) array (zeros: ungrouped)."""
        loading = np.asarray(loading, dtype=np.float64)
        out = np.zeros((*loading.shape[:-2], self.base.n_annotators, self.n_classes))
        out[..., self.loaded, :] = loading
        return out


#: the v0.2 name of the C-class dependence spec: the one spec
MulticlassDependenceSpec = DependenceSpec


def parse_dependence(dependence, annotators) -> list[tuple[int, ...]]:
    """Dependence groups from ``"all"``, ``"r1:r2,r3:r4"`` or a list of pairs.

    Overlapping pairs are merged (connected components). Unknown or duplicate
    annotators in a pair, self-pairs and repeated pairs raise ``ConfigError``.

    Examples
    --------
    >>> parse_dependence("a1:a2,a2:a3", ["a1", "a2", "a3", "a4"])
    [(0, 1, 2)]
    >>> parse_dependence("all", ["a1", "a2", "a3"])
    [(0, 1, 2)]
    """
    names = list(annotators)
    if isinstance(dependence, str) and dependence.strip() == "all":
        if len(names) < 2:
            raise ConfigError("dependence='all' needs at least two annotators.")
        return [tuple(range(len(names)))]
    if isinstance(dependence, str):
        items = [p.strip() for p in dependence.split(",")]
        pairs = []
        for item in items:
            parts = [x.strip() for x in item.split(":")]
            if len(parts) != 2 or not all(parts):
                raise ConfigError(
                    f"dependence pair {item!r} is not of the form 'r1:r2'; write pairs as "
                    "'r1:r2,r3:r4' or use 'all'."
                )
            pairs.append(tuple(parts))
    else:
        pairs = [tuple(p) for p in dependence]
    if not pairs:
        raise ConfigError("dependence names no pair; write 'r1:r2,...' or 'all'.")
    seen = set()
    parent = list(range(len(names)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for pair in pairs:
        if len(pair) != 2:
            raise ConfigError(f"dependence pair {pair!r} must name exactly two annotators.")
        unknown = [p for p in pair if p not in names]
        if unknown:
            raise ConfigError(
                f"dependence names unknown annotator(s) {unknown}; annotators are {names}."
            )
        if pair[0] == pair[1]:
            raise ConfigError(
                f"dependence pair {pair[0]}:{pair[1]} pairs an annotator with itself; name two "
                "different annotators."
            )
        key = frozenset(pair)
        if key in seen:
            raise ConfigError(f"dependence pair {pair[0]}:{pair[1]} is given twice; list it once.")
        seen.add(key)
        i, j = root(names.index(pair[0])), root(names.index(pair[1]))
        parent[max(i, j)] = min(i, j)
    comps: dict = {}
    for i in range(len(names)):
        comps.setdefault(root(i), []).append(i)
    return sorted(tuple(c) for c in comps.values() if len(c) > 1)


def make_dependence_spec(
    base: SpecT, dependence, *, sigma: float = LOADING_SIGMA, n_nodes: int = N_NODES
) -> DependenceSpec[SpecT]:
    """The dependence model on the cells, orientation and priors of ``base`` (any C).

    ``dependence``: ``"all"``, ``"r1:r2,r3:r4"`` or a list of pairs
    (:func:`parse_dependence`: overlapping pairs merged by connected components).
    """
    if not (np.isfinite(sigma) and sigma > 0):
        raise ConfigError(f"sigma (the loadings' HalfNormal scale) must be > 0; got {sigma!r}.")
    return DependenceSpec(
        base, parse_dependence(dependence, base.annotators), float(sigma), n_nodes
    )


#: the v0.2 name: :func:`make_dependence_spec` on a C-class spec
make_multiclass_dependence_spec = make_dependence_spec


# --------------------------------------------------------------------------- numpy reference
def _status(states, members, n_classes):
    """Per pattern, class and member: 1 correct, 0 wrong, 2 missing; shape (P, C, r)."""
    st = states[:, members][:, None, :]  # (P, 1, r)
    y = np.arange(n_classes)[None, :, None]
    return np.where(st == n_classes, 2, np.where(st == y, 1, 0))


def _wrong_table(t, s_full, grouped):
    """Emission log-factors ``E[..., j, y, a]`` (a = C: missing, 0): ``log T_j[y, a]`` for
    ungrouped ``j``; for grouped ``j`` ``log T_j[y, a] - log(1 - T_j[y, y])`` off the
    diagonal and 0 on it (the integral carries the correct answers)."""
    c = t.shape[-1]
    logt = np.log(t)
    diag = np.diagonal(t, axis1=-2, axis2=-1)  # (..., K, C)
    wrong = logt - np.log1p(-diag)[..., :, None]
    eye = np.eye(c, dtype=bool)
    table = np.where(grouped[:, None, None], np.where(eye, 0.0, wrong), logt)
    return np.concatenate([table, np.zeros((*t.shape[:-1], 1))], axis=-1)


def multiclass_class_pattern_logp(
    dspec: DependenceSpec, confusion, loading, *, chunk: int = 50
) -> np.ndarray:
    """``log P(s | Y = y)`` of the C-class model for every kept pattern and class: (..., P, C).

    Parameters
    ----------
    confusion : array-like of shape (..., K, C, C)
        Marginal confusion matrices.
    loading : array-like of shape (..., n_loaded, C)
    chunk : int, default 50
        Draws evaluated at once (memory ``chunk x P x C x N_NODES`` floats).
    """
    t = np.asarray(confusion, dtype=np.float64)
    s = np.asarray(loading, dtype=np.float64)
    lead = t.shape[:-3]
    if lead:
        k, c = t.shape[-3], t.shape[-1]
        ft = t.reshape(-1, k, c, c)
        fs = s.reshape(ft.shape[0], dspec.loaded.size, c)
        parts = [
            _class_pattern_logp(dspec, ft[i : i + chunk], fs[i : i + chunk])
            for i in range(0, ft.shape[0], chunk)
        ]
        return np.concatenate(parts, axis=0).reshape(*lead, *parts[0].shape[1:])
    return _class_pattern_logp(dspec, t, s)


def _class_pattern_logp(dspec, t, s):
    spec = dspec.base
    states = spec.states
    c = spec.n_classes
    k = spec.n_annotators
    s_full = dspec.loadings_full(s)
    grouped = np.zeros(k, dtype=bool)
    grouped[dspec.loaded] = True
    table = _wrong_table(t, s_full, grouped)  # (..., K, C, C+1)
    out = np.zeros((*t.shape[:-3], states.shape[0], c))
    for j in range(k):
        out += np.moveaxis(np.take(table[..., j, :, :], states[:, j], axis=-1), -1, -2)
    diag = np.diagonal(t, axis1=-2, axis2=-1)
    cc = ndtri(diag) * np.sqrt(1.0 + s_full**2)  # (..., K, C)
    u, w = dspec.nodes, dspec.weights
    for group in dspec.groups:
        status = _status(states, list(group), c)  # (P, C, r)
        prod = np.ones((*t.shape[:-3], states.shape[0], c, u.size))
        for i, j in enumerate(group):
            z = cc[..., j, :, None] + s_full[..., j, :, None] * u  # (..., C, Q)
            f1, f0 = ndtr(z)[..., None, :, :], ndtr(-z)[..., None, :, :]
            st = status[:, :, i][..., None]  # (P, C, 1)
            prod = prod * np.where(st == 1, f1, np.where(st == 0, f0, 1.0))
        out += np.log(prod @ w)
    return out


def multiclass_pattern_logp_dependent(
    dspec: DependenceSpec, confusion, prevalence, loading
) -> np.ndarray:
    """``log P(s | g)`` with the class summed out: shape (..., L, P)."""
    lpc = multiclass_class_pattern_logp(dspec, confusion, loading)  # (..., P, C)
    logrho = np.log(np.asarray(prevalence, dtype=np.float64))[..., dspec.base.prevalence_index, :]
    joint = logrho[..., :, None, :] + lpc[..., None, :, :]
    top = joint.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(joint - top).sum(axis=-1, keepdims=True)))[..., 0]


def _two_class(a, b) -> np.ndarray:
    """Confusion matrices (..., K, 2, 2) ``[[1 - a, a], [1 - b, b]]`` of channels ``a``, ``b``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return np.stack([np.stack([1.0 - a, a], axis=-1), np.stack([1.0 - b, b], axis=-1)], axis=-2)


def class_pattern_logp(dspec: DependenceSpec, a, b, loading, *, chunk: int = 100) -> np.ndarray:
    """``log P(s | Y = y)`` of the two-class model for both classes and every kept pattern:
    shape (..., 2, P); :func:`multiclass_class_pattern_logp` at C = 2 (module docstring).

    Parameters
    ----------
    a, b : array-like of shape (..., K)
        Marginal channels.
    loading : array-like of shape (..., n_loaded, 2)
        Loadings ``s_jy`` of the grouped annotators (class 0, class 1).
    chunk : int, default 100
        Parameter draws evaluated at once (memory: ``chunk x 2 x P x N_NODES`` floats).
    """
    lpc = multiclass_class_pattern_logp(dspec, _two_class(a, b), loading, chunk=chunk)
    return np.swapaxes(lpc, -1, -2)


def pattern_logp_dependent(dspec: DependenceSpec, a, b, prevalence, loading) -> np.ndarray:
    """``log p_g(s)`` of the two-class model with the class summed out: shape (..., L, P)."""
    mu = np.asarray(prevalence, dtype=np.float64)
    prev = np.stack([1.0 - mu, mu], axis=-1)
    return multiclass_pattern_logp_dependent(dspec, _two_class(a, b), prev, loading)


def group_loglik_dependent(dspec: DependenceSpec, a, b, prevalence, loading) -> np.ndarray:
    """Multinomial log-likelihood of each group's counts, shape (..., L) (unknown items)."""
    spec = dspec.base
    lp = pattern_logp_dependent(dspec, a, b, prevalence, loading)
    return (spec.counts * lp).sum(axis=-1) + multinomial_constant(spec.counts, spec.mask_id)


def pair_labels(dspec: DependenceSpec) -> list[str]:
    """``"j~k"`` labels of every pair inside a group (the ``pair`` coordinate)."""
    return [
        f"{dspec.annotators[j]}~{dspec.annotators[k]}"
        for group in dspec.groups
        for j, k in itertools.combinations(group, 2)
    ]


def implied_correlation(dspec: DependenceSpec, loading) -> tuple[np.ndarray, list[str]]:
    """Latent within-class correlations of every pair inside a group: ``(rho, labels)`` with
    ``rho`` of shape (..., n_pairs, C) and ``labels`` the pairs ``"j~k"``.

    ``rho_jk,y = s_jy s_ky / sqrt((1 + s_jy^2)(1 + s_ky^2))`` (Qu, Tan & Kutner 1996): the
    correlation of the two latent probit variables whose signs decide the answers.
    """
    s = dspec.loadings_full(loading)
    pairs = [(j, k) for group in dspec.groups for j, k in itertools.combinations(group, 2)]
    rho = np.stack(
        [
            s[..., j, :] * s[..., k, :] / np.sqrt((1 + s[..., j, :] ** 2) * (1 + s[..., k, :] ** 2))
            for j, k in pairs
        ],
        axis=-2,
    )
    return rho, pair_labels(dspec)


#: the v0.2 name of :func:`implied_correlation`
multiclass_implied_correlation = implied_correlation


def quadrature_error(loading: float, n_nodes: int = N_NODES, *, reference_nodes: int = 40_000):
    """Worst absolute error of ``log P(s | y)`` of the rule against a dense reference.

    Three annotators in one group, all loadings equal to ``loading``, channels
    ``p in {0.01, 0.05, ..., 0.99}``; cells with probability below 1e-12 are
    skipped (no data set has them). Used to choose :data:`N_NODES`.
    """
    ref_u, ref_w = quadrature(reference_nodes, HALF_WIDTH + 3)
    u, w = quadrature(n_nodes)
    worst = 0.0
    for p in ((0.05, 0.1, 0.2), (0.9, 0.95, 0.8), (0.01, 0.99, 0.5), (0.2, 0.3, 0.7)):
        c = ndtri(np.array(p)) * np.sqrt(1 + loading**2)
        for st in itertools.product((0, 1), repeat=3):
            vals = []
            for nodes, weights in ((ref_u, ref_w), (u, w)):
                z = c[:, None] + loading * nodes
                f = np.where(np.array(st)[:, None] == 1, ndtr(z), ndtr(-z)).prod(axis=0)
                vals.append(float(f @ weights))
            if vals[0] >= 1e-12:
                worst = max(worst, abs(np.log(vals[1]) - np.log(vals[0])))
    return worst


# --------------------------------------------------------------------------- identification
def _moment_count(mask_codes) -> int:
    """Number of nonempty answer subsets inside some observed mask (the identified moments)."""
    subsets = set()
    for m in mask_codes:
        sub = int(m)
        while sub:
            subsets.add(sub)
            sub = (sub - 1) & int(m)
    return len(subsets)


def check_identified(dspec: DependenceSpec) -> dict:
    """Refuse designs whose data have fewer identified moments than the model has parameters.

    A group's answer distribution is fixed by the moments ``E[prod_{j in S} A_j]`` of
    the answer subsets ``S`` observed together (inside some missingness mask); the
    score groups are independent samples and gold items of a class add that class's
    moments. The model has ``2 K`` channels, one prevalence per non-empty
    prevalence group and ``2`` loadings per grouped annotator. Fewer moments than
    parameters leaves no degree of freedom: raise :class:`IdentificationError`.

    Returns
    -------
    dict
        ``moments``, ``parameters`` and ``degrees_of_freedom``.
    """
    spec = dspec.base
    k = spec.n_annotators
    codes = (spec.states != 2).astype(np.int64) @ (1 << np.arange(k))
    moments = sum(_moment_count(codes[row > 0]) for row in spec.counts)
    moments += sum(_moment_count(codes[row > 0]) for row in spec.gold)
    used_prev = np.unique(spec.prevalence_index[spec.group_counts > 0]).size
    params = 2 * k + used_prev + dspec.n_loadings
    if params > moments:
        raise IdentificationError(
            f"the dependence model with groups {dspec.group_names} has {params} parameters "
            f"(2 x {k} channels, {used_prev} prevalence(s), {dspec.n_loadings} loadings) but the "
            f"data identify only {moments} answer moments (per score group, the answer subsets "
            "observed together). Use more score groups (model='grouped', groups=...), fewer "
            "dependent pairs instead of 'all', more annotators, or gold items."
        )
    return {"moments": moments, "parameters": params, "degrees_of_freedom": moments - params}


def check_multiclass_identified(dspec: DependenceSpec[MulticlassModelSpec]) -> dict:
    """Refuse designs with fewer observed-pattern degrees of freedom than parameters.

    Per channel group and missingness mask the pattern counts carry
    ``(number of possible patterns of the mask) - 1`` free probabilities, at most
    the number of items in that cell; gold items add the same per known class. The
    model has ``K C (C - 1)`` confusion entries, ``C - 1`` per used prevalence row and
    ``C`` loadings per grouped annotator. Fewer degrees of freedom than parameters
    raise :class:`IdentificationError` (necessary, not sufficient).
    """
    spec = dspec.base
    c, k = spec.n_classes, spec.n_annotators
    answered = spec.states < c
    code = answered.astype(np.int64) @ (1 << np.arange(k, dtype=np.int64))

    def dof(counts):
        total = 0
        for row in np.atleast_2d(counts):
            for m in np.unique(code[row > 0]):
                n_items = int(row[code == m].sum())
                total += min(c ** int(bin(int(m)).count("1")) - 1, n_items)
        return total

    moments = dof(spec.counts) + dof(spec.gold)
    used_prev = np.unique(spec.prevalence_index[spec.group_counts > 0]).size
    params = k * c * (c - 1) + used_prev * (c - 1) + dspec.n_loadings
    if params > moments:
        raise IdentificationError(
            f"the multiclass dependence model with groups {dspec.group_names} has {params} "
            f"parameters ({k} x {c} x {c - 1} confusion entries, {used_prev} prevalence rows, "
            f"{dspec.n_loadings} loadings) but the pattern counts have only {moments} degrees "
            "of freedom. Use more channel groups, fewer dependent pairs instead of 'all', more "
            "annotators, or gold items."
        )
    return {"moments": moments, "parameters": params, "degrees_of_freedom": moments - params}


# --------------------------------------------------------------------------- PyMC reference
def _pytensor_class_loglik(dspec: DependenceSpec, t, s):
    """``log P(s | Y = y)`` of every kept pattern and class, (P, C), in PyTensor (the
    module docstring's C-class formula): confusions ``t`` (K, C, C), loadings ``s`` (K, C)
    with zeros for ungrouped annotators. Both PyMC models use it (C = 2: ``t`` from ``a``,
    ``b``)."""
    import pytensor.tensor as pt

    spec = dspec.base
    k, c = spec.n_annotators, dspec.n_classes
    states = spec.states
    u, w = dspec.nodes, dspec.weights
    grouped = np.zeros(k, dtype=bool)
    grouped[dspec.loaded] = True
    diag = pt.stack([t[:, y, y] for y in range(c)], axis=1)  # (K, C)
    cc = -np.sqrt(2.0) * pt.erfcinv(2.0 * diag) * pt.sqrt(1.0 + s**2)
    logt = pt.log(t)
    eye = np.eye(c, dtype=bool)
    cols = []
    for j in range(k):
        if grouped[j]:
            tab = pt.switch(eye, 0.0, logt[j] - pt.log1p(-diag[j])[:, None])
        else:
            tab = logt[j]
        cols.append(pt.concatenate([tab, pt.zeros((c, 1))], axis=1))  # (C, C+1)
    ll = sum(cols[j][:, states[:, j]].T for j in range(k))  # (P, C)
    for group in dspec.groups:
        status = _status(states, list(group), c)  # (P, C, r)
        prod = pt.ones((states.shape[0], c, u.size))
        for i, j in enumerate(group):
            z = cc[j][:, None] + s[j][:, None] * u  # (C, Q)
            f1 = 0.5 * pt.erfc(-z / np.sqrt(2.0))
            f0 = 0.5 * pt.erfc(z / np.sqrt(2.0))
            st = status[:, :, i][:, :, None]
            prod = prod * pt.switch(pt.eq(st, 1), f1[None], pt.switch(pt.eq(st, 0), f0[None], 1.0))
        ll = ll + pt.log(pt.dot(prod, w))
    return ll


def build_pymc_dependence_model(dspec: DependenceSpec):
    """The PyMC model of the dependence model (the reference backend).

    The priors of ``ab``, ``prevalence`` (and a joint prior when given) are those of
    :func:`bayescal.bayes.models.build_pymc_model`, built here on a spec with no
    cells; ``loading`` (dims ``dependent_annotator`` x ``class``, HalfNormal(sigma),
    log transform) and the pattern-count likelihood of the module docstring are
    added as one ``pm.Potential`` (multinomial constants dropped, as there).
    """
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    spec = dspec.base
    built = build_pymc_model(_prior_only(spec))
    model = built.model
    counts = pytensor.shared(spec.counts.astype(np.float64), name="pattern_counts")
    model.add_coord(LOADED, [spec.annotators[j] for j in dspec.loaded])
    model.add_coord(CLASS, ["0", "1"])
    with model:
        loading = pm.HalfNormal("loading", sigma=dspec.sigma, dims=(LOADED, CLASS))
        a, b = model["a"], model["b"]
        t = pt.stack([pt.stack([1.0 - a, a], axis=-1), pt.stack([1.0 - b, b], axis=-1)], axis=1)
        s = pt.set_subtensor(pt.zeros((spec.n_annotators, 2))[dspec.loaded], loading)
        ll = _pytensor_class_loglik(dspec, t, s)  # (P, 2)
        lr = [ll[:, 0], ll[:, 1]]
        mu = model["prevalence"][spec.prevalence_index]
        lp = pt.logaddexp(
            pt.log1p(-mu)[:, None] + lr[0][None, :], pt.log(mu)[:, None] + lr[1][None, :]
        )
        pm.Potential("dependence_loglik", (counts * lp).sum())
        if spec.gold.sum() > 0:
            gold = spec.gold.astype(np.float64)
            pm.Potential(
                "dependence_gold_loglik", (gold[0] * lr[0]).sum() + (gold[1] * lr[1]).sum()
            )
    return BuiltModel(model=model, counts=counts, spec=spec)


def _prior_only(spec: ChannelModelSpec) -> ChannelModelSpec:
    """``spec`` with no cells: its model/density is the prior of ``a``, ``b``, prevalence."""
    k, n_groups = spec.n_annotators, spec.counts.shape[0]
    return ChannelModelSpec(
        **{
            **spec.__dict__,
            "patterns": np.zeros(0, dtype=object),
            "states": np.zeros((0, k), dtype=np.int64),
            "counts": np.zeros((n_groups, 0), dtype=np.int64),
            "mask_id": np.zeros(0, dtype=np.int64),
            "mask_total": np.zeros((n_groups, 0), dtype=np.int64),
            "gold": np.zeros((2, 0), dtype=np.int64),
        }
    )


def _multiclass_prior_only(spec: MulticlassModelSpec) -> MulticlassModelSpec:
    """``spec`` with no items: its PyMC model is the prior of the confusions and prevalences."""
    return dataclasses.replace(
        spec, counts=np.zeros_like(spec.counts), gold=np.zeros_like(spec.gold)
    )


def build_pymc_multiclass_dependence_model(dspec: DependenceSpec[MulticlassModelSpec]):
    """The PyMC model of the multiclass dependence model (the reference backend).

    The independence model's PyMC model built on a spec without items supplies the
    priors (:func:`~bayescal.bayes.multiclass.build_multiclass_pymc_model`: not
    forked); ``loading`` (``dependent_annotator`` x ``class``, HalfNormal(sigma),
    log transform) and the likelihood of the module docstring are added as
    Potentials (multinomial constants dropped, as there).
    """
    import pymc as pm
    import pytensor.tensor as pt

    spec = dspec.base
    built = build_multiclass_pymc_model(_multiclass_prior_only(spec))
    model = built.model
    k, c = spec.n_annotators, spec.n_classes
    model.add_coord(LOADED, [spec.annotators[j] for j in dspec.loaded])
    with model:
        loading = pm.HalfNormal("loading", sigma=dspec.sigma, dims=(LOADED, "class"))
        t = model["confusion"]
        s = pt.set_subtensor(pt.zeros((k, c))[dspec.loaded], loading)
        ll = _pytensor_class_loglik(dspec, t, s)  # (P, C)
        g_idx, s_idx = np.nonzero(spec.counts)
        n = spec.counts[g_idx, s_idx].astype(np.float64)
        logrho = pt.log(model["prevalence"])[spec.prevalence_index[g_idx]]
        joint = logrho + ll[s_idx]
        pm.Potential("dependence_loglik", (n * pm.math.logsumexp(joint, axis=1)).sum())
        if spec.has_gold:
            gold = np.asarray(spec.gold)  # (C, P), set by the spec
            gy, gs = np.nonzero(gold)
            pm.Potential(
                "dependence_gold_loglik", (gold[gy, gs].astype(np.float64) * ll[gs, gy]).sum()
            )
    return dataclasses.replace(built, spec=spec)


# --------------------------------------------------------------------------- forward sampling
def sample_loadings_prior(dspec: DependenceSpec, draws: int, rng) -> np.ndarray:
    """Loadings (draws, n_loaded, C) from their HalfNormal(sigma) prior (any C)."""
    size = (draws, dspec.loaded.size, dspec.n_classes)
    return np.abs(rng.normal(0.0, dspec.sigma, size=size))


def sample_counts_dependent(dspec: DependenceSpec, a, b, prevalence, loading, rng) -> np.ndarray:
    """Replicated pattern counts (S, L, P) under the dependence model, observed mask totals."""
    lp = pattern_logp_dependent(dspec, a, b, prevalence, loading)
    return sample_counts_from_logp(dspec.base, lp, rng)


def sample_multiclass_counts_dependent(
    dspec: DependenceSpec[MulticlassModelSpec], confusion, prevalence, loading, rng
) -> np.ndarray:
    """Replicated pattern counts (S, L, P) under the model, with the observed per-mask totals
    of every channel group (the posterior predictive of the pattern-count check)."""
    spec = dspec.base
    lp = multiclass_pattern_logp_dependent(dspec, confusion, prevalence, loading)
    lp = lp.reshape(-1, *lp.shape[-2:])
    c, k = spec.n_classes, spec.n_annotators
    code = (spec.states < c).astype(np.int64) @ (1 << np.arange(k, dtype=np.int64))
    out = np.zeros((lp.shape[0], *spec.counts.shape), dtype=np.int64)
    for m in np.unique(code):
        cols = np.flatnonzero(code == m)
        totals = spec.counts[:, cols].sum(axis=1)
        for g in np.flatnonzero(totals):
            p = np.exp(lp[:, g, cols])
            p = p / p.sum(axis=1, keepdims=True)  # patterns kept: the observed ones
            out[:, g, cols] = rng.multinomial(totals[g], p)
    return out
