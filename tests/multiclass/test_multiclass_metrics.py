"""Multiclass NC-ECE: exact unbiasedness, the binary case, draws, baselines, sample modes."""

import numpy as np
import pytest

import bayescal.metrics.multiclass as mm
from bayescal import Annotations, nc_ece
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import corrected_pattern_targets
from bayescal.metrics.multiclass import (
    corrected_onehot_targets,
    estimate_multiclass_nc_ece,
    multiclass_nc_ece,
    multiclass_oracle_ece,
    multiclass_vote_ece,
    multiclass_weights,
)
from bayescal.metrics.weights import annotator_weights
from bayescal.simulate import multiclass_population, simulate_multiclass
from bayescal.summaries import summarize_multiclass

RULES = ["equal", "inverse_variance", "shrunk_inverse_variance", [0.5, 0.3, 0.2]]


# ------------------------------------------------------------------ exact unbiasedness
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("classes, missing", [(3, [0.0, 0.3, 0.1]), (4, 0.25), (10, 0.3)])
def test_corrected_targets_are_unbiased_over_all_patterns(rule, classes, missing):
    pop = multiclass_population(classes, missing=missing, random_state=classes + 10)
    states, p_s_given_y = pop.pattern_probabilities()
    answered = (states != classes).any(axis=1)
    ch = ChannelFit.known_confusion(pop.confusion, prevalence=pop.prevalence)
    u = corrected_onehot_targets(states[answered], ch, weights=rule)[0]  # (P, C)
    expect = p_s_given_y[:, answered] @ u / p_s_given_y[:, answered].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(expect, np.eye(classes), atol=1e-12)
    np.testing.assert_allclose(u.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("rule", RULES)
def test_nc_moments_equal_population_moments_on_an_exact_dataset(rule, exact_pair):
    pop, data = exact_pair
    top, cw = pop.binned_moments(bins=10)
    ch = ChannelFit.known_confusion(pop.confusion, prevalence=pop.prevalence)
    r = multiclass_nc_ece(data, ch, weights=rule)
    np.testing.assert_allclose(r.top_label.bin_moments.values[0], top, atol=1e-12)
    np.testing.assert_allclose(r.classwise.bin_moments.values[0], cw, atol=1e-12)
    oracle = multiclass_oracle_ece(data)
    np.testing.assert_allclose(oracle.top_label.bin_moments.values[0], top, atol=1e-12)
    exact = pop.binned_ece(10)
    assert r.top_label.value == pytest.approx(exact["top_label"], abs=1e-12)
    assert r.classwise.value == pytest.approx(exact["classwise"], abs=1e-12)


def test_votes_are_biased_on_the_same_exact_dataset(exact_pair):
    # NC-ECE is exact to 1e-12 on this dataset; the votes miss by orders of magnitude more.
    pop, data = exact_pair
    exact = pop.binned_ece(10)
    for kind in ("majority_vote", "soft_vote"):
        r = multiclass_vote_ece(data, kind)
        assert abs(r.top_label.value - exact["top_label"]) > 1e-3
        assert abs(r.classwise.value - exact["classwise"]) > 1e-3


# ------------------------------------------------------------------ the binary case
@pytest.fixture(scope="module")
def binary_pair():
    rng = np.random.default_rng(6)
    n = 5000
    z = rng.random(n)
    y = (rng.random(n) < z**1.5).astype(int)
    a, b = np.array([0.1, 0.25, 0.05]), np.array([0.8, 0.9, 0.7])
    lab = np.where(y[:, None] == 1, rng.random((n, 3)) < b, rng.random((n, 3)) < a).astype(float)
    lab[rng.random((n, 3)) < 0.2] = np.nan
    binary = Annotations.from_arrays(z, lab)
    multi = MulticlassAnnotations.from_arrays(np.column_stack([1 - z, z]), lab)
    return binary, multi, ChannelFit.known(a, b, mu=float(y.mean()))


@pytest.mark.parametrize("rule", ["equal", "inverse_variance", "shrunk_inverse_variance"])
def test_c2_classwise_class1_reproduces_binary_nc_ece(binary_pair, rule):
    binary, multi, ch = binary_pair
    ref = nc_ece(binary, ch, weights=rule)
    r = multiclass_nc_ece(multi, ch, weights=rule)
    np.testing.assert_allclose(
        r.classwise.bin_moments.values[0, 1], ref.bin_moments.values[0], atol=1e-12
    )
    assert float(r.classwise.class_ece[0, 1]) == pytest.approx(ref.value, abs=1e-12)
    w = multiclass_weights(ch, rule).values
    np.testing.assert_allclose(w, annotator_weights(ch, rule).values, atol=1e-12)


def test_c2_targets_are_the_binary_corrected_labels(binary_pair):
    _, multi, ch = binary_pair
    s = summarize_multiclass(multi)
    u = corrected_onehot_targets(s.states, ch, weights="inverse_variance")[0]
    binary_states = np.where(s.states == 2, 2, s.states)  # same coding: 0, 1, 2 = missing
    w = annotator_weights(ch, "inverse_variance").values
    ref = corrected_pattern_targets(binary_states, ch.a.values, ch.b.values, w)[0]
    np.testing.assert_allclose(u[:, 1], ref, atol=1e-12)


# ------------------------------------------------------------------ draws and chunks
@pytest.fixture(scope="module")
def fitted(mc_small_summary):
    return dawid_skene_em(mc_small_summary)


def _posterior(fit, draws=6, seed=0):
    rng = np.random.default_rng(seed)
    t = fit.confusion.values[0]
    conf = np.stack(
        [0.9 * t + 0.1 * rng.dirichlet(np.ones(4), size=t.shape[:2]) for _ in range(draws)]
    )
    rho = np.repeat(fit.class_prevalence.values, draws, axis=0)
    return ChannelFit.from_confusion(
        conf,
        rho,
        annotators=fit.annotators,
        classes=fit.classes,
        groups=fit.class_prevalence["group"].values,
        group_counts=fit.group_counts.values,
        method="test",
    )


def test_draws_are_independent_and_chunking_changes_nothing(mc_small_summary, fitted, monkeypatch):
    post = _posterior(fitted)
    many = multiclass_nc_ece(mc_small_summary, post, weights="inverse_variance")
    for s in (0, 3, 5):
        one = multiclass_nc_ece(
            mc_small_summary, post.select_draws([s]), weights="inverse_variance"
        )
        np.testing.assert_allclose(
            one.top_label.bin_moments.values[0], many.top_label.bin_moments.values[s], atol=1e-13
        )
        np.testing.assert_allclose(
            one.classwise.bin_moments.values[0], many.classwise.bin_moments.values[s], atol=1e-13
        )
    monkeypatch.setattr(mm, "_CHUNK_ELEMENTS", 1)
    chunked = multiclass_nc_ece(mc_small_summary, post, weights="inverse_variance")
    np.testing.assert_allclose(
        chunked.classwise.bin_moments.values, many.classwise.bin_moments.values, atol=1e-13
    )
    lo, hi = many.top_label.interval()
    assert lo <= many.top_label.value <= hi
    assert set(many.to_dict()["top_label"]) == {"value", "n", "lo", "hi"}


def _per_item_targets(data, kind, tie="split"):
    c = data.n_classes
    out = np.zeros((data.n_items, c))
    for i in range(data.n_items):
        lab = data.labels[i][~np.isnan(data.labels[i])].astype(int)
        if lab.size == 0:
            continue
        votes = np.bincount(lab, minlength=c).astype(float)
        if kind == "soft_vote":
            out[i] = votes / votes.sum()
        else:
            top = votes == votes.max()
            out[i] = top / top.sum() if tie == "split" else np.eye(c)[np.argmax(top)]
    return out


def _per_item_ece(data, targets, edges):
    keep = data.annotated
    p, t = data.probs[keep], targets[keep]
    n = keep.sum()
    c = p.argmax(axis=1)
    rows = np.arange(len(c))
    b = np.clip(np.searchsorted(edges, p[rows, c], side="right") - 1, 0, len(edges) - 2)
    top = np.array([(t[rows, c] - p[rows, c])[b == m].sum() for m in range(len(edges) - 1)]) / n
    cw = []
    for k in range(p.shape[1]):
        bk = np.clip(np.searchsorted(edges, p[:, k], side="right") - 1, 0, len(edges) - 2)
        cw.append([(t[:, k] - p[:, k])[bk == m].sum() for m in range(len(edges) - 1)])
    return top, np.array(cw) / n


@pytest.mark.parametrize(
    "kind, tie", [("soft_vote", "split"), ("majority_vote", "split"), ("majority_vote", "lowest")]
)
def test_vote_baselines_equal_per_item_computation(mc_small, kind, tie):
    r = multiclass_vote_ece(mc_small, kind, tie=tie)
    top, cw = _per_item_ece(mc_small, _per_item_targets(mc_small, kind, tie), r.top_label.bin_edges)
    np.testing.assert_allclose(r.top_label.bin_moments.values[0], top, atol=1e-12)
    np.testing.assert_allclose(r.classwise.bin_moments.values[0], cw, atol=1e-12)


def test_oracle_equals_per_item_computation(mc_small):
    r = multiclass_oracle_ece(mc_small, bins=7)
    onehot = np.eye(4)[mc_small.truth]
    top, cw = _per_item_ece(mc_small, onehot, np.linspace(0, 1, 8))
    np.testing.assert_allclose(r.top_label.bin_moments.values[0], top, atol=1e-12)
    np.testing.assert_allclose(r.classwise.bin_moments.values[0], cw, atol=1e-12)


# ------------------------------------------------------------------ sample modes
@pytest.fixture(scope="module")
def mc_mid():
    return simulate_multiclass(4000, 3, random_state=21, missing=0.1, temperature=2.0)


def test_reuse_equals_fitting_on_everything(mc_mid):
    r = estimate_multiclass_nc_ece(mc_mid, mode="reuse", shuffle=False)
    s = summarize_multiclass(mc_mid)
    direct = multiclass_nc_ece(s, dawid_skene_em(s))
    assert r.top_label.value == pytest.approx(direct.top_label.value, abs=1e-12)
    assert r.mode == "reuse"


def test_crossfit_pools_fold_moments(mc_mid):
    r = estimate_multiclass_nc_ece(mc_mid, mode="crossfit", folds=3, shuffle=False)
    idx = np.array_split(np.flatnonzero(mc_mid.annotated), 3)
    pooled = 0
    for k in range(3):
        rest = np.concatenate([idx[i] for i in range(3) if i != k])
        fit = dawid_skene_em(summarize_multiclass(mc_mid.subset(rest)))
        fold = multiclass_nc_ece(summarize_multiclass(mc_mid.subset(idx[k])), fit)
        pooled = pooled + fold.top_label.bin_moments.values * idx[k].size / sum(map(len, idx))
    np.testing.assert_allclose(r.top_label.bin_moments.values, pooled, atol=1e-12)
    assert r.top_label.info["folds"] == 3 and len(r.top_label.info["channel_fits"]) == 3


def test_split_mode_and_its_checks(mc_mid):
    r = estimate_multiclass_nc_ece(mc_mid, mode="split", fraction=0.4, random_state=2)
    assert r.top_label.info["n_channel"] == round(0.4 * mc_mid.annotated.sum())
    with pytest.raises(ConfigError, match="fraction"):
        estimate_multiclass_nc_ece(mc_mid, mode="split", fraction=1.0)
    with pytest.raises(ConfigError, match="2 folds"):
        estimate_multiclass_nc_ece(mc_mid, folds=1)
    with pytest.raises(ConfigError, match="mode"):
        estimate_multiclass_nc_ece(mc_mid, mode="boot")


# ------------------------------------------------------------------ refusals
def test_refusals_name_the_problem(mc_small, mc_small_summary, fitted):
    other = ChannelFit.known_confusion(fitted.confusion.values[0], annotators=["x", "y", "z"])
    with pytest.raises(DataError, match="annotators"):
        multiclass_nc_ece(mc_small_summary, other)
    singular = fitted.confusion.values[0].copy()
    singular[1] = 0.25
    with pytest.raises(DataError, match="'a2' has a singular confusion"):
        multiclass_nc_ece(mc_small_summary, ChannelFit.known_confusion(singular))
    with pytest.raises(ConfigError, match="bins are fixed"):
        multiclass_nc_ece(mc_small_summary, fitted, bins=5)
    with pytest.raises(ConfigError, match="unknown weight rule"):
        multiclass_nc_ece(mc_small_summary, fitted, weights="gap")
    with pytest.raises(DataError, match="weight 0"):
        multiclass_nc_ece(mc_small_summary, fitted, weights=[1.0, 0.0, 0.0])
    with pytest.raises(ConfigError, match="tie"):
        multiclass_vote_ece(mc_small, tie="random")
    with pytest.raises(DataError, match="truth"):
        multiclass_oracle_ece(MulticlassAnnotations.from_arrays(mc_small.probs, mc_small.labels))
