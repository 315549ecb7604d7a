"""The conditional-dependence model (Qu, Tan & Kutner 1996): exactness against independent
computations (closed-form bivariate normal, brute-force per-item likelihood, PyMC's logp and
gradient, the independence model at s = 0), the quadrature's accuracy, the dependence spec's
parsing and the identification check."""

import itertools

import numpy as np
import pytest
from gold_data import gold_data
from scipy import integrate, stats
from scipy.special import gammaln, logit, ndtr, ndtri

from bayescal import summarize
from bayescal.bayes.dependence import (
    LOADING_SIGMA,
    N_NODES,
    build_pymc_dependence_model,
    check_identified,
    class_pattern_logp,
    group_loglik_dependent,
    make_dependence_spec,
    parse_dependence,
    pattern_logp_dependent,
    quadrature_error,
)
from bayescal.bayes.dependence_density import DependenceLogDensity
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import group_loglik, make_spec
from bayescal.errors import ConfigError, IdentificationError
from bayescal.simulate.dependent import simulate_dependent

A4, B4 = np.array([0.08, 0.13, 0.18, 0.1]), np.array([0.84, 0.89, 0.94, 0.88])


def _spec(k=4, groups=3, missing=0.25, n_gold=0, seed=5, model="grouped", orientation="all"):
    d, _ = gold_data(600, A4[:k], B4[:k], n_gold=n_gold, missing=missing, seed=seed)
    return make_spec(summarize(d, groups=groups), model, orientation=orientation)


def _draw(dspec, rng, smax=2.5):
    k = dspec.base.n_annotators
    a = rng.uniform(0.02, 0.4, k)
    b = rng.uniform(0.6, 0.98, k)
    prev = rng.uniform(0.05, 0.95, len(dspec.base.prevalence_groups))
    s = rng.uniform(0.0, smax, (dspec.loaded.size, 2))
    return a, b, prev, s


# ------------------------------------------------------------------ the dependence spec
def test_parse_merges_overlapping_pairs_and_keeps_disjoint_ones():
    names = ["r1", "r2", "r3", "r4", "r5"]
    assert parse_dependence("r1:r2,r2:r3", names) == [(0, 1, 2)]
    assert parse_dependence("r4:r5, r1:r2", names) == [(0, 1), (3, 4)]
    assert parse_dependence([("r3", "r1"), ("r5", "r2"), ("r2", "r3")], names) == [(0, 1, 2, 4)]
    assert parse_dependence("all", names) == [(0, 1, 2, 3, 4)]


@pytest.mark.parametrize(
    "text,match",
    [
        ("r1:r9", "unknown annotator"),
        ("r1:r1", "itself"),
        ("r1:r2,r2:r1", "given twice"),
        ("r1-r2", "not of the form"),
        ("r1:r2:r3", "not of the form"),
        ("", "not of the form"),
    ],
)
def test_parse_refuses_bad_pairs(text, match):
    with pytest.raises(ConfigError, match=match):
        parse_dependence(text, ["r1", "r2", "r3"])


# ------------------------------------------------------------------ exactness
def test_zero_loadings_give_the_independence_model_exactly():
    spec = _spec(n_gold=40)
    dspec = make_dependence_spec(spec, "all")
    rng = np.random.default_rng(1)
    for _ in range(5):
        a, b, prev, s = _draw(dspec, rng)
        ours = group_loglik_dependent(dspec, a, b, prev, 0 * s)
        np.testing.assert_allclose(ours, group_loglik(spec, a, b, prev), rtol=0, atol=1e-10)
    # the sampler's density: loadings at exp(-40) ~ 4e-18 change the likelihood by O(s^2)
    dens, indep = DependenceLogDensity(dspec), ChannelLogDensity(spec)
    x = indep.initial_point() + rng.uniform(-0.5, 0.5, indep.n_dim)
    t = np.full(dspec.n_loadings, -40.0)
    lp, _ = dens(np.concatenate([x, t]))
    half_normal = dspec.n_loadings * np.log(2 / np.sqrt(2 * np.pi) / LOADING_SIGMA) + t.sum()
    assert abs(lp - half_normal - indep(x)[0]) < 1e-10 * abs(lp)


def test_pair_probability_equals_the_bivariate_normal_cdf():
    spec = _spec(k=2, groups=2, missing=0.0)
    dspec = make_dependence_spec(spec, "all")
    both = [i for i, st in enumerate(spec.states) if tuple(st) == (1, 1)][0]
    rng = np.random.default_rng(2)
    for _ in range(6):
        a, b, _, s = _draw(dspec, rng, smax=3.0)
        lr = class_pattern_logp(dspec, a, b, s)
        for y, p in enumerate((a, b)):
            rho = s[0, y] * s[1, y] / np.sqrt((1 + s[0, y] ** 2) * (1 + s[1, y] ** 2))
            exact = stats.multivariate_normal(
                mean=[0, 0], cov=[[1, rho], [rho, 1]], abseps=1e-13, releps=1e-13
            ).cdf(ndtri(p))
            assert abs(np.exp(lr[y, both]) - exact) < 1e-9


