"""``bayescal bench next-annotations``: does following the ranking shrink the interval faster?

Issue 25 item 4. For a simulated binary population (``simulate_toy``, three annotators) and a
multiclass one (``simulate_multiclass``, C = 3), a pilot of ``--n`` items without gold is
audited with the score-bin / Dawid-Skene EM and ``--draws`` Bayesian-bootstrap channel draws
(:func:`bayescal.channels.bootstrap.bootstrap_channels`, so the channel term of the
ranking is present). Then gold labels (the simulation's truth) are added in ``--batches``
of ``--batch`` items, choosing each batch by

- ``ranked``: the top of :func:`bayescal.channels.acquisition.rank_annotation_targets`
  (action ``"gold"``) on the current fit;
- ``uncertain``: the items whose corrected label is least certain (smallest largest class
  posterior);
- ``random``: uniformly among the candidates;

(a baseline's curve stops, NaN, if a score group runs out of unknown items, counted in
``curves_stopped``), and after each batch the channels are refitted (EM and bootstrap,
gold counts included) and the interval width recorded: the delta-method width
``2 z sqrt(V)`` of the NC-ECE linearised at the bin gaps, with the gold items in the
NC-ECE at their known class (so every strategy measures the same items). This is the
quantity the ranking targets; the
audit's bootstrap interval of the corrected-label NC-ECE is not re-measured here.

Reported per population and strategy: the mean width after each batch with its Monte Carlo
standard error over ``--reps`` data sets, and the **items ratio**: the gold items random
choice needs to reach the width the ranking reaches after its ``--batches`` batches
(linear interpolation on random's curve, which runs ``--horizon`` times as many batches;
when it never gets there the ratio is a lower bound, counted in ``lower_bounds``), divided
by the ranking's items; and the width random removes with the same items as a share of the
width the ranking removes.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from bayescal.bench._io import environment, mean_se, write_json
from bayescal.errors import FitError

STRATEGIES = ("ranked", "uncertain", "random")


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=2000, help="pilot items (default 2000)")
    parser.add_argument("--batch", type=int, default=50, help="gold items per batch (default 50)")
    parser.add_argument("--batches", type=int, default=6, help="batches (default 6)")
    parser.add_argument("--reps", type=int, default=8, help="data sets per population (default 8)")
    parser.add_argument(
        "--draws", type=int, default=100, help="bootstrap channel draws per fit (default 100)"
    )
    parser.add_argument(
        "--horizon",
        type=int,
        default=3,
        help="the baselines run this many times the ranking's batches, so their curves can "
        "reach the ranking's final width (default 3)",
    )
    parser.add_argument("--seed", type=int, default=2026, help="base seed (default 2026)")
    parser.add_argument("--json", dest="json_path", default=None, help="write JSON here")


def _population(name: str, n: int, seed: int):
    from bayescal.simulate import simulate_multiclass, simulate_toy

    if name == "binary":
        return simulate_toy(n, random_state=seed)
    return simulate_multiclass(n, 3, random_state=seed)


def _with_gold(data, gold_index: np.ndarray):
    from bayescal.data.container import Annotations

    gold = np.full(data.n_items, np.nan)
    gold[gold_index] = data.truth[gold_index]
    first = data.probs[:, 1] if data.n_classes == 2 else data.probs
    return Annotations.from_arrays(first, data.labels, annotators=list(data.annotators), gold=gold)


def _fit(data, draws: int, seed: int):
    from bayescal import fit_channels, summarize
    from bayescal.channels.bootstrap import bootstrap_channels

    s = summarize(data)
    return s, bootstrap_channels(s, fit_channels(s), n_draws=draws, random_state=seed)


def _choose(strategy, data, fit, s, batch, rng):
    from bayescal.channels.acquisition import rank_annotation_targets
    from bayescal.channels.items import item_posteriors

    if strategy == "ranked":
        return rank_annotation_targets(data, fit, s, gold_in_ece=True).index[:batch]
    post = item_posteriors(data, fit, s)
    candidates = np.flatnonzero(~post.gold & ~post.unanswered)
    if strategy == "uncertain":
        top = post.probability[candidates].max(axis=1)
        return candidates[np.argsort(top, kind="stable")[:batch]]
    return rng.choice(candidates, size=batch, replace=False)


def _width(data, fit, s) -> float:
    from bayescal.channels.acquisition import rank_annotation_targets

    return rank_annotation_targets(data, fit, s, gold_in_ece=True).width


def _curve(strategy, truth_data, args, seed, n_batches) -> list[float]:
    rng = np.random.default_rng(seed + 7)
    gold = np.zeros(0, dtype=np.int64)
    data = truth_data
    s, fit = _fit(data, args.draws, seed)
    widths = [_width(data, fit, s)]
    for b in range(n_batches):
        pick = _choose(strategy, data, fit, s, args.batch, rng)
        gold = np.concatenate([gold, np.asarray(pick, dtype=np.int64)])
        data = _with_gold(truth_data, gold)
        try:
            s, fit = _fit(data, args.draws, seed + 1 + b)
        except FitError:  # a score group left without unknown items: its prevalence is gone
            return widths + [np.nan] * (n_batches - b)
        widths.append(_width(data, fit, s))
    return widths


def _items_ratio(ranked: np.ndarray, random: np.ndarray, batch: int) -> tuple[float, bool]:
    """Random's items for ranked's final width / ranked's items (and whether it is a bound:
    random's curve never reached it, so the ratio is at least the value returned)."""
    k = len(ranked) - 1
    target = ranked[-1]
    items = np.arange(len(random)) * batch
    below = np.flatnonzero(random <= target)
    if below.size == 0:
        return float(items[-1] / (k * batch)), True
    j = int(below[0])
    if j == 0:
        return 0.0, False
    frac = (random[j - 1] - target) / (random[j - 1] - random[j])
    return float((items[j - 1] + frac * batch) / (k * batch)), False


