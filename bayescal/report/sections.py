"""The steps of a binary audit, one function per report section.

Each function reads and extends a shared :class:`Context` and returns a
:class:`~bayescal.report.audit.Section`. Errors in the user's design (for
example a non-identified design) propagate: an audit either completes or
writes nothing. Optional features that are unavailable are reported as
skipped sections with the reason.
"""

from __future__ import annotations

import warnings as _warnings
from dataclasses import dataclass, field

import numpy as np

from bayescal.report.audit import ASSUMPTIONS, Section, _interval

_POINT_METHODS = {
    "score-bin-em": "score_bin_em",
    "dawid-skene-em": "dawid_skene_em",
    "gmm": "gmm",
    "hui-walter": "hui_walter",
}


@dataclass(eq=False)
class Context:
    data: object
    channels_choice: str
    groups: object
    bins: object
    weights: object
    draws: int
    tune: int
    chains: int
    prob: float
    seed: int
    progress: bool
    summary: object = None
    point: object = None
    channels: object = None
    interval: object = None
    errors: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    point_method: str = ""
    diagnostics: dict = field(default_factory=dict)

    def warn(self, messages, source):
        for m in messages:
            text = f"[{source}] {m}"
            if text not in self.warnings:
                self.warnings.append(text)


def _fmt(x, digits=4):
    if x is None:
        return "n/a"
    if isinstance(x, (float, np.floating)):
        return f"{x:.{digits}f}"
    return str(x)


# --------------------------------------------------------------------------- data
def data_section(ctx: Context) -> Section:
    from bayescal.summaries.summary import Summary, summarize

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
        (name, d["answers_per_annotator"][name], _fmt(d["positive_rate_per_annotator"][name], 3))
        for name in ctx.data.annotators
    ]
    if d["n_unannotated"]:
        ctx.warn(
            [
                f"{d['n_unannotated']} item(s) have no answer; "
                "they are excluded from every label statistic."
            ],
            "data",
        )
    return Section(
        title="Data",
        html_tables=[
            ("Overview", ("quantity", "value"), rows),
            ("Annotators", ("annotator", "answers", "share answering 1"), per),
        ],
    )


# --------------------------------------------------------------------------- identification
def identification_section(ctx: Context) -> Section:
    from bayescal.channels.identification import check_design

    k = ctx.data.n_annotators
    choice = ctx.channels_choice
    if choice == "bayes":
        method = "score_bin_em"
    else:
        method = _POINT_METHODS[choice]
    ctx.point_method = method
    with _warnings.catch_warnings(record=True):
        msgs = check_design(ctx.summary, method)
    ctx.warn(msgs, "identification")
    groups = ctx.summary.group_counts.values
    rows = [
        ("annotators (K)", k),
        ("score groups (L), non-empty", f"{len(groups)}, {int((groups > 0).sum())}"),
        ("evaluation bins (M)", ctx.summary.n_bins),
        ("channel model", "Bayesian grouped Dawid-Skene (PyMC)" if choice == "bayes" else method),
        (
            "why identified",
            "three or more annotators identify the channels (Dawid-Skene)"
            if k >= 3
            else "two annotators are identified by score groups "
            "with different prevalences (Hui-Walter)",
        ),
    ]
    return Section(
        title="Identification and assumptions",
        html_tables=[("Design", ("check", "value"), rows)],
        notes=["Assumptions, in plain words:"] + ASSUMPTIONS,
    )


