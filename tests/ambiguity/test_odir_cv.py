"""Cross-validated ODIR weight of the Dirichlet calibrators against an explicit grid-and-fold loop.

The library walks each fold's grid from the strongest penalty down, warm-starting every fit
at the previous solution, with a looser gradient tolerance (the grid fits are scored, not
kept). The reference below fits every (fold, lambda) pair from scratch with the calibrator's
own fixed-lambda path and full tolerance, and scores it with predict_proba. The penalised
problem is strictly convex, so both reach the same optimum; they can differ only by the
grid fits' stopping error.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayescal.ambiguity import DirichletCalibration, SoftDirichletCalibration, stratified_split
from bayescal.ambiguity.calibrators import ODIR_GRID, TAO_ODIR
from bayescal.ambiguity.calibrators.affine import CV_GTOL
from bayescal.ambiguity.loaders import stratified_folds
from bayescal.ambiguity.simplex import softmax
from bayescal.errors import ConfigError, DataError

GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0)


def _reference_scores(cls, z, counts, grid, folds, seed):
    """Pooled held-out cross-entropy per lambda: one cold fit per (fold, lambda)."""
    t = counts / counts.sum(axis=1, keepdims=True)
    target = t if cls is SoftDirichletCalibration else np.eye(t.shape[1])[t.argmax(axis=1)]
    fold = stratified_folds(t.argmax(axis=1), folds, seed)
    out = {}
    for lam in grid:
        total = 0.0
        for f in range(folds):
            tr, va = fold != f, fold == f
            m = cls(lambda_offdiag=lam, lambda_bias=lam).fit(z[tr], counts[tr])
            p = m.predict_proba(z[va])
            total += float(-(target[va] * np.log(p)).sum())
        out[lam] = total / z.shape[0]
    return out


@pytest.mark.parametrize("cls", [SoftDirichletCalibration, DirichletCalibration])
def test_cv_scores_and_choice_equal_an_explicit_loop(cls, chaos_small):
    d = chaos_small
    cal, _ = stratified_split(d.voted, fraction=0.5, random_state=42)
    z, counts = d.logits[cal], d.counts[cal]
    model = cls(lambda_grid=GRID, cv_folds=4, random_state=3).fit(z, counts)
    ref = _reference_scores(cls, z, counts, GRID, 4, 3)
    assert model.cv_converged_.all()
    np.testing.assert_array_equal(model.cv_lambdas_, sorted(GRID, reverse=True))
    # The grid fits stop at a max-abs gradient of CV_GTOL = 1e-7 (the reference at 1e-10), so
    # their parameters differ by about |g| / curvature and the held-out losses, which are not
    # at their own optimum, by that times the held-out gradient: first order in the stopping
    # error. What matters is that this is far below the score gaps that decide the choice:
    # 1e-6 is a hundredth of the smallest gap between grid values here.
    ref_scores = np.array([ref[lam] for lam in model.cv_lambdas_])
    np.testing.assert_allclose(model.cv_scores_, ref_scores, rtol=0, atol=1e-6)
    assert np.abs(np.diff(ref_scores)).min() > 100 * 1e-6
    best = min(ref, key=lambda lam: (ref[lam], -lam))
    assert model.lambda_offdiag_ == best == model.lambda_bias_
    # The kept map is the fixed-lambda fit at the chosen value, to the last bit.
    fixed = cls(lambda_offdiag=best).fit(z, counts)
    np.testing.assert_array_equal(model.coef_, fixed.coef_)
    np.testing.assert_array_equal(model.intercept_, fixed.intercept_)
    assert CV_GTOL == 1e-7  # the stopping rule the comment above is about


def test_every_lambda_ties_on_calibrated_targets_and_the_largest_is_kept():
    # Targets equal to softmax(z): W = I, b = 0 zeroes the loss gradient and the penalty for
    # every lambda, so all grid scores are equal and the tie rule keeps the strongest penalty.
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 4)) * 2
    m = SoftDirichletCalibration().fit(z, softmax(z))
    assert np.ptp(m.cv_scores_) < 1e-10
    assert m.lambda_offdiag_ == max(ODIR_GRID)
    np.testing.assert_allclose(m.coef_, np.eye(4), atol=1e-6)


def test_a_strong_cross_class_map_is_left_unpenalised():
    # Targets from a Dirichlet map with large off-diagonal weights (a class swap): a strong
    # penalty pulls W towards the diagonal and costs held-out loss, so CV picks a small lambda
    # and the map recovers the generating W.
    rng = np.random.default_rng(1)
    z = rng.normal(size=(3000, 3)) * 2
    W = np.array([[0.2, 1.5, 0.0], [1.5, 0.2, 0.0], [0.0, 0.0, 1.0]])
    counts = rng.multinomial(50, softmax(z @ W.T))
    m = SoftDirichletCalibration().fit(z, counts)
    assert m.lambda_offdiag_ <= 1e-1
    assert m.cv_scores_[0] - m.cv_scores_.min() > 0.05  # lambda = 1e3 is much worse
    # The softmax is invariant to adding one vector to every row of W; compare differences.
    np.testing.assert_allclose(m.coef_ - m.coef_[2], W - W[2], atol=0.1)


def test_fixed_lambda_is_selectable_and_skips_the_grid(chaos_small):
    d = chaos_small
    m = SoftDirichletCalibration(lambda_offdiag=TAO_ODIR).fit(d.logits, d.counts)
    assert m.lambda_offdiag_ == m.lambda_bias_ == 1e-3
    assert m.cv_scores_ is None and m.cv_lambdas_ is None and m.cv_converged_ is None
    m2 = SoftDirichletCalibration(lambda_offdiag=TAO_ODIR, lambda_bias=0.5).fit(d.logits, d.counts)
    assert m2.lambda_bias_ == 0.5


@pytest.mark.parametrize(
    "params, match",
    [
        ({"lambda_offdiag": "auto"}, "lambda_offdiag must be 'cv'"),
        ({"lambda_offdiag": -1.0}, "non-negative"),
        ({"lambda_bias": "tied"}, "lambda_bias must be 'same'"),
        ({"lambda_grid": (1.0,)}, "at least two"),
        ({"lambda_grid": (1.0, 0.0)}, "at least two positive"),
        ({"lambda_grid": (1.0, 1.0, 2.0)}, "repeated"),
        ({"cv_folds": 1}, "cv_folds"),
        ({"cv_folds": True}, "cv_folds"),
    ],
)
def test_bad_settings_raise(params, match, chaos_small):
    d = chaos_small
    with pytest.raises(ConfigError, match=match):
        DirichletCalibration(**params).fit(d.logits[:100], d.counts[:100])


def test_too_few_items_for_the_folds_name_the_fix():
    z = np.random.default_rng(0).normal(size=(9, 3))
    with pytest.raises(DataError, match="at least 10 calibration items.*fixed lambda_offdiag"):
        SoftDirichletCalibration().fit(z, np.eye(3)[[0, 1, 2] * 3])
    SoftDirichletCalibration(cv_folds=4).fit(z, np.eye(3)[[0, 1, 2] * 3])
