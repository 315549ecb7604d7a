"""--dependence for multiclass data (--probs): the knowledge section compares both models, the
headline uses the dependence model and says so, summary.json carries both; bad options are
refused in one line before any fitting."""

import contextlib
import io
import json

import numpy as np
import pytest

from bayescal.cli import main
from bayescal.simulate.dependent import simulate_multiclass_dependent


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    data, _ = simulate_multiclass_dependent(
        900, loading=2.0, groups=[(0, 1)], n_annotators=4, random_state=8
    )
    rows = ["p0,p1,p2," + ",".join(data.annotators)]
    for p, row in zip(data.probs, data.labels):
        answers = ",".join("" if np.isnan(v) else str(int(v)) for v in row)
        rows.append(",".join(f"{x:.8f}" for x in p) + "," + answers)
    path = tmp_path_factory.mktemp("mcdep") / "answers.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


ARGS = ["--probs", "p0,p1,p2", "--annotators", "a1,a2,a3,a4"]


@pytest.mark.slow
def test_multiclass_audit_with_dependence(csv, tmp_path):
    settings = ["--draws", "40", "--tune", "60", "--view", "noise"]
    code, out, err = _cli(
        ["audit", csv, *ARGS, *settings, "--dependence", "a1:a2", "--out", tmp_path]
    )
    assert code == 0, err
    assert "(dependence model; the report compares it with independence)" in out + err
    summary = json.loads((tmp_path / "summary.json").read_text())
    dep = summary["knowledge"]["dependence"]
    assert dep["groups"] == [["a1", "a2"]] and dep["headline_model"] == "dependent"
    assert set(dep["loo"]) == set(dep["nc_ece"]) == set(dep["ppc"]) == {"independent", "dependent"}
    # the headline is the dependence model's top-label interval, the channels block is its
    headline = dep["nc_ece"]["dependent"]["top_label"]
    assert summary["ece"]["nc"]["point"] == pytest.approx(headline["estimate"])
    assert summary["ece"]["nc"]["lo"] == pytest.approx(headline["lo"])
    assert summary["channels"]["method"] == "bayes_multiclass_dependence"
    # a strongly dependent pair: the independence model's pair check fails, LOO prefers the
    # dependence model
    assert dep["ppc"]["independent"]["pair_tail_prob"]["a1~a2"] < 0.01
    assert dep["loo"]["independent"]["elpd_diff"] > 0
    html = (tmp_path / "report.html").read_text()
    for text in ("LOO on the pattern counts", "before (independence)", "(headline)"):
        assert text in html


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--dependence", "a1:a9"], "unknown annotator"),
        (["--dependence", "a1:a1"], "itself"),
        (["--dependence", "all", "--channels", "dawid-skene-em"], "Bayesian channels"),
    ],
)
def test_bad_multiclass_dependence_options_are_refused_in_one_line(csv, tmp_path, extra, message):
    code, _, err = _cli(["audit", csv, *ARGS, "--quiet", *extra, "--out", tmp_path / "x"])
    assert code == 2 and message in err and len(err.splitlines()) == 1, err
