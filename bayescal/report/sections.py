"""The steps of a binary audit (Hanada & Futami), one function per report section.

Each function reads and extends a shared :class:`Context` and returns a
:class:`~bayescal.report.core.Section`. Errors in the user's design (for
example a non-identified design) propagate: an audit either completes or
writes nothing. Optional features that are unavailable are reported as
skipped sections with the reason. Warnings are collected as coded
:class:`~bayescal.flags.Flag` objects.
"""

from __future__ import annotations

import logging
import warnings as _warnings
from dataclasses import dataclass, field

import numpy as np

from bayescal._typing import Bins, Dependence, Weights
from bayescal.bayes.fit import fit_channels_bayes
from bayescal.bayes.priors import ChannelPriors
from bayescal.channels.acquisition import AnnotationTargets
from bayescal.channels.fit import fit_channels
from bayescal.channels.identification import check_design, gold_identifies
from bayescal.channels.items import ItemPosteriors
from bayescal.channels.plausibility import ece_range_flags, plausibility_flags
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import FitError
from bayescal.flags import Flag
from bayescal.metrics.binned import majority_vote_ece, oracle_ece, soft_vote_ece
from bayescal.metrics.ncece import nc_ece
from bayescal.metrics.subgroups import SubgroupCalibration
from bayescal.metrics.uncertainty import NCECEPosterior, nc_ece_interval
from bayescal.plotting.binary import (
    channel_forest,
    channel_trace,
    noise_corrected_reliability,
    pattern_predictive_check,
)
from bayescal.report.context import FlagsMixin
from bayescal.report.core import Section, Table, fmt, fmt_p
from bayescal.report.figures import responsive_figure
from bayescal.summaries.summary import Summary, summarize

_log = logging.getLogger(__name__)

