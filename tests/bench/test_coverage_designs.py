"""``bench coverage --designs``: the weakly identified designs of issue 22 item 2.

The Beta simulator is the bench's own (no other part of the project uses it), so its
exact population binned ECE is checked here against a large Monte Carlo sample; the
designs' data are checked for what they declare; one small seeded run checks the layout,
the resumption from the JSON and that every interval holds its estimate.
"""

import json

import numpy as np
import pytest

from bayescal.bench import coverage as cov
from bayescal.cli import main

EDGES = np.linspace(0, 1, cov.N_BINS + 1)


@pytest.mark.parametrize("cond", ["calibrated", "nonlinear"])
def test_beta_population_ece_matches_a_large_sample(cond):
    """Quadrature against 4,000,000 items with Y drawn from the curve: the sample's signed
    bin moments have sd at most sqrt(p_m / n) <= 0.0005 each, so sum_m |D_m| is within
    sum_m 4 sd_m of the population value (the |.| bias adds at most sqrt(2/pi) sd_m per bin
    where d_m is near 0, inside the same bound)."""
    rng = np.random.default_rng(0)
    n = 4_000_000
    z = rng.beta(*cov.BETA_SHAPE, n)
    y = rng.random(n) < cov._beta_curve(cond)(z)
    m = np.clip(np.digitize(z, EDGES) - 1, 0, cov.N_BINS - 1)
    d = np.bincount(m, y - z, minlength=cov.N_BINS) / n
    share = np.bincount(m, minlength=cov.N_BINS) / n
    pop = cov._beta_population_ece(cond, EDGES)
    assert abs(np.abs(d).sum() - pop) <= 4 * np.sqrt(share / n).sum()
    if cond == "calibrated":
        assert pop == 0.0
    else:  # the nonlinear curve is a real miscalibration whose gap changes sign
        assert pop > 0.03
        mid = (EDGES[:-1] + EDGES[1:]) / 2
        gap = cov._beta_curve(cond)(mid) - mid
        assert gap.min() < 0 < gap.max()


def test_designs_simulate_what_they_declare():
    rng = np.random.default_rng(1)
    gold = cov._simulate_design("gold-k2", "shifted", 2000, rng)
    g = gold.dataset["gold"].values
    assert gold.n_annotators == 2 and np.sum(~np.isnan(g)) == 200
    known = ~np.isnan(g)
    assert np.array_equal(g[known], np.asarray(gold.truth)[known])
    beta = cov._simulate_design("beta-k3", "nonlinear", 20000, rng)
    share = np.isnan(beta.labels).mean()
    assert abs(share - cov.BETA_MISSING) < 4 * np.sqrt(0.09 / beta.labels.size)
    assert cov._population_ece("toy-k3", "calibrated") == 0.0


def test_design_run_resumes_and_every_interval_holds_its_estimate(tmp_path):
    path = tmp_path / "designs.json"
    argv = ["bench", "coverage", "--designs", "gold-k2", "--conditions", "shifted",
            "--sizes", "300", "--draws", "60", "--tune", "60", "--n-bootstrap", "200",
            "--json", str(path)]  # fmt: skip
    assert main([*argv, "--reps", "2"]) == 0
    first = json.loads(path.read_text())
    reps = first["replicates"]["gold-k2/shifted/300"]
    assert len(reps) == 2
    for rep in reps:
        lo, hi, p = rep["posterior"]
        assert lo <= rep["estimate"] <= hi and 0 < p <= 1
    rows = {r["interval"]: r for r in first["results"]}
    assert set(rows) == {"reported", "evaluation_only", "full"}
    for r in rows.values():
        assert r["reps"] == 2 and 0 <= r["coverage"] <= 1 and r["coverage_se"] >= 0
        assert {"test_rejection_rate", "test_rejection_se", "mean_width"} <= set(r)
    # a rerun with more repetitions keeps the first two and adds one
    assert main([*argv, "--reps", "3"]) == 0
    again = json.loads(path.read_text())["replicates"]["gold-k2/shifted/300"]
    assert again[:2] == reps and len(again) == 3


def test_design_arguments_are_checked(capsys):
    assert main(["bench", "coverage", "--designs", "nope", "--reps", "2"]) == 2
    assert "unknown --designs ['nope']" in capsys.readouterr().err
    assert main(["bench", "coverage", "--designs", "beta-k3", "--reps", "2"]) == 2
    assert "'calibrated' and 'nonlinear' only" in capsys.readouterr().err


def test_a_design_cell_is_saved_in_chunks_and_equals_one_run(tmp_path, monkeypatch):
    """The JSON is rewritten every _SAVE_EVERY repetitions (a stopped run keeps them), and a
    cell grown in chunks holds the same repetitions as one run in one go (seeds by index)."""
    argv = ["bench", "coverage", "--designs", "toy-k3", "--conditions", "calibrated",
            "--sizes", "300", "--draws", "40", "--tune", "40", "--n-bootstrap", "100",
            "--reps", "2"]  # fmt: skip
    assert main([*argv, "--json", str(tmp_path / "one.json")]) == 0
    saved = []
    real = cov.write_json
    monkeypatch.setattr(cov, "_SAVE_EVERY", 1)
    monkeypatch.setattr(cov, "write_json", lambda s, p: (saved.append(p), real(s, p)))
    assert main([*argv, "--json", str(tmp_path / "chunks.json")]) == 0
    assert len(saved) == 2  # after repetitions 1 and 2
    one, chunks = (json.loads((tmp_path / f).read_text()) for f in ("one.json", "chunks.json"))
    key = "toy-k3/calibrated/300"
    assert chunks["replicates"][key] == one["replicates"][key]
    assert chunks["results"] == one["results"] and list(chunks["protocol"]["designs"]) == ["toy-k3"]
