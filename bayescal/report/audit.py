"""The calibration audit, for every number of classes: data -> channels -> corrected ECE -> report.

:func:`audit` runs every step on one dataset and returns an :class:`AuditReport` (the shared
:class:`~bayescal.report.core.Report` with the typed results attached) that renders itself in
Jupyter and saves ``report.html``, ``summary.json`` and, for Bayesian channels,
``posterior.nc``. The steps are one list of typed stages (:mod:`bayescal.report.sections`)
whose members depend on the number of classes: two classes get the binary paper's steps
(Hanada & Futami: channels ``a``, ``b``, the NC-ECE, the crowd-kit comparison and the
recalibration choice), more classes the class-wise ones (SPEC §3: confusion matrices, the
noise-or-ambiguity evidence, the noise view's top-label and class-wise errors, the ambiguity
view and the recalibration choice). Sections whose feature is unavailable are kept in the
report as "skipped" with the reason, never silently dropped.
"""

from __future__ import annotations

import inspect
import logging
import time
import warnings as _warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayescal._random import seed_from
from bayescal._typing import Bins, RandomState, Weights
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError
from bayescal.metrics.noise_or_ambiguity import NoiseAmbiguityCheck
from bayescal.metrics.subgroups import SUBGROUP_CHANNELS, check_subgroups
from bayescal.metrics.uncertainty import MulticlassNCECEInterval, NCECEPosterior
from bayescal.options import (
    CHANNEL_CHOICES,
    MAX_CHAINS,
    MAX_DRAWS,
    MULTICLASS_CHANNEL_CHOICES,
    MULTICLASS_SKIP_SECTIONS,
    SKIP_SECTIONS,
    VIEW_CHOICES,
)
from bayescal.report import sections as steps
from bayescal.report.core import Provenance, Report, Section, fmt, skipped_on_request
from bayescal.report.crowdkit_section import (
    crowdkit_section,
    crowdkit_skipped,
    crowdkit_summary,
)
from bayescal.report.evidence_section import ambiguity_view_section, evidence_section
from bayescal.report.items_section import TITLE as ITEMS_TITLE
from bayescal.report.items_section import items_artifacts, items_section
from bayescal.report.knowledge_section import knowledge_section
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
    "audit_multiclass",
    "AuditReport",
    "MulticlassAuditReport",
    "CHANNEL_CHOICES",
    "MULTICLASS_CHANNEL_CHOICES",
    "check_skip",
    "run_stages",
    "skipped_on_request",
    "skipped",
    "subgroup_stages",
    "subgroup_settings",
    "left_out_title",
    "check_subgroup_request",
]

#: One stage: (progress line, --skip name of an optional section or None, step).
Stage = tuple[str, str | None, Callable[[steps.Context], Section]]


@dataclass(eq=False, repr=False)
class AuditReport(Report):
    """An audit: the report plus the typed results behind it.

    Attributes
    ----------
    channels : ChannelFit
        The channels (confusions) used for correction (posterior or point).
    point_channels : ChannelFit or None
        The point fit (None when it failed and the posterior was used alone).
    interval : NCECEPosterior or MulticlassNCECEInterval
        NC-ECE with channel and evaluation-sample uncertainty (top-label and class-wise in
        the class-wise audit).
    check : NoiseAmbiguityCheck or None
        The noise-or-ambiguity evidence (class-wise audit; None for two classes).
    errors : dict of str -> BinnedECE or MulticlassECE
        ``soft_vote``, ``majority_vote``, ``nc_point`` and, with truth, ``oracle``.
    """

    channels: ChannelFit | None = None
    point_channels: ChannelFit | None = None
    interval: NCECEPosterior | MulticlassNCECEInterval | None = None
    check: NoiseAmbiguityCheck | None = None
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
        shape = f"{s['n_items']} items x {s['n_annotators']} annotators"
        error = "NC-ECE"
        if self.kind == "multiclass":
            shape += f", {s['n_classes']} classes; evidence: {s['view']['evidence']}"
            error = "top-label NC-ECE"
        return (
            f"<AuditReport {shape}; {error} {fmt(nc['point'])}{interval}; soft-vote ECE "
            f"{fmt(s['ece']['soft_vote'])}; {len(self.flags)} warning(s)>"
        )


