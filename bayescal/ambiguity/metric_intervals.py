"""Bootstrap intervals for the ambiguity metrics and paired comparisons of methods.

Tao et al. (arXiv:2603.22879) report ``ECE_true``, aECE, cwECE, Brier and NLL
(SPEC §2) as bare numbers on one split. :func:`metric_intervals` gives each an
interval from a nonparametric bootstrap over the test items, in which every
item carries its own label draws ``y~ ~ pi`` (the draws are independent across
items, so an item together with its draws is one i.i.d. unit and resampling
those units reproduces both sources of variation: which items were tested and
which labels were drawn). :func:`paired_differences` compares methods on the
same resampled items and the same label draws (common random numbers), and
says when two methods are not distinguishable: the interval of their paired
difference contains zero.

Choices, stated once:

- Resampling: multinomial counts of the ``n`` test items (the ordinary
  bootstrap), ``n_boot`` replicates.
- Intervals are *basic* (reverse-percentile) bootstrap intervals
  ``[2 t - q_hi, 2 t - q_lo]`` around the estimate ``t``, limited to the
  metric's range. Binned ECEs are sums of absolute values and biased upward;
  the bootstrap replicates are biased upward once more, by about the same
  amount, so percentile intervals sit above the estimate and miss the
  population value (measured: 50% coverage of a nominal 90% interval for
  ``ECE_true`` at 1,000 items, 0% for cwECE), while the basic interval
  subtracts that bias (87% and 74%; Brier 90% either way). An interval can
  therefore lie below its estimate: the estimate is the paper's statistic,
  the interval is for the population value.
- Bins are those of the full test half: equal-width bins depend on an item's
  confidence only; for aECE the equal-mass assignment is kept fixed rather than
  recomputed on each replicate (which slightly understates its variation).
- The estimates use the label streams :func:`~bayescal.ambiguity.evaluate`
  uses for the same seed, so they equal the rows of the method comparison.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
import xarray as xr

from bayescal._random import seed_from
from bayescal._typing import ArrayLike, RandomState
from bayescal.ambiguity.metrics import NLL_FLOOR, _bin_index, _check_bins, _check_draws
from bayescal.ambiguity.targets import _sample_kernel
from bayescal.ambiguity.validation import check_proba, check_targets
from bayescal.dims import DRAW
from bayescal.errors import ConfigError, DataError

__all__ = [
    "INTERVAL_METRICS",
    "INTERVAL_METHOD",
    "PERCENT_METRICS",
    "metric_intervals",
    "paired_differences",
    "intervals_to_dict",
]

#: Metrics given an interval, in table order (fractions, like the metric functions).
INTERVAL_METRICS = (
    "ece_true",
    "aece",
    "cwece",
    "ece_voted",
    "brier",
    "brier_sampled",
    "nll",
    "accuracy",
)

#: How the intervals are made, in words for reports.
INTERVAL_METHOD = (
    "basic (bias-correcting) bootstrap over test items, each resampled with its own label "
    "draws; bins fixed on the full test half"
)

#: Metrics that reports and benchmarks show in percent (as the method rows do).
PERCENT_METRICS = ("ece_true", "aece", "cwece", "ece_voted", "accuracy")

#: Range of each metric (intervals are limited to it).
_UPPER = {"accuracy": 1.0}

METHOD, METRIC = "calibrator", "metric"

# Cells of (replicate x draw x class x bin) held at once by the class-wise kernel.
_CELL_BUDGET = 4_000_000


def metric_intervals(
    probas: Mapping[str, ArrayLike],
    targets: ArrayLike,
    *,
    n_boot: int = 200,
    prob: float = 0.9,
    n_bins: int = 15,
    n_draws: int = 100,
    random_state: RandomState = 0,
) -> xr.Dataset:
    """Estimates and bootstrap intervals of every metric for several methods on the same items.

    Tao et al., SPEC §2 metrics (``ECE_true``, aECE, cwECE with label draws,
    ``ECE_voted``, Brier in both forms, NLL, accuracy), with the uncertainty
    of a finite test set and of the label draws (see the module docstring).

    Parameters
    ----------
    probas : mapping of str -> array-like of shape (n_items, n_classes)
        Test-set probabilities per method (the same items in the same order).
    targets : array-like of shape (n_items, n_classes) or (n_items,)
        Annotator counts or distributions of those items.
    n_boot : int, default 200
        Bootstrap replicates.
    prob : float, default 0.9
        Probability of the intervals.
    n_bins, n_draws : int, default 15, 100
        Bins and label draws of the sampled ECEs (as in :func:`~bayescal.ambiguity.evaluate`).
    random_state : None, int or Generator, default 0
        With an int, the label draws are those of ``evaluate(..., random_state=that int)``,
        so ``estimate`` equals its values; the resampling uses a fourth,
        independent stream of the same seed.

    Returns
    -------
    xarray.Dataset
        ``estimate[calibrator, metric]``, ``lo[calibrator, metric]``, ``hi[calibrator, metric]``
        and ``replicates[draw, calibrator, metric]`` (one bootstrap replicate per
        ``draw``), fractions; attrs ``prob``, ``n_boot``, ``n_bins``, ``n_draws``,
        ``seed``, ``n_items``, ``interval_method``.

    Raises
    ------
    ConfigError
        ``n_boot`` below 2, ``prob`` outside (0, 1), no methods.
    DataError
        Probabilities of different shapes, or targets that do not match them.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1, 1, 1], 300)
    >>> sharp = np.exp(3 * np.log(pi)); sharp /= sharp.sum(1, keepdims=True)
    >>> ds = metric_intervals({"pi": pi, "sharp": sharp}, pi, n_boot=50, n_draws=10)
    >>> ds.estimate.sel(calibrator="pi", metric="brier").item()
    0.0
    >>> nll = ds.sel(calibrator="sharp", metric="nll")
    >>> bool(nll.lo < nll.estimate < nll.hi)
    True
    """
    names, p_all, pi = _check_inputs(probas, targets)
    b_count, s_count = _check_bins(n_bins), _check_draws(n_draws)
    n_boot = _check_n_boot(n_boot)
    prob = _check_prob(prob)
    seed = seed_from(random_state)
    r_true, r_mass, r_class, r_boot = np.random.default_rng(seed).spawn(4)
    n, k = pi.shape
    # The streams evaluate() draws from for the same seed (common to every method).
    u_true = r_true.random((n, s_count))
    u_mass = r_mass.random((n, s_count))
    labels = _sample_kernel(pi, s_count, r_class)
    weights = r_boot.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)
    weights = np.vstack([np.ones((1, n)), weights])  # row 0: the sample itself
    voted = pi.argmax(axis=1)
    values = np.empty((n_boot + 1, len(names), len(INTERVAL_METRICS)))
    for j, p in enumerate(p_all):
        top = p.argmax(axis=1)
        conf = p[np.arange(n), top]
        pc = pi[np.arange(n), top]
        col = {
            "ece_true": _binned(
                weights, (u_true < pc[:, None]) - conf[:, None], _bin_index(conf, b_count, "width")
            ),
            "aece": _binned(
                weights, (u_mass < pc[:, None]) - conf[:, None], _bin_index(conf, b_count, "mass")
            ),
            "cwece": _classwise(weights, p, labels, b_count),
            "ece_voted": _binned(
                weights, ((top == voted) - conf)[:, None], _bin_index(conf, b_count, "width")
            ),
        }
        sq = ((p - pi) ** 2).sum(axis=1)
        per_item = {
            "brier": sq,
            "brier_sampled": sq + 1.0 - (pi**2).sum(axis=1),
            "nll": -(pi * np.log(np.maximum(p, NLL_FLOOR))).sum(axis=1),
            "accuracy": (top == voted).astype(np.float64),
        }
        for key, loss in per_item.items():
            col[key] = weights @ loss / n
        for m, key in enumerate(INTERVAL_METRICS):
            values[:, j, m] = col[key]
    reps = values[1:]
    lo, hi = _basic_interval(values[0], reps, prob)
    upper = np.array([_UPPER.get(key, np.inf) for key in INTERVAL_METRICS])
    lo, hi = np.clip(lo, 0.0, upper), np.clip(hi, 0.0, upper)
    coords = {METHOD: names, METRIC: list(INTERVAL_METRICS)}
    return xr.Dataset(
        {
            "estimate": ((METHOD, METRIC), values[0]),
            "lo": ((METHOD, METRIC), lo),
            "hi": ((METHOD, METRIC), hi),
            "replicates": ((DRAW, METHOD, METRIC), reps),
        },
        coords={**coords, DRAW: np.arange(n_boot)},
        attrs={
            "prob": prob,
            "n_boot": n_boot,
            "n_bins": b_count,
            "n_draws": s_count,
            "seed": seed,
            "n_items": n,
            "interval_method": INTERVAL_METHOD,
        },
    )


def paired_differences(
    intervals: xr.Dataset, reference: str, *, prob: float | None = None
) -> xr.Dataset:
    """Each method minus ``reference`` on the same bootstrap replicates; distinguishable or not.

    Tao et al.'s method comparisons (SPEC §2) as paired differences: both
    methods are scored on the same resampled items with the same label draws,
    so what they share cancels.

    Parameters
    ----------
    intervals : xarray.Dataset
        From :func:`metric_intervals`.
    reference : str
        A method in ``intervals``.
    prob : float, optional
        Probability of the difference intervals (default: that of ``intervals``).

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``lo``, ``hi`` of ``method - reference`` and
        ``distinguishable`` (the interval excludes zero), all ``[method, metric]``;
        attrs ``reference``, ``prob``.

    Examples
    --------
    >>> import numpy as np
    >>> pi = np.random.default_rng(1).dirichlet([1, 1, 1], 200)
    >>> ds = metric_intervals({"a": pi, "b": pi}, pi, n_boot=20, n_draws=5)
    >>> bool(paired_differences(ds, "a").distinguishable.sel(calibrator="b").any())
    False
    """
    if reference not in intervals[METHOD].values:
        raise ConfigError(
            f"reference method {reference!r} is not among {list(intervals[METHOD].values)}."
        )
    prob = _check_prob(intervals.attrs["prob"] if prob is None else prob)
    ref = {METHOD: reference}
    est = (intervals["estimate"] - intervals["estimate"].sel(ref)).transpose(METHOD, METRIC)
    reps = (intervals["replicates"] - intervals["replicates"].sel(ref)).transpose(
        DRAW, METHOD, METRIC
    )
    lo, hi = _basic_interval(est.values, reps.values, prob)
    dims = (METHOD, METRIC)
    return xr.Dataset(
        {
            "estimate": (dims, est.values),
            "lo": (dims, lo),
            "hi": (dims, hi),
            "distinguishable": (dims, (lo > 0) | (hi < 0)),
        },
        coords={METHOD: intervals[METHOD].values, METRIC: intervals[METRIC].values},
        attrs={"reference": reference, "prob": prob, "interval_method": INTERVAL_METHOD},
    )


def _basic_interval(estimate: np.ndarray, reps: np.ndarray, prob: float):
    """Basic bootstrap interval ``[2 t - q_hi, 2 t - q_lo]`` (replicates on axis 0)."""
    q_lo, q_hi = np.quantile(reps, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    return 2 * estimate - q_hi, 2 * estimate - q_lo


def intervals_to_dict(ds: xr.Dataset) -> dict:
    """``{calibrator: {metric: {estimate, lo, hi}}}`` with :data:`PERCENT_METRICS` in percent.

    The JSON form used by the ambiguity report and benchmarks, for a result of
    :func:`metric_intervals` (``estimate``/``lo``/``hi``) or of
    :func:`paired_differences` (plus ``distinguishable``).

    Examples
    --------
    >>> import numpy as np
    >>> pi = np.random.default_rng(2).dirichlet([1, 1], 50)
    >>> d = intervals_to_dict(metric_intervals({"m": pi}, pi, n_boot=5, n_draws=2))
    >>> d["m"]["brier"]["estimate"], sorted(d["m"]["accuracy"])
    (0.0, ['estimate', 'hi', 'lo'])
    """
    keys = [k for k in ("estimate", "lo", "hi") if k in ds]
    out = {}
    for name in ds[METHOD].values:
        row = {}
        for metric in ds[METRIC].values:
            scale = 100.0 if metric in PERCENT_METRICS else 1.0
            cell = ds.sel({METHOD: name, METRIC: metric})
            row[str(metric)] = {k: scale * float(cell[k]) for k in keys}
            if "distinguishable" in ds:
                row[str(metric)]["distinguishable"] = bool(cell["distinguishable"])
        out[str(name)] = row
    return out


def _binned(weights: np.ndarray, dev: np.ndarray, bins: np.ndarray) -> np.ndarray:
    """Binned ECE of every weighting: mean over draws of ``sum_b |sum_i w_i dev_is| / n``.

    weights (R, n), dev (n, S) signed per-item deviations (hit - confidence),
    bins (n,) -> (R,). One matrix product per non-empty bin.
    """
    n = dev.shape[0]
    total = np.zeros((weights.shape[0], dev.shape[1]))
    for b in np.unique(bins):
        idx = np.flatnonzero(bins == b)
        total += np.abs(weights[:, idx] @ dev[idx])
    return total.mean(axis=1) / n


def _classwise(weights: np.ndarray, p: np.ndarray, labels: np.ndarray, n_bins: int) -> np.ndarray:
    """Class-wise ECE of every weighting (Tao et al.'s cwECE with the given label draws).

    weights (R, n), p (n, K), labels (n, S) -> (R,). For class ``k`` and bin
    ``b`` of ``p_k``: ``|sum_i w_i (1(y_is = k) - p_ik) 1(bin_ik = b)|``, summed
    over bins, divided by ``n``, averaged over classes and draws. Each (item,
    draw) hits exactly one (class, bin) cell, so the hit sums are a sparse
    product with one non-zero per item and draw.
    """
    from scipy import sparse  # weight: only the interval step needs it

    n, k = p.shape
    r, s = weights.shape[0], labels.shape[1]
    cells = k * n_bins
    bins = _bin_index(p.ravel(), n_bins, "width").reshape(n, k)
    onehot = np.zeros((n, cells))
    onehot[np.arange(n)[:, None], np.arange(k)[None, :] * n_bins + bins] = p
    expected = weights @ onehot  # (R, cells): sum_i w_i p_ik in each (class, bin)
    hit_cell = labels * n_bins + bins[np.arange(n)[:, None], labels]  # (n, S)
    chunk = max(1, _CELL_BUDGET // max(1, r * cells))
    weights_t = np.ascontiguousarray(weights.T)
    total = np.zeros(r)
    for start in range(0, s, chunk):
        block = hit_cell[:, start : start + chunk]
        width = block.shape[1]
        cols = (np.arange(width)[None, :] * cells + block).ravel()
        rows = np.repeat(np.arange(n), width)
        y = sparse.csc_matrix(
            (np.ones(rows.size), (rows, cols)), shape=(n, width * cells)
        )  # (n, width * cells)
        hits = np.asarray((y.T @ weights_t).T).reshape(r, width, cells)
        gap = np.abs(hits - expected[:, None, :]).reshape(r, width, k, n_bins).sum(axis=3)
        total += gap.sum(axis=(1, 2))
    return total / (n * k * s)


def _check_inputs(probas, targets):
    if not isinstance(probas, Mapping) or not probas:
        raise ConfigError("probas must be a non-empty mapping of method name -> probabilities.")
    names = [str(name) for name in probas]
    p_all = [check_proba(p) for p in probas.values()]
    shape = p_all[0].shape
    for name, p in zip(names, p_all):
        if p.shape != shape:
            raise DataError(
                f"probabilities of {name!r} have shape {p.shape}, those of {names[0]!r} "
                f"{shape}; every method must be scored on the same items and classes."
            )
    pi = check_targets(targets, n_items=shape[0], n_classes=shape[1])
    return names, p_all, pi


def _check_n_boot(n_boot) -> int:
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 2:
        raise ConfigError(f"n_boot must be an integer >= 2, got {n_boot!r}.")
    return int(n_boot)


def _check_prob(prob) -> float:
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 < float(prob) < 1:
        raise ConfigError(f"prob must be a number in (0, 1), got {prob!r}.")
    return float(prob)
