"""Orientation helpers (both tracks) and one-line ConfigErrors for EM options."""

import itertools

import numpy as np
import pytest

import bayescal as bc
from bayescal.channels.orientation import (
    diagonal_dominance_failures,
    dominant_diagonal_permutation,
    exchange_binary_labels,
    orient_index,
    relabel_classes,
)
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy


@pytest.fixture(scope="module")
def toy():
    return simulate_toy(600, random_state=3)


@pytest.mark.parametrize(
    "option, value",
    [
        ("tol", "x"),
        ("tol", 0.0),
        ("tol", float("nan")),
        ("max_iter", 2.5),
        ("max_iter", 0),
        ("n_starts", True),
        ("n_starts", 0),
        ("clip", -1e-3),
        ("clip", "1e-6"),
        ("min_gap", 1.0),
        ("orient", 1.5),
        ("orient", None),
        ("orient", "nobody"),
    ],
)
@pytest.mark.parametrize("method", ["score_bin_em", "dawid_skene_em"])
def test_em_options_are_one_line_config_errors(toy, method, option, value):
    with pytest.raises(ConfigError) as err:
        bc.fit_channels(toy, method, **{option: value})
    msg = str(err.value)
    assert "\n" not in msg and option.split("_")[0] in msg


def test_moments_orient_is_checked(toy):
    with pytest.raises(ConfigError, match="orient"):
        bc.fit_channels(toy, "moments", orient=2.0)


def test_use_moment_start_must_be_bool(toy):
    with pytest.raises(ConfigError, match="use_moment_start"):
        bc.fit_channels(toy, "dawid_skene_em", use_moment_start="yes")


def test_orient_index_by_name_and_position():
    names = ["r1", "r2", "r3"]
    assert orient_index(names, "r3") == 2 and orient_index(names, np.int64(1)) == 1
    with pytest.raises(ConfigError, match="out of range"):
        orient_index(names, 3)


def test_binary_exchange_is_the_c2_assignment():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a, b = rng.random(3), rng.random(3)
        if abs(a[0] - b[0]) < 1e-9:
            continue
        t = np.array([[1 - a[0], a[0]], [1 - b[0], b[0]]])
        perm = dominant_diagonal_permutation(t)
        a2, _, _ = exchange_binary_labels(a[None], b[None], np.array([[0.3]]), 0)
        assert (perm.tolist() == [0, 1]) == (a2[0, 0] == a[0])


def test_assignment_maximises_the_diagonal_by_brute_force():
    rng = np.random.default_rng(1)
    for c in (3, 4, 5):
        t = rng.dirichlet(np.ones(c), size=c)
        perm = dominant_diagonal_permutation(t)
        best = max(
            itertools.permutations(range(c)), key=lambda p: sum(t[h, p[h]] for h in range(c))
        )
        assert sum(t[h, perm[h]] for h in range(c)) == pytest.approx(
            sum(t[h, best[h]] for h in range(c)), abs=1e-12
        )


def test_relabelling_recovers_a_permuted_model():
    rng = np.random.default_rng(2)
    c = 4
    truth = np.stack([0.6 * np.eye(c) + 0.4 * rng.dirichlet(np.ones(c), size=c) for _ in range(3)])
    rho = rng.dirichlet(np.ones(c), size=2)
    shuffle = rng.permutation(c)  # latent class h is true class shuffle[h]
    latent_t = truth[:, shuffle, :]
    latent_rho = rho[:, shuffle]
    perm = dominant_diagonal_permutation(latent_t[0])
    np.testing.assert_array_equal(perm, shuffle)
    t2, rho2 = relabel_classes(latent_t, latent_rho, perm)
    np.testing.assert_allclose(t2, truth)
    np.testing.assert_allclose(rho2, rho)
    assert diagonal_dominance_failures(t2[0]) == []
