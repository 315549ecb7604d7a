"""The joint log-odds prior (ChannelPriors.from_fit(joint=True)) and the sequential-update
check: priors from half the data + the audit on the other half = the full-data posterior."""

import arviz as az
import numpy as np
import pytest
from pymc.blocking import DictToArrayBijection, RaveledVars
from scipy.special import logit

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import build_pymc_model, make_spec, sample_prior
from bayescal.bayes.priors import ChannelPriors, JointLogitNormal
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy

FIT = {"draws": 1000, "tune": 500, "chains": 2, "cores": 1, "posterior_predictive": False}


@pytest.fixture(scope="module")
def halves():
    data = simulate_toy(8000, random_state=5)
    first = np.arange(data.n_items) < 4000
    full = fit_channels_bayes(summarize(data, groups=3), **FIT)
    earlier = fit_channels_bayes(summarize(data.subset(first), groups=3), **FIT)
    return data, first, full, earlier


@pytest.mark.parametrize("orientation", ["all", "designated"])
def test_joint_prior_density_equals_pymc(halves, orientation):
    _, _, _, earlier = halves
    priors = ChannelPriors.from_fit(earlier, inflate=1.5, prevalence=True, joint=True)
    s = summarize(simulate_toy(2000, random_state=3), groups=3)
    spec = make_spec(s, priors=priors, orientation=orientation)
    model = build_pymc_model(spec).model
    logp_dlogp = model.compile_fn(
        [model.logp(), model.dlogp()], mode="FAST_COMPILE", on_unused_input="ignore"
    )
    density = ChannelLogDensity(spec)
    info = DictToArrayBijection.map(model.initial_point()).point_map_info
    rng = np.random.default_rng(0)
    for _ in range(20):
        # near the initial point (rates within ~[0.05, 0.95]): both sides sum a few hundred
        # terms in double precision, so 1e-9 relative has four orders of margin
        x = density.initial_point() + rng.normal(scale=0.4, size=density.n_dim)
        ours, grad = density(x)
        ref, ref_grad = logp_dlogp(DictToArrayBijection.rmap(RaveledVars(x, info)))
        assert abs(ours - ref) <= 1e-9 * abs(ref)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-9 * np.abs(ref_grad).max())


def test_joint_prior_draws_follow_the_normal(halves):
    _, _, _, earlier = halves
    priors = ChannelPriors.from_fit(earlier, inflate=1.0, prevalence=True, joint=True)
    spec = make_spec(summarize(simulate_toy(500, random_state=4), groups=3), priors=priors)
    draws = sample_prior(spec, 20_000, np.random.default_rng(1))
    z = logit(np.concatenate([draws["a"], draws["b"], draws["prevalence"]], axis=1))
    # means within 4 se (se = sd / sqrt(20000)); the a < b rejection removes almost nothing
    # here (every earlier gap is many sds wide)
    sd = np.sqrt(np.diag(priors.joint.cov))
    np.testing.assert_array_less(np.abs(z.mean(0) - priors.joint.mean), 4 * sd / np.sqrt(20_000))
    # covariances: se(cov_ij) = sd_i sd_j sqrt((1 + rho^2) / n) <= 0.01 sd_i sd_j; 4 se
    error = np.abs(np.cov(z, rowvar=False) - priors.joint.cov)
    np.testing.assert_array_less(error, 0.04 * np.outer(sd, sd))


def test_joint_prior_checks():
    with pytest.raises(ConfigError, match="positive definite"):
        JointLogitNormal([0, 1], [0, 0], [[1, 1], [1, 1]], 1, 0)
    with pytest.raises(ConfigError, match="positions"):
        JointLogitNormal([0, 5], [0, 0], np.eye(2), 1, 0)
    joint = JointLogitNormal([0, 1], [0, 0], np.eye(2), 1, 0)
    with pytest.raises(ConfigError, match="made for 1 annotators"):
        joint.check_size(3, 3)


def _ess_se(fit, key):
    """Monte Carlo standard error of each posterior mean: sd / sqrt(bulk ESS)."""
    ess = az.ess(fit.idata, var_names=[key])[key].values.ravel()
    return getattr(fit, key).values.std(0) / np.sqrt(ess)


def test_sequential_update_reproduces_the_full_posterior(halves):
    data, first, full, earlier = halves
    priors = ChannelPriors.from_fit(earlier, inflate=1.0, prevalence=True, joint=True)
    later = fit_channels_bayes(
        summarize(data.subset(~first), groups=3), priors=priors, random_state=1, **FIT
    )
    for key in ("a", "b", "prevalence"):
        f, s = getattr(full, key).values, getattr(later, key).values
        # Both runs estimate the same posterior mean; their difference has Monte Carlo
        # standard error sqrt(se_full^2 + se_later^2) with se = sd / sqrt(ESS): 4 of them
        # (nine parameters, so a 4-sigma bound fails by chance with probability ~6e-4)
        se = np.sqrt(_ess_se(full, key) ** 2 + _ess_se(later, key) ** 2)
        np.testing.assert_array_less(np.abs(s.mean(0) - f.mean(0)), 4 * se)
        # sds: the relative MC error of a sample sd is about 1 / sqrt(2 ESS) (>= 600 here):
        # 4 * sqrt(2 / (2 * 600)) = 0.16 on the ratio
        np.testing.assert_allclose(s.std(0) / f.std(0), 1.0, atol=0.16)


def test_independent_beta_priors_miss_the_full_posterior(halves):
    # Why joint=True exists: independent Beta priors drop the earlier posterior's
    # correlations (each rate with the prevalences) and the sequential update lands a few
    # tenths of a posterior sd away (measured 0.17-0.39 sd on this data), beyond MC error.
    data, first, full, earlier = halves
    priors = ChannelPriors.from_fit(earlier, inflate=1.0, prevalence=True)
    later = fit_channels_bayes(
        summarize(data.subset(~first), groups=3), priors=priors, random_state=1, **FIT
    )
    shift = np.abs(later.a.values.mean(0) - full.a.values.mean(0)) / full.a.values.std(0)
    se = np.sqrt(_ess_se(full, "a") ** 2 + _ess_se(later, "a") ** 2) / full.a.values.std(0)
    assert shift.max() > 4 * se.max()
