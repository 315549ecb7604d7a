"""Figures of the binary track: computed results in, matplotlib Axes out.

In the style of scikit-learn's ``CalibrationDisplay``: the metrics and
estimators return data (:class:`~bayescal.BinnedECE`, :class:`~bayescal.ChannelFit`,
an ArviZ ``InferenceData``, fitted maps); these functions only draw them, on
``ax`` / ``axes`` when given, else on a new figure. The audit report embeds
exactly these figures. matplotlib (and ArviZ for the trace) is imported when
a function is called.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayescal.display import display_name
from bayescal.plotting.text import literal_text, pyplot

if TYPE_CHECKING:
    import xarray as xr
    from arviz import InferenceData
    from matplotlib.axes import Axes

    from bayescal.channels.result import ChannelFit
    from bayescal.metrics.binned import BinnedECE
    from bayescal.metrics.subgroups import SubgroupCalibration
    from bayescal.recal.ensemble import PosteriorMap

__all__ = [
    "noise_corrected_reliability",
    "channel_forest",
    "shown_indices",
    "pattern_predictive_check",
    "channel_trace",
    "recalibration_curves",
    "subgroup_forest",
]


def _interval(draws: np.ndarray, prob: float) -> tuple[float, float]:
    lo, hi = np.quantile(draws, [(1 - prob) / 2, 1 - (1 - prob) / 2])
    return float(lo), float(hi)


def noise_corrected_reliability(
    soft_vote: BinnedECE,
    majority_vote: BinnedECE,
    corrected: BinnedECE,
    *,
    band: xr.Dataset | None = None,
    reference: BinnedECE | None = None,
    prob: float = 0.9,
    clip: bool = True,
    axes: Sequence[Axes] | np.ndarray | None = None,
) -> np.ndarray:
    """Naive (vote-based) and noise-corrected reliability diagrams side by side.

    Hanada & Futami, Sec. 3 (Definition 4): the corrected curve is the bin
    mean of the noise-corrected labels ``U``, unbiased for the clean positive
    rate of the bin; the naive curves take the mean answer or the majority
    vote as truth. ``U`` is not confined to [0, 1], so the corrected curve and
    its band can leave [0, 1] in sparse bins; with ``clip`` (the default) they
    are drawn clipped to [0, 1] and a clipped point is drawn hollow on the
    border (the numbers themselves are not changed; say so in a caption).

    Parameters
    ----------
    soft_vote, majority_vote : BinnedECE
        From :func:`~bayescal.soft_vote_ece` and :func:`~bayescal.majority_vote_ece`.
    corrected : BinnedECE
        From :func:`~bayescal.nc_ece` on the same bins (its draws are averaged).
    band : xarray.Dataset, optional
        ``lo`` and ``hi`` per bin, for example
        ``NCECEPosterior.curve_band(prob)`` from :func:`~bayescal.nc_ece_interval`.
    reference : BinnedECE, optional
        :func:`~bayescal.oracle_ece` when reference labels exist.
    prob : float, default 0.9
        Probability of ``band`` (legend text).
    clip : bool, default True
        Draw the corrected curve and band clipped to [0, 1].
    axes : sequence of two Axes, optional
        Side by side or stacked; the caller chooses the layout.

    Returns
    -------
    ndarray of 2 Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal import ChannelFit, majority_vote_ece, nc_ece, soft_vote_ece
    >>> from bayescal.simulate import simulate_toy, TOY_FP, TOY_FN
    >>> d = simulate_toy(2000, random_state=0)
    >>> ch = ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN))
    >>> axes = noise_corrected_reliability(soft_vote_ece(d), majority_vote_ece(d), nc_ece(d, ch))
    >>> len(axes), [float(v) for v in axes[1].get_ylim()]
    (2, [-0.02, 1.02])
    """
    with literal_text():
        if axes is None:
            _, axes = pyplot().subplots(1, 2, figsize=(9, 4), sharey=True)
        axes = np.asarray(axes).ravel()
        x = np.asarray(corrected.bin_mean_score.values, dtype=float)
        ok = np.isfinite(x)
        for ax in axes:
            ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
            ax.set_xlim(0, 1)
            ax.set_xlabel("mean score in bin")
            ax.set_ylabel("positive rate in bin")
            ax.grid(alpha=0.3)
        axes[0].plot(x[ok], soft_vote.bin_mean_target.values[0][ok], "o-", label="soft vote")
        axes[0].plot(
            x[ok], majority_vote.bin_mean_target.values[0][ok], "s-", label="majority vote"
        )
        axes[0].set_title("Naive: votes taken as truth", fontsize=10)
        point = corrected.bin_mean_target.values.mean(axis=0)[ok]
        shown = np.clip(point, 0.0, 1.0) if clip else point
        axes[1].plot(x[ok], shown, "-", color="C2")
        inside = shown == point
        axes[1].plot(x[ok][inside], shown[inside], "o", color="C2", label="noise-corrected")
        if not inside.all():
            axes[1].plot(
                x[ok][~inside],
                shown[~inside],
                "o",
                mfc="white",
                color="C2",
                label="noise-corrected, beyond [0, 1]",
            )
        if band is not None:
            lo = np.asarray(band["lo"].values, dtype=float)[ok]
            hi = np.asarray(band["hi"].values, dtype=float)[ok]
            if clip:
                lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
            axes[1].fill_between(
                x[ok],
                lo,
                hi,
                color="C2",
                alpha=0.25,
                label=f"{int(round(prob * 100))}% credible band"
                + (" (shown within [0, 1])" if clip else ""),
            )
        if clip:
            for ax in axes:
                ax.set_ylim(-0.02, 1.02)
        axes[1].set_title("Noise-corrected (clean-label) estimate", fontsize=10)
        for ax in axes:
            if reference is not None:
                ax.plot(
                    x[ok],
                    reference.bin_mean_target.values[0][ok],
                    "k^",
                    ms=5,
                    label="reference labels",
                )
            ax.legend(fontsize=8, loc="upper left")
    return axes


def shown_indices(quality: np.ndarray, limit: int | None) -> np.ndarray:
    """Indices of the rows a per-annotator (or per-group) figure draws: all of them, or
    the ``limit`` with the lowest ``quality`` (the ones an audit looks at first), in
    their original order.

    Examples
    --------
    >>> shown_indices(np.array([0.9, 0.2, 0.5, 0.1]), 2).tolist()
    [1, 3]
    >>> shown_indices(np.array([0.9, 0.2]), None).tolist()
    [0, 1]
    """
    quality = np.asarray(quality, dtype=np.float64)
    if limit is None or quality.size <= limit:
        return np.arange(quality.size)
    if limit < 1:
        raise ValueError(f"limit must be a positive number of rows; got {limit}.")
    return np.sort(np.argsort(quality, kind="stable")[:limit])


def channel_forest(
    channels: ChannelFit,
    *,
    point: ChannelFit | None = None,
    prob: float = 0.9,
    axes: Sequence[Axes] | np.ndarray | None = None,
    max_annotators: int | None = None,
) -> np.ndarray:
    """Each annotator's channel ``a = P(1 | Y=0)``, ``b = P(1 | Y=1)``: estimates and intervals.

    Hanada & Futami, Sec. 4 (class-conditional channels ``a_j``, ``b_j``): for
    a posterior, the posterior mean with an equal-tailed ``prob`` interval;
    a point fit is drawn as a cross.

    Parameters
    ----------
    channels : ChannelFit
        Posterior (many draws) or point fit (one draw).
    point : ChannelFit, optional
        A point fit drawn as crosses over the posterior.
    prob : float, default 0.9
    axes : sequence of two Axes, optional
        Side by side (sharing the y axis) or stacked.
    max_annotators : int, optional
        Draw at most this many annotators: those with the smallest mean gap ``b - a``
        (the title says how many of how many). Default: all.

    Returns
    -------
    ndarray of 2 Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal import ChannelFit
    >>> axes = channel_forest(ChannelFit.known([0.1, 0.2], [0.9, 0.8], annotators=["$x$", "b"]))
    >>> [t.get_text() for t in axes[0].get_yticklabels()]
    ['$x$', 'b']
    """
    gap = (channels.b.values - channels.a.values).mean(axis=0)
    shown = shown_indices(gap, max_annotators)
    names = [display_name(channels.annotators[j]) for j in shown]
    k = len(names)
    with literal_text():
        if axes is None:
            _, axes = pyplot().subplots(1, 2, figsize=(8, 0.45 * k + 1.4), sharey=True)
        axes = np.asarray(axes).ravel()
        y = np.arange(k)[::-1]
        crosses = point if point is not None else (channels if channels.n_draws == 1 else None)
        for ax, key, title in (
            (axes[0], "a", "a = P(answer 1 | Y = 0)"),
            (axes[1], "b", "b = P(answer 1 | Y = 1)"),
        ):
            draws = getattr(channels, key).values
            for i, (j, yj) in enumerate(zip(shown, y, strict=True)):
                first = i == 0
                if channels.n_draws > 1:
                    lo, hi = _interval(draws[:, j], prob)
                    ax.plot([lo, hi], [yj, yj], color="C0", lw=2.5)
                    ax.plot(
                        draws[:, j].mean(),
                        yj,
                        "o",
                        color="C0",
                        ms=5,
                        label="posterior mean, interval" if first else None,
                    )
                if crosses is not None:
                    ax.plot(
                        getattr(crosses, key).values[0, j],
                        yj,
                        "x",
                        color="C3",
                        ms=7,
                        label="point estimate" if first else None,
                    )
            ax.set_title(title, fontsize=10)
            ax.grid(alpha=0.3)
        for ax in axes:
            ax.set_yticks(y, names, parse_math=False)
        # Below the b panel, clear of its tick labels: inside, it covered the lowest
        # annotator's interval (issue 24).
        axes[1].legend(
            fontsize=7,
            loc="upper center",
            bbox_to_anchor=(0.5, 0.0),
            borderaxespad=3.0,
            ncol=2,
            frameon=False,
        )
        subset = f"; the {k} of {gap.size} with the smallest gap b - a" if k < gap.size else ""
        axes[0].figure.suptitle(
            f"Annotator channels ({int(round(prob * 100))}% intervals{subset})",
            fontsize=11,
            y=1.03,
        )
    return axes


def subgroup_forest(result: SubgroupCalibration, *, ax: Axes | None = None) -> Axes:
    """Forest plot of the NC-ECE per subgroup (any number of classes; issue 25 item 1).

    Each subgroup's bias-corrected NC-ECE with its bias-aware interval, labelled with
    its number of items; subgroups whose Holm-adjusted calibration test rejects are
    drawn in red.

    Parameters
    ----------
    result : SubgroupCalibration
        From :func:`bayescal.metrics.subgroups.subgroup_nc_ece`.
    ax : Axes, optional

    Returns
    -------
    Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from bayescal.metrics.subgroups import subgroup_nc_ece
    >>> from bayescal.simulate import simulate_multiclass
    >>> d = simulate_multiclass(1000, 2, random_state=0)
    >>> r = subgroup_nc_ece(d, np.repeat(["A", "B"], 500), n_bootstrap=100)
    >>> [t.get_text() for t in subgroup_forest(r).get_yticklabels()]
    ['A (n = 500)', 'B (n = 500)']
    """
    rows = result.subgroups
    level = 1.0 - result.prob
    with literal_text():
        if ax is None:
            _, ax = pyplot().subplots(figsize=(7, 0.45 * len(rows) + 1.4))
        y = np.arange(len(rows))[::-1]
        for s, yi in zip(rows, y):
            colour = "C3" if s.p_holm <= level else "C0"
            ax.plot([s.lo, s.hi], [yi, yi], color=colour, lw=2.5)
            ax.plot(s.estimate, yi, "o", color=colour, ms=5)
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_yticks(
            y, [f"{display_name(s.name)} (n = {s.n_items})" for s in rows], parse_math=False
        )
        ax.set_xlabel(f"NC-ECE ({result.metric}), {int(round(result.prob * 100))}% interval")
        ax.set_title(
            f"Calibration per {display_name(result.label)} (red: miscalibrated, Holm-adjusted "
            f"p <= {level:.2g})",
            fontsize=10,
        )
        ax.grid(alpha=0.3)
    return ax


def pattern_predictive_check(
    idata: InferenceData,
    *,
    prob: float = 0.9,
    axes: Sequence[Axes] | np.ndarray | None = None,
    max_groups: int | None = None,
) -> np.ndarray:
    """Observed response-pattern counts against their posterior-predictive intervals.

    Hanada & Futami, App. D.7 (model checks of the channel model; SPEC §1).

    One panel per score group: bars are the equal-tailed ``prob`` interval of
    the replicated counts, dots the observed counts (the pattern-count check of
    :mod:`bayescal.bayes.diagnostics`). Dots outside their bars flag dependent
    annotators or a misfitting channel model. A pattern label has one
    character per annotator, in the annotators' order (named under the axis):
    ``1`` = answered positive, ``0`` = answered negative, ``.`` = no answer;
    patterns never observed nor predicted are left out.

    Parameters
    ----------
    idata : arviz.InferenceData
        With ``posterior_predictive["counts"]`` and ``observed_data["counts"]``
        over ``(group, pattern)``, as ``fit_channels_bayes`` returns.
    prob : float, default 0.9
    axes : array of Axes of length n_groups, optional
        (of ``max_groups`` when fewer groups are drawn)
    max_groups : int, optional
        Draw at most this many groups: those with the most observed counts outside their
        interval (then the most items), in their order; the title says how many of how
        many. Default: all.

    Returns
    -------
    ndarray of Axes, one per drawn group
    """
    rep = (
        idata["posterior_predictive"]["counts"]
        .stack(s=("chain", "draw"))
        .transpose("s", "group", "pattern")
        .values
    )
    obs = idata["observed_data"]["counts"].transpose("group", "pattern").values
    lo, hi = np.quantile(rep, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    used = (obs.sum(axis=0) > 0) | (hi.sum(axis=0) > 0)
    labels = np.asarray(idata["observed_data"]["pattern"].values)[used]
    outside = ((obs < lo) | (obs > hi)).sum(axis=1)
    misfit = outside + obs.sum(axis=1) / (obs.sum() + 1.0)  # ties: the larger group first
    shown = shown_indices(-misfit, max_groups)  # the lowest -misfit: the worst fits
    n_all = obs.shape[0]
    obs, lo, hi = obs[shown], lo[shown], hi[shown]
    groups = [display_name(idata["observed_data"]["group"].values[g]) for g in shown]
    order = _annotator_order(idata)
    n_g = obs.shape[0]
    x = np.arange(int(used.sum()))
    with literal_text():
        if axes is None:
            _, axes = pyplot().subplots(
                n_g, 1, figsize=(9, 1.7 * n_g + 0.6), squeeze=False, sharex=True
            )
        axes = np.asarray(axes).ravel()
        for g in range(n_g):
            ax = axes[g]
            ax.vlines(x, lo[g, used], hi[g, used], color="C0", lw=4, alpha=0.5)
            ax.plot(x, obs[g, used], "k.", ms=6)
            ax.set_ylabel(groups[g], fontsize=7, rotation=0, ha="right", parse_math=False)
            ax.grid(alpha=0.3)
        axes[-1].set_xticks(x, [str(s) for s in labels], rotation=90, fontsize=7, parse_math=False)
        # Wrapped to the figure's width so narrow layouts keep their size.
        fig = axes[-1].get_figure(root=True)
        assert fig is not None  # drawn on an Axes of a figure
        width = max(30, int(fig.get_figwidth() * 15))
        axes[-1].set_xlabel(
            textwrap.fill(
                f"response pattern: one character per annotator ({order}); "
                "1 = positive, 0 = negative, . = no answer",
                width,
            ),
            fontsize=8,
            parse_math=False,
        )
        subset = (
            f"; the {n_g} of {n_all} groups with the most counts outside their bars"
            if n_g < n_all
            else ""
        )
        axes[0].set_title(
            textwrap.fill(
                "Response patterns: observed (dots) vs posterior predictive "
                f"{int(round(prob * 100))}% (bars){subset}",
                max(30, int(fig.get_figwidth() * 12)),
            ),
            fontsize=10,
        )
    return axes


def _annotator_order(idata: InferenceData) -> str:
    """The annotators in pattern order, shown literally (from the posterior's coordinates)."""
    names = idata["posterior"]["a"]["annotator"].values
    return " ".join(display_name(n) for n in names)


def channel_trace(idata: InferenceData, *, axes: np.ndarray | None = None) -> np.ndarray:
    """ArviZ trace plot of the channels ``a`` and ``b``, with a legend of annotators and chains.

    Sampler check of the channel posterior (Hanada & Futami's channels, Sec. 4).
    ArviZ's compact trace draws every annotator of a variable on one axis,
    one colour per annotator and one line style per chain; the legend below
    the plot says which is which.

    Parameters
    ----------
    idata : arviz.InferenceData
    axes : array of Axes of shape (2, 2), optional
        Rows ``a`` and ``b``; columns density and trace. Reshape a (4, 1) grid
        to (2, 2) to stack the four panels.

    Returns
    -------
    ndarray of Axes
    """
    import arviz as az
    from matplotlib.lines import Line2D

    names = [display_name(n) for n in idata["posterior"]["a"]["annotator"].values]
    with literal_text():
        axes = az.plot_trace(idata, var_names=["a", "b"], compact=True, figsize=(9, 4), axes=axes)
        titles = {"a": "a = P(answer 1 | Y = 0)", "b": "b = P(answer 1 | Y = 1)"}
        for row, var in zip(axes, ("a", "b")):
            for ax in row:
                ax.set_title(titles[var], fontsize=9)
        # ArviZ colours the annotators in coordinate order and styles the chains.
        colours = list(dict.fromkeys(line.get_color() for line in axes[0, 1].get_lines()))
        styles = list(dict.fromkeys(line.get_linestyle() for line in axes[0, 1].get_lines()))
        handles = [Line2D([], [], color=c, lw=2, label=name) for c, name in zip(colours, names)] + [
            Line2D([], [], color="grey", ls=ls, label=f"chain {i}")
            for i, ls in enumerate(styles[: idata["posterior"].sizes["chain"]])
        ]
        fig = axes[0, 0].figure
        fig.legend(
            handles=handles,
            loc="lower center",
            ncol=min(len(handles), 4 if fig.get_figwidth() < 6 else 8),
            fontsize=8,
            frameon=False,
            bbox_to_anchor=(0.5, 1.0),
            title="colour = annotator, line style = chain",
            title_fontsize=8,
        )
    return axes


def recalibration_curves(
    maps: dict, *, band: PosteriorMap | None = None, prob: float = 0.9, ax: Axes | None = None
) -> Axes:
    """Recalibration maps ``g(z)``: corrected (solid) against naive (dotted) per family.

    Hanada & Futami, Sec. 5: maps fitted to noise-corrected labels against maps
    fitted to the mean answer.

    Parameters
    ----------
    maps : dict of str -> (corrected map, naive map)
        Fitted maps with ``predict`` per family name.
    band : PosteriorMap, optional
        A map fitted under every channel draw; its ``prob`` band is shaded.
    prob : float, default 0.9
    ax : Axes, optional

    Returns
    -------
    Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.recal import HistogramMap
    >>> g = HistogramMap(bins=2).fit([0.1, 0.9], [0.0, 1.0])
    >>> recalibration_curves({"histogram": (g, g)}).get_xlabel()
    'original score z'
    """
    z = np.linspace(0.001, 0.999, 400)
    with literal_text():
        if ax is None:
            _, ax = pyplot().subplots(figsize=(5.5, 4.2))
        ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1)
        for i, (family, (corrected, naive)) in enumerate(maps.items()):
            name = display_name(family)
            ax.plot(z, corrected.predict(z), color=f"C{i}", label=f"{name}, corrected")
            ax.plot(z, naive.predict(z), color=f"C{i}", ls=":", label=f"{name}, naive")
        if band is not None:
            lo, hi = band.predict_interval(z, prob=prob)
            ax.fill_between(
                z,
                lo,
                hi,
                color="C2",
                alpha=0.2,
                label=f"{band.family}, {int(round(prob * 100))}% posterior band",
            )
        ax.set_xlabel("original score z")
        ax.set_ylabel("recalibrated g(z)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    return ax
