"""What every benchmark shares: JSON to a file and to stdout, environment facts, option
defaults per mode, Monte Carlo summaries (shares, means and their standard errors, interval
coverage) and repetition seeds."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import numpy as np

from bayescal._json import json_default, write_text_atomic
from bayescal.report.core import package_versions


def environment() -> dict:
    """Versions (the report core's record) and the machine the benchmark ran on."""
    versions = package_versions()
    return {
        "bayescal": versions["bayescal"],
        "python": versions["python"],
        "numpy": versions["numpy"],
        "machine": platform.machine(),
        "processor_count": os.cpu_count(),
    }


def write_json(result: dict, path) -> None:
    text = json.dumps(result, indent=2, default=json_default)
    if path is not None:
        write_text_atomic(path, text + "\n")
    print(text)


def load_average(start) -> dict[str, list[float]]:
    """The load average at the start of a run (``os.getloadavg()`` then) and now."""
    return {"start": list(start), "end": list(os.getloadavg())}


def write_run(protocol: dict, cells: list, *, started: float, load_start, path) -> None:
    """Write ``{protocol, cells, seconds, load_average, environment}`` (the layout of the
    coverage-style benchmarks); ``started`` is the ``time.perf_counter()`` of the start."""
    import time

    out = {
        "protocol": protocol,
        "cells": cells,
        "seconds": time.perf_counter() - started,
        "load_average": load_average(load_start),
        "environment": environment(),
    }
    write_json(out, path)


def mode_defaults(args, mode: str, table: dict[str, dict[str, object]]) -> None:
    """Fill the options of a benchmark with several modes (``--multiclass``, ``--priors``):
    ``table`` maps an option's ``dest`` to ``{mode: default}``; options are declared with
    ``default=None``. An option given on the command line for a mode it does not belong to
    is an error (never silently ignored)."""
    from bayescal.errors import ConfigError

    for dest, defaults in table.items():
        value = getattr(args, dest, None)
        if mode in defaults:
            if value is None:
                setattr(args, dest, defaults[mode])
        elif value is not None:
            flag = "--" + dest.replace("_", "-")
            raise ConfigError(
                f"{flag} applies to the {' / '.join(defaults)} mode only, not to {mode}; "
                f"drop it or choose that mode."
            )


# ------------------------------------------------------------------ Monte Carlo summaries
def share_se(p: float, n: int) -> float:
    """Monte Carlo standard error ``sqrt(p (1 - p) / n)`` of a share ``p`` over ``n`` trials."""
    return float(np.sqrt(p * (1 - p) / n))


def mean_se(values) -> float:
    """Monte Carlo standard error of a mean: the sd (ddof 1) over ``sqrt(n)``."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.std(ddof=1) / np.sqrt(v.size))


def mean_sd(values, *, single: float | None = 0.0) -> dict[str, float | None]:
    """``{"mean", "sd"}`` of ``values`` (sd with ddof 1; ``single`` for one value)."""
    v = np.asarray(values, dtype=np.float64)
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else single}


def interval_coverage(lo, hi, truth: float) -> dict[str, float]:
    """Coverage of ``truth`` by the intervals ``[lo, hi]`` (one per repetition), its
    binomial SE, the shares of misses with the truth above ``hi`` / below ``lo``, and the
    mean width."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    cov = float(np.mean((lo <= truth) & (truth <= hi)))
    return {
        "coverage": cov,
        "coverage_se": share_se(cov, lo.size),
        "miss_above": float(np.mean(truth > hi)),
        "miss_below": float(np.mean(truth < lo)),
        "mean_width": float(np.mean(hi - lo)),
    }


def rep_seed(*keys: int) -> int:
    """The seed of one repetition: ``SeedSequence(keys)``'s first 32-bit word (a cell's
    repetitions depend on its own keys only, not on which other cells run)."""
    return int(np.random.SeedSequence(list(keys)).generate_state(1, dtype=np.uint32)[0])


# ------------------------------------------------------------------ fresh processes
def fresh_python(argv: list[str], env: dict | None = None):
    """``python ARGV`` in a fresh process, output captured: ``(completed process, wall
    seconds, CPU seconds)``, the CPU its user + system time from start to exit (``getrusage``
    of the finished child: interpreter start, imports, the work and exit, what ``time``
    shows)."""
    import resource
    import subprocess
    import sys
    import time

    def children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    cpu0 = children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env)
    return proc, time.perf_counter() - t0, children_cpu() - cpu0


def child_result(proc) -> dict:
    """A finished child's result: its last line of stdout as JSON, or ``status: failed`` with
    the end of its stderr."""
    if proc.returncode != 0:
        return {"status": "failed", "stderr": proc.stderr[-2000:]}
    return {"status": "ok", **json.loads(proc.stdout.strip().splitlines()[-1])}


def earlier_json(path) -> dict:
    """What an earlier run wrote to ``path`` (a rerun resumes from or updates it); empty when
    there is no such file. A file that is not JSON is refused, never overwritten."""
    if path is None or not Path(path).exists():
        return {}
    try:
        earlier = json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        from bayescal.errors import ConfigError

        raise ConfigError(
            f"{path} is not JSON ({err}); give another --json path or remove the file."
        ) from None
    return earlier if isinstance(earlier, dict) else {}


def map_jobs(fn, items, jobs: int) -> list:
    """``[fn(x) for x in items]``, in ``jobs`` worker processes when ``jobs > 1`` (``fn`` a
    module-level function, its results in the order of ``items``)."""
    if jobs <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(fn, items))
