"""``bayescal bench channels``: Dawid–Skene EM for any number of classes, bayescal vs
crowd-kit, and the coverage of the Bayesian confusion posterior.

Three modes of one benchmark (the old names ``bench multiclass-channels`` and ``bench
multiclass-priors`` run the second and third):

- default: binary flip annotators, the marginal channels ``a_j``, ``b_j``;
- ``--multiclass``: C classes (``--classes``, default 4), confusion matrices;
- ``--priors``: frequentist coverage of the multiclass posterior's confusion diagonal.

An option of one mode only is refused in another (:func:`bayescal.bench._io.mode_defaults`).
Both EM modes time the same steps with the same code: container from numpy arrays +
one-pass summary + EM with 10 starts (``_ours``), crowd-kit's ``DawidSkene`` on the same
answers in its native long format (``_crowdkit``, our orientation rule applied to its
result: the relabelling that maximises annotator 0's diagonal, which for C = 2 is
``a_1 < b_1``), a cold run and the best of ``--repeats`` warm runs per side (``_timed``) and
one report of each crowd-kit run against ours and the truth (``_peer_report``).

**The data.** Binary (default): K flip annotators on n items. Multiclass (``--multiclass``):
n items, K annotators and C classes (:func:`bayescal.simulate.simulate_multiclass`, default
diagonally dominant confusions); our side's summary then includes the calibration bin cells
and the EM is the pooled multiclass one. Generation is excluded from timing.

**Convergence.** crowd-kit stops when its per-answer ELBO rises by less than ``tol``; that
ELBO is not monotone in its iterations, so even ``tol=1e-8`` stops after a handful of
iterations, about 2e-3 away from the maximum likelihood (binary, measured at n = 1e5). To run
it to the same convergence as ours, the timed runs disable that rule (``tol=-inf``) and take
``--crowdkit-iter`` iterations (default 50 binary, 100 multiclass), and the JSON records the
last change of its ELBO to show where it stopped. Its default settings (``n_iter=100,
tol=1e-5``) are run once and reported too, with their errors (multiclass: with
``speedup_vs_crowdkit_default``; binary: also ``tol=1e-8``). Its latent classes are anchored
to the labels by its majority-vote start; our orientation rule is applied to its result
before comparing. ``max_abs_diff_vs_crowdkit`` is the largest difference between the two
sides' confusion entries.

**Timing** compares like with like: each side's first call in the process is reported
separately (``*_cold_seconds``: one-off costs such as xarray's and pandas' lazy imports,
caches), and the headline ``bayescal_seconds``, ``crowdkit_seconds`` and ``speedup``
(crowd-kit's time over ours) are warm, the best of ``--repeats`` further calls on the same
answers (best, because on a shared machine the fastest run is the least disturbed);
``speedup_cold`` compares the cold runs.

**Priors** (``--priors``). Issue 22 item 3. The truth is *not* drawn from the prior: each of K
annotators has
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
  diagonal entries (the check's quantities), and the fit's worst over all entries;
- ``gradient_evaluations`` / ``tuning_gradient_evaluations``: the sampler's leapfrog steps
  over every chain, kept draws and tuning (its work, unlike ``seconds`` not stretched by the
  machine's load).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from bayescal.bench._io import environment, mode_defaults, share_se, write_json
from bayescal.bench.evidence import digits_annotations, digits_confusions
from bayescal.errors import ConfigError

if TYPE_CHECKING:
    from bayescal.data.container import Annotations

DEFAULT_A = (0.08, 0.13, 0.18, 0.10, 0.22, 0.05)
DEFAULT_B = (0.84, 0.89, 0.94, 0.80, 0.91, 0.75)
#: option -> {mode: default}; see :func:`bayescal.bench._io.mode_defaults`
MODE_DEFAULTS: dict[str, dict[str, object]] = {
    "n": {"binary": 100_000, "multiclass": 100_000},
    "missing": {"binary": 0.0, "multiclass": 0.0},
    "peer": {"binary": "crowdkit", "multiclass": "crowdkit"},
    "crowdkit_iter": {"binary": 50, "multiclass": 100},
    "repeats": {"binary": 5, "multiclass": 3},
    "classes": {"multiclass": [4], "priors": [3, 10]},
    "per_class": {"priors": [90]},
    "acc_low": {"priors": 0.6},
    "acc_high": {"priors": 0.95},
    "reps": {"priors": 2},
    "draws": {"priors": 300},
    "tune": {"priors": 600},
    "chains": {"priors": 2},
    "off_diagonal": {"priors": 0.0},
    "errors": {"priors": "dirichlet"},
    "design": {"priors": "grid"},
    "split": {"priors": 0.0},
}


def add_arguments(parser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--multiclass",
        action="store_true",
        help="C classes with confusion matrices (formerly bench multiclass-channels)",
    )
    mode.add_argument(
        "--priors",
        action="store_true",
        help="coverage of the multiclass posterior's confusion diagonal (formerly bench "
        "multiclass-priors)",
    )
    parser.add_argument("--k", type=int, default=3, help="annotators (default 3; binary 3..6)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")
    parser.add_argument("--n", type=int, help="EM modes: items (default 100000)")
    parser.add_argument(
        "--missing", type=float, help="EM modes: probability an answer is missing (default 0)"
    )
    parser.add_argument("--peer", choices=["crowdkit", "none"], help="EM modes (default crowdkit)")
    parser.add_argument(
        "--crowdkit-iter",
        type=int,
        help="EM modes: iterations of the timed crowd-kit runs (default 50 binary, 100 multiclass)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        help="EM modes: warm runs per side after the cold one, best kept (default 5 binary, "
        "3 multiclass)",
    )
    parser.add_argument(
        "--classes",
        type=int,
        nargs="+",
        help="--multiclass: the number of classes (one value, default 4); --priors: class "
        "counts (default 3 10)",
    )
    parser.add_argument("--per-class", type=int, nargs="+", help="--priors: items per class (90)")
    parser.add_argument("--acc-low", type=float, help="--priors: lowest accuracy (0.6)")
    parser.add_argument("--acc-high", type=float, help="--priors: highest accuracy (0.95)")
    parser.add_argument("--reps", type=int, help="--priors: repetitions per cell (2)")
    parser.add_argument("--draws", type=int, help="--priors: draws per chain (300)")
    parser.add_argument("--tune", type=int, help="--priors: tuning steps (600)")
    parser.add_argument("--chains", type=int, help="--priors: chains (2)")
    parser.add_argument(
        "--errors",
        choices=ERROR_SPLITS,
        help="--priors: how each true row's errors are spread over the wrong answers: "
        "'dirichlet' a Dirichlet(1) draw per row, 'neighbours' half to each neighbouring "
        "class (y - 1, y + 1 mod C; every other share 0), 'equal' evenly (default dirichlet)",
    )
    parser.add_argument(
        "--design",
        choices=("grid", "digits"),
        help="--priors: 'grid' the simulated --classes x --per-class cells (default), "
        "'digits' issue 22's example (899 scikit-learn digits, annotators 0.9 / 0.8 / 0.7, "
        "errors spread evenly; --reps annotation draws)",
    )
    parser.add_argument(
        "--split",
        type=float,
        help="--priors: concentration of each wrong answer's share of a row's errors "
        "(default 0: the package default, 0.5)",
    )
    parser.add_argument(
        "--shares",
        choices=("pooled", "even"),
        default="pooled",
        help="--priors: centre of the wrong answers' shares: the package default 'pooled' "
        "(half even, half the start fit's errors pooled over the other annotators) or 'even' "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--off-diagonal",
        type=float,
        help="--priors: Dirichlet concentration of each off-diagonal confusion entry "
        "(default 0: the package default, nested rows T[y, y] ~ Beta(2, 1) with "
        "Dirichlet shares of the wrong answers of total 0.5 (C - 1), see --shares)",
    )


def _mode(args) -> str:
    return "priors" if args.priors else "multiclass" if args.multiclass else "binary"


def run(args) -> int:
    mode = _mode(args)
    mode_defaults(args, mode, MODE_DEFAULTS)
    if mode == "priors":
        return _run_priors(args)
    _check_em_args(args, mode)
    return _run_em(args, mode)


def _check_em_args(args, mode: str) -> None:
    if mode == "binary" and not 3 <= args.k <= len(DEFAULT_A):
        raise ConfigError(f"--k must be between 3 and {len(DEFAULT_A)}; got {args.k}.")
    if args.k < 3:
        raise ConfigError(f"--k must be at least 3 (identification, SPEC §3); got {args.k}.")
    if mode == "multiclass" and (len(args.classes) != 1 or args.classes[0] < 2):
        raise ConfigError(f"--classes takes one number >= 2 with --multiclass; got {args.classes}.")
    if args.n < 10:
        raise ConfigError(f"--n must be at least 10; got {args.n}.")
    if args.repeats < (1 if mode == "binary" else 0) or args.crowdkit_iter < 1:
        least = 1 if mode == "binary" else 0
        raise ConfigError(f"--repeats must be >= {least} and --crowdkit-iter >= 1.")


def _ours(scores, labels, seed: int, multiclass: bool) -> dict:
    """bayescal's side, timed step by step: container, summary, EM (10 starts)."""
    from bayescal import Annotations, summarize
    from bayescal.channels.em import dawid_skene_em
    from bayescal.summaries import summarize_multiclass

    t0 = time.perf_counter()
    data = Annotations.from_arrays(scores, labels)
    t1 = time.perf_counter()
    if multiclass:
        summary = summarize_multiclass(data, groups="all")
        t2 = time.perf_counter()
        fit = dawid_skene_em(summary, prevalence="grouped", random_state=seed)
    else:
        summary = summarize(data, groups=1)
        t2 = time.perf_counter()
        fit = dawid_skene_em(summary, random_state=seed)
    t3 = time.perf_counter()
    return {
        "seconds": t3 - t0,
        "breakdown": {"container": t1 - t0, "summarize": t2 - t1, "em": t3 - t2},
        "fit": fit,
        "n_patterns": summary.n_patterns,
    }


