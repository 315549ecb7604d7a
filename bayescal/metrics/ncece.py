"""Noise-corrected ECE (NC-ECE) and its sample-use protocols.

``nc_ece(data, channels)`` evaluates with given channels (point or posterior);
``estimate_nc_ece(data, mode=...)`` also fits the channels, with

- ``"split"``: channels on one part, NC-ECE on the other;
- ``"reuse"``: both on all items (valid with fixed bins, paper Prop. 1);
- ``"crossfit"``: for each of F folds, channels fitted without the fold and
  signed bin moments computed on it; moments pooled with weights ``n_k / n``
  before absolute values are taken (paper App. C.4).

Summaries are mergeable, so cross-fitting costs one pass over the data: the
channel sample of fold k is the whole summary minus fold k's.

Layout: :func:`nc_moments` is the numeric kernel (plain arrays in, signed bin
moments out, over the non-empty cells only); :func:`nc_ece` wraps it into a
labelled :class:`~bayescal.metrics.binned.BinnedECE`; :func:`estimate_nc_ece`
handles the sample-use modes on top of both.
"""

from __future__ import annotations

import numbers

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import (
    BinnedECE,
    MulticlassECE,
    _as_summary,
    _cell_targets,
    _channels_for,
    _check_match,
    _class_moments,
    _class_results,
    _class_summary,
    _result,
    corrected_cell_moments,
    summary_cells,
)
from bayescal.metrics.weights import (
    DEFAULT_SHRINKAGE,
    annotator_weights,
    class_weights,
    inverse_confusions,
)
from bayescal.summaries.partition import check_bin_occupancy

__all__ = [
    "nc_ece",
    "nc_moments",
    "estimate_nc_ece",
    "evaluate_recalibrated",
    "recalibrated_values",
    "SAMPLE_MODES",
    "EVALUATION_WEIGHTS",
    "class_nc_ece",
    "estimate_class_nc_ece",
]

SAMPLE_MODES = ("split", "reuse", "crossfit")


def nc_moments(summary, channels, *, weights="equal", lam: float = DEFAULT_SHRINKAGE):
    """Signed NC bin moments per channel draw and the weights used (the numeric kernel).

    ``D_l = (1/n) sum_i (U_i - Z_i) 1(Z_i in B_l)`` with corrected labels
    ``U = sum_j w_j (A_j - a_j) / delta_j`` (Hanada & Futami, Eq. 7; SPEC §1),
    computed over the non-empty (bin, pattern) cells of ``summary`` only and in
    chunks of draws, so memory does not grow with the patterns or with the draws.

    Parameters
    ----------
    summary : Summary
    channels : ChannelFit
        One draw (point fit) or S draws (posterior).
    weights, lam
        Weight rule (see :func:`bayescal.metrics.annotator_weights`).

    Returns
    -------
    moments : ndarray of shape (S, n_bins)
    weights : xarray.DataArray of shape (S, n_annotators)

    Examples
    --------
    >>> from bayescal import ChannelFit, summarize
    >>> from bayescal.simulate import simulate_toy, TOY_FP, TOY_FN
    >>> import numpy as np
    >>> s = summarize(simulate_toy(2000, "shifted", random_state=0), bins=10)
    >>> m, w = nc_moments(s, ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN)))
    >>> m.shape, w.shape
    ((1, 10), (1, 3))
    """
    if summary.n_items == 0:
        raise DataError("the evaluation set has no annotated items; nothing to evaluate.")
    a, b = _channels_for(summary, channels)
    w = annotator_weights(channels, weights, lam=lam)
    return corrected_cell_moments(summary_cells(summary), a, b, w.values), w


