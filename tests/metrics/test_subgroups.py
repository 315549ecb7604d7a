"""Subgroup NC-ECE (issue 25 item 1): kernel vs the one metric path, population truth at
large n for C = 2 and C = 3, pooling, Holm, MAP EM, errors."""

import itertools

import numpy as np
import pytest

from bayescal.channels.em import dawid_skene_em, em_run, expected_answer_counts
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError, IdentificationError
from bayescal.metrics.ncece import class_nc_ece, nc_ece
from bayescal.metrics.subgroups import (
    MIN_KAPPA,
    _agreement_ps,
    holm_adjust,
    reader_clusters,
    subgroup_nc_ece,
)
from bayescal.simulate.multiclass import (
    default_confusions,
    multiclass_population,
    simulate_multiclass,
    simulate_subgroups,
    subgroup_truth,
)
from bayescal.summaries.summary import summarize


def _pops(c, temps, noise=(0.0, 0.0)):
    base = default_confusions(3, c, random_state=7)
    return {
        name: multiclass_population(c, (1 - w) * base + w / c, temperature=t, random_state=0)
        for name, t, w in zip(("A", "B"), temps, noise)
    }


@pytest.mark.parametrize("c", [2, 3])
def test_point_moments_equal_the_one_metric_path_on_each_subgroup(c):
    # Shared channels: each subgroup's plug-in must be the audit metric of its items at
    # the shared EM fit (binary nc_ece for C = 2, class_nc_ece's top label for C = 3).
    # The subgroup path refines that fit by EM to tol 1e-9 in mean log-likelihood, which
    # moves the channels by ~1e-5 at most, so the plug-ins agree to 1e-4.
    data = simulate_subgroups(_pops(c, (1.0, 2.0)), {"A": 800, "B": 500}, random_state=1)
    groups = 5 if c == 2 else "predicted"
    res = subgroup_nc_ece(data, channels="shared", n_bootstrap=100)
    fit = dawid_skene_em(summarize(data, groups=groups), prevalence="grouped", random_state=0)
    for s in res.subgroups:
        part = data.subset(data.group == s.name)
        ref = nc_ece(part, fit).value if c == 2 else class_nc_ece(part, fit).top_label.value
        assert s.plugin == pytest.approx(ref, abs=1e-4)
        assert s.n_items == part.n_items


@pytest.mark.parametrize("c", [2, 3])
def test_population_truth_recovered_at_large_n(c):
    # 20,000 items per subgroup: the bias-aware interval has half-width ~ 1.645 sd; the
    # estimate must sit within 4 sd (sd = width / 3.29) of the exact population ECE and
    # the interval must hold it (a 10% miss is possible per subgroup; the seed is fixed).
    pops = _pops(c, (1.0, 2.2))
    data = simulate_subgroups(pops, {"A": 20_000, "B": 20_000}, random_state=2)
    metric = "binary" if c == 2 else "top_label"
    res = subgroup_nc_ece(data, channels="pooled", n_bootstrap=100)
    for s in res.subgroups:
        truth = subgroup_truth(pops[s.name], metric)
        sd = (s.hi - s.lo) / 3.29
        assert s.lo <= truth <= s.hi
        assert abs(s.estimate - truth) <= 4 * sd + 1e-3
    assert res.subgroups[1].p_holm < 0.05  # B is miscalibrated: found
    assert not res.calibrated_everywhere()
    assert res.gap["worst"] == "B" and res.gap["lo"] > 0


def test_shared_channels_bias_a_subgroup_with_noisier_readers_and_pooling_fixes_it():
    # B's readers are noisier (rows mixed 40% with the uniform row); shared channels
    # under-correct B's labels, so B's NC-ECE is biased upward, by far more than 4 sd;
    # its own (pooled) channels recover the truth within 4 sd.
    pops = _pops(2, (1.6, 1.6), noise=(0.0, 0.4))
    data = simulate_subgroups(pops, {"A": 20_000, "B": 20_000}, random_state=3)
    truth = subgroup_truth(pops["B"], "binary")
    shared = subgroup_nc_ece(data, channels="shared", n_bootstrap=100).subgroups[1]
    pooled = subgroup_nc_ece(data, channels="pooled", n_bootstrap=100)
    b = pooled.subgroups[1]
    assert shared.estimate - truth > 4 * (shared.hi - shared.lo) / 3.29
    assert abs(b.estimate - truth) <= 4 * (b.hi - b.lo) / 3.29 + 1e-3
    assert pooled.kappa is not None and b.shrinkage < 0.1  # little pooling: readers differ


