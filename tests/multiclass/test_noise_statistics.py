"""The noise-or-ambiguity statistics against slow, obvious implementations (loops over items)."""

import itertools

import numpy as np
import pytest

from bayescal.metrics.noise_or_ambiguity import _discrepancy, _Params, _Rows, pair_deviance


def _random_case(rng, m=60, k=4, c=3, n_groups=2, missing=0.3):
    states = rng.integers(0, c, size=(m, k))
    states[rng.random((m, k)) < missing] = c
    label = rng.integers(0, n_groups, size=m)
    weight = rng.integers(1, 5, size=m).astype(float)
    t = rng.dirichlet(np.ones(c) + 4 * np.eye(c)[0], size=(k, c))
    t = np.stack([np.stack([np.roll(t[j, y], y) for y in range(c)]) for j in range(k)])
    rho = rng.dirichlet(np.ones(c), size=n_groups)
    return states, label, weight, t, rho


def _slow_pair_deviance(states, label, weight, t, rho):
    k, c, _ = t.shape
    out = np.zeros((k, k))
    for j, kk in itertools.combinations(range(k), 2):
        obs, exp = np.zeros(c + 1), np.zeros(c + 1)
        for s, g, w in zip(states, label, weight):
            if s[j] == c or s[kk] == c:
                continue
            obs[s[j] if s[j] == s[kk] else c] += w
            for a in range(c):
                p = sum(rho[g, y] * t[j, y, a] * t[kk, y, a] for y in range(c))
                exp[a] += w * p
                exp[c] -= w * p
            exp[c] += w
        out[j, kk] = 2 * sum(o * np.log(o / e) for o, e in zip(obs, exp) if o > 0)
    return out


@pytest.mark.parametrize("seed, c, k", [(0, 3, 4), (1, 2, 3), (2, 5, 6)])
def test_pair_deviance_matches_the_slow_version(seed, c, k):
    rng = np.random.default_rng(seed)
    states, label, weight, t, rho = _random_case(rng, k=k, c=c)
    fast = pair_deviance(states, label, weight, t, rho)
    np.testing.assert_allclose(fast, _slow_pair_deviance(states, label, weight, t, rho), atol=1e-9)
    # rows per item or aggregated rows give the same tables
    items = np.repeat(np.arange(len(weight)), weight.astype(int))
    per_item = pair_deviance(states[items], label[items], np.ones(items.size), t, rho)
    np.testing.assert_allclose(per_item, fast, atol=1e-9)


def test_pair_deviance_with_empty_groups_and_rows_of_other_groups():
    """Groups without rows add nothing; rows labelled beyond ``n_groups`` are not counted
    (the per-group loop this replaced skipped both)."""
    rng = np.random.default_rng(7)
    states, label, weight, t, rho = _random_case(rng, k=4, c=3, n_groups=3)
    label = np.where(label == 1, 0, label)  # group 1 empty; group 2 beyond n_groups = 2
    kept = label < rho.shape[0] - 1
    assert 0 < kept.sum() < kept.size
    fast = pair_deviance(states, label, weight, t, rho, n_groups=rho.shape[0] - 1)
    slow = _slow_pair_deviance(states[kept], label[kept], weight[kept], t, rho)
    np.testing.assert_allclose(fast, slow, atol=1e-9)


def test_pair_deviance_is_zero_when_the_tables_equal_their_expectation():
    # two annotators, one group: the four patterns at exactly their expected counts
    t = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.9, 0.1], [0.4, 0.6]]])
    rho = np.array([[0.6, 0.4]])
    states = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    prob = [sum(rho[0, y] * t[0, y, a] * t[1, y, b] for y in range(2)) for a, b in states]
    dev = pair_deviance(states, np.zeros(4, int), 1000 * np.array(prob), t, rho)
    assert abs(dev[0, 1]) < 1e-9


def _slow_class_sums(states, label, weight, t, rho):
    """Dispersion and disagreement sums of the module docstring, item by item."""
    k, c, _ = t.shape
    m = len(weight)
    r = np.zeros((m, c))
    for i in range(m):
        for y in range(c):
            r[i, y] = rho[label[i], y] * np.prod(
                [t[j, y, states[i, j]] for j in range(k) if states[i, j] < c]
            )
        r[i] /= r[i].sum()
    # one M step: answer rates weighted by the responsibilities
    num = np.full((k, c, c), 1e-12)
    for i in range(m):
        for j in range(k):
            if states[i, j] < c:
                num[j, :, states[i, j]] += weight[i] * r[i]
    tm = num / num.sum(axis=2, keepdims=True)
    sums = np.zeros((5, c))
    for i in range(m):
        answered = [j for j in range(k) if states[i, j] < c]
        n = len(answered)
        if n < 2:
            continue
        v = np.bincount(states[i, answered], minlength=c)
        d = 1 - (v * (v - 1)).sum() / (n * (n - 1))
        for y in range(c):
            e = sum(tm[j, y] for j in answered)
            var = sum((tm[j, y] * (1 - tm[j, y])).sum() for j in answered)
            same = np.mean(
                [(t[a, y] * t[b, y]).sum() for a in answered for b in answered if a != b]
            )
            w = weight[i] * r[i, y]
            sums[:, y] += w * np.array([1.0, ((v - e) ** 2).sum(), var, d, 1 - same])
    return sums


@pytest.mark.parametrize("seed, c, k", [(3, 3, 4), (4, 2, 5), (5, 4, 3)])
def test_dispersion_and_disagreement_match_the_slow_version(seed, c, k):
    rng = np.random.default_rng(seed)
    states, label, weight, t, rho = _random_case(rng, k=k, c=c, n_groups=3)
    rows = _Rows(states=states, label=label, weight=weight)
    fast = _discrepancy(rows, _Params(t, rho), np.arange(3), 3, per_item=False)
    np.testing.assert_allclose(
        fast.class_sums, _slow_class_sums(states, label, weight, t, rho), rtol=1e-9, atol=1e-12
    )


def test_disagreement_expectation_is_the_model_mean():
    """Exact mean of d_i under the model (all 3**3 answer patterns of one item), against
    the responsibility-weighted expectation the statistic subtracts: equal, so its excess
    has mean zero under the noise model."""
    t = np.array([[[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.3, 0.6]]] * 3)
    t[1] = t[1][:, [0, 2, 1]][[0, 2, 1]]
    rho = np.array([[0.5, 0.3, 0.2]])
    states = np.array(list(itertools.product(range(3), repeat=3)))
    prob = np.array(
        [
            sum(rho[0, y] * np.prod([t[j, y, s[j]] for j in range(3)]) for y in range(3))
            for s in states
        ]
    )
    rows = _Rows(states=states, label=np.zeros(len(states), int), weight=prob)
    x = _discrepancy(rows, _Params(t, rho), np.zeros(1, int), 1, per_item=False)
    assert x.class_sums[3].sum() == pytest.approx(x.class_sums[4].sum(), rel=1e-12)
