"""``bayescal audit-ambiguity``: the multiclass ambiguity audit from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import time

import numpy as np

from bayescal._random import check_random_state
from bayescal.ambiguity import METHODS
from bayescal.ambiguity.assessment import MIN_ITEMS
from bayescal.ambiguity.recommend import OBJECTIVES
from bayescal.display import display_name
from bayescal.report.ambiguity_audit import audit_ambiguity
from bayescal.report.cli_options import (
    MAX_BOOT,
    MAX_CELLS,
    MAX_LABEL_DRAWS,
    OUT_PROMISE,
    add_quiet,
    integer,
    open_unit,
    seed,
)
from bayescal.report.cli_output import display_of, report_outcome, say
from bayescal.report.core import check_out_dir, fmt
from bayescal.report.inputs import load_ambiguity_data

EPILOG = """\
examples:
  bayescal audit-ambiguity --npz predictions.npz --out ambiguity-report/
  bayescal audit-ambiguity --cifar10h cifar10h-probs.csv --max-items 2000 --out cifar-report/
  bayescal audit-ambiguity --chaosnli chaosNLI_snli.jsonl roberta.jsonl \\
      --missing-predictions drop --annotations samples --out snli-report/
"""
EPILOG += OUT_PROMISE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--cifar10h",
        metavar="CSV",
        help="CIFAR-10H CSV (label, 10 counts, 10 probabilities); one of the three inputs is "
        "required",
    )
    src.add_argument(
        "--chaosnli",
        nargs="+",
        metavar=("JSONL", "PRED"),
        help="ChaosNLI JSONL followed by one or more prediction files (joined on uid); one of "
        "the three inputs is required",
    )
    src.add_argument(
        "--npz",
        metavar="FILE",
        help="NumPy .npz with arrays logits (n, K) and counts (n, K); optional classes, "
        "item_ids, reference (any other array is refused); one of the three inputs is required",
    )
    parser.add_argument(
        "--missing-predictions",
        choices=("error", "drop"),
        default="error",
        help="ChaosNLI items without a prediction: refuse them ('error') or drop them and say "
        "how many (recorded in summary.json) (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="report folder (report.html, summary.json), created or replaced as a whole (required)",
    )
    parser.add_argument(
        "--name", default=None, help="dataset name shown in the report (default: the file's)"
    )
    parser.add_argument(
        "--annotations",
        choices=("auto", "voted", "samples", "distribution"),
        default="auto",
        help="what your calibration data hold; 'auto' reads it from the counts "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="overall",
        help="'ece' follows the guideline for minimising ECE alone, 'both' the two-stage "
        "recipe for true-label and voted-label ECE (default: %(default)s)",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME",
        choices=list(METHODS),
        help="methods in the comparison table; Uncalibrated, TS and the recommended one "
        f"always run (choices: {', '.join(METHODS)}; default: all)",
    )
    parser.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="the one seed of every random step: split, folds, label draws "
        "(default: %(default)s; the benchmark uses 42)",
    )
    parser.add_argument(
        "--cal-fraction",
        type=open_unit,
        default=0.5,
        help="share of the items in the calibration half (default: %(default)s)",
    )
    parser.add_argument(
        "--n-bins",
        type=integer(1, MAX_CELLS),
        default=15,
        help="confidence bins of the ECEs (default: %(default)s)",
    )
    parser.add_argument(
        "--n-draws",
        type=integer(1, MAX_LABEL_DRAWS),
        default=100,
        help="label draws of the sampled ECEs (default: %(default)s)",
    )
    parser.add_argument(
        "--n-boot",
        type=integer(2, MAX_BOOT, or_zero=True),
        default=200,
        help="bootstrap replicates of every metric's interval over the test items and label "
        "draws; 0 for no intervals (default: %(default)s)",
    )
    parser.add_argument(
        "--prob",
        type=open_unit,
        default=0.9,
        help="probability of the metric intervals (default: %(default)s)",
    )
    parser.add_argument(
        "--cv-folds",
        type=integer(2),
        default=5,
        help="folds of the cross-validation on the calibration half behind the "
        "recommendation (default: %(default)s)",
    )
    parser.add_argument(
        "--max-items",
        type=integer(MIN_ITEMS, why="an audit splits the items in two halves"),
        default=None,
        help="audit a seeded random subset of this many items, for quick looks "
        "(default: every item)",
    )
    add_quiet(parser)


def _command(args) -> str:
    """The equivalent command line, rebuilt from the parsed arguments with every default
    spelled out.

    Rebuilt rather than read from ``sys.argv``, which is some other program's
    when :func:`bayescal.cli.main` is called from Python.
    """
    parts = ["bayescal", "audit-ambiguity"]
    if args.cifar10h:
        parts += ["--cifar10h", args.cifar10h]
    elif args.chaosnli:
        parts += ["--chaosnli", *args.chaosnli]
    else:
        parts += ["--npz", args.npz]
    for flag in (
        "missing_predictions",
        "name",
        "annotations",
        "objective",
        "seed",
        "cal_fraction",
        "n_bins",
        "n_draws",
        "n_boot",
        "prob",
        "cv_folds",
        "max_items",
    ):
        value = getattr(args, flag)
        if value is not None:
            parts += ["--" + flag.replace("_", "-"), str(value)]
    if args.methods:
        parts += ["--methods", *args.methods]
    parts += ["--out", args.out]
    return " ".join(shlex.quote(str(p)) for p in parts)


def _source(args: argparse.Namespace) -> str:
    """What ``audit-ambiguity`` reads, for the status line (and the heartbeat) while it loads."""
    if args.cifar10h:
        return display_name(args.cifar10h)
    if args.chaosnli:
        return ", ".join(display_name(str(p)) for p in args.chaosnli)
    return display_name(args.npz)


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    check_out_dir(args.out)  # before any loading or fitting: a bad --out costs nothing
    display_of(args).status(f"reading {_source(args)}")
    data = load_ambiguity_data(args)
    if args.name:
        data = dataclasses.replace(data, name=args.name)
    if args.max_items is not None:
        if args.max_items < data.n_items:
            idx = check_random_state(args.seed).choice(data.n_items, args.max_items, replace=False)
            data = data.subset(np.sort(idx))
    say(
        args,
        f"bayescal: {display_name(data.name)}: {data.n_items} items x {data.n_classes} classes",
    )
    result = audit_ambiguity(
        data,
        random_state=args.seed,
        methods=args.methods,
        annotations=args.annotations,
        objective=args.objective,
        cal_fraction=args.cal_fraction,
        n_bins=args.n_bins,
        n_draws=args.n_draws,
        cv_folds=args.cv_folds,
        n_boot=args.n_boot,
        interval_prob=args.prob,
        command=_command(args),
    )
    rec = result.recommendation
    headline = (
        f"bayescal: annotations: {rec.annotations['level']}; recommended {rec.method}"
        + "".join(f"; {n} ECE_true {fmt(r['ece_true'], 2)}%" for n, r in rec.test.items())
    )
    report_outcome(args, result, headline, t0)
    return 0