#: The v0.2 name of the class-wise audit's report: the one report type.
MulticlassAuditReport = AuditReport


def audit(
    data: Annotations | Summary,
    *,
    channels: str = "bayes",
    groups: Bins | str | None = None,
    bins: Bins = 10,
    weights: Weights = "equal",
    draws: int | None = None,
    tune: int | None = None,
    chains: int | None = None,
    prob: float = 0.9,
    view: str = "auto",
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
    """Audit the calibration of a model from noisy or disagreeing annotations.

    Two classes: Hanada & Futami's audit of a binary score, with channels without ground
    truth (Sec. 4), the noise-corrected binned ECE (Sec. 3, Definition 4) with channel and
    evaluation-sample uncertainty, and corrected recalibration (Sec. 5, App. E.5). More
    classes (SPEC §3): confusion matrices without ground truth, the evidence for noise vs
    ambiguity, the analysis that evidence supports (noise-corrected top-label and class-wise
    errors with bias-aware intervals, or the ambiguity view's ECE_true; ``view="both"`` runs
    both) and corrected recalibration.

    Parameters
    ----------
    data : Annotations or Summary
        Scores (class probabilities), answers (missing allowed) and optional truth
        (reference labels); or a two-class summary (for example built out of core with
        dask), in which case its own groups and bins are used and the per-item
        recalibration step is skipped.
    channels : {"bayes", "score-bin-em", "dawid-skene-em", "gmm", "hui-walter"}
        ``"bayes"`` (default) samples the grouped PyMC model and carries channel
        uncertainty into the NC-ECE interval; the others are point estimators
        (the interval then has the evaluation-sample source only). More than two classes
        take ``"bayes"`` or ``"dawid-skene-em"``.
    groups : int, edges or str, optional
        Channel groups (see :func:`~bayescal.summaries.summary.summarize`); default 5
        equal-width score groups for two classes, ``"predicted"`` (one class prevalence per
        predicted class) for more.
    bins : int or edges, default 10
        Evaluation bins (equal-width for ints): on the score for two classes, on ``max p``
        (top-label) and each ``p_k`` (class-wise) for more.
    weights : str, default "equal"
        Annotator weight rule for corrected labels (NC-ECE, recalibration).
    draws, tune, chains : int, optional
        NUTS settings for ``"bayes"``: draws per chain (default 1000), tuning steps (1000)
        and chains (2). Given with a point estimator they would change nothing and are
        refused.
    prob : float, default 0.9
        Interval probability.
    view : {"auto", "noise", "ambiguity", "both"}, default "auto"
        More than two classes: ``"auto"`` shows the analysis the noise-or-ambiguity
        evidence supports (the other one is skipped with the reason); the others force one
        or both. ``summary.json`` holds both views' numbers either way. Two classes have
        the noise analysis only (``"auto"``).
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
        informative defaults of :mod:`bayescal.bayes.priors`. The report checks them for
        prior-data conflict.
    gold_in_ece : bool, default False
        Gold items (the container's ``gold``) always inform the channels; they enter the
        calibration error only when this is True (they are often chosen non-randomly).
    dependence : None, "all" or "r1:r2,..."
        Also fit the conditional-dependence model (:mod:`bayescal.bayes.dependence`,
        ``channels="bayes"`` only); the headline NC-ECE, the summary's channels and the
        recalibration then use it, and the knowledge section compares both models (LOO,
        predictive check, NC-ECE interval).
    subgroup : str, array-like of shape (n_items,) or None
        Audit the calibration per subgroup too (:mod:`bayescal.metrics.subgroups`): the
        name of the container's per-item ``group`` (``load_csv(..., group="site")``) or
        one value per item. Adds the "Subgroups" section and ``summary["subgroups"]``.
    subgroup_channels : {"pooled", "shared", "per-subgroup"}, default "pooled"
        How each subgroup's channels are fitted (partial pooling by default).
    skip : tuple of str, default ()
        Optional sections to leave out (:data:`bayescal.options.SKIP_SECTIONS`:
        ``"crowdkit"``, ``"recalibration"``, ``"items"``, ``"subgroups"``, ``"next"``; more
        than two classes: :data:`bayescal.options.MULTICLASS_SKIP_SECTIONS`, the same but
        ``"crowdkit"``); each stays in the report as skipped, with the reason, as does every
        section skipped for another reason (``summary["skipped"]``).

    Returns
    -------
    AuditReport
        ``kind`` is ``"binary"`` for two classes, ``"multiclass"`` for more.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> r = audit(simulate_toy(600, random_state=0), channels="score-bin-em")
    >>> r.kind, sorted(r.summary["ece"])[:2], isinstance(r.summary["warnings"], list)
    ('binary', ['bins', 'majority_vote'], True)
    >>> from bayescal.simulate import simulate_multiclass
    >>> r = audit(simulate_multiclass(800, 3, random_state=0), channels="dawid-skene-em")
    >>> r.kind, sorted(r.summary["ece"])[:3]
    ('multiclass', ['ambiguity', 'bins', 'classwise'])
    """
    if not isinstance(data, (Annotations, Summary)):
        raise ConfigError(
            f"audit expects an Annotations container or a Summary; got {type(data).__name__}."
        )
    return _audit(data, classwise=data.n_classes > 2, **_options(locals()))


def audit_multiclass(data: Annotations, **options) -> AuditReport:
    """The class-wise audit (:func:`audit` on more than two classes), for any C >= 2.

    With two classes it runs the class-wise steps where :func:`audit` runs the binary
    paper's: the check that C = 2 reproduces the binary channels, NC-ECE and votes
    (``tests/multiclass/test_multiclass_audit.py``). ``options`` are those of :func:`audit`.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> r = audit_multiclass(simulate_multiclass(800, 3, random_state=0),
    ...                      channels="dawid-skene-em")
    >>> r.kind, r.summary["n_classes"]
    ('multiclass', 3)
    """
    if not isinstance(data, Annotations):
        raise ConfigError(
            f"audit_multiclass expects a MulticlassAnnotations container; got "
            f"{type(data).__name__}. Read one with bayescal.load_csv(path, probs=[...])."
        )
    return _audit(data, classwise=True, **_options({**_DEFAULTS, **options}))


#: audit()'s keyword defaults, for audit_multiclass (one signature, written once)
_DEFAULTS = {
    name: p.default for name, p in inspect.signature(audit).parameters.items() if name != "data"
}


def _options(given: dict) -> dict:
    unknown = set(given) - set(_DEFAULTS) - {"data"}
    if unknown:
        raise ConfigError(f"unknown audit option(s) {sorted(unknown)}; see help(bayescal.audit).")
    return {k: v for k, v in given.items() if k in _DEFAULTS}


def _audit(
    data: Annotations | Summary,
    *,
    classwise: bool,
    channels: str,
    groups: Bins | str | None,
    bins: Bins,
    weights: Weights,
    draws: int | None,
    tune: int | None,
    chains: int | None,
    prob: float,
    view: str,
    random_state: RandomState,
    progress: bool,
    command: str | None,
    title: str | None,
    priors,
    gold_in_ece: bool,
    dependence,
    subgroup,
    subgroup_channels: str,
    skip,
) -> AuditReport:
    _check_options(data, classwise, channels, view, prob, priors, dependence, gold_in_ece)
    draws, tune, chains = _sampler_settings(channels, draws, tune, chains)
    if classwise and isinstance(data, Summary):
        raise ConfigError(
            "the audit of more than two classes needs the items (answers and probabilities); "
            "load them with bayescal.load_csv(path, probs=[...])."
        )
    skip = check_skip(
        skip,
        MULTICLASS_SKIP_SECTIONS if classwise else SKIP_SECTIONS,
        "multiclass audit" if classwise else "binary audit",
    )
    check_subgroup_request(data, subgroup, subgroup_channels)
    if priors is not None:
        priors = ChannelPriors.coerce(priors, "dirichlet" if classwise else None)
        if classwise:
            priors.confusion_alpha(data.n_annotators, data.n_classes)  # shape checked up front
    if groups is None:
        groups = "predicted" if classwise else 5
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
        classwise=classwise,
        view=view,
        priors=priors,
        gold_in_ece=bool(gold_in_ece),
        dependence=dependence,
        subgroup=subgroup,
        subgroup_channels=subgroup_channels,
    )
    with _warnings.catch_warnings():
        # Every warning the steps care about is collected as a flag; none is lost on stderr.
        _warnings.simplefilter("ignore")
        sections = run_stages(ctx, _stages(ctx), skip, lambda key: _left_out(ctx, key))
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
            **({"view": view} if classwise else {}),
            "gold_in_ece": bool(gold_in_ece),
            "priors": _priors_setting(priors, classwise),
            "dependence": dependence,
            **subgroup_settings(subgroup, subgroup_channels),
            "skip": list(skip),
        },
        started=started,
    )
    sections.append(provenance.section())
    idata = getattr(ctx.channels, "idata", None)
    summary = steps.build_summary(ctx)
    if classwise:
        summary.update(skipped=skipped(sections), **subgroups_summary(ctx))
    else:
        summary.update(subgroups_summary(ctx))
        summary["skipped"] = skipped(sections)
        summary["knowledge"] = ctx.diagnostics["knowledge"]
        summary.update(crowdkit_summary(ctx))
    if ctx.items is not None:
        summary["items"] = ctx.items.to_dict()
    summary.update(next_summary(ctx))
    nc_point = ctx.errors["nc_point"]
    facts = noise_facts(
        summary,
        nc_point.top_label if classwise else nc_point,
        sections,
        ctx.flags,
        assumptions=steps.MULTICLASS_ASSUMPTIONS if classwise else steps.ASSUMPTIONS,
        columns=data.columns if isinstance(data, Annotations) else None,
    )
    default_title = "bayescal multiclass calibration audit" if classwise else None
    return AuditReport(
        kind="multiclass" if classwise else "binary",
        title=title or default_title or "bayescal calibration audit",
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
        check=ctx.check if classwise else None,
        errors=ctx.errors,
    )


