"""``--skip SECTION`` / ``--no-crowdkit`` (issue 23 item 3) and skipped sections recorded in
``summary.json["skipped"]`` with their reason (issue 24 item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_helpers import one_line, run

from bayescal.errors import ConfigError
from bayescal.options import SKIP_SECTIONS
from bayescal.report.audit import audit, audit_multiclass
from bayescal.simulate import simulate_multiclass, simulate_toy


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    """400 items, three annotators (enough for the recalibration step to run)."""
    rng = np.random.default_rng(3)
    z = rng.random(400)
    rows = [f"{s:.4f}," + ",".join(str(int(rng.random() < s)) for _ in range(3)) for s in z]
    path = tmp_path_factory.mktemp("data") / "wide.csv"
    path.write_text("score,r1,r2,r3\n" + "\n".join(rows) + "\n")
    return path


def test_an_unknown_section_is_one_line_naming_the_valid_ones(tmp_path):
    line = one_line(["audit", "missing.csv", "--skip", "figures", "--out", tmp_path / "o"])
    assert "argument --skip: invalid choice: 'figures'" in line
    assert all(repr(name) in line for name in SKIP_SECTIONS), line
    assert not (tmp_path / "o").exists()


def test_multiclass_data_take_no_crowdkit_as_a_no_op_with_a_note(tmp_path):
    """The same command line for both tracks: --no-crowdkit on multiclass data runs the audit
    and says in one line that there is no such comparison; a section that does not exist
    otherwise is still refused, naming the ones that do."""
    out = tmp_path / "o"
    argv = ["audit", "--example", "snli-3class", "--channels", "dawid-skene-em", "--skip"]
    argv += ["items", "--skip", "recalibration", "--skip", "next"]  # (quick)
    code, err = run([*argv, "--no-crowdkit", "--skip", "crowdkit", "--out", out])
    assert code == 0, err
    notes = [line for line in err.splitlines() if "crowdkit" in line]
    assert notes == [
        "bayescal: note: --no-crowdkit / --skip crowdkit changes nothing here: the crowd-kit "
        "comparison is a section of the binary audit only."
    ], err
    summary = json.loads((out / "summary.json").read_text())
    requested = [key for key, why in summary["skipped"].items() if "--skip" in why]
    assert sorted(requested) == ["items", "next", "recalibration"]
    line = one_line([*argv, "--skip", "figures", "--out", tmp_path / "o2"])
    assert "invalid choice: 'figures'" in line
    assert not (tmp_path / "o2").exists()


def test_the_library_refuses_an_unknown_section():
    data = simulate_toy(200, random_state=0)
    with pytest.raises(ConfigError, match="'figures' is not an optional section"):
        audit(data, channels="score-bin-em", skip=("figures",))
    with pytest.raises(ConfigError, match="'crowdkit' is not an optional section"):
        audit_multiclass(simulate_multiclass(200, 3, random_state=0), skip=("crowdkit",))


def test_skipped_sections_are_recorded_with_their_reason(wide_csv, tmp_path):
    out = tmp_path / "o"
    argv = ["audit", wide_csv, "--channels", "score-bin-em", "--no-crowdkit", "--skip"]
    code, err = run([*argv, "recalibration", "--skip", "crowdkit", "--out", out])
    assert code == 0, err
    assert "naive errors against crowd-kit labels: skipped (--skip crowdkit)" in err
    assert "recalibration maps: skipped (--skip recalibration)" in err
    summary = json.loads((out / "summary.json").read_text())
    skipped = summary["skipped"]
    for key in ("crowdkit", "recalibration"):
        assert skipped[key] == f"left out on request (--skip {key}; skip=({key!r},) in Python)."
    assert summary["naive_crowdkit"] == {"status": "skipped", "reason": skipped["crowdkit"]}
    # nothing was fitted: the recalibration block says so, with the same reason
    assert summary["recalibration"] == {"status": "skipped", "reason": skipped["recalibration"]}
    assert summary["reproducibility"]["settings"]["skip"] == ["crowdkit", "recalibration"]
    html = (out / "report.html").read_text()
    # each skipped section states it (the verdict's list of stages that did not run repeats it)
    for key in ("crowdkit", "recalibration"):
        assert f"left out on request (--skip {key}" in html


def test_a_section_skipped_for_its_own_reason_is_recorded_too():
    """Under 300 annotated items the recalibration cannot be chosen on held-out data: that
    used to be absent from summary.json (issue 24 item 3)."""
    r = audit(simulate_toy(200, random_state=0), channels="score-bin-em")
    assert r.summary["skipped"]["recalibration"].startswith("only 200 annotated items")
    assert r.summary["recalibration"] == {
        "status": "skipped",
        "reason": r.summary["skipped"]["recalibration"],
    }
    m = audit_multiclass(
        simulate_multiclass(300, 3, random_state=0),
        channels="dawid-skene-em",
        skip=("recalibration",),
    )
    assert m.summary["skipped"]["recalibration"].startswith("left out on request")
    assert m.summary["reproducibility"]["settings"]["skip"] == ["recalibration"]


def test_skipping_the_subgroups_without_a_subgroup_column_says_it_changes_nothing(
    wide_csv, tmp_path
):
    """--skip subgroups without --subgroup was accepted and recorded with no word (a hostile
    re-check, issue 23): it now gets the same one-line note as --no-crowdkit on multiclass
    data, once, beside that one when both apply."""
    argv = ["audit", wide_csv, "--channels", "dawid-skene-em", "--skip", "crowdkit"]
    argv += ["--skip", "recalibration", "--skip", "items", "--skip", "next"]
    code, err = run([*argv, "--skip", "subgroups", "--out", tmp_path / "o"])
    assert code == 0, err
    notes = [line for line in err.splitlines() if "--skip subgroups" in line]
    assert notes == [
        "bayescal: note: --skip subgroups changes nothing here: there is a subgroup section "
        "only with --subgroup COL."
    ], err
    code, err = run(
        ["audit", "--example", "snli-3class", "--channels", "dawid-skene-em", "--skip", "items"]
        + ["--skip", "recalibration", "--skip", "next", "--no-crowdkit", "--skip", "subgroups"]
        + ["--out", tmp_path / "o2"]
    )
    assert code == 0, err
    assert sum("changes nothing here" in line for line in err.splitlines()) == 2, err
