"""The recalibration benchmarks run end to end on reduced settings and write the documented JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parents[1] / "data"  # real-data subsets, see tests/data/README.md


def _run(module, argv):
    import importlib

    mod = importlib.import_module(module)
    parser = argparse.ArgumentParser()
    mod.add_arguments(parser)
    return mod.run(parser.parse_args(argv))


def test_gaussian_recal_reduced(tmp_path, capsys):
    path = tmp_path / "g.json"
    assert (
        _run(
            "bayescal.bench.gaussian_recal", ["--sizes", "600", "--reps", "2", "--json", str(path)]
        )
        == 0
    )
    out = json.loads(path.read_text())
    rows = [r for r in out["results"] if "ece" in r]
    assert {(r["family"], r["target"]) for r in rows} >= {
        ("base", "none"),
        ("platt", "corrected"),
        ("histogram", "clean"),
    }
    for r in rows:
        for k in ("n", "family", "target", "ece", "l1_m", "log_loss", "brier", "sd_ece", "sd_l1_m"):
            assert k in r
        assert r["n"] == 600 and r["J"] == round(200 ** (1 / 3)) and np.isfinite(r["ece"])


def test_population_quantiles_match_simulation():
    from bayescal.bench.gaussian_recal import population_quantiles
    from bayescal.simulate import simulate_gaussian

    q = population_quantiles([0.25, 0.5, 0.75])
    z = simulate_gaussian(200_000, random_state=0).score
    # the median of the setting is sigmoid(0.3) by symmetry
    assert q[1] == pytest.approx(1 / (1 + np.exp(-0.3)), abs=1e-10)
    np.testing.assert_allclose(np.quantile(z, [0.25, 0.5, 0.75]), q, atol=5e-3)


@pytest.mark.slow
def test_tabular_one_seed(tmp_path):
    pytest.importorskip("sklearn")
    csv = DATA / "tabular" / "credit_default.csv"  # 3,000 of the 30,000 clients
    path = tmp_path / "t.json"
    assert (
        _run(
            "bayescal.bench.tabular",
            [
                "--data",
                str(csv),
                "--seeds",
                "0",
                "--predictors",
                "logistic_regression",
                "--json",
                str(path),
            ],
        )
        == 0
    )
    out = json.loads(path.read_text())
    keys = {(s["family"], s["target"]) for s in out["summary"]}
    assert ("histogram", "corrected") in keys and ("base", "none") in keys
    assert ("joint", "corrected") in keys  # Table 2's auxiliary Joint map
    assert all(s["n_cells"] == 12 for s in out["summary"])
    acc = {(s["family"], s["target"]): s["mean"] for s in out["summary_accuracy"]}
    assert acc.keys() == keys and all(0.5 < v < 1.0 for v in acc.values())
    # Table 7: every estimator for the K it covers, over the 4 regimes (one predictor, seed).
    t7 = out["table7"]
    rmse_keys = {(r["estimator"], r["k"]) for r in t7["channel_rmse"]}
    assert rmse_keys == {("score_bin_em", k) for k in (2, 3, 4)} | {("gmm", 2)} | {
        ("dawid_skene_em", 3),
        ("dawid_skene_em", 4),
    }
    gap_keys = {(r["estimator"], r["k"]) for r in t7["ncece_oracle_gap"]}
    assert gap_keys == rmse_keys | {("known", k) for k in (2, 3, 4)}
    assert all(
        r["n_cells"]
        + sum(f["estimator"] == r["estimator"] and f["k"] == r["k"] for f in t7["failures"])
        == 4
        for r in t7["ncece_oracle_gap"]
    )
    assert "rows" in out and "table7_rows" in out


@pytest.mark.slow
def test_cifar_one_seed(tmp_path, monkeypatch):
    from bayescal.bench import cifar_recal

    csv = DATA / "cifar10h" / "resnet-110.csv"
    # The subset has 1,000 of the 10,000 images: split it 300 / 300 / 400 in the benchmark's
    # channel / recalibration / test proportions (the full study splits 3000 / 3000 / 4000).
    monkeypatch.setattr(cifar_recal, "SIZES", (300, 300, 400))
    path = tmp_path / "c.json"
    assert (
        _run(
            "bayescal.bench.cifar_recal", ["--data", str(csv), "--seeds", "0", "--json", str(path)]
        )
        == 0
    )
    out = json.loads(path.read_text())
    base = [s for s in out["summary"] if s["family"] == "base"][0]
    assert 0 < base["mean"] < 0.05 and not out["failures"]


def test_cifar_scores_are_probabilities():
    from bayescal.bench.cifar_recal import load_animal_scores

    csv = DATA / "cifar10h" / "resnet-110.csv"
    z, y = load_animal_scores(csv)
    assert z.shape == (1000,) and z.min() >= 0 and z.max() <= 1
    assert y.mean() == pytest.approx(0.6)  # 6 of 10 balanced classes are animals
    assert ((z > 0.5) == y).mean() > 0.97
