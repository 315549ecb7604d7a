"""Audit planning (``bayescal.metrics.plan``, ``bayescal plan``): issue 25 item 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bayescal.channels.result import ChannelFit
from bayescal.cli import main
from bayescal.errors import ConfigError
from bayescal.metrics.plan import (
    DesignPoint,
    PlanScenario,
    _power_curve,
    _solve,
    _width_curve,
    plan_audit,
    simulate_design,
)

ACC = [0.85, 0.8, 0.75]


@pytest.mark.parametrize("c", [2, 3])
def test_width_shrinks_with_items(c):
    # The evaluation interval's width scales like n^-1/2: from 300 to 3,000 items the
    # expected ratio is 10^-1/2 = 0.32. With 6 repetitions the MC SE of each mean width is
    # below 10% of it (per-repetition sd ~ 20% of the mean, / sqrt(6)), so 0.6 leaves more
    # than four SEs of room while a plan that ignored n (ratio 1) fails.
    sc = PlanScenario.stated(ACC, c, temperature=1.0)
    small = simulate_design(sc, 300, reps=6, interval="evaluation", random_state=1)
    large = simulate_design(sc, 3000, reps=6, interval="evaluation", random_state=1)
    assert large.width < 0.6 * small.width
    assert small.width_se < 0.2 * small.width


@pytest.mark.parametrize("c", [2, 3])
def test_power_one_at_huge_miscalibration(c):
    # temperature 4: population class-wise ECE > 0.1, about ten interval widths at n = 1,000
    sc = PlanScenario.stated(ACC, c, temperature=4.0)
    pt = simulate_design(sc, 1000, reps=8, interval="evaluation", random_state=2)
    assert pt.population_ece > 0.1
    assert pt.power == 1.0


def test_power_near_level_when_calibrated():
    # Calibrated population: the rejection rate estimates the test's size (0.05). Of 30
    # repetitions, 6 or more rejections has binomial(30, 0.05) probability 0.016; a test
    # that rejects at 0.3 or more (an anti-conservative plan) fails with probability > 0.5.
    sc = PlanScenario.stated(ACC, 3, temperature=1.0)
    pt = simulate_design(sc, 600, reps=30, interval="evaluation", random_state=3)
    assert pt.population_ece < 1e-12
    assert pt.power <= 5 / 30


def test_plan_recommends_and_brackets():
    sc = PlanScenario.stated(ACC, 2, temperature=1.0)
    plan = plan_audit(
        sc, width=0.08, power=None, sizes=[200, 800, 3200], reps=4, interval="evaluation"
    )
    (rec,) = plan.recommendations
    widths = [p.width for p in plan.grid]
    assert widths == sorted(widths, reverse=True)
    assert rec.n_items is not None and 200 <= rec.n_items <= 3200
    assert rec.predicted is not None and rec.predicted.n_items == rec.n_items
    # the refinement simulated inside the bracketing grid points, then the final fit
    assert 1 <= len(rec.refinements) <= 2 and rec.fitted is not None
    lo_n = max(p.n_items for p in plan.grid if p.width > 0.08)
    hi_n = min(p.n_items for p in plan.grid if p.width <= 0.08)
    assert all(lo_n <= p.n_items <= hi_n for p in rec.refinements)
    assert "width <= 0.08" in plan.summary()
    json.dumps(plan.to_dict())  # serialisable


def test_predict_reps_sets_the_final_prediction_only():
    sc = PlanScenario.stated(ACC, 2, temperature=1.0)
    plan = plan_audit(
        sc,
        width=0.08,
        power=None,
        sizes=[200, 800, 3200],
        reps=4,
        predict_reps=9,
        interval="evaluation",
    )
    (rec,) = plan.recommendations
    assert rec.predicted is not None and rec.predicted.reps + rec.predicted.failed == 9
    assert all(p.reps + p.failed == 4 for p in plan.grid + rec.refinements)
    assert plan.settings["predict_reps"] == 9


def test_false_fail_probability_of_the_bench_check():
    from bayescal.bench.plan import _false_fail

    # sigma 0.075 (60 predictions and 150 checks at power 0.5): a correct predictor
    # misses a 0.1 tolerance with probability 2 Phi(-1.333) = 0.182
    assert _false_fail(0.1, 0.075) == pytest.approx(0.1824, abs=1e-3)
    assert _false_fail(0.1, 0.0) == 0.0


def _point(n: int, width: float, power: float, reps: int) -> DesignPoint:
    return DesignPoint(n, 3.0, 0, reps, width, 0.0, power, 0.0, 0.9, 0.05)


def test_power_curve_recovers_a_logistic_and_inverts_it():
    # Rejections drawn from logit(power) = -8 + log n: the curve crosses 0.8 at
    # n = exp(8 + logit(0.8)) = 11,923. With 4,000 repetitions a design the MLE's slope has
    # SE ~ 0.03 (Fisher information of 5 designs spread over 1.6 units of log n), so the
    # crossing's log n is within ~0.05; 0.15 (14% in n) is three SEs of room, and a fit that
    # ignored the slope or the Haldane correction's sign would land far outside.
    rng = np.random.default_rng(5)
    ns = [4000, 6000, 9000, 13000, 20000]
    reps = 4000
    truth = [1 / (1 + np.exp(8 - np.log(n))) for n in ns]
    pts = [_point(n, 0.1, rng.binomial(reps, p) / reps, reps) for n, p in zip(ns, truth)]
    curve = _power_curve(pts)
    assert curve is not None
    assert abs(curve[1] - 1.0) < 0.15
    assert abs(np.log(_solve(curve, 0.8, True)) - (8 + np.log(4))) < 0.15


def test_power_curve_separated_points_stay_finite():
    # none rejecting at 1,000 items, all at 2,000: the MLE slope would be infinite; the
    # half-count correction gives a finite increasing curve whose 0.8 crossing is inside
    pts = [_point(1000, 0.1, 0.0, 40), _point(2000, 0.1, 1.0, 40)]
    curve = _power_curve(pts)
    assert curve is not None and curve[1] > 0
    assert 1000 < _solve(curve, 0.8, True) < 2000
    assert _power_curve([_point(1000, 0.1, 0.9, 40), _point(2000, 0.1, 0.2, 40)]) is None


def test_width_curve_exact_on_a_power_law():
    # width = 2 / sqrt(n): the log-log line is exact, width 0.05 at n = 1,600
    pts = [_point(n, 2 / np.sqrt(n), 0.5, 10) for n in (400, 900, 2500)]
    curve = _width_curve(pts)
    assert curve is not None
    np.testing.assert_allclose(curve[1], -0.5, rtol=1e-12)
    np.testing.assert_allclose(_solve(curve, 0.05, False), 1600, rtol=1e-10)


def test_bootstrap_interval_carries_the_channel_spread():
    # Same simulated audits (same seeds), channels estimated from 400 items by EM: the
    # interval with bootstrap channel draws adds the channels' sampling spread to the item
    # bootstrap, so it is wider than the evaluation-only one in every repetition's mean
    # (bench plan: 0.20 vs 0.085 at 479 items, C = 2); equal widths would mean the draws
    # were ignored.
    sc = PlanScenario.stated(ACC, 2, temperature=1.0)
    ev = simulate_design(sc, 400, reps=4, interval="evaluation", random_state=4)
    bs = simulate_design(sc, 400, reps=4, interval="bootstrap", channel_draws=40, random_state=4)
    assert bs.reps == ev.reps == 4
    assert bs.width > 1.3 * ev.width


def test_plan_reports_unreached_goal():
    sc = PlanScenario.stated(ACC, 2, temperature=1.0)
    plan = plan_audit(sc, width=0.001, power=None, sizes=[100, 200], reps=2, interval="evaluation")
    assert plan.recommendations[0].n_items is None
    assert "not reached" in plan.summary()


def test_gold_and_fewer_answers_per_item():
    sc = PlanScenario.stated(ACC + [0.7], 3)
    pt = simulate_design(sc, 400, answers_per_item=2, gold_items=50, reps=3, channel_draws=40)
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


SCENARIO = PlanScenario.stated([0.8], 2)


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
        (lambda: simulate_design(PlanScenario.stated([0.8], 2), 50, interval="x"), "interval"),
        (lambda: simulate_design(PlanScenario.stated([0.8], 2), 50, channel_draws=5), "draws"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), refine_steps=-1), "refine_steps"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), predict_reps=1), "predict_reps"),
        # counts are bounded before any simulation: 10^9 reps used to run without end
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), reps=10**9), "reps .* 2 to 10,000"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), reps=0), "reps .* 2 to"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), n_bootstrap=5), "n_bootstrap"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), sizes=[0, 50]), "from 20 to"),
        (lambda: plan_audit(PlanScenario.stated([0.8], 2), sizes=[50, 10**7]), "from 20 to"),
        (lambda: plan_audit(SCENARIO, sizes=[50, 90], gold_items=[50]), "gold"),
        (lambda: simulate_design(PlanScenario.stated([0.8], 2), 50, reps=1.5), "reps"),
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
        "--predict-reps",
        "5",
        "--interval",
        "evaluation",
        "--json",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    assert "power >= 0.8" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["scenario"]["n_classes"] == 2 and len(doc["grid"]) == 2
    assert doc["settings"]["predict_reps"] == 5


def test_cli_refuses_missing_channels(capsys):
    assert main(["plan", "--width", "0.05"]) == 2
    assert "--pilot" in capsys.readouterr().err


def test_cli_refuses_bad_pilot(tmp_path, capsys):
    bad = tmp_path / "posterior.nc"
    bad.write_text("not netcdf")
    assert main(["plan", "--pilot", str(bad)]) == 2
    assert "posterior.nc" in capsys.readouterr().err


@pytest.mark.parametrize(
    "option, value",
    [("--reps", "0"), ("--reps", str(10**9)), ("--predict-reps", "1"), ("--channel-draws", "5")]
    + [("--refine-steps", "11"), ("--prob", "1"), ("--seed", "-1"), ("--classes", "1")],
)
def test_cli_counts_are_bounded_before_work(option, value, tmp_path, capsys):
    out = tmp_path / "plan.json"
    argv = ["plan", "--classes", "2", "--accuracy", "0.8,0.8,0.8", option, value]
    assert main([*argv, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert option in err and repr(value) in err and not out.exists(), err


def test_cli_json_path_is_checked_before_work(tmp_path, capsys):
    argv = ["plan", "--classes", "2", "--accuracy", "0.8,0.8,0.8", "--json"]
    assert main([*argv, str(tmp_path)]) == 2  # a folder
    assert "is a directory" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main([*argv, str(blocker / "plan.json")]) == 2  # a file where a folder should be
    assert "is not a directory" in capsys.readouterr().err


def test_cli_pilot_wording(tmp_path, capsys):
    bad = tmp_path / "posterior.nc"
    bad.write_text("not netcdf")
    assert main(["plan", "--pilot", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "--pilot" in err and "--priors" not in err, err


def test_cli_pilot_scores(tmp_path, capsys):
    rng = np.random.default_rng(1)
    p1 = rng.uniform(0.05, 0.95, size=60)
    csv = tmp_path / "scores.csv"
    csv.write_text("p\n" + "\n".join(f"{v:.6f}" for v in p1) + "\n")
    out = tmp_path / "plan.json"
    argv = ["plan", "--classes", "2", "--accuracy", "0.85,0.8,0.75", "--pilot-scores", str(csv)]
    argv += ["--sizes", "200,400", "--reps", "2", "--interval", "evaluation", "--json", str(out)]
    assert main(argv) == 0
    assert json.loads(out.read_text())["scenario"]["pilot_scores"] == 60
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,c\n0.2,0.3,0.5\n")
    assert main(argv[:6] + [str(bad)] + argv[7:]) == 2
    assert "3 columns ('a', 'b', 'c') for 2 classes" in capsys.readouterr().err


_ROW3 = "0.2,0.3,0.5"
_TWELVE = "\n".join([_ROW3] * 12) + "\n"
BAD_PILOT_SCORES = [
    # (case, classes, file text, message part)
    ("no header, one column", 2, "0.36\n" * 12, "holds probabilities, not column names"),
    ("no header, C columns", 3, _TWELVE, "the file needs a header row"),
    (
        "header only",
        3,
        "p0,p1,p2\n",
        "has a header ('p0', 'p1', 'p2') but no data rows: add one row",
    ),
    ("empty file", 3, "", "is empty"),
    ("columns vs classes", 3, "a,b\n" + "0.4,0.6\n" * 12, "2 columns ('a', 'b') for 3 classes"),
    ("one column for 3", 3, "p\n" + "0.4\n" * 12, "1 column ('p') for 3 classes"),
    ("text", 3, "p0,p1,p2\n" + _TWELVE + "0.2,abc,0.5\n", "t.csv', line 14 is not a number"),
    ("nan", 3, "p0,p1,p2\n0.2,nan,0.5\n" + _TWELVE, "t.csv', line 2 is not a number"),
    ("blank", 3, "p0,p1,p2\n" + _TWELVE + "0.2,,0.5\n", "'p1' is blank at "),
    ("inf", 3, "p0,p1,p2\ninf,0.3,0.5\n" + _TWELVE, "not a finite number"),
    ("above 1", 2, "p\n" + "0.5\n" * 12 + "1.5\n", "outside [0, 1]"),
    ("zero", 3, "p0,p1,p2\n" + _TWELVE + "0,0.5,0.5\n", "line 14 is not strictly between"),
    ("one", 2, "p\n" + "0.5\n" * 12 + "1\n", "line 14 is not strictly between 0 and 1"),
    ("sum", 3, "p0,p1,p2\n0.5,0.5,0.5\n" + _TWELVE, "sum to one within 1e-05; 1 row(s)"),
    ("few rows", 3, "p0,p1,p2\n" + _ROW3 + "\n", "has 1 data row(s); the plan draws"),
    ("ragged", 3, "p0,p1,p2\n" + _TWELVE + "0.2,0.8\n", "line 14 has 2 fields"),
]


@pytest.mark.parametrize(
    "classes,text,match", [b[1:] for b in BAD_PILOT_SCORES], ids=[b[0] for b in BAD_PILOT_SCORES]
)
def test_pilot_scores_file_is_refused_with_one_line(tmp_path, classes, text, match):
    # M14-M16: the reader was np.loadtxt(skiprows=1), which dropped a header-less file's
    # first row, called a header-only file "1 columns", refused quoted numbers and left
    # NaN / range / sums to an unlocated scenario check.
    from bayescal.errors import DataError
    from bayescal.report.plan_cli_run import read_pilot_scores

    f = tmp_path / "t.csv"
    f.write_text(text)
    with pytest.raises(DataError) as err:
        read_pilot_scores(f, classes)
    message = str(err.value)
    assert match in message and "\n" not in message, message
    assert "--pilot-scores" in message and "skiprows" not in message, message


def test_pilot_scores_file_quoted_numbers_and_whole_number_names(tmp_path):
    from bayescal.report.plan_cli_run import read_pilot_scores

    f = tmp_path / "q.csv"
    f.write_text('"0","1","2"\n' + '"0.2","0.3","0.5"\n' * 12)  # names 0, 1, 2; quoted cells
    np.testing.assert_array_equal(read_pilot_scores(f, 3), np.tile([0.2, 0.3, 0.5], (12, 1)))
    f.write_text("\ufeffscore\r\n" + "0.25\r\n" * 12)  # BOM and CRLF; P(class 1) for C = 2
    np.testing.assert_array_equal(read_pilot_scores(f, 2), np.tile([0.75, 0.25], (12, 1)))


def test_cli_pilot_scores_without_header_exits_2_before_planning(tmp_path, capsys):
    f = tmp_path / "noheader.csv"
    f.write_text("\n".join(f"{v:.4f}" for v in np.linspace(0.1, 0.9, 30)) + "\n")
    out = tmp_path / "plan.json"
    argv = ["plan", "--classes", "2", "--accuracy", "0.85,0.8,0.75", "--pilot-scores", str(f)]
    assert main([*argv, "--json", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert "--pilot-scores file" in err and "needs a header row" in err and not out.exists()


def test_channels_the_plans_fits_would_relabel_are_refused():
    """A pilot posterior with a and b swapped gave 'power 1.00, coverage 0.00' for a
    calibrated model (hostile re-check, issue 23): the simulated EM fits accept only b > a
    and label C > 2 classes by the first annotator, so such channels are refused."""
    t = PlanScenario.stated([0.8, 0.75, 0.7], 2).confusion
    swapped = t[:, ::-1, :]  # classes the other way round: a > b for every annotator
    with pytest.raises(ConfigError, match=r"annotator 1 of the panel .*b = 0\.2 <= a = 0\.8"):
        PlanScenario(swapped, np.array([0.5, 0.5]))
    one = t.copy()
    one[2] = one[2][::-1]  # only the third annotator inverted: still refused, named
    with pytest.raises(ConfigError, match=r"annotator 3 of the panel"):
        PlanScenario(one, np.array([0.5, 0.5]))
    t3 = PlanScenario.stated([0.8, 0.75, 0.7], 3).confusion
    rolled = t3.copy()
    rolled[0] = np.roll(t3[0], 1, axis=1)  # the first annotator answers class y + 1 for y
    with pytest.raises(
        ConfigError, match="first annotator's confusion answers class 1 most often for class 0"
    ):
        PlanScenario(rolled, np.full(3, 1 / 3))
    later = t3.copy()
    later[2] = np.roll(t3[2], 1, axis=1)  # a later annotator may be worse than chance
    assert PlanScenario(later, np.full(3, 1 / 3)).n_annotators == 3
