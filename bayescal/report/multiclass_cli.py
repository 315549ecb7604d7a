"""``bayescal audit --probs ...``: the multiclass audit from the command line.

``bayescal audit`` hands over here when ``--probs`` names the class-probability
columns or ``--example`` names a multiclass example; the arguments are those of
``bayescal audit`` (:mod:`bayescal.report.cli`) plus ``--probs``, ``--classes``
and ``--view``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

from bayescal.bayes.posterior_file import load_multiclass_posterior
from bayescal.bayes.priors import ChannelPriors
from bayescal.errors import ConfigError
from bayescal.examples import load_example
from bayescal.report.cli import check_arguments
from bayescal.report.cli_output import progress_wanted, report_outcome, say
from bayescal.report.core import check_out_dir, fmt
from bayescal.report.inputs import describe_columns, load_audit_data
from bayescal.report.multiclass_audit import audit_multiclass

__all__ = ["load_multiclass_data", "run", "run_multiclass"]


def run(args: argparse.Namespace) -> int:
    """``bayescal audit`` on multiclass data (:func:`bayescal.report.cli.check_arguments`
    names this module as the run module when :func:`~bayescal.report.cli.wants_multiclass`)."""
    started = time.perf_counter()
    check_arguments(args)  # again, for callers of run() that skipped bayescal.cli.main
    check_out_dir(args.out)  # before any loading or fitting: a bad --out costs nothing
    return run_multiclass(args, started)


def load_multiclass_data(args: argparse.Namespace):
    """The :class:`~bayescal.data.multiclass.MulticlassAnnotations` the arguments name.

    Examples
    --------
    >>> args = argparse.Namespace(example="snli-3class", data=None, probs=None)
    >>> load_multiclass_data(args).classes
    ['entailment', 'neutral', 'contradiction']
    """
    if args.example:
        if args.data:
            raise ConfigError("give either DATA or --example, not both.")
        if args.probs:
            raise ConfigError("--example sets its own columns; leave out --probs.")
        if getattr(args, "gold", None):
            raise ConfigError("--example has no gold column; --gold needs a DATA file.")
        return load_example(args.example)
    if not args.data:
        raise ConfigError("no data: give a CSV/Parquet file or --example NAME.")
    return load_audit_data(args)


def _earlier_confusions(args: argparse.Namespace):
    """The --priors file's confusion posterior, checked before the data are read."""
    if getattr(args, "priors", None) is None:
        return None
    return load_multiclass_posterior(args.priors)


def run_multiclass(args: argparse.Namespace, started: float) -> int:
    """Load, audit, save and report; the options and ``--out`` were checked by the caller.

    Examples
    --------
    >>> import tempfile, time
    >>> from bayescal.cli import build_parser
    >>> from bayescal.report import cli
    >>> parser = build_parser()
    >>> sub = parser._subparsers._group_actions[0].choices["audit"]
    >>> cli.add_arguments(sub)
    >>> out = tempfile.mkdtemp() + "/report"
    >>> args = parser.parse_args(["audit", "--example", "snli-3class", "--channels",
    ...                           "dawid-skene-em", "--out", out, "--quiet"])
    >>> run_multiclass(args, time.perf_counter())
    0
    """
    earlier = _earlier_confusions(args)
    data = load_multiclass_data(args)
    priors = None
    if earlier is not None:
        priors = ChannelPriors.from_fit(
            earlier,
            inflate=args.priors_inflate,
            annotators=data.annotators,
            classes=data.classes,
            joint=bool(getattr(args, "priors_joint", False)),
        )
    groups = "predicted" if args.groups is None else args.groups
    if getattr(args, "_skip_note", None):
        say(args, args._skip_note)
    say(args, f"bayescal: {data!r}")
    if data.columns:
        say(args, f"bayescal: {describe_columns(data)}")
    say(
        args,
        f"bayescal: multiclass audit with channels={args.channels} (groups={groups}, "
        f"bins={args.bins}, view={args.view})...",
    )
    result = audit_multiclass(
        data,
        channels=args.channels,
        groups=groups,
        bins=args.bins,
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        prob=args.prob,
        view=args.view,
        random_state=args.seed,
        progress=progress_wanted(args),
        gold_in_ece=bool(getattr(args, "gold_in_ece", False)),
        priors=priors,
        dependence=getattr(args, "dependence", None),
        subgroup=getattr(args, "subgroup", None),
        subgroup_channels=getattr(args, "subgroup_channels", "pooled"),
        skip=tuple(getattr(args, "skip", None) or ()),
        command="bayescal "
        + " ".join(shlex.quote(a) for a in getattr(args, "_argv", sys.argv[1:])),
    )
    s = result.summary
    nc = s["ece"]["nc"]
    noise = (
        f"top-label NC-ECE {fmt(nc['point'])} ({int(round(nc['prob'] * 100))}% interval "
        f"[{fmt(nc['lo'])}, {fmt(nc['hi'])}])"
    )
    ece_true = s["ece"]["ambiguity"].get("ece_true")
    views = [noise] if ece_true is None else [noise, f"ECE_true {fmt(ece_true)}"]
    if s["view"]["ran"] == ["ambiguity"]:
        views.reverse()  # the view the evidence supports comes first
    headline = (
        f"bayescal: evidence: {s['view']['evidence']}; {', '.join(views)}, soft-vote ECE "
        f"{fmt(s['ece']['soft_vote'])}"
    )
    if getattr(args, "dependence", None) is not None:
        headline += " (dependence model; the report compares it with independence)"
    report_outcome(args, result, headline, started)
    return 0
