"""``bayescal audit``: the binary run, once :mod:`bayescal.report.cli` has accepted the options.

Multiclass data (``--probs`` with three or more columns, or a multiclass ``--example``)
run in :mod:`bayescal.report.multiclass_cli` instead, which
:func:`bayescal.report.cli.check_arguments` names as the run module, so a binary audit
does not import the multiclass model and sections.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

from bayescal.errors import ConfigError
from bayescal.progress import dask_progress
from bayescal.report.cli import check_arguments, wants_multiclass
from bayescal.report.cli_output import display_of, progress_wanted, report_outcome, say
from bayescal.report.core import check_out_dir, fmt, p_text
from bayescal.report.inputs import describe_columns, is_out_of_core, load_audit_data

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    check_arguments(args)  # again, for callers of run() that skipped bayescal.cli.main
    if wants_multiclass(args):
        raise ConfigError(
            "multiclass data: bayescal.report.multiclass_cli.run runs them (bayescal.cli.main "
            "picks it)."
        )
    check_out_dir(args.out)  # before any loading or fitting: a bad --out costs nothing
    earlier = _earlier_posterior(args)
    data = _load(args)
    # The model, sampler and report stages are imported once the inputs are read: a refused
    # --out, --priors or data file answers without them (SciPy, numba, the audit's sections).
    from bayescal.bayes.priors import ChannelPriors
    from bayescal.report.audit import audit

    priors = (
        None
        if earlier is None
        else ChannelPriors.from_fit(
            earlier,
            inflate=args.priors_inflate,
            annotators=data.annotators,
            joint=args.priors_joint,
        )
    )
    say(args, f"bayescal: {data!r}")
    if getattr(data, "columns", None):
        say(args, f"bayescal: {describe_columns(data)}")
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
        gold_in_ece=args.gold_in_ece,
        priors=priors,
        dependence=args.dependence,
        subgroup=getattr(args, "subgroup", None),
        subgroup_channels=getattr(args, "subgroup_channels", "pooled"),
        skip=args.skip,
        command="bayescal "
        + " ".join(shlex.quote(a) for a in getattr(args, "_argv", sys.argv[1:])),
    )
    nc = result.summary["ece"]["nc"]
    soft = result.summary["ece"]["soft_vote"]
    headline = (
        f"bayescal: NC-ECE {fmt(nc['point'])} ({int(round(nc['prob'] * 100))}% interval "
        f"[{fmt(nc['lo'])}, {fmt(nc['hi'])}], calibration test {p_text(nc.get('p_value'))}), "
        f"soft-vote ECE {fmt(soft)}"
    )
    if args.dependence is not None:
        headline += " (dependence model; the report compares it with independence)"
    if not nc.get("reliable", True):
        headline += f"; NOT RELIABLE ({', '.join(nc['unreliable_because'])}: see the error lines)"
    report_outcome(args, result, headline, t0)
    return 0


def _earlier_posterior(args: argparse.Namespace):
    """The --priors file's channel posterior, checked before the data are read."""
    if args.priors is None:
        return None
    from bayescal.bayes.posterior_file import load_channel_posterior

    return load_channel_posterior(args.priors)


def _load(args: argparse.Namespace):
    """The data; on a terminal the status line says what is being read (dask's tasks out of
    core). Nothing is printed otherwise, so a refused file stays a one-line error."""
    display = display_of(args)
    if args.data and not args.example and is_out_of_core(args.data):
        display.status(f"summarising {args.data} out of core")
        with dask_progress(display, "summarising"):
            return load_audit_data(args)
    if args.data and not args.example and os.path.isfile(args.data):
        display.status(f"reading {args.data} ({os.path.getsize(args.data) / 1e6:.1f} MB)")
    return load_audit_data(args)
