"""Layouts of ``bench coverage`` (point and bootstrap channels) and ``bench memory``."""

import json

import pytest

from bayescal.cli import main


def run(tmp_path, *argv):
    out = tmp_path / "out.json"
    assert main(["bench", *argv, "--json", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("channels", ["point", "bootstrap"])
def test_coverage_layout_with_em_channels(tmp_path, channels):
    r = run(
        tmp_path, "coverage", "--channels", channels, "--reps", "3", "--sizes", "400",
        "--conditions", "calibrated", "shifted", "--modes", "split", "--n-bootstrap", "200",
        "--channel-draws", "50",
    )  # fmt: skip
    sources = {x["interval"] for x in r["results"]}
    expected = {"evaluation_only", "reported"} | ({"full"} if channels == "bootstrap" else set())
    assert sources == expected
    row = r["results"][0]
    assert {"coverage", "coverage_se", "mean_width", "test_rejection_rate"} <= set(row)
    assert {"miss_above", "miss_below"} <= set(row)
    assert row["population_binned_ece"] == 0.0 and row["condition"] == "calibrated"
    cell = r["cells"][1]
    assert {"estimate_bias", "plugin_bias", "test_rejection_rate", "sparse_bin_warnings"} <= set(
        cell
    )
    options = r["methods"][0]
    assert {"percentile", "basic", "bias_aware", "shrinkage_posterior"} <= set(options["intervals"])
    assert {"plugin", "bootstrap_bc", "spec4_inversion"} <= set(options["estimates"])
    assert {"abs", "chi2"} == set(options["tests"])


def refused(capsys, *argv):
    """Exit status 2 and the one-line message of a refused bench call."""
    assert main(["bench", *argv]) == 2
    return capsys.readouterr().err


def test_coverage_refuses_bad_arguments(capsys):
    assert "--reps" in refused(capsys, "coverage", "--reps", "1", "--channels", "point")
    assert "--sizes" in refused(capsys, "coverage", "--sizes", "50", "--channels", "point")


@pytest.mark.slow
def test_memory_layout(tmp_path, capsys):
    r = run(tmp_path, "memory", "--cases", "3:300:10", "--draws", "50", "--replicates", "200")
    row = r["results"][0]
    assert row["status"] == "ok" and row["under_2gb"]
    assert set(row["steps"]) == {
        "imports", "summarize", "nc_ece_point", "nc_ece_posterior", "interval_point",
        "interval_posterior",
    }  # fmt: skip
    assert "K:N:BINS" in refused(capsys, "memory", "--cases", "3:300")
