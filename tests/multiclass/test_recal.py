"""Corrected multiclass recalibration: exact equivalence to clean fits, the binary case, boxes."""

import numpy as np
import pytest
from scipy.optimize import minimize

from bayescal import Annotations
from bayescal.channels.result import ChannelFit
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError, DataError, NotFittedError
from bayescal.recal import TemperatureMap
from bayescal.recal.multiclass import (
    CorrectedTemperatureScaling,
    CorrectedVectorScaling,
    corrected_cross_entropy,
    corrected_target_stats,
    fit_multiclass_posterior_map,
    probs_to_logits,
)
from bayescal.simulate import multiclass_population

FAMILIES = [CorrectedTemperatureScaling, CorrectedVectorScaling]


def _params(m):
    if isinstance(m, CorrectedTemperatureScaling):
        return np.array([m.temperature_])
    return np.concatenate([m.scales_, m.biases_])


@pytest.mark.parametrize("family", FAMILIES)
def test_corrected_fit_equals_clean_fit_on_an_exact_dataset(exact_pair, family):
    # On a dataset holding every (profile, Y, pattern) at its expected multiplicity the
    # corrected target sums equal the clean ones exactly, so the two fits coincide.
    pop, data = exact_pair
    ch = ChannelFit.known_confusion(pop.confusion, prevalence=pop.prevalence)
    corrected = family().fit_corrected(data, ch, weights="inverse_variance")
    clean = family().fit(probs_to_logits(data.probs), np.eye(3)[data.truth])
    np.testing.assert_allclose(_params(corrected), _params(clean), atol=1e-6)
    assert corrected.converged_  # (vector scaling on 4 profiles may sit on a box edge)


def test_population_temperature_is_recovered():
    # Model p_t = softmax(2 z_t), truth m_t = softmax(z_t): on log p the best temperature is 2.
    pop = multiclass_population(4, temperature=2.0, random_state=5)
    z = np.log(pop.profile_probs)
    m = (pop.profile_truth * z).mean(axis=0)
    n = pop.profile_truth.mean(axis=0)
    ts = CorrectedTemperatureScaling()._fit_stats(z, m, n)
    assert ts.temperature_ == pytest.approx(2.0, abs=1e-6)
    vs = CorrectedVectorScaling()._fit_stats(z, m, n)
    np.testing.assert_allclose(vs.scales_, 0.5, atol=1e-5)
    np.testing.assert_allclose(vs.biases_, 0.0, atol=1e-5)


def _item_loss(theta, z, t, family):
    g = family._apply(theta, z)
    g = g - g.max(axis=1, keepdims=True)
    logp = g - np.log(np.exp(g).sum(axis=1, keepdims=True))
    return -(t * logp).sum(axis=1).mean()


@pytest.mark.parametrize("family", FAMILIES)
def test_fit_is_the_box_constrained_minimum_of_the_per_item_loss(mc_small, family):
    rng = np.random.default_rng(0)
    z = probs_to_logits(mc_small.probs)
    noise = rng.normal(scale=0.4, size=z.shape)
    t = np.eye(4)[mc_small.truth] + noise - noise.mean(axis=1, keepdims=True)  # rows sum to 1
    m = family().fit(z, t)
    lo, hi = m._bounds(4)
    ref = minimize(
        _item_loss,
        m._start(4),
        args=(z, t, m),
        method="L-BFGS-B",
        bounds=list(zip(lo, hi)),
        options={"gtol": 1e-12, "ftol": 0.0, "maxiter": 5000},
    )
    np.testing.assert_allclose(m._theta(), ref.x, atol=1e-4)
    assert m.loss_ == pytest.approx(corrected_cross_entropy(m.predict_proba(z), t), rel=1e-10)


def test_c2_temperature_reproduces_the_binary_corrected_temperature_map():
    rng = np.random.default_rng(8)
    n = 4000
    z = 0.02 + 0.96 * rng.random(n)
    y = (rng.random(n) < z**2).astype(int)
    a, b = np.array([0.1, 0.2, 0.3]), np.array([0.85, 0.75, 0.9])
    lab = np.where(y[:, None] == 1, rng.random((n, 3)) < b, rng.random((n, 3)) < a).astype(float)
    ch = ChannelFit.known(a, b, mu=float(y.mean()))
    ref = TemperatureMap().fit_corrected(Annotations.from_arrays(z, lab), ch)
    multi = MulticlassAnnotations.from_arrays(np.column_stack([1 - z, z]), lab)
    ts = CorrectedTemperatureScaling().fit_corrected(multi, ch)
    assert ts.temperature_ == pytest.approx(ref.temperature_, rel=1e-6)


