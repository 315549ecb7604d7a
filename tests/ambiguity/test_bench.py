"""The ``bayescal bench ambiguity`` command on a few methods of real ChaosNLI data (tests/data)."""

from __future__ import annotations

import json

import pytest

from bayescal.cli import main


def test_bench_layout_oracle_label_and_ablations(chaosnli_paths, tmp_path, capsys):
    jsonl, preds = chaosnli_paths
    out = tmp_path / "res.json"
    fig = tmp_path / "rel.png"
    argv = [
        "bench",
        "ambiguity",
        "--chaosnli",
        str(jsonl),
        *map(str, preds),
        "--methods",
        "TS",
        "SLTS",
        "Dirichlet-Soft",
        "Oracle TS (oracle)",
        "--n-draws",
        "10",
        "--seeds",
        "42",
        "43",
        "--json",
        str(out),
        "--figure",
        str(fig),
        "--ablations",
        "--cal-fractions",
        "0.2",
        "1.0",
        "--annotation-counts",
        "1",
        "all",
        "--entropy-bins",
        "3",
    ]
    assert main(argv) == 0
    capsys.readouterr()
    res = json.loads(out.read_text())
    assert res["dataset"] == "ChaosNLI-SNLI"
    assert res["n_cal"] + res["n_test"] == 600
    r = res["results"]
    for key in ("ece_true", "aece", "cwece", "brier", "nll", "ece_voted", "seconds"):
        assert key in r["TS"]
    assert r["Oracle TS (oracle)"]["oracle"] is True and r["TS"]["oracle"] is False
    assert r["SLTS"]["T"] > r["TS"]["T"]
    # Percent units: the uncalibrated-ish TS error on NLI is several percent, not a fraction.
    assert 1.0 < r["TS"]["ece_true"] < 50.0
    assert set(res["multi_seed"]["TS"]["ece_true"]) == {"mean", "sd"}
    assert res["multi_seed"]["TS"]["ece_true"]["sd"] > 0
    ab = res["ablations"]
    assert set(ab["cal_size"]) == {"0.2", "1"}
    assert ab["cal_size"]["0.2"]["n_cal"] == round(0.2 * res["n_cal"])
    assert set(ab["annotations"]) == {"1", "all"}
    assert len(ab["entropy"]["TS"]["mean_error"]) == 3
    assert fig.stat().st_size > 10000


def test_bench_rejects_unknown_method(chaosnli_paths, capsys):
    jsonl, preds = chaosnli_paths
    code = main(
        ["bench", "ambiguity", "--chaosnli", str(jsonl), *map(str, preds), "--methods", "Magic"]
    )
    assert code == 2
    assert "unknown method" in capsys.readouterr().err


def test_bench_needs_a_prediction_file(chaosnli_paths, capsys):
    jsonl, _ = chaosnli_paths
    assert main(["bench", "ambiguity", "--chaosnli", str(jsonl)]) == 2
    assert "prediction file" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["0", "x"])
def test_bench_bad_annotation_count(chaosnli_paths, bad, capsys):
    jsonl, preds = chaosnli_paths
    code = main(
        [
            "bench",
            "ambiguity",
            "--chaosnli",
            str(jsonl),
            *map(str, preds),
            "--methods",
            "TS",
            "--n-draws",
            "2",
            "--ablate-annotations",
            "--annotation-counts",
            bad,
        ]
    )
    assert code == 2


def test_mcts_sweep_refits_each_s_and_tends_to_slts(chaosnli_paths, tmp_path, capsys):
    """Tao et al., Table 1: the sweep's temperatures are the MCTS fits a user would make
    (same S, same sampling seed, the calibration half of the first split), their spread falls
    with S, and at S = 200 they sit at SLTS's temperature (the S -> infinity limit)."""
    import numpy as np

    from bayescal.ambiguity import MonteCarloTemperatureScaling, load_chaosnli, stratified_split

    jsonl, preds = chaosnli_paths
    out = tmp_path / "sweep.json"
    argv = ["bench", "ambiguity", "--chaosnli", str(jsonl), *map(str, preds)]
    argv += ["--methods", "TS", "SLTS", "Dirichlet-Soft (ODIR 1e-3)", "--n-draws", "5"]
    argv += ["--n-boot", "0", "--mcts-sweep", "--mcts-samples", "1", "200"]
    argv += ["--mcts-seeds", "0", "1", "2", "3", "4", "--json", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    res = json.loads(out.read_text())
    assert res["results"]["Dirichlet-Soft (ODIR 1e-3)"]["lambda_offdiag"] == 1e-3
    sweep = res["mcts_sweep"]
    assert sweep["paper_table1"]["MCTS"]["200"]["T"] == [3.178, 0.003]
    r1, r200 = sweep["results"]["1"], sweep["results"]["200"]
    data = load_chaosnli(jsonl, preds)
    cal, _ = stratified_split(data.voted, fraction=0.5, random_state=42)
    direct = [
        MonteCarloTemperatureScaling(n_samples=200, random_state=r)
        .fit(data.logits[cal], data.counts[cal])
        .temperature_
        for r in range(5)
    ]
    np.testing.assert_array_equal(r200["T"]["values"], direct)
    # The sampled target's variance falls as 1/S, so the spread of T by about sqrt(200) = 14.
    assert r200["T"]["sd"] < r1["T"]["sd"] / 4
    t_slts = res["results"]["SLTS"]["T"]
    # Five seeds at S = 200: the mean is within a few of its standard errors of the limit.
    assert abs(r200["T"]["mean"] - t_slts) < 4 * r1["T"]["sd"] / np.sqrt(200 * 5) + 1e-6


@pytest.mark.parametrize("bad", [["--mcts-samples", "0"], ["--mcts-seeds"]])
def test_mcts_sweep_refuses_bad_settings(bad, chaosnli_paths, capsys):
    jsonl, preds = chaosnli_paths
    argv = ["bench", "ambiguity", "--chaosnli", str(jsonl), *map(str, preds)]
    argv += ["--methods", "TS", "--n-draws", "2", "--n-boot", "0", "--mcts-sweep", *bad]
    assert main(argv) == 2
    assert "mcts" in capsys.readouterr().err