def _ratio_summary(ranked, other, batch: int) -> dict:
    """:func:`_items_ratio` of a baseline over the data sets: mean, MC SE, lower bounds."""
    ratios = [_items_ratio(r, q, batch) for r, q in zip(ranked, other)]
    vals = np.array([r for r, _ in ratios])
    return {
        "mean": float(vals.mean()),
        "mc_se": mean_se(vals),
        "lower_bounds": int(sum(b for _, b in ratios)),
    }


def run(args) -> int:
    from scipy.stats import norm

    started = time.perf_counter()
    out: dict = {}
    for population in ("binary", "multiclass"):
        curves: dict[str, list[list[float]]] = {name: [] for name in STRATEGIES}
        for rep in range(args.reps):
            seed = args.seed + 100 * rep
            truth_data = _population(population, args.n, seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for name in STRATEGIES:
                    n_batches = args.batches * (1 if name == "ranked" else args.horizon)
                    curves[name].append(_curve(name, truth_data, args, seed, n_batches))
        arr = {k: np.asarray(v) for k, v in curves.items()}
        k = args.batches
        failed = {name: int(np.isnan(a).any(axis=1).sum()) for name, a in arr.items()}
        diff = arr["ranked"][:, -1] - arr["random"][:, k]
        # share of the width removed by random vs by the ranking, at the same gold items
        removed = (arr["random"][:, 0] - arr["random"][:, k]) / (
            arr["ranked"][:, 0] - arr["ranked"][:, k]
        )
        out[population] = {
            "gold_items": [args.batch * i for i in range(args.batches * args.horizon + 1)],
            "curves_stopped": failed,
            "width_mean": {k: np.nanmean(a, axis=0).tolist() for k, a in arr.items()},
            "width_mc_se": {
                k: (np.nanstd(a, axis=0, ddof=1) / np.sqrt(len(a))).tolist() for k, a in arr.items()
            },
            **{
                f"items_ratio_{b}_vs_ranked": _ratio_summary(arr["ranked"], arr[b], args.batch)
                for b in ("random", "uncertain")
            },
            "width_removed_random_over_ranked": {
                "mean": float(removed.mean()),
                "mc_se": mean_se(removed),
            },
            "final_width_ranked_minus_random": {"mean": float(diff.mean()), "mc_se": mean_se(diff)},
            "ranking_beats_random": bool(diff.mean() + norm.ppf(0.975) * mean_se(diff) < 0),
            "widths": {k: a.tolist() for k, a in arr.items()},
        }
    result = {
        "benchmark": "next-annotations",
        "command": "bayescal bench next-annotations "
        f"--n {args.n} --batch {args.batch} --batches {args.batches} --reps {args.reps} "
        f"--draws {args.draws} --horizon {args.horizon} --seed {args.seed}",
        "setup": {
            "pilot_items": args.n,
            "batch": args.batch,
            "batches": args.batches,
            "reps": args.reps,
            "bootstrap_draws": args.draws,
            "width": "delta-method 90% width 2 z sqrt(V) of the linearised NC-ECE, gold items "
            "in it at their known class, after refitting EM + bootstrap channels",
            "populations": {
                "binary": "simulate_toy (K = 3)",
                "multiclass": "simulate_multiclass(C = 3)",
            },
        },
        "populations": out,
        "seconds": time.perf_counter() - started,
        "environment": environment(),
    }
    write_json(result, args.json_path)
    return 0
