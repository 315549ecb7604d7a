"""``bayescal audit``: the run, once :mod:`bayescal.report.cli` has accepted the options.

One path for every number of classes: the data are read (``--probs`` with three or more
columns, or a multiclass ``--example``, give class probabilities),
:func:`~bayescal.report.audit.audit` runs the steps that apply to their number of classes,
and the report is saved and summarised in one headline line.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

from bayescal.progress import dask_progress
from bayescal.report.cli import check_arguments, wants_multiclass
from bayescal.report.cli_output import display_of, progress_wanted, report_outcome, say
from bayescal.report.core import check_out_dir, fmt, p_text
from bayescal.report.inputs import (
    describe_columns,
    folder_note,
    is_out_of_core,
    load_audit_data,
)

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Load, audit, save and report.

    Examples
    --------
    >>> import tempfile
    >>> from bayescal.cli import _parse
    >>> out = tempfile.mkdtemp() + "/report"
    >>> run(_parse(["audit", "--example", "snli-3class", "--channels", "dawid-skene-em",
    ...             "--out", out, "--quiet"]))
    0
    """
    t0 = time.perf_counter()
    check_arguments(args)  # again, for callers of run() that skipped bayescal.cli.main
    check_out_dir(args.out)  # before any loading or fitting: a bad --out costs nothing
    multiclass = wants_multiclass(args)
    earlier = _earlier_posterior(args, multiclass)
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
            inflate=float(args.priors_inflate),
            annotators=data.annotators,
            joint=bool(args.priors_joint),
            **({"classes": data.classes} if multiclass else {}),
        )
    )
    for note in (getattr(args, "_skip_note", None) or "").splitlines():
        say(args, note)
    skipped = folder_note(args.data) if args.data and not args.example else None
    if skipped:
        say(args, skipped)
        data = data.with_notes(" ".join(skipped.removeprefix("bayescal: note: ").split()))
    if getattr(args, "item", None) and args.data and is_out_of_core(args.data) and not args.long:
        note = (
            f"--item {args.item} is left out of the annotators; out of core its ids are not "
            "checked for repeats across files: every row counts as one item (check the files, "
            "or audit one file to have repeated ids refused)."
        )
        say(args, f"bayescal: note: {note}")
        data = data.with_notes(note)  # and in the report's warnings and summary.json
    say(args, f"bayescal: {data!r}")
    if getattr(data, "columns", None):
        say(args, f"bayescal: {describe_columns(data)}")
    groups = "predicted" if multiclass and args.groups is None else args.groups
    groups = int(groups) if isinstance(groups, int) else groups  # a marked default: plain
    say(
        args,
        f"bayescal: multiclass audit with channels={args.channels} (groups={groups}, "
        f"bins={args.bins}, view={args.view})..."
        if multiclass
        else f"bayescal: auditing with channels={args.channels} "
        f"(groups={groups}, bins={args.bins})...",
    )
    sampling = args.channels == "bayes"
    result = audit(
        data,
        channels=args.channels,
        groups=groups,
        bins=args.bins,
        # the sampler's settings for the sampler only (the audit refuses them with point
        # fits; check_arguments refused them when given with a point estimator)
        draws=int(args.draws) if sampling else None,
        tune=int(args.tune) if sampling else None,
        chains=int(args.chains) if sampling else None,
        prob=args.prob,
        view=args.view,
        random_state=args.seed,
        progress=progress_wanted(args),
        gold_in_ece=bool(args.gold_in_ece),
        priors=priors,
        dependence=args.dependence,
        subgroup=getattr(args, "subgroup", None),
        subgroup_channels=getattr(args, "subgroup_channels", "pooled"),
        skip=tuple(args.skip or ()),
        command="bayescal "
        + " ".join(shlex.quote(a) for a in getattr(args, "_argv", sys.argv[1:])),
    )
    headline = _headline(result.summary)
    if args.dependence is not None:
        headline += " (dependence model; the report compares it with independence)"
    nc = result.summary["ece"]["nc"]
    if not nc.get("reliable", True):
        headline += f"; NOT RELIABLE ({', '.join(nc['unreliable_because'])}: see the error lines)"
    report_outcome(args, result, headline, t0)
    return 0


def _headline(s: dict) -> str:
    """The one line that says what the audit found."""
    nc = s["ece"]["nc"]
    interval = f"{int(round(nc['prob'] * 100))}% interval [{fmt(nc['lo'])}, {fmt(nc['hi'])}]"
    soft = f"soft-vote ECE {fmt(s['ece']['soft_vote'])}"
    if "view" not in s:  # two classes
        test = f"calibration test {p_text(nc.get('p_value'))}"
        return f"bayescal: NC-ECE {fmt(nc['point'])} ({interval}, {test}), {soft}"
    views = [f"top-label NC-ECE {fmt(nc['point'])} ({interval})"]
    ece_true = s["ece"]["ambiguity"].get("ece_true")
    if ece_true is not None:
        views.append(f"ECE_true {fmt(ece_true)}")
    if s["view"]["ran"] == ["ambiguity"]:
        views.reverse()  # the view the evidence supports comes first
    return f"bayescal: evidence: {s['view']['evidence']}; {', '.join(views)}, {soft}"


def _earlier_posterior(args: argparse.Namespace, multiclass: bool):
    """The --priors file's channel (confusion) posterior, checked before the data are read."""
    if args.priors is None:
        return None
    from bayescal.bayes.posterior_file import load_channel_posterior, load_multiclass_posterior

    load = load_multiclass_posterior if multiclass else load_channel_posterior
    display_of(args).status(f"reading the earlier posterior {args.priors}")
    return load(args.priors)


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