def nc_ece(
    data,
    channels,
    *,
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    bins=None,
    bin_strategy: str = "uniform",
) -> BinnedECE:
    """Noise-corrected binned ECE with given channels (the plug-in ``sum_l |D_l|``).

    Parameters
    ----------
    data : Annotations or Summary
        Evaluation items (a summary fixes its own bins).
    channels : ChannelFit
        Point estimate (one draw) or posterior (many draws); the result has one
        NC-ECE per draw, computed from the non-empty (bin, pattern) cells in
        O(draws x cells), memory bounded whatever the draws or the patterns.
    weights : str or array-like
        Weight rule (see :func:`bayescal.metrics.annotator_weights`) or explicit weights.
    bins : int or edges, default 10 equal-width bins (only with a container).

    Returns
    -------
    BinnedECE
        ``ece[draw]``, signed ``bin_moments[draw, bin]``, bin counts, weights used;
        ``info["warnings"]`` holds the sparse-bin warning when there are too many
        bins for the data (see :func:`bayescal.summaries.partition.check_bin_occupancy`).
        This is the raw plug-in; :func:`bayescal.nc_ece_interval` gives the
        bias-aware estimate and interval.

    Examples
    --------
    >>> from bayescal import ChannelFit
    >>> from bayescal.simulate import simulate_toy, TOY_FP, TOY_FN
    >>> import numpy as np
    >>> data = simulate_toy(20000, "shifted", random_state=0)
    >>> known = ChannelFit.known(TOY_FP, 1 - np.array(TOY_FN))
    >>> round(nc_ece(data, known).value, 2)
    0.09
    """
    _check_channel_fit(channels)
    summary = _as_summary(data, bins, bin_strategy)
    moments, w = nc_moments(summary, channels, weights=weights, lam=lam)
    return _result(
        summary,
        moments,
        "nc",
        weights=w,
        info={
            "channels": channels.method,
            "weight_rule": w.attrs["rule"],
            "warnings": _bin_warnings(summary),
        },
    )


def _check_channel_fit(channels) -> None:
    from bayescal.channels.result import ChannelFit

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")


def _bin_warnings(summary) -> list[str]:
    message = check_bin_occupancy(summary.binary.bin_count, stacklevel=4)
    return [] if message is None else [message]


# ---------------------------------------------------------------- sample-use modes
def _fit(summary, method, options):
    from bayescal.channels.fit import fit_channels

    return fit_channels(summary, method, **options)


# One implementation of the sample-use modes for every C: ``fit(summary) -> ChannelFit``
# and ``moments(summary, fit) -> tuple of signed moment arrays`` (one for two classes;
# top-label and class-wise for more).
def _reuse(summ, order, fit, moments):
    s = summ(order)
    f = fit(s)
    return s, moments(s, f), {"channel_fits": [f]}


def _split(summ, order, fit, moments, fraction):
    if not isinstance(fraction, numbers.Real) or not 0 < fraction < 1:
        raise ConfigError(f"fraction must be in (0, 1); got {fraction!r}.")
    cut = int(round(fraction * order.size))
    if cut == 0 or cut == order.size:
        raise DataError(
            f"split of {order.size} items at fraction {fraction} leaves one side empty."
        )
    f = fit(summ(order[:cut]))
    s = summ(order[cut:])
    return s, moments(s, f), {"channel_fits": [f], "n_channel": cut, "n_eval": order.size - cut}


def _crossfit(summ, order, fit, moments, folds):
    if isinstance(folds, bool) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise ConfigError(
            f"cross-fitting needs at least 2 folds; got {folds!r}. With "
            "one fold there is no held-out part: use mode='reuse'."
        )
    if folds > order.size:
        raise DataError(
            f"{folds} folds for {order.size} annotated items: some folds would be empty."
        )
    fold_summaries = [summ(p) for p in np.array_split(order, folds)]
    whole = sum(fold_summaries[1:], fold_summaries[0])
    pooled: tuple = ()
    fits = []
    for fs in fold_summaries:
        f = fit(whole - fs)
        fits.append(f)
        share = fs.n_items / whole.n_items
        # signed moments are pooled before |.| is taken (App. C.4)
        pooled = tuple(p + m * share for p, m in zip(pooled or (0.0,) * 2, moments(fs, f)))
    return whole, pooled, {"folds": int(folds), "channel_fits": fits}


def _sample_use(summ, order, mode, fit, moments, fraction, folds):
    if mode == "reuse":
        return _reuse(summ, order, fit, moments)
    if mode == "split":
        return _split(summ, order, fit, moments, fraction)
    return _crossfit(summ, order, fit, moments, folds)


