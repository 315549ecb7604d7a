"""The binary calibration audit (Hanada & Futami): data -> channels -> corrected ECE -> report.

:func:`audit` runs every step on one dataset and returns an
:class:`AuditReport` (the shared :class:`~bayescal.report.core.Report` with
the typed results attached) that renders itself in Jupyter and saves
``report.html``, ``summary.json`` and, for Bayesian channels, ``posterior.nc``.
Sections whose feature is unavailable are kept in the report as "skipped"
with the reason, never silently dropped.
"""

from __future__ import annotations

import logging
import time
import warnings as _warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayescal._random import seed_from
from bayescal._typing import Bins, RandomState, Weights
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.metrics.subgroups import SUBGROUP_CHANNELS, check_subgroups
from bayescal.metrics.uncertainty import NCECEPosterior
from bayescal.options import CHANNEL_CHOICES, SKIP_SECTIONS
from bayescal.report import sections as steps
from bayescal.report.core import Provenance, Report, Section, fmt
from bayescal.report.crowdkit_section import (
    crowdkit_section,
    crowdkit_skipped,
    crowdkit_summary,
)
from bayescal.report.items_section import TITLE as ITEMS_TITLE
from bayescal.report.items_section import items_artifacts, items_section
from bayescal.report.knowledge_section import data_with_gold_section, knowledge_section
from bayescal.report.next_section import TITLE as NEXT_TITLE
from bayescal.report.next_section import next_artifacts, next_section, next_summary
from bayescal.report.recal_section import recalibration_section
from bayescal.report.subgroups_section import TITLE as SUBGROUPS_TITLE
from bayescal.report.subgroups_section import subgroups_section, subgroups_summary
from bayescal.report.verdict import decide, noise_facts, summary_entries
from bayescal.summaries.summary import Summary

_log = logging.getLogger(__name__)

__all__ = [
    "audit",
    "AuditReport",
    "CHANNEL_CHOICES",
    "check_skip",
    "run_stages",
    "skipped_on_request",
    "skipped",
    "subgroup_stages",
    "subgroup_settings",
    "left_out_title",
    "check_subgroup_request",
]


@dataclass(eq=False, repr=False)
class AuditReport(Report):
    """A binary audit: the report plus the typed results behind it.

    Attributes
    ----------
    channels : ChannelFit
        The channels used for correction (posterior or point).
    point_channels : ChannelFit or None
        The point fit (None when it failed and the posterior was used alone).
    interval : NCECEPosterior
        NC-ECE with channel and evaluation-sample uncertainty.
    errors : dict of str -> BinnedECE
        ``soft_vote``, ``majority_vote``, ``nc_point`` and, with truth, ``oracle``.
    """

    channels: ChannelFit | None = None
    point_channels: ChannelFit | None = None
    interval: NCECEPosterior | None = None
    errors: dict = field(default_factory=dict)

    @property
    def idata(self) -> Any:
        """The channel posterior as ArviZ InferenceData (None for point channels)."""
        return getattr(self.channels, "idata", None)

    def __repr__(self) -> str:
        s = self.summary
        nc = s["ece"]["nc"]
        interval = f" [{fmt(nc['lo'])}, {fmt(nc['hi'])}]" if nc.get("lo") is not None else ""
        if not nc.get("reliable", True):
            interval += " (NOT RELIABLE: " + ", ".join(nc["unreliable_because"]) + ")"
        return (
            f"<AuditReport {s['n_items']} items x {s['n_annotators']} annotators; "
            f"NC-ECE {fmt(nc['point'])}{interval}; soft-vote ECE {fmt(s['ece']['soft_vote'])}; "
            f"{len(self.flags)} warning(s)>"
        )


