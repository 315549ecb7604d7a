"""``fit_channels``: one entry point for every point estimator of annotator channels."""

from __future__ import annotations

from bayescal.errors import ConfigError

__all__ = ["fit_channels", "METHODS"]

#: method name -> (module, function); CLI spells them with dashes.
METHODS = {
    "dawid_skene_em": ("bayescal.channels.em", "dawid_skene_em"),
    "score_bin_em": ("bayescal.channels.em", "score_bin_em"),
    "hui_walter": ("bayescal.channels.hui_walter", "hui_walter"),
    "gmm": ("bayescal.channels.gmm", "constrained_gmm"),
    "moments": ("bayescal.channels.moments", "moment_inverse"),
}


def fit_channels(data, method: str = "score_bin_em", *, groups=None, **options):
    """Estimate annotator channels without ground truth.

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
    import importlib

    from bayescal.data.container import Annotations
    from bayescal.summaries.summary import Summary, summarize

    name = str(method).replace("-", "_")
    if name not in METHODS:
        raise ConfigError(f"unknown method {method!r}; choose one of {sorted(METHODS)}.")
    if isinstance(data, Annotations):
        summary = summarize(data, groups=groups)
    elif isinstance(data, Summary):
        if groups is not None:
            raise ConfigError(
                "groups are fixed when the summary is built; pass groups to summarize()."
            )
        summary = data
    else:
        raise ConfigError(
            f"fit_channels expects Annotations or a Summary; got {type(data).__name__}."
        )
    module, func = METHODS[name]
    return getattr(importlib.import_module(module), func)(summary, **options)
