"""Multiclass noise-corrected calibration errors: top-label and class-wise NC-ECE (SPEC §3).

Corrected one-hot targets
    Annotator ``j`` answers through ``T_j[y, a] = P(A_j = a | Y = y)``, so
    ``E[e_{A_j} | Y = y] = T_j^T e_y`` and ``u_j = (T_j^T)^{-1} e_{A_j}`` has
    ``E[u_j | Y] = e_Y`` (row ``A_j`` of ``T_j^{-1}``). An item's target is
    ``U = sum_{j answered} w_j u_j / sum_{j answered} w_j``: the renormalisation
    over the annotators who answered keeps ``E[U | Y, x] = e_Y`` when missingness
    is independent of ``Y`` given ``x``. ``U`` sums to one (``T_j 1 = 1``, and the
    weights do not depend on the class) but may leave [0, 1]; it is never
    clipped. With C = 2, ``U[1]`` is the binary ``(A - a) / (b - a)`` (SPEC §1).
Weights (one per annotator and draw)
    ``"equal"``; ``"inverse_variance"``: ``w_j`` proportional to ``1 / v_j`` with
    ``v_j = sum_k sum_y rho_y (sum_a T_j[y, a] (T_j^{-1})[a, k]**2 - 1(y = k))``,
    the trace of the covariance of ``u_j`` around ``e_Y`` under the fitted
    channels and the marginal prevalence ``rho`` (it minimises ``E|U - e_Y|**2``
    for independent annotators; for C = 2 the two classes have equal variances
    and this is the binary inverse-variance rule); ``"shrunk_inverse_variance"``:
    ``(1 - lam) w_IV + lam / K``; or explicit weights of shape (K,). Class-specific
    weights would also be unbiased per class but would break ``sum_k U[k] = 1``,
    which the corrected cross-entropy of recalibration relies on.
Top-label NC-ECE
    Bins on the confidence ``p_c`` (``c = argmax p``): signed moments
    ``D_m = (1/n) sum_{i in B_m} (U_i[c_i] - p_{c_i}(x_i))``, unbiased for
    ``(1/n) sum (1(Y_i = c_i) - p_{c_i})``; NC-ECE ``= sum_m |D_m|``.
Class-wise NC-ECE
    For each class ``k``, bins on ``p_k``: ``D_km = (1/n) sum_{i: p_ik in B_m}
    (U_i[k] - p_ik)``; ``sum_m |D_km|`` averaged over classes.

Every target is a function of the response pattern, so the moments come from
the summary's (bin, class, pattern) cells: memory is (draws x observed cells),
processed in chunks of draws, independent of ``(C+1)**K``. Baselines on the same
bins: soft vote (answer shares), majority vote (plurality; ties split or to the
lowest class) and, with truth, the oracle. The derivation is in docs/multiclass.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.dims import ANNOTATOR, BIN, CLASS, DRAW
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import BinnedECE
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, check_weights
from bayescal.summaries.partition import make_edges
from bayescal.summaries.summary import (
    Summary,
    resolve_groups,
    summarize_multiclass,
    summarize_multiclass_arrays,
)

__all__ = [
    "ClasswiseECE",
    "MulticlassECE",
    "MULTICLASS_WEIGHT_RULES",
    "VOTE_TIES",
    "inverse_confusions",
    "multiclass_weights",
    "corrected_onehot_targets",
    "multiclass_nc_ece",
    "multiclass_vote_ece",
    "multiclass_oracle_ece",
    "estimate_multiclass_nc_ece",
]

MULTICLASS_WEIGHT_RULES = ("equal", "inverse_variance", "shrunk_inverse_variance")

#: Plurality-vote ties: ``"split"`` shares the vote equally among the tied
#: classes (deterministic and symmetric), ``"lowest"`` gives it to the lowest index.
VOTE_TIES = ("split", "lowest")

#: Draw chunks are sized so that a (draws, cells) array holds at most this many numbers.
_CHUNK_ELEMENTS = 10_000_000

#: A confusion matrix whose smallest singular value is below this is treated as singular.
_SINGULAR = 1e-10


# ----------------------------------------------------------------- result types
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


# ----------------------------------------------------------------- targets
def inverse_confusions(channels) -> np.ndarray:
    """``T_j^{-1}`` per draw and annotator, shape (S, K, C, C) (SPEC §3).

    Raises
    ------
    DataError
        When a confusion matrix is singular (smallest singular value below 1e-10):
        its answers cannot be corrected.
    """
    t = channels.confusion.values
    sv = np.linalg.svd(t, compute_uv=False).min(axis=2)  # (S, K)
    if (sv < _SINGULAR).any():
        s, j = np.argwhere(sv < _SINGULAR)[0]
        raise DataError(
            f"annotator {channels.annotators[j]!r} has a singular confusion matrix (draw {s}, "
            f"smallest singular value {sv[s, j]:.3g}): its answers cannot be corrected. An "
            "annotator who never uses some class, or answers independently of the class, carries "
            "no invertible information; drop it before computing NC-ECE."
        )
    return np.linalg.inv(t)


def multiclass_weights(channels, rule="equal", *, lam: float = DEFAULT_SHRINKAGE) -> xr.DataArray:
    """Annotator weights per draw for the corrected one-hot targets (see module docstring).

    Parameters
    ----------
    channels : ChannelFit
    rule : str or array-like of shape (n_annotators,)
        One of :data:`MULTICLASS_WEIGHT_RULES`, or explicit non-negative weights
        summing to one.
    lam : float in [0, 1]
        Shrinkage toward equal weights for ``"shrunk_inverse_variance"``.

    Returns
    -------
    xarray.DataArray of shape (draw, annotator)
        Rows sum to one.

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> ch = ChannelFit.known_confusion([[[0.9, 0.1], [0.1, 0.9]], [[0.7, 0.3], [0.3, 0.7]]])
    >>> multiclass_weights(ch, "inverse_variance").values.round(3).tolist()  # binary IV rule
    [[0.903, 0.097]]
    """
    t = channels.confusion.values
    s, k, _, _ = t.shape
    if not isinstance(rule, str):
        w = np.broadcast_to(check_weights(rule, k)[None, :], (s, k)).copy()
    elif rule == "equal":
        w = np.full((s, k), 1.0 / k)
    elif rule in ("inverse_variance", "shrunk_inverse_variance"):
        inv = inverse_confusions(channels)
        rho = channels.marginal_prevalence.values  # (S, C)
        second = np.einsum("sjya,sja->sjy", t, (inv**2).sum(axis=3))  # E[|u_j|^2 | Y = y]
        v = np.einsum("sy,sjy->sj", rho, second) - 1.0  # minus |e_y|^2 = 1
        inv_v = 1.0 / np.maximum(v, 1e-300)
        w = inv_v / inv_v.sum(axis=1, keepdims=True)
        if rule == "shrunk_inverse_variance":
            if not 0.0 <= lam <= 1.0:
                raise ConfigError(f"lam must be in [0, 1]; got {lam}.")
            w = (1 - lam) * w + lam / k
    else:
        raise ConfigError(
            f"unknown weight rule {rule!r}; choose one of {MULTICLASS_WEIGHT_RULES} or pass "
            "weights."
        )
    return xr.DataArray(
        w,
        dims=(DRAW, ANNOTATOR),
        coords={
            DRAW: channels.confusion[DRAW].values,
            ANNOTATOR: channels.confusion[ANNOTATOR].values,
        },
        name="weights",
        attrs={"rule": rule if isinstance(rule, str) else "explicit"},
    )


def _cell_targets(states, inv, w, cell_pattern, cell_class) -> np.ndarray:
    """``U[d, cell] = U_{pattern(cell)}[class(cell)]`` for draws d, shape (S, n_cells)."""
    s_draws, k, c, _ = inv.shape
    num = np.zeros((s_draws, cell_pattern.size))
    den = np.zeros_like(num)
    for j in range(k):
        s = states[cell_pattern, j].astype(np.int64)
        ans = s < c
        wj = w[:, j, None] * ans
        num += wj * inv[:, j, np.where(ans, s, 0), cell_class]
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
        See :func:`multiclass_weights`.

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
    w = multiclass_weights(channels, weights, lam=lam).values
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


# ----------------------------------------------------------------- moments
def _chunks(n_draws, n_cells):
    size = max(1, _CHUNK_ELEMENTS // max(1, n_cells))
    return [slice(i, min(i + size, n_draws)) for i in range(0, n_draws, size)]


def _bin_matrix(index, n_out):
    from scipy import sparse

    return sparse.csr_matrix(
        (np.ones(index.size), (np.arange(index.size), index)), shape=(index.size, n_out)
    )


def _moments(summary, target_of_cells, n_draws):
    """Signed top-label (S, M) and class-wise (S, C, M) moments from cell targets."""
    ds = summary.dataset
    n = summary.n_cell_items
    if n == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    m, c = summary.n_bins, summary.n_classes
    top_p, top_c = ds["top_cell_pattern"].values, ds["top_cell_class"].values
    top_cnt = ds["top_cell_count"].values.astype(np.float64)
    top_to_bin = _bin_matrix(ds["top_cell_bin"].values, m)
    cw_p, cw_c = ds["classwise_cell_pattern"].values, ds["classwise_cell_class"].values
    cw_cnt = ds["classwise_cell_count"].values.astype(np.float64)
    cw_to_bin = _bin_matrix(cw_c.astype(np.int64) * m + ds["classwise_cell_bin"].values, c * m)
    top = np.empty((n_draws, m))
    cw = np.empty((n_draws, c * m))
    for sl in _chunks(n_draws, max(top_p.size, cw_p.size)):
        top[sl] = (top_to_bin.T @ (target_of_cells(sl, top_p, top_c) * top_cnt).T).T
        cw[sl] = (cw_to_bin.T @ (target_of_cells(sl, cw_p, cw_c) * cw_cnt).T).T
    top = (top - summary.top_bin_conf_sum.values) / n
    cw = (cw.reshape(n_draws, c, m) - summary.classwise_bin_prob_sum.values) / n
    return top, cw


def _results(summary, top, cw, kind, *, mode="given", info=None, weights=None) -> MulticlassECE:
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


def _as_summary(data, bins):

    if isinstance(data, Summary):
        if bins is not None:
            raise ConfigError("bins are fixed when the summary is built; pass bins to the summary.")
        return data
    if isinstance(data, MulticlassAnnotations):
        return summarize_multiclass(data, groups="all", bins=10 if bins is None else bins)
    raise DataError(f"expected MulticlassAnnotations or a Summary; got {type(data).__name__}.")


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


# ----------------------------------------------------------------- public errors
def multiclass_nc_ece(
    data, channels, *, weights="equal", lam: float = DEFAULT_SHRINKAGE, bins=None
) -> MulticlassECE:
    """Top-label and class-wise NC-ECE with given channels (SPEC §3).

    Parameters
    ----------
    data : MulticlassAnnotations or Summary
        Evaluation items (a summary fixes its own bins).
    channels : ChannelFit
        Confusion matrices: a point fit (one draw) or a posterior (many draws); the
        result has one NC-ECE per draw.
    weights : str or array-like, default "equal"
        See :func:`multiclass_weights`.
    lam : float
        Shrinkage for ``"shrunk_inverse_variance"``.
    bins : int or edges, default 10 equal-width bins (only with a container).

    Returns
    -------
    MulticlassECE

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> from bayescal.simulate import multiclass_population, simulate_multiclass
    >>> pop = multiclass_population(3, temperature=2.0)
    >>> data = simulate_multiclass(50_000, population=pop, random_state=0)
    >>> r = multiclass_nc_ece(data, ChannelFit.known_confusion(pop.confusion))
    >>> round(r.top_label.value, 2), round(pop.binned_ece()["top_label"], 2)
    (0.13, 0.13)
    """
    summary = _as_summary(data, bins)
    _check_match(summary, channels)
    inv = inverse_confusions(channels)
    w = multiclass_weights(channels, weights, lam=lam)
    states, wv = summary.states, w.values

    def target(sl, pat, cls):
        return _cell_targets(states, inv[sl], wv[sl], pat, cls)

    top, cw = _moments(summary, target, channels.n_draws)
    return _results(
        summary,
        top,
        cw,
        "nc",
        weights=w,
        info={"channels": channels.method, "weight_rule": w.attrs["rule"]},
    )


def multiclass_vote_ece(data, kind: str = "majority_vote", *, tie: str = "split", bins=None):
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
    >>> r = multiclass_vote_ece(simulate_multiclass(2000, random_state=0), "soft_vote")
    >>> r.kind, r.classwise.class_ece.shape
    ('soft_vote', (1, 3))
    """
    if kind not in ("majority_vote", "soft_vote"):
        raise ConfigError(f"kind must be 'majority_vote' or 'soft_vote'; got {kind!r}.")
    if tie not in VOTE_TIES:
        raise ConfigError(f"tie must be one of {VOTE_TIES}; got {tie!r}.")
    summary = _as_summary(data, bins)
    votes = _vote_targets(summary.states, summary.n_classes, kind, tie)

    def target(sl, pat, cls):
        return votes[pat, cls][None]

    top, cw = _moments(summary, target, 1)
    return _results(summary, top, cw, kind, info={"tie": tie} if kind == "majority_vote" else {})


