"""``bench subgroups`` runs on a tiny problem and writes the keys issue 25 item 1 asks for."""

import json

from bayescal.cli import main


def test_subgroups_bench_layout(tmp_path):
    out = tmp_path / "out.json"
    argv = ["bench", "subgroups", "--reps", "2", "--classes", "2", "--scenarios", "channels"]
    argv += ["--sizes", "300", "200", "100", "--n-bootstrap", "100", "--json", str(out)]
    assert main(argv) == 0
    r = json.loads(out.read_text())
    assert r["protocol"]["target_coverage"] == [0.85, 0.95]
    assert [(c["scenario"], c["channels"]) for c in r["cells"]] == [
        ("channels", "pooled"),
        ("channels", "shared"),
    ]
    for cell in r["cells"]:
        assert [s["n_items"] for s in cell["subgroups"]] == [300, 200, 100]
        for s in cell["subgroups"]:
            assert {"coverage", "coverage_mc_se", "bias", "rmse", "mean_width"} <= set(s)
            assert 0 <= s["coverage"] <= 1 and s["truth"] > 0
    assert r["cells"][0]["mean_kappa"] > 0 and r["cells"][1]["mean_kappa"] is None
