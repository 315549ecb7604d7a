"""Sufficient statistics of multi-annotator data for every number of classes (SPEC §1, §3).

Everything the channel estimators and the noise-corrected metrics need from the
items is a function of each item's response pattern ``s`` (one state per
annotator: the answered class ``0 .. C-1`` or ``C`` = missing, see
:mod:`bayescal.summaries.patterns`), its channel group, and its probabilities
through a few bin sums. A :class:`Summary` holds them for the *observed*
patterns only, so its size follows the data, not ``(C+1)**K``:

``states[pattern, annotator]``
    The observed patterns, in the canonical order of the code ``sum_j s_j (C+1)**j``.
``pattern_counts[group, pattern]``
    Items per channel group and observed pattern: the Dawid–Skene likelihood
    ``sum_g sum_s n[g, s] log sum_y rho[g, y] prod_j T_j[y, s_j]`` (SPEC §1, §3).
``top_cell_*[top_cell]``
    Top-label cells (bin of ``max p``, predicted class ``c = argmax p``,
    pattern): item count and sum of ``p_c``. The top-label NC-ECE moment of
    bin ``m`` is ``(sum_cells n U_s[c] - sum p_c) / n`` (SPEC §3).
``classwise_cell_*[classwise_cell]``
    Class-wise cells (class ``k``, bin of ``p_k``, pattern): item count and sum
    of ``p_k``; moment ``(sum n U_s[k] - sum p_k) / n`` per class and bin.

Only non-empty cells are stored. For two classes the class-1 class-wise cells
are Hanada & Futami's binary bins on the score ``p_1``; :attr:`Summary.binary`
lays them out densely on the observed-pattern axis (:class:`BinaryView`), which
is what the binary-only estimators and metrics read.

**Groupings** (``attrs["grouping"]``): ``"score"`` (edges on ``p_1``; two
classes only; the binary default of 5 equal-width groups), ``"confidence"``
(edges on ``max p``), ``"predicted"`` (the class ``argmax p``; the default for
C > 2), ``"all"`` (one group) and ``"data"`` (the container's ``group``).

**Gold items** (items whose class is known; the container's ``gold`` variable,
issue 15, ``models/gold.md``) are kept apart: ``gold_pattern_counts[gold_class,
group, pattern]`` counts them per known class on the same observed-pattern axis,
and their metric cells are the ``gold_top_cell_*`` / ``gold_classwise_cell_*``
tables (plus their truth sums). ``pattern_counts`` and the metric cells hold the
items of unknown class only, so the channel likelihood uses the known class for
gold items and marginalises it for the rest, and the calibration error leaves
gold items out unless asked (:meth:`Summary.with_gold_in_cells`), since gold
items are often chosen non-randomly. A summary without gold tables merges as if
they were zero. Gold items nobody answered are counted in ``n_unannotated``
like every other unanswered item (gold informs the channels only through the answers
given on gold items), and per known class in ``gold_n_unannotated[gold_class]``, so
that the audit can say how many gold items were left out (flag ``gold.unanswered``).

Summaries of disjoint chunks add up exactly (``+``), and a chunk can be taken
out again (``-``): the result equals the summary of the union (or the
difference), which is what cross-fitting and out-of-core summaries rely on.
"""

from __future__ import annotations

import functools
import hashlib
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from bayescal.data.container import Annotations
from bayescal.data.labelled import DimNames, DimSize
from bayescal.dims import ANNOTATOR, BIN, CLASS, GROUP, PATTERN
from bayescal.errors import ConfigError, DataError
from bayescal.summaries.partition import assign, bin_index, cell_labels, make_edges
from bayescal.summaries.patterns import (
    MAX_DENSE_CELLS,
    item_states,
    pattern_labels,
    unique_patterns,
)

__all__ = [
    "Summary",
    "MulticlassSummary",
    "BinaryView",
    "summarize",
    "summarize_multiclass",
    "summarize_arrays",
    "as_summary",
    "resolve_groups",
    "item_groups",
    "DEFAULT_GROUPS",
    "DEFAULT_BINS",
    "GROUPINGS",
    "GOLD_CLASS",
]

#: Default number of equal-width score groups for two classes.
DEFAULT_GROUPS = 5

#: Default number of evaluation bins (on ``p_k`` for class-wise, on ``max p`` for top-label).
DEFAULT_BINS = 10

#: Channel groupings (module docstring).
GROUPINGS = ("score", "confidence", "predicted", "all", "data")

TOP_CELL = "top_cell"
CLASSWISE_CELL = "classwise_cell"
GOLD_CLASS = "gold_class"

_TOP = ("bin", "class", "pattern")
_CW = ("class", "bin", "pattern")
_CELL_KINDS = (
    # (prefix, dimension, index variables, value variable)
    ("top_cell", TOP_CELL, _TOP, "conf_sum"),
    ("classwise_cell", CLASSWISE_CELL, _CW, "prob_sum"),
)
_TRUTH = ("top_bin_truth_sum", "classwise_bin_truth_sum")

Cells = dict[str, Any]


# ----------------------------------------------------------------- the binary view
@dataclass(frozen=True, eq=False)
class BinaryView:
    """The binary statistics of a two-class :class:`Summary`, dense on the observed patterns.

    Hanada & Futami's estimators and errors read pattern counts per score group
    and, per evaluation bin on the score ``p_1``, pattern counts and score sums.
    These are the class-1 class-wise cells of the summary laid out as
    ``(bin, pattern)`` arrays over the summary's *observed* patterns ``P`` (at
    most one per item, whatever K is). Arrays are read-only; the view is built
    once per summary (:attr:`Summary.binary`).

    Attributes
    ----------
    states : ndarray of shape (P, K), int16
        0, 1, or 2 = missing.
    pattern_counts : ndarray of shape (L, P)
        Items of unknown class per channel group and pattern.
    bin_pattern_counts : ndarray of shape (M, P), int64
        Items per bin of ``p_1`` and pattern (gold items too after
        :meth:`Summary.with_gold_in_cells`).
    bin_pattern_score_sum : ndarray of shape (M, P), float64
        Sum of ``p_1`` per bin and pattern.
    bin_truth_sum : ndarray of shape (M,) or None
        Clean labels per bin (only when the data carry truth).
    gold_pattern_counts : ndarray of shape (2, L, P), int64
        Gold items per known class, group and pattern (zeros without gold).
    gold_bin_pattern_counts, gold_bin_pattern_score_sum : ndarray of shape (M, P)
        The gold items' bin tables (zeros without gold).
    gold_bin_truth_sum : ndarray of shape (M,) or None

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations, summarize
    >>> data = Annotations.from_arrays([0.1, 0.6, 0.9], [[0, 0], [1, np.nan], [1, 1]])
    >>> v = summarize(data, groups=[0, 0.5, 1], bins=2).binary
    >>> v.states.tolist(), v.pattern_counts.tolist(), v.bin_count.tolist()
    ([[0, 0], [1, 1], [1, 2]], [[1, 0, 0], [0, 1, 1]], [1, 2])
    """

    states: np.ndarray
    pattern_counts: np.ndarray
    bin_pattern_counts: np.ndarray
    bin_pattern_score_sum: np.ndarray
    bin_truth_sum: np.ndarray | None
    gold_pattern_counts: np.ndarray
    gold_bin_pattern_counts: np.ndarray
    gold_bin_pattern_score_sum: np.ndarray
    gold_bin_truth_sum: np.ndarray | None

    @functools.cached_property
    def bin_count(self) -> np.ndarray:
        """Items per bin, shape (M,)."""
        return _frozen(self.bin_pattern_counts.sum(axis=1))

    @functools.cached_property
    def bin_score_sum(self) -> np.ndarray:
        """Sum of ``p_1`` per bin, shape (M,)."""
        return _frozen(self.bin_pattern_score_sum.sum(axis=1))

    @functools.cached_property
    def bin_label_sum(self) -> np.ndarray:
        """Answers equal to 1 of each annotator per bin, shape (M, K)."""
        return _frozen(self.bin_pattern_counts @ (self.states == 1).astype(np.int64))

    @functools.cached_property
    def bin_answered(self) -> np.ndarray:
        """Answers of each annotator per bin, shape (M, K)."""
        return _frozen(self.bin_pattern_counts @ (self.states != 2).astype(np.int64))

    @functools.cached_property
    def answered_counts(self) -> np.ndarray:
        """Answers per annotator over the items of the bin tables, shape (K,)."""
        return _frozen(self.bin_answered.sum(axis=0))

    def gold_counts(self) -> np.ndarray:
        """Gold items per known class and pattern, summed over groups: shape (2, P).

        Row 0 holds gold-0 items, row 1 gold-1 items. This is all the channel
        likelihood needs from gold items (their known class enters through
        ``P(pattern | Y = y)`` only, see :mod:`bayescal.channels.em`).
        """
        return self.gold_pattern_counts.sum(axis=1)

    @property
    def n_gold(self) -> tuple[int, int]:
        """Annotated gold items of class 0 and of class 1."""
        n0, n1 = self.gold_pattern_counts.sum(axis=(1, 2))
        return int(n0), int(n1)


