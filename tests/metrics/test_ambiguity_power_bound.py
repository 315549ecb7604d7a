"""The population ceiling on the noise-or-ambiguity check's power (bench/evidence_bound.py).

The exact pattern laws against their limits and closed forms, the closest-noise-model EM on a
table that is itself a noise model, the power formulas at their edges, and the ordering the
document reports: three answers per item leave far less to detect than eight.
"""

import numpy as np
import pytest
from scipy.stats import chi2

from bayescal.bench.evidence_bound import (
    BOUND_CELLS,
    all_patterns,
    any_test_power_cap,
    binary_kl,
    bound_view,
    boundary_pattern_probs,
    closest_noise_model,
    degrees_of_freedom,
    dirichlet_pattern_probs,
    glrt_items_for_power,
    glrt_power,
    neyman_pearson,
    pattern_table,
    simulator_check,
)
from bayescal.simulate.multiclass import default_confusions

CELLS = {c.name: c for c in BOUND_CELLS}
JJ = np.arange(2)[:, None]  # annotator index of a K = 2 gather


def product_law(confusion, states):
    """``P(s | y) = prod_j T_j[y, s_j]``, shape (C, P)."""
    k = confusion.shape[0]
    return np.prod(confusion[np.arange(k)[:, None], :, states.T].transpose(2, 0, 1), axis=1)


def test_pattern_laws_sum_to_one_and_reach_their_noise_limits():
    t = default_confusions(3, 4, random_state=3)
    states = all_patterns(4, 3)
    assert states.shape == (64, 3) and len({tuple(s) for s in states}) == 64
    noise = product_law(t, states)
    np.testing.assert_allclose(noise.sum(axis=1), 1.0, atol=1e-12)
    # boundary items with share 0 are the noise model; huge concentration: answers from T[y]
    np.testing.assert_allclose(boundary_pattern_probs(t, 0.0, (2, 2), states), noise, atol=1e-15)
    rows = t.mean(axis=0)
    limit = product_law(np.stack([rows] * 3), states)
    # relative error about 3 (1 / T[y, a] - 1) / concentration in the all-equal patterns
    np.testing.assert_allclose(dirichlet_pattern_probs(rows, 1e6, states), limit, rtol=1e-3)
    for probs in (
        dirichlet_pattern_probs(rows, 5.0, states),
        boundary_pattern_probs(t, 0.5, (2, 2), states),
    ):
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)


def test_dirichlet_patterns_are_the_dirichlet_moments():
    """``E[pi_a pi_b pi_c]`` of ``Dirichlet(alpha)``: rising factorials over ``alpha_0``."""
    rows = default_confusions(1, 4, random_state=2)[0]
    states = all_patterns(4, 3)
    probs = dirichlet_pattern_probs(rows, 5.0, states)
    alpha = 5.0 * rows[1]
    norm = 5.0 * 6.0 * 7.0
    code = {tuple(s): i for i, s in enumerate(states.tolist())}
    a0, a1, a2 = alpha[0], alpha[1], alpha[2]
    assert probs[1, code[(0, 1, 2)]] == pytest.approx(a0 * a1 * a2 / norm, rel=1e-12)
    assert probs[1, code[(1, 0, 1)]] == pytest.approx(a1 * (a1 + 1) * a0 / norm, rel=1e-12)
    assert probs[1, code[(3, 3, 3)]] == pytest.approx(
        alpha[3] * (alpha[3] + 1) * (alpha[3] + 2) / norm, rel=1e-12
    )


