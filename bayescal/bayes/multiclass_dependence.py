"""Conditional dependence between annotators, multiclass: a latent "hard item" per group.

The multiclass twin of :mod:`bayescal.bayes.dependence` (``models/dependence.md``,
"Multiclass"). Model (Qu, Tan & Kutner 1996, probit random effects, on the
correctness of each answer; Dawid & Skene 1979 for the rest)
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

with the binary model's trapezoid rule (:func:`bayescal.bayes.dependence.quadrature`,
``N_NODES`` nodes; its error is measured there). The class is summed out with the
prevalence of the item's channel group, on the multiclass summary's observed
pattern counts; gold items enter at their known class, as in the independence model.

Priors: those of :func:`~bayescal.bayes.multiclass.build_multiclass_pymc_model`
(Dirichlet rows, reference-log-ratio transform, joint prior from an earlier audit)
on a spec with no cells, plus ``loading[dependent_annotator, class] ~
HalfNormal(LOADING_SIGMA)``, the binary model's prior (reasons in its module).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from scipy.special import ndtr, ndtri

from bayescal.bayes.dependence import (
    LOADING_SIGMA,
    N_NODES,
    DependenceSpec,
    implied_correlation,
    parse_dependence,
)
from bayescal.bayes.logdensity import MulticlassLogDensity
from bayescal.bayes.multiclass import (
    MulticlassModelSpec,
    build_multiclass_pymc_model,
)
from bayescal.bayes.multiclass_dependence_kernel import likelihood_kernel
from bayescal.errors import ConfigError, IdentificationError

__all__ = [
    "LOADING_SIGMA",
    "N_NODES",
    "MulticlassDependenceSpec",
    "make_multiclass_dependence_spec",
    "multiclass_class_pattern_logp",
    "multiclass_pattern_logp_dependent",
    "multiclass_implied_correlation",
    "check_multiclass_identified",
    "build_pymc_multiclass_dependence_model",
    "MulticlassDependenceLogDensity",
    "sample_multiclass_counts_dependent",
    "pair_labels",
]

LOADED = "dependent_annotator"
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class MulticlassDependenceSpec(DependenceSpec):
    """A multiclass model spec plus dependence groups, the loadings' prior and the rule.

    The binary :class:`~bayescal.bayes.dependence.DependenceSpec` on a
    :class:`~bayescal.bayes.multiclass.MulticlassModelSpec`: ``groups`` are tuples of
    annotator indices (two or more each); ``loaded`` the indices of annotators in
    some group, in annotator order (the loadings' ``dependent_annotator``
    dimension), with one loading per true class each.
    """

    @property
    def n_classes(self) -> int:
        return self.base.n_classes

    def with_counts(self, counts) -> MulticlassDependenceSpec:
        """The same model on other pattern counts over the same patterns (SBC, bench)."""
        base = dataclasses.replace(self.base, counts=np.asarray(counts, dtype=np.int64))
        return MulticlassDependenceSpec(base, self.groups, self.sigma, self.n_nodes)


def make_multiclass_dependence_spec(
    base: MulticlassModelSpec, dependence, *, sigma: float = LOADING_SIGMA, n_nodes: int = N_NODES
) -> MulticlassDependenceSpec:
    """The dependence model on the cells, priors and orientation of ``base``.

    ``dependence``: ``"all"``, ``"r1:r2,r3:r4"`` or a list of pairs, parsed by the
    binary model's :func:`~bayescal.bayes.dependence.parse_dependence` (overlapping
    pairs merged by connected components).
    """
    if not (np.isfinite(sigma) and sigma > 0):
        raise ConfigError(f"sigma (the loadings' HalfNormal scale) must be > 0; got {sigma!r}.")
    return MulticlassDependenceSpec(
        base, parse_dependence(dependence, base.annotators), float(sigma), n_nodes
    )


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
    dspec: MulticlassDependenceSpec, confusion, loading, *, chunk: int = 50
) -> np.ndarray:
    """``log P(s | Y = y)`` for every kept pattern and class: shape (..., P, C).

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
    dspec: MulticlassDependenceSpec, confusion, prevalence, loading
) -> np.ndarray:
    """``log P(s | g)`` with the class summed out: shape (..., L, P)."""
    lpc = multiclass_class_pattern_logp(dspec, confusion, loading)  # (..., P, C)
    logrho = np.log(np.asarray(prevalence, dtype=np.float64))[..., dspec.base.prevalence_index, :]
    joint = logrho[..., :, None, :] + lpc[..., None, :, :]
    top = joint.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(joint - top).sum(axis=-1, keepdims=True)))[..., 0]


