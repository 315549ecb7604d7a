"""bench next-annotations: its JSON layout on a tiny run, and the items-ratio rule."""

from __future__ import annotations

import argparse
import json

import numpy as np

from bayescal.bench import next_annotations as bench


def test_tiny_run_writes_the_layout(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    bench.add_arguments(parser)
    path = tmp_path / "n.json"
    args = parser.parse_args(
        ["--n", "400", "--batch", "20", "--batches", "2", "--reps", "2", "--draws", "10",
         "--horizon", "2", "--json", str(path)]
    )  # fmt: skip
    assert bench.run(args) == 0
    capsys.readouterr()
    out = json.loads(path.read_text())
    for pop in ("binary", "multiclass"):
        rec = out["populations"][pop]
        assert len(rec["width_mean"]["ranked"]) == 3 and len(rec["width_mean"]["random"]) == 5
        # every strategy starts from the same pilot fit
        w0 = {name: rec["width_mean"][name][0] for name in bench.STRATEGIES}
        assert len(set(w0.values())) == 1


def test_items_ratio_interpolates_and_flags_bounds():
    ranked = np.array([1.0, 0.8, 0.6])  # 2 batches of 10 reach 0.6
    random = np.array([1.0, 0.9, 0.8, 0.7, 0.6])  # 0.6 after 4 batches
    assert bench._items_ratio(ranked, random, 10) == (2.0, False)
    slow = np.array([1.0, 0.95, 0.9])
    assert bench._items_ratio(ranked, slow, 10) == (1.0, True)  # never reached: a lower bound
