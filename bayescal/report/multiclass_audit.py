"""The multiclass audit (SPEC §3): noisy annotators on C classes, or ambiguity?

:func:`audit_multiclass` runs every step on one dataset and returns a
:class:`MulticlassAuditReport` (the shared :class:`~bayescal.report.core.Report`
with the typed results attached): confusion matrices without ground truth
(posterior or EM), the evidence for noise vs ambiguity, the analysis that
evidence supports (noise-corrected top-label and class-wise errors with
bias-aware intervals, or the ambiguity view's ECE_true; ``view="both"`` runs
both), and corrected recalibration. It saves ``report.html``, ``summary.json``
and, for Bayesian channels, ``posterior.nc``.
"""

from __future__ import annotations

import time
import warnings as _warnings
from dataclasses import dataclass, field
from typing import Any

from bayescal._random import seed_from
from bayescal._typing import Bins, RandomState, Weights
from bayescal.bayes.dependence import parse_dependence
from bayescal.bayes.priors import ChannelPriors
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.errors import ConfigError
from bayescal.options import MULTICLASS_CHANNEL_CHOICES, MULTICLASS_SKIP_SECTIONS
from bayescal.report import multiclass_sections as steps
from bayescal.report.audit import (
    _plain,
    check_skip,
    check_subgroup_request,
    left_out_title,
    run_stages,
    skipped,
    skipped_on_request,
    subgroup_settings,
    subgroup_stages,
)
from bayescal.report.core import Provenance, Report, Section, fmt
from bayescal.report.items_section import items_artifacts, items_section
from bayescal.report.multiclass_knowledge import multiclass_knowledge_section
from bayescal.report.next_section import next_artifacts, next_section, next_summary
from bayescal.report.subgroups_section import subgroups_summary
from bayescal.report.verdict import decide, noise_facts, summary_entries

__all__ = ["audit_multiclass", "MulticlassAuditReport", "MULTICLASS_CHANNEL_CHOICES"]


@dataclass(eq=False, repr=False)
class MulticlassAuditReport(Report):
    """A multiclass audit: the report plus the typed results behind it.

    Attributes
    ----------
    channels : ChannelFit
        The confusions used for correction (posterior or point).
    point_channels : ChannelFit or None
        The EM fit (None when it failed and the posterior was used alone).
    check : NoiseAmbiguityCheck
        The noise-or-ambiguity evidence.
    interval : MulticlassNCECEInterval
        Top-label and class-wise NC-ECE with intervals.
    errors : dict of str -> MulticlassECE
        ``soft_vote``, ``majority_vote``, ``nc_point`` and, with truth, ``oracle``.
    """

    channels: object = None
    point_channels: object = None
    check: object = None
    interval: object = None
    errors: dict = field(default_factory=dict)

    @property
    def idata(self) -> Any:
        """The confusion posterior as ArviZ InferenceData (None for EM channels)."""
        return getattr(self.channels, "idata", None)

    def __repr__(self) -> str:
        s = self.summary
        nc = s["ece"]["nc"]
        return (
            f"<MulticlassAuditReport {s['n_items']} items x {s['n_annotators']} annotators, "
            f"{s['n_classes']} classes; evidence: {s['view']['evidence']}; top-label NC-ECE "
            f"{fmt(nc['point'])} [{fmt(nc['lo'])}, {fmt(nc['hi'])}]; soft-vote ECE "
            f"{fmt(s['ece']['soft_vote'])}; {len(self.flags)} warning(s)>"
        )


def _knowledge(ctx: steps.MulticlassContext) -> Section:
    return multiclass_knowledge_section(ctx, steps.fit_posterior, steps._confusion_entries)


