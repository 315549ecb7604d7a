"""Noise or ambiguity: the check tells class-conditional noise from within-item dispersion."""

import numpy as np
import pytest

from bayescal.channels.em import dawid_skene_em
from bayescal.channels.fit import fit_channels
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
from bayescal.simulate import simulate_multiclass, simulate_toy
from bayescal.simulate.ambiguous import simulate_ambiguous_multiclass
from bayescal.summaries import summarize_multiclass


def _em(data, **kw):
    return dawid_skene_em(summarize_multiclass(data), **{"prevalence": "grouped", **kw})


def _draws(em, confusion):
    """Channel "draws" ``confusion`` (S, K, C, C) at the EM fit's prevalences."""
    return ChannelFit.from_confusion(
        confusion,
        np.concatenate([em.class_prevalence.values] * confusion.shape[0]),
        annotators=em.annotators,
        classes=em.classes,
        groups=list(em.class_prevalence["group"].values),
        group_counts=em.group_counts.values,
        method="draws",
    )


def test_noise_data_are_not_called_ambiguous():
    data = simulate_multiclass(3000, 4, random_state=0, missing=0.2)
    check = noise_or_ambiguity(data, _em(data), n_replicates=99, random_state=1)
    assert check.view == "noise"
    assert check.source == "parametric bootstrap"
    # the statistic is centred at 1 under the model: replicates within a few sd of 1
    assert abs(check.overall["dispersion_replicated"] - 1) < 0.02
    assert abs(check.overall["dispersion_observed"] - 1) < 0.06
    assert check.per_item is None
    assert any("little power" in r for r in check.reasons)
    # an EM fit is already the maximum: the polish barely moves it, every refit converges
    assert check.refit["polish_shift"] < 1e-3 and check.refit["not_converged"] == 0
    # Monte Carlo tail probabilities: multiples of 1 / (R + 1), never below it
    for tail in (check.overall["dispersion_tail"], check.overall["pattern_tail"]):
        assert 1 / 100 <= tail <= 1 and abs(tail * 100 - round(tail * 100)) < 1e-9
    assert list(check.pairs["pair"].values) == ["a1~a2", "a1~a3", "a2~a3"]


def test_many_answers_reveal_ambiguity():
    data = simulate_ambiguous_multiclass(
        600, 3, n_annotators=30, concentration=20.0, random_state=3
    )
    check = noise_or_ambiguity(data, _em(data), n_replicates=99, random_state=1)
    assert check.view == "ambiguity"
    # Dirichlet(20 T) answers: intra-item correlation ~ 1/21, so phi ~ 1 + 29/21 ~ 2.4
    assert check.overall["dispersion_observed"] > 1.8
    assert check.overall["dispersion_tail"] <= 0.01
    assert check.per_item["share_overdispersed"] > 0.15
    assert [f.code for f in check.flags] == ["noise.overdispersed"]
    d = check.to_dict()
    assert d["view"] == "ambiguity" and set(d["per_class"]) == {"0", "1", "2"}
    assert len(d["pairs_furthest"]) == 5 and d["refit"]["not_converged"] == 0


def test_noise_with_many_answers_passes_the_per_item_test():
    data = simulate_multiclass(800, 3, random_state=4, n_annotators=20)
    check = noise_or_ambiguity(data, _em(data), n_replicates=99, random_state=2)
    assert check.view == "noise"
    # at level 0.05 about 5% of the 800 items by chance: sd sqrt(0.05 * 0.95 / 800) = 0.008
    assert check.per_item["share_overdispersed"] < 0.05 + 4 * 0.008


def test_a_posterior_gives_a_posterior_predictive_check():
    data = simulate_multiclass(2000, 3, random_state=5)
    em = _em(data)
    post = _draws(em, np.concatenate([em.confusion.values] * 3))
    check = noise_or_ambiguity(data, post, n_replicates=99)
    assert check.source == "posterior predictive" and check.view == "noise"
    assert check.refit is None