def multiclass_implied_correlation(dspec: MulticlassDependenceSpec, loading):
    """Latent within-class correlations of every pair inside a group: ``(rho, labels)`` with
    ``rho`` of shape (..., n_pairs, C) and ``labels`` the pairs ``"j~k"``.

    ``rho_jk,y = s_jy s_ky / sqrt((1 + s_jy^2)(1 + s_ky^2))``: the correlation of the two
    latent probit variables whose signs decide correctness (the binary model's formula,
    :func:`~bayescal.bayes.dependence.implied_correlation`, per true class).
    """
    return implied_correlation(dspec, loading)


# --------------------------------------------------------------------------- identification
def check_multiclass_identified(dspec: MulticlassDependenceSpec) -> dict:
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
def _prior_only(spec: MulticlassModelSpec) -> MulticlassModelSpec:
    """``spec`` with no items: its PyMC model is the prior of the confusions and prevalences."""
    return dataclasses.replace(
        spec, counts=np.zeros_like(spec.counts), gold=np.zeros_like(spec.gold)
    )


def build_pymc_multiclass_dependence_model(dspec: MulticlassDependenceSpec):
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
    built = build_multiclass_pymc_model(_prior_only(spec))
    model = built.model
    k, c = spec.n_annotators, spec.n_classes
    states = spec.states
    u, w = dspec.nodes, dspec.weights
    grouped = np.zeros(k, dtype=bool)
    grouped[dspec.loaded] = True
    model.add_coord(LOADED, [spec.annotators[j] for j in dspec.loaded])
    with model:
        loading = pm.HalfNormal("loading", sigma=dspec.sigma, dims=(LOADED, "class"))
        t = model["confusion"]
        s = pt.set_subtensor(pt.zeros((k, c))[dspec.loaded], loading)
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
                prod = prod * pt.switch(
                    pt.eq(st, 1), f1[None], pt.switch(pt.eq(st, 0), f0[None], 1.0)
                )
            ll = ll + pt.log(pt.dot(prod, w))
        g_idx, s_idx = np.nonzero(spec.counts)
        n = spec.counts[g_idx, s_idx].astype(np.float64)
        logrho = pt.log(model["prevalence"])[spec.prevalence_index[g_idx]]
        joint = logrho + ll[s_idx]
        pm.Potential("dependence_loglik", (n * pm.math.logsumexp(joint, axis=1)).sum())
        if spec.has_gold:
            gy, gs = np.nonzero(spec.gold)
            pm.Potential(
                "dependence_gold_loglik", (spec.gold[gy, gs].astype(np.float64) * ll[gs, gy]).sum()
            )
    return dataclasses.replace(built, spec=spec)


