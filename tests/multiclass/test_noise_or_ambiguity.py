"""Noise or ambiguity: the check tells class-conditional noise from within-item dispersion."""

import numpy as np
import pytest

from bayescal.channels.multiclass_em import multiclass_dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.ambiguous import simulate_ambiguous_multiclass
from bayescal.summaries import summarize_multiclass


def _em(data):
    return multiclass_dawid_skene_em(summarize_multiclass(data))


def test_noise_data_are_not_called_ambiguous():
    data = simulate_multiclass(3000, 4, random_state=0, missing=0.2)
    check = noise_or_ambiguity(data, _em(data), n_replicates=60, random_state=1)
    assert check.view == "noise"
    assert check.source == "parametric bootstrap"
    # the statistic is centred at 1 under the model: replicates within a few sd of 1
    assert abs(check.overall["dispersion_replicated"] - 1) < 0.02
    assert abs(check.overall["dispersion_observed"] - 1) < 0.06
    assert check.patterns is not None and check.per_item is None
    assert any("little power" in r for r in check.reasons)


def test_many_answers_reveal_ambiguity():
    data = simulate_ambiguous_multiclass(
        600, 3, n_annotators=30, concentration=20.0, random_state=3
    )
    check = noise_or_ambiguity(data, _em(data), n_replicates=60, random_state=1)
    assert check.view == "ambiguity"
    # Dirichlet(20 T) answers: intra-item correlation ~ 1/21, so phi ~ 1 + 29/21 ~ 2.4
    assert check.overall["dispersion_observed"] > 1.8
    assert check.overall["dispersion_tail"] < 0.01
    assert check.per_item["share_overdispersed"] > 0.15
    assert [f.code for f in check.flags] == ["noise.overdispersed"]
    d = check.to_dict()
    assert d["view"] == "ambiguity" and set(d["per_class"]) == {"0", "1", "2"}


def test_noise_with_many_answers_passes_the_per_item_test():
    data = simulate_multiclass(800, 3, random_state=4, n_annotators=20)
    check = noise_or_ambiguity(data, _em(data), n_replicates=60, random_state=2)
    assert check.view == "noise"
    # at level 0.05 about 5% of items by chance (the fit adapts, so a little fewer)
    assert check.per_item["share_overdispersed"] < 0.10


def test_a_posterior_gives_a_posterior_predictive_check():
    data = simulate_multiclass(2000, 3, random_state=5)
    em = _em(data)
    t = np.concatenate([em.confusion.values] * 3)
    post = ChannelFit.from_confusion(
        t,
        np.concatenate([em.class_prevalence.values] * 3),
        annotators=em.annotators,
        classes=em.classes,
        groups=list(em.class_prevalence["group"].values),
        group_counts=em.group_counts.values,
        method="draws",
    )
    check = noise_or_ambiguity(data, post, n_replicates=30)
    assert check.source == "posterior predictive" and check.view == "noise"


def test_pooled_channels_and_refusals():
    data = simulate_multiclass(1500, 3, random_state=6)
    pooled = multiclass_dawid_skene_em(summarize_multiclass(data), pooled=True)
    assert noise_or_ambiguity(data, pooled, n_replicates=20).view in ("noise", "misfit")
    grouped = _em(data)
    with pytest.raises(DataError, match="summarise the data with the grouping"):
        noise_or_ambiguity(data, grouped, groups=2, n_replicates=20)
    with pytest.raises(ConfigError, match="n_replicates"):
        noise_or_ambiguity(data, grouped, n_replicates=5)


def test_single_answers_are_inconclusive():
    data = simulate_multiclass(1500, 3, random_state=7, missing=0.0)
    lab = data.labels.copy()
    lab[20:, 1:] = np.nan  # only 20 items keep more than one answer
    sparse = MulticlassAnnotations.from_arrays(data.probs, lab)
    fit = multiclass_dawid_skene_em(summarize_multiclass(data))
    check = noise_or_ambiguity(sparse, fit, n_replicates=20)
    assert check.view == "inconclusive"
    assert "cannot tell noise from ambiguity" in check.reasons[0]


def test_answers_spread_more_evenly_than_independent_draws_are_a_misfit():
    """Four answers per item, exactly two of them the true class (the other two wrong at
    random): the count of the true class never varies, where independent answers would give
    it a binomial spread. The dispersion's lower tail flags it as a misfit, not ambiguity."""
    rng = np.random.default_rng(10)
    base = simulate_multiclass(2000, 3, random_state=10, n_annotators=4)
    y = base.truth
    wrong = (y[:, None] + rng.integers(1, 3, size=(y.size, 2))) % 3
    answers = np.concatenate([np.repeat(y[:, None], 2, axis=1), wrong], axis=1)
    lab = rng.permuted(answers, axis=1).astype(float)
    data = MulticlassAnnotations.from_arrays(base.probs, lab, truth=y)
    check = noise_or_ambiguity(data, _em(data), n_replicates=40)
    assert check.view == "misfit"
    assert check.overall["dispersion_observed"] < 0.9 * check.overall["dispersion_replicated"]
    assert check.overall["dispersion_lower_tail"] < 0.01
    assert any("vary less than the fitted confusions" in r for r in check.reasons)
