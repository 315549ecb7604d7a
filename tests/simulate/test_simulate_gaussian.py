"""Gaussian recalibration setting (App. G.2): the true curve by Bayes' rule, Monte-Carlo checks."""

import numpy as np
import pytest
from scipy import special, stats

from bayescal.errors import ConfigError
from bayescal.simulate import GAUSSIAN_FN, GAUSSIAN_FP, gaussian_true_curve, simulate_gaussian

N_MC = 10**6


def within_4se(values, target):
    values = np.asarray(values, dtype=np.float64)
    se = values.std(ddof=1) / np.sqrt(values.size)
    return abs(values.mean() - target) <= 4 * se, (values.mean(), target, se)


@pytest.fixture(scope="module")
def data():
    return simulate_gaussian(N_MC, random_state=20261129)


def test_true_curve_is_bayes_rule_on_the_densities():
    z = np.concatenate([special.expit(np.linspace(-12, 12, 4001)), [0.5]])
    x = 0.3 - special.logit(z)
    pos = 0.5 * stats.norm.pdf(x, loc=-1, scale=1)  # P(Y=1) p(x | Y=1)
    neg = 0.5 * stats.norm.pdf(x, loc=1, scale=1)
    np.testing.assert_allclose(gaussian_true_curve(z), pos / (pos + neg), rtol=1e-12, atol=1e-300)
    assert gaussian_true_curve(0.0) == 0.0 and gaussian_true_curve(1.0) == 1.0


def test_class_balance_and_class_conditional_inputs(data):
    y = data.truth.astype(bool)
    ok, info = within_4se(y, 0.5)
    assert ok, info
    x = 0.3 - special.logit(data.score)
    for cls, mean in ((True, -1.0), (False, 1.0)):
        ok, info = within_4se(x[y == cls], mean)
        assert ok, (cls, info)
        assert stats.kstest(x[y == cls][:100_000], stats.norm(loc=mean).cdf).pvalue > 1e-4


def test_clean_labels_follow_the_true_curve(data):
    z, y = data.score, data.truth
    m = gaussian_true_curve(z)
    for weight in (np.ones_like(z), z, z < 0.3):
        ok, info = within_4se((y - m) * weight, 0.0)
        assert ok, info


def test_annotator_rates(data):
    labels, y = data.labels, data.truth.astype(bool)
    assert data.annotators == ["a1", "a2"]
    for j, (fp, fn) in enumerate(zip(GAUSSIAN_FP, GAUSSIAN_FN)):
        ok, info = within_4se(labels[~y, j], fp)
        assert ok, (j, info)
        ok, info = within_4se(labels[y, j], 1 - fn)
        assert ok, (j, info)


def test_reproducible():
    one = simulate_gaussian(1000, random_state=9, missing=0.1)
    two = simulate_gaussian(1000, random_state=np.random.default_rng(9), missing=0.1)
    np.testing.assert_array_equal(one.labels, two.labels)
    np.testing.assert_array_equal(one.score, two.score)
    assert np.isnan(one.labels).any()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n must be a positive int"),
        ({"n": "100"}, "n must be a positive int"),
        ({"fp": (0.05, -0.1)}, r"fp\[1\] = -0.1 is not a probability"),
        ({"fn": (0.25,)}, "fn has 1 entries but there are 2 annotators"),
        ({"fp": ()}, "fp is empty"),
        ({"missing": (0.1, 0.1, 0.1)}, "missing has 3 entries but there are 2"),
    ],
)
def test_bad_arguments(kwargs, match):
    args = {"n": 10, "random_state": 0} | kwargs
    with pytest.raises(ConfigError, match=match):
        simulate_gaussian(args.pop("n"), **args)
