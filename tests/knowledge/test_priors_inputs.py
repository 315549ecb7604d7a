"""Priors inputs that used to be silently not used (issue 23), for both prior families:
names that match none of the data's, repeated names, a drift discount so large that the
prior says nothing, and the prior's weight in items stated with the priors."""

import numpy as np
import pytest

from bayescal import summarize
from bayescal.bayes.conflict import prior_conflict
from bayescal.bayes.priors import MAX_INFLATE, MIN_CONCENTRATION, ChannelPriors, check_inflate
from bayescal.channels.result import ChannelFit
from bayescal.errors import BayescalWarning, ConfigError
from bayescal.simulate import simulate_toy

N = 40_000


def _binary_fit(names=("ann", "bob")):
    rng = np.random.default_rng(0)
    return ChannelFit.from_draws(
        np.column_stack([rng.beta(20, 180, N), rng.beta(6, 30, N)]),
        np.column_stack([rng.beta(160, 40, N), rng.beta(40, 10, N)]),
        rng.beta(50, 50, (N, 1)),
        annotators=list(names),
        groups=["all"],
        group_counts=[100],
        method="bayes_marginal",
    )


def _multiclass_fit(names=("ann", "bob")):
    rng = np.random.default_rng(1)
    rows = rng.dirichlet([80.0, 15.0, 5.0], size=(N, len(names), 3))
    return ChannelFit.from_confusion(
        rows,
        np.full((N, 1, 3), 1 / 3),
        annotators=list(names),
        classes=["a", "b", "c"],
        groups=["all"],
        group_counts=[100],
        method="bayes_multiclass",
    )


FITS = [_binary_fit, _multiclass_fit]


@pytest.mark.parametrize("make", FITS)
def test_names_matching_none_of_the_data_are_refused(make):
    with pytest.raises(ConfigError, match=r"none of the new data's annotators \['x', 'y'\]"):
        ChannelPriors.from_fit(make(), annotators=["x", "y"])


@pytest.mark.parametrize("make", FITS)
def test_names_differing_only_in_spaces_or_case_are_pointed_out(make):
    """' bob' vs 'bob' fell back to the default prior with a plain 'not in it' (hostile
    re-check, issue 23): the message names the near match."""
    with pytest.warns(BayescalWarning, match=r"only in spaces or case: ' bob' ~ 'bob'"):
        ChannelPriors.from_fit(make(), annotators=["ann", " bob"])
    with pytest.raises(ConfigError, match=r"'ANN' ~ 'ann', 'bob ' ~ 'bob'; rename them"):
        ChannelPriors.from_fit(make(), annotators=["ANN", "bob "])


@pytest.mark.parametrize("make", FITS)
def test_some_unmatched_names_are_warned_about_and_recorded(make):
    with pytest.warns(BayescalWarning, match=r"\['zoe'\] are not in it"):
        p = ChannelPriors.from_fit(make(), annotators=["bob", "zoe"])
    assert p.origin["from_fit"] == ["bob"] and p.origin["default"] == ["zoe"]
    assert p.origin["unused"] == ["ann"]
    assert p.to_dict()["origin"]["default"] == ["zoe"]  # what the fit stores in its attrs


@pytest.mark.parametrize("make", FITS)
def test_repeated_names_are_refused_with_the_names(make):
    with pytest.raises(ConfigError, match=r"earlier fit \(priors\) names annotator\(s\) \['ann'\]"):
        ChannelPriors.from_fit(make(names=("ann", "ann")))
    with pytest.raises(ConfigError, match=r"new data names annotator\(s\) \['bob'\]"):
        ChannelPriors.from_fit(make(), annotators=["bob", "ann", "bob"])


def test_inflate_is_bounded_with_what_the_bound_means():
    assert check_inflate(MAX_INFLATE) == MAX_INFLATE
    for bad in (1e308, MAX_INFLATE * 1.01):
        with pytest.raises(ConfigError, match="say nothing. Audit without --priors"):
            check_inflate(bad)
    with pytest.raises(ConfigError, match=">= 1"):
        check_inflate(float("inf"))


def test_min_concentration_is_where_half_the_draws_are_exactly_zero():
    # P(Gamma(c) == 0.0 in double precision) ~ exp(-744.44 c) (module docstring): 1/2 at
    # MIN_CONCENTRATION. 200,000 draws: binomial sd 0.0011, so 0.01 is 9 sd; the rounding
    # of the cut (2**-1074 vs 2**-1075) moves the probability by 0.0003.
    rng = np.random.default_rng(5)
    for factor, want in ((0.5, 2**-0.5), (1.0, 0.5), (2.0, 0.25)):
        zero = (rng.gamma(MIN_CONCENTRATION * factor, size=200_000) == 0).mean()
        assert abs(zero - want) < 0.01, (factor, zero)


