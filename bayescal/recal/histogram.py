"""Fixed-bin (histogram) and score-bin recalibration maps (Hanada & Futami, Sec. 5.2, App. E.3).

:class:`HistogramMap`: bins ``H_1..H_J`` of the *original* score (equal-width or
equal-mass, or explicit edges); bin value = mean target in the bin, projected
to [0, 1]; an empty bin gets the projected mean of all targets. On its own
fitting data the binned corrected calibration error of the fitted map is the
projection residual ``sum_h (n_h / n) |m~_h - Pi(m~_h)|``, zero when every
bin mean is already in [0, 1] (Hanada & Futami, Prop. 2's empirical identity).

Bin means are linear in the targets, so for a channel posterior they come from
one ``(draw, code) x (code, bin)`` product: :func:`histogram_values` fits every
draw at once.

:class:`ScoreBinMap`: ``g(z)`` = the fitted prevalence ``P(Y = 1 | group)`` of the
channel model's score group containing ``z`` (joint score-bin EM or a grouped
posterior). Groups without a fitted prevalence (dropped as empty) get the
overall prevalence ``mu``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from bayescal._typing import ArrayLike, Bins, Weights
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import corrected_pattern_targets
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, annotator_weights
from bayescal.recal.base import RecalibrationMap
from bayescal.recal.targets import DEFAULT_WEIGHTS
from bayescal.summaries.partition import assign, cell_labels, make_edges
from bayescal.summaries.summary import Summary

__all__ = [
    "HistogramMap",
    "ScoreBinMap",
    "histogram_values",
    "histogram_map_from_summary",
    "BIN_STRATEGIES",
]

BIN_STRATEGIES = ("quantile", "uniform")


def histogram_values(
    bin_index: np.ndarray, code: np.ndarray, table: np.ndarray, n_bins: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Projected bin means for every draw at once.

    Hanada & Futami, Sec. 5.2 and App. E.3 (fixed-bin map), for every draw at once.

    Parameters
    ----------
    bin_index : ndarray of shape (n_items,)
        Bin of each fitting item.
    code : ndarray of shape (n_items,)
        Target code of each item (pattern or clean label).
    table : ndarray of shape (n_draws, n_codes)
        Target value of each code per draw.
    n_bins : int

    Returns
    -------
    values : ndarray (n_draws, n_bins)
        Projected bin values (empty bins: projected overall mean).
    raw : ndarray (n_draws, n_bins)
        Unprojected bin means (NaN for empty bins).
    counts : ndarray (n_bins,)

    Examples
    --------
    >>> v, raw, c = histogram_values(np.array([0, 0, 1]), np.array([0, 1, 1]),
    ...                              np.array([[-0.2, 1.0]]), 3)
    >>> v.round(2).tolist(), c.tolist()
    ([[0.4, 1.0, 0.6]], [2.0, 1.0, 0.0])
    """
    P = table.shape[1]
    cell = (
        np.bincount(bin_index * P + code, minlength=n_bins * P)
        .reshape(n_bins, P)
        .astype(np.float64)
    )
    counts = cell.sum(axis=1)
    sums = table @ cell.T  # (S, J)
    n = counts.sum()
    overall = np.clip(sums.sum(axis=1) / n, 0.0, 1.0)
    nonempty = counts > 0
    raw = np.full(sums.shape, np.nan)
    raw[:, nonempty] = sums[:, nonempty] / counts[nonempty]
    values = np.where(nonempty[None, :], np.clip(np.nan_to_num(raw), 0.0, 1.0), overall[:, None])
    return values, raw, counts


