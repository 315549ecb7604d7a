"""``bayescal bench bayes-speed``: pattern-count grouped model vs a per-item latent-class model.

Both models have the same parameters, priors, orientation and sampler settings
(NUTS, same chains, draws, tune, target_accept 0.9, one core); they differ only in
the likelihood:

- *pattern*: ``sum_g sum_s n_gs log p_g(s)`` over at most ``L x 3**K`` cells;
- *per item* (the textbook way, a PyMC model): for every item, the Bernoulli
  likelihood of its answers with the latent class summed out, ``logaddexp(log(1 -
  mu_g) + sum_j log P(A_ij | 0), log mu_g + sum_j log P(A_ij | 1))``, missing
  answers masked.

``--sampler nutpie`` (default, what ``fit_channels_bayes`` uses): the pattern
model is the hand-written density (:class:`bayescal.bayes.logdensity.ChannelLogDensity`,
numba kernel) under nutpie; the per-item model, which has no hand-written
density, is compiled from PyMC by ``nutpie.compile_pymc_model`` (numba backend).
``--sampler pymc``: both are PyMC models under PyMC's NUTS (PyTensor backend
``--mode``).

Timing: ``compile_seconds`` is what must happen before sampling (PyMC: building
the NUTS step, i.e. logp and gradient compilation; nutpie + hand-written density:
the first kernel call, a numba cache load after the first run); ``pattern_seconds``
is summarising the items plus sampling (end to end, compilation excluded);
``per_item_seconds`` is sampling the per-item model (null above
``--per-item-max``); ``speedup`` is their ratio.

``--multiclass`` (formerly ``bench multiclass-bayes-speed``, which still runs it): the
multiclass Dawid–Skene posterior, timed (``docs/results/multiclass_bayes_speed.json``).
Issue 14's target: 10,000 items, C = 10 classes, K = 3 annotators (1,331 pattern
cells) sampled with 2 chains x 1,000 draws in under 60 s on this machine, with
R-hat <= 1.01 and bulk ESS >= 400 for every confusion entry.

One dataset (:func:`bayescal.simulate.simulate_multiclass`, default confusions,
``--missing`` answers missing at random; generation excluded from timing) is fitted
by :func:`bayescal.bayes.fit.fit_channels_bayes` under each
configuration asked for (``--configs``, each ``sampler:reference:target_accept``):

- ``nutpie:largest:0.8`` (the default of the library): nutpie on the hand-written
  density, log-ratio coordinates against each simplex's largest starting entry;
- ``nutpie:last:0.8``: the same sampler on log-ratios against the last class (the
  textbook additive log-ratio), to show what the reference choice buys;
- ``nutpie:largest:0.9``: the binary model's target_accept;
- ``pymc:largest:0.8``: PyMC's NUTS on the PyMC model (the reference backend;
  compiles a PyTensor graph in the process).

``seconds`` is the whole fit call (summary given; EM start, sampling, checks and
the log-likelihood group), ``cpu_seconds`` its user + system CPU time (every thread),
``sampling_seconds`` the sampler alone. Diagnostics are
over every confusion entry: the worst rank-normalised split R-hat and the smallest
bulk and tail ESS (ArviZ), divergences and gradient evaluations after tuning. The machine has 2
cores shared with other work; the load average is recorded before and after.

Options of one mode only (``--sizes``, ``--groups``, ``--per-item-max``, ``--sampler``,
``--mode`` binary; ``--n``, ``--classes``, ``--k``, ``--missing``, ``--cores``,
``--configs`` multiclass) are refused in the other.
"""

from __future__ import annotations

import json
import os
import time

from bayescal.bench._io import environment, mode_defaults, write_json
from bayescal.bench.coverage import Sampler, nuts_settings

SIZES = (1_000, 10_000, 1_000_000)


