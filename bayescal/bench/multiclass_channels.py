"""``bayescal bench multiclass-channels``: multiclass Dawid–Skene, bayescal vs crowd-kit.

Simulates n items, K annotators and C classes (:func:`bayescal.simulate.simulate_multiclass`,
default diagonally dominant confusions; generation excluded from timing), then
times bayescal (container from numpy arrays + one-pass summary, including the
calibration bin cells, + pooled multiclass EM with 10 starts) and crowd-kit's
``DawidSkene`` on the same answers in its native long format.

Timings: the first run of each side is reported as ``cold`` (first calls,
caches); ``warm`` is the best of ``--repeats`` further runs. ``speedup`` is
crowd-kit's warm time over bayescal's warm time (``speedup_cold`` compares the
cold runs).

Convergence: crowd-kit stops when its per-answer ELBO rises by less than
``tol``; that ELBO is not monotone over its iterations, so its stopping rule can
end far from the maximum (see ``bayescal bench channels``). As in the binary
benchmark, the timed crowd-kit runs disable the rule (``tol=-inf``) and take
``--crowdkit-iter`` iterations, and the JSON records the last ELBO change to
show where it stopped; crowd-kit's default settings (``tol=1e-5``, at most 100
iterations) are run once and reported too, with ``speedup_vs_crowdkit_default``.
Its latent classes are anchored to the labels by its majority-vote start; our
orientation rule (the assignment that maximises annotator 0's diagonal) is
applied to its result before comparing. ``max_abs_diff_vs_crowdkit`` is the
largest difference between the two sides' confusion entries.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from bayescal.bench._io import environment, write_json
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.orientation import dominant_diagonal_permutation, relabel_classes
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError
from bayescal.simulate import multiclass_population, simulate_multiclass
from bayescal.summaries import summarize_multiclass


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=100_000, help="number of items (default 100000)")
    parser.add_argument("--k", type=int, default=3, help="number of annotators (default 3)")
    parser.add_argument("--classes", type=int, default=4, help="number of classes (default 4)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--missing", type=float, default=0.0, help="probability an answer is missing"
    )
    parser.add_argument("--peer", choices=["crowdkit", "none"], default="crowdkit")
    parser.add_argument(
        "--crowdkit-iter", type=int, default=100, help="iterations of the timed crowd-kit runs"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="warm runs per side after the cold one (default 3)"
    )
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def _ours(probs, labels, seed):

    t0 = time.perf_counter()
    data = MulticlassAnnotations.from_arrays(probs, labels)
    t1 = time.perf_counter()
    summary = summarize_multiclass(data, groups="all")
    t2 = time.perf_counter()
    fit = dawid_skene_em(summary, prevalence="grouped", random_state=seed)
    t3 = time.perf_counter()
    return {
        "seconds": t3 - t0,
        "breakdown": {"container": t1 - t0, "summarize": t2 - t1, "em": t3 - t2},
        "fit": fit,
        "n_patterns": summary.n_patterns,
    }


def _long_frame(labels):
    import pandas as pd

    rows, cols = np.nonzero(~np.isnan(labels))
    return pd.DataFrame({"task": rows, "worker": cols, "label": labels[rows, cols].astype(int)})


def _crowdkit(frame, k, c, *, tol, n_iter):
    from crowdkit.aggregation import DawidSkene

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # crowd-kit calls pandas APIs that pandas 3 deprecates; those warnings are about the
        # peer, not about this comparison.
        warnings.filterwarnings("ignore", module="crowdkit")
        model = DawidSkene(n_iter=n_iter, tol=tol).fit(frame)
    seconds = time.perf_counter() - t0
    err = model.errors_  # rows (worker, observed label), columns true label: P(observed | true)
    t = np.zeros((k, c, c))
    for (worker, answered), row in err.iterrows():
        for true, value in row.items():
            t[int(worker), int(true), int(answered)] = value
    prior = np.array([[float(model.priors_.get(y, 0.0)) for y in range(c)]])
    t, prior = relabel_classes(t, prior, dominant_diagonal_permutation(t[0]))
    hist = model.loss_history_
    return {
        "seconds": seconds,
        "confusion": t,
        "prevalence": prior[0],
        "iterations": len(hist),
        "last_elbo_change": abs(hist[-1] - hist[-2]) if len(hist) > 1 else None,
    }


def _timed(run, repeats):
    """Cold run, then the best of ``repeats`` warm runs; returns (cold, best, all seconds)."""
    cold = run()
    warm = [run() for _ in range(repeats)]
    best = min(warm, key=lambda r: r["seconds"]) if warm else cold
    return cold, best, [cold["seconds"]] + [r["seconds"] for r in warm]


def run(args) -> int:

    if args.k < 3:
        raise ConfigError(f"--k must be at least 3 (identification, SPEC §3); got {args.k}.")
    if args.classes < 2:
        raise ConfigError(f"--classes must be at least 2; got {args.classes}.")
    if args.n < 10:
        raise ConfigError(f"--n must be at least 10; got {args.n}.")
    if args.repeats < 0 or args.crowdkit_iter < 1:
        raise ConfigError("--repeats must be >= 0 and --crowdkit-iter >= 1.")
    load_at_start = list(os.getloadavg())
    t0 = time.perf_counter()
    pop = multiclass_population(
        args.classes, n_annotators=args.k, missing=args.missing, random_state=args.seed
    )
    data = simulate_multiclass(args.n, population=pop, random_state=args.seed + 1)
    probs, labels = data.probs, data.labels
    del data
    generate_seconds = time.perf_counter() - t0

    cold, best, ours_all = _timed(lambda: _ours(probs, labels, args.seed), args.repeats)
    t_hat = best["fit"].confusion.values[0]
    prev_hat = best["fit"].class_prevalence.values[0, 0]
    result = {
        "n": args.n,
        "K": args.k,
        "C": args.classes,
        "seed": args.seed,
        "missing": args.missing,
        "n_patterns": best["n_patterns"],
        "generate_seconds": generate_seconds,
        "bayescal_seconds": best["seconds"],
        "bayescal_cold_seconds": cold["seconds"],
        "bayescal_all_seconds": ours_all,
        "bayescal_breakdown": best["breakdown"],
        "bayescal_em_iterations": best["fit"].diagnostics["iterations"],
        "bayescal_loglik": best["fit"].loglik,
        "true_confusion": pop.confusion,
        "bayescal_confusion": t_hat,
        "max_abs_error_vs_truth": float(np.abs(t_hat - pop.confusion).max()),
        "prevalence_max_abs_error_vs_truth": float(np.abs(prev_hat - pop.prevalence).max()),
        "crowdkit_seconds": None,
        "crowdkit_cold_seconds": None,
        "speedup": None,
        "speedup_cold": None,
        "max_abs_diff_vs_crowdkit": None,
        "crowdkit_settings": None,
        "crowdkit_default_settings": None,
        "speedup_vs_crowdkit_default": None,
        "load_average_at_start": load_at_start,
        "environment": environment(),
    }
    if args.peer == "crowdkit":
        frame = _long_frame(labels)

        def report(r):
            return {
                "seconds": r["seconds"],
                "iterations_used": r["iterations"],
                "last_elbo_change": r["last_elbo_change"],
                "max_abs_diff_vs_bayescal": float(np.abs(r["confusion"] - t_hat).max()),
                "prevalence_max_abs_diff_vs_bayescal": float(
                    np.abs(r["prevalence"] - prev_hat).max()
                ),
                "max_abs_error_vs_truth": float(np.abs(r["confusion"] - pop.confusion).max()),
            }

        ck_cold, ck_best, ck_all = _timed(
            lambda: _crowdkit(frame, args.k, args.classes, tol=-np.inf, n_iter=args.crowdkit_iter),
            args.repeats,
        )
        default = _crowdkit(frame, args.k, args.classes, tol=1e-5, n_iter=100)
        result.update(
            crowdkit_seconds=ck_best["seconds"],
            crowdkit_cold_seconds=ck_cold["seconds"],
            crowdkit_all_seconds=ck_all,
            speedup=ck_best["seconds"] / best["seconds"],
            speedup_cold=ck_cold["seconds"] / cold["seconds"],
            max_abs_diff_vs_crowdkit=report(ck_best)["max_abs_diff_vs_bayescal"],
            crowdkit_max_abs_error_vs_truth=report(ck_best)["max_abs_error_vs_truth"],
            crowdkit_settings={
                "tol": "-inf (rule disabled)",
                "n_iter": args.crowdkit_iter,
                **report(ck_best),
            },
            crowdkit_default_settings={"tol": 1e-5, "n_iter": 100, **report(default)},
            speedup_vs_crowdkit_default=default["seconds"] / best["seconds"],
        )
    result["load_average_at_end"] = list(os.getloadavg())
    write_json(result, args.json_path)
    return 0
