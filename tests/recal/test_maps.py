"""Single maps: exact agreement with reference fits, boxes, unbiased corrected loss, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from recal_helpers import TRUE_A, TRUE_B
from scipy import optimize, special

from bayescal import Annotations, ChannelFit, nc_ece
from bayescal.errors import ConfigError, DataError, NotFittedError
from bayescal.recal import (
    HistogramMap,
    PlattMap,
    ScoreBinMap,
    TemperatureMap,
    clipped_logit,
    corrected_log_loss,
    corrected_targets,
    naive_targets,
)
from bayescal.simulate import simulate_flip_data, simulate_gaussian
from bayescal.summaries.partition import assign


def _clean(gauss):
    return gauss.score, gauss.truth.astype(float)


# ---------------------------------------------------------------- clean labels = reference fits
def test_temperature_equals_scalar_optimisation(gauss):
    z, y = _clean(gauss)
    s = clipped_logit(z)

    def loss(beta):
        return np.mean(np.logaddexp(0, beta * s) - y * beta * s)

    ref = optimize.minimize_scalar(
        loss, bounds=(0.05, 20), method="bounded", options={"xatol": 1e-12}
    )
    m = TemperatureMap().fit(z, y)
    assert m.converged_ and not m.at_bound_
    assert m.inverse_temperature_ == pytest.approx(ref.x, abs=1e-6)
    assert m.loss_ == pytest.approx(ref.fun, abs=1e-12)
    # the Gaussian setting has m(z) = sigmoid(2 logit z - 0.6): a pure temperature cannot
    # shift, so 1/T lands near, not at, the slope 2
    assert 1.5 < m.inverse_temperature_ < 2.5


def test_platt_equals_unpenalised_logistic_regression(gauss):
    sklearn = pytest.importorskip("sklearn.linear_model")
    z, y = _clean(gauss)
    s = clipped_logit(z)
    lr = sklearn.LogisticRegression(C=np.inf, solver="newton-cg", tol=1e-12, max_iter=10_000).fit(
        s[:, None], y
    )
    m = PlattMap().fit(z, y)
    assert m.slope_ == pytest.approx(lr.coef_[0, 0], abs=1e-6)
    assert m.intercept_ == pytest.approx(lr.intercept_[0], abs=1e-6)
    # and the truth of the setting: slope 2, intercept -0.6 (sampling error ~0.06)
    assert abs(m.slope_ - 2) < 0.3 and abs(m.intercept_ + 0.6) < 0.3


def test_platt_on_box_matches_lbfgsb():
    # targets that want a negative slope: with u in [0, 10] the fit sits on u = 0
    rng = np.random.default_rng(3)
    z = rng.random(3000)
    y = (rng.random(3000) < 1 - z).astype(float)
    s = clipped_logit(z)
    m = PlattMap().fit(z, y)
    assert m.slope_ == 0.0 and m.at_bound_

    def f(th):
        t = th[0] * s + th[1]
        return np.mean(np.logaddexp(0, t) - y * t)

    ref = optimize.minimize(
        f,
        [1.0, 0.0],
        method="L-BFGS-B",
        bounds=[(0, 10), (-10, 10)],
        options={"ftol": 1e-15, "gtol": 1e-12},
    )
    assert m.intercept_ == pytest.approx(ref.x[1], abs=1e-5)
    wide = PlattMap(slope_bounds=(-10, 10)).fit(z, y)
    assert wide.slope_ < -0.5 and not wide.at_bound_


def test_histogram_equals_bin_means(gauss):
    z, y = _clean(gauss)
    m = HistogramMap(bins=12, strategy="quantile").fit(z, y)
    edges = np.quantile(z, np.linspace(0, 1, 13)[1:-1])
    np.testing.assert_allclose(m.bin_edges_[1:-1], edges)
    idx = assign(z, m.bin_edges_)
    means = np.array([y[idx == h].mean() for h in range(12)])
    np.testing.assert_allclose(m.bin_values_, means, rtol=0, atol=1e-14)
    np.testing.assert_allclose(m.predict(z), means[idx], atol=1e-14)
    assert m.projection_residual_ == 0.0


def test_histogram_empty_bin_gets_projected_overall_mean():
    z = np.array([0.05, 0.1, 0.15, 0.9, 0.95])
    t = np.array([1.5, 1.2, 1.4, 0.9, 1.3])  # mean 1.26 -> projected to 1
    m = HistogramMap(bins=4, strategy="uniform").fit(z, t)
    assert m.bin_counts_.tolist() == [3, 0, 0, 2]
    assert m.fill_value_ == 1.0
    assert m.bin_values_.tolist() == [1.0, 1.0, 1.0, 1.0]
    assert np.isnan(m.bin_means_[1])
    t2 = np.array([0.2, 0.1, 0.0, 0.4, 0.3])
    m2 = HistogramMap(bins=4, strategy="uniform").fit(z, t2)
    assert m2.bin_values_[1] == pytest.approx(0.2) and m2.bin_values_[2] == pytest.approx(0.2)


# ---------------------------------------------------------------- corrected loss
def test_corrected_loss_is_unbiased_for_clean_loss(known):
    """Per item, l_U(p) - l_Y(p) has mean 0 given (Y, Z) for any fixed p (paper Eq. E.2)."""
    data = simulate_gaussian(200_000, random_state=5)
    z, y = data.score, data.truth.astype(float)
    p = special.expit(1.3 * clipped_logit(z) + 0.2)  # a fixed map, not fitted here
    u = corrected_targets(data, known, weights="equal").values()
    d_corr = (-u * np.log(p) - (1 - u) * np.log1p(-p)) - (-y * np.log(p) - (1 - y) * np.log1p(-p))
    se = d_corr.std(ddof=1) / np.sqrt(d_corr.size)
    assert abs(d_corr.mean()) < 4 * se  # false alarm rate ~6e-5
    # the check has power: the naive target is biased by many standard errors
    v = naive_targets(data).values()
    d_naive = (-v * np.log(p) - (1 - v) * np.log1p(-p)) - (-y * np.log(p) - (1 - y) * np.log1p(-p))
    assert abs(d_naive.mean()) > 20 * d_naive.std(ddof=1) / np.sqrt(d_naive.size)
    assert corrected_log_loss(p, u) == pytest.approx(
        np.mean(-u * np.log(p) - (1 - u) * np.log1p(-p))
    )


def test_corrected_fit_recovers_clean_fit_at_large_n(known):
    data = simulate_gaussian(200_000, random_state=6)
    clean = PlattMap().fit(data.score, data.truth)
    corr = PlattMap().fit_corrected(data, known, weights="inverse_variance")
    naive = PlattMap().fit_targets(naive_targets(data))
    # sampling sd of the corrected slope at this n is about 0.02
    assert abs(corr.slope_ - clean.slope_) < 0.08 and abs(corr.intercept_ - clean.intercept_) < 0.08
    assert abs(naive.slope_ - clean.slope_) > 0.3


# ---------------------------------------------------------------- boxes
@pytest.mark.parametrize("scale", [5.0, -5.0])
def test_parameters_stay_in_boxes_when_targets_leave_unit_interval(scale):
    rng = np.random.default_rng(1)
    z = rng.random(500)
    t = scale * (z > 0.5) - (scale - 1) / 2  # values far outside [0, 1]
    assert t.min() < 0 or t.max() > 1
    tm = TemperatureMap(bounds=(0.1, 3.0)).fit(z, t)
    assert 0.1 <= tm.temperature_ <= 3.0 and tm.at_bound_ and np.isfinite(tm.loss_)
    pm = PlattMap(slope_bounds=(-10, 10)).fit(z, t)
    assert -10 <= pm.slope_ <= 10 and -10 <= pm.intercept_ <= 10 and pm.at_bound_
    # the logit of the prediction is bounded by the boxes and the clip (numerically the
    # sigmoid of 148 rounds to 1, so check the linear predictor, not g)
    lin = pm.slope_ * clipped_logit(z) + pm.intercept_
    assert np.abs(lin).max() <= 10 * special.logit(1 - 1e-6) + 10 + 1e-9
    hm = HistogramMap(bins=4, strategy="uniform").fit(z, t)
    assert np.all((hm.bin_values_ >= 0) & (hm.bin_values_ <= 1)) and hm.projection_residual_ > 0


# ---------------------------------------------------------------- Prop. 2 identity
def _separating_edges(values):
    v = np.unique(values)
    mids = (v[1:] + v[:-1]) / 2
    return np.concatenate([[0.0], mids, [1.0]])


@pytest.mark.parametrize("n, seed", [(6000, 0), (60, 3)])
def test_histogram_nc_ece_on_fitting_data_is_projection_residual(known, n, seed):
    data = simulate_gaussian(n, random_state=seed)
    m = HistogramMap(bins=8, strategy="uniform").fit_corrected(data, known, weights="equal")
    g = m.predict(data.score)
    # the same partition as the fitting bins, read on the original score
    u = corrected_targets(data, known, weights="equal").values()
    idx = assign(data.score, m.bin_edges_)
    moments = np.bincount(idx, weights=u - g, minlength=8) / n
    assert np.abs(moments).sum() == pytest.approx(m.projection_residual_, abs=1e-12)
    if np.unique(m.bin_values_).size == m.bin_values_.size:
        # bins on g(Z) that separate the distinct outputs group the items identically
        r = nc_ece(
            data.with_score(g), known, weights="equal", bins=_separating_edges(m.bin_values_)
        )
        assert r.value == pytest.approx(m.projection_residual_, abs=1e-12)
    if n == 6000:
        assert m.projection_residual_ == 0.0
    else:
        assert m.projection_residual_ > 0  # small sample: some corrected bin means leave [0, 1]


# ---------------------------------------------------------------- score-bin map
def test_score_bin_map_reads_prevalences_and_fills_dropped_groups():
    ch = ChannelFit.from_point(
        [0.1, 0.1],
        [0.9, 0.9],
        [0.2, 0.7],
        annotators=["a1", "a2"],
        groups=["[0, 0.3333)", "[0.6667, 1]"],
        group_counts=[10, 30],
        method="x",
        group_edges=np.array([0, 1 / 3, 2 / 3, 1]),
    )
    m = ScoreBinMap(channels=ch).fit()
    mu = (0.2 * 10 + 0.7 * 30) / 40
    np.testing.assert_allclose(m.predict([0.1, 0.5, 0.9]), [0.2, mu, 0.7])
    user = ChannelFit.from_point(
        [0.1, 0.1],
        [0.9, 0.9],
        [0.2, 0.7],
        annotators=["a1", "a2"],
        groups=["siteA", "siteB"],
        group_counts=[1, 1],
        method="x",
    )
    with pytest.raises(ConfigError, match="score groups"):
        ScoreBinMap(channels=user).fit()
    np.testing.assert_allclose(
        ScoreBinMap(channels=ChannelFit.known([0.1], [0.9], mu=0.3)).fit().predict([0.2]), [0.3]
    )


# ---------------------------------------------------------------- interface and refusals
def test_not_fitted_and_bad_inputs():
    for m in (TemperatureMap(), PlattMap(), HistogramMap(), ScoreBinMap()):
        with pytest.raises(NotFittedError):
            m.predict([0.5])
    with pytest.raises(DataError, match="outside"):
        PlattMap().fit([0.2, 1.3], [0, 1])
    fitted = PlattMap().fit([0.2, 0.8, 0.4], [0, 1, 1])
    with pytest.raises(DataError, match="outside"):
        fitted.predict([-0.1])
    with pytest.raises(DataError, match="target"):
        PlattMap().fit([0.2, 0.8], [0, 1, 1])
    with pytest.raises(DataError, match="non-finite"):
        PlattMap().fit([0.2, 0.8], [0, np.nan])
    with pytest.raises(ConfigError, match="lower bound"):
        PlattMap(slope_bounds=(3, 1)).fit([0.2, 0.8], [0, 1])
    with pytest.raises(ConfigError, match="lower bound"):
        TemperatureMap(bounds=(20, 0.05)).fit([0.2, 0.8], [0, 1])
    with pytest.raises(ConfigError, match="positive"):
        TemperatureMap(bounds=(0, 1)).fit([0.2, 0.8], [0, 1])
    with pytest.raises(ConfigError, match="finite"):
        PlattMap(intercept_bounds=(-np.inf, 1)).fit([0.2, 0.8], [0, 1])
    with pytest.raises(DataError, match="bins for 3 fitting items"):
        HistogramMap(bins=4).fit([0.1, 0.5, 0.9], [0, 1, 1])
    with pytest.raises(ConfigError, match="strategy"):
        HistogramMap(strategy="kmeans").fit([0.1, 0.5, 0.9], [0, 1, 1])
    with pytest.raises(ConfigError, match="clip"):
        PlattMap(clip=0.0).fit([0.2, 0.8], [0, 1])


def test_params_roundtrip_and_fit_corrected_needs_one_draw(gauss):
    m = PlattMap(slope_bounds=(-10, 10))
    assert m.get_params() == {
        "slope_bounds": (-10, 10),
        "intercept_bounds": (-10.0, 10.0),
        "clip": 1e-6,
    }
    m.set_params(clip=1e-4)
    assert m.clip == 1e-4 and "clip=0.0001" in repr(m)
    with pytest.raises(ConfigError, match="no parameter"):
        m.set_params(slope=1)
    post = ChannelFit.from_draws(
        np.tile(TRUE_A, (3, 1)),
        np.tile(TRUE_B, (3, 1)),
        np.full((3, 1), 0.5),
        annotators=["a1", "a2"],
        groups=["all"],
        group_counts=[1],
        method="x",
    )
    with pytest.raises(ConfigError, match="draws"):
        HistogramMap().fit_corrected(gauss, post)
    a = HistogramMap().fit_corrected(gauss, post, draw=2)
    assert a.bin_values_.shape == (10,)


def test_missing_answers_are_renormalised():
    rng = np.random.default_rng(0)
    y = rng.random(50_000) < 0.5
    z = np.clip(0.5 + 0.3 * (y - 0.5) + 0.1 * rng.standard_normal(y.size), 0, 1)
    data = simulate_flip_data(z, y, TRUE_A, TRUE_B, random_state=1, missing=[0.3, 0.5])
    ch = ChannelFit.known(TRUE_A, TRUE_B)
    m = HistogramMap(bins=5, strategy="uniform").fit_corrected(data, ch)
    clean = HistogramMap(bins=5, strategy="uniform").fit(
        data.score[data.annotated], data.truth[data.annotated]
    )
    np.testing.assert_allclose(m.bin_values_, clean.bin_values_, atol=0.05)
    # an item nobody answered is left out of the fit
    lab = data.labels.copy()
    lab[0] = np.nan
    d2 = Annotations.from_arrays(data.score, lab, truth=data.truth)
    assert HistogramMap(bins=5).fit_corrected(d2, ch).n_items_ == d2.n_items - d2.n_unannotated
