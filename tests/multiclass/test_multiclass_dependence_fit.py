"""Fitting the multiclass dependence model: loadings recovered, the pair-agreement check
before/after, LOO against the independence model (one small data set, two short fits)."""

import warnings

import numpy as np
import pytest

from bayescal.bayes.dependence_fit import (
    compare_multiclass_channel_models,
    multiclass_dependence_ppc,
    multiclass_pattern_loo,
)
from bayescal.bayes.fit import fit_channels_bayes
from bayescal.simulate.dependent import simulate_multiclass_dependent


@pytest.fixture(scope="module")
def fits():
    # a strongly dependent pair next to two conditionally independent annotators (s = 2,
    # latent correlation 0.8): the design the model card calls well identified
    data, truth = simulate_multiclass_dependent(
        2000, loading=2.0, groups=[(0, 1)], n_annotators=4, random_state=0
    )
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: R-hat / ESS warnings expected
        for name, dep in (("independent", None), ("dependent", "a1:a2")):
            out[name] = fit_channels_bayes(
                data, dependence=dep, draws=120, tune=150, chains=2, random_state=1
            )
    return data, truth, out


def test_dependence_fit_recovers_the_loadings_and_keeps_marginal_confusions(fits):
    _, truth, out = fits
    dep = out["dependent"]
    assert dep.method == "bayes_multiclass_dependence"
    assert dep.diagnostics["dependence_groups"] == [["a1", "a2"]]
    loading = dep.idata.posterior["loading"]
    assert loading.dims[2:] == ("dependent_annotator", "class")
    # truth 2 for both annotators and every class; 2000 items put the posterior sd near 0.3
    # (measured), so 1.2-3.2 is a wide band that still excludes independence (s = 0)
    mean = loading.mean(("chain", "draw")).values
    assert np.all((mean > 1.2) & (mean < 3.2))
    corr = dep.idata.posterior["correlation"].sel(pair="a1~a2").mean(("chain", "draw"))
    assert np.all(corr.values > 0.5)
    # marginal confusions: the dependence model's error is smaller than the independence one's
    err = {
        name: np.abs(f.confusion.values.mean(0) - truth.confusion).max() for name, f in out.items()
    }
    assert err["dependent"] < err["independent"]


def test_pair_check_flags_the_pair_before_and_passes_after(fits):
    _, _, out = fits
    before, msgs = multiclass_dependence_ppc(out["independent"])
    after, msgs_after = multiclass_dependence_ppc(out["dependent"])
    assert float(before["pair_agreement_tail"].sel(pair="a1~a2")) < 0.01
    assert msgs and "a1~a2 agree more often" in msgs[0]
    # family-wise 5% over 6 pairs and 3 groups: nothing flagged once the pair is modelled
    assert not msgs_after
    assert float(after["pair_agreement_tail"].sel(pair="a1~a2")) > 0.05


def test_loo_prefers_the_dependence_model(fits):
    data, _, out = fits
    loo = multiclass_pattern_loo(out["dependent"])
    assert loo["n_data_points"] == data.n_items
    table = compare_multiclass_channel_models(out)
    assert table.index[0] == "dependent"
    # the difference is many standard errors (measured ~14 SE at 3000 items)
    assert table.loc["independent", "elpd_diff"] > 4 * table.loc["independent", "dse"]
