"""``bayescal bench audit-speed``: how long the Bayesian step of ``bayescal audit`` takes.

The example is ``bayescal audit --example snli-entailment`` (1514 items, three
annotators, five score groups) with the audit's sampler settings (2 chains x 1000
draws, 1000 tuning steps; the ``bayes`` fits on one thread, the audit's on one thread per
chain up to the CPUs, ``bayes.sampling.parallel_chains``, with the same draws). Every
measurement runs in a **fresh Python process** started by this command, so a cold start is
really cold:

- ``bayes``: in-process stages, timed with ``perf_counter``: ``import bayescal``,
  loading the example, summarising, importing the sampler's libraries (nutpie,
  numba and ArviZ; or PyMC), then ``fit_channels_bayes`` twice with the same model
  shape (the *cold* fit, which loads or compiles the kernel, and a *warm* one).
  ``audit_step_cold`` = sampler imports + cold fit: what the audit's Bayesian step
  adds to a fresh process (target 5 s); ``audit_step_warm`` = the warm fit (target
  2 s). Each fit is split into ``load`` (numba kernel compile or cache load; PyMC
  compiles inside its sampling time), ``sampling`` and ``post`` (posterior
  predictive, log-likelihood, R-hat / ESS / E-BFMI, predictive check). The
  diagnostics pass when R-hat <= 1.01 and bulk ESS >= 400 for every channel
  (``a``, ``b``) and prevalence. The NC-ECE interval ends' Monte Carlo standard
  errors (ArviZ's quantile MCSE over the chain structure of the draws) say whether
  the number of draws is enough for the digits the report prints.
- ``first_run`` (nutpie only, once): the cold fit with an empty numba cache in a
  temporary folder (``NUMBA_CACHE_DIR``), i.e. the first audit after installing.
- ``audit``: ``bayescal.report.audit.audit`` on the example, cold then warm, in a
  fresh process, and the wall time of the CLI command itself.
- ``cli_stages``: ``bayescal audit --example snli-entailment`` itself (``bayescal.cli.main``
  in a fresh process), per stage, wall and CPU seconds: ``before_audit`` (the run module's
  imports and loading the example), each stage of the audit, and ``save`` (figures, HTML,
  JSON, posterior.nc); ``cold`` with an empty numba cache, ``warm`` after it, with and without
  the crowd-kit comparison (``--no-crowdkit``), with the diagnostics the report states.
- ``cli``: the README command ``bayescal audit --example snli-entailment --out report/``
  itself, wall and CPU seconds of each fresh process (target 5 s wall); ``startup``: the
  answers given without an audit, ``bayescal audit --help``, an argument refused while
  parsing (``--draws 0``) and a data file that does not exist (target 0.5 s each).
- ``imports``: ``import bayescal``, resolving ``bayescal.Annotations`` (imports the
  data layer: numpy, pandas, xarray), the first and second ``Annotations.from_arrays``
  of a process, and which heavy libraries each step loaded; again with dask made
  unimportable (``imports_without_dask``), as in an install without the ``dask``
  extra: xarray imports dask on the first array it wraps, to test for dask arrays.

Every fresh process also records ``process_cpu_seconds``: its user + system CPU from
start to exit (``getrusage`` of the finished child; interpreter start, imports, the work
and exit, the figure ``/usr/bin/time`` shows), beside its wall ``process_wall_seconds``.
``--skip bayes`` leaves out the in-process sampler timings (e.g. to time only the
command's stages).

Timings on a shared machine are noisy: each mode runs ``--repeats`` times and the
JSON keeps every run, the best (minimum: the least disturbed run) and the median,
with the load average before each run and ``uptime`` at the start and end.

``--before DIR`` also measures another checkout (for example a worktree of the
commit before a change), each of its runs interleaved with the current one's so
both see the same load: the measuring processes load ``audit_speed_probe.py`` by its path with
``DIR`` first on ``PYTHONPATH``, so they import that checkout's ``bayescal``,
whose ``fit_channels_bayes`` may predate ``sampler=`` / ``random_state=`` (it is
sampled with PyMC, its only sampler then). Results are keyed ``current/...`` and
``before/...``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from bayescal.bench._io import environment, fresh_python, write_json
from bayescal.bench.audit_speed_probe import AUDIT, EXAMPLE, NO_DASK, PROB, TARGETS


def add_arguments(parser) -> None:
    parser.add_argument("--json", metavar="PATH", help="write the results here as JSON")
    parser.add_argument(
        "--repeats", type=int, default=3, help="fresh processes per measurement (default 3)"
    )
    parser.add_argument(
        "--samplers",
        nargs="+",
        choices=["nutpie", "pymc"],
        default=["nutpie", "pymc"],
        help="samplers to time (default both: nutpie is the default, PyMC the reference)",
    )
    parser.add_argument(
        "--skip",
        nargs="*",
        choices=["bayes", "first_run", "audit", "cli", "startup", "imports"],
        default=[],
        help="measurements to leave out",
    )
    parser.add_argument(
        "--before",
        metavar="DIR",
        default=None,
        help="also measure the checkout in DIR (e.g. a worktree of the commit before a change), "
        "interleaved with this one; it is sampled with PyMC only",
    )


# --------------------------------------------------------------------------- children
def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _commit(folder) -> str | None:
    """The git commit checked out in ``folder`` (None outside a git checkout)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _env(pythonpath: str | None, **extra) -> dict:
    env = {**os.environ, **extra}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(Path(pythonpath).resolve()), env.get("PYTHONPATH")) if p
        )
    return env


