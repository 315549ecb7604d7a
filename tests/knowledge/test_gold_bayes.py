"""Gold items in the Bayesian models: the hand-written density equals PyMC's, and a fit."""

import numpy as np
import pytest
from gold_data import gold_data
from scipy.special import logit

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import build_pymc_model, make_spec
from bayescal.errors import IdentificationError

PRIORS = {"a": ([1.5, 3.0], [6.0, 4.0]), "b": (3.0, 1.5), "prevalence": (1.2, 0.8)}
CASES = [
    # (model, orientation, K, priors, groups)
    ("marginal", "all", 1, None, 1),
    ("marginal", "designated", 2, PRIORS, 1),
    ("grouped", "designated", 3, None, 3),
]


def _point_dict(model, x):
    """PyMC's own unravelling of a flat unconstrained vector (value variables in order)."""
    from pymc.blocking import DictToArrayBijection, RaveledVars

    info = DictToArrayBijection.map(model.initial_point()).point_map_info
    return DictToArrayBijection.rmap(RaveledVars(x, info))


@pytest.mark.parametrize("model,orientation,k,priors,groups", CASES)
def test_density_with_gold_equals_pymc(model, orientation, k, priors, groups):
    a, b = [0.1, 0.25, 0.2][:k], [0.85, 0.7, 0.75][:k]
    d, _ = gold_data(2000, a, b, n_gold=300, seed=7)
    spec = make_spec(summarize(d, groups=groups), model, priors=priors, orientation=orientation)
    assert spec.gold.sum() == 300
    pm_model = build_pymc_model(spec).model
    logp_dlogp = pm_model.compile_fn(
        [pm_model.logp(), pm_model.dlogp()], mode="FAST_COMPILE", on_unused_input="ignore"
    )
    density = ChannelLogDensity(spec)
    rng = np.random.default_rng(0)
    o = spec.oriented
    for _ in range(25):
        # rates in [0.01, 0.99]: both sides are double-precision sums of a few hundred terms
        # (relative rounding ~1e-13), so 1e-9 relative leaves four orders of margin while a
        # missing gold term (>= 1 log-rate, i.e. >= 1e-2 of |logp| / n_terms) fails it
        lo, hi = np.sort(rng.uniform(0.01, 0.99, (2, k)), axis=0)
        av = np.where(o, lo, rng.uniform(0.01, 0.99, k))
        bv = np.where(o, hi, rng.uniform(0.01, 0.99, k))
        ordered = np.stack([logit(av[o]), np.log(logit(bv[o]) - logit(av[o]))], 1).ravel()
        free = np.stack([logit(av[~o]), logit(bv[~o])], 1).ravel()
        x = np.concatenate([ordered, free, logit(rng.uniform(0.01, 0.99, density.n_prevalence))])
        ours, grad = density(x)
        ref, ref_grad = logp_dlogp(_point_dict(pm_model, x))
        assert abs(ours - ref) <= 1e-9 * abs(ref)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-9 * np.abs(ref_grad).max())


def test_gold_items_change_the_density():
    # the gold term is really there: dropping the gold items changes logp by their share
    d, _ = gold_data(1000, [0.1, 0.2], [0.8, 0.7], n_gold=200, seed=8)
    spec = make_spec(summarize(d, groups=1), "marginal")
    x = ChannelLogDensity(spec).initial_point()
    with_gold = ChannelLogDensity(spec)(x)[0]
    spec.gold = np.zeros_like(spec.gold)
    assert ChannelLogDensity(spec)(x)[0] > with_gold + 50


@pytest.mark.slow
def test_two_annotators_no_groups_fit_with_gold():
    a, b = [0.1, 0.25], [0.85, 0.7]
    d, y = gold_data(6000, a, b, n_gold=1200, seed=9)
    s = summarize(d, groups=1)
    no_gold = summarize(gold_data(6000, a, b, n_gold=0, seed=9)[0], groups=1)
    with pytest.raises(IdentificationError):
        fit_channels_bayes(no_gold, "marginal", draws=50, tune=50, chains=1, check=False)
    fit = fit_channels_bayes(s, "marginal", draws=400, tune=400, chains=2, cores=1)
    assert fit.converged and fit.diagnostics["gold_items"] == list(s.n_gold)
    # 4 posterior sds: the posterior is centred within sampling error of the truth
    for name, truth in (("a", a), ("b", b)):
        draws = getattr(fit, name).values
        assert np.all(np.abs(draws.mean(0) - truth) < 4 * draws.std(0) + 0.005)
    unknown = np.isnan(d.gold)
    prev = fit.prevalence.values[:, 0]
    assert abs(prev.mean() - y[unknown].mean()) < 4 * prev.std() + 0.005