def estimate_nc_ece(
    data,
    *,
    mode: str = "crossfit",
    channels: str = "score_bin_em",
    channel_options: dict | None = None,
    groups=5,
    bins=10,
    bin_strategy: str = "uniform",
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    folds: int = 5,
    fraction: float = 0.5,
    shuffle: bool = True,
    random_state=0,
) -> BinnedECE:
    """Fit channels and estimate NC-ECE under one sample-use protocol.

    Parameters
    ----------
    data : Annotations
    mode : {"split", "reuse", "crossfit"}
    channels : str
        Channel estimator name for :func:`bayescal.fit_channels`.
    channel_options : dict, optional
        Extra options for the estimator (for example ``{"fallback": "fixed"}``).
    groups, bins : int or edges
        Channel score groups and evaluation bins, fixed before looking at the data
        (equal-mass bins are placed on all items' scores, which the paper's
        guarantees do not cover; prefer fixed edges for formal use).
    folds : int, default 5
        Folds for ``"crossfit"`` (at least 2).
    fraction : float, default 0.5
        Share of items used to fit channels for ``"split"``.
    shuffle : bool, default True
        Random fold / split assignment; with False the split takes the first
        ``fraction`` of the items (the paper's toy protocol) and folds are
        contiguous blocks.
    random_state : int or Generator

    Returns
    -------
    BinnedECE
        The plug-in NC-ECE (Hanada & Futami, Eq. 7; App. C.4 for cross-fitting).
        ``info`` records the mode, folds or split sizes, the channel fits and any
        sparse-bin warning (judged on the evaluation items).

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> r = estimate_nc_ece(simulate_toy(4000, "nonlinear", random_state=0), mode="crossfit")
    >>> r.mode, r.info["folds"]
    ('crossfit', 5)
    """
    from bayescal.summaries.partition import make_edges
    from bayescal.summaries.summary import summarize_arrays

    if not isinstance(data, Annotations):
        raise DataError("estimate_nc_ece needs the item-level container (it must split the items).")
    if mode not in SAMPLE_MODES:
        raise ConfigError(f"mode must be one of {SAMPLE_MODES}; got {mode!r}.")
    options = dict(channel_options or {})
    annotated = np.flatnonzero(data.annotated)
    if annotated.size == 0:
        raise DataError("no annotated items to evaluate.")
    group_edges = make_edges(groups, what="groups")
    bin_edges = make_edges(bins, what="bins", scores=data.score[annotated], strategy=bin_strategy)

    def summ(idx):
        return summarize_arrays(
            data.score[idx],
            data.labels[idx],
            annotators=data.annotators,
            group_edges=group_edges,
            bin_edges=bin_edges,
            truth=None if data.truth is None else data.truth[idx],
            gold=None if data.gold is None else data.gold[idx],
        )

    rng = check_random_state(random_state)
    order = rng.permutation(annotated) if shuffle else annotated
    evaluation, (moments,), info = _sample_use(
        summ,
        order,
        mode,
        lambda s: _fit(s, channels, options),
        lambda s, f: (nc_moments(s, f, weights=weights, lam=lam)[0],),
        fraction,
        folds,
    )
    info["warnings"] = _bin_warnings(evaluation)
    return _result(evaluation, moments, "nc", mode=mode, info=info)


#: The one default weight rule for judging a score (NC-ECE of an original or a
#: recalibrated score): equal weights, as Hanada & Futami's evaluation uses.
#: Fitting a map to corrected targets defaults to the shrunk inverse-variance
#: rule instead (:data:`bayescal.recal.targets.DEFAULT_WEIGHTS`, SPEC §1 "Targets").
EVALUATION_WEIGHTS = "equal"


def evaluate_recalibrated(
    recalibrated_score,
    eval_data,
    channels,
    *,
    bins=10,
    bin_strategy: str = "uniform",
    weights=EVALUATION_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
) -> BinnedECE:
    """NC-ECE of a recalibrated score ``g(Z)`` on fresh items, bins on ``g(Z)``.

    Hanada & Futami, App. E.4-E.5: a fitted map is judged by the noise-corrected
    binned ECE with bins placed on the recalibrated score, on items not used to
    fit it; the channels may come from a separate channel sample. This is the
    one evaluation of recalibrated scores; :func:`bayescal.recal.evaluate_map`
    calls it for its NC-ECE.

    Parameters
    ----------
    recalibrated_score : callable, object with ``predict``, or array-like of shape (n_items,)
        A map ``g`` applied to ``eval_data.score``, or the values ``g(Z)``.
    eval_data : Annotations
        Fresh items, not used to fit ``g``.
    channels : ChannelFit
        Channels for the correction: the ones used for fitting, or a separate
        channel sample (App. E.5).
    bins : int or edges, default 10
        Evaluation bins on ``g(Z)``.
    bin_strategy : {"uniform", "quantile"}, default "uniform"
    weights : str or array-like, default :data:`EVALUATION_WEIGHTS` (``"equal"``)
        Annotator weight rule of the corrected labels.
    lam : float
        Shrinkage of the shrunk inverse-variance rule.

    Returns
    -------
    BinnedECE

    Examples
    --------
    >>> from bayescal import ChannelFit
    >>> from bayescal.simulate import simulate_gaussian
    >>> data = simulate_gaussian(4000, random_state=0)
    >>> ch = ChannelFit.known([0.05, 0.05], [0.75, 0.95])
    >>> r = evaluate_recalibrated(lambda z: z, data, ch)
    >>> r.kind, r.bin_count.size
    ('nc', 10)
    """
    if not isinstance(eval_data, Annotations):
        raise DataError(
            f"evaluation data must be an Annotations container; got {type(eval_data).__name__}."
        )
    g = recalibrated_values(recalibrated_score, eval_data)
    return nc_ece(
        eval_data.with_score(g),
        channels,
        weights=weights,
        lam=lam,
        bins=bins,
        bin_strategy=bin_strategy,
    )


