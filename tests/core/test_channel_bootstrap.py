"""Bootstrap draws of EM channel fits: they reproduce the estimator's sampling spread."""

import numpy as np
import pytest
from em_reference import binary_em_run

import bayescal as bc
import bayescal.channels.bootstrap as bootstrap_module
from bayescal import ChannelFit
from bayescal.channels.bootstrap import bootstrap_channels
from bayescal.errors import ConfigError, DataError
from bayescal.simulate import TOY_FN, TOY_FP, simulate_toy

GROUPS = 5


def toy_summary(n, seed, condition="shifted"):
    return bc.summarize(simulate_toy(n, condition, random_state=seed), groups=GROUPS)


def test_em_run_with_one_data_set_per_start_equals_separate_runs():
    rng = np.random.default_rng(0)
    s = toy_summary(1500, 1)
    counts = s.binary.pattern_counts.astype(float)
    stacked = counts[None] * rng.uniform(0.5, 1.5, size=(4,) + counts.shape)
    states = s.binary.states
    a0, b0 = np.tile([0.1, 0.1, 0.2], (4, 1)), np.tile([0.8, 0.9, 0.9], (4, 1))
    mu0 = np.tile(np.linspace(0.2, 0.8, GROUPS), (4, 1))
    together = binary_em_run(stacked, states, a0, b0, mu0)
    for r in range(4):
        alone = binary_em_run(stacked[r], states, a0[r : r + 1], b0[r : r + 1], mu0[r : r + 1])
        for key in ("a", "b", "mu", "mean_loglik"):
            np.testing.assert_allclose(together[key][r], alone[key][0], rtol=1e-12)


def test_bootstrap_spread_matches_the_estimators_sampling_spread():
    """sd of the EM estimate over 120 independent samples vs the bootstrap sd on one.

    Tolerance: the Monte Carlo sd from 120 samples has a relative SE of about
    1 / sqrt(2 * 119) = 6.5%, the bootstrap sd averaged over 8 samples a few % more;
    allow 30% (about 4 SEs).
    """
    a_hat = []
    for seed in range(120):
        a_hat.append(bc.fit_channels(toy_summary(2000, 100 + seed), "score_bin_em").a.values[0])
    mc_sd = np.std(a_hat, axis=0, ddof=1)
    boot_sd = np.mean(
        [
            bootstrap_channels(s, bc.fit_channels(s, "score_bin_em"), n_draws=400).a.std("draw")
            for s in (toy_summary(2000, 900 + i) for i in range(8))
        ],
        axis=0,
    )
    np.testing.assert_allclose(boot_sd, mc_sd, rtol=0.3)


def test_bootstrap_draws_are_centred_on_the_fit_and_labelled():
    s = toy_summary(3000, 2)
    fit = bc.fit_channels(s, "score_bin_em")
    boot = bootstrap_channels(s, fit, n_draws=500, random_state=1)
    assert boot.method == "score_bin_em (bootstrap)" and boot.n_draws == 500
    # bootstrap mean within 0.3 bootstrap sd of the point estimate
    centre = np.abs(boot.a.values.mean(axis=0) - fit.a.values[0]) / boot.a.values.std(axis=0)
    assert centre.max() < 0.3
    assert list(boot.prevalence["group"].values) == list(fit.prevalence["group"].values)
    marginal = bc.fit_channels(s, "dawid_skene_em")
    assert bootstrap_channels(s, marginal, n_draws=50).prevalence.shape == (50, 1)


def test_chunked_draws_equal_one_pass(monkeypatch):
    s = toy_summary(1500, 3)
    fit = bc.fit_channels(s, "score_bin_em")
    whole = bootstrap_channels(s, fit, n_draws=60, random_state=5)
    monkeypatch.setattr(bootstrap_module, "_CHUNK_ELEMENTS", 500)
    chunked = bootstrap_channels(s, fit, n_draws=60, random_state=5)
    np.testing.assert_allclose(chunked.a.values, whole.a.values)


def test_bootstrap_draws_enter_the_interval_as_channel_uncertainty():
    ch = toy_summary(1000, 4, "calibrated")
    ev = bc.summarize(simulate_toy(1000, "calibrated", random_state=40), groups=GROUPS)
    fit = bc.fit_channels(ch, "score_bin_em")
    boot = bootstrap_channels(ch, fit, n_draws=500)
    with_ch = bc.nc_ece_interval(ev, boot, point_channels=fit)
    without = bc.nc_ece_interval(ev, fit)
    assert with_ch.plugin == without.plugin
    assert with_ch.info["channel_uncertainty"] and not without.info["channel_uncertainty"]
    assert np.subtract(*with_ch.interval()[::-1]) > np.subtract(*without.interval()[::-1])


def test_bootstrap_arguments_are_checked():
    s = toy_summary(800, 5)
    fit = bc.fit_channels(s, "score_bin_em")
    with pytest.raises(ConfigError, match="n_draws"):
        bootstrap_channels(s, fit, n_draws=0)
    with pytest.raises(ConfigError, match="n_draws"):
        bootstrap_channels(s, fit, n_draws="many")
    with pytest.raises(ConfigError, match="reruns EM"):
        bootstrap_channels(s, ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN)))
    with pytest.raises(ConfigError, match="point fit"):
        bootstrap_channels(s, bootstrap_channels(s, fit, n_draws=10))
    other = bc.summarize(simulate_toy(800, random_state=6, annotators=["x", "y", "z"]))
    with pytest.raises(DataError, match="annotators"):
        bootstrap_channels(other, fit)


def test_bootstrap_of_the_one_em_with_three_classes_matches_its_sampling_spread():
    """C = 3 through the same EM: sd over 40 independent samples vs the bootstrap sd.

    Tolerance: the Monte Carlo sd from 40 samples has a relative SE of about
    1 / sqrt(2 * 39) = 11%, the bootstrap sd (200 draws, averaged over 4 samples) about
    5% more; allow 50% (about 4 SEs). Every entry is compared, so the worst of 27 ratios
    is checked against a bound wider than one entry's 4 SEs would need.
    """
    from bayescal.simulate import simulate_multiclass

    def summary(seed):
        return bc.summarize(simulate_multiclass(1500, 3, random_state=seed), groups="all")

    point = [bc.fit_channels(summary(100 + i)).confusion.values[0] for i in range(40)]
    mc_sd = np.std(point, axis=0, ddof=1)
    boots = []
    for i in range(4):
        s = summary(900 + i)
        fit = bc.fit_channels(s)
        boot = bootstrap_channels(s, fit, n_draws=200, random_state=i)
        assert boot.layout == "multiclass" and boot.n_draws == 200
        assert boot.method == "dawid_skene_em (bootstrap)"
        boots.append(boot.confusion.values.std(axis=0))
    np.testing.assert_allclose(np.mean(boots, axis=0), mc_sd, rtol=0.5)
