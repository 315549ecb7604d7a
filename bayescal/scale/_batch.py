"""Validation and summary of one in-memory batch of rows (runs inside a dask task)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayescal.data.validation import range_hint
from bayescal.errors import DataError
from bayescal.summaries.summary import Summary, summarize_arrays


@dataclass(frozen=True)
class WideSpec:
    """Everything a task needs to summarise a wide batch (picklable, small).

    ``probs`` names one column (the binary score ``p_1``) or one column per class.
    """

    probs: tuple[str, ...]
    annotators: tuple[str, ...]
    truth: str | None
    bin_edges: np.ndarray
    grouping: str
    group_edges: np.ndarray | None
    classes: tuple[str, ...]
    gold: str | None = None
    sum_tol: float = 1e-5

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def columns(self) -> list[str]:
        cols = [*self.probs, *self.annotators]
        return cols + [c for c in (self.truth, self.gold) if c is not None]


def numeric_column(series, what: str, where) -> np.ndarray:
    """float64 values of a column with NaN for missing; names the first non-number."""
    import pandas as pd
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if is_numeric_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    coerced = pd.to_numeric(series, errors="coerce")
    bad = (coerced.isna() & series.notna()).to_numpy()
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{where(r)}: {what} has the non-numeric value {series.iloc[r]!r}. Use numbers "
            "(and a blank cell for a missing answer); fix or remove the row and run again."
        )
    return coerced.to_numpy(dtype=np.float64, na_value=np.nan)


def check_score_values(z: np.ndarray, column: str, where) -> None:
    bad = ~((z >= 0) & (z <= 1))  # also catches NaN
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        problem = "is missing" if np.isnan(z[r]) else f"is {z[r]:.17g}, outside [0, 1]"
        raise DataError(
            f"{where(r)}: score column {column!r} {problem}. Every row needs a probability in "
            f"[0, 1]; fix or remove the row and run again. {range_hint(z, 'sigmoid')}"
        )


def check_prob_rows(p: np.ndarray, columns, sum_tol: float, where) -> None:
    """Class probabilities of a batch: each in [0, 1] and each row summing to one."""
    for j, column in enumerate(columns):
        bad = ~((p[:, j] >= 0) & (p[:, j] <= 1))  # also catches NaN
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            value = p[r, j]
            problem = "is missing" if np.isnan(value) else f"is {value:.17g}, outside [0, 1]"
            raise DataError(
                f"{where(r)}: probability column {column!r} {problem}. Every row needs a "
                "probability in [0, 1] per class; fix or remove the row and run again. "
                + range_hint(p, "softmax")
            )
    off = np.abs(p.sum(axis=1) - 1.0) > sum_tol
    if off.any():
        r = int(np.flatnonzero(off)[0])
        raise DataError(
            f"{where(r)}: the probabilities {list(columns)!r} sum to {p[r].sum():.17g}, not 1 "
            f"(tolerance {sum_tol:g}); every row must hold one probability per class. Check "
            "that every class column is listed, in class order."
        )


#: the two-class wording of each column's rule (C > 2: "a class index 0..C-1")
_BINARY_RULES = {
    "label": "labels must be 0, 1 or missing (blank / null). Recode the labels or fix the row "
    "and run again.",
    "truth": "truth must be 0 or 1 with no missing values.",
    "gold": "gold classes must be 0, 1 or blank (class unknown). Recode the column or fix the "
    "row and run again.",
}


def check_class_values(x: np.ndarray, role: str, column: str, where, n_classes: int = 2) -> None:
    """Class indices ``0 .. C-1`` in the ``role`` ("label", "truth" or "gold") column;
    a blank (NaN) is allowed except in the truth column."""
    missing = role != "truth"
    ok = (x >= 0) & (x < n_classes) & (x == np.round(x))
    if missing:
        ok |= np.isnan(x)
    bad = ~ok
    if not bad.any():
        return
    r = int(np.flatnonzero(bad)[0])
    head = f"{where(r)}: {role} column {column!r} has the value"
    if n_classes == 2:
        raise DataError(f"{head} {x[r]:g}; {_BINARY_RULES[role]}")
    blank = " or missing (blank / null)" if missing else " with no missing values"
    shown = "missing" if np.isnan(x[r]) else f"{x[r]:g}"
    raise DataError(
        f"{head} {shown}; it must be a class index 0..{n_classes - 1}{blank}. Recode the column "
        "or fix the row and run again."
    )


def wide_arrays(
    frame, spec: WideSpec, where
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Validated (probabilities, labels float32 with NaN, truth or None, gold or None) of one
    batch: the probabilities are the score (n,) for a binary score column, else (n, C);
    gold holds the known class of gold items and NaN for the others."""
    c = spec.n_classes
    if len(spec.probs) == 1:
        p = numeric_column(frame[spec.probs[0]], f"score column {spec.probs[0]!r}", where)
        check_score_values(p, spec.probs[0], where)
    else:
        p = np.column_stack(
            [numeric_column(frame[col], f"probability column {col!r}", where) for col in spec.probs]
        )
        check_prob_rows(p, spec.probs, spec.sum_tol, where)
    lab = np.empty((len(frame), len(spec.annotators)), dtype=np.float32)
    for j, name in enumerate(spec.annotators):
        x = numeric_column(frame[name], f"label column {name!r}", where)
        check_class_values(x, "label", name, where, c)
        lab[:, j] = x
    y = None
    if spec.truth is not None:
        y = numeric_column(frame[spec.truth], f"truth column {spec.truth!r}", where)
        check_class_values(y, "truth", spec.truth, where, c)
    g = None
    if spec.gold is not None:
        g = numeric_column(frame[spec.gold], f"gold column {spec.gold!r}", where)
        check_class_values(g, "gold", spec.gold, where, c)
    return p, lab, y, g


def summarize_batch(
    p: np.ndarray,
    lab: np.ndarray,
    y: np.ndarray | None,
    g: np.ndarray | None,
    spec: WideSpec,
) -> Summary:
    return summarize_arrays(
        p,
        lab,
        annotators=spec.annotators,
        classes=spec.classes,
        bin_edges=spec.bin_edges,
        grouping=spec.grouping,
        group_edges=spec.group_edges,
        truth=y,
        gold=g,
    )


def add_all(summaries):
    """Sum a non-empty sequence of summaries (one tree node)."""
    it = iter(summaries)
    total = next(it)
    for s in it:
        total = total + s
    return total
