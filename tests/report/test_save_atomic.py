"""Issue 23 item 2: a report save cannot lose data (kill, full disk, mount point, leftovers).

The invariant, checked after a SIGKILL at every system call of a save (deterministic:
``StepOS`` kills the forked child just before call k, for every k of the save) and at
random instants of saves running in a loop (``test_random_instants``): ``out`` holds the
earlier complete report or the new complete one, byte for byte, never neither, never a
mix; beside it there are only a killed save's own entries (its journal, staging folder,
backup), and the next save removes them. Every ``OSError`` at every call (ENOSPC, EACCES,
EROFS, ...) leaves the earlier report intact and gives one ``OutputError`` line.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from save_helpers import KEEP, StepOS, files, install, leftovers, make_report

from bayescal.errors import ConfigError, OutputError
from bayescal.report import saving
from bayescal.report.core import Figure, Provenance, Report, Section, check_out_dir

A = make_report("A", b"posterior of A " * 20_000)
B = make_report("B", None)  # no posterior.nc: A's must go when B replaces it
PROTOCOLS = ("exchange", "two-renames", "files")
OURS = re.compile(r"^\.report\.[0-9a-f]{32}\.(partial|old|bayescal-save)$")


def reference(report: Report, tmp: Path, protocol: str = "exchange") -> dict[str, bytes]:
    """The files ``report`` saves (with the provenance line of ``protocol``)."""
    out = tmp / f"reference-{report.title[-1]}-{protocol}"
    with pytest.MonkeyPatch.context() as mp:
        _protocol(mp, protocol)
        report.save(out)
    return files(out)


def _protocol(mp, protocol: str) -> None:
    """Make ``saving`` take ``protocol`` (the two fallbacks are forced by their triggers)."""
    if protocol == "two-renames":

        def no_exchange(a, b):
            raise OSError(errno.EINVAL, "RENAME_EXCHANGE not supported", str(a))

        mp.setattr(saving, "_exchange", no_exchange)
    elif protocol == "files":
        mp.setattr(
            saving,
            "plan",
            lambda target: saving.SaveMode(
                "files", "--out is a mount point, which cannot be renamed"
            ),
        )


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("refs")
    return {(p, r.title[-1]): reference(r, tmp, p) for p in PROTOCOLS for r in (A, B)}


def _which(state: dict[str, bytes], refs, protocol) -> str | None:
    for tag in "AB":
        if state == refs[(protocol, tag)]:
            return tag
    return None


def _save_in_child(report: Report, out: Path, protocol: str, kill_at: int) -> int:
    """Fork; the child saves with a SIGKILL just before system call ``kill_at``. Returns
    the number of calls the child made when it was not killed (sent through a pipe)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read)
            mp = pytest.MonkeyPatch()
            _protocol(mp, protocol)
            steps = install(mp, StepOS(kill_at=kill_at))
            report.save(out)
            os.write(write, str(steps.calls).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read) as fh:
        told = fh.read()
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return -1
    assert os.WEXITSTATUS(status) == 0, "the child's save failed"
    return int(told)


def _check_state(out: Path, refs, protocol: str, new: str, old: str) -> str:
    """The invariant after a kill; returns which report ``out`` holds."""
    parent = out.parent
    beside = leftovers(parent, out)
    assert all(OURS.match(n) for n in beside), beside  # nothing but a save's own entries
    if protocol == "files":
        # each file complete, old or new; the set may be a mix while files are replaced
        inside = {n: b for n, b in files(out).items() if not n.startswith(".")}
        for name, data in inside.items():
            assert data in (refs[(protocol, new)].get(name), refs[(protocol, old)].get(name)), name
        assert {"report.html", "summary.json"} <= set(inside)
        return "mix"
    if not out.exists():  # only between the two renames of the fallback
        assert protocol == "two-renames"
        backups = [parent / n for n in beside if n.endswith(".old")]
        assert len(backups) == 1 and _which(files(backups[0]), refs, protocol) == old
        return "backup"
    tag = _which(files(out), refs, protocol)
    assert tag in (old, new), "out holds neither complete report"
    return tag


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sigkill_at_every_system_call_of_a_save(tmp_path, refs, protocol):
    """Kill before call 1, 2, ... of the save, each time on the state the previous kill
    left (so later saves also start by cleaning after killed ones), alternating the report
    saved; then one save that is not killed must leave nothing beside ``out``."""
    out = tmp_path / "report"
    with pytest.MonkeyPatch.context() as mp:
        _protocol(mp, protocol)
        A.save(out)
    current, seen, k, finished = "A", set(), 1, 0
    while finished < 2:  # past the last call of both directions
        new = "B" if current == "A" else "A"
        calls = _save_in_child(A if new == "A" else B, out, protocol, kill_at=k)
        state = _check_state(out, refs, protocol, new, current)
        seen.add(state)
        if state == "backup":  # the next save puts the earlier report back first
            saving.clean_leftovers(out.parent, out.name, KEEP)
            state = _check_state(out, refs, protocol, new, current)
        if calls >= 0:
            finished += 1
        current = state if state in "AB" else new
        k += 1
    assert k > 25, "a save makes dozens of system calls"
    with pytest.MonkeyPatch.context() as mp:
        _protocol(mp, protocol)
        B.save(out)
    assert leftovers(tmp_path, out) == []
    assert files(out) == refs[(protocol, "B")]
    if protocol != "files":
        assert seen >= {"A", "B"}  # kills landed before and after the commit


