"""Audit planning (``bayescal.metrics.plan``, ``bayescal plan``): issue 25 item 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bayescal.channels.result import ChannelFit
from bayescal.cli import main
from bayescal.errors import ConfigError
from bayescal.metrics.plan import PlanScenario, plan_audit, simulate_design

ACC = [0.85, 0.8, 0.75]


@pytest.mark.parametrize("c", [2, 3])
def test_width_shrinks_with_items(c):
    # The evaluation interval's width scales like n^-1/2: from 300 to 3,000 items the
    # expected ratio is 10^-1/2 = 0.32. With 6 repetitions the MC SE of each mean width is
    # below 10% of it (per-repetition sd ~ 20% of the mean, / sqrt(6)), so 0.6 leaves more
    # than four SEs of room while a plan that ignored n (ratio 1) fails.
    sc = PlanScenario.stated(ACC, c, temperature=1.0)
    small = simulate_design(sc, 300, reps=6, random_state=1)
    large = simulate_design(sc, 3000, reps=6, random_state=1)
    assert large.width < 0.6 * small.width
    assert small.width_se < 0.2 * small.width


@pytest.mark.parametrize("c", [2, 3])
def test_power_one_at_huge_miscalibration(c):
    # temperature 4: population class-wise ECE > 0.1, about ten interval widths at n = 1,000
    sc = PlanScenario.stated(ACC, c, temperature=4.0)
    pt = simulate_design(sc, 1000, reps=8, random_state=2)
    assert pt.population_ece > 0.1
    assert pt.power == 1.0


def test_power_near_level_when_calibrated():
    # Calibrated population: the rejection rate estimates the test's size (0.05). Of 30
    # repetitions, 6 or more rejections has binomial(30, 0.05) probability 0.016; a test
    # that rejects at 0.3 or more (an anti-conservative plan) fails with probability > 0.5.
    sc = PlanScenario.stated(ACC, 3, temperature=1.0)
    pt = simulate_design(sc, 600, reps=30, random_state=3)
    assert pt.population_ece < 1e-12
    assert pt.power <= 5 / 30


def test_plan_recommends_and_brackets():
    sc = PlanScenario.stated(ACC, 2, temperature=1.0)
    plan = plan_audit(sc, width=0.08, power=None, sizes=[200, 800, 3200], reps=4)
    (rec,) = plan.recommendations
    widths = [p.width for p in plan.grid]
    assert widths == sorted(widths, reverse=True)
    assert rec.n_items is not None and 200 <= rec.n_items <= 3200
    assert rec.predicted is not None and rec.predicted.n_items == rec.n_items
    assert "width <= 0.08" in plan.summary()
    json.dumps(plan.to_dict())  # serialisable


def test_plan_reports_unreached_goal():
    sc = PlanScenario.stated(ACC, 2, temperature=1.0)
    plan = plan_audit(sc, width=0.001, power=None, sizes=[100, 200], reps=2)
    assert plan.recommendations[0].n_items is None
    assert "not reached" in plan.summary()


def test_gold_and_fewer_answers_per_item():
    sc = PlanScenario.stated(ACC + [0.7], 3)
    pt = simulate_design(sc, 400, answers_per_item=2, gold_items=50, reps=3)
    assert pt.answers_per_item == 2 and pt.gold_items == 50 and pt.reps + pt.failed == 3


def test_from_fit_uses_posterior_mean():
    c = 3
    conf = np.stack([np.eye(c) * 0.7 + 0.1] * 2)  # rows: 0.8, 0.1, 0.1
    conf = np.stack([conf * 1.0, conf * 1.0])
    prev = np.array([[[0.5, 0.3, 0.2]], [[0.3, 0.5, 0.2]]])
    fit = ChannelFit.from_confusion(
        conf,
        prev,
        annotators=["a", "b"],
        classes=["x", "y", "z"],
        groups=["all"],
        group_counts=[100],
        method="known",
    )
    sc = PlanScenario.from_fit(fit, temperature=1.2)
    np.testing.assert_allclose(sc.prevalence, [0.4, 0.4, 0.2])
    np.testing.assert_allclose(sc.confusion[0, 0], [0.8, 0.1, 0.1])


def test_pilot_scores_define_the_population():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet([2, 2], size=200)
    sc = PlanScenario(PlanScenario.stated(ACC, 2).confusion, np.array([0.5, 0.5]), scores=probs)
    pop = sc.population(3)
    np.testing.assert_allclose(pop.profile_truth, probs)  # temperature 1: calibrated
    assert pop.binned_ece()["classwise"] < 1e-12


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: PlanScenario.stated([0.3], 2), "better than chance"),
        (lambda: PlanScenario.stated([0.8], 1), "n_classes"),
        (lambda: PlanScenario(np.full((1, 2, 3), 0.5), np.array([0.5, 0.5])), r"\(K, C, C\)"),
        (lambda: PlanScenario(np.full((1, 2, 2), 0.4), np.array([0.5, 0.5])), "sum to one"),
        (lambda: PlanScenario.stated([0.8], 2, [0.2, 0.3, 0.5]), "2 entries"),
        (lambda: PlanScenario.stated([0.8], 2, temperature=-1.0), "temperature"),
        (lambda: PlanScenario.stated([0.8], 2).population(3), "between 1 and"),
        (lambda: simulate_design(PlanScenario.stated([0.8], 2), 5), "n_items"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), width=None, power=None), "goal"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), sizes=[500, 200]), "increasing"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), power=0.01), "power"),
    ],
)
def test_bad_input_refused(build, match):
    with pytest.raises(ConfigError, match=match):
        build()


def test_cli_smoke(tmp_path, capsys):
    out = tmp_path / "plan.json"
    argv = [
        "plan",
        "--classes",
        "2",
        "--accuracy",
        "0.85,0.8,0.75",
        "--temperature",
        "2",
        "--sizes",
        "200,800",
        "--reps",
        "3",
        "--json",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    assert "power >= 0.8" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["scenario"]["n_classes"] == 2 and len(doc["grid"]) == 2


def test_cli_refuses_missing_channels(capsys):
    assert main(["plan", "--width", "0.05"]) == 2
    assert "--pilot" in capsys.readouterr().err


def test_cli_refuses_bad_pilot(tmp_path, capsys):
    bad = tmp_path / "posterior.nc"
    bad.write_text("not netcdf")
    assert main(["plan", "--pilot", str(bad)]) == 2
    assert "posterior.nc" in capsys.readouterr().err