def _frozen(x: np.ndarray) -> np.ndarray:
    x = np.array(x)  # a private copy: the view must not change under anyone's feet
    x.setflags(write=False)
    return x


def _dense_cells(ds, prefix: str, cls: int, n_bins: int, n_pat: int):
    """Class ``cls``'s class-wise cells as dense (bin, pattern) counts and sums."""
    dtype = ds[f"{prefix}_count"].dtype if f"{prefix}_count" in ds else np.int64
    counts = np.zeros((n_bins, n_pat), dtype=dtype)
    sums = np.zeros((n_bins, n_pat))
    if f"{prefix}_count" in ds:
        sel = ds[f"{prefix}_class"].values == cls
        b = ds[f"{prefix}_bin"].values[sel]
        p = ds[f"{prefix}_pattern"].values[sel]
        counts[b, p] = ds[f"{prefix}_count"].values[sel]
        sums[b, p] = ds[f"{prefix}_prob_sum"].values[sel]
    return counts, sums


# ----------------------------------------------------------------- the summary
class Summary:
    """Pattern counts and bin sums of one dataset (or of a union of chunks), any C.

    Stored arrays (labelled :class:`xarray.DataArray`, see the module docstring):
    ``states[pattern, annotator]``, ``pattern_counts[group, pattern]``,
    ``n_unannotated[group]``, the top-label cells ``top_cell_{bin, class, pattern,
    count, conf_sum}`` and the class-wise cells ``classwise_cell_{class, bin,
    pattern, count, prob_sum}``; with truth also ``top_bin_truth_sum[bin]``
    (items with ``Y = argmax p``) and ``classwise_bin_truth_sum[class, bin]``;
    with gold items the ``gold_*`` tables. Two-class summaries also have the
    dense binary view :attr:`binary`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations
    >>> d = Annotations.from_arrays(
    ...     [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.6, 0.3, 0.1]],
    ...     [[0, 0, np.nan], [2, 1, 2], [0, 0, np.nan]])
    >>> s = summarize(d)
    >>> s.n_items, s.n_patterns, s.pattern_labels.tolist()
    (3, 2, ['212', '00.'])
    >>> s.pattern_counts.values.tolist()  # groups: predicted class 0, 1, 2
    [[0, 2], [0, 0], [1, 0]]
    """

    def __init__(self, dataset: xr.Dataset):
        self._ds = dataset

    # ---------------------------------------------------------------- basics
    @property
    def dataset(self) -> xr.Dataset:
        return self._ds

    def __getattr__(self, name: str) -> xr.DataArray:
        # Expose the stored arrays as attributes (pattern_counts, n_unannotated, ...).
        if name.startswith("_"):
            raise AttributeError(name)
        ds = self.__dict__.get("_ds")
        if ds is not None and name in ds.data_vars:
            return ds[name]
        raise AttributeError(f"Summary has no attribute {name!r}")

    annotators = DimNames(ANNOTATOR)
    classes = DimNames(CLASS)
    groups = DimNames(GROUP)
    n_annotators = DimSize(ANNOTATOR)
    n_classes = DimSize(CLASS)
    #: Observed patterns (the sparse pattern axis).
    n_patterns = DimSize(PATTERN)
    n_groups = DimSize(GROUP)
    n_bins = DimSize(BIN)

    @property
    def n_cells(self) -> int:
        """Size of the full pattern table, ``(C+1)**K`` (may exceed int64: a Python int)."""
        return (self.n_classes + 1) ** self.n_annotators

    @property
    def grouping(self) -> str:
        return str(self._ds.attrs["grouping"])

    @property
    def group_edges(self) -> np.ndarray | None:
        """Edges of score or confidence groups, or None for the other groupings."""
        return self._ds["group_edges"].values if "group_edges" in self._ds else None

    @property
    def bin_edges(self) -> np.ndarray:
        return self._ds["bin_edges"].values

    @property
    def has_truth(self) -> bool:
        return "top_bin_truth_sum" in self._ds

    @property
    def has_gold(self) -> bool:
        """True when the summary carries gold tables (the data had a ``gold`` variable)."""
        return "gold_pattern_counts" in self._ds

    @property
    def gold_in_cells(self) -> bool:
        """True after :meth:`with_gold_in_cells` (gold items also in the metric cells)."""
        return bool(self._ds.attrs.get("gold_in_cells", 0))

    def gold_counts(self) -> np.ndarray:
        """Gold items per known class and observed pattern, summed over groups: (C, n_patterns).

        Zeros without gold tables. This is what the likelihood needs: a gold item of
        class ``y`` with pattern ``s`` contributes ``log P(s | Y = y)`` (no prevalence).
        """
        if not self.has_gold:
            return np.zeros((self.n_classes, self.n_patterns), dtype=np.int64)
        return self._ds["gold_pattern_counts"].values.sum(axis=1)

    @property
    def n_gold(self) -> np.ndarray:
        """Annotated gold items per known class, shape (C,), int64."""
        return self.gold_counts().sum(axis=1)

    @property
    def n_gold_unanswered(self) -> np.ndarray:
        """Gold items nobody answered per known class, shape (C,), int64 (zeros without gold
        tables or in a summary saved before they were counted).

        They are in ``n_unannotated`` too and in no other table: gold informs the channels
        only through the answers given on gold items.

        Examples
        --------
        >>> import numpy as np
        >>> s = summarize_arrays([0.2, 0.9, 0.6], np.array([[0.0], [np.nan], [1.0]]),
        ...                      annotators=["r1"], bin_edges=np.linspace(0, 1, 3),
        ...                      gold=[0, 1, np.nan])
        >>> s.n_gold.tolist(), s.n_gold_unanswered.tolist(), int(s.n_unannotated.sum())
        ([1, 0], [0, 1], 1)
        """
        if "gold_n_unannotated" not in self._ds:
            return np.zeros(self.n_classes, dtype=np.int64)
        return self._ds["gold_n_unannotated"].values

    def gold_answered(self) -> np.ndarray:
        """Answers per annotator on gold items of each known class: shape (C, K).

        These counts decide whether gold items alone identify the channels
        (:func:`bayescal.channels.identification.gold_identifies`).
        """
        answered = (self.states < self.n_classes).astype(np.int64)  # (P, K)
        return self.gold_counts() @ answered

    @property
    def states(self) -> np.ndarray:
        """Pattern states, shape (n_patterns, K): class index, or C for missing."""
        return self._ds["states"].values

    @property
    def pattern_labels(self) -> np.ndarray:
        return self._ds[PATTERN].values

    @property
    def n_items(self) -> int:
        """Annotated items of unknown class (those entering every statistic; gold items apart)."""
        return int(self._ds["pattern_counts"].values.sum())

    def require_items(self) -> None:
        """Raise :class:`DataError` naming why no item of unknown class is left, and the fix.

        An audit estimates the channels and the calibration error from items of
        unknown class; a summary without any has either no answers at all or only
        gold items (whose class is known), and the two mistakes have different fixes.
        """
        if self.n_items > 0:
            return
        n_gold = int(self.n_gold.sum())
        if n_gold > 0:
            raise DataError(
                f"every annotated item is a gold item ({n_gold} items whose class is known), so "
                "no item of unknown class is left to audit: leave the gold column blank for the "
                "items whose class is unknown (gold marks only the items whose class you know). "
                "--gold-in-ece (gold_in_ece=True) does not lift this: the audit corrects the "
                "errors of items of unknown class; with every item's class known, the plain ECE "
                "against the gold classes is the calibration error and needs no correction."
            )
        raise DataError(
            "no annotated items: every item has all answers missing; check that the annotator "
            "columns (--annotators, or the label column of --long) hold the answers."
        )

    @property
    def n_cell_items(self) -> int:
        """Items in the metric cells: those of unknown class, and the gold items too after
        :meth:`with_gold_in_cells` (the ``n`` of every calibration error)."""
        return int(self._ds["top_cell_count"].values.sum())

    @property
    def group_counts(self) -> xr.DataArray:
        return self._ds["pattern_counts"].sum(PATTERN).rename("group_counts")

    @property
    def pattern_totals(self) -> np.ndarray:
        """Items per observed pattern, pooled over groups, shape (n_patterns,)."""
        return self._ds["pattern_counts"].values.sum(axis=0)

    @property
    def answer_counts(self) -> xr.DataArray:
        """How often each annotator answered each class, shape (annotator, class)."""
        tot = self.pattern_totals
        c = self.n_classes
        out = np.stack(
            [
                np.bincount(self.states[:, j], weights=tot, minlength=c + 1)[:c]
                for j in range(self.n_annotators)
            ]
        ).astype(np.int64)
        return xr.DataArray(
            out,
            dims=(ANNOTATOR, CLASS),
            coords={ANNOTATOR: self._ds[ANNOTATOR].values, CLASS: self._ds[CLASS].values},
            name="answer_counts",
        )

    @property
    def answered_counts(self) -> xr.DataArray:
        """Answers per annotator over the items of unknown class."""
        return self.answer_counts.sum(CLASS).rename("answered_counts")

    def _bin_sum(self, prefix, value, index_vars, shape, dims, coords, name) -> xr.DataArray:
        ds = self._ds
        flat = np.ravel_multi_index(tuple(ds[v].values for v in index_vars), shape)
        out = np.bincount(
            flat, weights=ds[f"{prefix}_{value}"].values, minlength=int(np.prod(shape))
        )
        if value == "count":
            out = out.round().astype(np.int64)
        return xr.DataArray(out.reshape(shape), dims=dims, coords=coords, name=name)

    @property
    def top_bin_count(self) -> xr.DataArray:
        """Items per top-label bin (bins on ``max p``), shape (bin,)."""
        return self._top("count", "top_bin_count")

    @property
    def top_bin_conf_sum(self) -> xr.DataArray:
        """Sum of ``max p`` per top-label bin, shape (bin,)."""
        return self._top("conf_sum", "top_bin_conf_sum")

    def _top(self, value, name) -> xr.DataArray:
        return self._bin_sum(
            "top_cell",
            value,
            ("top_cell_bin",),
            (self.n_bins,),
            (BIN,),
            {BIN: self._ds[BIN].values},
            name,
        )

    def _cw(self, value, name) -> xr.DataArray:
        return self._bin_sum(
            "classwise_cell",
            value,
            ("classwise_cell_class", "classwise_cell_bin"),
            (self.n_classes, self.n_bins),
            (CLASS, BIN),
            {CLASS: self._ds[CLASS].values, BIN: self._ds[BIN].values},
            name,
        )

    @property
    def classwise_bin_count(self) -> xr.DataArray:
        """Items per class and bin of ``p_k``, shape (class, bin)."""
        return self._cw("count", "classwise_bin_count")

    @property
    def classwise_bin_prob_sum(self) -> xr.DataArray:
        """Sum of ``p_k`` per class and bin of ``p_k``, shape (class, bin)."""
        return self._cw("prob_sum", "classwise_bin_prob_sum")

    # ---------------------------------------------------------------- the binary view
    @functools.cached_property
    def binary(self) -> BinaryView:
        """The dense binary statistics of a two-class summary (:class:`BinaryView`).

        Raises
        ------
        DataError
            For more than two classes: the binary estimators and metrics need two
            classes (use the class-wise or top-label statistics instead).
        """
        if self.n_classes != 2:
            raise DataError(
                f"this summary has {self.n_classes} classes; the binary statistics (score "
                "groups, bins on the score, a and b channels) need two. Use the multiclass "
                "estimators and metrics, which read the class-wise and top-label cells."
            )
        ds = self._ds
        m, p = self.n_bins, self.n_patterns
        counts, sums = _dense_cells(ds, "classwise_cell", 1, m, p)
        gold_counts, gold_sums = _dense_cells(ds, "gold_classwise_cell", 1, m, p)
        if self.has_gold:
            gold_patterns = ds["gold_pattern_counts"].values
        else:
            gold_patterns = np.zeros((2, self.n_groups, p), dtype=np.int64)
        truth = gold_truth = None
        if self.has_truth:
            truth = ds["classwise_bin_truth_sum"].values[1]
            if self.has_gold:
                gold_truth = ds["gold_classwise_bin_truth_sum"].values[1]
            else:
                gold_truth = np.zeros(m)
        return BinaryView(
            states=_frozen(self.states),
            pattern_counts=_frozen(ds["pattern_counts"].values),
            bin_pattern_counts=_frozen(counts),
            bin_pattern_score_sum=_frozen(sums),
            bin_truth_sum=None if truth is None else _frozen(truth),
            gold_pattern_counts=_frozen(gold_patterns),
            gold_bin_pattern_counts=_frozen(gold_counts),
            gold_bin_pattern_score_sum=_frozen(gold_sums),
            gold_bin_truth_sum=None if gold_truth is None else _frozen(gold_truth),
        )

    # ---------------------------------------------------------------- gold items
    @property
    def notes(self) -> tuple[str, ...]:
        """What the reader of the data could not check, in words (kept through merges).

        The audit shows each note as a ``data.unchecked`` warning, so a caveat of the input
        (for example item ids not checked for repeats across the files of a folder) is in
        the report and ``summary.json``, not only on the terminal. Notes do not enter
        equality or :meth:`data_hash`: they describe the reading, not the counts.
        """
        text = self._ds.attrs.get("notes", "")
        return tuple(x for x in str(text).split("\n") if x)

    def with_notes(self, *notes: str) -> Summary:
        """The same summary with ``notes`` added (each once, in order; see :attr:`notes`).

        Examples
        --------
        >>> from bayescal.simulate import simulate_toy
        >>> s = summarize(simulate_toy(50, random_state=0), groups=2).with_notes("ids unchecked")
        >>> (s + s).notes
        ('ids unchecked',)
        """
        for note in notes:
            if not isinstance(note, str) or not note.strip() or "\n" in note:
                raise ValueError(f"a note is one non-empty line of text; got {note!r}.")
        kept = tuple(dict.fromkeys((*self.notes, *notes)))
        if kept == self.notes:
            return self
        ds = self._ds.copy()
        ds.attrs = {**self._ds.attrs, "notes": "\n".join(kept)}
        return Summary(ds)

    def with_gold_in_cells(self) -> Summary:
        """The same summary with gold items added to the metric cells.

        By default the calibration error is computed on the items of unknown class
        only (gold items are often chosen non-randomly); use this to include them.
        Channel tables are unchanged (gold items stay in their own tables there, so
        the channel models still use their known classes); such a summary cannot be
        merged (merge first).

        Examples
        --------
        >>> import numpy as np
        >>> from bayescal import Annotations
        >>> data = Annotations.from_arrays(
        ...     [0.1, 0.6, 0.9], [[0, 0], [1, np.nan], [1, 1]], gold=[0, np.nan, np.nan])
        >>> s = summarize(data, groups=2, bins=2)
        >>> int(s.binary.bin_count.sum()), int(s.with_gold_in_cells().binary.bin_count.sum())
        (2, 3)
        """
        if not self.has_gold or self.gold_in_cells:
            return self
        out = self._with_cells(self._moved_cells(+1))
        out._ds.attrs["gold_in_cells"] = 1
        return out

    #: The binary v0.2 name of :meth:`with_gold_in_cells`.
    with_gold_in_bins = with_gold_in_cells

    def without_gold(self) -> Summary:
        """The summary of the items of unknown class alone (gold tables and gold cells removed).

        What the channels would be without the gold items (the audit compares both).
        """
        if not self.has_gold:
            return self
        cells = self._moved_cells(-1) if self.gold_in_cells else self._own_cells()
        ds = self._ds
        truth = None
        if self.has_truth:
            truth = tuple(ds[v].values for v in _TRUTH)
            if self.gold_in_cells:
                truth = tuple(t - ds[f"gold_{v}"].values for t, v in zip(truth, _TRUTH))
        return _assemble(
            states=self.states,
            pattern_counts=ds["pattern_counts"].values,
            n_unannotated=ds["n_unannotated"].values,
            top=cells["top_cell"],
            classwise=cells["classwise_cell"],
            truth=truth,
            meta=_meta_of(self),
        )

    def _own_cells(self) -> dict[str, Cells]:
        return {
            prefix: _stored_cells(self._ds, prefix, names, value)
            for prefix, _, names, value in _CELL_KINDS
        }

    def _moved_cells(self, sign: int) -> dict[str, Cells]:
        """The metric cells with the gold cells added (``+1``) or taken out (``-1``)."""
        ds, p = self._ds, np.arange(self.n_patterns)
        shapes = {
            "top_cell": (self.n_bins, self.n_classes, self.n_patterns),
            "classwise_cell": (self.n_classes, self.n_bins, self.n_patterns),
        }
        return {
            prefix: _combine_cells(
                _stored_cells(ds, prefix, names, value),
                _stored_cells(ds, f"gold_{prefix}", names, value),
                p,
                p,
                sign,
                shapes[prefix],
                value,
            )
            for prefix, _, names, value in _CELL_KINDS
        }

    def _with_cells(self, cells: dict[str, Cells]) -> Summary:
        """This summary with other metric cells (and the truth sums moved along)."""
        ds = self._ds
        remap = np.arange(self.n_patterns)
        int32 = (np.int32, np.int32, np.int64)
        new = ds.drop_dims([TOP_CELL, CLASSWISE_CELL], errors="ignore")
        for prefix, dim, names, value in _CELL_KINDS:
            for var, spec in _cell_vars(
                prefix, dim, cells[prefix], names, value, remap, int32
            ).items():
                new[var] = spec
        if self.has_truth:
            for v in _TRUTH:
                new[v] = ds[v].copy(data=ds[v].values + ds[f"gold_{v}"].values)
        new.attrs = dict(ds.attrs)
        return Summary(new)

    # ---------------------------------------------------------------- merging
    def _check_compatible(self, other: object) -> None:
        if not isinstance(other, Summary):
            raise TypeError(f"cannot combine a Summary with {type(other).__name__}")
        mine, theirs = self.group_edges, other.group_edges
        same_edges = (
            np.array_equal(mine, theirs)
            if mine is not None and theirs is not None
            else mine is None and theirs is None
        )
        same_groups = self.grouping == other.grouping and self.groups == other.groups and same_edges
        kind = "score groups" if self.grouping == "score" else "channel groups"
        checks = (
            (self.annotators == other.annotators, "annotators", "the same annotator columns"),
            (self.classes == other.classes, "classes", "the same classes"),
            (np.array_equal(self.bin_edges, other.bin_edges), "bin edges", "the same bins"),
            (same_groups, kind, "the same groups"),
            (self.has_truth == other.has_truth, "truth", "truth on every chunk or on none"),
        )
        for ok, what, fix in checks:
            if not ok:
                raise DataError(
                    f"summaries have different {what}; summarise every chunk with {fix} "
                    "(in the same order)."
                )

    def _check_mergeable(self, other: object) -> None:
        self._check_compatible(other)
        if self.gold_in_cells or other.gold_in_cells:  # type: ignore[attr-defined]
            raise DataError(
                "a summary with gold items moved into its metric cells (with_gold_in_cells / "
                "with_gold_in_bins) cannot be merged; merge the summaries first, then call "
                "with_gold_in_cells()."
            )

    def _combine(self, other: Summary, sign: int) -> Summary:
        self._check_mergeable(other)
        a, b = self._ds, other._ds
        pa = a.sizes[PATTERN]
        states, inv = unique_patterns(
            np.vstack([a["states"].values, b["states"].values]), self.n_classes
        )
        ia, ib = inv[:pa], inv[pa:]
        p = states.shape[0]
        counts = np.zeros((self.n_groups, p), dtype=np.int64)
        counts[:, ia] += a["pattern_counts"].values
        counts[:, ib] += sign * b["pattern_counts"].values
        shapes = {
            "top_cell": (self.n_bins, self.n_classes, p),
            "classwise_cell": (self.n_classes, self.n_bins, p),
        }

        def merged(prefix, names, value, shape):
            ca, cb = (_stored_cells(ds, prefix, names, value) for ds in (a, b))
            return _combine_cells(ca, cb, ia, ib, sign, shape, value)

        parts = {
            prefix: merged(prefix, names, value, shapes[prefix])
            for prefix, _, names, value in _CELL_KINDS
        }
        n_unann = a["n_unannotated"].values + sign * b["n_unannotated"].values
        gold: dict[str, Any] | None = None
        if self.has_gold or other.has_gold:
            gold_counts = np.zeros((self.n_classes, self.n_groups, p), dtype=np.int64)
            if self.has_gold:
                gold_counts[:, :, ia] += a["gold_pattern_counts"].values
            if other.has_gold:
                gold_counts[:, :, ib] += sign * b["gold_pattern_counts"].values
            gold = {
                "pattern_counts": gold_counts,
                "n_unannotated": self.n_gold_unanswered + sign * other.n_gold_unanswered,
            }
            for prefix, _, names, value in _CELL_KINDS:
                gold[prefix] = merged(f"gold_{prefix}", names, value, shapes[prefix])
        if sign < 0:
            negative = (counts < 0).any() or (n_unann < 0).any()
            negative |= any((cells["count"] < 0).any() for cells in parts.values())
            if gold is not None:
                negative |= bool((gold["pattern_counts"] < 0).any())
                negative |= bool((gold["n_unannotated"] < 0).any())
                negative |= any((gold[prefix]["count"] < 0).any() for prefix in parts)
            if negative:
                raise DataError(
                    "subtracting summaries gave negative counts: the second one is not part of "
                    "the first."
                )
        truth: tuple[np.ndarray, ...] | None = None
        if self.has_truth:
            truth = tuple(a[v].values + sign * b[v].values for v in _TRUTH)
            if gold is not None:
                gold["truth"] = tuple(
                    _var_or_zero(a, f"gold_{v}", t) + sign * _var_or_zero(b, f"gold_{v}", t)
                    for v, t in zip(_TRUTH, truth)
                )
        out = _assemble(
            states=states,
            pattern_counts=counts,
            n_unannotated=n_unann,
            top=parts["top_cell"],
            classwise=parts["classwise_cell"],
            truth=truth,
            gold=gold,
            meta=_meta_of(self),
        )
        return out.with_notes(*self.notes, *other.notes)

    def __add__(self, other: Summary) -> Summary:
        return self._combine(other, +1)

    def __radd__(self, other: object) -> Summary:
        # lets sum([s1, s2, ...]) work
        if isinstance(other, numbers.Number) and other == 0:
            return self
        return self._combine(other, +1)  # type: ignore[arg-type]

    def __sub__(self, other: Summary) -> Summary:
        """The summary of the items in ``self`` but not in ``other`` (a sub-chunk of it)."""
        return self._combine(other, -1)

    def equals(self, other: Summary, *, rtol: float = 1e-9) -> bool:
        """Integer arrays equal exactly, float sums to ``rtol`` (relative and absolute)."""
        self._check_compatible(other)
        a, b = self._ds, other._ds
        if set(a.data_vars) != set(b.data_vars) or self.gold_in_cells != other.gold_in_cells:
            return False
        for var in a.data_vars:
            x, y = a[var].values, b[var].values
            if x.shape != y.shape:
                return False
            if x.dtype.kind == "f":
                if not np.allclose(x, y, rtol=rtol, atol=rtol):
                    return False
            elif not np.array_equal(x, y):
                return False
        return True

    def data_hash(self) -> str:
        """SHA-256 of every stored array and the names (what every downstream result depends on)."""
        h = hashlib.sha256()
        for var in sorted(map(str, self._ds.data_vars)):
            h.update(np.ascontiguousarray(self._ds[var].values).tobytes())
        h.update("\x1f".join(self.annotators + ["\x1e"] + self.classes).encode())
        return h.hexdigest()

    def describe(self) -> dict[str, Any]:
        """Plain facts available from the counts (like :meth:`Annotations.describe`).

        Over every annotated item, gold items included (read from the pattern tables, so
        the same whether or not gold items were moved into the metric cells).

        Examples
        --------
        >>> from bayescal.simulate import simulate_toy
        >>> d = summarize(simulate_toy(500, random_state=0)).describe()
        >>> d["n_items"], d["n_classes"], sorted(d["positive_rate_per_annotator"])
        (500, 2, ['a1', 'a2', 'a3'])
        """
        c = self.n_classes
        counts = self.pattern_totals + self.gold_counts().sum(axis=0)
        states = self.states
        n = int(counts.sum())
        answered = counts @ (states < c).astype(np.int64)
        k = self.n_annotators
        per_class = np.zeros((k, c))
        for j in range(k):
            per_class[j] = np.bincount(states[:, j], weights=counts, minlength=c + 1)[:c]
        lo = np.where(states < c, states, c).min(axis=1)
        hi = np.where(states < c, states, -1).max(axis=1)
        multi = (states < c).sum(axis=1) >= 2
        n_multi = counts[multi].sum()
        n_unann = int(self._ds["n_unannotated"].values.sum())
        total = n + n_unann
        out: dict[str, Any] = {
            "n_items": total,
            "n_annotators": self.n_annotators,
            "n_classes": c,
            "classes": self.classes,
            "n_unannotated": n_unann,
            "n_gold": dict(zip(self.classes, self.n_gold.tolist())),
            "answered_fraction": float(answered.sum() / (total * self.n_annotators))
            if total
            else 0.0,
            "answers_per_annotator": dict(zip(self.annotators, answered.tolist())),
            "answer_counts": {
                name: dict(zip(self.classes, row.astype(np.int64).tolist()))
                for name, row in zip(self.annotators, per_class)
            },
            "unanimous_fraction": float(counts[multi & (lo == hi)].sum() / n_multi)
            if n_multi
            else None,
            "has_truth": self.has_truth,
        }
        if c == 2:
            out["positive_rate_per_annotator"] = dict(
                zip(
                    self.annotators,
                    [float(r[1] / a) if a else None for r, a in zip(per_class, answered)],
                )
            )
        return out

    def __repr__(self) -> str:
        gold = f", {int(self.n_gold.sum())} gold items" if self.has_gold else ""
        return (
            f"<Summary: {self.n_items} annotated items, {self.n_annotators} annotators, "
            f"{self.n_classes} classes, {self.n_groups} {self.grouping!r} groups x "
            f"{self.n_patterns} observed patterns, {self.n_bins} bins"
            f"{', with truth' if self.has_truth else ''}{gold}>"
        )

    # ---------------------------------------------------------------- io
    def to_netcdf(self, path: Any) -> None:
        self._ds.to_netcdf(path)

    @classmethod
    def from_netcdf(cls, path: Any) -> Summary:
        return cls(xr.load_dataset(path))


