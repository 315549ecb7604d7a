"""``bayescal bench subgroups``: per-subgroup NC-ECE coverage, and what shared channels cost.

Populations (:func:`bayescal.simulate.multiclass.multiclass_population`, three annotators,
C = 2 and C = 3, the same profiles in every subgroup) for three subgroups of 1000, 600
and 200 items (``--sizes``) in three scenarios:

``calibration``
    Subgroups differ in calibration only (temperatures 1.0, 1.6, 2.4), channels shared.
``channels``
    Same calibration (temperature 1.6); the 600- and 200-item subgroups' readers are
    noisier (each confusion row mixed with the uniform row, weights 0.25 and 0.45;
    ``--noise`` sets the three weights, for example ``0.3 0.3 0`` for a small subgroup
    with *better* readers).
``both``
    The temperatures of ``calibration`` and the channels of ``channels``.

Per repetition (seeds fixed) every channel choice of
:func:`bayescal.metrics.subgroups.subgroup_nc_ece` is run on the same data
(``--channels``; default ``pooled`` and ``shared``) with ``--n-bootstrap`` replicates of
the stratified bootstrap (the point / bootstrap path, no sampler); the truth of each
subgroup is its population's exact binned ECE
(:func:`~bayescal.simulate.multiclass.subgroup_truth`, the audit's headline metric:
binary NC-ECE for C = 2, top-label for C = 3). JSON: per (C, scenario, channels,
subgroup) the interval's coverage with its Monte Carlo SE, misses above / below, mean
width, the estimate's bias and RMSE; per (C, scenario, channels) the family-wise
rejection rate of "calibrated in every subgroup" (a size only where every subgroup is
calibrated) and seconds.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from bayescal.bench._io import write_run

SCENARIOS = ("calibration", "channels", "both")
TEMPERATURES = (1.0, 1.6, 2.4)
NOISE = (0.0, 0.25, 0.45)


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument(
        "--channels",
        nargs="+",
        choices=["pooled", "shared", "per-subgroup"],
        default=["pooled", "shared"],
    )
    parser.add_argument("--sizes", type=int, nargs=3, default=[1000, 600, 200])
    parser.add_argument(
        "--noise",
        type=float,
        nargs=3,
        default=list(NOISE),
        help="uniform-row mixing weight of each subgroup's readers (channels scenarios)",
    )
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument("--prob", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--json", dest="json_path", default=None)


def _populations(c: int, scenario: str, noise=NOISE):
    from bayescal.simulate.multiclass import default_confusions, multiclass_population

    base = default_confusions(3, c, random_state=7)
    out = {}
    for g, name in enumerate(("A", "B", "C")):
        temp = TEMPERATURES[g] if scenario in ("calibration", "both") else TEMPERATURES[1]
        w = noise[g] if scenario in ("channels", "both") else 0.0
        conf = (1 - w) * base + w / c
        out[name] = multiclass_population(c, conf, temperature=temp, random_state=0)
    return out


def _cell(results, truths, prob, seconds):
    names = list(truths)
    rows = []
    for g, name in enumerate(names):
        est = np.array([r.subgroups[g].estimate for r in results])
        lo = np.array([r.subgroups[g].lo for r in results])
        hi = np.array([r.subgroups[g].hi for r in results])
        t = truths[name]
        cover = (lo <= t) & (t <= hi)
        cov = float(cover.mean())
        rows.append(
            {
                "subgroup": name,
                "n_items": results[0].subgroups[g].n_items,
                "truth": t,
                "coverage": cov,
                "coverage_mc_se": float(np.sqrt(cov * (1 - cov) / len(results))),
                "miss_above": float((lo > t).mean()),
                "miss_below": float((hi < t).mean()),
                "mean_width": float((hi - lo).mean()),
                "bias": float(est.mean() - t),
                "rmse": float(np.sqrt(((est - t) ** 2).mean())),
            }
        )
    level = 1.0 - prob
    rejected = np.array([r.p_all <= level for r in results])
    return {
        "subgroups": rows,
        "family_rejection_rate": float(rejected.mean()),
        "all_calibrated": bool(all(v < 1e-12 for v in truths.values())),
        "mean_kappa": None
        if results[0].kappa is None
        else float(np.mean([r.kappa for r in results])),
        "seconds": seconds,
    }


def run(args) -> int:
    from bayescal.metrics.subgroups import subgroup_nc_ece
    from bayescal.simulate.multiclass import simulate_subgroups, subgroup_truth

    started = time.perf_counter()
    load_start = os.getloadavg()
    sizes = dict(zip(("A", "B", "C"), args.sizes))
    cells = []
    for c in args.classes:
        metric = "binary" if c == 2 else "top_label"
        for scenario in args.scenarios:
            pops = _populations(c, scenario, tuple(args.noise))
            truths = {g: subgroup_truth(p, metric) for g, p in pops.items()}
            results: dict[str, list] = {ch: [] for ch in args.channels}
            seconds = dict.fromkeys(args.channels, 0.0)
            for rep in range(args.reps):
                seed = args.seed + 1000 * c + 100 * SCENARIOS.index(scenario) + rep
                data = simulate_subgroups(pops, sizes, random_state=seed)
                for ch in args.channels:
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        results[ch].append(
                            subgroup_nc_ece(
                                data,
                                channels=ch,
                                prob=args.prob,
                                n_bootstrap=args.n_bootstrap,
                                random_state=seed,
                            )
                        )
                    seconds[ch] += time.perf_counter() - t0
            for ch in args.channels:
                cells.append(
                    {
                        "n_classes": c,
                        "scenario": scenario,
                        "channels": ch,
                        "metric": metric,
                        **_cell(results[ch], truths, args.prob, seconds[ch]),
                    }
                )
    protocol = {
        "reps": args.reps,
        "sizes": sizes,
        "classes": args.classes,
        "scenarios": args.scenarios,
        "channels": args.channels,
        "temperatures": TEMPERATURES,
        "noise_mix": list(args.noise),
        "n_bootstrap": args.n_bootstrap,
        "prob": args.prob,
        "seed": args.seed,
        "bins": 10,
        "target_coverage": [0.85, 0.95],
        "path": "point / bootstrap (EM refitted per replicate), no sampler",
    }
    write_run(protocol, cells, started=started, load_start=load_start, path=args.json_path)
    return 0