DEFAULT_CONFIGS = ("nutpie:largest:0.8", "nutpie:last:0.8", "nutpie:largest:0.9")
#: option -> {mode: default}; see :func:`bayescal.bench._io.mode_defaults`
MODE_DEFAULTS: dict[str, dict[str, object]] = {
    "draws": {"binary": 500, "multiclass": 1000},
    "tune": {"binary": 500, "multiclass": 1000},
    "sizes": {"binary": list(SIZES)},
    "groups": {"binary": 5},
    "per_item_max": {"binary": 10_000},
    "sampler": {"binary": "nutpie"},
    "mode": {"binary": "NUMBA"},
    "n": {"multiclass": 10_000},
    "classes": {"multiclass": 10},
    "k": {"multiclass": 3},
    "missing": {"multiclass": 0.1},
    "cores": {"multiclass": 2},
    "configs": {"multiclass": list(DEFAULT_CONFIGS)},
}


def add_arguments(parser) -> None:
    parser.add_argument(
        "--multiclass",
        action="store_true",
        help="time the multiclass Dawid-Skene posterior (C classes) instead of the binary "
        "pattern vs per-item models",
    )
    parser.add_argument("--json", dest="json_path", metavar="PATH", help="write JSON here")
    parser.add_argument("--draws", type=int, help="default 500 (binary), 1000 (multiclass)")
    parser.add_argument("--tune", type=int, help="default 500 (binary), 1000 (multiclass)")
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sizes", type=int, nargs="+", help=f"binary: numbers of items (default {list(SIZES)})"
    )
    parser.add_argument("--groups", type=int, help="binary: score groups (default 5)")
    parser.add_argument(
        "--per-item-max",
        type=int,
        help="binary: largest n for which the per-item model is run (default 10000)",
    )
    parser.add_argument(
        "--sampler",
        choices=["nutpie", "pymc"],
        help="binary: NUTS implementation (default nutpie, as fit_channels_bayes)",
    )
    parser.add_argument(
        "--mode",
        choices=["C", "NUMBA"],
        help="binary: PyTensor backend of PyMC's NUTS for both models "
        "(default NUMBA: half the per-step overhead of C)",
    )
    parser.add_argument("--n", type=int, help="multiclass: items (default 10000)")
    parser.add_argument("--classes", type=int, help="multiclass: classes (default 10)")
    parser.add_argument("--k", type=int, help="multiclass: annotators (default 3)")
    parser.add_argument("--missing", type=float, help="multiclass: missing rate (default 0.1)")
    parser.add_argument("--cores", type=int, help="multiclass: chains run in parallel (default 2)")
    parser.add_argument(
        "--configs",
        nargs="+",
        metavar="SAMPLER:REFERENCE:TARGET_ACCEPT",
        help=f"multiclass: configurations to time (default {' '.join(DEFAULT_CONFIGS)}); "
        "add pymc:largest:0.8 for PyMC",
    )


def _per_item_model(spec, labels, group):
    """The textbook per-item latent-class model with the pattern model's priors and orientation."""
    import numpy as np
    import pymc as pm
    import pytensor.tensor as pt

    from bayescal.bayes.models import INIT_PAIR, channel_hyper
    from bayescal.dims import GROUP

    al, be = channel_hyper(spec)
    p_al, p_be = spec.priors.prevalence.expand(len(spec.prevalence_groups), GROUP)
    ans = ~np.isnan(labels)
    x = np.where(ans, labels, 0.0)
    keep = ans.any(axis=1)
    x, ans, group = x[keep], ans[keep].astype(np.float64), group[keep]
    with pm.Model() as model:
        ab = pm.Beta(
            "ab",
            alpha=al,
            beta=be,
            shape=al.shape,
            transform=pm.distributions.transforms.ordered,
            initval=np.tile(INIT_PAIR, (al.shape[0], 1)),
        )
        a, b = ab[:, 0], ab[:, 1]
        prev = pm.Beta("prevalence", alpha=p_al, beta=p_be, shape=p_al.shape)
        xa = pt.as_tensor(x)
        m = pt.as_tensor(ans)
        l0 = (m * (xa * pt.log(a) + (1 - xa) * pt.log1p(-a))).sum(axis=1)
        l1 = (m * (xa * pt.log(b) + (1 - xa) * pt.log1p(-b))).sum(axis=1)
        mu = prev[group]
        pm.Potential("item_loglik", pt.logaddexp(pt.log1p(-mu) + l0, pt.log(mu) + l1).sum())
    return model


