"""``bayescal bench coverage``: frequentist coverage of the NC-ECE credible interval.

Toy Shifted and Nonlinear conditions (Sec. 6.1), n in {2000, 8000}, R
repetitions. Channels come from the grouped Bayesian model (five equal-width
score groups, 2 chains x ``--draws`` after ``--tune``) fitted on the same
sample (``reuse``) or on the first half with NC-ECE on the second (``split``).
For each repetition the 90% interval of :func:`bayescal.nc_ece_interval` is
checked against the exact population binned ECE (ten equal-width bins, by
quadrature):

- ``full``: channel posterior draws x Bayesian bootstrap of the evaluation items;
- ``evaluation_only``: the bootstrap with the posterior-mean channels (ignores
  channel uncertainty).

The PyMC model is compiled once and its pattern counts swapped per
repetition. Sampler: nutpie (same PyMC model, compiled with numba) when it is
installed, else PyMC's NUTS with a reused step; the JSON says which.
"""

from __future__ import annotations

import time

import numpy as np

DEFAULT_SIZES = (2000, 8000)
CONDITIONS = ("shifted", "nonlinear")
MODES = ("reuse", "split")


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS))
    parser.add_argument("--modes", nargs="+", default=list(MODES))
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--prob", type=float, default=0.9)
    parser.add_argument("--sampler", choices=["auto", "nutpie", "pymc"], default="auto")
    parser.add_argument("--seed", type=int, default=4242)
    parser.add_argument("--json", dest="json_path", default=None)


class _Sampler:
    """Posterior draws of the grouped model for new pattern counts, compiled once."""

    def __init__(self, spec, kind, draws, tune):
        import logging

        import pymc  # noqa: F401

        from bayescal.bayes.models import build_pymc_model

        logging.getLogger("pymc").setLevel(logging.ERROR)
        self.spec, self.kind, self.draws, self.tune = spec, kind, draws, tune
        self.built = build_pymc_model(spec)
        t0 = time.perf_counter()
        if kind == "nutpie":
            import nutpie

            self.compiled = nutpie.compile_pymc_model(self.built.model, backend="numba")
        else:
            import pymc as pm

            with self.built.model:
                self.step = pm.NUTS(target_accept=0.9)
        self.compile_seconds = time.perf_counter() - t0

    def __call__(self, counts, seed):
        if self.kind == "nutpie":
            import nutpie

            comp = self.compiled.with_data(pattern_counts=np.asarray(counts, dtype=np.float64))
            idata = nutpie.sample(
                comp,
                draws=self.draws,
                tune=self.tune,
                chains=2,
                seed=seed,
                progress_bar=False,
                cores=1,
            )
            div = int(idata.sample_stats["diverging"].sum())
        else:
            import pymc as pm

            self.built.set_counts(counts)
            with self.built.model:
                idata = pm.sample(
                    draws=self.draws,
                    tune=self.tune,
                    chains=2,
                    cores=1,
                    step=self.step,
                    random_seed=seed,
                    progressbar=False,
                    compute_convergence_checks=False,
                )
            div = int(idata.sample_stats["diverging"].sum())
        post = idata.posterior
        s = post.sizes["chain"] * post.sizes["draw"]
        a = post["a"].transpose("chain", "draw", "annotator").values.reshape(s, -1)
        b = post["b"].transpose("chain", "draw", "annotator").values.reshape(s, -1)
        prev = post["prevalence"].transpose("chain", "draw", "group").values.reshape(s, -1)
        return a, b, prev, div