def _long_frame(labels):
    import pandas as pd

    rows, cols = np.nonzero(~np.isnan(labels))
    return pd.DataFrame({"task": rows, "worker": cols, "label": labels[rows, cols].astype(int)})


def _crowdkit(frame, k: int, c: int, *, tol: float, n_iter: int) -> dict:
    """crowd-kit's ``DawidSkene`` on the long frame: confusions (K, C, C), in our orientation."""
    from crowdkit.aggregation import DawidSkene

    from bayescal.channels.orientation import dominant_diagonal_permutation, relabel_classes

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # crowd-kit calls pandas APIs that pandas 3 deprecates; those warnings are about the
        # peer, not about this comparison.
        warnings.filterwarnings("ignore", module="crowdkit")
        model = DawidSkene(n_iter=n_iter, tol=tol).fit(frame)
    seconds = time.perf_counter() - t0
    err, priors = model.errors_, model.priors_  # errors_: rows (worker, observed), columns
    if err is None or priors is None:  # true label: P(observed | true); set by every fit
        raise TypeError("crowd-kit's DawidSkene.fit left no errors_ / priors_")
    t = np.zeros((k, c, c))
    for (worker, answered), row in err.iterrows():
        for true, value in row.items():
            t[int(worker), int(true), int(answered)] = value
    prior = np.array([[float(priors.get(y, 0.0)) for y in range(c)]])
    t, prior = relabel_classes(t, prior, dominant_diagonal_permutation(t[0]))
    hist = model.loss_history_
    return {
        "seconds": seconds,
        "confusion": t,
        "prevalence": prior[0],
        "iterations": len(hist),
        "last_elbo_change": abs(hist[-1] - hist[-2]) if len(hist) > 1 else None,
    }


