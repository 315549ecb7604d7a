"""``bayescal bench coverage``: coverage of the NC-ECE interval and level of the calibration test.

Toy conditions of Sec. 6.1 (``calibrated``, ``shifted``, ``nonlinear``), any sizes n,
``split`` (channels on the first half, NC-ECE on the second) or ``reuse`` (both on
all n), R repetitions per cell. Channels:

- ``point``: joint score-bin EM (five equal-width score groups); the interval is then
  evaluation-only (conditional on the channels) and is reported as such;
- ``bootstrap``: the same EM fit plus ``--channel-draws`` draws of
  :func:`bayescal.channels.bootstrap.bootstrap_channels` (its sampling spread); the
  ``full`` interval carries them;
- ``bayes``: the grouped Bayesian model (2 chains x ``--draws`` after ``--tune``),
  compiled once, pattern counts swapped per repetition (nutpie when installed);
  the ``full`` interval carries the channel posterior.

Each repetition's interval (:func:`bayescal.nc_ece_interval` with ``sample_use``
set to the cell's mode, ten equal-width bins) is checked against the exact
population binned ECE (quadrature), and the test of perfect calibration's p-value
against ``1 - prob``. Intervals per cell: ``full`` (channel draws x item
bootstrap), ``evaluation_only`` (item bootstrap, channels held at their point
value) and ``reported`` (what the library reports for that mode: ``full`` for
split, ``evaluation_only`` for reuse); the test uses the reported source. From the
reported source's replicates the benchmark also scores the alternatives the choice
was made between (``methods``):

- intervals: ``percentile`` (v0.1: equal-tailed quantiles of the resampled
  plug-in, which is also the flat-prior posterior of the bin moments with ``|.|``
  integrated), ``basic`` (``2 theta_hat - quantiles``), ``basic_test`` (basic, lower
  end 0 when the test does not reject), ``linear_upper`` (basic lower end,
  linearised upper end, no test), ``shrinkage_posterior`` (normal empirical-Bayes
  prior on the bin moments, ``|.|`` integrated over the posterior),
  ``bias_aware`` (the library's: linear upper end, basic lower end, lower end 0 when
  the test does not reject);
- point estimates: ``plugin``, ``bootstrap_bc`` (the library's), ``spec4_inversion``
  (per bin, invert ``E|D| = s g(|d| / s)`` of SPEC §4), ``squared_debiased``
  (Kumar et al. 2019 style ``sqrt(max(D^2 - s^2, 0))`` per bin): bias and RMSE;
- tests: ``abs`` (the library's) and ``chi2`` (``sum D_m^2 / s_m^2`` against
  chi-square with the number of non-empty bins): rejection rates.

``--designs`` runs the designs where the channels are uncertain instead (issue 22
item 2; :data:`DESIGNS`): the toy's K = 3 panel, K = 2 with two score groups
(Hui-Walter), K = 2 with 10% gold items and no groups, K = 2 with an earlier audit of
1,000 items as prior (``ChannelPriors.from_fit``), and K = 3 on this bench's own Beta
simulator (Beta(2, 2.5) scores, an under-confident logistic curve, 10% missing
answers), each over ``--conditions`` x ``--sizes``. Every repetition fits the grouped
Bayesian model (``fit_channels_bayes``, 2 chains) on all its items and scores, from one
``nc_ece_interval(..., sample_use="joint")`` call, the reported joint interval, the
evaluation-only one (channels at their posterior mean) and the independent combination
(``full``) against the exact population binned ECE, with the test's rejection rate.
The JSON keeps every repetition's numbers and is rewritten every 10 repetitions; a rerun
with the same ``--json`` resumes.

JSON: ``protocol``, ``results`` (one row per cell and interval source, with
coverage, its Monte Carlo SE, mean width, the test's rejection rate and the
population binned ECE), ``cells`` (bias of the estimate and of the plug-in, test
rejection, seconds), ``methods`` (the comparison above), load and timings.
"""

from __future__ import annotations

import itertools
import os
import time
import warnings

import numpy as np

from bayescal.bench._io import (
    earlier_json,
    environment,
    interval_coverage,
    load_average,
    rep_seed,
    share_se,
    write_json,
)

DEFAULT_SIZES = (2000, 8000)
CONDITIONS = ("calibrated", "shifted", "nonlinear")
MODES = ("split", "reuse")
CHANNELS = ("point", "bootstrap", "bayes")
N_GROUPS, N_BINS = 5, 10


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--channels", choices=CHANNELS, default="bayes")
    parser.add_argument("--n-bootstrap", type=int, default=2000)
    parser.add_argument(
        "--channel-draws", type=int, default=1000, help="bootstrap draws (--channels bootstrap)"
    )
    parser.add_argument("--draws", type=int, default=500, help="per chain (--channels bayes)")
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--prob", type=float, default=0.9)
    parser.add_argument("--sampler", choices=["auto", "nutpie", "pymc"], default="auto")
    parser.add_argument("--seed", type=int, default=4242)
    parser.add_argument(
        "--designs",
        nargs="+",
        default=None,
        help="run these designs (Bayesian channels, sample_use='joint') instead of the toy "
        f"grid; choose from {', '.join(DESIGNS)}. Resumes from --json.",
    )
    parser.add_argument(
        "--multiclass",
        nargs="+",
        default=None,
        help="run these multiclass populations (Bayesian channels, sample_use='joint') instead; "
        f"choose from {', '.join(MULTICLASS)}. Resumes from --json.",
    )
    parser.add_argument("--json", dest="json_path", default=None)


def nuts_settings(args, seed: int):
    """The benches' nutpie settings for one fit: ``--draws``/``--tune``/``--chains``, one core,
    target_accept 0.9, no progress bar."""
    from bayescal.bayes.sampling import NUTSSettings

    return NUTSSettings(
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        cores=1,
        seed=seed,
        target_accept=0.9,
        progress=False,
    )


class Sampler:
    """NUTS on a PyMC model, compiled once (nutpie's numba backend, ``kind="nutpie"``, or
    PyMC's own NUTS at target_accept 0.9), then sampled as often as needed; ``counts``
    swaps the grouped model's pattern counts between runs (``set_counts`` for PyMC).
    ``nutpie_options`` go to ``nutpie.sample``, ``compile_kwargs`` to ``pm.NUTS``."""

    def __init__(
        self,
        model,
        kind,
        draws,
        tune,
        *,
        chains=2,
        set_counts=None,
        nutpie_options=None,
        compile_kwargs=None,
    ):
        import logging

        logging.getLogger("pymc").setLevel(logging.ERROR)
        self.model, self.kind, self.set_counts = model, kind, set_counts
        self.draws, self.tune, self.chains = draws, tune, chains
        self.nutpie_options = nutpie_options or {}
        t0 = time.perf_counter()
        if kind == "nutpie":
            import nutpie

            self.compiled = nutpie.compile_pymc_model(model, backend="numba")
        else:
            import pymc as pm

            with model:
                nuts = {"compile_kwargs": compile_kwargs} if compile_kwargs else {}
                self.step = pm.NUTS(target_accept=0.9, **nuts)
        self.compile_seconds = time.perf_counter() - t0

    def sample(self, seed, counts=None):
        if self.kind == "nutpie":
            import nutpie

            comp = self.compiled
            if counts is not None:
                comp = comp.with_data(pattern_counts=np.asarray(counts, dtype=np.float64))
            return nutpie.sample(
                comp,
                draws=self.draws,
                tune=self.tune,
                chains=self.chains,
                seed=seed,
                progress_bar=False,
                cores=1,
                **self.nutpie_options,
            )
        import pymc as pm

        if counts is not None:
            self.set_counts(counts)
        with self.model:
            return pm.sample(
                draws=self.draws,
                tune=self.tune,
                chains=self.chains,
                cores=1,
                step=self.step,
                random_seed=seed,  # PyMC's own argument names
                progressbar=False,
                compute_convergence_checks=False,
            )


def posterior_channels(post, spec, method, annotators=None):
    """The binary channels of a posterior (``a``, ``b``, ``prevalence`` by chain and draw)
    as a :class:`~bayescal.channels.result.ChannelFit` of its draws."""
    from bayescal.channels.result import ChannelFit

    s = post.sizes["chain"] * post.sizes["draw"]

    def flat(name, dim):
        return post[name].transpose("chain", "draw", dim).values.reshape(s, -1)

    return ChannelFit.from_draws(
        flat("a", "annotator"),
        flat("b", "annotator"),
        flat("prevalence", "group"),
        annotators=spec.annotators if annotators is None else annotators,
        groups=list(spec.prevalence_groups),
        group_counts=spec.prevalence_group_counts(),
        method=method,
    )


# ---------------------------------------------------------------- the alternatives
def _g(t):
    """SPEC §4 in units of s: E|t + N(0, 1)|."""
    from scipy import stats

    t = np.abs(t)
    return np.sqrt(2 / np.pi) * np.exp(-(t**2) / 2) + t * (1 - 2 * stats.norm.cdf(-t))


