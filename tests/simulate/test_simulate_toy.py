"""Toy study (Sec. 6.1): exact population errors, Monte-Carlo agreement, argument checks."""

import numpy as np
import pytest
from scipy import integrate, special, stats

from bayescal.errors import ConfigError
from bayescal.simulate import (
    TOY_CONDITIONS,
    TOY_FN,
    TOY_FP,
    simulate_toy,
    toy_curve,
    toy_population_bin_moments,
    toy_population_binned_ece,
    toy_population_ece,
    toy_score,
)

# Appendix G.2 quotes these to 11 decimals; quadrature must reproduce them to 1e-9.
PAPER_ECE = {"calibrated": 0.0, "shifted": 0.08962637465, "nonlinear": 0.08328889713}
N_MC = 10**6


@pytest.fixture(scope="module", params=TOY_CONDITIONS)
def toy(request):
    """One large seeded sample per condition, shared by the Monte-Carlo checks."""
    condition = request.param
    data = simulate_toy(N_MC, condition, random_state=20261129 + TOY_CONDITIONS.index(condition))
    return condition, data


def within_4se(values, target):
    values = np.asarray(values, dtype=np.float64)
    se = values.std(ddof=1) / np.sqrt(values.size)
    return abs(values.mean() - target) <= 4 * se + 1e-15, (values.mean(), target, se)


@pytest.mark.parametrize("condition", TOY_CONDITIONS)
def test_population_ece_matches_paper(condition):
    assert toy_population_ece(condition) == pytest.approx(PAPER_ECE[condition], abs=1e-9)


def direct_signed_mean(condition):
    """E[m(Z) - Z] by one plain quad call on a truncated range (independent of the module's
    splits)."""
    m = toy_curve(condition)

    def integrand(x):
        z = toy_score(x)
        return (m(z) - z) * 0.5 * (stats.norm.pdf(x, -1, 1) + stats.norm.pdf(x, 1, 1))

    value, _ = integrate.quad(integrand, -15, 15, points=[-4.2, 0.3, 4.8], limit=500, epsabs=1e-13)
    return value


@pytest.mark.parametrize("condition", TOY_CONDITIONS)
@pytest.mark.parametrize("edges", [1, 10, [0.0, 0.013, 0.5, 0.77, 0.9886, 1.0]])
def test_bin_moments_sum_to_signed_mean(condition, edges):
    moments = toy_population_bin_moments(condition, edges)
    assert moments.shape == (np.size(edges) - 1 if np.ndim(edges) else edges,)
    assert moments.sum() == pytest.approx(direct_signed_mean(condition), abs=1e-10)


@pytest.mark.parametrize("condition", TOY_CONDITIONS)
def test_binned_ece_is_below_ece_and_converges_to_it(condition):
    ece = toy_population_ece(condition)
    coarse = toy_population_binned_ece(condition, 10)
    fine = toy_population_binned_ece(condition, 200)
    one_bin = toy_population_binned_ece(condition, 1)
    assert one_bin == pytest.approx(abs(direct_signed_mean(condition)), abs=1e-10)
    # Jensen: |E[d 1_B]| <= E[|d| 1_B] bin by bin; finer bins lose less.
    assert one_bin <= coarse + 1e-12 <= fine + 2e-12 <= ece + 3e-12
    # Only bins straddling a sign change of m(z) - z lose anything, and 200 bins make them tiny.
    assert ece - fine < 1e-4


def test_calibrated_is_exactly_zero():
    assert toy_population_ece("calibrated") == 0.0
    np.testing.assert_array_equal(toy_population_bin_moments("calibrated", 10), np.zeros(10))


def test_curves():
    z = np.linspace(0, 1, 2001)
    np.testing.assert_array_equal(toy_curve("calibrated")(z), z)
    shifted = toy_curve("shifted")
    fixed = special.expit(-0.3 / 0.35)  # 0.65 t - 0.3 = t
    assert shifted(fixed) == pytest.approx(fixed, abs=1e-15)
    nonlinear = toy_curve("nonlinear")(z)
    assert nonlinear.min() == 0.02 and nonlinear.max() == 0.98
    assert np.all(np.diff(nonlinear) >= 0)
    np.testing.assert_allclose(
        nonlinear[1:-1] + nonlinear[-2:0:-1], 1.0, atol=1e-14
    )  # m(1-z) = 1 - m(z)


def test_scores_follow_the_mixture(toy):
    _, data = toy
    x = 0.3 - special.logit(data.score)
    # Mixture of N(-1, 1) and N(1, 1): mean 0, variance 2; KS against the exact CDF.
    cdf = lambda v: 0.5 * (stats.norm.cdf(v, -1, 1) + stats.norm.cdf(v, 1, 1))  # noqa: E731
    assert stats.kstest(x[:200_000], cdf).pvalue > 1e-4
    ok, info = within_4se(x, 0.0)
    assert ok, info


