"""On a terminal the Bayesian audit shows live progress and ends with clean lines (issue 16).

``python -m bayescal audit`` runs with stdout and stderr on a pseudo-terminal, as in an
interactive shell: the data file's reading shows on the status line, the sampler draws its
progress bar, the stage lines and the result follow, and the status line is gone at the end.
"""

from __future__ import annotations

import os
import pty
import subprocess

import numpy as np
import pytest
from cli_helpers import bayescal_command, child_env

pytestmark = pytest.mark.slow


def _run_on_a_terminal(argv: list, timeout: float = 600) -> tuple[int, str]:
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        # without crowd-kit: its four aggregators (seconds of pandas) add nothing to what the
        # terminal shows, which is checked here; tests/report/test_crowdkit_section.py has them
        [*bayescal_command(("crowdkit",)), *map(str, argv)],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=child_env(COLUMNS="120"),
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    return proc.wait(timeout=timeout), b"".join(chunks).decode("utf-8", "replace")


def test_progress_on_a_terminal(tmp_path):
    rng = np.random.default_rng(0)
    z = rng.random(400)
    labels = (rng.random((400, 3)) < 0.1 + 0.8 * z[:, None]).astype(int)
    rows = [f"{s:.4f},{a},{b},{c}" for s, (a, b, c) in zip(z, labels)]
    data = tmp_path / "ratings.csv"
    data.write_text("score,r1,r2,r3\n" + "\n".join(rows) + "\n")
    code, text = _run_on_a_terminal(["audit", data, "--draws", "300", "--out", tmp_path / "o"])
    assert code == 0, text
    assert "\r\x1b[Kbayescal: reading " in text  # the status line, redrawn in place
    assert "bayescal: sampling the channel posterior: 2 chain(s) x 300 draws" in text
    assert "Draws" in text and "Divergences" in text  # the sampler's own progress table
    lines = text.replace("\r\n", "\n").split("\n")
    assert lines[-2].startswith("bayescal: done in"), lines[-5:]
