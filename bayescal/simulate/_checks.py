"""Argument checks shared by the simulators; every message names the problem."""

from __future__ import annotations

import numbers

import numpy as np

from bayescal.errors import ConfigError, DataError


def check_truth(truth) -> np.ndarray:
    """Return ``truth`` as a boolean array of shape (n,), or raise :class:`DataError`."""
    arr = np.asarray(truth)
    if arr.ndim != 1:
        raise DataError(
            f"truth must be one-dimensional of shape (n_items,), got shape {arr.shape}."
        )
    if arr.size == 0:
        raise DataError("truth is empty: need at least one item to annotate.")
    if arr.dtype == bool:
        return arr
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise DataError(f"truth must hold 0/1 values, got dtype {arr.dtype}.")
    bad = ~((arr == 0) | (arr == 1))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"truth must hold only 0 and 1; item {first} has {float(arr[first])!r} "
            f"({int(bad.sum())} bad value(s) in total)."
        )
    return arr == 1


def check_rates(values, name: str, size: int | None = None) -> np.ndarray:
    """Return probabilities as float64 of shape (K,), or raise :class:`ConfigError`."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a sequence of probabilities, got {values!r}.") from None
    if arr.ndim != 1:
        raise ConfigError(
            f"{name} must be one-dimensional of shape (n_annotators,), got shape {arr.shape}."
        )
    if arr.size == 0:
        raise ConfigError(f"{name} is empty: need at least one annotator.")
    if size is not None and arr.size != size:
        raise ConfigError(f"{name} has {arr.size} entries but there are {size} annotators.")
    bad = ~(np.isfinite(arr) & (arr >= 0.0) & (arr <= 1.0))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ConfigError(
            f"{name}[{first}] = {float(arr[first])!r} is not a probability in [0, 1]."
        )
    return arr


def check_missing(missing, n_annotators: int) -> np.ndarray:
    """Broadcast a scalar or per-annotator missingness rate to shape (K,)."""
    if np.ndim(missing) == 0:
        try:
            value = float(missing)
        except (TypeError, ValueError):
            message = f"missing must be a probability or one per annotator, got {missing!r}."
            raise ConfigError(message) from None
        missing = np.full(n_annotators, value)
    return check_rates(missing, "missing", size=n_annotators)


def check_n_items(n) -> int:
    """Return ``n`` as a positive int, or raise :class:`ConfigError`."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ConfigError(f"n must be a positive int (number of items), got {n!r}.")
    if n <= 0:
        raise ConfigError(f"n must be a positive int (number of items), got {n}.")
    return int(n)


def check_loading_groups(loading, groups, k: int, n_classes: int):
    """Loadings ``s[j, y] >= 0`` of shape (K, C) (zero outside every group) and the groups
    as disjoint tuples of annotator indices (``"all"``: one group of every annotator)."""
    s = np.asarray(loading, dtype=np.float64)
    s = np.broadcast_to(s, (k, n_classes)).copy() if s.ndim == 0 else s.copy()
    if s.shape != (k, n_classes) or not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ConfigError(
            f"loading must be a finite number >= 0 or an array of shape ({k}, {n_classes}) of "
            f"them; got {loading!r}."
        )
    if isinstance(groups, str) and groups == "all":
        groups = [tuple(range(k))]
    groups = [tuple(int(j) for j in g) for g in groups]
    flat = [j for g in groups for j in g]
    if len(set(flat)) != len(flat) or any(not 0 <= j < k for j in flat):
        raise ConfigError(
            f"groups must be disjoint sets of annotator indices 0..{k - 1}; got {groups}."
        )
    s[[j for j in range(k) if j not in flat]] = 0.0
    return s, groups