def test_channels_off_the_maximum_are_polished_and_said_so():
    data = simulate_multiclass(2000, 3, random_state=8, n_annotators=4)
    em = _em(data)
    t = 0.8 * em.confusion.values + 0.2 / 3  # pulled toward uniform
    pulled = ChannelFit.from_confusion(
        t,
        em.class_prevalence.values,
        annotators=em.annotators,
        classes=em.classes,
        groups=list(em.class_prevalence["group"].values),
        group_counts=em.group_counts.values,
        method="pulled",
    )
    check = noise_or_ambiguity(data, pulled, n_replicates=20, alpha=0.05)
    assert check.refit["polish_shift"] > 0.05
    assert any("not the maximum-likelihood fit" in r for r in check.reasons)
    # after the polish the check is the EM fit's check
    at_em = noise_or_ambiguity(data, em, n_replicates=20, alpha=0.05)
    assert check.overall["dispersion_observed"] == pytest.approx(
        at_em.overall["dispersion_observed"], abs=1e-4
    )


def test_pooled_channels_and_refusals():
    data = simulate_multiclass(1500, 3, random_state=6)
    pooled = dawid_skene_em(summarize_multiclass(data), prevalence="pooled")
    check = noise_or_ambiguity(data, pooled, n_replicates=20, alpha=0.05)
    assert check.degrees_of_freedom == 27 - 1 - 18 - 2  # the channels' one group: pooled
    grouped = _em(data)
    with pytest.raises(DataError, match="summarise the data with the grouping"):
        noise_or_ambiguity(data, grouped, groups=2, n_replicates=20, alpha=0.05)
    with pytest.raises(ConfigError, match="n_replicates must be an integer >= 20"):
        noise_or_ambiguity(data, grouped, n_replicates=5, alpha=0.05)
    with pytest.raises(ConfigError, match=r">= 99 at alpha = 0.01"):
        noise_or_ambiguity(data, grouped, n_replicates=60)
    with pytest.raises(ConfigError, match="alpha"):
        noise_or_ambiguity(data, grouped, alpha=1.5)
    with pytest.raises(ConfigError, match="ChannelFit"):
        noise_or_ambiguity(data, grouped.confusion)
    with pytest.raises(ConfigError, match="expected annotations"):
        noise_or_ambiguity(data.probs, grouped)


def test_single_answers_are_inconclusive():
    data = simulate_multiclass(1500, 3, random_state=7, missing=0.0)
    lab = data.labels.copy()
    lab[20:, 1:] = np.nan  # only 20 items keep more than one answer
    sparse = Annotations.from_arrays(data.probs, lab)
    fit = dawid_skene_em(summarize_multiclass(data))
    check = noise_or_ambiguity(sparse, fit, n_replicates=20, alpha=0.05)
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
    data = Annotations.from_arrays(base.probs, lab, truth=y)
    check = noise_or_ambiguity(data, _em(data), n_replicates=99)
    assert check.view == "misfit"
    assert check.overall["dispersion_observed"] < 0.9 * check.overall["dispersion_replicated"]
    assert check.overall["dispersion_lower_tail"] <= 0.01
    assert any("vary less than the fitted confusions" in r for r in check.reasons)


def test_copied_answers_are_a_pattern_misfit():
    """Annotator a4 copies a1 on 30% of the items: the pair tables name the pair."""
    rng = np.random.default_rng(11)
    base = simulate_multiclass(3000, 3, random_state=11, n_annotators=4)
    lab = base.labels.copy()
    copy = rng.random(lab.shape[0]) < 0.3
    lab[copy, 3] = lab[copy, 0]
    data = Annotations.from_arrays(base.probs, lab, truth=base.truth)
    check = noise_or_ambiguity(data, _em(data), n_replicates=99, random_state=3)
    assert check.view in ("misfit", "ambiguity")
    assert check.overall["pattern_tail"] <= 0.01
    worst = str(check.pairs["pair"].values[int(np.argmax(check.pairs["excess_sd"].values))])
    assert worst == "a1~a4"
    assert any("furthest pair a1~a4" in r for r in check.reasons)


def test_gold_items_enter_the_refits():
    data = simulate_multiclass(1500, 3, random_state=12, n_annotators=4)
    gold = np.full(data.n_items, np.nan)
    gold[:150] = data.truth[:150]
    with_gold = Annotations.from_arrays(data.probs, data.labels, truth=data.truth, gold=gold)
    summary = summarize_multiclass(with_gold)
    assert summary.has_gold
    fit = dawid_skene_em(summary)
    check = noise_or_ambiguity(summary, fit, n_replicates=99, random_state=4)
    assert check.view == "noise"
    assert check.answers["items"] == 1350  # the statistics are on the ordinary items
    assert check.refit["polish_shift"] < 1e-3  # the EM fit with gold is the polish's maximum


