"""Bias-aware NC-ECE intervals, the calibration test, and the cell-level bootstrap kernels.

Known channels throughout (the toy's true rates), so every check is about the
evaluation sample only and its reference is exact: population bin moments and
per-bin variances by quadrature over the toy's score distribution.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

import bayescal as bc
import bayescal.metrics.binned as binned_module
from bayescal import ChannelFit
from bayescal.errors import ConfigError, IdentificationWarning
from bayescal.metrics.binned import corrected_pattern_targets, summary_cells
from bayescal.metrics.uncertainty import (
    bootstrap_bin_moments,
    calibration_p_value,
    nc_ece_interval,
    posterior_bin_rates,
)
from bayescal.simulate import (
    TOY_FN,
    TOY_FP,
    TOY_INTERCEPT,
    simulate_toy,
    toy_curve,
    toy_population_bin_moments,
)
from bayescal.summaries.summary import summarize_arrays

A, B = np.array(TOY_FP), 1 - np.array(TOY_FN)
KNOWN = ChannelFit.known(A, B)
EDGES = np.linspace(0, 1, 11)


def block_summaries(condition, n, reps, seed):
    """``reps`` independent samples of ``n`` toy items (one simulation, cut in blocks)."""
    d = simulate_toy(n * reps, condition, random_state=seed)
    return [
        summarize_arrays(
            d.score[i * n : (i + 1) * n],
            d.labels[i * n : (i + 1) * n],
            annotators=d.annotators,
            bin_edges=EDGES,
            group_edges=np.array([0.0, 1.0]),
        )
        for i in range(reps)
    ]


def population_bin_sd(condition, n):
    """Exact sd of each signed bin moment D_m at n items, known channels, equal weights.

    D_m is a mean of n iid X = (U - Z) 1(Z in B_m); E[X^2] = E[1_m ((Y - Z)^2 + V(Y))]
    with V(y) = Var(U | Y = y) = sum_j p_j (1 - p_j) / delta_j^2 / K^2, p_j = a_j + delta_j y.
    """
    m = toy_curve(condition)
    delta = B - A
    v = [np.sum((A + delta * y) * (1 - A - delta * y) / delta**2) / A.size**2 for y in (0, 1)]

    def integrand(x):
        z = special.expit(TOY_INTERCEPT - x)
        pdf = 0.5 * (stats.norm.pdf(x, -1, 1) + stats.norm.pdf(x, 1, 1))
        mz = float(m(z))
        return pdf * (mz * ((1 - z) ** 2 + v[1]) + (1 - mz) * (z**2 + v[0]))

    x_edges = TOY_INTERCEPT - special.logit(np.clip(EDGES, 1e-300, 1 - 1e-16))
    x_edges[0], x_edges[-1] = np.inf, -np.inf
    second = np.array(
        [integrate.quad(integrand, hi, lo, limit=200)[0] for lo, hi in zip(x_edges, x_edges[1:])]
    )
    d = toy_population_bin_moments(condition, EDGES)
    return np.sqrt((second - d**2) / n)


def spec4_abs_mean(d, s):
    """SPEC §4: E|D| for D ~ N(d, s^2)."""
    return s * np.sqrt(2 / np.pi) * np.exp(-(d**2) / (2 * s**2)) + d * (
        1 - 2 * stats.norm.cdf(-d / s)
    )


@pytest.fixture(scope="module")
def bias_runs():
    """Plug-in and bias-corrected NC-ECE over 300 samples of 1000 items, per condition."""
    out = {}
    for cond, seed in (("calibrated", 11), ("shifted", 12)):
        plug, bc_raw, bc_est = [], [], []
        for i, s in enumerate(block_summaries(cond, 1000, 300, seed)):
            r = nc_ece_interval(s, KNOWN, n_bootstrap=400, random_state=i)
            reps = r.moments["full"].values
            boot = np.abs(r.plugin_moments.values + reps - reps.mean(axis=0)).sum(axis=1)
            plug.append(r.plugin)
            bc_raw.append(2 * r.plugin - boot.mean())  # the estimate before its floor at 0
            bc_est.append(r.estimate)
        out[cond] = {k: np.array(v) for k, v in (("plugin", plug), ("raw", bc_raw), ("bc", bc_est))}
    return out


@pytest.mark.parametrize("cond", ["calibrated", "shifted"])
def test_plugin_bias_matches_spec4_formula(bias_runs, cond, record_property):
    """The plug-in's measured bias is the SPEC §4 inflation of |.| summed over bins."""
    d = toy_population_bin_moments(cond, EDGES)
    s = population_bin_sd(cond, 1000)
    theta = np.abs(d).sum()
    predicted = spec4_abs_mean(d, s).sum() - theta
    plug = bias_runs[cond]["plugin"]
    measured = plug.mean() - theta
    record_property("plugin_bias", (float(measured), float(predicted)))
    # 4 Monte Carlo SEs of a mean of 300, plus 10% for the normal approximation of
    # bins with ~30 items (the smallest toy bin at n = 1000)
    tol = 4 * plug.std(ddof=1) / np.sqrt(plug.size) + 0.1 * predicted
    assert measured == pytest.approx(predicted, abs=tol)


