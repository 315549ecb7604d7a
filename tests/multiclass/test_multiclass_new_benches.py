"""The multiclass benches write their JSON layouts, on tiny problems (real-data formats
written here, so nothing outside the repository is read)."""

import json

import numpy as np
import pytest

from bayescal.bench.gold import gold_information, predicted_sd
from bayescal.cli import main


def _run(tmp_path, name, *argv):
    out = tmp_path / f"{name}.json"
    assert main(["bench", name, *argv, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_bayes_speed_layout(tmp_path):
    r = _run(
        tmp_path,
        "multiclass-bayes-speed",
        *("--n", "400", "--classes", "3", "--draws", "60", "--tune", "100"),
        *("--configs", "nutpie:largest:0.8", "nutpie:last:0.8"),
    )
    assert r["settings"]["pattern_cells"] == 64 and len(r["results"]) == 2
    entry = r["results"][0]
    for key in ("seconds", "sampling_seconds", "rhat_max_confusion", "ess_bulk_min_confusion"):
        assert key in entry
    assert entry["reference"] == "largest" and isinstance(entry["meets_target"], bool)


def test_evidence_layout(tmp_path):
    r = _run(
        tmp_path,
        "multiclass-evidence",
        *("--cells", "grid-C2-K3", "dirichlet-5-C4-K3"),
        *("--datasets", "2", "--power-datasets", "2", "--replicates", "99"),
    )
    assert [c["truth"] for c in r["cells"]] == ["noise", "ambiguity"]
    assert all(0 <= c[c["target"]]["share"] <= 1 for c in r["cells"])


def _cifar_file(path, rng, n=150):
    rows = []
    for _ in range(n):
        y = rng.integers(10)
        counts = rng.multinomial(50, np.full(10, 0.02) + 0.8 * np.eye(10)[y])
        p = rng.dirichlet(np.ones(10) + 8 * np.eye(10)[y])
        rows.append(",".join([f"{float(y)}", *map(str, counts), *(repr(float(v)) for v in p)]))
    path.write_text("\n".join(rows) + "\n")


def _chaosnli_files(folder, rng, n=120):
    jsonl, preds = folder / "chaos.jsonl", folder / "pred.json"
    lines, plines = [], []
    for i in range(n):
        counts = rng.multinomial(100, rng.dirichlet(np.ones(3))).tolist()
        lines.append(json.dumps({"uid": f"u{i}", "label_count": counts}))
        plines.append(json.dumps({"uid": f"u{i}", "logits": rng.normal(size=3).tolist()}))
    jsonl.write_text("\n".join(lines) + "\n")
    preds.write_text("\n".join(plines) + "\n")
    return jsonl, preds


def test_real_data_layout(tmp_path):
    rng = np.random.default_rng(0)
    cifar = tmp_path / "cifar.csv"
    _cifar_file(cifar, rng)
    jsonl, preds = _chaosnli_files(tmp_path, rng)
    r = _run(
        tmp_path,
        "multiclass-real",
        *("--cifar10h", str(cifar), "--chaosnli", str(jsonl), str(preds)),
        *("--k", "3", "--replicates", "2"),
    )
    cif = r["datasets"]["cifar10h"]
    rep = cif["by_k"]["3"]["replicates"][0]
    for key in ("nc_crossfit", "nc_estimate", "nc_lo", "nc_hi", "soft_vote", "majority_vote"):
        assert key in rep
    assert "true_label" in rep and "ece_true_full" in rep
    assert cif["all_answers"]["slots"] == 50
    snli = r["datasets"]["chaosnli_snli"]["by_k"]["3"]["replicates"][0]
    assert "true_label" not in snli


def test_gold_multiclass_layout_and_rate(tmp_path):
    r = _run(
        tmp_path,
        "gold",
        "--multiclass",
        *("--n", "300", "--gold", "0,300", "--seeds", "1", "--draws", "200", "--tune", "150"),
    )
    assert r["benchmark"] == "gold_multiclass" and set(r["scenarios"]) == {"accurate", "weak"}
    for scenario in r["scenarios"].values():
        base, gold = scenario["levels"]
        # without gold the prediction is the observed sd itself (same draws, both ddof 0)
        assert base["ratio_observed_to_predicted_mean"] == pytest.approx(1.0, abs=1e-9)
        assert gold["sd_reduction_observed"] < 0.9
        # 2 x 200 draws: a posterior sd has a Monte Carlo error of about 1 / sqrt(2 ESS), ESS
        # >= 100 -> 7% per entry, ~2% for the mean of 27; the normal approximation was measured
        # 1-3% off at this size: 15% leaves room for both
        assert 0.85 < gold["ratio_observed_to_predicted_mean"] < 1.15


def test_gold_multiclass_prediction_reduces_to_the_binary_rule():
    # C = 2, independent coordinates: sd = 1 / sqrt(1 / sd0**2 + n / (p (1 - p))) per row
    # (bayescal.bench.gold's rule); the free coordinate of a row is its entry 1
    t = np.array([[[0.9, 0.1], [0.25, 0.75]]])
    n = np.array([[40, 10]])
    sd0 = np.array([0.05, 0.08])
    sd = predicted_sd(np.diag(sd0**2), gold_information(t, n), 1, 2)
    expected = 1 / np.sqrt(1 / sd0**2 + n[0] / (t[0, :, 1] * t[0, :, 0]))
    np.testing.assert_allclose(sd[0, :, 1], expected, rtol=1e-12)
    np.testing.assert_allclose(sd[0, :, 0], expected, rtol=1e-12)  # p_0 = 1 - p_1
