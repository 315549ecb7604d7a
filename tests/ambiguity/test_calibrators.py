"""Calibrators: optimiser checks against direct 1-D optimisation, invariants, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from bayescal.ambiguity import (
    METHODS,
    AdaptiveTemperatureScaling,
    DirichletCalibration,
    HistogramBinning,
    LabelSmoothingTemperatureScaling,
    MonteCarloTemperatureScaling,
    PlattScaling,
    SoftDirichletCalibration,
    SoftHistogramBinning,
    SoftIsotonicRegression,
    SoftPlattScaling,
    SoftTemperatureScaling,
    TemperatureScaling,
    dirichlet_map,
    make_calibrator,
)
from bayescal.ambiguity.simplex import log_softmax, softmax
from bayescal.errors import ConfigError, DataError, NotFittedError


def _direct_temperature(z, t):
    """Brent on log T of the mean cross-entropy, no gradients: an independent optimiser."""

    def f(theta):
        return -(t * log_softmax(z * np.exp(-theta))).sum(axis=1).mean()

    res = minimize_scalar(f, bracket=(-1.0, 2.0), method="brent", tol=1e-12)
    return float(np.exp(res.x))


@pytest.mark.parametrize("dataset", ["cifar_small", "chaos_small"])
def test_ts_and_slts_match_direct_one_dimensional_optimisation(dataset, request):
    d = request.getfixturevalue(dataset)
    onehot = np.eye(d.n_classes)[d.voted]
    ts = TemperatureScaling().fit(d.logits, d.counts)
    slts = SoftTemperatureScaling().fit(d.logits, d.counts)
    assert ts.converged_ and slts.converged_
    assert ts.temperature_ == pytest.approx(_direct_temperature(d.logits, onehot), rel=1e-6)
    assert slts.temperature_ == pytest.approx(
        _direct_temperature(d.logits, d.distribution), rel=1e-6
    )
    # Proposition 1's direction holds on both real datasets.
    assert slts.temperature_ > ts.temperature_


@pytest.mark.parametrize(
    "hard, soft",
    [
        (TemperatureScaling, SoftTemperatureScaling),
        (PlattScaling, SoftPlattScaling),
        (DirichletCalibration, SoftDirichletCalibration),
        (HistogramBinning, SoftHistogramBinning),
    ],
)
def test_one_hot_soft_targets_make_soft_and_hard_coincide(hard, soft, chaos_small):
    d = chaos_small
    onehot = np.eye(d.n_classes)[d.voted]
    ph = hard().fit(d.logits, d.voted).predict_proba(d.logits)
    ps = soft().fit(d.logits, onehot).predict_proba(d.logits)
    np.testing.assert_allclose(ps, ph, atol=1e-10)


def test_dirichlet_identity_map_and_recovery_of_calibrated_targets():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(500, 4)) * 2
    np.testing.assert_allclose(dirichlet_map(z, np.eye(4), np.zeros(4)), softmax(z), atol=1e-15)
    # Targets equal to softmax(z): W = I, b = 0 has zero loss gradient and zero ODIR
    # penalty, and the penalised problem is strictly convex, so it is the optimum.
    fit = SoftDirichletCalibration().fit(z, softmax(z))
    assert fit.converged_
    np.testing.assert_allclose(fit.coef_, np.eye(4), atol=1e-5)
    np.testing.assert_allclose(fit.intercept_, 0.0, atol=1e-5)


def test_ir_soft_is_monotone_and_matches_sklearn(cifar_small):
    from sklearn.isotonic import IsotonicRegression

    d = cifar_small
    ir = SoftIsotonicRegression().fit(d.logits, d.counts)
    grid = np.linspace(0, 1, 2001)
    assert np.all(np.diff(ir.predict_confidence(grid)) >= 0)
    p = softmax(d.logits)
    c = p.argmax(axis=1)
    conf = p[np.arange(d.n_items), c]
    target = d.distribution[np.arange(d.n_items), c]
    sk = IsotonicRegression(out_of_bounds="clip").fit(conf, target)
    np.testing.assert_allclose(ir.predict_confidence(conf), sk.predict(conf), atol=1e-10)


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_gives_probability_rows(name, chaos_small):
    d = chaos_small
    m = make_calibrator(name, random_state=1).fit(d.logits, d.counts)
    p = m.predict_proba(d.logits[:50])
    assert p.shape == (50, d.n_classes)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert m.converged_ is True
    assert isinstance(m.n_iter_, int)


@pytest.mark.parametrize("name", list(METHODS))
def test_predict_before_fit_raises(name):
    with pytest.raises(NotFittedError, match="fit"):
        make_calibrator(name).predict_proba([[0.0, 1.0]])


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.parametrize(
    "logits, targets, match",
    [
        ([[np.nan, 0.0], [0.0, 1.0]], [0, 1], "NaN or infinite"),
        ([[np.inf, 0.0], [0.0, 1.0]], [0, 1], "NaN or infinite"),
        ([[1.0, 0.0], [0.0, 1.0]], [[1, -1], [0, 2]], "negative"),
        ([[1.0, 0.0], [0.0, 1.0]], [[0, 0], [0, 2]], "all-zero"),
        ([[1.0, 0.0], [0.0, 1.0]], [[1, 0, 0], [0, 1, 0]], "class columns"),
        ([[1.0, 0.0], [0.0, 1.0]], [0, 2], "out of range"),
        ([[1.0], [0.0]], [0, 0], "at least two classes"),
        ([[1.0, 0.0], [0.0, 1.0]], [0, 1, 1], "entries but there are"),
    ],
)
def test_bad_inputs_raise(name, logits, targets, match):
    with pytest.raises(DataError, match=match):
        make_calibrator(name).fit(logits, targets)


def test_predict_with_wrong_class_count_raises(chaos_small):
    ts = TemperatureScaling().fit(chaos_small.logits, chaos_small.counts)
    with pytest.raises(DataError, match="expected"):
        ts.predict_proba(np.zeros((2, 4)))


def test_mcts_converges_to_slts_and_uses_recorded_annotations(cifar_small):
    d = cifar_small
    slts = SoftTemperatureScaling().fit(d.logits, d.counts).temperature_
    big = MonteCarloTemperatureScaling(n_samples=2000, random_state=0).fit(d.logits, d.counts)
    # With S = 2000 the sampled distribution deviates from pi by O(1/sqrt(nS)) ~ 7e-4 per cell.
    assert big.temperature_ == pytest.approx(slts, rel=5e-3)
    one = MonteCarloTemperatureScaling(n_samples=1, random_state=3).fit(d.logits, d.counts)
    again = MonteCarloTemperatureScaling(n_samples=1, random_state=3).fit(d.logits, d.counts)
    assert one.temperature_ == again.temperature_
    assert np.all(one.sample_counts_.sum(axis=1) == 1)
    # Recorded annotations: MCTS on them equals SLTS on their counts.
    ann = np.stack([d.voted, d.counts.argmin(axis=1), np.full(d.n_items, -1)], axis=1)
    rec = MonteCarloTemperatureScaling().fit(d.logits, annotations=ann)
    counts = np.eye(d.n_classes)[ann[:, 0]] + np.eye(d.n_classes)[ann[:, 1]]
    assert rec.temperature_ == pytest.approx(
        SoftTemperatureScaling().fit(d.logits, counts).temperature_, rel=1e-9
    )
    with pytest.raises(ConfigError, match="exactly one"):
        MonteCarloTemperatureScaling().fit(d.logits, d.counts, annotations=ann)


def test_label_smoothing_weights(cifar_small):
    d = cifar_small
    p = softmax(d.logits)
    miss = 1 - p[np.arange(d.n_items), d.voted]
    ls = LabelSmoothingTemperatureScaling().fit(d.logits, d.voted)
    assert ls.smoothing_ == pytest.approx(miss.mean())
    cls = LabelSmoothingTemperatureScaling(smoothing="class").fit(d.logits, d.voted)
    assert cls.smoothing_[3] == pytest.approx(miss[d.voted == 3].mean())
    # Fixed-LS with e = 0 is TS.
    ts = TemperatureScaling().fit(d.logits, d.voted).temperature_
    assert LabelSmoothingTemperatureScaling(smoothing=0.0).fit(
        d.logits, d.voted
    ).temperature_ == pytest.approx(ts, rel=1e-8)
    with pytest.raises(ConfigError):
        LabelSmoothingTemperatureScaling(smoothing="median").fit(d.logits, d.voted)


def test_ats_with_a_heavy_penalty_is_ts(chaos_small):
    d = chaos_small
    ts = TemperatureScaling().fit(d.logits, d.voted)
    ats = AdaptiveTemperatureScaling(l2=1e6).fit(d.logits, d.voted)
    assert np.max(np.abs(ats.coef_)) < 1e-4
    np.testing.assert_allclose(ats.predict_temperature(d.logits), ts.temperature_, rtol=1e-4)
    np.testing.assert_allclose(ats.predict_proba(d.logits), ts.predict_proba(d.logits), atol=1e-4)


def test_constructor_stores_parameters_only():
    m = MonteCarloTemperatureScaling(n_samples=-3, random_state="x")
    assert m.get_params() == {"n_samples": -3, "random_state": "x"}
    with pytest.raises(ConfigError):
        m.fit(np.zeros((2, 2)), [[1, 0], [0, 1]])


def test_lbfgs_runs_on_one_blas_thread(monkeypatch):
    """bayescal._blas: a multi-threaded OpenBLAS made a 10-class Dirichlet fit 25x slower on
    two cores (thread wake-ups on every tiny BLAS call). Inside the optimiser every BLAS
    library reports one thread, and the caller's setting is back afterwards."""
    from threadpoolctl import threadpool_info

    from bayescal.ambiguity.calibrators import SoftDirichletCalibration, base

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before, seen = blas_threads(), []
    real = base.minimize

    def spy(*args, **kwargs):
        seen.extend(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(base, "minimize", spy)
    rng = np.random.default_rng(0)
    z = rng.normal(size=(60, 4))
    counts = rng.multinomial(5, [0.25] * 4, size=60)
    SoftDirichletCalibration().fit(z, counts)
    assert seen and set(seen) == {1}
    assert blas_threads() == before
