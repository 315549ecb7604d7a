"""The binary audit's "what we already knew" steps: gold items, priors from earlier audits and
conditionally dependent annotators.

Issue 15. Gold items (items of known class) enter the channel likelihood at their
known class (:mod:`bayescal.channels.em`, :mod:`bayescal.bayes.models`) and are
left out of the calibration error unless the user asks (``gold_in_ece``). The
section says how many there were, whether they identify the channels on their
own (:func:`bayescal.channels.identification.gold_identifies`) and how much they
narrowed each channel interval: the Bayesian fit is repeated on the unknown items
alone (same priors, settings and seed) and the interval widths compared. Priors
from an earlier audit (``ChannelPriors.from_fit``) are listed with the prior-data
conflict check of :func:`bayescal.bayes.priors.prior_conflict`. With ``--dependence`` the
conditional-dependence model (:mod:`bayescal.bayes.dependence_fit`) is fitted with the
audit's settings, compared with the independence model (LOO on pattern counts, predictive
check before/after, NC-ECE interval under both) and used for the headline.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal.bayes.conflict import CONFLICT_LEVEL, prior_conflict
from bayescal.bayes.diagnostics import PPC_FAILED
from bayescal.bayes.priors import JOINT_SHIFT_LIMIT
from bayescal.channels.identification import GOLD_SE_WARNING, check_design, gold_identifies
from bayescal.errors import IdentificationError
from bayescal.flags import Flag
from bayescal.report import sections as steps
from bayescal.report.core import Section, Table, fmt

__all__ = ["data_with_gold_section", "knowledge_section", "flag_prior_conflicts", "interval_width"]


def data_with_gold_section(ctx: steps.Context) -> Section:
    """The data section; then, when asked, gold items moved into the evaluation bins."""
    section = steps.data_section(ctx)
    if ctx.gold_in_ece and ctx.summary.has_gold:
        ctx.summary = ctx.summary.with_gold_in_bins()
    return section


def interval_width(draws: np.ndarray, prob: float) -> np.ndarray:
    """Width of the equal-tailed ``prob`` interval of each column of ``draws`` (both audits)."""
    lo, hi = np.quantile(draws, [(1 - prob) / 2, 1 - (1 - prob) / 2], axis=0)
    return hi - lo


def _without_gold(ctx: steps.Context) -> dict:
    """Interval widths of a and b without the gold items, or why there are none."""
    if ctx.channels_choice != "bayes":
        return {"status": "point channels: no intervals to compare (use --channels bayes)"}
    plain = ctx.summary.without_gold()
    try:
        with _warnings.catch_warnings(record=True):
            check_design(plain, ctx.point_method)
            fit = steps.fit_posterior(ctx, plain, posterior_predictive=False)
    except IdentificationError as exc:
        reason = str(exc).split(": ")[0].split(". ")[0]  # the refusal's first clause
        return {"status": f"not identified without the gold items ({reason})"}
    return {
        "status": "ok",
        "a": interval_width(fit.a.values, ctx.prob),
        "b": interval_width(fit.b.values, ctx.prob),
    }


def _gold_part(ctx: steps.Context, out: dict) -> tuple[list, list]:
    s = ctx.summary
    n0, n1 = s.binary.n_gold
    identified, worst_se = gold_identifies(s)
    out["gold"] = {
        "n_gold_0": n0,
        "n_gold_1": n1,
        "in_calibration_error": bool(ctx.gold_in_ece),
        "identifies_channels": identified,
        "worst_gap_se_from_gold": worst_se if identified else None,
    }
    rows: list[tuple[object, ...]] = [
        ("gold items of class 0 / class 1 (answered)", f"{n0} / {n1}"),
        (
            "in the calibration error",
            "yes (asked for)"
            if ctx.gold_in_ece
            else "no (gold items are often chosen non-randomly)",
        ),
        (
            "gold items alone identify every channel",
            f"yes; a gap b - a from them alone has standard error <= {fmt(worst_se, 3)}"
            + (" (weak)" if worst_se > GOLD_SE_WARNING else "")
            if identified
            else "no (some annotator answered no gold item of one class)",
        ),
    ]
    tables = [Table("Gold items", ("quantity", "value"), rows)]
    notes = [
        "Gold items enter the channel likelihood at their known class, P(answers | Y = y): "
        "they inform the annotators' channels, not the prevalence, so choosing them by class "
        "or score does not bias the fit as long as the choice does not look at the answers."
    ]
    without = _without_gold(ctx)
    narrowing = {"status": without["status"]}
    if without["status"] == "ok":
        rows = []
        per: dict[str, dict[str, dict[str, float]]] = {}
        for j, name in enumerate(ctx.channels.annotators):
            cells = [name]
            per[name] = {}
            for key in ("a", "b"):
                with_gold = float(interval_width(getattr(ctx.channels, key).values[:, j], ctx.prob))
                plain = float(without[key][j])
                per[name][key] = {"width_with_gold": with_gold, "width_without_gold": plain}
                cells += [fmt(plain, 3), fmt(with_gold, 3), f"{1 - with_gold / plain:.0%}"]
            rows.append(tuple(cells))
        narrowing["annotators"] = per
        tables.append(
            Table(
                f"How much the gold items narrowed the {ctx.percent}% channel intervals "
                "(width without gold, with gold, reduction)",
                ("annotator", "a without", "a with", "a narrower by")
                + ("b without", "b with", "b narrower by"),
                rows,
            )
        )
        notes.append(
            "The widths without gold come from the same Bayesian model refitted on the "
            "unknown items alone (same priors, settings and seed); the difference includes "
            "Monte Carlo error of a few percent of the width."
        )
    else:
        notes.append(f"Interval narrowing: {without['status']}.")
    out["gold"]["narrowing"] = narrowing
    return tables, notes


def flag_prior_conflicts(ctx, conflict: dict, per: dict) -> dict:
    """Flag ``priors.conflict`` naming the conflicting annotators (both audits); the
    ``summary.json["knowledge"]["priors"]`` entries they share."""
    flagged = [n for n, c in conflict.items() if c["conflict"]]
    ctx.flag(
        "priors.conflict",
        [
            f"the prior from the earlier audit conflicts with the new data for annotator(s) "
            f"{flagged} (prior predictive tail probability below {CONFLICT_LEVEL}): they may "
            "have drifted. Raise --priors-inflate, or audit without --priors, and compare."
        ]
        if flagged
        else [],
        "priors",
    )
    joint = ctx.priors.joint
    shift = None if joint is None else joint.shift_sd
    if shift is not None and shift > JOINT_SHIFT_LIMIT:
        d = joint.mean.size
        ctx.flag(
            "priors.joint_draws",
            [
                f"the joint prior's covariance comes from earlier draws of effective size "
                f"{joint.draws_ess:.0f} for {d} coordinates: its sampling error alone moves "
                f"this audit's posterior means by about {shift:.2f} posterior sd "
                "(models/priors.md, sequential-update check). Rerun the earlier audit with "
                f"more draws (effective size {100 * (d + 3)} or more keeps it near 0.05 sd)."
            ],
            "priors",
        )
    origin = ctx.priors.origin or {}
    return {
        "joint_shift_sd": shift,
        "inflate": origin.get("inflate"),
        "from_fit": origin.get("from_fit"),
        "default": origin.get("default"),
        "conflict": per,
    }


def _prior_text(priors, key: str, k: int, j: int) -> str:
    """One rate's prior as text: its Beta, or its margin of the joint log-odds normal."""
    joint = priors.joint
    position = j if key == "a" else k + j
    if joint is not None and position in joint.index.tolist():
        i = joint.index.tolist().index(position)
        sd = float(np.sqrt(joint.cov[i, i]))
        return f"joint log-odds normal, logit mean {joint.mean[i]:.3g}, sd {sd:.3g}"
    al, be = getattr(priors, key).expand(k, "annotator")
    return f"Beta({al[j]:.3g}, {be[j]:.3g})"


