"""Partitions: cell caps and sparse-bin warnings."""

import warnings

import numpy as np
import pytest

import bayescal as bc
from bayescal.errors import ConfigError, IdentificationWarning
from bayescal.summaries.partition import (
    MAX_CELLS,
    MIN_BIN_ITEMS,
    check_bin_occupancy,
    make_edges,
    suggest_bins,
)


def test_cell_cap_is_enforced_for_counts_and_edges():
    assert make_edges(MAX_CELLS).size == MAX_CELLS + 1
    with pytest.raises(ConfigError, match="limit of 1000"):
        make_edges(MAX_CELLS + 1)
    with pytest.raises(ConfigError, match="limit of 1000"):
        make_edges(np.linspace(0, 1, MAX_CELLS + 2), what="groups")
    d = bc.Annotations.from_arrays([0.1, 0.6, 0.9], [[0, 1], [1, 1], [1, 0]])
    with pytest.raises(ConfigError, match="bins"):
        bc.summarize(d, bins=100000)


def test_small_chunks_may_hold_fewer_items_than_bins():
    """Summaries are mergeable: a chunk with fewer items than bins is not an error."""
    d = bc.Annotations.from_arrays([0.1, 0.9], [[1, 0], [0, 1]])
    assert bc.summarize(d, groups=2, bins=10).n_items == 2


def test_suggest_bins_merges_adjacent_bins_to_the_minimum():
    assert suggest_bins([MIN_BIN_ITEMS] * 7) == 7
    assert suggest_bins([1] * 100) == 100 // MIN_BIN_ITEMS
    assert suggest_bins([0, 0, 3]) == 1
    counts = np.random.default_rng(0).integers(0, 30, size=200)
    m = suggest_bins(counts)
    assert 1 <= m <= counts.sum() // MIN_BIN_ITEMS


def test_occupancy_warning_triggers_on_sparse_or_empty_bins_only():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a few sparse end bins (1% of the items) are normal
        assert check_bin_occupancy([8, 60, 90, 120, 90, 60, 40, 20, 12, 0]) is None
    # 100 bins of 3 items: merged 4 by 4 into runs of at least MIN_BIN_ITEMS = 10
    with pytest.warns(IdentificationWarning, match="use at most about 25 bins"):
        msg = check_bin_occupancy([3] * 100)
    assert "100 bins over 300 items" in msg
    with pytest.warns(IdentificationWarning, match="6 empty"):
        check_bin_occupancy([0, 0, 0, 500, 500, 0, 0, 0, 100, 100])


@pytest.mark.parametrize("spec", ["auto", ["a", "b"], {"m": 3}])
def test_bins_that_are_neither_a_number_nor_edges_are_a_config_error(spec):
    from bayescal.errors import ConfigError
    from bayescal.summaries.partition import make_edges

    with pytest.raises(ConfigError, match="a number of bins .* or their edges"):
        make_edges(spec)
