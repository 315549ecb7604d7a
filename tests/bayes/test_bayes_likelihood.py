"""Exact checks of the pattern-count likelihood against slow, obvious implementations."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from bayescal import summarize
from bayescal.bayes.models import (
    build_pymc_model,
    group_loglik,
    make_spec,
    pattern_logp,
    sample_counts,
    sample_prior,
)
from bayescal.channels.em import score_bin_em
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy


@pytest.fixture(scope="module")
def missing_summary():
    return summarize(
        simulate_toy(3000, "shifted", random_state=5, missing=[0.1, 0.3, 0.5]), groups=3
    )


def brute_logp(a, b, mu, pattern):
    """One pattern, one group: sum over y of the product over answered annotators."""
    terms = []
    for _y, rates, w in ((0, a, 1 - mu), (1, b, mu)):
        logv = math.log(w)
        for s, r in zip(pattern, rates):
            if s == 2:
                continue  # missing answer: no factor
            logv += math.log(r if s == 1 else 1 - r)
        terms.append(logv)
    return np.logaddexp(*terms)


def test_pattern_logp_matches_brute_force():
    rng = np.random.default_rng(0)
    k = 3
    a, b, mu = rng.uniform(0.02, 0.5, k), rng.uniform(0.5, 0.98, k), rng.uniform(0.05, 0.95, 2)
    states = np.array(list(itertools.product([0, 1, 2], repeat=k)))[:, ::-1]
    lp = pattern_logp(a, b, mu, states, np.array([0, 1]))
    for g in range(2):
        for p, st in enumerate(states):
            if (st == 2).all():
                continue
            assert lp[g, p] == pytest.approx(brute_logp(a, b, mu[g], st), rel=1e-12)


def test_probabilities_sum_to_one_within_each_mask(missing_summary):
    spec = make_spec(missing_summary)
    lp = pattern_logp(
        [0.1, 0.2, 0.3], [0.8, 0.7, 0.9], [0.2, 0.5, 0.7], spec.states, spec.prevalence_index
    )
    for m in np.unique(spec.mask_id):
        np.testing.assert_allclose(np.exp(lp[:, spec.mask_id == m]).sum(axis=1), 1.0, rtol=1e-12)


def test_missing_marginalised_like_per_item(missing_summary):
    """Sum of per-item log-likelihoods (missing answers skipped) equals the count form."""
    data = simulate_toy(3000, "shifted", random_state=5, missing=[0.1, 0.3, 0.5])
    a, b, mu = np.array([0.1, 0.15, 0.2]), np.array([0.85, 0.8, 0.9]), np.array([0.3, 0.5, 0.6])
    lab = data.labels.astype(np.float64)
    g = np.clip(np.searchsorted(missing_summary.group_edges, data.score, "right") - 1, 0, 2)
    ans = ~np.isnan(lab)
    x = np.where(ans, lab, 0.0)
    keep = ans.any(axis=1)
    l0 = (ans * (x * np.log(a) + (1 - x) * np.log1p(-a))).sum(1)
    l1 = (ans * (x * np.log(b) + (1 - x) * np.log1p(-b))).sum(1)
    per_item = np.logaddexp(np.log1p(-mu[g]) + l0, np.log(mu[g]) + l1)[keep].sum()
    spec = make_spec(missing_summary)
    lp = pattern_logp(a, b, mu, spec.states, spec.prevalence_index)
    assert (spec.counts * lp).sum() == pytest.approx(per_item, rel=1e-12)


def test_group_loglik_is_multinomial_pmf():
    s = summarize(simulate_toy(800, random_state=3), groups=2)  # no missing answers: one mask
    spec = make_spec(s)
    a, b, mu = [0.1, 0.1, 0.2], [0.9, 0.8, 0.85], [0.3, 0.7]
    p = np.exp(pattern_logp(a, b, mu, spec.states, spec.prevalence_index))
    ref = [stats.multinomial.logpmf(spec.counts[g], spec.counts[g].sum(), p[g]) for g in range(2)]
    np.testing.assert_allclose(group_loglik(spec, a, b, mu), ref, rtol=1e-10)


def test_em_loglik_equals_model_loglik_at_em_optimum():
    s = summarize(simulate_toy(4000, "nonlinear", random_state=4, missing=0.2), groups=4)
    em = score_bin_em(s)
    spec = make_spec(s)
    lp = pattern_logp(
        em.a.values[0], em.b.values[0], em.prevalence.values[0], spec.states, spec.prevalence_index
    )
    assert (spec.counts * lp).sum() == pytest.approx(em.loglik, rel=1e-10)


def test_pymc_potential_equals_numpy(missing_summary):
    spec = make_spec(missing_summary, orientation="designated", orient=1)
    built = build_pymc_model(spec)
    model = built.model
    a, b, mu = np.array([0.12, 0.2, 0.7]), np.array([0.8, 0.9, 0.3]), np.array([0.3, 0.5, 0.6])
    point = {}
    for rv in model.free_RVs:
        value = {
            "ab": np.stack([a, b], 1)[[1]],
            "ab_free": np.stack([a, b], 1)[[0, 2]],
            "prevalence": mu,
        }[rv.name]
        tr = model.rvs_to_transforms[rv]
        point[model.rvs_to_values[rv].name] = tr.forward(value, *rv.owner.inputs).eval()
    f = model.compile_fn(
        model.logp(vars=model.potentials),
        inputs=model.value_vars,
        point_fn=True,
        on_unused_input="ignore",
    )
    expect = (spec.counts * pattern_logp(a, b, mu, spec.states, spec.prevalence_index)).sum()
    assert float(f(point)) == pytest.approx(expect, rel=1e-10)
    det = model.compile_fn(
        model.replace_rvs_by_values([model["a"], model["b"]]),
        inputs=model.value_vars,
        point_fn=True,
        on_unused_input="ignore",
    )(point)
    np.testing.assert_allclose(det[0], a)
    np.testing.assert_allclose(det[1], b)
    # the new counts are used without rebuilding
    built.set_counts(spec.counts * 2)
    assert float(f(point)) == pytest.approx(2 * expect, rel=1e-10)
    with pytest.raises(ConfigError):
        built.set_counts(spec.counts[:1])


def test_spec_drops_unseen_masks_and_all_missing():
    s = summarize(simulate_toy(500, random_state=1, missing=[0.0, 0.0, 0.3]), groups=2)
    spec = make_spec(s)
    # annotators 1, 2 always answer: masks {1,2,3} and {1,2}; 8 + 4 patterns
    assert spec.counts.shape == (2, 12)
    assert not any(set(p) == {"."} for p in spec.patterns)
    assert spec.counts.sum() == s.n_items


def test_forward_sampling(missing_summary):
    spec = make_spec(missing_summary)
    rng = np.random.default_rng(1)
    prior = sample_prior(spec, 2000, rng)
    assert (prior["a"] < prior["b"]).all()
    # smaller of two Beta(2, 2) draws: mean 0.5 - E|X1 - X2| / 2 = 0.5 - 9 / 70 (exact integral)
    assert prior["a"].mean() == pytest.approx(0.5 - 9 / 70, abs=4 * 0.15 / np.sqrt(6000))
    a, b, mu = [0.1, 0.2, 0.15], [0.9, 0.8, 0.85], [0.3, 0.5, 0.7]
    rep = sample_counts(
        spec, np.tile(a, (400, 1)), np.tile(b, (400, 1)), np.tile(mu, (400, 1)), rng
    )
    np.testing.assert_array_equal(rep.sum(-1)[0], spec.counts.sum(-1))
    for m in np.unique(spec.mask_id):
        np.testing.assert_array_equal(
            rep[:, :, spec.mask_id == m].sum(-1)[5], spec.mask_total[:, spec.mask_id == m][:, 0]
        )
    expect = spec.mask_total * np.exp(pattern_logp(a, b, mu, spec.states, spec.prevalence_index))
    se = np.sqrt(expect / 400) + 1e-9
    assert np.all(np.abs(rep.mean(0) - expect) < 5 * se)
    free = make_spec(missing_summary, orientation="designated")
    pf = sample_prior(free, 2000, rng)
    assert (pf["a"][:, 0] < pf["b"][:, 0]).all() and (pf["a"][:, 1:] > pf["b"][:, 1:]).any()
