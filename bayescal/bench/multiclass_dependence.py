"""``bayescal bench dependence --multiclass``: multiclass NC-ECE interval coverage under
conditionally dependent annotators (independence vs dependence model).

Data: :func:`bayescal.simulate.dependent.simulate_multiclass_dependent`
on a fixed population (:func:`~bayescal.simulate.multiclass.multiclass_population`:
C = 3 classes, four annotators with the default confusions, temperature 1.5, an
over-confident model) of which ``a1`` and ``a2`` share a latent item difficulty
with loading ``s`` for every class: ``none`` (s = 0), ``moderate`` (s = 1, latent
within-class correlation 0.5) and ``strong`` (s = 2, 0.8).

Per repetition (seeds fixed): channels on the first half of the items (channel
groups by predicted class), the multiclass NC-ECE interval
(:func:`~bayescal.metrics.uncertainty.multiclass_nc_ece_interval`, ten
bins) on the second half, once with the independence model's posterior and once
with the dependence model's (pair ``a1:a2``), both from
:func:`~bayescal.bayes.multiclass_fit.fit_multiclass_channels_bayes` (nutpie). The
truth is the population's exact binned top-label and class-wise ECE
(:meth:`~bayescal.simulate.multiclass.MulticlassPopulation.binned_ece`): it does not
involve the annotators.

JSON (``docs/results/dependence_multiclass.json``): ``protocol``; ``cells`` with, per
model and metric (top-label, class-wise), coverage, its binomial SE, miss rates
above/below, mean width, the estimate's bias; the largest absolute bias of the
posterior-mean confusions; the dependence model's posterior mean loadings.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from bayescal.bench._io import write_run

CLASSES = 3
N_ANNOTATORS = 4
POPULATION_SEED = 2024
PAIR = "a1:a2"
MODELS = ("independent", "dependent")
METRICS = ("top_label", "classwise")


def _population():
    from bayescal.simulate.multiclass import multiclass_population

    return multiclass_population(
        CLASSES, n_annotators=N_ANNOTATORS, temperature=1.5, random_state=POPULATION_SEED
    )


def _one_rep(args, level_s, seed, pop, truth_ece):
    from bayescal.bayes.multiclass_fit import fit_multiclass_channels_bayes
    from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
    from bayescal.simulate.dependent import simulate_multiclass_dependent

    data, truth = simulate_multiclass_dependent(
        args.n, loading=level_s, groups=[(0, 1)], population=pop, random_state=seed
    )
    half = args.n // 2
    channels, evaluation = data.subset(np.arange(half)), data.subset(np.arange(half, args.n))
    out = {}
    for name in MODELS:
        fit = fit_multiclass_channels_bayes(
            channels,
            dependence=None if name == "independent" else PAIR,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            cores=1,
            random_state=seed,
            check=False,
            posterior_predictive=False,
        )
        iv = multiclass_nc_ece_interval(
            evaluation, fit, prob=args.prob, n_bootstrap=args.n_bootstrap, random_state=seed
        )
        row = {}
        for metric in METRICS:
            part = getattr(iv, metric)
            lo, hi = part.interval()
            t = truth_ece[metric]
            row[metric] = (lo <= t <= hi, t > hi, hi - lo, part.estimate)
        err = float(np.abs(fit.confusion.values.mean(0) - truth.confusion).max())
        loading = None
        if name == "dependent":
            loading = fit.idata.posterior["loading"].mean(("chain", "draw")).values
        div = int(fit.idata.sample_stats["diverging"].sum())
        out[name] = (row, err, loading, div, fit.diagnostics["sampling_seconds"])
    return out


def _summarise(records, truth_ece, reps):
    models = {}
    for name in MODELS:
        rows = [r[name] for r in records]
        entry = {}
        for metric in METRICS:
            hit = np.array([r[0][metric][0] for r in rows], dtype=float)
            above = np.array([r[0][metric][1] for r in rows], dtype=float)
            width = np.array([r[0][metric][2] for r in rows])
            est = np.array([r[0][metric][3] for r in rows])
            cov = float(hit.mean())
            entry[metric] = {
                "coverage": cov,
                "coverage_se": float(np.sqrt(cov * (1 - cov) / reps)),
                "miss_rate": 1 - cov,
                "miss_above": float(above.mean()),
                "miss_below": float(1 - cov - above.mean()),
                "mean_width": float(width.mean()),
                "estimate_bias": float(est.mean() - truth_ece[metric]),
                "estimate_bias_se": float(est.std(ddof=1) / np.sqrt(reps)),
            }
        entry["confusion_bias_max_abs_mean"] = float(np.mean([r[1] for r in rows]))
        entry["divergences"] = int(sum(r[3] for r in rows))
        entry["sampling_seconds"] = float(sum(r[4] for r in rows))
        models[name] = entry
    loads = [r["dependent"][2] for r in records]
    return models, np.mean(loads, axis=0).tolist()


def run(args, levels: dict, rep_seed) -> int:
    """Run the multiclass scenario of ``bench dependence`` (``--multiclass``) with its levels
    (name -> loading) and per-repetition seeds ``rep_seed(base, level, r)``."""
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    pop = _population()
    truth_ece = pop.binned_ece(10)
    cells = []
    for level in args.levels:
        t0 = time.perf_counter()
        records = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # per-fit convergence notes; divergences are counted
            for r in range(args.reps):
                seed = rep_seed(args.seed, level, r)
                records.append(_one_rep(args, levels[level], seed, pop, truth_ece))
        models, loading = _summarise(records, truth_ece, args.reps)
        s = levels[level]
        cells.append(
            {
                "level": level,
                "loading": s,
                "latent_correlation": s**2 / (1 + s**2),
                "n": args.n,
                "reps": args.reps,
                "population_binned_ece": truth_ece,
                "models": models,
                "dependent_loading_posterior_mean": loading,
                "seconds": time.perf_counter() - t0,
            }
        )
    protocol = {
        "track": "multiclass",
        "reps": args.reps,
        "n": args.n,
        "split": "channels on the first half, NC-ECE on the second",
        "levels": {k: levels[k] for k in args.levels},
        "population": {
            "classes": CLASSES,
            "annotators": N_ANNOTATORS,
            "confusions": "default_confusions (accuracy U[0.6, 0.9])",
            "temperature": 1.5,
            "seed": POPULATION_SEED,
            "confusion": _population().confusion.tolist(),
        },
        "dependent_pair": PAIR,
        "channel_groups": "predicted class",
        "evaluation_bins": 10,
        "prob": args.prob,
        "chains": args.chains,
        "draws": args.draws,
        "tune": args.tune,
        "sampler": "nutpie (independence: numba density; dependence: numpy density)",
        "n_bootstrap": args.n_bootstrap,
        "seed": args.seed,
    }
    write_run(protocol, cells, started=t_start, load_start=load_start, path=args.json_path)
    return 0