_T_GRID = np.linspace(0.0, 40.0, 8001)


def _spec4_inversion(d, s):
    """Per bin, the |d| with E|D| = |D_observed| (0 below the d = 0 floor)."""
    ok = s > 0
    t = np.interp(np.abs(d[ok]) / s[ok], _g(_T_GRID), _T_GRID, left=0.0)
    out = np.abs(d).copy()
    out[ok] = t * s[ok]
    return float(out.sum())


def _shrinkage_posterior(d, s, prob, rng, n=2000):
    """Normal prior d_m ~ N(0, tau^2), tau^2 by moments; quantiles of sum |d| a posteriori."""
    ok = s > 0
    tau2 = max(0.0, float(np.mean(d[ok] ** 2 - s[ok] ** 2)))
    shrink = tau2 / (tau2 + s[ok] ** 2)
    draws = d[ok] * shrink + np.sqrt(shrink * s[ok] ** 2) * rng.standard_normal((n, ok.sum()))
    q = np.quantile(np.abs(draws).sum(axis=1), [(1 - prob) / 2, (1 + prob) / 2])
    return float(q[0]), float(q[1])


def _alternatives(d, reps, prob, rng):
    """Intervals, point estimates and p-values of the options, from one set of replicates."""
    from scipy import stats

    from bayescal.metrics.uncertainty import bias_aware_interval, debiased_ece

    alpha = 1 - prob
    dev = reps - reps.mean(axis=0)
    s = reps.std(axis=0)
    theta = float(np.abs(d).sum())
    boot = np.abs(d + dev).sum(axis=1)
    q_lo, q_hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    raw = np.abs(reps).sum(axis=1)
    lo_basic, hi_basic = max(0.0, 2 * theta - q_hi), max(0.0, 2 * theta - q_lo)
    lo_ba, hi_ba, p_abs = bias_aware_interval(d, reps, prob)
    hi_lin = hi_ba
    ok = s > 0
    p_chi = float(stats.chi2.sf(np.sum(d[ok] ** 2 / s[ok] ** 2), ok.sum())) if ok.any() else 1.0
    keep = p_abs <= alpha
    intervals = {
        "percentile": tuple(np.quantile(raw, [alpha / 2, 1 - alpha / 2])),
        "basic": (lo_basic, hi_basic),
        "basic_test": (lo_basic if keep else 0.0, hi_basic),
        "linear_upper": (lo_basic, hi_lin),
        "shrinkage_posterior": _shrinkage_posterior(d, s, prob, rng),
        "bias_aware": (lo_ba, hi_ba),
    }
    estimates = {
        "plugin": theta,
        "bootstrap_bc": debiased_ece(d, reps),
        "spec4_inversion": _spec4_inversion(d, s),
        "squared_debiased": float(np.sqrt(np.maximum(d**2 - s**2, 0.0)).sum()),
    }
    return intervals, estimates, {"abs": p_abs, "chi2": p_chi}


