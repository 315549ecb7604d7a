"""NC-ECE: a bias-aware estimate and interval, and a noise-corrected test of perfect calibration.

The target is the population binned ECE ``theta = sum_m |d_m|``, with signed bin
moments ``d_m = E[(Y - Z) 1(Z in B_m)]`` (SPEC §1). The plug-in
``theta_hat = sum_m |D_m|`` from the corrected bin moments ``D_m`` is biased
upward, by up to ``sum_m s_m sqrt(2/pi)`` when the model is calibrated (SPEC §4),
and a percentile interval centred on it inherits the bias twice. What is
reported instead (chosen by measurement, ``bayescal bench coverage``; see
``docs/intervals.md``):

Estimate
    ``max(0, 2 theta_hat - mean_r theta*_r)``: the bootstrap bias correction,
    with ``theta*_r = sum_m |D_m + E_rm|`` and ``E_r`` the replicate deviations
    of the bin moments (below).
Interval
    Lower end ``max(0, 2 theta_hat - q_{1 - a/2}(theta*))`` (basic bootstrap: it
    subtracts the estimated bias). Upper end ``theta_hat + q_{1 - a/2}(L)`` with
    ``L_r = -sum_m sign(D_m) E_rm``: since ``|d| <= |D| + sign(d) (d - D)`` for
    every bin, ``theta - theta_hat`` is at most a linear function of the errors,
    whatever the bias, so this end needs no bias estimate. ``a = 1 - prob``.
Test of perfect calibration
    H0: every ``d_m = 0`` (``E[Y - Z | Z in B_m] = 0`` for all m). Statistic
    ``theta_hat``; its null distribution is that of ``sum_m |E_rm|``, so
    ``p = (1 + #{r: sum_m |E_rm| >= theta_hat}) / (R + 1)``. When
    ``p > a`` the data are consistent with calibration and the lower end is 0: the
    interval is ``[0, hi]`` and covers a calibrated model's ECE of 0.

Two sources of uncertainty make the replicates ``D_r``:

Channel uncertainty
    The posterior draws of the channels (``ChannelFit`` with S draws); each draw
    gives corrected labels and bin moments on the fixed evaluation items. A point
    fit (one draw) has none: its interval is evaluation-only and says so;
    :func:`bayescal.channels.bootstrap.bootstrap_channels` gives an EM fit's draws.
Evaluation-sample uncertainty
    A Bayesian bootstrap of the evaluation items (Rubin 1981): item weights
    ``w ~ Dirichlet(1, ..., 1)``. By the aggregation property of the Dirichlet,
    the total weight of each (bin, pattern) cell is exactly
    ``Dirichlet(cell counts)``, so it is drawn on the non-empty cells, never on
    the empty ones, in chunks of replicates (memory bounded by
    :data:`~bayescal.metrics.binned.CHUNK_ELEMENTS` per array). Within a cell the
    corrected label is constant; the score enters through the cell's mean score.
    That is the only approximation: it ignores the variation of Z within a cell,
    which is at most the variation within a bin (sd <= width / sqrt(12), about
    0.03 for ten bins) against a corrected-label residual sd of roughly 0.5 to 1,
    so it removes well under 1% of the bootstrap variance with ten or more bins.

``full`` pairs replicate r with channel draw ``r mod S`` (both sources; this is
how channel uncertainty enters the interval and the test); ``channel`` uses the
observed cell weights (channels only); ``evaluation`` uses one channel value
(the posterior mean channels, or the point fit) with the bootstrap. Each source
gets the same bias-aware construction; the variances are not additive in general
because of the absolute values.

Which source is reported depends on how the channels relate to the evaluation
items (``sample_use``). ``"split"`` (channels from other items, the default):
``full``. ``"reuse"`` (channels fitted on these same items, as the audit does):
``evaluation``. In reuse the channels' estimation error is a function of the
same items and partly cancels their evaluation noise, so adding channel draws as
an independent source over-covers (``bench coverage``, Bayesian channels: up to
0.98 at nominal 0.90), while resampling the items with the channels held at their
point value covers at 0.907 to 0.96 with the test's level at 0.065 to 0.092
(Bayesian or EM channels, 500 to 8000 items).

Layout: plain-numpy kernels (:func:`bootstrap_bin_moments`,
:func:`debiased_ece`, :func:`bias_aware_interval`, :func:`calibration_p_value`),
the labelled result :class:`NCECEPosterior`, and the entry point
:func:`nc_ece_interval` that checks the arguments and wires them together.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._blas import MAX_THREADS, available_cpus, map_in_order
from bayescal._random import check_random_state
from bayescal.channels.mcse import mean_mcse, quantile_mcse
from bayescal.dims import BIN, DRAW
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import (
    CHUNK_ELEMENTS,
    CellTable,
    _as_summary,
    _cell_targets,
    _channels_for,
    _check_match,
    corrected_cell_moments,
    corrected_pattern_targets,
    row_chunks,
    summary_cells,
)
from bayescal.metrics.binned import _class_summary as _as_multiclass_summary
from bayescal.metrics.weights import (
    DEFAULT_SHRINKAGE,
    annotator_weights,
    class_weights,
    inverse_confusions,
)
from bayescal.summaries.partition import cell_sums, check_bin_occupancy

__all__ = [
    "NCECEPosterior",
    "nc_ece_interval",
    "bootstrap_bin_moments",
    "debiased_ece",
    "bias_aware_interval",
    "calibration_p_value",
    "posterior_mean_channels",
    "posterior_bin_rates",
    "posterior_group_rates",
    "SOURCES",
    "SAMPLE_USES",
    "MulticlassNCECEInterval",
    "IntervalPart",
    "multiclass_nc_ece_interval",
    "multiclass_cell_rates",
    "INTERVAL_METHOD",
    "DEFAULT_REPLICATES",
    "MIN_REPLICATES",
]

SOURCES = ("full", "channel", "evaluation", "posterior")

#: Bootstrap replicates when none are asked for (at least one per channel draw).
DEFAULT_REPLICATES = 2000

#: Fewest replicates accepted: the interval's ends are 5% / 95% quantiles and the
#: p-value moves in steps of 1 / (R + 1), so fewer leave both to a handful of draws.
MIN_REPLICATES = 100

#: Most replicates accepted: the p-value's resolution is then 1e-5 and the interval's
#: Monte Carlo error far below its width; the replicate table holds R x bins numbers
#: (10^9 replicates asked for 75 GB).
MAX_REPLICATES = 100_000

#: The interval construction, as reported in results.
INTERVAL_METHOD = (
    "bias-aware bootstrap: basic (bias-corrected) lower end, linearised upper end; "
    "[0, hi] when the calibration test does not reject at level 1 - prob"
)

#: How the channels relate to the evaluation items (see the module docstring).
SAMPLE_USES = ("split", "reuse", "joint")

#: The source reported for each sample use.
_REPORTED_SOURCE = {"split": "full", "reuse": "evaluation", "joint": "posterior"}

#: Points of each grid on which a bin's positive rate is drawn (coarse, then refined).
RATE_GRID = 128

#: Channel draws the multiclass joint route uses (evenly spaced). Its grids cost
#: draws x cells x 2 RATE_GRID, and the multiclass cells are many (C = 10, 2,000 items:
#: about 13,000 class-wise cells); 200 draws put the spread of the channel part within
#: about 5% (relative SE of a variance from 200 draws, sqrt(2 / 200) / 2).
JOINT_DRAWS = 200

#: Prior weight, in items, of the multiclass joint route's rate prior
#: ``Beta(w zbar_g, w (1 - zbar_g))`` centred on each group's mean score: the weight of
#: the uniform prior (Beta(1, 1)), moved from 1/2 to the score. A uniform prior pulls a
#: group's rate towards 1/2 by ``(1 - 2 rate) / (n_g + 2)``: negligible in the binary
#: route's ten bins, but the multiclass groups at the ends of the score range (class k,
#: ``p_k`` near 0 or 1) hold few items with rates near 0 or 1, where that pull always
#: enlarges ``|rate - zbar|`` of a miscalibrated model (measured: class-wise coverage
#: 0.78, every miss below). Centred on the score, the pull is ``-w d_g / (n_g + w)``:
#: towards calibration and proportional to the gap, so it cannot create a gap.
RATE_PRIOR_WEIGHT = 2.0

_SOURCE_NOTES = {
    ("split", True): "channel draws paired with a Bayesian bootstrap of the evaluation items",
    ("split", False): "point channels: evaluation-sample uncertainty only, conditional on the "
    "channels (pass channel draws, e.g. bootstrap_channels, to include theirs)",
    ("reuse", True): "channels fitted on these items: Bayesian bootstrap of the items with the "
    "channels held at their point value (adding channel draws as independent over-covers)",
    ("reuse", False): "channels fitted on these items: Bayesian bootstrap of the items with the "
    "channels held at their point value",
    ("joint", True): "channels fitted on these items: each bin's positive rate drawn from its "
    "latent-class posterior given each channel draw (channel and sampling uncertainty "
    "correlated as they are), bin shares from a Bayesian bootstrap",
}


# ---------------------------------------------------------------- numeric kernels
def _deviations(replicates: np.ndarray) -> np.ndarray:
    reps = np.asarray(replicates, dtype=np.float64)
    return reps - reps.mean(axis=0, keepdims=True)


def debiased_ece(moments: np.ndarray, replicates: np.ndarray) -> float:
    """Bootstrap bias-corrected binned ECE, ``max(0, 2 theta_hat - mean_r theta*_r)``.

    Parameters
    ----------
    moments : ndarray of shape (M,)
        Signed bin moments ``D_m`` of the sample (SPEC §1).
    replicates : ndarray of shape (R, M)
        Resampled bin moments; only their deviations from their mean are used.

    Returns
    -------
    float
        The plug-in ``sum_m |D_m|`` minus its bootstrap estimate of the upward bias
        of ``|.|`` (SPEC §4), floored at 0 (an ECE is never negative).

    Examples
    --------
    >>> import numpy as np
    >>> e = np.random.default_rng(0).normal(0, 0.01, (4000, 1))
    >>> round(debiased_ece(np.array([0.05]), e), 3)
    0.05
    """
    d = np.asarray(moments, dtype=np.float64)
    theta = np.abs(d).sum()
    boot = np.abs(d + _deviations(replicates)).sum(axis=1)
    return float(max(0.0, 2.0 * theta - boot.mean()))


def calibration_p_value(moments: np.ndarray, replicates: np.ndarray) -> float:
    """Noise-corrected test of perfect calibration, H0: every signed bin moment is 0.

    Statistic ``theta_hat = sum_m |D_m|``; under H0, ``D`` is distributed as the
    replicate deviations ``E_r`` (centred replicates: resampling noise from the
    evaluation items and, with a channel posterior, from the channels), so
    ``p = (1 + #{r: sum_m |E_rm| >= theta_hat}) / (R + 1)`` (SPEC §4; the
    test the interval's lower end switches on).

    Parameters
    ----------
    moments : ndarray of shape (M,)
    replicates : ndarray of shape (R, M)

    Returns
    -------
    float in (0, 1]

    Examples
    --------
    >>> import numpy as np
    >>> e = np.random.default_rng(0).normal(0, 0.01, (999, 3))
    >>> calibration_p_value(np.array([0.05, -0.04, 0.0]), e) < 0.01
    True
    """
    d = np.asarray(moments, dtype=np.float64)
    null = np.abs(_deviations(replicates)).sum(axis=1)
    return float((1 + np.count_nonzero(null >= np.abs(d).sum())) / (null.size + 1))


def bias_aware_interval(
    moments: np.ndarray, replicates: np.ndarray, prob: float
) -> tuple[float, float, float]:
    """Interval for the population binned ECE that accounts for the bias of ``|.|``.

    Lower end: basic bootstrap ``2 theta_hat - q_{1-a/2}(theta*)``; upper end:
    ``theta_hat + q_{1-a/2}(-sum_m sign(D_m) E_rm)``, valid because
    ``|d| <= |D| + sign(d) (d - D)``; the lower end is 0 when the calibration
    test's p-value exceeds ``a = 1 - prob`` (SPEC §4).

    Parameters
    ----------
    moments : ndarray of shape (M,)
    replicates : ndarray of shape (R, M)
    prob : float in (0, 1)

    Returns
    -------
    (lo, hi, p_value)

    Examples
    --------
    >>> import numpy as np
    >>> e = np.random.default_rng(0).normal(0, 0.01, (2000, 2))
    >>> lo, hi, p = bias_aware_interval(np.array([0.003, -0.002]), e, 0.9)
    >>> lo, p > 0.1
    (0.0, True)
    """
    d = np.asarray(moments, dtype=np.float64)
    dev = _deviations(replicates)
    alpha = 1.0 - prob
    theta = np.abs(d).sum()
    boot = np.abs(d + dev).sum(axis=1)
    linear = -(np.sign(d) * dev).sum(axis=1)
    p = calibration_p_value(d, replicates)
    lo = 0.0 if p > alpha else max(0.0, 2.0 * theta - np.quantile(boot, 1 - alpha / 2))
    hi = theta + max(0.0, float(np.quantile(linear, 1 - alpha / 2)))
    return float(lo), float(hi), p


def _cell_class_loglik(states: np.ndarray, a: np.ndarray, b: np.ndarray):
    """``log P(pattern | Y = 0)`` and ``log P(pattern | Y = 1)`` per draw: two (S, P) arrays."""
    i1 = (states == 1).astype(np.float64)
    i0 = (states == 0).astype(np.float64)
    l0 = np.log(a) @ i1.T + np.log1p(-a) @ i0.T
    l1 = np.log(b) @ i1.T + np.log1p(-b) @ i0.T
    return l0, l1


def _rate_loglik(group: np.ndarray, count: np.ndarray, n_groups: int, l0, l1, rate):
    """Log-likelihood of each group's rate on a grid: rate (r, G, g) -> (r, G, g).

    ``sum_{cells c in group} n_c log(rate e^{l1_c} + (1 - rate) e^{l0_c})``; l0, l1 are
    (r, cells); ``group`` is non-decreasing. Written as
    ``max(l0, l1) + log(r_hi + r_lo e^{-|l1 - l0|})`` (``r_hi`` the rate of the likelier
    class): one exponential per cell instead of per grid point, and no overflow.
    """
    hi1 = (l1 >= l0)[:, :, None]
    base = np.maximum(l0, l1)
    ratio = np.exp(-np.abs(l1 - l0))[:, :, None]
    r = rate[:, group, :]  # (r, cells, g)
    cell = np.where(hi1, r + (1.0 - r) * ratio, (1.0 - r) + r * ratio)
    np.log(cell, out=cell)
    cell += base[:, :, None]
    cell *= count[None, :, None]
    out = np.zeros(rate.shape)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    out[:, group[starts], :] = np.add.reduceat(cell, starts, axis=1)
    return out


def _rate_scores(group: np.ndarray, count: np.ndarray, n_groups: int, l0, l1, at):
    """First and second derivatives in the rate of each group's log-likelihood at ``at``.

    A cell contributes ``n_c f_c`` with ``f_c(r) = l0_c + log(1 + r q_c)``,
    ``q_c = e^{l1_c - l0_c} - 1``, so ``f_c' = 1 / (r + 1 / q_c)`` and ``f_c'' = -f_c'^2``
    (written with ``1 / q`` so a large likelihood ratio does not overflow). l0, l1 are
    (r, cells), ``at`` (r, G); ``group`` is non-decreasing. Returns two (r, G) arrays.
    """
    with np.errstate(divide="ignore", over="ignore"):
        inv_q = 1.0 / np.expm1(np.clip(l1 - l0, -700.0, 700.0))
    d1 = 1.0 / (at[:, group] + inv_q)
    d2 = -(d1**2)
    d1 *= count[None, :]
    d2 *= count[None, :]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    g1, g2 = np.zeros(at.shape), np.zeros(at.shape)
    g1[:, group[starts]] = np.add.reduceat(d1, starts, axis=1)
    g2[:, group[starts]] = np.add.reduceat(d2, starts, axis=1)
    return g1, g2


CellLoglik = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def _log_prior_density(prior: tuple[np.ndarray, np.ndarray] | None, rate) -> np.ndarray | float:
    """``log Beta(rate; a_g, b_g)`` up to a constant per group, at rate (r, G, g).

    ``prior`` is ``(a, b)`` per group, each (G,); None is the uniform prior (0: constants
    within a group do not change its draws). Read at the grid midpoints like the
    likelihood. With ``a < 1`` the prior is unbounded at 0, but the posterior is not once
    the group holds a likely target item (Beta(2.06, 39.94): mean 0.0489 drawn, 0.0490
    exact); a group holding none has its posterior piled into the first grid cell, and
    the midpoint overstates its mean (Beta(0.06, 41.94): 0.0079 drawn, 0.0014 exact, both
    below the score 0.03 the prior is centred on; such a group holds few items, so its
    weight in the moments is small). Exact cell masses at the ends fixed that case but
    overweighted the first cell when the group does hold target items (0.0446 drawn for
    the 0.0490 above), the commoner case, so the midpoint rule is kept.
    """
    if prior is None:
        return 0.0
    a, b = (np.asarray(x, dtype=np.float64)[None, :, None] for x in prior)
    return (a - 1.0) * np.log(rate) + (b - 1.0) * np.log1p(-rate)


def _refined_grid(grp, cnt, m, l0, l1, prior=None):
    """Log-posterior of each group's rate on its refined grid, for r channel values.

    A coarse grid of :data:`RATE_GRID` cells of (0, 1) finds the range holding all
    but ``e^-30`` of the maximum (one coarse cell of margin each side); the fine grid
    puts RATE_GRID cells on it. Each cell's value is the likelihood times the prior
    density at its midpoint (:func:`_log_prior_density`). Returns ``(lp, lo, width)``:
    (r, G, RATE_GRID), and the range's start and the fine cell width, (r, G) each.
    """
    g, r = RATE_GRID, l0.shape[0]
    coarse = (np.arange(g) + 0.5) / g
    ll = _rate_loglik(grp, cnt, m, l0, l1, np.broadcast_to(coarse, (r, m, g)))
    ll = ll + _log_prior_density(prior, np.broadcast_to(coarse, (r, m, g)))
    keep = ll >= ll.max(axis=2, keepdims=True) - 30.0
    first = np.argmax(keep, axis=2)
    last = g - 1 - np.argmax(keep[:, :, ::-1], axis=2)
    a_lo = np.maximum(first - 1, 0) / g
    a_hi = np.minimum(last + 2, g) / g
    width = (a_hi - a_lo) / g
    fine = a_lo[:, :, None] + (np.arange(g) + 0.5) * width[:, :, None]
    lp = _rate_loglik(grp, cnt, m, l0, l1, fine) + _log_prior_density(prior, fine)
    return lp, a_lo, width


def _used_draws(n_draws: int, n_rep: int, max_draws: int | None) -> np.ndarray:
    """The evenly spaced channel draws the joint route uses (see posterior_group_rates)."""
    n_unique = min(n_draws, n_rep, n_draws if max_draws is None else max_draws)
    return np.arange(n_unique) * n_draws // n_unique


def posterior_group_rates(
    group: np.ndarray,
    count: np.ndarray,
    n_groups: int,
    cell_loglik: CellLoglik,
    n_draws: int,
    n_rep: int,
    rng: np.random.Generator,
    max_draws: int | None = None,
    reference: tuple[np.ndarray, np.ndarray] | None = None,
    prior: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Draws of each group's rate ``P(Y = target | group)`` given each channel draw.

    The one kernel of the joint route, for every number of classes. Each cell c
    (items sharing a group and an answer pattern) has, per channel draw, the
    log-probability of its pattern when the item's class is the cell's target
    (``l1_c``) and when it is not (``l0_c``). Replicate r takes channel draw
    ``r mod S`` and draws every group's rate from its conditional posterior given
    those channels and the group's cells, with a uniform prior on the rate:
    ``p(rate_g | channels, data) ~ prod_{c in g} (rate e^{l1_c} + (1 - rate) e^{l0_c})^{n_c}``.
    Channel draws from the posterior of the same items make ``(channels, rate)`` a
    draw from their joint posterior, so the channels' estimation error and the
    items' sampling noise enter correlated as they are.

    The density is one-dimensional: it is evaluated on a grid of :data:`RATE_GRID`
    midpoints of (0, 1), refined to the range holding all but ``e^-30`` of the
    maximum, and sampled exactly on the refined grid (uniform within a cell of
    width at most 1 / RATE_GRID**2 of the range), so the grid error is far below
    the posterior's spread.

    With ``reference`` (the cells' ``(l0, l1)`` at one channel value inside the
    posterior, e.g. its mean) the grid is built once, there, and each channel draw's
    log-likelihood is its second-order expansion around the reference:
    ``ll_s(r) = ll_ref(r) + G_s (r - rbar) + H_s (r - rbar)^2 / 2``, with ``G_s``, ``H_s``
    the differences of the first two derivatives at the reference posterior mean
    ``rbar``. The draws then cost a pass over the cells each instead of a grid each
    (at 10^5 items and C = 10 the grids were 95% of the interval's time). The error is
    third order in the channels' difference from the reference over the rate's
    posterior range; ``tests/metrics/test_multiclass_joint.py`` checks it against the
    per-draw grids.

    Parameters
    ----------
    group : ndarray of int of shape (cells,)
        Group of each cell, in ``range(n_groups)``.
    count : ndarray of shape (cells,)
        Items per cell.
    n_groups : int
    cell_loglik : callable
        ``cell_loglik(draws)`` for an index array of channel draws returns ``(l0, l1)``,
        each of shape (draws, cells).
    n_draws : int
        Channel draws S.
    n_rep : int
    rng : numpy.random.Generator
    max_draws : int, optional
        Use at most this many channel draws, evenly spaced (cost: the grids are
        computed once per draw used); replicate r takes used draw ``r mod S'``.
        Default: all (``min(S, R)``).
    reference : (l0, l1), each of shape (cells,), optional
        Expand around this channel value instead of a grid per draw (see above).
    prior : (a, b), each of shape (n_groups,), optional
        A Beta(a_g, b_g) prior on each group's rate instead of the uniform one.

    Returns
    -------
    ndarray of shape (R, n_groups)
        NaN for groups without items.
    """
    order = np.argsort(group, kind="stable")
    grp, cnt = np.asarray(group)[order], np.asarray(count, dtype=np.float64)[order]
    used = _used_draws(n_draws, n_rep, max_draws)
    n_unique = used.size
    m, g = n_groups, RATE_GRID
    cdf = np.empty((n_unique, m, g))
    lo = np.empty((n_unique, m))
    step = np.empty((n_unique, m))
    if reference is not None:
        r0, r1 = (np.asarray(x, dtype=np.float64)[order][None] for x in reference)
        ll_ref, lo[:], step[:] = _refined_grid(grp, cnt, m, r0, r1, prior)
        fine = lo[:1, :, None] + (np.arange(g) + 0.5) * step[:1, :, None]
        w = np.exp(ll_ref - ll_ref.max(axis=2, keepdims=True))
        rbar = (w * fine).sum(axis=2) / w.sum(axis=2)  # (1, G)
        g1_ref, g2_ref = _rate_scores(grp, cnt, m, r0, r1, rbar)
        x = fine - rbar[:, :, None]

    def grids(rows: slice) -> tuple[slice, np.ndarray, np.ndarray | None, np.ndarray | None]:
        # one chunk of channel draws: their rate densities on the grid (no random numbers)
        l0, l1 = cell_loglik(used[rows])
        l0, l1 = l0[:, order], l1[:, order]
        lo_rows = step_rows = None
        if reference is None:
            ll, lo_rows, step_rows = _refined_grid(grp, cnt, m, l0, l1, prior)
        else:
            g1, g2 = _rate_scores(grp, cnt, m, l0, l1, np.broadcast_to(rbar, (l0.shape[0], m)))
            g1 -= g1_ref
            g2 -= g2_ref
            ll = ll_ref + g1[:, :, None] * x + 0.5 * g2[:, :, None] * x**2
        w = np.exp(ll - ll.max(axis=2, keepdims=True))
        return rows, np.cumsum(w, axis=2) / w.sum(axis=2, keepdims=True), lo_rows, step_rows

    # the chunks on up to MAX_THREADS threads, one chunk each at a time (memory: a chunk
    # of CHUNK_ELEMENTS per thread); the same numbers for any number of threads
    chunks = row_chunks(n_unique, max(1, grp.size) * g)
    threads = min(available_cpus(), MAX_THREADS, len(chunks))  # one chunk: no pool
    for rows, cdf_rows, lo_rows, step_rows in map_in_order(
        grids, chunks, workers=threads, ahead=threads
    ):
        cdf[rows] = cdf_rows
        if lo_rows is not None:
            lo[rows], step[rows] = lo_rows, step_rows
    d = np.arange(n_rep) % n_unique
    u = rng.random((n_rep, m))
    k = np.empty((n_rep, m), dtype=np.int64)
    for j in range(m):
        c = cdf[d, j, :]  # (R, G)
        k[:, j] = np.minimum((c < u[:, j : j + 1]).sum(axis=1), g - 1)
    rate = lo[d] + (k + rng.random((n_rep, m))) * step[d]
    empty = np.bincount(grp, weights=cnt, minlength=m) == 0
    rate[:, empty] = np.nan
    return rate


def posterior_bin_rates(
    table: CellTable, a: np.ndarray, b: np.ndarray, n_rep: int, rng: np.random.Generator
) -> np.ndarray:
    """Draws of each bin's positive rate ``P(Y = 1 | Z in B_m)`` jointly with the channels.

    The two-class view of :func:`posterior_group_rates`: the groups are the bins,
    the target class is 1 and the latent-class likelihood with the bins as groups
    gives ``l1_c = log P(pattern_c | Y = 1)``, ``l0_c = log P(pattern_c | Y = 0)``.

    Returns
    -------
    ndarray of shape (R, M)
        NaN for empty bins.
    """

    def cell_loglik(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        l0, l1 = _cell_class_loglik(table.states, a[rows], b[rows])
        return l0[:, table.pattern], l1[:, table.pattern]

    return posterior_group_rates(
        table.bin, table.count, table.n_bins, cell_loglik, a.shape[0], n_rep, rng
    )


def bootstrap_bin_moments(
    table: CellTable,
    draws: tuple[np.ndarray, np.ndarray, np.ndarray],
    point: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_rep: int,
    rng: np.random.Generator,
    joint: bool = False,
) -> dict[str, np.ndarray]:
    """Resampled signed bin moments under each source, on the non-empty cells only.

    Parameters
    ----------
    table : CellTable
        Non-empty (bin, pattern) cells of the evaluation items.
    draws : (a, b, w), each of shape (S, K)
        Channel draws and their annotator weights; replicate r uses draw ``r mod S``.
    point : (a, b, w), each of shape (1, K)
        The point channels (evaluation-only source and the sample moments).
    n_rep : int
        Replicates R.
    rng : numpy.random.Generator
    joint : bool, default False
        Also the ``posterior`` source: each bin's rate drawn with
        :func:`posterior_bin_rates` given channel draw ``r mod S``, bin shares and
        score sums from the same Bayesian bootstrap of the cells,
        ``D_rm = sum_{c in m} g_rc (rate_rm - mean score_c)``.

    Returns
    -------
    dict
        ``point`` (M,): sample moments at the point channels; ``full``,
        ``evaluation``, ``channel`` (and with ``joint``, ``posterior``) (R, M):
        replicate moments; ``rate_<source>`` (R, M) for the resampled sources:
        corrected (or, for ``posterior``, latent-class) positive rate per bin
        (NaN for empty bins).
        Work is done in chunks of replicates, so memory is O(chunk x cells).
    """
    a, b, w = draws
    pa, pb, pw = point
    states = table.states
    zbar = table.mean_score
    u_point = corrected_pattern_targets(states, pa, pb, pw)[0][table.pattern]  # (C,)
    n_bins, s = table.n_bins, a.shape[0]
    out = {
        "point": (table.bin_sums((u_point * table.count)[None])[0] - table.bin_score_sum) / table.n,
        "channel": corrected_cell_moments(table, a, b, w)[np.arange(n_rep) % s],
    }
    keys = ("full", "evaluation") + (("posterior",) if joint else ())
    for key in keys:
        out[key] = np.empty((n_rep, n_bins))
        out[f"rate_{key}"] = np.empty((n_rep, n_bins))
    empty = table.bin_sums(table.count[None])[0] == 0
    if joint:
        out["rate_posterior"] = posterior_bin_rates(table, a, b, n_rep, rng)
    for rows in row_chunks(n_rep, max(table.n_cells, states.shape[0])):
        g = rng.standard_gamma(table.count, size=(rows.stop - rows.start, table.n_cells))
        g /= g.sum(axis=1, keepdims=True)
        weight = table.bin_sums(g)
        out["evaluation"][rows] = table.bin_sums(g * (u_point - zbar))
        with np.errstate(invalid="ignore", divide="ignore"):
            out["rate_evaluation"][rows] = table.bin_sums(g * u_point) / weight
        if joint:
            rate = np.nan_to_num(out["rate_posterior"][rows])
            out["posterior"][rows] = rate * weight - table.bin_sums(g * zbar)
        if s == 1:
            out["full"][rows] = out["evaluation"][rows]
            out["rate_full"][rows] = out["rate_evaluation"][rows]
            continue
        d = np.arange(rows.start, rows.stop) % s
        u = corrected_pattern_targets(states, a[d], b[d], w[d])[:, table.pattern]
        out["full"][rows] = table.bin_sums(g * (u - zbar))
        with np.errstate(invalid="ignore", divide="ignore"):
            out["rate_full"][rows] = table.bin_sums(g * u) / weight
    out["rate_full"][:, empty] = np.nan
    out["rate_evaluation"][:, empty] = np.nan
    return out


# ---------------------------------------------------------------- labelled result
@dataclass(eq=False)
class NCECEPosterior:
    """NC-ECE: bias-aware estimate, interval and calibration test, with their replicates.

    Attributes
    ----------
    ece : xarray.Dataset
        Variables ``full``, ``channel``, ``evaluation`` (and ``posterior`` with
        ``sample_use="joint"``), each of shape (draw,):
        the raw resampled plug-in ``sum_m |D*_m|`` (biased upward like the
        plug-in; the bias-aware quantities below are built from ``moments``).
    moments : xarray.Dataset
        The signed bin moments behind them, each of shape (draw, bin).
    plugin_moments : xarray.DataArray of shape (bin,)
        Signed bin moments of the sample at the point channels.
    plugin : float
        The raw plug-in NC-ECE ``sum_m |D_m|`` at the point channels (biased upward).
    curve : xarray.Dataset
        Per bin: ``count``, ``mean_score`` and ``corrected_rate[draw, bin]`` (the
        corrected positive rate under the reported source), for a reliability diagram
        with credible bands. Empty bins are NaN (nothing to draw).
    bin_edges : ndarray
    prob : float
        Default interval probability.
    sample_use : {"split", "reuse", "joint"}
        Whether the channels came from other items or from these; it picks the
        reported source (:attr:`source`).
    info : dict
        ``channel_draws``, ``bootstrap_replicates``, ``weights``,
        ``channel_uncertainty`` (False for a point fit), ``warnings``.
    """

    ece: xr.Dataset
    moments: xr.Dataset
    plugin_moments: xr.DataArray
    plugin: float
    curve: xr.Dataset
    bin_edges: np.ndarray
    prob: float = 0.9
    sample_use: str = "split"
    info: dict = field(default_factory=dict)

    @property
    def source(self) -> str:
        """The reported source: ``"full"`` for split samples, ``"evaluation"`` for reuse,
        ``"posterior"`` for joint."""
        return _REPORTED_SOURCE[self.sample_use]

    @property
    def sources(self) -> tuple[str, ...]:
        """The sources this result holds replicates of."""
        return tuple(s for s in SOURCES if s in self.moments.data_vars)

    def _replicates(self, source: str | None) -> np.ndarray:
        source = self.source if source is None else source
        if source not in self.sources:
            raise ConfigError(
                f"source must be one of {self.sources}; got {source!r} "
                "(the posterior source needs sample_use='joint')."
            )
        return self.moments[source].values

    def center(self, source: str | None = None) -> np.ndarray:
        """The signed bin moments the source's construction starts from, shape (M,).

        The sample moments at the point channels (:attr:`plugin_moments`) for the
        resampling sources; for ``posterior``, the posterior mean of the bin moments
        (its draws are the posterior itself, not deviations around a point fit).
        """
        reps = self._replicates(source)
        if (self.source if source is None else source) == "posterior":
            return reps.mean(axis=0)
        return self.plugin_moments.values

    def plugin_of(self, source: str | None = None) -> float:
        """The raw plug-in ``sum_m |D_m|`` of :meth:`center` (biased upward near 0)."""
        return float(np.abs(self.center(source)).sum())

    @property
    def point(self) -> float:
        """The plug-in at the point channels (same as :attr:`plugin`)."""
        return self.plugin

    @property
    def estimate(self) -> float:
        """Bias-corrected NC-ECE of the reported source; see :func:`debiased_ece`."""
        return debiased_ece(self.center(), self._replicates(None))

    @property
    def p_value(self) -> float:
        """p-value of H0 "perfectly calibrated"; see :func:`calibration_p_value`."""
        return calibration_p_value(self.center(), self._replicates(None))

    @property
    def interval_method(self) -> str:
        draws = bool(self.info.get("channel_uncertainty", True))
        return f"{INTERVAL_METHOD}; {_SOURCE_NOTES[(self.sample_use, draws)]}"

    def interval(self, source: str | None = None, prob: float | None = None) -> tuple[float, float]:
        """Bias-aware interval of the population binned ECE under ``source``.

        ``source`` defaults to the reported one (:attr:`source`). ``[0, hi]`` when
        the calibration test does not reject at ``1 - prob``; see
        :func:`bias_aware_interval`.
        """
        p = _check_prob(self.prob if prob is None else prob)
        lo, hi, _ = bias_aware_interval(self.center(source), self._replicates(source), p)
        return lo, hi

    def prob_above(self, threshold: float, source: str | None = None) -> float:
        """Share of bias-corrected replicates ``2 theta_hat - theta*_r`` above ``threshold``."""
        d = self.center(source)
        boot = np.abs(d + _deviations(self._replicates(source))).sum(axis=1)
        return float(np.mean(2.0 * np.abs(d).sum() - boot > threshold))

    def curve_band(self, prob: float | None = None) -> xr.Dataset:
        """Mean and equal-tailed band of the corrected positive rate per bin."""
        p = _check_prob(self.prob if prob is None else prob)
        rate = self.curve["corrected_rate"]
        return xr.Dataset(
            {
                "mean": rate.mean(DRAW),
                "lo": rate.quantile((1 - p) / 2, dim=DRAW).drop_vars("quantile"),
                "hi": rate.quantile(1 - (1 - p) / 2, dim=DRAW).drop_vars("quantile"),
                "mean_score": self.curve["mean_score"],
                "count": self.curve["count"],
            }
        )

    def decomposition(self) -> dict:
        """Per source: sd of the resampled NC-ECE and the bias-aware interval."""
        out = {}
        for s in self.sources:
            lo, hi = self.interval(s)
            out[s] = {"sd": float(self.ece[s].std()), "lo": lo, "hi": hi, "width": hi - lo}
        return out

    def to_dict(self) -> dict:
        """The reported numbers: ``point`` (the bias-aware estimate), ``plugin`` (the raw
        plug-in it corrects), ``lo``, ``hi``, ``p_value``, all from the reported source."""
        lo, hi = self.interval()
        return {
            "point": self.estimate,
            "plugin": self.plugin_of(),
            "lo": lo,
            "hi": hi,
            "prob": self.prob,
            "p_value": self.p_value,
            "interval_method": self.interval_method,
            "sample_use": self.sample_use,
            "source": self.source,
            "channel_uncertainty": bool(self.info.get("channel_uncertainty", True)),
            "warnings": list(self.info.get("warnings", [])),
            "decomposition": self.decomposition(),
        }

    def __repr__(self) -> str:
        lo, hi = self.interval()
        return (
            f"<NCECEPosterior estimate={self.estimate:.5f} plugin={self.plugin_of():.5f} "
            f"{int(round(self.prob * 100))}% {self.source} [{lo:.5f}, {hi:.5f}] "
            f"p(calibrated)={self.p_value:.3g} replicates={self.ece.sizes[DRAW]}>"
        )


# ---------------------------------------------------------------- entry point
def _check_prob(prob) -> float:
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 < float(prob) < 1:
        raise ConfigError(f"prob must be a number in (0, 1); got {prob!r}.")
    return float(prob)


def _check_n_bootstrap(n_bootstrap, n_draws: int) -> int:
    if n_bootstrap is None:
        return max(n_draws, DEFAULT_REPLICATES)
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, numbers.Integral):
        raise ConfigError(
            f"n_bootstrap must be a whole number of replicates; got {n_bootstrap!r}. "
            f"Leave it unset for {DEFAULT_REPLICATES}."
        )
    n_bootstrap = int(n_bootstrap)
    if n_bootstrap < MIN_REPLICATES:
        raise ConfigError(
            f"n_bootstrap must be at least {MIN_REPLICATES}; got {n_bootstrap}. The interval's "
            "ends are tail quantiles and the p-value moves in steps of 1 / (n_bootstrap + 1)."
        )
    if n_bootstrap > MAX_REPLICATES:
        raise ConfigError(
            f"n_bootstrap must be at most {MAX_REPLICATES:,}; got {n_bootstrap:,}. The p-value "
            "then resolves 1e-5 and the interval's Monte Carlo error is far below its width; "
            "the replicates' table grows with n_bootstrap x bins."
        )
    return n_bootstrap


def posterior_mean_channels(channels):
    """One-draw channels at the draws' mean of ``a``, ``b`` and the prevalence (two
    classes) or of the confusion matrices and class prevalences (more classes).

    A point fit (one draw) is returned as it is.

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> ch = ChannelFit.known([0.1], [0.9], mu=0.4)
    >>> posterior_mean_channels(ch) is ch
    True
    """
    from bayescal.channels.result import ChannelFit

    if channels.n_draws == 1:
        return channels
    if channels.n_classes > 2:
        return ChannelFit.from_confusion(
            channels.confusion.values.mean(axis=0),
            channels.class_prevalence.values.mean(axis=0),
            annotators=channels.annotators,
            classes=channels.classes,
            groups=[str(g) for g in channels.class_prevalence["group"].values],
            group_counts=channels.group_counts.values,
            method=f"{channels.method}_posterior_mean",
        )
    return ChannelFit.from_point(
        channels.a.values.mean(axis=0),
        channels.b.values.mean(axis=0),
        channels.prevalence.values.mean(axis=0),
        annotators=channels.annotators,
        groups=[str(g) for g in channels.prevalence["group"].values],
        group_counts=channels.group_counts.values,
        method=f"{channels.method} (posterior mean)",
    )


def _point_channels(channels, point_channels):
    from bayescal.channels.result import ChannelFit

    if point_channels is None:
        return posterior_mean_channels(channels)
    if not isinstance(point_channels, ChannelFit):
        raise ConfigError(
            f"point_channels must be a ChannelFit; got {type(point_channels).__name__}."
        )
    if point_channels.n_draws != 1:
        raise ConfigError(
            f"point_channels must be one draw (a point fit); got {point_channels.n_draws} draws."
        )
    return point_channels


def nc_ece_interval(
    data,
    channels,
    *,
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    bins=None,
    bin_strategy: str = "uniform",
    prob: float = 0.9,
    n_bootstrap: int | None = None,
    point_channels=None,
    sample_use: str = "split",
    random_state=0,
) -> NCECEPosterior:
    """NC-ECE with a bias-aware interval and a test of perfect calibration.

    The interval is for the population binned ECE (SPEC §1); it accounts for the
    upward bias of binned ``|.|`` errors (SPEC §4) and reaches 0 when the data are
    consistent with calibration. See the module docstring for the construction.

    Parameters
    ----------
    data : Annotations or Summary
        Evaluation items.
    channels : ChannelFit
        A posterior (many draws): its draws enter the ``full`` interval and the
        test. A point fit (one draw) is allowed: then only the evaluation sample
        varies, and the interval and test are conditional on the channels.
    weights, lam
        Annotator weight rule (see :func:`bayescal.metrics.annotator_weights`).
    bins : int or edges, default 10 equal-width bins (only with a container).
    prob : float, default 0.9
        Interval probability; the calibration test's level is ``1 - prob``.
    n_bootstrap : int, optional
        Bootstrap replicates (at least :data:`MIN_REPLICATES`); default
        ``max(draws, 2000)``. Replicate r uses channel draw ``r mod draws``.
    point_channels : ChannelFit, optional
        One-draw channels for the plug-in, the sample moments and the
        evaluation-only source; default: the posterior mean of ``a`` and ``b``.
    sample_use : {"split", "reuse", "joint"}, default "split"
        ``"split"``: the channels come from other items (or are known); the
        reported interval pairs channel draws with the item bootstrap. ``"reuse"``:
        the channels were fitted on these items; the reported interval resamples
        the items with the channels held at their point value (see the module
        docstring for why and the measured coverage). ``"joint"``: the channels are a
        posterior fitted on these items; the reported interval draws each bin's
        positive rate from its latent-class posterior given each channel draw
        (:func:`posterior_bin_rates`), so priors and gold items move it as they move
        the channels. When unsure, ``"split"`` is the conservative choice.
    random_state : None, int or Generator, default 0

    Returns
    -------
    NCECEPosterior
        ``.estimate`` (bias-corrected), ``.plugin`` (raw), ``.interval()``,
        ``.p_value``, ``.interval_method``, ``.to_dict()``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import ChannelFit
    >>> from bayescal.simulate import simulate_toy, TOY_FP, TOY_FN
    >>> data = simulate_toy(4000, "shifted", random_state=0)
    >>> rng = np.random.default_rng(0)
    >>> a = np.array(TOY_FP) + rng.normal(0, 0.01, (500, 3))
    >>> b = 1 - np.array(TOY_FN) + rng.normal(0, 0.01, (500, 3))
    >>> post = ChannelFit.from_draws(a, b, np.full((500, 1), 0.5), annotators=data.annotators,
    ...                              groups=["all"], group_counts=[4000], method="example")
    >>> r = nc_ece_interval(data, post)
    >>> lo, hi = r.interval()
    >>> bool(lo < r.estimate < hi), r.p_value < 0.01
    (True, True)
    """
    from bayescal.channels.result import ChannelFit

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    prob = _check_prob(prob)
    if sample_use not in SAMPLE_USES:
        raise ConfigError(f"sample_use must be one of {SAMPLE_USES}; got {sample_use!r}.")
    if sample_use == "joint" and channels.n_draws < 2:
        raise ConfigError(
            "sample_use='joint' draws the bin rates with a channel posterior; these channels "
            "are a point fit (one draw). Pass posterior draws, or sample_use='reuse' for an "
            "evaluation-only interval conditional on the point channels."
        )
    n_rep = _check_n_bootstrap(n_bootstrap, channels.n_draws)
    rng = check_random_state(random_state)
    summary = _as_summary(data, bins, bin_strategy)
    if summary.n_items == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    point_channels = _point_channels(channels, point_channels)
    a, b = _channels_for(summary, channels)
    pa, pb = _channels_for(summary, point_channels)
    table = summary_cells(summary)
    w = annotator_weights(channels, weights, lam=lam).values
    pw = w if point_channels is channels else annotator_weights(point_channels, weights, lam=lam)
    reps = bootstrap_bin_moments(
        table, (a, b, w), (pa, pb, np.asarray(pw)), n_rep, rng, joint=sample_use == "joint"
    )
    return _posterior(summary, table, reps, prob, sample_use, channels, weights)


def _posterior(summary, table, reps, prob, sample_use, channels, weights) -> NCECEPosterior:
    """Wrap the kernel's arrays into the labelled result."""
    draws = np.arange(reps["full"].shape[0])
    source = _REPORTED_SOURCE[sample_use]
    bins_coord = summary.dataset[BIN].values
    bin_count = table.bin_sums(table.count[None])[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_score = np.where(bin_count > 0, table.bin_score_sum / bin_count, np.nan)
    message = check_bin_occupancy(bin_count, stacklevel=4)
    present = [s for s in SOURCES if s in reps]
    return NCECEPosterior(
        ece=xr.Dataset(
            {s: ((DRAW,), np.abs(reps[s]).sum(axis=1)) for s in present}, coords={DRAW: draws}
        ),
        moments=xr.Dataset(
            {s: ((DRAW, BIN), reps[s]) for s in present},
            coords={DRAW: draws, BIN: bins_coord},
        ),
        plugin_moments=xr.DataArray(
            reps["point"], dims=(BIN,), coords={BIN: bins_coord}, name="plugin_moments"
        ),
        plugin=float(np.abs(reps["point"]).sum()),
        curve=xr.Dataset(
            {
                "corrected_rate": ((DRAW, BIN), reps[f"rate_{source}"]),
                "mean_score": ((BIN,), mean_score),
                "count": ((BIN,), bin_count),
            },
            coords={DRAW: draws, BIN: bins_coord},
        ),
        bin_edges=summary.bin_edges,
        prob=prob,
        sample_use=sample_use,
        info={
            "channel_draws": channels.n_draws,
            "bootstrap_replicates": int(draws.size),
            "weights": weights if isinstance(weights, str) else "explicit",
            "channel_uncertainty": channels.n_draws > 1,
            "warnings": [] if message is None else [message],
        },
    )


# ---------------------------------------------------------- multiclass (top-label, class-wise)
@dataclass(eq=False)
class IntervalPart:
    """One multiclass NC-ECE (top-label or class-wise): estimate, interval, test, replicates.

    Attributes
    ----------
    plugin_moments : ndarray of shape (M',)
        Signed moments at the point channels (class-wise: ``C x M`` divided by C).
    replicates : dict of str -> ndarray of shape (R, M')
        Per source (``full``, ``channel``, ``evaluation``, and ``posterior`` with
        ``sample_use="joint"``).
    accuracy : ndarray of shape (R, M)
        Top-label only: corrected accuracy (for ``posterior``, latent-class accuracy)
        per bin under the reported source, for bands.
    prob : float
    sample_use : {"split", "reuse", "joint"}
        Picks the reported source, as in :class:`NCECEPosterior`.
    """

    plugin_moments: np.ndarray
    replicates: dict[str, np.ndarray]
    prob: float = 0.9
    accuracy: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    sample_use: str = "split"

    @property
    def source(self) -> str:
        """The reported source: ``full`` (split), ``evaluation`` (reuse), ``posterior`` (joint)."""
        return _REPORTED_SOURCE[self.sample_use]

    @property
    def plugin(self) -> float:
        """Raw plug-in ``sum |D|`` at the point channels (biased upward)."""
        return float(np.abs(self.plugin_moments).sum())

    def _replicates(self, source: str | None) -> np.ndarray:
        source = self.source if source is None else source
        if source not in self.replicates:
            raise ConfigError(f"source must be one of {tuple(self.replicates)}; got {source!r}.")
        return self.replicates[source]

    def center(self, source: str | None = None) -> np.ndarray:
        """Signed moments the source's construction starts from (as
        :meth:`NCECEPosterior.center`): the posterior mean for ``posterior``, the
        plug-in moments otherwise."""
        reps = self._replicates(source)
        if (self.source if source is None else source) == "posterior":
            return reps.mean(axis=0)
        return self.plugin_moments

    def plugin_of(self, source: str | None = None) -> float:
        """The raw plug-in ``sum |D|`` of :meth:`center`."""
        return float(np.abs(self.center(source)).sum())

    @property
    def estimate(self) -> float:
        """Bias-corrected NC-ECE of the reported source; see
        :func:`~bayescal.metrics.uncertainty.debiased_ece`."""
        return debiased_ece(self.center(), self._replicates(None))

    def p_value(self, source: str | None = None) -> float:
        """Test of perfect calibration (H0: every signed moment is 0); see
        :func:`~bayescal.metrics.uncertainty.calibration_p_value`."""
        return calibration_p_value(self.center(source), self._replicates(source))

    def interval(self, source: str | None = None, prob: float | None = None) -> tuple[float, float]:
        """Bias-aware interval; ``[0, hi]`` when the calibration test does not reject (see
        :func:`~bayescal.metrics.uncertainty.bias_aware_interval`)."""
        p = _check_prob(self.prob if prob is None else prob)
        lo, hi, _ = bias_aware_interval(self.center(source), self._replicates(source), p)
        return lo, hi

    def interval_mcse(self, source: str | None = None, prob: float | None = None) -> dict:
        """Monte Carlo standard errors of :meth:`interval`'s ends (:mod:`bayescal.channels.mcse`).

        Replicate ``r`` used channel draw ``r mod S`` (``S`` = ``draws_used`` of
        :attr:`info`: at most :data:`JOINT_DRAWS` for the ``posterior`` source), so the
        replicates are read grouped by draw and the batch-means errors count the draws
        they share. Each end is a quantile of the replicates plus, for the ``posterior``
        source, a centre that is their mean: the two errors are added in quadrature.
        The lower end fixed at 0 (the test does not reject) has error 0. Returns ``lo``,
        ``hi`` and ``draws_used``.
        """
        src = self.source if source is None else source
        p = _check_prob(self.prob if prob is None else prob)
        reps = self._replicates(source)
        n_rep = reps.shape[0]
        draws = int(self.info.get("draws_used", {}).get(src, n_rep)) if self.info else n_rep
        draws = max(1, min(draws, n_rep))
        order = np.argsort(np.arange(n_rep) % draws, kind="stable")
        reps = np.asarray(reps, dtype=np.float64)[order]
        d = self.center(source)
        dev = _deviations(reps)
        q = 1.0 - (1.0 - p) / 2
        centre = 0.0
        if src == "posterior":  # the centre is the replicates' mean: its own Monte Carlo error
            centre = float(mean_mcse(reps @ np.sign(d)))
        hi = math.hypot(centre, float(quantile_mcse(-(dev @ np.sign(d)), q)))
        lo_end, _ = self.interval(source, p)
        lo = 0.0
        if lo_end > 0:
            lo = math.hypot(2 * centre, float(quantile_mcse(np.abs(d + dev).sum(axis=1), q)))
        return {"lo": lo, "hi": hi, "draws_used": draws}

    def replicated_ece(self, source: str | None = None) -> np.ndarray:
        """The raw resampled plug-in ``sum |D_r|`` per replicate (biased upward)."""
        return np.abs(self._replicates(source)).sum(axis=1)

    def decomposition(self) -> dict:
        """Per source: sd of the resampled NC-ECE and the bias-aware interval."""
        out = {}
        for s in self.replicates:
            lo, hi = self.interval(s)
            out[s] = {"sd": float(self.replicated_ece(s).std()), "lo": lo, "hi": hi}
        return out

    def to_dict(self) -> dict:
        """``point`` (bias-aware estimate), ``plugin`` (the raw plug-in it corrects),
        ``lo``, ``hi``, ``prob``, ``p_value``, ``sample_use``, ``source``,
        ``decomposition`` (the binary NC-ECE layout), all from the reported source; ``mcse``
        of ``lo`` and ``hi`` and the ``draws_used`` (:meth:`interval_mcse`)."""
        lo, hi = self.interval()
        err = self.interval_mcse()
        return {
            "point": self.estimate,
            "plugin": self.plugin_of(),
            "lo": lo,
            "hi": hi,
            "mcse": {"of_lo": err["lo"], "of_hi": err["hi"]},
            "draws_used": err["draws_used"],
            "prob": self.prob,
            "p_value": self.p_value(),
            "interval_method": f"{INTERVAL_METHOD}; "
            + _SOURCE_NOTES[(self.sample_use, bool(self.info.get("channel_uncertainty", True)))],
            "sample_use": self.sample_use,
            "source": self.source,
            "channel_uncertainty": bool(self.info.get("channel_uncertainty", True)),
            "decomposition": self.decomposition(),
        }


@dataclass(eq=False)
class MulticlassNCECEInterval:
    """Top-label and class-wise NC-ECE with intervals (see the module docstring).

    Attributes
    ----------
    top_label, classwise : IntervalPart
    bin_edges : ndarray
    bin_count, bin_conf_mean : ndarray of shape (M,)
        Top-label items and mean confidence per bin (for reliability diagrams).
    classes : list of str
    """

    top_label: IntervalPart
    classwise: IntervalPart
    bin_edges: np.ndarray
    bin_count: np.ndarray
    bin_conf_mean: np.ndarray
    classes: list
    info: dict = field(default_factory=dict)

    def accuracy_band(self, prob: float | None = None) -> xr.Dataset:
        """Corrected top-label accuracy per bin: mean and equal-tailed band (reported source)."""
        p = self.top_label.prob if prob is None else prob
        acc = self.top_label.accuracy
        if acc is None:  # set by the top-label estimator, absent on a hand-built part
            raise ConfigError(
                "this interval's top-label part has no accuracy replicates; build it with the "
                "multiclass NC-ECE interval estimator, which stores them."
            )
        filled = self.bin_count > 0  # empty bins have no accuracy (NaN in every replicate)
        lo, hi, mean = (np.full(acc.shape[1], np.nan) for _ in range(3))
        lo[filled], hi[filled] = np.quantile(acc[:, filled], [(1 - p) / 2, 1 - (1 - p) / 2], 0)
        mean[filled] = acc[:, filled].mean(axis=0)
        return xr.Dataset(
            {
                "mean": ((BIN,), mean),
                "lo": ((BIN,), lo),
                "hi": ((BIN,), hi),
                "mean_confidence": ((BIN,), self.bin_conf_mean),
                "count": ((BIN,), self.bin_count),
            }
        )

    def to_dict(self) -> dict:
        return {"top_label": self.top_label.to_dict(), "classwise": self.classwise.to_dict()}


def _multiclass_replicates(
    index, n_out, count, zsum, targets, point, n_rep, rng, draws, rates=None
) -> dict[str, np.ndarray]:
    """Signed moments ``sum_cells g (U - zbar)`` per replicate under each source.

    ``targets(d)`` gives corrected targets of the cells for channel draws ``d``;
    ``point`` those at the point channels (n_cells,). ``rates`` ``(rate, group)``, when
    given, are the joint route's draws of each group's rate, (R, G), and each cell's
    group (:func:`posterior_group_rates`): the ``posterior`` source is then
    ``sum_cells g (rate - zbar)`` with the same bootstrap weights ``g``. Returns dict of
    (R, n_out) and ``rate_<source>`` (R, n_out): weighted target (or rate) mean per
    output.

    The sums run over contiguous segments of the cells sorted by (output, group):
    ``sum g (U - zbar) = sum g U - sum g zbar``, the rate means share ``sum g U``, and a
    group's rate is constant over its cells, so the posterior source is a sum over the
    (output, group) segments of ``rate (sum_cells g)``, without a (replicates x cells)
    array of rates. The
    bootstrap weights are drawn in the cells' given order (the same random stream).
    """
    n = count.sum()
    index = np.asarray(index, dtype=np.int64)
    group = None if rates is None else np.asarray(rates[1], dtype=np.int64)
    n_groups = 0 if rates is None else rates[0].shape[1]
    sort_key = index if group is None else index * n_groups + group
    order = np.argsort(sort_key, kind="stable")
    cells = _Segments(index[order])
    count_s, zsum_s, point_s = count[order], zsum[order], point[order]
    zbar_s = zsum_s / count_s
    sources = ("full", "evaluation") + (() if rates is None else ("posterior",))
    out = {"point": cells.sums(point_s * count_s - zsum_s) / n}
    for key in sources:
        out[key] = np.empty((n_rep, n_out))
        out[f"rate_{key}"] = np.empty((n_rep, n_out))
    if group is not None:
        pairs = _Segments(sort_key[order])  # (output, group) segments
        pair_group = pairs.values % n_groups
        pair_cells = _Segments(index[order][pairs.starts])  # the segments by output
    d_all = np.arange(n_rep) % draws
    chan = np.empty((n_rep, n_out))
    z_out = cells.sums(zsum_s)
    for rows in row_chunks(n_rep, count.size):
        u = targets(d_all[rows])[:, order]  # (r, cells), sorted
        chan[rows] = cells.into(cells.sums(u * count_s) - z_out, n_out) / n
        g = rng.standard_gamma(count, size=(u.shape[0], count.size))
        g /= g.sum(axis=1, keepdims=True)
        g = g[:, order]
        weight = cells.sums(g)
        g_zbar = cells.sums(g * zbar_s)
        g_point = cells.sums(g * point_s)
        g_u = cells.sums(g * u)
        moments = {"full": (g_u - g_zbar, g_u), "evaluation": (g_point - g_zbar, g_point)}
        if group is not None:
            g_rate = pair_cells.sums(rates[0][rows][:, pair_group] * pairs.sums(g))
            moments["posterior"] = (g_rate - g_zbar, g_rate)
        for key in sources:
            dev, num = moments[key]
            out[key][rows] = cells.into(dev, n_out)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[f"rate_{key}"][rows] = cells.into(num / weight, n_out, np.nan)
    out["point"] = cells.into(out["point"], n_out)
    out["channel"] = chan
    return out


class _Segments:
    """Runs of equal values in a sorted integer array: sums over each run."""

    def __init__(self, sorted_values: np.ndarray):
        starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
        self.starts = starts
        self.values = sorted_values[starts]

    def sums(self, x: np.ndarray) -> np.ndarray:
        """Sums of ``x[..., cells]`` over each run: (..., runs)."""
        return np.add.reduceat(x, self.starts, axis=-1)

    def into(self, x: np.ndarray, n_out: int, fill: float = 0.0) -> np.ndarray:
        """``x[..., runs]`` placed at its runs' values among ``n_out`` outputs."""
        full = np.full((*x.shape[:-1], n_out), fill)
        full[..., self.values] = x
        return full


def _pattern_class_loglik(states: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """``log P(pattern | Y = y)`` per draw, pattern and class, shape (S, P, C).

    ``states`` (P, K) hold answered classes, or C for a missing answer (which the
    likelihood skips: missingness is independent of the class, SPEC §3).
    """
    s, k, c, _ = confusion.shape
    out = np.zeros((s, states.shape[0], c))
    # log of the (S, K, C, C) entries once, laid out [draw, annotator, answer, class]
    log_answer = np.log(confusion).transpose(0, 1, 3, 2)
    for j in range(k):
        ans = states[:, j] < c
        out[:, ans, :] += log_answer[:, j][:, states[ans, j], :]  # (S, P_answered, C)
    return out


#: Tolerance and iteration limit of the EM for the other classes' shares.
_MIX_TOL, _MIX_ITER = 1e-10, 1000


def _group_class_shares(loglik, group, count, n_groups) -> np.ndarray:
    """Class shares ``P(Y = y | group)`` at one channel value, shape (n_groups, C).

    EM of the latent-class model with the groups as groups, the posterior mean of the
    shares under a ``Dirichlet(2/C, ..., 2/C)`` prior at each M-step (total
    concentration 2 for every C, the uniform prior of two classes), so every share is
    positive. ``loglik`` (cells, C) is ``log P(pattern_c | Y = y)``.
    """
    c = loglik.shape[1]
    lik = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    alpha = 2.0 / c
    n_g = np.bincount(group, weights=count, minlength=n_groups)
    weigh = cell_sums(group, n_groups, count)  # np.add.at was 5 s of a C = 50 audit
    pi = np.full((n_groups, c), 1.0 / c)
    for _ in range(_MIX_ITER):
        post = pi[group] * lik
        post /= post.sum(axis=1, keepdims=True)
        num = np.asarray(weigh @ post)
        new = (num + alpha) / (n_g[:, None] + 2.0)
        if np.abs(new - pi).max() < _MIX_TOL:
            return new
        pi = new
    return pi


def _group_rates(
    states: np.ndarray,
    confusion: np.ndarray,
    cell_pattern: np.ndarray,
    cell_target: np.ndarray,
    cell_group: np.ndarray,
    count: np.ndarray,
    n_rep: int,
    rng: np.random.Generator,
    max_draws: int | None = None,
    expand: bool = True,
    score_sum: np.ndarray | None = None,
    pattern_loglik: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`multiclass_cell_rates` per group: ``(rate (R, G), group index of each cell)``,
    so callers gather per chunk instead of holding an (R, cells) array.
    ``pattern_loglik`` ``(used draws, log P(pattern | y) at them (S', P, C))`` lets the
    parts of one interval share that table instead of recomputing it per part."""
    group_of, gi = np.unique(cell_group, return_inverse=True)
    gi = gi.reshape(-1)
    n_groups = group_of.size
    cells = np.arange(cell_pattern.size)
    mean_ll = _pattern_class_loglik(states, confusion.mean(axis=0, keepdims=True))[0]
    shares = _group_class_shares(mean_ll[cell_pattern], gi, count, n_groups)
    other = shares[gi].copy()  # (cells, C)
    other[cells, cell_target] = 0.0
    with np.errstate(divide="ignore"):
        log_other = np.log(other / other.sum(axis=1, keepdims=True))

    def split(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ll = ll[:, cell_pattern, :]
        return _logsumexp(ll + log_other[None], axis=2), ll[:, cells, cell_target]

    def cell_loglik(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if pattern_loglik is None:
            return split(_pattern_class_loglik(states, confusion[rows]))
        return split(pattern_loglik[1][np.searchsorted(pattern_loglik[0], rows)])

    prior = None
    if score_sum is not None:
        n_g = np.bincount(gi, weights=count, minlength=n_groups)
        zbar = np.bincount(gi, weights=score_sum, minlength=n_groups) / np.maximum(n_g, 1e-300)
        zbar = np.clip(zbar, 1e-6, 1.0 - 1e-6)  # a score of exactly 0 or 1 in every item
        prior = (RATE_PRIOR_WEIGHT * zbar, RATE_PRIOR_WEIGHT * (1.0 - zbar))
    reference = None
    if expand:
        l0, l1 = split(mean_ll[None])
        reference = (l0[0], l1[0])
    rate = posterior_group_rates(
        gi,
        count,
        n_groups,
        cell_loglik,
        confusion.shape[0],
        n_rep,
        rng,
        max_draws,
        reference,
        prior,
    )
    return rate, gi


def multiclass_cell_rates(
    states: np.ndarray,
    confusion: np.ndarray,
    cell_pattern: np.ndarray,
    cell_target: np.ndarray,
    cell_group: np.ndarray,
    count: np.ndarray,
    n_rep: int,
    rng: np.random.Generator,
    max_draws: int | None = None,
    expand: bool = True,
    score_sum: np.ndarray | None = None,
) -> np.ndarray:
    """The joint route's draws of each cell's group rate ``P(Y = target | group)``.

    The C-class likelihood of :func:`posterior_group_rates`: a cell of group g with
    target class k has ``l1_c = log P(pattern_c | Y = k)`` and
    ``l0_c = log sum_{y != k} phi_g[y] P(pattern_c | Y = y)``, the other classes
    mixed in their shares ``phi_g`` within the group. Those shares are a nuisance of
    the one-dimensional rate, estimated once at the posterior-mean channels
    (:func:`_group_class_shares`) rather than drawn with each channel draw; they
    enter only through which wrong class explains a pattern, not through the rate's
    own spread. With two classes there is one other class (``phi = 1``), so this is
    exactly the binary route (:func:`posterior_bin_rates`).

    Parameters
    ----------
    states : ndarray of shape (P, K)
        Answered classes, C for missing.
    confusion : ndarray of shape (S, K, C, C)
        Channel draws ``T[s, j, y, a]``.
    cell_pattern, cell_target, cell_group : ndarray of int of shape (cells,)
        Pattern, target class and group (consecutive integers) of each cell.
    count : ndarray of shape (cells,)
    n_rep : int
    rng : numpy.random.Generator
    max_draws : int, optional
        See :func:`posterior_group_rates`.
    expand : bool, default True
        Expand each draw's likelihood around the posterior-mean channels (one grid per
        group, see :func:`posterior_group_rates`); False computes a grid per draw (the
        slow reference the expansion is tested against).
    score_sum : ndarray of shape (cells,), optional
        The cells' sums of the target class's score. Given, each group's rate has the
        prior ``Beta(RATE_PRIOR_WEIGHT zbar_g, RATE_PRIOR_WEIGHT (1 - zbar_g))``, centred
        on the group's mean score ``zbar_g`` (see :data:`RATE_PRIOR_WEIGHT`); default the
        uniform prior of the binary route.

    Returns
    -------
    ndarray of shape (R, cells)
        The rate of each cell's group in each replicate.
    """
    rate, gi = _group_rates(
        states,
        confusion,
        cell_pattern,
        cell_target,
        cell_group,
        count,
        n_rep,
        rng,
        max_draws,
        expand,
        score_sum,
    )
    return rate[:, gi]


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    top = x.max(axis=axis, keepdims=True)
    return np.log(np.exp(x - top).sum(axis=axis)) + np.squeeze(top, axis=axis)


def multiclass_nc_ece_interval(
    data,
    channels,
    *,
    point_channels=None,
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    bins=None,
    prob: float = 0.9,
    n_bootstrap: int | None = None,
    sample_use: str = "split",
    random_state=0,
) -> MulticlassNCECEInterval:
    """Top-label and class-wise NC-ECE with bias-aware intervals (SPEC §3, §4).

    Parameters
    ----------
    data : MulticlassAnnotations or Summary
        The evaluation items.
    channels : ChannelFit
        A posterior (channel uncertainty enters through its draws) or a point fit
        (the interval then has the evaluation source only).
    point_channels : ChannelFit, optional
        Channels of the reported plug-in; default the posterior-mean confusions
        (or the point fit itself).
    weights, lam
        Annotator weight rule (see :func:`~bayescal.metrics.weights.class_weights`).
    bins : int or edges, only with a container (default 10).
    prob : float, default 0.9
    n_bootstrap : int, optional
        Replicates (default ``max(2000, draws)``; at least 100).
    sample_use : {"split", "reuse", "joint"}, default "split"
        As in :func:`nc_ece_interval`. ``"joint"`` (a posterior fitted on these items,
        as the audit's ``--channels bayes``): every bin's rate of the target class is
        drawn from its latent-class posterior given each channel draw, the groups
        being (bin, predicted class) for the top-label error and (class, bin) for the
        class-wise one (:func:`multiclass_cell_rates`, the C-class form of the binary
        route).
    random_state : None, int or Generator, default 0

    Returns
    -------
    MulticlassNCECEInterval

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.simulate import multiclass_population, simulate_multiclass
    >>> pop = multiclass_population(3, temperature=2.0)
    >>> data = simulate_multiclass(20_000, population=pop, random_state=0)
    >>> r = multiclass_nc_ece_interval(data, ChannelFit.known_confusion(pop.confusion))
    >>> lo, hi = r.top_label.interval()
    >>> bool(lo < r.top_label.estimate < hi), r.top_label.p_value() < 0.01
    (True, True)
    """
    from bayescal.channels.result import ChannelFit

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    prob = _check_prob(prob)
    if sample_use not in SAMPLE_USES:
        raise ConfigError(f"sample_use must be one of {SAMPLE_USES}; got {sample_use!r}.")
    if sample_use == "joint" and channels.n_draws < 2:
        raise ConfigError(
            "sample_use='joint' draws the bin rates with a channel posterior; these channels "
            "are a point fit (one draw). Pass posterior draws, or sample_use='reuse' for an "
            "evaluation-only interval conditional on the point channels."
        )
    summary = _as_multiclass_summary(data, bins)
    _check_match(summary, channels)
    if summary.n_cell_items == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    n_rep = _check_n_bootstrap(n_bootstrap, channels.n_draws)
    rng = check_random_state(random_state)
    if point_channels is None:
        point_channels = posterior_mean_channels(channels)
    _check_match(summary, point_channels)
    inv = inverse_confusions(channels)
    w = class_weights(channels, weights, lam=lam).values
    p_inv = inverse_confusions(point_channels)
    p_w = class_weights(point_channels, weights, lam=lam).values
    states = summary.states
    confusion = channels.confusion.values
    ds = summary.dataset
    m, c = summary.n_bins, summary.n_classes
    joint = sample_use == "joint"
    shared_loglik = None
    if joint:
        # the 1 + C parts (top-label, one per class) use the same channel draws
        used = _used_draws(channels.n_draws, n_rep, JOINT_DRAWS)
        shared_loglik = (used, _pattern_class_loglik(states, confusion[used]))

    def part(pattern, cls, index, n_out, count, zsum):
        # a corrected target depends on the (pattern, class) only: computed once per pair
        # and gathered to the cells (a pattern falls in several bins)
        pair, at = np.unique(pattern.astype(np.int64) * c + cls, return_inverse=True)
        pair_pattern, pair_class, at = pair // c, pair % c, at.reshape(-1)

        table = None
        if channels.n_draws * pair.size <= 8 * CHUNK_ELEMENTS:
            # replicate r uses draw r mod S: each draw's targets computed once, not R / S times
            table = _cell_targets(states, inv, w, pair_pattern, pair_class)

        def targets(d):
            if table is not None:
                return table[d][:, at]
            return _cell_targets(states, inv[d], w[d], pair_pattern, pair_class)[:, at]

        point = _cell_targets(states, p_inv, p_w, pair_pattern, pair_class)[0][at]
        rates = None
        if joint:
            group = index.astype(np.int64) * c + cls
            rates = _group_rates(
                states,
                confusion,
                pattern,
                cls,
                group,
                count,
                n_rep,
                rng,
                JOINT_DRAWS,
                score_sum=zsum,
                pattern_loglik=shared_loglik,
            )
        return _multiclass_replicates(
            index, n_out, count, zsum, targets, point, n_rep, rng, channels.n_draws, rates
        )

    top = part(
        ds["top_cell_pattern"].values,
        ds["top_cell_class"].values.astype(np.int64),
        ds["top_cell_bin"].values,
        m,
        ds["top_cell_count"].values.astype(np.float64),
        ds["top_cell_conf_sum"].values,
    )
    kept = ("full", "evaluation", "channel") + (("posterior",) if joint else ())
    cw_class = ds["classwise_cell_class"].values.astype(np.int64)
    cw_index = cw_class * m + ds["classwise_cell_bin"].values
    cw_count = ds["classwise_cell_count"].values.astype(np.float64)
    cw_zsum = ds["classwise_cell_prob_sum"].values
    cw = {key: np.empty((n_rep, c * m)) for key in kept}
    cw_point = np.empty(c * m)
    for k in range(c):
        # each class's cells partition the items: one bootstrap per class (module docstring)
        sel = cw_class == k
        r = part(
            ds["classwise_cell_pattern"].values[sel],
            cw_class[sel],
            cw_index[sel] - k * m,
            m,
            cw_count[sel],
            cw_zsum[sel],
        )
        cw_point[k * m : (k + 1) * m] = r["point"]
        for key in cw:
            cw[key][:, k * m : (k + 1) * m] = r[key]
    # replicate r used channel draw r mod S: S per source (the joint route's is capped)
    cycle = min(channels.n_draws, n_rep)
    draws_used = {key: cycle for key in kept}
    if joint:
        draws_used["posterior"] = int(_used_draws(channels.n_draws, n_rep, JOINT_DRAWS).size)
    draws_used["evaluation"] = 1  # the point channels
    info = {
        "channel_draws": channels.n_draws,
        "draws_used": draws_used,
        "bootstrap_replicates": n_rep,
        "channel_uncertainty": channels.n_draws > 1,
        "weights": weights if isinstance(weights, str) else "explicit",
    }
    bin_count = summary.top_bin_count.values
    with np.errstate(invalid="ignore", divide="ignore"):
        conf_mean = np.where(bin_count > 0, summary.top_bin_conf_sum.values / bin_count, np.nan)
    source = _REPORTED_SOURCE[sample_use]
    return MulticlassNCECEInterval(
        top_label=IntervalPart(
            plugin_moments=top["point"],
            replicates={s: top[s] for s in kept},
            prob=prob,
            accuracy=top[f"rate_{source}"],
            info=dict(info),
            sample_use=sample_use,
        ),
        classwise=IntervalPart(
            plugin_moments=cw_point / c,
            replicates={s: cw[s] / c for s in kept},
            prob=prob,
            info={**info, "classes": list(summary.classes)},
            sample_use=sample_use,
        ),
        bin_edges=summary.bin_edges,
        bin_count=bin_count,
        bin_conf_mean=conf_mean,
        classes=list(summary.classes),
        info=info,
    )
