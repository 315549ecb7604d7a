"""Recalibration maps that need only a summary (fixed bins), for data summarised out of core.

A histogram map with the summary's own evaluation bins is a function of the
bin-by-pattern counts: the mean corrected label of bin ``h`` is
``sum_p count[h, p] U_p / n_h``. Temperature and Platt maps, and histogram maps
on other bins (equal-mass bins of the fitting scores), need per-item scores;
see ``docs/scale.md`` for the alternatives (a fine bin grid, or a sample).
"""

from __future__ import annotations

import numpy as np

from bayescal.errors import ConfigError, DataError
from bayescal.metrics.weights import DEFAULT_SHRINKAGE

__all__ = ["histogram_map_from_summary"]


def histogram_map_from_summary(
    summary,
    channels,
    *,
    weights="shrunk_inverse_variance",
    lam: float = DEFAULT_SHRINKAGE,
    draw=None,
):
    """A fitted :class:`~bayescal.recal.HistogramMap` on the summary's bins, from counts only.

    Equal to ``HistogramMap(bins=summary.bin_edges, strategy="uniform").fit_corrected(data,
    channels, weights=weights, lam=lam)`` on the items behind ``summary``.

    Parameters
    ----------
    summary : Summary
        For example from :func:`bayescal.scale.summarize_dask`; its bins become the map's
        bins (use a fine grid, say 50-100 equal-width bins, when the map is the goal).
    channels : ChannelFit
        Channels for the same annotators, in the same order.
    weights, lam
        Annotator weights of the corrected labels (as in ``fit_corrected``).
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
    from bayescal.channels.result import ChannelFit
    from bayescal.metrics.binned import corrected_pattern_targets
    from bayescal.metrics.weights import annotator_weights
    from bayescal.recal.histogram import HistogramMap
    from bayescal.summaries.summary import Summary

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
    table = corrected_pattern_targets(
        summary.states, channels.a.values, channels.b.values, w.values
    )
    if draw is None:
        if table.shape[0] > 1:
            raise ConfigError(f"channels have {table.shape[0]} draws; pass draw= to choose one.")
        draw = 0
    if not -table.shape[0] <= int(draw) < table.shape[0]:
        raise ConfigError(f"draw {draw} out of range for {table.shape[0]} draw(s).")
    cell = summary.bin_pattern_counts.values.astype(np.float64)  # (J, P)
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
