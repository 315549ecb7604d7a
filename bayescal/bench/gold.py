"""``bayescal bench gold``: posterior width of the channels against the number of gold items.

Issue 15: "with gold items the posterior width shrinks at the rate expected from the added
information". Two scenarios: the toy study's three annotators in three score groups, and its
first two annotators in two score groups (the Hui-Walter design, where the unknown items
identify the channels only through the groups' different prevalences, so gold items matter
more). Each has ``--n`` unknown items (``simulate_toy``) plus ``n_gold`` further items of the
same population marked gold (their class known), for each ``n_gold`` in ``--gold``, and is
fitted with the grouped Bayesian model (nutpie, 2 chains); the posterior sd of every ``a_j``
and ``b_j`` is recorded.

Expected rate: gold items add Fisher information ``n0_j / (a_j (1 - a_j))`` about ``a_j``
(``n0_j`` = gold-0 items annotator ``j`` answered; likewise ``b_j`` with gold-1 items), on top
of what the unknown items carry. With the posterior sd without gold ``sd_0`` standing for the
latter (its inverse square is the information of the unknown items and the prior), the
prediction is ``sd(n_gold) = 1 / sqrt(1 / sd_0**2 + I_gold)`` (information adds for
independent items; the correlation of a rate with the prevalences is neglected, so the
prediction is approximate). The JSON reports observed and predicted sds per level, averaged over
annotators and ``--seeds`` data sets, and their ratio.

``--multiclass`` runs the multiclass track's scenarios instead (same options;
:mod:`bayescal.bench.gold_multiclass`, ``docs/results/gold_multiclass.json``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from bayescal.bench._io import environment, write_json
from bayescal.bench.gold_multiclass import multiclass_study


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=2000, help="unknown items (default 2000)")
    parser.add_argument(
        "--gold",
        default="0,100,200,400,800,1600",
        help="comma-separated numbers of gold items (default 0,100,200,400,800,1600)",
    )
    parser.add_argument("--seeds", type=int, default=4, help="data sets per level (default 4)")
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain (default 1000)")
    parser.add_argument("--tune", type=int, default=400, help="tuning steps (default 400)")
    parser.add_argument(
        "--multiclass",
        action="store_true",
        help="multiclass Dawid-Skene (K = 3, C = 3, accurate and weak annotators) instead of "
        "the binary channels",
    )
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


SCENARIOS = {"three_annotators": (3, 3), "two_annotators": (2, 2)}  # name: (K, score groups)


def _fit_sd(data, args, seed, groups):
    from bayescal import summarize
    from bayescal.bayes import fit_channels_bayes

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_channels_bayes(
            summarize(data, groups=groups),
            draws=args.draws,
            tune=args.tune,
            chains=2,
            cores=1,
            random_state=seed,
            posterior_predictive=False,
        )
    return fit.a.values.std(0), fit.b.values.std(0), fit.converged


def _scenario(k, groups, levels, args):
    from bayescal import Annotations
    from bayescal.simulate import simulate_toy
    from bayescal.simulate.toy import TOY_FN, TOY_FP

    # the toy study's channels: the Fisher information is taken at the true rates
    fp, fn = TOY_FP[:k], TOY_FN[:k]
    a, b = np.asarray(fp, dtype=float), 1 - np.asarray(fn, dtype=float)
    rows = {g: {"obs": [], "pred": []} for g in levels}
    converged = True
    for seed in range(args.seeds):
        full = simulate_toy(args.n + max(levels), random_state=seed, fp=fp, fn=fn)
        base = None
        for g in levels:
            gold = np.full(full.n_items, np.nan)
            gold[args.n : args.n + g] = full.truth[args.n : args.n + g]
            keep = np.arange(args.n + g)
            data = Annotations.from_arrays(
                full.score[keep], full.labels[keep], truth=full.truth[keep], gold=gold[keep]
            )
            sd_a, sd_b, ok = _fit_sd(data, args, seed, groups)
            converged &= bool(ok)
            if base is None:
                base = (sd_a, sd_b)
            answered = ~np.isnan(full.labels[args.n : args.n + g])
            y = full.truth[args.n : args.n + g]
            n0 = (answered & (y == 0)[:, None]).sum(axis=0)
            n1 = (answered & (y == 1)[:, None]).sum(axis=0)
            pred_a = 1 / np.sqrt(1 / base[0] ** 2 + n0 / (a * (1 - a)))
            pred_b = 1 / np.sqrt(1 / base[1] ** 2 + n1 / (b * (1 - b)))
            rows[g]["obs"].append(np.concatenate([sd_a, sd_b]))
            rows[g]["pred"].append(np.concatenate([pred_a, pred_b]))
    out = []
    for g in levels:
        obs, pred = np.array(rows[g]["obs"]), np.array(rows[g]["pred"])
        out.append(
            {
                "n_gold": g,
                "sd_observed_mean": float(obs.mean()),
                "sd_predicted_mean": float(pred.mean()),
                "ratio_observed_to_predicted_mean": float((obs / pred).mean()),
                "ratio_min": float((obs / pred).min()),
                "ratio_max": float((obs / pred).max()),
            }
        )
    return {"annotators": k, "score_groups": groups, "levels": out, "all_converged": converged}


def _binary_study(args, levels):
    """The binary scenarios: (benchmark name, setup, scenarios)."""
    scenarios = {
        name: _scenario(k, groups, levels, args) for name, (k, groups) in SCENARIOS.items()
    }
    setup = {
        "unknown_items": args.n,
        "model": "grouped",
        "sampler": "nutpie",
        "chains": 2,
        "draws": args.draws,
        "tune": args.tune,
        "seeds": args.seeds,
        "prediction": "sd(n_gold) = 1 / sqrt(1 / sd(0)**2 + n_answered_gold_of_class / "
        "(rate (1 - rate))), the Fisher information of the gold items added",
    }
    return "gold", setup, scenarios


def run(args) -> int:
    levels = [int(x) for x in str(args.gold).split(",")]
    if levels[0] != 0 or any(x < 0 for x in levels):
        raise SystemExit("--gold must start with 0 (the baseline) and hold counts >= 0")
    started = time.perf_counter()
    study = multiclass_study if args.multiclass else _binary_study
    name, setup, scenarios = study(args, levels)
    result = {
        "benchmark": name,
        "setup": setup,
        "scenarios": scenarios,
        "seconds": time.perf_counter() - started,
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
