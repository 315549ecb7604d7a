"""``bayescal audit-ambiguity``: the multiclass ambiguity audit from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import time

import numpy as np

from bayescal._random import check_random_state
from bayescal.ambiguity import METHODS
from bayescal.display import display_name
from bayescal.errors import ConfigError
from bayescal.report.ambiguity_audit import audit_ambiguity
from bayescal.report.cli_output import report_outcome, say
from bayescal.report.core import check_out_dir, fmt
from bayescal.report.inputs import load_ambiguity_data


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--cifar10h", metavar="CSV", help="CIFAR-10H CSV (label, 10 counts, 10 probabilities)"
    )
    src.add_argument(
        "--chaosnli",
        nargs="+",
        metavar=("JSONL", "PRED"),
        help="ChaosNLI JSONL followed by one or more prediction files (joined on uid)",
    )
    src.add_argument(
        "--npz",
        metavar="FILE",
        help="NumPy .npz with arrays logits (n, K) and counts (n, K); "
        "optional classes, item_ids, reference",
    )
    parser.add_argument(
        "--missing-predictions",
        choices=("error", "drop"),
        default="error",
        help="ChaosNLI items without a prediction: refuse (default) or drop them and say how "
        "many (recorded in summary.json)",
    )
    parser.add_argument("--out", required=True, help="output directory (report.html, summary.json)")
    parser.add_argument("--name", default=None, help="dataset name shown in the report")
    parser.add_argument(
        "--annotations",
        choices=("auto", "voted", "samples", "distribution"),
        default="auto",
        help="what your calibration data holds (default: read from the counts)",
    )
    parser.add_argument(
        "--objective",
        choices=("overall", "ece"),
        default="overall",
        help="'ece' follows the guideline for minimising ECE alone (default: overall)",
    )
    parser.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME",
        choices=list(METHODS),
        help="methods in the comparison table (default: all; Uncalibrated, TS and the "
        "recommended one always run)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the one seed of every random step (default 0; the benchmark uses 42)",
    )
    parser.add_argument(
        "--cal-fraction", type=float, default=0.5, help="calibration share (default 0.5)"
    )
    parser.add_argument("--n-bins", type=int, default=15, help="ECE bins (default 15)")
    parser.add_argument(
        "--n-draws", type=int, default=100, help="label draws of the sampled ECEs (default 100)"
    )
    parser.add_argument(
        "--cv-folds", type=int, default=5, help="folds of the recommendation check (default 5)"
    )
    parser.add_argument(
        "--max-items",
        type=int,
        default=None,
        help="audit a seeded random subset of this many items (quick looks)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress output")


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


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    check_out_dir(args.out)  # before any loading or fitting: a bad --out costs nothing
    data = load_ambiguity_data(args)
    if args.name:
        data = dataclasses.replace(data, name=args.name)
    if args.max_items is not None:
        if args.max_items < 1:
            raise ConfigError(f"--max-items must be positive, got {args.max_items}.")
        if args.max_items < data.n_items:
            idx = check_random_state(args.seed).choice(data.n_items, args.max_items, replace=False)
            data = data.subset(np.sort(idx))
    say(
        args,
        f"bayescal: {display_name(data.name)}: {data.n_items} items x "
        f"{data.n_classes} classes; fitting and scoring...",
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
        command=_command(args),
    )
    rec = result.recommendation
    headline = (
        f"bayescal: annotations: {rec.annotations['level']}; recommended {rec.method}"
        + "".join(f"; {n} ECE_true {fmt(r['ece_true'], 2)}%" for n, r in rec.test.items())
    )
    report_outcome(args, result, headline, t0)
    return 0
