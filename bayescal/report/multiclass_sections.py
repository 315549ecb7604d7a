"""The steps of the multiclass audit (SPEC §3), one function per report section.

Each function reads and extends a shared :class:`MulticlassContext` and returns a
:class:`~bayescal.report.core.Section`. Design errors propagate (the audit
either completes or writes nothing); optional parts that cannot run are kept
as skipped sections with the reason; warnings become coded flags.
"""

from __future__ import annotations

import logging
import warnings as _warnings
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from bayescal._typing import Bins, Dependence, Weights
from bayescal.ambiguity.metrics import ece_plugin, ece_true
from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels.acquisition import AnnotationTargets
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.identification import check_multiclass_design, gold_identifies_multiclass
from bayescal.channels.items import ItemPosteriors
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import DataError, FitError
from bayescal.metrics.binned import class_oracle_ece, class_vote_ece, implausible_flags
from bayescal.metrics.ncece import class_nc_ece
from bayescal.metrics.noise_or_ambiguity import NoiseAmbiguityCheck, noise_or_ambiguity
from bayescal.metrics.subgroups import SubgroupCalibration
from bayescal.metrics.uncertainty import MulticlassNCECEInterval, multiclass_nc_ece_interval
from bayescal.options import VIEW_CHOICES
from bayescal.plotting.ambiguity import reliability_diagram
from bayescal.plotting.multiclass import (
    classwise_errors,
    confusion_heatmaps,
    dispersion_check,
    top_label_reliability,
)
from bayescal.progress import step, step_callback
from bayescal.recal.selection import choose_recalibration
from bayescal.report.context import FlagsMixin
from bayescal.report.core import Section, Table, fmt, fmt_p
from bayescal.report.figures import responsive_figure
from bayescal.report.recal_section import MIN_ITEMS, _rows, _verdict, band_note, band_table
from bayescal.summaries import summarize_multiclass
from bayescal.summaries.summary import Summary

_log = logging.getLogger(__name__)

#: The EM's default iteration limit (``channels.em``), the progress line's denominator.
EM_MAX_ITER = 1000

__all__ = [
    "MULTICLASS_ASSUMPTIONS",
    "VIEW_CHOICES",
    "MulticlassContext",
    "data_section",
    "identification_section",
    "channel_section",
    "diagnostics_section",
    "evidence_section",
    "noise_view_section",
    "ambiguity_view_section",
    "recalibration_section",
    "build_summary",
]

MULTICLASS_ASSUMPTIONS = [
    "One true class per item; an annotator answers class a with probability T[y, a] when the "
    "true class is y, whatever the item looks like (class-conditional noise).",
    "Given the true class (and the channel group), annotators answer independently.",
    "Labelling: the designated annotator answers its own class more often than any other "
    "(diagonal dominance), which fixes which latent class is called which.",
    "Missing answers are missing independently of the true class given the model's output.",
    "Channel groups and evaluation bins are fixed before looking at the answers.",
]


@dataclass(eq=False)
class MulticlassContext(FlagsMixin):
    """What the audit's steps share: settings in, results and flags out."""

    data: Annotations
    channels_choice: str
    groups: Bins | str
    bins: Bins
    weights: Weights
    draws: int
    tune: int
    chains: int
    prob: float
    view: str
    seed: int
    progress: bool
    gold_in_ece: bool = False
    priors: ChannelPriors | None = None
    #: --dependence: the conditional-dependence model's pairs (None: independence only)
    dependence: Dependence | None = None
    items: ItemPosteriors | None = None
    #: --subgroup: the subgroup name or values, how their channels are fitted, the result
    subgroup: str | np.ndarray | None = None
    subgroup_channels: str = "pooled"
    subgroups: SubgroupCalibration | None = None
    next_gold: AnnotationTargets | None = None
    next_reread: AnnotationTargets | None = None
    #: set by the data step (the first), the channel step, the evidence step and the noise
    #: view, in that order
    summary: Summary = field(init=False)
    eval_summary: Summary = field(init=False)
    point: ChannelFit | None = None
    channels: ChannelFit = field(init=False)
    interval: MulticlassNCECEInterval = field(init=False)
    check: NoiseAmbiguityCheck = field(init=False)
    errors: dict = field(default_factory=dict)
    ambiguity: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)
    record: dict = field(default_factory=dict)

    def runs(self, view: str) -> bool:
        """Whether the ``view`` ("noise" / "ambiguity") analysis runs."""
        if self.view == "both":
            return True
        if self.view == "auto":
            return view == ("ambiguity" if self.check.view == "ambiguity" else "noise")
        return self.view == view