def test_pattern_probabilities_sum_to_one_within_each_mask():
    spec = _spec(k=4, missing=0.3)
    assert int(spec.mask_id.max()) >= 5  # several masks, including partial ones
    dspec = make_dependence_spec(spec, "a1:a2,a3:a2")
    a, b, prev, s = _draw(dspec, np.random.default_rng(3), smax=3.0)
    p = np.exp(pattern_logp_dependent(dspec, a, b, prev, s))
    for m in range(int(spec.mask_id.max()) + 1):
        np.testing.assert_allclose(p[:, spec.mask_id == m].sum(axis=1), 1.0, atol=1e-12)


def _item_loglik_quad(states, y_prob, a, b, s_full, groups, memo):
    """One item's log-likelihood by adaptive quadrature (no nodes shared with the model);
    ``memo`` keeps each distinct integral (items with the same answers share it)."""
    total = 0.0
    for y, py in ((0, 1 - y_prob), (1, y_prob)):
        p = a if y == 0 else b
        val = py
        grouped = {j for g in groups for j in g}
        for j in range(len(p)):
            if j not in grouped and states[j] != 2:
                val *= p[j] if states[j] == 1 else 1 - p[j]
        for g in groups:

            def f(u, g=g, y=y, p=p):
                out = stats.norm.pdf(u)
                for j in g:
                    if states[j] == 2:
                        continue
                    z = ndtri(p[j]) * np.sqrt(1 + s_full[j, y] ** 2) + s_full[j, y] * u
                    out *= ndtr(z) if states[j] == 1 else ndtr(-z)
                return out

            key = (y, g, tuple(states[list(g)]))
            if key not in memo:
                memo[key] = integrate.quad(f, -12, 12, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
            val *= memo[key]
        total += val
    return np.log(total)


def test_brute_force_per_item_likelihood_equals_the_pattern_count_one():
    data, _ = simulate_dependent(
        80, loading=1.2, groups=[(0, 1)], fp=A4, fn=1 - B4, missing=0.2, random_state=4
    )
    summary = summarize(data, groups=2)
    spec = make_spec(summary, "grouped")
    dspec = make_dependence_spec(spec, "a1:a2,a3:a4")
    a, b, prev, s = _draw(dspec, np.random.default_rng(5), smax=2.0)
    s_full = dspec.loadings_full(s)
    labels = data.labels
    group_of = np.searchsorted(summary.group_edges[1:-1], data.score, side="right")
    brute = np.zeros(spec.n_groups)
    memo = {}
    for i in range(data.n_items):
        st = np.where(np.isnan(labels[i]), 2, labels[i]).astype(int)
        g = group_of[i]
        brute[g] += _item_loglik_quad(st, prev[g], a, b, s_full, dspec.groups, memo)
    # the pattern-count likelihood carries the multinomial constant; items do not
    const = group_loglik_dependent(dspec, a, b, prev, s) - (
        spec.counts * pattern_logp_dependent(dspec, a, b, prev, s)
    ).sum(axis=1)
    ours = group_loglik_dependent(dspec, a, b, prev, s) - const
    # quadrature errors ~1e-14 per item (quadrature_error) over 80 items
    np.testing.assert_allclose(ours, brute, rtol=0, atol=1e-9)
    # and the constant is the multinomial one of each mask's counts
    n_mask = np.array(
        [
            [spec.counts[g, spec.mask_id == m].sum() for m in np.unique(spec.mask_id)]
            for g in range(spec.n_groups)
        ]
    )
    np.testing.assert_allclose(
        const, gammaln(n_mask + 1).sum(1) - gammaln(spec.counts + 1).sum(1), atol=1e-9
    )


def test_quadrature_is_exact_over_the_prior_range():
    # the prior's 99.9% quantile of a loading; cells of probability >= 1e-12
    s_max = stats.halfnorm(scale=LOADING_SIGMA).ppf(0.999)
    assert quadrature_error(s_max, N_NODES) < 1e-10
    # and the check has power: far fewer nodes fail it
    assert quadrature_error(s_max, 40) > 1e-6


def _point_dict(model, x):
    from pymc.blocking import DictToArrayBijection, RaveledVars

    info = DictToArrayBijection.map(model.initial_point()).point_map_info
    return DictToArrayBijection.rmap(RaveledVars(x, info))


def test_density_equals_pymc_logp_and_gradient():
    # one compile covers: a three-member group, an ungrouped annotator, free (designated)
    # orientation, missing answers and gold items
    spec = _spec(k=4, n_gold=50, orientation="designated")
    dspec = make_dependence_spec(spec, "a1:a2,a3:a2")
    model = build_pymc_dependence_model(dspec).model
    fn = model.compile_fn(
        [model.logp(), model.dlogp()], mode="FAST_COMPILE", on_unused_input="ignore"
    )
    density = DependenceLogDensity(dspec)
    rng = np.random.default_rng(6)
    o = spec.oriented
    for _ in range(8):
        a, b, prev, s = _draw(dspec, rng, smax=2.5)
        ordered = np.stack([logit(a[o]), np.log(logit(b[o]) - logit(a[o]))], 1).ravel()
        free = np.stack([logit(a[~o]), logit(b[~o])], 1).ravel()
        x = np.concatenate([ordered, free, logit(prev), np.log(s).ravel()])
        ours, grad = density(x)
        ref, ref_grad = fn(_point_dict(model, x))
        # sums of a few hundred double-precision terms: 1e-9 relative leaves a wide margin
        assert abs(ours - ref) <= 1e-9 * abs(ref)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-9 * np.abs(ref_grad).max())


