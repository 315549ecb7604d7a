"""--out is checked before any work and replaced only as a whole (issue 11); what a run prints:
one line per warning, stage lines unless --quiet, live progress only on a terminal (issue 16)."""

from __future__ import annotations

import io
import logging
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import one_line, run, tree

from bayescal.progress import Display, progress_wanted, step

NPZ = Path(__file__).resolve().parents[2] / "bayescal" / "ambiguity" / "data" / "chaosnli-snli.npz"
QUICK_AMBIGUITY = ["--methods", "TS", "--n-draws", "5", "--n-boot", "0", "--cv-folds", "2"]


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory) -> Path:
    """500 items, three annotators, a few items nobody answered (one coded warning)."""
    rng = np.random.default_rng(1)
    z = rng.random(500)
    rows = []
    for i, s in enumerate(z):
        answers = ["" if i < 3 else str(int(rng.random() < s)) for _ in range(3)]
        rows.append(f"{s:.4f}," + ",".join(answers))
    path = tmp_path_factory.mktemp("data") / "wide.csv"
    path.write_text("score,r1,r2,r3\n" + "\n".join(rows) + "\n")
    return path


def _bad_outs(tmp_path: Path) -> dict[str, object]:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "data.csv").write_text("precious")
    return {
        "not a directory": a_file,
        "does not exist": dangling,
        "is a file": a_file / "sub",
        "--out is empty": "",
        "not part of a bayescal report": busy,
        # /proc takes no new folder, even for root (permission bits alone would not show it)
        "no folder can be created": "/proc/bayescal-report",
    }


@pytest.mark.parametrize(
    "command", [["audit", "nosuchdata.csv"], ["audit-ambiguity", "--npz", "nosuchdata.npz"]]
)
def test_a_bad_out_is_one_line_before_the_data_is_read(command, tmp_path):
    for expected, out in _bad_outs(tmp_path).items():
        line = one_line([*command, "--out", out])
        assert expected in line and "nosuchdata" not in line, line
    assert (tmp_path / "busy" / "data.csv").read_text() == "precious"
    assert not (tmp_path / "file.txt" / "sub").exists()


def test_an_earlier_posterior_is_gone_after_a_point_channel_run(wide_csv, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "posterior.nc").write_bytes(b"posterior of an earlier Bayesian run")
    (out / "report.html").write_text("EARLIER-RUN")
    code, err = run(["audit", wide_csv, "--channels", "score-bin-em", "--out", out, "--quiet"])
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == [
        "items.csv",
        "next.csv",
        "report.html",
        "summary.json",
    ]
    assert "EARLIER-RUN" not in (out / "report.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # nothing left beside it


def test_a_run_that_fails_after_loading_leaves_the_earlier_report(wide_csv, tmp_path):
    out = tmp_path / "report"
    code, err = run(["audit", wide_csv, "--channels", "score-bin-em", "--out", out, "--quiet"])
    assert code == 0, err
    before = tree(out)
    # the same data with two annotators and one score group is not identified: refused
    two = tmp_path / "two.csv"
    two.write_text("\n".join(",".join(r.split(",")[:3]) for r in wide_csv.read_text().split("\n")))
    argv = ["audit", two, "--groups", "1", "--channels", "score-bin-em", "--out", out, "--quiet"]
    line = one_line(argv)
    assert "two annotators" in line
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "two.csv"]


def test_each_warning_is_one_line_and_quiet_keeps_only_them(wide_csv, tmp_path):
    code, err = run(["audit", wide_csv, "--channels", "score-bin-em", "--out", tmp_path / "a"])
    assert code == 0, err
    assert "bayescal: warning [data.unannotated]: 3 item(s) have no answer" in err
    assert "warning(s)" not in err and "\r" not in err  # no counts, no live status off a tty
    assert "bayescal: NC-ECE and its interval..." in err  # stage lines without --quiet
    argv = ["audit", wide_csv, "--channels", "score-bin-em", "--out", tmp_path / "b", "--quiet"]
    code, quiet = run(argv)
    assert code == 0
    assert quiet.splitlines() == [x for x in err.splitlines() if x.startswith("bayescal: warn")]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_wanted_only_on_a_terminal_without_quiet_or_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert progress_wanted(False, _Terminal())
    assert not progress_wanted(True, _Terminal())
    assert not progress_wanted(False, io.StringIO())
    monkeypatch.setenv("CI", "true")
    assert not progress_wanted(False, _Terminal())


