"""``bayescal bench weights``: how the shrinkage default of the plug-in IV weights was chosen.

The paper's shrunk plug-in inverse-variance rule lost its formula; bayescal
uses ``alpha = (1 - lam) alpha_IV + lam / K``. This study picks ``lam``:
toy inputs and curves (Sec. 6.1), two annotator panels — the paper's
(FP 0.08/0.13/0.18, FN 0.16/0.11/0.06, similar quality) and a heterogeneous one
(FP 0.05/0.10/0.30, FN 0.05/0.15/0.30, where weights matter) — channels by
score-bin EM on the same sample (reuse), NC-ECE for each ``lam`` on a grid,
error against the population binned ECE. Reported: MAE per (panel, condition,
lam) and, per lam, the worst ratio of its MAE to the best lam's MAE in the
same cell; the recommended ``lam`` minimises that worst ratio.
"""

from __future__ import annotations

import time

import numpy as np

from bayescal.bench._io import environment, mean_se, write_json

PANELS = {
    "paper": ((0.08, 0.13, 0.18), (0.16, 0.11, 0.06)),
    "heterogeneous": ((0.05, 0.10, 0.30), (0.05, 0.15, 0.30)),
}


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument(
        "--lams", type=float, nargs="+", default=[round(x, 2) for x in np.linspace(0, 1, 11)]
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", dest="json_path", default=None)


def run(args) -> int:
    from bayescal import fit_channels, nc_ece, summarize
    from bayescal.errors import ConfigError
    from bayescal.simulate import TOY_CONDITIONS, simulate_toy, toy_population_binned_ece

    if args.reps < 2:
        raise ConfigError("--reps must be at least 2.")
    t0 = time.perf_counter()
    edges = np.linspace(0, 1, 11)
    rows = []
    for panel, (fp, fn) in PANELS.items():
        for ci, cond in enumerate(TOY_CONDITIONS):
            pop = toy_population_binned_ece(cond, edges)
            errs = np.zeros((args.reps, len(args.lams) + 1))
            for r in range(args.reps):
                d = simulate_toy(
                    args.n, cond, random_state=args.seed + 10_000 * ci + r, fp=fp, fn=fn
                )
                s = summarize(d, groups=5, bins=edges)
                fit = fit_channels(s, "score_bin_em", fallback="fixed", random_state=r)
                for li, lam in enumerate(args.lams):
                    errs[r, li] = (
                        nc_ece(s, fit, weights="shrunk_inverse_variance", lam=lam).value - pop
                    )
                errs[r, -1] = nc_ece(s, fit, weights="equal").value - pop
            mae = np.abs(errs).mean(axis=0)
            for li, lam in enumerate(args.lams):
                rows.append(
                    {
                        "panel": panel,
                        "condition": cond,
                        "lam": lam,
                        "mae": float(mae[li]),
                        "mae_se": mean_se(np.abs(errs[:, li])),
                    }
                )
            rows.append(
                {
                    "panel": panel,
                    "condition": cond,
                    "lam": "equal_weights",
                    "mae": float(mae[-1]),
                    "mae_se": mean_se(np.abs(errs[:, -1])),
                }
            )
    worst = {}
    for lam in args.lams:
        ratios = []
        for panel in PANELS:
            for cond in TOY_CONDITIONS:
                cell = [
                    x
                    for x in rows
                    if x["panel"] == panel
                    and x["condition"] == cond
                    and x["lam"] != "equal_weights"
                ]
                best = min(x["mae"] for x in cell)
                ratios.append(next(x["mae"] for x in cell if x["lam"] == lam) / best)
        worst[str(lam)] = max(ratios)
    recommended = min(args.lams, key=lambda lam: worst[str(lam)])
    write_json(
        {
            "n": args.n,
            "reps": args.reps,
            "results": rows,
            "worst_ratio_to_best": worst,
            "recommended_lam": recommended,
            "seconds": time.perf_counter() - t0,
            "environment": environment(),
        },
        args.json_path,
    )
    return 0