def audit_multiclass(
    data: MulticlassAnnotations,
    *,
    channels: str = "bayes",
    groups: Bins | str = "predicted",
    bins: Bins = 10,
    weights: Weights = "equal",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    prob: float = 0.9,
    view: str = "auto",
    random_state: RandomState = 0,
    progress: bool = False,
    gold_in_ece: bool = False,
    priors=None,
    dependence=None,
    subgroup=None,
    subgroup_channels: str = "pooled",
    skip: tuple[str, ...] = (),
    command: str | None = None,
    title: str | None = None,
) -> MulticlassAuditReport:
    """Audit the calibration of a C-class model from noisy or disagreeing annotations (SPEC §3).

    Parameters
    ----------
    data : MulticlassAnnotations
        Class probabilities, answers (missing allowed) and optional true classes.
    channels : {"bayes", "dawid-skene-em"}, default "bayes"
        ``"bayes"`` samples the multiclass Dawid-Skene posterior and carries
        confusion uncertainty into the intervals; ``"dawid-skene-em"`` uses the
        EM point fit (the interval then has the evaluation-sample source only).
    groups : channel groups, default "predicted"
        One class prevalence per group (see
        :func:`~bayescal.summaries.summary.summarize`).
    bins : int or edges, default 10
        Evaluation bins: on ``max p`` (top-label) and each ``p_k`` (class-wise).
    weights : str, default "equal"
        Annotator weight rule of the corrected targets.
    draws, tune, chains : int, default 1000, 1000, 2
        NUTS settings for ``"bayes"``.
    prob : float, default 0.9
        Interval probability.
    view : {"auto", "noise", "ambiguity", "both"}, default "auto"
        ``"auto"`` shows the analysis the noise-or-ambiguity evidence supports
        (the other one is skipped with the reason); the others force one or both.
        ``summary.json`` holds both views' numbers either way.
    random_state : None, int or Generator, default 0
        The one seed for every random step; the seed used is recorded.
    progress : bool, default False
    gold_in_ece : bool, default False
        Count the container's gold items in the calibration error too (by default
        they only inform the confusions: they are often chosen non-randomly).
    priors : ChannelPriors, mapping or None
        Priors of the Bayesian confusions, for example
        ``ChannelPriors.from_fit(earlier_fit, annotators=data.annotators)``; the
        report checks them for prior-data conflict.
    dependence : None, "all" or "r1:r2,..."
        Also fit the conditional-dependence model
        (:mod:`bayescal.bayes.dependence`, ``models/dependence.md``; needs
        ``channels="bayes"``): the knowledge section compares it with the independence
        model (LOO, predictive check before/after, NC-ECE under both) and the noise
        view's headline, the summary's confusions and the recalibration use it.
    subgroup : str, array-like of shape (n_items,) or None
        Audit the calibration per subgroup too (:mod:`bayescal.metrics.subgroups`; the
        top-label NC-ECE per subgroup): the name of the container's per-item ``group`` or
        one value per item. Adds the "Subgroups" section and ``summary["subgroups"]``.
    subgroup_channels : {"pooled", "shared", "per-subgroup"}, default "pooled"
    skip : tuple of str, default ()
        Optional sections to leave out (:data:`bayescal.options.MULTICLASS_SKIP_SECTIONS`:
        ``"recalibration"``, ``"items"``, ``"subgroups"``); each stays in the report as
        skipped with the reason, as does every section skipped for another reason
        (``summary["skipped"]``).
    command : str, optional
        The command line, recorded for reproducibility.
    title : str, optional

    Returns
    -------
    MulticlassAuditReport

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> r = audit_multiclass(simulate_multiclass(800, 3, random_state=0),
    ...                      channels="dawid-skene-em")
    >>> r.kind, sorted(r.summary["ece"])[:3]
    ('multiclass', ['ambiguity', 'bins', 'classwise'])
    """
    if not isinstance(data, MulticlassAnnotations):
        raise ConfigError(
            f"audit_multiclass expects a MulticlassAnnotations container; got "
            f"{type(data).__name__}. Read one with bayescal.load_csv(path, probs=[...])."
        )
    if channels not in MULTICLASS_CHANNEL_CHOICES:
        raise ConfigError(
            f"channels must be one of {MULTICLASS_CHANNEL_CHOICES} for multiclass data; got "
            f"{channels!r}."
        )
    if view not in steps.VIEW_CHOICES:
        raise ConfigError(f"view must be one of {steps.VIEW_CHOICES}; got {view!r}.")
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob}.")
    if priors is not None and channels != "bayes":
        raise ConfigError("priors are for the Bayesian confusions: use channels='bayes'.")
    if dependence is not None:
        if channels != "bayes":
            raise ConfigError(
                "dependence needs the Bayesian channels: use channels='bayes' (--channels bayes)."
            )
        parse_dependence(dependence, data.annotators)  # refuse bad pairs before any fitting
    if gold_in_ece and data.gold is None:
        raise ConfigError("gold_in_ece needs gold items: the data have no 'gold' variable.")
    skip = check_skip(skip, MULTICLASS_SKIP_SECTIONS, "multiclass audit")
    check_subgroup_request(data, subgroup, subgroup_channels)
    if priors is not None:
        priors = ChannelPriors.coerce(priors, "dirichlet")
        priors.confusion_alpha(data.n_annotators, data.n_classes)  # shape checked up front
    started = time.perf_counter()
    ctx = steps.MulticlassContext(
        data=data,
        channels_choice=channels,
        groups=groups,
        bins=bins,
        weights=weights,
        draws=draws,
        tune=tune,
        chains=chains,
        prob=prob,
        view=view,
        seed=seed_from(random_state),
        progress=progress,
        gold_in_ece=bool(gold_in_ece),
        priors=priors,
        dependence=dependence,
        subgroup=subgroup,
        subgroup_channels=subgroup_channels,
    )
    stages = (  # (progress line, --skip name of an optional section, step)
        ("summarising the data", None, steps.data_section),
        ("checking the design", None, steps.identification_section),
        (f"fitting the confusions ({channels})", None, steps.channel_section),
        ("convergence and fit diagnostics", None, steps.diagnostics_section),
        ("gold items and priors", None, _knowledge),
        ("noise or ambiguity: the evidence", None, steps.evidence_section),
        ("noise view: NC-ECE and its interval", None, steps.noise_view_section),
        ("ambiguity view", None, steps.ambiguity_view_section),
        ("recalibration maps", "recalibration", steps.recalibration_section),
        ("item posteriors", "items", items_section),
        ("where to annotate next", "next", next_section),
    ) + subgroup_stages(subgroup)
    with _warnings.catch_warnings():
        # Every warning the steps care about is collected as a flag; none is lost on stderr.
        _warnings.simplefilter("ignore")
        sections = run_stages(
            ctx,
            stages,
            skip,
            lambda key: Section(
                key=key,
                title=left_out_title(key),
                status="skipped",
                reason=skipped_on_request(key),
            ),
        )
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
            "view": view,
            "gold_in_ece": bool(gold_in_ece),
            "priors": None if priors is None else priors.origin or priors.to_dict(),
            "dependence": dependence,
            **subgroup_settings(subgroup, subgroup_channels),
            "skip": list(skip),
        },
        started=started,
    )
    sections.append(provenance.section())
    idata = getattr(ctx.channels, "idata", None)
    summary = {**steps.build_summary(ctx), "skipped": skipped(sections), **subgroups_summary(ctx)}
    if ctx.items is not None:
        summary["items"] = ctx.items.to_dict()
    summary.update(next_summary(ctx))
    facts = noise_facts(
        summary,
        ctx.errors["nc_point"].top_label,
        sections,
        ctx.flags,
        assumptions=steps.MULTICLASS_ASSUMPTIONS,
        columns=data.columns,
    )
    return MulticlassAuditReport(
        kind="multiclass",
        title=title or "bayescal multiclass calibration audit",
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
        check=ctx.check,
        interval=ctx.interval,
        errors=ctx.errors,
    )
