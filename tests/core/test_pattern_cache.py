"""The per-K pattern tables are built once, shared read-only, and equal the slow definition.

``pattern_states`` / ``pattern_labels`` / ``pattern_index`` are cached per K (the
audit summarises about fifteen times, and at K = 12 each rebuild cost seconds). These
tests hold them, and the summaries built on them, to the obvious per-pattern and
per-item definitions, exactly, at K = 5 and at the largest K = 12.
"""

import functools
import itertools

import numpy as np
import pytest

from bayescal import Annotations, summarize
from bayescal.summaries.patterns import (
    MAX_PATTERN_ANNOTATORS,
    pattern_index,
    pattern_labels,
    pattern_states,
)


@functools.cache
def _slow_states(k):
    # itertools.product varies its last position fastest; the encoding's annotator 0 is
    # the least significant digit, so each tuple is read backwards.
    rows = [t[::-1] for t in itertools.product(range(3), repeat=k)]
    return np.array(rows, dtype=np.int8).reshape(3**k, k)


def _slow_labels(k):
    return ["".join("01."[s] for s in row) for row in _slow_states(k).tolist()]


@pytest.mark.parametrize(
    "k", [1, 2, 5, pytest.param(MAX_PATTERN_ANNOTATORS, marks=pytest.mark.slow)]
)
def test_tables_equal_the_definition(k):
    states = pattern_states(k)
    assert states.dtype == np.int8
    np.testing.assert_array_equal(states, _slow_states(k))
    labels = pattern_labels(k)
    assert labels.dtype == object and all(type(x) is str for x in labels[:50])
    assert labels.tolist() == _slow_labels(k)
    assert pattern_index(k).tolist() == labels.tolist()


def test_tables_are_shared_and_read_only():
    assert pattern_states(5) is pattern_states(5)
    assert pattern_labels(5) is pattern_labels(5)
    with pytest.raises(ValueError, match="read-only"):
        pattern_states(5)[0, 0] = 1
    with pytest.raises(ValueError, match="read-only"):
        pattern_labels(5)[0] = "x"


def _slow_summary_counts(score, labels, bin_edges):
    """Per-item counting of (bin, pattern label) with a dict: the definition of the summary."""
    counts, sums = {}, {}
    n_bins = len(bin_edges) - 1
    for z, row in zip(score, labels):
        if np.isnan(row).all():
            continue
        b = min(int(np.searchsorted(bin_edges, z, "right")) - 1, n_bins - 1)
        key = (b, "".join("." if np.isnan(v) else str(int(v)) for v in row))
        counts[key] = counts.get(key, 0) + 1
        sums[key] = sums.get(key, 0.0) + z
    return counts, sums


@pytest.mark.parametrize("k", [5, MAX_PATTERN_ANNOTATORS])
def test_summary_equals_per_item_counts(k):
    rng = np.random.default_rng(k)
    n = 60
    score = rng.random(n)
    labels = (rng.random((n, k)) < score[:, None]).astype(float)
    labels[rng.random((n, k)) < 0.3] = np.nan
    labels[0] = np.nan  # one unannotated item: counted apart
    data = Annotations.from_arrays(score, labels)
    edges = np.linspace(0, 1, 4)
    # twice: the second summary reads the cached tables, and must be the same
    first, second = (summarize(data, groups=2, bins=3) for _ in range(2))
    assert first.equals(second) and first.data_hash() == second.data_hash()
    counts, sums = _slow_summary_counts(score, labels, edges)
    bpc = first.bin_pattern_counts
    got = {
        (b, str(p)): int(bpc.values[b, j])
        for b in range(3)
        for j, p in enumerate(bpc["pattern"].values)
        if bpc.values[b, j]
    }
    assert got == counts
    for (b, p), total in sums.items():
        assert first.bin_pattern_score_sum.sel(pattern=p).values[b] == pytest.approx(total, 1e-12)
    assert int(first.n_unannotated.sum()) == 1
    np.testing.assert_array_equal(first.states, _slow_states(k))
