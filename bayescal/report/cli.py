"""``bayescal audit``: the command line's options (the parser side).

Binary data by default; ``--probs`` (or a multiclass ``--example``) gives class
probabilities, and the audit runs the steps of their number of classes. This module
only declares the options and checks the ones that need no data
(:func:`check_arguments`), importing nothing numerical, so ``bayescal audit --help``
and a malformed command line answer in a fraction of a second; the audit itself runs
in :mod:`bayescal.report.cli_run`, which :mod:`bayescal.cli` imports once the command
line is accepted.
"""

from __future__ import annotations

import argparse
import math

from bayescal.errors import ConfigError
from bayescal.examples import EXAMPLES, MULTICLASS_EXAMPLES
from bayescal.options import (
    CHANNEL_CHOICES,
    MAX_INFLATE,
    MULTICLASS_CHANNEL_CHOICES,
    MULTICLASS_SKIP_SECTIONS,
    SKIP_SECTIONS,
    SUBGROUP_CHANNEL_CHOICES,
    VIEW_CHOICES,
)
from bayescal.report.cli_options import (
    MAX_CELLS,
    MAX_CHAINS,
    MAX_DRAWS,
    MIN_DRAWS,
    OUT_PROMISE,
    add_quiet,
    default,
    given,
    integer,
    open_unit,
    seed,
)

__all__ = ["add_arguments", "check_arguments", "wants_multiclass", "at_least_one"]

