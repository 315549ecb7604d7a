"""What the audit commands print: progress lines, one line per warning flag, files written.

Shared by ``bayescal audit`` and ``bayescal audit-ambiguity``. Everything goes
through the run's :class:`~bayescal.progress.Display` (made by
:func:`bayescal.cli.main`): progress and file lines go to stderr unless
``--quiet``; warnings are printed even then, one line each
(``bayescal: warning [code]: message``), since they qualify the numbers in the
report.
"""

from __future__ import annotations

import argparse
import time

from bayescal.progress import Display
from bayescal.progress import progress_wanted as _progress_wanted
from bayescal.report.core import Report

__all__ = ["say", "progress_wanted", "report_outcome", "display_of"]


def display_of(args: argparse.Namespace) -> Display:
    """The run's display (``args._display``, set by :func:`bayescal.cli.main`), or a plain one
    for ``run(args)`` called without it."""
    display = getattr(args, "_display", None)
    return display if display is not None else Display(quiet=getattr(args, "quiet", False))


def say(args: argparse.Namespace, message: str) -> None:
    """A progress line on stderr, unless ``--quiet``."""
    display_of(args).line(message)


def progress_wanted(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal, without ``--quiet`` and outside CI."""
    return _progress_wanted(getattr(args, "quiet", False))


def report_outcome(
    args: argparse.Namespace, result: Report, headline: str, started: float
) -> dict[str, str]:
    """Save ``result`` to ``--out``, then print the headline, the flags and the files."""
    display = display_of(args)
    display.stage(f"bayescal: writing the report to {args.out}...")
    written = result.save(args.out)
    saved = str(result.summary.get("reproducibility", {}).get("saved", ""))
    if saved.startswith("file by file"):  # not swapped in whole: say so (also in the report)
        display.line(f"bayescal: saved {saved}")
    display.line(headline)
    verdict = result.summary.get("verdict") or {}
    if verdict:  # the decision, and below the warnings what they mean for it
        display.line(f"bayescal: verdict: {verdict['sentence']}")
    for flag in result.flags:
        display.warning(f"bayescal: {flag.line()}")
    for caveat in verdict.get("caveats", ()):
        display.line(f"bayescal: for the verdict: {caveat}")
    for path in written.values():
        display.line(f"bayescal: wrote {path}")
    display.line(f"bayescal: done in {time.perf_counter() - started:.1f} s")
    return written
