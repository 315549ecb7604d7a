"""The container for multiclass data with noisy annotators (SPEC §3).

:class:`MulticlassAnnotations` wraps an :class:`xarray.Dataset` with

- ``probs[item, class]``: the model's class probabilities; each row is finite,
  in [0, 1] and sums to one within ``sum_tol`` (default :data:`PROB_SUM_TOL`);
- ``label[item, annotator]``: the answered class ``0 .. C-1`` as a float, NaN
  when the annotator did not answer;
- optional ``truth[item]``: the clean class (simulations and benchmarks only);
- optional ``gold[item]``: the known class of gold (control) items as a float,
  NaN for the items whose class is unknown (issue 15; ``models/gold.md``);
- optional ``group[item]``: a user-defined grouping of the items;
- coordinate ``class``: the class names, in the order of the ``probs`` columns.

Every constructor validates once and names each problem (item, annotator,
value, and for files the line); nothing is clipped, renormalised, dropped or
replaced.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import xarray as xr

from bayescal.data.files import read_parquet_frame
from bayescal.data.labelled import DimNames, DimSize
from bayescal.data.validation import _positions, as_numeric, check_item_ids, check_names
from bayescal.dims import ANNOTATOR, CLASS, ITEM
from bayescal.errors import ConfigError, DataError

__all__ = [
    "MulticlassAnnotations",
    "load_multiclass_csv",
    "check_probs",
    "check_class_labels",
    "check_class_truth",
    "check_class_gold",
    "parse_column",
    "PROB_SUM_TOL",
]

#: Rows of ``probs`` must sum to one within this absolute tolerance. A float32
#: softmax divides by a float32 sum whose relative rounding error grows with the
#: number of terms (up to about 1,000 x 6e-8 = 6e-5 for sequential accumulation
#: over 1,000 classes, far less for ten), so its rows sum to one only within about
#: 1e-5; the tolerance admits such outputs while still catching unnormalised scores
#: or a missing class column. Pass ``sum_tol`` to change it.
PROB_SUM_TOL = 1e-5

_MAX_SHOWN = 5


def _where(rows, cols, ids, annotators, values) -> str:
    return ", ".join(
        f"item {ids[r] if ids is not None else r!r} / annotator "
        f"{annotators[c] if annotators is not None else c!r} = {float(values[r, c]):g}"
        for r, c in list(zip(rows, cols))[:_MAX_SHOWN]
    )


def check_probs(probs, *, sum_tol: float = PROB_SUM_TOL, ids=None, name="probs") -> np.ndarray:
    """Class probabilities: (n_items, C >= 2), finite, in [0, 1], rows summing to one.

    Returns a float64 array (unchanged values) or raises :class:`DataError`.

    Examples
    --------
    >>> check_probs([[0.25, 0.75]]).tolist()
    [[0.25, 0.75]]
    """
    p = as_numeric(probs, name)
    if p.ndim != 2:
        raise DataError(f"{name} must be 2-D of shape (n_items, n_classes); got shape {p.shape}.")
    if p.shape[0] == 0:
        raise DataError(f"{name} is empty: at least one item is needed.")
    if p.shape[1] < 2:
        raise DataError(
            f"{name} has {p.shape[1]} column(s); a multiclass model needs one probability column "
            "per class (at least two)."
        )
    if not (isinstance(sum_tol, (int, float)) and 0 <= sum_tol < 1):
        raise DataError(f"sum_tol must be a number in [0, 1); got {sum_tol!r}.")
    bad = ~np.isfinite(p).all(axis=1)
    if bad.any():
        raise DataError(
            f"{name} has missing or non-finite values in {int(bad.sum())} row(s), at item(s) "
            f"{_positions(bad, ids)}. Every item needs a probability for every class."
        )
    bad = ((p < 0) | (p > 1)).any(axis=1)
    if bad.any():
        raise DataError(
            f"{name} has values outside [0, 1] in {int(bad.sum())} row(s), at item(s) "
            f"{_positions(bad, ids)} (range seen {p.min():.6g}..{p.max():.6g}). Pass "
            "probabilities, not logits (apply a softmax first)."
        )
    dev = np.abs(p.sum(axis=1) - 1.0)
    bad = dev > sum_tol
    if bad.any():
        i = int(np.argmax(dev))
        raise DataError(
            f"{name} rows must sum to one within {sum_tol:g}; {int(bad.sum())} row(s) do not, at "
            f"item(s) {_positions(bad, ids)} (the worst sums to {p[i].sum():.10g}). Check that "
            "there is one column per class, in class order, and that the scores are "
            "probabilities (a softmax output), or pass sum_tol= for coarsely rounded files."
        )
    return p


def check_class_labels(
    labels, n_items: int, n_classes: int, *, mask=None, ids=None, annotators=None
) -> np.ndarray:
    """Answers: (n_items, K) with values ``0 .. C-1`` or missing; returns float32 with NaN."""
    if isinstance(labels, np.ma.MaskedArray):
        extra = np.ma.getmaskarray(labels)
        mask = extra if mask is None else (np.asarray(mask, dtype=bool) | extra)
        labels = labels.filled(np.nan) if labels.dtype.kind == "f" else labels.data
    arr = as_numeric(labels, "labels")
    if arr.ndim != 2:
        raise DataError(
            f"labels must be 2-D of shape (n_items, n_annotators); got shape {arr.shape}. "
            "For a single annotator pass labels[:, None]."
        )
    if arr.shape[0] != n_items:
        raise DataError(
            f"labels have {arr.shape[0]} rows but there are {n_items} rows of probabilities; "
            "each item needs one row of each."
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
    observed = ~np.isnan(arr)
    bad = observed & ~(np.isfinite(arr) & (arr == np.round(arr)) & (arr >= 0) & (arr < n_classes))
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise DataError(
            f"labels must be class indices 0..{n_classes - 1} or missing (NaN); found "
            f"{int(bad.sum())} other value(s): {_where(rows, cols, ids, annotators, arr)}. "
            "Recode answers to the position of their class in the probability columns."
        )
    if not observed.any():
        raise DataError(
            "every label is missing: no annotator answered any item. Check the annotator "
            "columns and the missing-value coding."
        )
    return arr.astype(np.float32)


def check_class_truth(truth, n_items: int, n_classes: int, *, ids=None) -> np.ndarray:
    """Truth: (n_items,) class indices ``0 .. C-1``, none missing; returns int32."""
    y = as_numeric(truth, "truth")
    if y.shape != (n_items,):
        raise DataError(f"truth must have shape ({n_items},) like the items; got {y.shape}.")
    bad = ~np.isfinite(y)
    if bad.any():
        raise DataError(
            f"truth has {int(bad.sum())} missing value(s) at item(s) {_positions(bad, ids)}; "
            "truth (for simulations and benchmarks) must be complete."
        )
    bad = (y != np.round(y)) | (y < 0) | (y >= n_classes)
    if bad.any():
        raise DataError(
            f"truth must hold class indices 0..{n_classes - 1}; found other values at item(s) "
            f"{_positions(bad, ids)} (for example {float(y[np.flatnonzero(bad)[0]]):g})."
        )
    return y.astype(np.int32)


def check_class_gold(gold, n_items: int, n_classes: int, *, ids=None) -> np.ndarray:
    """Gold items' known classes: (n_items,) class indices ``0 .. C-1``, NaN = not gold.

    Returns float64 (NaN for the items of unknown class) or raises :class:`DataError`
    naming the row and the value.

    Examples
    --------
    >>> check_class_gold([2, np.nan, 0], 3, 3).tolist()
    [2.0, nan, 0.0]
    >>> check_class_gold([1.5], 1, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bayescal.errors.DataError: gold must hold class indices 0..2 ... (for example 1.5). ...
    """
    g = as_numeric(gold, "gold")
    if g.shape != (n_items,):
        raise DataError(
            f"gold must have shape ({n_items},) like the items (NaN for items of unknown class); "
            f"got {g.shape}."
        )
    g = g.astype(np.float64)
    known = ~np.isnan(g)
    bad = known & ~(np.isfinite(g) & (g == np.round(g)) & (g >= 0) & (g < n_classes))
    if bad.any():
        raise DataError(
            f"gold must hold class indices 0..{n_classes - 1} (or NaN for items of unknown "
            f"class); found {int(bad.sum())} other value(s), at item(s) {_positions(bad, ids)} "
            f"(for example {float(g[np.flatnonzero(bad)[0]]):g}). Recode gold classes to the "
            "position of their class in the probability columns and leave the other items blank."
        )
    return g


def _require_columns(frame, columns, source: str, what: str = "column") -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"{source} has no {what}(s) {missing!r}; columns are {list(frame.columns)!r}."
        )


def _check_group(group, n):
    g = np.asarray(group)
    if g.shape != (n,):
        raise DataError(f"group must have shape ({n},); got {g.shape}.")
    if g.dtype.kind == "f" and np.isnan(g).any():
        raise DataError("group has missing values; every item needs a group.")
    return g


class MulticlassAnnotations:
    """Multiclass data: model probabilities, annotators' answered classes, optional truth.

    Build it with :meth:`from_arrays`, :meth:`from_long` or
    :func:`load_multiclass_csv`; the constructor itself expects an already
    validated dataset (use :meth:`from_dataset` for one from elsewhere).

    Examples
    --------
    >>> import numpy as np
    >>> data = MulticlassAnnotations.from_arrays(
    ...     probs=[[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]],
    ...     labels=[[0, 0, np.nan], [2, 1, 2]],
    ...     classes=["cat", "dog", "fox"],
    ... )
    >>> data.n_items, data.n_annotators, data.n_classes, data.predicted.tolist()
    (2, 3, 3, [0, 2])
    """

    def __init__(self, dataset: xr.Dataset):
        self._ds = dataset

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(
        cls,
        probs,
        labels,
        *,
        truth=None,
        annotators=None,
        classes=None,
        mask=None,
        item=None,
        group=None,
        gold=None,
        sum_tol: float = PROB_SUM_TOL,
    ) -> MulticlassAnnotations:
        """Build from wide numpy-like arrays.

        Parameters
        ----------
        probs : array-like of shape (n_items, n_classes)
            Class probabilities; rows sum to one within ``sum_tol``.
        labels : array-like of shape (n_items, n_annotators)
            Answered class index ``0 .. C-1``; NaN (or a masked entry) = not answered.
        truth : array-like of shape (n_items,), optional
            Clean class indices, for simulations and benchmarks.
        annotators : sequence of str, optional
            Unique annotator names; default ``a1 .. aK``.
        classes : sequence of str, optional
            Unique class names in column order; default ``"0" .. "C-1"``.
        mask : bool array-like of shape (n_items, n_annotators), optional
            True where the answer is missing.
        item : array-like of shape (n_items,), optional
            Unique item ids; default ``0 .. n-1``.
        group : array-like of shape (n_items,), optional
            A user-defined grouping of the items (no missing values).
        gold : array-like of shape (n_items,), optional
            Known class ``0 .. C-1`` of gold (control) items, NaN for the others
            (``models/gold.md``): their likelihood uses the known class.
        sum_tol : float, default :data:`PROB_SUM_TOL`

        Returns
        -------
        MulticlassAnnotations
        """
        # ids as plain Python values so that messages read "item 'x'" or "item 3"
        ids_in = None if item is None else np.asarray(item).tolist()
        p = check_probs(probs, sum_tol=sum_tol, ids=ids_in)
        n, c = p.shape
        ids = check_item_ids(item, n)
        shown = ids.tolist()
        names = [str(y) for y in range(c)] if classes is None else check_names(classes, c, "class")
        lab_cols = np.shape(labels)[1] if np.ndim(labels) == 2 else None
        ann = check_names(annotators, lab_cols) if lab_cols is not None else None
        lab = check_class_labels(labels, n, c, mask=mask, ids=shown, annotators=ann)
        if ann is None:
            ann = check_names(annotators, lab.shape[1])
        data_vars = {
            "probs": ((ITEM, CLASS), p),
            "label": ((ITEM, ANNOTATOR), lab),
        }
        if truth is not None:
            data_vars["truth"] = ((ITEM,), check_class_truth(truth, n, c, ids=shown))
        if group is not None:
            data_vars["group"] = ((ITEM,), _check_group(group, n))
        if gold is not None:
            data_vars["gold"] = ((ITEM,), check_class_gold(gold, n, c, ids=shown))
        coords = {
            ITEM: ids,
            ANNOTATOR: np.array(ann, dtype=object),
            CLASS: np.array(names, dtype=object),
        }
        ds = xr.Dataset(data_vars, coords=coords)
        ds.attrs["sum_tol"] = float(sum_tol)
        return cls(ds)

    @classmethod
    def from_dataset(cls, dataset: xr.Dataset, *, sum_tol: float = PROB_SUM_TOL):
        """Validate and wrap a dataset laid out as described in the module docstring."""
        for var in ("probs", "label"):
            if var not in dataset:
                raise DataError(f"dataset has no variable {var!r}; it needs 'probs' and 'label'.")
        probs = dataset["probs"].transpose(ITEM, CLASS)
        label = dataset["label"].transpose(ITEM, ANNOTATOR)
        return cls.from_arrays(
            probs.values,
            label.values,
            truth=dataset["truth"].values if "truth" in dataset else None,
            annotators=[str(a) for a in label[ANNOTATOR].values],
            classes=[str(c) for c in probs[CLASS].values],
            item=dataset[ITEM].values,
            group=dataset["group"].values if "group" in dataset else None,
            gold=dataset["gold"].values if "gold" in dataset else None,
            sum_tol=sum_tol,
        )

    @classmethod
    def from_long(
        cls,
        frame,
        *,
        probs,
        item: str = "item",
        annotator: str = "annotator",
        label: str = "label",
        truth=None,
        gold=None,
        classes=None,
        sum_tol: float = PROB_SUM_TOL,
    ) -> MulticlassAnnotations:
        """Build from a long table with one row per (item, annotator) answer.

        Item and annotator ids are compared as strings (``1`` and ``"1"`` name
        the same item) and kept as strings.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``item``, ``annotator``, ``label`` (as in crowd-kit).
        probs : list of str or pandas.DataFrame
            Either the columns of ``frame`` holding the class probabilities (one
            per class, in class order, constant within an item), or a DataFrame
            indexed by item id with one column per class (then items without
            answers are kept as unannotated items).
        label : str
            Column of answers: class indices ``0 .. C-1``, or class names when
            ``classes`` is given.
        truth : str or mapping or pandas.Series, optional
            Column of ``frame`` (constant within an item) or a mapping from item id
            to class (index or name).
        gold : str or mapping or pandas.Series, optional
            Known classes of gold items: a column of ``frame`` (constant within an
            item, blank for items of unknown class) or a mapping from gold item id to
            class (index or name); items it does not name are of unknown class.
        classes : sequence of str, optional
            Class names in column order; default: the probability column names.

        Returns
        -------
        MulticlassAnnotations

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"item": [1, 1, 2], "annotator": ["u", "v", "u"],
        ...                       "label": ["dog", "cat", "dog"],
        ...                       "p_cat": [0.8, 0.8, 0.3], "p_dog": [0.2, 0.2, 0.7]})
        >>> d = MulticlassAnnotations.from_long(frame, probs=["p_cat", "p_dog"],
        ...                                     classes=["cat", "dog"])
        >>> d.labels.tolist(), d.dataset["item"].values.tolist()
        ([[1.0, 0.0], [1.0, nan]], ['1', '2'])
        """
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"from_long expects a pandas DataFrame; got {type(frame).__name__}.")
        _require_columns(frame, (item, annotator, label), "long table")
        if len(frame) == 0:
            raise DataError("long table is empty: no annotations.")
        frame = frame.assign(
            **{item: frame[item].astype(str), annotator: frame[annotator].astype(str)}
        )
        dup = frame.duplicated([item, annotator], keep=False)
        if dup.any():
            first = frame.loc[dup, [item, annotator]].iloc[0]
            raise DataError(
                f"{int(dup.sum())} rows repeat an (item, annotator) pair, for example item "
                f"{first[item]!r} / annotator {first[annotator]!r}: one annotator gives one "
                "answer per item. Remove or resolve the duplicates."
            )
        if isinstance(probs, pd.DataFrame):
            table = probs.copy()
            table.index = table.index.astype(str)
            if not table.index.is_unique:
                raise DataError("the probability table repeats item ids; one row per item.")
            prob_cols = list(table.columns)
        else:
            prob_cols = list(probs)
            _require_columns(frame, prob_cols, "long table", "probability column")
            grouped = frame.groupby(item, sort=False)[prob_cols]
            varying = grouped.nunique(dropna=False).max(axis=1) > 1
            if varying.any():
                raise DataError(
                    f"probabilities differ between rows of the same item, for example item "
                    f"{varying[varying].index[0]!r}; an item has one probability vector."
                )
            table = grouped.first()
        names = check_names(
            [str(c) for c in prob_cols] if classes is None else classes, len(prob_cols), "class"
        )
        unknown = ~frame[item].isin(table.index)
        if unknown.any():
            raise DataError(
                f"{int(unknown.sum())} rows name items without probabilities, for example "
                f"{frame.loc[unknown, item].iloc[0]!r}; give every annotated item its "
                "probabilities."
            )
        items = table.index
        ann_names = pd.unique(frame[annotator])
        codes = parse_column(
            frame[label].reset_index(drop=True),
            what=f"long-table column {label!r}",
            classes=names,
            allow_blank=False,
        )
        wide = np.full((len(items), len(ann_names)), np.nan, dtype=np.float64)
        wide[items.get_indexer(frame[item]), pd.Index(ann_names).get_indexer(frame[annotator])] = (
            codes
        )
        y = None
        if truth is not None:
            y = parse_column(
                _truth_per_item(frame, item, truth, items), what="truth", classes=names
            )
        known = None
        if gold is not None:
            known = parse_column(
                _gold_per_item(frame, item, gold, items), what="gold", classes=names
            )
        return cls.from_arrays(
            table.to_numpy(),
            wide,
            truth=y,
            gold=known,
            annotators=list(ann_names),
            classes=names,
            item=np.asarray(items, dtype=object),
            sum_tol=sum_tol,
        )

    # ------------------------------------------------------------------ access
    @property
    def dataset(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (read it; do not mutate it)."""
        return self._ds

    n_items = DimSize(ITEM)
    n_annotators = DimSize(ANNOTATOR)
    n_classes = DimSize(CLASS)
    annotators = DimNames(ANNOTATOR)
    classes = DimNames(CLASS)

    @property
    def probs(self) -> np.ndarray:
        """Class probabilities of shape (n_items, n_classes), float64."""
        return self._ds["probs"].values

    @property
    def labels(self) -> np.ndarray:
        """Answers of shape (n_items, n_annotators), float32 class indices, NaN = missing."""
        return self._ds["label"].values

    @property
    def predicted(self) -> np.ndarray:
        """Top class ``argmax p`` of shape (n_items,); ties go to the lowest class index."""
        return self.probs.argmax(axis=1)

    @property
    def confidence(self) -> np.ndarray:
        """Top-label confidence ``max p`` of shape (n_items,)."""
        return self.probs.max(axis=1)

    @property
    def answered(self) -> np.ndarray:
        return ~np.isnan(self.labels)

    @property
    def truth(self) -> np.ndarray | None:
        return self._ds["truth"].values if "truth" in self._ds else None

    @property
    def gold(self) -> np.ndarray | None:
        """Known classes of gold items, float64 of shape (n_items,), NaN = unknown class."""
        return self._ds["gold"].values if "gold" in self._ds else None

    @property
    def n_gold(self) -> int:
        """Gold items (items whose class is known)."""
        return 0 if self.gold is None else int((~np.isnan(self.gold)).sum())

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

    def subset(self, index) -> MulticlassAnnotations:
        """Items selected by an integer index or boolean mask."""
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        if index.size == 0:
            raise DataError("subset selects no items.")
        return MulticlassAnnotations(self._ds.isel({ITEM: index}))

    def with_probs(self, probs, *, sum_tol: float | None = None) -> MulticlassAnnotations:
        """Same annotations with new probabilities (for example recalibrated ones)."""
        tol = self._ds.attrs.get("sum_tol", PROB_SUM_TOL) if sum_tol is None else sum_tol
        p = check_probs(probs, sum_tol=tol, name="new probs")
        if p.shape != (self.n_items, self.n_classes):
            raise DataError(
                f"new probs have shape {p.shape}; the data have ({self.n_items}, {self.n_classes})."
            )
        ds = self._ds.copy()
        ds["probs"] = ((ITEM, CLASS), p)
        return MulticlassAnnotations(ds)

    def data_hash(self) -> str:
        """SHA-256 of probabilities, labels, truth and names, for reproducibility records."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.probs).tobytes())
        h.update(np.ascontiguousarray(self.labels).tobytes())
        if self.truth is not None:
            h.update(np.ascontiguousarray(self.truth).tobytes())
        if self.gold is not None:
            h.update(b"gold")
            h.update(np.ascontiguousarray(self.gold).tobytes())
        h.update("\x1f".join(self.annotators + ["\x1e"] + self.classes).encode())
        return h.hexdigest()

    def describe(self) -> dict:
        """Plain facts: counts, answered fraction, answer distribution, agreement."""
        ans = self.answered
        lab = self.labels
        per_ann = ans.sum(axis=0)
        c = self.n_classes
        answers = np.stack(
            [
                np.bincount(lab[ans[:, j], j].astype(np.int64), minlength=c)
                for j in range(ans.shape[1])
            ]
        )
        n_ans = ans.sum(axis=1)
        multi = n_ans >= 2
        first = np.where(ans, lab, np.nan)
        lo, hi = np.nanmin(first[multi], axis=1), np.nanmax(first[multi], axis=1)
        return {
            "n_items": self.n_items,
            "n_annotators": self.n_annotators,
            "n_classes": c,
            "classes": self.classes,
            "n_unannotated": self.n_unannotated,
            "answered_fraction": float(ans.mean()),
            "answers_per_annotator": dict(zip(self.annotators, per_ann.tolist())),
            "answer_counts": {
                name: dict(zip(self.classes, row.tolist()))
                for name, row in zip(self.annotators, answers)
            },
            "predicted_counts": dict(
                zip(self.classes, np.bincount(self.predicted, minlength=c).tolist())
            ),
            "unanimous_fraction": float((lo == hi).mean()) if multi.any() else None,
            "has_truth": self.truth is not None,
        }

    def __repr__(self) -> str:
        ans = self.answered
        return (
            f"<MulticlassAnnotations: {self.n_items} items x {self.n_annotators} annotators "
            f"({', '.join(self.annotators[:6])}{', ...' if self.n_annotators > 6 else ''}) x "
            f"{self.n_classes} classes ({', '.join(self.classes[:6])}"
            f"{', ...' if self.n_classes > 6 else ''}); answered {ans.mean():.1%}; unannotated "
            f"items {self.n_unannotated}{'; with truth' if self.truth is not None else ''}"
            f"{f'; {self.n_gold} gold items' if self.gold is not None else ''}>"
        )


def parse_column(series, *, what, classes=None, allow_blank=True, place=None) -> np.ndarray:
    """Numbers from a column (text or typed); blank / null -> NaN; class names -> indices.

    Parameters
    ----------
    series : pandas.Series
        Text (CSV read as strings) or typed values (Parquet, a DataFrame).
    what : str
        How messages name the column.
    classes : list of str, optional
        When given, a text value equal to a class name becomes its index.
    allow_blank : bool
        Whether blank / null values are allowed (missing answers).
    place : callable, optional
        Row position -> text such as ``"line 7"``; default ``"row 7"``.

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> import pandas as pd
    >>> parse_column(pd.Series(["1", "", "dog"]), what="r1", classes=["cat", "dog"]).tolist()
    [1.0, nan, 1.0]
    """
    import pandas as pd

    place = place or (lambda i: f"row {i}")
    if series.dtype.kind in "iufb":
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    text = series.astype("string").str.strip()
    blank = (text.isna() | (text == "")).to_numpy()
    if blank.any() and not allow_blank:
        raise DataError(
            f"{what} is blank at {place(int(np.flatnonzero(blank)[0]))}; it needs a value."
        )
    num = pd.to_numeric(text.where(~blank, None), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    bad = np.isnan(num) & ~blank
    if bad.any() and classes is not None:
        mapped = text[bad].map({name: float(k) for k, name in enumerate(classes)})
        num[bad] = mapped.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.isnan(num) & ~blank
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        hint = f" or a class name {list(classes)}" if classes is not None else ""
        raise DataError(
            f"{what} has the value {series.iloc[i]!r} at {place(i)}; use a number{hint}"
            + (" (and a blank for a missing answer)." if allow_blank else ".")
        )
    return num


def _truth_per_item(frame, item_col, spec, items):
    import pandas as pd

    if isinstance(spec, str):
        if spec not in frame.columns:
            raise DataError(f"long table has no truth column {spec!r}.")
        grouped = frame.groupby(item_col, sort=False)[spec]
        bad = grouped.nunique(dropna=False) > 1
        if bad.any():
            raise DataError(
                f"truth differs between rows of the same item, for example item "
                f"{bad[bad].index[0]!r}; an item has one true class."
            )
        series = grouped.first()
    elif isinstance(spec, (dict, pd.Series)):
        series = pd.Series(spec)
        series.index = series.index.astype(str)
    else:
        raise DataError("truth must be a column name, a dict or a pandas Series.")
    absent = ~items.isin(series.index)
    if absent.any():
        raise DataError(
            f"truth is missing for {int(absent.sum())} item(s), for example {items[absent][0]!r}."
        )
    return series.reindex(items).reset_index(drop=True)


def _gold_per_item(frame, item_col, spec, items):
    """Gold classes per item from a column (blank = unknown) or a mapping; NaN where absent."""
    import pandas as pd

    if isinstance(spec, str):
        if spec not in frame.columns:
            raise DataError(f"long table has no gold column {spec!r}.")
        col = frame[spec]
        blank = col.isna() | (col.astype("string").str.strip() == "")
        grouped = frame.assign(**{spec: col.where(~blank, None)}).groupby(item_col, sort=False)[
            spec
        ]
        bad = grouped.nunique(dropna=False) > 1
        if bad.any():
            raise DataError(
                f"gold differs between rows of the same item, for example item "
                f"{bad[bad].index[0]!r}; a gold item has one known class (blank on every row "
                "of the other items)."
            )
        series = grouped.first()
    elif isinstance(spec, (dict, pd.Series)):
        series = pd.Series(spec, dtype=object)
        series.index = series.index.astype(str)
        unknown = ~series.index.isin(items)
        if unknown.any():
            raise DataError(
                f"gold names {int(unknown.sum())} item(s) that are not in the table, for example "
                f"{series.index[unknown][0]!r}."
            )
    else:
        raise DataError("gold must be a column name, a dict or a pandas Series.")
    return series.reindex(items).reset_index(drop=True)


def _read_wide(path):
    """A wide table: CSV as strings (blank = missing, line numbers kept) or Parquet (typed)."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise DataError(f"file {str(path)!r} does not exist.")
    if not path.is_file():
        raise DataError(f"{str(path)!r} is not a regular file; pass a CSV or Parquet file.")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            return read_parquet_frame(path), False  # issue 23: footer sizes checked first
        except ImportError as exc:
            raise DataError(
                f"reading Parquet needs pyarrow: pip install pyarrow ({exc})."
            ) from None
    if path.stat().st_size == 0:
        raise DataError(f"CSV file {str(path)!r} is empty: it needs a header row and data rows.")
    import csv

    sep = "\t" if suffix == ".tsv" else ","
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh, delimiter=sep), None) or []
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, sep=sep, encoding="utf-8")
    except (UnicodeDecodeError, csv.Error, pd.errors.ParserError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"cannot read {str(path)!r} as UTF-8 CSV: {first}") from None
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        raise DataError(
            f"{path.name} has the column(s) {dup} more than once; every column needs a unique name."
        )
    return frame, True


