"""Priors from earlier audits (issue 15, item 2): from_fit, the posterior file, prior-data
conflict and the sequential-update check."""

import numpy as np
import pytest
import xarray as xr
from gold_data import gold_data

from bayescal import Annotations, summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.conflict import prior_conflict
from bayescal.bayes.posterior_file import load_channel_posterior
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels.result import ChannelFit
from bayescal.errors import BayescalWarning, ConfigError
from bayescal.simulate import simulate_toy

FIT = {"draws": 1000, "tune": 500, "chains": 2, "cores": 1, "posterior_predictive": False}


def _beta_fit(n=40_000, seed=0):
    rng = np.random.default_rng(seed)
    return ChannelFit.from_draws(
        np.column_stack([rng.beta(20, 180, n), rng.beta(6, 30, n)]),
        np.column_stack([rng.beta(160, 40, n), rng.beta(40, 10, n)]),
        rng.beta(50, 50, (n, 1)),
        annotators=["ann", "bob"],
        groups=["all"],
        group_counts=[100],
        method="bayes_marginal",
    )


def test_from_fit_recovers_beta_parameters_and_discounts_drift():
    fit = _beta_fit()
    p = ChannelPriors.from_fit(fit, inflate=1.0, prevalence=True)
    # alpha + beta = m(1-m)/v - 1 from 40 000 draws: the sample variance has relative sd
    # sqrt(2/40000) = 0.7%, so 4 sd = 3% on alpha + beta
    np.testing.assert_allclose(p.a.alpha, [20, 6], rtol=0.03)
    np.testing.assert_allclose(p.a.beta, [180, 30], rtol=0.03)
    np.testing.assert_allclose(p.b.alpha, [160, 40], rtol=0.03)
    np.testing.assert_allclose(p.prevalence.alpha, [50], rtol=0.03)
    half = ChannelPriors.from_fit(fit)  # default inflate = 2: half the weight, same means
    np.testing.assert_allclose(half.a.alpha, p.a.alpha / 2)
    np.testing.assert_allclose(half.a.mean, p.a.mean)
    assert half.prevalence.alpha == 1.0  # prevalences are not carried over by default
    # the new data's annotators, in its order; an unknown one keeps the default Beta(2, 2)
    with pytest.warns(BayescalWarning, match=r"\['cy'\] are not in it"):
        q = ChannelPriors.from_fit(fit, inflate=1.0, annotators=["bob", "cy", "ann"])
    np.testing.assert_allclose(q.a.alpha, [p.a.alpha[1], 2.0, p.a.alpha[0]])
    assert q.origin["from_fit"] == ["bob", "ann"] and q.origin["default"] == ["cy"]


def test_from_fit_refusals_and_point_fits_with_standard_errors():
    fit = _beta_fit(200)
    with pytest.raises(ConfigError, match="inflate"):
        ChannelPriors.from_fit(fit, inflate=0.5)
    point = ChannelFit.from_point(
        [0.1, 0.2],
        [0.8, 0.9],
        [0.4],
        annotators=["ann", "bob"],
        groups=["all"],
        group_counts=[10],
        method="dawid_skene_em",
    )
    with pytest.raises(ConfigError, match="bootstrap_channels"):
        ChannelPriors.from_fit(point)
    p = ChannelPriors.from_fit(point, inflate=1.0, se={"a": [0.02, 0.05], "b": [0.03, 0.03]})
    # Beta with mean 0.1 and sd 0.02: alpha + beta = 0.09 / 0.0004 - 1 = 224
    assert p.a.alpha[0] == pytest.approx(22.4) and p.a.beta[0] == pytest.approx(201.6)
    with pytest.raises(ConfigError, match="variance"):
        ChannelPriors.from_fit(point, se={"a": [0.4, 0.05], "b": [0.03, 0.03]})


