"""``bayescal bench plan``: the audit plan's predictions against an independent simulation.

For each case (:data:`CASES`: C = 2 and C = 3, stated channels and a stated
miscalibration), :func:`bayescal.metrics.plan.plan_audit` recommends the number of items for an
NC-ECE interval of width ``w`` and for power 0.8; then a separate loop, written here
in the style of ``bench coverage`` (its own seeds and draws of the data, ``--check-reps``
repetitions; the estimation is the plan's :func:`~bayescal.metrics.plan.audit_interval`),
audits simulated data at each recommended size through the library's estimation path
(``simulate_multiclass`` -> ``dawid_skene_em`` -> ``bootstrap_channels`` ->
``multiclass_nc_ece_interval``, the plan's default ``interval="bootstrap"``; with
``--interval evaluation`` the channels are held at the EM fit) and records the realised
mean width, rejection rate and coverage of the exact population binned ECE. Checks
(issue 25): predicted width within 10% of the realised one, predicted power within 0.1
of the realised one; and the goal itself at the recommended size: realised power within
0.1 of the target 0.8, realised width within 10% of the target width.

The predictor and the check run the same estimation on the same population, so their
difference is Monte Carlo error alone; each check reports it: ``power_diff_mc_se``
``sigma = sqrt(se_pred^2 + se_real^2)``, ``power_z`` (the difference over sigma), and
``power_false_fail`` = ``2 Phi(-0.1 / sigma)``, the chance that a correct predictor
fails the 0.1 tolerance by Monte Carlo error alone (the same for the width, relative).
With 60 repetitions per prediction and 150 checks (the first run) sigma was 0.075 at
power 0.5 and a correct predictor failed 0.1 with probability 0.18; the defaults
(``--predict-reps 300``, ``--check-reps 300``) make sigma <= 0.041 and that probability
<= 0.015, so a failed check points at the predictor rather than at the dice.

JSON: ``protocol``, ``cases`` (per case: the plan, and per recommendation the
predicted and realised figures with their Monte Carlo SE and the checks), ``checks_pass``,
``seconds``, ``environment``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from bayescal.bench._io import environment, mean_se, share_se, write_json
from bayescal.errors import ConfigError


@dataclass(frozen=True)
class Case:
    """One planning case: stated channels and the miscalibration to detect."""

    accuracy: tuple[float, ...]
    n_classes: int
    prevalence: tuple[float, ...]
    temperature: float
    width: float


CASES: dict[str, Case] = {
    "binary": Case((0.8, 0.75, 0.7), 2, (0.6, 0.4), 1.5, 0.05),
    "three_class": Case((0.8, 0.75, 0.7), 3, (0.5, 0.3, 0.2), 1.3, 0.05),
}
WIDTH_TOL = 0.10  # relative
POWER_TOL = 0.10  # absolute


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated CASES")
    parser.add_argument("--reps", type=int, default=60, help="plan simulations per design")
    parser.add_argument(
        "--predict-reps", type=int, default=300, help="plan simulations at the recommended size"
    )
    parser.add_argument("--check-reps", type=int, default=300, help="check repetitions")
    parser.add_argument("--sizes", default="1000,2000,4000,8000")
    parser.add_argument(
        "--interval",
        choices=("bootstrap", "evaluation"),
        default="bootstrap",
        help="the simulated audit interval (bayescal.metrics.plan.simulate_design)",
    )
    parser.add_argument("--channel-draws", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def _false_fail(tol: float, sigma: float) -> float:
    """Chance that a difference of pure Monte Carlo error (sd ``sigma``) exceeds ``tol``."""
    from scipy.stats import norm

    return float(2 * norm.sf(tol / sigma)) if sigma > 0 else 0.0


def _check(
    scenario, n: int, reps: int, seed: int, metric: str, interval: str, channel_draws: int
) -> dict[str, float]:
    """Independent audits at size n (fresh seeds): realised width, power, coverage."""
    from bayescal.errors import FitError, IdentificationError
    from bayescal.metrics.plan import audit_interval
    from bayescal.simulate.multiclass import simulate_multiclass

    pop = scenario.population(scenario.n_annotators)
    truth = pop.binned_ece()[metric]
    rng = np.random.default_rng([seed, n])
    widths, rejects, covered = [], [], []
    failed = 0
    for _ in range(reps):
        data = simulate_multiclass(n, population=pop, random_state=rng)
        try:
            iv = audit_interval(
                data, interval, channel_draws, 0.9, 200, int(rng.integers(2**31 - 3))
            )
        except (IdentificationError, FitError):
            failed += 1
            continue
        part = getattr(iv, metric)
        lo, hi = part.interval()
        widths.append(hi - lo)
        rejects.append(part.p_value() < 0.05)
        covered.append(lo <= truth <= hi)
    w, r = np.asarray(widths), np.asarray(rejects, dtype=np.float64)
    cov = float(np.mean(covered))
    return {
        "reps": int(w.size),
        "failed": failed,
        "width": float(w.mean()),
        "width_se": mean_se(w),
        "power": float(r.mean()),
        "power_se": share_se(r.mean(), w.size),
        "coverage": cov,
        "coverage_se": share_se(cov, w.size),
        "population_ece": float(truth),
    }


def run(args: argparse.Namespace) -> int:
    from bayescal.metrics.plan import PlanScenario, plan_audit

    load_start = list(os.getloadavg())
    started = time.perf_counter()
    cpu0 = time.process_time()
    sizes = [int(x) for x in args.sizes.split(",")]
    cases = {}
    ok = True
    for name in args.cases.split(","):
        if name not in CASES:
            raise ConfigError(f"--cases: unknown case {name!r}; the cases are {list(CASES)}.")
        spec = CASES[name]
        scenario = PlanScenario.stated(
            list(spec.accuracy),
            spec.n_classes,
            list(spec.prevalence),
            temperature=spec.temperature,
        )
        plan = plan_audit(
            scenario,
            width=spec.width,
            power=0.8,
            sizes=sizes,
            reps=args.reps,
            predict_reps=args.predict_reps,
            interval=args.interval,
            channel_draws=args.channel_draws,
            random_state=args.seed,
        )
        checks: list[dict[str, object]] = []
        for i, rec in enumerate(plan.recommendations):
            pred = rec.predicted
            if rec.n_items is None or pred is None:
                checks.append({"goal": rec.goal, "n_items": None, "pass": False})
                ok = False
                continue
            real = _check(
                scenario,
                rec.n_items,
                args.check_reps,
                args.seed + 1000 + i,
                "classwise",
                args.interval,
                args.channel_draws,
            )
            w_err = abs(pred.width - real["width"]) / real["width"]
            p_err = abs(pred.power - real["power"])
            p_sigma = float(np.hypot(pred.power_se, real["power_se"]))
            w_sigma = float(np.hypot(pred.width_se, real["width_se"]) / real["width"])
            mc = {
                "power_diff_mc_se": p_sigma,
                "power_z": (pred.power - real["power"]) / p_sigma if p_sigma > 0 else 0.0,
                "power_false_fail": _false_fail(POWER_TOL, p_sigma),
                "width_rel_diff_mc_se": w_sigma,
                "width_z": (pred.width - real["width"]) / real["width"] / w_sigma
                if w_sigma > 0
                else 0.0,
                "width_false_fail": _false_fail(WIDTH_TOL, w_sigma),
            }
            if rec.goal.startswith("power"):
                goal_err = abs(real["power"] - 0.8)
                goal_ok = goal_err <= POWER_TOL
            else:
                goal_err = abs(real["width"] - spec.width) / spec.width
                goal_ok = goal_err <= WIDTH_TOL
            passed = bool(w_err <= WIDTH_TOL and p_err <= POWER_TOL and goal_ok)
            ok &= passed
            checks.append(
                {
                    "goal": rec.goal,
                    "n_items": rec.n_items,
                    "predicted": asdict(pred),
                    "realised": real,
                    "width_rel_error": w_err,
                    "power_abs_error": p_err,
                    "goal_error": goal_err,
                    "goal_pass": bool(goal_ok),
                    "pass": passed,
                    **mc,
                }
            )
        cases[name] = {"spec": asdict(spec), "plan": plan.to_dict(), "checks": checks}
    result = {
        "protocol": {
            "command": "bayescal " + " ".join(getattr(args, "_argv", ["bench", "plan"])),
            "reps": args.reps,
            "predict_reps": args.predict_reps,
            "check_reps": args.check_reps,
            "sizes": sizes,
            "seed": args.seed,
            "width_tol_relative": WIDTH_TOL,
            "power_tol_absolute": POWER_TOL,
            "metric": "classwise",
            "interval": args.interval,
            "channel_draws": args.channel_draws,
            "goal_check": "realised power within 0.1 of 0.8 / realised width within 10% "
            "of the target width, at the recommended size",
            "load_start": load_start,
            "load_end": list(os.getloadavg()),
        },
        "cases": cases,
        "checks_pass": ok,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu0,
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
