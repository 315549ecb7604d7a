"""The one container of multi-annotator data, for every number of classes C >= 2.

:class:`Annotations` wraps an :class:`xarray.Dataset` with

- ``probs[item, class]``: the model's class probabilities (float64); each row is
  finite, in [0, 1] and sums to one within ``sum_tol`` (default
  :data:`~bayescal.data.validation.PROB_SUM_TOL`). Binary data given as a score
  ``z`` are stored as ``(1 - z, z)``: ``probs[:, 1]`` is the score bit for bit;
- ``label[item, annotator]``: the answered class ``0 .. C-1`` as float32, NaN when
  the annotator did not answer;
- optional ``truth[item]``: the clean class (simulations and benchmarks only);
- optional ``gold[item]``: the known class of gold (control) items as float64,
  NaN for the items whose class is unknown (``models/gold.md``);
- optional ``group[item]``: a user-defined grouping of the items (for example a
  site) that channel estimators may use instead of score groups;
- coordinates ``item`` (ids as given), ``annotator`` and ``class`` (names; two
  classes default to ``"0"``, ``"1"``).

Two classes are the binary data of Hanada & Futami (the :attr:`Annotations.score`
view); more are the multiclass data of SPEC §3. Every builder and reader ends in
one constructor that validates once (:mod:`bayescal.data.validation`) and names
every problem; nothing is clipped, renormalised, dropped or replaced.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from bayescal.data.files import LineWhere, open_parquet, read_csv, read_parquet
from bayescal.data.labelled import DimNames, DimSize
from bayescal.data.validation import (
    PROB_SUM_TOL,
    ItemWhere,
    RowWhere,
    Where,
    _names_are_other_numbers,
    as_numeric,
    check_classes,
    check_gold,
    check_groups,
    check_ids,
    check_item_ids,
    check_labels,
    check_names,
    check_probs,
    check_scores,
    check_truth,
    class_indices,
    delimiter_hint,
    parse_numbers,
    refuse_reference_like,
    show_value,
    unmasked,
)
from bayescal.dims import ANNOTATOR, CLASS, ITEM
from bayescal.errors import ConfigError, DataError

__all__ = [
    "Annotations",
    "MulticlassAnnotations",
    "load_csv",
    "load_table",
    "load_long",
    "load_multiclass_csv",
    "check_role_clash",
]

#: File names read as Parquet by :func:`load_table` and :func:`load_long`.
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


class Annotations:
    """Multi-annotator data for C >= 2 classes: probabilities, answers, optional truth.

    Build it with :meth:`from_arrays`, :meth:`from_long`, :meth:`from_crowdkit`,
    :func:`load_csv` / :func:`load_table` / :func:`load_long`, or from an existing
    dataset with :meth:`from_dataset`; the constructor itself expects an already
    validated dataset. ``MulticlassAnnotations`` is the same class (v0.2 name).

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations
    >>> data = Annotations.from_arrays(
    ...     score=[0.2, 0.7, 0.9],
    ...     labels=[[0, 0, np.nan], [1, 0, 1], [np.nan, np.nan, np.nan]],
    ...     annotators=["ann", "bob", "cy"],
    ... )
    >>> data.n_items, data.n_annotators, data.n_classes, data.n_unannotated
    (3, 3, 2, 1)
    >>> data.score.tolist() == data.probs[:, 1].tolist() == [0.2, 0.7, 0.9]
    True
    >>> three = Annotations.from_arrays(
    ...     [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]],
    ...     [["cat", "cat", None], ["fox", "dog", "fox"]],
    ...     classes=["cat", "dog", "fox"],
    ... )
    >>> three.n_classes, three.labels.tolist()[1], three.predicted.tolist()
    (3, [2.0, 1.0, 2.0], [0, 2])
    """

    def __init__(self, dataset: xr.Dataset):
        self._ds = dataset
        self._score: np.ndarray | None = None

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(
        cls,
        probs=None,
        labels=None,
        *,
        score=None,
        classes=None,
        truth=None,
        annotators=None,
        mask=None,
        item=None,
        group=None,
        gold=None,
        sum_tol: float = PROB_SUM_TOL,
    ) -> Annotations:
        """Build from wide numpy-like arrays.

        Parameters
        ----------
        probs : array-like of shape (n_items, n_classes) or (n_items,)
            Class probabilities, rows summing to one within ``sum_tol``; a 1-D
            first argument is the binary score (as ``score=``).
        labels : array-like of shape (n_items, n_annotators)
            Answered class index ``0 .. C-1`` (0 or 1 for binary data; booleans
            allowed), or class names with ``classes``; NaN, ``None`` or a masked
            entry means "not answered".
        score : array-like of shape (n_items,), optional
            Binary data: the predicted probability of the positive class, in [0, 1].
        classes : sequence of str, optional
            Unique class names in column order (default ``"0" .. "C-1"``); with it,
            answers, truth and gold may be given as names.
        truth : array-like of shape (n_items,), optional
            Clean classes, for simulations and benchmarks.
        annotators : sequence of str, optional
            Unique annotator names; default the columns of a pandas ``labels``, else
            ``a1 .. aK``.
        mask : bool array-like of shape (n_items, n_annotators), optional
            True where the answer is missing (combined with NaNs in ``labels``).
        item : array-like of shape (n_items,), optional
            Unique item ids, all strings or all integers; default ``0 .. n-1``.
        group : array-like of shape (n_items,), optional
            A user-defined grouping of the items (one type, no missing values).
        gold : array-like of shape (n_items,), optional
            The known class of gold (control) items, NaN for every other item; the
            channel models use it (``models/gold.md``).
        sum_tol : float, default :data:`~bayescal.data.validation.PROB_SUM_TOL`
            How far a row of ``probs`` may sum from one.

        Raises
        ------
        DataError
            Any value outside these rules, naming the item and the value.
        ConfigError
            Both ``score`` and ``probs`` given.
        """
        if score is not None and probs is not None:
            raise ConfigError(
                "give either score= (binary data: the probability of class 1) or probs= "
                "(class probabilities, one column per class), not both."
            )
        if score is None and probs is None:
            raise DataError("no probabilities: give score= (binary data) or probs= (C classes).")
        if labels is None:
            raise DataError("no labels: give labels= of shape (n_items, n_annotators).")
        if score is None and _is_binary_score(probs):
            score, probs = probs, None
        if annotators is None and hasattr(labels, "columns"):  # a DataFrame names its columns
            annotators = [str(c) for c in labels.columns]
        return cls._build(
            labels,
            score=score,
            probs=probs,
            classes=classes,
            truth=truth,
            annotators=annotators,
            mask=mask,
            item=item,
            group=group,
            gold=gold,
            sum_tol=sum_tol,
        )

    @classmethod
    def _build(
        cls,
        labels,
        *,
        score=None,
        probs=None,
        classes=None,
        truth=None,
        annotators=None,
        mask=None,
        item=None,
        group=None,
        gold=None,
        sum_tol: float = PROB_SUM_TOL,
        where: Where | None = None,
        score_name: str = "score",
        probs_name: str = "probs",
        columns: dict[str, Any] | None = None,
        map_names: bool = True,
    ) -> Annotations:
        """The one constructor every builder and reader ends in.

        ``where`` names rows in messages (files: file and line); ``labels``,
        ``truth`` and ``gold`` may hold class names when ``classes`` is given
        (``map_names=False`` keeps ``classes`` as coordinate names only).
        """
        from_api = where is None
        item = unmasked(item, "item id", where)
        if from_api:
            if item is not None:
                item = check_ids(item, what="item ids", where=_position)
            where = ItemWhere(item)
        score, probs, truth, group = (
            unmasked(x, what, where)
            for x, what in (
                (score, score_name),
                (probs, probs_name),
                (truth, "truth"),
                (group, "group"),
            )
        )
        gold = unmasked(gold, "gold", missing=True)  # masked: not a gold item
        if score is not None:
            z = check_scores(score, name=score_name, where=where)
            p = np.column_stack([1.0 - z, z])  # p_1 is the given score, bit for bit
        else:
            p = check_probs(probs, sum_tol=sum_tol, name=probs_name, where=where)
        n, c = p.shape
        names = check_classes(classes, c)
        mapping = names if (classes is not None and map_names) else None
        ids = check_item_ids(item, n, where=_position if from_api else where)
        lab: np.ndarray = labels
        if not isinstance(labels, np.ma.MaskedArray):
            lab = class_indices(labels, mapping, "labels", where=where)
        ann = check_names(annotators, lab.shape[1]) if lab.ndim == 2 else None
        lab = check_labels(
            lab,
            n,
            mask=mask,
            annotators=ann,
            where=where,
            n_classes=c,
            rows_of="scores" if score is not None else "probability rows",
        )
        if ann is None:
            ann = check_names(annotators, lab.shape[1])
        data_vars: dict[str, tuple[tuple[str, ...], np.ndarray]] = {
            "probs": ((ITEM, CLASS), p),
            "label": ((ITEM, ANNOTATOR), lab),
        }
        if truth is not None:
            y = class_indices(truth, mapping, "truth", where=where)
            data_vars["truth"] = ((ITEM,), check_truth(y, n, where=where, n_classes=c))
        if group is not None:
            data_vars["group"] = ((ITEM,), check_groups(group, n, where=where))
        if gold is not None:
            g = class_indices(gold, mapping, "gold", where=where)
            data_vars["gold"] = ((ITEM,), check_gold(g, n, where=where, n_classes=c))
        coords = {
            ITEM: ids,
            ANNOTATOR: np.array(ann, dtype=object),
            CLASS: np.array(names, dtype=object),
        }
        ds = xr.Dataset(data_vars, coords=coords)
        ds.attrs["sum_tol"] = float(sum_tol)
        if columns is not None:
            ds.attrs["columns"] = json.dumps(columns)  # text: the dataset stays netCDF-safe
        return cls(ds)

    @classmethod
    def from_dataset(cls, dataset: xr.Dataset, *, sum_tol: float | None = None) -> Annotations:
        """Validate and wrap a dataset laid out as described in the module docstring.

        ``probs`` must have the dims ``item`` and ``class`` and ``label`` the dims
        ``item`` and ``annotator`` (in either order); a binary dataset may carry a
        ``score[item]`` instead of ``probs`` (the v0.2 layout). Optional ``truth``,
        ``gold`` and ``group`` have ``("item",)``.
        """
        if not isinstance(dataset, xr.Dataset):
            raise DataError(
                f"from_dataset expects an xarray.Dataset; got {type(dataset).__name__}."
            )
        given = [v for v in ("probs", "score") if v in dataset]
        if "label" not in dataset or not given:
            var = "label" if "label" not in dataset else "probs"
            raise DataError(
                f"dataset has no variable {var!r}; it needs 'label' and 'probs' (or the binary "
                "'score')."
            )
        if len(given) == 2:
            raise DataError(
                "dataset has both 'probs' and 'score'; keep one ('score' is the binary p_1)."
            )
        expected = {
            "probs": (ITEM, CLASS),
            "score": (ITEM,),
            "label": (ITEM, ANNOTATOR),
            "truth": (ITEM,),
            "group": (ITEM,),
            "gold": (ITEM,),
        }
        for var, dims in expected.items():
            if var in dataset and set(dataset[var].dims) != set(dims):
                raise DataError(
                    f"dataset variable {var!r} has dims {tuple(dataset[var].dims)!r}; it must "
                    f"have {dims!r} (in any order). Rename the dims (Dataset.rename) first."
                )
        label = dataset["label"].transpose(ITEM, ANNOTATOR)
        optional = {v: dataset[v].values if v in dataset else None for v in ("truth", "gold")}
        probs = dataset["probs"].transpose(ITEM, CLASS) if "probs" in dataset else None
        names = None if CLASS not in dataset.coords else [str(c) for c in dataset[CLASS].values]
        return cls._build(
            label.values,
            score=None if probs is not None else dataset["score"].values,
            probs=None if probs is None else probs.values,
            classes=names if probs is None else [str(c) for c in probs[CLASS].values],
            map_names=False,
            truth=optional["truth"],
            gold=optional["gold"],
            group=dataset["group"].values if "group" in dataset else None,
            annotators=[str(a) for a in label[ANNOTATOR].values],
            item=dataset[ITEM].values,
            sum_tol=dataset.attrs.get("sum_tol", PROB_SUM_TOL) if sum_tol is None else sum_tol,
            columns=json.loads(dataset.attrs["columns"]) if "columns" in dataset.attrs else None,
        )

    @classmethod
    def from_long(
        cls,
        frame,
        *,
        item: str = "item",
        annotator: str = "annotator",
        label: str = "label",
        score=None,
        probs=None,
        classes=None,
        truth=None,
        gold=None,
        sum_tol: float = PROB_SUM_TOL,
    ) -> Annotations:
        """Build from a long table with one row per (item, annotator) answer.

        Parameters
        ----------
        frame : pandas.DataFrame
            Columns ``item``, ``annotator``, ``label`` as in crowd-kit. Item and
            annotator ids are taken exactly as given: strings or integers, one type per
            column, none missing (``"5"`` and ``"05"`` are two items).
        score : str or mapping or pandas.Series, default "score"
            Binary data: the column of ``frame`` holding each item's score (constant
            within an item), or a mapping / Series from item id to score.
        probs : list of str or pandas.DataFrame, optional
            C classes: the columns of ``frame`` holding the class probabilities (one
            per class, in class order, constant within an item), or a DataFrame
            indexed by item id with one column per class. Not with ``score``.
        classes : sequence of str, optional
            Class names in column order (default: the probability column names, or
            ``"0"``, ``"1"`` for a score); with it, answers may be class names.
        truth : str or mapping or pandas.Series, optional
            Same forms as ``score`` for the clean classes.
        gold : str or mapping or pandas.Series, optional
            Same forms for the known class of gold items; blank (NaN) or absent for
            the other items.
        sum_tol : float, default :data:`~bayescal.data.validation.PROB_SUM_TOL`

        Items that appear in ``score`` / ``probs`` but have no rows in ``frame`` are
        kept as unannotated items. Two rows for one (item, annotator) pair are
        refused, and so is a blank label (a missing answer is a missing row).

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"item": ["5", "05", "5"], "annotator": ["x", "x", "y"],
        ...                       "label": [1, 0, 1], "score": [0.9, 0.2, 0.9]})
        >>> Annotations.from_long(frame).n_items
        2
        >>> frame = pd.DataFrame({"item": [1, 1, 2], "annotator": ["u", "v", "u"],
        ...                       "label": ["dog", "cat", "dog"],
        ...                       "p_cat": [0.8, 0.8, 0.3], "p_dog": [0.2, 0.2, 0.7]})
        >>> d = Annotations.from_long(frame, probs=["p_cat", "p_dog"], classes=["cat", "dog"])
        >>> d.labels.tolist(), d.items.tolist()
        ([[1.0, 0.0], [1.0, nan]], [1, 2])
        """
        import pandas as pd

        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"from_long expects a pandas DataFrame; got {type(frame).__name__}.")
        score = _score_or_probs(score, probs)
        for param, col in (("item", item), ("annotator", annotator), ("label", label)):
            if isinstance(col, (list, dict, set, pd.Series, np.ndarray)):
                raise ConfigError(
                    f"{param}= must be one column name; got {type(col).__name__} {show_value(col)}."
                )
            if col not in frame.columns:
                raise DataError(
                    f"long table has no column {col!r}; columns are {list(frame.columns)!r}."
                )
        check_long_roles(
            item=item,
            annotator=annotator,
            label=label,
            score=score if isinstance(score, str) else None,
            probs=probs if isinstance(probs, (list, tuple)) else None,
            truth=truth if isinstance(truth, str) else None,
            gold=gold if isinstance(gold, str) else None,
        )
        if len(frame) == 0:
            raise DataError("long table is empty: no annotations.")
        where = RowWhere(frame.index, "the long table")
        mapping = None if classes is None else check_classes(classes, _n_columns(probs))
        return cls._from_answers(
            check_ids(frame[item], what=f"item column {item!r}", where=where),
            check_ids(frame[annotator], what=f"annotator column {annotator!r}", where=where),
            class_indices(
                frame[label] if mapping is None else frame[label].to_numpy(dtype=object),
                mapping,
                f"label column {label!r}",
                where=where,
            ),
            score=None if score is None else _per_row(frame, score, "score", where),
            probs=None if probs is None else _probs_per_row(frame, probs, where),
            classes=classes,
            truth=None if truth is None else _per_row(frame, truth, "truth", where, mapping),
            gold=None if gold is None else _per_row(frame, gold, "gold", where, mapping),
            where=where,
            label_name=label,
            sum_tol=sum_tol,
        )

    @classmethod
    def _from_answers(
        cls,
        items,
        raters,
        labels,
        *,
        score,
        where,
        label_name,
        probs=None,
        classes=None,
        truth=None,
        gold=None,
        sum_tol: float = PROB_SUM_TOL,
        columns: dict[str, Any] | None = None,
    ) -> Annotations:
        """Answers (one per row) to the wide container.

        ``score`` / ``probs`` / ``truth`` / ``gold`` are ``(name, per-row values)`` or
        ``(name, pandas object by item)``; labels are already class indices.
        """
        import pandas as pd

        blank = np.isnan(labels)
        if blank.any():
            raise DataError(
                f"label column {label_name!r} is blank at {where(int(np.flatnonzero(blank)[0]))}"
                f" ({int(blank.sum())} such row(s)); in a long table a missing answer is a "
                "missing row, not a blank label."
            )
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
        name, values = score if probs is None else probs
        if isinstance(values, (pd.Series, pd.DataFrame)):
            item_index = pd.Index(values.index)
            per_item = values.to_numpy()
        else:
            if probs is None:
                check_scores(values, name=f"score column {name!r}", where=where)
            else:
                check_probs(
                    values, sum_tol=sum_tol, name=f"probability columns {name}", where=where
                )
            what = f"score {name!r}" if probs is None else f"probability vector {name}"
            item_index, per_item = _constant_per_item(items, values, what, where)
        n_classes = 2 if probs is None else per_item.shape[1]
        check_labels(
            labels[:, None],
            labels.size,
            annotators=[label_name],
            where=where,
            n_classes=n_classes,
        )
        row = item_index.get_indexer(items)
        unknown = row < 0
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            noun = "a score" if probs is None else "probabilities"
            raise DataError(
                f"{int(unknown.sum())} row(s) name items without {noun}, for example "
                f"{show_value(items[i])} at {where(i)}; give every annotated item {noun} "
                "(ids are compared exactly: 1 and '1' differ)."
            )
        y = (
            None
            if truth is None
            else _per_item(items, item_index, truth, where, n_classes, gold=False)
        )
        known = (
            None
            if gold is None
            else _per_item(items, item_index, gold, where, n_classes, gold=True)
        )
        ann_names = pd.unique(pd.Index(raters))
        col = pd.Index(ann_names).get_indexer(raters)
        wide = np.full((len(item_index), len(ann_names)), np.nan, dtype=np.float64)
        wide[row, col] = labels
        if classes is None and probs is not None:
            classes = [str(c) for c in name]
        return cls._build(
            wide,
            score=per_item if probs is None else None,
            probs=None if probs is None else per_item,
            classes=classes,
            map_names=False,
            truth=y,
            gold=known,
            annotators=[str(a) for a in ann_names],
            item=item_index.to_numpy(dtype=object),
            sum_tol=sum_tol,
            columns=columns,
        )

    @classmethod
    def from_crowdkit(
        cls, frame, scores=None, *, truth=None, positive=None, probs=None, classes=None
    ) -> Annotations:
        """Build from crowd-kit's long format: columns ``task``, ``worker``, ``label``.

        crowd-kit (Ustalov et al.) keeps crowdsourced answers as a pandas DataFrame with
        one row per answer; this reads that frame as is. Scores are not part of the
        format, so they come as a mapping from task to score (binary data) or as a
        DataFrame of class probabilities indexed by task (``probs``).

        Parameters
        ----------
        frame : pandas.DataFrame
            crowd-kit answers: ``task``, ``worker``, ``label`` (other columns are ignored).
        scores : mapping or pandas.Series
            Binary data: task id -> score in [0, 1]. Tasks with a score and no answers
            are kept as unannotated items.
        truth : mapping or pandas.Series, optional
            Task id -> clean label (crowd-kit's ``gt`` Series fits here).
        positive : optional
            Binary data: the label value meaning "positive" when the labels are not 0/1
            (for example ``"yes"``); every other value must then be the one negative value.
        probs : pandas.DataFrame, optional
            C classes: task id (index) -> one probability column per class.
        classes : sequence of str, optional
            Class names in column order; answers may be these names.

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
        if isinstance(scores, str) or isinstance(probs, (str, list, tuple)):
            raise DataError(
                "scores must be a mapping or pandas Series from task id to score, and probs a "
                "DataFrame indexed by task id (crowd-kit answers carry no score column); for "
                "score columns use Annotations.from_long."
            )
        answers = frame[["task", "worker", "label"]]
        if positive is not None:
            if probs is not None:
                raise ConfigError("positive= recodes binary labels; with probs= use classes=.")
            values = pd.unique(answers["label"])
            others = [v for v in values if v != positive]
            if len(others) > 1:
                raise DataError(
                    f"labels take {len(values)} values {[show_value(v) for v in values][:6]}; "
                    f"with positive={show_value(positive)} the rest must be one negative value."
                )
            answers = answers.assign(label=(answers["label"] == positive).astype(np.int8))
        return cls.from_long(
            answers,
            item="task",
            annotator="worker",
            label="label",
            score=scores,
            probs=probs,
            classes=classes,
            truth=truth,
        )

    def to_crowdkit(self):
        """The answers in crowd-kit's long format: a DataFrame ``task``, ``worker``, ``label``.

        One row per given answer (missing answers have no row), annotator by annotator
        and, within an annotator, in item order; ``label`` is the class index (int8 up
        to 127 classes, int32 beyond). With the scores
        ``pandas.Series(data.score, index=data.items)`` (or the probabilities as a
        DataFrame by item), :meth:`from_crowdkit` rebuilds the same container (same
        items, annotators and labels), unannotated items included.

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
                "label": self.labels.T[answered].astype(
                    np.int8 if self.n_classes <= 127 else np.int32
                ),
            }
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
    def items(self) -> np.ndarray:
        """Item ids of shape (n_items,), as given (strings or integers)."""
        return self._ds[ITEM].values

    @property
    def probs(self) -> np.ndarray:
        """Class probabilities of shape (n_items, n_classes), float64."""
        return self._ds["probs"].values

    @property
    def score(self) -> np.ndarray:
        """Binary data: the score ``probs[:, 1]`` of shape (n_items,), exactly as given.

        Raises :class:`~bayescal.errors.DataError` for more than two classes.
        """
        if self.n_classes != 2:
            raise DataError(
                f"score is the binary view (the probability of class 1) of two-class data; "
                f"these data have {self.n_classes} classes ({', '.join(self.classes[:6])}"
                f"{', ...' if self.n_classes > 6 else ''}). Use .probs, or the multiclass "
                "functions (the audit and summarize dispatch on n_classes)."
            )
        if self._score is None:
            z = np.ascontiguousarray(self.probs[:, 1])
            z.flags.writeable = False
            self._score = z
        return self._score

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
        """Boolean (n_items, n_annotators): True where the annotator answered."""
        return ~np.isnan(self.labels)

    @property
    def truth(self) -> np.ndarray | None:
        """Clean classes (int32) of shape (n_items,); None without truth."""
        return self._ds["truth"].values if "truth" in self._ds else None

    @property
    def gold(self) -> np.ndarray | None:
        """Known class of gold items (float64), NaN for the others; None without gold."""
        return self._ds["gold"].values if "gold" in self._ds else None

    @property
    def n_gold(self) -> int:
        """Gold items (items whose class is known)."""
        return 0 if self.gold is None else int((~np.isnan(self.gold)).sum())

    @property
    def group(self) -> np.ndarray | None:
        """The user grouping of shape (n_items,); None without one."""
        return self._ds["group"].values if "group" in self._ds else None

    @property
    def annotated(self) -> np.ndarray:
        """Boolean (n_items,): True where at least one annotator answered."""
        return np.asarray(self.answered.any(axis=1))

    @property
    def n_unannotated(self) -> int:
        """Items nobody answered; kept, but excluded from every label statistic."""
        return int((~self.annotated).sum())

    @property
    def columns(self) -> dict[str, Any] | None:
        """Which file columns got which role (readers only; None for arrays).

        Keys ``item``, ``score`` or ``probs``, ``annotators``, ``truth``, ``gold``,
        ``unused`` (wide tables) or ``item``, ``annotator``, ``label``, ... (long
        tables); a role without a column is None.
        """
        columns = self._ds.attrs.get("columns")
        return None if columns is None else json.loads(columns)

    def subset(self, index) -> Annotations:
        """Items selected by integer positions (each once; negative ones count from the end)
        or by a boolean mask with one entry per item.

        Examples
        --------
        >>> d = Annotations.from_arrays([0.2, 0.4, 0.9], [[0, 1], [1, 1], [1, 0]])
        >>> d.subset([True, False, True]).n_items, d.subset([2, 0]).n_items
        (2, 2)
        """
        index = np.asarray(index)
        n = self.n_items
        if index.ndim != 1:
            raise DataError(f"subset takes a 1-D index or mask; got shape {index.shape}.")
        if index.dtype == bool:
            if index.size != n:
                raise DataError(
                    f"subset's boolean mask has {index.size} entries for {n} items; give one "
                    "entry per item (or integer positions)."
                )
            index = np.flatnonzero(index)
        elif index.size and index.dtype.kind not in "iu":
            raise DataError(
                f"subset takes integer positions or a boolean mask; got {index.dtype} values "
                "(item ids select through their positions: np.flatnonzero(np.isin(data.items, "
                "ids)))."
            )
        if index.size == 0:
            raise DataError("subset selects no items.")
        index = index.astype(np.int64)
        if (index < -n).any() or (index >= n).any():
            bad = index[(index < -n) | (index >= n)][0]
            raise DataError(f"subset position {int(bad)} is outside 0 .. {n - 1} ({n} items).")
        index = np.where(index < 0, index + n, index)
        if np.unique(index).size != index.size:
            counts = np.bincount(index, minlength=n)
            raise DataError(
                f"subset selects item position {int(np.argmax(counts))} {int(counts.max())} times; "
                "each item can be selected once (a repeated item would be two items with one id)."
            )
        return Annotations(self._ds.isel({ITEM: index}))

    def with_probs(self, probs, *, sum_tol: float | None = None) -> Annotations:
        """Same annotations with new probabilities (for example recalibrated ones)."""
        tol = self._ds.attrs.get("sum_tol", PROB_SUM_TOL) if sum_tol is None else sum_tol
        p = check_probs(probs, sum_tol=tol, name="new probs")
        if p.shape != (self.n_items, self.n_classes):
            raise DataError(
                f"new probs have shape {p.shape}; the data have ({self.n_items}, {self.n_classes})."
            )
        ds = self._ds.copy()
        ds["probs"] = ((ITEM, CLASS), p)
        return Annotations(ds)

    def with_score(self, score) -> Annotations:
        """Binary data: the same annotations with a new score (for example ``g(Z)``)."""
        _ = self.score  # refuses more than two classes with its message
        z = check_scores(score, name="new score")
        if z.shape[0] != self.n_items:
            raise DataError(f"new score has {z.shape[0]} items; the data have {self.n_items}.")
        ds = self._ds.copy()
        ds["probs"] = ((ITEM, CLASS), np.column_stack([1.0 - z, z]))
        return Annotations(ds)

    def data_hash(self) -> str:
        """SHA-256 of probabilities, labels, truth, gold and names, for reproducibility."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.probs).tobytes())
        h.update(np.ascontiguousarray(self.labels).tobytes())
        if self.truth is not None:
            h.update(np.ascontiguousarray(self.truth).tobytes())
        if self.gold is not None:
            h.update(b"gold" + np.ascontiguousarray(self.gold).tobytes())
        h.update("\x1f".join(self.annotators + ["\x1e"] + self.classes).encode())
        return h.hexdigest()

    def describe(self) -> dict:
        """Plain facts: counts, answered fraction, answers per class, agreement, columns."""
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
        multi = ans.sum(axis=1) >= 2
        lo, hi = np.nanmin(lab[multi], axis=1), np.nanmax(lab[multi], axis=1)
        facts = {
            "n_items": self.n_items,
            "n_annotators": self.n_annotators,
            "n_classes": c,
            "classes": self.classes,
            "n_unannotated": self.n_unannotated,
            "n_gold": self.n_gold,
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
            "columns": self.columns,
        }
        if c == 2:
            facts["positive_rate_per_annotator"] = {
                name: float(answers[j, 1] / per_ann[j]) if per_ann[j] else None
                for j, name in enumerate(self.annotators)
            }
        return facts

    def __repr__(self) -> str:
        def few(names):
            return ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")

        ans = self.answered
        return (
            f"<Annotations: {self.n_items} items x {self.n_annotators} annotators "
            f"({few(self.annotators)}) x {self.n_classes} classes ({few(self.classes)}); "
            f"answered {ans.mean():.1%}; unannotated items {self.n_unannotated}"
            f"{'; with truth' if self.truth is not None else ''}"
            f"{f'; {self.n_gold} gold items' if self.gold is not None else ''}>"
        )


#: The v0.2 name of the multiclass container: the same class (any C >= 2).
MulticlassAnnotations = Annotations


def _is_binary_score(first) -> bool:
    """A first argument that is not 2-D is the binary score (its checks name the problem)."""
    try:
        return np.ndim(first) != 2
    except ValueError:  # ragged rows: the score path says so
        return True


def _n_columns(probs) -> int:
    """Number of classes implied by ``probs=`` (two for a score)."""
    if probs is None:
        return 2
    return len(probs.columns) if hasattr(probs, "columns") else len(probs)


def _score_or_probs(score, probs):
    """The score spec of a long table: ``"score"`` by default, None with ``probs``."""
    if probs is None:
        return "score" if score is None else score
    if score is not None:
        raise ConfigError(
            f"give either score={show_value(score)} (binary data) or probs= (one probability "
            "column per class), not both."
        )
    if isinstance(probs, str) or _n_columns(probs) < 2:
        raise DataError(
            f"probs must list one column per class (at least two), in class order; got "
            f"{show_value(probs)}."
        )
    return None


def _position(i: int) -> str:
    return f"position {int(i)}"


def _per_row(frame, spec, what: str, where, classes=None):
    """``(name, values)``: per-row values of a column, or a Series by item id."""
    import pandas as pd

    if isinstance(spec, str):
        if spec not in frame.columns:
            raise DataError(
                f"long table has no {what} column {spec!r}; pass {what}= a column name or a "
                "mapping from item id to value."
            )
        values = frame[spec].to_numpy(dtype=object) if classes is not None else frame[spec]
        return spec, class_indices(values, classes, f"{what} column {spec!r}", where=where)
    if isinstance(spec, dict):
        spec = pd.Series(spec, dtype=object)
    if not isinstance(spec, pd.Series):
        raise DataError(
            f"{what} must be a column name, a dict or a pandas Series; got {type(spec).__name__}."
        )
    ids = check_item_ids(spec.index.to_numpy(dtype=object), len(spec), where=_position)
    values = class_indices(spec.to_numpy(dtype=object), classes, f"{what} values")
    return what, pd.Series(values, index=pd.Index(ids, dtype=object))


def _probs_per_row(frame, probs, where):
    """``(column names, per-row matrix)`` or ``(column names, DataFrame by item id)``."""
    import pandas as pd

    if isinstance(probs, pd.DataFrame):
        ids = check_item_ids(probs.index.to_numpy(dtype=object), len(probs), where=_position)
        names = [str(c) for c in probs.columns]
        p = check_probs(probs.to_numpy(), name="the probability table", where=ItemWhere(ids))
        return names, pd.DataFrame(p, index=pd.Index(ids, dtype=object))
    names = list(probs)
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise DataError(
            f"long table has no probability column(s) {missing!r}; columns are "
            f"{list(frame.columns)!r}."
        )
    matrix = np.column_stack([as_numeric(frame[c], f"probability column {c!r}") for c in names])
    return names, matrix


def _per_item(items, item_index, spec, where, n_classes: int, *, gold: bool) -> np.ndarray:
    """Truth or gold classes by item from per-row values (one value per item; gold: blank
    on every row of an item that is not a gold item) or from a Series by item id."""
    import pandas as pd

    name, values = spec
    check = check_gold if gold else check_truth
    if isinstance(values, pd.Series):
        unknown = ~values.index.isin(item_index)
        if gold and unknown.any():
            raise DataError(
                f"gold names {int(unknown.sum())} item(s) that are not in the table, for "
                f"example {show_value(values.index[unknown][0])}."
            )
        per_item = values.reindex(item_index)  # absent: not a gold item / refused as truth
        if not gold and per_item.isna().any():
            i = int(np.flatnonzero(per_item.isna().to_numpy())[0])
            raise DataError(
                f"truth has no value for item {show_value(item_index[i])}; truth must "
                "cover every item."
            )
        return check(per_item.to_numpy(dtype=np.float64), len(item_index), n_classes=n_classes)
    check(values, values.size, where=where, n_classes=n_classes)
    # blank gold rows count as -1 so that "blank on one row, 1 on another" is a conflict
    coded = np.where(np.isnan(values), -1.0, values)
    what = f"gold {name!r} (blank shown as -1)" if gold else f"truth {name!r}"
    index, known = _constant_per_item(items, coded, what, where)
    known = known[index.get_indexer(item_index)]
    return np.where(known < 0, np.nan, known)


def _constant_per_item(items, values, what: str, where):
    """(item index in first-appearance order, one value (row) per item); refuses an item
    whose rows disagree. ``values`` has shape (n_rows,) or (n_rows, C)."""
    import pandas as pd

    codes, uniques = pd.factorize(items)
    n = len(uniques)
    shape = (n,) + values.shape[1:]
    lo = np.full(shape, np.inf)
    hi = np.full(shape, -np.inf)
    np.minimum.at(lo, codes, values)
    np.maximum.at(hi, codes, values)
    differs = (lo != hi).reshape(n, -1).any(axis=1)
    if differs.any():
        g = int(np.flatnonzero(differs)[0])
        rows = np.flatnonzero(codes == g)
        other = rows[(values[rows] != values[rows[0]]).reshape(rows.size, -1).any(axis=1)][0]

        def shown(v):
            return show_value(v) if np.ndim(v) == 0 else "(" + ", ".join(f"{x:g}" for x in v) + ")"

        raise DataError(
            f"{what} differs between rows of item {show_value(uniques[g])}: "
            f"{shown(values[rows[0]])} at {where(int(rows[0]))} and "
            f"{shown(values[other])} at {where(int(other))}; an item has one "
            f"{what.split(' [')[0]}."
        )
    return pd.Index(uniques, dtype=object), lo


# ------------------------------------------------------------------ column roles
def _check_column_names(**names) -> None:
    """Column-name parameters are strings (``None`` where a column is optional)."""
    for param, value in names.items():
        if value is not None and not isinstance(value, str):
            raise ConfigError(
                f"{param}= must be a column name (a string); got {type(value).__name__} "
                f"{show_value(value)}."
            )


def _one_role_each(roles: dict[str, Any], hint: str = "") -> None:
    """Refuse a column given two roles (``--long item,item,label``, ``truth=`` = ``item=``)."""
    seen: dict[str, str] = {}
    for role, cols in roles.items():
        for col in [cols] if isinstance(cols, str) else list(cols or ()):
            if seen.get(col) == role:
                raise ConfigError(
                    f"{role} lists column {col!r} twice; list each column once"
                    f"{' (one column per class, in class order)' if role == 'probs' else ''}."
                )
            if col in seen:
                raise ConfigError(
                    f"column {col!r} is given two roles ({seen[col]} and {role}); each role "
                    f"needs its own column{hint}."
                )
            seen[col] = role


def check_long_roles(*, item, annotator, label, score=None, probs=None, truth=None, gold=None):
    """A long table's roles name different columns (``--long item,item,label`` is refused).

    Examples
    --------
    >>> check_long_roles(item="item", annotator="item", label="label")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: column 'item' is given two roles (item and annotator); ...
    """
    _one_role_each(
        {
            "item": item,
            "annotator": annotator,
            "label": label,
            "score": score,
            "probs": probs,
            "truth": truth,
            "gold": gold,
        },
        " (--long ITEM,ANNOTATOR,LABEL names three different columns)",
    )


def check_role_clash(annotators, *, score=None, truth=None, item=None, gold=None, probs=None):
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
    reserved = {c for c in (score, truth, item, gold) if c is not None} | set(probs or ())
    clash = [c for c in annotators if c in reserved]
    if clash:
        values = f"score={score!r}" if probs is None else f"probs={list(probs)!r}"
        raise ConfigError(
            f"column(s) {clash!r} cannot be both an annotator and the "
            f"{'score' if probs is None else 'probability'}, truth, item or gold column "
            f"({values}, truth={truth!r}, item={item!r}, gold={gold!r}); remove them from the "
            "annotators, or name another column for that role."
        )


def _annotator_columns(available, *, roles: dict[str, Any], annotators, source: str) -> list:
    """The annotator columns of a wide table, after checking every named column exists.

    ``roles`` maps ``score`` / ``probs`` / ``truth`` / ``item`` / ``gold`` to columns.
    Without ``annotators`` every other column is one, except a column named like a
    reference label or an id (:func:`~bayescal.data.validation.reference_like`),
    which is refused: it would silently become an annotator.
    """
    _one_role_each(roles)
    reserved = [
        c for cols in roles.values() for c in ([cols] if isinstance(cols, str) else cols or ())
    ]
    for col in reserved:
        if col not in available:
            raise DataError(
                f"{source} has no column {col!r}; columns are {_short(list(available))}."
                + delimiter_hint(available)
            )
    if annotators is None:
        annotators = [c for c in available if c not in reserved]
        refuse_reference_like(annotators, source)
    else:
        if isinstance(annotators, str):
            raise DataError(
                f"annotators must be a list of column names; got the string {annotators!r}."
            )
        annotators = list(annotators)
        _one_role_each({"annotators": annotators})
        missing = [c for c in annotators if c not in available]
        if missing:
            raise DataError(
                f"{source} has no annotator column(s) {missing!r}; columns are "
                f"{_short(list(available))}."
            )
        check_role_clash(
            annotators,
            score=roles.get("score"),
            truth=roles.get("truth"),
            item=roles.get("item"),
            gold=roles.get("gold"),
            probs=roles.get("probs"),
        )
        if roles.get("group") in annotators:
            raise DataError(
                f"column {roles['group']!r} is named both as an annotator and as the group "
                "(--subgroup) column; remove it from annotators= (--annotators)."
            )
        check_names(annotators, len(annotators))
    if not annotators:
        raise DataError(f"{source} has no annotator columns.")
    return annotators


def _short(names, limit: int = 12) -> str:
    shown = repr(names[:limit])
    return shown if len(names) <= limit else shown[:-1] + f", ... ({len(names)} columns)]"


def _is_parquet(path) -> bool:
    return Path(str(path)).suffix.lower() in PARQUET_SUFFIXES


# ------------------------------------------------------------------ readers
class _Table:
    """The columns of one CSV or Parquet file, with the file's row names for messages."""

    columns: dict[str, np.ndarray]
    where: Where

    def __init__(self, path, *, parquet: bool, text_columns=()):
        if parquet:
            self._pf = open_parquet(path)
            self.header = list(self._pf.schema_arrow.names)
            self.source = f"Parquet file {str(path)!r}"
        else:
            self._csv = read_csv(path, what="CSV file", text_columns=list(text_columns))
            self.header = self._csv.header
            self.source = f"CSV file {str(self._csv.path)!r}"
        self.path, self.parquet = path, parquet

    def load(self, *, ids, numbers, answers, classes) -> None:
        """Read the columns by role: Parquet type-checked (answers may be strings when
        ``classes`` are given), CSV read again with every column as text when the class
        names are numbers other than their positions."""
        if not self.parquet:
            if classes is not None and _names_are_other_numbers(classes):
                self._csv = read_csv(self.path, what="CSV file", text_columns=self.header)
            self.columns, self.where = self._csv.columns, self._csv.where()
            return
        schema = self._pf.schema_arrow
        strings = {f.name for f in schema if str(f.type) in ("string", "large_string")}
        roles = {c: "id" if classes is not None and c in strings else "label" for c in answers}
        frame = read_parquet(
            self._pf, self.path, roles | {c: "number" for c in numbers} | {c: "id" for c in ids}
        )
        if len(frame) == 0:
            raise DataError(f"{self.source} has no rows.")
        self.columns = {
            c: frame[c].to_numpy(dtype=object if frame[c].dtype.kind == "O" else None)
            for c in frame.columns
        }
        self.where = LineWhere(self.path, np.arange(1, len(frame) + 1), unit="row")

    def numbers(
        self, col: str, what: str, *, blank: str = "error", classes=None, names_fix: str = ""
    ) -> np.ndarray:
        """One column as float64: decimal text, typed numbers, or class names."""
        values = self.columns[col]
        typed = self.parquet and not (values.dtype.kind == "O" and _all_text(values))
        if typed:
            return as_numeric(values, what)
        return parse_numbers(
            values, what=what, where=self.where, blank=blank, classes=classes, names_fix=names_fix
        )

    def ids(self, col: str, what: str) -> np.ndarray:
        return check_ids(self.columns[col], what=what, where=self.where)


def _names_fix(probs) -> str:
    """How to give answers as class names: with the class probabilities and their names."""
    if probs is None:
        return (
            "give the class probabilities (--probs P0,P1; probs=) and the names (--classes; "
            "classes=) in the same order, or recode the answers to 0 and 1 (1 = the class "
            "the score is the probability of)"
        )
    return "pass them with --classes (classes=) in the order of the probability columns"


def _all_text(values: np.ndarray) -> bool:
    import pandas as pd

    present = values[~np.asarray(pd.isna(values), dtype=bool)]
    return present.size > 0 and all(isinstance(v, str) for v in present)


def _load_wide(
    path,
    *,
    parquet: bool | None,
    score,
    probs,
    annotators,
    truth,
    item,
    gold,
    classes,
    sum_tol: float,
    group: str | None = None,
) -> Annotations:
    """The one wide reader (CSV or Parquet, score or probs) behind load_csv / load_table."""
    _check_column_names(score=score, truth=truth, item=item, gold=gold, group=group)
    probs = _prob_columns(probs)
    score = _score_or_probs(score, probs)
    mapping = None if classes is None else check_classes(classes, len(probs or "01"))
    answer_like = [c for c in (truth, gold) if c is not None] + list(annotators or [])
    text = [
        c for c in [item, group] + (answer_like if classes is not None else []) if c is not None
    ]
    table = _Table(
        path, parquet=_is_parquet(path) if parquet is None else parquet, text_columns=text
    )
    roles = {
        "item": item,
        "score": score,
        "probs": probs,
        "truth": truth,
        "gold": gold,
        "group": group,
    }
    names = _annotator_columns(
        table.header,
        roles={k: v for k, v in roles.items() if v is not None},
        annotators=annotators,
        source=table.source,
    )
    answers = names + [x for x in (truth, gold) if x is not None]
    table.load(
        ids=[c for c in (item, group) if c],
        numbers=probs or [score],
        answers=answers,
        classes=mapping,
    )
    fix = _names_fix(probs)
    lab = np.column_stack(
        [
            table.numbers(
                x, f"annotator column {x!r}", blank="missing", classes=mapping, names_fix=fix
            )
            for x in names
        ]
    )
    z = None if probs is not None else table.numbers(score, f"score column {score!r}")
    p = None
    if probs is not None:
        p = np.column_stack([table.numbers(x, f"probability column {x!r}") for x in probs])
    y = None
    if truth is not None:
        y = table.numbers(truth, f"truth column {truth!r}", classes=mapping, names_fix=fix)
    g = None
    if gold is not None:
        g = table.numbers(
            gold, f"gold column {gold!r}", blank="missing", classes=mapping, names_fix=fix
        )
    roles_used = (item, score, truth, gold, group)
    used = set(names) | {x for x in roles_used if x is not None} | set(probs or ())
    record = {
        "item": item,
        **({"score": score} if probs is None else {"probs": list(probs)}),
        "annotators": list(names),
        "truth": truth,
        "gold": gold,
        **({} if group is None else {"group": group}),
        "unused": [x for x in table.header if x not in used],
    }
    subgroups: np.ndarray | None = None
    if group is not None:  # read for the subgroups (--groups, groups= are channel groups)
        subgroups = table.ids(group, f"subgroup column {group!r} (--subgroup; group=)")
    return Annotations._build(
        lab,
        score=z,
        probs=p,
        classes=classes if classes is not None else (None if probs is None else list(probs)),
        map_names=False,
        truth=y,
        gold=g,
        group=subgroups,
        annotators=[str(a) for a in names],
        item=None if item is None else table.ids(item, "item ids"),
        where=table.where,
        score_name=f"score column {score!r}",
        probs_name=f"probability columns {probs}",
        sum_tol=sum_tol,
        columns=record,
    )


def _prob_columns(probs) -> list[str] | None:
    if probs is None:
        return None
    if isinstance(probs, str) or not hasattr(probs, "__iter__") or len(list(probs)) < 2:
        raise DataError(
            f"probs must list one column per class (at least two), in class order; got "
            f"{show_value(probs)}."
        )
    probs = list(probs)
    _check_column_names(**{f"probs[{k}]": c for k, c in enumerate(probs)})
    return probs


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
    sum_tol: float = PROB_SUM_TOL,
    group: str | None = None,
) -> Annotations:
    """Read a wide CSV: one row per item, one column per annotator, blank = missing.

    The file must be UTF-8 text (see :mod:`bayescal.data.files` for every rule);
    cells are decimal numbers (or class names with ``classes``), and a label cell
    is a class index (0 or 1 for binary data) or blank (missing answer). Text such
    as ``nan`` or ``NA`` is refused, never read as missing.

    Binary data have one ``score`` column; C classes have one probability column
    per class (``probs``, in class order). Which comes back is decided by the
    arguments, never guessed from the file.

    Parameters
    ----------
    path : str or Path
        CSV file with a header row (tab-separated when named ``*.tsv``).
    score : str, default "score"
        Column of predicted probabilities of class 1 (binary data; not with ``probs``).
    annotators : list of str, optional
        Annotator columns; default every column other than ``score`` (or ``probs``),
        ``truth``, ``item`` and ``gold``, where a column named like a reference label
        or an id (``truth``, ``label``, ``y``, ``item_id``, ...) is refused rather than
        taken as an annotator.
    truth, item : str, optional
        Columns with the clean label and the item id (ids are kept as written).
    probs : list of str, optional
        C classes: the class-probability columns ``[p0, ..., pC-1]``.
    classes : list of str, optional
        Class names in column order (default: the ``probs`` column names, or
        ``"0"``, ``"1"``); answers, truth and gold may then be written as names.
    gold : str, optional
        Column with the known class of gold items, blank for the others.
    group : str, optional
        Column of a per-item grouping (site, scanner: ``group[item]``, for the subgroup
        analysis, :mod:`bayescal.metrics.subgroups`); every item needs a value.
    sum_tol : float, default :data:`~bayescal.data.validation.PROB_SUM_TOL`

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
    return _load_wide(
        path,
        parquet=False,
        score=score,
        probs=probs,
        annotators=annotators,
        truth=truth,
        item=item,
        gold=gold,
        classes=classes,
        sum_tol=sum_tol,
        group=group,
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
    sum_tol: float = PROB_SUM_TOL,
    long=None,
    group: str | None = None,
) -> Annotations:
    """Read a table (CSV or Parquet): wide (one row per item) or long (one row per answer).

    Files named ``*.parquet`` / ``*.pq`` / ``*.parq`` are Parquet; everything else is
    read as CSV text as by :func:`load_csv` (blank cell = missing answer). Parquet
    columns are typed: scores and probabilities integer or float; labels, truth and
    gold integer, float or boolean (null = missing answer), or strings with
    ``classes``; the item id string or integer. Any other type (lists, structs,
    timestamps, decimals) is refused by name. ``long=(ITEM, ANNOTATOR, LABEL)``
    reads a long table (:func:`load_long`); ``item`` then names nothing. ``group`` names a
    per-item grouping column of a wide table (:func:`load_csv`).
    """
    if long is not None and group is not None:
        raise ConfigError(
            "group= (--subgroup) reads a column of a wide table; a long table has no per-item "
            "column for it yet: use a wide table (one row per item)."
        )
    if long is not None:
        if item is not None or annotators is not None:
            raise ConfigError(
                "a long table names its item and annotator columns in long=(ITEM, ANNOTATOR, "
                "LABEL); leave out item= and annotators=."
            )
        if isinstance(long, str) or len(long) != 3:
            raise ConfigError(
                f"long= needs three column names (ITEM, ANNOTATOR, LABEL); got {show_value(long)}."
            )
        item_col, annotator_col, label_col = long
        return load_long(
            path,
            item=item_col,
            annotator=annotator_col,
            label=label_col,
            score=score,
            probs=probs,
            classes=classes,
            truth=truth,
            gold=gold,
            sum_tol=sum_tol,
        )
    return _load_wide(
        path,
        parquet=None,
        score=score,
        probs=probs,
        annotators=annotators,
        truth=truth,
        item=item,
        gold=gold,
        classes=classes,
        sum_tol=sum_tol,
        group=group,
    )


def load_multiclass_csv(
    path,
    probs,
    annotators=None,
    truth: str | None = None,
    item: str | None = None,
    classes=None,
    sum_tol: float = PROB_SUM_TOL,
    gold: str | None = None,
) -> Annotations:
    """The v0.2 multiclass reader: :func:`load_table` with ``probs`` (CSV or Parquet).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "m.csv")
    >>> _ = open(p, "w").write("p0,p1,p2,r1,r2,r3\\n0.7,0.2,0.1,0,0,\\n0.1,0.3,0.6,2,1,2\\n")
    >>> d = load_multiclass_csv(p, probs=["p0", "p1", "p2"])
    >>> d.n_items, d.annotators, d.classes
    (2, ['r1', 'r2', 'r3'], ['p0', 'p1', 'p2'])
    """
    return load_table(
        path,
        probs=probs,
        annotators=annotators,
        truth=truth,
        item=item,
        classes=classes,
        sum_tol=sum_tol,
        gold=gold,
    )


def load_long(
    path,
    *,
    item: str = "item",
    annotator: str = "annotator",
    label: str = "label",
    score: str | None = None,
    probs=None,
    classes=None,
    truth: str | None = None,
    gold: str | None = None,
    sum_tol: float = PROB_SUM_TOL,
) -> Annotations:
    """Read a long table (CSV or Parquet) with one row per answer.

    Item and annotator ids are read as written: in a CSV file they stay strings
    (``"5"`` and ``"05"`` are two items; raters ``"1"``, ``"1.0"`` and ``"01"`` are
    three annotators); in Parquet they must be strings or integers. A blank id or
    label is refused. Binary data carry each item's ``score`` (default column
    ``"score"``) on its rows; C classes carry the ``probs`` columns (one per class,
    the same on every row of an item). ``gold`` names a column with the known class
    of gold items (the same on every row of an item, blank for the other items).
    See :meth:`Annotations.from_long` for the other rules.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "long.csv")
    >>> _ = open(p, "w").write("item,annotator,label,score\\n5,1,1,0.9\\n05,1.0,0,0.2\\n")
    >>> d = load_long(p)
    >>> d.items.tolist(), d.annotators
    (['5', '05'], ['1', '1.0'])
    >>> _ = open(p, "w").write("item,annotator,label,p0,p1,p2\\na,u,2,0.1,0.2,0.7\\n"
    ...                        "a,v,1,0.1,0.2,0.7\\nb,u,0,0.6,0.3,0.1\\n")
    >>> load_long(p, probs=["p0", "p1", "p2"]).labels.tolist()
    [[2.0, 1.0], [0.0, nan]]
    """
    _check_column_names(
        item=item, annotator=annotator, label=label, score=score, truth=truth, gold=gold
    )
    probs = _prob_columns(probs)
    score = _score_or_probs(score, probs)
    if None in (item, annotator, label):
        raise ConfigError("item=, annotator= and label= must name columns; got None.")
    check_long_roles(
        item=item,
        annotator=annotator,
        label=label,
        score=score,
        probs=probs,
        truth=truth,
        gold=gold,
    )
    c = 2 if probs is None else len(probs)
    mapping = None if classes is None else check_classes(classes, c)
    answers = [label] + [x for x in (truth, gold) if x is not None]
    values_cols = [score] if probs is None else list(probs)
    columns = [item, annotator, *values_cols, *answers]
    text = [item, annotator] + (answers if mapping is not None else [])
    table = _Table(path, parquet=_is_parquet(path), text_columns=text)
    for col in columns:
        if col not in table.header:
            raise DataError(
                f"{table.source} has no column {col!r}; columns are {_short(table.header)}."
            )
    table.load(ids=[item, annotator], numbers=values_cols, answers=answers, classes=mapping)
    where = table.where
    per_row = np.column_stack([table.numbers(x, f"column {x!r}") for x in values_cols])
    fix = _names_fix(probs)
    record = {
        "item": item,
        "annotator": annotator,
        "label": label,
        **({"score": score} if probs is None else {"probs": list(probs)}),
        "truth": truth,
        "gold": gold,
        "unused": [x for x in table.header if x not in columns],
    }
    return Annotations._from_answers(
        table.ids(item, f"item column {item!r}"),
        table.ids(annotator, f"annotator column {annotator!r}"),
        table.numbers(label, f"column {label!r}", blank="missing", classes=mapping, names_fix=fix),
        score=(score, per_row[:, 0]) if probs is None else None,
        probs=None if probs is None else (probs, per_row),
        classes=classes,
        truth=None
        if truth is None
        else (truth, table.numbers(truth, f"column {truth!r}", classes=mapping, names_fix=fix)),
        gold=None
        if gold is None
        else (
            gold,
            table.numbers(
                gold, f"column {gold!r}", blank="missing", classes=mapping, names_fix=fix
            ),
        ),
        where=where,
        label_name=label,
        sum_tol=sum_tol,
        columns=record,
    )
