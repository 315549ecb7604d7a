"""The LS-TS guideline check on voted-only data (issue 12, item 5; Tao et al., Sec. 6.1)."""

import numpy as np
import pytest

from bayescal.ambiguity import AmbiguityData
from bayescal.ambiguity.recommend import (
    LS_TS_ERROR_SHARE,
    annotation_profile,
    check_guideline,
    explain_recommendation,
    ls_ts_smoothing_check,
    outcome_flags,
)


def _voted_data(n, accuracy, p_correct, p_wrong_top, seed):
    """Three classes, one (voted) label per item. The model puts ``p_correct`` on the
    voted class when it is right; when wrong (share 1 - accuracy) it puts ``p_wrong_top``
    on another class and the rest is shared."""
    rng = np.random.default_rng(seed)
    voted = rng.integers(0, 3, n)
    right = rng.random(n) < accuracy
    p = np.empty((n, 3))
    for i in range(n):
        if right[i]:
            p[i] = (1 - p_correct) / 2
            p[i, voted[i]] = p_correct
        else:
            other = (voted[i] + 1 + rng.integers(0, 2)) % 3
            p[i] = (1 - p_wrong_top) / 2
            p[i, other] = p_wrong_top
    counts = np.zeros((n, 3), dtype=np.int64)
    counts[np.arange(n), voted] = 1
    data = AmbiguityData(
        logits=np.log(p), counts=counts, classes=("a", "b", "c"), item_ids=np.arange(n)
    )
    return data, voted, p


def _recommend(data):
    cal = np.arange(data.logits.shape[0])
    profile = annotation_profile(data.counts)[0]
    method, check, fallbacks = check_guideline(data, cal, "voted")
    rec = explain_recommendation(method, "voted", "overall", profile, check, fallbacks, {})
    return rec, outcome_flags(rec, {}, "voted")


def test_model_errors_inflating_the_smoothing_are_flagged():
    # An over-confident model wrong on 15% of the items: its errors are most of e
    # (expected share 0.15 / (0.85 * 0.05 + 0.15 * 0.95) = 0.78).
    data, voted, p = _voted_data(2000, 0.85, 0.95, 0.9, seed=0)
    check = ls_ts_smoothing_check(data.logits, voted)
    # Exact from the probabilities (independent slow path).
    eps = np.mean([1 - p[i, voted[i]] for i in range(voted.size)])
    assert check["mean_complement_confidence"] == pytest.approx(eps, rel=1e-12)
    assert check["voted_error_rate"] == pytest.approx(np.mean(p.argmax(1) != voted))
    assert check["error_share"] > LS_TS_ERROR_SHARE and check["inflated"]
    rec, flags = _recommend(data)
    assert rec.method == "LS-TS"
    assert "recommendation.ls-ts-smoothing" in {f.code for f in flags}
    assert any("Check of the LS-TS guideline" in r for r in rec.reasons)


def test_genuine_ambiguity_with_an_accurate_model_is_not_flagged():
    # Right on 98% of the items but only 0.65 on the voted class: the smoothing is
    # ambiguity the model itself expresses (share 0.02 / (0.98 * 0.35 + 0.02 * 0.8) = 0.06).
    data, voted, _ = _voted_data(2000, 0.98, 0.65, 0.6, seed=1)
    check = ls_ts_smoothing_check(data.logits, voted)
    assert check["error_share"] < 0.1 and not check["inflated"]
    rec, flags = _recommend(data)
    assert rec.method == "LS-TS"
    assert "recommendation.ls-ts-smoothing" not in {f.code for f in flags}
    assert not any("Check of the LS-TS guideline" in r for r in rec.reasons)