def _time_pattern_nutpie(spec, args, seed):
    """The default path: hand-written density + nutpie (compile = first kernel call)."""
    from bayescal.bayes.logdensity import ChannelLogDensity
    from bayescal.bayes.sampling import sample_nutpie

    settings = nuts_settings(args, seed)
    _, _, timings = sample_nutpie(ChannelLogDensity(spec), settings)
    return timings["load_seconds"], timings["sampling_seconds"]


def _time_model(model, args, seed):
    """(compile seconds, sampling seconds, idata) of NUTS on a PyMC model: nutpie (numba) or
    PyMC's NUTS with ``--mode``, target_accept 0.9 (:class:`bayescal.bench.coverage.Sampler`)."""
    sampler = Sampler(
        model,
        args.sampler,
        args.draws,
        args.tune,
        chains=args.chains,
        nutpie_options={"target_accept": 0.9},
        compile_kwargs={"mode": args.mode} if args.mode != "C" else None,
    )
    t0 = time.perf_counter()
    idata = sampler.sample(seed)
    return sampler.compile_seconds, time.perf_counter() - t0, idata


def run(args) -> int:
    mode = "multiclass" if args.multiclass else "binary"
    mode_defaults(args, mode, MODE_DEFAULTS)
    if args.multiclass:
        return _run_multiclass(args)
    return _run_binary(args)


def _run_binary(args) -> int:
    import logging

    import numpy as np

    from bayescal.bayes.models import build_pymc_model, make_spec
    from bayescal.simulate import simulate_toy
    from bayescal.summaries.summary import summarize

    logging.getLogger("pymc").setLevel(logging.ERROR)
    results = []
    for n in args.sizes:
        data = simulate_toy(int(n), "shifted", random_state=args.seed, missing=0.1)
        t0 = time.perf_counter()
        summary = summarize(data, groups=args.groups)
        summarize_s = time.perf_counter() - t0
        spec = make_spec(summary, "grouped")
        if args.sampler == "nutpie":
            compile_s, sample_s = _time_pattern_nutpie(spec, args, args.seed)
        else:
            compile_s, sample_s, _ = _time_model(build_pymc_model(spec).model, args, args.seed)
        row = {
            "n": int(n),
            "pattern_seconds": summarize_s + sample_s,
            "pattern_sampling_seconds": sample_s,
            "summarize_seconds": summarize_s,
            "compile_seconds": compile_s,
            "per_item_seconds": None,
            "per_item_compile_seconds": None,
            "speedup": None,
        }
        if n <= args.per_item_max:
            edges = summary.group_edges
            if edges is None:  # summarize(groups=int) always records its score-group edges
                raise TypeError("the summary of simulated scores has no score-group edges")
            group = np.clip(np.searchsorted(edges, data.score, "right") - 1, 0, edges.size - 2)
            model = _per_item_model(spec, data.labels.astype(np.float64), group)
            c_s, s_s, _ = _time_model(model, args, args.seed)
            row.update(
                per_item_seconds=s_s,
                per_item_compile_seconds=c_s,
                speedup=s_s / row["pattern_seconds"],
            )
        results.append(row)
        print(json.dumps(row), flush=True)
    out = {
        "benchmark": "bayes-speed",
        "settings": {
            "sampler": args.sampler,
            "pattern_model": "hand-written density (numba) under nutpie"
            if args.sampler == "nutpie"
            else "PyMC model under PyMC NUTS",
            "per_item_model": "PyMC model compiled by nutpie (numba)"
            if args.sampler == "nutpie"
            else "PyMC model under PyMC NUTS",
            "mode": args.mode if args.sampler == "pymc" else None,
            "draws": args.draws,
            "tune": args.tune,
            "chains": args.chains,
            "cores": 1,
            "groups": args.groups,
            "annotators": 3,
            "missing": 0.1,
        },
        "results": results,
    }
    write_json(out, args.json_path)
    return 0


def _parse(config: str) -> tuple[str, str, float]:
    from bayescal.errors import ConfigError

    parts = config.split(":")
    if len(parts) != 3:
        raise ConfigError(f"a config is SAMPLER:REFERENCE:TARGET_ACCEPT; got {config!r}.")
    try:
        return parts[0], parts[1], float(parts[2])
    except ValueError:
        raise ConfigError(f"target_accept of {config!r} is not a number.") from None


