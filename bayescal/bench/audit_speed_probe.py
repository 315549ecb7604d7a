"""The measuring process of ``bayescal bench audit-speed`` (see that module).

``bench audit-speed`` starts a fresh Python process per measurement that times
``import bayescal`` first, then loads this file by its path and calls
:func:`child_main`, which prints one ``RESULT {json}`` line. Only the standard
library is imported at module level, so nothing is loaded before the stages it
times; it may run against another checkout's ``bayescal`` (``--before``), whose
API it adapts to (``seed`` / ``random_seed`` before the rename to ``random_state``).
"""

from __future__ import annotations

import inspect
import json
import sys
import time
from typing import Any

#: Sampler settings of ``bayescal audit`` (its defaults) on the example.
AUDIT: dict[str, int] = {"draws": 1000, "tune": 1000, "chains": 2, "groups": 5, "bins": 10}
#: Credible mass of the audit's interval.
PROB = 0.9
EXAMPLE = "snli-entailment"
HEAVY: tuple[str, ...] = ("pymc", "pytensor", "arviz", "matplotlib", "nutpie", "numba", "dask")
HEAVY += ("pyarrow", "jinja2", "yaml", "pandas", "scipy", "xarray")
NO_DASK = "nodask"
TARGETS = {
    "cold_seconds": 5.0,
    "warm_seconds": 2.0,
    "rhat_max": 1.01,
    "ess_bulk_min": 400.0,
    # issue 24 item 2: the README command in a fresh process; help and argument errors
    "cli_wall_seconds": 5.0,
    "startup_seconds": 0.5,
}


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _interval_mcse(summary, fit) -> dict:
    """NC-ECE interval ends and their Monte Carlo standard errors (chain structure kept)."""
    import arviz as az
    import numpy as np

    from bayescal.metrics.uncertainty import nc_ece_interval

    post = nc_ece_interval(summary, fit, prob=PROB, random_state=0)
    ece = post.ece["full"].values.reshape(AUDIT["chains"], -1)  # draws stack chain-major
    out = {}
    for end, q in (("lo", (1 - PROB) / 2), ("hi", 1 - (1 - PROB) / 2)):
        out[end] = float(np.quantile(ece, q))
        out[f"{end}_mcse"] = float(az.mcse(ece, method="quantile", prob=q))
        out[f"{end}_ess"] = float(az.ess(ece, method="quantile", prob=q))
    return out


def _fit_record(fit, seconds) -> dict:
    import numpy as np

    d = fit.diagnostics
    post = fit.idata.posterior
    import arviz as az

    ess = az.ess(post, var_names=["a", "b", "prevalence"], method="bulk")
    channel_ess = float(min(ess["a"].min(), ess["b"].min()))
    sampling = d["sampling_seconds"]
    load = d.get("load_seconds", 0.0)
    return {
        "seconds": seconds,
        "load_seconds": load,
        "sampling_seconds": sampling,
        "post_seconds": seconds - sampling - load,
        "rhat_max": d["rhat_max"],
        "ess_bulk_min": d["ess_bulk_min"],
        "ess_bulk_min_channels": channel_ess,
        "ess_tail_min": d["ess_tail_min"],
        "divergences": d["divergences"],
        "bfmi_min": d["bfmi_min"],
        "mean_tree_size": float(np.mean(fit.idata.sample_stats["n_steps"].values)),
        "diagnostics_pass": bool(
            d["rhat_max"] <= TARGETS["rhat_max"]
            and d["ess_bulk_min"] >= TARGETS["ess_bulk_min"]
            and d["divergences"] == 0
        ),
    }


def _child_bayes(sampler: str) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    t = {}
    from bayescal import load_example, summarize

    data, t["load_example"] = _timed(lambda: load_example(EXAMPLE))
    summary, t["summarize"] = _timed(
        lambda: summarize(data, groups=AUDIT["groups"], bins=AUDIT["bins"])
    )

    def imports():
        import arviz  # noqa: F401

        if sampler == "nutpie":
            import numba  # noqa: F401
            import nutpie  # noqa: F401

            import bayescal.bayes.logdensity  # noqa: F401
        else:
            import pymc  # noqa: F401

    _, t["import_sampler"] = _timed(imports)
    from bayescal.bayes import fit_channels_bayes

    settings: dict[str, int | str] = {k: AUDIT[k] for k in ("draws", "tune", "chains")}
    params = inspect.signature(fit_channels_bayes).parameters
    if "sampler" in params:
        settings["sampler"] = sampler
    elif sampler != "pymc":
        raise RuntimeError("this checkout's fit_channels_bayes has only PyMC: use --samplers pymc")
    seed_name = "random_state" if "random_state" in params else "random_seed"

    def fit(seed):
        return fit_channels_bayes(summary, "grouped", cores=1, **{seed_name: seed}, **settings)

    cold, cold_s = _timed(lambda: fit(0))
    warm, warm_s = _timed(lambda: fit(1))
    return {
        "stages": t,
        "cold_fit": _fit_record(cold, cold_s),
        "warm_fit": _fit_record(warm, warm_s),
        "audit_step_cold": t["import_sampler"] + cold_s,
        "audit_step_warm": warm_s,
        "interval": _interval_mcse(summary, cold),
    }