def _priors_part(ctx: steps.Context, out: dict) -> tuple[list, list]:
    priors = ctx.priors
    assert priors is not None  # this part runs only with priors
    origin = priors.origin or {}
    conflict = prior_conflict(ctx.summary, priors, reference=ctx.point, random_state=ctx.seed)
    rows, per = [], {}
    for j, name in enumerate(ctx.summary.annotators):
        c = conflict[name]
        source = "earlier audit" if name in origin.get("from_fit", []) else "default"
        rows.append(
            (
                name,
                source,
                _prior_text(priors, "a", ctx.summary.n_annotators, j),
                _prior_text(priors, "b", ctx.summary.n_annotators, j),
                fmt(c["p"], 3),
                "CONFLICT" if c["conflict"] else "ok",
            )
        )
        per[name] = {"source": source, **c}
    out["priors"] = {"joint": priors.joint is not None, **flag_prior_conflicts(ctx, conflict, per)}
    table = Table(
        "Channel priors and prior-data conflict (partial prior predictive tail probability "
        f"per annotator; flagged below {CONFLICT_LEVEL})",
        ("annotator", "prior from", "prior of a", "prior of b", "tail probability", "check"),
        rows,
    )
    kind = (
        "one normal on the log-odds of every carried-over rate (mean and covariance of the "
        "earlier draws, so their correlations are kept)"
        if priors.joint is not None
        else "moment-matched Beta distributions of its posterior, one per rate"
    )
    notes = [
        f"Priors from an earlier audit: {kind}, "
        f"discounted for drift by inflate = {origin.get('inflate')}: the earlier audit counts "
        "as 1 / inflate of its items. The tail probability asks whether an annotator's answers "
        "on the new items, given what the other annotators say about them, are surprising "
        "under its prior."
    ]
    return [table], notes


