"""Gold items and priors in the multiclass audit and on the command line (issue 15)."""

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from bayescal.cli import main
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.report.audit import audit_multiclass
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.multiclass import default_confusions

QUICK = ["--draws", "100", "--tune", "150", "--chains", "2", "--quiet"]
#: The recalibration choice (about 30 maps on held-out items and a posterior band: 3.5 of a
#: 500-item audit's 6 CPU s) reads neither the gold column nor the priors' summary; the
#: audits that only feed or read priors leave it out (it stays in the report as skipped),
#: the last one (the conflict) keeps it, so the choice still runs with gold items and priors.
NO_RECAL = ["--skip", "recalibration"]


def _cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def _with_gold(d, share, seed):
    gold = np.where(np.random.default_rng(seed).random(d.n_items) < share, d.truth, np.nan)
    return MulticlassAnnotations.from_arrays(d.probs, d.labels, truth=d.truth, gold=gold)


def _csv(path, d):
    frame = pd.DataFrame(d.probs, columns=[f"p{y}" for y in range(d.n_classes)])
    for j, name in enumerate(d.annotators):
        frame[name] = [None if np.isnan(v) else int(v) for v in d.labels[:, j]]
    frame["known"] = [None if np.isnan(v) else d.classes[int(v)] for v in d.gold]
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def gold_report():
    t = np.repeat((0.6 * np.eye(3) + 0.2 * (1 - np.eye(3)))[None], 3, axis=0)
    d = _with_gold(simulate_multiclass(1200, 3, t, random_state=31), 0.4, 1)
    return d, audit_multiclass(d, draws=200, tune=200, view="noise", random_state=2)


def test_audit_reports_gold_per_class_and_narrowing(gold_report):
    d, r = gold_report
    g = r.summary["knowledge"]["gold"]
    known = d.gold[~np.isnan(d.gold)].astype(int)
    assert g["n_gold_per_class"] == dict(zip(d.classes, np.bincount(known, minlength=3).tolist()))
    assert g["identifies_channels"] and not g["in_calibration_error"]
    assert g["narrowing"]["status"] == "ok"
    ratios = [v["median_width_ratio"] for v in g["narrowing"]["annotators"].values()]
    # 40% gold items with weak annotators: the confusion sds shrink to ~0.78 (test of the
    # model, test_multiclass_gold_bayes.py); interval widths of 400 draws carry ~5% Monte
    # Carlo error, so every annotator's median width ratio is below 0.95
    assert max(ratios) < 0.95, ratios
    section = next(s for s in r.sections if s.key == "knowledge")
    # counts, narrowing, and the gold labels against the channels fitted without them
    assert section.status == "ok" and len(section.tables) == 3
    assert section.tables[2].caption.startswith("Gold labels against the channels fitted without")
    assert g["conflict"]["status"] == "ok" and not g["conflict"]["conflict"]  # honest gold
    # gold items are left out of the calibration error
    assert r.errors["soft_vote"].top_label.n == int(np.isnan(d.gold).sum())


def test_gold_in_ece_on_request(gold_report):
    d, _ = gold_report
    d = d.subset(np.arange(400))
    r = audit_multiclass(d, channels="dawid-skene-em", gold_in_ece=True)
    assert r.summary["knowledge"]["gold"]["in_calibration_error"]
    assert r.errors["soft_vote"].top_label.n == d.n_items
    assert "point channels" in r.summary["knowledge"]["gold"]["narrowing"]["status"]


