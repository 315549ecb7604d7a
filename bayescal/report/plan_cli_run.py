"""``bayescal plan``'s run: build the scenario, plan, print the summary and the JSON."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from bayescal._json import strict_json, write_text_atomic
from bayescal.errors import ConfigError
from bayescal.metrics.plan import DEFAULT_SIZES, PlanScenario, plan_audit


def read_pilot_scores(path: str | Path, n_classes: int) -> np.ndarray:
    """A pilot's probabilities from a CSV with a header row: C columns, or one for C = 2."""
    try:
        values = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=np.float64)
    except (OSError, ValueError) as err:
        raise ConfigError(
            f"--pilot-scores {path}: not a numeric CSV with a header row ({err}). Give one "
            "row per item and one column per class probability."
        ) from None
    if values.shape[1] == 1 and n_classes == 2:
        values = np.column_stack([1.0 - values[:, 0], values[:, 0]])
    if values.shape[1] != n_classes:
        raise ConfigError(
            f"--pilot-scores {path}: {values.shape[1]} columns for {n_classes} classes; give "
            f"{n_classes} columns of class probabilities"
            + (" (or one column of P(class 1))." if n_classes == 2 else ".")
        )
    return values


def scenario_of(args: argparse.Namespace) -> PlanScenario:
    if args.pilot is not None:
        sc = PlanScenario.from_posterior(
            args.pilot, temperature=args.temperature, separation=args.separation
        )
    else:
        sc = PlanScenario.stated(
            args.accuracy,
            args.classes,
            args.prevalence,
            temperature=args.temperature,
            separation=args.separation,
        )
    if getattr(args, "pilot_scores", None) is None:
        return sc
    return dataclasses.replace(sc, scores=read_pilot_scores(args.pilot_scores, sc.n_classes))


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
        interval=args.interval,
        channel_draws=args.channel_draws,
        refine_steps=args.refine_steps,
        predict_reps=args.predict_reps,
        random_state=args.seed,
    )
    print(plan.summary())
    if args.json:
        write_text_atomic(args.json, strict_json(plan.to_dict()) + "\n")
    return 0
