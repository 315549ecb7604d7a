"""Implausible fits reach summary.json["warnings"], the report's top and the command line
(issue 12, item 3), and point channels speak point wording (item 4)."""

import json

import numpy as np
import pandas as pd
import pytest

from bayescal.cli import main
from bayescal.data.container import Annotations, load_csv
from bayescal.errors import ConfigError, DataError
from bayescal.report import audit
from bayescal.simulate import simulate_toy

FAST = ["--draws", "150", "--tune", "150", "--quiet"]


def _write(path, score, labels, names):
    frame = pd.DataFrame({"score": score, **{n: labels[:, j] for j, n in enumerate(names)}})
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def random_run(tmp_path_factory):
    """Three annotators answering at random (a = b = 0.5), Bayesian channels, via the CLI."""
    tmp = tmp_path_factory.mktemp("random")
    rng = np.random.default_rng(0)
    score = simulate_toy(800, random_state=0).score
    labels = (rng.random((800, 3)) < 0.5).astype(int)
    path = _write(tmp / "random.csv", score, labels, ["r1", "r2", "r3"])
    out = tmp / "out"
    return main(["audit", str(path), "--seed", "0", "--out", str(out), *FAST]), out


def test_random_annotators_flagged_everywhere_and_not_a_confident_number(random_run, capfd):
    code, out = random_run
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    errors = [w for w in s["warnings"] if w["severity"] == "error"]
    assert errors and errors[0]["code"] == "plausibility.near-chance"
    assert s["warnings"][0] == errors[0]  # errors come first
    nc = s["ece"]["nc"]
    assert nc["reliable"] is False and "plausibility.near-chance" in nc["unreliable_because"]
    html = (out / "report.html").read_text()
    assert html.index("plausibility.near-chance") < html.index("Calibration error")
    assert "Not a reliable number" in html


def test_random_annotators_repr_says_not_reliable():
    rng = np.random.default_rng(2)
    d = simulate_toy(600, random_state=2)
    noise = Annotations.from_arrays(d.score, (rng.random((600, 3)) < 0.5).astype(float))
    r = audit(noise, draws=150, tune=150)
    assert "NOT RELIABLE: plausibility.near-chance" in repr(r)


def test_random_annotators_cli_lines(tmp_path, capsys):
    rng = np.random.default_rng(1)
    score = simulate_toy(600, random_state=1).score
    path = _write(
        tmp_path / "r.csv", score, (rng.random((600, 3)) < 0.5).astype(int), ["a", "b", "c"]
    )
    code = main(
        ["audit", str(path), "--out", str(tmp_path / "o"), "--draws", "150", "--tune", "150"]
    )
    err = capsys.readouterr()
    text = err.out + err.err
    assert code == 0
    assert "NOT RELIABLE (plausibility.near-chance" in text
    assert "error [plausibility.near-chance]" in text


def test_truth_column_as_annotator_is_flagged_and_truth_that_is_an_annotator_refused(tmp_path):
    d = simulate_toy(600, random_state=2)
    labels = np.column_stack([d.labels, d.truth]).astype(int)
    path = _write(tmp_path / "t.csv", d.score, labels, ["r1", "r2", "r3", "Truth"])
    with pytest.raises(DataError, match="'Truth' is named like a reference label"):
        load_csv(path)  # never a silent annotator without --annotators (issue 24)
    r = audit(load_csv(path, annotators=["r1", "r2", "r3", "Truth"]), channels="score-bin-em")
    codes = [w["code"] for w in r.summary["warnings"]]
    assert "plausibility.reference-like-name" in codes  # named deliberately: still flagged
    with pytest.raises(ConfigError, match=r"cannot be both an annotator and .* truth='r1'"):
        load_csv(path, annotators=["r1", "r2", "r3"], truth="r1")
    assert main(["audit", str(path), "--annotators", "r1,r2", "--truth", "r1",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2  # fmt: skip


@pytest.fixture(scope="module")
def point_report():
    d = simulate_toy(1000, "shifted", random_state=7, fp=[0.1, 0.2], fn=[0.15, 0.1])
    return audit(d, channels="hui-walter", groups=2)


def test_point_channels_speak_point_wording(point_report):
    html = point_report.to_html()
    assert "posterior" not in html.lower()
    assert "credible" not in html.lower()
    ece = next(s for s in point_report.sections if s.key == "ece")
    labels = [row[0] for row in ece.tables[0].rows]
    assert not any("channel uncertainty" in x for x in labels)
    assert any("evaluation-only interval" in x for x in labels)
    nc = point_report.summary["ece"]["nc"]
    assert set(nc["decomposition"]) == {"evaluation"}
    assert nc["interval_label"].endswith(
        "evaluation-only interval (channels held at their estimate)"
    )
    # The headline's position is coherent: the estimate lies in its own interval.
    assert nc["lo"] <= nc["point"] <= nc["hi"] and 0 <= nc["position"] <= 1


def test_the_audit_reuses_the_items_and_says_so(point_report):
    nc = point_report.interval.to_dict()
    assert nc["sample_use"] == "reuse" and nc["source"] == "evaluation"
    notes = " ".join(next(s for s in point_report.sections if s.key == "ece").notes)
    assert "fitted on these same items" in notes and "p-value" in notes


@pytest.mark.parametrize(
    ("fp", "fn", "missing", "channels", "groups"),
    [
        ([0.1, 0.2], [0.15, 0.1], 0.0, "score-bin-em", 5),
        ([0.08, 0.13, 0.18], [0.16, 0.11, 0.06], 0.0, "dawid-skene-em", 1),
        ([0.1, 0.15, 0.2, 0.05, 0.25], [0.1, 0.05, 0.2, 0.15, 0.1], 0.4, "score-bin-em", 5),
    ],
)
def test_clean_audit_raises_no_warning(fp, fn, missing, channels, groups):
    d = simulate_toy(1500, "shifted", random_state=21, fp=fp, fn=fn, missing=missing)
    r = audit(d, channels=channels, groups=groups)
    # Only the plain fact that some items have no answer (40% missing over 5 annotators
    # leaves about 1% of items unanswered) may be reported; nothing about plausibility.
    assert {w["code"] for w in r.summary["warnings"]} <= {"data.unannotated"}
    assert r.summary["ece"]["nc"]["reliable"] is True


def test_a_sampler_that_did_not_converge_makes_the_number_unreliable(monkeypatch):
    """R-hat 2.87 and two effective draws (a point-mass prior sampled) was shown as warnings
    only, with ``ece.nc.reliable: true``: beyond R-hat 1.1 or 20 effective draws the chains
    are no sample of the posterior, so it is an error flag and the number is not reliable."""
    import bayescal.report.sections as sections

    real = sections.fit_posterior

    def stuck(ctx, summary, **options):
        fit = real(ctx, summary, **options)
        fit.diagnostics.update(rhat_max=2.87, ess_bulk_min=2.0)
        return fit

    monkeypatch.setattr(sections, "fit_posterior", stuck)
    r = audit(simulate_toy(600, random_state=3), draws=100, tune=100, random_state=0)
    nc = r.summary["ece"]["nc"]
    assert nc["reliable"] is False and nc["unreliable_because"] == ["channels.not-converged"]
    [flag] = [w for w in r.summary["warnings"] if w["code"] == "channels.not-converged"]
    assert "R-hat 2.87 above 1.1, bulk ESS 2 below 20" in flag["message"]
    assert flag["severity"] == "error"