#: The multiclass v0.2 name: one summary for every number of classes.
MulticlassSummary = Summary


# ----------------------------------------------------------------- cells
def _stored_cells(ds: xr.Dataset, prefix: str, index_vars, value: str) -> Cells:
    """A summary's cells as ``{"index": (3 arrays), "count", value}`` (empty when absent)."""
    if f"{prefix}_count" not in ds:
        empty = np.zeros(0, dtype=np.int64)
        return {"index": (empty, empty, empty), "count": empty, value: np.zeros(0)}
    return {
        "index": tuple(ds[f"{prefix}_{v}"].values.astype(np.int64) for v in index_vars),
        "count": ds[f"{prefix}_count"].values,
        value: ds[f"{prefix}_{value}"].values,
    }


def _var_or_zero(ds: xr.Dataset, name: str, like: np.ndarray) -> np.ndarray:
    return ds[name].values if name in ds else np.zeros_like(like)


def _combine_cells(ca: Cells, cb: Cells, ia, ib, sign: int, shape, value: str) -> Cells:
    """Cells of two tables on one pattern axis (``ia``, ``ib`` remap their patterns), summed
    by key (``sign`` for the second)."""

    def keyed(cells, remap):
        idx = list(cells["index"])
        idx[2] = remap[idx[2]]
        return np.ravel_multi_index(tuple(idx), shape)

    key = np.concatenate([keyed(ca, ia), keyed(cb, ib)])
    cnt = np.concatenate([ca["count"], sign * cb["count"]])
    val = np.concatenate([ca[value], sign * cb[value]])
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    counts = np.bincount(inv, weights=cnt, minlength=uniq.size).round().astype(np.int64)
    sums = np.bincount(inv, weights=val, minlength=uniq.size)
    idx = np.unravel_index(uniq, shape)
    return {"index": idx, "count": counts, value: sums}