def audit(
    data: Annotations | Summary,
    *,
    channels: str = "bayes",
    groups: Bins = 5,
    bins: Bins = 10,
    weights: Weights = "equal",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    prob: float = 0.9,
    random_state: RandomState = 0,
    progress: bool = False,
    command: str | None = None,
    title: str | None = None,
    priors=None,
    gold_in_ece: bool = False,
    dependence=None,
    subgroup: str | np.ndarray | None = None,
    subgroup_channels: str = "pooled",
    skip: tuple[str, ...] = (),
) -> AuditReport:
    """Audit the calibration of a binary score from noisy annotations.

    Hanada & Futami: channels without ground truth (Sec. 4), the noise-corrected
    binned ECE (Sec. 3, Definition 4) with channel and evaluation-sample
    uncertainty, and corrected recalibration (Sec. 5, App. E.5).

    Parameters
    ----------
    data : Annotations or Summary
        Scores, answers (missing allowed) and optional truth (reference labels); or
        a summary (for example built out of core with dask), in which case its own
        groups and bins are used and the per-item recalibration step is skipped.
    channels : {"bayes", "score-bin-em", "dawid-skene-em", "gmm", "hui-walter"}
        ``"bayes"`` (default) samples the grouped PyMC model and carries channel
        uncertainty into the NC-ECE interval; the others are point estimators
        (the interval then has the evaluation-sample source only).
    groups, bins : int or edges, default 5, 10
        Score groups for the channels and evaluation bins (equal-width for ints).
    weights : str, default "equal"
        Annotator weight rule for corrected labels (NC-ECE, recalibration).
    draws, tune, chains : int, default 1000, 1000, 2
        NUTS settings for ``"bayes"``.
    prob : float, default 0.9
        Interval probability.
    random_state : None, int or Generator, default 0
        The one seed for every random step; the seed used is recorded.
    progress : bool, default False
        Show sampler progress bars.
    command : str, optional
        The command line, recorded for reproducibility.
    title : str, optional
    priors : ChannelPriors, mapping or None
        Priors of the Bayesian channel model, for example
        ``ChannelPriors.from_fit(previous_audit.channels)``; default: the weakly
        informative defaults of :mod:`bayescal.bayes.priors`.
    gold_in_ece : bool, default False
        Gold items (the container's ``gold``) always inform the channels; they enter the
        calibration error only when this is True (they are often chosen non-randomly).
    dependence : None, "all" or "r1:r2,..."
        Also fit the conditional-dependence model (:mod:`bayescal.bayes.dependence`,
        ``channels="bayes"`` only); the headline NC-ECE then uses it, and the knowledge
        section compares both models (LOO, predictive check, NC-ECE interval).
    subgroup : str, array-like of shape (n_items,) or None
        Audit the calibration per subgroup too (:mod:`bayescal.metrics.subgroups`): the
        name of the container's per-item ``group`` (``load_csv(..., group="site")``) or
        one value per item. Adds the "Subgroups" section and ``summary["subgroups"]``.
    subgroup_channels : {"pooled", "shared", "per-subgroup"}, default "pooled"
        How each subgroup's channels are fitted (partial pooling by default).
    skip : tuple of str, default ()
        Optional sections to leave out (:data:`bayescal.options.SKIP_SECTIONS`:
        ``"crowdkit"``, ``"recalibration"``, ``"items"``, ``"subgroups"``); each stays in the
        report as skipped, with the reason, as does every section skipped for another reason
        (``summary["skipped"]``).

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> r = audit(simulate_toy(600, random_state=0), channels="score-bin-em")
    >>> r.kind, sorted(r.summary["ece"])[:2], isinstance(r.summary["warnings"], list)
    ('binary', ['bins', 'majority_vote'], True)
    """
    if not isinstance(data, (Annotations, Summary)):
        raise ConfigError(
            f"audit expects an Annotations container or a Summary; got {type(data).__name__}."
        )
    if isinstance(data, Annotations) and data.n_classes > 2:
        raise ConfigError(
            f"audit is the binary audit; these data have {data.n_classes} classes: use "
            "bayescal.report.multiclass_audit.audit_multiclass (or bayescal audit --probs)."
        )
    if channels not in CHANNEL_CHOICES:
        raise ConfigError(f"channels must be one of {CHANNEL_CHOICES}; got {channels!r}.")
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob}.")
    if priors is not None:
        if channels != "bayes":
            raise ConfigError(
                "priors are for the Bayesian channels: use channels='bayes' (--channels bayes) "
                "with priors from an earlier audit."
            )
        from bayescal.bayes.priors import ChannelPriors

        priors = ChannelPriors.coerce(priors)
    if dependence is not None:
        if channels != "bayes":
            raise ConfigError(
                "dependence needs the Bayesian channels: use channels='bayes' (--channels bayes)."
            )
        from bayescal.bayes.dependence import parse_dependence

        parse_dependence(dependence, data.annotators)  # refuse bad pairs before any fitting
    if not isinstance(gold_in_ece, bool):
        raise ConfigError(f"gold_in_ece must be True or False; got {gold_in_ece!r}.")
    skip = check_skip(skip, SKIP_SECTIONS, "binary audit")
    check_subgroup_request(data, subgroup, subgroup_channels)
    started = time.perf_counter()
    ctx = steps.Context(
        data=data,
        channels_choice=channels,
        groups=groups,
        bins=bins,
        weights=weights,
        draws=draws,
        tune=tune,
        chains=chains,
        prob=prob,
        seed=seed_from(random_state),
        progress=progress,
        priors=priors,
        gold_in_ece=gold_in_ece,
        dependence=dependence,
        subgroup=subgroup,
        subgroup_channels=subgroup_channels,
    )
    stages = (  # (progress line, --skip name of an optional section, step)
        ("summarising the data", None, data_with_gold_section),
        ("checking the design", None, steps.identification_section),
        (f"fitting the channels ({channels})", None, steps.channel_section),
        ("convergence and fit diagnostics", None, steps.diagnostics_section),
        ("gold items and priors", None, knowledge_section),
        ("NC-ECE and its interval", None, steps.ece_section),
        ("naive errors against crowd-kit labels", "crowdkit", crowdkit_section),
        ("recalibration maps", "recalibration", recalibration_section),
        ("item posteriors", "items", items_section),
        ("where to annotate next", "next", next_section),
    ) + subgroup_stages(subgroup)
    with _warnings.catch_warnings():
        # Every warning the steps care about is collected as a flag; none is lost on stderr.
        _warnings.simplefilter("ignore")
        sections = run_stages(ctx, stages, skip, lambda key: _left_out(ctx, key))
    provenance = Provenance.capture(
        command,
        ctx.seed,
        data.data_hash(),
        {
            "channels": channels,
            "groups": _plain(groups),
            "bins": _plain(bins),
            "weights": weights,
            "draws": draws,
            "tune": tune,
            "chains": chains,
            "prob": prob,
            "gold_in_ece": gold_in_ece,
            "priors": None if priors is None else repr(priors),
            "dependence": dependence,
            **subgroup_settings(subgroup, subgroup_channels),
            "skip": list(skip),
        },
        started=started,
    )
    sections.append(provenance.section())
    idata = getattr(ctx.channels, "idata", None)
    summary = steps.build_summary(ctx)
    summary.update(subgroups_summary(ctx))
    summary["skipped"] = skipped(sections)
    summary["knowledge"] = ctx.diagnostics["knowledge"]
    summary.update(crowdkit_summary(ctx))
    if ctx.items is not None:
        summary["items"] = ctx.items.to_dict()
    summary.update(next_summary(ctx))
    facts = noise_facts(
        summary,
        ctx.errors["nc_point"],
        sections,
        ctx.flags,
        assumptions=steps.ASSUMPTIONS,
        columns=data.columns if isinstance(data, Annotations) else None,
    )
    return AuditReport(
        kind="binary",
        title=title or "bayescal calibration audit",
        summary={**summary_entries(decide(facts), summary), **summary},
        sections=sections,
        provenance=provenance,
        flags=list(ctx.flags),
        artifacts={
            **({} if idata is None else {"posterior.nc": idata.to_netcdf}),
            **items_artifacts(ctx),
            **next_artifacts(ctx),
        },
        channels=ctx.channels,
        point_channels=ctx.point,
        interval=ctx.interval,
        errors=ctx.errors,
    )


