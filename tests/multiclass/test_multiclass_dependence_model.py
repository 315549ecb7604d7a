"""The multiclass conditional-dependence model: exactness against independent computations
(the independence model at s = 0, full pattern sets per missingness mask, a per-item adaptive
quadrature likelihood, PyMC's logp and gradient), the simulator's marginal confusions and pair
dependence, and the identification check."""

import dataclasses
import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import ndtr, ndtri

from bayescal.bayes.dependence import (
    build_pymc_multiclass_dependence_model,
    check_multiclass_identified,
    make_multiclass_dependence_spec,
    multiclass_class_pattern_logp,
    multiclass_pattern_logp_dependent,
)
from bayescal.bayes.dependence_density import MulticlassDependenceLogDensity
from bayescal.bayes.logdensity import ratio_forward
from bayescal.bayes.multiclass import make_multiclass_spec, multiclass_pattern_loglik
from bayescal.errors import ConfigError, IdentificationError
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.dependent import simulate_multiclass_dependent
from bayescal.summaries import summarize_multiclass


def _spec(n=400, c=3, k=4, missing=0.2, seed=0):
    data = simulate_multiclass(n, c, n_annotators=k, missing=missing, random_state=seed)
    return make_multiclass_spec(summarize_multiclass(data))


def _draw(dspec, rng, smax=2.5):
    """Random diagonally dominant confusions, prevalences and loadings."""
    spec = dspec.base
    k, c = spec.n_annotators, spec.n_classes
    t = rng.dirichlet(np.r_[6.0, np.ones(c - 1)], size=(k, c))
    for y in range(c):
        t[:, y] = np.roll(t[:, y], y, axis=-1)
    rho = rng.dirichlet(np.ones(c), size=len(spec.prevalence_groups))
    s = rng.uniform(0.0, smax, (dspec.loaded.size, c))
    return t, rho, s


def test_zero_loadings_give_the_independence_model_exactly():
    spec = _spec()
    dspec = make_multiclass_dependence_spec(spec, "a1:a2,a2:a3")
    assert dspec.groups == [(0, 1, 2)]
    t, rho, s = _draw(dspec, np.random.default_rng(1))
    ours = multiclass_pattern_logp_dependent(dspec, t, rho, 0.0 * s)
    # s = 0: Phi(Phi^{-1}(T_yy)) = T_yy and (1 - T_yy) T_ya / (1 - T_yy) = T_ya; rounding only
    np.testing.assert_allclose(ours, multiclass_pattern_loglik(spec, t, rho), rtol=0, atol=1e-10)
    # and a positive loading changes it (the comparison has power)
    assert np.abs(multiclass_pattern_logp_dependent(dspec, t, rho, s) - ours).max() > 1e-2


def test_pattern_probabilities_sum_to_one_within_each_mask():
    spec = _spec(c=3, k=3)
    c, k = 3, 3
    every = np.array(list(itertools.product(range(c + 1), repeat=k)))
    every = every[(every < c).any(axis=1)]  # every pattern with an answer
    full = dataclasses.replace(
        spec, states=every, patterns=np.arange(len(every)), counts=np.zeros((3, len(every)), int)
    )
    dspec = make_multiclass_dependence_spec(full, "a1:a3")
    t, rho, s = _draw(dspec, np.random.default_rng(2), smax=3.3)
    lp = multiclass_class_pattern_logp(dspec, t, s)  # (P, C): P(s | y)
    code = (every < c) @ (1 << np.arange(k))
    for m in np.unique(code):
        # each class's pattern probabilities over one mask sum to one (quadrature weights sum
        # to one and every factor is a probability over the answered classes)
        np.testing.assert_allclose(np.exp(lp[code == m]).sum(axis=0), 1.0, atol=1e-12)