def _meta_of(summary: Summary) -> dict[str, Any]:
    ds = summary.dataset
    return {
        "annotators": ds[ANNOTATOR].values,
        "classes": ds[CLASS].values,
        "groups": ds[GROUP].values,
        "bins": ds[BIN].values,
        "bin_edges": summary.bin_edges,
        "group_edges": summary.group_edges,
        "grouping": summary.grouping,
    }


def _cell_vars(prefix, dim, cells, names, value, remap, index_types):
    keep = cells["count"] != 0
    out = {
        f"{prefix}_{name}": ((dim,), remap[x[keep]] if name == "pattern" else x[keep].astype(t))
        for name, x, t in zip(names, cells["index"], index_types)
    }
    out[f"{prefix}_count"] = ((dim,), cells["count"][keep].astype(np.int64))
    out[f"{prefix}_{value}"] = ((dim,), np.asarray(cells[value], dtype=np.float64)[keep])
    return out


def _assemble(
    *,
    states,
    pattern_counts,
    n_unannotated,
    top,
    classwise,
    truth,
    meta,
    gold=None,
) -> Summary:
    """Drop empty cells and unused patterns, then lay the arrays out as a dataset.

    ``gold`` (optional): ``{"pattern_counts": (C, L, P), "n_unannotated": (C,),
    "top_cell", "classwise_cell"[, "truth"]}``, the gold items' tables on the same pattern
    axis and the unanswered gold items per known class.
    """
    used = pattern_counts.sum(axis=0) != 0
    if gold is not None:
        used |= gold["pattern_counts"].sum(axis=(0, 1)) != 0
    remap = (np.cumsum(used) - 1).astype(np.int64)
    states = states[used]
    pattern_counts = pattern_counts[:, used]
    n_classes = len(meta["classes"])
    int32 = (np.int32, np.int32, np.int64)
    data_vars: dict[str, Any] = {
        "states": ((PATTERN, ANNOTATOR), states.astype(np.int16)),
        "pattern_counts": ((GROUP, PATTERN), pattern_counts.astype(np.int64)),
        "n_unannotated": ((GROUP,), np.asarray(n_unannotated, dtype=np.int64)),
        **_cell_vars("top_cell", TOP_CELL, top, _TOP, "conf_sum", remap, int32),
        **_cell_vars("classwise_cell", CLASSWISE_CELL, classwise, _CW, "prob_sum", remap, int32),
        "bin_edges": (("bin_edge",), np.asarray(meta["bin_edges"], dtype=np.float64)),
    }
    if meta["group_edges"] is not None:
        data_vars["group_edges"] = (("group_edge",), np.asarray(meta["group_edges"], np.float64))
    if truth is not None:
        data_vars["top_bin_truth_sum"] = ((BIN,), np.asarray(truth[0], dtype=np.float64))
        data_vars["classwise_bin_truth_sum"] = ((CLASS, BIN), np.asarray(truth[1], np.float64))
    if gold is not None:
        data_vars["gold_pattern_counts"] = (
            (GOLD_CLASS, GROUP, PATTERN),
            gold["pattern_counts"][:, :, used].astype(np.int64),
        )
        data_vars["gold_n_unannotated"] = (
            (GOLD_CLASS,),
            np.asarray(gold["n_unannotated"], dtype=np.int64),
        )
        for prefix, dim, names, value in _CELL_KINDS:
            data_vars.update(
                _cell_vars(
                    f"gold_{prefix}", f"gold_{dim}", gold[prefix], names, value, remap, int32
                )
            )
        if truth is not None:
            data_vars["gold_top_bin_truth_sum"] = ((BIN,), np.asarray(gold["truth"][0], np.float64))
            data_vars["gold_classwise_bin_truth_sum"] = (
                (CLASS, BIN),
                np.asarray(gold["truth"][1], np.float64),
            )
    coords = {
        GROUP: np.asarray(meta["groups"], dtype=object),
        PATTERN: pattern_labels(states, n_classes),
        ANNOTATOR: np.asarray(meta["annotators"], dtype=object),
        CLASS: np.asarray(meta["classes"], dtype=object),
        BIN: np.asarray(meta["bins"], dtype=object),
    }
    if gold is not None:
        coords[GOLD_CLASS] = np.asarray(meta["classes"], dtype=object)
    ds = xr.Dataset(data_vars, coords=coords)
    ds.attrs["grouping"] = meta["grouping"]
    ds.attrs["pattern_encoding"] = (
        "states[pattern, annotator] = answered class 0..C-1 or C = missing; patterns in the order "
        "of the code sum_j s_j (C+1)**j; only observed patterns are stored"
    )
    return Summary(ds)