def test_cli_gold_priors_and_conflict(tmp_path):
    d = _with_gold(simulate_multiclass(500, 3, random_state=32, n_annotators=2), 0.3, 2)
    data = _csv(tmp_path / "q1.csv", d)
    base = [data, "--probs", "p0,p1,p2", "--annotators", "a1,a2", "--classes", "x,y,z"]
    # two annotators without groups: identified by the gold items (class names in the column)
    argv = ["audit", *base, "--gold", "known", *QUICK, *NO_RECAL, "--out", tmp_path / "q1"]
    code, err = _cli(argv)
    assert code == 0, err
    s = json.loads((tmp_path / "q1" / "summary.json").read_text())
    assert sum(s["knowledge"]["gold"]["n_gold_per_class"].values()) == d.n_gold
    # the next quarter with priors from this one: same annotators, no conflict
    q2 = simulate_multiclass(500, 3, random_state=33, n_annotators=2)
    d2 = _with_gold(q2, 0.3, 3)
    data2 = _csv(tmp_path / "q2.csv", d2)
    base2 = [data2, *base[1:]]
    prior = tmp_path / "q1" / "posterior.nc"
    args = ["audit", *base2, "--gold", "known", "--priors", prior, *QUICK]
    code, err = _cli([*args, *NO_RECAL, "--priors-joint", "--out", tmp_path / "q2"])
    assert code == 0 and "priors.conflict" not in err, err
    s2 = json.loads((tmp_path / "q2" / "summary.json").read_text())
    assert s2["knowledge"]["priors"]["from_fit"] == ["a1", "a2"]
    assert s2["knowledge"]["priors"]["unused"] == []
    assert not s2["knowledge"]["priors"]["prevalence_carried_over"]
    assert s2["knowledge"]["priors"]["joint"]
    # 2 x 100 earlier draws for 12 log-ratio coordinates: the estimated covariance alone
    # moves the update by >= sqrt(15 / 800) = 0.14 posterior sd (N_v <= 200): flagged
    assert s2["knowledge"]["priors"]["joint_shift_sd"] > 0.1 and "[priors.joint_draws]" in err
    assert not any(v["conflict"] for v in s2["knowledge"]["priors"]["conflict"].values())
    # a1 drifts to accuracy 0.4: flagged, a2 not
    t = default_confusions(2, 3)
    t[0] = 0.4 * np.eye(3) + 0.3 * (1 - np.eye(3))
    d3 = _with_gold(simulate_multiclass(500, 3, t, random_state=34), 0.3, 4)
    data3 = _csv(tmp_path / "q3.csv", d3)
    code, err = _cli(["audit", data3, *args[2:], "--out", tmp_path / "q3"])
    assert code == 0 and "[priors.conflict]" in err and "['a1']" in err, err
    s3 = json.loads((tmp_path / "q3" / "summary.json").read_text())
    assert s3["recalibration"]["posterior_band"]["draws"] == 200  # 2 chains x 100, the priors'
    assert s["recalibration"]["status"] == s2["recalibration"]["status"] == "skipped"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--gold-in-ece"], "--gold-in-ece needs --gold COL"),
        (["--gold", "known", "--priors-joint"], "--priors-joint needs --priors FILE"),
        (
            ["--gold", "known", "--priors", "x.nc", "--channels", "dawid-skene-em"],
            "use --channels bayes",
        ),
        (["--gold", "nope"], "no column"),
    ],
)
def test_cli_knowledge_refusals(tmp_path, extra, message):
    d = _with_gold(simulate_multiclass(60, 3, random_state=35), 0.3, 5)
    data = _csv(tmp_path / "d.csv", d)
    argv = ["audit", data, "--probs", "p0,p1,p2", "--annotators", "a1,a2,a3", "--classes", "x,y,z"]
    code, err = _cli([*argv, *extra, "--out", tmp_path / "out"])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_cli_refuses_a_binary_posterior_as_multiclass_priors(tmp_path):
    from bayescal.bayes import fit_channels_bayes
    from bayescal.simulate import simulate_toy

    fit = fit_channels_bayes(simulate_toy(300, random_state=1), draws=20, tune=20, chains=1)
    fit.idata.posterior.attrs.setdefault("bayescal_version", "test")
    path = tmp_path / "binary.nc"
    fit.idata.to_netcdf(path)
    d = _with_gold(simulate_multiclass(60, 3, random_state=36), 0.3, 6)
    data = _csv(tmp_path / "d.csv", d)
    argv = ["audit", data, "--probs", "p0,p1,p2", "--annotators", "a1,a2,a3", "--priors", path]
    code, err = _cli([*argv, "--out", tmp_path / "out"])
    assert code == 2 and "binary channel posterior" in err, err