EPILOG = """\
examples:
  bayescal audit --example snli-entailment --out snli-report/
  bayescal audit ratings.csv --annotators r1,r2,r3 --truth gold --out audit/
  bayescal audit answers.csv --long item,rater,label --channels score-bin-em --out audit/
  bayescal audit 'parts/*.parquet' --channels score-bin-em --bins 15 --out audit/
  bayescal audit --example cifar10h-10class --out cifar-report/
  bayescal audit answers.csv --probs p0,p1,p2 --annotators r1,r2,r3 --out audit/
  bayescal audit ratings.csv --annotators r1,r2 --gold known --groups 1 --out audit/
  bayescal audit q2.csv --annotators r1,r2,r3 --priors q1-audit/posterior.nc --out q2-audit/
  bayescal audit q2.csv --probs p0,p1,p2 --gold known --priors q1/posterior.nc --out q2-audit/
"""
EPILOG += OUT_PROMISE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument(
        "data",
        nargs="?",
        help="CSV or Parquet file (wide, or long with --long); a folder or a glob is "
        "summarised out of core with dask (default: none, give DATA or --example)",
    )
    parser.add_argument(
        "--example",
        choices=sorted(EXAMPLES),
        help="run on an embedded example instead of DATA (default: none)",
    )
    parser.add_argument(
        "--probs",
        default=None,
        metavar="P0,P1,...",
        help="multiclass data: the class-probability columns in class order (runs the "
        "multiclass audit; default: none)",
    )
    parser.add_argument(
        "--classes", default=None, help="multiclass: comma-separated class names (default: 0..C-1)"
    )
    parser.add_argument(
        "--view",
        choices=VIEW_CHOICES,
        default="auto",
        help="multiclass: the analysis the noise-or-ambiguity evidence supports (auto), or "
        "noise, ambiguity or both (default: %(default)s)",
    )
    parser.add_argument("--score", default="score", help="score column (default: %(default)s)")
    parser.add_argument(
        "--annotators",
        default=None,
        help="comma-separated annotator columns (default: every column not named by another "
        "option)",
    )
    parser.add_argument(
        "--truth",
        default=None,
        help="reference-label column: 0/1, or a class with --probs (default: none)",
    )
    parser.add_argument("--item", default=None, help="item-id column (default: none)")
    parser.add_argument(
        "--gold",
        default=None,
        metavar="COL",
        help="column with the known class of gold items (binary: 0/1; multiclass: class index "
        "or name), blank for the others; gold items inform the channels and stay out of the "
        "NC-ECE (default: none)",
    )
    parser.add_argument(
        "--priors",
        default=None,
        metavar="FILE",
        help="posterior.nc of an earlier binary audit (--channels bayes): its channel posterior "
        "becomes this audit's prior, per annotator by name, discounted by --priors-inflate; "
        "conflicts with the new data are flagged (default: weakly informative priors)",
    )
    parser.add_argument(
        "--priors-inflate",
        type=at_least_one,
        default=default(2.0),
        help="drift discount of --priors: the earlier audit counts as 1/INFLATE of its items "
        "(1 = annotators unchanged; default: %(default)s)",
    )
    parser.add_argument(
        "--priors-joint",
        action="store_true",
        help="keep the correlations of the --priors posterior (one normal on the log-odds of "
        "the carried-over rates; multiclass: on the log-ratios of the carried-over confusion "
        "rows) instead of one Beta per rate / Dirichlet per row (default: independent)",
    )
    parser.add_argument(
        "--dependence",
        default=None,
        metavar="all|R1:R2,...",
        help="--channels bayes (binary or multiclass data): also fit the conditional-"
        "dependence model (annotators of a pair share a latent item difficulty; overlapping "
        "pairs merge into one group) and use it for the headline; the report compares both "
        "models (default: answers independent given the class)",
    )
    parser.add_argument(
        "--subgroup",
        default=None,
        metavar="COL",
        help="column of a per-item subgroup (site, sex, scanner; not an annotator): adds the "
        "calibration per subgroup (NC-ECE, interval and test per subgroup, Holm-corrected "
        "test of calibration in every subgroup, largest gap, forest plot; wide tables in "
        "memory; default: none)",
    )
    parser.add_argument(
        "--subgroup-channels",
        default="pooled",
        choices=SUBGROUP_CHANNEL_CHOICES,
        help="channels of each subgroup with --subgroup: partially pooled toward the shared "
        "ones, the shared ones, or each subgroup's own EM (default: %(default)s)",
    )
    parser.add_argument(
        "--gold-in-ece",
        action="store_true",
        help="also count the gold items in the calibration error (default: left out, since "
        "gold items are often chosen non-randomly)",
    )
    parser.add_argument(
        "--long",
        default=None,
        metavar="ITEM,ANNOTATOR,LABEL",
        help="DATA is a long table with these three columns, the score per item in --score "
        "(default: DATA is wide, one column per annotator)",
    )
    parser.add_argument(
        "--groups",
        type=integer(1, MAX_CELLS),
        default=None,
        help="equal-width score groups with their own prevalence in the channel model; 1 is "
        "the marginal design, which needs 3 or more annotators (default: 5; multiclass: one "
        "group per predicted class, or this many confidence groups)",
    )
    parser.add_argument(
        "--channels",
        choices=CHANNEL_CHOICES,
        default="bayes",
        help="how the annotator channels are estimated: 'bayes' samples their posterior and "
        "carries it into the NC-ECE interval; the others are point estimators "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--bins",
        type=integer(1, MAX_CELLS),
        default=10,
        help="equal-width evaluation bins of the NC-ECE (default: %(default)s)",
    )
    parser.add_argument(
        "--draws",
        type=integer(MIN_DRAWS, MAX_DRAWS, why="R-hat and ESS need 4 draws per chain"),
        default=default(1000),
        help="posterior draws per chain kept after tuning, with --channels bayes "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--tune",
        type=integer(0, MAX_DRAWS),
        default=default(1000),
        help="tuning (warm-up) steps per chain, discarded, with --channels bayes "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--chains",
        type=integer(1, MAX_CHAINS),
        default=default(2),
        help="independent chains; R-hat compares them, with --channels bayes "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--prob",
        type=open_unit,
        default=0.9,
        help="probability of the NC-ECE interval (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=seed,
        default=0,
        help="the one seed of every random step, recorded in the report (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="report folder (report.html, summary.json, posterior.nc), created or replaced "
        "as a whole (required)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        choices=sorted(SKIP_SECTIONS),
        default=None,
        metavar="SECTION",
        help="leave out an optional section (repeatable); it stays in the report and in "
        "summary.json as skipped, with the reason: "
        + "; ".join(f"{name}: {what}" for name, what in SKIP_SECTIONS.items())
        + " (multiclass data: recalibration, items and subgroups; default: none)",
    )
    parser.add_argument(
        "--no-crowdkit",
        action="append_const",
        dest="skip",
        const="crowdkit",
        help="the same as --skip crowdkit (default: the comparison runs when crowd-kit is "
        "installed)",
    )
    add_quiet(parser)