# --------------------------------------------------------------------------- density
class MulticlassDependenceLogDensity:
    """Log posterior density and closed-form gradient for nutpie (numba kernel).

    Unconstrained coordinates in PyMC's order: the independence model's
    (:class:`~bayescal.bayes.logdensity.MulticlassLogDensity`, reference
    log-ratios of every confusion row, then of every prevalence row), then
    ``log loading`` (dependent annotator, class). The prior part is that density on
    a spec without items; the likelihood, the loadings' prior and the gradient come
    from :func:`~bayescal.bayes.multiclass_dependence_kernel.likelihood_kernel`
    (gradient in ``log T``, ``log rho`` and ``s`` from the responsibilities, as in
    the E step, mapped to the log-ratios by ``d f / d v_a = G_a - x_a sum_k G_k``).

    Per group and class the integral ``I_G(y, v)`` is computed once per distinct
    correct / wrong / missing sub-pattern ``v`` of its members (at most ``3^r``),
    so one evaluation costs ``O(C 3^r Q r^2)`` for the integrals plus ``O(P K C)``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> from bayescal.bayes.multiclass import make_multiclass_spec
    >>> data = simulate_multiclass(400, 3, n_annotators=4, random_state=0)
    >>> spec = make_multiclass_spec(summarize_multiclass(data))
    >>> density = MulticlassDependenceLogDensity(make_multiclass_dependence_spec(spec, "a1:a2"))
    >>> density.n_dim  # 4 x 3 x 2 confusion + 3 x 2 prevalence + 2 x 3 loadings
    36
    >>> logp, grad = density(density.initial_point())
    >>> grad.shape
    (36,)
    """

    def __init__(self, dspec: MulticlassDependenceSpec):
        spec = dspec.base
        self.dspec = dspec
        self.spec = spec
        self.prior = MulticlassLogDensity(_prior_only(spec))
        self.n_base = self.prior.n_dim
        self.n_dim = self.n_base + dspec.n_loadings
        k, c = spec.n_annotators, spec.n_classes
        states = np.ascontiguousarray(spec.states, dtype=np.int64)
        grouped = np.zeros(k, dtype=np.bool_)
        grouped[dspec.loaded] = True
        g, s = np.nonzero(spec.counts)
        # every group's distinct sub-patterns, numbered globally
        n_groups = max(len(dspec.groups), 1)
        rmax = max([len(gr) for gr in dspec.groups], default=1)
        inv = np.zeros((states.shape[0], c, n_groups), dtype=np.int64)
        sub_status, sub_members, sub_size = [], [], []
        for gi, group in enumerate(dspec.groups):
            status = _status(states, list(group), c)  # (P, C, r)
            code = (status * 3 ** np.arange(len(group))).sum(axis=-1)
            subs, where = np.unique(code, return_inverse=True)
            inv[:, :, gi] = len(sub_size) + where.reshape(code.shape)
            for v in subs:
                row = [(v // 3**i) % 3 for i in range(len(group))]
                sub_status.append(row + [2] * (rmax - len(group)))
                sub_members.append(list(group) + [0] * (rmax - len(group)))
                sub_size.append(len(group))
        if not dspec.groups:  # no groups: one empty sub-pattern with I = 1
            sub_status, sub_members, sub_size = [[2]], [[0]], [0]
        self._args = (
            self.n_base,
            states,
            s.astype(np.int64),
            spec.prevalence_index[g].astype(np.int64),
            spec.counts[g, s].astype(np.float64),
            np.ascontiguousarray(spec.gold.T, dtype=np.float64),
            np.ascontiguousarray(spec.confusion_reference, dtype=np.int64),
            np.ascontiguousarray(spec.prevalence_reference, dtype=np.int64),
            len(spec.prevalence_groups),
            grouped,
            dspec.loaded.astype(np.int64),
            inv,
            np.array(sub_status, dtype=np.int64),
            np.array(sub_members, dtype=np.int64),
            np.array(sub_size, dtype=np.int64),
            np.ascontiguousarray(dspec.nodes),
            np.ascontiguousarray(dspec.weights),
            1.0 / dspec.sigma**2,
            dspec.n_loadings * (math.log(2.0) - _LOG_SQRT_2PI - math.log(dspec.sigma)),
        )

    def __call__(self, x) -> tuple[float, np.ndarray]:
        """``(log density, gradient)`` at the unconstrained point ``x`` of shape (n_dim,)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_dim,):
            raise ConfigError(f"x must have shape ({self.n_dim},); got {x.shape}.")
        return self.sampler_function()(x)

    def sampler_function(self):
        """``x -> (log density, gradient)`` for the sampler's loop."""
        prior_fn = self.prior.sampler_function()
        args, n_base, n_dim = self._args, self.n_base, self.n_dim

        def logp_grad(x):
            lp, gbase = prior_fn(x[:n_base])
            grad = np.empty(n_dim)
            grad[:n_base] = gbase
            return lp + likelihood_kernel(x, grad, *args), grad

        return logp_grad

    def initial_point(self) -> np.ndarray:
        """The independence model's initial point, every loading at ``sigma / 2``."""
        return np.concatenate(
            [
                self.prior.initial_point(),
                np.full(self.dspec.n_loadings, math.log(self.dspec.sigma / 2)),
            ]
        )

    def constrain(self, x):
        """Confusions (..., K, C, C), prevalences (..., L', C), loadings (..., n_loaded, C)."""
        x = np.asarray(x, dtype=np.float64)
        conf, prev = self.prior.constrain(x[..., : self.n_base])
        loading = np.exp(x[..., self.n_base :]).reshape(
            *x.shape[:-1], self.dspec.loaded.size, self.dspec.n_classes
        )
        return conf, prev, loading


# --------------------------------------------------------------------------- forward sampling
def sample_multiclass_counts_dependent(
    dspec: MulticlassDependenceSpec, confusion, prevalence, loading, rng
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


def pair_labels(dspec: MulticlassDependenceSpec) -> list[str]:
    """``"j~k"`` labels of every pair inside a group (the ``pair`` coordinate)."""
    return [
        f"{dspec.annotators[j]}~{dspec.annotators[k]}"
        for group in dspec.groups
        for j, k in itertools.combinations(group, 2)
    ]
