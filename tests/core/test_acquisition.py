"""Where to annotate next (issue 25 item 4): the expected-reduction formula against brute force.

Brute force 1 (the kernel): enumerate the whole joint of (channel draw, every item's class
[, the new answer]) on a tiny problem, condition on each outcome, and compute the
variance directly. Brute force 2 (the public function): per candidate item and outcome,
reweight the draws by the outcome's likelihood, fix the item, recompute the posterior
variance from per-draw per-item posteriors computed one item at a time.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bayescal as bc
from bayescal.channels import items as items_module
from bayescal.channels.acquisition import (
    expected_reductions,
    rank_annotation_requests,
    rank_annotation_targets,
)
from bayescal.channels.items import item_posteriors
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError
from bayescal.simulate import simulate_toy
from tests.core.test_item_posteriors import _confusions, _simulate

# The formula is exact given the draws, so only float rounding separates the two routes:
# sums of at most a few thousand products of numbers <= 1 agree to ~1e-13 relative.
RTOL = 1e-9


def _joint_variance(weights, values):
    m = np.sum(weights * values) / weights.sum()
    return np.sum(weights * (values - m) ** 2) / weights.sum()


@pytest.mark.parametrize("c", [2, 3])
@pytest.mark.parametrize("reread", [False, True])
def test_kernel_equals_enumerated_joint(c, reread):
    rng = np.random.default_rng(c + 10 * reread)
    n_draws, n = 5, 4
    cell_of_item = np.array([0, 1, 1, 2])  # two items share a cell
    p = rng.dirichlet(np.ones(c), size=(n_draws, 3))
    coef = rng.normal(size=(n, c))
    channel = rng.dirichlet(np.ones(c) * 2, size=(n_draws, c)) if reread else None
    v, red = expected_reductions(p, cell_of_item, coef, channel)
    ys = np.array(list(itertools.product(range(c), repeat=n)))  # (c^n, n)
    f = coef[np.arange(n), ys].sum(axis=1)  # F for each class vector
    # joint weight of (draw, y): (1/D) prod_i p[d, cell(i), y_i]
    w = np.stack([np.prod(p[d][cell_of_item, ys], axis=1) for d in range(n_draws)])
    v_brute = _joint_variance(w, np.broadcast_to(f, w.shape))
    assert v == pytest.approx(v_brute, rel=RTOL)
    for i in range(n):
        after = 0.0
        outcomes = range(c)
        for o in outcomes:
            if reread:  # P(A = o | y_i, draw) = T_d[y_i, o]
                wo = w * channel[:, ys[:, i], o]
            else:
                wo = w * (ys[:, i] == o)
            after += wo.sum() / w.sum() * _joint_variance(wo, np.broadcast_to(f, w.shape))
        assert red[i] == pytest.approx(v_brute - after, rel=RTOL, abs=1e-15)


def _per_draw_posteriors(data, t, pi, groups):
    """(D, n, C) one item, one draw at a time."""
    n, c = data.n_items, data.n_classes
    out = np.zeros((t.shape[0], n, c))
    for d in range(t.shape[0]):
        for i in range(n):
            w = pi[d, groups[i] if pi.shape[1] > 1 else 0].copy()
            for j, a in enumerate(data.labels[i]):
                if not np.isnan(a):
                    w = w * t[d, j, :, int(a)]
            out[d, i] = w / w.sum()
    return out


def _variance(p, coef, weights):
    """Posterior variance of F = sum_i coef_i[Y_i] under draw weights: one item at a time."""
    weights = weights / weights.sum()
    g = np.einsum("dic,ic->di", p, coef)
    within = np.einsum("dic,ic->di", p, coef**2) - g**2
    total = g.sum(axis=1)
    m = np.sum(weights * total)
    return float(np.sum(weights * within.sum(axis=1)) + np.sum(weights * (total - m) ** 2))


@pytest.mark.parametrize("c", [2, 3])
@pytest.mark.parametrize("action", ["gold", "reread"])
def test_public_function_equals_revealing_each_outcome(c, action):
    t = _confusions(3, c, np.array([0.85, 0.7, 0.6]))
    data, _ = _simulate(40, c, t, missing=0.3, gold_share=0.1, seed=c)
    s = bc.summarize(data, bins=4)
    rng = np.random.default_rng(3)
    n_draws = 6
    tt = t[None] * rng.uniform(0.7, 1.3, size=(n_draws, *t.shape))
    tt /= tt.sum(axis=-1, keepdims=True)
    prev = rng.dirichlet(np.ones(c) * 5, size=(n_draws, s.n_groups))
    fit = ChannelFit.from_confusion(
        tt,
        prev,
        annotators=data.annotators,
        classes=data.classes,
        groups=[str(g) for g in s.groups],
        group_counts=np.ones(s.n_groups),
        method="test",
    )
    annotator = data.annotators[1] if action == "reread" else None
    r = rank_annotation_targets(data, fit, s, action=action, annotator=annotator)
    groups = bc.summaries.summary.item_groups(data, s)
    p = _per_draw_posteriors(data, tt, prev, groups)
    gold = ~np.isnan(data.gold)
    unanswered = np.isnan(data.labels).all(axis=1)
    p[:, gold] = np.eye(c)[data.gold[gold].astype(int)]
    # coefficients: signs of the posterior-mean bin gaps, per evaluated class, over n items
    ece = ~gold & ~unanswered
    lam = [0.0, 1.0] if c == 2 else [1.0 / c] * c
    coef = np.zeros((data.n_items, c))
    edges = np.asarray(s.bin_edges)
    for k in range(c):
        b = np.clip(np.searchsorted(edges, data.probs[:, k], side="right") - 1, 0, len(edges) - 2)
        for m in range(len(edges) - 1):
            inside = ece & (b == m)
            gap = (p[:, inside, k].mean(axis=0) - data.probs[inside, k]).sum()
            coef[inside, k] = lam[k] * np.sign(gap) / ece.sum()
    flat = np.ones(n_draws)
    v = _variance(p, coef, flat)
    assert r.variance == pytest.approx(v, rel=RTOL)
    j = 1
    for rank, i in enumerate(r.index):
        after = 0.0
        for o in range(c):
            q = p.copy()
            if action == "gold":
                like = p[:, i, o]
                q[:, i] = np.eye(c)[o]
            else:
                joint = p[:, i, :] * tt[:, j, :, o]  # (D, C)
                like = joint.sum(axis=1)
                q[:, i] = joint / like[:, None]
            prob_o = like.mean()
            after += prob_o * _variance(q, coef, like)
        assert r.reduction[rank] == pytest.approx(v - after, rel=1e-7, abs=1e-15)
    # candidates: not gold, answered, and (reread by a chosen annotator) not yet answered by him
    expected = ece & (np.isnan(data.labels[:, j]) if action == "reread" else True)
    assert set(r.index.tolist()) == set(np.flatnonzero(expected).tolist())


def test_requests_share_blocks_and_match_single_rankings(monkeypatch):
    """Several requests in one pass over blocks of one draw each give every single
    request's ranking (the sums over draws are only regrouped: rounding apart)."""
    c = 3
    t = _confusions(3, c, np.array([0.85, 0.7, 0.6]))
    data, _ = _simulate(60, c, t, missing=0.3, gold_share=0.1, seed=5)
    s = bc.summarize(data, bins=4)
    rng = np.random.default_rng(8)
    n_draws = 7
    tt = t[None] * rng.uniform(0.7, 1.3, size=(n_draws, *t.shape))
    tt /= tt.sum(axis=-1, keepdims=True)
    fit = ChannelFit.from_confusion(
        tt,
        rng.dirichlet(np.ones(c) * 5, size=(n_draws, s.n_groups)),
        annotators=data.annotators,
        classes=data.classes,
        groups=[str(g) for g in s.groups],
        group_counts=np.ones(s.n_groups),
        method="test",
    )
    requests = [("gold", None), ("reread", None), ("reread", data.annotators[2])]
    single = [rank_annotation_targets(data, fit, s, action=a, annotator=j) for a, j in requests]
    monkeypatch.setattr(items_module, "BLOCK_ELEMENTS", 1)  # one draw per block
    shared = rank_annotation_requests(data, fit, s, requests)
    for one, both in zip(single, shared):
        assert (both.action, both.annotator) == (one.action, one.annotator)
        np.testing.assert_array_equal(both.index, one.index)
        np.testing.assert_allclose(both.reduction, one.reduction, rtol=1e-10, atol=1e-18)
        assert both.variance == pytest.approx(one.variance, rel=1e-12)
    with pytest.raises(ConfigError, match="at least one"):
        rank_annotation_requests(data, fit, s, [])