__all__ = [
    "ASSUMPTIONS",
    "Context",
    "data_section",
    "identification_section",
    "channel_section",
    "diagnostics_section",
    "ece_section",
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

_POINT_METHODS = {
    "score-bin-em": "score_bin_em",
    "dawid-skene-em": "dawid_skene_em",
    "gmm": "gmm",
    "hui-walter": "hui_walter",
}


@dataclass(eq=False)
class Context(FlagsMixin):
    """What the audit's steps share: settings in, results and flags out."""

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
    #: set by the data step (the first), the channel step and the ECE step, in that order
    summary: Summary = field(init=False)
    point: ChannelFit | None = None
    channels: ChannelFit = field(init=False)
    interval: NCECEPosterior = field(init=False)
    errors: dict = field(default_factory=dict)
    flags: list = field(default_factory=list)
    point_method: str = ""
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


def _interval(x: np.ndarray, prob: float) -> tuple[float, float]:
    q = np.quantile(x, [(1 - prob) / 2, 1 - (1 - prob) / 2])
    return float(q[0]), float(q[1])


# --------------------------------------------------------------------------- data
def data_section(ctx: Context) -> Section:
    d = ctx.data.describe()
    if isinstance(ctx.data, Summary):
        ctx.summary = ctx.data  # its groups and bins were fixed when it was built
        ctx.groups = (
            list(ctx.summary.group_edges) if ctx.summary.group_edges is not None else "data"
        )
        ctx.bins = list(ctx.summary.bin_edges)
    else:
        ctx.summary = summarize(ctx.data, groups=ctx.groups, bins=ctx.bins)
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
    ctx.unannotated(d["n_unannotated"])
    return Section(
        key="data",
        title="Data",
        tables=[
            Table("Overview", ("quantity", "value"), rows),
            Table("Annotators", ("annotator", "answers", "share answering 1"), per),
        ],
    )


# --------------------------------------------------------------------------- identification
def identification_section(ctx: Context) -> Section:
    k = ctx.data.n_annotators
    choice = ctx.channels_choice
    ctx.point_method = "score_bin_em" if choice == "bayes" else _POINT_METHODS[choice]
    with _warnings.catch_warnings(record=True):
        msgs = check_design(ctx.summary, ctx.point_method)
    ctx.flag("identification.design", msgs, "identification")
    groups = ctx.summary.group_counts.values
    rows = [
        ("annotators (K)", k),
        ("score groups (L), non-empty", f"{len(groups)}, {int((groups > 0).sum())}"),
        ("evaluation bins (M)", ctx.summary.n_bins),
        (
            "channel model",
            "Bayesian grouped Dawid-Skene (PyMC)" if choice == "bayes" else ctx.point_method,
        ),
        ("why identified", _why_identified(ctx, k)),
    ]
    return Section(
        key="identification",
        title="Identification and assumptions",
        tables=[Table("Design", ("check", "value"), rows)],
        notes=["Assumptions, in plain words:", *ASSUMPTIONS],
    )


def _why_identified(ctx: Context, k: int) -> str:
    if k < 3 and gold_identifies(ctx.summary)[0]:
        return "the gold items: every annotator answered gold items of both classes"
    if k >= 3:
        return "three or more annotators identify the channels (Dawid-Skene)"
    return "two annotators are identified by score groups with different prevalences (Hui-Walter)"


# --------------------------------------------------------------------------- channels
def _fit_point(ctx: Context) -> None:
    options: dict[str, int | str] = (
        {"random_state": ctx.seed}
        if ctx.point_method in ("score_bin_em", "dawid_skene_em", "gmm")
        else {}
    )
    if ctx.point_method == "score_bin_em":
        options["empty_groups"] = "drop"
    source = f"point fit ({ctx.point_method})"
    try:
        with _warnings.catch_warnings(record=True):
            ctx.point = fit_channels(ctx.summary, ctx.point_method, **options)
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


def fit_posterior(ctx: Context, summary, **options):
    """The audit's Bayesian grouped model on ``summary`` with the audit's settings and seed."""
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


def _fit_bayes(ctx: Context) -> None:
    _log.info(
        "sampling the channel posterior: %d chain(s) x %d draws after %d tuning steps",
        ctx.chains,
        ctx.draws,
        ctx.tune,
    )
    # The default sampler (nutpie) does not import PyMC, so there is no PyMC logger to quiet.
    with _warnings.catch_warnings(record=True):
        ctx.channels = fit_posterior(ctx, ctx.summary, progress=ctx.progress)
    ctx.flag("channels.sampler", ctx.channels.warnings, "Bayesian fit")


def _channel_entries(ctx: Context) -> list[dict]:
    """Per annotator: point, posterior mean and interval of ``a`` and ``b``."""
    post = ctx.channels
    out = []
    for j, name in enumerate(post.annotators):
        entry: dict[str, object] = {"name": name}
        for key in ("a", "b"):
            vals = getattr(post, key).values[:, j]
            pt = float(getattr(ctx.point, key).values[0, j]) if ctx.point is not None else None
            if post.n_draws > 1:
                lo, hi = _interval(vals, ctx.prob)
                entry[key] = {"point": pt, "mean": float(vals.mean()), "lo": lo, "hi": hi}
            else:
                entry[key] = {"point": pt, "mean": pt, "lo": None, "hi": None}
        entry["gap"] = float(post.delta.values[:, j].mean())
        out.append(entry)
    return out


def channel_section(ctx: Context) -> Section:
    _fit_point(ctx)
    if ctx.channels_choice == "bayes":
        _fit_bayes(ctx)
        note = (
            f"Posterior from {ctx.chains} chains x {ctx.draws} draws (tune "
            f"{ctx.tune}); intervals are equal-tailed {ctx.percent}%. "
            f"Point estimates: {ctx.point_method} (Hanada & Futami's protocol)."
        )
    else:
        assert ctx.point is not None  # a failed point fit raises without the posterior
        ctx.channels = ctx.point
        note = (
            f"Point estimates from {ctx.point_method}; their own estimation error is not "
            "sampled (--channels bayes carries it into the report)."
        )
    post = ctx.channels
    entries = _channel_entries(ctx)
    ctx.diagnostics["forest"] = entries
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
        if post.n_draws > 1:
            lo, hi = _interval(vals, ctx.prob)
            prev_rows.append((str(label), n_g, f"{fmt(vals.mean())} [{fmt(lo)}, {fmt(hi)}]"))
        else:
            prev_rows.append((str(label), n_g, fmt(vals[0])))
    header = (
        (
            "annotator",
            "a point",
            f"a posterior mean [{ctx.percent}%]",
            "b point",
            f"b posterior mean [{ctx.percent}%]",
            "gap b - a",
        )
        if draws
        else ("annotator", "a estimate", "b estimate", "gap b - a")
    )
    height = 0.45 * len(entries) + 1.4
    point, prob = ctx.point, ctx.prob  # bound now: figures are drawn when first shown
    forest = responsive_figure(
        "Channels per annotator",
        lambda fig, narrow: channel_forest(
            post,
            point=point,
            prob=prob,
            axes=fig.subplots(2, 1) if narrow else fig.subplots(1, 2, sharey=True),
        ),
        size=(8, height),
        narrow_height=2 * height,
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
        notes=[note],
    )


# --------------------------------------------------------------------------- diagnostics
def diagnostics_section(ctx: Context) -> Section:
    if ctx.channels_choice != "bayes":
        return Section(
            key="diagnostics",
            title="Sampler diagnostics",
            status="skipped",
            reason="the channels come from the point estimator "
            f"{ctx.point_method}; there is no sampler to diagnose.",
        )
    diag = ctx.channels.diagnostics
    ppc = diag.get("ppc_tail_prob", {})
    rows = [
        ("R-hat (max over a, b, prevalence)", fmt(diag.get("rhat_max"), 3), "< 1.01"),
        ("bulk ESS (min)", fmt(diag.get("ess_bulk_min"), 0), "> 100 per chain"),
        ("tail ESS (min)", fmt(diag.get("ess_tail_min"), 0), "> 100 per chain"),
        ("divergent transitions", fmt(diag.get("divergences")), "0"),
        ("E-BFMI (min)", fmt(diag.get("bfmi_min"), 3), "> 0.3"),
        ("sampling seconds", fmt(diag.get("sampling_seconds"), 1), ""),
    ]
    figures = []
    idata = ctx.channels.idata
    if idata is not None and "posterior_predictive" in idata.groups():
        n_groups = idata["observed_data"].sizes["group"]
        figures.append(
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
                ),
                size=(9, 1.7 * n_groups + 0.6),
                narrow_height=1.5 * n_groups + 1.0,
            )
        )
        figures.append(
            responsive_figure(
                "Trace of the channels (ArviZ): densities and traces of a and b; one colour "
                "per annotator, one line style per chain (legend above the plot).",
                _draw_trace(idata),
                size=(9, 4),
                narrow_height=7.5,
            )
        )
    ctx.diagnostics["ppc_p_min"] = min(ppc.values()) if ppc else None
    return Section(
        key="diagnostics",
        title="Sampler diagnostics and model check",
        tables=[
            Table("NUTS diagnostics", ("check", "value", "target"), rows),
            Table(
                "Predictive check: tail probability of the pattern-count discrepancy per group "
                "(small values flag dependent annotators or a misfitting channel model)",
                ("score group", "tail probability"),
                [(g, fmt(p, 3)) for g, p in ppc.items()],
            ),
        ],
        figures=figures,
    )


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
    sd = ctx.interval.curve["corrected_rate"].std("draw").values
    found = [
        *plausibility_flags(ctx.summary, ctx.channels, ctx.point_method, prob=ctx.prob),
        *ece_range_flags(ctx.interval.plugin, rates, sd, counts),
    ]
    found += [Flag("ece.bins", m, "NC-ECE") for m in ctx.interval.info.get("warnings", [])]
    for f in found:
        if f not in ctx.flags:
            ctx.flags.append(f)
    ctx.flags.sort(key=lambda f: f.severity != "error")