def load_multiclass_csv(
    path,
    probs,
    annotators=None,
    truth: str | None = None,
    item: str | None = None,
    classes=None,
    sum_tol: float = PROB_SUM_TOL,
    gold: str | None = None,
) -> MulticlassAnnotations:
    """Read a wide CSV or Parquet file: one row per item, one column per class and annotator.

    Parameters
    ----------
    path : str or Path
        ``.csv`` / ``.tsv`` (blank cell = missing answer) or ``.parquet`` (null =
        missing answer).
    probs : list of str
        The probability columns, one per class, in class order (``[p0, ..., pC-1]``).
    annotators : list of str, optional
        Annotator columns; default every column other than ``probs``, ``truth`` and
        ``item``. Answers are class indices ``0 .. C-1``, or class names when
        ``classes`` is given.
    truth, item : str, optional
        Columns with the clean class and the item id.
    classes : list of str, optional
        Class names in column order; default the names of the ``probs`` columns.
    sum_tol : float, default :data:`PROB_SUM_TOL`
    gold : str, optional
        Column with the known class of gold items (index or class name; blank for
        the items of unknown class).

    Returns
    -------
    MulticlassAnnotations

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "m.csv")
    >>> _ = open(p, "w").write("p0,p1,p2,r1,r2,r3\\n0.7,0.2,0.1,0,0,\\n0.1,0.3,0.6,2,1,2\\n")
    >>> d = load_multiclass_csv(p, probs=["p0", "p1", "p2"])
    >>> d.n_items, d.annotators, d.classes
    (2, ['r1', 'r2', 'r3'], ['p0', 'p1', 'p2'])
    """
    path = Path(path)
    frame, is_text = _read_wide(path)
    if len(frame) == 0:
        raise DataError(f"{path.name} has a header but no data rows.")
    if isinstance(probs, str) or len(probs) < 2:
        raise DataError(
            f"probs must list one column per class (at least two), in class order; got {probs!r}."
        )
    probs = list(probs)
    reserved = [*probs] + [c for c in (truth, item, gold) if c is not None]
    _require_columns(frame, reserved, path.name)
    if annotators is None:
        annotators = [c for c in frame.columns if c not in reserved]
    else:
        annotators = list(annotators)
        _require_columns(frame, annotators, path.name, "annotator column")
        clash = [c for c in annotators if c in reserved]
        if clash:
            raise ConfigError(
                f"column(s) {clash!r} cannot be both an annotator and a probability, truth, item "
                f"or gold column (truth={truth!r}, item={item!r}, gold={gold!r}); remove them "
                "from the annotators, or name another column for that role."
            )
    if not annotators:
        raise DataError(f"{path.name} has no annotator columns.")
    names = check_names(probs if classes is None else classes, len(probs), "class")

    def place(i):
        return f"line {i + 2}" if is_text else f"row {i}"

    def column(col, *, allow_blank, class_valued):
        return parse_column(
            frame[col],
            what=f"{path.name}: column {col!r}",
            classes=names if class_valued else None,
            allow_blank=allow_blank,
            place=place,
        )

    p = np.column_stack([column(c, allow_blank=False, class_valued=False) for c in probs])
    lab = np.column_stack([column(c, allow_blank=True, class_valued=True) for c in annotators])
    bad = ~np.isnan(lab) & ((lab != np.round(lab)) | (lab < 0) | (lab >= len(probs)))
    if bad.any():
        r, c = map(int, np.argwhere(bad)[0])
        raise DataError(
            f"{path.name}: annotator column {annotators[c]!r} has the value {lab[r, c]:g} at "
            f"{place(r)}; answers must be class indices 0..{len(probs) - 1}, class names, or "
            "blank."
        )
    row_bad = ~np.isfinite(p).all(axis=1) | ((p < 0) | (p > 1)).any(axis=1)
    row_bad |= np.abs(p.sum(axis=1) - 1.0) > sum_tol
    if row_bad.any():
        r = int(np.flatnonzero(row_bad)[0])
        raise DataError(
            f"{path.name}: the probabilities at {place(r)} ({', '.join(f'{x:g}' for x in p[r])}) "
            f"are not a probability vector (each in [0, 1], summing to one within {sum_tol:g}; "
            f"they sum to {p[r].sum():.10g}). Check the column order and that these are softmax "
            "outputs, not logits."
        )
    y = column(truth, allow_blank=False, class_valued=True) if truth is not None else None
    known = None
    if gold is not None:
        known = column(gold, allow_blank=True, class_valued=True)
        bad = ~np.isnan(known) & ((known != np.round(known)) | (known < 0) | (known >= len(probs)))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"{path.name}: gold column {gold!r} has the value {known[r]:g} at {place(r)}; "
                f"gold classes must be class indices 0..{len(probs) - 1}, class names, or blank "
                "(class unknown)."
            )
    ids = frame[item].to_numpy() if item is not None else None
    return MulticlassAnnotations.from_arrays(
        p,
        lab,
        truth=y,
        gold=known,
        annotators=[str(a) for a in annotators],
        classes=names,
        item=ids,
        sum_tol=sum_tol,
    )