def test_negative_targets_run_into_the_box():
    # One item, U = (1.5, -0.5): the loss falls without limit as p_2 -> 0, i.e. as T -> 0.
    z = np.array([[1.0, 0.0]])
    ts = CorrectedTemperatureScaling(temperature_bounds=(0.1, 10.0)).fit(z, [[1.5, -0.5]])
    assert ts.at_bound_ and ts.temperature_ == pytest.approx(0.1)


def test_posterior_ensemble_equals_per_draw_fits(mc_small, mc_small_summary):
    from bayescal.channels.em import dawid_skene_em

    fit = dawid_skene_em(mc_small_summary)
    rng = np.random.default_rng(2)
    t = fit.confusion.values[0]
    conf = np.stack([0.95 * t + 0.05 * rng.dirichlet(np.ones(4), size=(3, 4)) for _ in range(4)])
    post = ChannelFit.from_confusion(
        conf,
        np.repeat(fit.class_prevalence.values, 4, axis=0),
        annotators=fit.annotators,
        classes=fit.classes,
        groups=fit.class_prevalence["group"].values,
        group_counts=fit.group_counts.values,
        method="test",
    )
    ens = fit_multiclass_posterior_map(CorrectedVectorScaling(), mc_small, post, draws=[0, 2, 3])
    z = probs_to_logits(mc_small.probs)
    draws = ens.predict_proba_draws(z)
    for i, d in enumerate([0, 2, 3]):
        one = CorrectedVectorScaling().fit_corrected(mc_small, post, draw=d)
        np.testing.assert_allclose(draws[i], one.predict_proba(z), atol=1e-12)
    np.testing.assert_allclose(ens.predict_proba(z), draws.mean(axis=0))
    with pytest.raises(ConfigError, match="draw="):
        CorrectedVectorScaling().fit_corrected(mc_small, post)


def test_target_stats_are_sums_over_patterns(mc_small):
    ch = ChannelFit.known_confusion(multiclass_population(4, random_state=11).confusion)
    z, m, n_k = corrected_target_stats(mc_small, ch, weights="equal")
    from bayescal.metrics.multiclass import corrected_onehot_targets
    from bayescal.summaries.patterns import item_states

    states = item_states(mc_small.labels[mc_small.annotated], 4)
    u = corrected_onehot_targets(states, ch)[0]  # one "pattern" per item
    np.testing.assert_allclose(m[0], (u * z).mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(n_k[0], u.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(n_k.sum(), 1.0, atol=1e-12)


def test_estimator_conventions_and_refusals(mc_small):
    ts = CorrectedTemperatureScaling(temperature_bounds=(0.5, 4.0))
    assert ts.get_params() == {"temperature_bounds": (0.5, 4.0)}
    assert "temperature_bounds=(0.5, 4.0)" in repr(ts)
    with pytest.raises(ConfigError, match="no parameter"):
        ts.set_params(temperature=2)
    with pytest.raises(NotFittedError):
        ts.predict_proba(np.zeros((1, 4)))
    z = probs_to_logits(mc_small.probs)
    with pytest.raises(DataError, match="sum to one"):
        ts.fit(z, np.full(z.shape, 0.3))
    bad = z.copy()
    bad[3, 1] = -np.inf
    with pytest.raises(DataError, match="non-finite.*item 3"):
        ts.fit(bad, np.eye(4)[mc_small.truth])
    with pytest.raises(ConfigError, match="temperature_bounds"):
        CorrectedTemperatureScaling(temperature_bounds=(2.0, 1.0)).fit(z, np.eye(4)[mc_small.truth])
    fitted = CorrectedVectorScaling().fit(z, np.eye(4)[mc_small.truth])
    with pytest.raises(DataError, match="fitted on 4"):
        fitted.predict_proba(np.zeros((2, 3)))
    out = fitted.recalibrate(mc_small)
    np.testing.assert_allclose(out.probs.sum(axis=1), 1.0)
    assert out.annotators == mc_small.annotators


def test_draw_indices_are_checked(mc_small):
    ch = ChannelFit.known_confusion(multiclass_population(4, random_state=11).confusion)
    with pytest.raises(ConfigError, match="out of range"):
        CorrectedTemperatureScaling().fit_corrected(mc_small, ch, draw=1)
    with pytest.raises(ConfigError, match="integers"):
        fit_multiclass_posterior_map(CorrectedTemperatureScaling(), mc_small, ch, draws=[0.5])


@pytest.mark.parametrize("family", FAMILIES)
def test_sklearn_clone_and_refit(mc_small, family):
    sklearn_base = pytest.importorskip("sklearn.base")
    est = family()
    z, t = probs_to_logits(mc_small.probs), np.eye(4)[mc_small.truth]
    copy = sklearn_base.clone(est.fit(z, t))
    assert not hasattr(copy, "n_classes_") and copy.get_params() == est.get_params()
    np.testing.assert_allclose(copy.fit(z, t).predict_proba(z), est.predict_proba(z))
