"""Ctrl-C and SIGTERM as exceptions, and the short sections no signal may cut in two.

A run is stopped by raising :class:`Interrupted` from the signal handler that
:func:`interrupts_raised` installs (the command line does, for every command).
It is a ``BaseException`` but not a ``KeyboardInterrupt``: samplers and loops
that catch ``KeyboardInterrupt`` to hand back what they have so far (PyMC,
nutpie's blocking mode) let it through, and ``except Exception`` blocks do not
swallow it. Code that must clean up uses ``finally`` or ``except BaseException``.

A few steps must not be interrupted half-way: creating a temporary folder and
registering it for removal, swapping a finished report folder in, removing a
temporary folder. :func:`signals_held` runs such a step with SIGINT and SIGTERM
recorded instead of handled, and delivers them to the previous handlers when the
step is over; the step can look at ``held.received`` to skip work that would
commit a result the user has just asked to abandon.

Signal handlers belong to the main thread: elsewhere both context managers
change nothing (a signal is then handled in the main thread, as always).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Interrupted", "HELD_SIGNALS", "interrupts_raised", "signals_held", "exit_status"]

#: The signals a run stops on, and the ones held during a commit.
HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The run was stopped by a signal (SIGINT: Ctrl-C, or SIGTERM).

    Parameters
    ----------
    signum : int
        The signal number.

    Examples
    --------
    >>> exc = Interrupted(signal.SIGTERM)
    >>> exc.name, exc.exit_status
    ('SIGTERM', 143)
    """

    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        super().__init__(f"interrupted by {self.name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's convention for a process stopped by a signal: 128 + the signal number."""
        return exit_status(self.signum)


def exit_status(signum: int) -> int:
    """128 + ``signum`` (130 for SIGINT, 143 for SIGTERM).

    Examples
    --------
    >>> exit_status(signal.SIGINT)
    130
    """
    return 128 + int(signum)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@dataclass
class InterruptGuard:
    """What :func:`interrupts_raised` yields: ``quiet()`` stops raising on further signals."""

    active: bool
    quieted: bool = False

    def quiet(self) -> None:
        """Ignore further SIGINT / SIGTERM (the run is already stopping and saying so)."""
        if self.active and not self.quieted:
            for signum in HELD_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)
            self.quieted = True


def _python_handlers() -> dict:
    """The current handler of each held signal; a handler installed outside Python (None)
    cannot be put back, so that signal is left alone."""
    handlers = {signum: signal.getsignal(signum) for signum in HELD_SIGNALS}
    return {signum: h for signum, h in handlers.items() if h is not None}


def _raise_interrupted(signum, frame) -> None:
    raise Interrupted(signum)


@contextmanager
def interrupts_raised() -> Iterator[InterruptGuard]:
    """Inside the block, SIGINT and SIGTERM raise :class:`Interrupted`; handlers restored after.

    Examples
    --------
    >>> import os
    >>> with interrupts_raised():
    ...     try:
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ...     except Interrupted as exc:
    ...         print(exc.exit_status)
    143
    """
    if not _in_main_thread():
        yield InterruptGuard(active=False)
        return
    previous = _python_handlers()
    for signum in previous:
        signal.signal(signum, _raise_interrupted)
    try:
        yield InterruptGuard(active=True)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@dataclass
class Held:
    """What :func:`signals_held` yields: the signals received so far inside the block."""

    received: list = field(default_factory=list)


@contextmanager
def signals_held() -> Iterator[Held]:
    """Run a short step that must not be cut in two; SIGINT / SIGTERM are delivered after it.

    Signals that arrive inside the block are recorded in ``held.received``; when
    the block ends the previous handlers are put back and each recorded signal
    is raised again, so the handler in place (for example one raising
    :class:`Interrupted`) runs right after the step, even when the block ends
    with an exception.

    Examples
    --------
    >>> import os
    >>> with interrupts_raised():
    ...     try:
    ...         with signals_held() as held:
    ...             os.kill(os.getpid(), signal.SIGINT)
    ...             print("still running; received", held.received)
    ...     except Interrupted as exc:
    ...         print("then", exc.name)
    still running; received [2]
    then SIGINT
    """
    held = Held()
    if not _in_main_thread():
        yield held
        return

    def record(signum, frame) -> None:
        held.received.append(signum)

    previous = _python_handlers()
    for signum in previous:
        signal.signal(signum, record)
    try:
        yield held
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in dict.fromkeys(held.received):
            signal.raise_signal(signum)
