"""Metrics: exact checks against slow per-item implementations, Jensen, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.ambiguity import (
    accuracy,
    aece,
    brier,
    cwece,
    ece_plugin,
    ece_true,
    ece_voted,
    evaluate,
    nll,
)
from bayescal.ambiguity.simplex import softmax
from bayescal.ambiguity.targets import _sample_kernel
from bayescal.errors import DataError


def _random_problem(n, k, seed, *, scale=3.0, conc=0.5):
    rng = np.random.default_rng(seed)
    p = softmax(rng.normal(size=(n, k)) * scale)
    pi = rng.dirichlet(np.full(k, conc), size=n)
    return p, pi


def _slow_ece(conf, hit, n_bins=15):
    """Textbook loop: bins [l/B, (l+1)/B), the last closed; sum_l (n_l/n) |acc_l - conf_l|."""
    n = len(conf)
    total = 0.0
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        members = [
            i for i in range(n) if (lo <= conf[i] < hi) or (b == n_bins - 1 and conf[i] == 1.0)
        ]
        if members:
            acc = sum(hit[i] for i in members) / len(members)
            cf = sum(conf[i] for i in members) / len(members)
            total += len(members) / n * abs(acc - cf)
    return total


def test_one_hot_distribution_gives_ordinary_ece():
    p, pi = _random_problem(400, 4, 0)
    y = np.random.default_rng(1).integers(0, 4, size=400)
    onehot = np.eye(4)[y]
    expected = _slow_ece(p.max(axis=1), (p.argmax(axis=1) == y).astype(float))
    got = ece_true(p, onehot, n_draws=7, random_state=3)
    assert float(got.ece) == pytest.approx(expected, abs=1e-12)
    # Every draw is the same when pi is one-hot.
    assert np.ptp(got.ece_draw.values) == pytest.approx(0.0, abs=1e-15)
    assert float(ece_voted(p, y).ece) == pytest.approx(expected, abs=1e-12)
    assert float(ece_plugin(p, onehot).ece) == pytest.approx(expected, abs=1e-12)


def test_ece_true_matches_per_item_loop_with_the_same_draws():
    p, pi = _random_problem(300, 3, 2)
    s = 5
    u = np.random.default_rng(11).random((300, s))
    c = p.argmax(axis=1)
    hits = u < pi[np.arange(300), c][:, None]
    expected = np.mean([_slow_ece(p.max(axis=1), hits[:, j].astype(float)) for j in range(s)])
    assert float(ece_true(p, pi, n_draws=s, random_state=11).ece) == pytest.approx(
        expected, abs=1e-12
    )


def test_cwece_matches_per_class_loop_with_the_same_draws():
    p, pi = _random_problem(200, 3, 4)
    s = 4
    labels = _sample_kernel(pi, s, np.random.default_rng(5))
    per_draw = []
    for j in range(s):
        per_class = [_slow_ece(p[:, k], (labels[:, j] == k).astype(float)) for k in range(3)]
        # _slow_ece uses |acc - conf| per bin; class-wise error compares p_k with 1(y = k).
        per_draw.append(np.mean(per_class))
    got = cwece(p, pi, n_draws=s, random_state=5)
    assert float(got.ece) == pytest.approx(np.mean(per_draw), abs=1e-12)
    assert got.class_ece.sizes["class"] == 3


def test_plugin_never_exceeds_mc_average_and_meets_it_as_bins_fill():
    gaps = []
    for n in (150, 15000):
        p, pi = _random_problem(n, 3, 6, scale=1.5, conc=2.0)
        mc = ece_true(p, pi, n_draws=400, random_state=0)
        plug = float(ece_plugin(p, pi).ece)
        se = float(mc.ece_draw.std()) / np.sqrt(400)
        # Jensen: E|X| >= |E X| bin by bin; allow 4 Monte Carlo standard errors.
        assert plug <= float(mc.ece) + 4 * se
        gaps.append(float(mc.ece) - plug)
    # The Jensen gap is the mean absolute sampling error of a bin sum, O(1/sqrt(n_bin)):
    # 100x more items per bin shrink it about 10x; require at least 4x.
    assert gaps[0] > 0
    assert gaps[1] < gaps[0] / 4


def test_equal_mass_bins_hold_equal_counts():
    p, pi = _random_problem(151, 3, 7)
    ds = aece(p, pi, n_bins=15, n_draws=3)
    counts = ds["count"].values
    assert counts.sum() == 151
    assert counts.max() - counts.min() <= 1
    assert ds.attrs["binning"] == "mass"


def test_reliability_data_are_consistent():
    p, pi = _random_problem(500, 4, 8)
    ds = ece_true(p, pi, n_draws=20, random_state=1)
    filled = ds["count"].values > 0
    weighted = (ds["count"].values[filled] / 500 * np.abs(ds["gap"].values[filled])).sum()
    # |mean over draws| <= mean over draws of |.|, bin by bin.
    assert weighted <= float(ds.ece) + 1e-12
    assert np.all(np.isnan(ds["confidence"].values[~filled]))


def test_proper_scores_and_accuracy():
    p, pi = _random_problem(50, 3, 9)
    assert brier(p, pi) == pytest.approx(np.mean(np.sum((p - pi) ** 2, axis=1)))
    assert nll(p, pi) == pytest.approx(np.mean(-np.sum(pi * np.log(p), axis=1)))
    assert accuracy(p, pi) == pytest.approx(np.mean(p.argmax(1) == pi.argmax(1)))
    # Strict propriety: predicting the target distribution itself minimises the NLL.
    assert nll(pi, pi) < nll(p, pi)


def test_nll_of_hard_zero_is_finite_and_large():
    assert nll([[1.0, 0.0]], [[1, 1]]) == pytest.approx(0.5 * np.log(1e300))


def test_evaluate_is_reproducible():
    p, pi = _random_problem(100, 3, 10)
    assert evaluate(p, pi, n_draws=10, random_state=4) == evaluate(
        p, pi, n_draws=10, random_state=4
    )


@pytest.mark.parametrize(
    "proba, targets, match",
    [
        ([[np.nan, 1.0]], [[1, 0]], "NaN or infinite"),
        ([[0.5, 0.5]], [[-1, 2]], "negative"),
        ([[0.5, 0.5]], [[0, 0]], "all-zero"),
        ([[0.5, 0.5]], [[1, 0, 0]], "class columns"),
        ([[1.0]], [[1]], "at least two classes"),
        ([[0.5, 0.5]], [2], "out of range"),
        ([[0.7, 0.5]], [[1, 0]], "sum to one"),
    ],
)
def test_bad_inputs_raise(proba, targets, match):
    with pytest.raises(DataError, match=match):
        ece_true(proba, targets)
