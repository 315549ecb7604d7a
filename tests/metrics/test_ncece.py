import numpy as np
import pytest

import bayescal as bc
from bayescal import ChannelFit
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.weights import annotator_weights
from bayescal.simulate import (
    TOY_FN,
    TOY_FP,
    simulate_flip_data,
    simulate_toy,
    toy_population_bin_moments,
)

KNOWN = ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN), mu=0.5)
A, B = np.array(TOY_FP), 1 - np.array(TOY_FN)


def slow_corrected_labels(data, a, b, w):
    """Per-item corrected labels, renormalising weights over answered annotators."""
    out = np.full(data.n_items, np.nan)
    for i, row in enumerate(data.labels):
        ans = ~np.isnan(row)
        if not ans.any():
            continue
        wi = w[ans] / w[ans].sum()
        out[i] = np.sum(wi * (row[ans] - a[ans]) / (b[ans] - a[ans]))
    return out


def slow_binned_ece(z, t, edges):
    keep = ~np.isnan(t)
    z, t = z[keep], t[keep]
    n = z.size
    total = 0.0
    for i_bin in range(len(edges) - 1):
        hi_ok = z <= edges[i_bin + 1] if i_bin == len(edges) - 2 else z < edges[i_bin + 1]
        m = (z >= edges[i_bin]) & hi_ok
        if m.any():
            total += m.sum() / n * abs(t[m].mean() - z[m].mean())  # C.5 plug-in form
    return total


@pytest.mark.parametrize(
    "rule", ["equal", "gap", "squared_gap", "inverse_variance", "shrunk_inverse_variance"]
)
def test_nc_ece_matches_slow_per_item_plugin_identity(rule):
    d = simulate_toy(3000, "nonlinear", random_state=0, missing=[0.2, 0.0, 0.4])
    w = annotator_weights(KNOWN, rule).values[0]
    u = slow_corrected_labels(d, A, B, w)
    edges = np.linspace(0, 1, 11)
    r = bc.nc_ece(d, KNOWN, weights=rule, bins=10)
    assert r.value == pytest.approx(slow_binned_ece(d.score, u, edges), abs=1e-12)


def test_bin_average_then_correct_equals_corrected_mean_for_complete_data():
    """Paper C.5: with constant weights and complete data, correcting bin-averaged
    annotations gives the mean corrected label of the bin."""
    d = simulate_toy(2000, "shifted", random_state=1)
    r = bc.nc_ece(d, KNOWN, weights="equal", bins=10)
    s = bc.summarize(d, bins=10)
    mean_ann = s.binary.bin_label_sum / s.binary.bin_answered  # (M, K)
    u_bar = ((mean_ann - A) / (B - A)).mean(axis=1)
    np.testing.assert_allclose(r.bin_mean_target.values[0], u_bar, atol=1e-12)


def test_known_channel_bin_moments_are_unbiased():
    reps, n = 300, 2000
    edges = np.linspace(0, 1, 11)
    moments = np.array(
        [
            bc.nc_ece(
                simulate_toy(n, "shifted", random_state=100 + r, missing=0.2), KNOWN, bins=edges
            ).bin_moments.values[0]
            for r in range(reps)
        ]
    )
    pop = toy_population_bin_moments("shifted", edges)
    se = moments.std(axis=0, ddof=1) / np.sqrt(reps)
    z = np.abs(moments.mean(axis=0) - pop) / se
    assert np.all(z < 4.0), z.round(2)  # 10 bins: P(any |z| > 4) ~ 6e-4


def test_calibrated_predictor_nc_ece_shrinks_with_n():
    def mean_ece(n):
        return np.mean(
            [
                bc.nc_ece(simulate_toy(n, "calibrated", random_state=s), KNOWN).value
                for s in range(40)
            ]
        )

    small, large = mean_ece(1000), mean_ece(16000)
    # the error is a sum of |N(0, v/n)|-like terms, so it shrinks like n^(-1/2): a factor 4 here
    assert large < small / 2.5


