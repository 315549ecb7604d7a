"""What a command shows while it works: stage lines, warnings, and on a terminal a live status.

The library reports through the standard :mod:`logging` module under the
``bayescal`` logger, and shows nothing unless someone listens:

- a **stage** is an INFO record (``"sampling the channel posterior: ..."``);
- a **step** inside a long stage is a DEBUG record carrying
  ``extra={"step": (i, n)}`` (``"fitting and scoring SLTS"``, step 3 of 9).

A command listens through one :class:`Display` per run (:func:`bayescal.cli.main`
makes it and attaches it with :meth:`Display.attached`):

- its own lines and the stages go to stderr, one line each, unless ``--quiet``;
- steps update one status line, with the seconds spent so far ticking, only when
  progress is wanted (:func:`progress_wanted`: stderr is a terminal, no
  ``--quiet``, no ``CI`` variable);
- otherwise (a pipe, a log file, CI), unless ``--quiet``, a **heartbeat** line
  follows after every :data:`HEARTBEAT_SECONDS` without output: the stage still
  running, its seconds so far and its latest step (``bayescal: ... still
  fitting the confusions (bayes): 60 s; fitting the confusions (EM) [120/1000]``),
  so a log never stays silent longer than that while a stage works;
- warnings (coded flags, Python warnings, WARNING records) are printed always,
  one line each, since they qualify the numbers in the report.

Out-of-core loading runs on dask's local scheduler; :func:`dask_progress` shows
its finished tasks on the same status line.

Examples
--------
>>> import io, logging
>>> stream = io.StringIO()
>>> display = Display(stream)
>>> with display.attached():
...     logging.getLogger("bayescal.demo").info("sampling the channel posterior")
...     logging.getLogger("bayescal.demo").debug("fitting TS", extra={"step": (1, 9)})
>>> print(stream.getvalue(), end="")
bayescal: sampling the channel posterior
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TextIO

from bayescal.display import display_name

__all__ = ["Display", "progress_wanted", "dask_progress", "step", "step_callback", "LOGGER"]

#: The library's logger; every ``logging.getLogger(__name__)`` in bayescal is below it.
LOGGER = "bayescal"

#: Seconds between redraws of the status line (its elapsed time ticks at this pace).
TICK_SECONDS = 1.0

#: Off a terminal: the longest silence (seconds) before a heartbeat line says which stage
#: is still running. Long enough not to flood a log (a 10-minute run gets about 20
#: lines), short enough that a user or a CI job watching the log sees the run is alive.
HEARTBEAT_SECONDS = 30.0


def step(logger: logging.Logger, i: int, n: int, message: str, *args) -> None:
    """Report step ``i`` of ``n`` of a long stage (a DEBUG record with ``extra={"step": (i, n)}``).

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> with Display(stream).attached():  # not live: steps are not shown
    ...     step(logging.getLogger("bayescal.demo"), 3, 9, "fitting %s", "SLTS")
    >>> stream.getvalue()
    ''
    """
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug(message, *args, extra={"step": (i, n)})


def step_callback(logger: logging.Logger, n: int, message: str) -> Callable[..., None]:
    """A ``progress(i, *extra)`` callback for a loop of at most ``n`` steps: each call reports
    step ``i`` of ``n`` of ``message`` (:func:`step`), shown on the status line of a terminal;
    further arguments (the EM passes its largest parameter change) are ignored.

    The hook for long loops in the library, such as the iterations of the multiclass EM
    (``channels/em.py`` takes a ``progress`` callback): the stage that runs the loop passes
    ``step_callback(_log, max_iter, "fitting the confusions (EM)")``.

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> display = Display(stream, live=True)
    >>> display._draw = lambda: None  # (no terminal here: keep only the status text)
    >>> with display.attached():
    ...     report = step_callback(logging.getLogger("bayescal.demo"), 500, "EM")
    ...     report(3)
    ...     display._status
    'EM [3/500]'
    """

    def report(i: int, *extra: float) -> None:
        step(logger, i, n, message)

    return report


def progress_wanted(quiet: bool, stream: TextIO | None = None) -> bool:
    """Live progress only on a terminal, without ``--quiet`` and outside CI.

    Examples
    --------
    >>> import io
    >>> progress_wanted(False, io.StringIO())  # not a terminal
    False
    """
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not (quiet or os.environ.get("CI") or not (isatty and isatty()))


class Display:
    """One command's output on stderr: lines, warnings, and a live status line.

    Parameters
    ----------
    stream : text stream, optional
        Where everything goes (default: ``sys.stderr`` at the time of each write).
    quiet : bool, default False
        Drop lines and status; warnings are still printed.
    live : bool, default False
        Show steps on one status line that redraws in place (a terminal).
    heartbeat : float or None, default HEARTBEAT_SECONDS
        When not live and not quiet: after this many seconds without output, a line
        naming the stage still running (and its latest step); None turns it off.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        quiet: bool = False,
        live: bool = False,
        heartbeat: float | None = HEARTBEAT_SECONDS,
    ) -> None:
        self._stream = stream
        self.quiet = bool(quiet)
        self.live = bool(live) and not self.quiet
        if heartbeat is not None and not heartbeat > 0:
            raise ValueError(f"heartbeat must be a positive number of seconds; got {heartbeat!r}.")
        self.heartbeat = None if self.live or self.quiet else heartbeat
        self._stage: str | None = None
        self._stage_started = self._last_output = time.monotonic()
        self._lock = threading.RLock()
        self._status: str | None = None
        self._status_started = 0.0
        self._shown = False
        self._gone = False  # the reader of the stream went away (EPIPE): write nothing more
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    @property
    def stream(self) -> TextIO:
        return sys.stderr if self._stream is None else self._stream

    # ------------------------------------------------------------------ writing
    def line(self, text: str) -> None:
        """A line that stays (unless quiet); hidden characters made visible, so one line."""
        if not self.quiet:
            self._write_line(display_name(text))

    def stage(self, text: str) -> None:
        """A stage line (:meth:`line`); the heartbeat names it while it runs."""
        with self._lock:
            self._stage = text.removeprefix("bayescal: ").rstrip(". ")
            self._stage_started = time.monotonic()
            self._status = None
        self.line(text)

    def warning(self, text: str) -> None:
        """A warning line: printed even when quiet, hidden characters made visible."""
        self._write_line(display_name(text))

    def status(self, text: str, step: tuple[int, int] | None = None) -> None:
        """Show ``text`` (with ``[i/n]``) on the status line when live; otherwise keep it for
        the heartbeat (or drop it, without one)."""
        if not (self.live or self.heartbeat):
            return
        if step is not None:
            text = f"{text} [{step[0]}/{step[1]}]"
        with self._lock:
            if text != self._status:
                self._status = text
                self._status_started = time.monotonic()
            if self.live:
                self._draw()

    def clear(self) -> None:
        """Remove the status line (before a line is printed, and at the end of a run)."""
        with self._lock:
            if self._shown:
                self._emit("\r\x1b[K")
                self._shown = False
            self._status = None

    def _write_line(self, text: str) -> None:
        with self._lock:
            self.clear()
            self._emit(text + "\n")
            self._last_output = time.monotonic()

    def _emit(self, text: str) -> None:
        """Write and flush; a reader that went away (``bayescal audit ... 2>&1 | head -1``:
        EPIPE) ends the output, not the run, so the report is still written."""
        if self._gone:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except BrokenPipeError:
            self._gone = True

    def beat(self, now: float | None = None) -> bool:
        """Write the heartbeat line if :attr:`heartbeat` seconds passed without output
        (the ticker calls this); True when a line was written."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if self.heartbeat is None or now - self._last_output < self.heartbeat:
                return False
            what = self._stage or "working"
            text = f"bayescal: ... still {what}: {now - self._stage_started:.0f} s"
            status, started = self._status, self._status_started
            if status is not None:
                age = now - started
                # a step reported long ago may be over (the EM before the sampler): say when
                text += f"; {status}" if age < self.heartbeat else f"; {status} ({age:.0f} s ago)"
            self._write_line(display_name(text))
            self._status, self._status_started = status, started  # the step still runs
            self._last_output = now
            return True

    def _draw(self) -> None:
        if self._status is None:
            return
        seconds = time.monotonic() - self._status_started
        text = f"bayescal: {self._status} {seconds:.0f} s"
        width = shutil.get_terminal_size((80, 24)).columns - 1
        if len(text) > width:  # a wrapped status line could not be redrawn in place
            text = text[: max(width - 3, 0)] + "..."
        self._emit("\r\x1b[K" + text)
        self._shown = True

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            with self._lock:
                if self.live:
                    self._draw()
                else:
                    self.beat()

    # ------------------------------------------------------------------ listening
    @contextlib.contextmanager
    def attached(self) -> Iterator[Display]:
        """Show the library's stages and steps, and Python warnings, while the block runs.

        Python warnings that reach the top (not collected as flags by the audit) are
        printed as one line each: ``bayescal: warning [Category]: message``.
        """
        logger = logging.getLogger(LOGGER)
        handler = _DisplayHandler(self)
        level = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if self.live or self.heartbeat else logging.INFO)
        self._last_output = self._stage_started = time.monotonic()
        if self.live or self.heartbeat:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick, name="bayescal-status", daemon=True)
            self._ticker.start()
        try:
            with warnings.catch_warnings():
                warnings.showwarning = self._show_warning
                yield self
        finally:
            if self._ticker is not None:
                self._stop.set()
                self._ticker.join()
                self._ticker = None
            self.clear()
            logger.removeHandler(handler)
            logger.setLevel(level)

    def _show_warning(self, message, category, filename, lineno, file=None, line=None) -> None:
        self.warning(f"bayescal: warning [{category.__name__}]: {message}")


class _DisplayHandler(logging.Handler):
    """Records of the ``bayescal`` logger to a :class:`Display`."""

    def __init__(self, display: Display) -> None:
        super().__init__(logging.DEBUG)
        self.display = display

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed record must not end the run (logging's own rule)
            self.handleError(record)
            return
        if record.levelno >= logging.WARNING:
            self.display.warning(f"bayescal: warning: {text}")
        elif (step := getattr(record, "step", None)) is not None:
            self.display.status(text, tuple(step))
        elif record.levelno >= logging.INFO:
            self.display.stage(f"bayescal: {text}")


@contextlib.contextmanager
def dask_progress(display: Display, what: str) -> Iterator[None]:
    """Finished tasks of dask's local scheduler on the status line while the block runs.

    Does nothing (and imports nothing) unless ``display`` is live.
    """
    if not display.live:
        yield
        return
    from dask.callbacks import Callback

    class _Tasks(Callback):
        def _posttask(self, key, result, dsk, state, worker_id):
            done = len(state["finished"])
            total = done + sum(len(state[k]) for k in ("ready", "waiting", "running"))
            display.status(f"{what}: dask tasks", (done, total))

    with _Tasks():
        yield