def test_a_live_display_redraws_steps_in_place_and_clears_them():
    term = _Terminal()
    log = logging.getLogger("bayescal.test")
    with Display(term, live=True).attached():
        log.info("fitting")
        for i in (1, 2):
            step(log, i, 2, "method %s", f"m{i}")
        log.info("next stage")
    text = term.getvalue()
    assert text.startswith("bayescal: fitting\n")
    assert "\r\x1b[Kbayescal: method m1 [1/2] 0 s" in text
    assert "\r\x1b[Kbayescal: method m2 [2/2] 0 s" in text
    # the status is wiped before the next line, and at the end nothing is left on it
    assert text.endswith("\r\x1b[Kbayescal: next stage\n")


def test_off_a_terminal_a_heartbeat_names_the_running_stage_after_a_silence():
    """A pipe gets no status line, so a long stage (the multiclass EM, sampling) would print
    nothing for minutes: after ``heartbeat`` seconds of silence a line names the stage, its
    seconds so far and its latest step; output in between resets the clock."""
    stream = io.StringIO()
    log = logging.getLogger("bayescal.test")
    display = Display(stream, heartbeat=30.0)
    with display.attached():
        log.info("fitting the confusions (bayes)...")
        t0 = display._stage_started
        step(log, 120, 1000, "fitting the confusions (EM)")
        assert not display.beat(now=t0 + 29.0)  # not yet silent for 30 s
        assert display.beat(now=t0 + 31.0)  # the step, 31 s old by then, says its age
        assert not display.beat(now=t0 + 40.0)  # 9 s after the heartbeat
        step(log, 121, 1000, "fitting the confusions (EM)")
        display._stage_started -= 60.0  # (the stage began 60 s ago, silent for 31 s)
        display._last_output = display._status_started - 31.0
        assert display.beat()  # a step just reported: no age
        log.info("next stage")
        assert not display.beat(now=display._stage_started + 1.0)
    lines = stream.getvalue().splitlines()
    assert lines[:2] == [
        "bayescal: fitting the confusions (bayes)...",
        "bayescal: ... still fitting the confusions (bayes): 31 s; fitting the confusions (EM) "
        "[120/1000] (31 s ago)",
    ]
    assert lines[2] in [
        f"bayescal: ... still fitting the confusions (bayes): {s} s; fitting the confusions (EM) "
        "[121/1000]"
        for s in (60, 61)
    ]
    assert lines[3:] == ["bayescal: next stage"]
    # none with --quiet, on a terminal (the status line ticks there) or when turned off
    for quiet, live, beat in ((True, False, 30.0), (False, True, 30.0), (False, False, None)):
        other = Display(io.StringIO(), quiet=quiet, live=live, heartbeat=beat)
        assert other.heartbeat is None and not other.beat(now=other._last_output + 1e6)
    with pytest.raises(ValueError, match="heartbeat must be a positive"):
        Display(heartbeat=0.0)


def test_warnings_that_reach_the_command_are_one_line_each():
    stream = io.StringIO()
    with Display(stream, quiet=True).attached():
        warnings.warn("first line\nsecond line", UserWarning, stacklevel=1)
        logging.getLogger("bayescal.test").info("a stage, dropped by --quiet")
        logging.getLogger("bayescal.test").warning("a logged warning")
    assert stream.getvalue().splitlines() == [
        "bayescal: warning [UserWarning]: first line\\x0asecond line",
        "bayescal: warning: a logged warning",
    ]