def test_per_draw_vectorisation_equals_loop():
    rng = np.random.default_rng(3)
    a = np.clip(A + rng.normal(0, 0.02, (50, 3)), 0.01, 0.4)
    b = np.clip(B + rng.normal(0, 0.02, (50, 3)), 0.6, 0.99)
    post = ChannelFit.from_draws(
        a,
        b,
        np.full((50, 1), 0.5),
        annotators=KNOWN.annotators,
        groups=["all"],
        group_counts=[1],
        method="test",
    )
    d = simulate_toy(3000, "nonlinear", random_state=4, missing=0.1)
    r = bc.nc_ece(d, post, weights="inverse_variance")
    loop = [
        bc.nc_ece(d, post.select_draws([s]), weights="inverse_variance").value for s in range(50)
    ]
    np.testing.assert_allclose(r.ece.values, loop, atol=1e-13)


def test_weights_sum_to_one_and_iv_closed_form():
    ch = ChannelFit.known([0.1, 0.2, 0.3], [0.9, 0.7, 0.95], mu=0.3)
    for rule in ("equal", "gap", "squared_gap", "inverse_variance", "shrunk_inverse_variance"):
        w = annotator_weights(ch, rule).values
        assert w.sum() == pytest.approx(1.0, abs=1e-14) and (w > 0).all()
    a, b, mu = np.array([0.1, 0.2, 0.3]), np.array([0.9, 0.7, 0.95]), 0.3
    v = ((1 - mu) * a * (1 - a) + mu * b * (1 - b)) / (b - a) ** 2
    np.testing.assert_allclose(
        annotator_weights(ch, "inverse_variance").values[0], (1 / v) / (1 / v).sum(), rtol=1e-12
    )
    shr = annotator_weights(ch, "shrunk_inverse_variance", lam=0.25).values[0]
    np.testing.assert_allclose(shr, 0.75 * (1 / v) / (1 / v).sum() + 0.25 / 3, rtol=1e-12)


def test_iv_weights_minimise_corrected_label_variance():
    """Lemma 2: residual variance sum alpha_j^2 v_j is smallest at the IV weights."""
    rng = np.random.default_rng(5)
    z = rng.random(40000)
    y = (rng.random(z.size) < 0.3).astype(int)
    a, b = np.array([0.1, 0.25, 0.05]), np.array([0.9, 0.7, 0.6])
    d = simulate_flip_data(z, y, a, b, random_state=rng)
    ch = ChannelFit.known(a, b, mu=0.3)
    var = {}
    for rule in ("equal", "gap", "squared_gap", "inverse_variance"):
        w = annotator_weights(ch, rule).values[0]
        var[rule] = np.var(slow_corrected_labels(d, a, b, w) - y)
    assert var["inverse_variance"] == min(var.values())


def test_vote_errors_and_tie_rule():
    d = bc.Annotations.from_arrays([0.2, 0.8], [[1, 0], [1, 1]])
    r_neg = bc.majority_vote_ece(d, bins=1)
    r_half = bc.majority_vote_ece(d, bins=1, tie="half")
    r_pos = bc.majority_vote_ece(d, bins=1, tie="positive")
    assert r_neg.value == pytest.approx(abs((0 + 1) / 2 - 0.5))
    assert r_half.value == pytest.approx(abs((0.5 + 1) / 2 - 0.5))
    assert r_pos.value == pytest.approx(abs((1 + 1) / 2 - 0.5))
    assert bc.soft_vote_ece(d, bins=1).value == pytest.approx(abs((0.5 + 1) / 2 - 0.5))
    with pytest.raises(ConfigError, match="tie"):
        bc.majority_vote_ece(d, bins=1, tie="coin")


def test_oracle_matches_direct_and_needs_truth():
    d = simulate_toy(5000, "shifted", random_state=6)
    edges = np.linspace(0, 1, 11)
    assert bc.oracle_ece(d).value == pytest.approx(
        slow_binned_ece(d.score, d.truth.astype(float), edges), abs=1e-12
    )
    with pytest.raises(DataError, match="truth"):
        bc.oracle_ece(bc.Annotations.from_arrays(d.score, d.labels))


