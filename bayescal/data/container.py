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

from bayescal.data.files import LineWhere, open_parquet, read_csv, read_parquet
from bayescal.data.multiclass import MulticlassAnnotations, load_multiclass_csv
from bayescal.data.validation import (
    ItemWhere,
    RowWhere,
    as_numeric,
    check_gold,
    check_groups,
    check_ids,
    check_item_ids,
    check_labels,
    check_names,
    check_scores,
    check_truth,
    parse_numbers,
    show_value,
)
from bayescal.dims import ANNOTATOR, ITEM
from bayescal.errors import ConfigError, DataError

__all__ = ["Annotations", "load_csv", "load_table", "load_long", "check_role_clash"]

#: File names read as Parquet by :func:`load_table` and :func:`load_long`.
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


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
        gold=None,
    ) -> Annotations:
        """Build from wide numpy-like arrays.

        Parameters
        ----------
        score : array-like of shape (n_items,)
            Predicted probability of the positive class, each in [0, 1].
        labels : array-like of shape (n_items, n_annotators)
            Values 0 or 1 (booleans allowed); NaN, ``None`` or a masked entry means
            "not answered".
        truth : array-like of shape (n_items,), optional
            Clean labels 0/1, for simulations and benchmarks.
        annotators : sequence of str, optional
            Unique annotator names; default ``a1 .. aK``.
        mask : bool array-like of shape (n_items, n_annotators), optional
            True where the answer is missing (combined with NaNs in ``labels``).
        item : array-like of shape (n_items,), optional
            Unique item ids, all strings or all integers; default ``0 .. n-1``.
        group : array-like of shape (n_items,), optional
            A user-defined grouping of the items (one type, no missing values).
        gold : array-like of shape (n_items,), optional
            The known class (0 or 1) of gold (control) items, NaN for every other
            item; the channel models use it (:mod:`bayescal.summaries.summary`).

        Raises
        ------
        DataError
            Any value outside these rules, naming the item and the value.
        """
        return cls._build(
            score,
            labels,
            truth=truth,
            annotators=annotators,
            mask=mask,
            item=item,
            group=group,
            gold=gold,
        )

    @classmethod
    def _build(
        cls,
        score,
        labels,
        *,
        truth=None,
        annotators=None,
        mask=None,
        item=None,
        group=None,
        gold=None,
        where=None,
        score_name: str = "score",
    ) -> Annotations:
        """The one constructor every builder and reader ends in (``where`` names rows)."""
        from_api = where is None
        if from_api:
            if item is not None:
                item = check_ids(item, what="item ids", where=_position)
            where = ItemWhere(item)
        z = check_scores(score, name=score_name, where=where)
        n = z.shape[0]
        ids = check_item_ids(item, n, where=_position if from_api else where)
        lab = labels if isinstance(labels, np.ma.MaskedArray) else as_numeric(labels, "labels")
        names = check_names(annotators, lab.shape[1]) if lab.ndim == 2 else None
        lab = check_labels(lab, n, mask=mask, annotators=names, where=where)
        if names is None:
            names = check_names(annotators, lab.shape[1])
        data_vars = {
            "score": ((ITEM,), z),
            "label": ((ITEM, ANNOTATOR), lab),
        }
        if truth is not None:
            data_vars["truth"] = ((ITEM,), check_truth(truth, n, where=where))
        if group is not None:
            data_vars["group"] = ((ITEM,), check_groups(group, n, where=where))
        if gold is not None:
            data_vars["gold"] = ((ITEM,), check_gold(gold, n, where=where))
        ds = xr.Dataset(data_vars, coords={ITEM: ids, ANNOTATOR: np.array(names, dtype=object)})
        return cls(ds)

    @classmethod
    def from_dataset(cls, dataset: xr.Dataset) -> Annotations:
        """Validate and wrap a dataset laid out as described in the module docstring.

        ``score`` must have the dims ``("item",)`` and ``label`` the dims ``item`` and
        ``annotator`` (in either order); optional ``truth`` and ``group`` have ``("item",)``.
        """
        if not isinstance(dataset, xr.Dataset):
            raise DataError(
                f"from_dataset expects an xarray.Dataset; got {type(dataset).__name__}."
            )
        for var in ("score", "label"):
            if var not in dataset:
                raise DataError(f"dataset has no variable {var!r}; it needs 'score' and 'label'.")
        expected = {
            "score": {ITEM},
            "label": {ITEM, ANNOTATOR},
            "truth": {ITEM},
            "group": {ITEM},
            "gold": {ITEM},
        }
        for var, dims in expected.items():
            if var in dataset and set(dataset[var].dims) != dims:
                raise DataError(
                    f"dataset variable {var!r} has dims {tuple(dataset[var].dims)!r}; it must "
                    f"have {tuple(sorted(dims))!r}. Rename the dims (Dataset.rename) first."
                )
        label = dataset["label"].transpose(ITEM, ANNOTATOR)
        return cls._build(
            dataset["score"].values,
            label.values,
            truth=dataset["truth"].values if "truth" in dataset else None,
            annotators=list(label[ANNOTATOR].values),
            item=dataset[ITEM].values,
            group=dataset["group"].values if "group" in dataset else None,
            gold=dataset["gold"].values if "gold" in dataset else None,
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
        gold=None,
    ) -> Annotations:
        """Build from a long table with one row per (item, annotator) answer.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``item``, ``annotator``, ``label`` (0/1) as in crowd-kit. Item and
            annotator ids are taken exactly as given: strings or integers, one type per
            column, none missing (``"5"`` and ``"05"`` are two items).
        score : str or mapping or pandas.Series
            Column of ``frame`` holding each item's score (must be constant within
            an item), or a mapping / Series from item id to score.
        truth : str or mapping or pandas.Series, optional
            Same forms as ``score`` for the clean labels.
        gold : str or mapping or pandas.Series, optional
            Same forms for the known class (0 / 1) of gold items; blank (NaN) or absent
            for the other items.

        Items that appear in ``score`` but have no rows in ``frame`` are kept as
        unannotated items. Two rows for one (item, annotator) pair are refused, and so
        is a blank label (a missing answer is a missing row).

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"item": ["5", "05", "5"], "annotator": ["x", "x", "y"],
        ...                       "label": [1, 0, 1], "score": [0.9, 0.2, 0.9]})
        >>> Annotations.from_long(frame).n_items
        2
        """
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"from_long expects a pandas DataFrame; got {type(frame).__name__}.")
        for param, col in (("item", item), ("annotator", annotator), ("label", label)):
            if isinstance(col, (list, dict, set, pd.Series, np.ndarray)):
                raise ConfigError(
                    f"{param}= must be one column name; got {type(col).__name__} {show_value(col)}."
                )
            if col not in frame.columns:
                raise DataError(
                    f"long table has no column {col!r}; columns are {list(frame.columns)!r}."
                )
        if len(frame) == 0:
            raise DataError("long table is empty: no annotations.")
        where = RowWhere(frame.index, "the long table")
        return cls._from_answers(
            check_ids(frame[item], what=f"item column {item!r}", where=where),
            check_ids(frame[annotator], what=f"annotator column {annotator!r}", where=where),
            as_numeric(frame[label], f"label column {label!r}"),
            score=_per_row(frame, score, "score", where),
            truth=None if truth is None else _per_row(frame, truth, "truth", where),
            gold=None if gold is None else _per_row(frame, gold, "gold", where),
            where=where,
            label_name=label,
        )

    @classmethod
    def _from_answers(cls, items, raters, labels, *, score, truth, where, label_name, gold=None):
        """Answers (one per row) to the wide container; ``score`` / ``truth`` are
        ``(name, per-row values)`` or ``(name, pandas.Series by item)``."""
        import pandas as pd

        blank = np.isnan(labels)
        if blank.any():
            raise DataError(
                f"label column {label_name!r} is blank at {where(int(np.flatnonzero(blank)[0]))}"
                f" ({int(blank.sum())} such row(s)); in a long table a missing answer is a "
                "missing row, not a blank label."
            )
        check_labels(labels[:, None], labels.size, annotators=[label_name], where=where)
        keys = pd.MultiIndex.from_arrays([pd.Index(items), pd.Index(raters)])
        dup = keys.duplicated(keep="first")
        if dup.any():
            second = int(np.flatnonzero(dup)[0])
            first = int(np.flatnonzero((items == items[second]) & (raters == raters[second]))[0])
            raise DataError(
                f"item {show_value(items[second])} / annotator {show_value(raters[second])} "
                f"appears at {where(first)} and at {where(second)} ({int(dup.sum())} repeated "
                "pair(s)): one annotator can give one label per item. Remove or resolve the "
                "duplicates."
            )
        score_name, score_values = score
        if isinstance(score_values, pd.Series):
            item_index = pd.Index(score_values.index)
            z = score_values.to_numpy()
        else:
            check_scores(score_values, name=f"score column {score_name!r}", where=where)
            item_index, z = _constant_per_item(items, score_values, f"score {score_name!r}", where)
        row = item_index.get_indexer(items)
        unknown = row < 0
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise DataError(
                f"{int(unknown.sum())} row(s) name items without a score, for example "
                f"{show_value(items[i])} at {where(i)}; give every annotated item a score "
                "(ids are compared exactly: 1 and '1' differ)."
            )
        y = None
        if truth is not None:
            truth_name, truth_values = truth
            if isinstance(truth_values, pd.Series):
                y = truth_values.reindex(item_index)
                if y.isna().any():
                    i = int(np.flatnonzero(y.isna().to_numpy())[0])
                    raise DataError(
                        f"truth has no value for item {show_value(item_index[i])}; truth must "
                        "cover every item."
                    )
                y = y.to_numpy()
            else:
                check_truth(truth_values, truth_values.size, where=where)
                t_index, t = _constant_per_item(items, truth_values, f"truth {truth_name!r}", where)
                y = t[t_index.get_indexer(item_index)]
        known = None if gold is None else _gold_per_item(items, item_index, gold, where)
        ann_names = pd.unique(pd.Index(raters))
        col = pd.Index(ann_names).get_indexer(raters)
        wide = np.full((len(item_index), len(ann_names)), np.nan, dtype=np.float64)
        wide[row, col] = labels
        return cls._build(
            z,
            wide,
            truth=y,
            gold=known,
            annotators=[str(a) for a in ann_names],
            item=item_index.to_numpy(),
        )

    @classmethod
    def from_crowdkit(cls, frame, scores, *, truth=None, positive=None) -> Annotations:
        """Build from crowd-kit's long format: columns ``task``, ``worker``, ``label``.

        crowd-kit (Ustalov et al.) keeps crowdsourced answers as a pandas DataFrame with
        one row per answer; this reads that frame as is. Scores are not part of the
        format, so they come as a mapping from task to score.

        Parameters
        ----------
        frame : pandas.DataFrame
            crowd-kit answers: ``task``, ``worker``, ``label`` (other columns are ignored).
        scores : mapping or pandas.Series
            Task id -> predicted probability of the positive class. Tasks with a score
            and no answer are kept as unannotated items.
        truth : mapping or pandas.Series, optional
            Task id -> clean label 0/1 (crowd-kit's ``gt`` Series fits here).
        positive : optional
            The label value meaning "positive" when the labels are not 0/1 (for example
            ``"yes"``); every other value must then be the one negative value.

        Examples
        --------
        >>> import pandas as pd
        >>> answers = pd.DataFrame({"task": ["t1", "t1", "t2"], "worker": ["w1", "w2", "w1"],
        ...                         "label": ["yes", "no", "yes"]})
        >>> data = Annotations.from_crowdkit(answers, {"t1": 0.8, "t2": 0.6, "t3": 0.1},
        ...                                  positive="yes")
        >>> data.n_items, data.n_unannotated, data.to_crowdkit()["label"].tolist()
        (3, 1, [1, 1, 0])
        """
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise DataError(
                f"from_crowdkit expects a pandas DataFrame; got {type(frame).__name__}."
            )
        missing = [c for c in ("task", "worker", "label") if c not in frame.columns]
        if missing:
            raise DataError(
                f"crowd-kit answers need the columns 'task', 'worker', 'label'; missing "
                f"{missing!r} (columns are {list(frame.columns)!r})."
            )
        if isinstance(scores, str):
            raise DataError(
                "scores must be a mapping or pandas Series from task id to score (crowd-kit "
                "answers carry no score column); for a score column use Annotations.from_long."
            )
        answers = frame[["task", "worker", "label"]]
        if positive is not None:
            values = pd.unique(answers["label"])
            others = [v for v in values if v != positive]
            if len(others) > 1:
                raise DataError(
                    f"labels take {len(values)} values {[show_value(v) for v in values][:6]}; "
                    f"with positive={show_value(positive)} the rest must be one negative value."
                )
            answers = answers.assign(label=(answers["label"] == positive).astype(np.int8))
        return cls.from_long(
            answers, item="task", annotator="worker", label="label", score=scores, truth=truth
        )

    def to_crowdkit(self):
        """The answers in crowd-kit's long format: a DataFrame ``task``, ``worker``, ``label``.

        One row per given answer (missing answers have no row), annotator by annotator
        and, within an annotator, in item order; ``label`` is 0/1 (int8). The scores
        are ``pandas.Series(data.score, index=data.items)``; with them
        :meth:`from_crowdkit` rebuilds the same container (same items, annotators and
        labels), unannotated items included.

        Examples
        --------
        >>> import numpy as np
        >>> d = Annotations.from_arrays([0.2, 0.9], [[0, np.nan], [1, 1]], item=["a", "b"],
        ...                             annotators=["w1", "w2"])
        >>> d.to_crowdkit().values.tolist()
        [['a', 'w1', 0], ['b', 'w1', 1], ['b', 'w2', 1]]
        """
        import pandas as pd

        answered = self.answered.T  # (annotator, item): annotator-major row order
        ann, row = np.nonzero(answered)
        return pd.DataFrame(
            {
                "task": self.items[row],
                "worker": np.asarray(self.annotators, dtype=object)[ann],
                "label": self.labels.T[answered].astype(np.int8),
            }
        )

    # ------------------------------------------------------------------ access
    @property
    def dataset(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (read it; do not mutate it)."""
        return self._ds

    @property
    def items(self) -> np.ndarray:
        """Item ids of shape (n_items,), as given (strings or integers)."""
        return self._ds[ITEM].values

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
    def gold(self) -> np.ndarray | None:
        """Known class of gold items (0 / 1), NaN for the others; None without gold."""
        return self._ds["gold"].values if "gold" in self._ds else None

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
        if self.gold is not None:
            h.update(b"gold" + np.ascontiguousarray(self.gold).tobytes())
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


def _position(i: int) -> str:
    return f"position {int(i)}"


def _per_row(frame, spec, what: str, where):
    """``(name, values)``: per-row values of a column, or a Series by item id."""
    import pandas as pd

    if isinstance(spec, str):
        if spec not in frame.columns:
            raise DataError(
                f"long table has no {what} column {spec!r}; pass {what}= a column name or a "
                "mapping from item id to value."
            )
        return spec, as_numeric(frame[spec], f"{what} column {spec!r}")
    if isinstance(spec, dict):
        spec = pd.Series(spec, dtype=object)
    if not isinstance(spec, pd.Series):
        raise DataError(
            f"{what} must be a column name, a dict or a pandas Series; got {type(spec).__name__}."
        )
    ids = check_item_ids(spec.index.to_numpy(dtype=object), len(spec), where=_position)
    values = as_numeric(spec.to_numpy(dtype=object), f"{what} values")
    return what, pd.Series(values, index=pd.Index(ids, dtype=object))


def _gold_per_item(items, item_index, gold, where) -> np.ndarray:
    """Gold classes by item (NaN = not gold) from per-row values or a Series by item."""
    import pandas as pd

    name, values = gold
    if isinstance(values, pd.Series):
        known = values.reindex(item_index).to_numpy(dtype=np.float64)  # absent: not gold
        return check_gold(known, known.size)
    check_gold(values, values.size, where=where)
    # blank rows count as -1 so that "blank on one row, 1 on another" is caught as a conflict
    coded = np.where(np.isnan(values), -1.0, values)
    index, per_item = _constant_per_item(items, coded, f"gold {name!r} (blank shown as -1)", where)
    known = per_item[index.get_indexer(item_index)]
    return np.where(known < 0, np.nan, known)


def _constant_per_item(items, values, what: str, where):
    """(item index in first-appearance order, one value per item); refuses an item whose
    rows disagree."""
    import pandas as pd

    codes, uniques = pd.factorize(items)
    n = len(uniques)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, codes, values)
    np.maximum.at(hi, codes, values)
    differs = lo != hi
    if differs.any():
        g = int(np.flatnonzero(differs)[0])
        rows = np.flatnonzero(codes == g)
        other = rows[values[rows] != values[rows[0]]][0]
        raise DataError(
            f"{what} differs between rows of item {show_value(uniques[g])}: "
            f"{show_value(values[rows[0]])} at {where(int(rows[0]))} and "
            f"{show_value(values[other])} at {where(int(other))}; an item has one {what}."
        )
    return pd.Index(uniques, dtype=object), lo


def _check_column_names(**names) -> None:
    """Column-name parameters are strings (``None`` where a column is optional)."""
    for param, value in names.items():
        if value is not None and not isinstance(value, str):
            raise ConfigError(
                f"{param}= must be a column name (a string); got {type(value).__name__} "
                f"{show_value(value)}."
            )


def check_role_clash(annotators, *, score, truth=None, item=None, gold=None) -> None:
    """Refuse a column named both as an annotator and as the score, truth, item or gold.

    A setting that contradicts itself (``--truth r1`` with ``r1`` an annotator) is a
    :class:`~bayescal.errors.ConfigError`, not bad data (issue 12).

    Examples
    --------
    >>> check_role_clash(["r1", "r2"], score="score", truth="gold")
    >>> check_role_clash(["r1", "r2"], score="score", truth="r1")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: column(s) ['r1'] cannot be both an annotator and ...
    """
    reserved = {c for c in (score, truth, item, gold) if c is not None}
    clash = [c for c in annotators if c in reserved]
    if clash:
        raise ConfigError(
            f"column(s) {clash!r} cannot be both an annotator and the score, truth, item or "
            f"gold column (score={score!r}, truth={truth!r}, item={item!r}, gold={gold!r}); "
            "remove them from the annotators, or name another column for that role."
        )


def _annotator_columns(
    available, *, score, annotators, truth, item, source: str, gold=None
) -> list:
    """The annotator columns of a wide table, after checking every named column exists."""
    _check_column_names(score=score, truth=truth, item=item, gold=gold)
    if score is None:
        raise ConfigError("score= must name the score column; got None.")
    reserved = [c for c in (score, truth, item, gold) if c is not None]
    for col in reserved:
        if col not in available:
            raise DataError(
                f"{source} has no column {col!r}; columns are {_short(list(available))}."
            )
    if annotators is None:
        annotators = [c for c in available if c not in reserved]
    else:
        if isinstance(annotators, str):
            raise DataError(
                f"annotators must be a list of column names; got the string {annotators!r}."
            )
        annotators = list(annotators)
        missing = [c for c in annotators if c not in available]
        if missing:
            raise DataError(
                f"{source} has no annotator column(s) {missing!r}; columns are "
                f"{_short(list(available))}."
            )
        check_role_clash(annotators, score=score, truth=truth, item=item, gold=gold)
        check_names(annotators, len(annotators))
    if not annotators:
        raise DataError(f"{source} has no annotator columns.")
    return annotators


def _short(names, limit: int = 12) -> str:
    shown = repr(names[:limit])
    return shown if len(names) <= limit else shown[:-1] + f", ... ({len(names)} columns)]"


def _is_parquet(path) -> bool:
    return Path(str(path)).suffix.lower() in PARQUET_SUFFIXES


def load_csv(
    path,
    score: str | None = None,
    annotators=None,
    truth: str | None = None,
    item: str | None = None,
    *,
    probs=None,
    classes=None,
    gold: str | None = None,
) -> Annotations | MulticlassAnnotations:
    """Read a wide CSV: one row per item, one column per annotator, blank = missing.

    The file must be UTF-8 text (see :mod:`bayescal.data.files` for every rule);
    cells are decimal numbers, and a label cell is 0, 1 or blank (missing answer).
    Text such as ``nan`` or ``NA`` is refused, never read as missing.

    With ``probs`` (one probability column per class, in class order) the file is
    multiclass data (SPEC §3) and is read by
    :func:`~bayescal.data.multiclass.load_multiclass_csv` into a
    :class:`~bayescal.data.multiclass.MulticlassAnnotations`: answers are class
    indices (or class names with ``classes``). Which container comes back is
    decided by the arguments, never guessed from the file.

    Parameters
    ----------
    path : str or Path
        CSV file with a header row (tab-separated when named ``*.tsv``).
    score : str, default "score"
        Column of predicted probabilities (binary data; not with ``probs``).
    annotators : list of str, optional
        Annotator columns; default every column other than ``score`` (or
        ``probs``), ``truth`` and ``item``.
    truth, item : str, optional
        Columns with the clean label and the item id (ids are kept as written).
    probs : list of str, optional
        Multiclass data: the class-probability columns ``[p0, ..., pC-1]``.
    classes : list of str, optional
        Multiclass data: class names in column order (answers may use them).
    gold : str, optional
        Column with the known class of gold items (binary: 0 / 1; multiclass: a
        class index or name), blank for the others.

    Raises
    ------
    DataError
        Naming the file, line, column and value, and what to do.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.csv")
    >>> _ = open(p, "w").write("score,r1,r2,r3\\n0.1,0,0,\\n0.8,1,,1\\n")
    >>> load_csv(p, annotators=["r1", "r2", "r3"]).n_items
    2
    >>> _ = open(p, "w").write("p0,p1,p2,r1,r2,r3\\n0.7,0.2,0.1,0,0,\\n0.1,0.3,0.6,2,1,2\\n")
    >>> load_csv(p, probs=["p0", "p1", "p2"]).n_classes
    3
    """
    if probs is not None or classes is not None:
        return _load_multiclass(path, score, annotators, truth, item, probs, classes, gold)
    score = "score" if score is None else score
    table = read_csv(path, what="CSV file", text_columns=[] if item is None else [item])
    names = _annotator_columns(
        table.header,
        score=score,
        annotators=annotators,
        truth=truth,
        item=item,
        gold=gold,
        source=f"CSV file {str(table.path)!r}",
    )
    where, cols = table.where(), table.columns
    z = parse_numbers(cols[score], what=f"score column {score!r}", where=where)
    lab = np.column_stack(
        [
            parse_numbers(cols[c], what=f"annotator column {c!r}", where=where, blank="missing")
            for c in names
        ]
    )
    y = (
        None
        if truth is None
        else parse_numbers(cols[truth], what=f"truth column {truth!r}", where=where)
    )
    gold_values = (
        None
        if gold is None
        else parse_numbers(cols[gold], what=f"gold column {gold!r}", where=where, blank="missing")
    )
    return Annotations._build(
        z,
        lab,
        truth=y,
        gold=gold_values,
        annotators=names,
        item=None if item is None else cols[item],
        where=where,
        score_name=f"score column {score!r}",
    )


def _load_multiclass(path, score, annotators, truth, item, probs, classes, gold=None):
    """The multiclass branch of :func:`load_csv` / :func:`load_table`."""
    if probs is None:
        raise ConfigError(
            "classes was given without probs: multiclass data need probs=[p0, ..., pC-1], the "
            "probability column of each class in class order."
        )
    if score is not None:
        raise ConfigError(
            f"give either score={score!r} (binary data) or probs={list(probs)!r} (multiclass "
            "data), not both."
        )
    return load_multiclass_csv(
        path, probs=probs, annotators=annotators, truth=truth, item=item, classes=classes, gold=gold
    )


def load_table(
    path,
    score: str | None = None,
    annotators=None,
    truth: str | None = None,
    item: str | None = None,
    *,
    probs=None,
    classes=None,
    gold: str | None = None,
) -> Annotations | MulticlassAnnotations:
    """Read a wide table (CSV or Parquet): one row per item, one column per annotator.

    Files named ``*.parquet`` / ``*.pq`` / ``*.parq`` are Parquet; everything else is
    read as CSV text by :func:`load_csv` (blank cell = missing answer). Parquet
    columns are typed: the score integer or float; labels and truth integer, float or
    boolean (null = missing answer); the item id string or integer. Any other type
    (text in a number column, lists, structs, timestamps, decimals) is refused by name.
    With ``probs`` (and optionally ``classes``) the table is multiclass data, as in
    :func:`load_csv`. ``gold`` names the column of gold items' known classes (0 / 1,
    or 0 .. C-1 / class names for multiclass data; blank or null for the other items).
    """
    if probs is not None or classes is not None:
        return _load_multiclass(path, score, annotators, truth, item, probs, classes, gold)
    score = "score" if score is None else score
    if not _is_parquet(path):
        return load_csv(path, score=score, annotators=annotators, truth=truth, item=item, gold=gold)
    pf = open_parquet(path)
    available = list(pf.schema_arrow.names)
    names = _annotator_columns(
        available,
        score=score,
        annotators=annotators,
        truth=truth,
        item=item,
        gold=gold,
        source=f"Parquet file {str(path)!r}",
    )
    roles = {c: "label" for c in names} | {score: "number", item: "id"}
    for role_column in (truth, gold):
        if role_column is not None:
            roles[role_column] = "label"
    frame = read_parquet(pf, path, roles)
    if len(frame) == 0:
        raise DataError(f"Parquet file {str(path)!r} has no rows.")
    where = LineWhere(path, np.arange(1, len(frame) + 1), unit="row")
    lab = np.column_stack([as_numeric(frame[c], f"annotator column {c!r}") for c in names])
    return Annotations._build(
        as_numeric(frame[score], f"score column {score!r}"),
        lab,
        truth=None if truth is None else as_numeric(frame[truth], f"truth column {truth!r}"),
        gold=None if gold is None else as_numeric(frame[gold], f"gold column {gold!r}"),
        annotators=[str(a) for a in names],
        item=None if item is None else frame[item].to_numpy(dtype=object),
        where=where,
        score_name=f"score column {score!r}",
    )


def load_long(
    path,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    score: str = "score",
    truth: str | None = None,
    gold: str | None = None,
) -> Annotations:
    """Read a long table (CSV or Parquet) with one row per answer.

    Item and annotator ids are read as written: in a CSV file they stay strings
    (``"5"`` and ``"05"`` are two items; raters ``"1"``, ``"1.0"`` and ``"01"`` are
    three annotators); in Parquet they must be strings or integers. A blank id or
    label is refused. ``gold`` names a column with the known class of gold items (the
    same on every row of an item, blank for the other items). See
    :meth:`Annotations.from_long` for the other rules.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "long.csv")
    >>> _ = open(p, "w").write("item,annotator,label,score\\n5,1,1,0.9\\n05,1.0,0,0.2\\n")
    >>> d = load_long(p)
    >>> d.items.tolist(), d.annotators
    (['5', '05'], ['1', '1.0'])
    """
    _check_column_names(
        item=item, annotator=annotator, label=label, score=score, truth=truth, gold=gold
    )
    if None in (item, annotator, label, score):
        raise ConfigError("item=, annotator=, label= and score= must name columns; got None.")
    for role, col in (("truth", truth), ("gold", gold)):
        if col is not None and col in (item, annotator, label, score):
            raise ConfigError(
                f"{role}={col!r} is also the item, annotator, label or score column; the "
                f"{'reference label' if role == 'truth' else 'gold label'} needs its own column."
            )
    optional = tuple(c for c in (truth, gold) if c is not None)
    columns = (item, annotator, label, score) + optional
    if _is_parquet(path):
        pf = open_parquet(path)
        roles = {item: "id", annotator: "id", label: "label", score: "number"}
        for column in optional:
            roles[column] = "label"
        available = list(pf.schema_arrow.names)
        source = f"Parquet file {str(path)!r}"
    else:
        table = read_csv(path, what="CSV file", text_columns=[item, annotator])
        available = table.header
        source = f"CSV file {str(table.path)!r}"
    for col in columns:
        if col not in available:
            raise DataError(f"{source} has no column {col!r}; columns are {_short(available)}.")
    if _is_parquet(path):
        frame = read_parquet(pf, path, roles)
        if len(frame) == 0:
            raise DataError(f"{source} has no rows.")
        where = LineWhere(path, np.arange(1, len(frame) + 1), unit="row")
        values = {c: frame[c].to_numpy(dtype=object) for c in columns}
        number = lambda c, blank: as_numeric(values[c], f"column {c!r}")  # noqa: E731
    else:
        where, values = table.where(), table.columns

        def number(c, blank):
            return parse_numbers(values[c], what=f"column {c!r}", where=where, blank=blank)

    z = number(score, "error")
    return Annotations._from_answers(
        check_ids(values[item], what=f"item column {item!r}", where=where),
        check_ids(values[annotator], what=f"annotator column {annotator!r}", where=where),
        number(label, "missing"),
        score=(score, z),
        truth=None if truth is None else (truth, number(truth, "error")),
        gold=None if gold is None else (gold, number(gold, "missing")),
        where=where,
        label_name=label,
    )