def run(args) -> int:
    import importlib.util

    from bayescal.bayes.models import make_spec
    from bayescal.bench._io import environment, write_json
    from bayescal.channels.result import ChannelFit
    from bayescal.errors import ConfigError
    from bayescal.metrics.uncertainty import nc_ece_interval
    from bayescal.simulate import simulate_toy, toy_population_binned_ece
    from bayescal.summaries.summary import summarize_arrays

    if args.reps < 2:
        raise ConfigError("--reps must be at least 2.")
    kind = args.sampler
    if kind == "auto":
        kind = "nutpie" if importlib.util.find_spec("nutpie") else "pymc"
    if kind == "nutpie" and importlib.util.find_spec("nutpie") is None:
        raise ConfigError("--sampler nutpie needs the nutpie package: pip install nutpie.")
    t_start = time.perf_counter()
    edges_g, edges_b = np.linspace(0, 1, 6), np.linspace(0, 1, 11)
    samplers = {}
    results, details = [], []
    compile_seconds = 0.0
    for ci, cond in enumerate(args.conditions):
        pop = toy_population_binned_ece(cond, edges_b)
        for ni, n in enumerate(args.sizes):
            for mi, mode in enumerate(args.modes):
                hits = {"full": [], "evaluation_only": []}
                widths = {"full": [], "evaluation_only": []}
                points, divs = [], 0
                t_cell = time.perf_counter()
                for r in range(args.reps):
                    seed = args.seed + 1_000_000 * ci + 100_000 * ni + 10_000 * mi + r
                    d = simulate_toy(n, cond, random_state=seed)

                    def summ(idx, d=d):
                        return summarize_arrays(
                            d.score[idx],
                            d.labels[idx],
                            annotators=d.annotators,
                            group_edges=edges_g,
                            bin_edges=edges_b,
                        )

                    idx = np.arange(n)
                    ch_s, ev_s = (
                        (summ(idx), None)
                        if mode == "reuse"
                        else (summ(idx[: n // 2]), summ(idx[n // 2 :]))
                    )
                    ev_s = ch_s if ev_s is None else ev_s
                    spec = make_spec(ch_s, "grouped")
                    key = spec.counts.shape
                    if key not in samplers:
                        samplers[key] = _Sampler(spec, kind, args.draws, args.tune)
                        compile_seconds += samplers[key].compile_seconds
                    a, b, prev, div = samplers[key](spec.counts, seed)
                    divs += div
                    post = ChannelFit.from_draws(
                        a,
                        b,
                        prev,
                        annotators=d.annotators,
                        groups=list(spec.prevalence_groups),
                        group_counts=spec.prevalence_group_counts(),
                        method="bayes_grouped",
                    )
                    iv = nc_ece_interval(ev_s, post, prob=args.prob, random_state=seed)
                    points.append(iv.point)
                    for name, source in (("full", "full"), ("evaluation_only", "evaluation")):
                        lo, hi = iv.interval(source)
                        hits[name].append(lo <= pop <= hi)
                        widths[name].append(hi - lo)
                for name in hits:
                    cov = float(np.mean(hits[name]))
                    results.append(
                        {
                            "condition": cond,
                            "n": n,
                            "mode": mode,
                            "interval": name,
                            "coverage": cov,
                            "coverage_se": float(np.sqrt(cov * (1 - cov) / args.reps)),
                            "mean_width": float(np.mean(widths[name])),
                            "reps": args.reps,
                        }
                    )
                details.append(
                    {
                        "condition": cond,
                        "n": n,
                        "mode": mode,
                        "population_binned_ece": pop,
                        "point_bias": float(np.mean(points) - pop),
                        "divergences": divs,
                        "seconds": time.perf_counter() - t_cell,
                    }
                )
    out = {
        "protocol": {
            "reps": args.reps,
            "sizes": args.sizes,
            "conditions": args.conditions,
            "modes": args.modes,
            "prob": args.prob,
            "channel_groups": 5,
            "evaluation_bins": 10,
            "chains": 2,
            "draws": args.draws,
            "tune": args.tune,
            "sampler": kind,
            "seed": args.seed,
        },
        "results": results,
        "cells": details,
        "compile_seconds": compile_seconds,
        "seconds": time.perf_counter() - t_start,
        "environment": environment(),
    }
    write_json(out, args.json_path)
    return 0
