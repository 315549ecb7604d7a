"""Partitions of the score range [0, 1] into cells (score groups or ECE bins)."""

from __future__ import annotations

import numbers

import numpy as np

from bayescal.errors import ConfigError, DataError

__all__ = ["make_edges", "assign", "equal_mass_edges", "cell_labels"]


def make_edges(spec, *, what: str = "bins", scores=None, strategy: str = "uniform") -> np.ndarray:
    """Edges of a partition of [0, 1].

    Parameters
    ----------
    spec : int or array-like
        Number of cells, or explicit increasing edges starting at 0 and ending at 1.
    strategy : {"uniform", "quantile"}
        For an int: equal-width cells, or equal-mass cells from ``scores``.

    Examples
    --------
    >>> make_edges(4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        m = int(spec)
        if m < 1:
            raise ConfigError(f"number of {what} must be at least 1; got {m}.")
        if strategy == "uniform":
            return np.linspace(0.0, 1.0, m + 1)
        if strategy == "quantile":
            if scores is None:
                raise ConfigError(f"equal-mass {what} need the scores to place their edges.")
            return equal_mass_edges(scores, m, what=what)
        raise ConfigError(f"unknown strategy {strategy!r}; use 'uniform' or 'quantile'.")
    edges = np.asarray(spec, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2:
        raise ConfigError(
            f"{what} edges must be a 1-D sequence of at least two numbers; got {spec!r}."
        )
    if not np.all(np.isfinite(edges)):
        raise ConfigError(f"{what} edges must be finite; got {edges.tolist()}.")
    if np.any(np.diff(edges) <= 0):
        raise ConfigError(f"{what} edges must be strictly increasing; got {edges.tolist()}.")
    if edges[0] != 0.0 or edges[-1] != 1.0:
        raise ConfigError(
            f"{what} edges must cover [0, 1] (first 0, last 1); got {edges[0]:g}..{edges[-1]:g}. "
            "Scores outside the edges would silently drop out of the partition."
        )
    return edges


def equal_mass_edges(scores, m: int, *, what: str = "bins") -> np.ndarray:
    """Edges at the empirical quantiles of ``scores``, ends pinned to 0 and 1.

    Ties can merge quantiles; repeated edges are removed, so fewer than ``m``
    cells may result (the caller sees it in the edges' length).
    """
    z = np.asarray(scores, dtype=np.float64)
    if z.size == 0:
        raise DataError(f"cannot place equal-mass {what} on an empty set of scores.")
    q = np.quantile(z, np.linspace(0, 1, m + 1)[1:-1])
    edges = np.unique(np.concatenate([[0.0], q, [1.0]]))
    return edges


def assign(z: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Cell index of each score: ``[e_l, e_{l+1})``, the last cell closed at 1."""
    idx = np.searchsorted(edges, z, side="right") - 1
    np.clip(idx, 0, edges.size - 2, out=idx)
    return idx


def cell_labels(edges: np.ndarray) -> np.ndarray:
    """Readable coordinate labels such as ``"[0.2, 0.4)"`` (last one closed)."""
    out = []
    for i in range(edges.size - 1):
        close = "]" if i == edges.size - 2 else ")"
        out.append(f"[{edges[i]:.4g}, {edges[i + 1]:.4g}{close}")
    return np.array(out, dtype=object)