def test_identical_readers_pool_more_than_different_ones():
    same = simulate_subgroups(_pops(3, (1.5, 1.5)), {"A": 2000, "B": 2000}, random_state=4)
    diff = simulate_subgroups(
        _pops(3, (1.5, 1.5), noise=(0.0, 0.5)), {"A": 2000, "B": 2000}, random_state=4
    )
    k_same = subgroup_nc_ece(same, n_bootstrap=100).kappa
    k_diff = subgroup_nc_ece(diff, n_bootstrap=100).kappa
    assert k_same > 10 * k_diff


def test_holm_matches_the_step_down_definition():
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=5)
        order = np.argsort(p)
        slow = np.empty(5)
        for rank, i in enumerate(order):
            slow[i] = min(1.0, max((5 - r) * p[order[r]] for r in range(rank + 1)))
        assert np.allclose(holm_adjust(p), slow)


def test_map_em_without_prior_is_the_em_and_a_huge_prior_is_the_prior():
    data = simulate_multiclass(1000, 3, random_state=5)
    s = summarize(data, groups="predicted")
    fit = dawid_skene_em(s, prevalence="grouped")
    t0, rho0 = fit.confusion.values, fit.class_prevalence.values
    counts = s.pattern_counts.values.astype(float)
    plain = em_run(counts, s.states, t0, rho0)
    zero = em_run(counts, s.states, t0, rho0, prior=np.zeros(t0.shape[1:]))
    assert np.array_equal(plain["confusion"], zero["confusion"])
    target = np.full(t0.shape[1:], 1.0 / 3)
    huge = em_run(counts, s.states, t0, rho0, prior=1e9 * target)
    assert np.allclose(huge["confusion"][0], target, atol=1e-5)  # 1e3 items / 1e9 prior


def test_expected_answer_counts_match_a_per_item_loop():
    data = simulate_multiclass(300, 3, random_state=6, missing=0.2)
    s = summarize(data, groups="all")
    fit = dawid_skene_em(s, prevalence="grouped")
    t, rho = fit.confusion.values, fit.class_prevalence.values
    counts = s.pattern_counts.values.astype(float)[None]
    fast = expected_answer_counts(counts, s.states, t, rho)[0]
    slow = np.zeros_like(fast)
    for p, row in enumerate(s.states):
        like = rho[0, 0] * np.prod(
            [t[0, j, :, a] if a < 3 else np.ones(3) for j, a in enumerate(row)], 0
        )
        post = like / like.sum()
        for j, a in enumerate(row):
            if a < 3:
                slow[j, :, a] += counts[0, 0, p] * post
    assert np.allclose(fast, slow, rtol=1e-10)