def test_sample_modes():
    d = simulate_toy(6000, "nonlinear", random_state=7)
    split = bc.estimate_nc_ece(d, mode="split", fraction=0.5, shuffle=False)
    assert split.n == 3000 and split.info["n_channel"] == 3000
    reuse = bc.estimate_nc_ece(d, mode="reuse")
    cf = bc.estimate_nc_ece(d, mode="crossfit", folds=5)
    assert cf.n == 6000 and len(cf.info["channel_fits"]) == 5
    # cross-fitting pools signed moments: the pooled moment of a bin is the n_k/n-weighted average
    assert cf.bin_moments.sizes["bin"] == 10
    assert abs(reuse.value - cf.value) < 0.03
    with pytest.raises(ConfigError, match="at least 2 folds"):
        bc.estimate_nc_ece(d, mode="crossfit", folds=1)
    with pytest.raises(ConfigError, match="mode"):
        bc.estimate_nc_ece(d, mode="bootstrap")
    with pytest.raises(ConfigError, match="fraction"):
        bc.estimate_nc_ece(d, mode="split", fraction=1.0)


def test_crossfit_equals_manual_pooling():
    d = simulate_toy(3000, "shifted", random_state=8)
    cf = bc.estimate_nc_ece(d, mode="crossfit", folds=3, shuffle=False)
    parts = np.array_split(np.arange(3000), 3)
    pooled = 0
    for k, p in enumerate(parts):
        rest = np.concatenate([q for j, q in enumerate(parts) if j != k])
        fit = bc.fit_channels(d.subset(rest), "score_bin_em", groups=5)
        pooled = pooled + bc.nc_ece(d.subset(p), fit).bin_moments.values[0] * len(p) / 3000
    assert cf.value == pytest.approx(np.abs(pooled).sum(), abs=1e-9)


def test_evaluate_recalibrated_bins_on_g():
    d = simulate_toy(4000, "shifted", random_state=9)
    g = lambda z: np.clip(z * 0.8 + 0.1, 0, 1)  # noqa: E731
    r = bc.evaluate_recalibrated(g, d, KNOWN, bins=10)
    direct = bc.nc_ece(d.with_score(g(d.score)), KNOWN, bins=10)
    assert r.value == direct.value
    assert float(r.bin_count.values[0]) == 0  # g(Z) >= 0.1: the first bin on g(Z) is empty


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda d: bc.nc_ece(d, KNOWN, bins=[0.1, 0.5, 1.0]), "cover"),
        (lambda d: bc.nc_ece(d, ChannelFit.known([0.1, 0.5, 0.2], [0.9, 0.5, 0.8])), "gap"),
        (lambda d: bc.nc_ece(d, ChannelFit.known([0.1, 0.6, 0.2], [0.9, 0.5, 0.8])), "gap"),
        (lambda d: bc.nc_ece(d, KNOWN, weights=[0.5, 0.4, 0.2]), "sum to one"),
        (lambda d: bc.nc_ece(d, KNOWN, weights=[0.5, 0.5]), "shape"),
        (lambda d: bc.nc_ece(d, ChannelFit.known([0.1, 0.2], [0.9, 0.8])), "must match"),
        (
            lambda d: bc.nc_ece(
                d, ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN), annotators=["x", "y", "z"])
            ),
            "must match",
        ),
        (lambda d: bc.nc_ece(d, KNOWN, weights="optimal"), "unknown weight rule"),
        (lambda d: bc.nc_ece(d, KNOWN, weights="shrunk_inverse_variance", lam=1.5), "lam"),
        (lambda d: bc.nc_ece(bc.summarize(d), KNOWN, bins=5), "bins are fixed"),
        (lambda d: bc.nc_ece(d, "channels"), "ChannelFit"),
        (lambda d: bc.nc_ece(d.score, KNOWN), "Annotations"),
    ],
)
def test_bad_inputs(make, match):
    d = simulate_toy(300, random_state=10)
    with pytest.raises((DataError, ConfigError), match=match):
        make(d)


def test_empty_evaluation_set_refused():
    d = bc.Annotations.from_arrays([0.1, 0.2], [[np.nan, np.nan, np.nan], [np.nan, np.nan, 1]])
    sub = d.subset([0])
    with pytest.raises(DataError, match="no annotated items"):
        bc.nc_ece(sub, KNOWN)
    with pytest.raises(DataError, match="no items"):
        d.subset(np.zeros(2, bool))
