"""Sufficient statistics of multiclass data with noisy annotators (SPEC §3).

Everything the multiclass channel estimators and the multiclass NC-ECE need
from the items is a function of each item's response pattern ``s`` (one state
per annotator: the answered class ``0 .. C-1`` or ``C`` = missing), its channel
group, and its probabilities through a few bin sums:

``pattern_counts[group, pattern]``
    Items per channel group and observed pattern: the Dawid–Skene likelihood
    ``sum_g sum_s n[g, s] log sum_y rho[g, y] prod_j T_j[y, s_j]`` (SPEC §3).
``top_cell_*[top_cell]``
    Top-label cells (bin of ``max p``, predicted class ``c = argmax p``,
    pattern): item count and sum of ``p_c``. The top-label NC-ECE moment of
    bin ``m`` is ``(sum_cells n U_s[c] - sum p_c) / n`` (SPEC §3).
``classwise_cell_*[classwise_cell]``
    Class-wise cells (class ``k``, bin of ``p_k``, pattern): item count and sum
    of ``p_k``; moment ``(sum n U_s[k] - sum p_k) / n`` per class and bin.

**Cell limit.** The pattern space has ``(C+1)**K`` cells. A summary stores only
the *observed* patterns (their states, in the canonical order of the code
``sum_j s_j (C+1)**j``), so its size is bounded by the number of items whatever
C and K are; this sparse form is exactly what EM and NC-ECE need. Counting uses
a dense table while ``(C+1)**K <= MAX_DENSE_CELLS`` (2**20 = 1,048,576 cells,
8 MiB of counts; for example C = 10 up to K = 5) and ``numpy.unique`` beyond
it; both give identical summaries. :meth:`MulticlassSummary.dense_pattern_counts`
expands to the full table only under that limit.

**Gold items** (items whose class is known; the container's ``gold`` variable,
issue 15, ``models/gold.md``) are kept apart, as in the binary summary:
``gold_pattern_counts[gold_class, group, pattern]`` counts them per known class
on the same observed-pattern axis, and their metric cells are the
``gold_top_cell_*`` / ``gold_classwise_cell_*`` tables (plus their truth sums).
``pattern_counts`` and the metric cells hold the items of unknown class only, so
the channel likelihood can use the known class for gold items and the calibration
error leaves them out unless asked (:meth:`MulticlassSummary.with_gold_in_cells`).
A summary without gold tables merges as if they were zero. Gold items nobody
answered are counted in ``n_unannotated`` like every other unanswered item.

Summaries of disjoint chunks add up exactly (``+``), and a chunk can be
taken out again (``-``): the result equals the summary of the union (or the
difference), which is what cross-fitting and out-of-core summaries rely on.
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from bayescal.data.labelled import DimNames, DimSize
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.dims import ANNOTATOR, BIN, CLASS, GROUP, PATTERN
from bayescal.errors import ConfigError, DataError
from bayescal.summaries.partition import assign, cell_labels, make_edges

__all__ = [
    "MulticlassSummary",
    "summarize_multiclass",
    "summarize_multiclass_arrays",
    "item_states",
    "bin_index",
    "resolve_groups",
    "unique_patterns",
    "pattern_labels",
    "MAX_DENSE_CELLS",
    "GROUPINGS",
    "DEFAULT_BINS",
]

#: Largest number of pattern (or cell) codes counted with a dense table.
MAX_DENSE_CELLS = 2**20

#: Default number of equal-width evaluation bins (on ``max p`` and on each ``p_k``).
DEFAULT_BINS = 10

#: Channel groupings: predicted class ``argmax p`` (default, C groups), one group
#: ``"all"``, the container's ``group`` variable (``"data"``), or confidence groups
#: (an int or edges on ``max p``).
GROUPINGS = ("predicted", "all", "data", "confidence")

TOP_CELL = "top_cell"
CLASSWISE_CELL = "classwise_cell"

GOLD_CLASS = "gold_class"
GOLD_TOP_CELL = "gold_top_cell"
GOLD_CLASSWISE_CELL = "gold_classwise_cell"

_TOP = ("bin", "class", "pattern")
_CW = ("class", "bin", "pattern")
_INT64_LIMIT = 2**62


# ----------------------------------------------------------------- patterns
def item_states(labels, n_classes: int) -> np.ndarray:
    """States of each item's answers, shape (n_items, K), int16: class index or C (missing).

    Examples
    --------
    >>> item_states(np.array([[0.0, np.nan], [2.0, 1.0]]), 3).tolist()
    [[0, 3], [2, 1]]
    """
    lab = np.asarray(labels)
    return np.where(np.isnan(lab), n_classes, lab).astype(np.int16)


def _powers(n_classes, k):
    return (n_classes + 1) ** np.arange(k, dtype=np.int64)


def unique_patterns(states, n_classes: int):
    """Observed patterns in canonical order and each row's pattern index.

    Canonical order is the order of the code ``sum_j s_j (C+1)**j`` (equivalently,
    lexicographic over the reversed annotator order), whichever counting path
    is used (dense table, ``numpy.unique`` on codes, or on rows when the code
    would overflow int64).

    Parameters
    ----------
    states : ndarray of shape (n, K)
        Entries ``0 .. C`` (``C`` = missing).
    n_classes : int

    Returns
    -------
    unique : ndarray of shape (P, K), int16
    inverse : ndarray of shape (n,), int64

    Examples
    --------
    >>> u, inv = unique_patterns(np.array([[1, 0], [0, 1], [1, 0]]), 2)
    >>> u.tolist(), inv.tolist()
    ([[1, 0], [0, 1]], [0, 1, 0])
    """
    states = np.asarray(states)
    n, k = states.shape
    cells = (n_classes + 1) ** k  # Python int: no overflow
    if cells >= _INT64_LIMIT:
        rev, inverse = np.unique(states[:, ::-1], axis=0, return_inverse=True)
        return rev[:, ::-1].astype(np.int16), inverse.reshape(-1).astype(np.int64)
    code = states.astype(np.int64) @ _powers(n_classes, k)
    if cells <= MAX_DENSE_CELLS:
        present = np.bincount(code, minlength=cells) > 0
        uniq = np.flatnonzero(present)
        rank = np.cumsum(present) - 1
        inverse = rank[code]
    else:
        uniq, inverse = np.unique(code, return_inverse=True)
    out = (uniq[:, None] // _powers(n_classes, k)[None, :]) % (n_classes + 1)
    return out.astype(np.int16), inverse.astype(np.int64)


def pattern_labels(states, n_classes: int) -> np.ndarray:
    """Readable pattern coordinates: ``"02."`` for C <= 10, ``"0,11,."`` beyond; ``.`` = missing.

    Examples
    --------
    >>> pattern_labels(np.array([[0, 2, 3]]), 3).tolist()
    ['02.']
    """
    states = np.asarray(states)
    sep = "" if n_classes <= 10 else ","
    return np.array(
        [sep.join("." if s == n_classes else str(int(s)) for s in row) for row in states],
        dtype=object,
    )


def bin_index(x, edges) -> np.ndarray:
    """Cell of each value, ``[e_l, e_{l+1})`` with the last cell closed: the same as
    :func:`bayescal.summaries.partition.assign`, with a faster path for equal-width edges.

    The equal-width path guesses ``floor(x * M)`` and corrects it against the
    actual edges, so values on an edge land exactly where ``assign`` puts them.

    Examples
    --------
    >>> bin_index(np.array([0.0, 0.3, 0.95, 1.0]), np.linspace(0, 1, 11)).tolist()
    [0, 2, 9, 9]
    """
    m = edges.size - 1
    if m < 2 or not np.array_equal(edges, np.linspace(0.0, 1.0, m + 1)):
        return assign(x, edges)
    b = (x * m).astype(np.intp)
    np.clip(b, 0, m - 1, out=b)
    b -= x < edges[b]
    b += (x >= edges[b + 1]) & (b < m - 1)
    return b


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


# ----------------------------------------------------------------- the summary
class MulticlassSummary:
    """Pattern counts and bin sums of one multiclass dataset (or a union of chunks).

    Stored arrays (labelled :class:`xarray.DataArray`, see the module docstring):
    ``states[pattern, annotator]``, ``pattern_counts[group, pattern]``,
    ``n_unannotated[group]``, the top-label cells ``top_cell_{bin, class, pattern,
    count, conf_sum}`` and the class-wise cells ``classwise_cell_{class, bin,
    pattern, count, prob_sum}``; with truth also ``top_bin_truth_sum[bin]``
    (items with ``Y = argmax p``) and ``classwise_bin_truth_sum[class, bin]``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.data.multiclass import MulticlassAnnotations
    >>> d = MulticlassAnnotations.from_arrays(
    ...     [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.6, 0.3, 0.1]],
    ...     [[0, 0, np.nan], [2, 1, 2], [0, 0, np.nan]])
    >>> s = summarize_multiclass(d)
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

    def __getattr__(self, name):
        # Expose the stored arrays as attributes (pattern_counts, states, ...).
        if name.startswith("_"):
            raise AttributeError(name)
        ds = self.__dict__.get("_ds")
        if ds is not None and name in ds.data_vars:
            return ds[name]
        raise AttributeError(f"MulticlassSummary has no attribute {name!r}")

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

    def gold_answered(self) -> np.ndarray:
        """Answers per annotator on gold items of each known class: shape (C, K).

        These counts decide whether gold items alone identify the confusion rows
        (:func:`bayescal.channels.multiclass_em.gold_identifies_multiclass`).
        """
        answered = (self.states < self.n_classes).astype(np.int64)  # (P, K)
        return self.gold_counts() @ answered

    def with_gold_in_cells(self) -> MulticlassSummary:
        """The summary with gold items counted like the others: gold tables dropped.

        Equal to the summary of the same data without a ``gold`` variable; the
        metrics computed from it include gold items (``gold_in_ece``). Do not fit
        channels on it when the gold classes should be used: they would be treated
        as unknown.
        """
        if not self.has_gold:
            return self
        main, gold = self._parts()
        return main._combine(gold, +1)

    def without_gold(self) -> MulticlassSummary:
        """The summary of the items of unknown class alone (gold tables removed).

        What the channels would be without the gold items (the audit compares both).
        """
        return self._parts()[0] if self.has_gold else self

    def _parts(self):
        """(unknown items, gold items) as two summaries without gold tables."""
        ds = self._ds
        template_meta = _meta_of(self)
        empty_truth = None
        if self.has_truth:
            empty_truth = (ds["top_bin_truth_sum"].values, ds["classwise_bin_truth_sum"].values)
        main = _assemble(
            states=self.states,
            pattern_counts=ds["pattern_counts"].values,
            n_unannotated=ds["n_unannotated"].values,
            top=_stored_cells(ds, "top_cell", _TOP, "conf_sum"),
            classwise=_stored_cells(ds, "classwise_cell", _CW, "prob_sum"),
            truth=empty_truth,
            meta=template_meta,
        )
        gold_truth = None
        if self.has_truth:
            gold_truth = (
                ds["gold_top_bin_truth_sum"].values,
                ds["gold_classwise_bin_truth_sum"].values,
            )
        gold = _assemble(
            states=self.states,
            pattern_counts=ds["gold_pattern_counts"].values.sum(axis=0),
            n_unannotated=np.zeros(self.n_groups, dtype=np.int64),
            top=_stored_cells(ds, "gold_top_cell", _TOP, "conf_sum"),
            classwise=_stored_cells(ds, "gold_classwise_cell", _CW, "prob_sum"),
            truth=gold_truth,
            meta=template_meta,
        )
        return main, gold

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
        """Answers per annotator over all annotated items."""
        return self.answer_counts.sum(CLASS).rename("answered_counts")

    def _bin_sum(self, prefix, value, index_vars, shape, dims, coords, name):
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
        return self._bin_sum(
            "top_cell",
            "count",
            ("top_cell_bin",),
            (self.n_bins,),
            (BIN,),
            {BIN: self._ds[BIN].values},
            "top_bin_count",
        )

    @property
    def top_bin_conf_sum(self) -> xr.DataArray:
        """Sum of ``max p`` per top-label bin, shape (bin,)."""
        return self._bin_sum(
            "top_cell",
            "conf_sum",
            ("top_cell_bin",),
            (self.n_bins,),
            (BIN,),
            {BIN: self._ds[BIN].values},
            "top_bin_conf_sum",
        )

    def _cw(self, value, name):
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

    def dense_pattern_counts(self) -> np.ndarray:
        """The full ``(L, (C+1)**K)`` table, indexed by the code ``sum_j s_j (C+1)**j``.

        Raises
        ------
        DataError
            When ``(C+1)**K`` exceeds :data:`MAX_DENSE_CELLS`; use the sparse
            ``pattern_counts`` and ``states`` instead (they hold every nonzero cell).
        """
        cells = self.n_cells
        if cells > MAX_DENSE_CELLS:
            raise DataError(
                f"{self.n_annotators} annotators and {self.n_classes} classes give "
                f"{self.n_classes + 1}**{self.n_annotators} = {cells:,} pattern cells, above "
                f"MAX_DENSE_CELLS = {MAX_DENSE_CELLS:,}; use the sparse pattern_counts with "
                "states (the observed patterns), which every estimator here reads."
            )
        code = self.states.astype(np.int64) @ _powers(self.n_classes, self.n_annotators)
        out = np.zeros((self.n_groups, cells), dtype=self._ds["pattern_counts"].dtype)
        out[:, code] = self._ds["pattern_counts"].values
        return out

    # ---------------------------------------------------------------- merging
    def _check_compatible(self, other) -> None:
        if not isinstance(other, MulticlassSummary):
            raise TypeError(f"cannot combine a MulticlassSummary with {type(other).__name__}")
        checks = (
            (self.annotators == other.annotators, "annotators", "the same annotator columns"),
            (self.classes == other.classes, "classes", "the same classes"),
            (np.array_equal(self.bin_edges, other.bin_edges), "bin edges", "the same bins"),
            (
                self.grouping == other.grouping
                and self.groups == other.groups
                and (self.group_edges is None) == (other.group_edges is None)
                and (
                    self.group_edges is None or np.array_equal(self.group_edges, other.group_edges)
                ),
                "channel groups",
                "the same groups",
            ),
            (self.has_truth == other.has_truth, "truth", "truth on every chunk or on none"),
        )
        for ok, what, fix in checks:
            if not ok:
                raise DataError(
                    f"summaries have different {what}; summarise every chunk with {fix}."
                )

    def _combine(self, other, sign: int) -> MulticlassSummary:
        self._check_compatible(other)
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
        shapes = {"top": (self.n_bins, self.n_classes, p), "cw": (self.n_classes, self.n_bins, p)}

        def merged(prefix, names, value, shape):
            return _merge_cells(a, b, prefix, names, value, ia, ib, sign, shape)

        parts = {
            "top": merged("top_cell", _TOP, "conf_sum", shapes["top"]),
            "classwise": merged("classwise_cell", _CW, "prob_sum", shapes["cw"]),
        }
        n_unann = a["n_unannotated"].values + sign * b["n_unannotated"].values
        gold = None
        if self.has_gold or other.has_gold:
            gold_counts = np.zeros((self.n_classes, self.n_groups, p), dtype=np.int64)
            if self.has_gold:
                gold_counts[:, :, ia] += a["gold_pattern_counts"].values
            if other.has_gold:
                gold_counts[:, :, ib] += sign * b["gold_pattern_counts"].values
            gold = {
                "pattern_counts": gold_counts,
                "top": merged("gold_top_cell", _TOP, "conf_sum", shapes["top"]),
                "classwise": merged("gold_classwise_cell", _CW, "prob_sum", shapes["cw"]),
            }
        if sign < 0:
            negative = (counts < 0).any() or (n_unann < 0).any()
            negative |= any((cells["count"] < 0).any() for cells in parts.values())
            if gold is not None:
                negative |= bool((gold["pattern_counts"] < 0).any())
                negative |= bool((gold["top"]["count"] < 0).any())
                negative |= bool((gold["classwise"]["count"] < 0).any())
            if negative:
                raise DataError(
                    "subtracting summaries gave negative counts: the second one is not part of "
                    "the first."
                )
        truth = None
        if self.has_truth:
            truth = (
                a["top_bin_truth_sum"].values + sign * b["top_bin_truth_sum"].values,
                a["classwise_bin_truth_sum"].values + sign * b["classwise_bin_truth_sum"].values,
            )
            if gold is not None:
                gold["truth"] = tuple(
                    _var_or_zero(a, name, like) + sign * _var_or_zero(b, name, like)
                    for name, like in (
                        ("gold_top_bin_truth_sum", truth[0]),
                        ("gold_classwise_bin_truth_sum", truth[1]),
                    )
                )
        return _assemble(
            states=states,
            pattern_counts=counts,
            n_unannotated=n_unann,
            top=parts["top"],
            classwise=parts["classwise"],
            truth=truth,
            gold=gold,
            template=self,
        )

    def __add__(self, other) -> MulticlassSummary:
        return self._combine(other, +1)

    def __radd__(self, other):
        # lets sum([s1, s2, ...]) work
        if isinstance(other, numbers.Number) and other == 0:
            return self
        return self._combine(other, +1)

    def __sub__(self, other) -> MulticlassSummary:
        """The summary of the items in ``self`` but not in ``other`` (a sub-chunk of it)."""
        return self._combine(other, -1)

    def equals(self, other, *, rtol: float = 1e-9) -> bool:
        """Integer arrays equal exactly, float sums to ``rtol`` (relative and absolute)."""
        self._check_compatible(other)
        a, b = self._ds, other._ds
        if set(a.data_vars) != set(b.data_vars):
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
        """SHA-256 of every stored array and the names."""
        import hashlib

        h = hashlib.sha256()
        for var in sorted(self._ds.data_vars):
            h.update(np.ascontiguousarray(self._ds[var].values).tobytes())
        h.update("\x1f".join(self.annotators + ["\x1e"] + self.classes).encode())
        return h.hexdigest()

    def __repr__(self) -> str:
        return (
            f"<MulticlassSummary: {self.n_items} annotated items, {self.n_annotators} annotators, "
            f"{self.n_classes} classes, {self.n_groups} {self.grouping!r} groups x "
            f"{self.n_patterns} observed patterns (of {self.n_cells:,} cells), {self.n_bins} bins"
            f"{', with truth' if self.has_truth else ''}"
            f"{f', {int(self.n_gold.sum())} gold items' if self.has_gold else ''}>"
        )

    def to_netcdf(self, path) -> None:
        self._ds.to_netcdf(path)

    @classmethod
    def from_netcdf(cls, path) -> MulticlassSummary:
        return cls(xr.load_dataset(path))


