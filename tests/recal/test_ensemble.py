"""Posterior maps: per-draw fits equal single fits, bands, thinning, evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from recal_helpers import TRUE_A, TRUE_B, tight_posterior

from bayescal import ChannelFit, fit_channels, oracle_ece
from bayescal.errors import ConfigError, NotFittedError
from bayescal.recal import (
    HistogramMap,
    PlattMap,
    PosteriorMap,
    ScoreBinMap,
    TemperatureMap,
    corrected_targets,
    evaluate_map,
    fit_posterior_map,
    thin_draws,
)


def wide_posterior(n_draws, seed=0, groups=False):
    rng = np.random.default_rng(seed)
    a = np.clip(TRUE_A + 0.02 * rng.standard_normal((n_draws, 2)), 0.001, 0.4)
    b = np.clip(TRUE_B + 0.03 * rng.standard_normal((n_draws, 2)), 0.6, 0.999)
    if groups:
        prev = np.clip([0.2, 0.8] + 0.03 * rng.standard_normal((n_draws, 2)), 0.01, 0.99)
        return ChannelFit.from_draws(
            a,
            b,
            prev,
            annotators=["a1", "a2"],
            groups=["[0, 0.5744)", "[0.5744, 1]"],
            group_counts=[10, 10],
            method="synthetic",
            group_edges=np.array([0, 0.5744, 1]),
        )
    return ChannelFit.from_draws(
        a,
        b,
        np.full((n_draws, 1), 0.5),
        annotators=["a1", "a2"],
        groups=["all"],
        group_counts=[1],
        method="synthetic",
    )


def test_vectorised_histogram_equals_loop(gauss):
    post = wide_posterior(40)
    pm = fit_posterior_map("histogram", gauss, post, map_params={"bins": 17})
    targets = corrected_targets(gauss, post)
    for d in range(post.n_draws):
        single = HistogramMap(bins=17).fit(targets.score, targets.values(d))
        np.testing.assert_allclose(
            pm.params_["bin_value"].values[d], single.bin_values_, rtol=0, atol=1e-13
        )
        np.testing.assert_array_equal(pm.bin_edges_, single.bin_edges_)
    m = pm.draw_map(5)
    np.testing.assert_allclose(m.predict(gauss.score), pm.predict_draws(gauss.score)[5])


@pytest.mark.parametrize("family, cls", [("temperature", TemperatureMap), ("platt", PlattMap)])
def test_parametric_per_draw_equals_single_fit(gauss, family, cls):
    post = wide_posterior(12, seed=1)
    pm = fit_posterior_map(family, gauss, post)
    assert pm.converged_ and pm.n_draws_ == 12
    targets = corrected_targets(gauss, post)
    name = "inverse_temperature" if family == "temperature" else "slope"
    for d in range(12):
        single = cls().fit(targets.score, targets.values(d))
        got = pm.params_[name].values[d]
        want = single.inverse_temperature_ if family == "temperature" else single.slope_
        assert got == pytest.approx(want, abs=1e-7)
        assert pm.params_["loss"].values[d] == pytest.approx(single.loss_, abs=1e-12)
    np.testing.assert_allclose(
        pm.draw_map(3).predict(gauss.score), pm.predict_draws(gauss.score)[3]
    )


@pytest.mark.parametrize("family", ["temperature", "platt", "histogram"])
def test_band_contains_point_map_when_posterior_is_tight(gauss, known, family):
    post = tight_posterior(300, scale=1e-4)
    pm = fit_posterior_map(
        family, gauss, post, map_params={"bins": 15} if family == "histogram" else None
    )
    point = {
        "temperature": TemperatureMap(),
        "platt": PlattMap(),
        "histogram": HistogramMap(bins=15),
    }[family]
    point.fit_corrected(gauss, known)
    z = np.linspace(0, 1, 401)
    lo, hi = pm.predict_interval(z, prob=0.9)
    p = point.predict(z)
    # to first order each prediction is linear in the channels, so with a symmetric tight
    # posterior the point map is the band's median; 1e-7 covers second-order terms
    # (scale**2 = 1e-8) where the first-order slope vanishes (for example projected bins)
    assert np.all(lo <= p + 1e-7) and np.all(p <= hi + 1e-7)
    assert np.max(hi - lo) < 1e-2
    np.testing.assert_allclose(pm.predict(z), p, atol=1e-2)


def test_band_widens_with_channel_uncertainty(gauss):
    z = np.linspace(0.05, 0.95, 50)
    widths = []
    for scale in (1e-3, 2e-2):
        rng = np.random.default_rng(0)
        a = TRUE_A + scale * rng.random((200, 2))
        b = TRUE_B - scale * rng.random((200, 2))
        post = ChannelFit.from_draws(
            a,
            b,
            np.full((200, 1), 0.5),
            annotators=["a1", "a2"],
            groups=["all"],
            group_counts=[1],
            method="s",
        )
        lo, hi = fit_posterior_map("platt", gauss, post).predict_interval(z)
        widths.append(np.mean(hi - lo))
    assert widths[1] > 5 * widths[0]


def test_thinning_and_all_draws_for_histogram(gauss):
    assert thin_draws(4000, 200).size == 200
    idx = thin_draws(4000, 200)
    assert idx[0] == 0 and idx[-1] == 3999 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(thin_draws(5, None), np.arange(5))
    post = wide_posterior(250)
    pt = fit_posterior_map("temperature", gauss, post, max_draws=20)
    assert pt.n_draws_ == 20
    np.testing.assert_array_equal(pt.params_["draw"].values, thin_draws(250, 20))
    ph = fit_posterior_map("histogram", gauss, post, max_draws=20)
    assert ph.n_draws_ == 250


def test_score_bin_posterior_and_naive_single_draw(gauss):
    post = wide_posterior(100, groups=True)
    pm = fit_posterior_map("score_bin", gauss, post)
    assert pm.params_["group_value"].shape == (100, 2)
    np.testing.assert_allclose(pm.predict([0.1, 0.9]), post.prevalence.values.mean(axis=0))
    np.testing.assert_allclose(pm.draw_map(7).predict([0.1]), [post.prevalence.values[7, 0]])
    naive = fit_posterior_map("histogram", gauss, post, target="naive")
    assert naive.n_draws_ == 1


def test_posterior_map_refusals(gauss):
    with pytest.raises(NotFittedError):
        PosteriorMap().predict([0.5])
    with pytest.raises(ConfigError, match="family"):
        fit_posterior_map("isotonic", gauss, tight_posterior(3))
    with pytest.raises(ConfigError, match="max_draws"):
        fit_posterior_map("platt", gauss, tight_posterior(3), max_draws=0)
    with pytest.raises(ConfigError, match="channels"):
        fit_posterior_map("histogram", gauss, None)
    with pytest.raises(ConfigError, match="prob"):
        fit_posterior_map("histogram", gauss, tight_posterior(3)).predict_interval([0.5], prob=1.5)
    with pytest.raises(ConfigError, match="no parameter"):
        PosteriorMap().set_params(bins=3)


def test_evaluate_map_bins_on_recalibrated_score(gauss, known):
    g = HistogramMap(bins=15).fit_corrected(gauss, known)
    from bayescal.simulate import simulate_gaussian

    test = simulate_gaussian(4000, random_state=99)
    out = evaluate_map(g, test, channels=known, bins=16)
    ref = oracle_ece(test.with_score(g.predict(test.score)), bins=16)
    assert out["oracle"].value == pytest.approx(ref.value)
    assert set(out) == {"nc", "oracle", "soft_vote"}
    # a separate channel sample for evaluation (App. E.5) changes only NC-ECE
    other = fit_channels(
        simulate_gaussian(6000, random_state=7), "gmm", groups=[0, 0.5744, 1], n_starts=4
    )
    out2 = evaluate_map(g, test, channels=other, bins=16)
    assert out2["oracle"].value == out["oracle"].value and out2["nc"].value != out["nc"].value


def test_score_bin_map_matches_posterior_draw(gauss):
    post = wide_posterior(5, groups=True)
    m = ScoreBinMap(channels=post, draw=4).fit()
    np.testing.assert_allclose(m.predict([0.2, 0.7]), post.prevalence.values[4])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:R-hat:bayescal.errors.ConvergenceWarning")
def test_real_posterior_from_pymc(gauss):
    bayes = pytest.importorskip("bayescal.bayes")
    from bayescal.simulate import simulate_gaussian

    post = bayes.fit_channels_bayes(
        simulate_gaussian(3000, random_state=3),
        "grouped",
        groups=[0, 0.5744, 1],
        draws=300,
        tune=300,
        chains=2,
        cores=1,
        random_state=1,
        posterior_predictive=False,
    )
    assert post.n_draws == 600
    for family in ("histogram", "platt", "score_bin"):
        pm = fit_posterior_map(family, gauss, post, max_draws=50)
        z = np.linspace(0.01, 0.99, 99)
        lo, hi = pm.predict_interval(z)
        mean = pm.predict(z)
        assert np.all(lo <= mean + 1e-12) and np.all(mean <= hi + 1e-12)
        assert np.all(np.diff(mean) >= -1e-12) or family == "histogram"
