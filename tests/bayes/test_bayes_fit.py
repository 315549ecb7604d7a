"""Sampling tests on the session's reference fits (2 chains x 500 draws, one core)."""

import warnings

import numpy as np
import pytest
from bayes_reference import reference_summary

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes, prior_predictive
from bayescal.channels import constrained_gmm, dawid_skene_em, score_bin_em
from bayescal.errors import ConfigError, IdentificationError
from bayescal.simulate import simulate_toy

FAST = dict(draws=150, tune=150, chains=2, cores=1)


def test_result_shape_and_idata(grouped_fit):
    fit = grouped_fit
    s = reference_summary("grouped")
    assert fit.method == "bayes_grouped" and fit.status == "ok"
    assert fit.a.dims == ("draw", "annotator") and fit.a.sizes["draw"] == 1000
    assert fit.prevalence.dims == ("draw", "group")
    assert list(fit.prevalence["group"].values) == [
        str(g) for g in s.pattern_counts["group"].values
    ]
    np.testing.assert_array_equal(fit.group_counts.values, s.group_counts.values)
    idata = fit.idata
    for g in (
        "posterior",
        "sample_stats",
        "log_likelihood",
        "observed_data",
        "constant_data",
        "posterior_predictive",
    ):
        assert g in idata.groups()
    assert list(idata.posterior["a"]["annotator"].values) == s.annotators
    obs = idata.observed_data["counts"]
    assert obs.dims == ("group", "pattern")
    np.testing.assert_array_equal(obs.values, s.pattern_counts.sel(pattern=obs["pattern"]).values)
    assert obs.sum() == s.n_items  # every annotated item is on a kept pattern
    assert idata.log_likelihood["counts"].dims == ("chain", "draw", "group")
    rep = idata.posterior_predictive["counts"]
    np.testing.assert_array_equal(
        rep.sum("pattern").isel(chain=0, draw=0).values, obs.sum("pattern").values
    )
    # chain-major stacking: draw index c * n_draws + d
    np.testing.assert_array_equal(
        fit.a.values[500], idata.posterior["a"].isel(chain=1, draw=0).values
    )
    assert idata.attrs["model"] == "grouped" and "data_hash" in idata.attrs


def test_orientation_holds_in_every_draw(grouped_fit, hui_walter_fit):
    for fit in (grouped_fit, hui_walter_fit):
        assert (fit.delta.values > 0).all()


def test_diagnostics_clean_on_reference(grouped_fit, hui_walter_fit):
    for fit in (grouped_fit, hui_walter_fit):
        d = fit.diagnostics
        # 2 x 500 draws: R-hat estimates scatter around 1.00 by about 0.005
        assert d["divergences"] == 0 and d["rhat_max"] < 1.02 and d["ess_bulk_min"] > 200
        assert not any("divergent" in w for w in fit.warnings)
        assert min(d["ppc_tail_prob"].values()) > 0.01  # independent annotators: no flag


@pytest.mark.parametrize(
    "model,em",
    [("grouped", score_bin_em), ("marginal", dawid_skene_em), ("hui_walter", constrained_gmm)],
)
def test_posterior_mean_near_point_estimate(request, model, em):
    """At n of a few thousand the prior is negligible: means within 4 posterior sd of EM / GMM."""
    fit = request.getfixturevalue(f"{model}_fit")
    point = em(reference_summary(model))
    for name in ("a", "b", "prevalence"):
        post = getattr(fit, name)
        z = (
            np.abs(post.mean("draw").values - getattr(point, name).values[0])
            / post.std("draw").values
        )
        assert z.max() < 4, (name, z)


def test_loo_and_compare(grouped_fit, marginal_fit):
    import arviz as az

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(grouped_fit.idata)
        assert np.isfinite(loo.elpd_loo)
        # the marginal model's log-likelihood is on the same score groups, so models compare;
        # needs the same data: refit marginal on the grouped reference summary.
        marg = fit_channels_bayes(
            reference_summary("grouped"), "marginal", random_state=1, check=False, **FAST
        )
        cmp = az.compare({"grouped": grouped_fit.idata, "marginal": marg.idata})
    # prevalence differs strongly across score groups: the grouped model predicts better
    assert cmp.index[0] == "grouped"


