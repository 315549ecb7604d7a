"""The binary model's cells: observed masks completed, memory guards, exact equivalences.

The summary keeps only the observed patterns; the binary model completes every observed
missingness mask with all its answer combinations (replicated data live there), as the
v0.2 dense table did, and falls back to the observed patterns alone above
``MAX_MODEL_CELLS`` (the likelihood is the same; replicated data are then refused).
"""

import itertools

import numpy as np
import pytest

import bayescal.bayes.models as models
from bayescal import Annotations, summarize
from bayescal.bayes.logdensity import ChannelLogDensity, _beta_logp_grad
from bayescal.bayes.models import (
    group_loglik,
    make_spec,
    mask_cells,
    predictive_fits,
    sample_counts,
)
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy


def _dense(k):
    """Every pattern of K annotators (0, 1, 2 = missing) in the order of sum_j s_j 3**j."""
    return np.array([t[::-1] for t in itertools.product(range(3), repeat=k)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masks_are_completed_as_the_dense_selection(seed):
    rng = np.random.default_rng(seed)
    k = 4
    observed = np.unique(rng.integers(0, 3, size=(12, k)), axis=0)
    observed = observed[(observed != 2).any(axis=1)]
    code = observed @ 3 ** np.arange(k)
    observed = observed[np.argsort(code)]
    states, mask_id, position, incomplete = mask_cells(observed)
    assert incomplete is None
    dense = _dense(k)
    seen = {tuple(row != 2) for row in observed}
    want = np.array([row for row in dense if tuple(row != 2) in seen])
    np.testing.assert_array_equal(states, want)
    np.testing.assert_array_equal(states[position], observed)
    # masks numbered in the order of sum_j answered_j 2**j
    bits = (states != 2) @ (1 << np.arange(k))
    np.testing.assert_array_equal(mask_id, np.searchsorted(np.unique(bits), bits))


def _summary(seed=0, missing=0.3, n=400):
    return summarize(simulate_toy(n, "shifted", random_state=seed, missing=missing), groups=3)


def test_above_the_cell_limit_the_observed_patterns_carry_the_same_likelihood(monkeypatch):
    s = _summary(n=60)
    full = make_spec(s)
    monkeypatch.setattr(models, "MAX_MODEL_CELLS", 4)
    small = make_spec(s)
    assert small.states.shape[0] == s.n_patterns < full.states.shape[0]
    assert "keeps the observed patterns only" in small.extra["incomplete"]
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.05, 0.4, (5, 3)), rng.uniform(0.6, 0.95, (5, 3))
    prev = rng.uniform(0.1, 0.9, (5, 3))
    np.testing.assert_allclose(
        group_loglik(small, a, b, prev), group_loglik(full, a, b, prev), rtol=1e-13
    )
    np.testing.assert_array_equal(small.mask_total.max(axis=1), full.mask_total.max(axis=1))
    x = ChannelLogDensity(full).initial_point() + 0.3
    lp_small, g_small = ChannelLogDensity(small)(x)
    lp_full, g_full = ChannelLogDensity(full)(x)
    assert lp_small == pytest.approx(lp_full, rel=1e-13)
    np.testing.assert_allclose(g_small, g_full, rtol=1e-12)
    # replicated data need every answer combination: refused, and the check is skipped
    with pytest.raises(ConfigError, match="needs every answer combination"):
        sample_counts(small, a, b, prev, rng)
    assert predictive_fits(small, 10).startswith("posterior predictive check skipped")
    assert predictive_fits(full, 10) is None


def test_the_kernel_skips_empty_cells_bit_for_bit():
    spec = make_spec(_summary(seed=4, missing=[0.1, 0.5, 0.2], n=60))
    dens = ChannelLogDensity(spec)
    held = dens._args[2].shape[0]
    assert held < spec.states.shape[0]  # the data leave some completed cells empty
    # the same kernel on every completed pattern: cells (pattern-major, the kernel's order)
    # and gold rows index all of them
    s, g = np.nonzero(spec.counts.T)
    gy, gs = np.nonzero(spec.gold)
    full = list(dens._args)
    full[2:8] = (
        np.ascontiguousarray(spec.states, dtype=np.int64),
        g.astype(np.int64),
        s.astype(np.int64),
        spec.counts[g, s].astype(np.float64),
        np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
        np.column_stack([gy, gs, spec.gold[gy, gs]]).astype(np.float64).reshape(-1, 3),
    )
    rng = np.random.default_rng(5)
    for _ in range(10):
        x = rng.normal(0, 1.5, dens.n_dim)
        g1, g2 = np.empty(dens.n_dim), np.empty(dens.n_dim)
        assert _beta_logp_grad(x, g1, *dens._args) == _beta_logp_grad(x, g2, *full)
        np.testing.assert_array_equal(g1, g2)


def test_log_likelihood_in_chunks_equals_one_pass(monkeypatch):
    spec = make_spec(_summary(seed=6))
    rng = np.random.default_rng(7)
    a, b = rng.uniform(0.05, 0.4, (2, 7, 3)), rng.uniform(0.6, 0.95, (2, 7, 3))
    prev = rng.uniform(0.1, 0.9, (2, 7, 3))
    whole = group_loglik(spec, a, b, prev)
    monkeypatch.setattr(models, "LOGLIK_CHUNK_ELEMENTS", 2 * spec.counts.size)
    np.testing.assert_allclose(group_loglik(spec, a, b, prev), whole, rtol=1e-14)


def test_sixteen_annotators_who_all_answer():
    """2**16 cells: the model is built, and the predictive check's budget is stated."""
    rng = np.random.default_rng(8)
    n, k = 300, 16
    z = rng.random(n)
    labels = (rng.random((n, k)) < z[:, None]).astype(float)
    spec = make_spec(summarize(Annotations.from_arrays(z, labels)))
    assert spec.states.shape == (2**16, 16) and "incomplete" not in spec.extra
    assert predictive_fits(spec, 100) is None
    reason = predictive_fits(spec, 2000)
    assert "MAX_PREDICTIVE_ELEMENTS" in reason and "655,360,000" in reason
