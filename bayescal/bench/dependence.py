"""``bayescal bench dependence``: NC-ECE interval coverage under conditionally dependent annotators.

Two scenarios with the same levels, seeds and statistics. Annotators ``a1`` and ``a2`` share
a latent item difficulty with loading ``s`` in every class (Qu, Tan & Kutner 1996): ``none``
(s = 0), ``moderate`` (s = 1, latent within-class correlation 0.5) and ``strong`` (s = 2,
0.8). Per repetition (seeds fixed) the channels are fitted on the first half of the items,
the NC-ECE interval computed on the second half, once with the independence model's
posterior and once with the dependence model's (pair ``a1:a2``), both sampled by nutpie.

- binary (default): :func:`bayescal.simulate.dependent.simulate_dependent`, the toy study
  (Sec. 6.1, ``--condition``, default ``shifted``) with four annotators (false-positive rates
  0.08, 0.13, 0.18, 0.10; false-negative rates 0.16, 0.11, 0.06, 0.12); channels in five
  equal-width score groups (``grouped``; the dependence model's marginal channels) on the
  hand-written densities (numba kernels compiled once per process and reused);
  :func:`bayescal.nc_ece_interval` (``sample_use="split"``, ten bins). The truth is the
  toy's exact population binned ECE, as in ``bench coverage``.
- ``--multiclass``: :func:`bayescal.simulate.dependent.simulate_multiclass_dependent` on a
  fixed population (:func:`~bayescal.simulate.multiclass.multiclass_population`: C = 3
  classes, four annotators with the default confusions, temperature 1.5, an over-confident
  model); channel groups by predicted class, :func:`~bayescal.bayes.fit.fit_channels_bayes`;
  :func:`~bayescal.metrics.uncertainty.multiclass_nc_ece_interval` (ten bins). The truth is
  the population's exact binned top-label and class-wise ECE
  (:meth:`~bayescal.simulate.multiclass.MulticlassPopulation.binned_ece`): it does not
  involve the annotators.

JSON (``docs/results/dependence.json``, ``dependence_multiclass.json``): ``protocol``;
``cells`` with, per model (and per metric, top-label and class-wise, for the multiclass
scenario), the interval's coverage, its binomial SE, miss rates above/below, mean width, the
estimate's bias; the largest absolute bias of the posterior-mean channels (confusions),
divergences and seconds; the dependence model's posterior mean loadings; load average and
environment.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from bayescal.bench._io import interval_coverage, mean_se, rep_seed, write_run
from bayescal.bench.coverage import _summaries, nuts_settings, posterior_channels

LEVELS = {"none": 0.0, "moderate": 1.0, "strong": 2.0}
FP = (0.08, 0.13, 0.18, 0.10)
FN = (0.16, 0.11, 0.06, 0.12)
PAIR = "a1:a2"
MODELS = ("independent", "dependent")


def add_arguments(parser) -> None:
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=4000, help="items (half channels, half NC-ECE)")
    parser.add_argument("--levels", nargs="+", choices=list(LEVELS), default=list(LEVELS))
    parser.add_argument("--condition", default="shifted")
    parser.add_argument("--draws", type=int, default=300, help="per chain")
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--n-bootstrap", type=int, default=2000)
    parser.add_argument("--prob", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=1515)
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument(
        "--multiclass",
        action="store_true",
        help="the multiclass scenario (C = 3, top-label and class-wise coverage; "
        "docs/results/dependence_multiclass.json)",
    )


def _check_args(args):
    from bayescal.errors import ConfigError

    if args.reps < 2:
        raise ConfigError(f"--reps must be at least 2; got {args.reps}.")
    if args.n < 400:
        raise ConfigError(f"--n must be at least 400 items; got {args.n}.")
    if not 0 < args.prob < 1:
        raise ConfigError(f"--prob must be in (0, 1); got {args.prob}.")


def _fits(summary, settings):
    """Posterior draws of both models on one channel summary: {model: (ChannelFit, stats)}."""
    from bayescal.bayes.dependence import make_dependence_spec
    from bayescal.bayes.dependence_density import DependenceLogDensity
    from bayescal.bayes.dependence_fit import dependence_posterior
    from bayescal.bayes.logdensity import ChannelLogDensity
    from bayescal.bayes.models import make_spec
    from bayescal.bayes.sampling import sample_nutpie

    spec = make_spec(summary, "grouped")
    dspec = make_dependence_spec(spec, PAIR)
    out = {}
    for name in MODELS:
        if name == "independent":
            post, stats, timings = sample_nutpie(ChannelLogDensity(spec), settings)
        else:
            post, stats, timings = sample_nutpie(
                DependenceLogDensity(dspec),
                settings,
                to_posterior=lambda d, x, at: dependence_posterior(dspec, d, x, at),
            )
        method = "bayes_grouped" if name == "independent" else "bayes_dependence"
        fit = posterior_channels(post, spec, method)
        loading = post["loading"].mean(("chain", "draw")).values if name == "dependent" else None
        out[name] = (fit, int(stats["diverging"].sum()), timings, loading)
    return out


def _coverage(lo, hi, estimate, truth: float) -> dict[str, float]:
    """Coverage of one model's intervals ``[lo, hi]`` over repetitions, with its binomial SE,
    the miss rates and the bias of the estimates against ``truth``."""
    cov = interval_coverage(lo, hi, truth)
    est = np.asarray(estimate, dtype=float)
    return {
        **cov,
        "miss_rate": 1 - cov["coverage"],
        "estimate_bias": float(est.mean() - truth),
        "estimate_bias_se": mean_se(est),
    }


def _binary_rep(args, level_s, seed, pop) -> dict:
    """One repetition of the binary scenario: per model, its interval and the error of its
    posterior-mean channels."""
    from bayescal.metrics.uncertainty import nc_ece_interval
    from bayescal.simulate.dependent import simulate_dependent

    data, truth = simulate_dependent(
        args.n, args.condition, loading=level_s, groups=[(0, 1)], fp=FP, fn=FN, random_state=seed
    )
    ch_s, ev_s = _summaries(data, "split")
    settings = nuts_settings(args, seed)
    out = {}
    for name, (fit, div, timings, loading) in _fits(ch_s, settings).items():
        iv = nc_ece_interval(
            ev_s,
            fit,
            prob=args.prob,
            n_bootstrap=args.n_bootstrap,
            sample_use="split",
            random_state=seed,
        )
        out[name] = {
            "interval": {"nc_ece": (*iv.interval(), iv.estimate)},
            "error": np.concatenate(
                [fit.a.mean("draw").values - truth.a, fit.b.mean("draw").values - truth.b]
            ),
            "loading": loading,
            "divergences": div,
            "sampling_seconds": timings["sampling_seconds"],
            "load_seconds": timings["load_seconds"],
        }
    return out


def _binary_models(records, pop) -> dict:
    models = {}
    for name in MODELS:
        lo, hi, est = zip(*(r[name]["interval"]["nc_ece"] for r in records), strict=True)
        bias = np.mean([r[name]["error"] for r in records], axis=0)
        models[name] = {
            **_coverage(lo, hi, est, pop),
            "channel_bias_max_abs": float(np.abs(bias).max()),
            "channel_bias": {"a": bias[: len(FP)].tolist(), "b": bias[len(FP) :].tolist()},
            **_totals(records, name),
        }
    # the kernels compile (or load from the cache) on the first repetition
    load = sum(records[0][m]["load_seconds"] for m in MODELS)
    return {"models": models, "kernel_load_seconds": load}


def _totals(records, name) -> dict:
    """Divergences and sampling seconds of one model over the repetitions."""
    return {
        "divergences": int(sum(r[name]["divergences"] for r in records)),
        "sampling_seconds": float(sum(r[name]["sampling_seconds"] for r in records)),
    }


def _levels(args, one_rep, summarise, truth, ignore) -> list[dict]:
    """One cell per dependence level: ``--reps`` repetitions of ``one_rep(loading, seed)``
    (warnings of class ``ignore`` silenced; divergences are counted), ``summarise``d."""
    cells = []
    for level in args.levels:
        s = LEVELS[level]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ignore)
            seeds = [rep_seed(args.seed, list(LEVELS).index(level), r) for r in range(args.reps)]
            records = [one_rep(s, seed) for seed in seeds]
        summary = summarise(records)
        cells.append(
            {
                "level": level,
                "loading": s,
                "latent_correlation": s**2 / (1 + s**2),
                "n": args.n,
                "reps": args.reps,
                "population_binned_ece": truth,
                "models": summary.pop("models"),
                "dependent_loading_posterior_mean": np.mean(
                    [r["dependent"]["loading"] for r in records], axis=0
                ).tolist(),
                "seconds": time.perf_counter() - t0,
                **summary,
            }
        )
    return cells


CLASSES = 3
N_ANNOTATORS = 4
POPULATION_SEED = 2024
METRICS = ("top_label", "classwise")


def _population():
    from bayescal.simulate.multiclass import multiclass_population

    return multiclass_population(
        CLASSES, n_annotators=N_ANNOTATORS, temperature=1.5, random_state=POPULATION_SEED
    )


def _multiclass_rep(args, level_s, seed, pop):
    from bayescal.bayes.fit import fit_channels_bayes
    from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
    from bayescal.simulate.dependent import simulate_multiclass_dependent

    data, truth = simulate_multiclass_dependent(
        args.n, loading=level_s, groups=[(0, 1)], population=pop, random_state=seed
    )
    half = args.n // 2
    channels, evaluation = data.subset(np.arange(half)), data.subset(np.arange(half, args.n))
    out = {}
    for name in MODELS:
        fit = fit_channels_bayes(
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
        parts = {metric: getattr(iv, metric) for metric in METRICS}
        post = fit.idata.posterior
        loading = post["loading"].mean(("chain", "draw")).values if name == "dependent" else None
        out[name] = {
            "interval": {m: (*part.interval(), part.estimate) for m, part in parts.items()},
            "error": float(np.abs(fit.confusion.values.mean(0) - truth.confusion).max()),
            "loading": loading,
            "divergences": int(fit.idata.sample_stats["diverging"].sum()),
            "sampling_seconds": fit.diagnostics["sampling_seconds"],
        }
    return out


def _multiclass_models(records, truth_ece):
    models = {}
    for name in MODELS:
        entry = {}
        for metric in METRICS:
            lo, hi, est = zip(*(r[name]["interval"][metric] for r in records), strict=True)
            entry[metric] = _coverage(lo, hi, est, truth_ece[metric])
        entry["confusion_bias_max_abs_mean"] = float(np.mean([r[name]["error"] for r in records]))
        models[name] = {**entry, **_totals(records, name)}
    return {"models": models}


def _sampling_protocol(args, sampler: str) -> dict:
    """The protocol entries both scenarios share: sampler settings, bootstrap and seed."""
    return {
        "chains": args.chains,
        "draws": args.draws,
        "tune": args.tune,
        "sampler": sampler,
        "n_bootstrap": args.n_bootstrap,
        "seed": args.seed,
    }


def _run_multiclass(args) -> int:
    """The multiclass scenario (``--multiclass``) at the binary scenario's levels and seeds."""
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    pop = _population()
    truth_ece = pop.binned_ece(10)
    # every warning is a per-fit convergence note; divergences are counted
    cells = _levels(
        args,
        lambda s, seed: _multiclass_rep(args, s, seed, pop),
        lambda records: _multiclass_models(records, truth_ece),
        truth_ece,
        Warning,
    )
    protocol = {
        "track": "multiclass",
        "reps": args.reps,
        "n": args.n,
        "split": "channels on the first half, NC-ECE on the second",
        "levels": {k: LEVELS[k] for k in args.levels},
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
        **_sampling_protocol(
            args, "nutpie (independence: numba density; dependence: numpy density)"
        ),
    }
    write_run(protocol, cells, started=t_start, load_start=load_start, path=args.json_path)
    return 0


def run(args) -> int:
    from bayescal.errors import IdentificationWarning
    from bayescal.simulate import toy_population_binned_ece

    _check_args(args)
    if args.multiclass:
        return _run_multiclass(args)
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    pop = toy_population_binned_ece(args.condition, np.linspace(0, 1, 11))
    cells = _levels(
        args,
        lambda s, seed: _binary_rep(args, s, seed, pop),
        lambda records: _binary_models(records, pop),
        pop,
        IdentificationWarning,
    )
    protocol = {
        "reps": args.reps,
        "n": args.n,
        "split": "channels on the first half, NC-ECE on the second",
        "levels": {k: LEVELS[k] for k in args.levels},
        "condition": args.condition,
        "annotators": {"fp": FP, "fn": FN, "dependent_pair": PAIR},
        "channel_groups": 5,
        "evaluation_bins": 10,
        "prob": args.prob,
        "interval": "reported (split: full = channel draws x item bootstrap)",
        **_sampling_protocol(args, "nutpie on the hand-written densities"),
    }
    write_run(protocol, cells, started=t_start, load_start=load_start, path=args.json_path)
    return 0
