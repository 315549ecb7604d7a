"""``bayescal plan``'s run: build the scenario, plan, print the summary and the JSON."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from bayescal._json import strict_json, write_text_atomic
from bayescal.data.files import read_csv
from bayescal.data.validation import check_probs, check_scores, parse_numbers, show_value
from bayescal.errors import DataError
from bayescal.metrics.plan import DEFAULT_SIZES, MIN_PILOT_ITEMS, PlanScenario, plan_audit


def read_pilot_scores(path: str | Path, n_classes: int) -> np.ndarray:
    """A pilot's class probabilities from ``--pilot-scores FILE``, shape (N, C).

    The file is read by the audit's CSV reader (:func:`bayescal.data.files.read_csv`:
    regular UTF-8 file, quoting, field counts, field sizes) and every cell by
    :func:`bayescal.data.validation.parse_numbers` (decimal numbers, quoted or not). The
    first line must be a header row: a first line of probabilities (some field a number
    that is not a whole number) is refused rather than read as column names or as a
    row, and whole numbers such as ``0,1,2`` are taken as names. Every column is a class
    probability, in the pilot's class order: C columns, or for C = 2 one column of
    P(class 1). Values must lie strictly inside (0, 1) (the plan takes their log), rows
    of C columns must sum to one within :data:`~bayescal.data.validation.PROB_SUM_TOL`,
    and at least :data:`~bayescal.metrics.plan.MIN_PILOT_ITEMS` rows are needed. Every
    refusal is one :class:`~bayescal.errors.DataError` naming the file, the line and the fix.
    """
    table = read_csv(path, what="--pilot-scores file")
    file = repr(str(path))
    example = "p" if n_classes == 2 else ",".join(f"p{k}" for k in range(n_classes))
    if _is_probability_row(table.header):
        raise DataError(
            f"--pilot-scores file {file}: the first line ({_shown(table.header)}) holds "
            "probabilities, not column names; the file needs a header row. Add one above "
            f"the first item's probabilities (for example {example})."
        )
    k = len(table.header)
    if k != n_classes and not (k == 1 and n_classes == 2):
        raise DataError(
            f"--pilot-scores file {file} has {k} column{'s' if k != 1 else ''} "
            f"({_shown(table.header)}) for {n_classes} classes; every column is a class "
            f"probability: give {n_classes} columns, one per class in class order"
            + (", or one column of P(class 1)." if n_classes == 2 else ".")
        )
    where = table.where()
    numbers = np.column_stack(
        [
            parse_numbers(table.columns[c], what=f"--pilot-scores column {c!r}", where=where)
            for c in table.header
        ]
    )
    if k == 1:
        p1 = check_scores(numbers[:, 0], name="--pilot-scores", where=where)
        values = np.column_stack([1.0 - p1, p1])
    else:
        values = check_probs(numbers, name="--pilot-scores", where=where)
    edge = (values <= 0.0) | (values >= 1.0)
    if edge.any():
        i, j = (int(x) for x in np.argwhere(edge)[0])
        raise DataError(
            f"--pilot-scores: {show_value(numbers[i, min(j, k - 1)])} at {where(i)} is not "
            f"strictly between 0 and 1 ({int(edge.any(axis=1).sum())} such row(s)); the plan "
            "takes the log of every "
            "class probability, so give probabilities inside (0, 1), for example the model's "
            "unrounded softmax output."
        )
    if values.shape[0] < MIN_PILOT_ITEMS:
        raise DataError(
            f"--pilot-scores file {file} has {values.shape[0]} data row(s); the plan draws "
            f"its items from the pilot's rows and needs at least {MIN_PILOT_ITEMS}. Give the "
            "probabilities of more pilot items."
        )
    return values


def _is_probability_row(fields: list) -> bool:
    """The fields are all decimal numbers and some is not a whole number: a row of
    probabilities where the header should be (whole numbers may be class names)."""
    try:
        numbers = parse_numbers(np.asarray(fields, dtype=object), what="header", where=str)
    except DataError:
        return False
    return bool(np.any(numbers != np.round(numbers)))


def _shown(names: list, limit: int = 4) -> str:
    shown = ", ".join(show_value(n) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


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