def test_point_fit_binary_is_uncertainty_ranking():
    """With a point fit and C = 2, Delta_i = p_i (1 - p_i) / n^2: the most uncertain item first."""
    data = simulate_toy(400, random_state=1)
    s = bc.summarize(data)
    fit = bc.fit_channels(s)
    r = rank_annotation_targets(data, fit, s)
    post = item_posteriors(data, fit, s)
    p1 = post.probability[r.index, 1]
    n = r.n_candidates
    np.testing.assert_allclose(r.reduction, p1 * (1 - p1) / n**2, rtol=1e-12)
    assert r.variance == pytest.approx(r.reduction.sum(), rel=1e-12)
    # V - sum Delta is rounding (~1e-16 V), so its square root is ~1e-8 of the width
    assert r.width_after(n) < 1e-6 * r.width


def test_refusals():
    data = simulate_toy(100, random_state=0)
    s = bc.summarize(data)
    fit = bc.fit_channels(s)
    with pytest.raises(ConfigError, match="action"):
        rank_annotation_targets(data, fit, s, action="ask")
    with pytest.raises(ConfigError, match="not one of"):
        rank_annotation_targets(data, fit, s, action="reread", annotator="nobody")
    with pytest.raises(ConfigError, match="reread"):
        rank_annotation_targets(data, fit, s, annotator=data.annotators[0])
    with pytest.raises(ConfigError, match="prob"):
        rank_annotation_targets(data, fit, s, prob=1.5)