def _cell_table(key, n_keys: int, *weights):
    """Unique keys (sorted), their counts and weighted sums."""
    if n_keys <= MAX_DENSE_CELLS:
        counts = np.bincount(key, minlength=n_keys)
        nz = np.flatnonzero(counts)
        sums = [np.bincount(key, weights=w, minlength=n_keys)[nz] for w in weights]
        return nz, counts[nz], sums
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    return uniq, np.bincount(inv), [np.bincount(inv, weights=w) for w in weights]


def _metric_cells(p, pred, conf, rows, pat, n_pat, bin_edges, y, every):
    """Top-label and class-wise cells (and truth sums) of the items ``rows``.

    ``pat`` / ``y`` are already restricted to ``rows``; ``every`` says that
    ``rows`` is every item (then no copy of the probability columns is made).
    """
    c = p.shape[1]
    n_bins = bin_edges.size - 1
    predk, confk = pred[rows], conf[rows]
    top_bin = bin_index(confk, bin_edges)
    shape_top = (n_bins, c, n_pat)
    key = np.ravel_multi_index((top_bin, predk, pat), shape_top)
    uk, cnt, (csum,) = _cell_table(key, int(np.prod(shape_top)), confk)
    top = {"index": np.unravel_index(uk, shape_top), "count": cnt, "conf_sum": csum}

    cw_keys, cw_cnt, cw_sum, cw_truth = [], [], [], []
    for cls in range(c):
        # one column at a time: no (n, C) temporaries beyond the probabilities themselves
        col = np.ascontiguousarray(p[:, cls] if every else p[rows, cls])
        b = bin_index(col, bin_edges)
        uk, cnt, (psum,) = _cell_table(b * n_pat + pat, n_bins * n_pat, col)
        cw_keys.append(uk + cls * n_bins * n_pat)
        cw_cnt.append(cnt)
        cw_sum.append(psum)
        if y is not None:
            cw_truth.append(np.bincount(b[y == cls], minlength=n_bins))
    shape_cw = (c, n_bins, n_pat)
    classwise = {
        "index": np.unravel_index(np.concatenate(cw_keys), shape_cw),
        "count": np.concatenate(cw_cnt),
        "prob_sum": np.concatenate(cw_sum),
    }
    truth_sums = None
    if y is not None:
        truth_sums = (np.bincount(top_bin[y == predk], minlength=n_bins), np.stack(cw_truth))
    return top, classwise, truth_sums


