"""``bench stress-test`` on the repository's real-data subsets (never ../shared/data)."""

import json
from pathlib import Path

from bayescal.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_stress_test_layout_on_the_chaosnli_subset(tmp_path):
    out = tmp_path / "st.json"
    argv = ["bench", "stress-test", "--data", str(DATA), "--datasets", "chaosnli-snli-entailment"]
    argv += ["--channels", "dawid_skene_em", "--repeats", "2", "--pilot-splits", "2"]
    argv += ["--fractions", "0.5", "0.25", "--json", str(out)]
    assert main(argv) == 0
    r = json.loads(out.read_text())
    (res,) = r["results"]
    assert res["n_items"] == 600 and res["sizes"]["test"] == 150
    assert set(res["test"]) == {
        "none",
        *(
            f"{f}_{t}"
            for f in ("temperature", "platt", "histogram")
            for t in ("naive", "corrected")
        ),
    }
    for row in res["test"].values():
        assert 0 <= row["oracle"] <= 1 and 0 <= row["soft_vote"] <= 1 and row["nc"] >= 0
    assert sum(row["wins"] for row in res["test"].values()) == sum(res["splits_used"])
    claims = res["claims"]
    assert set(claims["per_family"]) == {"temperature", "platt", "histogram"}
    assert claims["nc_tracks_oracle_direction"].endswith("of 6")
    assert "| candidate | Oracle ECE |" in r["markdown"]


def test_stress_test_refuses_partitions_too_small(tmp_path, capsys):
    # 200 cat/dog images in the subset: a 20% pilot split in three is far below 50 items.
    argv = ["bench", "stress-test", "--data", str(DATA), "--datasets", "cifar10h-catdog"]
    assert main([*argv, "--channels", "dawid_skene_em", "--json", str(tmp_path / "x.json")]) == 2
    assert "too few for held-out map selection" in capsys.readouterr().err