def _timed(run: Callable[[], dict], repeats: int) -> tuple[dict, dict, list[float]]:
    """Cold run, then the best of ``repeats`` warm runs: (cold, best, warm seconds)."""
    cold = run()
    warm = [run() for _ in range(repeats)]
    best = min(warm, key=lambda r: r["seconds"]) if warm else cold
    return cold, best, [r["seconds"] for r in warm]


def _peer_report(r: dict, ours: np.ndarray, truth: np.ndarray) -> dict:
    """One crowd-kit run against our confusions and the truth (largest entry differences)."""
    return {
        "seconds": r["seconds"],
        "iterations_used": r["iterations"],
        "last_elbo_change": r["last_elbo_change"],
        "max_abs_diff_vs_bayescal": float(np.abs(r["confusion"] - ours).max()),
        "max_abs_error_vs_truth": float(np.abs(r["confusion"] - truth).max()),
    }


def _binary_confusion(a, b) -> np.ndarray:
    """(K, 2, 2) confusions of flip channels ``a_j = P(1 | 0)``, ``b_j = P(1 | 1)``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.stack([np.stack([1 - a, a], -1), np.stack([1 - b, b], -1)], 1)


def _simulate(args, mode: str):
    """(scores, labels, true confusions (K, C, C), population or None), generation timed apart."""
    if mode == "binary":
        from bayescal.simulate import simulate_annotations

        a_true, b_true = np.array(DEFAULT_A[: args.k]), np.array(DEFAULT_B[: args.k])
        rng = np.random.default_rng(args.seed)
        z = rng.random(args.n)
        y = (rng.random(args.n) < z).astype(np.int8)
        labels = simulate_annotations(y, a_true, b_true, random_state=rng, missing=args.missing)
        return z, labels, _binary_confusion(a_true, b_true), None
    from bayescal.simulate import multiclass_population, simulate_multiclass

    pop = multiclass_population(
        args.classes[0], n_annotators=args.k, missing=args.missing, random_state=args.seed
    )
    data = simulate_multiclass(args.n, population=pop, random_state=args.seed + 1)
    return data.probs, data.labels, pop.confusion, pop


def _all_seconds(multiclass: bool, side: str, cold: dict, warm: list[float]) -> dict:
    """The per-run seconds under each mode's JSON key: the multiclass layout lists the cold run
    too (``{side}_all_seconds``), the binary one the warm runs (``{side}_warm_all_seconds``)."""
    if multiclass:
        return {f"{side}_all_seconds": [cold["seconds"], *warm]}
    return {f"{side}_warm_all_seconds": warm}


def _run_em(args, mode: str) -> int:
    multiclass = mode == "multiclass"
    load_at_start = list(os.getloadavg())
    t0 = time.perf_counter()
    scores, labels, truth, pop = _simulate(args, mode)
    generate_seconds = time.perf_counter() - t0
    cold, best, warm = _timed(lambda: _ours(scores, labels, args.seed, multiclass), args.repeats)
    fit = best["fit"]  # EM from a fixed seed: every run gives the same fit
    t_hat = fit.confusion.values[0]
    prev_hat = fit.class_prevalence.values[0, 0]
    if multiclass:
        result = _multiclass_result(args, best, t_hat, truth, pop, prev_hat)
    else:
        result = _binary_result(args, fit, truth)
    result.update(
        generate_seconds=generate_seconds,
        bayescal_seconds=best["seconds"],
        bayescal_cold_seconds=cold["seconds"],
        bayescal_breakdown=best["breakdown"],
        **_all_seconds(multiclass, "bayescal", cold, warm),
        crowdkit_seconds=None,
        crowdkit_cold_seconds=None,
        speedup=None,
        speedup_cold=None,
        max_abs_diff_vs_crowdkit=None,
        crowdkit_settings=None,
        crowdkit_default_settings=None,
    )
    if multiclass:
        result.update(speedup_vs_crowdkit_default=None, load_average_at_start=load_at_start)
    result["environment"] = environment()
    if args.peer == "crowdkit":
        c = truth.shape[-1]
        frame = _long_frame(labels)
        ck_cold, ck, ck_warm = _timed(
            lambda: _crowdkit(frame, args.k, c, tol=-np.inf, n_iter=args.crowdkit_iter),
            args.repeats,
        )

        def report(r):
            out = _peer_report(r, t_hat, truth)
            if multiclass:  # the binary layout has no prevalence entries
                out["prevalence_max_abs_diff_vs_bayescal"] = float(
                    np.abs(r["prevalence"] - prev_hat).max()
                )
            return out

        default = _crowdkit(frame, args.k, c, tol=1e-5, n_iter=100)
        result.update(
            crowdkit_seconds=ck["seconds"],
            crowdkit_cold_seconds=ck_cold["seconds"],
            **_all_seconds(multiclass, "crowdkit", ck_cold, ck_warm),
            speedup=ck["seconds"] / best["seconds"],
            speedup_cold=ck_cold["seconds"] / cold["seconds"],
            max_abs_diff_vs_crowdkit=report(ck)["max_abs_diff_vs_bayescal"],
            crowdkit_max_abs_error_vs_truth=report(ck)["max_abs_error_vs_truth"],
            crowdkit_settings={"tol": "-inf (rule disabled)", "n_iter": args.crowdkit_iter}
            | report(ck),
            crowdkit_default_settings={"tol": 1e-5, "n_iter": 100} | report(default),
        )
        if multiclass:
            result["speedup_vs_crowdkit_default"] = default["seconds"] / best["seconds"]
        else:
            tight = _crowdkit(frame, args.k, c, tol=1e-8, n_iter=10_000)
            result["crowdkit_tol_1e8_settings"] = {"tol": 1e-8, "n_iter": 10_000} | report(tight)
    if multiclass:
        result["load_average_at_end"] = list(os.getloadavg())
    write_json(result, args.json_path)
    return 0


def _binary_result(args, fit, truth: np.ndarray) -> dict:
    a_hat, b_hat = fit.a.values[0], fit.b.values[0]
    a_true, b_true = truth[:, 0, 1], truth[:, 1, 1]
    return {
        "n": args.n,
        "K": args.k,
        "seed": args.seed,
        "missing": args.missing,
        "repeats": args.repeats,
        "bayescal_a": a_hat,
        "bayescal_b": b_hat,
        "true_a": a_true,
        "true_b": b_true,
        "max_abs_error_vs_truth": float(
            max(np.abs(a_hat - a_true).max(), np.abs(b_hat - b_true).max())
        ),
    }


def _multiclass_result(args, best, t_hat, truth, pop, prev_hat) -> dict:
    return {
        "n": args.n,
        "K": args.k,
        "C": args.classes[0],
        "seed": args.seed,
        "missing": args.missing,
        "n_patterns": best["n_patterns"],
        "bayescal_em_iterations": best["fit"].diagnostics["iterations"],
        "bayescal_loglik": best["fit"].loglik,
        "true_confusion": truth,
        "bayescal_confusion": t_hat,
        "max_abs_error_vs_truth": float(np.abs(t_hat - truth).max()),
        "prevalence_max_abs_error_vs_truth": float(np.abs(prev_hat - pop.prevalence).max()),
    }


#: ``--errors``: how the true rows' errors are spread (``true_confusions``).
ERROR_SPLITS = ("dirichlet", "neighbours", "equal")


def true_confusions(
    n_classes: int,
    accuracies: np.ndarray,
    rng: np.random.Generator,
    errors: str = "dirichlet",
) -> np.ndarray:
    """(K, C, C) rows with diagonal ``accuracies[j]`` and the errors spread by ``errors``:
    a Dirichlet(1) draw per row, half to each neighbouring class, or evenly."""
    if errors not in ERROR_SPLITS:
        raise ConfigError(f"errors must be one of {ERROR_SPLITS}; got {errors!r}.")
    k = accuracies.size
    out = np.empty((k, n_classes, n_classes))
    for j in range(k):
        for y in range(n_classes):
            if errors == "neighbours":  # y - 1 and y + 1 (the same class when C = 2)
                out[j, y] = 0.0
                for nb in ((y - 1) % n_classes, (y + 1) % n_classes):
                    out[j, y, nb] += 0.5 * (1.0 - accuracies[j])
                out[j, y, y] = accuracies[j]
                continue
            if errors == "dirichlet":
                split = rng.dirichlet(np.ones(n_classes - 1))
            else:
                split = np.full(n_classes - 1, 1.0 / (n_classes - 1))
            out[j, y] = np.insert(split * (1.0 - accuracies[j]), y, accuracies[j])
    return out


def simulate_answers(
    confusion: np.ndarray, per_class: int, rng: np.random.Generator
) -> Annotations:
    """Exactly ``per_class`` items of every class; answers ``A_j ~ T_j[Y, .]``."""
    from bayescal.data.container import Annotations

    k, c, _ = confusion.shape
    y = np.repeat(np.arange(c), per_class)
    cum = np.cumsum(confusion[:, y, :], axis=-1)  # (K, n, C)
    u = rng.random((k, y.size, 1))
    answers = np.minimum((u > cum).sum(-1), c - 1).T.astype(np.float64)  # (n, K)
    probs = np.full((y.size, c), 1.0 / c)  # scores do not enter the pooled channel fit
    return Annotations.from_arrays(probs, answers)


def _diagonal(x: np.ndarray) -> np.ndarray:
    """(..., K, C, C) -> (..., K, C)."""
    return np.diagonal(x, axis1=-2, axis2=-1)


def one_fit(
    n_classes: int, per_class: int, accuracies: np.ndarray, args: argparse.Namespace, seed: int
) -> dict:
    """One simulated design: exactly ``per_class`` items of each class (``true_confusions``)."""
    from bayescal.summaries import summarize_multiclass

    rng = np.random.default_rng(seed)
    truth = true_confusions(n_classes, accuracies, rng, args.errors)
    summary = summarize_multiclass(simulate_answers(truth, per_class, rng), groups="all")
    return score_fit(summary, truth, args, seed)


def digits_fit(args: argparse.Namespace, seed: int) -> dict:
    """Issue 22's example: scikit-learn's 899 test digits, three simulated annotators with
    accuracies 0.9 / 0.8 / 0.7 and evenly spread errors (``bench evidence``'s digits)."""
    from bayescal.summaries import summarize_multiclass

    data = digits_annotations(np.random.default_rng(seed))
    return score_fit(summarize_multiclass(data, groups="all"), digits_confusions(), args, seed)


def score_fit(summary, truth: np.ndarray, args: argparse.Namespace, seed: int) -> dict:
    """The pooled Bayesian fit of ``summary`` scored against the true confusions."""
    import arviz as az

    from bayescal.bayes.fit import fit_channels_bayes
    from bayescal.bayes.priors import ChannelPriors
    from bayescal.channels.em import dawid_skene_em

    n_classes = truth.shape[-1]
    em = dawid_skene_em(summary, prevalence="grouped", random_state=seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence problems are reported below
        options = {"off_diagonal": args.off_diagonal, "split": args.split}
        options = {key: value for key, value in options.items() if value > 0}
        priors = ChannelPriors(options, family="dirichlet", shares=args.shares)
        fit = fit_channels_bayes(
            summary,
            model="marginal",
            priors=priors,
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
    entries = post.reshape(-1, *post.shape[2:])  # every entry, (draws, K, C, C)
    e_lo, e_hi = np.quantile(entries, [0.05, 0.95], axis=0)
    # wrong answers the true rows give (a true 0 lies outside every continuous posterior's
    # central interval, so the 'neighbours' design's zeros are left out of the coverage)
    off = ~np.eye(n_classes, dtype=bool)[None].repeat(truth.shape[0], 0)
    off_covered = ((e_lo <= truth) & (truth <= e_hi))[off & (truth > 0)]
    return {
        "seed": seed,
        "covered": ((lo <= true_d) & (true_d <= hi)).ravel().tolist(),
        "off_covered": off_covered.tolist(),
        "off_abs_error": float(np.abs(entries.mean(0) - truth)[off].mean()),
        "em_off_abs_error": float(np.abs(em.confusion.values[0] - truth)[off].mean()),
        "within": (np.abs(mean - em_d) <= 1.5 * sd).ravel().tolist(),
        "bias": (mean - true_d).ravel().tolist(),
        "em_bias": (em_d - true_d).ravel().tolist(),
        "rhat_diag_max": float(az.rhat(ds)["d"].max()),
        "ess_bulk_diag_min": float(az.ess(ds)["d"].min()),
        "rhat_all_max": fit.diagnostics.get("rhat_max"),
        "ess_bulk_all_min": fit.diagnostics.get("ess_bulk_min"),
        "mean_tree_depth": float(idata["sample_stats"]["tree_depth"].mean()),
        "gradient_evaluations": fit.diagnostics.get("gradient_evaluations"),
        "tuning_gradient_evaluations": fit.diagnostics.get("tuning_gradient_evaluations"),
        "seconds": seconds,
    }


def _total(counts) -> int | None:
    """The sum of the fits' counts, None when a fit did not count (PyMC's sampler)."""
    counts = list(counts)
    return None if any(c is None for c in counts) else int(sum(counts))


def _share(flags: list[bool]) -> dict:
    p = float(np.mean(flags))
    return {"value": p, "mc_se": share_se(p, len(flags)), "n": len(flags)}


def _run_priors(args: argparse.Namespace) -> int:
    if args.k < 2 or args.reps < 1 or min(args.classes) < 3:
        raise ConfigError("--k must be >= 2, --reps >= 1 and every --classes >= 3.")
    if not 0 < args.acc_low <= args.acc_high < 1:
        raise ConfigError("accuracies need 0 < --acc-low <= --acc-high < 1.")
    accuracies = np.linspace(args.acc_high, args.acc_low, args.k)
    designs: list[tuple[str, int, int | None]] = (
        [("digits", 10, None)]
        if args.design == "digits"
        else [("grid", c, n) for c in args.classes for n in args.per_class]
    )
    cells = []
    for design, c, per_class in designs:
        fits = [
            digits_fit(args, args.seed + r)
            if per_class is None
            else one_fit(c, per_class, accuracies, args, args.seed + 1000 * c + r)
            for r in range(args.reps)
        ]
        cells.append(
            {
                "design": design,
                "classes": c,
                "per_class": per_class,
                "reps": args.reps,
                "coverage": _share(sum((f["covered"] for f in fits), [])),
                "within_1p5_sd_of_em": _share(sum((f["within"] for f in fits), [])),
                "coverage_off_diagonal": _share(sum((f["off_covered"] for f in fits), [])),
                "off_diagonal_mean_abs_error": float(np.mean([f["off_abs_error"] for f in fits])),
                "em_off_diagonal_mean_abs_error": float(
                    np.mean([f["em_off_abs_error"] for f in fits])
                ),
                "bias": float(np.mean(sum((f["bias"] for f in fits), []))),
                "em_bias": float(np.mean(sum((f["em_bias"] for f in fits), []))),
                "rhat_diag_max": max(f["rhat_diag_max"] for f in fits),
                "ess_bulk_diag_min": min(f["ess_bulk_diag_min"] for f in fits),
                "rhat_all_max": max(f["rhat_all_max"] or np.nan for f in fits),
                "ess_bulk_all_min": min(f["ess_bulk_all_min"] or np.nan for f in fits),
                "mean_tree_depth": float(np.mean([f["mean_tree_depth"] for f in fits])),
                # leapfrog steps of every chain, kept draws and tuning (the sampler's work,
                # independent of the machine's load, unlike seconds)
                "gradient_evaluations": _total(f["gradient_evaluations"] for f in fits),
                "tuning_gradient_evaluations": _total(
                    f["tuning_gradient_evaluations"] for f in fits
                ),
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
            "design": args.design,
            "errors": args.errors,
            "split": args.split or "default: 0.5",
            "shares": args.shares,
            "off_diagonal": args.off_diagonal
            or "default: nested rows, Beta(2, 1) diagonal, Dirichlet shares of total 0.5 (C - 1)",
            "seed": args.seed,
        },
        "accuracies": accuracies.tolist(),
        "cells": cells,
        "load_average_at_end": list(os.getloadavg()),
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
