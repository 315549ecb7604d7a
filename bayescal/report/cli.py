"""``bayescal audit``: the calibration audit from the command line.

Binary data by default; with ``--probs`` (or a multiclass ``--example``) the
multiclass audit runs instead (:mod:`bayescal.report.multiclass_cli`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from bayescal.errors import ConfigError
from bayescal.examples import EXAMPLES
from bayescal.report.audit import CHANNEL_CHOICES, audit
from bayescal.report.cli_output import progress_wanted, report_outcome, say
from bayescal.report.core import check_out_dir, fmt
from bayescal.report.inputs import load_audit_data
from bayescal.report.multiclass_cli import VIEW_CHOICES, run_multiclass, wants_multiclass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", nargs="?", help="CSV or Parquet file (wide, or long with --long)")
    parser.add_argument(
        "--example", choices=sorted(EXAMPLES), help="run on an embedded example instead of DATA"
    )
    parser.add_argument("--score", default="score", help="score column (default: score)")
    parser.add_argument(
        "--probs",
        default=None,
        metavar="P0,P1,...",
        help="multiclass data: the class-probability columns in class order (runs the "
        "multiclass audit)",
    )
    parser.add_argument(
        "--classes", default=None, help="multiclass: comma-separated class names (optional)"
    )
    parser.add_argument(
        "--view",
        choices=VIEW_CHOICES,
        default="auto",
        help="multiclass: the analysis the noise-or-ambiguity evidence supports (auto), or "
        "noise, ambiguity or both",
    )
    parser.add_argument(
        "--annotators", default=None, help="comma-separated annotator columns (default: all others)"
    )
    parser.add_argument("--truth", default=None, help="reference-label column (optional)")
    parser.add_argument("--item", default=None, help="item-id column (optional)")
    parser.add_argument(
        "--long",
        default=None,
        metavar="ITEM,ANNOTATOR,LABEL",
        help="DATA is a long table with these three columns (score per item in --score)",
    )
    parser.add_argument(
        "--groups",
        type=int,
        default=None,
        help="equal-width score groups for the channels (default 5; multiclass: one group "
        "per predicted class, or this many confidence groups)",
    )
    parser.add_argument("--channels", choices=CHANNEL_CHOICES, default="bayes")
    parser.add_argument(
        "--bins", type=int, default=10, help="equal-width evaluation bins (default 10)"
    )
    parser.add_argument(
        "--draws", type=int, default=1000, help="posterior draws per chain (default 1000)"
    )
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument(
        "--prob", type=float, default=0.9, help="interval probability (default 0.9)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the one seed of every random step (default 0)"
    )
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    check_out_dir(args.out)  # before any loading or fitting: a bad --out costs nothing
    if wants_multiclass(args):
        return run_multiclass(args, t0)
    stray = [f for f, on in (("--classes", args.classes), ("--view", args.view != "auto")) if on]
    if stray:
        raise ConfigError(f"{' and '.join(stray)} apply to multiclass data only: add --probs.")
    if args.groups is None:
        args.groups = 5
    data = load_audit_data(args)
    say(args, f"bayescal: {data!r}")
    say(
        args,
        f"bayescal: auditing with channels={args.channels} "
        f"(groups={args.groups}, bins={args.bins})...",
    )
    result = audit(
        data,
        channels=args.channels,
        groups=args.groups,
        bins=args.bins,
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        prob=args.prob,
        random_state=args.seed,
        progress=progress_wanted(args),
        command="bayescal "
        + " ".join(shlex.quote(a) for a in getattr(args, "_argv", sys.argv[1:])),
    )
    nc = result.summary["ece"]["nc"]
    soft = result.summary["ece"]["soft_vote"]
    headline = (
        f"bayescal: NC-ECE {fmt(nc['point'])} ({int(round(nc['prob'] * 100))}% interval "
        f"[{fmt(nc['lo'])}, {fmt(nc['hi'])}]), soft-vote ECE {fmt(soft)}"
    )
    report_outcome(args, result, headline, t0)
    return 0
