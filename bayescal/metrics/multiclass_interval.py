"""Multiclass NC-ECE with channel and evaluation-sample uncertainty, bias-aware (SPEC §3, §4).

The multiclass NC-ECE (:mod:`bayescal.metrics.multiclass`) is a sum of absolute
signed bin moments, like the binary one, so it has the same upward bias near
zero (SPEC §4) and gets the same treatment as the binary track's intervals (the
kernels of :mod:`bayescal.metrics.uncertainty`, on multiclass replicates):

Replicates of the signed moments ``D_r``
    ``full``: channel draw ``r mod S`` and a Bayesian bootstrap of the evaluation
    items; ``channel``: the channel draws on the observed items; ``evaluation``:
    the point channels with the bootstrap. The bootstrap draws item weights
    ``Dirichlet(1, ..., 1)``; by the aggregation property each cell's total
    weight is ``Dirichlet(cell counts)``, so it is drawn on the non-empty cells
    of the summary (top-label: (bin, predicted class, pattern); class-wise, for
    each class k: (bin of ``p_k``, pattern)), never per item. Class-wise
    replicates resample each class's partition of the items on its own: the
    correlation between classes through shared items is ignored, which leaves
    every per-class moment's distribution exact.
Estimate
    ``max(0, 2 theta_hat - mean_r theta*_r)`` with ``theta*_r = sum |D + E_r|``
    and ``E_r`` the centred replicates (the bootstrap bias correction).
Interval
    Lower end ``max(0, 2 theta_hat - q_{1-a/2}(theta*))``; upper end
    ``theta_hat + q_{1-a/2}(-sum sign(D) E_r)`` (valid whatever the bias, since
    ``|d| <= |D| + sign(d)(d - D)``); the lower end is 0 when the test of
    perfect calibration does not reject at ``a = 1 - prob``.
Test of perfect calibration
    H0: every signed moment is 0; ``p = (1 + #{r: sum |E_r| >= theta_hat}) / (R + 1)``.

For the class-wise error ``(1/C) sum_k sum_m |D_km|`` the same formulas run on
the ``C x M`` moments divided by ``C``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.channels.result import ChannelFit
from bayescal.dims import BIN
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.multiclass import (
    _as_summary,
    _cell_targets,
    _check_match,
    inverse_confusions,
    multiclass_weights,
)
from bayescal.metrics.uncertainty import (
    INTERVAL_METHOD,
    bias_aware_interval,
    calibration_p_value,
    debiased_ece,
)
from bayescal.metrics.weights import DEFAULT_SHRINKAGE

__all__ = [
    "MulticlassNCECEInterval",
    "IntervalPart",
    "multiclass_nc_ece_interval",
    "SOURCES",
    "DEFAULT_REPLICATES",
]

SOURCES = ("full", "channel", "evaluation")
DEFAULT_REPLICATES = 2000
_MIN_REPLICATES = 100
#: Replicate chunks keep a (replicates, cells) array at most this many numbers.
_CHUNK_ELEMENTS = 5_000_000


@dataclass(eq=False)
class IntervalPart:
    """One multiclass NC-ECE (top-label or class-wise): estimate, interval, test, replicates.

    Attributes
    ----------
    plugin_moments : ndarray of shape (M',)
        Signed moments at the point channels (class-wise: ``C x M`` divided by C).
    replicates : dict of str -> ndarray of shape (R, M')
        Per source (:data:`SOURCES`).
    accuracy : ndarray of shape (R, M)
        Top-label only: corrected accuracy per bin (full source), for bands.
    prob : float
    """

    plugin_moments: np.ndarray
    replicates: dict
    prob: float = 0.9
    accuracy: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def plugin(self) -> float:
        """Raw plug-in ``sum |D|`` at the point channels (biased upward)."""
        return float(np.abs(self.plugin_moments).sum())

    def _replicates(self, source):
        if source not in SOURCES:
            raise ConfigError(f"source must be one of {SOURCES}; got {source!r}.")
        return self.replicates[source]

    @property
    def estimate(self) -> float:
        """Bias-corrected NC-ECE (full source); see
        :func:`~bayescal.metrics.uncertainty.debiased_ece`."""
        return debiased_ece(self.plugin_moments, self._replicates("full"))

    def p_value(self, source: str = "full") -> float:
        """Test of perfect calibration (H0: every signed moment is 0); see
        :func:`~bayescal.metrics.uncertainty.calibration_p_value`."""
        return calibration_p_value(self.plugin_moments, self._replicates(source))

    def interval(self, source: str = "full", prob: float | None = None) -> tuple[float, float]:
        """Bias-aware interval; ``[0, hi]`` when the calibration test does not reject (see
        :func:`~bayescal.metrics.uncertainty.bias_aware_interval`)."""
        p = self.prob if prob is None else prob
        if not 0 < p < 1:
            raise ConfigError(f"prob must be in (0, 1); got {p!r}.")
        lo, hi, _ = bias_aware_interval(self.plugin_moments, self._replicates(source), p)
        return lo, hi

    def replicated_ece(self, source: str = "full") -> np.ndarray:
        """The raw resampled plug-in ``sum |D_r|`` per replicate (biased upward)."""
        return np.abs(self.replicates[source]).sum(axis=1)

    def decomposition(self) -> dict:
        """Per source: sd of the resampled NC-ECE and the bias-aware interval."""
        out = {}
        for s in SOURCES:
            lo, hi = self.interval(s)
            out[s] = {"sd": float(self.replicated_ece(s).std()), "lo": lo, "hi": hi}
        return out

    def to_dict(self) -> dict:
        """``point`` (bias-aware estimate), ``plugin``, ``lo``, ``hi``, ``prob``,
        ``p_value``, ``decomposition`` (the binary NC-ECE layout)."""
        lo, hi = self.interval()
        return {
            "point": self.estimate,
            "plugin": self.plugin,
            "lo": lo,
            "hi": hi,
            "prob": self.prob,
            "p_value": self.p_value(),
            "interval_method": INTERVAL_METHOD,
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
        """Corrected top-label accuracy per bin: mean and equal-tailed band (full source)."""
        p = self.top_label.prob if prob is None else prob
        acc = self.top_label.accuracy
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


def _check_replicates(n, n_draws) -> int:
    n = max(DEFAULT_REPLICATES, n_draws) if n is None else n
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < _MIN_REPLICATES:
        raise ConfigError(f"n_bootstrap must be an integer >= {_MIN_REPLICATES}; got {n!r}.")
    return int(n)


def _bin_sums(index, n_out, values):
    """Sum ``values[..., cell]`` into ``n_out`` outputs by ``index[cell]``: (..., n_out)."""
    out = np.zeros((*values.shape[:-1], n_out))
    for b in range(n_out):
        sel = index == b
        if sel.any():
            out[..., b] = values[..., sel].sum(axis=-1)
    return out


def _replicates(index, n_out, count, zsum, targets, point, n_rep, rng, draws):
    """Signed moments ``sum_cells g (U - zbar)`` per replicate under each source.

    ``targets(d)`` gives corrected targets of the cells for channel draws ``d``;
    ``point`` those at the point channels (n_cells,). Returns dict of (R, n_out)
    and ``rate`` (R, n_out): weighted target mean per output (full source).
    """
    n = count.sum()
    zbar = zsum / count
    out = {
        "point": _bin_sums(index, n_out, point * count - zsum) / n,
        "channel": None,
        "full": np.empty((n_rep, n_out)),
        "evaluation": np.empty((n_rep, n_out)),
        "rate": np.empty((n_rep, n_out)),
    }
    d_all = np.arange(n_rep) % draws
    chan = np.empty((n_rep, n_out))
    step = max(1, _CHUNK_ELEMENTS // max(1, count.size))
    for start in range(0, n_rep, step):
        rows = slice(start, min(start + step, n_rep))
        u = targets(d_all[rows])  # (r, cells)
        chan[rows] = _bin_sums(index, n_out, u * count - zsum) / n
        g = rng.standard_gamma(count, size=(u.shape[0], count.size))
        g /= g.sum(axis=1, keepdims=True)
        out["evaluation"][rows] = _bin_sums(index, n_out, g * (point - zbar))
        out["full"][rows] = _bin_sums(index, n_out, g * (u - zbar))
        with np.errstate(invalid="ignore", divide="ignore"):
            out["rate"][rows] = _bin_sums(index, n_out, g * u) / _bin_sums(index, n_out, g)
    out["channel"] = chan
    return out


def _posterior_mean(channels: ChannelFit) -> ChannelFit:
    """The posterior-mean confusions and prevalences as a one-draw fit."""
    return ChannelFit.from_confusion(
        channels.confusion.values.mean(axis=0),
        channels.class_prevalence.values.mean(axis=0),
        annotators=channels.annotators,
        classes=channels.classes,
        groups=[str(g) for g in channels.class_prevalence["group"].values],
        group_counts=channels.group_counts.values,
        method=f"{channels.method}_posterior_mean",
    )


def multiclass_nc_ece_interval(
    data,
    channels: ChannelFit,
    *,
    point_channels: ChannelFit | None = None,
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    bins=None,
    prob: float = 0.9,
    n_bootstrap: int | None = None,
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
        Annotator weight rule (see :func:`~bayescal.metrics.multiclass.multiclass_weights`).
    bins : int or edges, only with a container (default 10).
    prob : float, default 0.9
    n_bootstrap : int, optional
        Replicates (default ``max(2000, draws)``; at least 100).
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
    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob!r}.")
    summary = _as_summary(data, bins)
    _check_match(summary, channels)
    if summary.n_cell_items == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    n_rep = _check_replicates(n_bootstrap, channels.n_draws)
    rng = check_random_state(random_state)
    if point_channels is None:
        point_channels = channels if channels.n_draws == 1 else _posterior_mean(channels)
    _check_match(summary, point_channels)
    inv = inverse_confusions(channels)
    w = multiclass_weights(channels, weights, lam=lam).values
    p_inv = inverse_confusions(point_channels)
    p_w = multiclass_weights(point_channels, weights, lam=lam).values
    states = summary.states
    ds = summary.dataset
    m, c = summary.n_bins, summary.n_classes

    def part(pattern, cls, index, n_out, count, zsum):
        def targets(d):
            return _cell_targets(states, inv[d], w[d], pattern, cls)

        point = _cell_targets(states, p_inv, p_w, pattern, cls)[0]
        return _replicates(index, n_out, count, zsum, targets, point, n_rep, rng, channels.n_draws)

    top = part(
        ds["top_cell_pattern"].values,
        ds["top_cell_class"].values,
        ds["top_cell_bin"].values,
        m,
        ds["top_cell_count"].values.astype(np.float64),
        ds["top_cell_conf_sum"].values,
    )
    cw_class = ds["classwise_cell_class"].values.astype(np.int64)
    cw_index = cw_class * m + ds["classwise_cell_bin"].values
    cw_count = ds["classwise_cell_count"].values.astype(np.float64)
    cw_zsum = ds["classwise_cell_prob_sum"].values
    cw = {key: np.empty((n_rep, c * m)) for key in ("full", "evaluation", "channel")}
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
    info = {
        "channel_draws": channels.n_draws,
        "bootstrap_replicates": n_rep,
        "channel_uncertainty": channels.n_draws > 1,
        "weights": weights if isinstance(weights, str) else "explicit",
    }
    bin_count = summary.top_bin_count.values
    with np.errstate(invalid="ignore", divide="ignore"):
        conf_mean = np.where(bin_count > 0, summary.top_bin_conf_sum.values / bin_count, np.nan)
    return MulticlassNCECEInterval(
        top_label=IntervalPart(
            plugin_moments=top["point"],
            replicates={s: top[s] for s in SOURCES},
            prob=prob,
            accuracy=top["rate"],
            info=dict(info),
        ),
        classwise=IntervalPart(
            plugin_moments=cw_point / c,
            replicates={s: cw[s] / c for s in SOURCES},
            prob=prob,
            info={**info, "classes": list(summary.classes)},
        ),
        bin_edges=summary.bin_edges,
        bin_count=bin_count,
        bin_conf_mean=conf_mean,
        classes=list(summary.classes),
        info=info,
    )
