"""The draw caps and the Monte Carlo error they add (issue 23, "K and C at the edges").

Each capped stage (the interval's ``JOINT_DRAWS``, the band's ``DEFAULT_MAX_DRAWS``, the
ranking's and the item posteriors' ``MAX_DRAWS``) uses at most its cap of draws and
reports the Monte Carlo standard error (MCSE) of what it computes from them. The check of
an MCSE is the spread of the number over re-runs with fresh draws of the same posterior
(here: independent draws around fixed confusions, so the truth is known).

Tolerance. Over ``n`` re-runs the sample sd of the number has relative standard error
``1 / sqrt(2 (n - 1))`` and the mean of the reported MCSEs ``cv / sqrt(n)`` (``cv`` their
own spread, about 0.2-0.35 for batch means of ~15-30 batches); the ratio sd / mean MCSE
is then 1 within ``sqrt(1 / (2 (n - 1)) + cv^2 / n)``, and the tests allow four of these
(a factor-two error in either direction fails).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from bayescal import ChannelFit
from bayescal.channels import acquisition, items
from bayescal.channels.acquisition import rank_annotation_targets
from bayescal.channels.items import cell_posterior_moments, item_posteriors
from bayescal.channels.mcse import batches, mean_mcse, quantile_mcse
from bayescal.metrics.uncertainty import JOINT_DRAWS, multiclass_nc_ece_interval
from bayescal.recal.ensemble import DEFAULT_MAX_DRAWS, fit_map_band
from bayescal.simulate import multiclass_population, simulate_multiclass
from bayescal.summaries import summarize_multiclass


def _agree(values, mcses, label: str) -> None:
    """sd of ``values`` over re-runs equals the mean reported MCSE (module docstring)."""
    values, mcses = np.asarray(values, dtype=float), np.asarray(mcses, dtype=float)
    n = values.size
    cv = mcses.std() / mcses.mean()
    tol = 4 * np.sqrt(1 / (2 * (n - 1)) + cv**2 / n)
    ratio = values.std(ddof=1) / mcses.mean()
    assert abs(ratio - 1) < tol, (
        f"{label}: sd over re-runs / mean MCSE = {ratio:.3f} (tol {tol:.3f})"
    )


def _posterior(pop, n_draws, seed, n_items, concentration=300.0):
    rng = np.random.default_rng(seed)
    c = len(pop.classes)
    conf = np.stack(
        [
            np.stack([[rng.dirichlet(concentration * row) for row in t] for t in pop.confusion])
            for _ in range(n_draws)
        ]
    )
    return ChannelFit.from_confusion(
        conf,
        np.full((n_draws, 1, c), 1.0 / c),
        annotators=pop.annotators,
        classes=pop.classes,
        groups=["all"],
        group_counts=[n_items],
        method="test",
    )


@pytest.fixture(scope="module")
def three_classes():
    pop = multiclass_population(3, temperature=2.0)
    return pop, simulate_multiclass(1500, population=pop, random_state=0)


# ------------------------------------------------------------------ the estimators
def test_mean_and_quantile_mcse_match_the_spread_of_iid_draws():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 400))  # 200 re-runs of 400 draws
    _agree(x.mean(axis=1), [mean_mcse(r) for r in x], "mean")
    _agree(np.quantile(x, 0.95, axis=1), [quantile_mcse(r, 0.95) for r in x], "quantile")


def test_correlated_draws_widen_the_error():
    # an AR(1) chain with rho = 0.9 has a mean's variance (1 + rho) / (1 - rho) = 19 times
    # the iid one: the batch means see it, sd / sqrt(D) does not
    rng = np.random.default_rng(1)
    runs, d, rho = 100, 2500, 0.9
    e = rng.normal(size=(runs, d))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0] / np.sqrt(1 - rho**2)
    for i in range(1, d):
        x[:, i] = rho * x[:, i - 1] + e[:, i]
    reported = [mean_mcse(r) for r in x]
    _agree(x.mean(axis=1), reported, "AR(1) mean")
    assert np.mean(reported) > 3 * np.mean(x.std(axis=1) / np.sqrt(d))


def test_one_draw_has_no_error_and_three_cannot_tell():
    assert mean_mcse(np.ones((1, 3))).tolist() == [0.0, 0.0, 0.0]
    assert quantile_mcse(np.array([0.2]), 0.9) == 0.0
    assert np.isnan(mean_mcse(np.array([0.1, 0.2, 0.3])))
    assert batches(1000) == (31, 32)


@pytest.mark.parametrize("step", [1, 7, 64, 1000])
def test_streamed_cell_error_is_the_batch_means_of_the_whole_array(step):
    x = np.random.default_rng(2).random((1000, 5, 3))
    blocks = ((slice(lo, min(lo + step, 1000)), x[lo : lo + step]) for lo in range(0, 1000, step))
    mean, err = cell_posterior_moments(blocks, 1000, 5, 3)
    np.testing.assert_allclose(mean, x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(err, mean_mcse(x), rtol=1e-9)


# ------------------------------------------------------------------ the four caps
def test_interval_uses_at_most_joint_draws_and_states_its_error(three_classes):
    pop, data = three_classes
    his, los, e_hi, e_lo = [], [], [], []
    for s in range(25):
        post = _posterior(pop, 2 * JOINT_DRAWS, 100 + s, data.n_items)
        top = multiclass_nc_ece_interval(data, post, sample_use="joint", random_state=s)
        d = top.top_label.to_dict()
        assert d["draws_used"] == JOINT_DRAWS
        his.append(d["hi"])
        los.append(d["lo"])
        e_hi.append(d["mcse"]["of_hi"])
        e_lo.append(d["mcse"]["of_lo"])
    assert min(los) > 0  # the test rejects: the lower end is a quantile too
    _agree(his, e_hi, "interval upper end")
    _agree(los, e_lo, "interval lower end")


def test_band_uses_at_most_max_draws_and_states_its_error():
    # a temperature map refitted per draw: 300 items and a cap of 40 keep the re-runs cheap
    pop = multiclass_population(3, temperature=2.0)
    data = simulate_multiclass(300, population=pop, random_state=1)
    # the default cap is DEFAULT_MAX_DRAWS; the cap's logic is run at 40 (200 fits per re-run
    # cost seconds each)
    assert inspect.signature(fit_map_band).parameters["max_draws"].default == DEFAULT_MAX_DRAWS
    his, errs = [], []
    for s in range(25):
        post = _posterior(pop, 60, 200 + s, data.n_items, concentration=30.0)
        t = fit_map_band("temperature", data, post, max_draws=40).to_dict()
        assert t["draws"] == 40
        his.append(t["parameters"]["temperature"]["hi"])
        errs.append(t["parameters"]["temperature"]["mcse"]["of_hi"])
    _agree(his, errs, "band upper end")


def test_item_posteriors_use_at_most_max_draws_and_state_their_error(three_classes):
    pop, data = three_classes
    # the default cap is MAX_DRAWS (1000); its logic is run at 200, a test's size
    assert inspect.signature(item_posteriors).parameters["max_draws"].default == items.MAX_DRAWS
    summary = summarize_multiclass(data, groups="all")
    probs, errs = [], []
    for s in range(20):
        post = _posterior(pop, 300, 300 + s, data.n_items, concentration=30.0)
        res = item_posteriors(data, post, summary, max_draws=200)
        assert res.n_draws == 200
        probs.append(res.probability[:, 0])
        errs.append(res.probability_mcse[:, 0])
        summary_of = res.to_dict()["mcse"]
        assert summary_of["draws_used"] == 200
        assert (
            summary_of["corrected_label_probability_max"]
            >= (summary_of["corrected_label_probability_median"])
        )
    probs, errs = np.array(probs), np.array(errs)
    worst = int(np.argmax(errs.mean(axis=0)))  # the item whose probability is least certain
    _agree(probs[:, worst], errs[:, worst], "item posterior")


def test_ranking_uses_at_most_max_draws_and_states_its_error(three_classes):
    pop, data = three_classes
    summary = summarize_multiclass(data, groups="all")
    widths, errs = [], []
    for s in range(20):
        post = _posterior(pop, acquisition.MAX_DRAWS + 100, 400 + s, data.n_items, 30.0)
        r = rank_annotation_targets(data, post, summary)
        assert r.n_draws == acquisition.MAX_DRAWS
        d = r.to_dict()
        assert d["draws_used"] == acquisition.MAX_DRAWS
        widths.append(d["width"])
        errs.append(d["mcse"]["width"])
    _agree(widths, errs, "ranking width")
