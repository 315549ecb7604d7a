"""Vote ECEs run over the non-empty (bin, pattern) cells, not the dense bins x patterns table.

Held to the dense product ``(t @ counts.T - score_sum) / n`` they replaced, at K = 5 and
K = 12, with one target row and with several (draw-wise targets), and with many bins.
Tolerance: each bin moment sums at most n = 400 products of a target in [0, 1] and an
integer count, so reordering the sum changes it by at most n * eps * n_b / n
<= 400 * 2.2e-16 ~ 1e-13 in absolute terms (moments are at most 1).
"""

import numpy as np
import pytest

from bayescal import Annotations, summarize
from bayescal.metrics.binned import (
    binned_ece_from_targets,
    majority_vote_ece,
    majority_vote_targets,
    soft_vote_ece,
    soft_vote_targets,
)

TOL = 1e-13


def _data(k, seed):
    rng = np.random.default_rng(seed)
    n = 400
    score = rng.random(n)
    labels = (rng.random((n, k)) < score[:, None]).astype(float)
    labels[rng.random((n, k)) < 0.25] = np.nan
    return Annotations.from_arrays(score, labels)


def _dense_moments(summary, targets):
    view = summary.binary
    counts = view.bin_pattern_counts.astype(np.float64)
    return (np.atleast_2d(targets) @ counts.T - view.bin_score_sum) / summary.n_items


@pytest.mark.parametrize(("k", "bins"), [(5, 10), (5, 200), (12, 10), (12, 60)])
def test_vote_ece_equals_the_dense_product(k, bins):
    s = summarize(_data(k, k + bins), groups=1, bins=bins)
    for result, targets in (
        (soft_vote_ece(s), soft_vote_targets(s.states)),
        (majority_vote_ece(s), majority_vote_targets(s.states)),
    ):
        dense = _dense_moments(s, targets)
        np.testing.assert_allclose(result.bin_moments.values, dense, rtol=0, atol=TOL)
        assert result.value == pytest.approx(np.abs(dense).sum(), abs=bins * TOL)


def test_several_target_rows_and_empty_bins():
    s = summarize(_data(5, 1), groups=1, bins=[0, 0.3, 0.300001, 0.300002, 1])
    assert (s.binary.bin_count == 0).any()  # an empty bin: its moment must be 0
    rng = np.random.default_rng(2)
    targets = rng.random((7, s.n_patterns))
    got = binned_ece_from_targets(s, targets, "test")
    np.testing.assert_allclose(got.bin_moments.values, _dense_moments(s, targets), atol=TOL)
    assert got.ece.shape == (7,)
