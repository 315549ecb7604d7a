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

_TOP = ("top_cell_bin", "top_cell_class", "top_cell_pattern")
_CW = ("classwise_cell_class", "classwise_cell_bin", "classwise_cell_pattern")
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
    def states(self) -> np.ndarray:
        """Pattern states, shape (n_patterns, K): class index, or C for missing."""
        return self._ds["states"].values

    @property
    def pattern_labels(self) -> np.ndarray:
        return self._ds[PATTERN].values

    @property
    def n_items(self) -> int:
        """Annotated items (those entering every statistic)."""
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
        parts = {
            "top": _merge_cells(
                a, b, "top_cell", _TOP, "conf_sum", ia, ib, sign, (self.n_bins, self.n_classes, p)
            ),
            "classwise": _merge_cells(
                a,
                b,
                "classwise_cell",
                _CW,
                "prob_sum",
                ia,
                ib,
                sign,
                (self.n_classes, self.n_bins, p),
            ),
        }
        n_unann = a["n_unannotated"].values + sign * b["n_unannotated"].values
        if sign < 0 and (
            (counts < 0).any()
            or (n_unann < 0).any()
            or any((cells["count"] < 0).any() for cells in parts.values())
        ):
            raise DataError(
                "subtracting summaries gave negative counts: the second one is not part of the "
                "first."
            )
        truth = None
        if self.has_truth:
            truth = (
                a["top_bin_truth_sum"].values + sign * b["top_bin_truth_sum"].values,
                a["classwise_bin_truth_sum"].values + sign * b["classwise_bin_truth_sum"].values,
            )
        return _assemble(
            states=states,
            pattern_counts=counts,
            n_unannotated=n_unann,
            top=parts["top"],
            classwise=parts["classwise"],
            truth=truth,
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
            f"{', with truth' if self.has_truth else ''}>"
        )

    def to_netcdf(self, path) -> None:
        self._ds.to_netcdf(path)

    @classmethod
    def from_netcdf(cls, path) -> MulticlassSummary:
        return cls(xr.load_dataset(path))


def _merge_cells(a, b, prefix, index_vars, value, ia, ib, sign, shape):
    """Cells of two summaries on the union pattern axis, summed by key (sign for b)."""

    def keyed(ds, remap):
        idx = [ds[v].values.astype(np.int64) for v in index_vars]
        idx[2] = remap[idx[2]]
        return np.ravel_multi_index(tuple(idx), shape)

    key = np.concatenate([keyed(a, ia), keyed(b, ib)])
    cnt = np.concatenate([a[f"{prefix}_count"].values, sign * b[f"{prefix}_count"].values])
    val = np.concatenate([a[f"{prefix}_{value}"].values, sign * b[f"{prefix}_{value}"].values])
    uniq, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    counts = np.bincount(inv, weights=cnt, minlength=uniq.size).round().astype(np.int64)
    sums = np.bincount(inv, weights=val, minlength=uniq.size)
    idx = np.unravel_index(uniq, shape)
    return {"index": idx, "count": counts, value: sums}


# ----------------------------------------------------------------- building
def _assemble(
    *, states, pattern_counts, n_unannotated, top, classwise, truth, template=None, meta=None
):
    """Drop empty cells and unused patterns, then lay the arrays out as a dataset."""
    keep_top = top["count"] != 0
    keep_cw = classwise["count"] != 0
    used = pattern_counts.sum(axis=0) != 0
    remap = np.cumsum(used) - 1
    states = states[used]
    pattern_counts = pattern_counts[:, used]
    if template is not None:
        meta = {
            "annotators": template._ds[ANNOTATOR].values,
            "classes": template._ds[CLASS].values,
            "groups": template._ds[GROUP].values,
            "bins": template._ds[BIN].values,
            "bin_edges": template.bin_edges,
            "group_edges": template.group_edges,
            "grouping": template.grouping,
        }
    n_classes = len(meta["classes"])
    tb, tc, tp = (x[keep_top] for x in top["index"])
    cc, cb, cp = (x[keep_cw] for x in classwise["index"])
    data_vars = {
        "states": ((PATTERN, ANNOTATOR), states.astype(np.int16)),
        "pattern_counts": ((GROUP, PATTERN), pattern_counts.astype(np.int64)),
        "n_unannotated": ((GROUP,), np.asarray(n_unannotated, dtype=np.int64)),
        "top_cell_bin": ((TOP_CELL,), tb.astype(np.int32)),
        "top_cell_class": ((TOP_CELL,), tc.astype(np.int32)),
        "top_cell_pattern": ((TOP_CELL,), remap[tp].astype(np.int64)),
        "top_cell_count": ((TOP_CELL,), top["count"][keep_top].astype(np.int64)),
        "top_cell_conf_sum": ((TOP_CELL,), top["conf_sum"][keep_top]),
        "classwise_cell_class": ((CLASSWISE_CELL,), cc.astype(np.int32)),
        "classwise_cell_bin": ((CLASSWISE_CELL,), cb.astype(np.int32)),
        "classwise_cell_pattern": ((CLASSWISE_CELL,), remap[cp].astype(np.int64)),
        "classwise_cell_count": ((CLASSWISE_CELL,), classwise["count"][keep_cw].astype(np.int64)),
        "classwise_cell_prob_sum": ((CLASSWISE_CELL,), classwise["prob_sum"][keep_cw]),
        "bin_edges": (("bin_edge",), np.asarray(meta["bin_edges"], dtype=np.float64)),
    }
    if meta["group_edges"] is not None:
        data_vars["group_edges"] = (("group_edge",), np.asarray(meta["group_edges"], np.float64))
    if truth is not None:
        data_vars["top_bin_truth_sum"] = ((BIN,), np.asarray(truth[0], dtype=np.float64))
        data_vars["classwise_bin_truth_sum"] = ((CLASS, BIN), np.asarray(truth[1], np.float64))
    coords = {
        GROUP: np.asarray(meta["groups"], dtype=object),
        PATTERN: pattern_labels(states, n_classes),
        ANNOTATOR: np.asarray(meta["annotators"], dtype=object),
        CLASS: np.asarray(meta["classes"], dtype=object),
        BIN: np.asarray(meta["bins"], dtype=object),
    }
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
    n_bins = bin_edges.size - 1

    every = bool(annotated.all())
    keep = slice(None) if every else np.flatnonzero(annotated)
    uniq, pat = unique_patterns(states_items[keep], c)
    n_pat = uniq.shape[0]
    gk, predk, confk = g[keep], pred[keep], conf[keep]
    y = None if truth is None else np.asarray(truth)[keep]
    pattern_counts = np.bincount(gk * n_pat + pat, minlength=n_groups * n_pat).reshape(
        n_groups, n_pat
    )
    n_unannotated = np.bincount(g[~annotated], minlength=n_groups)

    top_bin = bin_index(confk, bin_edges)
    shape_top = (n_bins, c, n_pat)
    key = np.ravel_multi_index((top_bin, predk, pat), shape_top)
    uk, cnt, (csum,) = _cell_table(key, int(np.prod(shape_top)), confk)
    top = {"index": np.unravel_index(uk, shape_top), "count": cnt, "conf_sum": csum}

    cw_keys, cw_cnt, cw_sum, cw_truth = [], [], [], []
    for cls in range(c):
        # one column at a time: no (n, C) temporaries beyond the probabilities themselves
        col = np.ascontiguousarray(p[:, cls] if every else p[keep, cls])
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
    return _assemble(
        states=uniq,
        pattern_counts=pattern_counts,
        n_unannotated=n_unannotated,
        top=top,
        classwise=classwise,
        truth=truth_sums,
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
