"""Gold items in the container and the summary: separate tables, mergeable, O(cells)."""

import numpy as np
import pytest
from gold_data import gold_data

from bayescal import Annotations, load_csv, summarize
from bayescal.errors import DataError


@pytest.fixture(scope="module")
def data():
    return gold_data(3000, [0.1, 0.2, 0.15], [0.8, 0.7, 0.9], n_gold=400, seed=1)


def test_gold_tables_hold_exactly_the_gold_items(data):
    d, y = data
    s = summarize(d, groups=4, bins=5)
    gold = d.gold
    is_gold = ~np.isnan(gold)
    assert s.n_gold == (int((gold == 0).sum()), int((gold == 1).sum()))
    # unknown items only in the channel and bin tables
    assert s.n_items == int((~is_gold).sum())
    assert int(s.bin_count.sum()) == int((~is_gold).sum())
    # the gold tables equal the summary of the gold items alone, class by class
    for c in (0, 1):
        sub = d.subset(gold == c)
        plain = summarize(
            Annotations.from_arrays(sub.score, sub.labels, truth=sub.truth), groups=4, bins=5
        )
        np.testing.assert_array_equal(s.gold_pattern_counts.values[c], plain.pattern_counts.values)
        np.testing.assert_array_equal(
            s.gold_bin_pattern_counts.values[c], plain.bin_pattern_counts.values
        )
    # with_gold_in_bins: bins of every item, channel tables unchanged
    w = s.with_gold_in_bins()
    assert int(w.bin_count.sum()) == d.n_items
    np.testing.assert_allclose(w.bin_truth_sum.sum(), y.sum())
    np.testing.assert_array_equal(w.pattern_counts.values, s.pattern_counts.values)
    np.testing.assert_array_equal(w.gold_counts(), s.gold_counts())
    assert s.describe() == w.describe()
    assert s.describe()["n_items"] == d.n_items
    # without_gold undoes both
    plain = summarize(
        Annotations.from_arrays(
            d.score[np.isnan(d.gold)], d.labels[np.isnan(d.gold)], truth=d.truth[np.isnan(d.gold)]
        ),
        groups=4,
        bins=s.bin_edges,
    )
    assert w.without_gold().equals(plain) and s.without_gold().equals(plain)
    assert not w.without_gold().has_gold


def test_gold_summary_netcdf_round_trip(data, tmp_path):
    from bayescal.summaries.summary import Summary

    s = summarize(data[0], groups=4, bins=5)
    s.to_netcdf(tmp_path / "s.nc")
    back = Summary.from_netcdf(tmp_path / "s.nc")
    assert back.equals(s) and back.n_gold == s.n_gold


def test_gold_summaries_merge_and_subtract(data):
    d, _ = data
    whole = summarize(d, groups=4, bins=5)
    half = np.arange(d.n_items) < 1700
    s1 = summarize(d.subset(half), groups=4, bins=5)
    s2 = summarize(d.subset(~half), groups=4, bins=5)
    assert (s1 + s2).equals(whole)
    assert (whole - s2).equals(s1)
    # a chunk without a gold variable holds no gold item: its gold tables count as zero
    plain = Annotations.from_arrays(
        d.score[~half], d.labels[~half], truth=d.truth[~half], annotators=d.annotators
    )
    merged = s1 + summarize(plain, groups=4, bins=5)
    assert merged.n_gold == s1.n_gold
    assert merged.n_items == s1.n_items + int((~half).sum())
    with pytest.raises(DataError, match="with_gold_in_bins"):
        s1.with_gold_in_bins() + s2


def test_gold_values_checked_and_read_from_csv(tmp_path):
    with pytest.raises(DataError, match="gold.*not 0 or 1"):
        Annotations.from_arrays([0.2, 0.4], [[0], [1]], gold=[0, 2])
    p = tmp_path / "g.csv"
    p.write_text("score,r1,r2,known\n0.1,0,0,0\n0.7,1,,\n0.9,1,1,1\n0.5,0,1,\n")
    d = load_csv(p, gold="known")
    assert d.annotators == ["r1", "r2"]
    np.testing.assert_array_equal(d.gold, [0, np.nan, 1, np.nan])
    p.write_text("score,r1,known\n0.1,0,yes\n")
    with pytest.raises(DataError, match="known"):
        load_csv(p, gold="known")


def test_bench_gold_runs_and_follows_the_information_rate(tmp_path):
    import argparse
    import json

    from bayescal.bench import gold as bench

    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    out = tmp_path / "gold.json"
    args = parser.parse_args(
        ["--n", "600", "--gold", "0,300", "--seeds", "1", "--draws", "300", "--tune", "200"]
        + ["--json", str(out)]
    )
    assert bench.run(args) == 0
    result = json.loads(out.read_text())
    for scenario in result["scenarios"].values():
        base, gold = scenario["levels"]
        assert gold["sd_observed_mean"] < base["sd_observed_mean"]
        # one small data set and 600 draws: the MC error of a posterior sd is ~3%, and the
        # prediction neglects correlations (measured 0-6% off at the default settings)
        assert 0.8 < gold["ratio_observed_to_predicted_mean"] < 1.2


def test_gold_in_long_tables(tmp_path):
    import pandas as pd

    from bayescal.data.container import load_long

    p = tmp_path / "long.csv"
    p.write_text(
        "item,annotator,label,score,known\n"
        "i1,a,1,0.8,1\ni1,b,1,0.8,1\ni2,a,0,0.2,\ni2,b,1,0.2,\ni3,a,0,0.4,0\n"
    )
    d = load_long(p, gold="known")
    np.testing.assert_array_equal(d.gold, [1, np.nan, 0])
    # a gold class must be the same on every row of an item (blank on one row is a conflict)
    p.write_text("item,annotator,label,score,known\ni1,a,1,0.8,1\ni1,b,1,0.8,\n")
    with pytest.raises(DataError, match="gold 'known'.*differs between rows of item 'i1'"):
        load_long(p, gold="known")
    frame = pd.DataFrame(
        {"item": ["x", "x", "y"], "annotator": ["a", "b", "a"], "label": [1, 0, 1]}
    )
    d = Annotations.from_long(frame, score={"x": 0.3, "y": 0.9}, gold={"y": 1})
    np.testing.assert_array_equal(d.gold, [np.nan, 1])