#: The sampler's settings when not given: draws per chain, tuning steps, chains.
SAMPLER_DEFAULTS = {"draws": 1000, "tune": 1000, "chains": 2}


def _sampler_settings(channels: str, draws, tune, chains) -> tuple[int, int, int]:
    """draws / tune / chains with their defaults filled in; given with a point estimator
    they would change nothing (as ``--draws`` with ``--channels dawid-skene-em``) and are
    refused, and out of range they are refused whatever the channels.

    Examples
    --------
    >>> _sampler_settings("bayes", None, 500, None)
    (1000, 500, 2)
    >>> _sampler_settings("dawid-skene-em", 5, None, None)
    Traceback (most recent call last):
    ...
    bayescal.errors.ConfigError: draws sets the sampler of the Bayesian channels; ...
    """
    given = {"draws": draws, "tune": tune, "chains": chains}
    named = [name for name, value in given.items() if value is not None]
    if named and channels != "bayes":
        raise ConfigError(
            f"{', '.join(named)} set{'s' if len(named) == 1 else ''} the sampler of the "
            f"Bayesian channels; channels={channels!r} is a point fit and samples nothing: "
            "leave them out, or use channels='bayes'."
        )
    values = {k: SAMPLER_DEFAULTS[k] if v is None else v for k, v in given.items()}
    _check_sampler_numbers(values["draws"], values["tune"], values["chains"])
    return values["draws"], values["tune"], values["chains"]