def check_arguments(args: argparse.Namespace) -> None:
    """The option combinations that are wrong whatever the data (one-line errors, exit 2),
    checked before anything numerical is imported. Fills in the binary default of
    ``--groups``; every number of classes then runs in :mod:`bayescal.report.cli_run`."""
    args.skip = tuple(dict.fromkeys(args.skip or ()))  # in the order given, once each
    multiclass = wants_multiclass(args)
    if multiclass:
        if args.channels not in MULTICLASS_CHANNEL_CHOICES:
            raise ConfigError(
                f"--channels {args.channels} is a binary estimator; multiclass data take "
                f"{' or '.join(MULTICLASS_CHANNEL_CHOICES)}."
            )
        if "crowdkit" in args.skip:
            # the same command line often runs on both tracks: a switch for a section this
            # track does not have changes nothing, and says so in one line
            args.skip = tuple(name for name in args.skip if name != "crowdkit")
            args._skip_note = (
                "bayescal: note: --no-crowdkit / --skip crowdkit changes nothing here: the "
                "crowd-kit comparison is a section of the binary audit only."
            )
        extra = [name for name in args.skip if name not in MULTICLASS_SKIP_SECTIONS]
        if extra:
            raise ConfigError(
                f"--skip {', '.join(extra)}: the multiclass audit has no such section; it can "
                f"skip {', '.join(MULTICLASS_SKIP_SECTIONS)}."
            )
    else:
        classes_alone = bool(args.classes and not args.probs)  # --probs P0,P1 is binary data
        stray = [
            f for f, on in (("--classes", classes_alone), ("--view", args.view != "auto")) if on
        ]
        if stray:
            raise ConfigError(f"{' and '.join(stray)} apply to multiclass data only: add --probs.")
        if args.groups is not None and given(args.groups) and args.channels == "dawid-skene-em":
            raise ConfigError(
                f"--groups {args.groups} changes nothing with --channels dawid-skene-em: on two "
                "classes it fits one prevalence for all items (the marginal Dawid-Skene model). "
                "Leave --groups out, or use --channels score-bin-em for one prevalence per "
                "score group."
            )
        if args.groups is None:
            args.groups = default(5)  # marked, so that a second check can tell it was not given
    _check_knowledge_options(args)
    if "subgroups" in args.skip and not getattr(args, "subgroup", None):
        note = (
            "bayescal: note: --skip subgroups changes nothing here: there is a subgroup "
            "section only with --subgroup COL."
        )
        earlier = getattr(args, "_skip_note", None) or ""
        if note not in earlier:  # the arguments may be checked twice
            args._skip_note = f"{earlier}\n{note}".strip()
    if args.priors is not None and args.channels != "bayes":
        raise ConfigError("--priors are for the Bayesian channels: use --channels bayes.")
    sampler = [f"--{name}" for name in ("draws", "tune", "chains") if given(getattr(args, name))]
    if sampler and args.channels != "bayes":
        raise ConfigError(
            f"{', '.join(sampler)} set the sampler of the Bayesian channels; --channels "
            f"{args.channels} is a point fit and samples nothing: leave them out, or use "
            "--channels bayes."
        )


def wants_multiclass(args: argparse.Namespace) -> bool:
    """``--probs`` with more than two columns, or a multiclass example named.

    Two probability columns are binary data: they go the binary way (an empty name
    among them is refused when the data are read).

    Examples
    --------
    >>> wants_multiclass(argparse.Namespace(probs=None, example="cifar10h-10class"))
    True
    >>> wants_multiclass(argparse.Namespace(probs="p0,p1", example=None))
    False
    """
    probs: str | None = getattr(args, "probs", None)
    many = probs is not None and len(probs.split(",")) > 2
    return many or getattr(args, "example", None) in MULTICLASS_EXAMPLES


def at_least_one(text: str) -> float:
    """An argparse type: a number from 1 to MAX_INFLATE (the drift discount of --priors)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value >= 1.0 and math.isfinite(value)):  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a finite number >= 1; got {text!r}")
    if value > MAX_INFLATE:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_INFLATE:,.0f} (beyond it an earlier audit of a million items "
            f"counts as less than one item: audit without --priors instead); got {text!r}"
        )
    return value


def _check_knowledge_options(args: argparse.Namespace) -> None:
    """The gold, priors and subgroup options that need another option."""
    if getattr(args, "subgroup_channels", "pooled") != "pooled" and not getattr(
        args, "subgroup", None
    ):
        raise ConfigError("--subgroup-channels needs --subgroup COL.")
    if getattr(args, "subgroup", None) and getattr(args, "example", None):
        raise ConfigError("--subgroup names a column of DATA; the examples have no subgroup.")
    if getattr(args, "example", None):
        columns = [
            f"--{name}"
            for name in ("annotators", "truth", "item", "long", "probs")
            if getattr(args, name, None)
        ]
        if getattr(args, "score", "score") != "score":
            columns.insert(0, "--score")
        if columns:
            raise ConfigError(
                f"{', '.join(columns)} name{'s' if len(columns) == 1 else ''} columns of DATA; "
                f"--example {args.example} has its own columns. Leave "
                f"{'it' if len(columns) == 1 else 'them'} out, or give your data file instead "
                "of --example."
            )
    if getattr(args, "subgroup", None) and getattr(args, "long", None):
        raise ConfigError(
            "--subgroup reads a column of a wide table (one row per item); it does not work "
            "with --long yet."
        )
    if args.gold_in_ece and not args.gold:
        raise ConfigError("--gold-in-ece needs --gold COL (the column of gold items' classes).")
    if args.priors_joint and not args.priors:
        raise ConfigError("--priors-joint needs --priors FILE.")
    if given(args.priors_inflate) and not args.priors:
        raise ConfigError("--priors-inflate needs --priors FILE (it discounts that file).")
    if args.dependence is not None and args.channels != "bayes":
        raise ConfigError(
            "--dependence needs the Bayesian channels: use --channels bayes (the default)."
        )
