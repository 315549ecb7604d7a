"""Sufficient statistics of binary multi-annotator data, built in one pass.

A :class:`Summary` holds response-pattern counts per score group and per
evaluation bin, plus score (and optional truth) sums per bin. Every estimator
and metric of the binary track reads only these arrays, so their cost does not
grow with the number of items. Summaries of disjoint chunks add up exactly.

Gold items (items whose true class is known, ``gold`` 0 or 1; missing =
unknown) are kept in their own tables, one per known class
(``gold_pattern_counts[gold_class, group, pattern]`` and the ``gold_bin_*``
tables), so ``pattern_counts`` and the bin tables hold the unknown items only:
the channel likelihood uses the known class for gold items and marginalises
it for the rest, and the calibration error leaves gold items out unless asked
(:meth:`Summary.with_gold_in_bins`), since gold items are often chosen
non-randomly. The gold tables are O(cells) and add up like the others.
"""

from __future__ import annotations

import numbers

import numpy as np
import xarray as xr

from bayescal.data.container import Annotations
from bayescal.dims import ANNOTATOR, BIN, GROUP, PATTERN
from bayescal.errors import ConfigError, DataError
from bayescal.summaries.partition import assign, cell_labels, make_edges
from bayescal.summaries.patterns import (
    MISSING_STATE,
    check_pattern_k,
    encode_patterns,
    pattern_index,
    pattern_states,
)

__all__ = [
    "Summary",
    "summarize",
    "summarize_arrays",
    "as_summary",
    "DEFAULT_GROUPS",
    "DEFAULT_BINS",
]

DEFAULT_GROUPS = 5
DEFAULT_BINS = 10

_COUNT_VARS = ("pattern_counts", "n_unannotated", "bin_pattern_counts")
_SUM_VARS = ("bin_pattern_score_sum", "bin_truth_sum")
#: dimension of the gold tables: the known class of the item
GOLD_CLASS = "gold_class"
#: gold tables (present only in summaries of data with a ``gold`` variable); a summary without
#: them has no gold items, so merging fills them with zeros
_GOLD_COUNT_VARS = ("gold_pattern_counts", "gold_bin_pattern_counts")
_GOLD_SUM_VARS = ("gold_bin_pattern_score_sum", "gold_bin_truth_sum")


