"""The multiclass audit's "what we already knew" step: gold items and earlier audits' priors.

Issue 15 for the multiclass track. Gold items (items of known class) enter the
confusion likelihood at their known class (:mod:`bayescal.channels.em`,
:mod:`bayescal.bayes.multiclass`) and are left out of the calibration error
unless asked (``gold_in_ece``). The section says how many there were per class,
whether they identify the confusions on their own
(:func:`~bayescal.channels.identification.gold_identifies_multiclass`) and how
much they narrowed the confusion intervals: the Bayesian fit is repeated on the
unknown items alone (same priors, settings and seed) and the interval widths of
every confusion entry compared. Priors from an earlier audit
(:meth:`~bayescal.bayes.priors.ChannelPriors.from_fit`) are listed with
the prior-data conflict check of
:func:`~bayescal.bayes.conflict.prior_conflict`.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal.bayes.conflict import CONFLICT_LEVEL, prior_conflict
from bayescal.channels.identification import (
    GOLD_ROW_SE_WARNING,
    check_multiclass_design,
    gold_identifies_multiclass,
)
from bayescal.errors import IdentificationError
from bayescal.report.core import Section, Table, fmt
from bayescal.report.knowledge_section import flag_prior_conflicts, interval_width
from bayescal.report.multiclass_dependence_section import multiclass_dependence_part

__all__ = ["multiclass_knowledge_section", "TITLE"]

TITLE = "Prior knowledge: gold items and earlier audits"


def _without_gold(ctx, refit) -> dict:
    """Confusion interval widths without the gold items, or why there are none."""
    if ctx.channels_choice != "bayes":
        return {"status": "point channels: no intervals to compare (use --channels bayes)"}
    plain = ctx.summary.without_gold()
    try:
        with _warnings.catch_warnings(record=True):
            check_multiclass_design(plain)
            fit = refit(ctx, plain)
    except IdentificationError as exc:
        reason = str(exc).split(": ")[0].split(". ")[0]  # the refusal's first clause
        return {"status": f"not identified without the gold items ({reason})"}
    return {"status": "ok", "width": interval_width(fit.confusion.values, ctx.prob)}


def _gold_part(ctx, refit, out: dict) -> tuple[list, list]:
    s = ctx.summary
    n_gold = [int(x) for x in s.n_gold]
    identified, worst_se = gold_identifies_multiclass(s)
    out["gold"] = {
        "n_gold": int(sum(n_gold)),
        "n_gold_per_class": dict(zip(s.classes, n_gold)),
        "in_calibration_error": bool(ctx.gold_in_ece),
        "identifies_channels": identified,
        "worst_entry_se_from_gold": worst_se if identified else None,
    }
    rows: list[tuple[object, ...]] = [
        (
            "gold items (answered), per class",
            " / ".join(f"{c}: {n}" for c, n in zip(s.classes, n_gold)),
        ),
        (
            "in the calibration error",
            "yes (asked for)"
            if ctx.gold_in_ece
            else "no (gold items are often chosen non-randomly)",
        ),
        (
            "gold items alone identify every confusion row",
            f"yes; an entry from them alone has standard error <= {fmt(worst_se, 3)}"
            + (" (weak)" if worst_se > GOLD_ROW_SE_WARNING else "")
            if identified
            else "no (some annotator answered no gold item of some class)",
        ),
    ]
    tables = [Table("Gold items", ("quantity", "value"), rows)]
    notes = [
        "Gold items enter the confusion likelihood at their known class, P(answers | Y = y): "
        "they inform the annotators' confusion matrices, not the class prevalences, so "
        "choosing them by class does not bias the fit as long as the choice does not look at "
        "the answers."
    ]
    without = _without_gold(ctx, refit)
    narrowing: dict = {"status": without["status"]}
    if without["status"] == "ok":
        with_gold = interval_width(ctx.channels.confusion.values, ctx.prob)  # (K, C, C)
        plain = without["width"]
        per, rows = {}, []
        for j, name in enumerate(ctx.channels.annotators):
            ratio = with_gold[j] / plain[j]
            diag_with, diag_plain = np.diag(with_gold[j]), np.diag(plain[j])
            per[name] = {
                "diagonal_width_with_gold": diag_with.tolist(),
                "diagonal_width_without_gold": diag_plain.tolist(),
                "median_width_ratio": float(np.median(ratio)),
            }
            rows.append(
                (
                    name,
                    fmt(float(diag_plain.mean()), 3),
                    fmt(float(diag_with.mean()), 3),
                    f"{1 - float(np.median(ratio)):.0%}",
                )
            )
        narrowing["annotators"] = per
        tables.append(
            Table(
                f"How much the gold items narrowed the {ctx.percent}% confusion intervals",
                (
                    "annotator",
                    "mean diagonal width without gold",
                    "with gold",
                    "median entry narrower by",
                ),
                rows,
            )
        )
        notes.append(
            "The widths without gold come from the same Bayesian model refitted on the items of "
            "unknown class alone (same priors, settings and seed); each includes Monte Carlo "
            "error of a few percent of the width."
        )
    else:
        notes.append(f"Interval narrowing: {without['status']}.")
    out["gold"]["narrowing"] = narrowing
    return tables, notes


def _priors_part(ctx, out: dict) -> tuple[list, list]:
    priors = ctx.priors
    origin = priors.origin or {}
    s = ctx.summary
    conflict = prior_conflict(s, priors, reference=ctx.point, random_state=ctx.seed)
    alpha = priors.confusion_alpha(s.n_annotators, s.n_classes)
    centre = priors.confusion_mean(s.n_annotators, s.n_classes)
    covered = np.zeros((s.n_annotators, s.n_classes), dtype=bool)
    if priors.joint is not None:
        covered = priors.joint.covered_rows(s.n_annotators, priors.joint.n_prevalence)[0]
    rows, per = [], {}
    for j, name in enumerate(s.annotators):
        c = conflict[name]
        source = "earlier audit" if name in origin.get("from_fit", []) else "default"
        strength = (
            "joint normal on the log-ratios"
            if covered[j].any()
            else fmt(float(alpha[j].sum(axis=-1).mean()), 3)
        )
        rows.append(
            (
                name,
                source,
                " / ".join(f"{v:.2f}" for v in np.diag(centre[j])),
                strength,
                fmt(c["p"], 3),
                "CONFLICT" if c["conflict"] else "ok",
            )
        )
        per[name] = {"source": source, **c}
    out["priors"] = flag_prior_conflicts(ctx, conflict, per)
    table = Table(
        "Confusion priors and prior-data conflict (partial prior predictive tail probability "
        f"per annotator; flagged below {CONFLICT_LEVEL})",
        (
            "annotator",
            "prior from",
            "prior mean accuracy per class",
            "prior strength (items per row)",
            "tail probability",
            "check",
        ),
        rows,
    )
    kind = (
        "one normal on the log-ratio coordinates of every carried-over row (mean and "
        "covariance of the earlier draws, so their correlations are kept)"
        if priors.joint is not None
        else "one Dirichlet per confusion row with the earlier posterior's mean and total "
        "variance (the correlations between rows are not carried over)"
    )
    out["priors"]["joint"] = priors.joint is not None
    notes = [
        f"Priors from an earlier audit: {kind}, "
        f"discounted for drift by inflate = {origin.get('inflate')}: the earlier audit "
        "counts as 1 / inflate of its items. The tail probability asks whether an annotator's "
        "answers on the new items, given what the other annotators say about them, are "
        "surprising under its prior."
    ]
    return [table], notes


def multiclass_knowledge_section(ctx, refit, confusion_entries=None) -> Section:
    """Gold items, priors from earlier audits and dependent annotators: what they were and
    what they changed.

    ``refit(ctx, summary, dependence=None)`` fits the audit's Bayesian model on another
    summary (the unknown items alone, for the narrowing; the dependence model);
    ``confusion_entries(ctx)`` rebuilds the summary's confusions once the dependence
    model takes over (``ctx.dependence``, :mod:`bayescal.report.multiclass_dependence_section`).
    """
    out: dict = {}
    tables: list = []
    notes: list = []
    if ctx.summary.has_gold and ctx.summary.n_gold.sum() > 0:
        t, n = _gold_part(ctx, refit, out)
        tables += t
        notes += n
    if ctx.priors is not None:
        t, n = _priors_part(ctx, out)
        tables += t
        notes += n
    if getattr(ctx, "dependence", None) is not None:
        t, n = multiclass_dependence_part(ctx, refit, confusion_entries, out)
        tables += t
        notes += n
    ctx.record["knowledge"] = out
    if not tables:
        return Section(
            key="knowledge",
            title=TITLE,
            status="skipped",
            reason="no gold items (--gold), no priors from an earlier audit (--priors) and no "
            "dependence model (--dependence).",
        )
    return Section(key="knowledge", title=TITLE, tables=tables, notes=notes)
