"""The multiclass audit's ``--dependence`` part of the "Prior knowledge" section.

The multiclass conditional-dependence model (:mod:`bayescal.bayes.dependence`,
``models/dependence.md``) is fitted with the audit's settings and seed, compared with
the independence model (pattern-cell LOO with :func:`arviz.compare`, the pattern and
pair-agreement predictive check before and after, the top-label and class-wise NC-ECE
interval under both), and then carries the rest of the audit: the noise view's
headline, the summary's channels and the recalibration, as on the binary track
(:mod:`bayescal.report.knowledge_section`).
"""

from __future__ import annotations

import numpy as np

from bayescal.bayes.dependence_fit import (
    compare_multiclass_channel_models,
    multiclass_dependence_ppc,
)
from bayescal.channels.result import ChannelFit
from bayescal.metrics.uncertainty import multiclass_nc_ece_interval
from bayescal.report.core import Table, fmt
from bayescal.report.knowledge_section import LOO_COLUMNS, LOO_TITLE, PPC_TITLE, loo_summary

__all__ = ["multiclass_dependence_part"]


def _point(fit) -> ChannelFit:
    """The posterior-mean confusions and prevalences as a one-draw fit (the plug-in)."""
    return ChannelFit.from_confusion(
        fit.confusion.values.mean(axis=0, keepdims=True),
        fit.class_prevalence.values.mean(axis=0, keepdims=True),
        annotators=fit.annotators,
        classes=fit.classes,
        groups=[str(g) for g in fit.class_prevalence["group"].values],
        group_counts=fit.group_counts.values,
        method=f"{fit.method}_posterior_mean",
    )


def _part_dict(part) -> dict:
    lo, hi = part.interval()
    return {"estimate": float(part.estimate), "lo": float(lo), "hi": float(hi)}


def multiclass_dependence_part(ctx, refit, confusion_entries, out: dict) -> tuple[list, list]:
    """Fit, compare, switch the audit to the dependence model; tables and notes.

    ``refit(ctx, summary, dependence=...)`` is the audit's Bayesian fit;
    ``confusion_entries(ctx)`` rebuilds the summary's confusion entries.
    """
    indep, indep_point = ctx.channels, ctx.point
    dep = refit(ctx, ctx.summary, dependence=ctx.dependence)
    ctx.flag("dependence.sampler", dep.warnings, "dependence model")
    checks = {}
    for name, fit in (("independent", indep), ("dependent", dep)):
        ds, msgs = multiclass_dependence_ppc(fit, random_state=ctx.seed)
        checks[name] = ds
        ctx.flag(f"dependence.ppc-{name}", msgs, f"{name} model's predictive check")
    dep_point = _point(dep)
    intervals = {}
    for name, fit, point in (
        ("independent", indep, indep_point if indep_point is not None else _point(indep)),
        ("dependent", dep, dep_point),
    ):
        iv = multiclass_nc_ece_interval(
            ctx.eval_summary,
            fit,
            point_channels=point,
            weights=ctx.weights,
            prob=ctx.prob,
            sample_use="joint",  # the headline's route for posterior channels (both are)
            random_state=ctx.seed,
        )
        intervals[name] = {
            "top_label": _part_dict(iv.top_label),
            "classwise": _part_dict(iv.classwise),
        }
    loo = compare_multiclass_channel_models({"independent": indep, "dependent": dep})
    loo_rows, loo_dict = loo_summary(loo)
    rho = dep.idata.posterior["correlation"].mean(("chain", "draw"))
    corr = {str(p): rho.sel(pair=p).values.tolist() for p in rho["pair"].values}
    groups = dep.diagnostics["dependence_groups"]
    out["dependence"] = {
        "groups": groups,
        "headline_model": "dependent",
        "identification": dep.diagnostics["identification"],
        "latent_correlation_mean": corr,
        "loo": loo_dict,
        "ppc": {
            name: {
                "group_tail_prob": dict(
                    zip(map(str, ds["tail_prob"]["group"].values), ds["tail_prob"].values.tolist())
                ),
                "pair_tail_prob": dict(
                    zip(map(str, ds["pair"].values), ds["pair_agreement_tail"].values.tolist())
                ),
            }
            for name, ds in checks.items()
        },
        "nc_ece": intervals,
        "accuracy": {
            name: np.einsum("sjyy->jy", f.confusion.values).mean(axis=0).tolist()
            for name, f in (("independent", indep), ("dependent", dep))
        },
    }
    # the rest of the audit (noise view, recalibration, summary) uses the dependence model
    ctx.channels, ctx.point = dep, dep_point
    ctx.record["confusions"] = confusion_entries(ctx)
    pct = ctx.percent
    pair_rows = [
        (
            f"pair {p} agreement",
            fmt(float(checks["independent"]["pair_agreement_tail"].sel(pair=p)), 3),
            fmt(float(checks["dependent"]["pair_agreement_tail"].sel(pair=p)), 3),
        )
        for p in checks["dependent"]["pair"].values
    ]
    tables = [
        Table(
            "Conditional dependence: posterior mean latent within-class correlation per pair "
            "(one column per true class)",
            ("pair", *[f"given Y = {c}" for c in dep.classes]),
            [(p, *[fmt(v, 2) for v in c]) for p, c in corr.items()],
        ),
        Table(LOO_TITLE, LOO_COLUMNS, loo_rows),
        Table(
            PPC_TITLE,
            ("check", "independence model", "dependence model"),
            [
                (
                    "worst channel group",
                    fmt(float(checks["independent"]["tail_prob"].min()), 3),
                    fmt(float(checks["dependent"]["tail_prob"].min()), 3),
                ),
                *pair_rows,
            ],
        ),
        Table(
            f"NC-ECE and its {pct}% interval under both channel models",
            ("channel model", "top-label NC-ECE", f"{pct}% interval", "class-wise", "interval"),
            [
                (
                    name + (" (headline)" if name == "dependent" else ""),
                    fmt(iv["top_label"]["estimate"]),
                    f"[{fmt(iv['top_label']['lo'])}, {fmt(iv['top_label']['hi'])}]",
                    fmt(iv["classwise"]["estimate"]),
                    f"[{fmt(iv['classwise']['lo'])}, {fmt(iv['classwise']['hi'])}]",
                )
                for name, iv in intervals.items()
            ],
        ),
    ]
    notes = [
        "Dependence groups: "
        + "; ".join(", ".join(g) for g in groups)
        + " (overlapping pairs are merged: a group shares one latent item difficulty u ~ "
        "N(0, 1)). Within a group annotator j answers its true class y with probability "
        "Phi(c_jy + s_jy u) and otherwise a wrong class in proportion to its confusion row; "
        "T_j stays the marginal confusion, so NC-ECE uses it unchanged (models/dependence.md). "
        "Loadings s_jy ~ HalfNormal(1). The model couples whether answers are correct, not "
        "which wrong class they name.",
        "The headline NC-ECE, the summary's confusions and the recalibration use the "
        "dependence model; the channel section above shows the independence model. The "
        "dependence model is weakly identified: trust it most when at least two annotators "
        "are outside the dependent groups, and read the LOO difference with its SE.",
    ]
    return tables, notes