def _check_sampler_numbers(draws, tune, chains) -> None:
    """draws / tune / chains are whole numbers in their ranges whatever the channels: a value
    that no sampler could take is refused even where the point fits do not sample."""
    for name, val, low, high in (
        ("draws", draws, 1, MAX_DRAWS),
        ("tune", tune, 0, MAX_DRAWS),
        ("chains", chains, 1, MAX_CHAINS),
    ):
        whole = isinstance(val, (int, np.integer)) and not isinstance(val, bool)
        if not whole or not low <= val <= high:
            raise ConfigError(f"{name} must be an integer from {low} to {high:,}; got {val!r}.")


def _check_options(data, classwise, channels, view, prob, priors, dependence, gold_in_ece) -> None:
    """The option checks of :func:`audit` that need no fitting, in one place."""
    choices = MULTICLASS_CHANNEL_CHOICES if classwise else CHANNEL_CHOICES
    if channels not in choices:
        where = " for multiclass data" if classwise else ""
        raise ConfigError(f"channels must be one of {choices}{where}; got {channels!r}.")
    if view not in VIEW_CHOICES:
        raise ConfigError(f"view must be one of {VIEW_CHOICES}; got {view!r}.")
    if view != "auto" and not classwise:
        raise ConfigError(
            f"view={view!r} chooses between the noise and ambiguity analyses of more than two "
            "classes; two classes have the noise analysis only (leave view='auto')."
        )
    if not 0 < prob < 1:
        raise ConfigError(f"prob must be in (0, 1); got {prob}.")
    if priors is not None and channels != "bayes":
        raise ConfigError(
            "priors are for the Bayesian channels: use channels='bayes' (--channels bayes) "
            "with priors from an earlier audit."
        )
    if dependence is not None:
        if channels != "bayes":
            raise ConfigError(
                "dependence needs the Bayesian channels: use channels='bayes' (--channels bayes)."
            )
        from bayescal.bayes.dependence import parse_dependence

        parse_dependence(dependence, data.annotators)  # refuse bad pairs before any fitting
    if not isinstance(gold_in_ece, bool):
        raise ConfigError(f"gold_in_ece must be True or False; got {gold_in_ece!r}.")
    if gold_in_ece and isinstance(data, Annotations) and data.gold is None:
        raise ConfigError("gold_in_ece needs gold items: the data have no 'gold' variable.")


