"""Evaluation of a fitted map on fresh items (Hanada & Futami, App. E.4, E.5).

Bins are placed on the recalibrated score ``g(Z)``; NC-ECE may use a separate
channel sample (the held-out channels replace the fitting channels only here).
The NC-ECE part is what :func:`bayescal.metrics.evaluate_recalibrated` computes (the one
evaluation of recalibrated scores, with its default weight rule), on the one summary of
``g(Z)`` the soft-vote and reference-label errors use too: the items are summarised once
per evaluation, not once per error (a recalibration choice evaluates 31 maps).
"""

from __future__ import annotations

from typing import Any

from bayescal._typing import Bins, Weights
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.metrics.binned import BinnedECE, oracle_ece, soft_vote_ece
from bayescal.metrics.ncece import EVALUATION_WEIGHTS, nc_ece, recalibrated_values
from bayescal.metrics.weights import DEFAULT_SHRINKAGE
from bayescal.summaries.summary import as_summary

__all__ = ["evaluate_map"]


def evaluate_map(
    recalibrated: Any,
    data: Annotations,
    *,
    channels: ChannelFit | None = None,
    bins: Bins = 10,
    bin_strategy: str = "uniform",
    weights: Weights = EVALUATION_WEIGHTS,
    lam: float = DEFAULT_SHRINKAGE,
) -> dict[str, BinnedECE]:
    """Binned calibration errors of ``g(Z)`` on evaluation items, bins on ``g(Z)``.

    Hanada & Futami, App. E.4-E.5: a fitted map is judged on fresh items with bins on
    ``g(Z)``; NC-ECE is Definition 4 (Sec. 3).

    Parameters
    ----------
    recalibrated : object with ``predict``, callable, or array-like of shape (n_items,)
        The map ``g`` (a single map or a :class:`~bayescal.recal.PosteriorMap`, whose
        posterior-mean prediction is evaluated) or the values ``g(Z)``.
    data : Annotations
        Fresh items not used to fit ``g`` (or its channels, ideally).
    channels : ChannelFit, optional
        Channels for NC-ECE: the fitting channels, or a separate channel sample
        (App. E.5). Without them NC-ECE is not computed.
    bins : int or edges, default 10
        Evaluation bins on ``g(Z)``.
    weights : str or array-like, default ``"equal"``
        Annotator weights for NC-ECE: the one evaluation default,
        :data:`bayescal.metrics.ncece.EVALUATION_WEIGHTS`.
    lam : float
        Shrinkage of the shrunk inverse-variance rule.

    Returns
    -------
    dict
        ``"soft_vote"``, and ``"nc"`` (with channels) and ``"oracle"`` (with truth),
        each a :class:`~bayescal.BinnedECE`.

    Examples
    --------
    >>> from bayescal import ChannelFit
    >>> from bayescal.recal import HistogramMap
    >>> from bayescal.simulate import simulate_gaussian
    >>> fit_d = simulate_gaussian(3000, random_state=0)
    >>> eval_d = simulate_gaussian(3000, random_state=1)
    >>> ch = ChannelFit.known([0.05, 0.05], [0.75, 0.95])
    >>> g = HistogramMap(bins=14).fit_corrected(fit_d, ch)
    >>> out = evaluate_map(g, eval_d, channels=ch)
    >>> sorted(out)
    ['nc', 'oracle', 'soft_vote']
    """
    if not isinstance(data, Annotations):
        raise DataError(
            f"evaluation data must be an Annotations container; got {type(data).__name__}."
        )
    g = recalibrated_values(recalibrated, data)
    if bin_strategy not in ("uniform", "quantile"):
        raise ConfigError(f"bin_strategy must be 'uniform' or 'quantile'; got {bin_strategy!r}.")
    # one score group, as each error summarises a container (metrics.binned._as_summary)
    summary = as_summary(
        data.with_score(g), groups=1, bins=bins, bin_strategy=bin_strategy, caller="evaluate_map"
    )
    out = {"soft_vote": soft_vote_ece(summary)}
    if channels is not None:
        out["nc"] = nc_ece(summary, channels, weights=weights, lam=lam)
    if data.truth is not None:
        out["oracle"] = oracle_ece(summary)
    return out
