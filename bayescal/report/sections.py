"""The steps of an audit, one function per report section, for every number of classes.

Each function reads and extends the shared :class:`Context` and returns a
:class:`~bayescal.report.core.Section`. A step whose content differs by number of classes
branches on ``ctx.classwise`` (the class-wise audit: C > 2, or the two-class equivalence
check of ``audit_multiclass``): channels ``a``, ``b`` and the binary NC-ECE for two classes
(Hanada & Futami), confusion matrices and the top-label / class-wise errors (SPEC §3)
otherwise. Errors in the user's design (for example a non-identified design) propagate: an
audit either completes or writes nothing. Optional features that are unavailable are
reported as skipped sections with the reason. Warnings are collected as coded
:class:`~bayescal.flags.Flag` objects.
"""

from __future__ import annotations

import logging
import warnings as _warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

import numpy as np

from bayescal._typing import Bins, Dependence, Weights
from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels.acquisition import AnnotationTargets
from bayescal.channels.fit import fit_channels
from bayescal.channels.identification import (
    check_design,
    check_multiclass_design,
    gold_identifies,
    gold_identifies_multiclass,
)
from bayescal.channels.items import ItemPosteriors
from bayescal.channels.plausibility import agreement_flags, ece_range_flags, plausibility_flags
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import FitError
from bayescal.flags import Flag
from bayescal.metrics.binned import (
    class_oracle_ece,
    class_vote_ece,
    implausible_flags,
    majority_vote_ece,
    oracle_ece,
    soft_vote_ece,
)
from bayescal.metrics.ncece import class_nc_ece, nc_ece
from bayescal.metrics.noise_or_ambiguity import NoiseAmbiguityCheck
from bayescal.metrics.subgroups import SubgroupCalibration
from bayescal.metrics.uncertainty import (
    MulticlassNCECEInterval,
    NCECEPosterior,
    multiclass_nc_ece_interval,
    nc_ece_interval,
)
from bayescal.plotting.binary import (
    channel_forest,
    channel_trace,
    noise_corrected_reliability,
    pattern_predictive_check,
)
from bayescal.plotting.multiclass import classwise_errors, confusion_heatmaps, top_label_reliability
from bayescal.progress import step, step_callback
from bayescal.report.core import Section, Table, fmt, fmt_p
from bayescal.report.figures import responsive_figure
from bayescal.summaries.summary import Summary, summarize

_log = logging.getLogger(__name__)

#: The EM's default iteration limit (``channels.em``), the progress line's denominator.
EM_MAX_ITER = 1000
#: Per-annotator figures draw at most this many annotators (the weakest: smallest gap
#: b - a, lowest mean accuracy); the tables list every annotator. A figure row per
#: annotator at K = 1,000 was a 450-inch image that took 57 s to draw.
FOREST_MAX_ANNOTATORS = 40
HEATMAP_MAX_ANNOTATORS = 10
#: The predictive check draws one panel per score group: at most this many (the groups
#: with the most observed counts outside their bars; the table lists every group).
PPC_MAX_GROUPS = 12

__all__ = [
    "ASSUMPTIONS",
    "MULTICLASS_ASSUMPTIONS",
    "Context",
    "data_section",
    "identification_section",
    "channel_section",
    "channel_entries",
    "diagnostics_section",
    "ece_section",
    "fit_posterior",
    "point_options",
    "build_summary",
]

ASSUMPTIONS = [
    "Class-conditional noise: an annotator's chance of answering 1 depends only on the true class "
    "(a = P(1 | negative), b = P(1 | positive)), not on the item's difficulty or its score.",
    "Conditional independence: given the true class "
    "(and score group), annotators err independently.",
    "Orientation: the designated annotator is better than chance (a < b), which fixes which latent "
    "class is 'positive'.",
    "Missing answers are missing independently of the true class given the score.",
    "The score groups and evaluation bins are fixed before looking at the labels.",
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


_POINT_METHODS = {
    "score-bin-em": "score_bin_em",
    "dawid-skene-em": "dawid_skene_em",
    "gmm": "gmm",
    "hui-walter": "hui_walter",
}


@dataclass(eq=False)
class Context:
    """What the audit's steps share: settings in, results and flags out.

    Examples
    --------
    >>> c = Context(None, "bayes", 5, 10, "equal", 1, 1, 1, 0.9, 0, False)
    >>> c.flag("x.y", ["once", "once"], "test"); c.unannotated(0); c.unannotated(3)
    >>> [f.code for f in c.flags], c.percent
    (['x.y', 'data.unannotated'], 90)
    """

    data: Annotations | Summary
    channels_choice: str
    groups: Bins | str
    bins: Bins
    weights: Weights
    draws: int
    tune: int
    chains: int
    prob: float
    seed: int
    progress: bool
    #: the class-wise audit (confusions, top-label and class-wise errors, the views)
    classwise: bool = False
    #: which analysis of the class-wise audit runs ("auto", "noise", "ambiguity", "both")
    view: str = "auto"
    #: set by the data step (the first), the channel step and the ECE step, in that order;
    #: ``eval_summary`` is the summary the calibration errors use (gold items in its cells
    #: when ``gold_in_ece``)
    summary: Summary = field(init=False)
    eval_summary: Summary = field(init=False)
    point: ChannelFit | None = None
    channels: ChannelFit = field(init=False)
    interval: NCECEPosterior | MulticlassNCECEInterval = field(init=False)
    #: the noise-or-ambiguity evidence and the ambiguity view's numbers (class-wise audit)
    check: NoiseAmbiguityCheck = field(init=False)
    ambiguity: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)
    point_method: str = ""
    #: what later steps and summary.json read of earlier steps (channel entries, recalibration
    #: choice, knowledge, ...)
    diagnostics: dict = field(default_factory=dict)
    #: channel priors of the Bayesian fit (None: defaults); gold items in the ECE bins
    priors: ChannelPriors | None = None
    gold_in_ece: bool = False
    #: dependence groups of the conditional-dependence model (None: independence only)
    dependence: Dependence | None = None
    items: ItemPosteriors | None = None
    #: --subgroup: the subgroup name or values, how their channels are fitted, the result
    subgroup: str | np.ndarray | None = None
    subgroup_channels: str = "pooled"
    subgroups: SubgroupCalibration | None = None
    next_gold: AnnotationTargets | None = None
    next_reread: AnnotationTargets | None = None

    def flag(self, code: str, messages: Iterable[str], source: str) -> None:
        """Add one flag per message (each message once)."""
        self.add_flags(Flag(code, str(message), source) for message in messages)

    def add_flags(self, flags: Iterable[Flag]) -> None:
        """Add flags made by a step's library call (each once, in order)."""
        for f in flags:
            if f not in self.flags:
                self.flags.append(f)

    def unannotated(self, n_unannotated: int) -> None:
        """Flag items nobody answered (excluded from every label statistic)."""
        if n_unannotated:
            self.flag(
                "data.unannotated",
                [
                    f"{n_unannotated} item(s) have no answer; "
                    "they are excluded from every label statistic."
                ],
                "data",
            )

    @property
    def percent(self) -> int:
        """The interval probability in percent, as the report prints it."""
        return int(round(self.prob * 100))

    def other_view(self, key: str, title: str, rest: str) -> Section:
        """The section of the view the evidence does not support, skipped; ``rest`` ends
        the reason."""
        reason = f"the evidence supports the {self.check.view} view{rest}"
        return Section(key=key, title=title, status="skipped", reason=reason)

    def runs(self, view: str) -> bool:
        """Whether the ``view`` ("noise" / "ambiguity") analysis runs (class-wise audit)."""
        if self.view == "both":
            return True
        if self.view == "auto":
            return view == ("ambiguity" if self.check.view == "ambiguity" else "noise")
        return self.view == view


