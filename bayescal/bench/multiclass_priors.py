"""``bayescal bench multiclass-priors``: frequentist coverage of the confusion diagonal.

Issue 22 item 3. The truth is *not* drawn from the prior: each of K annotators has
one accuracy (spread evenly over ``--acc-low`` .. ``--acc-high``, default 0.6 .. 0.95)
on every diagonal entry, and each row's error mass ``1 - acc`` is split over the
other C - 1 answers by a Dirichlet(1) draw (fixed per repetition). Every class has
exactly ``--per-class`` items. Per cell (C, items per class) and repetition, the
pooled multiclass posterior (default priors) and pooled Dawid–Skene EM are fitted
on the same answers; reported per cell:

- ``coverage``: share of the K * C diagonal entries whose central 90% posterior
  interval holds the true entry, with its Monte Carlo SE ``sqrt(p (1 - p) / N)``
  over the N entries (entries of one fit share data, so this SE is a lower bound);
- ``within_1p5_sd_of_em``: share of entries whose posterior mean lies within 1.5
  posterior sd of EM's estimate;
- ``bias``: mean of posterior mean minus truth over the diagonal entries;
- ``rhat_diag_max`` / ``ess_bulk_diag_min``: the worst convergence figures of the
  diagonal entries (the check's quantities), and the fit's worst over all entries.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import arviz as az
import numpy as np

from bayescal.bayes.multiclass_fit import fit_multiclass_channels_bayes
from bayescal.bench._io import environment, write_json
from bayescal.channels.em import dawid_skene_em
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError
from bayescal.summaries import summarize_multiclass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--classes", type=int, nargs="+", default=[3, 10], help="class counts")
    parser.add_argument("--per-class", type=int, nargs="+", default=[90], help="items per class")
    parser.add_argument("--k", type=int, default=3, help="annotators (default 3)")
    parser.add_argument("--acc-low", type=float, default=0.6)
    parser.add_argument("--acc-high", type=float, default=0.95)
    parser.add_argument("--reps", type=int, default=2, help="repetitions per cell")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--tune", type=int, default=600)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def true_confusions(n_classes: int, accuracies: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(K, C, C) rows with diagonal ``accuracies[j]`` and Dirichlet(1)-split errors."""
    k = accuracies.size
    out = np.empty((k, n_classes, n_classes))
    for j in range(k):
        for y in range(n_classes):
            errors = rng.dirichlet(np.ones(n_classes - 1)) * (1.0 - accuracies[j])
            out[j, y] = np.insert(errors, y, accuracies[j])
    return out


def simulate_answers(
    confusion: np.ndarray, per_class: int, rng: np.random.Generator
) -> MulticlassAnnotations:
    """Exactly ``per_class`` items of every class; answers ``A_j ~ T_j[Y, .]``."""
    k, c, _ = confusion.shape
    y = np.repeat(np.arange(c), per_class)
    cum = np.cumsum(confusion[:, y, :], axis=-1)  # (K, n, C)
    u = rng.random((k, y.size, 1))
    answers = np.minimum((u > cum).sum(-1), c - 1).T.astype(np.float64)  # (n, K)
    probs = np.full((y.size, c), 1.0 / c)  # scores do not enter the pooled channel fit
    return MulticlassAnnotations.from_arrays(probs, answers)


def _diagonal(x: np.ndarray) -> np.ndarray:
    """(..., K, C, C) -> (..., K, C)."""
    return np.diagonal(x, axis1=-2, axis2=-1)


def one_fit(
    n_classes: int, per_class: int, accuracies: np.ndarray, args: argparse.Namespace, seed: int
) -> dict:
    rng = np.random.default_rng(seed)
    truth = true_confusions(n_classes, accuracies, rng)
    summary = summarize_multiclass(simulate_answers(truth, per_class, rng), groups="all")
    em = dawid_skene_em(summary, prevalence="grouped", random_state=seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence problems are reported below
        fit = fit_multiclass_channels_bayes(
            summary,
            pooled=True,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            random_state=seed,
        )
    seconds = time.perf_counter() - t0
    idata = fit.idata
    if not isinstance(idata, az.InferenceData):  # a sampled fit always carries its idata
        raise TypeError("the multiclass posterior fit returned no InferenceData")
    post = idata["posterior"]["confusion"].values  # (chain, draw, K, C, C)
    diag = _diagonal(post)  # (chain, draw, K, C)
    flat = diag.reshape(-1, *diag.shape[2:])
    lo, hi = np.quantile(flat, [0.05, 0.95], axis=0)
    mean, sd = flat.mean(0), flat.std(0, ddof=1)
    true_d, em_d = _diagonal(truth), _diagonal(em.confusion.values[0])
    ds = az.convert_to_dataset({"d": diag})
    return {
        "seed": seed,
        "covered": ((lo <= true_d) & (true_d <= hi)).ravel().tolist(),
        "within": (np.abs(mean - em_d) <= 1.5 * sd).ravel().tolist(),
        "bias": (mean - true_d).ravel().tolist(),
        "em_bias": (em_d - true_d).ravel().tolist(),
        "rhat_diag_max": float(az.rhat(ds)["d"].max()),
        "ess_bulk_diag_min": float(az.ess(ds)["d"].min()),
        "rhat_all_max": fit.diagnostics.get("rhat_max"),
        "ess_bulk_all_min": fit.diagnostics.get("ess_bulk_min"),
        "seconds": seconds,
    }


def _share(flags: list[bool]) -> dict:
    p = float(np.mean(flags))
    return {"value": p, "mc_se": float(np.sqrt(p * (1 - p) / len(flags))), "n": len(flags)}


def run(args: argparse.Namespace) -> int:
    if args.k < 2 or args.reps < 1 or min(args.classes) < 3:
        raise ConfigError("--k must be >= 2, --reps >= 1 and every --classes >= 3.")
    if not 0 < args.acc_low <= args.acc_high < 1:
        raise ConfigError("accuracies need 0 < --acc-low <= --acc-high < 1.")
    accuracies = np.linspace(args.acc_high, args.acc_low, args.k)
    cells = []
    for c in args.classes:
        for per_class in args.per_class:
            fits = [
                one_fit(c, per_class, accuracies, args, args.seed + 1000 * c + r)
                for r in range(args.reps)
            ]
            cells.append(
                {
                    "classes": c,
                    "per_class": per_class,
                    "reps": args.reps,
                    "coverage": _share(sum((f["covered"] for f in fits), [])),
                    "within_1p5_sd_of_em": _share(sum((f["within"] for f in fits), [])),
                    "bias": float(np.mean(sum((f["bias"] for f in fits), []))),
                    "em_bias": float(np.mean(sum((f["em_bias"] for f in fits), []))),
                    "rhat_diag_max": max(f["rhat_diag_max"] for f in fits),
                    "ess_bulk_diag_min": min(f["ess_bulk_diag_min"] for f in fits),
                    "rhat_all_max": max(f["rhat_all_max"] or np.nan for f in fits),
                    "ess_bulk_all_min": min(f["ess_bulk_all_min"] or np.nan for f in fits),
                    "seconds": sum(f["seconds"] for f in fits),
                }
            )
            print(cells[-1], flush=True)
    result = {
        "benchmark": "multiclass-priors",
        "settings": {
            "classes": args.classes,
            "per_class": args.per_class,
            "k": args.k,
            "reps": args.reps,
            "draws": args.draws,
            "tune": args.tune,
            "chains": args.chains,
            "seed": args.seed,
        },
        "accuracies": accuracies.tolist(),
        "cells": cells,
        "load_average_at_end": list(os.getloadavg()),
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
