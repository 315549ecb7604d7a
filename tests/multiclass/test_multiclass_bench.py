"""``bayescal bench multiclass-channels`` writes the keys issue 14 names, on tiny problems."""

import json

import pytest

from bayescal.cli import main


def run(tmp_path, *argv):
    out = tmp_path / "out.json"
    assert main(["bench", "multiclass-channels", *argv, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_without_peer(tmp_path):
    r = run(tmp_path, "--n", "3000", "--classes", "3", "--peer", "none", "--repeats", "1")
    assert {
        "n",
        "K",
        "C",
        "bayescal_seconds",
        "bayescal_cold_seconds",
        "bayescal_breakdown",
        "crowdkit_seconds",
        "speedup",
        "max_abs_diff_vs_crowdkit",
        "max_abs_error_vs_truth",
    } <= set(r)
    assert r["crowdkit_seconds"] is None and r["speedup"] is None
    assert len(r["bayescal_all_seconds"]) == 2
    assert r["max_abs_error_vs_truth"] < 0.15  # 3000 items: entries from ~1000 answers


def test_against_crowdkit(tmp_path):
    pytest.importorskip("crowdkit")
    r = run(tmp_path, "--n", "2000", "--classes", "3", "--crowdkit-iter", "100", "--repeats", "0")
    # both sides run to the same maximum-likelihood point
    assert r["max_abs_diff_vs_crowdkit"] < 1e-3
    assert r["speedup"] > 0 and r["crowdkit_settings"]["iterations_used"] == 100
    assert r["speedup_vs_crowdkit_default"] > 0


def test_bad_arguments_are_one_line_errors(capsys):
    assert main(["bench", "multiclass-channels", "--k", "2", "--peer", "none"]) == 2
    assert "--k must be at least 3" in capsys.readouterr().err
