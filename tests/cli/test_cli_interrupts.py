"""Ctrl-C and SIGTERM as exceptions nothing swallows, and a report save no signal can cut in two
(issue 11). In this process, with real signals sent to it at chosen points of the work."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import tree

from bayescal.flags import Flag
from bayescal.interrupts import Interrupted, interrupts_raised, signals_held
from bayescal.report import saving
from bayescal.report.core import Provenance, Report, Section


def _signal_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    time.sleep(0.5)  # a signal is handled at the next bytecode; this sleep never ends normally


def test_samplers_that_catch_keyboard_interrupt_cannot_swallow_it():
    """PyMC and nutpie's blocking mode return the draws made so far on KeyboardInterrupt."""

    def sampler_that_keeps_partial_draws():
        try:
            _signal_self(signal.SIGINT)
            return "all draws"
        except KeyboardInterrupt:
            return "the draws made so far"

    with interrupts_raised():
        with pytest.raises(Interrupted) as info:
            sampler_that_keeps_partial_draws()
    assert (info.value.name, info.value.exit_status) == ("SIGINT", 130)
    with interrupts_raised(), pytest.raises(Interrupted) as info:
        _signal_self(signal.SIGTERM)
    assert info.value.exit_status == 143


def test_handlers_are_put_back_after_the_run():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with interrupts_raised() as guard:
        guard.quiet()  # after the first signal, further ones are ignored
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_a_held_step_finishes_and_the_signal_follows():
    done = []
    with interrupts_raised(), pytest.raises(Interrupted):
        with signals_held() as held:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            done.append("step finished")
            assert held.received == [signal.SIGTERM]
    assert done == ["step finished"]


ECE = {
    "nc": {"point": 0.1, "lo": None, "hi": None, "prob": 0.9},
    "soft_vote": 0.2,
    "majority_vote": 0.3,
}


def _report(write_posterior) -> Report:
    return Report(
        "binary",
        "signal test",
        {"n_items": 1, "n_annotators": 1, "channels": {"method": "x"}, "ece": ECE},
        [Section("s", "Section")],
        Provenance.capture(None, 0, "0" * 64, {}),
        flags=[Flag("demo.flag", "a message", "demo")],
        artifacts={"posterior.nc": write_posterior},
    )


@pytest.fixture
def earlier(tmp_path) -> Path:
    out = tmp_path / "report"
    _report(lambda path: Path(path).write_bytes(b"earlier posterior")).save(out)
    return out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_saving_leaves_the_earlier_report_byte_identical(earlier, signum):
    before = tree(earlier)

    def interrupted_write(path):
        Path(path).write_bytes(b"half a posterior")
        _signal_self(signum)

    with interrupts_raised(), pytest.raises(Interrupted):
        _report(interrupted_write).save(earlier)
    assert tree(earlier) == before
    assert [p.name for p in earlier.parent.iterdir()] == ["report"]  # no .partial / .old


def test_a_signal_inside_the_swap_lets_it_finish_then_stops(earlier, monkeypatch):
    """The swap is the commit: a signal in it waits, the new report is complete, then it stops."""
    commit = saving._commit

    def commit_with_a_signal(staging, target, backup):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        commit(staging, target, backup)

    monkeypatch.setattr(saving, "_commit", commit_with_a_signal)
    with interrupts_raised(), pytest.raises(Interrupted):
        _report(lambda path: Path(path).write_bytes(b"new posterior")).save(earlier)
    assert (earlier / "posterior.nc").read_bytes() == b"new posterior"
    assert sorted(p.name for p in earlier.iterdir()) == [
        "posterior.nc",
        "report.html",
        "summary.json",
    ]
    assert [p.name for p in earlier.parent.iterdir()] == ["report"]


def test_the_first_signal_to_arrive_decides_not_the_first_handled():
    """A SIGTERM that arrives while the main thread is inside a long C call, and a Ctrl-C
    50 ms later: Python runs the two handlers in signal-number order (SIGINT first) once
    the call returns; the run still stops as SIGTERM (the wakeup fd has the true order),
    and the SIGINT is recorded as later, ignored. The signals come from another process
    (a thread of this one would need the GIL, which the C call holds)."""
    import subprocess

    pid = os.getpid()
    with interrupts_raised() as guard:
        sender = subprocess.Popen(
            ["sh", "-c", f"sleep 0.2; kill -TERM {pid}; sleep 0.05; kill -INT {pid}"]
        )
        with pytest.raises(Interrupted) as info:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 30 and sender.poll() is None:
                sum(range(10**8))  # one C call of about a second: no handler runs inside
            time.sleep(0.5)  # a signal is handled at the next bytecode; this never ends
        sender.wait()
        time.sleep(0.05)  # any signal still on its way lands inside the block
    assert info.value.name == "SIGTERM"
    assert (guard.first, guard.later) == (signal.SIGTERM, [signal.SIGINT])


