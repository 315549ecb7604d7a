"""``bayescal bench audit-large``: ``bayescal audit`` on large simulated tables (issue 23 item 3).

Two cases, each the command a user would type, in a fresh Python process:

- ``binary``: 10^6 items (``--binary-items``), K = 3 annotators of the toy study
  (``simulate_toy``, ``shifted`` condition), ``bayescal audit data.csv --annotators
  a1,a2,a3`` with the default (Bayesian) channels; target under 60 s;
- ``multiclass``: 10^5 items (``--multiclass-items``), C = 10 classes, K = 5 annotators
  (``simulate_multiclass``), ``bayescal audit data.csv --probs p0,...,p9 --annotators
  a1,...,a5``; target under 5 minutes, with progress shown.

Generating and writing the CSV is not timed. For each run the JSON keeps the wall seconds of
the command, its peak resident memory (``ru_maxrss`` of the child, read by the child itself
at exit; target under 2 GB), every line it printed on stderr with the seconds since start
(the stage lines: the longest silence between two lines says how long a user saw nothing),
the exit status, and the load average before and after (the machine is shared: CPU-bound
stages stretch with the load).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bayescal.bench._io import environment, write_json

TARGETS = {"binary_seconds": 60.0, "multiclass_seconds": 300.0, "peak_rss_bytes": 2 * 1024**3}

#: The measured child: ``bayescal.cli.main`` on the arguments, then its own peak RSS.
_CHILD = (
    "import resource, sys\n"
    "from bayescal.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(f'PEAK_RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}', "
    "file=sys.stderr, flush=True)\n"
    "sys.exit(code)\n"
)


def add_arguments(parser) -> None:
    parser.add_argument("--json", metavar="PATH", help="write the results here as JSON")
    parser.add_argument("--binary-items", type=int, default=1_000_000)
    parser.add_argument("--multiclass-items", type=int, default=100_000)
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=["binary", "multiclass"],
        default=["binary", "multiclass"],
        help="which cases to run (default both)",
    )
    parser.add_argument(
        "--extra",
        default="",
        help="extra options for every audit, e.g. '--no-crowdkit' (default: none)",
    )
    parser.add_argument("--seed", type=int, default=2026)


def _binary_csv(n: int, seed: int, path: Path) -> list[str]:
    import numpy as np

    from bayescal.simulate import simulate_toy

    data = simulate_toy(n, "shifted", random_state=seed)
    table = np.column_stack([data.score, data.labels])
    header = "score," + ",".join(data.annotators)
    np.savetxt(path, table, delimiter=",", header=header, comments="", fmt="%.6g")
    return ["--annotators", ",".join(data.annotators)]


def _multiclass_csv(n: int, seed: int, path: Path) -> list[str]:
    import numpy as np

    from bayescal.simulate import simulate_multiclass

    data = simulate_multiclass(n, 10, random_state=seed, n_annotators=5)
    probs = [f"p{c}" for c in range(data.n_classes)]
    table = np.column_stack([data.probs, data.labels])
    header = ",".join(probs + list(data.annotators))
    np.savetxt(path, table, delimiter=",", header=header, comments="", fmt="%.6g")
    return ["--probs", ",".join(probs), "--annotators", ",".join(data.annotators)]


def _run_case(argv: list[str]) -> dict:
    """Run ``bayescal ARGV`` as a child; its stderr lines with their times, wall, peak RSS."""
    load_before = list(os.getloadavg())
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((round(time.perf_counter() - t0, 2), line.rstrip("\n")[:300]))

    reader = threading.Thread(target=read)
    reader.start()
    code = proc.wait()
    reader.join()
    wall = time.perf_counter() - t0
    peak = [int(text.split()[1]) for _, text in lines if text.startswith("PEAK_RSS ")]
    shown = [(t, text) for t, text in lines if not text.startswith("PEAK_RSS ")]
    times = [0.0] + [t for t, _ in shown] + [wall]
    return {
        "argv": argv,
        "exit_status": code,
        "seconds": wall,
        "peak_rss_bytes": peak[0] if peak else None,
        "longest_silence_seconds": max(b - a for a, b in zip(times, times[1:])),
        "stderr": shown,
        "loadavg_before": load_before,
        "loadavg_after": list(os.getloadavg()),
    }


def run(args) -> int:
    extra = args.extra.split()
    result: dict = {
        "benchmark": "audit-large",
        "targets": TARGETS,
        "extra_args": extra,
        "environment": environment(),
        "cases": {},
    }
    makers = {
        "binary": (_binary_csv, args.binary_items),
        "multiclass": (_multiclass_csv, args.multiclass_items),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases:
            make, n = makers[case]
            path = Path(tmp) / f"{case}.csv"
            t0 = time.perf_counter()
            columns = make(n, args.seed, path)
            generate = time.perf_counter() - t0
            argv = ["audit", str(path), *columns, "--out", f"{tmp}/{case}-report", *extra]
            record = _run_case(argv)
            record.update(n_items=n, generate_seconds=generate, csv_bytes=path.stat().st_size)
            result["cases"][case] = record
            print(
                f"{case}: {record['seconds']:.1f} s, exit {record['exit_status']}, peak RSS "
                f"{(record['peak_rss_bytes'] or 0) / 1e9:.2f} GB",
                file=sys.stderr,
                flush=True,
            )
    write_json(result, args.json)
    return 0
