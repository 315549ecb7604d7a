"""--priors on the command line: an earlier audit's posterior.nc, conflict flagged."""

import contextlib
import io
import json

import numpy as np
import pytest

from bayescal.cli import main
from bayescal.simulate import simulate_toy


def _cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def _csv(path, seed, flip=0.0):
    d = simulate_toy(3000, random_state=seed)
    lab = d.labels.copy()
    rng = np.random.default_rng(seed)
    turn = (rng.random(d.n_items) < flip) & ~np.isnan(lab[:, 0])
    lab[turn, 0] = 1 - lab[turn, 0]
    rows = ["score," + ",".join(d.annotators)]
    for z, row in zip(d.score, lab):
        rows.append(f"{z:.6f}," + ",".join("" if np.isnan(v) else str(int(v)) for v in row))
    path.write_text("\n".join(rows) + "\n")
    return path


#: The sections that refit things (the recalibration choice's maps on held-out items, the
#: next-annotation ranking) read neither the priors nor their conflict check: the audit that
#: only writes the earlier posterior and the joint-prior one leave them out (they stay in
#: the report as skipped); the audit with the independent priors keeps every section.
SKIP_REFITS = ["--skip", "recalibration", "--skip", "next"]


@pytest.mark.slow
def test_priors_from_an_earlier_audit_and_the_conflict_flag(tmp_path):
    settings = ["--groups", "3", "--draws", "300", "--tune", "300", "--quiet"]
    q1 = _csv(tmp_path / "q1.csv", 1)
    code, err = _cli(["audit", q1, *settings, *SKIP_REFITS, "--out", tmp_path / "q1"])
    assert code == 0, err
    posterior = tmp_path / "q1" / "posterior.nc"
    # the same annotators a quarter later, a1 now flipping 15% of its answers
    q2 = _csv(tmp_path / "q2.csv", 2, flip=0.15)
    code, err = _cli(["audit", q2, *settings, "--priors", posterior, "--out", tmp_path / "q2"])
    assert code == 0, err
    assert "[priors.conflict]" in err and "['a1']" in err
    knowledge = json.loads((tmp_path / "q2" / "summary.json").read_text())["knowledge"]
    assert knowledge["priors"]["inflate"] == 2.0
    assert knowledge["priors"]["conflict"]["a1"]["conflict"]
    assert not knowledge["priors"]["conflict"]["a2"]["conflict"]
    # what the file gives is stated: every earlier annotator used, no prevalence carried over
    assert (
        knowledge["priors"]["unused"] == [] and not knowledge["priors"]["prevalence_carried_over"]
    )
    html = (tmp_path / "q2" / "report.html").read_text()
    assert "The earlier audit gives the prior of a1, a2, a3." in html
    assert "Its class prevalences are not carried over" in html
    summary = json.loads((tmp_path / "q2" / "summary.json").read_text())
    assert summary["recalibration"]["candidates"] and set(summary["next_annotations"]) == {
        "gold",
        "reread",
    }
    # the joint prior (correlations kept) flags the same annotator
    joint = ["--priors", posterior, "--priors-joint"]
    code, err = _cli(["audit", q2, *settings, *joint, *SKIP_REFITS, "--out", tmp_path / "q2j"])
    assert code == 0 and "['a1']" in err, err
    summary = json.loads((tmp_path / "q2j" / "summary.json").read_text())
    assert {"recalibration", "next"} <= set(summary["skipped"])
    knowledge = summary["knowledge"]
    assert knowledge["priors"]["joint"] and knowledge["priors"]["conflict"]["a1"]["conflict"]
    assert knowledge["priors"]["joint_shift_sd"] > 0  # reported (flagged above 0.1 sd)
    # refusals, each one line: a file that is not our posterior, point channels, bad inflate
    for extra, message in (
        (["--priors", q1], "not a bayescal posterior.nc"),
        (["--priors", posterior, "--channels", "score-bin-em"], "Bayesian channels"),
        (["--priors", posterior, "--priors-inflate", "0.5"], ">= 1"),
        (["--priors-joint"], "needs --priors"),
    ):
        code, err = _cli(["audit", q2, *settings, *extra, "--out", tmp_path / "x"])
        assert code == 2 and message in err and len(err.splitlines()) == 1, err
