"""The one container for binary multi-annotator data.

:class:`Annotations` wraps an :class:`xarray.Dataset` with

- ``score[item]``: the predictor's probability of the positive class, in [0, 1];
- ``label[item, annotator]``: 0.0, 1.0 or NaN when the annotator did not answer;
- optional ``truth[item]``: the clean label (simulations and benchmarks only);
- optional ``group[item]``: a user-defined grouping (for example a site) that
  channel estimators may use instead of score groups.

All constructors validate once and name every problem; nothing is clipped,
dropped or replaced.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import xarray as xr

from bayescal.data.validation import (
    check_item_ids,
    check_labels,
    check_names,
    check_scores,
    check_truth,
)
from bayescal.dims import ANNOTATOR, ITEM
from bayescal.errors import DataError

__all__ = ["Annotations", "load_csv", "load_table", "load_long"]


class Annotations:
    """Binary multi-annotator data: scores, labels with missing answers, optional truth.

    Build it with :meth:`from_arrays`, :meth:`from_long`, :func:`load_csv` or from an
    existing dataset with :meth:`from_dataset`; the constructor itself expects an
    already validated dataset.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations
    >>> data = Annotations.from_arrays(
    ...     score=[0.2, 0.7, 0.9],
    ...     labels=[[0, 0, np.nan], [1, 0, 1], [np.nan, np.nan, np.nan]],
    ...     annotators=["ann", "bob", "cy"],
    ... )
    >>> data.n_items, data.n_annotators, data.n_unannotated
    (3, 3, 1)
    """

    def __init__(self, dataset: xr.Dataset):
        self._ds = dataset

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(
        cls,
        score,
        labels,
        *,
        truth=None,
        annotators=None,
        mask=None,
        item=None,
        group=None,
    ) -> Annotations:
        """Build from wide numpy-like arrays.

        Parameters
        ----------
        score : array-like of shape (n_items,)
            Predicted probability of the positive class, each in [0, 1].
        labels : array-like of shape (n_items, n_annotators)
            Values 0 or 1; NaN (or a masked entry) means "not answered".
        truth : array-like of shape (n_items,), optional
            Clean labels 0/1, for simulations and benchmarks.
        annotators : sequence of str, optional
            Unique annotator names; default ``a1 .. aK``.
        mask : bool array-like of shape (n_items, n_annotators), optional
            True where the answer is missing (combined with NaNs in ``labels``).
        item : array-like of shape (n_items,), optional
            Unique item ids; default ``0 .. n-1``.
        group : array-like of shape (n_items,), optional
            A user-defined grouping of the items (no missing values).
        """
        z = check_scores(score, ids=None if item is None else np.asarray(item))
        n = z.shape[0]
        ids = check_item_ids(item, n)
        n_cols = np.shape(labels)[1] if np.ndim(labels) == 2 else None
        names = check_names(annotators, n_cols) if n_cols is not None else None
        lab = check_labels(labels, n, mask=mask, ids=ids, annotators=names)
        if names is None:
            names = check_names(annotators, lab.shape[1])
        data_vars = {
            "score": ((ITEM,), z),
            "label": ((ITEM, ANNOTATOR), lab),
        }
        if truth is not None:
            data_vars["truth"] = ((ITEM,), check_truth(truth, n, ids=ids))
        if group is not None:
            g = np.asarray(group)
            if g.shape != (n,):
                raise DataError(f"group must have shape ({n},); got {g.shape}.")
            if g.dtype.kind == "f" and np.isnan(g).any():
                raise DataError("group has missing values; every item needs a group.")
            data_vars["group"] = ((ITEM,), g)
        ds = xr.Dataset(data_vars, coords={ITEM: ids, ANNOTATOR: np.array(names, dtype=object)})
        return cls(ds)

    @classmethod
    def from_dataset(cls, dataset: xr.Dataset) -> Annotations:
        """Validate and wrap a dataset laid out as described in the module docstring."""
        for var in ("score", "label"):
            if var not in dataset:
                raise DataError(f"dataset has no variable {var!r}; it needs 'score' and 'label'.")
        label = dataset["label"].transpose(ITEM, ANNOTATOR)
        return cls.from_arrays(
            dataset["score"].values,
            label.values,
            truth=dataset["truth"].values if "truth" in dataset else None,
            annotators=[str(a) for a in label[ANNOTATOR].values],
            item=dataset[ITEM].values,
            group=dataset["group"].values if "group" in dataset else None,
        )

    @classmethod
    def from_long(
        cls,
        frame,
        *,
        item: str = "item",
        annotator: str = "annotator",
        label: str = "label",
        score="score",
        truth=None,
    ) -> Annotations:
        """Build from a long table with one row per (item, annotator) answer.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``item``, ``annotator``, ``label`` (0/1) as in crowd-kit.
        score : str or mapping or pandas.Series
            Column of ``frame`` holding each item's score (must be constant within
            an item), or a mapping / Series from item id to score.
        truth : str or mapping or pandas.Series, optional
            Same forms as ``score`` for the clean labels.

        Items that appear in ``score`` but have no rows in ``frame`` are kept as
        unannotated items. Two rows for one (item, annotator) pair are refused.
        """
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"from_long expects a pandas DataFrame; got {type(frame).__name__}.")
        for col in (item, annotator, label):
            if col not in frame.columns:
                raise DataError(
                    f"long table has no column {col!r}; columns are {list(frame.columns)!r}."
                )
        if len(frame) == 0:
            raise DataError("long table is empty: no annotations.")
        dup = frame.duplicated([item, annotator], keep=False)
        if dup.any():
            first = frame.loc[dup, [item, annotator]].iloc[0]
            raise DataError(
                f"{int(dup.sum())} rows repeat an (item, annotator) pair, for example item "
                f"{first[item]!r} / annotator {first[annotator]!r}: one annotator can give one "
                "label per item. Remove or resolve the duplicates."
            )
        scores = _per_item(frame, item, score, "score")
        truths = _per_item(frame, item, truth, "truth") if truth is not None else None
        ann_names = pd.unique(frame[annotator])
        items = scores.index
        unknown = ~frame[item].isin(items)
        if unknown.any():
            raise DataError(
                f"{int(unknown.sum())} rows name items without a score, for example "
                f"{frame.loc[unknown, item].iloc[0]!r}; give every annotated item a score."
            )
        row = items.get_indexer(frame[item])
        col = pd.Index(ann_names).get_indexer(frame[annotator])
        lab_values = frame[label].to_numpy()
        from bayescal.data.validation import as_numeric

        lab_num = as_numeric(lab_values, f"column {label!r}")
        wide = np.full((len(items), len(ann_names)), np.nan, dtype=np.float64)
        wide[row, col] = lab_num
        nan_rows = np.isnan(lab_num)
        if nan_rows.any():
            raise DataError(
                f"column {label!r} has {int(nan_rows.sum())} missing values; in a long table a "
                "missing answer is a missing row, not a blank label."
            )
        return cls.from_arrays(
            scores.to_numpy(),
            wide,
            truth=None if truths is None else truths.reindex(items).to_numpy(),
            annotators=[str(a) for a in ann_names],
            item=np.asarray(items),
        )

    # ------------------------------------------------------------------ access
    @property
    def dataset(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (read it; do not mutate it)."""
        return self._ds

    @property
    def n_items(self) -> int:
        return int(self._ds.sizes[ITEM])

    @property
    def n_annotators(self) -> int:
        return int(self._ds.sizes[ANNOTATOR])

    @property
    def annotators(self) -> list[str]:
        return [str(a) for a in self._ds[ANNOTATOR].values]

    @property
    def score(self) -> np.ndarray:
        return self._ds["score"].values

    @property
    def labels(self) -> np.ndarray:
        """Labels of shape (n_items, n_annotators), float32, NaN = missing."""
        return self._ds["label"].values

    @property
    def answered(self) -> np.ndarray:
        return ~np.isnan(self.labels)

    @property
    def truth(self) -> np.ndarray | None:
        return self._ds["truth"].values if "truth" in self._ds else None

    @property
    def group(self) -> np.ndarray | None:
        return self._ds["group"].values if "group" in self._ds else None

    @property
    def annotated(self) -> np.ndarray:
        """Boolean (n_items,): True where at least one annotator answered."""
        return self.answered.any(axis=1)

    @property
    def n_unannotated(self) -> int:
        """Items nobody answered; kept, but excluded from every label statistic."""
        return int((~self.annotated).sum())

    def subset(self, index) -> Annotations:
        """Items selected by an integer index or boolean mask (no re-validation needed)."""
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        if index.size == 0:
            raise DataError("subset selects no items.")
        return Annotations(self._ds.isel({ITEM: index}))

    def with_score(self, score) -> Annotations:
        """Same annotations with a new score (for example a recalibrated ``g(Z)``)."""
        z = check_scores(score, name="new score")
        if z.shape[0] != self.n_items:
            raise DataError(f"new score has {z.shape[0]} items; the data have {self.n_items}.")
        ds = self._ds.copy()
        ds["score"] = ((ITEM,), z)
        return Annotations(ds)

    def data_hash(self) -> str:
        """SHA-256 of scores, labels and truth, for reproducibility records."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.score).tobytes())
        h.update(np.ascontiguousarray(self.labels).tobytes())
        if self.truth is not None:
            h.update(np.ascontiguousarray(self.truth).tobytes())
        h.update("\x1f".join(self.annotators).encode())
        return h.hexdigest()

    def describe(self) -> dict:
        """Plain facts about the data: counts, answered fraction, agreement."""
        ans = self.answered
        lab = self.labels
        per_ann = ans.sum(axis=0)
        n_ans = ans.sum(axis=1)
        pos = np.nansum(lab, axis=1)
        multi = n_ans >= 2
        agree = ((pos == 0) | (pos == n_ans))[multi]
        return {
            "n_items": self.n_items,
            "n_annotators": self.n_annotators,
            "n_unannotated": self.n_unannotated,
            "answered_fraction": float(ans.mean()),
            "answers_per_annotator": dict(zip(self.annotators, per_ann.tolist())),
            "positive_rate_per_annotator": dict(
                zip(
                    self.annotators,
                    [
                        float(np.nanmean(lab[:, j])) if per_ann[j] else None
                        for j in range(lab.shape[1])
                    ],
                )
            ),
            "unanimous_fraction": float(agree.mean()) if agree.size else None,
            "has_truth": self.truth is not None,
        }

    def __repr__(self) -> str:
        d = self.describe()
        return (
            f"<Annotations: {d['n_items']} items x {d['n_annotators']} annotators "
            f"({', '.join(self.annotators[:6])}{', ...' if self.n_annotators > 6 else ''}); "
            f"answered {d['answered_fraction']:.1%}; unannotated items {d['n_unannotated']}"
            f"{'; with truth' if d['has_truth'] else ''}>"
        )


def _per_item(frame, item_col, spec, what):
    """One value per item from a column of ``frame`` or from a mapping."""
    import pandas as pd

    if isinstance(spec, str):
        if spec not in frame.columns:
            raise DataError(
                f"long table has no {what} column {spec!r}; pass {what}= a column name or a "
                "mapping from item id to value."
            )
        grouped = frame.groupby(item_col, sort=False)[spec]
        if (grouped.nunique(dropna=False) > 1).any():
            bad = grouped.nunique(dropna=False)
            raise DataError(
                f"{what} differs between rows of the same item, for example item "
                f"{bad[bad > 1].index[0]!r}; an item has one {what}."
            )
        return grouped.first()
    if isinstance(spec, pd.Series):
        series = spec
    elif isinstance(spec, dict):
        series = pd.Series(spec)
    else:
        raise DataError(f"{what} must be a column name, a dict or a pandas Series.")
    if not series.index.is_unique:
        raise DataError(f"{what} has repeated item ids.")
    return series


def load_csv(
    path,
    score: str = "score",
    annotators=None,
    truth: str | None = None,
    item: str | None = None,
) -> Annotations:
    """Read a wide CSV: one row per item, one column per annotator, blank = missing.

    Parameters
    ----------
    path : str or Path
        CSV file with a header row.
    score : str, default "score"
        Column of predicted probabilities.
    annotators : list of str, optional
        Annotator columns; default every column other than ``score``, ``truth``
        and ``item``.
    truth, item : str, optional
        Columns with the clean label and the item id.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> _ = open(p, "w").write("score,r1,r2,r3\\n0.1,0,0,\\n0.8,1,,1\\n")
    >>> load_csv(p, annotators=["r1", "r2", "r3"]).n_items
    2
    """
    import csv

    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise DataError(f"CSV file {str(path)!r} does not exist.")
    with path.open(newline="") as fh:
        header = next(csv.reader(fh), None)
    if not header:
        raise DataError(f"CSV file {str(path)!r} is empty: it needs a header row and data rows.")
    seen = set()
    for col in header:
        if col in seen:
            raise DataError(
                f"CSV file {str(path)!r} has the column {col!r} twice; every annotator column "
                "needs a unique name."
            )
        seen.add(col)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if len(frame) == 0:
        raise DataError(f"CSV file {str(path)!r} has a header but no data rows.")
    reserved = {c for c in (score, truth, item) if c is not None}
    for col in reserved:
        if col not in frame.columns:
            raise DataError(
                f"CSV file {str(path)!r} has no column "
                f"{col!r}; columns are {list(frame.columns)!r}."
            )
    if annotators is None:
        annotators = [c for c in frame.columns if c not in reserved]
    else:
        annotators = list(annotators)
        missing = [c for c in annotators if c not in frame.columns]
        if missing:
            raise DataError(
                f"CSV file {str(path)!r} has no annotator column(s) {missing!r}; columns are "
                f"{list(frame.columns)!r}."
            )
        check_names(annotators, len(annotators))
    if not annotators:
        raise DataError(f"CSV file {str(path)!r} has no annotator columns.")

    def numeric(col, allow_blank):
        raw = frame[col].str.strip()
        blank = raw == ""
        if blank.any() and not allow_blank:
            row = int(np.flatnonzero(blank.to_numpy())[0]) + 2
            raise DataError(
                f"{path.name}: column {col!r} is blank on line {row}; it must be a number."
            )
        values = pd.to_numeric(raw.where(~blank, None), errors="coerce")
        bad = values.isna() & ~blank
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"{path.name}: column {col!r} has a non-numeric value {frame[col].iloc[i]!r} on "
                f"line {i + 2}; use numbers (and a blank cell for a missing answer)."
            )
        return values.to_numpy(dtype=np.float64)

    z = numeric(score, allow_blank=False)
    lab = np.column_stack([numeric(c, allow_blank=True) for c in annotators])
    bad = ~np.isnan(lab) & (lab != 0) & (lab != 1)
    if bad.any():
        r, c = map(int, np.argwhere(bad)[0])
        raise DataError(
            f"{path.name}: annotator column {annotators[c]!r} has the value {lab[r, c]:g} on line "
            f"{r + 2}; labels must be 0, 1 or blank."
        )
    bad = (z < 0) | (z > 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{path.name}: score column {score!r} has {z[r]:g} on line {r + 2}, outside [0, 1]; "
            "scores must be probabilities."
        )
    y = numeric(truth, allow_blank=False) if truth is not None else None
    ids = frame[item].to_numpy() if item is not None else None
    return Annotations.from_arrays(z, lab, truth=y, annotators=annotators, item=ids)


def _read_frame(path):
    """A table from CSV (as strings, blank = missing) or Parquet (typed)."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise DataError(f"file {str(path)!r} does not exist.")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path)
        except ImportError as exc:
            raise DataError(
                f"reading Parquet needs pyarrow: pip install pyarrow ({exc})."
            ) from None
    if suffix in (".csv", ".txt", ".tsv"):
        if path.stat().st_size == 0:
            raise DataError(
                f"CSV file {str(path)!r} is empty: it needs a header row and data rows."
            )
        return pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
    raise DataError(
        f"unsupported file type {suffix!r} for {str(path)!r}; use .csv, .tsv or .parquet."
    )