# --------------------------------------------------------------------------- channels
def channel_section(ctx: Context) -> Section:
    from bayescal.channels.fit import fit_channels
    from bayescal.errors import FitError
    from bayescal.report.figures import forest_plot

    notes = []
    options = (
        {"random_state": ctx.seed}
        if ctx.point_method in ("score_bin_em", "dawid_skene_em", "gmm")
        else {}
    )
    if ctx.point_method == "score_bin_em":
        options["empty_groups"] = "drop"
    try:
        with _warnings.catch_warnings(record=True):
            ctx.point = fit_channels(ctx.summary, ctx.point_method, **options)
        ctx.warn(ctx.point.warnings, f"point fit ({ctx.point_method})")
    except FitError as exc:
        if ctx.channels_choice != "bayes":
            raise
        ctx.point = None
        ctx.warn(
            [f"the point estimator failed ({exc}); the report uses the posterior only."],
            "point fit",
        )
    if ctx.channels_choice == "bayes":
        import logging

        import pymc  # noqa: F401  (PyMC sets its logger level on import; quiet it afterwards)

        from bayescal.bayes.fit import fit_channels_bayes

        if not ctx.progress:
            logging.getLogger("pymc").setLevel(logging.ERROR)

        with _warnings.catch_warnings(record=True):
            ctx.channels = fit_channels_bayes(
                ctx.summary,
                "grouped",
                draws=ctx.draws,
                tune=ctx.tune,
                chains=ctx.chains,
                cores=1,
                random_state=ctx.seed,
                progress=ctx.progress,
            )
        ctx.warn(ctx.channels.warnings, "Bayesian fit")
        notes.append(
            f"Posterior from {ctx.chains} chains x {ctx.draws} draws (tune "
            f"{ctx.tune}); intervals are equal-tailed {int(ctx.prob * 100)}%. "
            f"Point estimates: {ctx.point_method} (paper protocol)."
        )
    else:
        ctx.channels = ctx.point
        notes.append(
            f"Point estimates from {ctx.point_method}; no channel "
            "posterior (use --channels bayes for intervals)."
        )
    post = ctx.channels
    rows, forest = [], []
    for j, name in enumerate(post.annotators):
        entry = {"name": name}
        cells = [name]
        for key in ("a", "b"):
            vals = getattr(post, key).values[:, j]
            pt = float(getattr(ctx.point, key).values[0, j]) if ctx.point is not None else None
            if post.n_draws > 1:
                lo, hi = _interval(vals, ctx.prob)
                entry[key] = {"point": pt, "mean": float(vals.mean()), "lo": lo, "hi": hi}
                cells += [_fmt(pt), f"{vals.mean():.4f} [{lo:.4f}, {hi:.4f}]"]
            else:
                entry[key] = {"point": pt, "mean": pt, "lo": None, "hi": None}
                cells += [_fmt(pt), "n/a"]
        gap = post.delta.values[:, j]
        cells.append(f"{gap.mean():.4f}")
        rows.append(tuple(cells))
        forest.append(entry)
    ctx.diagnostics["forest"] = forest
    prev_rows = []
    for g, label in enumerate(post.prevalence["group"].values):
        vals = post.prevalence.values[:, g]
        n_g = int(post.group_counts.values[g])
        if post.n_draws > 1:
            lo, hi = _interval(vals, ctx.prob)
            prev_rows.append((str(label), n_g, f"{vals.mean():.3f} [{lo:.3f}, {hi:.3f}]"))
        else:
            prev_rows.append((str(label), n_g, f"{vals[0]:.3f}"))
    header = (
        "annotator",
        "a point",
        f"a posterior mean [{int(ctx.prob * 100)}%]",
        "b point",
        f"b posterior mean [{int(ctx.prob * 100)}%]",
        "gap b - a",
    )
    return Section(
        title="Annotator channels",
        html_tables=[
            ("Channels (a = false-positive rate, b = 1 - false-negative rate)", header, rows),
            (
                "Prevalence P(Y = 1) per score group",
                ("score group", "items", "prevalence"),
                prev_rows,
            ),
        ],
        figures=[("Channels per annotator", forest_plot(forest, ctx.prob))],
        notes=notes,
    )


