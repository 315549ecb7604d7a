"""Helpers of the command-line tests: run ``bayescal ARGV`` in this process, or as a process."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import bayescal
from bayescal.cli import main

#: The checkout under test, first on the path of every child process.
ROOT = str(Path(bayescal.__file__).resolve().parents[1])


def run(argv: list) -> tuple[int, str]:
    """Exit status and stderr of ``bayescal ARGV`` run in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def one_line(argv: list, code: int = 2) -> str:
    """Run the CLI; assert the exit status and exactly one line on stderr; return the line."""
    got, err = run(argv)
    lines = err.splitlines()
    assert got == code and len(lines) == 1, (got, err)
    return lines[0]


def child_env(**extra: str) -> dict:
    """Environment of a ``python -m bayescal`` child: this checkout first, no CI variable."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


#: ``python -m bayescal`` with some optional packages made unimportable first, as when they
#: are not installed (``sys.modules[name] = None``; ``sys.argv[1:]`` is ARGV as under ``-m``).
_WITHOUT = (
    "import runpy, sys; sys.modules.update(dict.fromkeys({names!r})); "
    "runpy.run_module('bayescal', run_name='__main__', alter_sys=True)"
)


def bayescal_command(without: tuple[str, ...] = ()) -> list[str]:
    """``python -m bayescal``, or with the packages ``without`` made unimportable first."""
    entry = ["-c", _WITHOUT.format(names=tuple(without))] if without else ["-m", "bayescal"]
    return [sys.executable, *entry]


def start(argv: list, *, without: tuple[str, ...] = (), **popen) -> subprocess.Popen:
    """``python -m bayescal ARGV`` as a child process with stderr piped (text, line by line).

    ``without``: optional packages the child runs without (e.g. ``("crowdkit",)``: the audit
    takes the report's documented not-installed path instead of fitting four aggregators).
    """
    return subprocess.Popen(
        [*bayescal_command(without), *map(str, argv)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        **popen,
    )


def tree(folder: Path) -> dict:
    """Every file under ``folder`` (relative path -> bytes) and its permission bits."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mode)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    } | {".": folder.stat().st_mode}