def test_the_ambiguity_audit_shows_its_steps_on_a_terminal(tmp_path, monkeypatch, capsys):
    """The fitting and scoring that ran 91 s in silence shows which method and fold it is in."""
    monkeypatch.delenv("CI", raising=False)
    # status lines are cut to the terminal's width: a wide one, so that the npz's path (as
    # long as the checkout's) is shown whole wherever the repository lives
    monkeypatch.setenv("COLUMNS", "1000")
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    from bayescal.cli import main

    argv = ["audit-ambiguity", "--npz", NPZ, *QUICK_AMBIGUITY, "--out", tmp_path / "o"]
    assert main([str(a) for a in argv]) == 0
    text = term.getvalue()
    # reading the file and splitting the items are named too (a 60-million-item npz spent
    # 74 s there under a heartbeat that said only "still working")
    assert f"\r\x1b[Kbayescal: reading {NPZ}" in text
    assert "\r\x1b[Kbayescal: recommendation check: cross-validating TS [1/2]" in text
    assert "\r\x1b[Kbayescal: fitting and scoring TS [2/" in text
    lines = [x.rsplit("\r\x1b[K", 1)[-1] for x in text.split("\n")]
    assert "bayescal: fitting 3 methods on 757 items, scoring on 757" in lines
    assert "bayescal: splitting 1514 items into calibration and test halves" in lines
    assert lines[-2].startswith("bayescal: done in")
    # off a terminal the same run prints the stages and no step
    code, err = run([*argv[:-2], "--out", tmp_path / "p"])
    assert code == 0 and "\r" not in err and "cross-validating" not in err
    assert "bayescal: fitting 3 methods on 757 items, scoring on 757" in err
    assert os.path.exists(tmp_path / "p" / "summary.json")


@pytest.mark.parametrize("bench", ["toy", "channels", "ambiguity --cifar10h missing.npz"])
def test_bench_json_is_checked_before_the_benchmark_runs(bench, tmp_path):
    """``--json`` of every benchmark (stored as ``json`` or ``json_path``) is refused up front:
    ``bench toy --json FOLDER`` used to run the whole benchmark and fail only when writing."""
    line = one_line(["bench", *bench.split(), "--json", tmp_path])
    want = f"--json {tmp_path} is a directory; give the path of a file to write."
    assert line == f"bayescal: error: {want}"


def test_write_text_atomic_keeps_the_mode_and_leaves_nothing_behind(tmp_path, monkeypatch):
    from bayescal._json import write_text_atomic

    path = tmp_path / "new" / "out.json"
    write_text_atomic(path, "one")  # the missing folder is made
    umask = os.umask(0)
    os.umask(umask)
    assert path.read_text() == "one" and path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    write_text_atomic(path, "two")
    assert path.read_text() == "two" and path.stat().st_mode & 0o777 == 0o640

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_text_atomic(path, "three")
    assert path.read_text() == "two"  # the earlier file stands
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.json"]  # no .partial left


def test_a_reader_that_goes_away_ends_the_output_not_the_run(tmp_path):
    """``bayescal audit ... 2>&1 | head -1``: once ``head`` has its line the next write to the
    pipe is EPIPE, and the audit died with exit 1 and no report (a hostile re-check, issue
    23). The output stops; the run goes on, writes its report and exits 0."""
    import subprocess
    import sys

    from cli_helpers import child_env

    rng = np.random.default_rng(0)
    z = rng.random(300)
    rows = [f"{s:.4f}," + ",".join(str(int(rng.random() < s)) for _ in range(3)) for s in z]
    data = tmp_path / "wide.csv"
    data.write_text("score,r1,r2,r3\n" + "\n".join(rows) + "\n")
    out = tmp_path / "report"
    argv = [sys.executable, "-m", "bayescal", "audit", str(data), "--channels", "dawid-skene-em"]
    argv += ["--skip", "crowdkit", "--out", str(out)]
    child = subprocess.Popen(argv, stderr=subprocess.PIPE, env=child_env(), text=True)
    assert child.stderr is not None
    first = child.stderr.readline()
    child.stderr.close()  # the reader goes away after one line, as head -1 does
    assert child.wait(timeout=600) == 0
    assert first.startswith("bayescal: ")
    assert (out / "report.html").is_file() and (out / "summary.json").is_file()


def test_display_stops_writing_once_its_reader_is_gone():
    class Gone(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    d = Display(stream=Gone(), live=False)
    d.line("bayescal: one")  # no exception: the output ends here
    d.warning("bayescal: warning: two")
    assert d._gone