# ----------------------------------------------------------------- building
def resolve_groups(
    groups: Any, data: Any = None, *, n_classes: int
) -> tuple[str, np.ndarray | None, np.ndarray | None]:
    """Resolve a ``groups`` argument to ``(grouping, edges or None, per-item values or None)``.

    ``None``: the container's ``group`` variable when it has one, else 5 equal-width
    score groups for two classes and the predicted class for more. An int or edges
    mean score groups (on ``p_1``) for two classes and confidence groups (on ``max
    p``) for more. The strings ``"score"`` and ``"confidence"`` ask for 5 equal-width
    groups of that kind.

    Examples
    --------
    >>> resolve_groups("predicted", n_classes=3), resolve_groups(2, n_classes=3)[1].tolist()
    (('predicted', None, None), [0.0, 0.5, 1.0])
    >>> resolve_groups(None, n_classes=2)[0]
    'score'
    """
    if groups is None:
        if data is not None and data.group is not None:
            return "data", None, data.group
        if n_classes == 2:
            return "score", make_edges(DEFAULT_GROUPS, what="groups"), None
        return "predicted", None, None
    if isinstance(groups, str):
        if groups in ("predicted", "all"):
            return groups, None, None
        if groups == "data":
            if data is None or data.group is None:
                raise ConfigError("groups='data' needs a container with a 'group' variable.")
            return "data", None, data.group
        if groups == "score" and n_classes != 2:
            raise ConfigError(
                f"score groups (on p_1) need two classes; these data have {n_classes}. Use "
                "'predicted', 'all', 'data', 'confidence' or an int / edges on max p."
            )
        if groups in ("score", "confidence"):
            return groups, make_edges(DEFAULT_GROUPS, what="groups"), None
        raise ConfigError(
            f"groups must be None, an int, edges, 'score' (two classes), 'confidence', "
            f"'predicted', 'all' or 'data'; got {groups!r}."
        )
    kind = "score" if n_classes == 2 else "confidence"
    return kind, make_edges(groups, what="groups"), None


