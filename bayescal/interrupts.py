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

The first signal decides, in the order the signals arrived (Python's wakeup
fd; Python itself would handle signals pending together in number order, SIGINT
first). Once it has raised :class:`Interrupted`, further
SIGINT / SIGTERM / SIGHUP (Ctrl-C pressed again, a supervisor's SIGTERM) are recorded in
``guard.later`` and change nothing: the clean-up the first one started is not
cut, and the exit status and message are the first signal's. With
``ignore_after_stop=True`` (the command line, as a whole process) they stay
ignored after the block too, until the process exits: a SIGTERM in the last
instant of interpreter shutdown would otherwise kill it with 143 after it said
"interrupted by SIGINT".

An exception raised by a signal handler is lost when the handler happens to run
inside a callback from C (a ctypes callback such as numba's object-cache hook
while it compiles, a ``__del__`` or weakref finaliser): Python reports it to
``sys.unraisablehook`` and carries on. Inside :func:`interrupts_raised` that hook
recognises a lost :class:`Interrupted` and has it raised again a few
milliseconds later, from whatever Python code runs next (again and again, until
it is raised somewhere it propagates); :meth:`InterruptGuard.check` raises it at
once where a stage ends, and the block raises it when it ends normally, so a
stopped run never goes on to write its report and exit 0.

Signal handlers belong to the main thread: elsewhere both context managers
change nothing (a signal is then handled in the main thread, as always).
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Interrupted", "HELD_SIGNALS", "interrupts_raised", "signals_held", "exit_status"]

#: The signals a run stops on, and the ones held during a commit: Ctrl-C, a supervisor's
#: SIGTERM, and SIGHUP (the terminal or SSH session closed; under ``nohup``, which ignores
#: it, it stays ignored: see :func:`_python_handlers`).
HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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
    """What :func:`interrupts_raised` yields: the signals received, in the order they
    arrived (``first``, then ``later``, which were ignored), and ``quiet()``, which
    ignores every further signal."""

    active: bool
    quieted: bool = False
    arrivals: list[int] = field(default_factory=list)
    raised: bool = False
    #: times the Interrupted was lost in a callback from C and raised again
    lost: int = 0
    #: a lost Interrupted that has not been raised again yet
    pending: bool = False

    @property
    def first(self) -> int | None:
        """The signal that stopped the run (None while it runs)."""
        return self.arrivals[0] if self.arrivals else None

    @property
    def later(self) -> list[int]:
        """Signals that came after the first; they changed nothing."""
        return self.arrivals[1:]

    def check(self) -> None:
        """Raise the :class:`Interrupted` of a signal whose first raise was lost in a
        callback from C and has not been raised again yet (nothing otherwise)."""
        if self.pending and self.first is not None:
            self.pending = False
            raise Interrupted(self.first)

    def quiet(self) -> None:
        """Ignore further SIGINT / SIGTERM (the run is already stopping and saying so)."""
        if self.active and not self.quieted:
            for signum in HELD_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)
            self.quieted = True


class _ArrivalOrder:
    """The order in which signals arrived, from Python's wakeup fd.

    Python runs the handlers of signals that are pending together in signal-number
    order (SIGINT before SIGTERM), whatever order they came in: a SIGTERM that
    arrives while the main thread is inside a long C call and a Ctrl-C 20 ms later
    are handled as "SIGINT, then SIGTERM". The C-level handler writes each signal's
    number to the wakeup fd the moment it arrives, so the fd has the true order.
    When another wakeup fd is set (an event loop), it is left alone and the handlers'
    order is used.
    """

    def __init__(self) -> None:
        self.fds: tuple[int, int] | None = None
        r, w = os.pipe()
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        try:
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except (ValueError, OSError):
            old = None
        if old != -1:  # not ours to replace (or not possible): leave it
            if old is not None:
                signal.set_wakeup_fd(old)
            os.close(r)
            os.close(w)
            return
        self.fds = (r, w)

    def take(self, signum: int) -> list[int]:
        """The held signals that arrived since the last call (``[signum]`` without an fd)."""
        if self.fds is None:
            return [int(signum)]
        data = b""
        try:
            while chunk := os.read(self.fds[0], 4096):
                data += chunk
        except BlockingIOError:
            pass
        return [b for b in data if b in HELD_SIGNALS]

    def close(self) -> None:
        if self.fds is not None:
            signal.set_wakeup_fd(-1)
            for fd in self.fds:
                os.close(fd)
            self.fds = None


