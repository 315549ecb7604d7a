"""The audits' "Where to annotate next" (issue 25 item 4): summary.json, next.csv, --skip next."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayescal.report.audit import audit, audit_multiclass
from bayescal.simulate import simulate_multiclass, simulate_toy


def test_binary_audit_ranks_the_items(tmp_path):
    data = simulate_toy(800, random_state=4)
    report = audit(data, channels="score-bin-em", random_state=0)
    rec = report.summary["next_annotations"]
    assert set(rec) == {"gold", "reread"}
    gold = rec["gold"]
    assert gold["width_after"]["50"] <= gold["width_after"]["10"] <= gold["width"]
    report.save(tmp_path / "out")
    frame = pd.read_csv(tmp_path / "out" / "next.csv")
    assert len(frame) == gold["n_candidates"] == 800
    assert np.all(np.diff(frame["variance_reduction"]) <= 0)
    assert "next" in {s.key for s in report.sections}


def test_skip_next_leaves_it_out_with_the_reason():
    report = audit(simulate_toy(500, random_state=1), channels="score-bin-em", skip=["next"])
    assert "next_annotations" not in report.summary
    assert "next" in report.summary["skipped"]
    assert "next.csv" not in report.artifacts


def test_multiclass_audit_ranks_the_items():
    data = simulate_multiclass(900, 3, random_state=2)
    report = audit_multiclass(data, channels="dawid-skene-em", random_state=0)
    rec = report.summary["next_annotations"]["gold"]
    assert rec["n_candidates"] == int((~np.isnan(data.labels)).any(axis=1).sum())
    assert rec["width_after"]["10"] < rec["width"]
    assert "next.csv" in report.artifacts
    skipped = audit_multiclass(data, channels="dawid-skene-em", skip=["next"])
    assert "next" in skipped.summary["skipped"]
