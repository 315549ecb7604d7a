"""Helpers of the hostile-input tests: run the CLI in-process and capture its one line."""

from __future__ import annotations

import contextlib
import io

import numpy as np

from bayescal.cli import main

GOOD_WIDE = "score,r1,r2,r3\n0.10,0,0,1\n0.80,1,1,\n0.55,1,0,1\n0.30,0,,0\n"
GOOD_LONG = (
    "item,annotator,label,score\n"
    "i1,a,1,0.8\ni1,b,1,0.8\ni2,a,0,0.2\ni2,b,1,0.2\ni3,a,0,0.4\ni3,c,0,0.4\n"
)


def run_cli(argv: list[str]) -> tuple[int, str]:
    """Exit status and stderr of ``bayescal ARGV`` run in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue()


def one_line_error(argv: list[str]) -> str:
    """Run the CLI, assert exit 2 with exactly one line on stderr, return that line."""
    code, err = run_cli(argv)
    lines = err.splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("bayescal: error: "), err
    return lines[0]


def wide_rows(n: int, k: int, seed: int = 0) -> str:
    """A valid wide CSV with ``n`` items and ``k`` annotators (some answers missing)."""
    rng = np.random.default_rng(seed)
    z = rng.random(n)
    lines = ["score," + ",".join(f"r{j + 1}" for j in range(k))]
    for i in range(n):
        labels = ["" if rng.random() < 0.2 else str(int(rng.random() < z[i])) for _ in range(k)]
        lines.append(f"{z[i]:.4f}," + ",".join(labels))
    return "\n".join(lines) + "\n"
