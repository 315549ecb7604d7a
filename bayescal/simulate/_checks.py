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
