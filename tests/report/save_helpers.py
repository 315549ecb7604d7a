"""Helpers of the save tests: two reports to swap, a view of a folder, and an ``os`` whose
calls can be counted, failed or cut short by SIGKILL.

``saving.os`` is the one door :mod:`bayescal.report.saving` has to the file system (plus
``_exchange``, the ``renameat2`` call): replacing it with :class:`StepOS` puts a test at
every system call of a save, in order, without a hook in the code under test.
"""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

from bayescal.flags import Flag
from bayescal.report import saving
from bayescal.report.core import REPORT_FILES, Provenance, Report, Section

ECE = {
    "nc": {"point": 0.1, "lo": None, "hi": None, "prob": 0.9},
    "soft_vote": 0.2,
    "majority_vote": 0.3,
}

#: The calls of a save that touch the file system, in the order they happen.
STEPS = frozenset(
    {"open", "write", "fsync", "close", "mkdir", "chmod", "rename", "replace", "unlink", "rmdir"}
)


def make_report(tag: str, posterior: bytes | None) -> Report:
    """A report whose every file says ``tag``; with ``posterior`` bytes, a posterior.nc."""
    artifacts = {}
    if posterior is not None:
        artifacts["posterior.nc"] = lambda path: Path(path).write_bytes(posterior)
    # fixed, not captured: the versions listed depend on the modules a process has loaded,
    # and the kill tests compare a child's files with this process's byte for byte
    provenance = Provenance(None, 0, {"bayescal": "test"}, "test", "0" * 64, {"tag": tag}, 0.0)
    return Report(
        "binary",
        f"report {tag}",
        {"n_items": 1, "n_annotators": 1, "channels": {"method": tag}, "ece": ECE, "tag": tag},
        [Section("s", f"Section {tag}"), provenance.section()],
        provenance,
        flags=[Flag("demo.flag", f"flag of {tag}", "demo")],
        artifacts=artifacts,
    )


def files(folder: Path) -> dict[str, bytes]:
    """name -> bytes of every entry of ``folder`` (which must hold regular files only)."""
    out = {}
    for p in sorted(folder.iterdir()):
        assert p.is_file() and not p.is_symlink(), f"{p} is not a regular file"
        out[p.name] = p.read_bytes()
    return out


def leftovers(parent: Path, out: Path) -> list[str]:
    """Entries beside ``out`` other than ``out`` itself."""
    return sorted(p.name for p in parent.iterdir() if p.name != out.name)


KEEP = set(REPORT_FILES)


class StepOS:
    """``os`` with the file-system calls of :data:`STEPS` counted; at call ``kill_at`` the
    process SIGKILLs itself (just before the call), at ``fail_at`` the call raises
    ``OSError(fail_errno)`` instead of running (once: later calls succeed)."""

    def __init__(self, kill_at=None, fail_at=None, fail_errno=errno.ENOSPC, only=STEPS):
        self.calls = 0
        self.kill_at, self.fail_at, self.fail_errno, self.only = kill_at, fail_at, fail_errno, only
        self.log: list[str] = []

    def step(self, name: str) -> None:
        if name not in self.only:
            return
        self.calls += 1
        self.log.append(name)
        if self.calls == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.calls == self.fail_at:
            raise OSError(self.fail_errno, os.strerror(self.fail_errno))

    def __getattr__(self, name):
        real = getattr(os, name)
        if name not in STEPS:
            return real

        def call(*args, **kwargs):
            self.step(name)
            return real(*args, **kwargs)

        return call


def install(monkeypatch, steps: StepOS) -> StepOS:
    """Route ``saving``'s system calls (and its ``renameat2``) through ``steps``."""
    exchange = saving._exchange

    def counted_exchange(a, b):
        steps.step("rename")
        return exchange(a, b)

    monkeypatch.setattr(saving, "os", steps)
    monkeypatch.setattr(saving, "_exchange", counted_exchange)
    return steps
