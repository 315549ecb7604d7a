"""Each benchmark runs on a tiny problem and writes the JSON keys its issue asks for."""

import json

import pytest

from bayescal.cli import main


def run(tmp_path, *argv):
    out = tmp_path / "out.json"
    assert main(["bench", *argv, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_channels_without_peer(tmp_path):
    r = run(tmp_path, "channels", "--n", "3000", "--k", "3", "--peer", "none")
    assert {
        "n",
        "K",
        "bayescal_seconds",
        "crowdkit_seconds",
        "speedup",
        "max_abs_diff_vs_crowdkit",
        "max_abs_error_vs_truth",
    } <= set(r)
    assert r["crowdkit_seconds"] is None and r["speedup"] is None
    assert r["max_abs_error_vs_truth"] < 0.1


def test_channels_against_crowdkit(tmp_path):
    pytest.importorskip("crowdkit")
    # --repeats 1: one warm timed call per side instead of five (each crowd-kit call of 200
    # pandas iterations takes seconds); the layout and the agreement are what is checked here
    r = run(
        tmp_path, "channels", "--n", "3000", "--k", "3", "--crowdkit-iter", "200", "--repeats", "1"
    )
    assert r["max_abs_diff_vs_crowdkit"] < 1e-3  # both run to the same maximum-likelihood point
    assert r["speedup"] > 0


def test_ncece_layout(tmp_path):
    r = run(tmp_path, "ncece", "--n", "5000", "--draws", "20", "--naive-draws", "5")
    assert {"one_seconds", "draws_seconds"} <= set(r)
    assert r["max_abs_diff_vs_naive"] < 1e-12


@pytest.mark.slow
def test_coverage_layout(tmp_path):
    r = run(
        tmp_path,
        "coverage",
        "--reps",
        "2",
        "--sizes",
        "600",
        "--conditions",
        "shifted",
        "--modes",
        "reuse",
        "--draws",
        "60",
        "--tune",
        "60",
        "--sampler",
        "pymc",
    )
    row = r["results"][0]
    assert {"condition", "n", "mode", "interval", "coverage", "mean_width", "reps"} <= set(row)
    assert {x["interval"] for x in r["results"]} == {"full", "evaluation_only", "reported"}


@pytest.mark.slow
def test_bayes_speed_layout(tmp_path):
    r = run(
        tmp_path,
        "bayes-speed",
        "--sizes",
        "300",
        "--draws",
        "50",
        "--tune",
        "50",
        "--per-item-max",
        "300",
        "--mode",
        "C",
    )
    row = r["results"][0]
    assert {"n", "pattern_seconds", "per_item_seconds", "speedup", "compile_seconds"} <= set(row)
    assert row["speedup"] > 0
