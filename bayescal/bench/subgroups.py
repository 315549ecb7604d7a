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

``--design four`` replaces the three subgroups by a design the estimator was not tuned
on: four annotators (K = 4) and four subgroups of 800, 500, 300 and 200 items
(``--sizes``) with temperatures 1.0, 1.6, 0.6 (the reversed miscalibration: an
under-confident model) and 1.3, readers mixed with the uniform row by 0, 0.25, 0 and
0.4 (``--noise``; scenario ``both``: calibration and channels differ; ``calibration``:
channels shared; ``channels``: temperature 1.6 everywhere).

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

import json
import os
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bayescal.bench._io import interval_coverage, write_run
from bayescal.errors import ConfigError

SCENARIOS = ("calibration", "channels", "both")
TEMPERATURES = (1.0, 1.6, 2.4)
NOISE = (0.0, 0.25, 0.45)


@dataclass(frozen=True)
class Design:
    """Subgroup names, default sizes, temperatures, reader noise and panel size."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    temperatures: tuple[float, ...]
    noise: tuple[float, ...]
    n_annotators: int


DESIGNS = {
    "three": Design(("A", "B", "C"), (1000, 600, 200), TEMPERATURES, NOISE, 3),
    "four": Design(
        ("A", "B", "C", "D"), (800, 500, 300, 200), (1.0, 1.6, 0.6, 1.3), (0.0, 0.25, 0.0, 0.4), 4
    ),
}


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
    parser.add_argument("--design", choices=list(DESIGNS), default="three")
    parser.add_argument("--sizes", type=int, nargs="+", default=None, help="one per subgroup")
    parser.add_argument(
        "--noise",
        type=float,
        nargs="+",
        default=None,
        help="uniform-row mixing weight of each subgroup's readers (channels scenarios)",
    )
    parser.add_argument("--n-bootstrap", type=int, default=200)
    parser.add_argument("--prob", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--json", dest="json_path", default=None)


def _populations(c: int, scenario: str, noise=NOISE, design: Design = DESIGNS["three"]):
    from bayescal.simulate.multiclass import default_confusions, multiclass_population

    base = default_confusions(design.n_annotators, c, random_state=7)
    out = {}
    for g, name in enumerate(design.names):
        temp = design.temperatures[g] if scenario in ("calibration", "both") else 1.6
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
        cov = interval_coverage(lo, hi, t)
        rows.append(
            {
                "subgroup": name,
                "n_items": results[0].subgroups[g].n_items,
                "truth": t,
                "coverage": cov["coverage"],
                "coverage_mc_se": cov["coverage_se"],
                # this bench's misses name where the interval lies: above the truth (lo > t)
                "miss_above": cov["miss_below"],
                "miss_below": cov["miss_above"],
                "mean_width": cov["mean_width"],
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


def _cells(c, scenario, metric, results, truths, prob, seconds) -> list[dict]:
    return [
        {
            "n_classes": c,
            "scenario": scenario,
            "channels": ch,
            "metric": metric,
            **_cell(results[ch], truths, prob, seconds[ch]),
        }
        for ch in results
    ]


def run(args) -> int:
    from bayescal.metrics.subgroups import subgroup_nc_ece
    from bayescal.simulate.multiclass import simulate_subgroups, subgroup_truth

    started = time.perf_counter()
    cpu0 = time.process_time()
    load_start = os.getloadavg()
    design = DESIGNS[args.design]
    noise = tuple(design.noise if args.noise is None else args.noise)
    size_list = list(design.sizes if args.sizes is None else args.sizes)
    if len(size_list) != len(design.names) or len(noise) != len(design.names):
        raise ConfigError(
            f"--design {args.design} has {len(design.names)} subgroups: give as many "
            f"--sizes and --noise values; got {len(size_list)} and {len(noise)}."
        )
    sizes = dict(zip(design.names, size_list))

    def protocol(complete: bool = True) -> dict:
        return {
            "reps": args.reps,
            "sizes": sizes,
            "classes": args.classes,
            "scenarios": args.scenarios,
            "channels": args.channels,
            "design": args.design,
            "n_annotators": design.n_annotators,
            "temperatures": list(design.temperatures),
            "noise_mix": list(noise),
            "n_bootstrap": args.n_bootstrap,
            "prob": args.prob,
            "seed": args.seed,
            "bins": 10,
            "target_coverage": [0.85, 0.95],
            "path": "point / bootstrap (EM refitted per replicate), no sampler",
            "complete": complete,
        }

    cells: list[dict] = []
    for c in args.classes:
        metric = "binary" if c == 2 else "top_label"
        for scenario in args.scenarios:
            pops = _populations(c, scenario, noise, design)
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
                print(
                    f"bench subgroups: C = {c} {scenario} rep {rep + 1}/{args.reps} "
                    f"({time.perf_counter() - started:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                if args.json_path is not None and (rep + 1) % 10 == 0:
                    # a long run keeps what it has: finished cells and the current one so far
                    now = _cells(c, scenario, metric, results, truths, args.prob, seconds)
                    partial = {
                        "protocol": {**protocol(complete=False), "reps_done": rep + 1},
                        "cells": cells + now,
                        "cpu_seconds": time.process_time() - cpu0,
                    }
                    Path(str(args.json_path) + ".partial").write_text(
                        json.dumps(partial, indent=1, default=float)
                    )
            cells.extend(_cells(c, scenario, metric, results, truths, args.prob, seconds))
    done = {**protocol(), "cpu_seconds": time.process_time() - cpu0}
    write_run(done, cells, started=started, load_start=load_start, path=args.json_path)
    return 0