@pytest.mark.parametrize("cond", ["calibrated", "shifted"])
def test_debiased_estimate_bias_measured_against_spec4(bias_runs, cond, record_property):
    """Bias of the bootstrap bias correction, measured, against its SPEC §4 prediction.

    With D ~ N(d, s^2) and bootstrap deviations ~ N(0, s^2), E*|D + e| = s g(D / s)
    and E[s g(D / s)] = s sqrt(2) g(t / sqrt(2)), t = d / s, g(t) = E|t + N(0, 1)|; so
    E[2 |D| - E*|D + e|] = s (2 g(t) - sqrt(2) g(t / sqrt(2))). The reported estimate
    is that floored at 0; its bias is recorded, not asserted to vanish (it cannot:
    no unbiased estimator of |d| exists).
    """
    d = toy_population_bin_moments(cond, EDGES)
    s = population_bin_sd(cond, 1000)
    theta = np.abs(d).sum()
    t = d / s
    g = spec4_abs_mean(t, 1.0)
    g2 = spec4_abs_mean(t / np.sqrt(2), 1.0)
    predicted = np.sum(s * (2 * g - np.sqrt(2) * g2)) - theta
    raw = bias_runs[cond]["raw"]
    measured = raw.mean() - theta
    est_bias = bias_runs[cond]["bc"].mean() - theta
    plug_bias = bias_runs[cond]["plugin"].mean() - theta
    record_property("debiased_bias", (float(est_bias), float(measured), float(predicted)))
    tol = 4 * raw.std(ddof=1) / np.sqrt(raw.size) + 0.1 * abs(predicted) + 1e-3
    assert measured == pytest.approx(predicted, abs=tol)
    # the correction removes part of the plug-in's bias where there is one
    assert abs(est_bias) < 0.75 * plug_bias


def test_calibration_p_value_is_uniform_under_h0():
    """Calibrated toy, known channels: p-values ~ U(0, 1) (discrete steps of 1/(R+1))."""
    p = []
    for i, s in enumerate(block_summaries("calibrated", 1000, 200, 21)):
        table = summary_cells(s)
        pt = (A[None], B[None], np.full((1, 3), 1 / 3))
        reps = bootstrap_bin_moments(table, pt, pt, 400, np.random.default_rng(i))
        p.append(calibration_p_value(reps["point"], reps["evaluation"]))
    p = np.array(p)
    # binomial 3-SE band of the rejection rate at 0.10 for 200 samples: +-0.064
    assert abs(np.mean(p <= 0.10) - 0.10) <= 3 * np.sqrt(0.09 / 200)
    # Kolmogorov-Smirnov at the 0.1% level (1.95 / sqrt(200)) plus the 1/401 grid step
    ks = stats.kstest(p, "uniform").statistic
    assert ks < 1.95 / np.sqrt(200) + 1 / 401


def test_calibrated_interval_reaches_zero_and_miscalibrated_does_not():
    cal = simulate_toy(2000, "calibrated", random_state=3)
    r = nc_ece_interval(cal, KNOWN, random_state=0)
    lo, hi = r.interval()
    assert r.p_value > 0.10 and lo == 0.0 and hi > 0
    assert lo <= r.estimate <= hi and r.estimate < r.plugin
    shifted = nc_ece_interval(simulate_toy(2000, "shifted", random_state=3), KNOWN, random_state=0)
    lo, hi = shifted.interval()
    assert shifted.p_value < 0.01 and 0 < lo <= shifted.estimate <= hi


