"""Validation and summary of one in-memory batch of rows (runs inside a dask task)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayescal.errors import DataError
from bayescal.summaries.summary import summarize_arrays


@dataclass(frozen=True)
class WideSpec:
    """Everything a task needs to summarise a wide batch (picklable, small)."""

    score: str
    annotators: tuple
    truth: str | None
    bin_edges: np.ndarray
    group_edges: np.ndarray
    gold: str | None = None

    @property
    def columns(self) -> list[str]:
        cols = [self.score, *self.annotators]
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
            "[0, 1] (apply a sigmoid to logits); fix or remove the row and run again."
        )


def check_label_values(x: np.ndarray, column: str, where) -> None:
    bad = ~np.isnan(x) & (x != 0) & (x != 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{where(r)}: label column {column!r} has the value {x[r]:g}; labels must be 0, 1 or "
            "missing (blank / null). Recode the labels or fix the row and run again."
        )


def check_truth_values(y: np.ndarray, column: str, where) -> None:
    bad = ~((y == 0) | (y == 1))
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{where(r)}: truth column {column!r} has the value {y[r]:g}; truth must be 0 or 1 "
            "with no missing values."
        )


def check_gold_values(g: np.ndarray, column: str, where) -> None:
    bad = ~np.isnan(g) & (g != 0) & (g != 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{where(r)}: gold column {column!r} has the value {g[r]:g}; gold classes must be 0, "
            "1 or blank (class unknown). Recode the column or fix the row and run again."
        )


def wide_arrays(frame, spec: WideSpec, where):
    """Validated (score float64, labels float32 with NaN, truth or None, gold or None) of one
    batch; gold holds 0 / 1 for gold items and NaN for the others."""
    z = numeric_column(frame[spec.score], f"score column {spec.score!r}", where)
    check_score_values(z, spec.score, where)
    lab = np.empty((len(frame), len(spec.annotators)), dtype=np.float32)
    for j, name in enumerate(spec.annotators):
        x = numeric_column(frame[name], f"label column {name!r}", where)
        check_label_values(x, name, where)
        lab[:, j] = x
    y = None
    if spec.truth is not None:
        y = numeric_column(frame[spec.truth], f"truth column {spec.truth!r}", where)
        check_truth_values(y, spec.truth, where)
    g = None
    if spec.gold is not None:
        g = numeric_column(frame[spec.gold], f"gold column {spec.gold!r}", where)
        check_gold_values(g, spec.gold, where)
    return z, lab, y, g


def summarize_batch(z, lab, y, g, spec: WideSpec):
    return summarize_arrays(
        z,
        lab,
        annotators=spec.annotators,
        bin_edges=spec.bin_edges,
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