def _stored_cells(ds, prefix, index_vars, value):
    """A summary's cells as ``{"index": (3 arrays), "count", value}`` (empty when absent)."""
    if f"{prefix}_count" not in ds:
        empty = np.zeros(0, dtype=np.int64)
        return {"index": (empty, empty, empty), "count": empty, value: np.zeros(0)}
    return {
        "index": tuple(ds[f"{prefix}_{v}"].values.astype(np.int64) for v in index_vars),
        "count": ds[f"{prefix}_count"].values,
        value: ds[f"{prefix}_{value}"].values,
    }


def _var_or_zero(ds, name, like):
    return ds[name].values if name in ds else np.zeros_like(like)


def _merge_cells(a, b, prefix, index_vars, value, ia, ib, sign, shape):
    """Cells of two summaries on the union pattern axis, summed by key (sign for b)."""

    def keyed(cells, remap):
        idx = list(cells["index"])
        idx[2] = remap[idx[2]]
        return np.ravel_multi_index(tuple(idx), shape)

    ca, cb = (_stored_cells(ds, prefix, index_vars, value) for ds in (a, b))
    key = np.concatenate([keyed(ca, ia), keyed(cb, ib)])
    cnt = np.concatenate([ca["count"], sign * cb["count"]])
    val = np.concatenate([ca[value], sign * cb[value]])
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    counts = np.bincount(inv, weights=cnt, minlength=uniq.size).round().astype(np.int64)
    sums = np.bincount(inv, weights=val, minlength=uniq.size)
    idx = np.unravel_index(uniq, shape)
    return {"index": idx, "count": counts, value: sums}