def test_empirical_ece_matches_population(toy):
    condition, data = toy
    z = data.score
    ok, info = within_4se(np.abs(toy_curve(condition)(z) - z), toy_population_ece(condition))
    if condition == "calibrated":
        assert info[0] == 0.0
    else:
        assert ok, info


def test_empirical_bin_moments_match_population(toy):
    condition, data = toy
    z = data.score
    edges = np.linspace(0, 1, 11)
    cells = np.clip(np.searchsorted(edges, z, "right") - 1, 0, 9)
    residual = toy_curve(condition)(z) - z
    population = toy_population_bin_moments(condition, edges)
    for cell in range(10):
        ok, info = within_4se(residual * (cells == cell), population[cell])
        assert ok or condition == "calibrated", (cell, info)


def test_clean_labels_follow_the_curve(toy):
    condition, data = toy
    z = data.score
    m = toy_curve(condition)(z)
    ok, info = within_4se(data.truth - m, 0.0)
    assert ok, info
    ok, info = within_4se((data.truth - m) * (z > 0.5), 0.0)  # a score-dependent check too
    assert ok, info


def test_annotator_rates(toy):
    _, data = toy
    labels, y = data.labels, data.truth.astype(bool)
    assert data.annotators == ["a1", "a2", "a3"]
    assert not np.isnan(labels).any()
    for j, (fp, fn) in enumerate(zip(TOY_FP, TOY_FN)):
        ok, info = within_4se(labels[~y, j], fp)
        assert ok, (j, info)
        ok, info = within_4se(labels[y, j], 1 - fn)
        assert ok, (j, info)


def test_reproducible_and_seed_sensitive():
    one = simulate_toy(2000, "nonlinear", random_state=5)
    two = simulate_toy(2000, "nonlinear", random_state=np.random.default_rng(5))
    other = simulate_toy(2000, "nonlinear", random_state=6)
    np.testing.assert_array_equal(one.score, two.score)
    np.testing.assert_array_equal(one.labels, two.labels)
    np.testing.assert_array_equal(one.truth, two.truth)
    assert not np.array_equal(one.score, other.score)


def test_missingness_and_custom_channels():
    data = simulate_toy(
        200_000,
        "shifted",
        random_state=3,
        fp=(0.1, 0.2),
        fn=(0.3, 0.0),
        missing=(0.0, 0.25),
        annotators=["x", "y"],
    )
    assert data.annotators == ["x", "y"]
    missing = np.isnan(data.labels)
    assert not missing[:, 0].any()
    ok, info = within_4se(missing[:, 1], 0.25)
    assert ok, info
    y = data.truth.astype(bool)
    assert np.all(data.labels[y & ~missing[:, 1], 1] == 1.0)  # fn = 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n must be a positive int"),
        ({"n": -5}, "n must be a positive int"),
        ({"n": 10.5}, "n must be a positive int"),
        ({"n": True}, "n must be a positive int"),
        ({"condition": "wiggly"}, "unknown toy condition 'wiggly'"),
        ({"fp": (0.1, 1.2, 0.1)}, r"fp\[1\] = 1.2 is not a probability"),
        ({"fn": (0.1, 0.1)}, "fn has 2 entries but there are 3 annotators"),
        ({"fp": [[0.1, 0.2, 0.3]]}, "fp must be one-dimensional"),
        ({"missing": 1.5}, "missing.* is not a probability"),
        ({"missing": (0.1, 0.2)}, "missing has 2 entries but there are 3"),
        ({"random_state": "seed"}, "random_state must be"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"n": 10, "condition": "calibrated", "random_state": 0} | kwargs
    with pytest.raises(ConfigError, match=match):
        simulate_toy(args.pop("n"), args.pop("condition"), **args)


@pytest.mark.parametrize(
    "edges, match",
    [
        (0, "positive int"),
        (2.5, "positive int"),
        ([0.0, 0.5, 0.9], "start at 0 and end at 1"),
        ([0.0, 0.6, 0.4, 1.0], "strictly increasing"),
        ([[0.0, 1.0]], "1-D array"),
        (True, "positive int"),
        ([0.0, np.nan, 1.0], "NaN"),
        ("ten", "must be"),
    ],
)
def test_bad_edges(edges, match):
    with pytest.raises(ConfigError, match=match):
        toy_population_bin_moments("shifted", edges)


def test_unknown_condition_everywhere():
    for func in (toy_curve, toy_population_ece, toy_population_binned_ece):
        with pytest.raises(ConfigError, match="choose one of calibrated, shifted, nonlinear"):
            func("Shifted")
