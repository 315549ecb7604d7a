"""``bayescal plan``'s run: build the scenario, plan, print the summary and the JSON."""

from __future__ import annotations

import argparse
from pathlib import Path

from bayescal._json import strict_json
from bayescal.metrics.plan import DEFAULT_SIZES, PlanScenario, plan_audit


def scenario_of(args: argparse.Namespace) -> PlanScenario:
    if args.pilot is not None:
        return PlanScenario.from_posterior(
            args.pilot, temperature=args.temperature, separation=args.separation
        )
    return PlanScenario.stated(
        args.accuracy,
        args.classes,
        args.prevalence,
        temperature=args.temperature,
        separation=args.separation,
    )


def run(args: argparse.Namespace) -> int:
    plan = plan_audit(
        scenario_of(args),
        width=args.width,
        power=args.power,
        sizes=DEFAULT_SIZES if args.sizes is None else args.sizes,
        answers_per_item=args.per_item,
        gold_items=args.gold,
        reps=args.reps,
        metric=args.metric,
        prob=args.prob,
        level=args.level,
        random_state=args.seed,
    )
    print(plan.summary())
    if args.json:
        Path(args.json).write_text(strict_json(plan.to_dict()) + "\n")
    return 0
