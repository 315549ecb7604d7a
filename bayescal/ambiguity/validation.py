"""Edge validation for the multiclass ambiguity track.

Every public function of :mod:`bayescal.ambiguity` passes its inputs through
these checks once, so the numeric kernels can assume finite logits, non-negative
targets with positive row sums and matching class counts. Every message names
the problem, where it is, and what to do.
"""

from __future__ import annotations

import numpy as np

from bayescal.data.validation import show_value
from bayescal.errors import ConfigError, DataError

__all__ = [
    "MAX_ABS_LOGIT",
    "MAX_TOTAL_COUNT",
    "check_logits",
    "check_proba",
    "check_counts",
    "check_targets",
    "check_labels",
    "check_random_state",
]

#: Largest accepted absolute logit. The log of the smallest positive float64 is
#: about -744.4, so a logit gap beyond ~745 already encodes a probability that
#: float64 cannot tell from 0: every log-probability a float64 (or float32) model can
#: emit lies inside +-1000, and any real logit row can be shifted there (softmax is
#: unchanged by subtracting the row maximum). Measured on 300 items: every calibrator
#: of the ambiguity track fits cleanly with logits up to +-1e3; at +-1e4 the L-BFGS
#: fit of Dirichlet calibration stops converging, at +-1e5 Platt scaling too, and near
#: the float64 limit (1e307) temperature fits overflow to inf. A finite 1e308 is
#: therefore refused here, not inside a fit.
MAX_ABS_LOGIT = 1e3
#: Largest accepted number of votes for one item: 2**53, the last integer up to which
#: float64 (used for distributions and metrics) counts exactly. Also keeps int64 row
#: sums far from overflow (a count of 2**62 used to wrap to a negative distribution).
MAX_TOTAL_COUNT = 2**53


def _row(i: int) -> str:
    return f"row {int(i)}"


def _first_bad(mask: np.ndarray, where=_row) -> str:
    idx = np.argwhere(mask)[0]
    return where(int(idx[0])) + (f", column {int(idx[1])}" if idx.size > 1 else "")


def _numeric(values, name: str) -> np.ndarray:
    """float64 array of numbers; strings, booleans, nested or ragged values are refused."""
    arr = np.asarray(values) if not isinstance(values, list) else None
    if arr is not None and arr.dtype.kind in "biufc":
        if arr.dtype.kind == "b":
            raise DataError(f"{name} holds booleans; it must hold numbers.")
        if arr.dtype.kind == "c":
            raise DataError(f"{name} must be real-valued; got complex numbers.")
        return arr.astype(np.float64, copy=False)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise DataError(
            f"{name} must be a rectangular numeric array of shape (n_items, n_classes): {exc}."
        ) from None
    flat = np.asarray(values, dtype=object).ravel()
    if any(isinstance(v, (str, bytes, bool, np.bool_)) for v in flat):
        raise DataError(f"{name} must hold numbers, not strings or booleans.")
    return arr