def _python_handlers() -> dict:
    """The current handler of each held signal; a handler installed outside Python (None)
    cannot be put back, so that signal is left alone, and so is a SIGHUP the caller ignores
    (``nohup bayescal audit ...`` must survive the terminal closing)."""
    handlers = {signum: signal.getsignal(signum) for signum in HELD_SIGNALS}
    return {
        signum: h
        for signum, h in handlers.items()
        if h is not None and not (signum == signal.SIGHUP and h == signal.SIG_IGN)
    }


@contextmanager
def interrupts_raised(*, ignore_after_stop: bool = False) -> Iterator[InterruptGuard]:
    """Inside the block, the first SIGINT / SIGTERM raises :class:`Interrupted`; later ones
    are recorded in ``guard.later`` and ignored. Handlers are restored after the block,
    unless ``ignore_after_stop`` and a signal came: then both signals stay ignored.

    Examples
    --------
    >>> import os
    >>> with interrupts_raised() as guard:
    ...     try:
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ...     except Interrupted as exc:
    ...         os.kill(os.getpid(), signal.SIGINT)  # while stopping: recorded, ignored
    ...         print(exc.exit_status, guard.later)
    143 [2]
    """
    if not _in_main_thread():
        yield InterruptGuard(active=False)
        return
    guard = InterruptGuard(active=True)
    order = _ArrivalOrder()
    state = _Redelivery(guard)

    def handler(signum, frame) -> None:
        arrived = order.take(signum)
        if guard.pending and not state.in_hook:
            if guard.first in arrived:  # the re-sent first signal (`_Redelivery.fire`)
                arrived.remove(guard.first)
            guard.arrivals += arrived
            guard.check()
        # (a signal read ahead with an earlier one is not counted twice)
        guard.arrivals += arrived or ([] if guard.arrivals else [int(signum)])
        if not guard.raised:
            guard.raised = True
            raise Interrupted(guard.arrivals[0])  # the first to arrive, not the first handled
        # already stopping: the first signal decides

    previous = _python_handlers()
    for signum in previous:
        signal.signal(signum, handler)
    previous_hook = sys.unraisablehook
    sys.unraisablehook = state.hook(previous_hook)
    try:
        yield guard
        guard.check()  # a lost Interrupted not raised again before the block ended
    finally:
        state.close()
        if sys.unraisablehook is state.installed:
            sys.unraisablehook = previous_hook
        stopped = guard.raised or guard.quieted
        for signum, previous_handler in previous.items():
            signal.signal(
                signum, signal.SIG_IGN if ignore_after_stop and stopped else previous_handler
            )
        order.close()


#: Seconds between a lost Interrupted and its next raise: long enough for the callback that
#: lost it to return to the code that called it, short against any stage of a run.
REDELIVER_AFTER = 0.01


class _Redelivery:
    """Raise again an :class:`Interrupted` that a callback from C lost.

    The hook marks the guard ``pending`` and, from a timer thread, trips the main
    thread's handler once more (``_thread.interrupt_main``: Python runs the handler at
    the next Python instruction of the main thread); the handler raises again while
    ``pending``. A raise lost again comes back here and is retried.
    """

    def __init__(self, guard: InterruptGuard) -> None:
        self.guard = guard
        self.open = True
        self.in_hook = False
        self.timer: threading.Timer | None = None
        self.installed: Callable[[Any], object] | None = None

    def hook(self, previous: Callable[[Any], object]) -> Callable[[Any], object]:
        def hook(unraisable: Any) -> None:
            if not (self.open and isinstance(unraisable.exc_value, Interrupted)):
                previous(unraisable)
                return
            self.in_hook = True
            try:
                self.guard.lost += 1
                self.guard.pending = True
                self.schedule()
            finally:
                self.in_hook = False

        self.installed = hook
        return hook

    def schedule(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = threading.Timer(REDELIVER_AFTER, self.fire)
        self.timer.daemon = True
        self.timer.start()

    def fire(self) -> None:
        if self.open and self.guard.pending and self.guard.first is not None:
            if self.in_hook:  # never raise inside the hook itself: it would be lost again
                self.schedule()
                return
            _thread.interrupt_main(signal.Signals(self.guard.first))

    def close(self) -> None:
        self.open = False
        if self.timer is not None:
            self.timer.cancel()


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
            handler = signal.getsignal(signum)
            if callable(handler):  # called directly: raise_signal would count it twice
                handler(signum, None)
            else:
                signal.raise_signal(signum)