def _item_loglik(states, rho_g, t, s_full, groups, c, memo):
    """One item's log-likelihood by adaptive quadrature (no nodes shared with the model)."""
    total = 0.0
    grouped = {j for g in groups for j in g}
    for y in range(c):
        val = rho_g[y]
        for j, a in enumerate(states):
            if a == c:
                continue
            if j not in grouped:
                val *= t[j, y, a]
            elif a != y:
                val *= t[j, y, a] / (1 - t[j, y, y])
        for g in groups:
            status = tuple(2 if states[j] == c else int(states[j] == y) for j in g)
            key = (y, g, status)
            if key not in memo:

                def f(u, g=g, y=y, status=status):
                    out = stats.norm.pdf(u)
                    for j, st in zip(g, status):
                        z = ndtri(t[j, y, y]) * np.sqrt(1 + s_full[j, y] ** 2) + s_full[j, y] * u
                        out *= 1.0 if st == 2 else (ndtr(z) if st == 1 else ndtr(-z))
                    return out

                memo[key] = integrate.quad(f, -12, 12, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
            val *= memo[key]
        total += val
    return np.log(total)


def test_per_item_quadrature_likelihood_equals_the_pattern_count_one():
    data, _ = simulate_multiclass_dependent(
        80, loading=1.2, groups=[(0, 1)], n_annotators=4, missing=0.2, random_state=3
    )
    summary = summarize_multiclass(data)
    spec = make_multiclass_spec(summary)
    dspec = make_multiclass_dependence_spec(spec, "a1:a2,a3:a4")
    t, rho, s = _draw(dspec, np.random.default_rng(4), smax=2.0)
    s_full = dspec.loadings_full(s)
    labels = data.dataset["label"].values
    group = data.probs.argmax(axis=1)  # groups="predicted"
    memo, brute = {}, 0.0
    for i in range(data.n_items):
        st = np.where(np.isnan(labels[i]), 3, labels[i]).astype(int)
        brute += _item_loglik(st, rho[group[i]], t, s_full, dspec.groups, 3, memo)
    ours = (spec.counts * multiclass_pattern_logp_dependent(dspec, t, rho, s)).sum()
    # trapezoid error < 1e-13 per cell up to s = 3.3 (dependence.quadrature_error) over 80 items
    assert abs(ours - brute) < 1e-9


def test_density_equals_pymc_logp_and_gradient():
    # a three-member group, an ungrouped annotator, missing answers and gold items
    spec = _spec(n=300, missing=0.25, seed=5)
    gold = np.zeros_like(spec.gold)
    gold[:, :7] = np.random.default_rng(0).integers(0, 4, (spec.n_classes, 7))
    spec = dataclasses.replace(spec, gold=gold)
    # the density and the PyMC graph share the rule: any node count tests the equality, and
    # 20 nodes keep PyMC's graph (and its compile time) small
    dspec = make_multiclass_dependence_spec(spec, "a1:a2,a3:a2", n_nodes=20)
    model = build_pymc_multiclass_dependence_model(dspec).model
    fn = model.compile_fn(
        [model.logp(), model.dlogp()], mode="FAST_COMPILE", on_unused_input="ignore"
    )
    density = MulticlassDependenceLogDensity(dspec)
    rng = np.random.default_rng(6)
    k, c = spec.n_annotators, spec.n_classes
    nc = k * c * (c - 1)
    for _ in range(3):
        t, rho, s = _draw(dspec, rng)
        x = np.concatenate(
            [
                ratio_forward(t, spec.confusion_reference).ravel(),
                ratio_forward(rho, spec.prevalence_reference).ravel(),
                np.log(s).ravel(),
            ]
        )
        ours, grad = density(x)
        ref, ref_grad = fn(
            {
                "confusion_reference_ratio__": x[:nc].reshape(k, c, c - 1),
                "prevalence_reference_ratio__": x[nc : density.n_base].reshape(-1, c - 1),
                "loading_log__": x[density.n_base :].reshape(-1, c),
            }
        )
        # sums of a few hundred double-precision terms: 1e-9 relative leaves a wide margin
        assert abs(ours - ref) <= 1e-9 * abs(ref)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-9 * np.abs(ref_grad).max())


def test_simulator_keeps_marginal_confusions_and_has_the_stated_pair_dependence():
    n = 40_000
    data, truth = simulate_multiclass_dependent(
        n, loading=2.0, groups=[(0, 1)], n_annotators=4, random_state=7
    )
    labels = data.dataset["label"].values
    y = data.dataset["truth"].values
    c = data.n_classes
    for yy in range(c):
        rows = y == yy
        m = int(rows.sum())
        for j in range(4):
            emp = np.array([np.mean(labels[rows, j] == a) for a in range(c)])
            # binomial SE per entry <= 0.5 / sqrt(m); 4.5 SE: a false alarm ~1e-5 per entry
            np.testing.assert_allclose(emp, truth.confusion[j, yy], atol=4.5 * 0.5 / np.sqrt(m))
        rho = truth.correlation["a1~a2"][yy]
        both = np.mean((labels[rows, 0] == yy) & (labels[rows, 1] == yy))
        p = ndtri([truth.confusion[0, yy, yy], truth.confusion[1, yy, yy]])
        exact = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf(p)
        assert abs(both - exact) < 4.5 * 0.5 / np.sqrt(m)
        # the dependence is visible: independence would give the product of the diagonals
        indep = truth.confusion[0, yy, yy] * truth.confusion[1, yy, yy]
        assert both - indep > 10 * 0.5 / np.sqrt(m)


def test_simulator_and_spec_refuse_bad_input():
    with pytest.raises(ConfigError, match="loading"):
        simulate_multiclass_dependent(10, loading=-1.0, random_state=0)
    with pytest.raises(ConfigError, match="disjoint"):
        simulate_multiclass_dependent(10, groups=[(0, 1), (1, 2)], random_state=0)
    with pytest.raises(ConfigError, match="unknown"):
        make_multiclass_dependence_spec(_spec(), "a1:zz")


def test_designs_without_degrees_of_freedom_are_refused():
    # K = 2, C = 3, "all", pooled: 2 x 3 x 2 + 2 + 6 = 20 parameters, at most 8 + 2 x 2 dof
    data = simulate_multiclass(500, 3, n_annotators=2, random_state=8)
    spec = make_multiclass_spec(summarize_multiclass(data, groups="all"), pooled=True)
    with pytest.raises(IdentificationError, match="degrees of freedom"):
        check_multiclass_identified(make_multiclass_dependence_spec(spec, "all"))
    ok = check_multiclass_identified(make_multiclass_dependence_spec(_spec(), "a1:a2"))
    assert ok["degrees_of_freedom"] > 0
