"""Figures of the multiclass ambiguity track (Tao et al.): computed results in, Axes out.

Compute and draw apart: :func:`bayescal.ambiguity.ece_true` and friends return
per-bin data; these functions only draw it. matplotlib is imported when a
function is called; titles and class names are shown literally.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from bayescal._typing import ArrayLike, PathLike
from bayescal.display import display_name
from bayescal.plotting.text import literal_text, pyplot

if TYPE_CHECKING:
    import matplotlib.figure
    import xarray as xr
    from matplotlib.axes import Axes

__all__ = [
    "reliability_diagram",
    "reliability_panels",
    "true_and_voted_reliability",
    "entropy_histogram",
]


def reliability_diagram(
    ds: xr.Dataset, *, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """Draw one top-label reliability diagram (Tao et al., SPEC §2 ``ECE_true``).

    Parameters
    ----------
    ds : xarray.Dataset
        Output of :func:`~bayescal.ambiguity.ece_true` (or ``ece_plugin`` /
        ``ece_voted``) with equal-width bins: per-bin ``accuracy``,
        ``confidence``, ``count``, coords ``bin_lower`` / ``bin_upper``.
    ax : matplotlib Axes, optional
    title : str, optional
        Shown literally (no mathtext) above the ECE in percent; pass user
        names through :func:`~bayescal.display.display_name` first.

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
    with literal_text():
        if ax is None:
            _, ax = pyplot().subplots(figsize=(3, 3))
        _draw_reliability(ds, ax, title)
    return ax


def _draw_reliability(ds, ax, title):
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
    ax.set_title(f"{title}\n{label}" if title else label, fontsize=9, parse_math=False)


def reliability_panels(
    datasets: dict,
    *,
    ncols: int = 5,
    path: PathLike | None = None,
    suptitle: str | None = None,
) -> matplotlib.figure.Figure:
    """A grid of reliability diagrams, one per method.

    Tao et al., App. figures (reliability diagrams of every method, ``ECE_true``).

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
    with literal_text():
        fig, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.8 * nrows), squeeze=False)
        for ax, (name, ds) in zip(axes.ravel(), datasets.items()):
            reliability_diagram(ds, ax=ax, title=display_name(name))
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        if suptitle:
            fig.suptitle(display_name(suptitle))
        fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig


def true_and_voted_reliability(
    true: dict, voted: dict, *, stacked: bool = False, axes: np.ndarray | None = None
) -> np.ndarray:
    """Reliability against annotator draws and against the voted label, per method.

    Tao et al., Sec. 4: a voted-label calibrator such as TS can look calibrated
    against the voted label while staying overconfident against labels drawn
    from the annotator distribution (``ECE_true``).

    Parameters
    ----------
    true, voted : dict of str -> xarray.Dataset
        Per-bin data of :func:`~bayescal.ambiguity.ece_true` and
        :func:`~bayescal.ambiguity.ece_voted` per panel title (same keys).
    stacked : bool, default False
        False: one column per method, true labels in the top row and voted
        labels below (axes of shape (2, n_methods)). True: one row per method,
        true and voted side by side (axes of shape (n_methods, 2)), for narrow
        screens.
    axes : array of Axes, optional
        Of the shape above.

    Returns
    -------
    ndarray of Axes of shape (2, n_methods), or (n_methods, 2) when ``stacked``

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from bayescal.ambiguity import ece_true, ece_voted
    >>> p, c = [[0.9, 0.1], [0.6, 0.4]], [[3, 1], [1, 1]]
    >>> true_and_voted_reliability({"m": ece_true(p, c, n_draws=5)}, {"m": ece_voted(p, c)}).shape
    (2, 1)
    """
    names = list(true)
    shape = (len(names), 2) if stacked else (2, len(names))
    with literal_text():
        if axes is None:
            size = (5.4, 2.7 * len(names)) if stacked else (2.7 * len(names), 5.8)
            _, axes = pyplot().subplots(*shape, figsize=size, squeeze=False)
        axes = np.asarray(axes).reshape(shape)
        for j, name in enumerate(names):
            shown = display_name(name)
            top, bottom = (axes[j, 0], axes[j, 1]) if stacked else (axes[0, j], axes[1, j])
            reliability_diagram(true[name], ax=top, title=f"{shown}\ntrue labels")
            reliability_diagram(voted[name], ax=bottom, title=f"{shown}\nvoted labels")
        axes[0, 0].figure.tight_layout()
    return axes


def entropy_histogram(entropy: ArrayLike, *, ax: Axes | None = None) -> Axes:
    """Histogram of normalised annotation entropy per item (0 = unanimous, 1 = uniform).

    Tao et al., Proposition 2: the error of a voted-label calibrator grows with
    this entropy.

    Parameters
    ----------
    entropy : array-like of shape (n_items,)
        From :func:`~bayescal.ambiguity.annotation_entropy`.
    ax : Axes, optional

    Returns
    -------
    Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> entropy_histogram([0.0, 0.5, 1.0]).get_ylabel()
    'items'
    """
    with literal_text():
        if ax is None:
            _, ax = pyplot().subplots(figsize=(6, 2.8))
        ax.hist(
            np.asarray(entropy, dtype=float),
            bins=np.linspace(0, 1, 21).tolist(),
            color="#4c72b0",
            edgecolor="white",
        )
        ax.set_xlabel("normalised annotation entropy (0 = unanimous, 1 = uniform)")
        ax.set_ylabel("items")
        ax.grid(alpha=0.3)
    return ax
