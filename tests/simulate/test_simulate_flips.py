"""Class-conditional flip annotators: rates, missingness, exact corner cases, bad inputs."""

import numpy as np
import pytest

from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.simulate import simulate_annotations, simulate_flip_data

A = np.array([0.05, 0.2, 0.35, 0.0])
B = np.array([0.95, 0.7, 0.6, 1.0])
MISSING = np.array([0.0, 0.1, 0.5, 0.3])
N = 400_000


def within_4se(values, target):
    values = np.asarray(values, dtype=np.float64)
    se = values.std(ddof=1) / np.sqrt(values.size)
    return abs(values.mean() - target) <= 4 * se + 1e-15, (values.mean(), target, se)


@pytest.fixture(scope="module")
def flips():
    truth = np.random.default_rng(1).random(N) < 0.3
    labels = simulate_annotations(truth, A, B, random_state=2, missing=MISSING)
    return truth, labels


def test_shape_dtype_values(flips):
    truth, labels = flips
    assert labels.shape == (N, 4) and labels.dtype == np.float32
    answered = ~np.isnan(labels)
    assert set(np.unique(labels[answered])) <= {0.0, 1.0}


def test_channel_rates_within_4se(flips):
    truth, labels = flips
    for j in range(4):
        answered = ~np.isnan(labels[:, j])
        ok, info = within_4se(labels[~truth & answered, j], A[j])
        assert ok, (j, "a", info)
        ok, info = within_4se(labels[truth & answered, j], B[j])
        assert ok, (j, "b", info)


def test_missingness_rate_and_independence_of_y(flips):
    truth, labels = flips
    missing = np.isnan(labels)
    for j in range(4):
        for cls in (True, False):
            ok, info = within_4se(missing[truth == cls, j], MISSING[j])
            assert ok, (j, cls, info)
    # Independent across annotators: joint missing rate of 2 and 3 is the product.
    ok, info = within_4se(missing[:, 2] & missing[:, 3], MISSING[2] * MISSING[3])
    assert ok, info


def test_answers_independent_given_y(flips):
    truth, labels = flips
    both = ~np.isnan(labels[:, 1]) & ~np.isnan(labels[:, 2])
    for cls, rates in ((False, A), (True, B)):
        rows = both & (truth == cls)
        ok, info = within_4se(labels[rows, 1] * labels[rows, 2], rates[1] * rates[2])
        assert ok, (cls, info)


def test_perfect_and_inverted_annotators_are_exact():
    truth = np.array([0, 1, 1, 0, 1] * 200)
    labels = simulate_annotations(truth, [0.0, 1.0], [1.0, 0.0], random_state=0)
    np.testing.assert_array_equal(labels[:, 0], truth)
    np.testing.assert_array_equal(labels[:, 1], 1 - truth)
    gone = simulate_annotations(truth, [0.1], [0.9], random_state=0, missing=1.0)
    assert np.isnan(gone).all()


def test_truth_may_be_bool_int_or_float():
    base = simulate_annotations([0, 1, 1], [0.2], [0.8], random_state=4)
    for truth in (
        [False, True, True],
        np.array([0.0, 1.0, 1.0]),
        np.array([0, 1, 1], dtype=np.int8),
    ):
        np.testing.assert_array_equal(
            simulate_annotations(truth, [0.2], [0.8], random_state=4), base
        )


def test_seed_reproduces_and_generator_advances():
    truth = np.arange(5000) % 2
    first = simulate_annotations(truth, A, B, random_state=7, missing=0.2)
    np.testing.assert_array_equal(
        first, simulate_annotations(truth, A, B, random_state=7, missing=0.2)
    )
    rng = np.random.default_rng(7)
    one = simulate_annotations(truth, A, B, random_state=rng)
    two = simulate_annotations(truth, A, B, random_state=rng)
    assert not np.array_equal(one, two)


def test_flip_data_container():
    score = np.linspace(0, 1, 1000)
    truth = (score > 0.5).astype(int)
    data = simulate_flip_data(
        score, truth, A, B, random_state=3, missing=MISSING, annotators=list("pqrs")
    )
    assert isinstance(data, Annotations)
    assert data.annotators == ["p", "q", "r", "s"]
    np.testing.assert_array_equal(data.score, score)
    np.testing.assert_array_equal(data.truth, truth)
    np.testing.assert_array_equal(
        data.labels, simulate_annotations(truth, A, B, random_state=3, missing=MISSING)
    )
    default = simulate_flip_data(score, truth, A[:3], B[:3], random_state=3)
    assert default.annotators == ["a1", "a2", "a3"]


@pytest.mark.parametrize(
    "truth, a, b, missing, error, match",
    [
        ([[0, 1]], [0.1], [0.9], 0.0, DataError, "truth must be one-dimensional"),
        ([], [0.1], [0.9], 0.0, DataError, "truth is empty"),
        ([0, 2, 1], [0.1], [0.9], 0.0, DataError, "item 1 has 2.0"),
        ([0, np.nan], [0.1], [0.9], 0.0, DataError, "truth must hold only 0 and 1"),
        (["0", "1"], [0.1], [0.9], 0.0, DataError, "truth must hold 0/1 values"),
        ([0, 1], [0.1, 0.2], [0.9], 0.0, ConfigError, "b has 1 entries but there are 2 annotators"),
        ([0, 1], [-0.1], [0.9], 0.0, ConfigError, r"a\[0\] = -0.1 is not a probability"),
        ([0, 1], [0.1], [np.nan], 0.0, ConfigError, r"b\[0\] = nan is not a probability"),
        ([0, 1], 0.1, [0.9], 0.0, ConfigError, "a must be one-dimensional"),
        ([0, 1], ["x"], [0.9], 0.0, ConfigError, "a must be a sequence of probabilities"),
        ([0, 1], [0.1], [0.9], -0.2, ConfigError, "missing.* is not a probability"),
        ([0, 1], [0.1], [0.9], [0.1, 0.1], ConfigError, "missing has 2 entries but there are 1"),
        ([0, 1], [0.1], [0.9], "some", ConfigError, "missing must be a probability"),
    ],
)
def test_bad_inputs(truth, a, b, missing, error, match):
    with pytest.raises(error, match=match):
        simulate_annotations(truth, a, b, random_state=0, missing=missing)


def test_score_and_truth_shapes_must_match():
    with pytest.raises(DataError, match=r"score has shape \(3,\) but truth has shape \(2,\)"):
        simulate_flip_data([0.1, 0.2, 0.3], [0, 1], [0.1], [0.9], random_state=0)


def test_bad_scores_are_refused_by_the_container():
    with pytest.raises(DataError):
        simulate_flip_data([0.1, 1.5], [0, 1], [0.1], [0.9], random_state=0)