# ------------------------------------------------------------------ identification
def test_designs_without_degrees_of_freedom_are_refused():
    # K = 3, one prevalence: 7 moments, 6 + 1 + 6 parameters
    spec = _spec(k=3, groups=1, model="marginal", missing=0.0)
    with pytest.raises(IdentificationError, match="fewer dependent pairs"):
        check_identified(make_dependence_spec(spec, "all"))
    # K = 2 with three groups: 9 moments, 4 + 3 + 4 parameters
    with pytest.raises(IdentificationError, match="more score groups"):
        check_identified(make_dependence_spec(_spec(k=2, groups=3, missing=0.0), "all"))
    ok = check_identified(make_dependence_spec(_spec(k=2, groups=5, missing=0.0), "all"))
    assert ok == {"moments": 15, "parameters": 13, "degrees_of_freedom": 2}


# ------------------------------------------------------------------ the simulator
def test_simulator_keeps_marginal_channels_and_has_the_stated_pair_dependence():
    n = 200_000
    data, truth = simulate_dependent(
        n,
        loading=[[1.5, 0.7], [1.0, 2.0], [0, 0], [0, 0]],
        groups=[(0, 1)],
        fp=A4,
        fn=1 - B4,
        random_state=7,
    )
    y = data.truth.astype(bool)
    lab = data.labels
    for cls, rate in ((False, truth.a), (True, truth.b)):
        sel = lab[y == cls]
        emp = sel.mean(axis=0)
        se = np.sqrt(rate * (1 - rate) / sel.shape[0])
        assert np.all(np.abs(emp - rate) < 4.5 * se)  # 4.5 SE over 8 rates: false alarm < 1e-4
        # both of the dependent pair say 1: the bivariate normal probability
        rho = truth.correlation["a1~a2"][int(cls)]
        exact = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf(ndtri(rate[:2]))
        both = np.mean((sel[:, 0] == 1) & (sel[:, 1] == 1))
        assert abs(both - exact) < 4.5 * np.sqrt(exact * (1 - exact) / sel.shape[0])
        # annotators 3 and 4 are independent given the class
        both34 = np.mean((sel[:, 2] == 1) & (sel[:, 3] == 1))
        ind = rate[2] * rate[3]
        assert abs(both34 - ind) < 4.5 * np.sqrt(ind * (1 - ind) / sel.shape[0])
    assert truth.loading[2:].sum() == 0 and truth.population_binned_ece > 0.05


def test_simulator_refuses_bad_loadings():
    with pytest.raises(ConfigError, match="loading"):
        simulate_dependent(100, loading=-1.0, random_state=0)
    with pytest.raises(ConfigError, match="disjoint"):
        simulate_dependent(100, groups=[(0, 1), (1, 2)], random_state=0)


def test_all_pairs_of_a_group_are_reported():
    dspec = make_dependence_spec(_spec(k=4), "a1:a2,a2:a4")
    assert dspec.group_names == [["a1", "a2", "a4"]]
    from bayescal.bayes.dependence import implied_correlation

    rho, labels = implied_correlation(dspec, np.ones((3, 2)))
    assert labels == ["a1~a2", "a1~a4", "a2~a4"]
    np.testing.assert_allclose(rho, 0.5)
    assert list(itertools.chain(*dspec.groups)) == [0, 1, 3]
