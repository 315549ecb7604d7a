"""fit_channels dispatches multiclass containers and summaries to the multiclass estimator."""

import numpy as np
import pytest

from bayescal.channels.fit import fit_channels
from bayescal.channels.multiclass_em import multiclass_dawid_skene_em
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy
from bayescal.summaries.multiclass import summarize_multiclass


def test_container_and_summary_give_the_direct_fit(mc_small, mc_small_summary):
    direct = multiclass_dawid_skene_em(mc_small_summary, random_state=3)
    via_data = fit_channels(mc_small, random_state=3)
    via_summary = fit_channels(mc_small_summary, "dawid-skene-em", random_state=3)
    for fit in (via_data, via_summary):
        np.testing.assert_array_equal(fit.confusion.values, direct.confusion.values)
        np.testing.assert_array_equal(fit.class_prevalence.values, direct.class_prevalence.values)
        assert fit.layout == "multiclass"


def test_groups_and_options_reach_the_estimator(mc_small):
    pooled = fit_channels(mc_small, groups="all")
    assert pooled.class_prevalence.sizes["group"] == 1
    direct = multiclass_dawid_skene_em(summarize_multiclass(mc_small), pooled=True)
    got = fit_channels(mc_small, pooled=True)
    np.testing.assert_array_equal(got.confusion.values, direct.confusion.values)


def test_refusals_name_the_problem(mc_small, mc_small_summary):
    with pytest.raises(ConfigError, match="not available for multiclass data"):
        fit_channels(mc_small, "score_bin_em")
    with pytest.raises(ConfigError, match="summarize_multiclass"):
        fit_channels(mc_small_summary, groups="all")


def test_binary_data_keep_the_binary_default():
    fit = fit_channels(simulate_toy(2000, random_state=0), groups=4)
    assert fit.method == "score_bin_em" and fit.layout == "binary"