class HistogramMap(RecalibrationMap):
    """Fixed-bin recalibration with projected bin means of the targets.

    Hanada & Futami, Sec. 5.2 and App. E.3 (fixed-bin recalibration; Proposition 2's
    projection residual).

    Parameters
    ----------
    bins : int or array-like, default 10
        Number of bins ``J`` or explicit increasing edges from 0 to 1 (fixed in
        advance, for example population quantiles).
    strategy : {"quantile", "uniform"}, default "quantile"
        With an int ``bins``: equal-mass bins at the fitting scores' quantiles
        (tied quantiles merge, so fewer bins can result; see ``bin_edges_``) or
        equal-width bins.

    Attributes
    ----------
    bin_edges_ : ndarray of shape (J + 1,)
    bin_values_ : ndarray of shape (J,)
        Projected bin means; an empty bin holds ``fill_value_``.
    bin_means_ : ndarray of shape (J,)
        Unprojected means (NaN for empty bins).
    bin_counts_ : ndarray of shape (J,)
    fill_value_ : float
        Projected mean of all targets.
    projection_residual_ : float
        ``sum_h (n_h / n) |m~_h - Pi(m~_h)|``: the map's binned corrected
        calibration error on its own fitting data.
    n_items_ : int

    Examples
    --------
    >>> m = HistogramMap(bins=2, strategy="uniform").fit([0.1, 0.2, 0.8, 0.9], [0, 1, 1, 1.4])
    >>> m.bin_values_.tolist(), m.predict([0.3, 0.95]).tolist()
    ([0.5, 1.0], [0.5, 1.0])
    """

    _fitted_attr = "bin_values_"

    def __init__(self, *, bins: Bins = 10, strategy: str = "quantile") -> None:
        self.bins = bins
        self.strategy = strategy

    def _validate_params(self):
        if self.strategy not in BIN_STRATEGIES:
            raise ConfigError(f"strategy must be one of {BIN_STRATEGIES}; got {self.strategy!r}.")

    def make_edges(self, z: np.ndarray) -> np.ndarray:
        """The bin edges this map would use for fitting scores ``z``."""
        self._validate_params()
        if isinstance(self.bins, numbers.Integral) and not isinstance(self.bins, bool):
            if self.bins > z.shape[0]:
                raise DataError(
                    f"{self.bins} bins for {z.shape[0]} fitting items: some bins would be empty by "
                    "construction. Use at most as many bins as items (Hanada & Futami use "
                    "J = n^(1/3))."
                )
        return make_edges(self.bins, what="histogram bins", scores=z, strategy=self.strategy)

    def _fit(self, z, t):
        edges = self.make_edges(z)
        idx = assign(z, edges)
        J = edges.size - 1
        values, raw, counts = _one_draw(idx, t, J)
        self._set(edges, values, raw, counts)

    def _set(self, edges, values, raw, counts):
        self.bin_edges_ = np.asarray(edges, dtype=np.float64)
        self.bin_values_ = np.asarray(values, dtype=np.float64)
        self.bin_means_ = np.asarray(raw, dtype=np.float64)
        self.bin_counts_ = np.asarray(counts, dtype=np.float64)
        n = counts.sum()
        ok = counts > 0
        self.fill_value_ = float(np.clip(np.sum(raw[ok] * counts[ok]) / n, 0.0, 1.0))
        self.projection_residual_ = float(np.sum(counts[ok] / n * np.abs(raw[ok] - values[ok])))

    def _predict(self, z):
        return self.bin_values_[assign(z, self.bin_edges_)]


def _one_draw(idx, t, J):
    counts = np.bincount(idx, minlength=J).astype(np.float64)
    sums = np.bincount(idx, weights=t, minlength=J)
    ok = counts > 0
    raw = np.full(J, np.nan)
    raw[ok] = sums[ok] / counts[ok]
    overall = float(np.clip(sums.sum() / counts.sum(), 0.0, 1.0))
    values = np.where(ok, np.clip(np.nan_to_num(raw), 0.0, 1.0), overall)
    return values, raw, counts


class ScoreBinMap(RecalibrationMap):
    """Auxiliary map: the channel model's fitted prevalence of the score group of ``z``.

    Hanada & Futami, App. E.3 (the score-bin map): ``g(z) = P(Y = 1 | group(z))``
    read from a :class:`~bayescal.ChannelFit` with score groups (joint score-bin
    EM, GMM, or a grouped posterior), not fitted to targets. The channels are a
    parameter, so ``fit()`` takes no data.

    Parameters
    ----------
    channels : ChannelFit, optional
        With ``group_edges`` (score groups), or a single group ``"all"``.
        Required by :meth:`fit`.
    draw : int, default 0
        Which channel draw to read when ``channels`` holds a posterior.

    Attributes
    ----------
    group_edges_ : ndarray of shape (L + 1,)
    group_values_ : ndarray of shape (L,)
        Fitted prevalence per group; groups without one hold ``mu``.

    Examples
    --------
    >>> from bayescal import fit_channels
    >>> from bayescal.simulate import simulate_toy
    >>> ch = fit_channels(simulate_toy(4000, random_state=0), "score_bin_em", groups=5)
    >>> g = ScoreBinMap(channels=ch).fit()
    >>> g.predict([0.05, 0.95]).round(1).tolist()
    [0.1, 0.9]
    """

    _fitted_attr = "group_values_"

    def __init__(self, *, channels: ChannelFit | None = None, draw: int = 0) -> None:
        self.channels = channels
        self.draw = draw

    def fit(self, score: ArrayLike | None = None, target: ArrayLike | None = None) -> ScoreBinMap:
        """Read the prevalences of draw ``draw`` of ``channels``.

        Parameters
        ----------
        score, target : None
            Not used: the prevalences were estimated with the channels. Passing
            data raises :class:`~bayescal.errors.ConfigError`, since it would be
            ignored.

        Returns
        -------
        self
        """
        if score is not None or target is not None:
            raise ConfigError(
                "ScoreBinMap is fitted from its channels' prevalences, not from scores and "
                "targets: build it as ScoreBinMap(channels=fit) and call fit() with no data."
            )
        if self.channels is None:
            raise ConfigError(
                "ScoreBinMap needs channels with score-group prevalences: "
                "ScoreBinMap(channels=fit).fit()."
            )
        edges, values = score_bin_values(self.channels)
        draw = self.draw
        if isinstance(draw, bool) or not isinstance(draw, numbers.Integral):
            raise ConfigError(f"draw must be an integer; got {draw!r}.")
        if not -values.shape[0] <= int(draw) < values.shape[0]:
            raise ConfigError(f"draw {draw} out of range for {values.shape[0]} draw(s).")
        self.group_edges_ = edges
        self.group_values_ = values[int(draw)]
        return self

    def fit_corrected(self, data: Any, channels: Any, **kwargs: Any) -> ScoreBinMap:
        """Refused: the channels are a parameter of this map (``ScoreBinMap(channels=...)``)."""
        raise ConfigError(
            "ScoreBinMap takes its channels in __init__ and no targets: use "
            "ScoreBinMap(channels=fit).fit()."
        )

    def fit_targets(self, targets: Any, draw: int = 0) -> ScoreBinMap:
        """Refused: the map is read from channel prevalences, not fitted to targets."""
        raise ConfigError(
            "ScoreBinMap is fitted from channel prevalences: use ScoreBinMap(channels=fit).fit()."
        )

    def _predict(self, z):
        return self.group_values_[assign(z, self.group_edges_)]