class Summary:
    """Pattern counts and bin sums of one dataset (or of a union of chunks).

    Attributes are labelled :class:`xarray.DataArray` objects:

    ``pattern_counts[group, pattern]``
        Items per score group and response pattern (annotated items only).
    ``n_unannotated[group]``
        Items nobody answered; excluded from everything else.
    ``bin_pattern_counts[bin, pattern]``, ``bin_pattern_score_sum[bin, pattern]``
        Counts and score sums per evaluation bin and pattern.
    ``bin_truth_sum[bin]``
        Sum of the clean labels per bin (only when the data carry truth).

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations, summarize
    >>> data = Annotations.from_arrays([0.1, 0.6, 0.9], [[0, 0], [1, np.nan], [1, 1]])
    >>> s = summarize(data, groups=[0, 0.5, 1], bins=2)
    >>> s.pattern_counts.sum().item(), s.n_patterns
    (3, 9)
    """

    def __init__(self, dataset: xr.Dataset):
        self._ds = dataset

    # ---------------------------------------------------------------- basics
    @property
    def dataset(self) -> xr.Dataset:
        return self._ds

    @property
    def annotators(self) -> list[str]:
        return [str(a) for a in self._ds[ANNOTATOR].values]

    @property
    def n_annotators(self) -> int:
        return int(self._ds.sizes[ANNOTATOR])

    @property
    def n_patterns(self) -> int:
        return int(self._ds.sizes[PATTERN])

    @property
    def n_groups(self) -> int:
        return int(self._ds.sizes[GROUP])

    @property
    def n_bins(self) -> int:
        return int(self._ds.sizes[BIN])

    @property
    def group_edges(self) -> np.ndarray | None:
        """Score edges of the groups, or None for user-defined groups."""
        return self._ds["group_edges"].values if "group_edges" in self._ds else None

    @property
    def bin_edges(self) -> np.ndarray:
        return self._ds["bin_edges"].values

    @property
    def has_truth(self) -> bool:
        return "bin_truth_sum" in self._ds

    @property
    def has_gold(self) -> bool:
        """True when the summary carries gold tables (the data had a ``gold`` variable)."""
        return "gold_pattern_counts" in self._ds

    def gold_counts(self) -> np.ndarray:
        """Gold items per known class and pattern, summed over score groups: shape (2, 3**K).

        Row 0 holds gold-0 items, row 1 gold-1 items; zeros without gold tables. This is
        all the channel likelihood needs from gold items (their known class enters through
        ``P(pattern | Y = y)`` only, see :mod:`bayescal.channels.em`).
        """
        if not self.has_gold:
            return np.zeros((2, self.n_patterns), dtype=np.int64)
        return self._ds["gold_pattern_counts"].values.sum(axis=1)

    @property
    def n_gold(self) -> tuple[int, int]:
        """Annotated gold items of class 0 and of class 1."""
        n0, n1 = self.gold_counts().sum(axis=1)
        return int(n0), int(n1)

    def gold_answered(self) -> np.ndarray:
        """Answers per annotator on gold items of each class: shape (2, K).

        These counts decide whether gold items alone identify a channel (see
        :func:`bayescal.channels.identification.gold_identifies`).
        """
        return self.gold_counts() @ (self.states != MISSING_STATE).astype(np.int64)

    def with_gold_in_bins(self) -> Summary:
        """The same summary with gold items added to the evaluation-bin tables.

        By default the calibration error is computed on the unknown items only (gold
        items are often chosen non-randomly); use this to include them. Channel tables
        are unchanged (gold items stay in their own tables there); such a summary cannot
        be merged (merge first).

        Examples
        --------
        >>> import numpy as np
        >>> from bayescal import Annotations
        >>> data = Annotations.from_arrays(
        ...     [0.1, 0.6, 0.9], [[0, 0], [1, np.nan], [1, 1]], gold=[0, np.nan, np.nan])
        >>> s = summarize(data, groups=2, bins=2)
        >>> int(s.bin_count.sum()), int(s.with_gold_in_bins().bin_count.sum())
        (2, 3)
        """
        if not self.has_gold:
            return self
        ds = self._ds.copy()
        for var in ("bin_pattern_counts", "bin_pattern_score_sum"):
            gold = self._ds["gold_" + var].values.sum(axis=0)
            ds[var] = ds[var].copy(data=self._ds[var].values + gold)
        if self.has_truth:
            ds["bin_truth_sum"] = ds["bin_truth_sum"].copy(
                data=self._ds["bin_truth_sum"].values + self._ds["gold_bin_truth_sum"].values
            )
        ds.attrs["gold_in_bins"] = 1  # the gold tables stay: the channel models use them
        return Summary(ds)

    def without_gold(self) -> Summary:
        """The summary of the unknown items alone (gold tables and gold bin entries removed).

        What the channels would be without the gold items (the audit compares both).
        """
        if not self.has_gold:
            return self
        ds = self._ds.copy()
        if ds.attrs.get("gold_in_bins"):
            for var in ("bin_pattern_counts", "bin_pattern_score_sum"):
                gold = self._ds["gold_" + var].values.sum(axis=0)
                ds[var] = ds[var].copy(data=self._ds[var].values - gold)
            if self.has_truth:
                ds["bin_truth_sum"] = ds["bin_truth_sum"].copy(
                    data=self._ds["bin_truth_sum"].values - self._ds["gold_bin_truth_sum"].values
                )
            del ds.attrs["gold_in_bins"]
        present = [v for v in _GOLD_COUNT_VARS + _GOLD_SUM_VARS if v in ds]
        return Summary(ds.drop_vars(present).drop_dims(GOLD_CLASS, errors="ignore"))

    def __getattr__(self, name):
        # Expose the stored arrays as attributes (pattern_counts, ...).
        if name.startswith("_"):
            raise AttributeError(name)
        ds = self.__dict__.get("_ds")
        if ds is not None and name in ds.data_vars:
            return ds[name]
        raise AttributeError(f"Summary has no attribute {name!r}")

    # ---------------------------------------------------------------- derived
    @property
    def states(self) -> np.ndarray:
        """Pattern states, shape (n_patterns, K): 0, 1, or 2 for missing."""
        return pattern_states(self.n_annotators)

    @property
    def n_items(self) -> int:
        """Annotated items (those entering every statistic)."""
        return int(self._ds["pattern_counts"].values.sum())

    @property
    def group_counts(self) -> xr.DataArray:
        return self._ds["pattern_counts"].sum(PATTERN)

    def _bin_total(self, var, name) -> xr.DataArray:
        # A reduction keeps the bin index; a DataArray built from the (string) bin labels
        # rebuilt it at ~3 ms a call, read hundreds of times per audit.
        return self._ds[var].sum(PATTERN, skipna=False).rename(name)

    @property
    def bin_count(self) -> xr.DataArray:
        return self._bin_total("bin_pattern_counts", "bin_count")

    @property
    def bin_score_sum(self) -> xr.DataArray:
        return self._bin_total("bin_pattern_score_sum", "bin_score_sum")

    def _state_matrix(self, state: int) -> xr.DataArray:
        return xr.DataArray(
            (self.states == state).astype(np.int64),
            dims=(PATTERN, ANNOTATOR),
            coords={PATTERN: self._ds[PATTERN], ANNOTATOR: self._ds[ANNOTATOR]},
        )

    @property
    def bin_label_sum(self) -> xr.DataArray:
        """Sum of the answers of each annotator per bin (answers equal to 1)."""
        return xr.dot(self._ds["bin_pattern_counts"], self._state_matrix(1), dim=PATTERN)

    @property
    def bin_answered(self) -> xr.DataArray:
        """Number of answers of each annotator per bin."""
        missing = xr.dot(
            self._ds["bin_pattern_counts"], self._state_matrix(MISSING_STATE), dim=PATTERN
        )
        return self.bin_count - missing

    @property
    def answered_counts(self) -> xr.DataArray:
        """Answers per annotator over all annotated items."""
        return self.bin_answered.sum(BIN)

    # ---------------------------------------------------------------- merging
    def _check_compatible(self, other: Summary) -> None:
        if not isinstance(other, Summary):
            raise TypeError(f"cannot combine a Summary with {type(other).__name__}")
        if self.annotators != other.annotators:
            raise DataError(
                f"summaries have different annotators ({self.annotators} vs {other.annotators}); "
                "chunks must share the annotator columns in the same order."
            )
        if not np.array_equal(self.bin_edges, other.bin_edges):
            raise DataError(
                "summaries use different bin edges; summarise every chunk with the same bins."
            )
        ge1, ge2 = self.group_edges, other.group_edges
        if (ge1 is None) != (ge2 is None) or (ge1 is not None and not np.array_equal(ge1, ge2)):
            raise DataError(
                "summaries use different score groups; summarise every chunk with the same groups."
            )
        if list(self._ds[GROUP].values) != list(other._ds[GROUP].values):
            raise DataError("summaries have different group labels.")
        if self.has_truth != other.has_truth:
            raise DataError("one summary has truth and the other has not; they cannot be merged.")
        if self._ds.attrs.get("gold_in_bins") or other._ds.attrs.get("gold_in_bins"):
            raise DataError(
                "a summary with gold items moved into its bins (with_gold_in_bins) cannot be "
                "merged; merge the summaries first, then call with_gold_in_bins()."
            )

    def _combine(self, other: Summary, sign: int) -> Summary:
        self._check_compatible(other)
        ds = self._ds.copy()
        # Compatibility is checked above, so add the raw arrays (no xarray alignment:
        # this sits on the cross-fitting hot path).
        for var in _COUNT_VARS + _SUM_VARS:
            if var in ds:
                ds[var] = ds[var].copy(data=self._ds[var].values + sign * other._ds[var].values)
        for var in _GOLD_COUNT_VARS + _GOLD_SUM_VARS:
            # a summary without gold tables holds no gold item: its table is zero
            mine, theirs = self._ds.get(var), other._ds.get(var)
            if mine is None and theirs is None:
                continue
            template = mine if mine is not None else theirs
            a = np.zeros(template.shape) if mine is None else mine.values
            b = np.zeros(template.shape) if theirs is None else theirs.values
            ds[var] = template.copy(data=(a + sign * b).astype(template.dtype))
        if sign < 0:
            for var in _COUNT_VARS + _GOLD_COUNT_VARS:
                if var in ds and (ds[var] < 0).any():
                    raise DataError(
                        "subtracting summaries gave negative counts: the second one is not part of "
                        "the first."
                    )
        return Summary(ds)

    def __add__(self, other: Summary) -> Summary:
        return self._combine(other, +1)

    def __radd__(self, other):
        # lets sum([s1, s2, ...]) work
        if isinstance(other, numbers.Number) and other == 0:
            return self
        return self._combine(other, +1)

    def __sub__(self, other: Summary) -> Summary:
        """The summary of the items in ``self`` but not in ``other`` (a sub-chunk of it)."""
        return self._combine(other, -1)

    def equals(self, other: Summary, *, rtol: float = 1e-9) -> bool:
        """Integer arrays equal exactly, float sums to ``rtol``."""
        self._check_compatible(other)
        if self.has_gold != other.has_gold:
            return False
        for var in _COUNT_VARS + _GOLD_COUNT_VARS:
            if var in self._ds and not np.array_equal(self._ds[var].values, other._ds[var].values):
                return False
        for var in _SUM_VARS + _GOLD_SUM_VARS:
            if var in self._ds and not np.allclose(
                self._ds[var].values, other._ds[var].values, rtol=rtol, atol=rtol
            ):
                return False
        return True

    def data_hash(self) -> str:
        """SHA-256 of the counts and sums (what every downstream result depends on)."""
        import hashlib

        h = hashlib.sha256()
        names = _COUNT_VARS + _SUM_VARS + ("bin_edges", "group_edges")
        for var in names + _GOLD_COUNT_VARS + _GOLD_SUM_VARS:
            if var in self._ds:
                h.update(np.ascontiguousarray(self._ds[var].values).tobytes())
        h.update("\x1f".join(self.annotators).encode())
        return h.hexdigest()

    def describe(self) -> dict:
        """Plain facts available from the counts (like :meth:`Annotations.describe`).

        Over every annotated item, gold items included (read from the pattern tables, so
        the same whether or not gold items were moved into the bins).
        """
        unknown = self._ds["pattern_counts"].values.sum(axis=0)
        counts = unknown + self.gold_counts().sum(axis=0)
        states = self.states
        n = int(counts.sum())
        answered = counts @ (states != 2).astype(np.int64)
        pos = counts @ (states == 1).astype(np.int64)
        n_ans = (states != 2).sum(axis=1)
        n_pos = (states == 1).sum(axis=1)
        multi = n_ans >= 2
        unanimous = ((n_pos == 0) | (n_pos == n_ans)) & multi
        n_multi = counts[multi].sum()
        n_unann = int(self._ds["n_unannotated"].values.sum())
        n0, n1 = self.n_gold
        return {
            "n_items": n + n_unann,
            "n_annotators": self.n_annotators,
            "n_unannotated": n_unann,
            "n_gold": {"0": n0, "1": n1},
            "answered_fraction": float(answered.sum() / ((n + n_unann) * self.n_annotators)),
            "answers_per_annotator": dict(zip(self.annotators, answered.tolist())),
            "positive_rate_per_annotator": dict(
                zip(self.annotators, [float(p / a) if a else None for p, a in zip(pos, answered)])
            ),
            "unanimous_fraction": float(counts[unanimous].sum() / n_multi) if n_multi else None,
            "has_truth": self.has_truth,
        }

    def __repr__(self) -> str:
        return (
            f"<Summary: {self.n_items} annotated items, {self.n_annotators} annotators, "
            f"{self.n_groups} groups x {self.n_patterns} patterns, {self.n_bins} bins"
            f"{', with truth' if self.has_truth else ''}"
            f"{', gold items {} + {}'.format(*self.n_gold) if self.has_gold else ''}>"
        )

    # ---------------------------------------------------------------- io
    def to_netcdf(self, path) -> None:
        self._ds.to_netcdf(path)

    @classmethod
    def from_netcdf(cls, path) -> Summary:
        return cls(xr.load_dataset(path))