# --------------------------------------------------------------------------- diagnostics
def diagnostics_section(ctx: Context) -> Section:
    if ctx.channels_choice != "bayes":
        return Section(
            title="Sampler diagnostics",
            status="skipped",
            reason="the channels come from the point estimator "
            f"{ctx.point_method}; there is no sampler to diagnose.",
        )
    from bayescal.report.figures import ppc_plot, trace_plot

    diag = ctx.channels.diagnostics
    ppc = diag.get("ppc_tail_prob", {})
    rows = [
        ("R-hat (max over a, b, prevalence)", _fmt(diag.get("rhat_max"), 4), "< 1.01"),
        ("bulk ESS (min)", _fmt(diag.get("ess_bulk_min"), 0), "> 100 per chain"),
        ("tail ESS (min)", _fmt(diag.get("ess_tail_min"), 0), "> 100 per chain"),
        ("divergent transitions", diag.get("divergences"), "0"),
        ("E-BFMI (min)", _fmt(diag.get("bfmi_min"), 3), "> 0.3"),
        ("sampling seconds", _fmt(diag.get("sampling_seconds"), 1), ""),
    ]
    ppc_rows = [(g, _fmt(p, 3)) for g, p in ppc.items()]
    figures = []
    idata = ctx.channels.idata
    if idata is not None and "posterior_predictive" in idata.groups():
        rep = (
            idata.posterior_predictive["counts"]
            .stack(s=("chain", "draw"))
            .transpose("s", "group", "pattern")
            .values
        )
        obs = idata.observed_data["counts"].transpose("group", "pattern").values
        lo, hi = np.quantile(rep, [0.05, 0.95], axis=0)
        used = (obs.sum(axis=0) > 0) | (hi.sum(axis=0) > 0)
        labels = np.asarray(idata.observed_data["pattern"].values)[used]
        figures.append(
            (
                "Posterior predictive check of response patterns",
                ppc_plot(
                    obs[:, used],
                    lo[:, used],
                    hi[:, used],
                    labels,
                    idata.observed_data["group"].values,
                ),
            )
        )
        figures.append(("Trace of the channels (ArviZ)", trace_plot(idata)))
    ctx.diagnostics["ppc_p_min"] = min(ppc.values()) if ppc else None
    return Section(
        title="Sampler diagnostics and model check",
        html_tables=[
            ("NUTS diagnostics", ("check", "value", "target"), rows),
            (
                "Predictive check: tail probability of the pattern-count discrepancy per group "
                "(small values flag dependent annotators or a misfitting channel model)",
                ("score group", "tail probability"),
                ppc_rows,
            ),
        ],
        figures=figures,
    )


# --------------------------------------------------------------------------- ECE
def ece_section(ctx: Context) -> Section:
    from bayescal.metrics.binned import majority_vote_ece, oracle_ece, soft_vote_ece
    from bayescal.metrics.ncece import nc_ece
    from bayescal.metrics.uncertainty import nc_ece_interval
    from bayescal.report.figures import reliability_plot

    s = ctx.summary
    e = ctx.errors
    e["soft_vote"] = soft_vote_ece(s)
    e["majority_vote"] = majority_vote_ece(s)
    if s.has_truth:
        e["oracle"] = oracle_ece(s)
    point_ch = ctx.point if ctx.point is not None else None
    e["nc_point"] = nc_ece(
        s, point_ch if point_ch is not None else ctx.channels, weights=ctx.weights
    )
    ctx.interval = nc_ece_interval(
        s,
        ctx.channels,
        weights=ctx.weights,
        prob=ctx.prob,
        point_channels=point_ch,
        random_state=ctx.seed,
    )
    iv = ctx.interval
    dec = iv.decomposition()
    pct = int(ctx.prob * 100)
    rows = [
        ("soft vote (mean answer taken as truth)", _fmt(e["soft_vote"].value), ""),
        ("majority vote (ties count as 0)", _fmt(e["majority_vote"].value), ""),
        ("NC-ECE, point channels", _fmt(iv.point), ""),
        (
            f"NC-ECE, posterior mean and {pct}% interval",
            _fmt(float(iv.ece["full"].mean())),
            f"[{dec['full']['lo']:.4f}, {dec['full']['hi']:.4f}]",
        ),
        (
            "  channel uncertainty only",
            "",
            f"[{dec['channel']['lo']:.4f}, {dec['channel']['hi']:.4f}]",
        ),
        (
            "  evaluation-sample uncertainty only",
            "",
            f"[{dec['evaluation']['lo']:.4f}, {dec['evaluation']['hi']:.4f}]",
        ),
    ]
    if "oracle" in e:
        rows.append(("reference-label ECE (truth column)", _fmt(e["oracle"].value), ""))
    band = iv.curve_band(ctx.prob)
    curve = {
        "mean_score": band["mean_score"].values,
        "count": band["count"].values,
        "soft_vote": e["soft_vote"].bin_mean_target.values[0],
        "majority_vote": e["majority_vote"].bin_mean_target.values[0],
        "corrected_point": e["nc_point"].bin_mean_target.values.mean(axis=0),
        "corrected_lo": band["lo"].values,
        "corrected_hi": band["hi"].values,
        "oracle": e["oracle"].bin_mean_target.values[0] if "oracle" in e else None,
    }
    ctx.diagnostics["curve"] = curve
    notes = [
        "All errors use the same fixed bins and the same (annotated) items. NC-ECE replaces each "
        "item's label by its noise-corrected label U = sum_j w_j (A_j - a_j) / "
        "(b_j - a_j), unbiased for the clean label under the assumptions above.",
        "The interval combines channel uncertainty (posterior draws) with evaluation-sample "
        "uncertainty (a Bayesian bootstrap of the items on bin x pattern cells); each source alone "
        "is shown below it. The binned ECE is a sum of absolute values, so near zero every "
        "estimate is biased upward and the interval's lower end stays above zero.",
    ]
    return Section(
        title="Calibration error",
        html_tables=[
            (
                "Expected calibration error (binned, lower is better)",
                ("criterion", "value", f"{pct}% interval"),
                rows,
            )
        ],
        figures=[
            ("Reliability diagrams: naive vs noise-corrected", reliability_plot(curve, ctx.prob))
        ],
        notes=notes,
    )


