"""Reliability diagrams from the per-bin data of :func:`bayescal.ambiguity.ece_true`.

Compute and draw apart: the metrics return data; these functions only draw it.
matplotlib is imported when a function is called.
"""

from __future__ import annotations

import math

__all__ = ["reliability_diagram", "reliability_panels"]


def reliability_diagram(ds, *, ax=None, title: str | None = None):
    """Draw one reliability diagram.

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`~bayescal.ambiguity.ece_true` (or ``ece_plugin`` /
        ``ece_voted``) with equal-width bins: per-bin ``accuracy``,
        ``confidence``, ``count``, coords ``bin_lower`` / ``bin_upper``.
    ax : matplotlib Axes, optional
    title : str, optional
        Shown with the ECE in percent.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.ambiguity import ece_true
    >>> ax = reliability_diagram(ece_true([[0.9, 0.1], [0.6, 0.4]], [[3, 1], [1, 1]], n_draws=5))
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(3, 3))
    lower = ds["bin_lower"].values
    upper = ds["bin_upper"].values
    filled = ds["count"].values > 0
    width = (upper - lower)[filled]
    left = lower[filled]
    acc = ds["accuracy"].values[filled]
    conf = ds["confidence"].values[filled]
    ax.bar(
        left, acc, width=width, align="edge", color="#4c72b0", edgecolor="white", label="accuracy"
    )
    over = acc < conf
    # Red: overconfident (accuracy below confidence); green: underconfident.
    ax.bar(
        left[over],
        (conf - acc)[over],
        bottom=acc[over],
        width=width[over],
        align="edge",
        color="#d62728",
        alpha=0.35,
    )
    ax.bar(
        left[~over],
        (acc - conf)[~over],
        bottom=conf[~over],
        width=width[~over],
        align="edge",
        color="#2ca02c",
        alpha=0.35,
    )
    ax.plot([0, 1], [0, 1], "k--", lw=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    label = f"ECE = {100 * float(ds['ece']):.2f}%"
    ax.set_title(f"{title}\n{label}" if title else label, fontsize=9)
    return ax


def reliability_panels(datasets: dict, *, ncols: int = 5, path=None, suptitle: str | None = None):
    """A grid of reliability diagrams, one per method.

    Parameters
    ----------
    datasets : dict of str -> xarray.Dataset
        Method name -> per-bin data.
    ncols : int, default 5
    path : str or Path, optional
        When given, the figure is saved there (PNG at 120 dpi).
    suptitle : str, optional

    Returns
    -------
    matplotlib Figure
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(datasets)
    nrows = max(1, math.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.8 * nrows), squeeze=False)
    for ax, (name, ds) in zip(axes.ravel(), datasets.items()):
        reliability_diagram(ds, ax=ax, title=name)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig
