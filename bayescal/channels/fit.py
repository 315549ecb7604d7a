"""``fit_channels``: one entry point and one registry of the point estimators of channels.

:data:`METHODS` maps a method name to a :class:`Method`: the estimator (on a
:class:`~bayescal.summaries.summary.Summary`) and what it requires. The one EM
(:mod:`bayescal.channels.em`) works for every number of classes; Hui–Walter, the
constrained GMM and the moment inverse read the binary view and require two
classes. The class requirement is checked here, before fitting, with a message
naming the requirement and the alternative; the annotator and group requirements
are checked by each estimator's design check, which says why a design is not
identified (:mod:`bayescal.channels.identification`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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

__all__ = ["fit_channels", "METHODS", "Method"]


@dataclass(frozen=True)
class Method:
    """A registered channel estimator and what it requires of the data."""

    estimator: Callable[..., ChannelFit]
    requires: tuple[str, ...]
    two_classes_only: bool = False


#: method name -> estimator and requirements; the CLI spells the names with dashes.
METHODS: dict[str, Method] = {
    "dawid_skene_em": Method(dawid_skene_em, ("K >= 3 (or gold items)",)),
    "score_bin_em": Method(score_bin_em, ("K >= 3, or K = 2 with two groups (or gold items)",)),
    "hui_walter": Method(hui_walter, ("two classes", "K = 2", "two groups"), True),
    "gmm": Method(constrained_gmm, ("two classes", "K = 2", "two groups or more"), True),
    "moments": Method(moment_inverse, ("two classes", "K >= 3"), True),
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
    data : Annotations or Summary
        The container (summarised here) or an existing summary, of any number of classes.
    method : str, optional
        A name in :data:`METHODS`: ``"dawid_skene_em"`` (the default for C > 2; grouped by
        the summary's groups for C > 2, pooled for C = 2), ``"score_bin_em"`` (the grouped
        EM; the default for C = 2), and, for two classes only, ``"hui_walter"`` (K = 2, two
        groups), ``"gmm"`` (K = 2, L >= 2 groups), ``"moments"`` (K >= 3). Dashes are
        accepted for underscores.
    groups : None, int, edges or str
        Channel groups (see :func:`bayescal.summarize`); only with a container.
    **options
        Passed to the estimator (for example ``random_state``, ``prevalence``, ``fallback``).

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
    c = data.n_classes if isinstance(data, (Annotations, Summary)) else 2
    default = "score_bin_em" if c == 2 else "dawid_skene_em"
    name = str(default if method is None else method).replace("-", "_")
    if name not in METHODS:
        raise ConfigError(f"unknown method {method!r}; choose one of {sorted(METHODS)}.")
    entry = METHODS[name]
    if entry.two_classes_only and c != 2:
        raise ConfigError(
            f"method {name!r} requires two classes ({', '.join(entry.requires)}); these data have "
            f"C = {c}. Use 'dawid_skene_em' (the one EM, any number of classes), or the "
            "Bayesian channels (bayescal.fit_channels_bayes)."
        )
    summary = as_summary(data, groups=groups, caller="fit_channels")
    return entry.estimator(summary, **options)
