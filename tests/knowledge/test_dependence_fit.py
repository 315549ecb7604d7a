"""Fitting the dependence model on data with a strongly dependent pair: the channels are
recovered (the independence model's are not), the predictive check flags the pair under
independence only, LOO prefers the dependence model, and the pattern-count LOO equals ArviZ's
on the item-expanded log-likelihood."""

import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.dependence_fit import (
    _cell_loglik,
    compare_channel_models,
    pattern_loo,
)
from bayescal.bayes.fit import fit_channels_dependence
from bayescal.errors import ConfigError, IdentificationError
from bayescal.simulate.dependent import simulate_dependent

FP, FN = (0.08, 0.13, 0.18, 0.10), (0.16, 0.11, 0.06, 0.12)
SETTINGS = {"draws": 300, "tune": 300, "chains": 2, "cores": 1}


@pytest.fixture(scope="module")
def fits():
    data, truth = simulate_dependent(
        3000, loading=2.0, groups=[(0, 1)], fp=FP, fn=FN, random_state=11
    )
    summary = summarize(data, groups=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dep = fit_channels_bayes(summary, dependence="a1:a2", random_state=1, **SETTINGS)
        ind = fit_channels_bayes(summary, random_state=1, **SETTINGS)
    return truth, dep, ind


def test_result_layout(fits):
    _, dep, _ = fits
    assert dep.method == "bayes_dependence"
    assert dep.diagnostics["dependence_groups"] == [["a1", "a2"]]
    post = dep.idata.posterior
    assert post["loading"].dims == ("chain", "draw", "dependent_annotator", "class")
    assert list(post["correlation"]["pair"].values) == ["a1~a2"]
    for group in ("sample_stats", "log_likelihood", "observed_data", "posterior_predictive"):
        assert group in dep.idata.groups()
    assert (
        dep.idata.posterior_predictive["counts"].shape[2:]
        == dep.idata.observed_data["counts"].shape
    )
    # 2 x 300 draws: R-hat within Monte Carlo noise of 1, no divergences
    assert dep.diagnostics["rhat_max"] < 1.03 and dep.diagnostics["divergences"] == 0


def test_dependence_model_recovers_the_channels_the_independence_model_misses(fits):
    truth, dep, ind = fits
    err_dep = np.abs(np.r_[dep.a.mean("draw") - truth.a, dep.b.mean("draw") - truth.b]).max()
    err_ind = np.abs(np.r_[ind.a.mean("draw") - truth.a, ind.b.mean("draw") - truth.b]).max()
    assert err_ind > 0.03 and err_dep < 0.5 * err_ind, (err_dep, err_ind)
    # the truth inside the central 99% posterior interval of every marginal channel
    for name, true in (("a", truth.a), ("b", truth.b)):
        lo, hi = getattr(dep, name).quantile([0.005, 0.995], "draw").values
        assert np.all((lo <= true) & (true <= hi)), (name, lo, hi, true)
    # the pair's latent correlation (0.8) is found
    rho = dep.idata.posterior["correlation"].mean(("chain", "draw")).values
    assert np.all(np.abs(rho - 0.8) < 0.15), rho


def test_predictive_check_fails_under_independence_and_passes_under_dependence(fits):
    _, dep, ind = fits
    assert any("predictive check" in w for w in ind.warnings), ind.warnings
    assert max(ind.diagnostics["ppc_tail_prob"].values()) < 0.01
    # the independence model explains a1~a2 by making a1, a2 near-perfect, so the pair check
    # flags the *other* pair (a3~a4) as agreeing too often: it detects, it does not localise
    assert ind.diagnostics["ppc_pair_tail_prob"]["a3~a4"] < 0.01
    assert not any("predictive check" in w for w in dep.warnings), dep.warnings
    assert min(dep.diagnostics["ppc_tail_prob"].values()) > 0.01
    assert min(dep.diagnostics["ppc_pair_tail_prob"].values()) > 0.01


def test_loo_prefers_the_dependence_model(fits):
    _, dep, ind = fits
    table = compare_channel_models({"independent": ind, "dependent": dep})
    assert table.index[0] == "dependent"
    assert table.loc["independent", "elpd_diff"] > 4 * table.loc["independent", "dse"]


@pytest.mark.parametrize("which", [1, 2])
def test_pattern_loo_equals_arviz_on_items(fits, which):
    fit = fits[which]
    ours = pattern_loo(fit)
    ll, n, _ = _cell_loglik(fit)
    items = np.repeat(ll, n, axis=-1)
    idata = az.InferenceData(
        posterior=xr.Dataset({"x": (("chain", "draw"), np.zeros(items.shape[:2]))}),
        log_likelihood=xr.Dataset({"y": (("chain", "draw", "item"), items)}),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = az.loo(idata, pointwise=True)
    # same PSIS per item; sums of 3000 terms in another order
    for key in ("elpd_loo", "se", "p_loo"):
        assert abs(ours[key] - ref[key]) < 1e-8 * abs(ref["elpd_loo"]), key
    np.testing.assert_allclose(ours["loo_i"].values, ref["loo_i"].values, rtol=1e-12)
    assert ours["n_data_points"] == ref["n_data_points"] == 3000


def test_fit_refuses_unidentified_designs_and_bad_pairs():
    data, _ = simulate_dependent(300, loading=1.0, fp=FP[:3], fn=FN[:3], random_state=3)
    with pytest.raises(IdentificationError, match="more score groups"):
        fit_channels_dependence(data, "all", "marginal", groups=1, draws=10, tune=10)
    with pytest.raises(ConfigError, match="itself"):
        fit_channels_dependence(data, "a1:a1", groups=5, draws=10, tune=10)
    # C > 2 with dependence= is the C-class dependence model now (issue 21 item 2: one fit
    # function); its refusals and fits: tests/multiclass/test_multiclass_dependence_fit.py


def test_compare_refuses_fits_on_different_data(fits):
    _, dep, _ = fits
    data, _ = simulate_dependent(3000, loading=0.0, groups=[(0, 1)], fp=FP, fn=FN, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = fit_channels_bayes(
            data, groups=5, draws=20, tune=20, chains=1, check=False, posterior_predictive=False
        )
    with pytest.raises(ConfigError, match="different data"):
        compare_channel_models({"a": dep, "b": other})