# ---------------------------------------------------------------- one repetition
def _summaries(data, mode):
    from bayescal.summaries.summary import summarize_arrays

    n = data.n_items
    edges_g, edges_b = np.linspace(0, 1, N_GROUPS + 1), np.linspace(0, 1, N_BINS + 1)

    def summ(idx):
        return summarize_arrays(
            data.score[idx],
            data.labels[idx],
            annotators=data.annotators,
            group_edges=edges_g,
            bin_edges=edges_b,
        )

    idx = np.arange(n)
    if mode == "reuse":
        s = summ(idx)
        return s, s
    return summ(idx[: n // 2]), summ(idx[n // 2 :])


def _channels(kind, channel_summary, samplers, args, seed, annotators):
    """(channels, point channels or None, divergences, compile seconds) for one repetition."""
    from bayescal.channels.bootstrap import bootstrap_channels
    from bayescal.channels.fit import fit_channels

    if kind != "bayes":
        fit = fit_channels(channel_summary, "score_bin_em", random_state=seed)
        if kind == "point":
            return fit, None, 0, 0.0
        draws = bootstrap_channels(
            channel_summary, fit, n_draws=args.channel_draws, random_state=seed
        )
        return draws, fit, 0, 0.0
    from bayescal.bayes.models import build_pymc_model, make_spec

    spec = make_spec(channel_summary, "grouped")
    key = spec.counts.shape
    compile_seconds = 0.0
    if key not in samplers:
        built = build_pymc_model(spec)
        samplers[key] = Sampler(
            built.model, args.sampler_kind, args.draws, args.tune, set_counts=built.set_counts
        )
        compile_seconds = samplers[key].compile_seconds
    idata = samplers[key].sample(seed, spec.counts)
    post = posterior_channels(idata.posterior, spec, "bayes_grouped", annotators)
    div = int(idata.sample_stats["diverging"].sum())
    return post, None, div, compile_seconds


def _sampler_kind(requested):
    import importlib.util

    from bayescal.errors import ConfigError

    have = importlib.util.find_spec("nutpie") is not None
    if requested == "auto":
        return "nutpie" if have else "pymc"
    if requested == "nutpie" and not have:
        raise ConfigError("--sampler nutpie needs the nutpie package: pip install nutpie.")
    return requested


def _check_args(args):
    from bayescal.errors import ConfigError

    unknown = sorted(set(args.designs or ()) - set(DESIGNS))
    if unknown:
        raise ConfigError(f"unknown --designs {unknown}; choose from {sorted(DESIGNS)}.")
    if "beta-k3" in (args.designs or ()) and "shifted" in args.conditions:
        raise ConfigError(
            "the beta-k3 design has the conditions 'calibrated' and 'nonlinear' only; "
            "pass --conditions calibrated nonlinear."
        )

    if args.reps < 2:
        raise ConfigError(f"--reps must be at least 2; got {args.reps}.")
    if min(args.sizes) < 100:
        raise ConfigError(f"--sizes must be at least 100 items; got {min(args.sizes)}.")
    if not 0 < args.prob < 1:
        raise ConfigError(f"--prob must be in (0, 1); got {args.prob}.")


# ---------------------------------------------------------------- the study
def _run_cell(args, cond, n, mode, pop, samplers):
    from bayescal.metrics.uncertainty import nc_ece_interval
    from bayescal.simulate import simulate_toy

    sources = ("evaluation",) if args.channels == "point" else ("full", "evaluation")
    sources = sources + ("reported",)
    ends: dict[str, list[tuple[float, float]]] = {s: [] for s in sources}
    alt_hits, alt_widths, alt_est, alt_rej = {}, {}, {}, {}
    estimates, plugins, rejects = [], [], []
    divergences, compile_seconds, sparse = 0, 0.0, 0
    t0 = time.perf_counter()
    for r in range(args.reps):
        seed = rep_seed(args.seed, CONDITIONS.index(cond), n, MODES.index(mode), r)
        data = simulate_toy(n, cond, random_state=seed)
        ch_s, ev_s = _summaries(data, mode)
        fit, point, div, comp = _channels(
            args.channels, ch_s, samplers, args, seed, data.annotators
        )
        divergences += div
        compile_seconds += comp
        iv = nc_ece_interval(
            ev_s,
            fit,
            prob=args.prob,
            n_bootstrap=args.n_bootstrap,
            point_channels=point,
            sample_use=mode,
            random_state=seed,
        )
        for s in sources:
            ends[s].append(iv.interval(None if s == "reported" else s))
        sparse += bool(iv.info["warnings"])
        estimates.append(iv.estimate)
        plugins.append(iv.plugin)
        rejects.append(iv.p_value <= 1 - args.prob)
        rng = np.random.default_rng(seed)
        ints, ests, pvals = _alternatives(
            iv.plugin_moments.values, iv.moments[iv.source].values, args.prob, rng
        )
        for k, (lo, hi) in ints.items():
            alt_hits.setdefault(k, []).append(lo <= pop <= hi)
            alt_widths.setdefault(k, []).append(hi - lo)
        for k, v in ests.items():
            alt_est.setdefault(k, []).append(v)
        for k, v in pvals.items():
            alt_rej.setdefault(k, []).append(v <= 1 - args.prob)
    seconds = time.perf_counter() - t0 - compile_seconds
    reject_rate = float(np.mean(rejects))
    rows = []
    for s in sources:
        lo, hi = np.array(ends[s]).T
        rows.append(
            {
                "condition": cond,
                "n": n,
                "mode": mode,
                "interval": {"evaluation": "evaluation_only"}.get(s, s),
                **interval_coverage(lo, hi, pop),
                "reps": args.reps,
                "test_rejection_rate": reject_rate,
                "population_binned_ece": pop,
            }
        )
    cell = {
        "condition": cond,
        "n": n,
        "mode": mode,
        "population_binned_ece": pop,
        "estimate_bias": float(np.mean(estimates) - pop),
        "estimate_rmse": float(np.sqrt(np.mean((np.array(estimates) - pop) ** 2))),
        "plugin_bias": float(np.mean(plugins) - pop),
        "test_rejection_rate": reject_rate,
        "test_rejection_se": share_se(reject_rate, args.reps),
        "divergences": divergences,
        "sparse_bin_warnings": sparse,
        "seconds": seconds,
    }
    methods = {
        "condition": cond,
        "n": n,
        "mode": mode,
        "source": "full" if mode == "split" and args.channels != "point" else "evaluation",
        "intervals": {
            k: {"coverage": float(np.mean(v)), "mean_width": float(np.mean(alt_widths[k]))}
            for k, v in alt_hits.items()
        },
        "estimates": {
            k: {
                "bias": float(np.mean(v) - pop),
                "rmse": float(np.sqrt(np.mean((np.array(v) - pop) ** 2))),
            }
            for k, v in alt_est.items()
        },
        "tests": {k: {"rejection_rate": float(np.mean(v))} for k, v in alt_rej.items()},
    }
    return rows, cell, methods, compile_seconds


def run(args) -> int:
    from bayescal.errors import IdentificationWarning
    from bayescal.simulate import toy_population_binned_ece

    if args.multiclass:
        return run_multiclass(args)
    if args.designs:
        return run_designs(args)
    _check_args(args)
    args.sampler_kind = _sampler_kind(args.sampler) if args.channels == "bayes" else None
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    samplers: dict = {}
    results, cells, methods = [], [], []
    compile_seconds = 0.0
    edges_b = np.linspace(0, 1, N_BINS + 1)
    for cond in args.conditions:
        pop = toy_population_binned_ece(cond, edges_b)
        for n in args.sizes:
            for mode in args.modes:
                with warnings.catch_warnings():
                    # sparse-bin warnings are counted per cell (cells[].sparse_bin_warnings)
                    warnings.simplefilter("ignore", IdentificationWarning)
                    rows, cell, meth, comp = _run_cell(args, cond, n, mode, pop, samplers)
                results += rows
                cells.append(cell)
                methods.append(meth)
                compile_seconds += comp
    protocol = {
        "reps": args.reps,
        "sizes": args.sizes,
        "conditions": args.conditions,
        "modes": args.modes,
        "channels": args.channels,
        "prob": args.prob,
        "test_level": round(1 - args.prob, 10),
        "channel_groups": N_GROUPS,
        "evaluation_bins": N_BINS,
        "n_bootstrap": args.n_bootstrap,
        "seed": args.seed,
    }
    if args.channels == "bayes":
        protocol.update(chains=2, draws=args.draws, tune=args.tune, sampler=args.sampler_kind)
    else:
        protocol["channel_estimator"] = "score_bin_em"
    if args.channels == "bootstrap":
        protocol["channel_draws"] = args.channel_draws
    out = {
        "protocol": protocol,
        "results": results,
        "cells": cells,
        "methods": methods,
        "compile_seconds": compile_seconds,
        "seconds": time.perf_counter() - t_start,
        "load_average": load_average(load_start),
        "environment": environment(),
    }
    write_json(out, args.json_path)
    return 0


# ---------------------------------------------------------------- weakly identified designs
#: Designs where the channels are uncertain (issue 22 item 2). ``sim``: the toy of
#: Sec. 6.1 or this bench's own Beta simulator (not used anywhere else in the
#: project); ``fp``/``fn``: the annotators; ``groups``: score-group edges;
#: ``gold``: share of gold items (left out of the ECE cells, as the audit does);
#: ``prior``: channels of an earlier audit of ``prior`` items as the prior.
DESIGNS = {
    "toy-k3": {"sim": "toy", "fp": (0.08, 0.13, 0.18), "fn": (0.16, 0.11, 0.06), "groups": 5},
    "hui-walter-k2": {"sim": "toy", "fp": (0.08, 0.13), "fn": (0.16, 0.11), "groups": 2},
    "gold-k2": {"sim": "toy", "fp": (0.08, 0.13), "fn": (0.16, 0.11), "groups": 1, "gold": 0.1},
    "prior-k2": {"sim": "toy", "fp": (0.08, 0.13), "fn": (0.16, 0.11), "groups": 5, "prior": 1000},
    "beta-k3": {"sim": "beta", "fp": (0.1, 0.2, 0.15), "fn": (0.25, 0.15, 0.3), "groups": 5},
}
#: The Beta simulator: Z ~ Beta(2, 2.5); P(Y = 1 | z) is z (calibrated) or an
#: under-confident logistic curve with an offset (nonlinear: its gap changes sign
#: twice across the score range), and 10% of the answers are missing.
BETA_SHAPE = (2.0, 2.5)
BETA_MISSING = 0.1


def _beta_curve(cond):
    if cond == "calibrated":
        return lambda z: z
    return lambda z: 1 / (1 + np.exp(-(0.55 * np.log(z / (1 - z)) + 0.35)))


def _beta_population_ece(cond, edges) -> float:
    from scipy import integrate, stats

    f, pdf = _beta_curve(cond), stats.beta(*BETA_SHAPE).pdf
    return float(
        sum(
            abs(integrate.quad(lambda z: (f(z) - z) * pdf(z), lo, hi, epsabs=1e-12)[0])
            for lo, hi in zip(edges[:-1], edges[1:])
        )
    )


def _population_ece(design, cond) -> float:
    from bayescal.simulate import toy_population_binned_ece

    edges = np.linspace(0, 1, N_BINS + 1)
    if DESIGNS[design]["sim"] == "toy":
        return float(toy_population_binned_ece(cond, edges))
    return _beta_population_ece(cond, edges)


def _simulate_design(design, cond, n, rng):
    """One data set of a design: Annotations (with gold items when the design has them)."""
    from bayescal.data.container import Annotations
    from bayescal.simulate import simulate_toy
    from bayescal.simulate.flips import simulate_annotations

    spec = DESIGNS[design]
    fp, fn = np.array(spec["fp"]), np.array(spec["fn"])
    if spec["sim"] == "toy":
        d = simulate_toy(n, cond, random_state=rng, fp=fp, fn=fn)
        score, labels, truth = d.score, d.labels, np.asarray(d.truth)
    else:
        score = np.clip(rng.beta(*BETA_SHAPE, n), 1e-6, 1 - 1e-6)
        truth = (rng.random(n) < _beta_curve(cond)(score)).astype(np.int64)
        labels = simulate_annotations(truth, fp, 1 - fn, random_state=rng, missing=BETA_MISSING)
    gold = None
    if spec.get("gold"):
        gold = np.full(n, np.nan)
        pick = rng.choice(n, int(round(spec["gold"] * n)), replace=False)
        gold[pick] = truth[pick]
    names = [f"r{j + 1}" for j in range(fp.size)]
    return Annotations.from_arrays(
        score=score, labels=labels, truth=truth, gold=gold, annotators=names
    )


def _design_fit(summary, args, seed, priors=None):
    from bayescal.bayes.fit import fit_channels_bayes

    return fit_channels_bayes(
        summary,
        "grouped",
        priors=priors,
        draws=args.draws,
        tune=args.tune,
        chains=2,
        cores=1,
        random_state=seed,
        posterior_predictive=False,
        check=False,
    )


def _design_rep(args, design, cond, n, seed):
    """Intervals of one repetition: reported (joint posterior), evaluation-only, full."""
    from bayescal.bayes.priors import ChannelPriors
    from bayescal.metrics.uncertainty import nc_ece_interval
    from bayescal.summaries.summary import summarize

    spec = DESIGNS[design]
    rng = np.random.default_rng(seed)
    edges_g = np.linspace(0, 1, spec["groups"] + 1)
    priors = None
    if spec.get("prior"):
        earlier = _simulate_design(design, cond, spec["prior"], rng)
        fit0 = _design_fit(summarize(earlier, groups=edges_g, bins=N_BINS), args, seed + 1)
        priors = ChannelPriors.from_fit(fit0)
    data = _simulate_design(design, cond, n, rng)
    summary = summarize(data, groups=edges_g, bins=N_BINS)
    fit = _design_fit(summary, args, seed, priors)
    iv = nc_ece_interval(
        summary,
        fit,
        prob=args.prob,
        n_bootstrap=args.n_bootstrap,
        sample_use="joint",
        random_state=seed,
    )
    out = {"estimate": iv.estimate, "divergences": int(fit.diagnostics.get("divergences") or 0)}
    for source in ("posterior", "evaluation", "full"):
        lo, hi = iv.interval(source)
        p = calibration_p_value_of(iv, source)
        out[source] = (lo, hi, p)
    return out


def calibration_p_value_of(iv, source) -> float:
    from bayescal.metrics.uncertainty import calibration_p_value

    return calibration_p_value(iv.center(source), iv.moments[source].values)


_DESIGN_INTERVALS = {"posterior": "reported", "evaluation": "evaluation_only", "full": "full"}


def _joint_rows(keys: dict, ends: dict, pop: float, prob: float) -> list[dict]:
    """One row per interval of a joint-route cell (designs, multiclass populations): coverage
    of ``pop`` and the test's rejection rate, ``ends[source]`` holding ``(lo, hi, p)`` rows."""
    rows = []
    for source, label in _DESIGN_INTERVALS.items():
        lo, hi, p = np.asarray(ends[source], dtype=np.float64).T
        rej = float(np.mean(p <= 1 - prob))
        rows.append(
            {
                **keys,
                "interval": label,
                **interval_coverage(lo, hi, pop),
                "reps": lo.size,
                "test_rejection_rate": rej,
                "test_rejection_se": share_se(rej, lo.size),
                "population_binned_ece": pop,
            }
        )
    return rows


def _design_summary(args, design, cond, n, reps):
    """Coverage, width and test level per interval of one design cell, with Monte Carlo SEs."""
    pop = _population_ece(design, cond)
    keys = {"design": design, "condition": cond, "n": n, "mode": "joint"}
    rows = _joint_rows(keys, {s: [x[s] for x in reps] for s in _DESIGN_INTERVALS}, pop, args.prob)
    est = np.array([x["estimate"] for x in reps])
    cell = {
        "design": design,
        "condition": cond,
        "n": n,
        "population_binned_ece": pop,
        "estimate_bias": float(est.mean() - pop),
        "estimate_rmse": float(np.sqrt(np.mean((est - pop) ** 2))),
        "divergences": int(sum(x["divergences"] for x in reps)),
    }
    return rows, cell


def _cell_key(row: dict) -> tuple:
    return row["design"], row["condition"], row["n"]


_SAVE_EVERY = 10


def _resume(args, state, key, one_rep, merge, protocol, load_start) -> None:
    """Grow cell ``key``'s repetitions to ``--reps`` (their seeds depend only on the index, so
    a cell grown in chunks equals one run in one go). Every ``_SAVE_EVERY`` repetitions and at
    the end ``merge(reps, seconds)`` folds them into ``state`` and the JSON is rewritten: a
    stopped run keeps them, a rerun with the same ``--json`` resumes."""
    reps = state["replicates"].setdefault(key, [])
    t0 = time.perf_counter()
    while len(reps) < args.reps:
        reps.append(one_rep(len(reps)))
        if len(reps) % _SAVE_EVERY and len(reps) < args.reps:
            continue
        merge(reps, time.perf_counter() - t0)
        t0 = time.perf_counter()
        state["protocol"] = protocol()
        state["load_average"] = load_average(load_start)
        state["environment"] = environment()
        write_json(state, args.json_path)


def run_designs(args) -> int:
    """The design cells (:func:`_resume`)."""
    from bayescal.errors import IdentificationWarning

    _check_args(args)
    state: dict = {"results": [], "cells": [], "replicates": {}, **earlier_json(args.json_path)}
    load_start = os.getloadavg()

    def protocol() -> dict:
        names = sorted({k.split("/")[0] for k in state["replicates"]})
        designs = {d: DESIGNS[d] for d in names}
        return _joint_protocol(args, designs=designs, test_level=round(1 - args.prob, 10))

    for design, cond, n in itertools.product(args.designs, args.conditions, args.sizes):
        here = (design, cond, n)
        keys = (args.seed, 1 + list(DESIGNS).index(design), CONDITIONS.index(cond), n)

        def one_rep(r, design=design, cond=cond, n=n, keys=keys):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IdentificationWarning)
                return _design_rep(args, design, cond, n, rep_seed(*keys, r))

        def merge(reps, seconds, here=here):
            rows, cell = _design_summary(args, *here, reps)
            before = [c for c in state["cells"] if _cell_key(c) == here]
            cell["seconds"] = seconds + sum(c["seconds"] for c in before)
            state["results"] = [r for r in state["results"] if _cell_key(r) != here] + rows
            state["cells"] = [c for c in state["cells"] if _cell_key(c) != here] + [cell]
            state["seconds"] = state.get("seconds", 0.0) + seconds

        key = "/".join(str(x) for x in here)
        _resume(args, state, key, one_rep, merge, protocol, load_start)
    return 0


def _joint_protocol(args, **cells) -> dict:
    """The protocol of the joint-route cells (designs and multiclass populations)."""
    return {
        "reps": args.reps,
        **cells,
        "prob": args.prob,
        "evaluation_bins": N_BINS,
        "n_bootstrap": args.n_bootstrap,
        "seed": args.seed,
        "chains": 2,
        "draws": args.draws,
        "tune": args.tune,
        "sample_use": "joint",
    }


# ------------------------------------------------------------------ multiclass (issue 22 item 4)
#: The multiclass cells: ``multiclass_population`` arguments (their seed fixes the
#: profiles and confusions) and the number of items per repetition.
MULTICLASS = {
    "c4-overconfident": {"classes": 4, "temperature": 1.5, "n": 2000},
    "c4-calibrated": {"classes": 4, "temperature": 1.0, "n": 2000},
    "c10-overconfident": {"classes": 10, "temperature": 1.5, "n": 2000},
    "c10-calibrated": {"classes": 10, "temperature": 1.0, "n": 2000},
}
_PARTS = ("top_label", "classwise")


def _multiclass_population(name):
    from bayescal.simulate import multiclass_population

    spec = MULTICLASS[name]
    return multiclass_population(spec["classes"], temperature=spec["temperature"])


def _multiclass_rep(args, name, seed) -> dict:
    """One repetition: the audit's fit (grouped by predicted class) and its joint interval."""
    from bayescal.bayes.fit import fit_channels_bayes
    from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
    from bayescal.simulate import simulate_multiclass
    from bayescal.summaries import summarize_multiclass

    pop = _multiclass_population(name)
    data = simulate_multiclass(MULTICLASS[name]["n"], population=pop, random_state=seed)
    summary = summarize_multiclass(data, groups="predicted", bins=N_BINS)
    fit = fit_channels_bayes(
        summary, draws=args.draws, tune=args.tune, chains=2, cores=1, random_state=seed, check=False
    )
    iv = multiclass_nc_ece_interval(
        summary,
        fit,
        prob=args.prob,
        n_bootstrap=args.n_bootstrap,
        sample_use="joint",
        random_state=seed,
    )
    out: dict = {"divergences": int(fit.diagnostics.get("divergences") or 0)}
    for part_name in _PARTS:
        part = getattr(iv, part_name)
        out[part_name] = {"estimate": part.estimate}
        for source in ("posterior", "evaluation", "full"):
            lo, hi = part.interval(source)
            out[part_name][source] = [lo, hi, part.p_value(source)]
    return out


def _multiclass_rows(args, name, reps) -> tuple[list[dict], dict]:
    pop_ece = _multiclass_population(name).binned_ece(N_BINS)
    rows, cell = [], {"population": name, **MULTICLASS[name], "reps": len(reps)}
    for part_name in _PARTS:
        pop = pop_ece[part_name]
        keys = {"population": name, "error": part_name, "n": MULTICLASS[name]["n"]}
        ends = {s: [x[part_name][s] for x in reps] for s in _DESIGN_INTERVALS}
        rows += _joint_rows(keys, ends, pop, args.prob)
        est = np.array([x[part_name]["estimate"] for x in reps])
        cell[part_name] = {
            "population_binned_ece": pop,
            "estimate_bias": float(est.mean() - pop),
            "estimate_sd": float(est.std()),
        }
    cell["divergences"] = int(sum(x["divergences"] for x in reps))
    return rows, cell


def run_multiclass(args) -> int:
    """The multiclass cells (:func:`_resume`)."""
    from bayescal.errors import ConfigError

    unknown = sorted(set(args.multiclass) - set(MULTICLASS))
    if unknown:
        raise ConfigError(f"unknown --multiclass {unknown}; choose from {sorted(MULTICLASS)}.")
    state: dict = {"results": [], "cells": [], "replicates": {}, "seconds": {}}
    state.update(earlier_json(args.json_path))
    load_start = os.getloadavg()

    def protocol() -> dict:
        populations = {p: MULTICLASS[p] for p in state["replicates"]}
        return _joint_protocol(args, populations=populations, channel_groups="predicted")

    for name in args.multiclass:
        index = list(MULTICLASS).index(name)

        def one_rep(r, name=name, index=index):
            return _multiclass_rep(args, name, rep_seed(args.seed, 7, index, r))

        def merge(reps, seconds, name=name):
            rows, cell = _multiclass_rows(args, name, reps)
            state["results"] = [r for r in state["results"] if r["population"] != name] + rows
            state["cells"] = [c for c in state["cells"] if c["population"] != name] + [cell]
            state["seconds"][name] = state["seconds"].get(name, 0.0) + seconds

        _resume(args, state, name, one_rep, merge, protocol, load_start)
    return 0
