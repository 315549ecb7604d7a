"""What the audit commands print: progress lines, one line per warning flag, files written.

Shared by ``bayescal audit`` and ``bayescal audit-ambiguity``. Progress and
file lines go to stderr unless ``--quiet``; warnings are printed even then,
one line each (``bayescal: warning [code]: message``), since they qualify the
numbers in the report.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bayescal.display import display_name
from bayescal.report.core import Report

__all__ = ["say", "progress_wanted", "report_outcome"]


def say(args: argparse.Namespace, message: str) -> None:
    """A progress line on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(message, file=sys.stderr)


def progress_wanted(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal, without ``--quiet`` and outside CI."""
    return not (args.quiet or os.environ.get("CI") or not sys.stderr.isatty())


def report_outcome(
    args: argparse.Namespace, result: Report, headline: str, started: float
) -> dict[str, str]:
    """Save ``result`` to ``--out``, then print the headline, the flags and the files."""
    written = result.save(args.out)
    say(args, headline)
    for flag in result.flags:
        print(f"bayescal: {display_name(flag.line())}", file=sys.stderr)
    for path in written.values():
        say(args, f"bayescal: wrote {path}")
    say(args, f"bayescal: done in {time.perf_counter() - started:.1f} s")
    return written
