"""Gold items in the binary audit and on the command line."""

import contextlib
import io
import json

import numpy as np
import pytest
from gold_data import gold_data

from bayescal.cli import main
from bayescal.report.audit import audit


def _cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


@pytest.fixture(scope="module")
def gold_audit():
    d, y = gold_data(3000, [0.1, 0.25, 0.2], [0.85, 0.7, 0.8], n_gold=600, seed=11)
    return d, audit(d, groups=3, bins=5, draws=300, tune=300)


def test_audit_reports_gold_counts_and_narrowing(gold_audit):
    d, r = gold_audit
    g = r.summary["knowledge"]["gold"]
    assert (g["n_gold_0"], g["n_gold_1"]) == (int((d.gold == 0).sum()), int((d.gold == 1).sum()))
    assert g["identifies_channels"] and not g["in_calibration_error"]
    per = g["narrowing"]["annotators"]
    ratios = [
        v[key]["width_with_gold"] / v[key]["width_without_gold"]
        for v in per.values()
        for key in ("a", "b")
    ]
    # 600 gold items among 3000 add ~20% of the items with their class known: every interval
    # narrows; Monte Carlo error of a 90% width from 600 draws is a few percent, far below
    # the narrowing (measured 17-46% on this data)
    assert max(ratios) < 0.95
    section = next(s for s in r.sections if s.key == "knowledge")
    # counts, narrowing, and the gold labels against the channels fitted without them
    assert section.status == "ok" and len(section.tables) == 3
    assert section.tables[2].caption.startswith("Gold labels against the channels fitted without")
    assert g["conflict"]["source"] == "the posterior without the gold items"
    assert not g["conflict"]["conflict"]  # honest gold
    # gold items are left out of the calibration error: the bins hold the unknown items only
    assert int(r.errors["soft_vote"].bin_count.sum()) == int(np.isnan(d.gold).sum())


def test_gold_in_ece_on_request():
    d, _ = gold_data(1500, [0.1, 0.25, 0.2], [0.85, 0.7, 0.8], n_gold=300, seed=12)
    r = audit(d, channels="score-bin-em", groups=3, bins=5, gold_in_ece=True)
    assert r.summary["knowledge"]["gold"]["in_calibration_error"]
    assert int(r.errors["soft_vote"].bin_count.sum()) == d.n_items
    assert "point channels" in r.summary["knowledge"]["gold"]["narrowing"]["status"]


def test_audit_without_gold_skips_the_section():
    d, _ = gold_data(800, [0.1, 0.25, 0.2], [0.85, 0.7, 0.8], n_gold=0, seed=13)
    r = audit(d, channels="score-bin-em", groups=3, bins=5)
    section = next(s for s in r.sections if s.key == "knowledge")
    assert section.status == "skipped" and r.summary["knowledge"] == {}


@pytest.mark.slow
def test_cli_gold_column_identifies_two_annotators_without_groups(tmp_path):
    d, _ = gold_data(2000, [0.1, 0.25], [0.85, 0.7], n_gold=400, seed=14)
    lines = ["score,r1,r2,known"]
    for z, (l1, l2), g in zip(d.score, d.labels, d.gold):
        cell = ["" if np.isnan(v) else str(int(v)) for v in (l1, l2, g)]
        lines.append(f"{z:.6f}," + ",".join(cell))
    path = tmp_path / "gold.csv"
    path.write_text("\n".join(lines) + "\n")
    base = [
        "audit",
        path,
        "--annotators",
        "r1,r2",
        "--groups",
        "1",
        "--draws",
        "100",
        "--tune",
        "100",
        "--quiet",
    ]
    code, err = _cli(base + ["--out", tmp_path / "no"])
    assert code == 2 and "not identified" in err
    code, err = _cli(base + ["--gold", "known", "--out", tmp_path / "yes"])
    assert code == 0, err
    summary = json.loads((tmp_path / "yes" / "summary.json").read_text())
    assert (
        summary["knowledge"]["gold"]["n_gold_0"] + summary["knowledge"]["gold"]["n_gold_1"] == 400
    )
    assert "not identified without" in summary["knowledge"]["gold"]["narrowing"]["status"]
    code, err = _cli(
        ["audit", "--example", "snli-entailment", "--gold", "x", "--out", tmp_path / "e"]
    )
    assert code == 2 and "no gold column" in err
    code, err = _cli(base + ["--gold-in-ece", "--out", tmp_path / "x"])
    assert code == 2 and "needs --gold" in err


def test_audit_of_one_annotator_identified_by_gold_items():
    # K = 1: no annotator pairs (the predictive check has none to test) and no design without
    # the gold items; the audit runs and says why the channels are identified
    d, _ = gold_data(2000, [0.1], [0.85], n_gold=400, seed=15)
    r = audit(d, groups=2, bins=5, draws=150, tune=150)
    gold = r.summary["knowledge"]["gold"]
    assert gold["identifies_channels"]
    assert gold["narrowing"]["status"].startswith("not identified without the gold items (one")
    design = next(s for s in r.sections if s.key == "identification").tables[0].rows
    assert dict(design)["why identified"].startswith("the gold items")
    a = r.channels.a.values[:, 0]
    assert abs(a.mean() - 0.1) < 4 * a.std() + 0.01
