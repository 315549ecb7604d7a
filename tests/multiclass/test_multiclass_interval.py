"""Multiclass NC-ECE intervals: coverage of the population error, the calibrated case, sources."""

import numpy as np
import pytest

from bayescal.channels.em import dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError
from bayescal.metrics import class_nc_ece
from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
from bayescal.simulate import multiclass_population, simulate_multiclass
from bayescal.summaries import summarize_multiclass


def test_intervals_cover_the_population_error():
    """Known confusions, 20 independent samples of 8,000 items: the 90% intervals cover the
    exact population binned error in at least 14 of 20 (P(X <= 13) = 0.002 for p = 0.9)."""
    pop = multiclass_population(3, temperature=2.0)
    truth = pop.binned_ece()
    channels = ChannelFit.known_confusion(pop.confusion)
    hits = {"top_label": 0, "classwise": 0}
    for seed in range(20):
        data = simulate_multiclass(8000, population=pop, random_state=seed)
        r = multiclass_nc_ece_interval(data, channels, n_bootstrap=400, random_state=seed)
        for name in hits:
            lo, hi = getattr(r, name).interval()
            hits[name] += lo <= truth[name] <= hi
    assert hits["top_label"] >= 14 and hits["classwise"] >= 14, hits


def test_plugin_is_the_nc_ece_and_a_calibrated_model_reaches_zero():
    pop = multiclass_population(3, temperature=1.0)  # calibrated: p = truth distribution
    data = simulate_multiclass(3000, population=pop, random_state=1)
    channels = ChannelFit.known_confusion(pop.confusion)
    r = multiclass_nc_ece_interval(data, channels, n_bootstrap=500)
    nc = class_nc_ece(data, channels)
    assert r.top_label.plugin == pytest.approx(nc.top_label.value, abs=1e-12)
    assert r.classwise.plugin == pytest.approx(nc.classwise.value, abs=1e-12)
    lo, hi = r.top_label.interval()
    assert lo == 0.0 and r.top_label.p_value() > 0.1
    # the bias correction removes most of the plug-in's upward bias here
    assert r.top_label.estimate < r.top_label.plugin


def test_posterior_draws_widen_the_interval_and_sources_are_reported():
    data = simulate_multiclass(4000, 3, random_state=2, temperature=2.0)
    em = dawid_skene_em(summarize_multiclass(data, groups="all"))
    rng = np.random.default_rng(0)
    # a fake posterior: the EM confusions jittered (rows renormalised)
    t = em.confusion.values * np.exp(rng.normal(0, 0.05, (200, 3, 3, 3)))
    t /= t.sum(-1, keepdims=True)
    post = ChannelFit.from_confusion(
        t,
        np.repeat(em.class_prevalence.values, 200, axis=0),
        annotators=em.annotators,
        classes=em.classes,
        groups=["all"],
        group_counts=em.group_counts.values,
        method="jittered",
    )
    r = multiclass_nc_ece_interval(data, post, point_channels=em, n_bootstrap=400)
    dec = r.top_label.decomposition()
    assert dec["full"]["sd"] > dec["evaluation"]["sd"]
    assert dec["channel"]["sd"] > 0
    d = r.to_dict()["top_label"]
    assert set(d) >= {"point", "plugin", "lo", "hi", "prob", "p_value"} and "mean" not in d
    for part in (r.top_label, r.classwise):  # the headline estimate lies in its interval
        lo, hi = part.interval()
        assert lo <= part.estimate <= hi
    band = r.accuracy_band()
    assert band["count"].sum() == data.n_items


def test_arguments_are_checked():
    data = simulate_multiclass(500, 3, random_state=3)
    ch = ChannelFit.known_confusion(np.stack([np.eye(3) * 0.7 + 0.1] * 3))
    with pytest.raises(ConfigError, match="n_bootstrap"):
        multiclass_nc_ece_interval(data, ch, n_bootstrap=10)
    with pytest.raises(ConfigError, match="prob"):
        multiclass_nc_ece_interval(data, ch, prob=1.5)


def test_replicates_equal_a_per_replicate_reference(monkeypatch):
    """The chunked segment sums of the bootstrap moments (cells sorted by output and group) give
    the per-replicate formula ``sum_cells g (U - zbar)`` (SPEC §4) with the same Gamma stream,
    over several chunks. Tolerance: the two routes sum at most 60 terms of size <= 1 in
    different orders, so they differ by at most 60 float64 epsilons (1.3e-14)."""
    import bayescal.metrics.uncertainty as unc

    monkeypatch.setattr(
        unc, "row_chunks", lambda n, size: [slice(i, min(i + 7, n)) for i in range(0, n, 7)]
    )
    rng = np.random.default_rng(3)
    n_cells, n_out, n_rep, draws = 60, 4, 30, 9
    index = rng.integers(0, n_out, n_cells)
    count = rng.integers(1, 5, n_cells).astype(np.float64)
    zsum = count * rng.random(n_cells)
    table = rng.random((draws, n_cells))
    point = rng.random(n_cells)
    rate = rng.random((n_rep, 3))
    group = rng.integers(0, 3, n_cells)
    out = unc._multiclass_replicates(
        index,
        n_out,
        count,
        zsum,
        lambda d: table[d],
        point,
        n_rep,
        np.random.default_rng(5),
        draws,
        (rate, group),
    )
    ref_rng = np.random.default_rng(5)
    zbar = zsum / count
    for start in range(0, n_rep, 7):
        rows = range(start, min(start + 7, n_rep))
        g = ref_rng.standard_gamma(count, size=(len(rows), n_cells))
        g /= g.sum(axis=1, keepdims=True)
        for i, r in enumerate(rows):
            values = {"full": table[r % draws], "evaluation": point, "posterior": rate[r][group]}
            weight = np.bincount(index, g[i], n_out)
            for key, v in values.items():
                moment = np.bincount(index, g[i] * (v - zbar), n_out)
                np.testing.assert_allclose(out[key][r], moment, rtol=0, atol=60 * 2.2e-16)
                np.testing.assert_allclose(
                    out[f"rate_{key}"][r], np.bincount(index, g[i] * v, n_out) / weight, rtol=1e-13
                )
            channel = np.bincount(index, table[r % draws] * count - zsum, n_out) / count.sum()
            np.testing.assert_allclose(out["channel"][r], channel, rtol=0, atol=60 * 2.2e-16)
