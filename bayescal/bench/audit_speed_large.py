"""``bayescal bench audit-large``: ``bayescal audit`` on large simulated tables (issue 23 item 3).

Two cases, each the command a user would type, in a fresh Python process:

- ``binary``: 10^6 items (``--binary-items``), K = 3 annotators of the toy study
  (``simulate_toy``, ``shifted`` condition), ``bayescal audit data.csv --annotators
  a1,a2,a3`` with the default (Bayesian) channels; target under 60 s. With
  ``--binary-annotators K`` other than 3 the annotators are K flip annotators (the
  ``bench many-annotators`` table: ``a ~ U[0.05, 0.3]``, ``b ~ U[0.7, 0.95]``, every one
  answering) and the case is recorded as ``binary_k<K>`` (issue 21 item 1: K = 16 and
  20,000 items within 2 GB: ``--cases binary --binary-annotators 16 --binary-items 20000``);
- ``multiclass``: 10^5 items (``--multiclass-items``), C = 10 classes, K = 5 annotators
  (``simulate_multiclass``), ``bayescal audit data.csv --probs p0,...,p9 --annotators
  a1,...,a5``; target under 5 minutes, with progress shown;
- ``many-classes``: 3000 items (``--many-classes-items``), C = 50 classes
  (``--many-classes``), K = 3 annotators (``simulate_multiclass``), the same command with
  ``--probs p0,...,p49 --annotators a1,a2,a3``; recorded as ``many_classes_c<C>``; target
  under 120 s on an idle machine (issue 23, "K and C at the edges").

Generating and writing the CSV is not timed. For each run the JSON keeps the wall seconds of
the command, its peak resident memory (``ru_maxrss`` of the child, read by the child itself
at exit; target under 2 GB), every line it printed on stderr with the seconds since start
(the stage lines: the longest silence between two lines says how long a user saw nothing),
the exit status, the child's CPU seconds (user + system, ``getrusage``; the sampler's
threads included), ``stage_seconds`` (wall and CPU seconds of every stage, from its stage
line to the next: the child prints its CPU seconds at every record of the ``bayescal``
logger) and the load average before and after (the machine is shared: wall seconds of
CPU-bound stages stretch with the load, CPU seconds much less).

An existing ``--json`` file is updated, not replaced: the cases run now replace their
entries (each with its own environment and options), the others are kept as they were.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bayescal.bench._io import earlier_json, environment, write_json
from bayescal.bench.many_annotators import write_csv

TARGETS = {
    "binary_seconds": 60.0,
    "multiclass_seconds": 300.0,
    "many_classes_seconds": 120.0,
    "peak_rss_bytes": 2 * 1024**3,
}

#: The measured child: ``bayescal.cli.main`` on the arguments, then its own peak RSS; every
#: stage record of the ``bayescal`` logger also prints the process's CPU seconds so far.
_CHILD = (
    "import logging, resource, sys, time\n"
    "from bayescal.cli import main\n"
    "class Cpu(logging.Handler):\n"
    "    def emit(self, record):\n"
    "        text = record.getMessage().replace(chr(10), ' ')[:200]\n"
    "        print(f'STAGE_CPU {time.process_time():.3f} {text}', file=sys.stderr, flush=True)\n"
    "logging.getLogger('bayescal').addHandler(Cpu(logging.INFO))\n"
    "code = main(sys.argv[1:])\n"
    "use = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(f'PEAK_RSS {use.ru_maxrss * 1024}', file=sys.stderr, flush=True)\n"
    "print(f'CPU_SECONDS {use.ru_utime + use.ru_stime}', file=sys.stderr, flush=True)\n"
    "sys.exit(code)\n"
)


def add_arguments(parser) -> None:
    parser.add_argument("--json", metavar="PATH", help="write the results here as JSON")
    parser.add_argument("--binary-items", type=int, default=1_000_000)
    parser.add_argument(
        "--binary-annotators",
        type=int,
        default=3,
        help="annotators of the binary case: 3 (the toy study, default) or K flip "
        "annotators, recorded as binary_k<K>",
    )
    parser.add_argument("--multiclass-items", type=int, default=100_000)
    parser.add_argument("--many-classes-items", type=int, default=3000)
    parser.add_argument(
        "--many-classes",
        type=int,
        default=50,
        help="classes of the many-classes case (default 50; K = 3 annotators)",
    )
    parser.add_argument(
        "--cases",
        nargs="+",
        choices=["binary", "multiclass", "many-classes"],
        default=["binary", "multiclass"],
        help="which cases to run (default binary and multiclass)",
    )
    parser.add_argument(
        "--extra",
        default="",
        help="extra options for every audit, e.g. '--no-crowdkit' (default: none)",
    )
    parser.add_argument("--seed", type=int, default=2026)


def _write(path: Path, columns: list[str], *arrays) -> None:
    import numpy as np

    table = np.column_stack(arrays)
    np.savetxt(path, table, delimiter=",", header=",".join(columns), comments="", fmt="%.6g")


def _binary_csv(n: int, seed: int, path: Path) -> list[str]:
    from bayescal.simulate import simulate_toy

    data = simulate_toy(n, "shifted", random_state=seed)
    _write(path, ["score", *data.annotators], data.score, data.labels)
    return ["--annotators", ",".join(data.annotators)]


def _many_csv(n: int, k: int, seed: int, path: Path) -> list[str]:
    write_csv(path, k, n, 0.0, seed)
    return []


def _multiclass_csv(
    n: int, seed: int, path: Path, n_classes: int = 10, n_annotators: int = 5
) -> list[str]:
    from bayescal.simulate import simulate_multiclass

    data = simulate_multiclass(n, n_classes, random_state=seed, n_annotators=n_annotators)
    probs = [f"p{c}" for c in range(data.n_classes)]
    _write(path, [*probs, *data.annotators], data.probs, data.labels)
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
    cpu = [float(text.split()[1]) for _, text in lines if text.startswith("CPU_SECONDS ")]
    marks = [
        (t, float(text.split(maxsplit=2)[1]), text.split(maxsplit=2)[2])
        for t, text in lines
        if text.startswith("STAGE_CPU ") and len(text.split(maxsplit=2)) == 3
    ]
    shown = [
        (t, text)
        for t, text in lines
        if not text.startswith(("PEAK_RSS ", "CPU_SECONDS ", "STAGE_CPU "))
    ]
    times = [0.0] + [t for t, _ in shown] + [wall]
    return {
        "argv": argv,
        "exit_status": code,
        "seconds": wall,
        "peak_rss_bytes": peak[0] if peak else None,
        "cpu_seconds": cpu[0] if cpu else None,
        "longest_silence_seconds": max(b - a for a, b in zip(times, times[1:])),
        "stage_seconds": _stages(marks, wall, cpu[0] if cpu else None),
        "stderr": shown,
        "loadavg_before": load_before,
        "loadavg_after": list(os.getloadavg()),
    }


def _stages(marks: list[tuple[float, float, str]], wall: float, cpu: float | None) -> list[dict]:
    """Wall and CPU seconds of every stage: from its line (``NAME...``) to the next stage's
    (the last one to the end of the run)."""
    starts = [(t, c, text[:-3]) for t, c, text in marks if text.endswith("...")]
    ends = [(t, c) for t, c, _ in starts[1:]] + [(wall, cpu)]
    return [
        {
            "stage": name,
            "wall_seconds": round(t1 - t0, 2),
            "cpu_seconds": None if c1 is None else round(c1 - c0, 2),
        }
        for (t0, c0, name), (t1, c1) in zip(starts, ends)
    ]


def run(args) -> int:
    from bayescal.errors import ConfigError

    if args.binary_annotators < 1:
        raise ConfigError(f"--binary-annotators must be at least 1; got {args.binary_annotators}.")
    if args.many_classes < 3:
        raise ConfigError(
            f"--many-classes must be at least 3 (a multiclass audit); got {args.many_classes}."
        )
    extra = args.extra.split()
    k = args.binary_annotators
    binary = "binary" if k == 3 else f"binary_k{k}"
    makers = {
        "binary": (
            binary,
            args.binary_items,
            _binary_csv if k == 3 else lambda n, seed, path: _many_csv(n, k, seed, path),
        ),
        "multiclass": ("multiclass", args.multiclass_items, _multiclass_csv),
        "many-classes": (
            f"many_classes_c{args.many_classes}",
            args.many_classes_items,
            lambda n, seed, path: _multiclass_csv(n, seed, path, args.many_classes, 3),
        ),
    }
    result = earlier_json(args.json)
    result.update(benchmark="audit-large", targets=TARGETS)
    result.setdefault("cases", {})
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases:
            key, n, make = makers[case]
            path = Path(tmp) / f"{key}.csv"
            t0 = time.perf_counter()
            columns = make(n, args.seed, path)
            generate = time.perf_counter() - t0
            argv = ["audit", str(path), *columns, "--out", f"{tmp}/{key}-report", *extra]
            record = _run_case(argv)
            record.update(
                n_items=n,
                generate_seconds=generate,
                csv_bytes=path.stat().st_size,
                extra_args=extra,
                environment=environment(),
            )
            if case == "binary":
                record["n_annotators"] = k
            if case == "many-classes":
                record.update(n_classes=args.many_classes, n_annotators=3)
            result["cases"][key] = record
            print(
                f"{key}: {record['seconds']:.1f} s wall, {record['cpu_seconds'] or 0:.1f} CPU s, "
                f"exit {record['exit_status']}, peak RSS "
                f"{(record['peak_rss_bytes'] or 0) / 1e9:.2f} GB",
                file=sys.stderr,
                flush=True,
            )
    write_json(result, args.json)
    return 0