#: A measuring process: hide dask if asked, time ``import bayescal`` (whichever checkout
#: PYTHONPATH finds) before anything else, then load the probe by its path (so the current
#: checkout's measuring code runs against that bayescal) and call its ``child_main``.
_CHILD = (
    "import sys, time\n"
    f"if {NO_DASK!r} in sys.argv:\n"
    "    sys.modules['dask'] = None  # import dask fails, as without the extra\n"
    "t0 = time.perf_counter()\n"
    "import bayescal\n"
    "seconds = time.perf_counter() - t0\n"
    "import importlib.util\n"
    "spec = importlib.util.spec_from_file_location('audit_speed_child', sys.argv[1])\n"
    "child = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(child)\n"
    "child.child_main(sys.argv[2:], seconds)\n"
)


def _spawn(args, env) -> tuple[dict, float, list[float]]:
    load = list(os.getloadavg())
    probe = str(Path(__file__).with_name("audit_speed_probe.py"))
    # -P: the working directory is not put first on sys.path: PYTHONPATH decides which
    # checkout's bayescal is measured
    proc, wall, cpu = fresh_python(["-P", "-c", _CHILD, probe, *args], env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"measurement {args} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
        )
    out = json.loads(lines[-1][len("RESULT ") :])
    # the whole process: interpreter start, imports, the work and exit (what `time` shows)
    out["process_cpu_seconds"] = cpu
    return out, wall, load


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for key, val in d.items():
        name = f"{prefix}{key}"
        if isinstance(val, dict):
            out.update(_flatten(val, name + "."))
        elif isinstance(val, (int, float)) and not isinstance(val, bool):
            out[name] = float(val)
    return out


def _summarise(runs: list[dict]) -> dict:
    """Best (minimum) and median of every numeric leaf over the runs."""
    import numpy as np

    flat = [_flatten(r) for r in runs]
    keys = [k for k in flat[0] if all(k in f for f in flat)]
    return {
        "best": {k: float(min(f[k] for f in flat)) for k in keys},
        "median": {k: float(np.median([f[k] for f in flat])) for k in keys},
    }


def _measure(jobs: dict, repeats: int) -> dict:
    """Run every job (name -> (child args, env)) ``repeats`` times, round-robin, so that
    jobs compared with each other see the same machine load."""
    runs: dict = {name: [] for name in jobs}
    for _ in range(repeats):
        for name, (args, env) in jobs.items():
            out, wall, load = _spawn(args, env)
            out["process_wall_seconds"] = wall
            out["loadavg_before"] = load
            runs[name].append(out)
            print(json.dumps({"job": name, "process_wall_seconds": wall}), flush=True)
    return {name: {"runs": r, **_summarise(r)} for name, r in runs.items()}


#: The README's first command (``bayescal audit --example snli-entailment --out report/``)
#: and what the command line answers without running an audit: its help, an argument refused
#: while parsing, and a data file that does not exist (refused once the run module starts).
README_COMMAND = ["audit", "--example", EXAMPLE, "--out"]
STARTUP_COMMANDS = {
    "help": ["audit", "--help"],
    "argument_error": ["audit", "--example", EXAMPLE, "--draws", "0", "--out"],
    "missing_data_file": ["audit", "no-such-file.csv", "--out"],
}


def _commands(jobs: dict, repeats: int, *, first_line: bool = False) -> dict:
    """Wall and CPU seconds of ``bayescal ARGV`` for each job (name -> (command shown, argv,
    env, the exit status it must give)), ``repeats`` fresh processes each, round-robin."""
    out = {
        name: {"command": shown, "seconds": [], "cpu_seconds": [], "loadavg_before": []}
        for name, (shown, *_) in jobs.items()
    }
    for _ in range(repeats):
        for name, (_, argv, env, code) in jobs.items():
            entry = out[name]
            entry["loadavg_before"].append(list(os.getloadavg()))
            proc, wall, cpu = fresh_python(["-P", "-m", "bayescal", *argv], env)
            if proc.returncode != code:
                raise RuntimeError(f"bayescal {argv} exited {proc.returncode}: {proc.stderr}")
            entry["seconds"].append(wall)
            entry["cpu_seconds"].append(cpu)
            if first_line:
                entry["first_line"] = (proc.stdout or proc.stderr).splitlines()[0]
    for entry in out.values():
        entry.update(best=min(entry["seconds"]), best_cpu=min(entry["cpu_seconds"]))
    return out


