"""Targets: voting rule, sampling and subsampling of annotations."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.ambiguity import (
    annotation_entropy,
    sample_labels,
    subsample_annotations,
    voted_labels,
)
from bayescal.errors import DataError


def test_voted_labels_break_ties_to_lowest_index():
    assert voted_labels([[2, 2, 1], [0, 3, 3]]).tolist() == [0, 1]


def test_sample_labels_follow_the_distribution():
    pi = np.array([[0.2, 0.5, 0.3]])
    y = sample_labels(pi, 200000, random_state=0)[0]
    freq = np.bincount(y, minlength=3) / y.size
    # Binomial sd at n = 2e5 is at most 1.1e-3; allow 5 sd.
    np.testing.assert_allclose(freq, pi[0], atol=5.5e-3)


def test_subsample_without_replacement():
    counts = np.array([[30, 15, 5], [1, 0, 49], [2, 2, 2]])
    reps = np.stack([subsample_annotations(counts, 5, random_state=s) for s in range(3000)])
    assert np.all(reps.sum(axis=2) == 5)
    assert np.all(reps <= counts[None])
    # Hypergeometric mean m * c_k / total; sd of the mean over 3000 reps < 0.02.
    np.testing.assert_allclose(
        reps.mean(axis=0), 5 * counts / counts.sum(axis=1, keepdims=True), atol=0.08
    )
    full = subsample_annotations(counts[:2], 50, random_state=0)
    assert np.array_equal(full, counts[:2])
    with pytest.raises(DataError, match="fewer than m"):
        subsample_annotations(counts, 7, random_state=0)


def test_annotation_entropy_range():
    h = annotation_entropy([[5, 5, 5], [9, 0, 0], [1, 1, 0]])
    np.testing.assert_allclose(h, [1.0, 0.0, np.log(2) / np.log(3)])
