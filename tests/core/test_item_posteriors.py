"""Item posteriors (issue 25 item 3): against a slow per-item loop, known truth, and the tail rule.

The data are simulated here, independently of ``bayescal.simulate``: a Dirichlet-ish
score, classes drawn from it, answers drawn from stated confusion rows, some answers
missing at random.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import bayescal as bc
from bayescal.channels import items as items_mod
from bayescal.channels.items import item_posteriors
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError


def _confusions(k: int, c: int, acc: np.ndarray) -> np.ndarray:
    t = np.empty((k, c, c))
    for j in range(k):
        off = (1 - acc[j]) / (c - 1)
        t[j] = np.full((c, c), off)
        np.fill_diagonal(t[j], acc[j])
    return t


def _simulate(n, c, t, *, missing=0.2, gold_share=0.0, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, c)) * 1.5
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(c, p=p) for p in probs])
    k = t.shape[0]
    labels = np.empty((n, k))
    for j in range(k):
        cum = np.cumsum(t[j][y], axis=1)
        labels[:, j] = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), c - 1)
    labels[rng.random((n, k)) < missing] = np.nan
    gold = None
    if gold_share:
        gold = np.where(rng.random(n) < gold_share, y, np.nan).astype(float)
    probs_arg = probs[:, 1] if c == 2 else probs
    data = bc.Annotations.from_arrays(probs_arg, labels, gold=gold)
    return data, y


def _slow_posterior(data, fit, groups):
    """One item at a time, one class at a time, one draw at a time."""
    t = fit.confusion.transpose("draw", "annotator", "true_class", "answered_class").values
    pi = fit.class_prevalence.transpose("draw", "group", "class").values
    n, c = data.n_items, data.n_classes
    out = np.zeros((n, c))
    for i in range(n):
        for d in range(t.shape[0]):
            w = np.empty(c)
            for y in range(c):
                w[y] = pi[d, groups[i] if pi.shape[1] > 1 else 0, y]
                for j, a in enumerate(data.labels[i]):
                    if not np.isnan(a):
                        w[y] *= t[d, j, y, int(a)]
            out[i] += w / w.sum()
        out[i] /= t.shape[0]
    return out


@pytest.mark.parametrize("c", [2, 3])
def test_equals_slow_loop_with_draws_gold_and_missing(c):
    k = 3
    t = _confusions(k, c, np.array([0.9, 0.75, 0.65]))
    data, _ = _simulate(150, c, t, gold_share=0.1, seed=c)
    s = bc.summarize(data)
    # a two-draw "posterior": the truth and a perturbed copy, prevalences per group
    rng = np.random.default_rng(1)
    t2 = t * rng.uniform(0.8, 1.2, size=t.shape)
    t2 /= t2.sum(axis=-1, keepdims=True)
    n_groups = s.n_groups
    prev = rng.dirichlet(np.ones(c), size=(2, n_groups))
    fit = ChannelFit.from_confusion(
        np.stack([t, t2]),
        prev,
        annotators=data.annotators,
        classes=data.classes,
        groups=[str(g) for g in s.groups],
        group_counts=np.ones(n_groups),
        method="test",
    )
    post = item_posteriors(data, fit, s)
    groups = bc.summaries.summary.item_groups(data, s)
    slow = _slow_posterior(data, fit, groups)
    gold = ~np.isnan(data.gold)
    np.testing.assert_allclose(post.probability[~gold], slow[~gold], rtol=0, atol=1e-12)
    assert np.all(post.probability[gold].max(axis=1) == 1.0)
    np.testing.assert_array_equal(post.corrected_label[gold], data.gold[gold].astype(int))
    assert post.n_draws == 2


def test_calibrated_against_truth_at_large_n():
    """Under the model, E[1{Y = c} - P(Y = c | answers)] = 0 for every class.

    Each term lies in [-1, 1] with variance at most 1/4, so the mean of n = 20,000
    terms has sd <= 0.5 / sqrt(n) = 0.0035; 4.5 sd (Bonferroni over 3 classes at
    ~1e-5) is the tolerance. Known channels, so no estimation error enters.
    """
    c, n = 3, 20_000
    t = _confusions(4, c, np.array([0.85, 0.7, 0.6, 0.55]))
    data, y = _simulate(n, c, t, missing=0.3, seed=7)
    s = bc.summarize(data, groups="all")
    # the population prevalence of the simulator: mean of the softmax probabilities
    rho = np.bincount(y, minlength=c) / n
    fit = ChannelFit.known_confusion(t, prevalence=rho, annotators=data.annotators)
    post = item_posteriors(data, fit, s)
    onehot = np.eye(c)[y]
    gap = (onehot - post.probability).mean(axis=0)
    assert np.all(np.abs(gap) < 4.5 * 0.5 / np.sqrt(n)), gap
    # the corrected label is right as often as its own posterior says (same bound)
    hit = (post.corrected_label == y).mean()
    assert abs(hit - post.probability.max(axis=1).mean()) < 4.5 * 0.5 / np.sqrt(n)


def test_surprise_p_is_super_uniform_under_the_model():
    """P(p <= alpha) <= alpha for a tail p-value of a discrete statistic.

    At alpha = 0.05 with n = 6,000 checked items the flagged share has sd <=
    sqrt(0.05 * 0.95 / n) = 0.0028; the bound allows 4.5 sd above alpha.
    """
    c, n = 3, 6_000
    t = _confusions(3, c, np.array([0.9, 0.8, 0.7]))
    data, y = _simulate(n, c, t, missing=0.0, seed=11)
    rho = np.bincount(y, minlength=c) / n
    fit = ChannelFit.known_confusion(t, prevalence=rho, annotators=data.annotators)
    post = item_posteriors(data, fit, bc.summarize(data, groups="all"), alpha=0.05)
    share = post.surprising.mean()
    assert share <= 0.05 + 4.5 * np.sqrt(0.05 * 0.95 / n)
    assert post.expected_false_flags == pytest.approx(0.05 * n)
    # answers against three accurate annotators' agreement are surprising: (0, 1, 2)
    p_all = items_mod._answer_prob(np.array(list(itertools.product(range(c), repeat=3))), t, rho)
    p_obs = items_mod._answer_prob(np.array([[0, 1, 2]]), t, rho)[0]
    expected = p_all[p_all <= p_obs * (1 + 1e-9)].sum()
    hits = np.flatnonzero((data.labels == [0, 1, 2]).all(axis=1))
    assert hits.size > 0
    np.testing.assert_allclose(post.surprise_p[hits], expected, rtol=1e-12)
    # the one ranking of flagged items (report table, summary.json) against a sort by hand
    flagged = sorted(np.flatnonzero(post.surprising), key=lambda i: (post.surprise_p[i], i))
    assert len(flagged) > 10
    assert post.most_surprising(10) == [int(i) for i in flagged[:10]]
    assert [r["surprise_p"] for r in post.to_dict(max_listed=10)["most_surprising"]] == [
        float(post.surprise_p[i]) for i in flagged[:10]
    ]


def test_monte_carlo_tail_agrees_with_exact(monkeypatch):
    """Forced Monte Carlo (N = 20,000) against exact enumeration: |diff| <= 4.5 sd + 1/N."""
    c = 2
    t = _confusions(4, c, np.array([0.9, 0.8, 0.75, 0.7]))
    data, _ = _simulate(400, c, t, missing=0.1, seed=3)
    s = bc.summarize(data)
    fit = bc.fit_channels(s)
    exact = item_posteriors(data, fit, s)
    monkeypatch.setattr(items_mod, "MAX_ENUMERATED", 1)
    mc = item_posteriors(data, fit, s, random_state=5)
    assert exact.exact_surprise and not mc.exact_surprise
    np.testing.assert_array_equal(exact.probability, mc.probability)
    p = exact.surprise_p
    ok = np.isfinite(p)
    n_sim = items_mod.N_SIMULATED
    tol = 4.5 * np.sqrt(p[ok] * (1 - p[ok]) / n_sim) + 2.0 / n_sim
    assert np.all(np.abs(mc.surprise_p[ok] - p[ok]) <= tol)


def test_exports_and_unanswered_items(tmp_path):
    c = 3
    t = _confusions(3, c, np.array([0.9, 0.8, 0.7]))
    data, _ = _simulate(300, c, t, missing=0.5, seed=4)
    s = bc.summarize(data)
    fit = bc.fit_channels(s)
    post = item_posteriors(data, fit, s)
    none = (np.isnan(data.labels)).all(axis=1)
    assert none.any()
    assert np.all(post.unanswered == none)
    assert np.all(np.isnan(post.surprise_p[none]))
    frame = post.to_frame()
    assert list(frame.columns[:c]) == [f"p_{k}" for k in data.classes]
    post.to_csv(tmp_path / "items.csv")
    back = pd.read_csv(tmp_path / "items.csv", index_col="item")
    np.testing.assert_array_equal(
        back[[f"p_{k}" for k in data.classes]].to_numpy(), post.probability
    )
    labels, proba = post.to_crowdkit()
    assert labels.index.name == "task" and proba.columns.name == "label"
    assert list(proba.columns) == list(data.classes)
    record = post.to_dict()
    assert record["n_items"] == 300 and record["n_unanswered"] == int(none.sum())
    assert record["n_surprising"] == int(post.surprising.sum())


def test_bad_arguments_are_refused():
    t = _confusions(3, 2, np.array([0.9, 0.8, 0.7]))
    data, _ = _simulate(200, 2, t, seed=9)
    s = bc.summarize(data)
    fit = bc.fit_channels(s)
    with pytest.raises(ConfigError, match="alpha"):
        item_posteriors(data, fit, s, alpha=1.5)
    with pytest.raises(ConfigError, match="max_draws"):
        item_posteriors(data, fit, s, max_draws=0)
    other, _ = _simulate(200, 3, _confusions(3, 3, np.array([0.9, 0.8, 0.7])), seed=9)
    with pytest.raises(ConfigError, match="classes"):
        item_posteriors(other, fit, s)
    with pytest.raises(ConfigError, match="prevalence groups"):
        item_posteriors(data, fit, bc.summarize(data, groups=3))


def test_a_fit_that_dropped_empty_groups_serves_the_items_and_the_ranking():
    """groups=1000 on 300 items: the audit's point fit drops the groups without annotated
    items (empty_groups='drop') and the item stage refused it ('the fit has 266 prevalence
    groups and the summary 1000'); a fit of other groups is still refused."""
    from bayescal.channels.acquisition import rank_annotation_targets
    from bayescal.simulate import simulate_toy

    d = simulate_toy(300, random_state=1)
    s = bc.summarize(d, groups=1000)
    fit = bc.fit_channels(s, "score_bin_em", random_state=0, empty_groups="drop")
    assert fit.prevalence.sizes["group"] < s.n_groups
    r = item_posteriors(d, fit, s)
    assert np.isfinite(r.probability).all()
    kept = bc.summarize(d, groups=1000).group_counts.values > 0
    assert kept.sum() == fit.prevalence.sizes["group"]  # exactly the empty groups dropped
    assert rank_annotation_targets(d, fit, s) is not None
    other = bc.fit_channels(bc.summarize(d, groups=5), "score_bin_em", random_state=0)
    with pytest.raises(ConfigError, match="prevalence groups and the summary"):
        item_posteriors(d, other, bc.summarize(d, groups=7))


def test_exported_tables_do_not_carry_spreadsheet_formulas(tmp_path):
    """An item id or class name such as ``=HYPERLINK(...)`` runs as a formula when
    items.csv / next.csv is opened in a spreadsheet (CSV injection): such text fields are
    written with a leading ``'``; numbers and ordinary names are written as they are."""
    from bayescal.channels.items import write_csv

    frame = pd.DataFrame(
        {
            "item": ['=HYPERLINK("http://x","y")', "+1", "-2.5", "@SUM(A1)", "\tx", "plain"],
            "=p": [0.5] * 6,
        }
    )
    out = tmp_path / "t.csv"
    write_csv(frame, out, index=False)
    back = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(back.columns) == ["item", "'=p"]
    assert back["item"].tolist() == [
        '\'=HYPERLINK("http://x","y")',
        "+1",
        "-2.5",
        "'@SUM(A1)",
        "'\tx",
        "plain",
    ]
