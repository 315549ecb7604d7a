"""bayescal bench dependence runs on a tiny problem and writes the JSON keys the issue asks for."""

import json

import pytest

from bayescal.cli import main


def test_dependence_bench_layout(tmp_path):
    out = tmp_path / "out.json"
    argv = ["bench", "dependence", "--reps", "2", "--levels", "strong", "--n", "800"]
    argv += ["--draws", "20", "--tune", "20", "--n-bootstrap", "200", "--json", str(out)]
    assert main(argv) == 0
    r = json.loads(out.read_text())
    assert r["protocol"]["reps"] == 2 and r["protocol"]["levels"] == {"strong": 2.0}
    (cell,) = r["cells"]
    assert set(cell["models"]) == {"independent", "dependent"}
    for model in cell["models"].values():
        assert {"coverage", "coverage_se", "miss_rate", "mean_width", "sampling_seconds"} <= set(
            model
        )
        assert 0 <= model["coverage"] <= 1
    assert cell["population_binned_ece"] == pytest.approx(0.0896, abs=1e-4)
    assert {"start", "end"} == set(r["load_average"])


def test_dependence_bench_refuses_bad_arguments(tmp_path):
    code = main(["bench", "dependence", "--reps", "1", "--json", str(tmp_path / "x.json")])
    assert code == 2


def test_multiclass_dependence_bench_layout(tmp_path):
    out = tmp_path / "out.json"
    argv = ["bench", "dependence", "--multiclass", "--reps", "2", "--levels", "strong"]
    argv += ["--n", "600", "--draws", "15", "--tune", "15", "--n-bootstrap", "100"]
    assert main([*argv, "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["protocol"]["track"] == "multiclass" and r["protocol"]["levels"] == {"strong": 2.0}
    (cell,) = r["cells"]
    assert set(cell["models"]) == {"independent", "dependent"}
    for model in cell["models"].values():
        for metric in ("top_label", "classwise"):
            assert {"coverage", "coverage_se", "miss_above", "mean_width"} <= set(model[metric])
            assert 0 <= model[metric]["coverage"] <= 1
    # the truth is the population's exact binned ECE (fixed population, 10 bins)
    assert cell["population_binned_ece"]["top_label"] == pytest.approx(0.08370, abs=1e-5)
    assert len(cell["dependent_loading_posterior_mean"]) == 2  # a1, a2 x 3 classes