def score_bin_values(channels: ChannelFit) -> tuple[np.ndarray, np.ndarray]:
    """Group edges (L + 1,) and prevalence per draw and group (S, L), ``mu`` where not fitted.

    Hanada & Futami, App. E.3 (score-bin map from fitted group prevalences).
    """
    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    prev = channels.prevalence
    names = [str(g) for g in prev["group"].values]
    mu = channels.mu.values
    if channels.group_edges is None:
        if names == ["all"]:
            return np.array([0.0, 1.0]), mu[:, None].copy()
        raise ConfigError(
            "the channel fit has user-defined groups, not score groups: a score-bin map needs "
            "channels fitted on score groups (groups=int or edges)."
        )
    edges = np.asarray(channels.group_edges, dtype=np.float64)
    labels = [str(x) for x in cell_labels(edges)]
    values = np.repeat(mu[:, None], len(labels), axis=1)
    for j, lab in enumerate(labels):
        if lab in names:
            values[:, j] = prev.values[:, names.index(lab)]
    return edges, values


def histogram_map_from_summary(
    summary: Summary,
    channels: ChannelFit,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
    draw: int | None = None,
) -> HistogramMap:
    """A fitted :class:`HistogramMap` on the summary's own bins, from counts only.

    Hanada & Futami, Sec. 5.2 (fixed-bin map): the mean corrected label of bin
    ``h`` is ``sum_p count[h, p] U_p / n_h``, a function of the bin-by-pattern
    counts, so a summary built out of core (:func:`bayescal.scale.summarize`)
    is enough. Equal to ``HistogramMap(bins=summary.bin_edges,
    strategy="uniform").fit_corrected(data, channels, weights=weights, lam=lam)``
    on the items behind ``summary``. Temperature and Platt maps, and histogram
    maps on other bins, need per-item scores.

    Parameters
    ----------
    summary : Summary
        Its bins become the map's bins (use a fine grid, say 50-100
        equal-width bins, when the map is the goal).
    channels : ChannelFit
        Channels for the same annotators, in the same order.
    weights, lam
        Annotator weights of the corrected labels (as in ``fit_corrected``;
        default shrunk plug-in inverse variance).
    draw : int, optional
        Which channel draw to use when ``channels`` has several.

    Returns
    -------
    HistogramMap

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import ChannelFit, summarize
    >>> from bayescal.simulate import simulate_toy, TOY_FP, TOY_FN
    >>> s = summarize(simulate_toy(5000, random_state=0), bins=20)
    >>> g = histogram_map_from_summary(s, ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN)))
    >>> g.bin_values_.shape, bool(np.all((g.predict([0.0, 0.5, 1.0]) >= 0)))
    ((20,), True)
    """
    if not isinstance(summary, Summary):
        raise ConfigError(f"expected a Summary; got {type(summary).__name__}.")
    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    if list(channels.annotators) != list(summary.annotators):
        raise DataError(
            f"channels are for annotators {list(channels.annotators)} but the summary has "
            f"{summary.annotators}; they must match in name and order."
        )
    w = annotator_weights(channels, weights, lam=lam)
    view = summary.binary
    table = corrected_pattern_targets(view.states, channels.a.values, channels.b.values, w.values)
    if draw is None:
        if table.shape[0] > 1:
            raise ConfigError(f"channels have {table.shape[0]} draws; pass draw= to choose one.")
        draw = 0
    if not -table.shape[0] <= int(draw) < table.shape[0]:
        raise ConfigError(f"draw {draw} out of range for {table.shape[0]} draw(s).")
    cell = view.bin_pattern_counts.astype(np.float64)  # (J, P)
    counts = cell.sum(axis=1)
    n = counts.sum()
    if n == 0:
        raise DataError("the summary has no annotated item: there is nothing to fit a map to.")
    sums = cell @ table[int(draw)]
    ok = counts > 0
    raw = np.full(counts.shape, np.nan)
    raw[ok] = sums[ok] / counts[ok]
    overall = float(np.clip(sums.sum() / n, 0.0, 1.0))
    values = np.where(ok, np.clip(np.nan_to_num(raw), 0.0, 1.0), overall)
    m = HistogramMap(bins=summary.bin_edges, strategy="uniform")
    m._set(summary.bin_edges, values, raw, counts)
    m.n_items_ = int(n)
    return m