def _interval(x: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``prob`` interval over the first (draw) axis, elementwise."""
    q = np.quantile(x, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    return q[0], q[1]


# --------------------------------------------------------------------------- data
def data_section(ctx: MulticlassContext) -> Section:
    d = ctx.data.describe()
    ctx.summary = summarize_multiclass(ctx.data, groups=ctx.groups, bins=ctx.bins)
    # the channels use the gold items at their known class; the calibration error leaves
    # them out unless asked (they are often chosen non-randomly)
    with_gold = ctx.gold_in_ece and ctx.summary.has_gold
    ctx.eval_summary = ctx.summary.with_gold_in_cells() if with_gold else ctx.summary
    answers = (~np.isnan(ctx.data.labels)).sum(axis=1)
    ctx.record["answers_per_item_median"] = float(np.median(answers[answers > 0]))
    rows = [
        ("items", d["n_items"]),
        ("classes", f"{ctx.data.n_classes}: " + ", ".join(ctx.data.classes)),
        ("annotators", d["n_annotators"]),
        ("items nobody answered (excluded from label statistics)", d["n_unannotated"]),
        ("median answers per annotated item", fmt(ctx.record["answers_per_item_median"], 1)),
        ("reference classes given", "yes" if ctx.data.truth is not None else "no"),
        (
            "gold items (class known; used for the confusions)",
            ctx.data.n_gold if ctx.data.gold is not None else "none",
        ),
        ("model accuracy on the majority vote", fmt(_vote_accuracy(ctx.data), 3)),
    ]
    shares = ctx.summary.answer_counts.values
    per = [
        (name, int(shares[j].sum()), " / ".join(f"{v:.2f}" for v in shares[j] / shares[j].sum()))
        for j, name in enumerate(ctx.data.annotators)
    ]
    ctx.unannotated(d["n_unannotated"])
    return Section(
        key="data",
        title="Data",
        tables=[
            Table("Overview", ("quantity", "value"), rows),
            Table(
                "Annotators (answer shares in class order)",
                ("annotator", "answers", "share per class"),
                per,
            ),
        ],
    )


def _vote_accuracy(data) -> float | None:
    lab = data.labels
    answered = ~np.isnan(lab).all(axis=1)
    if not answered.any():
        return None
    votes = np.stack([(lab == y).sum(axis=1) for y in range(data.n_classes)], axis=1)[answered]
    top = votes == votes.max(axis=1, keepdims=True)
    hit = top[np.arange(top.shape[0]), data.probs.argmax(axis=1)[answered]] / top.sum(axis=1)
    return float(hit.mean())


# --------------------------------------------------------------------------- identification
def identification_section(ctx: MulticlassContext) -> Section:
    with _warnings.catch_warnings(record=True):
        msgs = check_multiclass_design(ctx.summary)
    ctx.flag("identification.design", msgs, "identification")
    counts = ctx.summary.group_counts.values
    rows = [
        ("annotators (K)", ctx.summary.n_annotators),
        ("classes (C)", ctx.summary.n_classes),
        ("channel groups (L), non-empty", f"{len(counts)}, {int((counts > 0).sum())}"),
        ("channel grouping", ctx.summary.grouping),
        ("evaluation bins (M)", ctx.summary.n_bins),
        ("observed answer patterns", f"{ctx.summary.n_patterns} of {ctx.summary.n_cells} cells"),
        (
            "channel model",
            "Bayesian multiclass Dawid-Skene (nutpie on the PyMC model's density)"
            if ctx.channels_choice == "bayes"
            else "multiclass Dawid-Skene EM",
        ),
        ("why identified", _why_identified(ctx.summary)),
    ]
    return Section(
        key="identification",
        title="Identification and assumptions",
        tables=[Table("Design", ("check", "value"), rows)],
        notes=["Assumptions of the noise view, in plain words:", *MULTICLASS_ASSUMPTIONS],
    )


def _why_identified(summary) -> str:
    if summary.n_annotators >= 3:
        return (
            "three or more annotators with full-rank confusion matrices identify the model up to "
            "a relabelling of the classes (Kruskal's condition, SPEC §3)"
        )
    if gold_identifies_multiclass(summary)[0]:
        return (
            "gold items: every annotator answered a gold item of every class, so every "
            "confusion row is identified by items of known class"
        )
    return (
        "two annotators with two classes are identified by channel groups with different "
        "prevalences (Hui-Walter)"
    )


# --------------------------------------------------------------------------- channels
def _fit_point(ctx: MulticlassContext) -> None:
    source = "point fit (multiclass Dawid-Skene EM)"
    try:
        with _warnings.catch_warnings(record=True):
            ctx.point = dawid_skene_em(
                ctx.summary,
                prevalence="grouped",
                empty_groups="drop",
                random_state=ctx.seed,
                progress=step_callback(_log, EM_MAX_ITER, "fitting the confusions (EM)"),
            )
        ctx.flag("channels.point-fit", ctx.point.warnings, source)
    except FitError as exc:
        if ctx.channels_choice != "bayes":
            raise
        ctx.point = None
        ctx.flag(
            "channels.point-fit-failed",
            [f"the point estimator failed ({exc}); the report uses the posterior only."],
            source,
        )


def fit_posterior(ctx: MulticlassContext, summary, dependence=None):
    """The audit's Bayesian fit (its priors, settings and seed) on ``summary``; with
    ``dependence`` the conditional-dependence model."""
    if not ctx.progress:
        logging.getLogger("pymc").setLevel(logging.ERROR)
    with _warnings.catch_warnings(record=True):
        return fit_channels_bayes(
            summary,
            # Dirichlet rows for every C (two classes included: the C-class model)
            priors=ChannelPriors(family="dirichlet") if ctx.priors is None else ctx.priors,
            draws=ctx.draws,
            tune=ctx.tune,
            chains=ctx.chains,
            cores=ctx.chains,
            random_state=ctx.seed,
            progress=ctx.progress,
            dependence=dependence,
            # the chains start at the audit's EM fit of this summary: EM runs once
            start=cast(ChannelFit, ctx.point) if summary is ctx.summary else None,
        )


def _fit_bayes(ctx: MulticlassContext) -> None:
    step(
        _log,
        2,
        2,
        "sampling the posterior: %d chains x %d draws (tune %d)",
        ctx.chains,
        ctx.draws,
        ctx.tune,
    )  # (step 1 was the EM)
    ctx.channels = fit_posterior(ctx, ctx.summary)
    ctx.flag("channels.sampler", ctx.channels.warnings, "Bayesian fit")


def _confusion_entries(ctx: MulticlassContext) -> dict:
    """Per annotator: point, posterior mean and interval of every confusion entry."""
    post = ctx.channels
    t = post.confusion.values
    lo, hi = _interval(t, ctx.prob) if post.n_draws > 1 else (None, None)
    out = {}
    for j, name in enumerate(post.annotators):
        out[name] = {
            "point": None if ctx.point is None else ctx.point.confusion.values[0, j].tolist(),
            "mean": t[:, j].mean(axis=0).tolist(),
            "lo": None if lo is None else lo[j].tolist(),
            "hi": None if hi is None else hi[j].tolist(),
        }
    return out


def channel_section(ctx: MulticlassContext) -> Section:
    _fit_point(ctx)
    if ctx.channels_choice == "bayes":
        _fit_bayes(ctx)
        note = (
            f"Posterior from {ctx.chains} chains x {ctx.draws} draws (tune {ctx.tune}); "
            f"intervals are equal-tailed {ctx.percent}%. Point estimates: multiclass "
            "Dawid-Skene EM (10 starts)."
        )
    else:
        assert ctx.point is not None  # a failed point fit raises without the posterior
        ctx.channels = ctx.point
        note = (
            "Point estimates from multiclass Dawid-Skene EM; no channel posterior (use "
            "--channels bayes for intervals)."
        )
    post = ctx.channels
    ctx.record["confusions"] = _confusion_entries(ctx)
    t = post.confusion.values
    rows = []
    for j, name in enumerate(post.annotators):
        for y, cls in enumerate(post.classes):
            vals = t[:, j, y, y]
            if post.n_draws > 1:
                lo, hi = _interval(vals, ctx.prob)
                cell = f"{vals.mean():.3f} [{lo:.3f}, {hi:.3f}]"
            else:
                cell = f"{vals[0]:.3f}"
            pt = "n/a" if ctx.point is None else fmt(ctx.point.confusion.values[0, j, y, y], 3)
            rows.append((name, cls, pt, cell))
    prev_rows = []
    rho = post.class_prevalence.values
    for g, label in enumerate(post.class_prevalence["group"].values):
        n_g = int(post.group_counts.values[g])
        prev_rows.append((str(label), n_g, " / ".join(f"{v:.2f}" for v in rho[:, g].mean(axis=0))))
    k = post.confusion.sizes["annotator"]
    prob = ctx.prob  # bound now: figures are drawn when first shown
    heatmaps = responsive_figure(
        "Confusion matrices (rows: true class; columns: answer)",
        lambda fig, narrow: confusion_heatmaps(
            post,
            prob=prob,
            axes=fig.subplots(k, 1, squeeze=False)[:, 0]
            if narrow
            else fig.subplots(1, k, squeeze=False)[0],
        ),
        size=(3.2 * k, 3.4),
        narrow_height=3.6 * k,
    )
    return Section(
        key="channels",
        title="Annotator confusion matrices",
        tables=[
            Table(
                "Accuracy per true class, P(answer = y | true class y)",
                (
                    "annotator",
                    "true class",
                    "point (EM)",
                    f"posterior mean [{ctx.percent}%]" if post.n_draws > 1 else "value",
                ),
                rows,
            ),
            Table(
                "Class prevalence P(Y = y | channel group), in class order",
                ("channel group", "items", "prevalence"),
                prev_rows,
            ),
        ],
        figures=[heatmaps],
        notes=[note],
    )


# --------------------------------------------------------------------------- diagnostics
def diagnostics_section(ctx: MulticlassContext) -> Section:
    if ctx.channels_choice != "bayes":
        return Section(
            key="diagnostics",
            title="Sampler diagnostics",
            status="skipped",
            reason="the confusions come from multiclass EM; there is no sampler to diagnose.",
        )
    diag = ctx.channels.diagnostics
    rows = [
        ("R-hat (max over confusion, prevalence)", fmt(diag.get("rhat_max"), 4), "<= 1.01"),
        ("bulk ESS (min)", fmt(diag.get("ess_bulk_min"), 0), "> 100 per chain"),
        ("tail ESS (min)", fmt(diag.get("ess_tail_min"), 0), "> 100 per chain"),
        ("divergent transitions", fmt(diag.get("divergences")), "0"),
        ("E-BFMI (min)", fmt(diag.get("bfmi_min"), 3), "> 0.3"),
        (
            "draws relabelled to the designated annotator's labelling",
            fmt(diag.get("relabelled_draws")),
            "0",
        ),
        ("sampling seconds", fmt(diag.get("sampling_seconds"), 1), ""),
    ]
    return Section(
        key="diagnostics",
        title="Sampler diagnostics",
        tables=[Table("NUTS diagnostics", ("check", "value", "target"), rows)],
    )


# --------------------------------------------------------------------------- evidence
def evidence_section(ctx: MulticlassContext) -> Section:
    """The noise-or-ambiguity check; it decides which analysis runs with ``view="auto"``."""
    # at the maximum-likelihood fit: the best noise model is what the evidence is about
    fit = ctx.point if ctx.point is not None else ctx.channels
    with _warnings.catch_warnings(record=True):
        ctx.check = noise_or_ambiguity(ctx.summary, fit, random_state=ctx.seed)
    chk = ctx.check
    for f in chk.flags:
        if f not in ctx.flags:
            ctx.flags.append(f)
    pc = chk.per_class
    rows = [
        (
            str(cls),
            fmt(float(pc["items"][i]), 0),
            fmt(float(pc["dispersion_observed"][i]), 3),
            fmt(float(pc["dispersion_replicated"][i]), 3),
            fmt(float(pc["dispersion_tail"][i]), 3),
            fmt(float(pc["disagreement_observed"][i]), 4),
            fmt(float(pc["disagreement_excess"][i]), 4),
            fmt(float(pc["disagreement_tail"][i]), 3),
        )
        for i, cls in enumerate(pc["class"].values)
    ]
    o = chk.overall
    rows.append(
        (
            "all",
            fmt(o["items"], 0),
            fmt(o["dispersion_observed"], 3),
            fmt(o["dispersion_replicated"], 3),
            fmt(o["dispersion_tail"], 3),
            fmt(o["disagreement_observed"], 4),
            fmt(o["disagreement_excess"], 4),
            fmt(o["disagreement_tail"], 3),
        )
    )
    tables = [
        Table(
            "Within-item dispersion and disagreement per latent class (items with 2+ answers)",
            (
                "class",
                "items",
                "dispersion",
                "replicated",
                "tail prob.",
                "disagreement",
                "excess",
                "tail prob.",
            ),
            rows,
        )
    ]
    pairs = chk.pairs
    shown = np.lexsort((-pairs["excess_sd"].values, pairs["tail"].values))[:10]
    tables.append(
        Table(
            "Annotator-pair agreement tables: deviance vs replicated data (all pairs, then the "
            "pairs furthest from the noise model)",
            ("pair", "observed", "replicated", "tail prob."),
            [
                (
                    "all pairs",
                    fmt(o["pattern_discrepancy_observed"], 1),
                    fmt(o["pattern_discrepancy_replicated"], 1),
                    fmt(o["pattern_tail"], 3),
                ),
                *(
                    (
                        str(pairs["pair"].values[i]),
                        fmt(float(pairs["discrepancy_observed"][i]), 1),
                        fmt(float(pairs["discrepancy_replicated"][i]), 1),
                        fmt(float(pairs["tail"][i]), 3),
                    )
                    for i in shown
                ),
            ],
        )
    )
    dispersion = responsive_figure(
        "Within-item dispersion: observed vs the noise model",
        lambda fig, narrow: dispersion_check(chk, ax=fig.subplots()),
        size=(7, 3.2),
        narrow_height=3.4,
    )
    chosen = {
        "auto": f"the evidence supports the {chk.view} view, so "
        + ("the ambiguity analysis" if chk.view == "ambiguity" else "the noise analysis")
        + " leads (use --view both to run both)",
        "noise": "--view noise: the noise analysis runs whatever the evidence",
        "ambiguity": "--view ambiguity: the ambiguity analysis runs whatever the evidence",
        "both": "--view both: both analyses run",
    }[ctx.view]
    notes = [
        f"Verdict: {chk.view}. " + " ".join(chk.reasons),
        f"Replicated data: {chk.replicates} sets ({chk.source} at the "
        f"{'EM' if ctx.point is not None else 'posterior'} fit: the best-fitting noise model"
        + (", refitted on every replicate" if chk.refit is not None else "")
        + "), each keeping every item's channel group and answering annotators; dispersion "
        "near 1 is what one true class per item with the fitted confusions produces.",
        f"Which analysis runs: {chosen}.",
    ]
    return Section(
        key="evidence",
        title="Noise or ambiguity?",
        tables=tables,
        figures=[dispersion],
        notes=notes,
    )


# --------------------------------------------------------------------------- noise view
def noise_view_section(ctx: MulticlassContext) -> Section:
    """Top-label and class-wise NC-ECE with intervals, beside the vote baselines."""
    s = ctx.eval_summary
    e = ctx.errors
    e["soft_vote"] = class_vote_ece(s, "soft_vote")
    e["majority_vote"] = class_vote_ece(s, "majority_vote")
    if s.has_truth:
        e["oracle"] = class_oracle_ece(s)
    point = ctx.point if ctx.point is not None else ctx.channels
    e["nc_point"] = class_nc_ece(s, point, weights=ctx.weights)
    # channels fitted on these items: joint route for a posterior, evaluation-only for a
    # point fit (adding channel draws as an independent source over-covers, issue 22)
    ctx.interval = multiclass_nc_ece_interval(
        s,
        ctx.channels,
        point_channels=point,
        weights=ctx.weights,
        prob=ctx.prob,
        sample_use="joint" if ctx.channels.n_draws > 1 else "reuse",
        random_state=ctx.seed,
    )
    acc = ctx.interval.top_label.accuracy
    for f in [
        *implausible_flags(e["nc_point"].top_label, None if acc is None else acc.std(axis=0)),
        *implausible_flags(e["nc_point"].classwise),
    ]:
        if f not in ctx.flags:
            ctx.flags.append(f)
    ctx.flags.sort(key=lambda f: f.severity != "error")
    if not ctx.runs("noise"):
        return Section(
            key="noise",
            title="Calibration error, noise view (one true class per item)",
            status="skipped",
            reason=f"the evidence supports the {ctx.check.view} view; the noise-corrected errors "
            "are still in summary.json. Run with --view both (or --view noise) to show them.",
        )
    iv = ctx.interval
    rows = []
    for name, part, label in (
        ("top-label", iv.top_label, "top_label"),
        ("class-wise", iv.classwise, "classwise"),
    ):
        lo, hi = part.interval()
        rows += [
            (
                f"{name}: soft vote (answer shares as truth)",
                fmt(getattr(e["soft_vote"], label).value),
                "",
            ),
            (f"{name}: majority vote", fmt(getattr(e["majority_vote"], label).value), ""),
            (f"{name}: NC-ECE plug-in (point channels)", fmt(part.plugin), ""),
            (
                f"{name}: NC-ECE, bias-aware estimate and {ctx.percent}% interval",
                fmt(part.estimate),
                f"[{fmt(lo)}, {fmt(hi)}]",
            ),
            (f"{name}: test of perfect calibration (p-value)", fmt_p(part.p_value()), ""),
        ]
        if "oracle" in e:
            rows.append(
                (
                    f"{name}: reference-class ECE (truth column)",
                    fmt(getattr(e["oracle"], label).value),
                    "",
                )
            )
    dec = iv.top_label.decomposition()
    bayesian = ctx.channels.n_draws > 1
    if bayesian:  # point channels have no channel source: no zero-width row (issue 12 item 4)
        rows.append(
            (
                "top-label: channel uncertainty only",
                "",
                f"[{fmt(dec['channel']['lo'])}, {fmt(dec['channel']['hi'])}]",
            )
        )
    rows.append(
        (
            "top-label: evaluation-sample uncertainty only",
            "",
            f"[{fmt(dec['evaluation']['lo'])}, {fmt(dec['evaluation']['hi'])}]",
        )
    )
    per_class = [
        (
            str(cls),
            fmt(float(e["nc_point"].classwise.class_ece.values[0, i])),
            fmt(float(e["soft_vote"].classwise.class_ece.values[0, i])),
            fmt(float(e["majority_vote"].classwise.class_ece.values[0, i])),
            fmt(float(e["oracle"].classwise.class_ece.values[0, i])) if "oracle" in e else "n/a",
        )
        for i, cls in enumerate(s.classes)
    ]
    # bound now: figures are drawn when first shown, and later steps add to ctx.errors
    curves = [e[key].top_label for key in ("soft_vote", "majority_vote", "nc_point")]
    accuracy_band, prob = iv.accuracy_band(ctx.prob), ctx.prob
    oracle_curve = e["oracle"].top_label if "oracle" in e else None
    reliability = responsive_figure(
        "Top-label reliability: naive vs noise-corrected",
        lambda fig, narrow: top_label_reliability(
            *curves,
            band=accuracy_band,
            reference=oracle_curve,
            prob=prob,
            axes=fig.subplots(2, 1) if narrow else fig.subplots(1, 2, sharey=True),
        ),
        size=(9, 4),
        narrow_height=7.6,
    )
    bars = {
        "noise-corrected": e["nc_point"].classwise,
        "soft vote": e["soft_vote"].classwise,
        "majority vote": e["majority_vote"].classwise,
    }
    if "oracle" in e:
        bars["reference classes"] = e["oracle"].classwise
    per_class_figure = responsive_figure(
        "Class-wise calibration error per class",
        lambda fig, narrow: classwise_errors(bars, ax=fig.subplots()),
        size=(7, 3.2),
        narrow_height=3.6,
    )
    notes = [
        "All errors use the same fixed bins (top-label: on max p; class-wise: on each p_k) and "
        "the same annotated items. NC-ECE replaces each item's one-hot label by its corrected "
        "one-hot U = sum_j w_j (T_j^T)^-1 e_(A_j) / sum_j w_j, unbiased for the true class "
        "under the assumptions of the noise view (SPEC §3).",
        "The estimate subtracts the upward bias of the absolute values (bootstrap bias "
        "correction); the interval "
        + (
            "draws each bin's rate of the target class from its latent-class posterior given "
            "each channel draw (channel and sampling uncertainty correlated as they are), bin "
            "shares from a Bayesian bootstrap of the items"
            if bayesian
            else "is evaluation-only: a Bayesian bootstrap of the items with the channels held "
            "at their EM estimate (use --channels bayes to add channel uncertainty)"
        )
        + " and reaches 0 when the data are consistent with perfect calibration (SPEC §4).",
    ]
    return Section(
        key="noise",
        title="Calibration error, noise view (one true class per item)",
        tables=[
            Table(
                "Expected calibration error (binned, lower is better)",
                ("criterion", "value", f"{ctx.percent}% interval"),
                rows,
            ),
            Table(
                "Class-wise error per class (point channels)",
                ("class", "NC-ECE", "soft vote", "majority vote", "reference classes"),
                per_class,
            ),
        ],
        figures=[reliability, per_class_figure],
        notes=notes,
    )


# --------------------------------------------------------------------------- ambiguity view
def ambiguity_view_section(ctx: MulticlassContext) -> Section:
    """ECE against the annotators' answer distribution (Tao et al.), on the audit's bins."""
    data = ctx.data
    answered = np.flatnonzero(data.annotated)
    lab = data.labels[answered]
    counts = np.stack([(lab == y).sum(axis=1) for y in range(data.n_classes)], axis=1)
    # the container accepts rows summing to one within 1e-5 (float32 softmax output); the
    # ambiguity metrics want 1e-6, so rows are rescaled by at most 1e-5 (noted in the section)
    probs = data.probs[answered] / data.probs[answered].sum(axis=1, keepdims=True)
    m = ctx.summary.n_bins
    uniform = np.array_equal(ctx.summary.bin_edges, np.linspace(0, 1, m + 1))
    ctx.ambiguity = {"bins": m, "uniform_bins": uniform}
    if uniform:
        ctx.ambiguity["ece_true"] = float(
            ece_true(probs, counts, n_bins=m, random_state=ctx.seed).ece
        )
        ctx.ambiguity["ece_plugin"] = float(ece_plugin(probs, counts, n_bins=m).ece)
    if not ctx.runs("ambiguity"):
        return Section(
            key="ambiguity",
            title="Calibration error, ambiguity view (the answer distribution as truth)",
            status="skipped",
            reason=f"the evidence supports the {ctx.check.view} view; ECE_true is still in "
            "summary.json. Run with --view both (or --view ambiguity) to show this section.",
        )
    if not uniform:
        return Section(
            key="ambiguity",
            title="Calibration error, ambiguity view (the answer distribution as truth)",
            status="skipped",
            reason="ECE_true (Tao et al.) is defined on equal-width bins; the audit's bins are "
            "not equal-width.",
        )
    rows = [
        (
            "ECE_true: top-label ECE against labels drawn from each item's answer distribution",
            fmt(ctx.ambiguity["ece_true"]),
        ),
        (
            "plug-in: bin accuracy = mean share of the predicted class",
            fmt(ctx.ambiguity["ece_plugin"]),
        ),
    ]
    curve = ece_true(probs, counts, n_bins=m, random_state=ctx.seed)
    answer_reliability = responsive_figure(
        "Reliability against the answer distribution",
        lambda fig, narrow: reliability_diagram(
            curve, ax=fig.subplots(), title="against the answer distribution"
        ),
        size=(4.5, 4.2),
        narrow_height=3.9,
    )
    notes = [
        f"Tao et al.'s metric on the audit's {m} equal-width bins (their protocol uses 15) and "
        "the annotated items: each item's answer shares are its target distribution. With few "
        "answers per item the shares are a noisy estimate of that distribution; treat the "
        "number as the ambiguity view's counterpart of the soft-vote error. Probability rows "
        "are rescaled to sum to one exactly (the data's sums are within 1e-5 of one).",
        "For calibrators fitted to soft targets and their recommendation, run "
        "`bayescal audit-ambiguity` on the same items.",
    ]
    return Section(
        key="ambiguity",
        title="Calibration error, ambiguity view (the answer distribution as truth)",
        tables=[Table("Ambiguity-view calibration error", ("criterion", "value"), rows)],
        figures=[answer_reliability],
        notes=notes,
    )


# --------------------------------------------------------------------------- recalibration
def recalibration_section(ctx: MulticlassContext) -> Section:
    """The one recalibration choice (:func:`~bayescal.recal.selection.choose_recalibration`):
    the original probabilities beside corrected and naive temperature / vector scaling."""
    data = ctx.data
    if not ctx.runs("noise"):
        return Section(
            key="recalibration",
            title="Recalibration (noise view)",
            status="skipped",
            reason=f"the evidence supports the {ctx.check.view} view, and corrected maps assume "
            "one true class per item. Soft-target calibrators fitted to the answer distribution "
            "are compared by `bayescal audit-ambiguity`; --view both runs the corrected maps "
            "here anyway.",
        )
    n_annotated = int(data.annotated.sum())
    if n_annotated < MIN_ITEMS:
        return Section(
            key="recalibration",
            title="Recalibration",
            status="skipped",
            reason=f"only {n_annotated} annotated items; choosing a map on held-out data (pilot, "
            f"evaluation-channel and test partitions) needs at least {MIN_ITEMS}.",
        )
    channels = ctx.channels
    try:
        choice = choose_recalibration(
            data,
            groups=cast(str, ctx.groups),
            bins=ctx.summary.bin_edges,
            weights=cast(str, ctx.weights),
            posterior=channels if channels.n_draws > 1 else None,
            prob=ctx.prob,
            random_state=ctx.seed,
        )
    except (FitError, DataError) as exc:
        return Section(
            key="recalibration",
            title="Recalibration",
            status="skipped",
            reason=f"the held-out map selection could not run: {exc}",
        )
    for f in choice.flags:
        if f not in ctx.flags:
            ctx.flags.append(f)
    record = choice.to_dict()
    record["keeps_original"] = choice.keeps_original
    ctx.record["recalibration"] = record
    notes = [
        _verdict(choice),
        f"Protocol (Hanada & Futami, Sec. 6.3 / App. G.4, as for two classes): "
        f"{choice.sizes['pilot']} pilot items split {choice.settings['pilot_splits']} times "
        "into channel / map-fitting / validation subsets; candidates are chosen by mean "
        "validation top-label NC-ECE (bias-corrected), a map only if it beats the original "
        f"probabilities by more than one standard error. Test: {choice.sizes['test']} other "
        "items, bins on the recalibrated confidence."
        + (
            f" The selection used a random subsample of {choice.sizes['used']} of the "
            f"{choice.sizes['annotated']} annotated items (its cost grows with the items; the "
            "protocol holds at any size, and fewer items only make it keep the original "
            "probabilities more often)."
            if choice.sizes.get("used", 0) < choice.sizes.get("annotated", 0)
            else ""
        ),
    ]
    if band_note(choice):
        notes.insert(1, cast(str, band_note(choice)))
    classes = [str(c) for c in data.classes]
    band = band_table(choice, {"scale": classes, "bias": classes})
    return Section(
        key="recalibration",
        title="Recalibration (noise view)",
        tables=[
            Table(
                "Held-out calibration error of the original and recalibrated probabilities "
                "(top-label, lower is better)",
                (
                    "map",
                    "target",
                    "validation NC-ECE (mean ± SD)",
                    "wins",
                    "test NC-ECE",
                    "test soft-vote ECE",
                    "test reference-class ECE",
                ),
                _rows(choice),
            ),
            *([band] if band is not None else []),
        ],
        notes=notes,
    )


# ------------------------------------------------------------------------ summary.json
def _ece_entry(part, vote, majority, oracle):
    out = {
        "soft_vote": vote.value,
        "majority_vote": majority.value,
        "nc": part.to_dict(),
    }
    if oracle is not None:
        out["oracle"] = oracle.value
    return out


def build_summary(ctx: MulticlassContext) -> dict:
    """The audit's keys of ``summary.json`` (the report adds warnings and reproducibility).

    Top level ``ece`` keeps the binary layout for the top-label error
    (``soft_vote``, ``majority_vote``, ``nc.{point, plugin, lo, hi, prob, p_value}``:
    ``point`` the bias-aware estimate, always inside ``[lo, hi]``, ``plugin`` the raw
    plug-in it corrects; ``oracle``); ``ece.classwise`` holds the same for the class-wise
    error and, per class, ``nc_plugin`` (that class's raw plug-in at the point channels,
    not bias-corrected) beside the vote and reference-label ECEs; ``ece.ambiguity`` the
    ambiguity view's ECE_true.
    """
    e = ctx.errors
    post = ctx.channels
    described = ctx.data.describe()
    oracle = e.get("oracle")
    top = _ece_entry(
        ctx.interval.top_label,
        e["soft_vote"].top_label,
        e["majority_vote"].top_label,
        None if oracle is None else oracle.top_label,
    )
    cw = _ece_entry(
        ctx.interval.classwise,
        e["soft_vote"].classwise,
        e["majority_vote"].classwise,
        None if oracle is None else oracle.classwise,
    )
    unreliable = sorted({f.code for f in ctx.flags if f.severity == "error"})
    for entry in (top, cw):
        entry["nc"]["reliable"] = not unreliable
        entry["nc"]["unreliable_because"] = unreliable
    cw["per_class"] = {
        str(cls): {
            "nc_plugin": float(e["nc_point"].classwise.class_ece.values[0, i]),
            "soft_vote": float(e["soft_vote"].classwise.class_ece.values[0, i]),
            "majority_vote": float(e["majority_vote"].classwise.class_ece.values[0, i]),
            **(
                {"oracle": float(oracle.classwise.class_ece.values[0, i])}
                if oracle is not None
                else {}
            ),
        }
        for i, cls in enumerate(ctx.summary.classes)
    }
    prev = {}
    rho = post.class_prevalence.values
    for g, label in enumerate(post.class_prevalence["group"].values):
        lo, hi = _interval(rho[:, g], ctx.prob) if post.n_draws > 1 else (None, None)
        prev[str(label)] = {
            "mean": rho[:, g].mean(axis=0).tolist(),
            "lo": None if lo is None else lo.tolist(),
            "hi": None if hi is None else hi.tolist(),
            "n": int(post.group_counts.values[g]),
        }
    diag = post.diagnostics if ctx.channels_choice == "bayes" else {}
    out = {
        "n_items": described["n_items"],
        "n_annotators": ctx.data.n_annotators,
        "n_classes": ctx.data.n_classes,
        "classes": list(ctx.data.classes),
        "n_unannotated": described["n_unannotated"],
        "channels": {
            "method": post.method,
            "point_method": "dawid_skene_em",
            "annotators": ctx.record["confusions"],
            "prevalence": prev,
        },
        "ece": {
            **top,
            "target": "top_label",
            "bins": [float(x) for x in ctx.summary.bin_edges],
            "classwise": cw,
            "ambiguity": dict(ctx.ambiguity),
        },
        "noise_or_ambiguity": ctx.check.to_dict(),
        "view": {
            "requested": ctx.view,
            "evidence": ctx.check.view,
            "ran": [v for v in ("noise", "ambiguity") if ctx.runs(v)],
        },
        "diagnostics": {
            "rhat_max": diag.get("rhat_max"),
            "ess_bulk_min": diag.get("ess_bulk_min"),
            "divergences": diag.get("divergences"),
            "relabelled_draws": diag.get("relabelled_draws"),
        },
    }
    if "recalibration" in ctx.record:
        out["recalibration"] = ctx.record["recalibration"]
    out["knowledge"] = ctx.record.get("knowledge", {})
    return out