def summarize(
    data: Annotations,
    *,
    groups: Any = None,
    bins: Any = DEFAULT_BINS,
    bin_strategy: str = "uniform",
) -> Summary:
    """Reduce a container to its sufficient statistics, for any number of classes (SPEC §1, §3).

    Hanada & Futami's estimators and errors (EM, NC-ECE, the histogram map) and
    their multiclass counterparts are functions of an item's response pattern,
    so pattern counts per channel group and the (bin, pattern) cells with
    probability sums are all they need. Data larger than memory (a dask
    DataFrame, or a folder or glob of CSV / Parquet files) go through
    :func:`bayescal.scale.summarize`, which gives the same :class:`Summary`.

    Parameters
    ----------
    data : Annotations
        The validated container (any number of classes).
    groups : None, int, array-like or str
        Channel groups (see :func:`resolve_groups`): ``None`` uses the container's
        ``group`` when it has one, else 5 equal-width score groups for two classes
        and the predicted class for more; an int or edges (0 first, 1 last) give
        score groups for two classes and confidence groups for more; or
        ``"score"``, ``"confidence"``, ``"predicted"``, ``"all"``, ``"data"``.
    bins : int or array-like, default 10
        Evaluation bins (same forms as numeric ``groups``), on ``p_k`` for the
        class-wise cells (the binary bins are those on ``p_1``) and on ``max p``
        for the top-label cells.
    bin_strategy : {"uniform", "quantile"}
        With an int ``bins``: equal-width or (two classes) equal-mass bins, whose
        edges come from the annotated items' ``p_1``.

    Returns
    -------
    Summary

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> s = summarize(simulate_toy(1000, random_state=0), groups=5, bins=10)
    >>> s.n_items, s.n_groups, s.n_bins, s.grouping
    (1000, 5, 10, 'score')
    """
    if not isinstance(data, Annotations):
        raise DataError(
            f"summarize expects an Annotations container; got {type(data).__name__}. "
            "Build one with Annotations.from_arrays, Annotations.from_long or load_csv; for a "
            "dask DataFrame or a path / glob of CSV or Parquet files use bayescal.scale.summarize."
        )
    probs, classes = data.probs, data.classes
    c = probs.shape[1]
    grouping, group_edges, group_values = resolve_groups(groups, data, n_classes=c)
    if bin_strategy == "quantile" and c != 2:
        raise ConfigError(
            f"equal-mass bins are placed on p_1 and need two classes; these data have {c}. "
            "Pass an int (equal-width bins) or explicit edges."
        )
    scores = probs[data.annotated, 1] if bin_strategy == "quantile" else None
    bin_edges = make_edges(bins, what="bins", scores=scores, strategy=bin_strategy)
    return summarize_arrays(
        probs,
        data.labels,
        annotators=data.annotators,
        classes=classes,
        bin_edges=bin_edges,
        grouping=grouping,
        group_edges=group_edges,
        group_values=group_values,
        truth=data.truth,
        gold=data.gold,
    )


#: The multiclass v0.2 name of :func:`summarize` (the same function).
summarize_multiclass = summarize


def as_summary(
    data: Any,
    *,
    groups: Any = None,
    bins: Any = None,
    bin_strategy: str = "uniform",
    caller: str = "this function",
) -> Summary:
    """The one "container or summary -> summary" step of every estimator and metric.

    A container is summarised with ``groups`` and ``bins`` (defaults as in
    :func:`summarize`); a summary is used as it is, since its groups and bins
    were fixed when it was built, so passing ``groups`` or ``bins`` with it is
    refused rather than ignored.

    Parameters
    ----------
    data : Annotations or Summary
    groups, bins : optional
        As in :func:`summarize`; only with a container.
    bin_strategy : {"uniform", "quantile"}, default "uniform"
        As in :func:`summarize`; only used with a container.
    caller : str
        Named in the error message for a wrong type.

    Returns
    -------
    Summary

    Raises
    ------
    ConfigError
        ``data`` is neither, or ``groups`` / ``bins`` come with a summary.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> s = as_summary(simulate_toy(500, random_state=0), groups=2)
    >>> as_summary(s) is s
    True
    """
    if isinstance(data, Summary):
        given = [name for name, value in (("groups", groups), ("bins", bins)) if value is not None]
        if given:
            raise ConfigError(
                f"{' and '.join(given)} are fixed when the summary is built; pass them to "
                "summarize() instead."
            )
        return data
    if isinstance(data, Annotations):
        return summarize(
            data,
            groups=groups,
            bins=DEFAULT_BINS if bins is None else bins,
            bin_strategy=bin_strategy,
        )
    raise ConfigError(
        f"{caller} expects an Annotations container or a Summary; got {type(data).__name__}."
    )


def _group_index(grouping, p, pred, conf, group_edges, group_values, group_levels, classes):
    """Channel group of every item and the group coordinate."""
    n = p.shape[0]
    if grouping == "predicted":
        return pred, np.asarray(classes, dtype=object)
    if grouping == "all":
        return np.zeros(n, dtype=np.int64), np.array(["all"], dtype=object)
    if grouping in ("score", "confidence"):
        if group_edges is None:
            raise ConfigError(f"grouping={grouping!r} needs group_edges.")
        if grouping == "score" and p.shape[1] != 2:
            raise ConfigError("score groups (on p_1) need two classes.")
        x = p[:, 1] if grouping == "score" else conf
        return assign(x, group_edges), cell_labels(group_edges)
    if group_values is None:
        raise ConfigError("grouping='data' needs group_values.")
    levels = np.unique(group_values) if group_levels is None else np.asarray(group_levels)
    g = np.clip(np.searchsorted(levels, group_values), 0, levels.size - 1)
    if not np.array_equal(levels[g], np.asarray(group_values)):
        raise DataError("some group values are not among the declared group levels.")
    return g, np.array([str(v) for v in levels], dtype=object)


