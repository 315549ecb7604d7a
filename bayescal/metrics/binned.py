"""Binned calibration errors on one shared partition, computed from summaries.

Every target used to judge calibration here (clean label, soft vote, majority
vote, corrected label ``U``) is a function of an item's response pattern, so
the signed bin moments

    D_l = (1/n) sum_i (T_i - Z_i) 1(Z_i in B_l)

come from the binary view's ``bin_pattern_counts`` and ``bin_score_sum`` alone
(:class:`~bayescal.summaries.summary.BinaryView`), and the error is
``sum_l |D_l|`` (empty bins add zero). For channel posteriors the corrected
targets are computed only for the patterns that hold items, and the moments only
over the non-empty (bin, pattern) cells (:class:`CellTable`), in chunks of
draws: O(S x C) time for C non-empty cells (C <= number of items) and memory
bounded by :data:`CHUNK_ELEMENTS` per array, whatever K is.

C classes (SPEC §3; derivation in docs/multiclass.md): corrected one-hot targets
``U = sum_{j answered} w_j (T_j^T)^{-1} e_{A_j} / sum w_j`` (``E[U | Y, x] = e_Y``, rows
summing to one, never clipped; with C = 2, ``U[1]`` is the binary corrected label). The
top-label moments bin on the confidence ``p_c`` (``c = argmax p``) with targets
``U[c]``; the class-wise ones bin on ``p_k`` with ``U[k]``, averaged over classes
(:class:`MulticlassECE`, :class:`ClasswiseECE`). They come from the summary's (bin,
class, pattern) cells, in chunks of draws, independent of ``(C+1)**K``; vote and oracle
baselines use the same bins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal.channels.plausibility import ece_range_flags
from bayescal.channels.result import ChannelFit
from bayescal.dims import BIN, CLASS, DRAW
from bayescal.errors import ConfigError, DataError
from bayescal.flags import Flag
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, class_weights, inverse_confusions
from bayescal.summaries.partition import cell_sums
from bayescal.summaries.summary import Summary, as_summary

__all__ = [
    "BinnedECE",
    "CellTable",
    "cell_table",
    "summary_cells",
    "row_chunks",
    "corrected_cell_moments",
    "CHUNK_ELEMENTS",
    "binned_ece_from_targets",
    "corrected_pattern_targets",
    "soft_vote_targets",
    "majority_vote_targets",
    "oracle_ece",
    "soft_vote_ece",
    "majority_vote_ece",
    "TIE_RULES",
    "implausible_flags",
    "ClasswiseECE",
    "MulticlassECE",
    "VOTE_TIES",
    "corrected_onehot_targets",
    "class_vote_ece",
    "class_oracle_ece",
]

#: Largest number of float64 elements in one working array of the draw-wise kernels
#: (2**21 elements = 16 MiB): draws or bootstrap replicates are processed in row
#: chunks of at most this many (rows x cells) elements, so peak memory does not grow
#: with the number of draws or with the number of patterns.
CHUNK_ELEMENTS = 1 << 21

#: Majority vote ties (possible when an even number answered): "negative" counts a
#: tie as 0 (the SPEC's strict ``sum A > K/2``), "positive" as 1, "half" as 1/2.
TIE_RULES = ("negative", "positive", "half")


@dataclass(eq=False)
class BinnedECE:
    """A binned calibration error with everything a reliability diagram needs.

    Attributes
    ----------
    kind : str
        ``"nc"``, ``"soft_vote"``, ``"majority_vote"`` or ``"oracle"``.
    ece : xarray.DataArray of shape (draw,)
        ``sum_l |D_l|``; one draw for point channels and label-based errors.
    bin_moments : xarray.DataArray of shape (draw, bin)
        Signed ``D_l = (1/n) sum_i (T_i - Z_i) 1(Z_i in B_l)``.
    bin_count : xarray.DataArray of shape (bin,)
    bin_score_sum : xarray.DataArray of shape (bin,)
    bin_edges : ndarray of shape (n_bins + 1,)
    n : int
        Items in the evaluation (annotated items).
    weights : xarray.DataArray (draw, annotator) or None
        Annotator weights used for corrected labels.
    mode : str
        ``"given"`` (as passed), ``"split"``, ``"reuse"`` or ``"crossfit"``.
    info : dict
        Extra facts (channel method, folds, fit failures).
    """

    kind: str
    ece: xr.DataArray
    bin_moments: xr.DataArray
    bin_count: xr.DataArray
    bin_score_sum: xr.DataArray
    bin_edges: np.ndarray
    n: int
    weights: xr.DataArray | None = None
    mode: str = "given"
    info: dict = field(default_factory=dict)

    @property
    def value(self) -> float:
        """The error as a float when there is one draw; the posterior mean otherwise."""
        return float(self.ece.mean())

    @property
    def n_draws(self) -> int:
        return int(self.ece.sizes[DRAW])

    @property
    def bin_mean_score(self) -> xr.DataArray:
        """Mean score per bin; NaN marks an empty bin (nothing to plot there)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.bin_score_sum / self.bin_count.where(self.bin_count > 0)).rename(
                "bin_mean_score"
            )

    @property
    def bin_mean_target(self) -> xr.DataArray:
        """Mean target per bin and draw (the corrected positive rate for NC); NaN if empty."""
        count = self.bin_count.where(self.bin_count > 0)
        return (self.bin_moments * self.n / count + self.bin_mean_score).rename("bin_mean_target")

    def interval(self, prob: float = 0.9) -> tuple[float, float]:
        """Equal-tailed interval of the error over draws (channel uncertainty only)."""
        q = np.quantile(self.ece.values, [(1 - prob) / 2, 1 - (1 - prob) / 2])
        return float(q[0]), float(q[1])

    def to_dataset(self) -> xr.Dataset:
        ds = xr.Dataset(
            {
                "ece": self.ece,
                "bin_moments": self.bin_moments,
                "bin_count": self.bin_count,
                "bin_mean_score": self.bin_mean_score,
                "bin_mean_target": self.bin_mean_target,
            }
        )
        if self.weights is not None:
            ds["weights"] = self.weights
        ds.attrs.update(kind=self.kind, mode=self.mode, n=self.n)
        return ds

    def __repr__(self) -> str:
        head = (
            f"<BinnedECE kind={self.kind!r} mode={self.mode!r} "
            f"n={self.n} bins={self.bin_count.size}"
        )
        if self.n_draws == 1:
            return head + f" ece={self.value:.5f}>"
        lo, hi = self.interval()
        return head + f" draws={self.n_draws} mean={self.value:.5f} 90%=[{lo:.5f}, {hi:.5f}]>"