def test_random_instants(tmp_path, refs):
    """A child saves A and B alternately, as fast as it can; the parent freezes it
    (SIGSTOP) at random instants, checks the invariant on the frozen state (what a
    SIGKILL at that instant would leave), lets it go on, and finally kills it for real;
    the next save cleans up. Seeded; 300 instants in a few seconds."""
    out = tmp_path / "report"
    A.save(out)
    script = f"""
import sys
sys.path[:0] = {[str(Path(__file__).parent), *sys.path]!r}
from save_helpers import make_report
from pathlib import Path
A = make_report("A", b"posterior of A " * 20_000)
B = make_report("B", None)
out = Path({str(out)!r})
print("ready", flush=True)
while True:
    B.save(out)
    A.save(out)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        rng = random.Random(23)
        states = []
        for _ in range(300):
            time.sleep(rng.uniform(0, 0.01))
            proc.send_signal(signal.SIGSTOP)
            try:
                os.waitid(os.P_PID, proc.pid, os.WSTOPPED)
                states.append(_check_state(out, refs, "exchange", "A", "B"))
            finally:
                proc.send_signal(signal.SIGCONT)
        time.sleep(rng.uniform(0, 0.01))
    finally:
        proc.kill()
        proc.wait()
    assert _check_state(out, refs, "exchange", "A", "B") in "AB"
    assert {"A", "B"} <= set(states)
    B.save(out)
    assert leftovers(tmp_path, out) == [] and files(out) == refs[("exchange", "B")]


# ------------------------------------------------------------------ errors at every call
def _fail_at(out: Path, k: int, code: int, refs) -> tuple[str | None, str]:
    """Save B over A with call ``k`` failing with ``code``; check what ``out`` holds."""
    with pytest.MonkeyPatch.context() as mp:
        steps = install(mp, StepOS(fail_at=k, fail_errno=code))
        try:
            B.save(out)
            raised = None
        except OutputError as exc:
            raised = str(exc)
    failed_call = steps.log[k - 1] if k <= len(steps.log) else "none"
    if raised is None:  # a failure in the clean-up after the commit: the next save's job
        assert files(out) == refs[("exchange", "B")], (k, failed_call)
    else:
        assert "\n" not in raised and raised.startswith(f"cannot save the report to {out}: ")
        assert os.strerror(code) in raised
        if "holds the new report" in raised:
            assert files(out) == refs[("exchange", "B")], (k, failed_call)
        else:
            assert "still holds the earlier report, unchanged" in raised, raised
            assert files(out) == refs[("exchange", "A")], (k, failed_call)
            assert leftovers(out.parent, out) == [], (k, failed_call)
    A.save(out)  # the next save: cleans up, and B can be tried again
    assert leftovers(out.parent, out) == [] and files(out) == refs[("exchange", "A")]
    return raised, failed_call


def test_a_full_disk_at_any_call_leaves_the_earlier_report(tmp_path, refs, monkeypatch):
    """ENOSPC at call 1, 2, ... of a save (every call that touches the file system)."""
    out = tmp_path / "report"
    A.save(out)
    counting = install(monkeypatch, StepOS())
    B.save(out)
    n = counting.calls
    monkeypatch.undo()
    A.save(out)
    assert n > 20
    outcomes = [_fail_at(out, k, errno.ENOSPC, refs) for k in range(1, n + 1)]
    calls = {call for _, call in outcomes}
    assert {"open", "write", "fsync", "mkdir", "rename"} <= calls
    earlier = [r for r, _ in outcomes if r and "still holds the earlier report" in r]
    assert len(earlier) > n // 2  # most calls come before the commit


@pytest.mark.parametrize(
    "code", [errno.EACCES, errno.EPERM, errno.EROFS, errno.EDQUOT, errno.EIO],
    ids=["EACCES", "EPERM", "EROFS", "EDQUOT", "EIO"],
)  # fmt: skip
def test_permission_and_other_errors_name_their_fix(tmp_path, refs, monkeypatch, code):
    """The same protocol as ENOSPC; here the message, for the mkdir of the staging folder."""
    out = tmp_path / "report"
    A.save(out)
    counting = install(monkeypatch, StepOS())
    B.save(out)
    monkeypatch.undo()
    A.save(out)
    raised, call = _fail_at(out, counting.log.index("mkdir") + 1, code, refs)
    assert call == "mkdir" and "(creating the folder .report." in raised
    fix = {
        errno.EACCES: "Give --out in a folder you can write to",
        errno.EPERM: "Give --out in a folder you can write to",
        errno.EROFS: "The file system is read-only",
        errno.EDQUOT: "Free space in your quota",
        errno.EIO: "Check the folder and run again",
    }[code]
    assert raised.endswith(".") and fix in raised


def test_disk_full_inside_a_library_writer_is_named(tmp_path, monkeypatch):
    """netCDF reports ENOSPC as ``RuntimeError: NetCDF: HDF error`` (seen on a full tmpfs);
    the file system's free space tells the save what it was."""
    out = tmp_path / "report"
    A.save(out)
    before = files(out)

    def hdf_error(path):
        raise RuntimeError("NetCDF: HDF error")

    r = make_report("C", None)
    r.artifacts["posterior.nc"] = hdf_error
    monkeypatch.setattr(saving, "_disk_full", lambda folder: True)
    full = r"No space left on device \(writing posterior.nc: RuntimeError: NetCDF: HDF error\); "
    with pytest.raises(OutputError, match=full + ".* still holds the earlier report"):
        r.save(out)
    assert files(out) == before and leftovers(tmp_path, out) == []
    monkeypatch.setattr(saving, "_disk_full", lambda folder: False)
    with pytest.raises(RuntimeError, match="HDF error"):  # not a full disk: a bug, unchanged
        r.save(out)
    assert files(out) == before and leftovers(tmp_path, out) == []


