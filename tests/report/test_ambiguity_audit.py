"""``bayescal audit-ambiguity``: real-data subsets, simulated npz, JSON layout, escaping,
bad inputs."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from bayescal.ambiguity import METHODS, AmbiguityData, detect_annotation_level
from bayescal.ambiguity.loaders import load_npz
from bayescal.ambiguity.simulate import dawid_skene_annotations, isic2019_confusion
from bayescal.cli import main
from bayescal.errors import DataError
from bayescal.report.ambiguity_audit import audit_ambiguity

DATA = Path(__file__).parents[1] / "data"  # real-data subsets, see tests/data/README.md
FAST_METHODS = ["Uncalibrated", "TS", "SLTS", "MCTS S=1", "LS-TS", "Oracle TS (oracle)"]
QUICK = ["--n-draws", "20", "--quiet"]
METRIC_KEYS = {
    "ece_true",
    "aece",
    "cwece",
    "brier",
    "nll",
    "ece_voted",
    "accuracy",
    "temperature",
    "seconds",
    "oracle",
    "group",
    "usable",
    "status",
}


def _simulated(n=600, m=20, seed=0, classes=None):
    """Overconfident model on ISIC-like synthetic annotators (8 classes)."""
    rng = np.random.default_rng(seed)
    C = isic2019_confusion().values
    y = rng.integers(0, C.shape[0], n)
    counts = dawid_skene_annotations(y, C, m, random_state=rng)
    p_model = np.array([rng.dirichlet(60 * C[k] + 0.05) for k in y])
    logits = 3.0 * np.log(p_model)  # sharpened: a temperature near 3 undoes it
    return (
        logits,
        counts,
        (tuple(classes) if classes else tuple(isic2019_confusion()["class"].values)),
    )


def _write_npz(path, **arrays):
    np.savez(path, **arrays)
    return path


def _check_layout(s):
    assert {
        "dataset",
        "n_items",
        "n_cal",
        "n_test",
        "n_classes",
        "classes",
        "annotations",
        "protocol",
        "methods",
        "recommendation",
        "warnings",
        "reproducibility",
    } <= set(s)
    assert s["n_cal"] + s["n_test"] == s["n_items"] and len(s["classes"]) == s["n_classes"]
    assert {"level", "detected", "declared", "per_item", "entropy", "unanimous_fraction"} <= set(
        s["annotations"]
    )
    for name, row in s["methods"].items():
        assert name in METHODS
        assert METRIC_KEYS <= set(row), (name, set(row))
        assert row["oracle"] == (METHODS[name].group == "oracle")
        if row["oracle"]:
            assert "(oracle)" in name and row["usable"] is False
    rec = s["recommendation"]
    assert {
        "method",
        "reason",
        "guideline",
        "guideline_default",
        "annotations",
        "check",
        "test",
    } <= set(rec)
    assert rec["method"] in s["methods"] and not s["methods"][rec["method"]]["oracle"]
    assert {"level", "available"} <= set(rec["annotations"])
    assert {"command", "seed", "versions", "data_hash", "settings"} <= set(s["reproducibility"])
    assert re.fullmatch(r"[0-9a-f]{64}", s["reproducibility"]["data_hash"])
    assert isinstance(s["warnings"], list)


def _check_html(html):
    for title in (
        "Data",
        "Recommendation",
        "Method comparison",
        "Reliability diagrams",
        "Warnings",
        "Reproducibility",
    ):
        assert f"<h2>{title}</h2>" in html
    assert "data:image/png;base64," in html
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", html)
    assert not re.search(r"(https?:)?//[a-zA-Z0-9]", text)
    assert not re.search(r"\b(src|href)=\"(?!data:|#)", html)
    assert "<script" not in html.lower() and "<link" not in html.lower()


def test_cli_cifar10h_subset(tmp_path):
    path = DATA / "cifar10h" / "resnet-110.csv"
    out = tmp_path / "c10h"
    code = main(
        [
            "audit-ambiguity",
            "--cifar10h",
            str(path),
            "--max-items",
            "400",
            "--methods",
            *FAST_METHODS,
            "Dirichlet-Soft",
            "--out",
            str(out),
            *QUICK,
        ]
    )
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    _check_layout(s)
    assert s["dataset"] == "CIFAR-10H" and s["n_items"] == 400 and s["n_classes"] == 10
    assert s["annotations"]["level"] == "distribution"
    assert s["recommendation"]["guideline_default"] == "Dirichlet-Soft"
    assert (
        s["methods"]["TS"]["temperature"] > 1
        and s["methods"]["Dirichlet-Soft"]["temperature"] is None
    )
    assert s["reproducibility"]["command"].startswith("bayescal audit-ambiguity")
    html = (out / "report.html").read_text()
    _check_html(html)
    assert "Oracle TS (oracle)" in html and "not a method" in html


def test_cli_chaosnli_subset(tmp_path):
    root = DATA / "chaosnli"
    jsonl = root / "chaosNLI_snli.jsonl"
    preds = [root / "predictions" / f"SNLI_{s}_roberta-base_0.json" for s in ("dev", "test")]
    out = tmp_path / "chaos"
    code = main(
        [
            "audit-ambiguity",
            "--chaosnli",
            str(jsonl),
            *map(str, preds),
            "--max-items",
            "500",
            "--methods",
            *FAST_METHODS,
            "--out",
            str(out),
            *QUICK,
        ]
    )
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    _check_layout(s)
    assert s["classes"] == ["entailment", "neutral", "contradiction"]
    # ChaosNLI RoBERTa is badly overconfident: TS helps, and the soft choice helps more
    # (paper; docs/ambiguity.md).
    m = s["methods"]
    assert m["TS"]["ece_true"] < m["Uncalibrated"]["ece_true"]
    assert m[s["recommendation"]["method"]]["ece_true"] < m["TS"]["ece_true"]
    _check_html((out / "report.html").read_text())


def test_cli_npz_simulated_samples_level(tmp_path):
    logits, counts, classes = _simulated(m=5, seed=1)
    f = _write_npz(tmp_path / "sim.npz", logits=logits, counts=counts, classes=np.array(classes))
    out = tmp_path / "out"
    code = main(
        ["audit-ambiguity", "--npz", str(f), "--methods", *FAST_METHODS, "--out", str(out), *QUICK]
    )
    assert code == 0
    s = json.loads((out / "summary.json").read_text())
    _check_layout(s)
    assert s["dataset"] == "sim" and s["classes"] == list(classes)
    assert s["annotations"]["level"] == "samples" and s["annotations"]["per_item"]["median"] == 5
    rec = s["recommendation"]
    assert rec["guideline_default"] == "MCTS S=1" and rec["method"] in ("MCTS S=1", "SLTS", "TS")
    # The simulated model is sharpened by 3: the soft temperatures undo most of it.
    assert 2.0 < s["methods"]["SLTS"]["temperature"] < 4.5
    assert s["methods"]["SLTS"]["ece_true"] < s["methods"]["Uncalibrated"]["ece_true"]
    _check_html((out / "report.html").read_text())


def test_voted_labels_only_gives_ls_ts_with_caveat_and_no_check():
    logits, counts, classes = _simulated(m=1, seed=2)
    d = AmbiguityData(
        logits=logits, counts=counts, classes=classes, item_ids=np.arange(len(counts)), name="v"
    )
    r = audit_ambiguity(d, methods=FAST_METHODS, n_draws=10)
    rec = r.recommendation
    assert rec.annotations["level"] == "voted" and rec.method == "LS-TS"
    assert "skipped" in rec.check and "Caveat" in rec.reason
    assert any("single annotation" in w["message"] for w in r.summary["warnings"])
    assert "annotations.single" in {w["code"] for w in r.summary["warnings"]}
    assert not r.summary["methods"]["SLTS"]["usable"] and r.summary["methods"]["LS-TS"]["usable"]
    # Declaring the single labels as random annotators' answers switches to MCTS and makes the
    # check possible.
    r2 = audit_ambiguity(d, methods=FAST_METHODS, n_draws=10, annotations="samples")
    assert (
        r2.recommendation.guideline_default == "MCTS S=1"
        and "skipped" not in r2.recommendation.check
    )


def test_recommendation_never_looks_at_the_test_half():
    logits, counts, classes = _simulated(m=20, seed=3)
    d = AmbiguityData(
        logits=logits, counts=counts, classes=classes, item_ids=np.arange(len(counts))
    )
    kw = dict(methods=["Uncalibrated", "TS", "SLTS"], n_draws=10, cv_folds=3, objective="ece")
    r1 = audit_ambiguity(d, **kw)
    cal, test = r1.split
    z = logits.copy()
    z[test] = (
        np.random.default_rng(0).normal(size=z[test].shape) * 5
    )  # garbage on the test half only
    r2 = audit_ambiguity(
        AmbiguityData(logits=z, counts=counts, classes=classes, item_ids=np.arange(len(counts))),
        **kw,
    )
    assert r1.recommendation.method == r2.recommendation.method
    assert r1.recommendation.check == r2.recommendation.check
    assert r1.summary["methods"]["TS"]["temperature"] == r2.summary["methods"]["TS"]["temperature"]
    assert r1.summary["methods"]["SLTS"]["ece_true"] != r2.summary["methods"]["SLTS"]["ece_true"]
    assert r1.recommendation.guideline_default == "IR-Soft"
    assert "IR-Soft" in r1.summary["methods"]  # the recommended candidate always runs


#: Annotators per item of the rendering and escaping tests: five answers are the ``samples``
#: level, whose guideline candidate (MCTS S=1, always run) fits in a second; at 20 answers
#: (``distribution``) the candidate is Dirichlet-Soft, whose cross-validated regularisation
#: took 6 of such a test's 7 CPU s. What these tests check does not depend on the level.
RENDER_ANSWERS = 5


def test_python_api_renders_and_saves(tmp_path):
    logits, counts, classes = _simulated(n=300, m=RENDER_ANSWERS, seed=4)
    d = AmbiguityData(
        logits=logits, counts=counts, classes=classes, item_ids=np.arange(300), name="api"
    )
    r = audit_ambiguity(d, methods=["Uncalibrated", "TS"], n_draws=10, cv_folds=3)
    assert "Method comparison" in r._repr_html_() and "AmbiguityReport" in repr(r)
    written = r.save(tmp_path / "o")
    assert sorted(written) == ["report.html", "summary.json"]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["report.html", "summary.json"]
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["dataset"] == "api"


def test_hostile_names_are_escaped(tmp_path):
    logits, counts, _ = _simulated(n=300, m=RENDER_ANSWERS, seed=5)
    classes = ["<script>alert(1)</script>", "b&b", *[f"c{j}" for j in range(6)]]
    f = _write_npz(tmp_path / "h.npz", logits=logits, counts=counts, classes=np.array(classes))
    out = tmp_path / "out"
    code = main(
        [
            "audit-ambiguity",
            "--npz",
            str(f),
            "--name",
            "<img src=x onerror=alert(2)>",
            "--methods",
            "Uncalibrated",
            "TS",
            "--cv-folds",
            "3",
            "--out",
            str(out),
            *QUICK,
        ]
    )
    assert code == 0
    html = (out / "report.html").read_text()
    assert (
        "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    )
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "b&amp;b" in html
    s = json.loads((out / "summary.json").read_text())
    assert s["classes"][0] == "<script>alert(1)</script>"


def _bad(tmp_path, capsys, argv):
    out = tmp_path / "never"
    code = main(["audit-ambiguity", *argv, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("bayescal: error:") and "\n" not in err and "Traceback" not in err, err
    assert not out.exists()
    return err


def test_bad_inputs_exit_2_without_report(tmp_path, capsys):
    logits, counts, _ = _simulated(n=100, m=5, seed=6)
    assert "not found" in _bad(tmp_path, capsys, ["--npz", str(tmp_path / "missing.npz")])
    assert "not found" in _bad(tmp_path, capsys, ["--cifar10h", str(tmp_path / "missing.csv")])
    f = _write_npz(tmp_path / "nocounts.npz", logits=logits)
    assert "counts" in _bad(tmp_path, capsys, ["--npz", str(f)])
    f = _write_npz(tmp_path / "nologits.npz", counts=counts)
    assert "logits" in _bad(tmp_path, capsys, ["--npz", str(f)])
    f = _write_npz(tmp_path / "k.npz", logits=logits[:, :7], counts=counts)
    assert "shape" in _bad(tmp_path, capsys, ["--npz", str(f)])
    z = logits.copy()
    z[3, 2] = np.nan
    f = _write_npz(tmp_path / "nan.npz", logits=z, counts=counts)
    assert "NaN" in _bad(tmp_path, capsys, ["--npz", str(f)])
    c = counts.copy()
    c[5, 0] = -1
    f = _write_npz(tmp_path / "neg.npz", logits=logits, counts=c)
    assert "negative" in _bad(tmp_path, capsys, ["--npz", str(f)])
    c = counts.copy()
    c[7] = 0
    f = _write_npz(tmp_path / "zero.npz", logits=logits, counts=c)
    assert "all-zero" in _bad(tmp_path, capsys, ["--npz", str(f)])
    f = _write_npz(tmp_path / "frac.npz", logits=logits, counts=counts / 2)
    assert "whole" in _bad(tmp_path, capsys, ["--npz", str(f)])
    f = tmp_path / "text.npz"
    f.write_text("not a zip")
    assert "npz" in _bad(tmp_path, capsys, ["--npz", str(f)])
    f = tmp_path / "pickled.npz"
    np.savez(f, logits=np.array([{"a": 1}], dtype=object), counts=counts)
    assert "npz" in _bad(tmp_path, capsys, ["--npz", str(f)])
    f = _write_npz(tmp_path / "tiny.npz", logits=logits[:10], counts=counts[:10])
    assert "at least 20" in _bad(tmp_path, capsys, ["--npz", str(f)])
    assert "prediction file" in _bad(tmp_path, capsys, ["--chaosnli", str(tmp_path / "x.jsonl")])


def test_cli_npz_with_an_unknown_array_exits_2(tmp_path, capsys):
    # M13: a misspelt optional array (item_id) was ignored and the audit ran without ids
    logits, counts, _ = _simulated(n=100, m=5, seed=7)
    f = _write_npz(tmp_path / "typo.npz", logits=logits, counts=counts, item_id=np.arange(100))
    err = _bad(tmp_path, capsys, ["--npz", str(f)])
    assert "'item_id' (did you mean 'item_ids'?)" in err and "classes, item_ids, reference" in err


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    logits, counts, _ = _simulated(n=100, m=5, seed=7)
    f = _write_npz(tmp_path / "ok.npz", logits=logits, counts=counts)
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["audit-ambiguity", "--npz", str(f), "--out", str(target), "--quiet"]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_load_npz_optional_arrays(tmp_path):
    logits, counts, _ = _simulated(n=50, m=3, seed=8)
    f = _write_npz(
        tmp_path / "o.npz",
        logits=logits,
        counts=counts,
        item_ids=np.arange(50) + 100,
        reference=counts.argmax(1),
    )
    d = load_npz(f)
    assert d.classes == tuple(str(j) for j in range(8)) and d.item_ids[0] == 100
    assert np.array_equal(d.reference, counts.argmax(1)) and d.counts.dtype == np.int64
    f = _write_npz(tmp_path / "badref.npz", logits=logits, counts=counts, reference=np.full(50, 9))
    with pytest.raises(DataError, match="out of range"):
        load_npz(f)
    f = _write_npz(
        tmp_path / "badnames.npz", logits=logits, counts=counts, classes=np.array(["a", "b"])
    )
    with pytest.raises(DataError, match="class names"):
        load_npz(f)


def test_detect_annotation_level_thresholds():
    assert detect_annotation_level(np.eye(3, dtype=int)) == "voted"
    assert detect_annotation_level(np.array([[1, 1, 0], [3, 0, 0]])) == "samples"
    assert detect_annotation_level(np.array([[6, 4, 0], [10, 0, 0]])) == "distribution"
    assert (
        detect_annotation_level(np.array([[6, 4, 0], [10, 0, 0]]), distribution_threshold=20)
        == "samples"
    )
