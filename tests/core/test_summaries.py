import numpy as np
import pytest

import bayescal as bc
from bayescal.errors import ConfigError, DataError
from bayescal.simulate import simulate_toy
from bayescal.summaries.patterns import encode_patterns, pattern_labels


def slow_summary(data, group_edges, bin_edges):
    """Obvious per-item loops, independent of the bincount kernel."""
    k = data.n_annotators
    P = 3**k
    L, M = len(group_edges) - 1, len(bin_edges) - 1
    pc = np.zeros((L, P), int)
    bpc = np.zeros((M, P), int)
    bps = np.zeros((M, P))
    lab_sum = np.zeros((M, k))
    answered = np.zeros((M, k))
    for z, row in zip(data.score, data.labels):
        if np.all(np.isnan(row)):
            continue
        idx = 0
        for j, v in enumerate(row):
            idx += (2 if np.isnan(v) else int(v)) * 3**j
        g = min(max(i for i in range(L) if group_edges[i] <= z), L - 1)
        b = min(max(i for i in range(M) if bin_edges[i] <= z), M - 1)
        pc[g, idx] += 1
        bpc[b, idx] += 1
        bps[b, idx] += z
        for j, v in enumerate(row):
            if not np.isnan(v):
                answered[b, j] += 1
                lab_sum[b, j] += v
    return pc, bpc, bps, lab_sum, answered


def test_fast_summary_equals_slow_loop():
    d = simulate_toy(3000, "nonlinear", random_state=0, missing=[0.1, 0.3, 0.5])
    ge, be = np.linspace(0, 1, 6), np.array([0, 0.05, 0.3, 0.5, 0.77, 1.0])
    s = bc.summarize(d, groups=ge, bins=be)
    pc, bpc, bps, lab_sum, answered = slow_summary(d, ge, be)
    np.testing.assert_array_equal(s.pattern_counts.values, pc)
    np.testing.assert_array_equal(s.bin_pattern_counts.values, bpc)
    np.testing.assert_allclose(s.bin_pattern_score_sum.values, bps, rtol=1e-12)
    np.testing.assert_array_equal(s.bin_label_sum.values, lab_sum)
    np.testing.assert_array_equal(s.bin_answered.values, answered)
    assert s.n_items + int(s.n_unannotated.sum()) == d.n_items


def test_pattern_encoding_and_labels():
    lab = np.array([[0, 1, np.nan], [1, 1, 1], [np.nan, np.nan, np.nan]])
    idx = encode_patterns(lab)
    labels = pattern_labels(3)
    assert [labels[i] for i in idx] == ["01.", "111", "..."]


@pytest.mark.parametrize("n_chunks", [2, 7])
def test_chunked_summaries_add_up(n_chunks):
    d = simulate_toy(5000, "shifted", random_state=1, missing=0.2)
    whole = bc.summarize(d, groups=5, bins=10)
    parts = np.array_split(np.arange(d.n_items), n_chunks)
    total = sum(bc.summarize(d.subset(p), groups=5, bins=10) for p in parts)
    assert total.equals(whole)
    np.testing.assert_array_equal(total.n_unannotated.values, whole.n_unannotated.values)
    # subtraction gives back the complement (used by cross-fitting)
    first = bc.summarize(d.subset(parts[0]), groups=5, bins=10)
    rest = sum(bc.summarize(d.subset(p), groups=5, bins=10) for p in parts[1:])
    assert (whole - first).equals(rest)


def test_merge_refuses_incompatible():
    d = simulate_toy(500, random_state=2)
    s1 = bc.summarize(d, groups=5, bins=10)
    with pytest.raises(DataError, match="bin edges"):
        s1 + bc.summarize(d, groups=5, bins=5)
    with pytest.raises(DataError, match="score groups"):
        s1 + bc.summarize(d, groups=4, bins=10)
    with pytest.raises(DataError, match="not part"):
        bc.summarize(d.subset(np.arange(10)), groups=5, bins=10) - s1


def test_truth_sums_and_equal_mass_bins():
    d = simulate_toy(2000, random_state=3)
    s = bc.summarize(d, bins=4, bin_strategy="quantile")
    assert s.has_truth
    assert float(s.bin_truth_sum.sum()) == d.truth.sum()
    counts = s.bin_count.values
    assert counts.max() - counts.min() <= 2


def test_user_groups():
    d0 = simulate_toy(600, random_state=4)
    g = np.repeat(["siteA", "siteB", "siteC"], 200)
    d = bc.Annotations.from_arrays(d0.score, d0.labels, group=g)
    s = bc.summarize(d)
    assert list(s.pattern_counts["group"].values) == ["siteA", "siteB", "siteC"]
    assert s.group_edges is None
    assert s.group_counts.values.tolist() == [200, 200, 200]


def test_netcdf_roundtrip(tmp_path):
    s = bc.summarize(simulate_toy(300, random_state=5), groups=5)
    s.to_netcdf(tmp_path / "s.nc")
    assert bc.Summary.from_netcdf(tmp_path / "s.nc").equals(s)


def test_too_many_annotators_refused_with_pointer():
    rng = np.random.default_rng(0)
    d = bc.Annotations.from_arrays(rng.random(20), rng.integers(0, 2, (20, 13)))
    with pytest.raises(DataError, match="per-item path"):
        bc.summarize(d)


@pytest.mark.parametrize(
    "edges,match",
    [
        ([0.1, 0.5, 1.0], "cover"),
        ([0, 0.5, 0.4, 1], "increasing"),
        ([0, np.nan, 1], "finite"),
        ([0.5], "at least two"),
    ],
)
def test_bad_edges(edges, match):
    d = simulate_toy(50, random_state=6)
    with pytest.raises(ConfigError, match=match):
        bc.summarize(d, bins=edges)
    with pytest.raises(ConfigError, match=match):
        bc.summarize(d, groups=edges)


def test_zero_bins_and_non_container():
    d = simulate_toy(50, random_state=6)
    with pytest.raises(ConfigError, match="at least 1"):
        bc.summarize(d, bins=0)
    with pytest.raises(DataError, match="Annotations"):
        bc.summarize(np.zeros((3, 3)))
