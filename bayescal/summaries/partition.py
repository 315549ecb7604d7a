"""Partitions of the score range [0, 1] into cells (score groups or ECE bins).

Every partition is made here, so every caller gets the same guards:

- an absurd number of cells, more than :data:`MAX_CELLS`, is refused
  (:class:`~bayescal.errors.ConfigError`) by :func:`make_edges`;
- too many bins for the data (more bins than items, or many empty or near-empty
  bins) give an :class:`~bayescal.errors.IdentificationWarning` with a suggested
  number of bins (:func:`check_bin_occupancy`), because a binned ``|.|`` error
  summed over sparse bins measures mostly noise (SPEC §4: the plug-in's upward
  bias grows like ``sqrt(M / n)``). The metrics call it on the whole evaluation
  set; it is not raised while summarising, because summaries are mergeable and a
  chunk may rightly hold fewer items than bins.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from bayescal.errors import ConfigError, DataError, IdentificationWarning
from bayescal.options import MAX_CELLS

__all__ = [
    "make_edges",
    "assign",
    "bin_index",
    "equal_mass_edges",
    "cell_labels",
    "cell_sums",
    "check_bin_occupancy",
    "suggest_bins",
    "MAX_CELLS",
    "MIN_BIN_ITEMS",
    "SPARSE_ITEM_SHARE",
]


#: A bin holding fewer items than this is "near-empty": with corrected labels of
#: standard deviation about 0.8 to 1, its mean has a standard error above ~0.25,
#: so its ``|.|`` is mostly noise.
MIN_BIN_ITEMS = 10

#: Warn when more than this share of the items sits in near-empty bins (or when
#: more than half of the bins are empty). A few sparse bins at the ends of the
#: score range are normal (ten bins on 250 toy items put about 3% of the items
#: there); most items in sparse bins is a bin count chosen for far more data.
SPARSE_ITEM_SHARE = 0.25


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
        _check_cell_count(m, what)
        if strategy == "uniform":
            return np.linspace(0.0, 1.0, m + 1)
        if strategy == "quantile":
            if scores is None:
                raise ConfigError(f"equal-mass {what} need the scores to place their edges.")
            return equal_mass_edges(scores, m, what=what)
        raise ConfigError(f"unknown strategy {strategy!r}; use 'uniform' or 'quantile'.")
    try:
        edges = np.asarray(spec, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(
            f"{what} must be a number of {what} (an integer >= 1) or their edges (increasing "
            f"numbers from 0 to 1); got {spec!r}."
        ) from None
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
    _check_cell_count(edges.size - 1, what)
    return edges


def _check_cell_count(m: int, what: str) -> None:
    if m > MAX_CELLS:
        raise ConfigError(
            f"{m} {what} is above the limit of {MAX_CELLS} (bayescal.summaries.partition."
            f"MAX_CELLS): a binned error over that many cells measures its own noise. Use at "
            f"most {MAX_CELLS} (10 to 20 {what} suit most audits)."
        )


def suggest_bins(bin_count) -> int:
    """Number of bins the data support: merge adjacent bins until each holds enough items.

    Greedy left-to-right merge of the current bins into runs of at least
    :data:`MIN_BIN_ITEMS` items (a short last run joins the previous one); the
    number of runs is the suggestion (at least 1).

    Examples
    --------
    >>> suggest_bins([5, 5, 30, 0, 0, 19, 40])
    4
    """
    counts = np.asarray(bin_count, dtype=np.int64).reshape(-1)
    total = int(counts.sum())
    if total < MIN_BIN_ITEMS:
        return 1
    runs, acc = 0, 0
    for c in counts:
        acc += int(c)
        if acc >= MIN_BIN_ITEMS:
            runs, acc = runs + 1, 0
    return max(1, runs)


def check_bin_occupancy(bin_count, *, what: str = "bins", stacklevel: int = 2) -> str | None:
    """Warn when there are too many bins for the data; return the message (or None).

    Too many: more than :data:`SPARSE_ITEM_SHARE` of the items sit in bins with
    fewer than :data:`MIN_BIN_ITEMS` items, or more than half of the bins are
    empty. The warning (:class:`~bayescal.errors.IdentificationWarning`) names the
    counts and a suggested number of bins (:func:`suggest_bins`); callers record
    the returned message in their results.

    Parameters
    ----------
    bin_count : array-like of int, shape (M,)
        Items per bin.
    stacklevel : int, default 2
        Passed to :func:`warnings.warn` (2: the caller of this function).

    Examples
    --------
    >>> check_bin_occupancy([300, 250, 200, 150, 100]) is None
    True
    """
    counts = np.asarray(bin_count, dtype=np.int64).reshape(-1)
    n = int(counts.sum())
    if n == 0 or counts.size < 2:
        return None
    sparse = (counts > 0) & (counts < MIN_BIN_ITEMS)
    empty = int((counts == 0).sum())
    share = counts[sparse].sum() / n
    if share <= SPARSE_ITEM_SHARE and 2 * empty <= counts.size:
        return None
    message = (
        f"too many {what} for the data: {counts.size} {what} over {n} items, {empty} empty and "
        f"{int(sparse.sum())} with fewer than {MIN_BIN_ITEMS} items (holding {share:.0%} of the "
        f"items). A binned error over sparse {what} is inflated by noise; use at most about "
        f"{suggest_bins(counts)} {what} (each then holds {MIN_BIN_ITEMS} items or more; 10 to "
        f"20 suit most audits), or equal-mass {what}."
    )
    warnings.warn(message, IdentificationWarning, stacklevel=stacklevel)
    return message


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


def bin_index(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Cell of each value, the same as :func:`assign`, with a faster path for equal-width edges.

    The equal-width path guesses ``floor(x * M)`` and corrects it against the
    actual edges, so values on an edge land exactly where ``assign`` puts them.

    Examples
    --------
    >>> bin_index(np.array([0.0, 0.3, 0.95, 1.0]), np.linspace(0, 1, 11)).tolist()
    [0, 2, 9, 9]
    """
    m = edges.size - 1
    if m < 2 or not np.array_equal(edges, np.linspace(0.0, 1.0, m + 1)):
        return assign(x, edges)
    b = (x * m).astype(np.intp)
    np.clip(b, 0, m - 1, out=b)
    b -= x < edges[b]
    b += (x >= edges[b + 1]) & (b < m - 1)
    return b


def cell_sums(index: np.ndarray, n_cells: int, weights=None):
    """The sparse matrix ``S`` (``n_cells`` x items) with ``S[index[i], i] = weights[i]``
    (1 without weights), so ``S @ x`` sums the rows of ``x`` per cell in one product.

    ``np.add.at`` does the same sums one row at a time, which took seconds at C = 50;
    every per-cell (per-group, per-pattern) sum of the package is this product.

    Examples
    --------
    >>> cell_sums(np.array([1, 0, 1]), 3) @ np.array([1.0, 2.0, 4.0])
    array([2., 5., 0.])
    """
    from scipy import sparse  # lazily: importing bayescal stays fast

    index = np.asarray(index)
    data = np.ones(index.size) if weights is None else np.asarray(weights, dtype=np.float64)
    return sparse.csr_matrix((data, (index, np.arange(index.size))), shape=(n_cells, index.size))


def cell_labels(edges: np.ndarray) -> np.ndarray:
    """Readable coordinate labels such as ``"[0.2, 0.4)"`` (last one closed)."""
    out = []
    for i in range(edges.size - 1):
        close = "]" if i == edges.size - 2 else ")"
        out.append(f"[{edges[i]:.4g}, {edges[i + 1]:.4g}{close}")
    return np.array(out, dtype=object)