def _group_spec(groups, data):
    """Resolve ``groups`` to (edges or None, labels per item or None)."""
    if groups is None:
        if data is not None and data.group is not None:
            return None, data.group
        groups = DEFAULT_GROUPS
    if isinstance(groups, str):
        if groups != "data":
            raise ConfigError(f"groups must be an int, edges, 'data' or None; got {groups!r}.")
        if data is None or data.group is None:
            raise ConfigError("groups='data' needs a container with a 'group' variable.")
        return None, data.group
    return make_edges(groups, what="groups"), None


def summarize(data, *, groups=None, bins=DEFAULT_BINS, bin_strategy: str = "uniform") -> Summary:
    """Reduce an :class:`~bayescal.Annotations` to its sufficient statistics (SPEC §1).

    Hanada & Futami's estimators and errors (Eqs. for EM, NC-ECE and the
    histogram map) are functions of an item's response pattern, so pattern
    counts per score group and per evaluation bin, with score sums, are all
    they need. Data larger than memory (a dask DataFrame, or a folder or glob
    of CSV / Parquet files) go through :func:`bayescal.scale.summarize`, which
    routes them to the out-of-core builder and gives the same :class:`Summary`.

    Parameters
    ----------
    data : Annotations
        The validated container.
    groups : None, int, array-like or "data"
        Score groups used by the channel estimators: an int gives equal-width
        groups, an array gives explicit edges (0 first, 1 last), ``"data"`` uses
        the container's own ``group`` variable. ``None`` uses the container's
        groups when it has them and otherwise 5 equal-width score groups.
    bins : int or array-like, default 10
        Evaluation bins for calibration errors (same forms as ``groups``).
    bin_strategy : {"uniform", "quantile"}
        With an int ``bins``: equal-width or equal-mass bins. Equal-mass edges
        come from the annotated items' scores.

    Returns
    -------
    Summary

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> s = summarize(simulate_toy(1000, random_state=0), groups=5, bins=10)
    >>> s.n_items, s.n_groups, s.n_bins
    (1000, 5, 10)
    """
    if isinstance(data, Annotations) and data.n_classes > 2:
        raise DataError(
            "summarize builds binary summaries; multiclass data are summarised by "
            "bayescal.summarize_multiclass(data, groups=..., bins=...)."
        )
    if not isinstance(data, Annotations):
        raise DataError(
            f"summarize expects an Annotations container; got {type(data).__name__}. "
            "Build one with Annotations.from_arrays, Annotations.from_long or load_csv; for a "
            "dask DataFrame or a path / glob of CSV or Parquet files use bayescal.scale.summarize."
        )
    annotated = data.annotated
    group_edges, group_values = _group_spec(groups, data)
    bin_edges = make_edges(bins, what="bins", scores=data.score[annotated], strategy=bin_strategy)
    return summarize_arrays(
        data.score,
        data.labels,
        annotators=data.annotators,
        group_edges=group_edges,
        group_values=group_values,
        bin_edges=bin_edges,
        truth=data.truth,
        gold=data.gold,
    )


