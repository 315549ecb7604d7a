"""The toy study's fast kernels agree with the public API on one repetition."""

import json

import numpy as np
import pytest

import bayescal as bc
from bayescal.cli import main
from bayescal.metrics.toy_study import toy_replicate
from bayescal.simulate import TOY_FN, TOY_FP, simulate_toy


@pytest.mark.parametrize("condition", ["shifted", "nonlinear"])
def test_toy_replicate_matches_public_api(condition):
    n, seed = 3000, 17
    rep = toy_replicate(condition, n, seed)["ece"]
    d = simulate_toy(n, condition, random_state=seed)
    known = bc.ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN))
    second = d.subset(np.arange(n // 2, n))
    assert rep[("clean", "reuse")] == pytest.approx(bc.oracle_ece(d).value, abs=1e-12)
    assert rep[("clean", "split")] == pytest.approx(bc.oracle_ece(second).value, abs=1e-12)
    assert rep[("soft_vote", "reuse")] == pytest.approx(bc.soft_vote_ece(d).value, abs=1e-12)
    assert rep[("majority_vote", "reuse")] == pytest.approx(
        bc.majority_vote_ece(d).value, abs=1e-12
    )
    assert rep[("nc_given", "reuse")] == pytest.approx(bc.nc_ece(d, known).value, abs=1e-12)
    opts = {"fallback": "fixed", "random_state": seed}
    for mode in ("split", "reuse", "crossfit"):
        api = bc.estimate_nc_ece(d, mode=mode, shuffle=False, channel_options=opts)
        assert rep[("nc_em", mode)] == pytest.approx(api.value, abs=1e-12), mode


def test_cli_small_study_writes_json_and_figure(tmp_path):
    out = tmp_path / "toy.json"
    assert (
        main(
            [
                "bench",
                "toy",
                "--reps",
                "3",
                "--sizes",
                "500",
                "1000",
                "--conditions",
                "shifted",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    row = res["results"][0]
    assert set(row) >= {
        "condition",
        "n",
        "method",
        "mode",
        "mae",
        "bias",
        "rmse",
        "mae_se",
        "failures",
    }
    assert len(res["results"]) == 2 * 5 * 3
    assert res["population_ece"]["shifted"] == pytest.approx(0.08962637465, abs=1e-9)
    assert (tmp_path / "toy.png").stat().st_size > 1000


def test_cli_bad_argument_is_one_line_exit_2(capsys):
    assert main(["bench", "toy", "--reps", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayescal: error:") and err.count("\n") == 1
