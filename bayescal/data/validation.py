"""Validation at the edge: every problem is named, nothing is clipped or replaced.

Private helpers used by the container constructors. Each returns a clean
numpy array or raises :class:`bayescal.errors.DataError` whose message says
what was wrong, where (which item / annotator / row) and what to do.
"""

from __future__ import annotations

import numpy as np

from bayescal.errors import DataError

_MAX_SHOWN = 5


def _positions(mask: np.ndarray, ids=None) -> str:
    idx = np.flatnonzero(mask)
    shown = idx[:_MAX_SHOWN]
    if ids is not None:
        shown_txt = ", ".join(repr(ids[i]) for i in shown)
    else:
        shown_txt = ", ".join(str(i) for i in shown)
    more = f" and {idx.size - shown.size} more" if idx.size > shown.size else ""
    return f"{shown_txt}{more}"


def as_numeric(values, name: str) -> np.ndarray:
    """Convert to a float64 array, refusing strings, objects and complex numbers."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype.kind in "OUSV":
        try:
            converted = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise DataError(
                f"{name} must be numeric; got values of type {arr.dtype} that are not numbers "
                f"(for example {arr.ravel()[:3].tolist()!r}). Convert the column to numbers first."
            ) from None
        if arr.dtype.kind in "US" or any(isinstance(v, str) for v in arr.ravel()[:100]):
            raise DataError(
                f"{name} must be numeric; got strings (for example {arr.ravel()[:3].tolist()!r}). "
                "Parse the column to numbers first."
            )
        return converted
    if arr.dtype.kind == "c":
        raise DataError(f"{name} must be real-valued; got complex numbers.")
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{name} must be numeric; got dtype {arr.dtype}.")
    return arr.astype(np.float64, copy=False)


def check_scores(score, name: str = "score", ids=None) -> np.ndarray:
    """Scores: 1-D, non-empty, finite, in [0, 1]."""
    z = as_numeric(score, name)
    if z.ndim != 1:
        raise DataError(f"{name} must be 1-D of shape (n_items,); got shape {z.shape}.")
    if z.size == 0:
        raise DataError(f"{name} is empty: at least one item is needed.")
    bad = ~np.isfinite(z)
    if bad.any():
        raise DataError(
            f"{name} has {int(bad.sum())} missing or non-finite value(s) at item(s) "
            f"{_positions(bad, ids)}. Scores must be probabilities in [0, 1]; remove those items "
            "or supply their scores."
        )
    bad = (z < 0) | (z > 1)
    if bad.any():
        raise DataError(
            f"{name} has {int(bad.sum())} value(s) outside [0, 1] at item(s) "
            f"{_positions(bad, ids)} (range seen {z.min():.6g}..{z.max():.6g}). "
            "Pass probabilities, not logits (apply a sigmoid first)."
        )
    return z


def check_labels(labels, n_items: int, mask=None, ids=None, annotators=None) -> np.ndarray:
    """Labels: (n_items, K) with values 0, 1 or missing; returns float32 with NaN."""
    if isinstance(labels, np.ma.MaskedArray):
        extra = np.ma.getmaskarray(labels)
        mask = extra if mask is None else (np.asarray(mask, dtype=bool) | extra)
        labels = labels.filled(np.nan) if labels.dtype.kind == "f" else labels.data
    arr = as_numeric(labels, "labels")
    if arr.ndim == 1:
        raise DataError(
            f"labels must be 2-D of shape (n_items, n_annotators); got 1-D shape {arr.shape}. "
            "For a single annotator pass labels[:, None]."
        )
    if arr.ndim != 2:
        raise DataError(
            f"labels must be 2-D of shape (n_items, n_annotators); got shape {arr.shape}."
        )
    if arr.shape[0] != n_items:
        raise DataError(
            f"labels have {arr.shape[0]} rows but there are {n_items} scores; "
            "each item needs one score and one row of labels."
        )
    if arr.shape[1] == 0:
        raise DataError("labels have no annotator columns.")
    arr = arr.copy()
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype != bool:
            raise DataError(f"mask must be boolean (True = missing); got dtype {m.dtype}.")
        if m.shape != arr.shape:
            raise DataError(f"mask has shape {m.shape} but labels have shape {arr.shape}.")
        arr[m] = np.nan
    if np.isinf(arr).any():
        raise DataError("labels contain infinite values; use 0, 1, or NaN for a missing answer.")
    observed = ~np.isnan(arr)
    bad = observed & (arr != 0) & (arr != 1)
    if bad.any():
        rows, cols = np.nonzero(bad)
        where = ", ".join(
            f"item {ids[r] if ids is not None else r!r} / annotator "
            f"{annotators[c] if annotators is not None else c!r} = {arr[r, c]:g}"
            for r, c in list(zip(rows, cols))[:_MAX_SHOWN]
        )
        raise DataError(
            f"labels must be 0, 1 or missing (NaN); found {int(bad.sum())} other value(s): "
            f"{where}. Recode the labels to 0/1 (for example 1 = positive class)."
        )
    if not observed.any():
        raise DataError(
            "every label is missing: no annotator answered any item. Check the annotator "
            "columns and the missing-value coding."
        )
    return arr.astype(np.float32)


def check_truth(truth, n_items: int, ids=None) -> np.ndarray:
    """Truth: 1-D of 0/1, no missing values."""
    y = as_numeric(truth, "truth")
    if y.ndim != 1 or y.shape[0] != n_items:
        raise DataError(f"truth must have shape ({n_items},) like the scores; got {y.shape}.")
    bad = ~np.isfinite(y)
    if bad.any():
        raise DataError(
            f"truth has {int(bad.sum())} missing value(s) at item(s) {_positions(bad, ids)}; "
            "truth (for simulations and benchmarks) must be complete."
        )
    bad = (y != 0) & (y != 1)
    if bad.any():
        raise DataError(
            f"truth must be 0 or 1; found other values at item(s) {_positions(bad, ids)}."
        )
    return y.astype(np.int8)


def check_names(names, k: int, what: str = "annotator") -> list[str]:
    """Unique, non-empty string names of length ``k``."""
    if names is None:
        return [f"a{j + 1}" for j in range(k)]
    names = list(names)
    if len(names) != k:
        raise DataError(f"got {len(names)} {what} names for {k} {what} columns.")
    out = []
    for n in names:
        if not isinstance(n, (str, int, np.integer)):
            raise DataError(f"{what} names must be strings; got {n!r}.")
        s = str(n)
        if not s.strip():
            raise DataError(f"{what} names must be non-empty strings.")
        out.append(s)
    seen, dup = set(), []
    for s in out:
        if s in seen:
            dup.append(s)
        seen.add(s)
    if dup:
        raise DataError(
            f"duplicate {what} name(s) {sorted(set(dup))!r}: every {what} needs a unique name "
            "(two columns for one annotator would count the same person twice)."
        )
    return out


def check_item_ids(ids, n_items: int) -> np.ndarray:
    if ids is None:
        return np.arange(n_items)
    ids = np.asarray(ids)
    if ids.shape != (n_items,):
        raise DataError(f"item ids must have shape ({n_items},); got {ids.shape}.")
    _, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise DataError("item ids must be unique; some ids appear more than once.")
    return ids