def check_subgroup_request(data, subgroup, subgroup_channels: str) -> None:
    """Refuse a bad subgroup request before anything is fitted (both audits)."""
    if subgroup_channels not in SUBGROUP_CHANNELS:
        raise ConfigError(
            f"subgroup_channels must be one of {SUBGROUP_CHANNELS}; got {subgroup_channels!r}."
        )
    if subgroup is None:
        return
    if not isinstance(data, Annotations):
        raise ConfigError(
            "subgroup needs the item-level data (the subgroups split the items); an "
            "out-of-core summary keeps pattern counts only. Audit each subgroup's summary "
            "separately, or load the items in memory."
        )
    check_subgroups(data, subgroup)


def subgroup_stages(subgroup) -> tuple[tuple[str, str | None, Callable[[Any], Section]], ...]:
    """The subgroup stage of either audit, present only when a subgroup is given."""
    if subgroup is None:
        return ()
    return (("calibration per subgroup", "subgroups", subgroups_section),)


def subgroup_settings(subgroup, subgroup_channels: str) -> dict[str, Any]:
    """What the provenance records of a subgroup request."""
    if subgroup is None:
        return {}
    name = subgroup if isinstance(subgroup, str) else "values"
    return {"subgroup": name, "subgroup_channels": subgroup_channels}