def _two_sites(n=400, c=2, seed=0):
    data = simulate_multiclass(n, c, random_state=seed)
    return data, np.where(np.arange(n) < n // 2, "A", "B")


def test_bad_subgroups_are_refused_with_the_fix():
    data, site = _two_sites()
    with pytest.raises(DataError, match="at least two subgroups"):
        subgroup_nc_ece(data, np.full(400, "A"))
    small = site.copy()
    small[:30] = "C"
    with pytest.raises(DataError, match=r"'C' \(30\).*fewer than 50"):
        subgroup_nc_ece(data, small)
    # 200 subgroups of two items: the message names ten and counts the rest (it listed all)
    with pytest.raises(DataError, match=r"\(2\) and 190 more of") as many:
        subgroup_nc_ece(data, np.array([f"s{i % 200}" for i in range(400)]))
    assert len(str(many.value)) < 400
    missing = site.astype(object)
    missing[3] = None
    with pytest.raises(DataError, match="missing for 1 item"):
        subgroup_nc_ece(data, missing)
    with pytest.raises(DataError, match="one value per item"):
        subgroup_nc_ece(data, site[:10])
    with pytest.raises(ConfigError, match="needs a per-item subgroup"):
        subgroup_nc_ece(data, "site")
    with pytest.raises(ConfigError, match="channels must be one of"):
        subgroup_nc_ece(data, site, channels="hierarchical")
    with pytest.raises(ConfigError, match="item-level"):
        subgroup_nc_ece(summarize(data), site)


def test_missing_subgroup_names_the_item_as_written():
    # M7: the message showed the id's numpy repr ("first at item np.int64(0)")
    data, site = _two_sites()
    missing = site.astype(object)
    missing[[0, 5]] = None, np.nan
    with pytest.raises(DataError) as err:
        subgroup_nc_ece(data, missing)
    message = str(err.value)
    assert "subgroup is missing for 2 item(s) (None, NaN or blank), first at item 0;" in message
    assert "np." not in message and "'subgroup'" not in message, message
    named = Annotations.from_arrays(
        data.probs, data.labels, item=[f"x{i}" for i in range(400)], group=site
    )
    with pytest.raises(DataError, match="missing for 1 item.*first at item 'x3';"):
        subgroup_nc_ece(named, np.where(np.arange(400) == 3, "", site))


def test_small_subgroup_fix_is_one_the_caller_can_take():
    # M6: "lower min_items" was the fix even where no such option exists (the CLI, audit())
    data, site = _two_sites()
    small = site.copy()
    small[:30] = "C"
    with pytest.raises(DataError) as err:
        subgroup_nc_ece(data, small)
    message = str(err.value)
    assert "merge each with a similar subgroup" in message and "collect more items" in message
    assert "or lower min_items" not in message and "subgroup_nc_ece(min_items=)" in message


def test_per_subgroup_channels_refused_where_not_identified():
    # In subgroup B only two of three annotators answer: C = 3 with K = 2 is not identified.
    data, site = _two_sites(600, 3, seed=1)
    labels = data.labels.copy()
    labels[site == "B", 2] = np.nan
    data = Annotations.from_arrays(data.probs, labels, annotators=data.annotators, group=site)
    with pytest.raises(IdentificationError, match="subgroup 'B'.*channels='pooled'"):
        subgroup_nc_ece(data, "site", channels="per-subgroup", n_bootstrap=100)
    res = subgroup_nc_ece(data, "site", channels="pooled", n_bootstrap=100)
    assert [s.identified for s in res.subgroups] == [True, False]
    assert any("not identified" in w for w in res.warnings)


def test_result_dict_has_one_entry_per_subgroup_and_the_family_test():
    data, site = _two_sites(600, 3, seed=2)
    d = subgroup_nc_ece(data, site, n_bootstrap=100, random_state=3).to_dict()
    assert [e["subgroup"] for e in d["entries"]] == ["A", "B"]
    assert d["test"]["correction"] == "holm" and d["test"]["level"] == 0.1
    assert d["test"]["p_value"] == min(e["p_holm"] for e in d["entries"])
    for e, (a, b) in zip(d["entries"], itertools.repeat(("lo", "hi"))):
        assert 0 <= e[a] <= e[b]
    again = subgroup_nc_ece(data, site, n_bootstrap=100, random_state=3).to_dict()
    assert again == d  # seeded


def test_a_subgroup_whose_readers_differ_keeps_its_own_channels():
    # A and B share readers, the small C has noisier ones (rows mixed 45% with the
    # uniform row). The pairwise reader tests put A and B in one cluster, which pools
    # (a large concentration: their rows agree), and leave C alone with its own
    # channels: pooled toward A's and B's readers, C's labels would be under-corrected
    # and its NC-ECE biased upward (bench subgroups).
    base = default_confusions(3, 2, random_state=7)
    pops = {
        name: multiclass_population(2, (1 - w) * base + w / 2, temperature=1.6, random_state=0)
        for name, w in (("A", 0.0), ("B", 0.0), ("C", 0.45))
    }
    data = simulate_subgroups(pops, {"A": 1500, "B": 1500, "C": 300}, random_state=8)
    res = subgroup_nc_ece(data, n_bootstrap=100)
    assert res.clusters == [["A", "B"], ["C"]]
    a, b, c = res.subgroups
    assert a.pooled and b.pooled and not c.pooled
    assert res.kappa is not None and res.kappa > 100
    for s in (a, b):
        assert s.shrinkage <= res.kappa / (s.n_items + res.kappa) + 1e-12
    assert c.shrinkage == pytest.approx(MIN_KAPPA / (c.n_items + MIN_KAPPA))
    assert c.agreement_p < 0.01 <= min(a.agreement_p, b.agreement_p)
    assert any("'C'" in w and "own channels" in w for w in res.warnings)


def _rows_draws(rows, n, reps, rng):
    """(1 + reps, K, C, C) multinomial row estimates from n answers per row."""
    return rng.multinomial(n, rows, size=(1 + reps, *rows.shape[:-1])) / n


def test_agreement_p_is_uniform_under_the_null_and_small_under_a_difference():
    # Rows estimated from n answers (exact multinomial sampling, so the replicates'
    # spread is the sampling spread): the Hotelling p-value of two subgroups with the
    # same rows is ~U(0, 1); rows mixed 40% with the uniform row (diagonal 0.1-0.2 lower,
    # 3-6 sd of a difference at n = 400) give p << 0.01.
    rng = np.random.default_rng(0)
    rows = default_confusions(3, 3, random_state=1)
    null = [
        _agreement_ps(_rows_draws(rows, 400, 200, rng), _rows_draws(rows, 400, 200, rng))[0]
        for _ in range(200)
    ]
    # MC bounds: 200 uniform p-values put 20 +- 4.2 below 0.1 (binomial sd)
    assert 20 - 3.5 * 4.2 <= sum(p < 0.1 for p in null) <= 20 + 3.5 * 4.2
    assert 0.5 - 3.5 * 0.02 <= float(np.mean(null)) <= 0.5 + 3.5 * 0.02
    moved = 0.6 * rows + 0.4 / 3
    p = _agreement_ps(_rows_draws(rows, 400, 200, rng), _rows_draws(moved, 400, 200, rng))[0]
    assert p < 1e-3


def test_reader_clusters_join_the_agreeing_and_keep_the_odd_one_alone():
    rng = np.random.default_rng(1)
    rows = default_confusions(3, 2, random_state=2)
    odd = 0.6 * rows + 0.4 / 2
    n = {"A": 600, "B": 400, "C": 300}
    counts = []
    for name, r in (("A", rows), ("B", rows), ("C", odd)):
        counts.append(_rows_draws(r, n[name], 200, rng) * n[name])
    point = np.stack([x[:1] for x in counts])
    reps = np.stack([x[1:] for x in counts])
    cluster, p = reader_clusters(point, reps, np.array([600, 400, 300]), 0.01)
    assert cluster.tolist() == [0, 0, 1]
    assert p[0, 1] >= 0.01 and max(p[0, 2], p[1, 2]) < 1e-3
    assert np.allclose(p, p.T) and np.all(np.diag(p) == 1)


def test_every_replicate_chooses_its_own_clusters():
    """replicate_clusters: row 0 is reader_clusters' point choice; the replicates decide
    from their own differences. Clear evidence (C's rows 40% toward uniform, p << 1e-3)
    keeps C apart in every replicate. Here the "replicates" are independent multinomial
    draws from the true rows (not resamples of the point data), so A and B, whose readers
    agree, split in a replicate with the test's level, 0.01: of 200, at most 0.01 + 3.5
    binomial sd (0.007) = 0.035."""
    from bayescal.metrics.subgroups import replicate_clusters

    rng = np.random.default_rng(1)
    rows = default_confusions(3, 2, random_state=2)
    odd = 0.6 * rows + 0.4 / 2
    n = {"A": 600, "B": 400, "C": 300}
    counts = [
        _rows_draws(r, n[k], 200, rng) * n[k] for k, r in (("A", rows), ("B", rows), ("C", odd))
    ]
    point = np.stack([x[:1] for x in counts])
    reps = np.stack([x[1:] for x in counts])
    sizes = np.array([600, 400, 300])
    clusters, p = replicate_clusters(point, reps, sizes, 0.01)
    cluster0, p0 = reader_clusters(point, reps, sizes, 0.01)
    assert clusters.shape == (201, 3) and p.shape == (201, 3, 3)
    np.testing.assert_array_equal(clusters[0], cluster0)
    np.testing.assert_array_equal(p[0], p0)
    assert np.all(clusters[1:, 2] != clusters[1:, 0])  # C never joins A
    split = float(np.mean(clusters[1:, 1] != clusters[1:, 0]))
    assert split <= 0.035, split
