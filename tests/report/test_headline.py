"""The binary audit's headline comes from the channel posterior (issue 22 items 1 and 6).

With ``--channels bayes`` the headline NC-ECE, interval and test are the joint route
(:func:`bayescal.nc_ece_interval` with ``sample_use="joint"``): each bin's rate is drawn
with each channel draw, so the channel uncertainty of a weakly identified design, the
priors and the gold items all move it; point channels keep their evaluation-only interval
and say so. Two annotators with two score groups (Hui-Walter) keep the channels uncertain.
"""

import numpy as np
import pytest

from bayescal.bayes.priors import ChannelPriors
from bayescal.metrics.uncertainty import nc_ece_interval
from bayescal.report import audit
from bayescal.simulate import simulate_toy
from bayescal.summaries.summary import summarize

FAST = {"draws": 200, "tune": 200, "random_state": 3}


@pytest.fixture(scope="module")
def k2():
    return simulate_toy(800, "shifted", random_state=7, fp=(0.08, 0.13), fn=(0.16, 0.11))


@pytest.fixture(scope="module")
def bayes_report(k2):
    return audit(k2, channels="bayes", groups=2, **FAST)


@pytest.fixture(scope="module")
def em_report(k2):
    return audit(k2, channels="score-bin-em", groups=2, random_state=FAST["random_state"])


def test_bayes_headline_is_the_posterior_and_differs_from_the_point_channels(
    bayes_report, em_report
):
    nc, nc_em = bayes_report.summary["ece"]["nc"], em_report.summary["ece"]["nc"]
    assert nc["source"] == "posterior" and nc["sample_use"] == "joint"
    assert nc["interval_label"].endswith("drawn jointly with the channel posterior)")
    assert nc_em["source"] == "evaluation" and "evaluation-only" in nc_em["interval_label"]
    # channel uncertainty adds variance: the posterior interval is wider than the
    # evaluation-only one built from the same fit (its reference row), and the two routes
    # print different headlines
    dec = nc["decomposition"]
    assert dec["posterior"]["width"] > dec["evaluation"]["width"]
    assert abs(nc["lo"] - nc_em["lo"]) + abs(nc["hi"] - nc_em["hi"]) > 1e-3
    for x in (nc, nc_em):  # item 6: the headline lies in its interval; no unnamed "mean"
        assert x["lo"] <= x["point"] <= x["hi"] and "mean" not in x
    labels = [
        row[0] for row in next(s for s in bayes_report.sections if s.key == "ece").tables[0].rows
    ]
    assert any("posterior interval" in x for x in labels)
    assert any("channels held at their point value" in x for x in labels)


def test_a_tight_prior_moves_the_headline_as_it_moves_the_posterior(k2, bayes_report):
    """Priors centred on wrong channels (a = 0.3, b = 0.7 for both annotators, 2,000
    pseudo-items each) pull the posterior there; the headline follows it."""
    tight = ChannelPriors(a=(600, 1400), b=(1400, 600))
    moved = audit(k2, channels="bayes", groups=2, priors=tight, **FAST)
    a_old = bayes_report.channels.a.values.mean(axis=0)
    a_new = moved.channels.a.values.mean(axis=0)
    assert np.all(np.abs(a_new - 0.3) < 0.03) and np.all(np.abs(a_old - 0.3) > 0.1)
    old, new = bayes_report.summary["ece"]["nc"], moved.summary["ece"]["nc"]
    # the headline is the joint route on the moved posterior, to the last digit
    again = nc_ece_interval(
        summarize(k2, groups=2),
        moved.channels,
        point_channels=moved.point_channels,
        sample_use="joint",
        random_state=FAST["random_state"],
    )
    assert new["point"] == again.estimate and (new["lo"], new["hi"]) == again.interval()
    # and it moved by far more than Monte Carlo error: mc is the sd of one run's mean in the
    # bias correction (sd of the replicated ECE over sqrt(replicates)); the difference of two
    # independent runs has sd sqrt(2) mc, and a move of 4 such sd is no Monte Carlo accident
    mc = float(again.ece["posterior"].std()) / np.sqrt(again.ece.sizes["draw"])
    assert abs(new["point"] - old["point"]) > 4 * np.sqrt(2) * mc
    assert abs(new["hi"] - old["hi"]) > 4 * np.sqrt(2) * mc


def test_every_interval_of_summary_json_holds_its_estimate(
    bayes_report, em_report, summary_intervals_check
):
    """Item 6: one meaning per field; every interval-shaped object holds its estimate."""
    for report in (bayes_report, em_report):
        paths = summary_intervals_check(report.summary)
        assert ".ece.nc" in paths and ".verdict.numbers" in paths
        # point channels have no interval (lo, hi null); the posterior's entries have one
        posterior = any(p.startswith(".channels.annotators.") for p in paths)
        assert posterior == (report is bayes_report)


def test_the_recalibration_shows_the_posterior_band_of_the_choice(bayes_report, em_report):
    """Item 5: with a channel posterior the choice's corrected map is refitted under every
    draw; summary.json and the section show that band (point channels have none)."""
    rec = bayes_report.summary["recalibration"]
    band = rec["posterior_band"]
    chosen = rec["recommended"]
    if chosen["target"] == "corrected":
        assert band["role"] == "recommended" and band["family"] == chosen["map"]
        assert chosen["posterior_band_holds_identity"] is False
    else:
        assert band["role"] == "best corrected candidate"
    # histogram maps use every draw, temperature and Platt maps 200 evenly spaced ones
    n_draws = bayes_report.channels.n_draws
    assert band["draws"] == (n_draws if band["family"] == "histogram" else min(200, n_draws))
    assert band["items"] == rec["sizes"]["pilot"]
    section = next(s for s in bayes_report.sections if s.key == "recalibration")
    titles = [t.caption for t in section.tables]
    assert any(t.startswith("Posterior band of the") for t in titles)
    assert any(n.startswith("Band: the") for n in section.notes)
    assert em_report.summary["recalibration"]["posterior_band"] is None
    em_section = next(s for s in em_report.sections if s.key == "recalibration")
    assert len(em_section.tables) == 1