def unreliable_codes(ctx: Context) -> list[str]:
    """Codes of the error flags that make the NC-ECE not a measurement."""
    return sorted({f.code for f in ctx.flags if f.severity == "error"})


def ece_section(ctx: Context) -> Section:
    s = ctx.summary
    e = ctx.errors
    e["soft_vote"] = soft_vote_ece(s)
    e["majority_vote"] = majority_vote_ece(s)
    if s.has_truth:
        e["oracle"] = oracle_ece(s)
    point = ctx.point if ctx.point is not None else ctx.channels
    e["nc_point"] = nc_ece(s, point, weights=ctx.weights)
    # The audit fits the channels on the very items it evaluates. With a channel posterior the
    # headline is the posterior route ("joint": each bin's rate drawn given each channel draw,
    # so priors and gold move it as they move the channels); point channels get the item
    # bootstrap with the channels held at their value ("reuse", evaluation-only).
    # docs/intervals.md has the coverage of both.
    posterior = ctx.channels.n_draws > 1
    ctx.interval = nc_ece_interval(
        s,
        ctx.channels,
        weights=ctx.weights,
        prob=ctx.prob,
        point_channels=ctx.point,
        sample_use="joint" if posterior else "reuse",
        random_state=ctx.seed,
    )
    iv = ctx.interval
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
    """The audit's keys of ``summary.json`` (the report adds warnings and reproducibility)."""
    post = ctx.channels
    ann = {e["name"]: {"a": e["a"], "b": e["b"]} for e in ctx.diagnostics["forest"]}
    prev = {}
    for g, label in enumerate(post.prevalence["group"].values):
        vals = post.prevalence.values[:, g]
        lo, hi = _interval(vals, ctx.prob) if post.n_draws > 1 else (None, None)
        prev[str(label)] = {
            "mean": float(vals.mean()),
            "lo": lo,
            "hi": hi,
            "n": int(post.group_counts.values[g]),
        }
    iv = ctx.interval.to_dict()
    diag = post.diagnostics if ctx.channels_choice == "bayes" else {}
    described = ctx.data.describe()
    out = {
        "n_items": described["n_items"],
        "n_annotators": ctx.data.n_annotators,
        "n_unannotated": described["n_unannotated"],
        "channels": {
            "method": post.method,
            "point_method": ctx.point_method,
            "annotators": ann,
            "prevalence": prev,
        },
        "ece": {
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
        },
        "diagnostics": {
            "rhat_max": diag.get("rhat_max"),
            "ess_bulk_min": diag.get("ess_bulk_min"),
            "divergences": diag.get("divergences"),
            "ppc_p_min": ctx.diagnostics.get("ppc_p_min"),
        },
    }
    if "oracle" in ctx.errors:
        out["ece"]["oracle"] = ctx.errors["oracle"].value
    if "recalibration" in ctx.diagnostics:
        out["recalibration"] = ctx.diagnostics["recalibration"]
    return out
