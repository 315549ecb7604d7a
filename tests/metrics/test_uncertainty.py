import numpy as np
import pytest

import bayescal as bc
from bayescal import ChannelFit
from bayescal.errors import ConfigError
from bayescal.simulate import TOY_FN, TOY_FP, simulate_toy

A, B = np.array(TOY_FP), 1 - np.array(TOY_FN)


def posterior(sd, s=1000, seed=0, annotators=("a1", "a2", "a3")):
    rng = np.random.default_rng(seed)
    a = np.clip(A + rng.normal(0, sd, (s, 3)), 1e-4, 0.45)
    b = np.clip(B + rng.normal(0, sd, (s, 3)), 0.55, 1 - 1e-4)
    return ChannelFit.from_draws(
        a,
        b,
        np.full((s, 1), 0.5),
        annotators=list(annotators),
        groups=["all"],
        group_counts=[1],
        method="synthetic",
    )


def test_tight_posterior_channel_interval_collapses_to_point():
    d = simulate_toy(4000, "shifted", random_state=1)
    r = bc.nc_ece_interval(d, posterior(1e-9))
    lo, hi = r.interval("channel")
    assert hi - lo < 1e-6
    assert r.point == pytest.approx(bc.nc_ece(d, ChannelFit.known(A, B)).value, abs=1e-6)
    # with no channel uncertainty, full and evaluation-only agree in spread
    assert r.ece["full"].std() == pytest.approx(float(r.ece["evaluation"].std()), rel=0.15)


def test_bootstrap_sd_matches_analytic_standard_error_of_bin_moments():
    """The cell-level Bayesian bootstrap reproduces the sampling SE of each signed bin moment."""
    n = 20000
    d = simulate_toy(n, "nonlinear", random_state=2)
    known = ChannelFit.known(A, B)
    r = bc.nc_ece_interval(d, known, n_bootstrap=3000, bins=10)
    u = np.mean((d.labels - A) / (B - A), axis=1)
    idx = np.minimum((d.score * 10).astype(int), 9)
    boot_sd = r.moments["evaluation"].std("draw").values
    for i_bin in range(10):
        x = np.where(idx == i_bin, u - d.score, 0.0)
        analytic = x.std(ddof=1) / np.sqrt(n)
        # MC error of an sd from 3000 replicates ~1.3%; 10 bins: allow 6% (4.5 MC SEs)
        assert boot_sd[i_bin] == pytest.approx(analytic, rel=0.06), i_bin
    assert abs(float(r.ece["evaluation"].mean()) - r.point) < 0.01


def test_wider_posterior_gives_wider_full_interval_and_decomposition():
    d = simulate_toy(4000, "shifted", random_state=3)
    tight = bc.nc_ece_interval(d, posterior(0.002))
    wide = bc.nc_ece_interval(d, posterior(0.03))
    w = lambda r, s: np.subtract(*r.interval(s)[::-1])  # noqa: E731
    assert w(wide, "channel") > 3 * w(tight, "channel")
    assert w(wide, "full") > w(tight, "full")
    dec = wide.to_dict()
    assert set(dec["decomposition"]) == {"full", "channel", "evaluation"}
    assert dec["lo"] < dec["point"] < dec["hi"] and "mean" not in dec
    assert 0 <= wide.prob_above(0.05) <= 1


def test_curve_band_centres_on_corrected_bin_rates():
    d = simulate_toy(6000, "shifted", random_state=4)
    known = ChannelFit.known(A, B)
    r = bc.nc_ece_interval(d, known, n_bootstrap=2000)
    band = r.curve_band()
    target = bc.nc_ece(d, known).bin_mean_target.values[0]
    ok = ~np.isnan(target)
    np.testing.assert_allclose(band["mean"].values[ok], target[ok], atol=0.03)
    assert np.all(band["lo"].values[ok] <= band["hi"].values[ok])


def test_interval_argument_errors():
    d = simulate_toy(500, random_state=5)
    with pytest.raises(ConfigError, match="prob"):
        bc.nc_ece_interval(d, ChannelFit.known(A, B), prob=1.5)
    with pytest.raises(ConfigError, match="n_bootstrap"):
        bc.nc_ece_interval(d, posterior(0.01, s=50), n_bootstrap=10)
    r = bc.nc_ece_interval(d, posterior(0.01, s=50))
    with pytest.raises(ConfigError, match="source"):
        r.interval("everything")
    assert "NCECEPosterior" in repr(r)