def _cli_walls(envs: dict, repeats: int) -> dict:
    """The README command ``bayescal audit --example ... --out DIR`` per checkout."""
    shown = "bayescal " + " ".join(README_COMMAND) + " report/"
    with tempfile.TemporaryDirectory() as tmp:
        argv = [*README_COMMAND, f"{tmp}/report/"]
        return _commands({n: (shown, argv, e, 0) for n, e in envs.items()}, repeats)


def _startup(env: dict, repeats: int) -> dict:
    """The answers given without an audit (:data:`STARTUP_COMMANDS`): 0 for the help, 2 for
    the errors."""
    with tempfile.TemporaryDirectory() as tmp:
        jobs = {}
        for name, argv in STARTUP_COMMANDS.items():
            argv = argv if name == "help" else [*argv, f"{tmp}/report"]
            jobs[name] = ("bayescal " + " ".join(argv), argv, env, 0 if name == "help" else 2)
        return _commands(jobs, repeats, first_line=True)


def _cli_stages(env: dict, repeats: int) -> dict:
    """Per-stage seconds of ``bayescal audit --example ...`` (and with ``--no-crowdkit``) in
    fresh processes: ``cold`` once with an empty numba cache (the first audit after an
    install: the kernels compile), ``warm`` ``repeats`` times (the cache written by then)."""
    with tempfile.TemporaryDirectory() as cache:
        cold_env = {**env, "NUMBA_CACHE_DIR": cache}
        out = {"cold": _measure({"default": (["cli"], cold_env)}, 1)}
        jobs = {"default": (["cli"], cold_env), "no_crowdkit": (["cli", "--no-crowdkit"], cold_env)}
        out["warm"] = _measure(jobs, repeats)
    return out


def run(args) -> int:
    from bayescal.bayes.sampling import parallel_chains
    from bayescal.errors import ConfigError

    if args.repeats < 1:
        raise ConfigError(f"--repeats must be at least 1; got {args.repeats}.")
    if args.before is not None and not Path(args.before, "bayescal", "__init__.py").is_file():
        raise ConfigError(f"--before {args.before!r} is not a checkout of bayescal.")
    envs = {"current": _env(None)}
    if args.before is not None:
        envs["before"] = _env(args.before)
    result = {
        "benchmark": "audit-speed",
        "example": EXAMPLE,
        "settings": {
            **AUDIT,
            "prob": PROB,
            "cores": {"bayes": 1, "audit": parallel_chains(AUDIT["chains"])},
            "repeats": args.repeats,
        },
        "targets": TARGETS,
        "before": args.before,
        "commits": {
            "current": _commit(Path(__file__).resolve().parents[2]),
            "before": None if args.before is None else _commit(args.before),
        },
        "uptime_start": _uptime(),
        "environment": environment(),
    }
    if "bayes" not in args.skip:
        jobs = {f"current/{s}": (["bayes", s], envs["current"]) for s in args.samplers}
        if "before" in envs:
            jobs["before/pymc"] = (["bayes", "pymc"], envs["before"])
        result["bayes"] = _measure(jobs, args.repeats)
    if "nutpie" in args.samplers and "first_run" not in args.skip:
        with tempfile.TemporaryDirectory() as cache:
            env = _env(None, NUMBA_CACHE_DIR=cache)
            result["first_run"] = _measure({"current/nutpie": (["bayes", "nutpie"], env)}, 1)
    if "audit" not in args.skip:
        result["audit"] = _measure({n: (["audit"], e) for n, e in envs.items()}, args.repeats)
        result["cli"] = _cli_walls(envs, args.repeats)
    if "cli" not in args.skip:
        result["cli_stages"] = _cli_stages(envs["current"], args.repeats)
    if "startup" not in args.skip:
        result["startup"] = _startup(envs["current"], args.repeats)
    if "imports" not in args.skip:
        jobs = {f"{n}/with_dask": (["imports", "dask"], e) for n, e in envs.items()}
        jobs.update({f"{n}/without_dask": (["imports", NO_DASK], e) for n, e in envs.items()})
        result["imports"] = _measure(jobs, args.repeats)
    result["uptime_end"] = _uptime()
    write_json(result, args.json)
    return 0