def _meta_of(summary):
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


# ----------------------------------------------------------------- building
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
    gold=None,
    template=None,
    meta=None,
):
    """Drop empty cells and unused patterns, then lay the arrays out as a dataset.

    ``gold`` (optional): ``{"pattern_counts": (C, L, P), "top", "classwise"[, "truth"]}``,
    the gold items' tables on the same pattern axis.
    """
    used = pattern_counts.sum(axis=0) != 0
    if gold is not None:
        used |= gold["pattern_counts"].sum(axis=(0, 1)) != 0
    remap = (np.cumsum(used) - 1).astype(np.int64)
    states = states[used]
    pattern_counts = pattern_counts[:, used]
    if template is not None:
        meta = _meta_of(template)
    n_classes = len(meta["classes"])
    int32 = (np.int32, np.int32, np.int64)
    data_vars = {
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
        data_vars.update(
            _cell_vars("gold_top_cell", GOLD_TOP_CELL, gold["top"], _TOP, "conf_sum", remap, int32)
        )
        data_vars.update(
            _cell_vars(
                "gold_classwise_cell",
                GOLD_CLASSWISE_CELL,
                gold["classwise"],
                _CW,
                "prob_sum",
                remap,
                int32,
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
    return MulticlassSummary(ds)


def resolve_groups(groups, data=None):
    """Resolve a ``groups`` argument to ``(grouping, edges or None, per-item values or None)``.

    Examples
    --------
    >>> resolve_groups("predicted"), resolve_groups(2)[1].tolist()
    (('predicted', None, None), [0.0, 0.5, 1.0])
    """
    if groups is None or (isinstance(groups, str) and groups == "predicted"):
        return "predicted", None, None
    if isinstance(groups, str):
        if groups == "all":
            return "all", None, None
        if groups == "data":
            if data is None or data.group is None:
                raise ConfigError("groups='data' needs a container with a 'group' variable.")
            return "data", None, data.group
        raise ConfigError(
            f"groups must be 'predicted', 'all', 'data', an int or edges on max p; got {groups!r}."
        )
    return "confidence", make_edges(groups, what="groups"), None


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


def summarize_multiclass(data, *, groups="predicted", bins=DEFAULT_BINS) -> MulticlassSummary:
    """Reduce multiclass data to its sufficient statistics (SPEC §3).

    Parameters
    ----------
    data : MulticlassAnnotations
        The validated container.
    groups : {"predicted", "all", "data"} or int or array-like, default "predicted"
        Channel groups with their own class prevalence (SPEC §3): the predicted
        class ``argmax p`` (C groups; ties go to the lowest class index), one
        group, the container's ``group`` variable, or confidence groups on
        ``max p`` (an int gives equal-width groups on [0, 1], an array gives edges
        from 0 to 1).
    bins : int or array-like, default 10
        Equal-width evaluation bins (or explicit edges from 0 to 1), used on
        ``max p`` for top-label and on each ``p_k`` for class-wise calibration.

    Returns
    -------
    MulticlassSummary
    """

    if not isinstance(data, MulticlassAnnotations):
        raise DataError(
            f"summarize_multiclass expects a MulticlassAnnotations container; got "
            f"{type(data).__name__}. Build one with MulticlassAnnotations.from_arrays, "
            "from_long or load_multiclass_csv."
        )
    kind, group_edges, group_values = resolve_groups(groups, data)
    return summarize_multiclass_arrays(
        data.probs,
        data.labels,
        annotators=data.annotators,
        classes=data.classes,
        bin_edges=make_edges(bins, what="bins"),
        grouping=kind,
        group_edges=group_edges,
        group_values=group_values,
        truth=data.truth,
        gold=data.gold,
    )


def summarize_multiclass_arrays(
    probs,
    labels,
    *,
    annotators,
    classes,
    bin_edges,
    grouping: str = "predicted",
    group_edges=None,
    group_values=None,
    group_levels=None,
    truth=None,
    gold=None,
) -> MulticlassSummary:
    """The one-pass kernel behind :func:`summarize_multiclass`, on validated arrays.

    Also usable chunk by chunk: pass the same edges (and, for ``grouping="data"``,
    the same ``group_levels``) to every chunk and add the summaries.

    Parameters
    ----------
    probs : ndarray of shape (n, C)
    labels : ndarray of shape (n, K), float with NaN = missing
    annotators, classes : sequences of str
    bin_edges : ndarray
    grouping : {"predicted", "all", "data", "confidence"}
    group_edges : ndarray, for ``"confidence"``
    group_values, group_levels : per-item values and their levels, for ``"data"``
    truth : ndarray of shape (n,), optional
    gold : ndarray of shape (n,), optional
        Known class of gold items (float, NaN = unknown class): their pattern
        counts and metric cells go to the gold tables (module docstring).

    Returns
    -------
    MulticlassSummary
    """
    if grouping not in GROUPINGS:
        raise ConfigError(f"grouping must be one of {GROUPINGS}; got {grouping!r}.")
    p = np.asarray(probs, dtype=np.float64)
    n, c = p.shape
    pred = p.argmax(axis=1)
    conf = p[np.arange(n), pred]
    states_items = item_states(labels, c)
    annotated = (states_items != c).any(axis=1)

    if grouping == "predicted":
        g, group_coord = pred, np.asarray(classes, dtype=object)
    elif grouping == "all":
        g, group_coord = np.zeros(n, dtype=np.int64), np.array(["all"], dtype=object)
    elif grouping == "confidence":
        if group_edges is None:
            raise ConfigError("grouping='confidence' needs group_edges.")
        g, group_coord = assign(conf, group_edges), cell_labels(group_edges)
    else:
        if group_values is None:
            raise ConfigError("grouping='data' needs group_values.")
        levels = np.unique(group_values) if group_levels is None else np.asarray(group_levels)
        g = np.clip(np.searchsorted(levels, group_values), 0, levels.size - 1)
        if not np.array_equal(levels[g], np.asarray(group_values)):
            raise DataError("some group values are not among the declared group levels.")
        group_coord = np.array([str(v) for v in levels], dtype=object)
    n_groups = group_coord.size

    is_gold = None
    if gold is not None:
        gold = np.asarray(gold, dtype=np.float64)
        is_gold = ~np.isnan(gold) & annotated
    every = bool(annotated.all())
    keep = slice(None) if every else np.flatnonzero(annotated)
    uniq, pat = unique_patterns(states_items[keep], c)
    n_pat = uniq.shape[0]
    gk = g[keep]
    y = None if truth is None else np.asarray(truth)[keep]
    n_unannotated = np.bincount(g[~annotated], minlength=n_groups)
    if is_gold is None:
        pattern_counts = np.bincount(gk * n_pat + pat, minlength=n_groups * n_pat).reshape(
            n_groups, n_pat
        )
        top, classwise, truth_sums = _metric_cells(
            p, pred, conf, keep, pat, n_pat, bin_edges, y, every
        )
        gold_tables = None
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
        gold_tables = {"pattern_counts": gold_counts, "top": g_top, "classwise": g_cw}
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
            "classes": np.asarray(list(classes), dtype=object),
            "groups": group_coord,
            "bins": cell_labels(bin_edges),
            "bin_edges": bin_edges,
            "group_edges": group_edges if grouping == "confidence" else None,
            "grouping": grouping,
        },
    )