def test_boundary_quadrature_matches_the_beta_moments():
    """K = 2: ``E[(l u1 + (1-l) v1)(l u2 + (1-l) v2)]`` from ``E[l^2]``, ``E[l (1-l)]``."""
    a, b, share, c = 2.0, 3.0, 0.4, 3
    t = default_confusions(2, c, random_state=5)
    states = all_patterns(c, 2)
    m2 = a * (a + 1) / ((a + b) * (a + b + 1))
    m11 = a * b / ((a + b) * (a + b + 1))
    m02 = b * (b + 1) / ((a + b) * (a + b + 1))
    want = np.zeros((c, states.shape[0]))
    for y in range(c):
        u = t[:, y][JJ, states.T]  # (2, P): T_j[y, s_j]
        mixed = sum(
            m2 * u[0] * u[1] + m11 * (u[0] * v[1] + v[0] * u[1]) + m02 * v[0] * v[1]
            for v in (t[:, o][JJ, states.T] for o in range(c) if o != y)
        )
        want[y] = (1 - share) * u[0] * u[1] + share * mixed / (c - 1)
    np.testing.assert_allclose(boundary_pattern_probs(t, share, (a, b), states), want, atol=1e-14)


def test_em_finds_a_noise_table_at_zero_divergence():
    t = default_confusions(3, 3, random_state=1)
    states = all_patterns(3, 3)
    rho = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])
    table = np.array([0.6, 0.4])[:, None] * (rho @ product_law(t, states))
    fit = closest_noise_model(table, states, 3, n_starts=5, random_state=0)
    assert fit["kl"] < 1e-10 and fit["start_kl"].min() < 1e-10
    np.testing.assert_allclose(np.exp(fit["log_q"]), table, atol=1e-6)
    np.testing.assert_allclose(fit["confusion"], t, atol=1e-4)  # C = 3: oriented, identified
    np_test = neyman_pearson(table, fit["log_q"], 1000)
    assert np_test["power"] < 0.02


def test_power_formulas_at_their_edges():
    assert degrees_of_freedom(4, 3) == 63 - 39 and degrees_of_freedom(2, 3) == 0
    assert degrees_of_freedom(4, 3, 4) == 4 * 63 - 36 - 12
    assert glrt_power(0.0, 24, 1000) == pytest.approx(0.01)
    assert glrt_power(1e-9, 24, 1000) == pytest.approx(0.01, abs=1e-6)
    n80 = glrt_items_for_power(1e-3, 24)
    assert glrt_power(1e-3, 24, n80) == pytest.approx(0.8, abs=1e-8)
    # one degree of freedom, noncentrality 2 n KL: the textbook (z_alpha + z_beta)^2 rule
    assert glrt_items_for_power(1e-3, 1) == pytest.approx(
        (chi2.ppf(0.99, 1) ** 0.5 + 0.8416212335729143) ** 2 / 2e-3, rel=1e-3
    )
    assert any_test_power_cap(0.0) == pytest.approx(0.01)
    assert any_test_power_cap(np.log(100.0)) == 1.0  # kl(1, alpha) = log(1 / alpha)
    cap = any_test_power_cap(0.5)
    assert binary_kl(cap, 0.01) == pytest.approx(0.5) and 0.01 < cap < 1


def test_three_answers_leave_far_less_to_detect_than_eight():
    k3 = bound_view(CELLS["dirichlet-20-C4-K3"], "all", n=1000, alpha=0.01, n_starts=3, seed=0)
    k8 = bound_view(CELLS["dirichlet-20-C4-K8"], "all", n=1000, alpha=0.01, n_starts=1, seed=0)
    assert k3["df"] == 24 and k8["df"] == 4**8 - 1 - 99
    assert 0 < k3["n_kl"] < 1 and k8["n_kl"] > 30 and k8["n_kl"] > 100 * k3["n_kl"]
    assert k3["np_power"] < 0.1 < 0.99 < k8["np_power"]
    assert k3["any_test_power_cap"] < 0.2 and k8["any_test_power_cap"] == 1.0
    assert k3["np_items_for_power_0.8"] > 20 * k8["np_items_for_power_0.8"]
    # the closest noise model is closer than the one with the design's own margins
    assert k3["kl"] < k3["kl_at_design_margins"]


def test_the_enumeration_is_the_benchs_simulator():
    cell = CELLS["boundary-C4-K3"]
    states, table = pattern_table(cell, "predicted")
    assert table.shape == (4, 64) and table.sum() == pytest.approx(1.0)
    check = simulator_check(cell, table, states, items=20_000, seed=0)
    assert check["cells"] == 256 and check["p_value"] > 1e-3
