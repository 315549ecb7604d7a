"""The gold likelihood in EM and in the design checks (issue 15, item 1)."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from gold_data import gold_data

from bayescal import summarize
from bayescal.channels.em import dawid_skene_em, score_bin_em
from bayescal.channels.identification import GOLD_SE_WARNING, check_design, gold_identifies
from bayescal.errors import IdentificationError, IdentificationWarning

sys.path.insert(0, str(Path(__file__).parents[1] / "core"))  # the per-item reference EM
from em_reference import binary_em_run, dawid_skene_em_items


def test_pattern_em_equals_per_item_em_iterate_by_iterate():
    # Same start, same fixed number of iterations (tol = 0 never stops early): both are the
    # same arithmetic on different groupings of the items, so they agree to rounding.
    d, _ = gold_data(1500, [0.1, 0.3], [0.8, 0.6], n_gold=200, seed=2)
    s = summarize(d, groups=1)
    a0, b0, mu0 = np.array([0.2, 0.2]), np.array([0.7, 0.9]), np.array([0.5])
    pat = binary_em_run(
        s.binary.pattern_counts.astype(float),
        s.binary.states,
        a0[None],
        b0[None],
        mu0[None],
        tol=0.0,
        max_iter=60,
        gold=s.binary.gold_counts(),
    )
    item = dawid_skene_em_items(d.labels, a0=a0, b0=b0, mu0=mu0, gold=d.gold, tol=0.0, max_iter=60)
    np.testing.assert_allclose(pat["a"][0], item["a"], rtol=1e-10)
    np.testing.assert_allclose(pat["b"][0], item["b"], rtol=1e-10)
    np.testing.assert_allclose(pat["mu"][0], item["mu"], rtol=1e-10)
    n = s.n_items + sum(s.binary.n_gold)
    assert pat["mean_loglik"][0] * n == pytest.approx(item["loglik"], rel=1e-10)


@pytest.mark.parametrize("k", [1, 2])
def test_gold_identifies_one_and_two_annotators_without_groups(k):
    a, b, mu = [0.1, 0.25][:k], [0.85, 0.7][:k], 0.3
    d, y = gold_data(60_000, a, b, mu=mu, n_gold=6000, seed=3)
    s = summarize(d, groups=1)
    fit = dawid_skene_em(s)
    # Tolerance: 4 standard errors. a_j rests on ~ n0_j answers (gold-0 plus the share of
    # unknown negatives), at least 0.7 * 6000 * 0.8 = 3360, so se(a) <= sqrt(.25/3360) =
    # 0.0086; b likewise on >= 0.3 * 6000 * 0.8 = 1440 gold-1 answers: se(b) <= 0.013.
    np.testing.assert_allclose(fit.a.values[0], a, atol=4 * 0.0086)
    np.testing.assert_allclose(fit.b.values[0], b, atol=4 * 0.013)
    # the unknown items' prevalence (gold items excluded): se <= sqrt(.25/54000)/min gap
    unknown = np.isnan(d.gold)
    assert fit.prevalence.values[0, 0] == pytest.approx(y[unknown].mean(), abs=4 * 0.0036)
    assert fit.diagnostics["gold_items"] == list(s.n_gold)


def test_gold_items_do_not_inform_the_prevalence():
    # Gold items chosen from class 1 only (a non-random choice): with the conditional gold
    # likelihood the unknown items' prevalence is still estimated without bias.
    d, y = gold_data(
        40_000, [0.1, 0.2, 0.15], [0.8, 0.7, 0.9], n_gold=8000, seed=4, gold_classes=(1,)
    )
    fit = dawid_skene_em(summarize(d, groups=1))
    unknown = np.isnan(d.gold)
    # se of the prevalence with three good annotators ~ sqrt(.21/32000) = 0.0026
    assert fit.prevalence.values[0, 0] == pytest.approx(y[unknown].mean(), abs=4 * 0.0026)


def test_design_check_knows_what_enough_gold_is():
    none, _ = gold_data(800, [0.1], [0.8], n_gold=0, seed=5)
    with pytest.raises(IdentificationError, match="one annotator"):
        check_design(summarize(none, groups=1), "dawid_skene_em")
    only0, _ = gold_data(800, [0.1], [0.8], n_gold=100, seed=5, gold_classes=(0,))
    with pytest.raises(IdentificationError, match="at least one of each class"):
        check_design(summarize(only0, groups=1), "dawid_skene_em")
    few, _ = gold_data(800, [0.1, 0.2], [0.8, 0.7], n_gold=40, seed=5, missing=0.0)
    s = summarize(few, groups=1)
    identified, worst = gold_identifies(s)
    assert identified and worst > GOLD_SE_WARNING
    with pytest.warns(IdentificationWarning, match="only weakly"):
        msgs = check_design(s, "dawid_skene_em")
    assert len(msgs) == 1
    many, _ = gold_data(4000, [0.1, 0.2], [0.8, 0.7], n_gold=1000, seed=5, missing=0.0)
    s = summarize(many, groups=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_design(s, "dawid_skene_em") == []
        assert check_design(s, "score_bin_em") == []
    # estimators that ignore gold items still need their own design
    with pytest.raises(IdentificationError, match="do not help here"):
        check_design(s, "gmm")


def test_score_bin_em_uses_gold_too():
    d, _ = gold_data(20_000, [0.1, 0.3], [0.85, 0.7], n_gold=3000, seed=6)
    fit = score_bin_em(summarize(d, groups=1))
    np.testing.assert_allclose(fit.a.values[0], [0.1, 0.3], atol=0.04)
    np.testing.assert_allclose(fit.b.values[0], [0.85, 0.7], atol=0.05)


def test_bootstrap_channels_resamples_gold_items_too():
    from bayescal.channels.bootstrap import bootstrap_channels

    a, b = [0.1, 0.3], [0.85, 0.7]
    d, _ = gold_data(20_000, a, b, n_gold=3000, seed=7)
    s = summarize(d, groups=1)
    fit = dawid_skene_em(s)
    boot = bootstrap_channels(s, fit, n_draws=200, random_state=0)
    # Without the gold items this design (K = 2, one group) is not identified and the draws
    # would wander; with them the spread is the sampling error of a few thousand answers per
    # rate: se(a) ~ sqrt(a (1 - a) / n0) with n0 >= 0.7 * 20000 * 0.8 -> ~0.003-0.005.
    sd = boot.a.std("draw").values
    assert np.all((0.001 < sd) & (sd < 0.02)), sd
    np.testing.assert_allclose(boot.a.mean("draw").values, a, atol=4 * 0.02)


def test_estimate_nc_ece_keeps_gold_items_out_of_the_bins():
    from bayescal.metrics.ncece import estimate_nc_ece

    d, _ = gold_data(3000, [0.1, 0.2, 0.15], [0.8, 0.7, 0.9], n_gold=500, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = estimate_nc_ece(d, mode="reuse", groups=3)
    assert int(r.bin_count.sum()) == int(np.isnan(d.gold).sum())
