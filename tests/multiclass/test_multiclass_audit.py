"""The multiclass audit: summary layout, views, the CLI, the examples, and C = 2 vs binary."""

import json
import logging

import numpy as np
import pytest

from bayescal.cli import main
from bayescal.data.container import Annotations
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError
from bayescal.report.audit import audit, audit_multiclass
from bayescal.simulate import simulate_multiclass, simulate_toy


@pytest.fixture(scope="module")
def mc_data():
    return simulate_multiclass(1200, 3, random_state=3, missing=0.1, temperature=2.0)


class _Steps(logging.Handler):
    """Keeps the progress records (``step`` = (iteration, of)) of the EM."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.steps = []

    def emit(self, record):
        if getattr(record, "step", None) and "fitting the confusions (EM)" in record.getMessage():
            self.steps.append(record.step)


@pytest.fixture(scope="module")
def em_audit(mc_data):
    """The EM audit and the EM's progress records while it ran (one audit for every test
    that reads either: the records are emitted at DEBUG, which does not change the fit)."""
    logger = logging.getLogger("bayescal")
    handler, level = _Steps(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        report = audit_multiclass(mc_data, channels="dawid-skene-em", random_state=1)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return report, handler.steps


@pytest.fixture(scope="module")
def em_report(em_audit):
    return em_audit[0]


@pytest.fixture(scope="module")
def both_report(mc_data):
    """The EM audit with both views (noise and ambiguity sections)."""
    return audit_multiclass(mc_data, channels="dawid-skene-em", view="both", random_state=1)


def test_summary_keeps_the_binary_layout_and_adds_confusions(em_report, mc_data):
    s = em_report.summary
    ece = s["ece"]
    for key in ("soft_vote", "majority_vote", "oracle", "bins", "classwise", "ambiguity"):
        assert key in ece
    assert set(ece["nc"]) >= {"point", "lo", "hi", "prob", "plugin", "p_value"}
    assert ece["target"] == "top_label" and len(ece["bins"]) == 11
    assert 0 <= ece["nc"]["lo"] <= ece["nc"]["point"] <= ece["nc"]["hi"]
    conf = s["channels"]["annotators"]["a1"]
    assert np.allclose(np.sum(conf["mean"], axis=1), 1.0) and conf["lo"] is None
    assert set(ece["classwise"]["per_class"]) == set(mc_data.classes)
    assert s["noise_or_ambiguity"]["view"] in ("noise", "misfit", "ambiguity", "inconclusive")
    json.dumps(s, allow_nan=False)  # strict JSON


def test_nc_ece_matches_the_library(em_report, mc_data):
    from bayescal.metrics import class_nc_ece

    nc = class_nc_ece(mc_data, em_report.point_channels)
    assert em_report.summary["ece"]["nc"]["plugin"] == pytest.approx(nc.top_label.value, abs=1e-12)
    assert em_report.summary["ece"]["classwise"]["nc"]["plugin"] == pytest.approx(
        nc.classwise.value, abs=1e-12
    )


def test_views_choose_the_sections(em_report, both_report):
    keys = {s.key: s.status for s in em_report.sections}
    assert keys["evidence"] == "ok"
    evidence = em_report.summary["view"]["evidence"]
    expected_noise = "skipped" if evidence == "ambiguity" else "ok"
    assert keys["noise"] == expected_noise
    assert keys["ambiguity"] == ("ok" if evidence == "ambiguity" else "skipped")
    both = both_report
    assert {s.key: s.status for s in both.sections}["ambiguity"] == "ok"
    assert both.summary["view"]["ran"] == ["noise", "ambiguity"]
    # the numbers do not depend on the view
    assert both.summary["ece"] == em_report.summary["ece"]


def test_saved_report(em_report, tmp_path):
    written = em_report.save(tmp_path / "out")
    assert sorted(written) == ["items.csv", "next.csv", "report.html", "summary.json"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Noise or ambiguity?" in html and "Annotator confusion matrices" in html


def test_bayesian_audit_stores_the_posterior(mc_data, tmp_path, summary_intervals_check):
    r = audit_multiclass(mc_data, draws=100, tune=200, random_state=2)
    assert r.channels.n_draws == 200 and r.summary["channels"]["method"] == "bayes_multiclass"
    # issue 22 item 6: every interval of summary.json holds its estimate, both errors
    paths = summary_intervals_check(r.summary)
    assert {".ece.nc", ".ece.classwise.nc", ".verdict.numbers"} <= set(paths)
    cw = r.summary["ece"]["classwise"]["nc"]
    assert cw["lo"] <= cw["point"] <= cw["hi"] and cw["point"] <= cw["plugin"]
    # item 5: the recalibration shows the posterior band of its corrected map
    rec = r.summary["recalibration"]
    band = rec["posterior_band"]
    assert band["role"] in ("recommended", "best corrected candidate")
    assert band["family"] in ("temperature", "vector") and band["draws"] == 200
    assert (band["role"] == "recommended") == (rec["recommended"]["target"] == "corrected")
    section = next(s for s in r.sections if s.key == "recalibration")
    assert section.tables[-1].caption.startswith("Posterior band of the")
    conf = r.summary["channels"]["annotators"]["a2"]
    assert np.all(np.array(conf["lo"]) <= np.array(conf["hi"]))
    assert r.summary["diagnostics"]["relabelled_draws"] == 0
    written = r.save(tmp_path / "bayes")
    assert "posterior.nc" in written


def test_the_one_audit_runs_the_classwise_steps_for_more_than_two_classes(mc_data, em_report):
    """Issue 21: ``audit`` reads the number of classes from the data; ``audit_multiclass`` is
    the same audit (its numbers are those of ``audit`` on C > 2 data)."""
    r = audit(mc_data, channels="dawid-skene-em", random_state=1)
    assert r.kind == "multiclass" and type(r) is type(em_report)
    assert r.summary["ece"] == em_report.summary["ece"]
    assert r.summary["channels"] == em_report.summary["channels"]
    assert [s.key for s in r.sections] == [s.key for s in em_report.sections]
    with pytest.raises(ConfigError, match="two classes have the noise analysis only"):
        audit(simulate_toy(100, random_state=0), channels="score-bin-em", view="both")
    with pytest.raises(ConfigError, match="unknown audit option"):
        audit_multiclass(mc_data, channel="bayes")


def test_refusals(mc_data):
    with pytest.raises(ConfigError, match="for multiclass data"):
        audit_multiclass(mc_data, channels="gmm")
    with pytest.raises(ConfigError, match="view must be one of"):
        audit_multiclass(mc_data, view="truth")
    with pytest.raises(ConfigError, match="MulticlassAnnotations"):
        audit_multiclass(simulate_toy(100, random_state=0).dataset)


# ----------------------------------------------------------------------------- CLI
def _write_csv(path, data):
    cols = [f"p{k}" for k in range(data.n_classes)]
    with open(path, "w") as fh:
        fh.write(",".join(["item", *cols, "r1", "r2", "r3", "y"]) + "\n")
        for i in range(data.n_items):
            lab = ["" if np.isnan(v) else str(int(v)) for v in data.labels[i]]
            probs = [repr(float(v)) for v in data.probs[i]]
            fh.write(",".join([f"i{i}", *probs, *lab, str(int(data.truth[i]))]) + "\n")
    return ",".join(cols)


def test_cli_runs_the_multiclass_audit_when_probs_are_given(mc_data, tmp_path, capsys):
    path = tmp_path / "mc.csv"
    probs = _write_csv(path, mc_data)
    out = tmp_path / "report"
    code = main(
        [
            "audit",
            str(path),
            "--probs",
            probs,
            "--annotators",
            "r1,r2,r3",
            "--truth",
            "y",
            "--item",
            "item",
            "--channels",
            "dawid-skene-em",
            "--bins",
            "8",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["n_classes"] == 3 and len(s["ece"]["bins"]) == 9 and "oracle" in s["ece"]
    assert s["reproducibility"]["settings"]["bins"] == 8


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--channels", "gmm"], "binary estimator"),
        (["--score", "s"], "give either score='s' (binary data) or probs="),
    ],
)
def test_cli_refusals(mc_data, tmp_path, capsys, extra, message):
    path = tmp_path / "mc.csv"
    probs = _write_csv(path, mc_data)
    code = main(["audit", str(path), "--probs", probs, "--out", str(tmp_path / "o"), *extra])
    assert code == 2 and message in capsys.readouterr().err


def test_cli_refuses_multiclass_options_without_probs(tmp_path, capsys):
    code = main(
        ["audit", "--example", "snli-entailment", "--classes", "a,b", "--out", str(tmp_path / "o")]
    )
    assert code == 2 and "add --probs" in capsys.readouterr().err


def test_embedded_multiclass_example_runs(tmp_path):
    code = main(
        [
            "audit",
            "--example",
            "snli-3class",
            "--channels",
            "dawid-skene-em",
            "--out",
            str(tmp_path / "snli"),
            "--quiet",
        ]
    )
    assert code == 0
    s = json.loads((tmp_path / "snli" / "summary.json").read_text())
    assert s["classes"] == ["entailment", "neutral", "contradiction"] and "oracle" not in s["ece"]


# ----------------------------------------------------------------------------- C = 2
def test_two_classes_reproduce_the_binary_audit():
    """C = 2 through the multiclass audit: the confusions are the binary (a, b), and the
    class-wise error of class 1 (bins on p_1 = the score) is the binary NC-ECE and votes.

    Both EMs stop when the mean log-likelihood moves by less than 1e-9 (1 + |l|), on a
    flat top: measured here, the two maxima differ by 5e-5 in a (6e-7 when both run to
    tol = 1e-13; the library test holds that exact agreement). NC-ECE is a smooth function
    of (a, b) with derivatives of order one, so 2e-4 bounds both; the vote and reference
    errors do not depend on the channels and agree to rounding (no missing answers, so the
    binary and multiclass majority-vote tie rules never meet a tie)."""
    binary = simulate_toy(3000, "shifted", random_state=4)  # K = 3, no missing: no vote ties
    score = binary.score
    multi = MulticlassAnnotations.from_arrays(
        np.column_stack([1 - score, score]), binary.labels, truth=binary.truth
    )
    b = audit(
        Annotations.from_arrays(score, binary.labels, truth=binary.truth),
        channels="dawid-skene-em",
        random_state=0,
    )
    m = audit_multiclass(multi, channels="dawid-skene-em", groups="all", random_state=0)
    for j, name in enumerate(binary.annotators):
        conf = np.array(m.summary["channels"]["annotators"][f"a{j + 1}"]["point"])
        assert conf[0, 1] == pytest.approx(
            b.summary["channels"]["annotators"][name]["a"]["point"], abs=2e-4
        )
        assert conf[1, 1] == pytest.approx(
            b.summary["channels"]["annotators"][name]["b"]["point"], abs=2e-4
        )
    per_class = m.summary["ece"]["classwise"]["per_class"]["1"]
    assert per_class["nc_plugin"] == pytest.approx(b.errors["nc_point"].value, abs=2e-4)
    assert per_class["soft_vote"] == pytest.approx(b.summary["ece"]["soft_vote"], abs=1e-12)
    assert per_class["majority_vote"] == pytest.approx(b.summary["ece"]["majority_vote"], abs=1e-12)
    assert per_class["oracle"] == pytest.approx(b.summary["ece"]["oracle"], abs=1e-12)


def test_point_channels_get_point_wording(both_report):
    """Issue 12 item 4 in the multiclass audit: EM point channels have no channel source, so
    no zero-width 'channel uncertainty' row and the interval is called evaluation-only."""
    noise = {s.key: s for s in both_report.sections}["noise"]
    labels = [row[0] for table in noise.tables for row in table.rows]
    assert not any("channel uncertainty" in str(x) for x in labels)
    assert any("evaluation-sample uncertainty" in str(x) for x in labels)
    assert any("evaluation-only" in n for n in noise.notes)
    assert not any("posterior" in n for n in noise.notes)


def test_the_em_reports_its_iterations(em_audit):
    """Issue 23 item 3: the multiclass EM shows progress (a step record per iteration)."""
    steps = em_audit[1]
    assert steps, "no EM progress records"
    assert all(n == 1000 and 0 < i <= n for i, n in steps)