def multiclass_oracle_ece(data, *, bins=None) -> MulticlassECE:
    """Top-label and class-wise ECE against the clean classes (simulations and benchmarks).

    Computed on the annotated items, the same items every other error uses.
    """
    summary = _as_summary(data, bins)
    if not summary.has_truth:
        raise DataError("oracle ECE needs clean labels: the data carry no 'truth'.")
    n = summary.n_cell_items
    top = ((summary.top_bin_truth_sum.values - summary.top_bin_conf_sum.values) / n)[None]
    cw = ((summary.classwise_bin_truth_sum.values - summary.classwise_bin_prob_sum.values) / n)[
        None
    ]
    return _results(summary, top, cw, "oracle")


# ----------------------------------------------------------------- sample use
SAMPLE_MODES = ("split", "reuse", "crossfit")


def estimate_multiclass_nc_ece(
    data,
    *,
    mode: str = "crossfit",
    channel_options: dict | None = None,
    groups="predicted",
    bins=10,
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    folds: int = 5,
    fraction: float = 0.5,
    shuffle: bool = True,
    random_state=0,
) -> MulticlassECE:
    """Fit multiclass channels and estimate NC-ECE under one sample-use protocol.

    ``"split"``: channels on a ``fraction`` of the items, NC-ECE on the rest;
    ``"reuse"``: both on all items; ``"crossfit"``: for each of ``folds`` folds,
    channels fitted without the fold and signed bin moments computed on it,
    pooled with weights ``n_k / n`` before absolute values are taken (the binary
    protocol of Hanada & Futami, App. C.4, SPEC §1, applied to SPEC §3).

    Parameters
    ----------
    data : MulticlassAnnotations
    mode : {"split", "reuse", "crossfit"}
    channel_options : dict, optional
        Passed to :func:`bayescal.channels.em.dawid_skene_em`.
    groups : channel groups, default "predicted"
        See :func:`bayescal.summaries.summary.summarize`.
    bins : int or edges, default 10
    weights, lam
        See :func:`multiclass_weights`.
    folds : int, default 5
    fraction : float, default 0.5
    shuffle : bool, default True
        Random assignment to folds / sides; False takes contiguous blocks.
    random_state : None, int or Generator, default 0

    Returns
    -------
    MulticlassECE
        ``info["channel_fits"]`` holds the fitted channels.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> r = estimate_multiclass_nc_ece(simulate_multiclass(4000, random_state=0), folds=3)
    >>> r.mode, r.top_label.info["folds"]
    ('crossfit', 3)
    """

    if not isinstance(data, MulticlassAnnotations):
        raise DataError(
            "estimate_multiclass_nc_ece needs the item-level MulticlassAnnotations (it splits "
            "the items)."
        )
    if mode not in SAMPLE_MODES:
        raise ConfigError(f"mode must be one of {SAMPLE_MODES}; got {mode!r}.")
    options = dict(channel_options or {})
    kind, group_edges, group_values = resolve_groups(groups, data, n_classes=data.n_classes)
    levels = None if group_values is None else np.unique(group_values)
    bin_edges = make_edges(bins, what="bins")

    def summ(idx):
        return summarize_multiclass_arrays(
            data.probs[idx],
            data.labels[idx],
            annotators=data.annotators,
            classes=data.classes,
            bin_edges=bin_edges,
            grouping=kind,
            group_edges=group_edges,
            group_values=None if group_values is None else group_values[idx],
            group_levels=levels,
            truth=None if data.truth is None else data.truth[idx],
        )

    def ece(summary, fit):
        return multiclass_nc_ece(summary, fit, weights=weights, lam=lam)

    annotated = np.flatnonzero(data.annotated)
    order = check_random_state(random_state).permutation(annotated) if shuffle else annotated
    if mode == "reuse":
        s = summ(order)
        fit = dawid_skene_em(s, **{"prevalence": "grouped", **options})
        out = ece(s, fit)
        return _with_mode(out, "reuse", channel_fits=[fit])
    if mode == "split":
        if not 0 < fraction < 1:
            raise ConfigError(f"fraction must be in (0, 1); got {fraction}.")
        cut = int(round(fraction * order.size))
        if cut == 0 or cut == order.size:
            raise DataError(
                f"split of {order.size} items at fraction {fraction} leaves a side empty."
            )
        fit = dawid_skene_em(summ(order[:cut]), **{"prevalence": "grouped", **options})
        out = ece(summ(order[cut:]), fit)
        return _with_mode(out, "split", channel_fits=[fit], n_channel=cut, n_eval=order.size - cut)
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ConfigError(
            f"cross-fitting needs at least 2 folds; got {folds!r}. With one fold there is no "
            "held-out part: use mode='reuse'."
        )
    if folds > order.size:
        raise DataError(f"{folds} folds for {order.size} annotated items: some folds are empty.")
    parts = [summ(p) for p in np.array_split(order, folds)]
    whole = sum(parts[1:], parts[0])
    fits, top, cw = [], 0.0, 0.0
    for part in parts:
        fit = dawid_skene_em(whole - part, **{"prevalence": "grouped", **options})
        fits.append(fit)
        r = ece(part, fit)
        share = part.n_items / whole.n_items
        top = top + r.top_label.bin_moments.values * share
        cw = cw + r.classwise.bin_moments.values * share
    out = _results(whole, top, cw, "nc", mode="crossfit", weights=None)
    return _with_mode(out, "crossfit", channel_fits=fits, folds=folds)


def _with_mode(result: MulticlassECE, mode: str, **info) -> MulticlassECE:
    for part in (result.top_label, result.classwise):
        part.mode = mode
        part.info.update(info)
    return result