def test_cli_prints_a_full_disk_in_one_line_with_exit_2(tmp_path, monkeypatch, capsys):
    """``bayescal audit`` whose save meets a full disk: one line, exit 2, earlier report kept.
    The audit itself is replaced by a ready report (what is tested is the save and the CLI)."""
    import time

    import bayescal.report.cli_run as audit_cli
    from bayescal.cli import main
    from bayescal.report.cli_output import report_outcome

    monkeypatch.setattr(
        audit_cli,
        "run",
        lambda args: report_outcome(args, B, "headline", time.perf_counter()) and 0,
    )
    out = tmp_path / "out"
    A.save(out)
    before = files(out)
    with pytest.MonkeyPatch.context() as mp:
        install(mp, StepOS(fail_at=8, fail_errno=errno.ENOSPC))
        assert main(["audit", "data.csv", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"bayescal: error: cannot save the report to {out}")
    assert "No space left on device" in err[0] and "still holds the earlier report" in err[0]
    assert files(out) == before and leftovers(tmp_path, out) == []
    # any other OSError of a run is one line too (not from the save: named as such)
    monkeypatch.setattr(audit_cli, "run", lambda args: open(tmp_path / "gone" / "x"))
    assert main(["audit", "data.csv", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"bayescal: error: No such file or directory ({tmp_path / 'gone' / 'x'}); stopped without "
        f"writing a report ({out} is as it was)"
    ]


def test_cli_says_when_a_report_was_saved_file_by_file(tmp_path, monkeypatch, capsys):
    import time

    import bayescal.report.cli_run as audit_cli
    from bayescal.cli import main
    from bayescal.report.cli_output import report_outcome

    monkeypatch.setattr(
        audit_cli,
        "run",
        lambda args: report_outcome(args, B, "headline", time.perf_counter()) and 0,
    )
    out = tmp_path / "volume"
    out.mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == out)
    assert main(["audit", "data.csv", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "bayescal: saved file by file, each file replaced atomically (--out is a mount" in err


# ------------------------------------------------------------------ mount points (EBUSY)
@pytest.mark.parametrize("code", [errno.EBUSY, errno.EXDEV])
def test_a_refused_rename_falls_back_to_file_by_file(tmp_path, refs, monkeypatch, code):
    out = tmp_path / "report"
    A.save(out)

    def refused(a, b):
        raise OSError(code, os.strerror(code), str(a))

    monkeypatch.setattr(saving, "_exchange", refused)
    B.save(out)
    saved = json.loads((out / "summary.json").read_text())
    assert saved["tag"] == "B" and "posterior.nc" not in os.listdir(out)  # A's is gone
    how = saved["reproducibility"]["saved"]
    assert how.startswith("file by file") and errno.errorcode[code] in how
    assert "file by file" in (out / "report.html").read_text()  # the provenance table too
    assert leftovers(tmp_path, out) == [] and sorted(os.listdir(out)) == [
        "report.html",
        "summary.json",
    ]


def test_a_mount_point_is_saved_file_by_file_and_probed_inside(tmp_path, monkeypatch):
    """``--out /output`` on a container volume: the parent may not even be writable."""
    out = tmp_path / "volume"
    out.mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == out)
    check_out_dir(out)
    A.save(out)
    assert sorted(os.listdir(tmp_path)) == ["volume"]  # nothing was created beside it
    B.save(out)
    assert json.loads((out / "summary.json").read_text())["reproducibility"]["saved"].startswith(
        "file by file, each file replaced atomically (--out is a mount point"
    )
    assert sorted(os.listdir(out)) == ["report.html", "summary.json"]


def test_the_current_folder_stays_in_place(tmp_path, monkeypatch):
    """``--out .``: swapping the folder would leave the process (and the user's shell) in
    the removed earlier folder; it is saved file by file, in place. The same for a
    folder that holds the current one."""
    out = tmp_path / "report"
    A.save(out)
    (tmp_path / "deeper").mkdir()
    monkeypatch.chdir(tmp_path / "deeper")
    assert "current folder" in saving.plan(tmp_path).reason
    monkeypatch.chdir(out)
    assert "current folder" in saving.plan(out).reason
    B.save(".")
    assert os.getcwd() == str(out) and Path(".").resolve() == out
    assert json.loads(Path("summary.json").read_text())["tag"] == "B"
    assert sorted(os.listdir(".")) == ["report.html", "summary.json"]
    assert leftovers(tmp_path, out) == ["deeper"]


# ------------------------------------------------------------------ leftovers and markers
def _journal(folder: Path, token: str, *entries: str) -> Path:
    """A journal as a killed save into ``folder/report`` left it."""
    path = folder / f".report.{token}.bayescal-save"
    path.write_text(json.dumps({"magic": saving._MAGIC, "out": "report", "entries": entries}))
    return path


def _marked(folder: Path, digit: str, **content: str) -> tuple[Path, Path]:
    """A staging folder holding ``content`` (name -> text) and the journal naming it."""
    token = digit * 32
    staging = folder / f".report.{token}.partial"
    staging.mkdir()
    for name, text in content.items():
        (staging / name).write_text(text)
    return staging, _journal(folder, token, staging.name)


def test_only_marked_leftovers_are_removed(tmp_path):
    out = tmp_path / "report"
    A.save(out)
    lookalike = tmp_path / f".report.{'0' * 32}.partial"
    lookalike.mkdir()
    (lookalike / "report.html").write_text("a user's folder that looks like ours")
    journal_only = tmp_path / f".report.{'1' * 32}.bayescal-save"
    journal_only.write_text("not a journal")  # the right name, not our content: left alone
    marked, _ = _marked(tmp_path, "2", **{"summary.json": "{}"})
    B.save(out)
    assert lookalike.is_dir() and (lookalike / "report.html").exists()
    assert journal_only.read_text() == "not a journal"
    assert not marked.exists()
    assert sorted(leftovers(tmp_path, out)) == sorted([lookalike.name, journal_only.name])


def test_a_forged_journal_cannot_reach_outside(tmp_path):
    """Journal entries are plain names beside --out: a path is ignored, whatever it says."""
    out = tmp_path / "sub" / "report"
    A.save(out)
    victim = tmp_path / f".x.{'6' * 32}.partial"
    victim.mkdir()
    (victim / "summary.json").write_text("the user's, in a folder outside --out's parent")
    _journal(out.parent, "6" * 32, f"./../.x.{'6' * 32}.partial")  # sub/./../ is tmp_path
    B.save(out)
    assert (victim / "summary.json").exists()


def test_a_marked_folder_holding_a_user_file_keeps_it(tmp_path):
    out = tmp_path / "report"
    A.save(out)
    marked, journal = _marked(tmp_path, "3", **{"summary.json": "{}", "notes.txt": "the user's"})
    B.save(out)
    assert (marked / "notes.txt").read_text() == "the user's" and journal.exists()
    assert not (marked / "summary.json").exists()  # the report file went, the user's did not


def test_a_running_save_is_not_taken_for_a_leftover(tmp_path):
    out = tmp_path / "report"
    A.save(out)
    busy, journal = _marked(tmp_path, "4")
    with open(journal) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the save that wrote it holds it
        B.save(out)
        assert busy.is_dir() and journal.exists()
    B.save(out)
    assert not busy.exists() and not journal.exists()


def test_a_save_killed_between_the_two_renames_is_undone_by_the_next(tmp_path, refs):
    out = tmp_path / "report"
    A.save(out)
    token = "5" * 32
    backup = tmp_path / f".report.{token}.old"
    os.rename(out, backup)  # the state between the renames: no report, the backup complete
    _journal(tmp_path, token, f".report.{token}.partial", backup.name)
    assert check_out_dir(out) == out
    B.save(out)
    assert files(out) == refs[("exchange", "B")] and leftovers(tmp_path, out) == []


# ------------------------------------------------------------------ --out checked by type
@pytest.mark.parametrize("kind", ["folder", "symlink", "fifo", "dangling symlink"])
def test_a_report_name_that_is_not_a_regular_file_is_refused_before_any_work(
    tmp_path, kind, capsys
):
    """Issue: ``--out DIR`` where ``DIR/report.html`` is a folder holding a user's file was
    accepted, and the file deleted when the old report was swapped out."""
    from bayescal.cli import main

    out = tmp_path / "out"
    out.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("the user's")
    entry = out / "report.html"
    if kind == "folder":
        entry.mkdir()
        (entry / "notes.txt").write_text("the user's")
    elif kind == "symlink":
        entry.symlink_to(precious)
    elif kind == "dangling symlink":
        entry.symlink_to(tmp_path / "nowhere")
    else:
        os.mkfifo(entry)
    with pytest.raises(
        ConfigError, match=r"report.html is a (folder|symbolic link|named pipe), not the file"
    ):
        check_out_dir(out)
    assert main(["audit", str(tmp_path / "missing.csv"), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "report.html is a" in err[0]  # before the data are looked for
    with pytest.raises(ConfigError):
        A.save(out)
    assert precious.read_text() == "the user's"
    if kind == "folder":
        assert (entry / "notes.txt").read_text() == "the user's"
    assert os.path.lexists(entry)


def test_out_that_is_a_fifo_or_unwritable_is_refused(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="is a named pipe, not a directory"):
        check_out_dir(fifo)


def test_a_name_too_long_for_the_temporary_names_is_refused_before_any_work(tmp_path):
    """255 bytes per name (ext4): the journal beside --out adds 48; found at the end of a
    run before, as 'File name too long'."""
    longest = 255 - saving.NAME_OVERHEAD
    check_out_dir(tmp_path / ("r" * longest))
    with pytest.raises(ConfigError, match=f"name is {longest + 1} bytes; at most {longest} fit"):
        check_out_dir(tmp_path / ("r" * (longest + 1)))
    A.save(tmp_path / ("r" * longest))


def test_an_out_whose_parent_is_not_writable_is_saved_file_by_file(tmp_path, monkeypatch):
    """A folder you own under one you cannot write (root passes every permission check, so
    the refusal is simulated)."""
    out = tmp_path / "mine"
    out.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: real(p, mode) and Path(p) != tmp_path)
    assert "not writable" in saving.plan(out).reason
    check_out_dir(out)  # probed inside, not beside
    B.save(out)
    saved = json.loads((out / "summary.json").read_text())["reproducibility"]["saved"]
    assert "the folder that holds --out is not writable" in saved


# ------------------------------------------------------------------ figures
def test_a_failed_figure_fails_with_its_own_error_in_both_layouts():
    """The wide layout's drawing raised; the phone layout then raised KeyError('narrow'),
    hiding the cause (a stuck sampler's trace figure). Both now raise the drawing's error."""
    from bayescal.report.figures import responsive_figure

    def draw(fig, narrow):
        raise OverflowError("cannot draw a density of equal draws")

    fig = responsive_figure("Trace", draw, size=(9, 4), narrow_height=6)
    with pytest.raises(OverflowError, match="equal draws"):
        fig.png_base64  # noqa: B018 (the property draws)
    with pytest.raises(OverflowError, match="equal draws"):
        fig.narrow_png_base64  # noqa: B018


def test_a_figure_that_cannot_be_drawn_fails_its_section_only(tmp_path):
    """The issue's crash: ArviZ's density estimate raises OverflowError on draws equal up to
    rounding (reproduced with bayescal's own trace plot); the report is written anyway."""
    import arviz as az
    import numpy as np

    from bayescal.plotting.binary import channel_trace
    from bayescal.report.figures import responsive_figure

    rng = np.random.default_rng(0)
    dims, coords = ("chain", "draw", "annotator"), {"annotator": ["r1", "r2", "r3"]}
    idata = az.from_dict(
        posterior={
            "a": 0.3 + 1e-17 * rng.standard_normal((2, 100, 3)),
            "b": rng.beta(9, 2, (2, 100, 3)),
        },
        dims={"a": list(dims[2:]), "b": list(dims[2:])},
        coords=coords,
    )
    trace = responsive_figure(
        "Trace",
        lambda fig, narrow: channel_trace(idata, axes=fig.subplots(2, 2)),
        size=(9, 4),
        narrow_height=6,
    )
    fine = Figure("fine", "iVBORw0KGgo=")
    provenance = Provenance.capture(None, 0, "0" * 64, {})
    r = Report(
        "binary",
        "figure test",
        {
            "n_items": 1,
            "n_annotators": 1,
            "channels": {"method": "x"},
            "ece": make_report("x", None).summary["ece"],
        },
        [Section("diagnostics", "Diagnostics", figures=[trace, fine]), provenance.section()],
        provenance,
    )
    r.save(tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "Failed: the figure &#39;Trace&#39; could not be drawn (OverflowError" in html
    assert html.count("data:image/png;base64,") == 1  # the fine figure is kept
    assert [w["code"] for w in summary["warnings"]] == ["report.figure_failed"]
    assert r.sections[0].status == "failed" and r.summary == summary
