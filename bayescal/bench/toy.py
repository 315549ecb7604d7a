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

METHODS = ("clean", "soft_vote", "majority_vote", "nc_given", "nc_em")
MODES = ("split", "reuse", "crossfit")
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


def one_rep(condition: str, n: int, seed: int, folds: int = 5) -> dict:
    """All methods and modes on one simulated dataset.

    Uses the same numeric kernels as the public API (pattern encoding, EM on
    pattern counts, corrected pattern targets) on plain arrays: 3000 datasets
    per study make labelled-object overhead the dominant cost otherwise.
    ``tests/bench/test_toy.py`` checks one repetition against the public API.
    """
    from bayescal.channels.em import FALLBACK, em_fit_counts
    from bayescal.errors import FitError
    from bayescal.metrics.binned import (
        corrected_pattern_targets,
        majority_vote_targets,
        soft_vote_targets,
    )
    from bayescal.simulate import TOY_FN, TOY_FP, simulate_toy
    from bayescal.summaries.partition import assign
    from bayescal.summaries.patterns import encode_patterns, pattern_states

    data = simulate_toy(n, condition, random_state=seed)
    z, y = data.score, data.truth.astype(np.float64)
    k, n_groups, n_bins = 3, 5, 10
    P = 3**k
    pat = encode_patterns(data.labels)
    g = assign(z, np.linspace(0, 1, n_groups + 1))
    b = assign(z, np.linspace(0, 1, n_bins + 1))
    states = pattern_states(k)
    mid = (np.arange(n_groups) + 0.5) / n_groups
    known_a, known_b = np.array(TOY_FP)[None], 1 - np.array(TOY_FN)[None]
    w_eq = np.full((1, k), 1.0 / k)

    def counts(sel):
        gc = np.bincount(g[sel] * P + pat[sel], minlength=n_groups * P).reshape(n_groups, P)
        bc = np.bincount(b[sel] * P + pat[sel], minlength=n_bins * P).reshape(n_bins, P)
        zs = np.bincount(b[sel], weights=z[sel], minlength=n_bins)
        ys = np.bincount(b[sel], weights=y[sel], minlength=n_bins)
        return gc, bc, zs, ys

    failures = {"split": 0, "reuse": 0, "crossfit": 0}

    def em(gc, mode):
        nonempty = gc.sum(axis=1) > 0
        try:
            if not nonempty.all():
                raise FitError("empty group")
            r = em_fit_counts(gc, k=k, group_mid=mid, random_state=seed)
            return r["a"][None], r["b"][None]
        except FitError:
            failures[mode] += 1
            return np.full((1, k), FALLBACK["a"]), np.full((1, k), FALLBACK["b"])

    def moments(bc, zs, nn, targets):
        return (np.atleast_2d(targets) @ bc.T - zs) / nn

    soft_t, maj_t = soft_vote_targets(states), majority_vote_targets(states)
    idx = np.arange(n)
    half = n // 2
    parts = {"first": idx[:half], "second": idx[half:], "all": idx}
    c = {name: counts(sel) for name, sel in parts.items()}
    fold_idx = np.array_split(idx, folds)
    fold_c = [counts(sel) for sel in fold_idx]
    out = {}
    for mode, key in (("split", "second"), ("reuse", "all"), ("crossfit", "all")):
        gc, bc, zs, ys = c[key]
        nn = bc.sum()
        out[("clean", mode)] = float(np.abs(ys - zs).sum() / nn)
        out[("soft_vote", mode)] = float(np.abs(moments(bc, zs, nn, soft_t)).sum())
        out[("majority_vote", mode)] = float(np.abs(moments(bc, zs, nn, maj_t)).sum())
        u_known = corrected_pattern_targets(states, known_a, known_b, w_eq)
        out[("nc_given", mode)] = float(np.abs(moments(bc, zs, nn, u_known)).sum())
    a_s, b_s = em(c["first"][0], "split")
    gc, bc, zs, _ = c["second"]
    out[("nc_em", "split")] = float(
        np.abs(moments(bc, zs, bc.sum(), corrected_pattern_targets(states, a_s, b_s, w_eq))).sum()
    )
    a_r, b_r = em(c["all"][0], "reuse")
    gc, bc, zs, _ = c["all"]
    out[("nc_em", "reuse")] = float(
        np.abs(moments(bc, zs, n, corrected_pattern_targets(states, a_r, b_r, w_eq))).sum()
    )
    pooled = np.zeros((1, n_bins))
    for gcf, bcf, zsf, _ in fold_c:
        a_f, b_f = em(c["all"][0] - gcf, "crossfit")
        # moments of the fold, weighted n_k / n, i.e. summed over the fold and divided by n
        pooled += moments(bcf, zsf, n, corrected_pattern_targets(states, a_f, b_f, w_eq))
    out[("nc_em", "crossfit")] = float(np.abs(pooled).sum())
    return {"ece": out, "failures": failures}


def _cell(args):
    condition, n, reps, seed, folds = args
    rows = [one_rep(condition, n, seed + r, folds) for r in range(reps)]
    return condition, n, rows


def run(args) -> int:
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path

    from bayescal.bench._io import environment, write_json
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
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            done = list(pool.map(_cell, cells))
    else:
        done = [_cell(c) for c in cells]
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
                        "mae_se": float(np.abs(err).std(ddof=1) / np.sqrt(err.size)),
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
