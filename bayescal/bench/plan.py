"""``bayescal bench plan``: the audit plan's predictions against an independent simulation.

For each case (:data:`CASES`: C = 2 and C = 3, stated channels and a stated
miscalibration), :func:`bayescal.metrics.plan.plan_audit` recommends the number of items for an
NC-ECE interval of width ``w`` and for power 0.8; then a separate loop, written here
in the style of ``bench coverage`` (its own seeds, ``--check-reps`` repetitions),
audits simulated data at each recommended size through the library's estimation path
(``simulate_multiclass`` -> ``dawid_skene_em`` -> ``multiclass_nc_ece_interval``) and
records the realised mean width, rejection rate and coverage of the exact population
binned ECE. Checks: predicted width within 10% of the realised one, predicted power
within 0.1 of the realised one.

JSON: ``protocol``, ``cases`` (per case: the plan, and per recommendation the
predicted and realised figures with their Monte Carlo SE and the checks), ``checks_pass``,
``seconds``, ``environment``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass

import numpy as np

from bayescal.bench._io import environment, write_json
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
    parser.add_argument("--check-reps", type=int, default=150, help="check repetitions")
    parser.add_argument("--sizes", default="250,500,1000,2000,4000,8000")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def _check(scenario, n: int, reps: int, seed: int, metric: str) -> dict[str, float]:
    """Independent audits at size n (fresh seeds): realised width, power, coverage."""
    from bayescal.channels.em import dawid_skene_em
    from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
    from bayescal.simulate.multiclass import simulate_multiclass
    from bayescal.summaries.summary import summarize

    pop = scenario.population(scenario.n_annotators)
    truth = pop.binned_ece()[metric]
    rng = np.random.default_rng([seed, n])
    widths, rejects, covered = [], [], []
    for _ in range(reps):
        data = simulate_multiclass(n, population=pop, random_state=rng)
        fit = dawid_skene_em(
            summarize(data, groups="all"),
            prevalence="pooled",
            random_state=int(rng.integers(2**31)),
        )
        iv = multiclass_nc_ece_interval(
            data, fit, n_bootstrap=200, random_state=int(rng.integers(2**31))
        )
        part = getattr(iv, metric)
        lo, hi = part.interval()
        widths.append(hi - lo)
        rejects.append(part.p_value() < 0.05)
        covered.append(lo <= truth <= hi)
    w, r = np.asarray(widths), np.asarray(rejects, dtype=np.float64)
    return {
        "reps": reps,
        "width": float(w.mean()),
        "width_se": float(w.std(ddof=1) / np.sqrt(reps)),
        "power": float(r.mean()),
        "power_se": float(np.sqrt(r.mean() * (1 - r.mean()) / reps)),
        "coverage": float(np.mean(covered)),
        "population_ece": float(truth),
    }


def run(args: argparse.Namespace) -> int:
    from bayescal.metrics.plan import PlanScenario, plan_audit

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
            random_state=args.seed,
        )
        checks: list[dict[str, object]] = []
        for i, rec in enumerate(plan.recommendations):
            pred = rec.predicted
            if rec.n_items is None or pred is None:
                checks.append({"goal": rec.goal, "n_items": None, "pass": False})
                ok = False
                continue
            real = _check(scenario, rec.n_items, args.check_reps, args.seed + 1000 + i, "classwise")
            w_err = abs(pred.width - real["width"]) / real["width"]
            p_err = abs(pred.power - real["power"])
            passed = bool(w_err <= WIDTH_TOL and p_err <= POWER_TOL)
            ok &= passed
            checks.append(
                {
                    "goal": rec.goal,
                    "n_items": rec.n_items,
                    "predicted": asdict(pred),
                    "realised": real,
                    "width_rel_error": w_err,
                    "power_abs_error": p_err,
                    "pass": passed,
                }
            )
        cases[name] = {"spec": asdict(spec), "plan": plan.to_dict(), "checks": checks}
    result = {
        "protocol": {
            "command": "bayescal " + " ".join(getattr(args, "_argv", ["bench", "plan"])),
            "reps": args.reps,
            "check_reps": args.check_reps,
            "sizes": sizes,
            "seed": args.seed,
            "width_tol_relative": WIDTH_TOL,
            "power_tol_absolute": POWER_TOL,
            "metric": "classwise",
        },
        "cases": cases,
        "checks_pass": ok,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu0,
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
