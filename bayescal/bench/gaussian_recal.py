"""``bayescal bench gaussian-recal``: the Gaussian recalibration study of Appendix G.2.

Protocol: ``P(Y = 1) = 1/2``, ``X | Y = 1 ~ N(-1, 1)``, ``X | Y = 0 ~ N(1, 1)``,
``Z = sigmoid(0.3 - X)`` so ``m(z) = sigmoid(2 logit(z) - 0.6)``; two annotators with
(FP, FN) = (0.05, 0.25) and (0.05, 0.05). Each total size n in {1500, 3000, 6000,
12000} is split into equal independent thirds (channel fitting / recalibration /
test); 60 repetitions.

- Channels: two-group constrained GMM on the channel third, groups split at the
  population score median ``sigmoid(0.3)``, four starts.
- Targets on the recalibration third: Corrected (shrunk plug-in IV weights,
  ``lam = DEFAULT_SHRINKAGE``), Naive (mean annotation), Clean (true ``Y``).
- Maps: temperature (``T`` in [0.05, 20]), Platt (``u`` in [0, 10], ``v`` in
  [-10, 10]), histogram with ``J = round(n_rec^(1/3))`` bins at the *population*
  score quantiles. ``n_rec = n / 3`` is the recalibration third, as in the paper
  (at n = 12000, ``J = round(4000^(1/3)) = 16``).
- Metrics on the test third (``n_ev = n / 3``), bins ``M = round(n_ev^(1/3))``
  equal-width on ``g(Z)``: ``ece`` with the true test labels (the issue's
  definition), ``ece_m`` with ``m(Z)`` in place of the labels (the paper's
  Gaussian "Oracle ECE", App. G.1), ``l1_m = mean |m(Z) - g(Z)|``, log loss
  (predictions clipped to [1e-8, 1 - 1e-8]) and Brier with the true labels.

``--timing`` instead measures the cost of fitting every map family to a 4000-draw
channel posterior on 10^5 recalibration items.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bayescal.bench._io import environment, map_jobs, mean_se, write_json
from bayescal.bench.tabular import binned_ece

FAMILIES = ("temperature", "platt", "histogram")
TARGETS = ("naive", "corrected", "clean")
DEFAULT_SIZES = (1500, 3000, 6000, 12000)
METRICS = ("ece", "ece_m", "l1_m", "log_loss", "brier")
BOUNDARY = 1.0 / (1.0 + np.exp(-0.3))  # population score median sigmoid(0.3)


def add_arguments(parser) -> None:
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--timing",
        action="store_true",
        help="measure fitting all maps for 4000 posterior draws on 10^5 items instead",
    )
    parser.add_argument("--timing-items", type=int, default=100_000)
    parser.add_argument("--timing-draws", type=int, default=4000)
    parser.add_argument("--json", dest="json_path", default=None)


def population_quantiles(probs) -> np.ndarray:
    """Quantiles of the population score distribution of the Gaussian setting."""
    from scipy import optimize, special, stats

    def cdf(z):
        c = 0.3 - special.logit(z)
        return 0.5 * (stats.norm.sf(c + 1) + stats.norm.sf(c - 1))

    out = []
    for q in probs:
        lo, hi = special.expit(-30), special.expit(30)
        out.append(optimize.brentq(lambda z, q=q: cdf(z) - q, lo, hi, xtol=1e-14))
    return np.array(out)


def metrics(g, y, m, m_bins) -> dict:
    """Test-third metrics of recalibrated scores ``g`` (true labels ``y``, curve ``m``)."""
    p = np.clip(g, 1e-8, 1 - 1e-8)
    return {
        "ece": binned_ece(g, y, m_bins),
        "ece_m": binned_ece(g, m, m_bins),
        "l1_m": float(np.mean(np.abs(m - g))),
        "log_loss": float(np.mean(-y * np.log(p) - (1 - y) * np.log1p(-p))),
        "brier": float(np.mean((g - y) ** 2)),
    }


def one_rep(n: int, seed: int) -> dict:
    """All methods on one simulated dataset of total size ``n``."""
    import warnings

    from bayescal.channels import fit_channels
    from bayescal.errors import BayescalWarning, FitError
    from bayescal.recal import HistogramMap, PlattMap, TemperatureMap, make_targets
    from bayescal.simulate import gaussian_true_curve, simulate_gaussian

    third = n // 3
    rng = np.random.default_rng(seed)
    ch_data, rec_data, test = (simulate_gaussian(third, random_state=rng) for _ in range(3))
    j_bins = int(round(third ** (1 / 3)))
    m_bins = int(round(third ** (1 / 3)))
    edges = np.concatenate([[0.0], population_quantiles(np.arange(1, j_bins) / j_bins), [1.0]])
    y = test.truth.astype(np.float64)
    m = gaussian_true_curve(test.score)
    out = {("base", "none"): metrics(test.score, y, m, m_bins)}
    failed = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayescalWarning)
        try:
            channels = fit_channels(
                ch_data, "gmm", groups=[0.0, BOUNDARY, 1.0], n_starts=4, random_state=seed
            )
        except FitError:
            channels, failed = None, True
    for kind in TARGETS:
        if kind == "corrected" and channels is None:
            continue
        targets = make_targets(kind, rec_data, channels)
        t = targets.values()
        for family, g in (
            ("temperature", TemperatureMap()),
            ("platt", PlattMap()),
            ("histogram", HistogramMap(bins=edges)),
        ):
            g.fit(targets.score, t)
            out[(family, kind)] = metrics(g.predict(test.score), y, m, m_bins)
    return {"metrics": out, "gmm_failed": failed, "J": j_bins, "M": m_bins}


def _cell(args):
    n, reps, seed = args
    return n, [one_rep(n, seed + r) for r in range(reps)]


def timing(n_items: int, n_draws: int, seed: int = 0) -> dict:
    """Seconds to fit every family to an ``n_draws`` channel posterior on ``n_items`` items."""
    from bayescal.channels import ChannelFit
    from bayescal.recal import fit_posterior_map
    from bayescal.simulate import simulate_gaussian

    data = simulate_gaussian(n_items, random_state=seed)
    rng = np.random.default_rng(seed)
    # a synthetic posterior around the true channels (what a PyMC fit returns: a ChannelFit)
    a = np.clip(0.05 + 0.01 * rng.standard_normal((n_draws, 2)), 1e-3, 0.4)
    b = np.clip([0.75, 0.95] + 0.01 * rng.standard_normal((n_draws, 2)), 0.6, 0.999)
    prev = np.clip([0.2, 0.8] + 0.01 * rng.standard_normal((n_draws, 2)), 0.01, 0.99)
    post = ChannelFit.from_draws(
        a,
        b,
        prev,
        annotators=data.annotators,
        groups=["[0, 0.5744)", "[0.5744, 1]"],
        group_counts=[n_items // 2] * 2,
        method="synthetic",
        group_edges=np.array([0.0, BOUNDARY, 1.0]),
    )
    j_bins = int(round(n_items ** (1 / 3)))
    out: dict[str, Any] = {}
    t_all = time.perf_counter()
    for family in ("histogram", "score_bin", "temperature", "platt"):
        t0 = time.perf_counter()
        pm = fit_posterior_map(
            family, data, post, map_params={"bins": j_bins} if family == "histogram" else None
        )
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pm.predict(data.score)
        pm.predict_interval(data.score)
        out[family] = {
            "fit_seconds": fit_s,
            "predict_and_band_seconds": time.perf_counter() - t0,
            "draws_fitted": pm.n_draws_,
        }
    out["total_fit_seconds"] = sum(v["fit_seconds"] for v in out.values() if isinstance(v, dict))
    out["total_seconds_including_predictions"] = time.perf_counter() - t_all
    out.update(n_items=n_items, n_draws=n_draws)
    return out


def run(args) -> int:
    from bayescal.errors import ConfigError

    if args.timing:
        res = timing(args.timing_items, args.timing_draws, args.seed)
        write_json({"timing": res, "environment": environment()}, args.json_path)
        return 0
    if args.reps < 2:
        raise ConfigError("--reps must be at least 2 (a standard deviation needs two).")
    if any(n < 30 for n in args.sizes):
        raise ConfigError("every size must be at least 30 (three thirds with a few bins each).")
    t0 = time.perf_counter()
    cells = [(n, args.reps, args.seed + 100_000 * i) for i, n in enumerate(args.sizes)]
    done = map_jobs(_cell, cells, args.jobs)
    results = []
    for n, rows in done:
        keys = [("base", "none")] + [(f, t) for f in FAMILIES for t in TARGETS]
        for family, target in keys:
            vals = [
                r["metrics"][(family, target)] for r in rows if (family, target) in r["metrics"]
            ]
            row = {
                "n": n,
                "family": family,
                "target": target,
                "reps": len(vals),
                "J": rows[0]["J"],
                "M": rows[0]["M"],
            }
            for k in METRICS:
                arr = np.array([v[k] for v in vals])
                row[k] = float(arr.mean())
                row[f"sd_{k}"] = float(arr.std(ddof=1))
            results.append(row)
        # paired comparison: corrected vs naive, per repetition
        for family in FAMILIES:
            pairs = [r["metrics"] for r in rows if (family, "corrected") in r["metrics"]]
            for k in ("ece", "l1_m"):
                d = np.array([p[(family, "corrected")][k] - p[(family, "naive")][k] for p in pairs])
                results.append(
                    {
                        "n": n,
                        "family": family,
                        "target": "corrected-minus-naive",
                        "metric": k,
                        "mean": float(d.mean()),
                        "se": mean_se(d),
                        "share_corrected_better": float((d < 0).mean()),
                    }
                )
    failures = {n: int(sum(r["gmm_failed"] for r in rows)) for n, rows in done}
    out = {
        "protocol": {
            "sizes": args.sizes,
            "reps": args.reps,
            "seed": args.seed,
            "split": "equal thirds: channels / recalibration / test",
            "channels": "constrained GMM, two groups split at sigmoid(0.3), 4 starts",
            "weights": "shrunk plug-in inverse variance (lam = DEFAULT_SHRINKAGE)",
            "histogram_bins": "J = round((n/3)^(1/3)) population score quantiles",
            "evaluation_bins": "M = round((n/3)^(1/3)) equal-width bins on g(Z)",
            "ece": "true test labels",
            "ece_m": "m(Z) in place of labels (paper's Gaussian Oracle ECE)",
        },
        "results": results,
        "gmm_failures": failures,
        "seconds": time.perf_counter() - t0,
        "environment": environment(),
    }
    write_json(out, args.json_path)
    return 0