def test_marginal_model(marginal_fit):
    assert list(marginal_fit.prevalence["group"].values) == ["all"]
    assert marginal_fit.group_counts.values.tolist() == [3000]
    assert marginal_fit.idata.log_likelihood["counts"].sizes["group"] == 4
    assert marginal_fit.method == "bayes_marginal"


def test_refuses_non_identified_designs():
    two = summarize(simulate_toy(400, random_state=0, fp=(0.1, 0.2), fn=(0.1, 0.2)), groups=1)
    three = summarize(simulate_toy(400, random_state=0), groups=2)
    with pytest.raises(IdentificationError, match="three annotators"):
        fit_channels_bayes(two, "marginal", **FAST)
    with pytest.raises(IdentificationError, match="two non-empty score groups"):
        fit_channels_bayes(two, "grouped", **FAST)
    with pytest.raises(IdentificationError, match="exactly two annotators"):
        fit_channels_bayes(three, "hui_walter", **FAST)
    with pytest.raises(ConfigError, match="unknown model"):
        fit_channels_bayes(three, "latent", **FAST)
    with pytest.raises(ConfigError, match="draws"):
        fit_channels_bayes(three, draws=0)
    with pytest.raises(ConfigError, match="groups are fixed"):
        fit_channels_bayes(three, groups=3)


def test_seed_reproducible_and_designated_orientation():
    s = summarize(simulate_toy(1500, random_state=3, missing=0.2), groups=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f1 = fit_channels_bayes(
            s, orientation="designated", orient="a2", random_state=7, check=False, **FAST
        )
        f2 = fit_channels_bayes(
            s, orientation="designated", orient="a2", random_state=7, check=False, **FAST
        )
    np.testing.assert_array_equal(f1.a.values, f2.a.values)
    np.testing.assert_array_equal(
        f1.idata.posterior_predictive["counts"].values,
        f2.idata.posterior_predictive["counts"].values,
    )
    assert "ab_free" in f1.idata.posterior and (f1.delta.sel(annotator="a2") > 0).all()
    # the other annotators are free, yet with informative data they agree with the orientation
    assert (f1.delta.mean("draw") > 0.5).all()


def test_prior_predictive():
    s = summarize(simulate_toy(600, random_state=2, missing=0.3), groups=3)
    idata = prior_predictive(s, draws=200, random_state=0)
    assert (idata.prior["a"] < idata.prior["b"]).all()
    pp = idata.prior_predictive["counts"]
    np.testing.assert_array_equal(
        pp.sum("pattern").isel(chain=0, draw=3).values, s.group_counts.values
    )
    again = prior_predictive(s, draws=200, random_state=0)
    np.testing.assert_array_equal(pp.values, again.prior_predictive["counts"].values)
    wide = prior_predictive(s, draws=200, random_state=0, priors={"prevalence": (0.5, 0.5)})
    assert float(wide.prior["prevalence"].std()) > float(idata.prior["prevalence"].std())


def test_the_prior_family_chooses_the_model():
    """One fit_channels_bayes: Beta priors fit the two-class model, Dirichlet rows the C-class
    model for any C (two classes included); the families are refused where they do not apply."""
    from bayescal.bayes.priors import ChannelPriors
    from bayescal.simulate import simulate_multiclass

    data = simulate_toy(1500, random_state=3)
    rows = fit_channels_bayes(data, priors={"diagonal": 3}, check=False, **FAST)
    assert rows.method == "bayes_multiclass" and rows.layout == "multiclass"
    assert rows.classes == ["0", "1"] and rows.confusion.shape[1:] == (3, 2, 2)
    beta = fit_channels_bayes(data, groups=3, check=False, **FAST)
    assert beta.method == "bayes_grouped"
    with pytest.raises(ConfigError, match="start= sets the C-class model"):
        fit_channels_bayes(data, groups=3, start=rows, check=False, **FAST)
    three = simulate_multiclass(300, 3, random_state=0)
    with pytest.raises(ConfigError, match="takes priors of the 'dirichlet' family"):
        fit_channels_bayes(three, priors=ChannelPriors(a=(1, 9)), check=False, **FAST)
    with pytest.raises(ConfigError, match="unknown prior 'a'"):  # a mapping is read as rows
        fit_channels_bayes(three, priors={"a": (1, 9)}, check=False, **FAST)
