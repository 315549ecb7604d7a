"""fit_channels dispatches multiclass containers and summaries to the multiclass estimator."""

import numpy as np
import pytest

from bayescal.channels.em import dawid_skene_em
from bayescal.channels.fit import fit_channels
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy
from bayescal.summaries import summarize_multiclass


def test_container_and_summary_give_the_direct_fit(mc_small, mc_small_summary):
    direct = dawid_skene_em(mc_small_summary, random_state=3)
    via_data = fit_channels(mc_small, random_state=3)
    via_summary = fit_channels(mc_small_summary, "dawid-skene-em", random_state=3)
    for fit in (via_data, via_summary):
        np.testing.assert_array_equal(fit.confusion.values, direct.confusion.values)
        np.testing.assert_array_equal(fit.class_prevalence.values, direct.class_prevalence.values)
        assert fit.layout == "multiclass"


def test_groups_and_options_reach_the_estimator(mc_small):
    pooled = fit_channels(mc_small, groups="all")
    assert pooled.class_prevalence.sizes["group"] == 1
    direct = dawid_skene_em(summarize_multiclass(mc_small), prevalence="pooled")
    got = fit_channels(mc_small, prevalence="pooled")
    np.testing.assert_array_equal(got.confusion.values, direct.confusion.values)
    with pytest.warns(DeprecationWarning, match="use prevalence='pooled'"):
        old = fit_channels(mc_small, pooled=True)  # the v0.2 spelling still works
    np.testing.assert_array_equal(old.confusion.values, direct.confusion.values)
    with pytest.raises(ConfigError, match="contradicts pooled=True"):
        fit_channels(mc_small, pooled=True, prevalence="grouped")


def test_the_grouped_em_is_one_method_for_every_number_of_classes(mc_small_summary):
    grouped = fit_channels(mc_small_summary, "score_bin_em", random_state=3)
    direct = dawid_skene_em(mc_small_summary, prevalence="grouped", random_state=3)
    np.testing.assert_array_equal(grouped.confusion.values, direct.confusion.values)


def test_refusals_name_the_problem(mc_small, mc_small_summary):
    for method in ("hui_walter", "gmm", "moments"):  # binary-only entries of the registry
        with pytest.raises(ConfigError, match=f"'{method}' requires two classes.*C = 4.*"):
            fit_channels(mc_small, method)
    with pytest.raises(ConfigError, match="groups are fixed"):
        fit_channels(mc_small_summary, groups="all")


def test_binary_data_keep_the_binary_default():
    fit = fit_channels(simulate_toy(2000, random_state=0), groups=4)
    assert fit.method == "score_bin_em" and fit.layout == "binary"


def test_load_csv_with_probs_reads_multiclass_data(tmp_path):
    from bayescal.data.container import load_csv, load_table
    from bayescal.data.multiclass import MulticlassAnnotations, load_multiclass_csv
    from bayescal.errors import DataError

    path = tmp_path / "m.csv"
    path.write_text("item,p0,p1,p2,r1,r2,r3,y\na,0.7,0.2,0.1,0,0,,0\nb,0.1,0.3,0.6,2,1,2,2\n")
    got = load_csv(path, probs=["p0", "p1", "p2"], truth="y", item="item")
    direct = load_multiclass_csv(path, probs=["p0", "p1", "p2"], truth="y", item="item")
    assert isinstance(got, MulticlassAnnotations)
    assert got.dataset.identical(direct.dataset)
    kw = dict(probs=["p0", "p1", "p2"], classes=["cat", "dog", "fox"], item="item")
    with pytest.raises(DataError, match="'y' is named like a reference label"):
        load_table(path, **kw)  # never a silent fourth annotator
    named = load_table(path, annotators=["r1", "r2", "r3", "y"], **kw)
    assert named.classes == ["cat", "dog", "fox"] and named.annotators == ["r1", "r2", "r3", "y"]
    with pytest.raises(ConfigError, match="not both"):
        load_csv(path, score="p0", probs=["p0", "p1", "p2"])
    with pytest.raises(DataError, match="3 class names for 2 classes"):  # classes alone: C = 2
        load_csv(path, classes=["cat", "dog", "fox"])


def test_summarize_is_one_function_for_every_number_of_classes(mc_small):
    import bayescal as bc

    s = bc.summarize(mc_small)
    assert s.n_classes == mc_small.n_classes and s.grouping == "predicted"
    assert s.equals(bc.summarize_multiclass(mc_small))
