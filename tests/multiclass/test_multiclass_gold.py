"""Gold items in the multiclass track (issue 15 item 1): container, summary, EM, identification."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from bayescal.channels.em import dawid_skene_em
from bayescal.channels.identification import check_multiclass_design, gold_identifies_multiclass
from bayescal.data.multiclass import MulticlassAnnotations, load_multiclass_csv
from bayescal.errors import ConfigError, DataError, IdentificationError, IdentificationWarning
from bayescal.metrics.multiclass import multiclass_nc_ece
from bayescal.simulate import simulate_multiclass
from bayescal.summaries import summarize_multiclass

T3 = np.array(
    [
        [[0.75, 0.15, 0.10], [0.10, 0.70, 0.20], [0.15, 0.15, 0.70]],
        [[0.65, 0.20, 0.15], [0.20, 0.65, 0.15], [0.10, 0.25, 0.65]],
    ]
)


def _with_gold(data, share, seed, *, annotators=None):
    """The same items with a random ``share`` of them turned into gold items (their truth)."""
    rng = np.random.default_rng(seed)
    gold = np.where(rng.random(data.n_items) < share, data.truth, np.nan)
    labels = data.labels if annotators is None else data.labels[:, annotators]
    return MulticlassAnnotations.from_arrays(data.probs, labels, truth=data.truth, gold=gold)


@pytest.fixture(scope="module")
def two_annotators():
    """K = 2, C = 3 without groups: refused without gold, identified with 30% gold items."""
    d = simulate_multiclass(3000, 3, T3, random_state=5)
    return _with_gold(d, 0.3, 1)


# ----------------------------------------------------------------- container
def test_gold_validated_like_labels():
    probs, labels = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]], [[0, 0], [2, 1]]
    d = MulticlassAnnotations.from_arrays(probs, labels, gold=[2, np.nan])
    assert d.n_gold == 1 and np.isnan(d.gold[1]) and "1 gold items" in repr(d)
    for bad, what in (([3, np.nan], "3"), ([0.5, np.nan], "0.5"), ([-1, 0], "-1")):
        with pytest.raises(DataError, match=rf"gold: {what}.* is not a class index 0\.\.2"):
            MulticlassAnnotations.from_arrays(probs, labels, gold=bad)
    with pytest.raises(DataError, match=r"gold must have shape \(2,\)"):
        MulticlassAnnotations.from_arrays(probs, labels, gold=[1, 1, 1])
    # the gold variable survives subsetting and changes the data hash
    plain = MulticlassAnnotations.from_arrays(probs, labels)
    assert d.subset([0]).n_gold == 1 and d.data_hash() != plain.data_hash()


def test_gold_from_csv_and_long(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("p0,p1,r1,r2,known\n0.8,0.2,0,0,\n0.3,0.7,1,1,dog\n0.6,0.4,0,1,0\n")
    d = load_multiclass_csv(path, probs=["p0", "p1"], classes=["cat", "dog"], gold="known")
    assert d.annotators == ["r1", "r2"] and np.array_equal(d.gold, [np.nan, 1, 0], equal_nan=True)
    with pytest.raises(ConfigError, match=r"\['known'\] cannot be both an annotator"):
        load_multiclass_csv(path, probs=["p0", "p1"], annotators=["r1", "known"], gold="known")
    path.write_text("p0,p1,r1,r2,known\n0.8,0.2,0,0,\n0.3,0.7,1,1,2\n")
    with pytest.raises(DataError, match=r"gold: 2.0 at .*g.csv', line 3 is not 0 or 1"):
        load_multiclass_csv(path, probs=["p0", "p1"], gold="known")
    frame = pd.DataFrame(
        {
            "item": [1, 1, 2, 3],
            "annotator": ["u", "v", "u", "v"],
            "label": [0, 0, 1, 1],
            "p0": [0.8, 0.8, 0.3, 0.5],
            "p1": [0.2, 0.2, 0.7, 0.5],
            "g": [0, 0, None, 1],
        }
    )
    long = MulticlassAnnotations.from_long(frame, probs=["p0", "p1"], gold="g")
    assert np.array_equal(long.gold, [0, np.nan, 1], equal_nan=True)
    bad = frame.assign(g=[0, 1, None, 1])
    with pytest.raises(DataError, match=r"gold 'g' \(blank shown as -1\) differs between rows"):
        MulticlassAnnotations.from_long(bad, probs=["p0", "p1"], gold="g")
    mapped = MulticlassAnnotations.from_long(frame, probs=["p0", "p1"], gold={3: 1})
    assert np.array_equal(mapped.gold, [np.nan, np.nan, 1], equal_nan=True)


# ----------------------------------------------------------------- summary
# (the gold tables of the one summary: tests/core/test_summaries.py)
def test_metrics_leave_gold_out_unless_asked(mc_small):
    d = _with_gold(mc_small, 0.25, 3)
    s = summarize_multiclass(d)
    fit = dawid_skene_em(s, prevalence="pooled")
    with_gold = multiclass_nc_ece(s, fit)
    alone = multiclass_nc_ece(s.without_gold(), fit)
    asked = multiclass_nc_ece(s.with_gold_in_cells(), fit)
    for part in ("top_label", "classwise"):
        value = getattr(with_gold, part).value
        assert value == pytest.approx(getattr(alone, part).value, abs=1e-12)
        assert getattr(asked, part).value != pytest.approx(value, abs=1e-6)
    assert asked.top_label.n == alone.top_label.n + int(s.n_gold.sum())
    # gold items in the cells: the errors of the same items without a gold variable
    plain = MulticlassAnnotations.from_arrays(d.probs, d.labels, truth=d.truth)
    same = multiclass_nc_ece(summarize_multiclass(plain), fit)
    for part in ("top_label", "classwise"):
        assert getattr(asked, part).value == pytest.approx(getattr(same, part).value, rel=1e-12)


# ----------------------------------------------------------------- EM
def _per_item_loglik(theta, data, k, c):
    """Independent likelihood, item by item (no patterns): gold at its class, others marginal."""
    t = softmax(theta[: k * c * c].reshape(k, c, c), axis=-1)
    rho = softmax(theta[k * c * c :].reshape(-1, c), axis=-1)
    per_class = np.zeros((data.n_items, c))  # log P(item's answers | Y = y)
    for j in range(k):
        answered = ~np.isnan(data.labels[:, j])
        a = data.labels[answered, j].astype(int)
        per_class[answered] += np.log(t[j][:, a]).T
    annotated = (~np.isnan(data.labels)).any(axis=1)
    gold = ~np.isnan(data.gold) & annotated
    unknown = np.isnan(data.gold) & annotated
    marginal = logsumexp(np.log(rho[data.predicted[unknown]]) + per_class[unknown], axis=1)
    known = per_class[gold, data.gold[gold].astype(int)]
    return marginal.sum() + known.sum()


def test_em_with_gold_maximises_the_per_item_likelihood():
    d = simulate_multiclass(600, 3, T3, random_state=2)
    dg = _with_gold(d, 0.3, 4)
    fit = dawid_skene_em(summarize_multiclass(dg), tol=1e-13, max_iter=20000)
    k, c = 2, 3
    t, rho = fit.confusion.values[0], fit.class_prevalence.values[0]
    theta = np.concatenate([np.log(t).ravel(), np.log(rho).ravel()])
    ll = _per_item_loglik(theta, dg, k, c)
    # the EM log-likelihood (pattern counts) is the per-item one at the same parameters
    assert fit.loglik == pytest.approx(ll, abs=1e-8)
    # direct maximisation from a flat start finds the same maximum and maximiser
    res = minimize(
        lambda x: -_per_item_loglik(x, dg, k, c),
        np.zeros_like(theta),
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-8, "maxiter": 5000},
    )
    assert ll - 1e-7 <= -res.fun <= ll + 1e-7
    t_direct = softmax(res.x[: k * c * c].reshape(k, c, c), axis=-1)
    # entries agree to the optimiser's precision: with a log-likelihood curvature of about
    # n_jy / (T (1 - T)) >= 100 per entry, an objective within 1e-7 of the maximum puts each
    # entry within sqrt(2e-7 / 100) ~ 5e-5 of the maximiser (measured 1e-6)
    assert np.abs(t_direct - t).max() < 1e-4


def test_gold_identifies_two_annotators_and_recovers_them(two_annotators):
    d = two_annotators
    s = summarize_multiclass(d, groups="all")
    with pytest.raises(IdentificationError, match="do not identify"):
        check_multiclass_design(s.without_gold())
    assert gold_identifies_multiclass(s)[0] and check_multiclass_design(s) == []
    fit = dawid_skene_em(s)
    # each row rests on ~300 gold answers plus ~700 unknown items: se <= 0.5 / sqrt(300) =
    # 0.029 from gold alone; 4 se = 0.12 bounds the error, measured ~0.02
    err = np.abs(fit.confusion.values[0] - T3).max()
    assert err < 0.06, err
    assert fit.diagnostics["gold_items"] == [int(x) for x in s.n_gold]


def test_one_annotator_with_gold_at_large_n():
    d = simulate_multiclass(40000, 3, T3[:1], random_state=6)
    dg = _with_gold(d, 0.1, 7)
    s = summarize_multiclass(dg)
    fit = dawid_skene_em(s)
    # ~1,300 gold answers per row: se <= 0.5 / sqrt(1300) = 0.014; the unknown items' answers
    # add only their mixture; 4 se = 0.055
    assert np.abs(fit.confusion.values[0] - T3[0]).max() < 0.055
    # the prevalence of the unknown items (not of the gold items) is estimated
    pooled = dawid_skene_em(s, prevalence="pooled").class_prevalence.values[0, 0]
    true = np.bincount(d.truth[np.isnan(dg.gold)], minlength=3) / np.isnan(dg.gold).sum()
    assert np.abs(pooled - true).max() < 0.03


def test_gold_that_does_not_cover_every_class_is_refused(two_annotators):
    d = two_annotators
    gold = np.where(d.gold == 2, np.nan, d.gold)  # no gold item of class 2
    d2 = MulticlassAnnotations.from_arrays(d.probs, d.labels, gold=gold)
    with pytest.raises(IdentificationError, match="answered none of class '2'"):
        dawid_skene_em(summarize_multiclass(d2, groups="all"))


def test_few_gold_items_give_a_weak_identification_warning(two_annotators):
    d = two_annotators
    keep = np.flatnonzero(~np.isnan(d.gold))
    few = np.full(d.n_items, np.nan)
    for y in range(3):  # five gold items per class: se up to 0.5 / sqrt(5) = 0.22
        idx = keep[d.gold[keep] == y][:5]
        few[idx] = y
    d2 = MulticlassAnnotations.from_arrays(d.probs, d.labels, gold=few)
    with pytest.warns(IdentificationWarning, match="identified by the gold items alone, weakly"):
        check_multiclass_design(summarize_multiclass(d2, groups="all"))