# --------------------------------------------------------------------------- recalibration
def recalibration_section(ctx: Context) -> Section:
    import importlib.util

    from bayescal.summaries.summary import Summary

    if isinstance(ctx.data, Summary):
        return Section(
            title="Recalibration",
            status="skipped",
            reason="the audit ran on a summary (no per-item scores): fitting and evaluating maps "
            "on a held-out split needs items. The corrected histogram map can be built from counts "
            "with bayescal.scale.histogram_map_from_summary; see docs/scale.md.",
        )
    if importlib.util.find_spec("bayescal.recal") is None:
        return Section(
            title="Recalibration",
            status="skipped",
            reason="the recalibration module (bayescal.recal) is not part of this installation.",
        )
    from bayescal.report.recal_section import recalibration

    return recalibration(ctx)


# ------------------------------------------------------------------------ warnings, reproducibility
def warnings_section(ctx: Context) -> Section:
    if not ctx.warnings:
        return Section(title="Warnings", notes=["No warnings."])
    return Section(title="Warnings", notes=list(ctx.warnings))


def reproducibility_section(repro: dict) -> Section:
    rows = [
        ("command", repro["command"] or "(called from Python)"),
        ("seed", repro["seed"]),
        ("data hash (SHA-256)", repro["data_hash"]),
        ("platform", repro["platform"]),
        ("audit seconds", f"{repro['seconds']:.1f}"),
    ]
    rows += [(f"version: {k}", v) for k, v in repro["versions"].items()]
    rows += [(f"setting: {k}", str(v)) for k, v in repro["settings"].items()]
    return Section(title="Reproducibility", html_tables=[("Run", ("item", "value"), rows)])


def build_summary(ctx: Context, repro: dict) -> dict:
    post = ctx.channels
    ann = {}
    for entry in ctx.diagnostics["forest"]:
        ann[entry["name"]] = {"a": entry["a"], "b": entry["b"]}
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
    out = {
        "n_items": ctx.data.describe()["n_items"],
        "n_annotators": ctx.data.n_annotators,
        "n_unannotated": ctx.data.describe()["n_unannotated"],
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
                "mean": iv["mean"],
                "lo": iv["lo"],
                "hi": iv["hi"],
                "prob": iv["prob"],
                "decomposition": iv["decomposition"],
            },
            "bins": [float(x) for x in ctx.summary.bin_edges],
        },
        "diagnostics": {
            "rhat_max": diag.get("rhat_max"),
            "ess_bulk_min": diag.get("ess_bulk_min"),
            "divergences": diag.get("divergences"),
            "ppc_p_min": ctx.diagnostics.get("ppc_p_min"),
        },
        "warnings": list(ctx.warnings),
        "reproducibility": repro,
    }
    if "oracle" in ctx.errors:
        out["ece"]["oracle"] = ctx.errors["oracle"].value
    if "recalibration" in ctx.diagnostics:
        out["recalibration"] = ctx.diagnostics["recalibration"]
    return out
