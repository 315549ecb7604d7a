"""Gold items in the binary container, the readers and ``bench gold``.

The summary's gold tables (kept apart, mergeable, ``with_gold_in_cells``, ``without_gold``)
are tested for every number of classes in ``tests/core/test_summaries.py``."""

import numpy as np
import pytest

from bayescal import Annotations, load_csv
from bayescal.errors import DataError


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