def _stages(ctx: steps.Context) -> list[Stage]:
    """The audit's steps in order; which ones apply depends on the number of classes."""
    channels = ctx.channels_choice
    stages: list[Stage] = [
        ("summarising the data", None, steps.data_section),
        ("checking the design", None, steps.identification_section),
        (
            f"fitting the {'confusions' if ctx.classwise else 'channels'} ({channels})",
            None,
            steps.channel_section,
        ),
        ("convergence and fit diagnostics", None, steps.diagnostics_section),
        (_knowledge_stage(ctx), None, knowledge_section),
    ]
    if ctx.classwise:
        stages += [
            ("noise or ambiguity: the evidence", None, evidence_section),
            ("noise view: NC-ECE and its interval", None, steps.ece_section),
            ("ambiguity view", None, ambiguity_view_section),
        ]
    else:
        stages += [
            ("NC-ECE and its interval", None, steps.ece_section),
            ("naive errors against crowd-kit labels", "crowdkit", crowdkit_section),
        ]
    return stages + [
        ("recalibration maps", "recalibration", recalibration_section),
        ("item posteriors", "items", items_section),
        ("where to annotate next", "next", next_section),
        *subgroup_stages(ctx.subgroup),
    ]


def _knowledge_stage(ctx: steps.Context) -> str:
    """The progress line of the prior-knowledge step, naming what it will do: with
    ``--dependence`` most of its time is the dependence model's fit.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> _knowledge_stage(SimpleNamespace(dependence=None))
    'gold items and priors'
    >>> _knowledge_stage(SimpleNamespace(dependence=[("r1", "r2")]))
    'gold items and priors; fitting the dependence model'
    """
    stage = "gold items and priors"
    return stage if ctx.dependence is None else stage + "; fitting the dependence model"


def _priors_setting(priors: ChannelPriors | None, classwise: bool):
    """What the provenance records of the priors."""
    if priors is None:
        return None
    if classwise:
        return priors.origin or priors.to_dict()
    return repr(priors)


def check_subgroup_request(data, subgroup, subgroup_channels: str) -> None:
    """Refuse a bad subgroup request before anything is fitted."""
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


def subgroup_stages(subgroup) -> tuple[Stage, ...]:
    """The subgroup stage, present only when a subgroup is given."""
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
    """The title of an optional section left out with ``--skip KEY``."""
    titles = {"items": ITEMS_TITLE, "next": NEXT_TITLE, "subgroups": SUBGROUPS_TITLE}
    return titles.get(key, "Recalibration")


def run_stages(
    ctx: steps.Context,
    stages: Iterable[Stage],
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


def skipped(sections) -> dict[str, str]:
    """``summary.json["skipped"]``: every skipped section (on request or not) and its reason."""
    return {s.key: s.reason for s in sections if s.status == "skipped"}


def _plain(x):
    if isinstance(x, (int, float, str)) or x is None:
        return x
    return [float(v) for v in np.asarray(x).ravel()]