# ---------------------------------------------------------------- pattern targets
def _pattern_indicators(states: np.ndarray):
    x = (states == 1).astype(np.float64)
    ans = (states != 2).astype(np.float64)
    return x, ans


def soft_vote_targets(states: np.ndarray) -> np.ndarray:
    """Mean of the answered labels for each pattern, shape (P,); 0 for the all-missing one."""
    x, ans = _pattern_indicators(states)
    n_ans = ans.sum(axis=1)
    return np.divide(x.sum(axis=1), n_ans, out=np.zeros(len(states)), where=n_ans > 0)


def majority_vote_targets(states: np.ndarray, tie: str = "negative") -> np.ndarray:
    """Majority of the answered labels for each pattern, shape (P,), with a tie rule."""
    if tie not in TIE_RULES:
        raise ConfigError(f"tie must be one of {TIE_RULES}; got {tie!r}.")
    x, ans = _pattern_indicators(states)
    pos, n_ans = x.sum(axis=1), ans.sum(axis=1)
    out = (2 * pos > n_ans).astype(np.float64)
    tied = (2 * pos == n_ans) & (n_ans > 0)
    out[tied] = {"negative": 0.0, "positive": 1.0, "half": 0.5}[tie]
    return out


def corrected_pattern_targets(
    states: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """Corrected labels ``U`` per draw and pattern, shape (S, P).

    ``U_p = sum_j w'_pj (A_pj - a_j) / delta_j`` with ``w'`` the weights
    renormalised over the annotators who answered pattern ``p`` (this keeps
    ``E[U | Y, Z] = Y`` when missingness is independent of ``Y`` given ``Z``).
    The all-missing pattern gets 0 (it never has items).
    """
    x, ans = _pattern_indicators(states)
    d = b - a
    num = (w / d) @ x.T - (w * a / d) @ ans.T  # (S, P)
    den = w @ ans.T
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


# ---------------------------------------------------------------- non-empty cells
@dataclass(frozen=True, eq=False)
class CellTable:
    """The non-empty (bin, pattern) cells of an evaluation summary, in bin order.

    Everything a binned error needs from the items, without the empty cells of
    the binary view's ``bin_pattern_counts[bin, pattern]``: C cells, at most as
    many as the items.

    Attributes
    ----------
    bin : ndarray of shape (C,)
        Bin index of each cell (non-decreasing).
    pattern : ndarray of shape (C,)
        Index of each cell's pattern into :attr:`patterns`.
    count : ndarray of shape (C,)
        Items in the cell (float64).
    score_sum : ndarray of shape (C,)
        Sum of the scores of the cell's items.
    patterns : ndarray of shape (P_obs,)
        Indices (into the summary's pattern axis) of the patterns that hold at least
        one item of the table.
    states : ndarray of shape (P_obs, K)
        States of those patterns (0, 1, 2 = missing).
    n_bins : int
        Number of bins M (empty bins included).
    """

    bin: np.ndarray
    pattern: np.ndarray
    count: np.ndarray
    score_sum: np.ndarray
    patterns: np.ndarray
    states: np.ndarray
    n_bins: int

    @property
    def n_cells(self) -> int:
        return int(self.count.size)

    @property
    def n(self) -> float:
        """Items in the table."""
        return float(self.count.sum())

    @property
    def mean_score(self) -> np.ndarray:
        """Mean score of each cell, shape (C,)."""
        return self.score_sum / self.count

    @property
    def bin_score_sum(self) -> np.ndarray:
        """Score sum per bin, shape (M,)."""
        return self.bin_sums(self.score_sum[None, :])[0]

    def bin_sums(self, values: np.ndarray) -> np.ndarray:
        """Sum cell values within each bin: (r, C) -> (r, M); empty bins are 0."""
        values = np.asarray(values, dtype=np.float64)
        out = np.zeros((values.shape[0], self.n_bins))
        if self.n_cells:
            starts = np.flatnonzero(np.r_[True, self.bin[1:] != self.bin[:-1]])
            out[:, self.bin[starts]] = np.add.reduceat(values, starts, axis=1)
        return out


def cell_table(
    bin_pattern_counts: np.ndarray, bin_pattern_score_sum: np.ndarray, states: np.ndarray
) -> CellTable:
    """Build a :class:`CellTable` from dense (M, P) bin tables on the patterns ``states`` (P, K).

    Examples
    --------
    >>> import numpy as np
    >>> t = cell_table(np.array([[2, 0, 1], [0, 0, 0]]), np.array([[0.3, 0, 0.1], [0, 0, 0]]),
    ...                np.array([[0], [1], [2]]))
    >>> t.bin.tolist(), t.patterns.tolist(), t.bin_sums(t.count[None]).tolist()
    ([0, 0], [0, 2], [[3.0, 0.0]])
    """
    counts = np.asarray(bin_pattern_counts)
    n_bins, n_pat = counts.shape
    flat = np.flatnonzero(counts.ravel())  # bin-major, so cells come in bin order
    b, p = np.divmod(flat, n_pat)
    patterns, pattern = np.unique(p, return_inverse=True)
    return CellTable(
        bin=b,
        pattern=pattern.reshape(-1),
        count=counts.ravel()[flat].astype(np.float64),
        score_sum=np.asarray(bin_pattern_score_sum, dtype=np.float64).ravel()[flat],
        patterns=patterns,
        states=np.asarray(states)[patterns],
        n_bins=int(n_bins),
    )


def summary_cells(summary: Summary) -> CellTable:
    """The :class:`CellTable` of a two-class summary's bins (its binary view)."""
    view = summary.binary
    return cell_table(view.bin_pattern_counts, view.bin_pattern_score_sum, view.states)


def row_chunks(n_rows: int, row_size: int):
    """Slices of ``range(n_rows)`` holding at most :data:`CHUNK_ELEMENTS` / row_size rows."""
    step = max(1, CHUNK_ELEMENTS // max(1, int(row_size)))
    return [slice(i, min(i + step, n_rows)) for i in range(0, n_rows, step)]


def corrected_cell_moments(
    table: CellTable, a: np.ndarray, b: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """Signed NC bin moments per channel draw, shape (S, M), in chunks of draws.

    ``D_l = (1/n) sum_{cells c in l} n_c (U_{p(c)} - mean score_c)`` with the
    corrected targets of :func:`corrected_pattern_targets`, computed for the
    observed patterns only (SPEC §1, NC-ECE; Hanada & Futami, Eq. 7).
    """
    states = table.states
    s = a.shape[0]
    out = np.empty((s, table.n_bins))
    zsum = table.bin_score_sum
    width = max(table.n_cells, states.shape[0])
    for rows in row_chunks(s, width):
        u = corrected_pattern_targets(states, a[rows], b[rows], w[rows])  # (r, P_obs)
        out[rows] = (table.bin_sums(u[:, table.pattern] * table.count) - zsum) / table.n
    return out


# ---------------------------------------------------------------- errors from summaries
def binned_ece_from_targets(
    summary, targets: np.ndarray, kind: str, *, weights=None, mode="given", info=None
) -> BinnedECE:
    """Bin moments and error from per-pattern targets of shape (P,) or (S, P).

    ``D_m = (1/n) sum_{cells c in m} n_c (t_{p(c)} - mean score_c)`` over the
    non-empty (bin, pattern) cells only (Hanada & Futami, Sec. 3, the binned ECE
    with a given target); ``targets`` are on the summary's observed patterns.
    """
    table = summary_cells(summary)
    n = table.n
    if n == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    t = np.atleast_2d(np.asarray(targets, dtype=np.float64))[:, table.patterns]  # (S, P_obs)
    zsum = summary.binary.bin_score_sum
    moments = np.empty((t.shape[0], table.n_bins))
    for rows in row_chunks(t.shape[0], table.n_cells):
        moments[rows] = (table.bin_sums(t[rows][:, table.pattern] * table.count) - zsum) / n
    return _result(summary, moments, kind, weights=weights, mode=mode, info=info)


def _result(summary, moments, kind, *, weights=None, mode="given", info=None, n=None):
    s = moments.shape[0]
    bins = summary.dataset[BIN].values
    view = summary.binary
    return BinnedECE(
        kind=kind,
        ece=xr.DataArray(
            np.abs(moments).sum(axis=1), dims=(DRAW,), coords={DRAW: np.arange(s)}, name="ece"
        ),
        bin_moments=xr.DataArray(
            moments, dims=(DRAW, BIN), coords={DRAW: np.arange(s), BIN: bins}, name="bin_moments"
        ),
        bin_count=xr.DataArray(view.bin_count, dims=(BIN,), coords={BIN: bins}, name="bin_count"),
        bin_score_sum=xr.DataArray(
            view.bin_score_sum, dims=(BIN,), coords={BIN: bins}, name="bin_score_sum"
        ),
        bin_edges=summary.bin_edges,
        n=int(summary.n_cell_items if n is None else n),
        weights=weights,
        mode=mode,
        info=dict(info or {}),
    )


def _as_summary(data, bins, bin_strategy):
    # Only the bin arrays matter here: one score group keeps a container's summary small.
    groups = None if isinstance(data, Summary) else 1
    return as_summary(
        data, groups=groups, bins=bins, bin_strategy=bin_strategy, caller="a calibration error"
    )


def soft_vote_ece(data, *, bins=None, bin_strategy: str = "uniform") -> BinnedECE:
    """ECE against the mean of each item's answered annotations.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> r = soft_vote_ece(simulate_toy(2000, random_state=0))
    >>> r.kind, r.bin_count.size
    ('soft_vote', 10)
    """
    s = _as_summary(data, bins, bin_strategy)
    return binned_ece_from_targets(s, soft_vote_targets(s.binary.states), "soft_vote")


def majority_vote_ece(
    data, *, bins=None, bin_strategy: str = "uniform", tie: str = "negative"
) -> BinnedECE:
    """ECE against the majority of each item's answered annotations.

    Ties (an even number of answers split evenly) follow ``tie``; the default
    ``"negative"`` is the strict majority ``sum A > n_answered / 2``.
    """
    s = _as_summary(data, bins, bin_strategy)
    return binned_ece_from_targets(
        s, majority_vote_targets(s.binary.states, tie), "majority_vote", info={"tie": tie}
    )


def oracle_ece(data, *, bins=None, bin_strategy: str = "uniform") -> BinnedECE:
    """ECE against the clean labels (simulations and benchmarks only).

    Computed on the annotated items, the same items every other error uses.
    """
    s = _as_summary(data, bins, bin_strategy)
    if not s.has_truth:
        raise DataError("oracle ECE needs clean labels: the data carry no 'truth'.")
    view = s.binary
    moments = ((view.bin_truth_sum - view.bin_score_sum) / s.n_cell_items)[None, :]
    return _result(s, moments, "oracle")


def _channels_for(summary, channels):
    if list(channels.annotators) != list(summary.annotators):
        raise DataError(
            f"channels are for annotators {channels.annotators} but the data have "
            f"{summary.annotators}; they must match in name and order."
        )
    return channels.a.values, channels.b.values


def implausible_flags(nc: BinnedECE, rate_sd: np.ndarray | None = None) -> list[Flag]:
    """The impossible-value check of any binned NC-ECE (binary, top-label or class-wise).

    A binned ECE of probabilities against targets in [0, 1] is at most 1 (class-wise: each
    class's); corrected bin rates may leave [0, 1] by noise only. Both are judged by
    :func:`~bayescal.channels.plausibility.ece_range_flags` (an error flag), so an
    impossible value is flagged the same way for every number of classes.

    Parameters
    ----------
    nc : BinnedECE or ClasswiseECE
    rate_sd : array-like of the bins' shape, optional
        Standard deviation of each bin's corrected rate (bootstrap); default 0, so only the
        fixed margin applies.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.metrics.ncece import nc_ece
    >>> r = nc_ece(simulate_toy(3000, random_state=0), ChannelFit.known([0.1] * 3, [0.9] * 3))
    >>> implausible_flags(r)
    []
    """
    per_class = getattr(nc, "class_ece", None)
    worst = nc.value if per_class is None else float(per_class.mean(DRAW).max())
    rates = nc.bin_mean_target.mean(DRAW).values.ravel()
    sd = np.zeros_like(rates) if rate_sd is None else np.asarray(rate_sd, np.float64).ravel()
    return ece_range_flags(worst, rates, sd, nc.bin_count.values.ravel())


# ---------------------------------------------------------------- C classes
#: Plurality-vote ties: ``"split"`` shares the vote equally among the tied
#: classes (deterministic and symmetric), ``"lowest"`` gives it to the lowest index.
VOTE_TIES = ("split", "lowest")


@dataclass(eq=False)
class ClasswiseECE(BinnedECE):
    """A class-wise binned calibration error: :class:`BinnedECE` with a class dimension.

    Attributes
    ----------
    kind : str
        ``"nc"``, ``"soft_vote"``, ``"majority_vote"`` or ``"oracle"``.
    ece : xarray.DataArray of shape (draw,)
        Mean over classes of ``sum_m |D_km|``.
    bin_moments : xarray.DataArray of shape (draw, class, bin)
        Signed ``D_km = (1/n) sum_{i: p_ik in B_m} (T_ik - p_ik)``.
    bin_count, bin_score_sum : xarray.DataArray of shape (class, bin)
        Items and sum of ``p_k`` per class and bin of ``p_k``.
    class_ece : xarray.DataArray of shape (draw, class)
        ``sum_m |D_km|`` per class.
    bin_edges, n, weights, mode, info
        As in :class:`BinnedECE`.
    """

    class_ece: xr.DataArray | None = None

    def to_dataset(self) -> xr.Dataset:
        ds = super().to_dataset()
        ds["class_ece"] = self.class_ece
        return ds

    def __repr__(self) -> str:
        c, m = self.bin_count.shape
        head = (
            f"<ClasswiseECE kind={self.kind!r} mode={self.mode!r} n={self.n} classes={c} bins={m}"
        )
        if self.n_draws == 1:
            return head + f" ece={self.value:.5f}>"
        lo, hi = self.interval()
        return head + f" draws={self.n_draws} mean={self.value:.5f} 90%=[{lo:.5f}, {hi:.5f}]>"


@dataclass(eq=False)
class MulticlassECE:
    """Top-label and class-wise errors of one kind, on the same items and bins.

    Attributes
    ----------
    top_label : BinnedECE
        Bins on ``max p``; its ``bin_score_sum`` is the sum of confidences.
    classwise : ClasswiseECE
    weights : xarray.DataArray of shape (draw, annotator) or None
        Annotator weights of the corrected targets.
    """

    top_label: BinnedECE
    classwise: ClasswiseECE
    weights: xr.DataArray | None = None

    @property
    def kind(self) -> str:
        return self.top_label.kind

    @property
    def mode(self) -> str:
        return self.top_label.mode

    def to_dict(self, prob: float = 0.9) -> dict:
        """Plain numbers: value (mean over draws) and, for several draws, an interval."""
        out = {}
        for name, part in (("top_label", self.top_label), ("classwise", self.classwise)):
            entry = {"value": part.value, "n": part.n}
            if part.n_draws > 1:
                entry["lo"], entry["hi"] = part.interval(prob)
            out[name] = entry
        return out

    def __repr__(self) -> str:
        return f"<MulticlassECE kind={self.kind!r}\n  {self.top_label!r}\n  {self.classwise!r}>"


def _cell_targets(states, inv, w, cell_pattern, cell_class) -> np.ndarray:
    """``U[d, cell] = U_{pattern(cell)}[class(cell)]`` for draws d, shape (S, n_cells)."""
    s_draws, k, c, _ = inv.shape
    num = np.zeros((s_draws, cell_pattern.size))
    den = np.zeros_like(num)
    for j in range(k):
        s = states[cell_pattern, j].astype(np.int64)
        ans = s < c
        wj = w[:, j, None] * ans
        # inv[:, j, answer, class] as one take along the flattened (answer, class) axis
        flat = np.where(ans, s, 0) * c + cell_class
        num += wj * np.take(inv[:, j].reshape(s_draws, c * c), flat, axis=1)
        den += wj
    if (den <= 0).any():
        raise DataError(
            "some items were answered only by annotators with weight 0, so they have no "
            "corrected target; give every annotator a positive weight."
        )
    return num / den


def corrected_onehot_targets(states, channels, *, weights="equal", lam=DEFAULT_SHRINKAGE):
    """Corrected one-hot targets ``U`` per draw, pattern and class (SPEC §3).

    Parameters
    ----------
    states : ndarray of shape (P, K)
        Patterns (answered class, or C for missing); each needs one answer.
    channels : ChannelFit
    weights : str or array-like
        See :func:`class_weights`.

    Returns
    -------
    ndarray of shape (S, P, C)
        ``E[U_s | Y = y] = e_y`` over patterns ``s``; rows sum to one.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.channels.result import ChannelFit
    >>> ch = ChannelFit.known_confusion([[[0.8, 0.2], [0.1, 0.9]]] * 3)
    >>> u = corrected_onehot_targets(np.array([[1, 2, 2]]), ch)
    >>> u[0, 0].round(4).tolist()  # (A - a) / (b - a) = (1 - 0.2) / 0.7 for class 1
    [-0.1429, 1.1429]
    """
    states = np.asarray(states)
    inv = inverse_confusions(channels)
    w = class_weights(channels, weights, lam=lam).values
    p, c = states.shape[0], channels.n_classes
    cells_p = np.repeat(np.arange(p), c)
    cells_k = np.tile(np.arange(c), p)
    return _cell_targets(states, inv, w, cells_p, cells_k).reshape(-1, p, c)


def _vote_targets(states, n_classes, kind, tie):
    """Soft-vote shares or plurality one-hots per pattern, shape (P, C)."""
    votes = np.stack([(states == y).sum(axis=1) for y in range(n_classes)], axis=1).astype(float)
    if kind == "soft_vote":
        return votes / votes.sum(axis=1, keepdims=True)
    top = votes == votes.max(axis=1, keepdims=True)
    if tie == "lowest":
        out = np.zeros_like(votes)
        out[np.arange(votes.shape[0]), top.argmax(axis=1)] = 1.0
        return out
    return top / top.sum(axis=1, keepdims=True)


def _class_moments(summary, target_of_cells, n_draws):
    """Signed top-label (S, M) and class-wise (S, C, M) moments from cell targets."""
    ds = summary.dataset
    n = summary.n_cell_items
    if n == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    m, c = summary.n_bins, summary.n_classes
    top_p, top_c = ds["top_cell_pattern"].values, ds["top_cell_class"].values
    top_cnt = ds["top_cell_count"].values.astype(np.float64)
    top_to_bin = cell_sums(ds["top_cell_bin"].values, m)
    cw_p, cw_c = ds["classwise_cell_pattern"].values, ds["classwise_cell_class"].values
    cw_cnt = ds["classwise_cell_count"].values.astype(np.float64)
    cw_to_bin = cell_sums(cw_c.astype(np.int64) * m + ds["classwise_cell_bin"].values, c * m)
    top = np.empty((n_draws, m))
    cw = np.empty((n_draws, c * m))
    for sl in row_chunks(n_draws, max(top_p.size, cw_p.size)):
        top[sl] = (top_to_bin @ (target_of_cells(sl, top_p, top_c) * top_cnt).T).T
        cw[sl] = (cw_to_bin @ (target_of_cells(sl, cw_p, cw_c) * cw_cnt).T).T
    top = (top - summary.top_bin_conf_sum.values) / n
    cw = (cw.reshape(n_draws, c, m) - summary.classwise_bin_prob_sum.values) / n
    return top, cw


def _class_results(
    summary, top, cw, kind, *, mode="given", info=None, weights=None
) -> MulticlassECE:
    s = top.shape[0]
    draws = np.arange(s)
    bins = summary.dataset[BIN].values
    classes = summary.dataset[CLASS].values
    info = dict(info or {})
    top_label = BinnedECE(
        kind=kind,
        ece=xr.DataArray(np.abs(top).sum(axis=1), dims=(DRAW,), coords={DRAW: draws}, name="ece"),
        bin_moments=xr.DataArray(
            top, dims=(DRAW, BIN), coords={DRAW: draws, BIN: bins}, name="bin_moments"
        ),
        bin_count=summary.top_bin_count.rename("bin_count"),
        bin_score_sum=summary.top_bin_conf_sum.rename("bin_score_sum"),
        bin_edges=summary.bin_edges,
        n=summary.n_cell_items,
        mode=mode,
        info={**info, "target": "top_label"},
    )
    per_class = np.abs(cw).sum(axis=2)
    classwise = ClasswiseECE(
        kind=kind,
        ece=xr.DataArray(per_class.mean(axis=1), dims=(DRAW,), coords={DRAW: draws}, name="ece"),
        class_ece=xr.DataArray(
            per_class, dims=(DRAW, CLASS), coords={DRAW: draws, CLASS: classes}, name="class_ece"
        ),
        bin_moments=xr.DataArray(
            cw,
            dims=(DRAW, CLASS, BIN),
            coords={DRAW: draws, CLASS: classes, BIN: bins},
            name="bin_moments",
        ),
        bin_count=summary.classwise_bin_count.rename("bin_count"),
        bin_score_sum=summary.classwise_bin_prob_sum.rename("bin_score_sum"),
        bin_edges=summary.bin_edges,
        n=summary.n_cell_items,
        mode=mode,
        info={**info, "target": "classwise"},
    )
    return MulticlassECE(top_label=top_label, classwise=classwise, weights=weights)


def _class_summary(data, bins):
    """:func:`~bayescal.summaries.summary.as_summary` with one channel group for a container."""
    groups = None if isinstance(data, Summary) else "all"
    return as_summary(data, groups=groups, bins=bins, caller="a class-wise calibration error")


def _check_match(summary, channels):

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    if channels.annotators != summary.annotators:
        raise DataError(
            f"channels are for annotators {channels.annotators} but the data have "
            f"{summary.annotators}; they must match in name and order."
        )
    if channels.n_classes != summary.n_classes:
        raise DataError(
            f"channels have {channels.n_classes} classes but the data have {summary.n_classes}."
        )


def class_vote_ece(data, kind: str = "majority_vote", *, tie: str = "split", bins=None):
    """Top-label and class-wise ECE against vote-based targets (naive baselines).

    Parameters
    ----------
    data : MulticlassAnnotations or Summary
    kind : {"majority_vote", "soft_vote"}
        Plurality of the answers (one-hot), or the share of answers per class.
    tie : {"split", "lowest"}, default "split"
        Plurality ties: share the vote among the tied classes, or the lowest index.
    bins : int or edges, optional

    Returns
    -------
    MulticlassECE

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> r = class_vote_ece(simulate_multiclass(2000, random_state=0), "soft_vote")
    >>> r.kind, r.classwise.class_ece.shape
    ('soft_vote', (1, 3))
    """
    if kind not in ("majority_vote", "soft_vote"):
        raise ConfigError(f"kind must be 'majority_vote' or 'soft_vote'; got {kind!r}.")
    if tie not in VOTE_TIES:
        raise ConfigError(f"tie must be one of {VOTE_TIES}; got {tie!r}.")
    summary = _class_summary(data, bins)
    votes = _vote_targets(summary.states, summary.n_classes, kind, tie)

    def target(sl, pat, cls):
        return votes[pat, cls][None]

    top, cw = _class_moments(summary, target, 1)
    return _class_results(
        summary, top, cw, kind, info={"tie": tie} if kind == "majority_vote" else {}
    )


def class_oracle_ece(data, *, bins=None) -> MulticlassECE:
    """Top-label and class-wise ECE against the clean classes (simulations and benchmarks).

    Computed on the annotated items, the same items every other error uses.
    """
    summary = _class_summary(data, bins)
    if not summary.has_truth:
        raise DataError("oracle ECE needs clean labels: the data carry no 'truth'.")
    n = summary.n_cell_items
    top = ((summary.top_bin_truth_sum.values - summary.top_bin_conf_sum.values) / n)[None]
    cw = ((summary.classwise_bin_truth_sum.values - summary.classwise_bin_prob_sum.values) / n)[
        None
    ]
    return _class_results(summary, top, cw, "oracle")