def as_summary(
    data, *, groups=None, bins=None, bin_strategy: str = "uniform", caller: str = "this function"
) -> Summary:
    """The one "Annotations or Summary -> Summary" step of every estimator and metric.

    SPEC §1: every statistic of Hanada & Futami's binary track reads the summary.

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


def summarize_arrays(
    score,
    labels,
    *,
    annotators,
    bin_edges,
    group_edges=None,
    group_values=None,
    group_levels=None,
    truth=None,
    gold=None,
) -> Summary:
    """The one-pass kernel behind :func:`summarize` on already validated arrays.

    Also used chunk by chunk (out-of-core): pass the same edges (and, for
    user-defined groups, the same ``group_levels``) to every chunk. ``gold``
    (n_items,) holds the known class 0 / 1 of gold items and NaN for the others;
    annotated gold items go to the gold tables instead of ``pattern_counts`` and
    the bin tables.
    """
    z = np.asarray(score, dtype=np.float64)
    lab = np.asarray(labels)
    k = lab.shape[1]
    check_pattern_k(k)
    n_patterns = 3**k
    pat = encode_patterns(lab)
    unannotated = pat == n_patterns - 1  # every state missing

    if group_values is not None:
        if group_levels is None:
            group_levels = np.unique(group_values)
        group_levels = np.asarray(group_levels)
        g = np.searchsorted(group_levels, group_values)
        g = np.clip(g, 0, group_levels.size - 1)
        if not np.array_equal(group_levels[g], np.asarray(group_values)):
            raise DataError("some group values are not among the declared group levels.")
        group_coord = np.array([str(v) for v in group_levels], dtype=object)
        n_groups = group_levels.size
    else:
        g = assign(z, group_edges)
        group_coord = cell_labels(group_edges)
        n_groups = group_edges.size - 1
    b = assign(z, bin_edges)
    n_bins = bin_edges.size - 1

    gold_class = None
    if gold is not None:
        gold_class = np.asarray(gold, dtype=np.float64)
        is_gold = ~np.isnan(gold_class)
        keep = ~unannotated & ~is_gold
    else:
        keep = ~unannotated
    gk, bk, pk, zk = g[keep], b[keep], pat[keep], z[keep]
    pattern_counts = np.bincount(gk * n_patterns + pk, minlength=n_groups * n_patterns)
    bin_cell = bk * n_patterns + pk
    bin_pattern_counts = np.bincount(bin_cell, minlength=n_bins * n_patterns)
    bin_pattern_score_sum = np.bincount(bin_cell, weights=zk, minlength=n_bins * n_patterns)
    n_unannotated = np.bincount(g[unannotated], minlength=n_groups)

    coords = {
        GROUP: group_coord,
        PATTERN: pattern_index(k),
        BIN: cell_labels(bin_edges),
        ANNOTATOR: np.array(list(annotators), dtype=object),
    }
    data_vars = {
        "pattern_counts": (
            (GROUP, PATTERN),
            pattern_counts.reshape(n_groups, n_patterns).astype(np.int64, copy=False),
        ),
        "n_unannotated": ((GROUP,), n_unannotated.astype(np.int64)),
        "bin_pattern_counts": (
            (BIN, PATTERN),
            # bincount already gives int64 here: no second bins x 3**K copy
            bin_pattern_counts.reshape(n_bins, n_patterns).astype(np.int64, copy=False),
        ),
        "bin_pattern_score_sum": (
            (BIN, PATTERN),
            bin_pattern_score_sum.reshape(n_bins, n_patterns),
        ),
        "bin_edges": (("bin_edge",), np.asarray(bin_edges, dtype=np.float64)),
    }
    if group_edges is not None:
        data_vars["group_edges"] = (("group_edge",), np.asarray(group_edges, dtype=np.float64))
    if truth is not None:
        y = np.asarray(truth, dtype=np.float64)[keep]
        data_vars["bin_truth_sum"] = ((BIN,), np.bincount(bk, weights=y, minlength=n_bins))
    if gold_class is not None:
        coords[GOLD_CLASS] = ["0", "1"]
        data_vars.update(
            _gold_tables(gold_class, ~unannotated, g, b, pat, z, truth, n_groups, n_bins, k)
        )
    ds = xr.Dataset(data_vars, coords=coords)
    ds.attrs["pattern_encoding"] = "index = sum_j state_j * 3**j; state 0, 1, 2 = missing"
    return Summary(ds)


def _gold_tables(gold_class, annotated, g, b, pat, z, truth, n_groups, n_bins, k) -> dict:
    """The gold tables of :func:`summarize_arrays`: one slice per known class."""
    n_patterns = 3**k
    known = annotated & ~np.isnan(gold_class)
    c = gold_class[known].astype(np.int64)
    gk, bk, pk, zk = g[known], b[known], pat[known], z[known]
    group_cell = (c * n_groups + gk) * n_patterns + pk
    bin_cell = (c * n_bins + bk) * n_patterns + pk
    out = {
        "gold_pattern_counts": (
            (GOLD_CLASS, GROUP, PATTERN),
            np.bincount(group_cell, minlength=2 * n_groups * n_patterns)
            .reshape(2, n_groups, n_patterns)
            .astype(np.int64),
        ),
        "gold_bin_pattern_counts": (
            (GOLD_CLASS, BIN, PATTERN),
            np.bincount(bin_cell, minlength=2 * n_bins * n_patterns)
            .reshape(2, n_bins, n_patterns)
            .astype(np.int64),
        ),
        "gold_bin_pattern_score_sum": (
            (GOLD_CLASS, BIN, PATTERN),
            np.bincount(bin_cell, weights=zk, minlength=2 * n_bins * n_patterns).reshape(
                2, n_bins, n_patterns
            ),
        ),
    }
    if truth is not None:
        y = np.asarray(truth, dtype=np.float64)[known]
        out["gold_bin_truth_sum"] = ((BIN,), np.bincount(bk, weights=y, minlength=n_bins))
    return out