def left_out_title(key: str) -> str:
    """The title of an optional section left out with ``--skip KEY`` (both audits)."""
    titles = {"items": ITEMS_TITLE, "next": NEXT_TITLE, "subgroups": SUBGROUPS_TITLE}
    return titles.get(key, "Recalibration")


def run_stages(
    ctx: Any,
    stages: Iterable[tuple[str, str | None, Callable[[Any], Section]]],
    skip: tuple[str, ...],
    left_out: Callable[[str], Section],
) -> list[Section]:
    """Run an audit's steps in order, one progress line each (a stage of the ``bayescal``
    logger); an optional step named in ``skip`` gives ``left_out(name)`` instead."""
    sections = []
    for stage, key, run in stages:
        if key is not None and key in skip:
            _log.info("%s: skipped (--skip %s)", stage, key)
            sections.append(left_out(key))
            continue
        _log.info("%s...", stage)
        sections.append(run(ctx))
    return sections


def _left_out(ctx: steps.Context, key: str) -> Section:
    if key == "crowdkit":
        return crowdkit_skipped(ctx, skipped_on_request(key))
    return Section(
        key=key, title=left_out_title(key), status="skipped", reason=skipped_on_request(key)
    )


def check_skip(skip, valid: dict[str, str], audit_name: str) -> tuple[str, ...]:
    """``skip`` as a tuple of section names, each once; a name not in ``valid`` is an error.

    Examples
    --------
    >>> check_skip(["crowdkit", "crowdkit"], {"crowdkit": "..."}, "binary audit")
    ('crowdkit',)
    >>> check_skip("figures", {"crowdkit": "..."}, "binary audit")
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: skip: 'figures' is not an optional section of the binary audit; ...
    """
    names = (skip,) if isinstance(skip, str) else tuple(skip)
    for name in names:
        if name not in valid:
            raise ConfigError(
                f"skip: {name!r} is not an optional section of the {audit_name}; the optional "
                f"ones are {', '.join(valid)}."
            )
    return tuple(dict.fromkeys(names))


def skipped_on_request(key: str) -> str:
    """The reason recorded for a section left out with ``--skip KEY``."""
    return f"left out on request (--skip {key}; skip=({key!r},) in Python)."


def skipped(sections) -> dict[str, str]:
    """``summary.json["skipped"]``: every skipped section (on request or not) and its reason."""
    return {s.key: s.reason for s in sections if s.status == "skipped"}


def _plain(x):
    if isinstance(x, (int, float, str)) or x is None:
        return x
    return [float(v) for v in np.asarray(x).ravel()]
