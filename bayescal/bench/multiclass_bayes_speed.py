"""``bayescal bench multiclass-bayes-speed``: the multiclass Dawid–Skene posterior, timed.

Issue 14's target: 10,000 items, C = 10 classes, K = 3 annotators (1,331 pattern
cells) sampled with 2 chains x 1,000 draws in under 60 s on this machine, with
R-hat <= 1.01 and bulk ESS >= 400 for every confusion entry.

One dataset (:func:`bayescal.simulate.simulate_multiclass`, default confusions,
``--missing`` answers missing at random; generation excluded from timing) is fitted
by :func:`bayescal.bayes.multiclass_fit.fit_multiclass_channels_bayes` under each
configuration asked for (``--configs``, each ``sampler:reference:target_accept``):

- ``nutpie:largest:0.8`` (the default of the library): nutpie on the hand-written
  density, log-ratio coordinates against each simplex's largest starting entry;
- ``nutpie:last:0.8``: the same sampler on log-ratios against the last class (the
  textbook additive log-ratio), to show what the reference choice buys;
- ``nutpie:largest:0.9``: the binary model's target_accept;
- ``pymc:largest:0.8``: PyMC's NUTS on the PyMC model (the reference backend;
  compiles a PyTensor graph in the process).

``seconds`` is the whole fit call (summary given; EM start, sampling, checks and
the log-likelihood group), ``sampling_seconds`` the sampler alone. Diagnostics are
over every confusion entry: the worst rank-normalised split R-hat and the smallest
bulk and tail ESS (ArviZ), divergences and gradient evaluations after tuning. The machine has 2
cores shared with other work; the load average is recorded before and after.
"""

from __future__ import annotations

import os
import time

from bayescal.bayes.multiclass_fit import fit_multiclass_channels_bayes
from bayescal.bench._io import environment, write_json
from bayescal.errors import ConfigError
from bayescal.simulate import multiclass_population, simulate_multiclass
from bayescal.summaries import summarize_multiclass

DEFAULT_CONFIGS = ("nutpie:largest:0.8", "nutpie:last:0.8", "nutpie:largest:0.9")


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=10_000, help="items (default 10000)")
    parser.add_argument("--classes", type=int, default=10, help="classes (default 10)")
    parser.add_argument("--k", type=int, default=3, help="annotators (default 3)")
    parser.add_argument("--missing", type=float, default=0.1, help="missing-answer rate")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--cores", type=int, default=2, help="chains run in parallel")
    parser.add_argument(
        "--configs",
        nargs="+",
        default=list(DEFAULT_CONFIGS),
        metavar="SAMPLER:REFERENCE:TARGET_ACCEPT",
        help="configurations to time (default: %(default)s); add pymc:largest:0.8 for PyMC",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def _parse(config: str):

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


def run(args) -> int:
    import warnings

    import numpy as np

    configs = [_parse(c) for c in args.configs]
    load_at_start = list(os.getloadavg())
    pop = multiclass_population(args.classes, n_annotators=args.k, missing=args.missing)
    data = simulate_multiclass(args.n, population=pop, random_state=args.seed)
    summary = summarize_multiclass(data)
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
        "results": [],
    }
    for sampler, reference, target_accept in configs:
        load_before = list(os.getloadavg())
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_multiclass_channels_bayes(
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
        seconds = time.perf_counter() - t0
        diag = fit.diagnostics
        checks = _confusion_checks(fit)
        err = np.abs(fit.confusion.values.mean(axis=0) - pop.confusion).max()
        entry = {
            "sampler": sampler,
            "reference": reference,
            "target_accept": target_accept,
            "seconds": seconds,
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
        result["results"].append(entry)
        print(
            f"{sampler}:{reference}:{target_accept}: {seconds:.1f} s "
            f"(sampling {diag['sampling_seconds']:.1f} s), R-hat "
            f"{checks['rhat_max_confusion']:.4f}, bulk ESS {checks['ess_bulk_min_confusion']:.0f}"
        )
    result["load_average_at_end"] = list(os.getloadavg())
    write_json(result, args.json_path)
    return 0