@pytest.mark.parametrize("make", FITS)
def test_discounts_leaving_zero_draws_are_refused(make):
    # the smallest moment-matched concentration is bob's a: alpha = 6 (binary) or the
    # Dirichlet's 5 (multiclass); 1e4 leaves 6e-4 / 5e-4 < MIN_CONCENTRATION = 9.3e-4
    with pytest.raises(ConfigError, match="exactly 0 in double precision"):
        ChannelPriors.from_fit(make(), inflate=1e4)
    ChannelPriors.from_fit(make(), inflate=1e3)  # 6e-3 / 5e-3: still a prior


def test_pseudo_items_state_each_priors_weight():
    # Beta(20, 180) and Beta(160, 40): 200 items of each class; the moment match from
    # 40,000 draws has relative sd sqrt(2 / 40000) = 0.7% per row total, 3% is > 4 sd
    p = ChannelPriors.from_fit(_binary_fit(), inflate=1.0)
    items = p.origin["pseudo_items"]
    np.testing.assert_allclose([items["ann"]["0"], items["ann"]["1"]], [200, 200], rtol=0.03)
    np.testing.assert_allclose([items["bob"]["0"], items["bob"]["1"]], [36, 50], rtol=0.03)
    half = ChannelPriors.from_fit(_binary_fit(), inflate=2.0).origin["pseudo_items"]
    np.testing.assert_allclose(half["ann"]["0"], items["ann"]["0"] / 2)
    rows = ChannelPriors.from_fit(_multiclass_fit(), inflate=1.0).origin["pseudo_items"]
    # Dirichlet(80, 15, 5): 100 items per row; the total variance's error is below 1%
    np.testing.assert_allclose([rows["ann"][c] for c in "abc"], [100, 100, 100], rtol=0.03)
    assert ChannelPriors.from_fit(_multiclass_fit()).to_dict()["origin"]["pseudo_items"]


def test_the_beta_family_is_dirichlet_rows_at_two_classes():
    p = ChannelPriors(a=(1, 9), b=(8, 2), prevalence=(3, 4))
    np.testing.assert_array_equal(p.confusion_alpha(2, 2)[1], [[9, 1], [2, 8]])
    np.testing.assert_array_equal(p.prevalence_alpha(1, 2), [[4, 3]])
    with pytest.raises(ConfigError, match="Beta priors .* are for two classes"):
        p.confusion_alpha(2, 3)
    with pytest.raises(ConfigError, match="mix the Beta family"):
        ChannelPriors(a=(1, 2), diagonal=3)
    with pytest.raises(ConfigError, match="Dirichlet rows"):
        ChannelPriors(diagonal=3).a  # noqa: B018


def test_one_conflict_check_for_either_family_at_two_classes():
    s = summarize(simulate_toy(2000, random_state=0), groups=3)
    # K = 3 annotators; a prior sure that everyone is nearly always right is in conflict
    # with annotators whose error rates are 10-30%, in either family
    sure_beta = {"a": (1, 3000), "b": (3000, 1)}
    sure_rows = {"diagonal": 3000, "off_diagonal": 1}
    for priors in (sure_beta, sure_rows):
        out = prior_conflict(s, priors, draws=400)
        assert all(v["conflict"] for v in out.values()), priors
        assert set(next(iter(out.values()))["statistics"]) == {"class_0", "class_1"}
    calm = prior_conflict(s, ChannelPriors(family="dirichlet"), draws=400)
    assert not any(v["conflict"] for v in calm.values())


def test_priors_with_a_above_b_are_refused_before_sampling(monkeypatch):
    """An earlier audit with its classes the other way round (a and b exchanged) passed every
    file check and failed only after the whole sampling, advising to "loosen the priors" (a
    hostile re-check, issue 23). The orientation's prior mass is checked when the model is
    specified, and the message names the likely cause and the fixes."""
    import bayescal.bayes.sampling as sampling
    from bayescal import fit_channels_bayes

    def never(*args, **kwargs):
        raise AssertionError("sampled before the priors were checked")

    monkeypatch.setattr(sampling, "sample_nutpie", never)
    s = summarize(simulate_toy(600, "calibrated", random_state=0), groups=3)
    swapped = ChannelPriors(a=(900, 100), b=(100, 900))  # a near 0.9, b near 0.1
    with pytest.raises(ConfigError, match="almost no mass on a < b .* other way round"):
        fit_channels_bayes(s, priors=swapped, draws=50, tune=50)
    # priors that leave room on the ordered side still pass the check
    fine = ChannelPriors(a=(1, 9), b=(8, 2))
    from bayescal.bayes.models import check_orientation_mass, make_spec

    check_orientation_mass(make_spec(s, priors=fine))
