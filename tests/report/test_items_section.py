"""The audits' item posteriors (issue 25 item 3): summary.json['items'], items.csv, --skip items."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayescal.report.audit import audit, audit_multiclass
from bayescal.simulate import simulate_multiclass, simulate_toy


def test_binary_audit_exports_the_item_posteriors(tmp_path):
    data = simulate_toy(800, random_state=4)
    report = audit(data, channels="score-bin-em", random_state=0)
    rec = report.summary["items"]
    assert rec["n_items"] == 800 and rec["method"] == report.point_channels.method
    report.save(tmp_path / "out")
    frame = pd.read_csv(tmp_path / "out" / "items.csv", index_col="item")
    assert len(frame) == 800
    np.testing.assert_allclose(frame[["p_0", "p_1"]].sum(axis=1), 1.0, atol=1e-12)
    assert rec["n_surprising"] == int(frame["surprising"].sum())
    assert "items" in {s.key for s in report.sections}


def test_skip_items_leaves_them_out_with_the_reason():
    report = audit(simulate_toy(500, random_state=1), channels="score-bin-em", skip=["items"])
    assert "items" not in report.summary
    assert "items" in report.summary["skipped"]
    assert "items.csv" not in report.artifacts


def test_multiclass_audit_exports_the_item_posteriors():
    data = simulate_multiclass(900, 3, random_state=2)
    report = audit_multiclass(data, channels="dawid-skene-em", random_state=0)
    rec = report.summary["items"]
    assert rec["n_items"] == 900 and rec["n_checked"] == int(
        (~np.isnan(data.labels)).any(axis=1).sum()
    )
    assert "items.csv" in report.artifacts
    # surprising items are listed in order of their tail probability
    ps = [m["surprise_p"] for m in rec["most_surprising"]]
    assert ps == sorted(ps)