def recalibrated_values(recalibrated, data: Annotations) -> np.ndarray:
    """``g(Z)`` for the items of ``data``: ``recalibrated`` is a fitted map (``predict``),
    a callable, or the values themselves; shape-checked against the items.

    Hanada & Futami, App. E.4 (the evaluated score is ``g(Z)``).

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> d = simulate_toy(5, random_state=0)
    >>> bool((recalibrated_values(lambda z: 1 - z, d) == 1 - d.score).all())
    True
    """
    if hasattr(recalibrated, "predict"):
        g = recalibrated.predict(data.score)
    elif callable(recalibrated):
        g = recalibrated(data.score)
    else:
        g = recalibrated
    g = np.asarray(g, dtype=np.float64)
    if g.shape != (data.n_items,):
        raise DataError(f"recalibrated scores have shape {g.shape}; expected ({data.n_items},).")
    return g


# ---------------------------------------------------------------- C classes
def class_nc_ece(
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
        See :func:`class_weights`.
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
    >>> r = class_nc_ece(data, ChannelFit.known_confusion(pop.confusion))
    >>> round(r.top_label.value, 2), round(pop.binned_ece()["top_label"], 2)
    (0.13, 0.13)
    """
    summary = _class_summary(data, bins)
    _check_match(summary, channels)
    inv = inverse_confusions(channels)
    w = class_weights(channels, weights, lam=lam)
    states, wv = summary.states, w.values

    def target(sl, pat, cls):
        return _cell_targets(states, inv[sl], wv[sl], pat, cls)

    top, cw = _class_moments(summary, target, channels.n_draws)
    return _class_results(
        summary,
        top,
        cw,
        "nc",
        weights=w,
        info={"channels": channels.method, "weight_rule": w.attrs["rule"]},
    )


def estimate_class_nc_ece(
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
        Passed to :func:`bayescal.channels.em.dawid_skene_em` (grouped prevalence unless given).
    groups : channel groups, default "predicted"
        See :func:`bayescal.summaries.summary.summarize`.
    bins : int or edges, default 10
    weights, lam
        See :func:`class_weights`.
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
    >>> r = estimate_class_nc_ece(simulate_multiclass(4000, random_state=0), folds=3)
    >>> r.mode, r.top_label.info["folds"]
    ('crossfit', 3)
    """

    from bayescal.channels.em import dawid_skene_em
    from bayescal.summaries.partition import make_edges
    from bayescal.summaries.summary import resolve_groups, summarize_arrays

    if not isinstance(data, Annotations):
        raise DataError(
            "estimate_class_nc_ece needs the item-level MulticlassAnnotations (it splits "
            "the items)."
        )
    if mode not in SAMPLE_MODES:
        raise ConfigError(f"mode must be one of {SAMPLE_MODES}; got {mode!r}.")
    options = dict(channel_options or {})
    kind, group_edges, group_values = resolve_groups(groups, data, n_classes=data.n_classes)
    levels = None if group_values is None else np.unique(group_values)
    bin_edges = make_edges(bins, what="bins")

    def summ(idx):
        return summarize_arrays(
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

    def moments(summary, fit):
        r = class_nc_ece(summary, fit, weights=weights, lam=lam)
        return r.top_label.bin_moments.values, r.classwise.bin_moments.values

    annotated = np.flatnonzero(data.annotated)
    order = check_random_state(random_state).permutation(annotated) if shuffle else annotated
    whole, (top, cw), info = _sample_use(
        summ,
        order,
        mode,
        lambda s: dawid_skene_em(s, **{"prevalence": "grouped", **options}),
        moments,
        fraction,
        folds,
    )
    out = _class_results(whole, top, cw, "nc", mode=mode, weights=None)
    return _with_mode(out, mode, **info)


def _with_mode(result: MulticlassECE, mode: str, **info) -> MulticlassECE:
    for part in (result.top_label, result.classwise):
        part.mode = mode
        part.info.update(info)
    return result