def equal_tailed(x: np.ndarray, prob: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``prob`` interval over the first (draw) axis, elementwise."""
    q = np.quantile(x, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    return q[0], q[1]


# --------------------------------------------------------------------------- data
def data_section(ctx: Context) -> Section:
    """The data, summarised once; gold items move into the evaluation cells when asked."""
    d = ctx.data.describe()
    if isinstance(ctx.data, Summary):
        ctx.summary = ctx.data  # its groups and bins were fixed when it was built
        ctx.groups = (
            list(ctx.summary.group_edges) if ctx.summary.group_edges is not None else "data"
        )
        ctx.bins = list(ctx.summary.bin_edges)
    else:
        ctx.summary = summarize(ctx.data, groups=ctx.groups, bins=ctx.bins)
    # the channels use the gold items at their known class; the calibration error leaves
    # them out unless asked (they are often chosen non-randomly). Channel tables do not
    # change with the cells, so the two-class audit fits on the moved summary too.
    with_gold = ctx.gold_in_ece and ctx.summary.has_gold
    ctx.eval_summary = ctx.summary.with_gold_in_cells() if with_gold else ctx.summary
    if not ctx.classwise:
        ctx.summary = ctx.eval_summary
    ctx.unannotated(d["n_unannotated"])
    if isinstance(ctx.data, Summary):  # what its reader could not check, in the report
        ctx.flag("data.unchecked", ctx.data.notes, "data")
    tables = _classwise_data_tables(ctx, d) if ctx.classwise else _binary_data_tables(ctx, d)
    return Section(key="data", title="Data", tables=tables)


def _binary_data_tables(ctx: Context, d: dict) -> list[Table]:
    rows = [
        ("items", d["n_items"]),
        ("annotators", d["n_annotators"]),
        ("items nobody answered (excluded from label statistics)", d["n_unannotated"]),
        ("answered fraction of item x annotator cells", f"{d['answered_fraction']:.1%}"),
        (
            "items with 2+ answers that are unanimous",
            "n/a" if d["unanimous_fraction"] is None else f"{d['unanimous_fraction']:.1%}",
        ),
        ("reference labels given", "yes" if d["has_truth"] else "no"),
    ]
    per = [
        (name, d["answers_per_annotator"][name], fmt(d["positive_rate_per_annotator"][name]))
        for name in ctx.data.annotators
    ]
    return [
        Table("Overview", ("quantity", "value"), rows),
        Table("Annotators", ("annotator", "answers", "share answering 1"), per),
    ]


def _classwise_data_tables(ctx: Context, d: dict) -> list[Table]:
    data = cast(Annotations, ctx.data)  # the class-wise audit refuses a bare summary
    answers = (~np.isnan(data.labels)).sum(axis=1)
    ctx.diagnostics["answers_per_item_median"] = float(np.median(answers[answers > 0]))
    rows = [
        ("items", d["n_items"]),
        ("classes", f"{data.n_classes}: " + ", ".join(data.classes)),
        ("annotators", d["n_annotators"]),
        ("items nobody answered (excluded from label statistics)", d["n_unannotated"]),
        ("median answers per annotated item", fmt(ctx.diagnostics["answers_per_item_median"], 1)),
        ("reference classes given", "yes" if data.truth is not None else "no"),
        ("gold items (class known; used for the confusions)", _gold_count_text(ctx.summary)),
        ("model accuracy on the majority vote", fmt(_vote_accuracy(data), 3)),
    ]
    shares = ctx.summary.answer_counts.values
    per = [
        (name, int(shares[j].sum()), " / ".join(f"{v:.2f}" for v in shares[j] / shares[j].sum()))
        for j, name in enumerate(data.annotators)
    ]
    return [
        Table("Overview", ("quantity", "value"), rows),
        Table(
            "Annotators (answer shares in class order)",
            ("annotator", "answers", "share per class"),
            per,
        ),
    ]


def _gold_count_text(summary: Summary) -> str:
    """The answered gold items (those the channels use) and the unanswered ones left out.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.summaries.summary import summarize_arrays
    >>> s = summarize_arrays([0.2, 0.9, 0.6], np.array([[0.0], [np.nan], [1.0]]),
    ...                      annotators=["r1"], bin_edges=np.linspace(0, 1, 3),
    ...                      gold=[0, 1, np.nan])
    >>> _gold_count_text(s)
    '1 (1 more without answers: left out)'
    """
    if not summary.has_gold:
        return "none"
    answered, left_out = int(summary.n_gold.sum()), int(summary.n_gold_unanswered.sum())
    return f"{answered}" + (f" ({left_out} more without answers: left out)" if left_out else "")


def _vote_accuracy(data: Annotations) -> float | None:
    lab = data.labels
    answered = ~np.isnan(lab).all(axis=1)
    if not answered.any():
        return None
    votes = np.stack([(lab == y).sum(axis=1) for y in range(data.n_classes)], axis=1)[answered]
    top = votes == votes.max(axis=1, keepdims=True)
    hit = top[np.arange(top.shape[0]), data.probs.argmax(axis=1)[answered]] / top.sum(axis=1)
    return float(hit.mean())


# --------------------------------------------------------------------------- identification
def identification_section(ctx: Context) -> Section:
    s = ctx.summary
    choice = ctx.channels_choice
    bayes = choice == "bayes"
    if ctx.classwise:
        ctx.point_method = "dawid_skene_em"
        model = (
            "Bayesian multiclass Dawid-Skene (nutpie on the PyMC model's density)"
            if bayes
            else "multiclass Dawid-Skene EM"
        )
    else:
        ctx.point_method = "score_bin_em" if bayes else _POINT_METHODS[choice]
        model = "Bayesian grouped Dawid-Skene (PyMC)" if bayes else ctx.point_method
    with _warnings.catch_warnings(record=True):
        msgs = check_multiclass_design(s) if ctx.classwise else check_design(s, ctx.point_method)
    ctx.flag("identification.design", msgs, "identification")
    counts = s.group_counts.values
    non_empty = f"{len(counts)}, {int((counts > 0).sum())}"
    rows = (
        [
            ("annotators (K)", s.n_annotators),
            ("classes (C)", s.n_classes),
            ("channel groups (L), non-empty", non_empty),
            ("channel grouping", s.grouping),
            ("evaluation bins (M)", s.n_bins),
            ("observed answer patterns", f"{s.n_patterns} of {s.n_cells} cells"),
        ]
        if ctx.classwise
        else [
            ("annotators (K)", ctx.data.n_annotators),
            ("score groups (L), non-empty", non_empty),
            ("evaluation bins (M)", s.n_bins),
        ]
    )
    rows += [("channel model", model), ("why identified", _why_identified(ctx))]
    assumptions = (
        ["Assumptions of the noise view, in plain words:", *MULTICLASS_ASSUMPTIONS]
        if ctx.classwise
        else ["Assumptions, in plain words:", *ASSUMPTIONS]
    )
    return Section(
        key="identification",
        title="Identification and assumptions",
        tables=[Table("Design", ("check", "value"), rows)],
        notes=assumptions,
    )


def _why_identified(ctx: Context) -> str:
    k = ctx.summary.n_annotators
    if ctx.classwise:
        if k >= 3:
            return (
                "three or more annotators with full-rank confusion matrices identify the model "
                "up to a relabelling of the classes (Kruskal's condition, SPEC §3)"
            )
        if gold_identifies_multiclass(ctx.summary)[0]:
            return (
                "gold items: every annotator answered a gold item of every class, so every "
                "confusion row is identified by items of known class"
            )
        return (
            "two annotators with two classes are identified by channel groups with different "
            "prevalences (Hui-Walter)"
        )
    if k < 3 and gold_identifies(ctx.summary)[0]:
        return "the gold items: every annotator answered gold items of both classes"
    if k >= 3:
        return "three or more annotators identify the channels (Dawid-Skene)"
    return "two annotators are identified by score groups with different prevalences (Hui-Walter)"


# --------------------------------------------------------------------------- channels
def point_options(ctx: Context, method: str) -> dict:
    """The audit's options of the point estimator ``method``: its seed, and for the EM
    fits the prevalence structure and what happens to empty groups (the audit's fit, and
    the gold items' check against the fit without them)."""
    options: dict = (
        {"random_state": ctx.seed} if method in ("score_bin_em", "dawid_skene_em", "gmm") else {}
    )
    if ctx.classwise:
        options.update(prevalence="grouped", empty_groups="drop")
    elif method == "score_bin_em":
        options["empty_groups"] = "drop"
    return options


def _fit_point(ctx: Context) -> None:
    options = point_options(ctx, ctx.point_method)
    if ctx.classwise:
        source = "point fit (multiclass Dawid-Skene EM)"
        options["progress"] = step_callback(_log, EM_MAX_ITER, "fitting the confusions (EM)")
    else:
        source = f"point fit ({ctx.point_method})"
    try:
        with _warnings.catch_warnings(record=True):
            ctx.point = fit_channels(ctx.summary, ctx.point_method, **options)
        # the fit repeats its design check: a design warning already flagged stays one flag
        design = {f.message for f in ctx.flags if f.code == "identification.design"}
        ctx.flag("channels.point-fit", [w for w in ctx.point.warnings if w not in design], source)
    except FitError as exc:
        if ctx.channels_choice != "bayes":
            raise
        ctx.point = None
        ctx.flag(
            "channels.point-fit-failed",
            [f"the point estimator failed ({exc}); the report uses the posterior only."],
            source,
        )


def fit_posterior(ctx: Context, summary: Summary, **options) -> ChannelFit:
    """The audit's Bayesian model on ``summary`` with the audit's priors, settings and seed
    (``options``: ``progress``, ``dependence``, ``posterior_predictive``)."""
    if not ctx.classwise:
        return fit_channels_bayes(
            summary,
            "grouped",
            priors=ctx.priors,
            draws=ctx.draws,
            tune=ctx.tune,
            chains=ctx.chains,
            cores=None,  # nutpie: one thread per chain up to the CPUs (same draws as one thread)
            random_state=ctx.seed,
            **options,
        )
    if not ctx.progress:
        logging.getLogger("pymc").setLevel(logging.ERROR)
    options.pop("posterior_predictive", None)  # the class-wise fit always checks
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
            dependence=options.get("dependence"),
            # the chains start at the audit's EM fit of this summary: EM runs once
            start=cast(ChannelFit, ctx.point) if summary is ctx.summary else None,
        )


def _fit_bayes(ctx: Context) -> None:
    if ctx.classwise:
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
    else:
        _log.info(
            "sampling the channel posterior: %d chain(s) x %d draws after %d tuning steps",
            ctx.chains,
            ctx.draws,
            ctx.tune,
        )
        # The default sampler (nutpie) does not import PyMC: no PyMC logger to quiet.
        with _warnings.catch_warnings(record=True):
            ctx.channels = fit_posterior(ctx, ctx.summary, progress=ctx.progress)
    ctx.flag("channels.sampler", ctx.channels.warnings, "Bayesian fit")
    not_converged = _not_converged(ctx.channels.diagnostics)
    if not_converged:
        ctx.add_flags([Flag("channels.not-converged", not_converged, "Bayesian fit", "error")])


#: Beyond these the chains are not a sample of the posterior at all, so the NC-ECE drawn
#: from them is not a measurement (an error flag, not the warnings of THRESHOLDS): split
#: R-hat above 1.1, the classic bound of Gelman et al. (between-chain spread still a fifth
#: of the within-chain spread), or fewer than 20 effective draws, from which a 90%
#: interval's ends rest on about one draw each.
NOT_CONVERGED = {"rhat_max": 1.1, "ess_bulk_min": 20.0}


def _not_converged(diag: Mapping[str, Any]) -> str | None:
    """The error message when the sampler failed outright (:data:`NOT_CONVERGED`), or None.

    Examples
    --------
    >>> _not_converged({"rhat_max": 1.004, "ess_bulk_min": 850.0}) is None
    True
    >>> _not_converged({"rhat_max": 2.87, "ess_bulk_min": 2.0})[:58]
    'the sampler did not converge (R-hat 2.87 above 1.1, bulk E'
    """
    rhat, ess = diag.get("rhat_max"), diag.get("ess_bulk_min")
    problems = []
    if rhat is not None and rhat > NOT_CONVERGED["rhat_max"]:
        problems.append(f"R-hat {rhat:.3g} above {NOT_CONVERGED['rhat_max']}")
    if ess is not None and ess < NOT_CONVERGED["ess_bulk_min"]:
        problems.append(f"bulk ESS {ess:.0f} below {NOT_CONVERGED['ess_bulk_min']:.0f}")
    if not problems:
        return None
    return (
        f"the sampler did not converge ({', '.join(problems)}): its draws do not describe the "
        "channel posterior, so the NC-ECE and its interval are not a measurement. Rerun with "
        "more --tune and --draws; if that does not help, the priors or the channel model "
        "conflict with the data (see the sampler diagnostics)."
    )


def channel_entries(ctx: Context) -> list[dict] | dict:
    """Per annotator: point, posterior mean and interval of ``a`` and ``b`` (two classes, a
    list) or of every confusion entry (class-wise, a dict by annotator)."""
    post = ctx.channels
    if ctx.classwise:
        t = post.confusion.values
        lo, hi = equal_tailed(t, ctx.prob) if post.n_draws > 1 else (None, None)
        return {
            name: {
                "point": None if ctx.point is None else ctx.point.confusion.values[0, j].tolist(),
                "mean": t[:, j].mean(axis=0).tolist(),
                "lo": None if lo is None else lo[j].tolist(),
                "hi": None if hi is None else hi[j].tolist(),
            }
            for j, name in enumerate(post.annotators)
        }
    out = []
    for j, name in enumerate(post.annotators):
        entry: dict[str, object] = {"name": name}
        for key in ("a", "b"):
            vals = getattr(post, key).values[:, j]
            pt = float(getattr(ctx.point, key).values[0, j]) if ctx.point is not None else None
            if post.n_draws > 1:
                lo, hi = equal_tailed(vals, ctx.prob)
                entry[key] = {
                    "point": pt,
                    "mean": float(vals.mean()),
                    "lo": float(lo),
                    "hi": float(hi),
                }
            else:
                entry[key] = {"point": pt, "mean": pt, "lo": None, "hi": None}
        entry["gap"] = float(post.delta.values[:, j].mean())
        out.append(entry)
    return out


def channel_section(ctx: Context) -> Section:
    _fit_point(ctx)
    name = "multiclass Dawid-Skene EM" if ctx.classwise else ctx.point_method
    if ctx.channels_choice == "bayes":
        _fit_bayes(ctx)
        note = (
            f"Posterior from {ctx.chains} chains x {ctx.draws} draws (tune {ctx.tune}); "
            f"intervals are equal-tailed {ctx.percent}%. Point estimates: "
            + (f"{name} (10 starts)." if ctx.classwise else f"{name} (Hanada & Futami's protocol).")
        )
    else:
        assert ctx.point is not None  # a failed point fit raises without the posterior
        ctx.channels = ctx.point
        note = (
            f"Point estimates from {name}; no channel posterior (use --channels bayes for "
            "intervals)."
            if ctx.classwise
            else f"Point estimates from {name}; their own estimation error is not sampled "
            "(--channels bayes carries it into the report)."
        )
    ctx.diagnostics["channels"] = channel_entries(ctx)
    if ctx.classwise:
        return _confusion_section(ctx, note)
    return _ab_section(ctx, note)


def _ab_section(ctx: Context, note: str) -> Section:
    """Two classes: ``a``, ``b`` per annotator and the prevalence per score group."""
    post = ctx.channels
    entries = ctx.diagnostics["channels"]
    draws = post.n_draws > 1
    rows = []
    for e in entries:
        cells = [e["name"]]
        for key in ("a", "b"):
            c = e[key]
            cells.append(fmt(c["point"]))
            if draws:  # point channels get point wording: no posterior column
                cells.append(f"{fmt(c['mean'])} [{fmt(c['lo'])}, {fmt(c['hi'])}]")
        cells.append(fmt(e["gap"]))
        rows.append(tuple(cells))
    prev_rows = []
    for g, label in enumerate(post.prevalence["group"].values):
        vals = post.prevalence.values[:, g]
        n_g = int(post.group_counts.values[g])
        if draws:
            lo, hi = equal_tailed(vals, ctx.prob)
            prev_rows.append((str(label), n_g, f"{fmt(vals.mean())} [{fmt(lo)}, {fmt(hi)}]"))
        else:
            prev_rows.append((str(label), n_g, fmt(vals[0])))
    mean = f"posterior mean [{ctx.percent}%]"
    header = (
        ("annotator", "a point", f"a {mean}", "b point", f"b {mean}", "gap b - a")
        if draws
        else ("annotator", "a estimate", "b estimate", "gap b - a")
    )
    shown = min(len(entries), FOREST_MAX_ANNOTATORS)
    height = 0.45 * shown + 1.4
    point, prob = ctx.point, ctx.prob  # bound now: figures are drawn when first shown
    forest = responsive_figure(
        "Channels per annotator",
        lambda fig, narrow: channel_forest(
            post,
            point=point,
            prob=prob,
            axes=fig.subplots(2, 1) if narrow else fig.subplots(1, 2, sharey=True),
            max_annotators=FOREST_MAX_ANNOTATORS,
        ),
        size=(8, height),
        narrow_height=2 * height,
    )
    notes = [note]
    if shown < len(entries):
        notes.append(
            f"The figure draws the {shown} of {len(entries)} annotators with the smallest "
            "gap b - a; the table lists all of them."
        )
    return Section(
        key="channels",
        title="Annotator channels",
        tables=[
            Table("Channels (a = false-positive rate, b = 1 - false-negative rate)", header, rows),
            Table(
                "Prevalence P(Y = 1) per score group",
                ("score group", "items", "prevalence"),
                prev_rows,
            ),
        ],
        figures=[forest],
        notes=notes,
    )


def _confusion_section(ctx: Context, note: str) -> Section:
    """C classes: the accuracy per true class of every annotator, the class prevalences per
    channel group and the confusion heatmaps."""
    post = ctx.channels
    t = post.confusion.values
    rows = []
    for j, name in enumerate(post.annotators):
        for y, cls in enumerate(post.classes):
            vals = t[:, j, y, y]
            if post.n_draws > 1:
                lo, hi = equal_tailed(vals, ctx.prob)
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
    k_all = post.confusion.sizes["annotator"]
    k = min(k_all, HEATMAP_MAX_ANNOTATORS)
    prob = ctx.prob  # bound now: figures are drawn when first shown
    heatmaps = responsive_figure(
        "Confusion matrices (rows: true class; columns: answer)",
        lambda fig, narrow: confusion_heatmaps(
            post,
            prob=prob,
            axes=fig.subplots(k, 1, squeeze=False)[:, 0]
            if narrow
            else fig.subplots(1, k, squeeze=False)[0],
            max_annotators=HEATMAP_MAX_ANNOTATORS,
        ),
        size=(3.2 * k, 3.4),
        narrow_height=3.6 * k,
    )
    notes = [note]
    if k < k_all:
        notes.append(
            f"The figure draws the {k} of {k_all} annotators with the lowest mean accuracy; "
            "the table lists all of them."
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
        notes=notes,
    )


# --------------------------------------------------------------------------- diagnostics
def diagnostics_section(ctx: Context) -> Section:
    if ctx.channels_choice != "bayes":
        return Section(
            key="diagnostics",
            title="Sampler diagnostics",
            status="skipped",
            reason="the confusions come from multiclass EM; there is no sampler to diagnose."
            if ctx.classwise
            else "the channels come from the point estimator "
            f"{ctx.point_method}; there is no sampler to diagnose.",
        )
    diag = ctx.channels.diagnostics
    rows = [
        ("R-hat (max over confusion, prevalence)", fmt(diag.get("rhat_max"), 4), "<= 1.01")
        if ctx.classwise
        else ("R-hat (max over a, b, prevalence)", fmt(diag.get("rhat_max"), 3), "< 1.01"),
        ("bulk ESS (min)", fmt(diag.get("ess_bulk_min"), 0), "> 100 per chain"),
        ("tail ESS (min)", fmt(diag.get("ess_tail_min"), 0), "> 100 per chain"),
        ("divergent transitions", fmt(diag.get("divergences")), "0"),
        ("E-BFMI (min)", fmt(diag.get("bfmi_min"), 3), "> 0.3"),
    ]
    if ctx.classwise:
        rows.append(
            (
                "draws relabelled to the designated annotator's labelling",
                fmt(diag.get("relabelled_draws")),
                "0",
            )
        )
    rows.append(("sampling seconds", fmt(diag.get("sampling_seconds"), 1), ""))
    nuts = Table("NUTS diagnostics", ("check", "value", "target"), rows)
    if ctx.classwise:
        return Section(key="diagnostics", title="Sampler diagnostics", tables=[nuts])
    ppc = diag.get("ppc_tail_prob", {})
    ctx.diagnostics["ppc_p_min"] = min(ppc.values()) if ppc else None
    return Section(
        key="diagnostics",
        title="Sampler diagnostics and model check",
        tables=[
            nuts,
            Table(
                "Predictive check: tail probability of the pattern-count discrepancy per group "
                "(small values flag dependent annotators or a misfitting channel model)",
                ("score group", "tail probability"),
                [(g, fmt(p, 3)) for g, p in ppc.items()],
            ),
        ],
        figures=_model_check_figures(ctx.channels.idata),
    )


def _model_check_figures(idata) -> list:
    """Two classes: the pattern predictive check and the trace, when the posterior has them."""
    if idata is None or "posterior_predictive" not in idata.groups():
        return []
    n_groups = min(idata["observed_data"].sizes["group"], PPC_MAX_GROUPS)
    return [
        responsive_figure(
            "Posterior predictive check of response patterns, one panel per score group. "
            "A pattern lists every annotator's answer in the annotators' order "
            "(named under the plot): 1 = answered positive, 0 = answered negative, "
            ". = no answer. Dots are the observed counts, bars the 90% posterior-predictive "
            "intervals; dots outside their bars point to dependent annotators or a "
            "misfitting channel model.",
            lambda fig, narrow: pattern_predictive_check(
                idata,
                prob=0.9,
                axes=fig.subplots(n_groups, 1, squeeze=False, sharex=True),
                max_groups=PPC_MAX_GROUPS,
            ),
            size=(9, 1.7 * n_groups + 0.6),
            narrow_height=1.5 * n_groups + 1.0,
        ),
        responsive_figure(
            "Trace of the channels (ArviZ): densities and traces of a and b; one colour "
            "per annotator, one line style per chain (legend above the plot).",
            _draw_trace(idata),
            size=(9, 4),
            narrow_height=7.5,
        ),
    ]


def _draw_trace(idata):
    def draw(fig, narrow):
        # Narrow: the four panels stacked (a density, a trace, b density, b trace).
        grid = fig.subplots(4, 1).reshape(2, 2) if narrow else fig.subplots(2, 2, squeeze=False)
        channel_trace(idata, axes=grid)
        fig.tight_layout()

    return draw


# --------------------------------------------------------------------------- ECE
#: What the NC-ECE interval means and when the test is the better question, in two
#: sentences (docs/intervals.md); the report's ECE section and the README use them.
INTERVAL_MEANING = (
    "The interval is a statement about the population: with the stated confidence, the model's "
    "binned calibration error on the population these items come from (the share-weighted gap "
    "between mean score and true positive rate per bin) lies inside it, and it starts at 0 when "
    "the data cannot tell the model from a perfectly calibrated one.",
    "When the question is yes or no (do we need to recalibrate? did the new model break "
    "calibration?) read the calibration test's p-value instead: below 1 - prob it says the "
    "model is miscalibrated somewhere; above, only that the data are consistent with "
    "calibration.",
)


def _interval_label(ctx: Context) -> str:
    """The reported interval, named for what it carries."""
    if ctx.channels.n_draws > 1:
        return (
            f"{ctx.percent}% posterior interval (bin rates drawn jointly with the channel "
            "posterior)"
        )
    return f"{ctx.percent}% evaluation-only interval (channels held at their estimate)"


def _bracket(dec: dict, part: str) -> str:
    return f"[{fmt(dec[part]['lo'])}, {fmt(dec[part]['hi'])}]"


def _add_plausibility_flags(ctx: Context) -> None:
    """The implausible-fit checks (channels/plausibility.py) as flags, errors first."""
    nc = ctx.errors["nc_point"]
    counts = nc.bin_count.values
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = (nc.bin_score_sum.values + nc.bin_moments.values.mean(axis=0) * nc.n) / counts
    iv = cast(NCECEPosterior, ctx.interval)
    sd = iv.curve["corrected_rate"].std("draw").values
    found = [
        *plausibility_flags(ctx.summary, ctx.channels, ctx.point_method, prob=ctx.prob),
        *ece_range_flags(iv.plugin, rates, sd, counts),
    ]
    found += [Flag("ece.bins", m, "NC-ECE") for m in iv.info.get("warnings", [])]
    ctx.add_flags(found)
    ctx.flags.sort(key=lambda f: f.severity != "error")


def unreliable_codes(ctx: Context) -> list[str]:
    """Codes of the error flags that make the NC-ECE not a measurement."""
    return sorted({f.code for f in ctx.flags if f.severity == "error"})


def _point_errors(ctx: Context, s: Summary, soft, majority, oracle, nc) -> ChannelFit:
    """The vote baselines, the error against the truth (when given) and the point NC-ECE into
    ``ctx.errors``, by the two-class or the class-wise functions; returns the point channels."""
    e = ctx.errors
    e["soft_vote"], e["majority_vote"] = soft(s), majority(s)
    if s.has_truth:
        e["oracle"] = oracle(s)
    point = ctx.point if ctx.point is not None else ctx.channels
    e["nc_point"] = nc(s, point, weights=ctx.weights)
    return point


def ece_section(ctx: Context) -> Section:
    """The calibration error: the binary NC-ECE for two classes, the noise view's top-label
    and class-wise errors for the class-wise audit."""
    if ctx.classwise:
        return _noise_view_section(ctx)
    s = ctx.summary
    e = ctx.errors
    _point_errors(ctx, s, soft_vote_ece, majority_vote_ece, oracle_ece, nc_ece)
    # The audit fits the channels on the very items it evaluates. With a channel posterior the
    # headline is the posterior route ("joint": each bin's rate drawn given each channel draw,
    # so priors and gold move it as they move the channels); point channels get the item
    # bootstrap with the channels held at their value ("reuse", evaluation-only).
    # docs/intervals.md has the coverage of both.
    posterior = ctx.channels.n_draws > 1
    ctx.interval = iv = nc_ece_interval(
        s,
        ctx.channels,
        weights=ctx.weights,
        prob=ctx.prob,
        point_channels=ctx.point,
        sample_use="joint" if posterior else "reuse",
        random_state=ctx.seed,
    )
    lo, hi = iv.interval()
    rows = [
        ("soft vote (mean answer taken as truth)", fmt(e["soft_vote"].value), ""),
        ("majority vote (ties count as 0)", fmt(e["majority_vote"].value), ""),
        (
            f"NC-ECE, bias-aware estimate and {_interval_label(ctx)}",
            fmt(iv.estimate),
            f"[{fmt(lo)}, {fmt(hi)}]",
        ),
        ("NC-ECE plug-in (raw binned |.|, biased upward near 0)", fmt(iv.plugin_of()), ""),
        ("calibration test: p-value of 'perfectly calibrated'", fmt_p(iv.p_value), ""),
    ]
    if posterior:
        dec = iv.decomposition()
        rows += [
            (
                "  for reference: items resampled, channels held at their point value",
                "",
                _bracket(dec, "evaluation"),
            ),
            (
                "  for reference: channel uncertainty only (posterior draws)",
                "",
                _bracket(dec, "channel"),
            ),
        ]
    _add_plausibility_flags(ctx)
    band = iv.curve_band(ctx.prob)
    # bound now: figures are drawn when first shown, and later steps add to ctx.errors
    soft, majority, nc_point, oracle = (
        e["soft_vote"],
        e["majority_vote"],
        e["nc_point"],
        e.get("oracle"),
    )
    prob = ctx.prob
    reliability = responsive_figure(
        "Reliability diagrams: naive (votes taken as truth) vs noise-corrected. The corrected "
        "positive rate of a bin is an unbiased estimate that can fall outside [0, 1] in sparse "
        f"bins; the curve and its {ctx.percent}% band are drawn clipped to [0, 1] (a hollow "
        "marker on the border is a bin whose estimate lies beyond it); the numbers in the "
        "tables are not clipped.",
        lambda fig, narrow: noise_corrected_reliability(
            soft,
            majority,
            nc_point,
            band=band,
            reference=oracle,
            prob=prob,
            axes=fig.subplots(2, 1, sharex=True) if narrow else fig.subplots(1, 2, sharey=True),
        ),
        size=(9, 4),
        narrow_height=7.2,
    )
    notes = [
        "All errors use the same fixed bins and the same (annotated) items. NC-ECE replaces each "
        "item's label by its noise-corrected label U = sum_j w_j (A_j - a_j) / "
        "(b_j - a_j), unbiased for the clean label under the assumptions above.",
        *INTERVAL_MEANING,
        (
            "The headline comes from the channel posterior: for each posterior draw of the "
            "channels, each bin's positive rate is drawn from its latent-class posterior given "
            "the bin's answer patterns, and the bins' shares from a Bayesian bootstrap of the "
            "items, so channel and sampling uncertainty enter correlated as they are (the "
            "channels were fitted on these same items). Priors and gold items move it as they "
            "move the posterior. The estimate and the test use the same draws (docs/intervals.md)."
            " Annotator weights do not enter it (the latent-class likelihood weighs the answers "
            "itself); the plug-in row and the figure use the corrected labels of the point fit."
            if posterior
            else "The interval resamples the evaluation items (a Bayesian bootstrap on bin x "
            "pattern cells) with the channels held at their point value, because the channels "
            "were fitted on these same items. Point channels: their estimation error is not "
            "sampled, so this is an evaluation-only interval (--channels bayes carries it)."
        ),
    ]
    return Section(
        key="ece",
        title="Calibration error",
        tables=[
            Table(
                "Expected calibration error (binned, lower is better)",
                ("criterion", "value", f"{ctx.percent}% interval"),
                rows,
            )
        ],
        figures=[reliability],
        notes=notes,
    )


_NOISE_TITLE = "Calibration error, noise view (one true class per item)"


def _noise_view_section(ctx: Context) -> Section:
    """Top-label and class-wise NC-ECE with intervals, beside the vote baselines."""
    s = ctx.eval_summary
    e = ctx.errors
    soft = partial(class_vote_ece, kind="soft_vote")
    point = _point_errors(ctx, s, soft, class_vote_ece, class_oracle_ece, class_nc_ece)
    # channels fitted on these items: joint route for a posterior, evaluation-only for a
    # point fit (adding channel draws as an independent source over-covers, issue 22)
    ctx.interval = iv = multiclass_nc_ece_interval(
        s,
        ctx.channels,
        point_channels=point,
        weights=ctx.weights,
        prob=ctx.prob,
        sample_use="joint" if ctx.channels.n_draws > 1 else "reuse",
        random_state=ctx.seed,
    )
    acc = iv.top_label.accuracy
    ctx.add_flags(
        [
            *agreement_flags(ctx.summary),
            *implausible_flags(e["nc_point"].top_label, None if acc is None else acc.std(axis=0)),
            *implausible_flags(e["nc_point"].classwise),
        ]
    )
    ctx.flags.sort(key=lambda f: f.severity != "error")
    if not ctx.runs("noise"):
        return ctx.other_view(
            "noise",
            _NOISE_TITLE,
            "; the noise-corrected errors are still in summary.json. Run with --view both (or "
            "--view noise) to show them.",
        )
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
        rows.append(("top-label: channel uncertainty only", "", _bracket(dec, "channel")))
    rows.append(("top-label: evaluation-sample uncertainty only", "", _bracket(dec, "evaluation")))
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
        title=_NOISE_TITLE,
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


# ------------------------------------------------------------------------ summary.json
def _estimate_label(ctx: Context, iv: dict) -> str:
    """Which number the headline shows, in words."""
    if "plugin" in iv:  # the interval result reports a bias-aware estimate beside the plug-in
        return "bias-aware NC-ECE estimate"
    source = ctx.point_method if ctx.point is not None else ctx.channels.method
    return f"NC-ECE with the point channels ({source})"


def _position(point: float, lo: float, hi: float) -> float | None:
    """Where the estimate sits in its interval: 0 at the lower end, 1 at the upper end.

    The estimate and both ends come from the same bias-corrected construction, so this
    is coherent (the v0.1 percentile compared the corrected point with raw, upward-biased
    replicates).
    """
    if hi is None or lo is None or not hi > lo:
        return None
    return float((point - lo) / (hi - lo))


def build_summary(ctx: Context) -> dict:
    """The audit's keys of ``summary.json`` (the report adds warnings and reproducibility).

    Both audits: ``n_items``, ``n_annotators``, ``n_unannotated``, ``channels`` (``method``,
    ``point_method``, per-annotator ``annotators`` and per-group ``prevalence``), ``ece``
    (``soft_vote``, ``majority_vote``, ``nc.{point, plugin, lo, hi, prob, p_value, reliable,
    unreliable_because}``: ``point`` the bias-aware estimate, ``plugin`` the raw plug-in it
    corrects; ``oracle`` with truth; ``bins``) and ``diagnostics``. Two classes: ``a`` / ``b``
    per annotator, one prevalence per score group. Class-wise: ``n_classes``, ``classes``,
    confusion entries, class prevalences; ``ece`` is the top-label error, ``ece.classwise``
    the same for the class-wise error and, per class, ``nc_plugin`` (that class's raw plug-in
    at the point channels) beside the vote and reference-label ECEs; ``ece.ambiguity`` the
    ambiguity view's ECE_true; ``noise_or_ambiguity``, ``view`` and ``knowledge``.
    """
    post = ctx.channels
    described = ctx.data.describe()
    prev = {}
    prevalence = post.class_prevalence if ctx.classwise else post.prevalence
    for g, label in enumerate(prevalence["group"].values):
        vals = prevalence.values[:, g]
        lo, hi = equal_tailed(vals, ctx.prob) if post.n_draws > 1 else (None, None)
        prev[str(label)] = {
            "mean": vals.mean(axis=0).tolist(),
            "lo": None if lo is None else lo.tolist(),
            "hi": None if hi is None else hi.tolist(),
            "n": int(post.group_counts.values[g]),
        }
    diag = post.diagnostics if ctx.channels_choice == "bayes" else {}
    entries = ctx.diagnostics["channels"]
    out = {
        "n_items": described["n_items"],
        "n_annotators": ctx.data.n_annotators,
        **(
            {"n_classes": ctx.data.n_classes, "classes": list(ctx.data.classes)}
            if ctx.classwise
            else {}
        ),
        "n_unannotated": described["n_unannotated"],
        "channels": {
            "method": post.method,
            "point_method": ctx.point_method,
            "annotators": entries
            if ctx.classwise
            else {e["name"]: {"a": e["a"], "b": e["b"]} for e in entries},
            "prevalence": prev,
        },
        "ece": _classwise_ece_summary(ctx) if ctx.classwise else _binary_ece_summary(ctx),
        "diagnostics": {
            "rhat_max": diag.get("rhat_max"),
            "ess_bulk_min": diag.get("ess_bulk_min"),
            "divergences": diag.get("divergences"),
            **(
                {"relabelled_draws": diag.get("relabelled_draws")}
                if ctx.classwise
                else {"ppc_p_min": ctx.diagnostics.get("ppc_p_min")}
            ),
        },
    }
    if ctx.classwise:
        out["noise_or_ambiguity"] = ctx.check.to_dict()
        out["view"] = {
            "requested": ctx.view,
            "evidence": ctx.check.view,
            "ran": [v for v in ("noise", "ambiguity") if ctx.runs(v)],
        }
        out["diagnostics"] = out.pop("diagnostics")  # the v0.2 key order of summary.json
    if "recalibration" in ctx.diagnostics:
        out["recalibration"] = ctx.diagnostics["recalibration"]
    if ctx.classwise:
        out["knowledge"] = ctx.diagnostics.get("knowledge", {})
    return out


def _binary_ece_summary(ctx: Context) -> dict:
    iv = ctx.interval.to_dict()
    out = {
        "soft_vote": ctx.errors["soft_vote"].value,
        "majority_vote": ctx.errors["majority_vote"].value,
        "nc": {
            "point": iv["point"],
            "estimate_label": _estimate_label(ctx, iv),
            "position": _position(iv["point"], iv["lo"], iv["hi"]),
            "interval_label": _interval_label(ctx),
            "reliable": not unreliable_codes(ctx),
            "unreliable_because": unreliable_codes(ctx),
            "lo": iv["lo"],
            "hi": iv["hi"],
            "prob": iv["prob"],
            # Point channels have no channel source: no zero-width "channel" part.
            "decomposition": iv["decomposition"]
            if ctx.channels.n_draws > 1
            else {"evaluation": iv["decomposition"]["evaluation"]},
            **{
                k: iv[k]
                for k in ("plugin", "interval_method", "p_value", "sample_use", "source")
                if k in iv
            },
        },
        "bins": [float(x) for x in ctx.summary.bin_edges],
    }
    if "oracle" in ctx.errors:
        out["oracle"] = ctx.errors["oracle"].value
    return out


def _ece_entry(ctx: Context, part, label: str) -> dict:
    """One error of the class-wise audit (``label``: "top_label" or "classwise")."""
    e = ctx.errors
    out = {
        "soft_vote": getattr(e["soft_vote"], label).value,
        "majority_vote": getattr(e["majority_vote"], label).value,
        "nc": {
            **part.to_dict(),
            "reliable": not unreliable_codes(ctx),
            "unreliable_because": unreliable_codes(ctx),
        },
    }
    if "oracle" in e:
        out["oracle"] = getattr(e["oracle"], label).value
    return out


def _classwise_ece_summary(ctx: Context) -> dict:
    e = ctx.errors
    iv = cast(MulticlassNCECEInterval, ctx.interval)
    cw = _ece_entry(ctx, iv.classwise, "classwise")
    cw["per_class"] = {
        str(cls): {
            "nc_plugin": float(e["nc_point"].classwise.class_ece.values[0, i]),
            "soft_vote": float(e["soft_vote"].classwise.class_ece.values[0, i]),
            "majority_vote": float(e["majority_vote"].classwise.class_ece.values[0, i]),
            **(
                {"oracle": float(e["oracle"].classwise.class_ece.values[0, i])}
                if "oracle" in e
                else {}
            ),
        }
        for i, cls in enumerate(ctx.summary.classes)
    }
    return {
        **_ece_entry(ctx, iv.top_label, "top_label"),
        "target": "top_label",
        "bins": [float(x) for x in ctx.summary.bin_edges],
        "classwise": cw,
        "ambiguity": dict(ctx.ambiguity),
    }
