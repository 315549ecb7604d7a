"""Both Brier forms and the bootstrap intervals of the ambiguity metrics (issue 16)."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.ambiguity import (
    brier,
    brier_sampled,
    evaluate,
    load_ambiguity_example,
    metric_intervals,
    paired_differences,
)
from bayescal.ambiguity.metric_intervals import _binned, _classwise
from bayescal.ambiguity.metrics import _bin_index
from bayescal.ambiguity.targets import _sample_kernel
from bayescal.errors import ConfigError, DataError


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _population(n, rng, k=5, sharpen=2.0):
    """Items whose annotator distribution pi is known; the model over-sharpens it."""
    pi = rng.dirichlet(np.full(k, 0.5), n)
    p = _softmax(sharpen * np.log(pi + 0.02) + rng.normal(0, 0.3, (n, k)))
    return p, pi


# --------------------------------------------------------------------------- Brier forms
def test_brier_sampled_is_the_exact_expectation_over_a_drawn_label():
    # Slow, obvious form: enumerate the label y ~ pi and average ||p - e_y||^2.
    rng = np.random.default_rng(0)
    counts = rng.multinomial(7, rng.dirichlet(np.ones(4), 50))
    counts[counts.sum(axis=1) == 0, 0] = 1
    pi = counts / counts.sum(axis=1, keepdims=True)
    p = rng.dirichlet(np.ones(4), 50)
    eye = np.eye(4)
    slow = np.mean(
        [sum(pi[i, y] * ((p[i] - eye[y]) ** 2).sum() for y in range(4)) for i in range(50)]
    )
    assert brier_sampled(p, counts) == pytest.approx(slow, abs=1e-14)
    # The identity of the issue: sampled = Eq. 5 + mean (1 - ||pi||^2).
    assert brier_sampled(p, counts) == pytest.approx(
        brier(p, counts) + np.mean(1 - (pi**2).sum(axis=1)), abs=1e-14
    )


def test_brier_forms_agree_on_one_hot_targets_and_eq5_is_zero_at_pi():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    assert brier_sampled(p, [0, 2]) == pytest.approx(brier(p, [0, 2]), abs=1e-15)
    pi = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    assert brier(pi, pi) == 0.0
    assert brier_sampled(pi, pi) == pytest.approx(np.mean(1 - (pi**2).sum(axis=1)))


def test_evaluate_reports_both_brier_forms():
    rng = np.random.default_rng(1)
    p, pi = _population(200, rng)
    m = evaluate(p, pi, n_draws=5)
    assert m["brier"] == brier(p, pi)
    assert m["brier_sampled"] == brier_sampled(p, pi)
    assert m["brier_sampled"] > m["brier"]


# --------------------------------------------------------------------------- kernels
def test_weighted_binned_kernel_equals_explicit_resampling():
    rng = np.random.default_rng(2)
    n, s = 120, 7
    conf = rng.uniform(0.3, 1.0, n)
    hits = (rng.random((n, s)) < rng.uniform(0, 1, n)[:, None]).astype(float)
    bins = _bin_index(conf, 15, "width")
    idx = rng.integers(0, n, n)
    w = np.bincount(idx, minlength=n)[None, :].astype(float)
    fast = _binned(w, hits - conf[:, None], bins)[0]
    # Slow: the resampled items themselves, bin by bin, draw by draw.
    slow = np.mean(
        [
            sum(
                abs(sum(hits[i, d] - conf[i] for i in idx if bins[i] == b)) for b in np.unique(bins)
            )
            / n
            for d in range(s)
        ]
    )
    assert fast == pytest.approx(slow, abs=1e-12)


def test_weighted_classwise_kernel_equals_explicit_resampling():
    rng = np.random.default_rng(3)
    n, k, s = 80, 4, 6
    p, pi = _population(n, rng, k=k)
    labels = _sample_kernel(pi, s, rng)
    idx = rng.integers(0, n, n)
    w = np.bincount(idx, minlength=n)[None, :].astype(float)
    fast = _classwise(w, p, labels, 15)[0]
    bins = _bin_index(p.ravel(), 15, "width").reshape(n, k)
    total = 0.0
    for d in range(s):
        for c in range(k):
            for b in range(15):
                total += abs(sum((labels[i, d] == c) - p[i, c] for i in idx if bins[i, c] == b))
    assert fast == pytest.approx(total / (n * k * s), abs=1e-12)


# --------------------------------------------------------------------------- intervals
def test_estimates_equal_evaluate_for_the_same_seed():
    rng = np.random.default_rng(4)
    p1, pi = _population(300, rng)
    p2 = _softmax(np.log(pi + 0.05))
    ds = metric_intervals({"a": p1, "b": p2}, pi, n_boot=20, n_draws=13, random_state=11)
    for name, p in (("a", p1), ("b", p2)):
        ref = evaluate(p, pi, n_draws=13, random_state=11)
        for metric in ds.metric.values:
            got = float(ds.estimate.sel(calibrator=name, metric=metric))
            assert got == pytest.approx(ref[str(metric)], abs=1e-12), metric


def test_paired_differences_identical_methods_are_not_distinguishable():
    rng = np.random.default_rng(5)
    p, pi = _population(300, rng)
    ds = metric_intervals({"a": p, "b": p.copy()}, pi, n_boot=30, n_draws=5)
    diff = paired_differences(ds, "a")
    assert float(abs(diff.estimate).max()) == 0.0
    assert not bool(diff.distinguishable.any())


def test_paired_differences_separate_a_much_worse_method():
    rng = np.random.default_rng(6)
    p, pi = _population(2000, rng)
    flat = np.full_like(p, 1 / p.shape[1])
    ds = metric_intervals({"model": p, "uniform": flat, "pi": pi}, pi, n_boot=100, n_draws=20)
    diff = paired_differences(ds, "pi")
    for metric in ("ece_true", "brier", "brier_sampled", "nll"):
        assert bool(diff.distinguishable.sel(calibrator="model", metric=metric)), metric
        assert float(diff.lo.sel(calibrator="model", metric=metric)) > 0
    # Brier differences are the same in both forms (the pi term cancels in a pair).
    np.testing.assert_allclose(
        diff.estimate.sel(metric="brier"), diff.estimate.sel(metric="brier_sampled"), atol=1e-12
    )


@pytest.mark.slow
def test_interval_coverage_of_population_values():
    """Coverage of nominal 90% intervals over 120 simulated test sets of 800 items.

    Population values come from 400,000 items with the plug-in (pi instead of
    sampled labels; the label-draw noise averages out). Brier is a mean of
    i.i.d. terms: coverage must be nominal, within 3 binomial standard errors
    (sd = sqrt(.9 * .1 / 120) = 0.027). ECE_true is binned: the basic interval
    corrects its first-order bias; we ask for at least 0.75 (measured 0.87 at
    1,000 items) and record that the percentile interval would fail.
    """
    big_p, big_pi = _population(400_000, np.random.default_rng(123))
    conf = big_p.max(axis=1)
    pc = big_pi[np.arange(big_p.shape[0]), big_p.argmax(axis=1)]
    bins = _bin_index(conf, 15, "width")
    truth_ece = np.abs(np.bincount(bins, weights=pc - conf, minlength=15)).sum() / conf.size
    truth_brier = ((big_p - big_pi) ** 2).sum(axis=1).mean()
    hits = {"ece_true": 0, "brier": 0}
    reps = 120
    for r in range(reps):
        p, pi = _population(800, np.random.default_rng(1000 + r))
        ds = metric_intervals({"m": p}, pi, n_boot=200, n_draws=20, random_state=r)
        for metric, truth in (("ece_true", truth_ece), ("brier", truth_brier)):
            lo = float(ds.lo.sel(calibrator="m", metric=metric))
            hi = float(ds.hi.sel(calibrator="m", metric=metric))
            hits[metric] += lo <= truth <= hi
    assert abs(hits["brier"] / reps - 0.9) <= 3 * np.sqrt(0.09 / reps)
    assert hits["ece_true"] / reps >= 0.75


def test_intervals_on_the_shipped_chaosnli_example():
    data = load_ambiguity_example("chaosnli-snli")
    cal, test = np.arange(0, 1514, 2), np.arange(1, 1514, 2)
    p = _softmax(data.logits[test] / 2.0)
    ds = metric_intervals({"ts2": p}, data.counts[test], n_boot=50, n_draws=10)
    est = ds.estimate.sel(calibrator="ts2")
    assert bool((ds.lo.sel(calibrator="ts2") <= ds.hi.sel(calibrator="ts2")).all())
    assert float(est.sel(metric="brier_sampled")) > float(est.sel(metric="brier"))
    assert cal.size == test.size


def test_bad_settings_and_inputs_are_refused():
    p = np.array([[0.6, 0.4], [0.3, 0.7]])
    with pytest.raises(ConfigError, match="n_boot"):
        metric_intervals({"a": p}, [0, 1], n_boot=1)
    with pytest.raises(ConfigError, match="prob"):
        metric_intervals({"a": p}, [0, 1], prob=1.5)
    with pytest.raises(ConfigError, match="non-empty"):
        metric_intervals({}, [0, 1])
    with pytest.raises(DataError, match="same items"):
        metric_intervals({"a": p, "b": np.array([[0.5, 0.5]])}, [0, 1])
    ds = metric_intervals({"a": p}, [0, 1], n_boot=5, n_draws=2)
    with pytest.raises(ConfigError, match="reference"):
        paired_differences(ds, "zz")
