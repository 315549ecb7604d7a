"""bench motivating-example and bench isic run on tiny problems and write what issue 16 asks."""

import json

import numpy as np
import pytest

from bayescal.ambiguity.isic import ISIC2019_CLASS_COUNTS, simulate_isic
from bayescal.ambiguity.simulate import isic2019_confusion
from bayescal.bench.isic import PAPER_TABLE3
from bayescal.cli import main


def run(tmp_path, *argv):
    out = tmp_path / "out.json"
    assert main(["bench", *argv, "--json", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.slow
def test_motivating_example_sweep_layout(tmp_path):
    r = run(tmp_path, "motivating-example", "--quick")
    assert r["paper"]["T"] == 0.62
    assert [s["l2"] for s in r["settings"]] == [1e-4, 1e-2]
    assert len(r["runs"]) == 2
    for run_ in r["runs"]:
        m = run_["methods"]
        assert run_["ts_raises_ece_true"] == (m["TS"]["ece_true"] > m["Uncalibrated"]["ece_true"])
        assert run_["T"] == m["TS"]["T"]
    f = r["finding"]
    assert f["ts_raises_ece_true"] == sum(x["ts_raises_ece_true"] for x in r["runs"])
    assert (
        f["ts_raises_ece_true_with_T_below_1"] + f["ts_raises_ece_true_with_T_above_1"]
        == f["ts_raises_ece_true"]
    )
    # More weight decay, a less confident network: TS's temperature falls.
    assert r["settings"][1]["T_mean"] < r["settings"][0]["T_mean"]


def test_isic_simulation_follows_the_confusion_matrix():
    data = simulate_isic(20_000, m=9, sharpness=4.0, noise=3.0, random_state=0)
    C = isic2019_confusion().values
    freq = np.array(list(ISIC2019_CLASS_COUNTS.values()), dtype=float)
    # Consensus classes follow the ISIC 2019 frequencies (3 binomial sd).
    share = np.bincount(data.reference, minlength=8) / data.n_items
    sd = np.sqrt(freq / freq.sum() * (1 - freq / freq.sum()) / data.n_items)
    assert np.all(np.abs(share - freq / freq.sum()) < 3 * sd + 1e-12)
    # Annotations of NV items follow row NV of the matrix: 9 per item.
    nv = data.reference == 1
    assert set(data.counts.sum(axis=1)) == {9}
    rate = data.counts[nv].sum(axis=0) / (9 * nv.sum())
    assert np.abs(rate - C[1]).max() < 4 * np.sqrt(0.25 / (9 * nv.sum()))


def test_isic_layout_and_paper_rows(tmp_path):
    r = run(
        tmp_path,
        "isic",
        "--n-items",
        "600",
        "--seeds",
        "0",
        "--n-draws",
        "5",
        "--n-boot",
        "10",
        "--methods",
        "Uncalibrated",
        "TS",
        "SLTS",
    )
    assert set(r["results"]) == {"Uncalibrated", "TS", "SLTS"}
    for name, row in r["results"].items():
        assert row["brier_sampled"]["mean"] > row["brier"]["mean"]
        assert set(r["intervals_first_seed"][name]["ece_true"]) == {"estimate", "lo", "hi"}
    assert r["best"]["ece_true"] in r["results"]
    assert PAPER_TABLE3["EfficientNet-B4"]["Dirichlet-Soft"]["brier_as_published"] == 0.518
    assert r["paper_best_efficientnet_b4"]["ece_true"] == "IR-Soft"
    assert r["data"]["n_cal"] + r["data"]["n_test"] == 600
