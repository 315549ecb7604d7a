"""MulticlassSummary: equal to per-item loops, mergeable, identical across counting paths."""

import numpy as np
import pytest
from multiclass_helpers import brute_force_cells, summary_cells

import bayescal.summaries.multiclass as smc
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import DataError
from bayescal.simulate import simulate_multiclass
from bayescal.summaries.multiclass import summarize_multiclass, unique_patterns

EDGES = np.linspace(0, 1, 11)


def _assert_matches_brute_force(s, data, **kw):
    ref = brute_force_cells(data, s.bin_edges, **kw)
    groups, top, cw = summary_cells(s)
    assert groups == ref["groups"]
    assert top.keys() == ref["top"].keys() and cw.keys() == ref["cw"].keys()
    for key, (n, z) in ref["top"].items():
        assert top[key][0] == n and top[key][1] == pytest.approx(z, rel=1e-12)
    for key, (n, z) in ref["cw"].items():
        assert cw[key][0] == n and cw[key][1] == pytest.approx(z, rel=1e-12)
    unann = s.n_unannotated.values
    assert {g: int(v) for g, v in enumerate(unann) if v} == ref["unannotated"]
    if data.truth is not None:
        np.testing.assert_allclose(
            s.top_bin_truth_sum.values,
            [ref["top_truth"].get(b, 0) for b in range(s.n_bins)],
        )
        np.testing.assert_allclose(
            s.classwise_bin_truth_sum.values,
            [[ref["cw_truth"].get((k, b), 0) for b in range(s.n_bins)] for k in range(s.n_classes)],
        )


def test_summary_equals_per_item_loops(mc_small, mc_small_summary):
    _assert_matches_brute_force(mc_small_summary, mc_small)
    s = mc_small_summary
    assert s.n_items + int(s.n_unannotated.sum()) == mc_small.n_items
    np.testing.assert_array_equal(s.top_bin_count.values.sum(), s.n_items)
    np.testing.assert_array_equal(s.classwise_bin_count.values.sum(axis=1), s.n_items)
    answered = mc_small.answered
    for j in range(3):
        lab = mc_small.labels[answered[:, j], j].astype(int)
        np.testing.assert_array_equal(s.answer_counts.values[j], np.bincount(lab, minlength=4))


@pytest.mark.parametrize("groups", ["all", [0, 0.5, 0.8, 1], 3])
def test_other_groupings_equal_per_item_loops(mc_small, groups):
    s = summarize_multiclass(mc_small, groups=groups, bins=[0, 0.3, 0.55, 0.9, 1])
    if groups == "all":
        _assert_matches_brute_force(s, mc_small, grouping="all")
    else:
        _assert_matches_brute_force(s, mc_small, grouping="confidence", group_edges=s.group_edges)


def test_data_groups_use_the_container_variable(mc_small):
    g = np.arange(mc_small.n_items) % 3
    d = MulticlassAnnotations.from_arrays(mc_small.probs, mc_small.labels, group=g)
    s = summarize_multiclass(d, groups="data")
    assert s.groups == ["0", "1", "2"]
    np.testing.assert_array_equal(
        s.group_counts.values + s.n_unannotated.values, np.bincount(g, minlength=3)
    )


def _split(data, parts):
    idx = np.array_split(np.random.default_rng(0).permutation(data.n_items), parts)
    return [data.subset(i) for i in idx]


@pytest.mark.parametrize("groups", ["predicted", [0, 0.6, 1]])
def test_merge_and_subtract_equal_the_direct_summary(mc_small, mc_small_summary, groups):
    whole = summarize_multiclass(mc_small, groups=groups)
    parts = [summarize_multiclass(d, groups=groups) for d in _split(mc_small, 3)]
    assert sum(parts).equals(whole)
    assert (whole - parts[1]).equals(parts[0] + parts[2])
    rest = whole - parts[0] - parts[1] - parts[2]
    assert rest.n_items == 0 and rest.n_patterns == 0 and rest.dataset.sizes["top_cell"] == 0


def test_subtracting_a_foreign_summary_is_refused(mc_small):
    a, b = (summarize_multiclass(d) for d in _split(mc_small, 2))
    with pytest.raises(DataError, match="not part of the first"):
        a - b


def test_incompatible_summaries_are_refused(mc_small, mc_small_summary):
    with pytest.raises(DataError, match="bin"):
        mc_small_summary + summarize_multiclass(mc_small, bins=5)
    with pytest.raises(DataError, match="groups"):
        mc_small_summary + summarize_multiclass(mc_small, groups="all")
    with pytest.raises(TypeError):
        mc_small_summary + 1


