"""``fit_channels``: one entry point for every point estimator of annotator channels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bayescal._typing import Bins
from bayescal.channels.em import dawid_skene_em, score_bin_em
from bayescal.channels.gmm import constrained_gmm
from bayescal.channels.hui_walter import hui_walter
from bayescal.channels.moments import moment_inverse
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.summaries.summary import Summary, as_summary

__all__ = ["fit_channels", "METHODS"]

#: method name -> estimator on a Summary; the CLI spells the names with dashes.
METHODS: dict[str, Callable[..., ChannelFit]] = {
    "dawid_skene_em": dawid_skene_em,
    "score_bin_em": score_bin_em,
    "hui_walter": hui_walter,
    "gmm": constrained_gmm,
    "moments": moment_inverse,
}


def fit_channels(
    data: Annotations | Summary,
    method: str = "score_bin_em",
    *,
    groups: Bins | str | None = None,
    **options: Any,
) -> ChannelFit:
    """Estimate annotator channels without ground truth (Hanada & Futami, Sec. 4; SPEC §1).

    Parameters
    ----------
    data : Annotations or Summary
        The container (summarised here) or an existing summary.
    method : str
        ``"dawid_skene_em"`` (K >= 3), ``"score_bin_em"`` (K >= 2 with groups),
        ``"hui_walter"`` (K = 2, two groups), ``"gmm"`` (K = 2, L >= 2 groups) or
        ``"moments"`` (K >= 3). Dashes are accepted for underscores.
    groups : None, int, edges or "data"
        Score groups (see :func:`bayescal.summarize`); only with a container.
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
    """
    name = str(method).replace("-", "_")
    if name not in METHODS:
        raise ConfigError(f"unknown method {method!r}; choose one of {sorted(METHODS)}.")
    summary = as_summary(data, groups=groups, caller="fit_channels")
    return METHODS[name](summary, **options)