def test_interval_covers_zero_on_calibrated_samples_at_the_nominal_rate():
    """Coverage of ECE = 0 equals 1 - the test's rejection rate; 120 samples of 1000."""
    covered = []
    for i, s in enumerate(block_summaries("calibrated", 1000, 120, 31)):
        lo, _ = nc_ece_interval(s, KNOWN, n_bootstrap=400, random_state=i).interval()
        covered.append(lo == 0.0)
    # nominal 0.90; binomial 3-SE lower band for 120 samples: 0.90 - 0.082
    assert np.mean(covered) >= 0.90 - 3 * np.sqrt(0.09 / 120)


@pytest.mark.parametrize("bad", [0, -5, "x", 2.5, True, 99])
def test_n_bootstrap_must_be_a_whole_number_of_at_least_100(bad):
    d = simulate_toy(500, random_state=5)
    with pytest.raises(ConfigError, match="n_bootstrap"):
        nc_ece_interval(d, KNOWN, n_bootstrap=bad)


def test_prob_and_point_channels_are_checked():
    d = simulate_toy(500, random_state=5)
    for bad in (0, 1, "0.9", True):
        with pytest.raises(ConfigError, match="prob"):
            nc_ece_interval(d, KNOWN, prob=bad)
    r = nc_ece_interval(d, KNOWN)
    with pytest.raises(ConfigError, match="prob"):
        r.interval(prob=1.5)
    two = ChannelFit.from_draws(
        np.tile(A, (2, 1)),
        np.tile(B, (2, 1)),
        np.full((2, 1), 0.5),
        annotators=d.annotators,
        groups=["all"],
        group_counts=[500],
        method="two",
    )
    with pytest.raises(ConfigError, match="one draw"):
        nc_ece_interval(d, two, point_channels=two)


def test_result_keys_labels_and_point_channel_wording():
    d = simulate_toy(3000, "shifted", random_state=7)
    r = nc_ece_interval(d, KNOWN)
    out = r.to_dict()
    for key in (
        "point",
        "plugin",
        "lo",
        "hi",
        "prob",
        "p_value",
        "interval_method",
        "decomposition",
    ):
        assert key in out
    assert out["point"] == r.estimate and out["plugin"] == r.plugin == r.point == r.plugin_of()
    assert "mean" not in out  # the resampled plug-in's mean is not a reported number
    assert out["plugin"] == pytest.approx(bc.nc_ece(d, KNOWN).value, abs=1e-12)
    assert not out["channel_uncertainty"] and "point channels" in out["interval_method"]
    assert out["sample_use"] == "split" and out["source"] == "full"
    assert "NCECEPosterior" in repr(r) and out["warnings"] == []


def test_reuse_reports_the_item_bootstrap_with_channels_held_fixed():
    d = simulate_toy(2000, "shifted", random_state=13)
    rng = np.random.default_rng(1)
    post = ChannelFit.from_draws(
        A + rng.normal(0, 0.01, (500, 3)), np.minimum(B + rng.normal(0, 0.01, (500, 3)), 0.99),
        np.full((500, 1), 0.5), annotators=d.annotators, groups=["all"], group_counts=[2000],
        method="posterior",
    )  # fmt: skip
    split = nc_ece_interval(d, post, random_state=2)
    reuse = nc_ece_interval(d, post, sample_use="reuse", random_state=2)
    assert reuse.source == "evaluation" and split.source == "full"
    assert reuse.interval() == reuse.interval("evaluation") == split.interval("evaluation")
    assert reuse.p_value == calibration_p_value(
        reuse.plugin_moments.values, reuse.moments["evaluation"].values
    )
    assert "fitted on these items" in reuse.interval_method
    # the reliability band follows the reported source: no channel draws in reuse
    spread = {k: float(r.curve["corrected_rate"].std("draw").mean()) for k, r in (
        ("split", split), ("reuse", reuse))}  # fmt: skip
    assert spread["reuse"] < spread["split"]
    assert reuse.to_dict()["lo"] == reuse.interval()[0]
    with pytest.raises(ConfigError, match="sample_use"):
        nc_ece_interval(d, post, sample_use="crossfit")


