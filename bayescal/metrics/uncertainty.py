"""NC-ECE credible intervals with two sources of uncertainty, and the corrected curve.

Channel uncertainty
    The posterior draws of the channels (``ChannelFit`` with S draws); each draw
    gives corrected labels and an NC-ECE on the fixed evaluation items.
Evaluation-sample uncertainty
    A Bayesian bootstrap of the evaluation items (Rubin 1981): item weights
    ``w ~ Dirichlet(1, ..., 1)``. By the aggregation property of the Dirichlet,
    the total weight of each (bin, pattern) cell is exactly
    ``Dirichlet(cell counts)``, so it is drawn on the M x 3**K cells, not the
    n items. Within a cell the corrected label is constant; the score enters
    through the cell's mean score. That is the only approximation: it ignores the
    variation of Z within a cell, which is at most the variation within a bin
    (sd <= width / sqrt(12), about 0.03 for ten bins) against a corrected-label
    residual sd of roughly 0.5 to 1, so it removes well under 1% of the
    bootstrap variance with ten or more bins. With very wide bins (one bin on
    [0, 1]) it understates the evaluation spread; use at least ten bins.

``full`` pairs channel draw s with bootstrap replicate s (both sources);
``channel`` uses the observed cell weights (channels only); ``evaluation``
uses one channel value (the posterior mean channels, or the point fit) with
the bootstrap (sampling only). The three are reported side by side; the
variances are not additive in general because of the absolute values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.dims import BIN, DRAW
from bayescal.errors import ConfigError
from bayescal.metrics.binned import _as_summary, _channels_for, corrected_pattern_targets
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, annotator_weights

__all__ = ["NCECEPosterior", "nc_ece_interval", "SOURCES"]

SOURCES = ("full", "channel", "evaluation")


@dataclass(eq=False)
class NCECEPosterior:
    """Posterior draws of NC-ECE under each uncertainty source, and of the corrected curve.

    Attributes
    ----------
    ece : xarray.Dataset
        Variables ``full``, ``channel``, ``evaluation``, each of shape (draw,).
    moments : xarray.Dataset
        The signed bin moments behind them, each of shape (draw, bin).
    point : float
        NC-ECE at the point channels (posterior-mean channels for a posterior).
    curve : xarray.Dataset
        Per bin: ``count``, ``mean_score`` and ``corrected_rate[draw, bin]`` (the
        corrected positive rate, full uncertainty), for a reliability diagram
        with credible bands. Empty bins are NaN (nothing to draw).
    bin_edges : ndarray
    prob : float
        Default interval probability.
    """

    ece: xr.Dataset
    moments: xr.Dataset
    point: float
    curve: xr.Dataset
    bin_edges: np.ndarray
    prob: float = 0.9
    info: dict = field(default_factory=dict)

    def interval(self, source: str = "full", prob: float | None = None) -> tuple[float, float]:
        """Equal-tailed credible interval of NC-ECE under ``source``."""
        if source not in SOURCES:
            raise ConfigError(f"source must be one of {SOURCES}; got {source!r}.")
        p = self.prob if prob is None else prob
        if not 0 < p < 1:
            raise ConfigError(f"prob must be in (0, 1); got {p}.")
        q = np.quantile(self.ece[source].values, [(1 - p) / 2, 1 - (1 - p) / 2])
        return float(q[0]), float(q[1])

    def prob_above(self, threshold: float, source: str = "full") -> float:
        """Posterior probability that the (binned) ECE exceeds ``threshold``."""
        return float((self.ece[source].values > threshold).mean())

    def curve_band(self, prob: float | None = None) -> xr.Dataset:
        """Mean and equal-tailed band of the corrected positive rate per bin."""
        p = self.prob if prob is None else prob
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
        """Standard deviation of NC-ECE under each source (and each interval)."""
        out = {}
        for s in SOURCES:
            lo, hi = self.interval(s)
            out[s] = {"sd": float(self.ece[s].std()), "lo": lo, "hi": hi, "width": hi - lo}
        return out

    def to_dict(self) -> dict:
        lo, hi = self.interval("full")
        return {
            "point": self.point,
            "mean": float(self.ece["full"].mean()),
            "lo": lo,
            "hi": hi,
            "prob": self.prob,
            "decomposition": self.decomposition(),
        }

    def __repr__(self) -> str:
        d = self.to_dict()
        return (
            f"<NCECEPosterior point={d['point']:.5f} mean={d['mean']:.5f} "
            f"{int(self.prob * 100)}% [{d['lo']:.5f}, {d['hi']:.5f}] draws={self.ece.sizes[DRAW]} "
            f"(channel-only width {d['decomposition']['channel']['width']:.5f}, "
            f"evaluation-only width {d['decomposition']['evaluation']['width']:.5f})>"
        )


def _bootstrap_cell_weights(counts: np.ndarray, n_rep: int, rng) -> np.ndarray:
    """Dirichlet(counts) over the nonzero cells, shape (n_rep, M, P), summing to one."""
    flat = counts.ravel()
    nz = np.flatnonzero(flat > 0)
    g = rng.standard_gamma(flat[nz], size=(n_rep, nz.size))
    g /= g.sum(axis=1, keepdims=True)
    out = np.zeros((n_rep, flat.size))
    out[:, nz] = g
    return out.reshape((n_rep,) + counts.shape)


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
    random_state=0,
) -> NCECEPosterior:
    """NC-ECE posterior with channel and evaluation-sample uncertainty.

    Parameters
    ----------
    data : Annotations or Summary
        Evaluation items.
    channels : ChannelFit
        A posterior (many draws). A point fit (one draw) is allowed: then only
        the evaluation-sample source varies and ``n_bootstrap`` sets the number of
        replicates (default 2000).
    point_channels : ChannelFit, optional
        The channels for ``point`` and for the evaluation-only source; default:
        the posterior mean of ``a`` and ``b``.
    prob : float, default 0.9
    random_state : int or Generator

    Returns
    -------
    NCECEPosterior

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
    >>> bool(lo < r.point < hi)
    True
    """
    from bayescal.channels.result import ChannelFit

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob}.")
    rng = check_random_state(random_state)
    summary = _as_summary(data, bins, bin_strategy)
    a, b = _channels_for(summary, channels)
    s = channels.n_draws
    n_rep = s if s > 1 else int(n_bootstrap or 2000)
    if n_bootstrap is not None and s > 1 and n_bootstrap != s:
        raise ConfigError(
            "with a channel posterior the bootstrap pairs one "
            "replicate with each draw; leave n_bootstrap unset."
        )
    if point_channels is None:
        point_channels = ChannelFit.from_point(
            a.mean(axis=0),
            b.mean(axis=0),
            channels.prevalence.values.mean(axis=0),
            annotators=channels.annotators,
            groups=[str(g) for g in channels.prevalence["group"].values],
            group_counts=channels.group_counts.values,
            method=f"{channels.method} (posterior mean)",
        )
    pa, pb = _channels_for(summary, point_channels)
    states = summary.states
    u_draws = corrected_pattern_targets(
        states, a, b, annotator_weights(channels, weights, lam=lam).values
    )
    u_point = corrected_pattern_targets(
        states, pa, pb, annotator_weights(point_channels, weights, lam=lam).values
    )
    if s == 1:
        u_draws = np.repeat(u_draws, n_rep, axis=0)

    counts = summary.bin_pattern_counts.values.astype(np.float64)  # (M, P)
    zsum = summary.bin_pattern_score_sum.values
    n = counts.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar = np.where(counts > 0, zsum / np.where(counts > 0, counts, 1), 0.0)  # (M, P)
    wts = _bootstrap_cell_weights(counts, n_rep, rng)  # (R, M, P)

    # channel only: observed weights counts / n, exact score sums (a point fit repeats one row)
    mom_channel = (u_draws @ counts.T - zsum.sum(axis=1)) / n  # (S, M)
    # evaluation only: point channels, bootstrap weights
    mom_eval = np.einsum("rmp,rmp->rm", wts, u_point[0][None, None, :] - zbar[None])
    # full: draw s with replicate s
    mom_full = np.einsum("rmp,rmp->rm", wts, u_draws[:, None, :] - zbar[None])
    point = float(np.abs((u_point @ counts.T - zsum.sum(axis=1)) / n).sum())

    draws = np.arange(n_rep)
    ece = xr.Dataset(
        {
            "full": ((DRAW,), np.abs(mom_full).sum(axis=1)),
            "channel": ((DRAW,), np.abs(mom_channel).sum(axis=1)),
            "evaluation": ((DRAW,), np.abs(mom_eval).sum(axis=1)),
        },
        coords={DRAW: draws},
    )
    bins_coord = summary.bin_count[BIN].values
    moments = xr.Dataset(
        {
            "full": ((DRAW, BIN), mom_full),
            "channel": ((DRAW, BIN), mom_channel),
            "evaluation": ((DRAW, BIN), mom_eval),
        },
        coords={DRAW: draws, BIN: bins_coord},
    )
    bin_w = wts.sum(axis=2)  # (R, M)
    bin_count = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.einsum("rmp,rp->rm", wts, u_draws) / bin_w
        mean_score = zsum.sum(axis=1) / bin_count
    empty = bin_count == 0
    rate[:, empty] = np.nan
    mean_score = np.where(empty, np.nan, mean_score)
    curve = xr.Dataset(
        {
            "corrected_rate": ((DRAW, BIN), rate),
            "mean_score": ((BIN,), mean_score),
            "count": ((BIN,), bin_count),
        },
        coords={DRAW: draws, BIN: bins_coord},
    )
    return NCECEPosterior(
        ece=ece,
        moments=moments,
        point=point,
        curve=curve,
        bin_edges=summary.bin_edges,
        prob=prob,
        info={
            "channel_draws": s,
            "bootstrap_replicates": n_rep,
            "weights": weights if isinstance(weights, str) else "explicit",
        },
    )