def test_dense_sparse_and_row_paths_agree(mc_small, mc_small_summary, monkeypatch):
    monkeypatch.setattr(smc, "MAX_DENSE_CELLS", 4)  # np.unique on codes
    sparse = summarize_multiclass(mc_small)
    monkeypatch.setattr(smc, "_INT64_LIMIT", 8)  # np.unique on rows
    rows = summarize_multiclass(mc_small)
    for s in (sparse, rows):
        assert s.equals(mc_small_summary)
        assert list(s.pattern_labels) == list(mc_small_summary.pattern_labels)


def test_unique_patterns_is_in_code_order_on_every_path(monkeypatch):
    rng = np.random.default_rng(3)
    states = rng.integers(0, 6, size=(500, 4))
    dense = unique_patterns(states, 5)
    monkeypatch.setattr(smc, "MAX_DENSE_CELLS", 1)
    sparse = unique_patterns(states, 5)
    monkeypatch.setattr(smc, "_INT64_LIMIT", 1)
    rows = unique_patterns(states, 5)
    code = dense[0].astype(int) @ 6 ** np.arange(4)
    assert np.all(np.diff(code) > 0)
    for u, inv in (sparse, rows):
        np.testing.assert_array_equal(u, dense[0])
        np.testing.assert_array_equal(inv, dense[1])
    np.testing.assert_array_equal(dense[0][dense[1]], states)


def test_dense_pattern_table_and_its_limit(mc_small_summary, monkeypatch):
    table = mc_small_summary.dense_pattern_counts()
    assert table.shape == (4, 5**3) and table.sum() == mc_small_summary.n_items
    code = mc_small_summary.states.astype(int) @ 5 ** np.arange(3)
    np.testing.assert_array_equal(table[:, code], mc_small_summary.pattern_counts.values)
    monkeypatch.setattr(smc, "MAX_DENSE_CELLS", 100)
    with pytest.raises(DataError, match="125 pattern cells"):
        mc_small_summary.dense_pattern_counts()


def test_many_classes_and_annotators_stay_sparse():
    data = simulate_multiclass(2000, 12, n_annotators=20, random_state=1, n_profiles=50)
    s = summarize_multiclass(data)
    assert s.n_cells == 13**20 and s.n_patterns <= 2000
    assert s.pattern_labels[0].count(",") == 19  # C > 10: comma-separated states
    half = _split(data, 2)
    assert (summarize_multiclass(half[0]) + summarize_multiclass(half[1])).equals(s)


def test_a_binary_container_is_two_class_data_and_other_types_are_refused():
    from bayescal.simulate import simulate_toy

    d = simulate_toy(10, random_state=0)
    assert summarize_multiclass(d).n_classes == 2  # one container: binary = C = 2
    with pytest.raises(DataError, match="MulticlassAnnotations"):
        summarize_multiclass(d.dataset)


@pytest.mark.parametrize("m", [1, 2, 3, 7, 10, 15, 100])
def test_fast_equal_width_bins_match_assign_on_edges_and_between(m):
    from bayescal.summaries.multiclass import bin_index
    from bayescal.summaries.partition import assign

    edges = np.linspace(0, 1, m + 1)
    rng = np.random.default_rng(m)
    x = np.concatenate(
        [rng.random(10_000), edges, np.nextafter(edges, 0), np.nextafter(edges, 1), [0.3, 0.7]]
    )
    x = x[(x >= 0) & (x <= 1)]
    np.testing.assert_array_equal(bin_index(x, edges), assign(x, edges))


def test_netcdf_round_trip_and_an_unannotated_chunk(mc_small, mc_small_summary, tmp_path):
    from bayescal.summaries.multiclass import MulticlassSummary, summarize_multiclass_arrays

    path = tmp_path / "s.nc"
    mc_small_summary.to_netcdf(path)
    back = MulticlassSummary.from_netcdf(path)
    assert back.equals(mc_small_summary) and back.grouping == "predicted"
    empty = summarize_multiclass_arrays(
        mc_small.probs[:4],
        np.full((4, 3), np.nan),
        annotators=mc_small.annotators,
        classes=mc_small.classes,
        bin_edges=mc_small_summary.bin_edges,
        truth=mc_small.truth[:4],
    )
    assert empty.n_items == 0 and empty.n_unannotated.values.sum() == 4
    merged = mc_small_summary + empty
    assert merged.n_items == mc_small_summary.n_items
    assert merged.n_unannotated.values.sum() == mc_small_summary.n_unannotated.values.sum() + 4