def test_channel_posterior_flows_into_interval_and_test():
    """A wide channel posterior widens the full interval and weakens the test."""
    d = simulate_toy(3000, "calibrated", random_state=8)
    rng = np.random.default_rng(0)
    a = np.clip(A + rng.normal(0, 0.03, (1000, 3)), 1e-3, 0.45)
    b = np.clip(B + rng.normal(0, 0.03, (1000, 3)), 0.55, 1 - 1e-3)
    post = ChannelFit.from_draws(
        a, b, np.full((1000, 1), 0.5), annotators=d.annotators, groups=["all"],
        group_counts=[3000], method="wide",
    )  # fmt: skip
    r = nc_ece_interval(d, post, point_channels=KNOWN)
    assert r.info["channel_uncertainty"] and r.to_dict()["channel_uncertainty"]
    full, ev = r.interval("full"), r.interval("evaluation")
    assert full[1] - full[0] > ev[1] - ev[0]
    p_eval = calibration_p_value(r.plugin_moments.values, r.moments["evaluation"].values)
    assert r.p_value > p_eval


def test_cell_bootstrap_equals_dense_reference():
    """Same Dirichlet draws as the dense (replicate, bin, pattern) computation."""
    s = bc.summarize(simulate_toy(800, "nonlinear", random_state=9, missing=0.2), groups=1)
    rng = np.random.default_rng(1)
    a = A + rng.normal(0, 0.01, (300, 3))
    b = B + rng.normal(0, 0.01, (300, 3))
    w = np.full((300, 3), 1 / 3)
    table = summary_cells(s)
    pt = (A[None], B[None], w[:1])
    reps = bootstrap_bin_moments(table, (a, b, w), pt, 300, np.random.default_rng(2))

    counts = s.binary.bin_pattern_counts.astype(float)
    zsum = s.binary.bin_pattern_score_sum
    zbar = np.divide(zsum, counts, out=np.zeros_like(zsum), where=counts > 0)
    flat = counts.ravel()
    nz = np.flatnonzero(flat)
    g = np.random.default_rng(2).standard_gamma(flat[nz], size=(300, nz.size))
    g /= g.sum(axis=1, keepdims=True)
    wts = np.zeros((300, flat.size))
    wts[:, nz] = g
    wts = wts.reshape((300,) + counts.shape)
    u = corrected_pattern_targets(s.states, a, b, w)
    u0 = corrected_pattern_targets(s.states, *pt)[0]
    full = np.einsum("rmp,rmp->rm", wts, u[:, None, :] - zbar[None])
    ev = np.einsum("rmp,mp->rm", wts, u0[None, :] - zbar)
    channel = (u @ counts.T - zsum.sum(axis=1)) / counts.sum()
    np.testing.assert_allclose(reps["full"], full, atol=1e-13)
    np.testing.assert_allclose(reps["evaluation"], ev, atol=1e-13)
    np.testing.assert_allclose(reps["channel"], channel, atol=1e-13)
    np.testing.assert_allclose(reps["point"], (counts @ u0 - zsum.sum(axis=1)) / flat.sum())


def test_chunking_does_not_change_results(monkeypatch):
    s = bc.summarize(simulate_toy(1500, "shifted", random_state=10), groups=1)
    whole = nc_ece_interval(s, KNOWN, n_bootstrap=300, random_state=4)
    monkeypatch.setattr(binned_module, "CHUNK_ELEMENTS", 97)
    chunked = nc_ece_interval(s, KNOWN, n_bootstrap=300, random_state=4)
    for src in ("full", "evaluation", "channel"):
        np.testing.assert_allclose(chunked.moments[src].values, whole.moments[src].values)
    assert chunked.interval() == whole.interval() and chunked.p_value == whole.p_value