def load_table(
    path, score: str = "score", annotators=None, truth: str | None = None, item: str | None = None
) -> Annotations:
    """Read a wide table (CSV or Parquet): one row per item, one column per annotator.

    CSV goes through :func:`load_csv` (blank cell = missing answer); Parquet
    columns must be numeric, with null = missing answer.
    """
    path = Path(path)
    if path.suffix.lower() not in (".parquet", ".pq"):
        return load_csv(path, score=score, annotators=annotators, truth=truth, item=item)
    frame = _read_frame(path)
    if len(frame) == 0:
        raise DataError(f"Parquet file {str(path)!r} has no rows.")
    reserved = {c for c in (score, truth, item) if c is not None}
    for col in reserved:
        if col not in frame.columns:
            raise DataError(
                f"{path.name} has no column {col!r}; columns are {list(frame.columns)!r}."
            )
    if annotators is None:
        annotators = [c for c in frame.columns if c not in reserved]
    missing = [c for c in annotators if c not in frame.columns]
    if missing:
        raise DataError(f"{path.name} has no annotator column(s) {missing!r}.")
    cols = {}
    for col in [score, *annotators] + ([truth] if truth else []):
        values = frame[col]
        if values.dtype == object or str(values.dtype).startswith(("string", "str")):
            raise DataError(f"{path.name}: column {col!r} holds text; it must be numeric.")
        cols[col] = values.to_numpy(dtype=np.float64, na_value=np.nan)
    lab = np.column_stack([cols[c] for c in annotators])
    return Annotations.from_arrays(
        cols[score],
        lab,
        truth=cols[truth] if truth else None,
        annotators=[str(a) for a in annotators],
        item=frame[item].to_numpy() if item else None,
    )


def load_long(
    path,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    score: str = "score",
    truth: str | None = None,
) -> Annotations:
    """Read a long table (CSV or Parquet) with one row per answer; see
    :meth:`Annotations.from_long`."""
    frame = _read_frame(path)
    if len(frame) == 0:
        raise DataError(f"{Path(path).name} has no rows.")
    return Annotations.from_long(
        frame, item=item, annotator=annotator, label=label, score=score, truth=truth
    )