def _confusion_checks(fit) -> dict:
    import arviz as az

    post = fit.idata.posterior[["confusion"]]
    enabled = az.Numba.numba_flag
    az.Numba.disable_numba()
    try:
        rhat = float(az.rhat(post)["confusion"].max())
        bulk = float(az.ess(post, method="bulk")["confusion"].min())
        tail = float(az.ess(post, method="tail")["confusion"].min())
    finally:
        if enabled:
            az.Numba.enable_numba()
    return {
        "rhat_max_confusion": rhat,
        "ess_bulk_min_confusion": bulk,
        "ess_tail_min_confusion": tail,
    }


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process, every thread (the machine is shared, so
    wall seconds stretch with other work; CPU seconds do much less)."""
    import resource

    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _run_multiclass(args) -> int:
    import warnings

    import numpy as np

    from bayescal.bayes.fit import fit_channels_bayes
    from bayescal.simulate import multiclass_population, simulate_multiclass
    from bayescal.summaries import summarize_multiclass

    configs = [_parse(c) for c in args.configs]
    load_at_start = list(os.getloadavg())
    pop = multiclass_population(args.classes, n_annotators=args.k, missing=args.missing)
    data = simulate_multiclass(args.n, population=pop, random_state=args.seed)
    summary = summarize_multiclass(data)
    results: list[dict] = []
    result = {
        "benchmark": "multiclass-bayes-speed",
        "settings": {
            "n": args.n,
            "classes": args.classes,
            "annotators": args.k,
            "missing": args.missing,
            "pattern_cells": (args.classes + 1) ** args.k,
            "observed_patterns": summary.n_patterns,
            "nonempty_group_pattern_cells": int((summary.pattern_counts.values > 0).sum()),
            "groups": summary.n_groups,
            "draws": args.draws,
            "tune": args.tune,
            "chains": args.chains,
            "cores": args.cores,
            "seed": args.seed,
        },
        "target": {"seconds": 60.0, "rhat_max": 1.01, "ess_bulk_min": 400.0},
        "load_average_at_start": load_at_start,
        "environment": environment(),
        "results": results,
    }
    for sampler, reference, target_accept in configs:
        load_before = list(os.getloadavg())
        t0, cpu0 = time.perf_counter(), _cpu_seconds()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_channels_bayes(
                summary,
                draws=args.draws,
                tune=args.tune,
                chains=args.chains,
                cores=args.cores,
                target_accept=target_accept,
                sampler=sampler,
                reference=reference,
                random_state=args.seed,
            )
        seconds, cpu_seconds = time.perf_counter() - t0, _cpu_seconds() - cpu0
        diag = fit.diagnostics
        checks = _confusion_checks(fit)
        err = np.abs(fit.confusion.values.mean(axis=0) - pop.confusion).max()
        entry = {
            "sampler": sampler,
            "reference": reference,
            "target_accept": target_accept,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "sampling_seconds": diag["sampling_seconds"],
            "load_seconds": diag["load_seconds"],
            **checks,
            "rhat_max_all": diag.get("rhat_max"),
            "divergences": diag.get("divergences"),
            "gradient_evaluations": diag.get("gradient_evaluations"),
            "relabelled_draws": diag["relabelled_draws"],
            "max_abs_error_posterior_mean_vs_truth": float(err),
            "load_average_before": load_before,
        }
        entry["meets_target"] = bool(
            seconds < 60.0
            and checks["rhat_max_confusion"] <= 1.01
            and checks["ess_bulk_min_confusion"] >= 400.0
        )
        results.append(entry)
        print(
            f"{sampler}:{reference}:{target_accept}: {seconds:.1f} s "
            f"(sampling {diag['sampling_seconds']:.1f} s), R-hat "
            f"{checks['rhat_max_confusion']:.4f}, bulk ESS {checks['ess_bulk_min_confusion']:.0f}"
        )
    result["load_average_at_end"] = list(os.getloadavg())
    write_json(result, args.json_path)
    return 0
