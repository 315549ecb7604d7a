"""Edge validation for the multiclass ambiguity track.

Every public function of :mod:`bayescal.ambiguity` passes its inputs through
these checks once, so the numeric kernels can assume finite logits, non-negative
targets with positive row sums and matching class counts. Every message names
the problem, where it is, and what to do.
"""

from __future__ import annotations

import numpy as np

from bayescal.errors import ConfigError, DataError

__all__ = [
    "check_logits",
    "check_proba",
    "check_targets",
    "check_labels",
    "check_random_state",
]


def _first_bad(mask: np.ndarray) -> str:
    idx = np.argwhere(mask)[0]
    return "row " + str(int(idx[0])) + (f", column {int(idx[1])}" if idx.size > 1 else "")


def check_logits(logits, *, name: str = "logits", n_classes: int | None = None) -> np.ndarray:
    """Return ``logits`` as a float64 array of shape (n_items, n_classes).

    Raises :class:`DataError` for a wrong shape, fewer than two classes, no
    items, or any NaN / infinite entry.
    """
    try:
        z = np.asarray(logits, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"{name} must be a numeric array of shape (n_items, n_classes): {exc}"
        ) from exc
    if z.ndim != 2:
        raise DataError(
            f"{name} must have shape (n_items, n_classes), got an array with "
            f"{z.ndim} dimension(s); reshape a single item to (1, n_classes)."
        )
    if z.shape[0] == 0:
        raise DataError(f"{name} has no items (shape {z.shape}); pass at least one row.")
    if z.shape[1] < 2:
        raise DataError(
            f"{name} has {z.shape[1]} class column(s); calibration needs at least two classes."
        )
    if n_classes is not None and z.shape[1] != n_classes:
        raise DataError(
            f"{name} has {z.shape[1]} classes but {n_classes} were expected "
            "(the calibrator was fitted, or the targets were given, with that many)."
        )
    bad = ~np.isfinite(z)
    if bad.any():
        raise DataError(
            f"{name} contains {int(bad.sum())} NaN or infinite "
            f"value(s), first at {_first_bad(bad)}; logits must be "
            "finite (convert probabilities with a log of values > 0)."
        )
    return z


def check_proba(proba, *, name: str = "proba", n_classes: int | None = None) -> np.ndarray:
    """Return ``proba`` as float64 (n_items, n_classes) rows on the simplex.

    Rows must be finite, non-negative and sum to one within 1e-6 (they are then
    renormalised exactly).
    """
    p = check_logits(proba, name=name, n_classes=n_classes)
    if (p < 0).any():
        raise DataError(f"{name} has negative probabilities, first at {_first_bad(p < 0)}.")
    s = p.sum(axis=1)
    off = np.abs(s - 1.0) > 1e-6
    if off.any():
        i = int(np.argmax(off))
        raise DataError(
            f"{name} rows must sum to one; row {i} sums to {s[i]!r}. "
            "Pass softmax probabilities, or pass logits to the calibrator instead."
        )
    return p / s[:, None]


def check_labels(
    labels, *, n_classes: int, name: str = "labels", n_items: int | None = None
) -> np.ndarray:
    """Return integer class labels of shape (n_items,) in ``0..n_classes-1``."""
    y = np.asarray(labels)
    if y.ndim != 1:
        raise DataError(f"{name} must be one-dimensional (n_items,), got shape {y.shape}.")
    if y.size == 0:
        raise DataError(f"{name} is empty; pass one label per item.")
    if not np.issubdtype(y.dtype, np.integer):
        if (
            np.issubdtype(y.dtype, np.floating)
            and np.all(np.isfinite(y))
            and np.all(y == np.round(y))
        ):
            y = y.astype(np.int64)
        else:
            raise DataError(f"{name} must hold integer class indices, got dtype {y.dtype}.")
    if n_items is not None and y.shape[0] != n_items:
        raise DataError(f"{name} has {y.shape[0]} entries but there are {n_items} items.")
    out = (y < 0) | (y >= n_classes)
    if out.any():
        i = int(np.argmax(out))
        raise DataError(
            f"{name}[{i}] = {int(y[i])} is out of range; labels must lie in 0..{n_classes - 1} "
            f"for {n_classes} classes."
        )
    return y.astype(np.int64)


def check_targets(targets, *, n_items: int, n_classes: int, name: str = "targets") -> np.ndarray:
    """Return soft targets as float64 row distributions of shape (n_items, n_classes).

    ``targets`` may be
    - integer labels of shape (n_items,): turned into one-hot rows;
    - annotator counts or probability rows of shape (n_items, n_classes):
      non-negative, finite, every row with a positive sum; rows are normalised.
    """
    t = np.asarray(targets)
    if t.ndim == 1:
        y = check_labels(t, n_classes=n_classes, name=name, n_items=n_items)
        out = np.zeros((n_items, n_classes))
        out[np.arange(n_items), y] = 1.0
        return out
    if t.ndim != 2:
        raise DataError(
            f"{name} must be labels (n_items,) or counts / distributions (n_items, n_classes), "
            f"got shape {t.shape}."
        )
    try:
        t = t.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be numeric: {exc}") from exc
    if t.shape[0] != n_items:
        raise DataError(f"{name} has {t.shape[0]} rows but there are {n_items} items.")
    if t.shape[1] != n_classes:
        raise DataError(
            f"{name} has {t.shape[1]} class columns but the logits have {n_classes}; "
            "check that both use the same class order."
        )
    bad = ~np.isfinite(t)
    if bad.any():
        raise DataError(f"{name} contains NaN or infinite values, first at {_first_bad(bad)}.")
    if (t < 0).any():
        raise DataError(
            f"{name} contains negative counts or probabilities, first at {_first_bad(t < 0)}; "
            "annotator counts must be >= 0."
        )
    s = t.sum(axis=1)
    zero = s <= 0
    if zero.any():
        raise DataError(
            f"{name} has {int(zero.sum())} all-zero row(s), first at row {int(np.argmax(zero))}; "
            "every item needs at least one annotation (drop unannotated items first)."
        )
    return t / s[:, None]


def check_random_state(random_state) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Same as :func:`bayescal._random.check_random_state`, except that ``None`` is
    refused so every result in this track is reproducible.
    """
    from bayescal._random import check_random_state as _shared

    if random_state is None:
        raise ConfigError(
            "random_state must be a non-negative int or a numpy.random.Generator, got NoneType; "
            "pass a seed such as 0."
        )
    return _shared(random_state)
