"""Conditional dependence between annotators: a latent "hard item" random effect per group.

Model (Qu, Tan & Kutner 1996, Biometrics 52, Eq. 2; the probit random-effects form)
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
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import log_ndtr, ndtr, ndtri

from bayescal.bayes.models import (
    BuiltModel,
    ChannelModelSpec,
    build_pymc_model,
    multinomial_constant,
    sample_counts_from_logp,
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
    "class_pattern_logp",
    "pattern_logp_dependent",
    "group_loglik_dependent",
    "implied_correlation",
    "check_identified",
    "build_pymc_dependence_model",
    "sample_counts_dependent",
    "sample_loadings_prior",
]

#: scale of the HalfNormal prior of every loading s_jy (see the module docstring)
LOADING_SIGMA = 1.0
#: trapezoid nodes on [-HALF_WIDTH, HALF_WIDTH] (error < 1e-10 in log P up to s = 3.3, measured)
N_NODES = 120
HALF_WIDTH = 9.0
CLASS = "class"
LOADED = "dependent_annotator"


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


@dataclass
class DependenceSpec:
    """A channel model spec plus the dependence groups, the loadings' prior and the rule.

    ``groups`` lists the dependence groups as tuples of annotator indices (at least
    two each); ``loaded`` the indices of annotators in some group, in annotator
    order (the loadings' ``dependent_annotator`` dimension).
    """

    base: ChannelModelSpec
    groups: list
    sigma: float = LOADING_SIGMA
    n_nodes: int = N_NODES

    def __post_init__(self):
        self.nodes, self.weights = quadrature(self.n_nodes)
        self.loaded = np.array(sorted(j for g in self.groups for j in g), dtype=np.int64)

    @property
    def annotators(self) -> list:
        return self.base.annotators

    @property
    def n_classes(self) -> int:
        """Classes carrying one loading each (2 here; the multiclass twin has C)."""
        return 2

    @property
    def n_loadings(self) -> int:
        return self.n_classes * self.loaded.size

    @property
    def group_names(self) -> list[list[str]]:
        return [[self.base.annotators[j] for j in g] for g in self.groups]

    def with_counts(self, counts) -> DependenceSpec:
        """The same design with other pattern counts on the same cells."""
        return DependenceSpec(self.base.with_counts(counts), self.groups, self.sigma, self.n_nodes)

    def loadings_full(self, loading) -> np.ndarray:
        """Loadings (..., n_loaded, C) placed in a (..., K, C) array (zeros: ungrouped)."""
        loading = np.asarray(loading, dtype=np.float64)
        out = np.zeros((*loading.shape[:-2], self.base.n_annotators, self.n_classes))
        out[..., self.loaded, :] = loading
        return out


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
    base: ChannelModelSpec, dependence, *, sigma: float = LOADING_SIGMA, n_nodes: int = N_NODES
) -> DependenceSpec:
    """The dependence model on the cells, orientation and priors of ``base``."""
    if not (np.isfinite(sigma) and sigma > 0):
        raise ConfigError(f"sigma (the loadings' HalfNormal scale) must be > 0; got {sigma!r}.")
    return DependenceSpec(
        base, parse_dependence(dependence, base.annotators), float(sigma), n_nodes
    )


# --------------------------------------------------------------------------- numpy reference
def _probit_parts(a, b, loading_full):
    """``c`` (..., K, 2) and ``s`` (..., K, 2) from the marginal channels and loadings."""
    p = np.stack([np.asarray(a, np.float64), np.asarray(b, np.float64)], axis=-1)
    s = np.asarray(loading_full, dtype=np.float64)
    return ndtri(p) * np.sqrt(1.0 + s**2), s


def class_pattern_logp(dspec: DependenceSpec, a, b, loading, *, chunk: int = 100) -> np.ndarray:
    """``log P(s | Y = y)`` for both classes and every kept pattern: shape (..., 2, P).

    Parameters
    ----------
    a, b : array-like of shape (..., K)
        Marginal channels.
    loading : array-like of shape (..., n_loaded, 2)
        Loadings ``s_jy`` of the grouped annotators (class 0, class 1).
    chunk : int, default 100
        Parameter draws evaluated at once (memory: ``chunk x 2 x P x N_NODES`` floats).
    """
    a = np.asarray(a, dtype=np.float64)
    lead = a.shape[:-1]
    if len(lead) > 0:
        k = a.shape[-1]
        flat_a = a.reshape(-1, k)
        flat_b = np.asarray(b, dtype=np.float64).reshape(-1, k)
        flat_s = np.asarray(loading, dtype=np.float64).reshape(-1, dspec.loaded.size, 2)
        parts = [
            _class_pattern_logp(
                dspec, flat_a[i : i + chunk], flat_b[i : i + chunk], flat_s[i : i + chunk]
            )
            for i in range(0, flat_a.shape[0], chunk)
        ]
        return np.concatenate(parts, axis=0).reshape(*lead, 2, -1)
    return _class_pattern_logp(dspec, a, b, loading)


def _class_pattern_logp(dspec, a, b, loading):
    c, s = _probit_parts(a, b, dspec.loadings_full(loading))
    states = dspec.base.states
    u, w = dspec.nodes, dspec.weights
    out = np.zeros((*c.shape[:-2], 2, states.shape[0]))
    grouped = set(dspec.loaded.tolist())
    for j in range(states.shape[1]):
        if j in grouped:
            continue
        st = states[:, j]
        lp1 = log_ndtr(c[..., j, :])[..., :, None]  # (..., 2, 1)
        lp0 = log_ndtr(-c[..., j, :])[..., :, None]
        out += np.where(st == 1, lp1, np.where(st == 0, lp0, 0.0))
    for group in dspec.groups:
        # (..., 2, P, Q): product over the group's answered members at each node
        prod = np.ones((*c.shape[:-2], 2, states.shape[0], u.size))
        for j in group:
            z = c[..., j, :, None] + s[..., j, :, None] * u  # (..., 2, Q)
            st = states[:, j][:, None]
            f1, f0 = ndtr(z)[..., None, :], ndtr(-z)[..., None, :]
            prod = prod * np.where(st == 1, f1, np.where(st == 0, f0, 1.0))
        out += np.log(prod @ w)
    return out


def pattern_logp_dependent(dspec: DependenceSpec, a, b, prevalence, loading) -> np.ndarray:
    """``log p_g(s)`` with the class summed out: shape (..., L, P)."""
    lr = class_pattern_logp(dspec, a, b, loading)
    mu = np.asarray(prevalence, dtype=np.float64)[..., dspec.base.prevalence_index]
    return np.logaddexp(
        np.log1p(-mu)[..., :, None] + lr[..., 0, None, :],
        np.log(mu)[..., :, None] + lr[..., 1, None, :],
    )


def group_loglik_dependent(dspec: DependenceSpec, a, b, prevalence, loading) -> np.ndarray:
    """Multinomial log-likelihood of each group's counts, shape (..., L) (unknown items)."""
    spec = dspec.base
    lp = pattern_logp_dependent(dspec, a, b, prevalence, loading)
    return (spec.counts * lp).sum(axis=-1) + multinomial_constant(spec.counts, spec.mask_id)


def implied_correlation(dspec: DependenceSpec, loading) -> tuple[np.ndarray, list[str]]:
    """Latent within-class correlations of every pair inside a group: (..., n_pairs, 2).

    ``rho_jk,y = s_jy s_ky / sqrt((1 + s_jy^2)(1 + s_ky^2))`` (Qu, Tan & Kutner 1996).
    """
    s = dspec.loadings_full(loading)
    pairs, labels = [], []
    for group in dspec.groups:
        for j, k in itertools.combinations(group, 2):
            pairs.append((j, k))
            labels.append(f"{dspec.annotators[j]}~{dspec.annotators[k]}")
    rho = np.stack(
        [
            s[..., j, :] * s[..., k, :] / np.sqrt((1 + s[..., j, :] ** 2) * (1 + s[..., k, :] ** 2))
            for j, k in pairs
        ],
        axis=-2,
    )
    return rho, labels


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


# --------------------------------------------------------------------------- PyMC reference
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
    states = spec.states
    u = dspec.nodes
    w = dspec.weights
    with model:
        loading = pm.HalfNormal("loading", sigma=dspec.sigma, dims=(LOADED, CLASS))
        p = pt.stack([model["a"], model["b"]], axis=1)  # (K, 2)
        s = pt.set_subtensor(pt.zeros((spec.n_annotators, 2))[dspec.loaded], loading)
        c = -np.sqrt(2.0) * pt.erfcinv(2.0 * p) * pt.sqrt(1.0 + s**2)
        lr = []
        grouped = set(dspec.loaded.tolist())
        for y in (0, 1):
            total = pt.zeros(states.shape[0])
            for j in range(spec.n_annotators):
                if j in grouped:
                    continue
                py = p[j, y]
                table = pt.stack([pt.log1p(-py), pt.log(py), pt.zeros(())])
                total = total + table[states[:, j]]
            for group in dspec.groups:
                prod = pt.ones((states.shape[0], u.size))
                for j in group:
                    z = c[j, y] + s[j, y] * u
                    f = pt.stack(
                        [0.5 * pt.erfc(z / np.sqrt(2.0)), 0.5 * pt.erfc(-z / np.sqrt(2.0))]
                    )
                    f = pt.concatenate([f, pt.ones((1, u.size))], axis=0)
                    prod = prod * f[states[:, j]]
                total = total + pt.log(pt.dot(prod, w))
            lr.append(total)
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


# --------------------------------------------------------------------------- forward sampling
def sample_loadings_prior(dspec: DependenceSpec, draws: int, rng) -> np.ndarray:
    """Loadings (draws, n_loaded, 2) from their HalfNormal(sigma) prior."""
    return np.abs(rng.normal(0.0, dspec.sigma, size=(draws, dspec.loaded.size, 2)))


def sample_counts_dependent(dspec: DependenceSpec, a, b, prevalence, loading, rng) -> np.ndarray:
    """Replicated pattern counts (S, L, P) under the dependence model, observed mask totals."""
    lp = pattern_logp_dependent(dspec, a, b, prevalence, loading)
    return sample_counts_from_logp(dspec.base, lp, rng)
