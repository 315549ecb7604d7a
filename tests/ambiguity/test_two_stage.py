"""The two-stage recipe (Tao et al., Sec. 8): known cases and an explicit two-step reference."""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.ambiguity import (
    METHODS,
    LabelSmoothingTemperatureScaling,
    MonteCarloTemperatureScaling,
    OracleTemperatureScaling,
    SoftDirichletCalibration,
    SoftIsotonicRegression,
    SoftTemperatureScaling,
    TemperatureScaling,
    TwoStageCalibration,
)
from bayescal.errors import ConfigError, NotFittedError


@pytest.mark.parametrize(
    "first",
    [
        SoftTemperatureScaling(),
        MonteCarloTemperatureScaling(n_samples=1, random_state=0),
        LabelSmoothingTemperatureScaling(smoothing="global"),
    ],
    ids=["SLTS", "MCTS", "LS-TS"],
)
def test_temperature_first_stage_collapses_to_ts(first, chaos_small):
    # softmax(log softmax(z / T1) / T2) = softmax(z / (T1 T2)): the second stage re-optimises
    # the voted NLL over the same one-parameter family, so the product is TS's temperature.
    d = chaos_small
    two = TwoStageCalibration(first=first).fit(d.logits, d.counts)
    ts = TemperatureScaling().fit(d.logits, d.counts)
    product = two.first_.temperature_ * two.second_.temperature_
    # Both optimisers stop at a max-abs gradient (in log T) of 1e-10; the voted NLL's
    # curvature in log T is O(0.1) here, so the temperatures agree to about 1e-9 relative.
    assert product == pytest.approx(ts.temperature_, rel=1e-7)
    np.testing.assert_allclose(two.predict_proba(d.logits), ts.predict_proba(d.logits), atol=1e-7)


def test_dirichlet_then_ts_equals_the_two_steps_by_hand(chaos_small):
    d = chaos_small
    two = TwoStageCalibration().fit(d.logits, d.counts)
    first = SoftDirichletCalibration().fit(d.logits, d.counts)
    q = first.predict_proba(d.logits)
    second = TemperatureScaling().fit(np.log(q), d.voted)
    np.testing.assert_array_equal(two.first_.coef_, first.coef_)
    assert two.temperature_ == second.temperature_
    np.testing.assert_allclose(
        two.predict_proba(d.logits[:50]),
        second.predict_proba(np.log(first.predict_proba(d.logits[:50]))),
        rtol=0,
        atol=1e-15,
    )
    # TS on voted labels sharpens the ambiguity-aware output back towards the votes.
    assert two.temperature_ < 1.0


def test_stages_are_cloned_and_parameters_nest(chaos_small):
    d = chaos_small
    first = SoftIsotonicRegression()
    two = TwoStageCalibration(first=first)
    assert two.get_params()["first__eps"] == 1e-6
    two.set_params(first__eps=1e-4)
    assert first.eps == 1e-4  # set_params reaches the stage object itself
    two.fit(d.logits, d.counts)
    with pytest.raises(NotFittedError):
        first.predict_proba(d.logits)  # fit() fitted a copy, not the estimator passed in
    assert two.first_ is not first and two.first_.eps == 1e-4
    assert two.target == "soft" and TwoStageCalibration(first=TemperatureScaling()).target == "hard"


def test_method_row_and_refusals(chaos_small):
    spec = METHODS["Dirichlet-Soft + TS"]
    assert spec.group == "soft"
    m = spec.factory(3)
    assert m.first.random_state == 3
    with pytest.raises(NotFittedError):
        m.predict_proba(chaos_small.logits)
    for bad in (OracleTemperatureScaling(), "TS", None.__class__):
        with pytest.raises(ConfigError, match="calibrator"):
            TwoStageCalibration(first=bad).fit(chaos_small.logits, chaos_small.counts)


def test_recommendation_for_both_targets(chaos_small):
    from bayescal.ambiguity import stratified_split
    from bayescal.ambiguity.recommend import (
        TWO_STAGE_GUIDELINE,
        annotation_profile,
        check_guideline,
        explain_recommendation,
    )

    d = chaos_small
    cal, _ = stratified_split(d.voted, fraction=0.5, random_state=42)
    method, check, fallbacks = check_guideline(
        d, cal, "distribution", "both", folds=3, n_draws=10, random_state=0
    )
    s = check["scores"]
    assert set(s) == {"TS", "Dirichlet-Soft + TS"}
    keep = s["Dirichlet-Soft + TS"]["ece_true"] <= s["TS"]["ece_true"]
    assert (method, fallbacks) == (
        ("Dirichlet-Soft + TS", []) if keep else ("TS", ["Dirichlet-Soft + TS"])
    )
    profile, _ = annotation_profile(d.counts)
    rec = explain_recommendation(method, "distribution", "both", profile, check, fallbacks, {})
    assert rec.guideline == TWO_STAGE_GUIDELINE and rec.guideline_default == "Dirichlet-Soft + TS"
    assert "two-stage recipe" in rec.reasons[0] and "ECE_voted" in rec.reason
    # Voted labels only: every annotation-free first stage is a temperature, so the recipe is
    # TS and nothing is cross-validated.
    m2, check2, _ = check_guideline(d, cal, "voted", "both", folds=3, n_draws=10)
    assert m2 == "TS" and "TS itself" in check2["skipped"] and not check2["scores"]


def test_audit_cli_takes_objective_both(chaosnli_paths, tmp_path, capsys):
    import json

    from bayescal.ambiguity.recommend import TWO_STAGE_GUIDELINE
    from bayescal.cli import main

    jsonl, preds = chaosnli_paths
    out = tmp_path / "both"
    argv = ["audit-ambiguity", "--chaosnli", str(jsonl), *map(str, preds), "--methods", "TS"]
    argv += ["--objective", "both", "--n-draws", "10", "--n-boot", "0", "--cv-folds", "3"]
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    rec = json.loads((out / "summary.json").read_text())["recommendation"]
    assert rec["objective"] == "both" and rec["guideline"] == TWO_STAGE_GUIDELINE
    assert rec["method"] in ("Dirichlet-Soft + TS", "TS")
    assert set(rec["check"]["scores"]) == {"TS", "Dirichlet-Soft + TS"}
    assert "ece_voted" in rec["check"]["scores"]["TS"]