def _interval_dict(iv) -> dict:
    lo, hi = iv.interval()
    return {"estimate": float(iv.estimate), "lo": float(lo), "hi": float(hi)}


_PPC_FAILED = PPC_FAILED


def _point_independence_ppc_at_dependence(ctx: steps.Context, dep_warnings) -> None:
    """Say, in the independence model's failed predictive check, that the headline no longer
    rests on that model and whether the dependence model's own check passed."""
    dep_failed = any(str(w).startswith(_PPC_FAILED) for w in dep_warnings)
    note = (
        " (This is the independence model's check; the headline uses the dependence model "
        "(--dependence), whose check "
        + ("fails too: see its own warning.)" if dep_failed else "passes.)")
    )
    ctx.flags[:] = [
        Flag(f.code, f.message + note, f.source, f.severity)
        if f.code == "channels.sampler" and f.message.startswith(_PPC_FAILED)
        else f
        for f in ctx.flags
    ]


_LOO_KEYS = ("elpd_loo", "se", "p_loo", "elpd_diff", "dse")
#: titles and header of the tables both audits' dependence parts share
LOO_TITLE = "LOO on the pattern counts (PSIS, elpd per item summed; higher is better)"
PPC_TITLE = (
    "Posterior predictive check before (independence) and after (dependence): tail "
    "probabilities, small = the model does not reproduce the data"
)
LOO_COLUMNS = ("model", "elpd_loo", "SE", "p_loo", "elpd difference", "SE of difference")


def loo_summary(loo) -> tuple[list, dict]:
    """Table rows and the ``summary.json`` entry of an :func:`arviz.compare` table (both
    tracks' dependence parts)."""
    rows = [(name, *(fmt(row[k], 1) for k in _LOO_KEYS)) for name, row in loo.iterrows()]
    return rows, {name: {k: float(row[k]) for k in _LOO_KEYS} for name, row in loo.iterrows()}