def test_memory_does_not_grow_with_draws_times_patterns():
    """K = 9 (19,683 patterns), 2,000 draws: a dense draws x patterns array would be 315 MB."""
    rng = np.random.default_rng(0)
    n, k, s_draws = 400, 9, 2000
    z = rng.random(n)
    y = rng.random(n) < z
    lab = (rng.random((n, k)) < np.where(y[:, None], 0.8, 0.2)).astype(np.float32)
    names = [f"r{j}" for j in range(k)]
    s = summarize_arrays(z, lab, annotators=names, bin_edges=EDGES, group_edges=EDGES[::5])
    post = ChannelFit.from_draws(
        0.2 + rng.normal(0, 0.01, (s_draws, k)), 0.8 + rng.normal(0, 0.01, (s_draws, k)),
        np.full((s_draws, 1), 0.5), annotators=names, groups=["all"], group_counts=[n],
        method="synthetic",
    )  # fmt: skip
    tracemalloc.start()
    try:
        bc.nc_ece(s, post)
        nc_ece_interval(s, post)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a few working arrays of CHUNK_ELEMENTS float64 (16 MiB each) at a time
    assert peak < 100e6


def test_too_many_bins_warn_with_a_suggestion_and_absurd_bins_are_refused():
    d = simulate_toy(3000, "shifted", random_state=12)
    with pytest.warns(IdentificationWarning, match="use at most about") as caught:
        r = bc.nc_ece(d, KNOWN, bins=500)
    assert "too many bins" in r.info["warnings"][0]
    assert caught[0].filename == __file__  # the warning points at the caller's line
    with pytest.warns(IdentificationWarning, match="too many bins") as caught:
        iv = nc_ece_interval(d, KNOWN, bins=500, n_bootstrap=200)
    assert iv.to_dict()["warnings"] and caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentificationWarning)
        assert bc.nc_ece(d, KNOWN).info["warnings"] == []
    with pytest.raises(ConfigError, match="limit of 1000"):
        bc.nc_ece(d, KNOWN, bins=100000)


# ---------------------------------------------------------------- the posterior route (joint)
def channel_draws(sd, s, seed, annotators, n=1):
    """Synthetic channel posterior: the toy's true rates plus N(0, sd) noise per draw."""
    rng = np.random.default_rng(seed)
    return ChannelFit.from_draws(
        np.clip(A + rng.normal(0, sd, (s, 3)), 1e-4, 0.45),
        np.clip(B + rng.normal(0, sd, (s, 3)), 0.55, 1 - 1e-4),
        np.full((s, 1), 0.5),
        annotators=list(annotators),
        groups=["all"],
        group_counts=[n],
        method="synthetic posterior",
    )


def test_posterior_bin_rates_are_draws_of_the_exact_conditional_posterior():
    """With fixed channels every bin's rate has the density
    prod_c (r e^{l1_c} + (1 - r) e^{l0_c})^{n_c} on (0, 1); its mean and sd by quadrature.

    Tolerances: the mean of R = 4000 draws has Monte Carlo SE sd / sqrt(R), allowed 4 SE;
    the sd's relative SE is about 1 / sqrt(2 R) = 0.011 (near-normal draws), allowed 5%.
    """
    d = simulate_toy(1500, "shifted", random_state=3)
    s = summarize_arrays(d.score, d.labels, annotators=d.annotators, bin_edges=EDGES)
    table = summary_cells(s)
    r_draws = 4000
    a, b = np.tile(A, (50, 1)), np.tile(B, (50, 1))
    rates = posterior_bin_rates(table, a, b, r_draws, np.random.default_rng(0))
    i1, i0 = (table.states == 1).astype(float), (table.states == 0).astype(float)
    l0 = (np.log(A) @ i1.T + np.log1p(-A) @ i0.T)[table.pattern]
    l1 = (np.log(B) @ i1.T + np.log1p(-B) @ i0.T)[table.pattern]
    for m in range(10):
        sel = table.bin == m
        if not sel.any():
            assert np.isnan(rates[:, m]).all()
            continue

        def logp(r, sel=sel):
            cell = np.logaddexp(np.log(r) + l1[sel], np.log1p(-r) + l0[sel])
            return float(np.sum(table.count[sel] * cell))

        grid = np.linspace(1e-6, 1 - 1e-6, 20001)
        top = max(logp(x) for x in grid[::200])

        def moment(k, logp=logp, top=top):
            return integrate.quad(lambda r: r**k * np.exp(logp(r) - top), 0, 1, limit=400,
                                  points=[0.05 * i for i in range(1, 20)])[0]  # fmt: skip

        z = moment(0)
        mean = moment(1) / z
        sd = np.sqrt(moment(2) / z - mean**2)
        assert rates[:, m].mean() == pytest.approx(mean, abs=4 * sd / np.sqrt(r_draws)), m
        assert rates[:, m].std() == pytest.approx(sd, rel=0.05), m