def test_posterior_file_round_trip_and_refusals(tmp_path):
    fit = fit_channels_bayes(
        simulate_toy(800, random_state=0), groups=3, draws=50, tune=50, chains=2, check=False
    )
    path = tmp_path / "posterior.nc"
    fit.idata.to_netcdf(str(path))
    back = load_channel_posterior(path)
    np.testing.assert_allclose(back.a.values, fit.a.values)
    np.testing.assert_allclose(back.prevalence.values, fit.prevalence.values)
    assert back.annotators == fit.annotators and back.method == "grouped"
    # refusals: a folder, text, a netCDF file of another schema, wrong values
    for bad, why in (
        (tmp_path, "not a regular file"),
        (tmp_path / "missing.nc", "does not exist"),
    ):
        with pytest.raises(ConfigError, match=why):
            load_channel_posterior(bad)
    text = tmp_path / "t.nc"
    text.write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match="signature"):
        load_channel_posterior(text)
    other = tmp_path / "other.nc"
    xr.Dataset({"x": ("i", np.arange(3.0))}).to_netcdf(other)
    with pytest.raises(ConfigError, match="posterior"):
        load_channel_posterior(other)
    post = fit.idata.posterior.copy()
    post["a"] = post["a"] * 0 + 1.5
    bad_values = tmp_path / "bad.nc"
    post.to_netcdf(bad_values, group="posterior")
    with pytest.raises(ConfigError, match="outside"):
        load_channel_posterior(bad_values)
    with pytest.raises(ConfigError, match="^--priors .* is not a bayescal posterior.nc") as exc:
        load_channel_posterior(other)
    assert "\n" not in str(exc.value)  # one line on the command line


@pytest.fixture(scope="module")
def earlier():
    data = simulate_toy(4000, random_state=1)
    return fit_channels_bayes(summarize(data, groups=3), **FIT)


def test_prior_data_conflict_flags_only_the_drifted_annotator(earlier):
    priors = ChannelPriors.from_fit(earlier)
    same = summarize(simulate_toy(4000, random_state=2), groups=3)
    assert not any(v["conflict"] for v in prior_conflict(same, priors).values())
    # annotator a1 now flips 15% of its answers: a1 moves from (0.07, 0.85) to about
    # (0.19, 0.74), many prior sds away; the others are unchanged
    d = simulate_toy(4000, random_state=2)
    lab = d.labels.copy()
    rng = np.random.default_rng(0)
    flip = (rng.random(d.n_items) < 0.15) & ~np.isnan(lab[:, 0])
    lab[flip, 0] = 1 - lab[flip, 0]
    drifted = summarize(Annotations.from_arrays(d.score, lab), groups=3)
    out = prior_conflict(drifted, priors)
    assert out["a1"]["conflict"] and out["a1"]["p"] < 0.01
    assert not out["a2"]["conflict"] and not out["a3"]["conflict"]


def test_prior_data_conflict_uses_gold_items_for_a_single_annotator():
    d, _ = gold_data(3000, [0.1], [0.85], n_gold=600, seed=20)
    s = summarize(d, groups=1)
    fine = prior_conflict(s, {"a": (10, 90), "b": (85, 15)}, model="marginal")
    assert not fine["a1"]["conflict"] and set(fine["a1"]["statistics"]) == {"gold_0", "gold_1"}
    off = prior_conflict(s, {"a": (30, 70), "b": (85, 15)}, model="marginal")
    assert off["a1"]["conflict"]


def test_covariance_shift_follows_the_effective_draws():
    """``sqrt((D + 3) / (4 N_v))`` with N_v the effective size of the squared deviations:
    S for independent draws; for a Gaussian AR(1) with coefficient r the squares have
    autocorrelation r^(2k), so N_v = S (1 - r^2) / (1 + r^2) (0.22 S at r = 0.8). The ESS
    estimate's relative sd is a few % here (measured over seeds 0-5: ratios 0.95-1.00
    independent, 0.90-0.99 AR(1)), and the minimum over four columns sits below the typical
    column: 15% holds it."""
    from bayescal.bayes.priors import covariance_shift

    rng = np.random.default_rng(3)
    s, d = 20_000, 4
    shift, n_v = covariance_shift(rng.normal(size=(s, d)))
    assert abs(n_v / s - 1) < 0.15
    assert shift == pytest.approx(np.sqrt((d + 3) / (4 * n_v)))
    r, z = 0.8, np.zeros((s, d))
    z[0] = rng.normal(size=d)
    for t in range(1, s):
        z[t] = r * z[t - 1] + np.sqrt(1 - r**2) * rng.normal(size=d)
    _, n_v = covariance_shift(z)
    assert abs(n_v / (s * (1 - r**2) / (1 + r**2)) - 1) < 0.15
