"""--dependence on the command line: the knowledge section compares both models, the headline
uses the dependence model and says so, summary.json carries both; bad options are refused in
one line."""

import contextlib
import io
import json

import numpy as np
import pytest

from bayescal.cli import main
from bayescal.simulate.dependent import simulate_dependent

FP, FN = (0.08, 0.13, 0.18, 0.10), (0.16, 0.11, 0.06, 0.12)


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    data, _ = simulate_dependent(2000, loading=2.0, groups=[(0, 1)], fp=FP, fn=FN, random_state=8)
    rows = ["score," + ",".join(data.annotators)]
    for z, row in zip(data.score, data.labels):
        rows.append(f"{z:.6f}," + ",".join("" if np.isnan(v) else str(int(v)) for v in row))
    path = tmp_path_factory.mktemp("dep") / "answers.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.slow
def test_audit_with_dependence(csv, tmp_path):
    settings = ["--draws", "200", "--tune", "200", "--quiet"]
    code, out, err = _cli(["audit", csv, *settings, "--dependence", "a1:a2", "--out", tmp_path])
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    dep = summary["knowledge"]["dependence"]
    assert dep["groups"] == [["a1", "a2"]] and dep["headline_model"] == "dependent"
    assert set(dep["loo"]) == set(dep["nc_ece"]) == {"independent", "dependent"}
    # the headline is the dependence model's interval, and the channels block is its
    assert summary["ece"]["nc"]["point"] == pytest.approx(dep["nc_ece"]["dependent"]["estimate"])
    assert summary["channels"]["method"] == "bayes_dependence"
    assert dep["loo"]["independent"]["elpd_diff"] > 0  # on data with a dependent pair
    # the independence model's failed check says the headline no longer rests on it
    ppc = [
        w["message"]
        for w in summary["warnings"]
        if w["code"] == "channels.sampler" and "predictive check" in w["message"]
    ]
    assert ppc and all("the headline uses the dependence model" in m for m in ppc)
    html = (tmp_path / "report.html").read_text()
    for text in ("LOO on the pattern counts", "before (independence)", "(headline)"):
        assert text in html


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--dependence", "a1:a9"], "unknown annotator"),
        (["--dependence", "a1:a1"], "itself"),
        (["--dependence", "a1:a2,a2:a1"], "given twice"),
        (["--dependence", "all", "--channels", "score-bin-em"], "Bayesian channels"),
    ],
)
def test_bad_dependence_options_are_refused_in_one_line(csv, tmp_path, extra, message):
    code, _, err = _cli(["audit", csv, "--quiet", *extra, "--out", tmp_path / "x"])
    assert code == 2 and message in err and len(err.splitlines()) == 1, err
