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
import json
import os
import signal
import time

from bayescal._blas import available_cpus
from bayescal.progress import Display
from bayescal.progress import progress_wanted as _progress_wanted
from bayescal.report.core import Report

__all__ = ["say", "progress_wanted", "report_outcome", "display_of", "draw_figures"]


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
    draw_figures(result)
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


def draw_figures(result: Report) -> None:
    """Draw ``result``'s figures on two cores: every second one in a forked child process.

    Drawing and encoding the figures (both layouts of each) is the largest single-threaded
    part of an audit command (about a fifth of the embedded example's CPU). The child draws
    its share from the same callables and sends the base64 encodings back through a pipe as
    JSON; the parent draws the rest meanwhile, then takes the child's
    (:meth:`~bayescal.report.core.Figure.use_drawn`). Whatever the child could not draw (a
    plotting error, a child that died) is drawn again by
    :meth:`~bayescal.report.core.Report.draw_figures` in this process, which marks a figure
    that fails there too exactly as without the child. With one CPU, no ``os.fork`` or fewer
    than two figures to draw, everything is drawn here. Only the command line calls this: a
    library user's process (a notebook kernel, say) is never forked.
    """
    pending = [fig for section in result.sections for fig in section.figures if not fig.drawn]
    if len(pending) < 2 or available_cpus() < 2 or not hasattr(os, "fork"):
        result.draw_figures()
        return
    ours, theirs = pending[0::2], pending[1::2]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: draw its share, send it, exit without any clean-up of the parent's
        code = 1
        try:
            os.close(read)
            drawn = {}
            for i, fig in enumerate(theirs):
                try:
                    drawn[i] = (fig.png_base64, fig.narrow_png_base64)
                except Exception:  # drawn again, and flagged, by the parent
                    continue
            with os.fdopen(write, "w", encoding="ascii") as fh:
                json.dump(drawn, fh)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, encoding="ascii") as fh:
        try:
            for fig in ours:
                try:
                    fig.png_base64, fig.narrow_png_base64  # noqa: B018 - drawn and cached
                except Exception:  # drawn again, and flagged, by Report.draw_figures below
                    continue
            text = fh.read()
            status = os.waitpid(pid, 0)[1]
        except BaseException:  # an interrupt: the child is not left behind
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
    if status == 0 and text:
        for i, (png, narrow) in json.loads(text).items():
            theirs[int(i)].use_drawn(png, narrow)
    result.draw_figures()