def _dependence_part(ctx: steps.Context, out: dict) -> tuple[list, list]:
    """Fit the dependence model (Qu, Tan & Kutner 1996), compare it with the independence
    model (LOO, predictive check, NC-ECE interval) and make it the headline's channels."""
    from bayescal.bayes.dependence_fit import compare_channel_models
    from bayescal.channels.result import ChannelFit
    from bayescal.metrics.uncertainty import nc_ece_interval

    indep, indep_point = ctx.channels, ctx.point
    with _warnings.catch_warnings(record=True):
        dep = steps.fit_posterior(ctx, ctx.summary, dependence=ctx.dependence)
    ctx.flag("dependence.sampler", dep.warnings, "dependence model")
    _point_independence_ppc_at_dependence(ctx, dep.warnings)
    dep_point = ChannelFit.from_draws(
        dep.a.values.mean(axis=0, keepdims=True),
        dep.b.values.mean(axis=0, keepdims=True),
        dep.prevalence.values.mean(axis=0, keepdims=True),
        annotators=dep.annotators,
        groups=[str(g) for g in dep.prevalence["group"].values],
        group_counts=dep.group_counts.values,
        method="bayes_dependence_posterior_mean",
    )
    intervals = {}
    for name, fit, point in (("independent", indep, indep_point), ("dependent", dep, dep_point)):
        # the same interval as the headline's (ece_section): the posterior route ("joint")
        # for channel posteriors, evaluation-only ("reuse") for point channels. Under the
        # dependence model the joint route draws each bin's rate given its marginal channels
        # (the pattern likelihood without the item-difficulty term): models/dependence.md.
        intervals[name] = _interval_dict(
            nc_ece_interval(
                ctx.summary,
                fit,
                weights=ctx.weights,
                prob=ctx.prob,
                point_channels=point,
                sample_use="joint" if fit.n_draws > 1 else "reuse",
                random_state=ctx.seed,
            )
        )
    loo = compare_channel_models({"independent": indep, "dependent": dep})
    loo_rows, loo_dict = loo_summary(loo)
    pairs = list(dep.diagnostics.get("ppc_pair_tail_prob", {}))
    ppc_rows = [
        (
            "worst score group",
            fmt(min(indep.diagnostics.get("ppc_tail_prob", {}).values(), default=np.nan), 3),
            fmt(min(dep.diagnostics.get("ppc_tail_prob", {}).values(), default=np.nan), 3),
        )
    ] + [
        (
            f"pair {pair} agreement",
            fmt(indep.diagnostics.get("ppc_pair_tail_prob", {}).get(pair, np.nan), 3),
            fmt(dep.diagnostics["ppc_pair_tail_prob"][pair], 3),
        )
        for pair in pairs
    ]
    rho = dep.idata.posterior["correlation"]
    corr = {
        str(p): [float(rho.sel(pair=p, **{"class": c}).mean()) for c in ("0", "1")]
        for p in rho["pair"].values
    }
    out["dependence"] = {
        "groups": dep.diagnostics["dependence_groups"],
        "headline_model": "dependent",
        "identification": dep.diagnostics["identification"],
        "latent_correlation_mean": corr,
        "loo": loo_dict,
        "ppc": {
            name: {
                "group_tail_prob": f.diagnostics.get("ppc_tail_prob"),
                "pair_tail_prob": f.diagnostics.get("ppc_pair_tail_prob"),
            }
            for name, f in (("independent", indep), ("dependent", dep))
        },
        "nc_ece": intervals,
        "channels": {
            name: {
                "a": f.a.values.mean(axis=0).tolist(),
                "b": f.b.values.mean(axis=0).tolist(),
            }
            for name, f in (("independent", indep), ("dependent", dep))
        },
    }
    # the rest of the audit (NC-ECE, recalibration, summary) uses the dependence model
    ctx.channels, ctx.point = dep, dep_point
    ctx.diagnostics["forest"] = steps._channel_entries(ctx)
    groups = "; ".join(", ".join(g) for g in dep.diagnostics["dependence_groups"])
    pct = ctx.percent
    tables = [
        Table(
            "Conditional dependence: groups sharing a latent item difficulty, and their "
            "posterior mean latent within-class correlation (class 0, class 1)",
            ("pair", "correlation given Y = 0", "correlation given Y = 1"),
            [(p, fmt(c[0], 2), fmt(c[1], 2)) for p, c in corr.items()],
        ),
        Table(LOO_TITLE, LOO_COLUMNS, loo_rows),
        Table(
            PPC_TITLE,
            ("check", "independence model", "dependence model"),
            ppc_rows,
        ),
        Table(
            f"NC-ECE and its {pct}% interval under both channel models",
            ("channel model", "NC-ECE", f"{pct}% interval"),
            [
                (
                    name + (" (headline)" if name == "dependent" else ""),
                    fmt(iv["estimate"]),
                    f"[{fmt(iv['lo'])}, {fmt(iv['hi'])}]",
                )
                for name, iv in intervals.items()
            ],
        ),
    ]
    notes = [
        f"Dependence groups: {groups} (overlapping pairs are merged: a group shares one latent "
        "item difficulty, so every pair inside it is dependent). Within a group, annotator j "
        "answers 1 with probability Phi(c_jy + s_jy u) given the class y and the item's "
        "difficulty u ~ N(0, 1); a_j and b_j stay the marginal channels, so NC-ECE uses them "
        "unchanged (models/dependence.md). Loadings s_jy ~ HalfNormal(1).",
        "The headline NC-ECE, the channel table of the summary and the recalibration use the "
        "dependence model; the channel section above shows the independence model. The "
        "dependence model is weakly identified: trust it most when at least two annotators "
        "are outside the dependent groups, and read the LOO difference with its SE.",
    ]
    return tables, notes


def knowledge_section(ctx: steps.Context) -> Section:
    """Gold items, priors from earlier audits and conditional dependence between annotators:
    what they were and what they changed."""
    out: dict = {}
    tables: list = []
    notes: list = []
    if ctx.summary.has_gold and sum(ctx.summary.n_gold) > 0:
        t, n = _gold_part(ctx, out)
        tables += t
        notes += n
    if ctx.priors is not None:
        t, n = _priors_part(ctx, out)
        tables += t
        notes += n
    if ctx.dependence is not None:
        t, n = _dependence_part(ctx, out)
        tables += t
        notes += n
    ctx.diagnostics["knowledge"] = out
    if not tables:
        return Section(
            key="knowledge",
            title="Prior knowledge: gold items and earlier audits",
            status="skipped",
            reason="no gold items (--gold), no priors from an earlier audit (--priors) and no "
            "dependence model (--dependence).",
        )
    return Section(
        key="knowledge",
        title="Prior knowledge: gold items, earlier audits, dependent annotators",
        tables=tables,
        notes=notes,
    )
