"""``bayescal bench multiclass-evidence``: how often the noise-or-ambiguity check is right.

Datasets drawn under the noise model (:func:`bayescal.simulate.simulate_multiclass`,
default confusions) and under ambiguity
(:func:`bayescal.simulate.ambiguous.simulate_ambiguous_multiclass`, item answer
distributions ``Dirichlet(concentration * T[y])``, intra-item correlation
``1 / (concentration + 1)``), with few (``--k`` 3) and many (20) answers per item.
Each dataset gets multiclass EM channels and
:func:`bayescal.metrics.noise_or_ambiguity.noise_or_ambiguity` (parametric bootstrap,
``--replicates`` replicated sets, level 0.01). Reported per cell: the share of
datasets called "ambiguity" (the false-alarm rate under noise, the power under
ambiguity), called "misfit", and the mean observed / replicated dispersion.
"""

from __future__ import annotations

import os
import time

from bayescal.bench._io import environment, write_json
from bayescal.channels.multiclass_em import multiclass_dawid_skene_em
from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
from bayescal.simulate import simulate_multiclass
from bayescal.simulate.ambiguous import simulate_ambiguous_multiclass
from bayescal.summaries import summarize_multiclass


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=2000, help="items per dataset")
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--k", type=int, nargs="+", default=[3, 20], help="answers per item")
    parser.add_argument(
        "--concentrations",
        type=float,
        nargs="+",
        default=[5.0, 20.0, 100.0],
        help="ambiguity levels (Dirichlet concentration)",
    )
    parser.add_argument("--datasets", type=int, default=30, help="datasets per cell")
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def run(args) -> int:
    import warnings

    import numpy as np

    load_at_start = list(os.getloadavg())
    rng = np.random.default_rng(args.seed)
    cells = []
    for k in args.k:
        for conc in [None, *args.concentrations]:
            views, disp, rep = [], [], []
            t0 = time.perf_counter()
            for _ in range(args.datasets):
                seed = int(rng.integers(2**31))
                if conc is None:
                    data = simulate_multiclass(
                        args.n, args.classes, n_annotators=k, random_state=seed
                    )
                else:
                    data = simulate_ambiguous_multiclass(
                        args.n, args.classes, n_annotators=k, concentration=conc, random_state=seed
                    )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    summary = summarize_multiclass(data)
                    fit = multiclass_dawid_skene_em(summary, random_state=seed)
                    check = noise_or_ambiguity(
                        summary, fit, n_replicates=args.replicates, random_state=seed
                    )
                views.append(check.view)
                disp.append(check.overall["dispersion_observed"])
                rep.append(check.overall["dispersion_replicated"])
            cell = {
                "answers_per_item": k,
                "truth": "noise" if conc is None else "ambiguity",
                "concentration": conc,
                "intra_item_correlation": None if conc is None else 1.0 / (conc + 1.0),
                "datasets": args.datasets,
                "share_called_ambiguity": float(np.mean([v == "ambiguity" for v in views])),
                "share_called_misfit": float(np.mean([v == "misfit" for v in views])),
                "share_called_noise": float(np.mean([v == "noise" for v in views])),
                "dispersion_observed_mean": float(np.mean(disp)),
                "dispersion_replicated_mean": float(np.mean(rep)),
                "seconds": time.perf_counter() - t0,
            }
            cells.append(cell)
            print(
                f"K={k} {cell['truth']} conc={conc}: ambiguity {cell['share_called_ambiguity']:.2f}"
                f", misfit {cell['share_called_misfit']:.2f}, dispersion "
                f"{cell['dispersion_observed_mean']:.3f}"
            )
    write_json(
        {
            "benchmark": "multiclass-evidence",
            "settings": {
                "n": args.n,
                "classes": args.classes,
                "datasets": args.datasets,
                "replicates": args.replicates,
                "alpha": 0.01,
                "seed": args.seed,
            },
            "load_average_at_start": load_at_start,
            "load_average_at_end": list(os.getloadavg()),
            "environment": environment(),
            "cells": cells,
        },
        args.json_path,
    )
    return 0
