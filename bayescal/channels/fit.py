"""``fit_channels``: one entry point for every point estimator of annotator channels.

Binary data (:class:`Annotations`, a two-class :class:`Summary`) go to the
estimators in :data:`METHODS`; multiclass data (:class:`MulticlassAnnotations`,
a summary of more than two classes) go to those in :data:`MULTICLASS_METHODS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bayescal._typing import Bins
from bayescal.channels.em import dawid_skene_em, score_bin_em
from bayescal.channels.gmm import constrained_gmm
from bayescal.channels.hui_walter import hui_walter
from bayescal.channels.moments import moment_inverse
from bayescal.channels.multiclass_em import multiclass_dawid_skene_em
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.summaries.summary import Summary, as_summary, summarize_multiclass

__all__ = ["fit_channels", "METHODS", "MULTICLASS_METHODS"]

#: method name -> estimator on a Summary; the CLI spells the names with dashes.
METHODS: dict[str, Callable[..., ChannelFit]] = {
    "dawid_skene_em": dawid_skene_em,
    "score_bin_em": score_bin_em,
    "hui_walter": hui_walter,
    "gmm": constrained_gmm,
    "moments": moment_inverse,
}

#: method name -> estimator on a summary of more than two classes (SPEC §3).
MULTICLASS_METHODS: dict[str, Callable[..., ChannelFit]] = {
    "dawid_skene_em": multiclass_dawid_skene_em,
}


def fit_channels(
    data: Annotations | Summary,
    method: str | None = None,
    *,
    groups: Bins | str | None = None,
    **options: Any,
) -> ChannelFit:
    """Estimate annotator channels without ground truth (Hanada & Futami, Sec. 4; SPEC §1, §3).

    Parameters
    ----------
    data : Annotations, MulticlassAnnotations or Summary
        The container (summarised here) or an existing summary.
    method : str, optional
        Binary data: ``"dawid_skene_em"`` (K >= 3), ``"score_bin_em"`` (K >= 2
        with groups; the default), ``"hui_walter"`` (K = 2, two groups),
        ``"gmm"`` (K = 2, L >= 2 groups) or ``"moments"`` (K >= 3). Multiclass
        data: ``"dawid_skene_em"`` (the default; confusion matrices with one
        class prevalence per channel group, see
        :func:`~bayescal.channels.multiclass_em.multiclass_dawid_skene_em`).
        Dashes are accepted for underscores.
    groups : None, int, edges or str
        Binary: score groups (see :func:`bayescal.summarize`). Multiclass:
        channel groups (default ``"predicted"``, see
        :func:`~bayescal.summaries.summary.summarize`). Only with
        a container.
    **options
        Passed to the estimator (for example ``random_state``, ``fallback``).

    Returns
    -------
    ChannelFit

    Examples
    --------
    >>> from bayescal import fit_channels
    >>> from bayescal.simulate import simulate_toy
    >>> fit = fit_channels(simulate_toy(5000, random_state=0), method="score_bin_em", groups=5)
    >>> fit.annotators
    ['a1', 'a2', 'a3']
    >>> from bayescal.simulate import simulate_multiclass
    >>> fit_channels(simulate_multiclass(2000, 3, random_state=0)).confusion.shape
    (1, 3, 3, 3)
    """
    if isinstance(data, (Annotations, Summary)) and data.n_classes > 2:
        return _fit_multiclass(data, method, groups, options)
    name = str("score_bin_em" if method is None else method).replace("-", "_")
    if name not in METHODS:
        hint = (
            "" if name not in MULTICLASS_METHODS else " (multiclass methods need multiclass data)"
        )
        raise ConfigError(f"unknown method {method!r}; choose one of {sorted(METHODS)}{hint}.")
    summary = as_summary(data, groups=groups, caller="fit_channels")
    return METHODS[name](summary, **options)


def _fit_multiclass(data, method, groups, options) -> ChannelFit:
    name = str("dawid_skene_em" if method is None else method).replace("-", "_")
    if name not in MULTICLASS_METHODS:
        raise ConfigError(
            f"method {method!r} is not available for multiclass data; choose one of "
            f"{sorted(MULTICLASS_METHODS)} (binary methods such as score_bin_em need binary "
            "data: a score and 0/1 answers)."
        )
    if isinstance(data, Summary):
        if groups is not None:
            raise ConfigError(
                "groups are fixed when the summary is built; pass groups to summarize_multiclass()."
            )
        summary = data
    else:
        summary = summarize_multiclass(data, groups="predicted" if groups is None else groups)
    return MULTICLASS_METHODS[name](summary, **options)
