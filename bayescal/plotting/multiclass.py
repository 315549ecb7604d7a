"""Figures of the multiclass noise track (SPEC §3): computed results in, matplotlib Axes out.

The metrics and estimators return data (:class:`~bayescal.channels.result.ChannelFit`,
:class:`~bayescal.metrics.MulticlassECE`, the noise-or-ambiguity
check); these functions draw it on ``ax`` / ``axes`` when given, else on a new
figure, and return the Axes. The multiclass audit embeds exactly these figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bayescal.display import display_name
from bayescal.plotting.binary import noise_corrected_reliability, shown_indices
from bayescal.plotting.text import literal_text, pyplot

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from bayescal.channels.result import ChannelFit
    from bayescal.metrics.binned import BinnedECE, ClasswiseECE
    from bayescal.metrics.noise_or_ambiguity import NoiseAmbiguityCheck

__all__ = [
    "top_label_reliability",
    "confusion_heatmaps",
    "classwise_errors",
    "dispersion_check",
]

#: Up to this many classes the heatmap cells carry their numbers.
_ANNOTATE_MAX = 6


def top_label_reliability(
    soft_vote: BinnedECE,
    majority_vote: BinnedECE,
    corrected: BinnedECE,
    *,
    band: xr.Dataset | None = None,
    reference: BinnedECE | None = None,
    prob: float = 0.9,
    axes: Sequence[Axes] | np.ndarray | None = None,
) -> np.ndarray:
    """Top-label reliability: naive (votes as truth) and noise-corrected, side by side (SPEC §3).

    The corrected curve is the bin mean of the corrected targets ``U_i[c_i]``,
    unbiased for the accuracy of the bin; bins are on the confidence ``max p``.

    Parameters
    ----------
    soft_vote, majority_vote, corrected : BinnedECE
        The ``top_label`` parts of :func:`~bayescal.metrics.class_vote_ece`
        and :func:`~bayescal.metrics.class_nc_ece` on the same bins.
    band : xarray.Dataset, optional
        ``lo`` / ``hi`` per bin, e.g. ``MulticlassNCECEInterval.accuracy_band(prob)``.
    reference : BinnedECE, optional
        The oracle top-label error when true classes exist.
    prob : float, default 0.9
    axes : sequence of two Axes, optional

    Returns
    -------
    ndarray of 2 Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.metrics import class_nc_ece, class_vote_ece
    >>> from bayescal.simulate import multiclass_population, simulate_multiclass
    >>> pop = multiclass_population(3)
    >>> d = simulate_multiclass(2000, population=pop, random_state=0)
    >>> nc = class_nc_ece(d, ChannelFit.known_confusion(pop.confusion))
    >>> axes = top_label_reliability(class_vote_ece(d, "soft_vote").top_label,
    ...                              class_vote_ece(d).top_label, nc.top_label)
    >>> axes[0].get_ylabel()
    'accuracy in bin'
    """
    drawn = noise_corrected_reliability(
        soft_vote, majority_vote, corrected, band=band, reference=reference, prob=prob, axes=axes
    )
    with literal_text():
        for ax in drawn:
            ax.set_xlabel("mean confidence (max p) in bin")
        drawn[0].set_ylabel("accuracy in bin")
        drawn[1].set_title("Noise-corrected accuracy (clean-class estimate)", fontsize=10)
    return drawn


def confusion_heatmaps(
    channels: ChannelFit,
    *,
    prob: float = 0.9,
    axes: Sequence[Axes] | np.ndarray | None = None,
    max_annotators: int | None = None,
) -> np.ndarray:
    """One heatmap per annotator: ``T_j[y, a] = P(answer a | true class y)`` (SPEC §3).

    The colour is the posterior mean (or the point estimate); with several draws
    and at most six classes each cell shows the mean and its equal-tailed
    ``prob`` interval, otherwise the mean only.

    Parameters
    ----------
    channels : ChannelFit
    prob : float, default 0.9
    axes : sequence of K Axes, optional
        (of ``max_annotators`` Axes when fewer annotators are drawn)
    max_annotators : int, optional
        Draw at most this many annotators: those with the lowest mean accuracy
        (mean of the diagonal; the figure's title says how many of how many).
        Default: all.

    Returns
    -------
    ndarray of K Axes (or of the drawn annotators' Axes)

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.channels.result import ChannelFit
    >>> fit = ChannelFit.known_confusion([[[0.8, 0.2], [0.1, 0.9]]] * 3)
    >>> len(confusion_heatmaps(fit))
    3
    """
    t = channels.confusion.values
    k_all, c = t.shape[1], t.shape[2]
    shown = shown_indices(
        np.diagonal(t.mean(axis=0), axis1=1, axis2=2).mean(axis=1), max_annotators
    )
    t = t[:, shown]
    k = shown.size
    mean = t.mean(axis=0)
    many = t.shape[0] > 1
    if many:
        lo, hi = np.quantile(t, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    classes = [display_name(x) for x in channels.classes]
    with literal_text():
        if axes is None:
            _, axes = pyplot().subplots(1, k, figsize=(3.2 * k, 3.2), squeeze=False)
        axes = np.asarray(axes).ravel()
        for j, ax in enumerate(axes[:k]):
            ax.imshow(mean[j], vmin=0, vmax=1, cmap="Blues")
            ax.set_title(display_name(channels.annotators[shown[j]]), fontsize=10)
            ax.set_xticks(range(c), classes, rotation=90 if c > 4 else 0, fontsize=7)
            ax.set_yticks(range(c), classes, fontsize=7)
            ax.set_xlabel("answered class", fontsize=8)
            if j == 0:
                ax.set_ylabel("true class", fontsize=8)
            if c <= _ANNOTATE_MAX:
                for y in range(c):
                    for a in range(c):
                        text = f"{mean[j, y, a]:.2f}"
                        if many:
                            text += f"\n[{lo[j, y, a]:.2f}, {hi[j, y, a]:.2f}]"
                        ax.text(
                            a,
                            y,
                            text,
                            ha="center",
                            va="center",
                            fontsize=6 if many else 7,
                            color="white" if mean[j, y, a] > 0.6 else "black",
                        )
        if k < k_all:
            axes[0].figure.suptitle(
                f"The {k} of {k_all} annotators with the lowest mean accuracy", fontsize=10
            )
    return axes


def classwise_errors(errors: Mapping[str, ClasswiseECE], *, ax: Axes | None = None) -> Axes:
    """Class-wise calibration error per class for several targets (bars side by side).

    Parameters
    ----------
    errors : mapping of label -> ClasswiseECE
        For example ``{"noise-corrected": nc.classwise, "soft vote": soft.classwise}``;
        posterior draws are averaged.
    ax : Axes, optional

    Returns
    -------
    Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.metrics import class_vote_ece
    >>> from bayescal.simulate import simulate_multiclass
    >>> d = simulate_multiclass(500, random_state=0)
    >>> ax = classwise_errors({"soft vote": class_vote_ece(d, "soft_vote").classwise})
    >>> ax.get_ylabel()
    'binned calibration error of p_k'
    """
    with literal_text():
        if ax is None:
            _, ax = pyplot().subplots(figsize=(7, 3.2))
        per_class: dict[str, xr.DataArray] = {}
        for label, err in errors.items():
            if err.class_ece is None:
                raise ValueError(
                    f"classwise_errors needs class-wise errors; {label!r} has no class_ece "
                    "(pass the .classwise part of a multiclass error)."
                )
            per_class[label] = err.class_ece
        first = next(iter(per_class.values()))
        classes = [display_name(str(x)) for x in first["class"].values]
        width = 0.8 / max(len(errors), 1)
        x = np.arange(len(classes))
        for i, (label, ece) in enumerate(per_class.items()):
            ax.bar(x + i * width, ece.values.mean(axis=0), width, label=label)
        ax.set_xticks(x + width * (len(errors) - 1) / 2, classes, fontsize=8)
        ax.set_ylabel("binned calibration error of p_k")
        ax.set_xlabel("class k")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    return ax


def dispersion_check(check: NoiseAmbiguityCheck, *, ax: Axes | None = None) -> Axes:
    """Within-item dispersion per latent class: observed vs what the noise model replicates.

    Near 1 both ways under class-conditional noise; observed far above the
    replicated value means answers to one item agree beyond their class
    (ambiguity). See :mod:`bayescal.metrics.noise_or_ambiguity`.

    Parameters
    ----------
    check : NoiseAmbiguityCheck
    ax : Axes, optional

    Returns
    -------
    Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.channels.em import dawid_skene_em
    >>> from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> d = simulate_multiclass(1000, random_state=0)
    >>> chk = noise_or_ambiguity(d, dawid_skene_em(summarize_multiclass(d)),
    ...                          n_replicates=20, alpha=0.05)
    >>> dispersion_check(chk).get_ylabel()
    'within-item dispersion'
    """
    pc = check.per_class
    classes = [display_name(str(x)) for x in pc["class"].values]
    x = np.arange(len(classes))
    with literal_text():
        if ax is None:
            _, ax = pyplot().subplots(figsize=(7, 3.2))
        ax.bar(x - 0.2, pc["dispersion_observed"].values, 0.4, label="observed")
        ax.bar(x + 0.2, pc["dispersion_replicated"].values, 0.4, label="replicated (noise model)")
        ax.axhline(1.0, color="grey", ls="--", lw=1)
        ax.set_xticks(x, classes, fontsize=8)
        ax.set_xlabel("latent class")
        ax.set_ylabel("within-item dispersion")
        ax.set_title(f"verdict: {check.view} ({check.source})", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    return ax