# ----------------------------------------------------------------- two classes
def test_two_classes_three_annotators_one_group_is_saturated():
    data = simulate_multiclass(1500, 2, random_state=13)
    fit = dawid_skene_em(summarize_multiclass(data), prevalence="pooled")
    check = noise_or_ambiguity(data, fit, n_replicates=20, alpha=0.05)
    # 7 free cells of the full answer table, 6 confusion entries and 1 prevalence
    assert check.degrees_of_freedom == 0 and check.view == "inconclusive"
    assert "fits any answers" in check.reasons[0]
    predicted = dawid_skene_em(summarize_multiclass(data, groups="predicted"), prevalence="grouped")
    grouped = noise_or_ambiguity(data, predicted, n_replicates=99)
    assert grouped.degrees_of_freedom == 2 * 7 - 6 - 2 and grouped.view == "noise"
    # the two-class default: five score groups on p_1
    by_score = noise_or_ambiguity(data, _em(data), n_replicates=99)
    assert by_score.degrees_of_freedom == 5 * 7 - 6 - 5 and by_score.view == "noise"


def test_binary_container_with_binary_score_group_channels():
    data = simulate_toy(3000, random_state=14)  # two-class Annotations, K = 3
    fit = fit_channels(data, method="score-bin-em")
    assert fit.layout == "binary" and fit.group_edges is not None
    check = noise_or_ambiguity(data, fit, n_replicates=99, random_state=5)
    # grouped by the score on the channels' edges: 5 groups x 7 cells - 6 - 5 prevalences
    assert check.degrees_of_freedom == 5 * 7 - 6 - 5
    assert check.view == "noise"
    # score-bin EM and multiclass EM maximise the same likelihood: the polish does not move
    assert check.refit["polish_shift"] < 5e-3


def test_binary_item_difficulty_is_ambiguity():
    """Two classes, 12 answers per item, half the items borderline (answers at 50:50)."""
    rng = np.random.default_rng(15)
    n, k = 1500, 12
    y = rng.integers(0, 2, n)
    score = np.clip(0.25 + 0.5 * y + rng.normal(0, 0.15, n), 0.01, 0.99)
    p_one = np.where(y == 1, 0.85, 0.15)
    borderline = rng.random(n) < 0.5
    p_one = np.where(borderline, 0.5, p_one)
    labels = (rng.random((n, k)) < p_one[:, None]).astype(float)
    data = Annotations.from_arrays(np.column_stack([1 - score, score]), labels, truth=y)
    check = noise_or_ambiguity(data, _em(data), n_replicates=99)
    assert check.view == "ambiguity"


# ----------------------------------------------------------------- threads
@pytest.mark.parametrize("case", ["gold", "many answers", "posterior"])
def test_threads_give_the_same_check_as_one(case, monkeypatch):
    """The replicates are drawn in order in the calling thread and refitted on worker
    threads: the check is the same to the last bit for any number of threads, on each
    path (point fit with gold items, the per-item test of many answers, a posterior)."""
    import json

    from bayescal.metrics import noise_or_ambiguity as module

    if case == "gold":
        data = simulate_multiclass(600, 3, random_state=12, n_annotators=4)
        gold = np.full(data.n_items, np.nan)
        gold[:80] = data.truth[:80]
        data = Annotations.from_arrays(data.probs, data.labels, truth=data.truth, gold=gold)
        fit = dawid_skene_em(summarize_multiclass(data))
    elif case == "many answers":
        data = simulate_ambiguous_multiclass(
            200, 3, n_annotators=12, concentration=20.0, random_state=3
        )
        fit = _em(data)
    else:
        data = simulate_multiclass(500, 3, random_state=5)
        em = _em(data)
        rng = np.random.default_rng(0)
        t = em.confusion.values * rng.uniform(0.9, 1.1, size=(4, *em.confusion.shape[1:]))
        fit = _draws(em, t / t.sum(axis=-1, keepdims=True))
    out = {}
    for threads in (1, 3):
        monkeypatch.setattr(module, "available_cpus", lambda threads=threads: threads)
        check = noise_or_ambiguity(data, fit, n_replicates=99, random_state=7)
        out[threads] = json.dumps(check.to_dict(), sort_keys=True, default=str)
    assert out[1] == out[3]
    assert (case == "many answers") == ('"per_item": null' not in out[1])