def _child_audit() -> dict:
    import warnings

    warnings.simplefilter("ignore")
    t0 = time.perf_counter()  # after ``import bayescal`` (timed separately)
    from bayescal import load_example
    from bayescal.report.audit import audit

    seed_name = "random_state" if "random_state" in inspect.signature(audit).parameters else "seed"
    data = load_example(EXAMPLE)
    seeds: list[dict[str, Any]] = [{seed_name: 0}, {seed_name: 1}]
    first = audit(data, **seeds[0])
    cold = time.perf_counter() - t0
    second, warm = _timed(lambda: audit(data, **seeds[1]))
    # a finished audit always holds the channels it corrected with
    assert first.channels is not None and second.channels is not None
    return {
        "audit_cold": cold,
        "audit_warm": warm,
        "bayes_fit_cold": first.channels.diagnostics,
        "bayes_fit_warm": second.channels.diagnostics,
    }


def _child_cli(extra: list[str]) -> dict:
    """``bayescal audit --example ... --quiet [extra]`` through ``bayescal.cli.main`` in this
    fresh process, timed per stage: each stage runs from its progress record (INFO on the
    ``bayescal`` logger) to the next; ``before_audit`` is from ``main`` to the first stage
    (the run module's imports, loading the example), ``figures`` the command's drawing of the
    figures (``cli_output.draw_figures``, two processes), ``save`` the report's ``save`` (HTML,
    JSON, posterior.nc; also the figures in a checkout that draws them there). Wall
    (``perf_counter``) and CPU (``process_time``, all threads, plus finished child processes)
    seconds; the diagnostics the report states come with them."""
    import logging
    import resource
    import tempfile

    marks: list[tuple[str, float, float]] = []

    def cpu_now() -> float:
        # this process's threads and its finished children (the figures' drawing child)
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + child.ru_utime + child.ru_stime

    def mark(name: str) -> None:
        marks.append((name, time.perf_counter(), cpu_now()))

    class _Stages(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno == logging.INFO and record.name.startswith("bayescal.report"):
                mark(record.getMessage().removesuffix("..."))

    from bayescal.cli import main
    from bayescal.report import cli_output, core

    save = core.Report.save
    draw = getattr(cli_output, "draw_figures", None)  # (a checkout before it drew in save)

    def timed_save(self, *args, **kwargs):
        mark("save")
        try:
            return save(self, *args, **kwargs)
        finally:
            mark("after save")

    def timed_draw(result):
        mark("figures")
        try:
            assert draw is not None
            return draw(result)
        finally:
            mark("after save")

    core.Report.save = timed_save  # type: ignore[method-assign]
    if draw is not None:
        cli_output.draw_figures = timed_draw
    logger = logging.getLogger("bayescal")
    logger.addHandler(_Stages())
    logger.setLevel(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{tmp}/report"
        mark("before_audit")
        code = main(["audit", "--example", EXAMPLE, "--out", out, "--quiet", *extra])
        mark("end")
        with open(f"{out}/summary.json", encoding="utf-8") as fh:
            summary = json.load(fh)
    if code != 0:
        raise RuntimeError(f"bayescal audit exited {code}")
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for (name, w0, c0), (_, w1, c1) in zip(marks, marks[1:]):
        if name != "after save":
            wall[name] = wall.get(name, 0.0) + w1 - w0
            cpu[name] = cpu.get(name, 0.0) + c1 - c0
    return {
        "extra_args": extra,
        "stages_wall": wall,
        "stages_cpu": cpu,
        "main_wall": marks[-1][1] - marks[0][1],
        "main_cpu": marks[-1][2] - marks[0][2],
        "diagnostics": summary["diagnostics"],
        "diagnostics_pass": summary["diagnostics"]["rhat_max"] <= TARGETS["rhat_max"]
        and summary["diagnostics"]["ess_bulk_min"] >= TARGETS["ess_bulk_min"]
        and summary["diagnostics"]["divergences"] == 0,
        "nc_ece": summary["ece"]["nc"],
    }


def _child_imports(dask: bool) -> dict:
    """Import costs. Without ``dask`` the launcher has made the package unimportable before
    ``import bayescal`` (as in an install without the optional extra): that shows what
    xarray's first-use check for dask arrays costs."""
    import bayescal

    loaded = sorted(m for m in HEAVY if sys.modules.get(m) is not None)
    import numpy as np

    annotations, data_layer = _timed(lambda: bayescal.Annotations)
    rng = np.random.default_rng(0)
    score = rng.random(1000)
    labels = (rng.random((1000, 3)) < score[:, None]).astype(float)
    _, first = _timed(lambda: annotations.from_arrays(score, labels))
    _, second = _timed(lambda: annotations.from_arrays(score, labels))
    return {
        "dask_importable": dask,
        "heavy_modules_after_import": loaded,
        "import_data_layer": data_layer,
        "from_arrays_first": first,
        "from_arrays_second": second,
        "heavy_modules_after_from_arrays": sorted(
            m for m in HEAVY if sys.modules.get(m) is not None
        ),
    }


def child_main(argv, import_seconds: float) -> None:
    """Entry point of the measuring subprocesses; prints one JSON line.

    ``import_seconds`` is the time ``import bayescal`` took in this process, measured
    before anything else of bayescal was imported.
    """
    mode = argv[0]
    if mode == "bayes":
        out = _child_bayes(argv[1])
    elif mode == "audit":
        out = _child_audit()
    elif mode == "cli":
        out = _child_cli(argv[1:])
    else:
        out = _child_imports(dask=argv[1] != NO_DASK)
    out["import_bayescal"] = import_seconds
    from bayescal._json import json_default

    print("RESULT " + json.dumps(out, default=json_default), flush=True)


# --------------------------------------------------------------------------- parent