def test_joint_route_centres_on_the_population_ece_and_carries_channel_uncertainty():
    """At 20,000 items the joint estimate is within 4 of its own posterior sd (plus the
    |.| bias bound sum_m s_m sqrt(2/pi), tiny here since every bin is far from 0) of the
    exact population binned ECE; a wider channel posterior widens the joint interval."""
    d = simulate_toy(20000, "shifted", random_state=4)
    pop = float(np.abs(toy_population_bin_moments("shifted", EDGES)).sum())
    tight = nc_ece_interval(
        d, channel_draws(0.002, 1000, 1, d.annotators), sample_use="joint", random_state=1
    )
    wide = nc_ece_interval(
        d, channel_draws(0.03, 1000, 1, d.annotators), sample_use="joint", random_state=1
    )
    assert tight.source == "posterior" and "latent-class posterior" in tight.interval_method
    sd_theta = float(tight.ece["posterior"].std())
    s_m = tight.moments["posterior"].std("draw").values
    bias_bound = float(np.sum(s_m) * np.sqrt(2 / np.pi))
    assert abs(tight.estimate - pop) < 4 * sd_theta + bias_bound
    lo, hi = tight.interval()
    assert lo <= tight.estimate <= hi and lo < pop < hi
    width = {k: np.subtract(*r.interval()[::-1]) for k, r in (("tight", tight), ("wide", wide))}
    assert width["wide"] > 1.5 * width["tight"]
    # the posterior route's rates agree with the corrected labels at the true channels within
    # 4 posterior sd per bin (both are consistent for P(Y = 1 | bin) under the model)
    band = tight.curve_band()
    corrected = bc.nc_ece(d, KNOWN).bin_mean_target.values[0]
    sd_rate = tight.curve["corrected_rate"].std("draw").values
    np.testing.assert_array_less(np.abs(band["mean"].values - corrected), 4 * sd_rate + 0.01)


def test_joint_estimate_lies_in_its_interval_and_every_field_is_what_it_says():
    for cond, seed in (("calibrated", 5), ("shifted", 6), ("nonlinear", 7)):
        d = simulate_toy(600, cond, random_state=seed)
        r = nc_ece_interval(d, channel_draws(0.02, 400, seed, d.annotators), sample_use="joint")
        out = r.to_dict()
        assert out["lo"] <= out["point"] <= out["hi"], cond
        assert out["point"] == r.estimate and out["plugin"] == r.plugin_of("posterior")
        assert out["plugin"] == pytest.approx(
            float(np.abs(r.moments["posterior"].mean("draw")).sum()), abs=1e-12
        )
        assert out["source"] == "posterior" and out["sample_use"] == "joint"
        assert set(out["decomposition"]) == {"full", "channel", "evaluation", "posterior"}


def test_joint_needs_a_channel_posterior():
    d = simulate_toy(500, random_state=5)
    with pytest.raises(ConfigError, match="point fit"):
        nc_ece_interval(d, KNOWN, sample_use="joint")
    r = nc_ece_interval(d, KNOWN, sample_use="reuse")
    with pytest.raises(ConfigError, match="posterior source needs"):
        r.interval("posterior")


@pytest.mark.parametrize(("n_bootstrap", "why"), [(99, "at least 100"), (10**9, "at most 100,000")])
def test_replicate_counts_outside_the_limits_are_refused_before_any_work(n_bootstrap, why):
    """10^9 replicates asked numpy for 75 GB (MemoryError); 99 leaves the tail quantiles to
    a handful of replicates."""
    from bayescal.simulate import simulate_toy

    s = bc.summarize(simulate_toy(200, random_state=0))
    fit = ChannelFit.known([0.1] * 3, [0.9] * 3)
    with pytest.raises(ConfigError, match=f"n_bootstrap must be {why}"):
        bc.nc_ece_interval(s, fit, n_bootstrap=n_bootstrap)