def item_groups(data: Annotations, summary: Summary) -> np.ndarray:
    """Channel group index of every item of ``data`` under ``summary``'s grouping.

    The same assignment :func:`summarize` made when it built ``summary`` from
    ``data`` (score or confidence edges, predicted class, one group, or the
    container's ``group`` levels), so per-item quantities (item posteriors) use the
    group whose prevalence the channels were fitted with.

    Raises
    ------
    ConfigError
        ``data`` and ``summary`` differ in their number of classes, or a data
        group of ``data`` is not one of the summary's groups.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> d = simulate_toy(200, random_state=0)
    >>> g = item_groups(d, summarize(d, groups=5))
    >>> int(g.min()), int(g.max()), g.shape
    (0, 4, (200,))
    """
    probs, classes = data.probs, data.classes
    if probs.shape[1] != summary.n_classes:
        raise ConfigError(
            f"the data have {probs.shape[1]} classes and the summary {summary.n_classes}; "
            "pass the summary built from these data."
        )
    pred = probs.argmax(axis=1)
    conf = probs[np.arange(probs.shape[0]), pred]
    values = levels = None
    if summary.grouping == "data":
        if data.group is None:
            raise ConfigError("the summary has data groups but the container has no 'group'.")
        values = np.array([str(v) for v in data.group], dtype=object)
        levels = np.asarray(summary.dataset[GROUP].values, dtype=object)
        unknown = sorted(set(values) - set(levels))
        if unknown:
            raise ConfigError(
                f"group values {unknown[:5]} of the data are not groups of the summary; "
                "pass the summary built from these data."
            )
    g, _ = _group_index(
        summary.grouping, probs, pred, conf, summary.group_edges, values, levels, classes
    )
    return np.asarray(g, dtype=np.int64)


def summarize_arrays(
    probs: Any,
    labels: Any,
    *,
    annotators: Any,
    bin_edges: np.ndarray,
    classes: Any = None,
    grouping: str | None = None,
    group_edges: np.ndarray | None = None,
    group_values: Any = None,
    group_levels: Any = None,
    truth: Any = None,
    gold: Any = None,
) -> Summary:
    """The one-pass kernel behind :func:`summarize`, on validated arrays.

    Also used chunk by chunk (out of core, cross-fitting): pass the same edges
    (and, for ``grouping="data"``, the same ``group_levels``) to every chunk and
    add the summaries.

    Parameters
    ----------
    probs : ndarray of shape (n, C), or (n,) for the binary score
        A 1-D array is the score ``p_1`` of two classes (``p_0 = 1 - p_1``).
    labels : ndarray of shape (n, K), float with NaN = missing
    annotators : sequence of str
    bin_edges : ndarray
    classes : sequence of str, optional
        Default ``"0" .. "C-1"``.
    grouping : {"score", "confidence", "predicted", "all", "data"}, optional
        Default: ``"data"`` with ``group_values``, score (two classes) or confidence
        groups with ``group_edges``, else ``"predicted"``.
    group_edges : ndarray, for score and confidence groups
    group_values, group_levels : per-item values and their levels, for ``"data"``
    truth : ndarray of shape (n,), optional
    gold : ndarray of shape (n,), optional
        Known class of gold items (float, NaN = unknown class): their pattern
        counts and metric cells go to the gold tables, the unanswered ones to
        ``gold_n_unannotated`` (module docstring).

    Returns
    -------
    Summary

    Examples
    --------
    >>> import numpy as np
    >>> s = summarize_arrays([0.2, 0.9], np.array([[0.0, 1.0], [1.0, np.nan]]),
    ...                      annotators=["r1", "r2"], bin_edges=np.linspace(0, 1, 3),
    ...                      group_edges=np.linspace(0, 1, 3))
    >>> s.grouping, s.n_classes, s.binary.bin_count.tolist()
    ('score', 2, [1, 1])
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim == 1:
        p = np.column_stack([1.0 - p, p])
    n, c = p.shape
    if grouping is None:
        if group_values is not None:
            grouping = "data"
        elif group_edges is not None:
            grouping = "score" if c == 2 else "confidence"
        else:
            grouping = "predicted"
    if grouping not in GROUPINGS:
        raise ConfigError(f"grouping must be one of {GROUPINGS}; got {grouping!r}.")
    classes = [str(k) for k in range(c)] if classes is None else list(classes)
    pred = p.argmax(axis=1)
    conf = p[np.arange(n), pred]
    states_items = item_states(labels, c)
    annotated = (states_items != c).any(axis=1)
    g, group_coord = _group_index(
        grouping, p, pred, conf, group_edges, group_values, group_levels, classes
    )
    n_groups = group_coord.size

    is_gold = None
    if gold is not None:
        gold = np.asarray(gold, dtype=np.float64)
        is_gold = ~np.isnan(gold) & annotated
        gold_unanswered = gold[~np.isnan(gold) & ~annotated].astype(np.int64)
    every = bool(annotated.all())
    keep = slice(None) if every else np.flatnonzero(annotated)
    uniq, pat = unique_patterns(states_items[keep], c)
    n_pat = uniq.shape[0]
    gk = g[keep]
    y = None if truth is None else np.asarray(truth)[keep]
    n_unannotated = np.bincount(g[~annotated], minlength=n_groups)
    gold_tables = None
    if is_gold is None:
        pattern_counts = np.bincount(gk * n_pat + pat, minlength=n_groups * n_pat).reshape(
            n_groups, n_pat
        )
        top, classwise, truth_sums = _metric_cells(
            p, pred, conf, keep, pat, n_pat, bin_edges, y, every
        )
    else:
        gold_k = is_gold[keep]
        rows = np.flatnonzero(annotated)[~gold_k]
        rows_g = np.flatnonzero(annotated)[gold_k]
        pat_u, pat_g = pat[~gold_k], pat[gold_k]
        pattern_counts = np.bincount(
            gk[~gold_k] * n_pat + pat_u, minlength=n_groups * n_pat
        ).reshape(n_groups, n_pat)
        known = gold[rows_g].astype(np.int64)
        gold_counts = np.bincount(
            (known * n_groups + g[rows_g]) * n_pat + pat_g, minlength=c * n_groups * n_pat
        ).reshape(c, n_groups, n_pat)
        y_u = None if y is None else y[~gold_k]
        y_g = None if y is None else y[gold_k]
        top, classwise, truth_sums = _metric_cells(
            p, pred, conf, rows, pat_u, n_pat, bin_edges, y_u, False
        )
        g_top, g_cw, g_truth = _metric_cells(
            p, pred, conf, rows_g, pat_g, n_pat, bin_edges, y_g, False
        )
        gold_tables = {
            "pattern_counts": gold_counts,
            "n_unannotated": np.bincount(gold_unanswered, minlength=c),
            "top_cell": g_top,
            "classwise_cell": g_cw,
        }
        if g_truth is not None:
            gold_tables["truth"] = g_truth
    return _assemble(
        states=uniq,
        pattern_counts=pattern_counts,
        n_unannotated=n_unannotated,
        top=top,
        classwise=classwise,
        truth=truth_sums,
        gold=gold_tables,
        meta={
            "annotators": np.asarray(list(annotators), dtype=object),
            "classes": np.asarray(classes, dtype=object),
            "groups": group_coord,
            "bins": cell_labels(bin_edges),
            "bin_edges": bin_edges,
            "group_edges": group_edges if grouping in ("score", "confidence") else None,
            "grouping": grouping,
        },
    )