def check_logits(
    logits, *, name: str = "logits", n_classes: int | None = None, where=_row
) -> np.ndarray:
    """Return ``logits`` as a float64 array of shape (n_items, n_classes).

    Raises :class:`DataError` for a wrong shape, fewer than two classes, no
    items, any NaN / infinite entry, or an entry beyond +-:data:`MAX_ABS_LOGIT`.
    ``where(i)`` names row ``i`` in messages (default ``"row i"``).

    Examples
    --------
    >>> check_logits([[1e308, 0.0]])
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: logits has 1 value(s) beyond +-1000, first 1e+308 at row 0, ...
    """
    z = _numeric(logits, name)
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
            f"value(s), first at {_first_bad(bad, where)}; logits must be "
            "finite (convert probabilities with a log of values > 0)."
        )
    big = np.abs(z) > MAX_ABS_LOGIT
    if big.any():
        r, c = (int(v) for v in np.argwhere(big)[0])
        raise DataError(
            f"{name} has {int(big.sum())} value(s) beyond +-{MAX_ABS_LOGIT:g}, first "
            f"{show_value(z[r, c])} at {where(r)}, column {c}. No float64 probability needs more "
            "(log of the smallest positive double is -744); subtract each row's maximum "
            "(softmax is unchanged), or check the file for corrupt values."
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
            f"{name} rows must sum to one; row {i} sums to {show_value(s[i])}. "
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


def check_counts(
    counts, *, n_items: int | None = None, n_classes: int | None = None, name="counts", where=_row
) -> np.ndarray:
    """Annotator vote counts: whole, non-negative, at least one vote per item.

    The one rule set for counts of every loader (CIFAR-10H, ChaosNLI, npz): a
    fraction such as 1.5 is refused (never truncated), and so is an item with more
    than :data:`MAX_TOTAL_COUNT` votes (exact float64 counting; no int64 overflow).

    Parameters
    ----------
    counts : array-like of shape (n_items, n_classes)
    n_items, n_classes : int, optional
        Expected shape.
    name : str
    where : callable, default ``"row i"``
        Names row ``i`` in messages ("'chaosnli.jsonl', line 7").

    Returns
    -------
    ndarray of int64, shape (n_items, n_classes)

    Examples
    --------
    >>> check_counts([[1.5, 2.7, 90.9]])
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: counts must be whole numbers of votes; 1.5 at row 0, ...
    """
    c = _numeric(counts, name)
    if c.ndim != 2:
        raise DataError(f"{name} must have shape (n_items, n_classes); got shape {c.shape}.")
    if n_items is not None and c.shape[0] != n_items:
        raise DataError(f"{name} has {c.shape[0]} rows but there are {n_items} items.")
    if n_classes is not None and c.shape[1] != n_classes:
        raise DataError(
            f"{name} has {c.shape[1]} class columns but {n_classes} are expected; check that "
            "counts and logits use the same class order."
        )
    if c.shape[0] == 0:
        raise DataError(f"{name} has no items.")
    bad = ~np.isfinite(c)
    if bad.any():
        raise DataError(
            f"{name} contains NaN or infinite values, first at {_first_bad(bad, where)}."
        )
    neg = c < 0
    if neg.any():
        r, j = (int(v) for v in np.argwhere(neg)[0])
        raise DataError(
            f"{name} has a negative count, {show_value(c[r, j])} at {where(r)}, column {j}; "
            "counts are numbers of annotators who chose each class (>= 0)."
        )
    frac = c != np.floor(c)
    if frac.any():
        r, j = (int(v) for v in np.argwhere(frac)[0])
        raise DataError(
            f"{name} must be whole numbers of votes; {show_value(c[r, j])} at {where(r)}, "
            f"column {j} is a fraction ({int(frac.any(axis=1).sum())} row(s) affected). "
            "Fractions are refused, not truncated: pass vote counts (calibrators also take "
            "distributions directly)."
        )
    total = c.sum(axis=1)
    huge = total > MAX_TOTAL_COUNT
    if huge.any():
        r = int(np.argmax(huge))
        raise DataError(
            f"{name} at {where(r)} total {total[r]:.4g} votes, more than 2**53 (the largest "
            "count float64 holds exactly); this is not a vote count. Check the file."
        )
    zero = total == 0
    if zero.any():
        raise DataError(
            f"{name} has {int(zero.sum())} all-zero row(s), first at {where(int(np.argmax(zero)))}"
            "; every item needs at least one annotation (drop unannotated items first)."
        )
    return c.astype(np.int64)


def check_targets(targets, *, n_items: int, n_classes: int, name: str = "targets") -> np.ndarray:
    """Return soft targets as float64 row distributions of shape (n_items, n_classes).

    ``targets`` may be
    - integer labels of shape (n_items,): turned into one-hot rows;
    - annotator counts or probability rows of shape (n_items, n_classes):
      non-negative, finite, every row with a positive sum; rows are normalised.
    """
    t = np.asarray(targets)
    if t.ndim == 1:
        return np.eye(n_classes)[check_labels(t, n_classes=n_classes, name=name, n_items=n_items)]
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