def test_later_signals_change_nothing_and_stay_ignored_for_the_whole_process():
    with interrupts_raised(ignore_after_stop=True) as guard:
        with pytest.raises(Interrupted):
            _signal_self(signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)  # while stopping: recorded only
        time.sleep(0.05)
        assert guard.later == [signal.SIGTERM]
    try:
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def test_a_keyboard_interrupt_from_a_foreign_handler_still_ignores_later_signals(
    tmp_path, monkeypatch, capsys
):
    """A library that puts Python's default SIGINT handler in place of the run's raises a
    plain KeyboardInterrupt the guard never saw: the run still says SIGINT, exits 130, and
    (as a whole process) ignores the SIGTERM that follows, which would otherwise kill it with
    143 after the line was printed."""
    import bayescal.report.cli_run as audit_cli
    from bayescal.cli import main

    def foreign(args):
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _signal_self(signal.SIGINT)

    monkeypatch.setattr(audit_cli, "run", foreign)
    monkeypatch.setattr(sys, "argv", ["bayescal", "audit", "data.csv", "--out", str(tmp_path)])
    try:
        assert main() == 130
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("bayescal: interrupted by SIGINT"), err


def _lost_in_a_c_callback(signum: int) -> None:
    """Send ``signum`` from inside a ctypes callback: Python runs the handler there, and an
    exception it raises there is lost (reported to ``sys.unraisablehook``, not propagated), as
    in numba's object-cache hook while nutpie compiles (the CI failure this test is for)."""
    import ctypes

    def body() -> None:
        os.kill(os.getpid(), signum)
        for _ in range(10_000):  # the handler runs at one of these instructions
            pass

    ctypes.CFUNCTYPE(None)(body)()


def test_an_interrupt_lost_in_a_c_callback_is_raised_again():
    """The callback returns (its exception went to the unraisable hook) and the run goes on;
    the Interrupted comes back from the next Python code, with the first signal's name."""
    reached = []
    with interrupts_raised() as guard:
        with pytest.raises(Interrupted) as info:
            _lost_in_a_c_callback(signal.SIGTERM)
            reached.append("after the callback")
            time.sleep(5)  # raised again within milliseconds, not after this
            reached.append("after the sleep")
    assert info.value.name == "SIGTERM"
    assert reached == ["after the callback"]
    assert (guard.lost, guard.pending, guard.later) == (1, False, [])


def test_an_interrupt_lost_in_a_finaliser_is_raised_again():
    """The same for ``__del__``, the other common place where Python drops an exception."""

    class Finalised:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):
                pass

    with interrupts_raised() as guard:
        with pytest.raises(Interrupted) as info:
            Finalised()  # collected at once
            time.sleep(5)
    assert info.value.name == "SIGINT" and guard.lost == 1


def test_a_lost_interrupt_is_raised_when_the_block_ends_at_the_latest(monkeypatch):
    """Had the re-raise not come yet (here: it never comes), the block's end raises it: a
    stopped run cannot leave the guarded block as if it had finished."""
    from bayescal import interrupts

    monkeypatch.setattr(interrupts._Redelivery, "schedule", lambda self: None)
    with pytest.raises(Interrupted) as info:
        with interrupts_raised() as guard:
            _lost_in_a_c_callback(signal.SIGINT)
            assert guard.pending
    assert info.value.name == "SIGINT" and not guard.pending


def test_a_lost_interrupt_during_a_held_step_stops_after_it():
    """Raised again while a step holds signals: the step records it and finishes, and the
    signal follows (so a report swap never commits a run that was asked to stop)."""
    with interrupts_raised() as guard:
        with pytest.raises(Interrupted):
            _lost_in_a_c_callback(signal.SIGINT)
            with signals_held() as held:
                time.sleep(0.3)  # the re-raise comes in here, and is held
                received = list(held.received)
    assert received == [signal.SIGINT]
    assert guard.later == []


def test_other_unraisable_exceptions_reach_the_previous_hook(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(type(u.exc_value)))

    class Broken:
        def __del__(self) -> None:
            raise RuntimeError("a finaliser's own error")

    with interrupts_raised():
        Broken()
    assert seen == [RuntimeError]
    assert sys.unraisablehook is not None
