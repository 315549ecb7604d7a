"""The command line draws a report's figures on two cores (``cli_output.draw_figures``): the
same encodings as drawn in one process, failures flagged as without the child."""

import os

import pytest

from bayescal.report import audit, cli_output
from bayescal.report.core import Figure, Provenance, Report, Section
from bayescal.simulate import simulate_toy


def _pid_figure(caption):
    return Figure(
        caption, lambda: f"wide {os.getpid()}", narrow_png_base64=lambda: f"narrow {os.getpid()}"
    )


def _failing():
    raise OverflowError("math range error")


def _report():
    sections = [
        Section("a", "A", figures=[_pid_figure("a1"), _pid_figure("a2"), Figure("bad", _failing)]),
        Section("b", "B", figures=[_pid_figure("b1")]),
    ]
    return Report("binary", "demo", {}, sections, Provenance.capture(None, 0, "0" * 64, {}))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_every_second_figure_is_drawn_in_a_child_and_a_failure_is_flagged_as_ever(monkeypatch):
    monkeypatch.setattr(cli_output, "available_cpus", lambda: 2)
    parallel, serial = _report(), _report()
    cli_output.draw_figures(parallel)
    flags = serial.draw_figures()
    pids = [f.png_base64.split()[1] for s in parallel.sections for f in s.figures]
    # pending order a1, a2, bad, b1: a1 and bad here, a2 and b1 in the child; bad fails in
    # both processes and is dropped, flagged once, exactly as when drawn in one process
    assert pids[0] == str(os.getpid()) and pids[1] == pids[2] != str(os.getpid())
    assert [f.caption for f in parallel.sections[0].figures] == ["a1", "a2"]
    assert [f.to_dict() for f in parallel.flags] == [f.to_dict() for f in flags]
    assert parallel.sections[0].status == serial.sections[0].status == "failed"
    assert all(
        f.drawn and f.narrow_png_base64.startswith("narrow ")
        for s in parallel.sections
        for f in s.figures
    )


def test_one_cpu_draws_everything_here(monkeypatch):
    monkeypatch.setattr(cli_output, "available_cpus", lambda: 1)
    r = _report()
    cli_output.draw_figures(r)
    assert {f.png_base64 for s in r.sections for f in s.figures} == {f"wide {os.getpid()}"}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_real_figures_drawn_in_the_child_equal_those_drawn_here(monkeypatch):
    monkeypatch.setattr(cli_output, "available_cpus", lambda: 2)
    data = simulate_toy(900, "shifted", random_state=4)
    parallel, serial = (audit(data, channels="score-bin-em", random_state=0) for _ in range(2))
    cli_output.draw_figures(parallel)
    serial.draw_figures()
    got = [(f.png_base64, f.narrow_png_base64) for s in parallel.sections for f in s.figures]
    want = [(f.png_base64, f.narrow_png_base64) for s in serial.sections for f in s.figures]
    assert len(got) >= 2 and got == want


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_an_interrupt_while_drawing_propagates_and_leaves_no_child(monkeypatch):
    monkeypatch.setattr(cli_output, "available_cpus", lambda: 2)

    def interrupted():
        raise KeyboardInterrupt  # as Interrupted, a BaseException: never caught as a failure

    sections = [Section("a", "A", figures=[Figure("x", interrupted), _pid_figure("y")])]
    r = Report("binary", "demo", {}, sections, Provenance.capture(None, 0, "0" * 64, {}))
    before = _children()
    with pytest.raises(KeyboardInterrupt):
        cli_output.draw_figures(r)
    # the child was killed and reaped: no process of ours is left, zombies included (other
    # tests of this worker may have children of their own, so compare, not "none at all")
    assert _children() <= before


def _children() -> set[int]:
    """This process's children, zombies included (Linux /proc)."""
    me, found = os.getpid(), set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(pid))
    return found
