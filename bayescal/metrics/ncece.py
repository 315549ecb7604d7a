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
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import (
    BinnedECE,
    _as_summary,
    _channels_for,
    _result,
    binned_ece_from_targets,
    corrected_pattern_targets,
)
from bayescal.metrics.weights import DEFAULT_SHRINKAGE, annotator_weights

__all__ = [
    "nc_ece",
    "estimate_nc_ece",
    "evaluate_recalibrated",
    "recalibrated_values",
    "SAMPLE_MODES",
    "EVALUATION_WEIGHTS",
]

SAMPLE_MODES = ("split", "reuse", "crossfit")


def nc_ece(
    data,
    channels,
    *,
    weights="equal",
    lam: float = DEFAULT_SHRINKAGE,
    bins=None,
    bin_strategy: str = "uniform",
) -> BinnedECE:
    """Noise-corrected binned ECE with given channels.

    Parameters
    ----------
    data : Annotations or Summary
        Evaluation items (a summary fixes its own bins).
    channels : ChannelFit
        Point estimate (one draw) or posterior (many draws); the result has one
        NC-ECE per draw, computed from bin sums in O(draws x bins x 3**K).
    weights : str or array-like
        Weight rule (see :func:`bayescal.metrics.annotator_weights`) or explicit weights.
    bins : int or edges, default 10 equal-width bins (only with a container).

    Returns
    -------
    BinnedECE
        ``ece[draw]``, signed ``bin_moments[draw, bin]``, bin counts, weights used.

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
    from bayescal.channels.result import ChannelFit

    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    summary = _as_summary(data, bins, bin_strategy)
    a, b = _channels_for(summary, channels)
    w = annotator_weights(channels, weights, lam=lam)
    targets = corrected_pattern_targets(summary.states, a, b, w.values)
    return binned_ece_from_targets(
        summary,
        targets,
        "nc",
        weights=w,
        info={"channels": channels.method, "weight_rule": w.attrs["rule"]},
    )


def _fit(summary, method, options):
    from bayescal.channels.fit import fit_channels

    return fit_channels(summary, method, **options)


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
        ``info`` records the mode, folds or split sizes, and the channel fits.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> r = estimate_nc_ece(simulate_toy(4000, "nonlinear", random_state=0), mode="crossfit")
    >>> r.mode, r.info["folds"]
    ('crossfit', 5)
    """
    from bayescal.data.container import Annotations
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
        )

    rng = check_random_state(random_state)
    order = rng.permutation(annotated) if shuffle else annotated
    if mode == "reuse":
        s = summ(order)
        fit = _fit(s, channels, options)
        out = nc_ece(s, fit, weights=weights, lam=lam)
        out.mode, out.info["channel_fits"] = "reuse", [fit]
        return out
    if mode == "split":
        if not 0 < fraction < 1:
            raise ConfigError(f"fraction must be in (0, 1); got {fraction}.")
        cut = int(round(fraction * order.size))
        if cut == 0 or cut == order.size:
            raise DataError(
                f"split of {order.size} items at fraction {fraction} leaves one side empty."
            )
        fit = _fit(summ(order[:cut]), channels, options)
        out = nc_ece(summ(order[cut:]), fit, weights=weights, lam=lam)
        out.mode = "split"
        out.info.update(channel_fits=[fit], n_channel=cut, n_eval=order.size - cut)
        return out
    if not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ConfigError(
            f"cross-fitting needs at least 2 folds; got {folds!r}. With "
            "one fold there is no held-out part: use mode='reuse'."
        )
    if folds > order.size:
        raise DataError(
            f"{folds} folds for {order.size} annotated items: some folds would be empty."
        )
    parts = np.array_split(order, folds)
    fold_summaries = [summ(p) for p in parts]
    whole = sum(fold_summaries[1:], fold_summaries[0])
    pooled = None
    fits = []
    for fs in fold_summaries:
        fit = _fit(whole - fs, channels, options)
        fits.append(fit)
        r = nc_ece(fs, fit, weights=weights, lam=lam)
        m = r.bin_moments.values * (fs.n_items / whole.n_items)
        pooled = m if pooled is None else pooled + m
    out = _result(whole, pooled, "nc", mode="crossfit", info={"folds": folds, "channel_fits": fits})
    return out


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
