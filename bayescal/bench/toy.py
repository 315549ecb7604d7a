"""``bayescal bench toy``: the toy study of Section 6.1 / Appendix G.2.

Protocol: X ~ 0.5 N(-1, 1) + 0.5 N(1, 1), Z = sigmoid(0.3 - X), three
calibration curves (calibrated, shifted, nonlinear), three annotators with
FP (0.08, 0.13, 0.18) and FN (0.16, 0.11, 0.06); N in {500, ..., 8000}; 200
repetitions; five equal-width channel groups and ten equal-width evaluation
bins fixed in advance. Methods: clean-label ECE, soft vote, majority vote,
NC-ECE with the given rates, and NC-ECE with rates from joint score-bin EM
(equal weights, the paper's fallback on failure, counted), each under

- ``split``: the first half fits channels, the second half evaluates every criterion;
- ``reuse``: everything on the full sample;
- ``crossfit``: 5 contiguous folds, channels fitted without the fold, signed bin
  moments pooled with weights n_k / n before absolute values.

Criteria that need no channels are the same under reuse and crossfit (the
pooled signed moments of a fixed target equal the full-sample ones).

Errors are against the population ECE E|m(Z) - Z| (the paper's reference);
the JSON also gives the population *binned* ECE for the ten bins.
"""

from __future__ import annotations

import time

import numpy as np

from bayescal.bench._io import environment, map_jobs, mean_se, write_json
from bayescal.metrics.toy_study import TOY_METHODS as METHODS
from bayescal.metrics.toy_study import TOY_MODES as MODES
from bayescal.metrics.toy_study import toy_replicate

DEFAULT_SIZES = (500, 1000, 2000, 4000, 8000)


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--conditions", nargs="+", default=["calibrated", "shifted", "nonlinear"])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--figure", default=None, help="PNG path (default: next to the JSON)")


def _cell(args):
    condition, n, reps, seed, folds = args
    rows = [toy_replicate(condition, n, seed + r, folds) for r in range(reps)]
    return condition, n, rows


def run(args) -> int:
    from pathlib import Path

    from bayescal.errors import ConfigError
    from bayescal.simulate import TOY_CONDITIONS, toy_population_binned_ece, toy_population_ece

    if args.reps < 2:
        raise ConfigError("--reps must be at least 2 (a Monte Carlo standard error needs two).")
    for c in args.conditions:
        if c not in TOY_CONDITIONS:
            raise ConfigError(f"unknown condition {c!r}; choose from {TOY_CONDITIONS}.")
    if any(n < 4 * args.folds for n in args.sizes):
        raise ConfigError("every size must allow the folds and the split to have items.")
    t0 = time.perf_counter()
    # Seeds: one block of reps per (condition, size), disjoint across cells.
    cells = [
        (c, n, args.reps, args.seed + 1_000_000 * ci + 10_000 * ni, args.folds)
        for ci, c in enumerate(args.conditions)
        for ni, n in enumerate(args.sizes)
    ]
    done = map_jobs(_cell, cells, args.jobs)
    pop = {c: toy_population_ece(c) for c in args.conditions}
    pop_binned = {c: toy_population_binned_ece(c, np.linspace(0, 1, 11)) for c in args.conditions}
    results = []
    for condition, n, rows in done:
        for method in METHODS:
            for mode in MODES:
                est = np.array([r["ece"][(method, mode)] for r in rows])
                err = est - pop[condition]
                fails = sum(r["failures"][mode] for r in rows) if method == "nc_em" else 0
                results.append(
                    {
                        "condition": condition,
                        "n": n,
                        "method": method,
                        "mode": mode,
                        "mae": float(np.abs(err).mean()),
                        "bias": float(err.mean()),
                        "rmse": float(np.sqrt((err**2).mean())),
                        "mae_se": mean_se(np.abs(err)),
                        "sd": float(est.std(ddof=1)),
                        "failures": int(fails),
                        "reps": int(err.size),
                    }
                )
    seconds = time.perf_counter() - t0
    out = {
        "protocol": {
            "reps": args.reps,
            "sizes": args.sizes,
            "conditions": args.conditions,
            "folds": args.folds,
            "channel_groups": 5,
            "evaluation_bins": 10,
            "seed": args.seed,
            "reference": "population ECE E|m(Z) - Z|",
        },
        "results": results,
        "population_ece": pop,
        "population_binned_ece": pop_binned,
        "seconds": seconds,
        "environment": environment(),
    }
    figure = args.figure
    if figure is None and args.json_path:
        figure = str(Path(args.json_path).with_suffix(".png"))
    if figure:
        plot_toy(results, args.conditions, figure)
        out["figure"] = figure
    write_json(out, args.json_path)
    return 0


def plot_toy(results, conditions, path) -> None:
    """MAE vs N with Monte Carlo error bars, one panel per condition and mode (cf. Figure 1)."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {
        "clean": "Clean-label ECE",
        "soft_vote": "Soft vote",
        "majority_vote": "Majority vote",
        "nc_given": "NC-ECE (given rates)",
        "nc_em": "NC-ECE (EM rates)",
    }
    fig, axes = plt.subplots(
        len(conditions),
        len(MODES),
        figsize=(4.2 * len(MODES), 3.2 * len(conditions)),
        squeeze=False,
        sharex=True,
    )
    for i, c in enumerate(conditions):
        for j, mode in enumerate(MODES):
            ax = axes[i, j]
            for method in METHODS:
                rows = sorted(
                    (
                        r
                        for r in results
                        if r["condition"] == c and r["mode"] == mode and r["method"] == method
                    ),
                    key=lambda r: r["n"],
                )
                ax.errorbar(
                    [r["n"] for r in rows],
                    [r["mae"] for r in rows],
                    yerr=[r["mae_se"] for r in rows],
                    marker="o",
                    ms=3,
                    capsize=2,
                    label=labels[method],
                )
            ax.set_xscale("log")
            ax.set_title(f"{c} / {mode}", fontsize=10)
            ax.set_xlabel("N")
            ax.set_ylabel("MAE vs population ECE")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
