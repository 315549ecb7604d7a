"""The multiclass benches write their JSON layouts, on tiny problems (real-data formats
written here, so nothing outside the repository is read)."""

import json

import numpy as np

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
        *("--n", "300", "--classes", "3", "--k", "3", "--concentrations", "5"),
        *("--datasets", "2", "--replicates", "20"),
    )
    assert [c["truth"] for c in r["cells"]] == ["noise", "ambiguity"]
    assert all(0 <= c["share_called_ambiguity"] <= 1 for c in r["cells"])


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
