"""The audit's "what we already knew" step: gold items, priors from earlier audits and
conditionally dependent annotators, for every number of classes.

Issue 15. Gold items (items of known class) enter the channel likelihood at their
known class (:mod:`bayescal.channels.em`, :mod:`bayescal.bayes.models`) and are
left out of the calibration error unless the user asks (``gold_in_ece``). The
section says how many there were (per class), whether they identify the channels on
their own (:func:`~bayescal.channels.identification.gold_identifies`,
:func:`~bayescal.channels.identification.gold_identifies_multiclass`) and how much they
narrowed each channel (confusion-entry) interval: the Bayesian fit is repeated on the
unknown items alone (same priors, settings and seed) and the interval widths compared.
The same fit without the gold items (with point channels: the EM and its Bayesian
bootstrap) checks the gold labels against the annotators
(:func:`bayescal.bayes.conflict.gold_conflict`, flag ``gold.conflict``: flipped or
miscoded gold). Gold items nobody answered inform nothing and are left out with the other
unanswered items; the section counts them (flag ``gold.unanswered``).
Priors from an earlier audit (``ChannelPriors.from_fit``) are listed with the prior-data
conflict check of :func:`bayescal.bayes.conflict.prior_conflict`. With ``--dependence`` the
conditional-dependence model (:mod:`bayescal.bayes.dependence_fit`, ``models/dependence.md``)
is fitted with the audit's settings, compared with the independence model (LOO on pattern
counts, predictive check before/after, NC-ECE interval under both: top-label and class-wise
in the class-wise audit) and then carries the rest of the audit: the headline, the summary's
channels and the recalibration.
"""

from __future__ import annotations

import warnings as _warnings
from typing import cast

import numpy as np

from bayescal.bayes.conflict import (
    CONFLICT_LEVEL,
    GOLD_CONFLICT_LEVEL,
    gold_conflict,
    prior_conflict,
)
from bayescal.bayes.dependence_fit import (
    compare_channel_models,
    multiclass_dependence_ppc,
)
from bayescal.bayes.diagnostics import PPC_FAILED
from bayescal.bayes.priors import JOINT_SHIFT_LIMIT, JointRatioNormal
from bayescal.channels.bootstrap import BOOTSTRAP_METHODS, bootstrap_channels
from bayescal.channels.fit import fit_channels
from bayescal.channels.identification import (
    GOLD_ROW_SE_WARNING,
    GOLD_SE_WARNING,
    check_design,
    check_multiclass_design,
    gold_identifies,
    gold_identifies_multiclass,
)
from bayescal.channels.result import ChannelFit
from bayescal.errors import FitError, IdentificationError
from bayescal.flags import Flag
from bayescal.metrics.uncertainty import (
    MulticlassNCECEInterval,
    multiclass_nc_ece_interval,
    nc_ece_interval,
)
from bayescal.report import sections as steps
from bayescal.report.core import Section, Table, fmt

__all__ = ["knowledge_section", "flag_prior_conflicts", "interval_width"]

TITLE = "Prior knowledge: gold items and earlier audits"

#: Bootstrap draws of the EM fit without the gold items (point channels) for the gold
#: check. It reads only each draw's mean and variance of T_j[y, y]: 50 draws estimate a
#: variance within sqrt(2 / 49) = 20% (one standard error), and that variance is at most
#: about half of the predictive variance of the gold agreements (it is of the order of the
#: binomial part only when the gold items are as many as the rest), so a tail probability at
#: the flag's threshold (z about 3) moves by about exp(+-z**2 / 2 * 0.5 * 0.2) = +-45%: far
#: less than the Bonferroni factor (the number of statistics) the level already carries.
#: The draws keep the point fit's EM stopping rule (1e-9): stopped at 1e-7 they had not
#: moved far enough from the point fit they start at, and their spread was 7% short of the
#: true sampling spread (K = 3, 2400 items, 150 seeds), which doubled the false alarms.
GOLD_CHECK_DRAWS = 50
#: Share of those draws that may fail (their EM not converged after ``max_iter``, or a gap
#: lost) and be left out before the check is given up. Refusing it for one such draw left
#: 11% of honest audits unchecked (1000 items, 300 gold, K = 3): there every failed draw was a
#: slow crawl with healthy gaps (0.2-0.4). Leaving out up to 5 of 50 kept the check calibrated
#: (no false alarm in those audits; tails below their nominal shares).
GOLD_CHECK_MAX_FAILED = 0.1


def interval_width(draws: np.ndarray, prob: float) -> np.ndarray:
    """Width of the equal-tailed ``prob`` interval of each column of ``draws``."""
    lo, hi = steps.equal_tailed(draws, prob)
    return hi - lo


def _first_clause(exc: Exception) -> str:
    return str(exc).split(": ")[0].split(". ")[0]


def _without_gold(ctx: steps.Context) -> dict:
    """The channels fitted on the unknown items alone, or why there are none: the
    Bayesian fit (same priors, settings and seed) with ``--channels bayes``, else the
    point EM and :data:`GOLD_CHECK_DRAWS` draws of its Bayesian bootstrap."""
    plain = ctx.summary.without_gold()
    bayes = ctx.channels_choice == "bayes"
    # the bootstrap reruns an EM: the audit's unless it is Hui-Walter or the GMM
    method = ctx.point_method if ctx.point_method in BOOTSTRAP_METHODS else "score_bin_em"
    try:
        with _warnings.catch_warnings(record=True):
            if ctx.classwise:
                check_multiclass_design(plain)
            else:
                check_design(plain, ctx.point_method if bayes else method)
            if bayes:
                fit = steps.fit_posterior(ctx, plain, posterior_predictive=False)
            else:
                point = fit_channels(plain, method, **steps.point_options(ctx, method))
                fit = bootstrap_channels(
                    plain,
                    point,
                    n_draws=GOLD_CHECK_DRAWS,
                    max_failed=GOLD_CHECK_MAX_FAILED,
                    random_state=ctx.seed,
                )
    except IdentificationError as exc:
        return {"status": f"not identified without the gold items ({_first_clause(exc)})"}
    except FitError as exc:
        if bayes:
            raise
        return {"status": f"the EM fit without the gold items failed ({_first_clause(exc)})"}
    source = (
        "the posterior without the gold items"
        if bayes
        else f"{fit.n_draws} bootstrap draws of {method} without the gold items"
    )
    return {"status": "ok", "fit": fit, "bayes": bayes, "source": source}


def _flag_unanswered(ctx: steps.Context, unanswered: list[int], n_answered: int) -> dict:
    """Flag ``gold.unanswered``: gold items nobody answered, left out; their counts."""
    s = ctx.summary
    left_out = sum(unanswered)
    per = ", ".join(f"class {c}: {n}" for c, n in zip(s.classes, unanswered) if n)
    why = (
        "gold informs the channels only through the answers given on gold items, so they are "
        "left out with the other unanswered items"
    )
    ctx.flag(
        "gold.unanswered",
        []
        if not left_out
        else [
            f"none of the {left_out} gold items has an answer ({per}): {why}, and the gold "
            "column changes nothing. Collect answers on the gold items, or leave out --gold."
        ]
        if n_answered == 0
        else [
            f"{left_out} of the {left_out + n_answered} gold items have no answer ({per}): "
            f"{why}; the gold part rests on the {n_answered} answered ones."
        ],
        "gold items",
    )
    return {"n_unanswered": left_out, "n_unanswered_per_class": dict(zip(s.classes, unanswered))}


def _gold_part(ctx: steps.Context, out: dict) -> tuple[list, list]:
    s = ctx.summary
    unanswered = [int(x) for x in s.n_gold_unanswered]
    n_answered = int(s.n_gold.sum())
    left_out = _flag_unanswered(ctx, unanswered, n_answered)
    left_out_row = (
        "gold items nobody answered (left out, like every unanswered item)",
        " / ".join(f"{c}: {n}" for c, n in zip(s.classes, unanswered)),
    )
    if ctx.classwise:
        n_gold = [int(x) for x in s.n_gold]
        identified, worst_se = gold_identifies_multiclass(s)
        out["gold"] = {"n_gold": int(sum(n_gold)), "n_gold_per_class": dict(zip(s.classes, n_gold))}
        counts = (
            "gold items (answered), per class",
            " / ".join(f"{c}: {n}" for c, n in zip(s.classes, n_gold)),
        )
        what, weak, missing = "every confusion row", GOLD_ROW_SE_WARNING, "of some class"
        se_of, se_key = "an entry", "worst_entry_se_from_gold"
        informs, prevalence, by = "confusion likelihood", "confusion matrices", "by class"
    else:
        n0, n1 = s.binary.n_gold
        identified, worst_se = gold_identifies(s)
        out["gold"] = {"n_gold_0": n0, "n_gold_1": n1}
        counts = ("gold items of class 0 / class 1 (answered)", f"{n0} / {n1}")
        what, weak, missing = "every channel", GOLD_SE_WARNING, "of one class"
        se_of, se_key = "a gap b - a", "worst_gap_se_from_gold"
        informs, prevalence, by = "channel likelihood", "channels", "by class or score"
    out["gold"].update(
        {
            **left_out,
            "in_calibration_error": bool(ctx.gold_in_ece),
            "identifies_channels": identified,
            se_key: worst_se if identified else None,
        }
    )
    if n_answered == 0:
        status = "no gold item has an answer"
        out["gold"].update({"narrowing": {"status": status}, "conflict": {"status": status}})
        return [Table("Gold items", ("quantity", "value"), [counts, left_out_row])], [
            f"None of the {left_out['n_unanswered']} gold items has an answer: gold items "
            "inform the channels only through the answers given on them, so these are left out "
            "with the other unanswered items and the audit is the one without gold."
        ]
    rows: list[tuple[object, ...]] = [
        counts,
        *([left_out_row] if left_out["n_unanswered"] else []),
        (
            "in the calibration error",
            "yes (asked for)"
            if ctx.gold_in_ece
            else "no (gold items are often chosen non-randomly)",
        ),
        (
            f"gold items alone identify {what}",
            f"yes; {se_of} from them alone has standard error <= {fmt(worst_se, 3)}"
            + (" (weak)" if worst_se > weak else "")
            if identified
            else f"no (some annotator answered no gold item {missing})",
        ),
    ]
    tables = [Table("Gold items", ("quantity", "value"), rows)]
    notes = [
        f"Gold items enter the {informs} at their known class, P(answers | Y = y): "
        f"they inform the annotators' {prevalence}, not the "
        + ("class prevalences" if ctx.classwise else "prevalence")
        + f", so choosing them {by} does not bias the fit as long as the choice does not look "
        "at the answers."
    ]
    without = _without_gold(ctx)
    narrowing = {"status": without["status"]}
    if without["status"] == "ok" and not without["bayes"]:
        narrowing = {"status": "point channels: no intervals to compare (use --channels bayes)"}
        notes.append(f"Interval narrowing: {narrowing['status']}.")
    elif without["status"] == "ok":
        part = _confusion_narrowing if ctx.classwise else _channel_narrowing
        table, narrowing["annotators"] = part(ctx, without["fit"])
        tables.append(table)
        notes.append(
            "The widths without gold come from the same Bayesian model refitted on the "
            + (
                "items of unknown class alone (same priors, settings and seed); each includes "
                "Monte Carlo error of a few percent of the width."
                if ctx.classwise
                else "unknown items alone (same priors, settings and seed); the difference "
                "includes Monte Carlo error of a few percent of the width."
            )
        )
    else:
        notes.append(f"Interval narrowing: {without['status']}.")
    out["gold"]["narrowing"] = narrowing
    checked, out["gold"]["conflict"], note = _gold_conflict_part(ctx, without)
    tables += [checked] if checked is not None else []
    notes.append(note)
    return tables, notes


def _gold_conflict_part(ctx: steps.Context, without: dict) -> tuple[Table | None, dict, str]:
    """The gold labels against the channels fitted without them: table, summary entry,
    note, and the flag ``gold.conflict``."""
    if without["status"] != "ok":
        status = f"not checked: {without['status']}"
        return None, {"status": status}, f"Gold labels against the annotators: {status}."
    s = ctx.summary
    result = gold_conflict(s, without["fit"])
    per = result["annotators"]
    m = result["statistics"]

    def named(key: str) -> str:  # "gold_y" -> the name of class y
        return s.classes[int(key.removeprefix("gold_"))]

    rows = []
    for name, v in per.items():
        c = v["counts"]
        rows.append(
            (
                name,
                "; ".join(f"{named(k)}: {e['agree']} / {e['answered']}" for k, e in c.items()),
                "; ".join(f"{named(k)}: {e['expected_share']:.2f}" for k, e in c.items()),
                fmt(v["p"], 3),
                "CONFLICT" if v["conflict"] else ("ok" if c else "no gold answers"),
            )
        )
    flagged = [n for n, v in per.items() if v["conflict"]]
    tested = [n for n, v in per.items() if v["statistics"]]
    keys = {
        k for n in flagged for k, p in per[n]["statistics"].items() if p * m < GOLD_CONFLICT_LEVEL
    }
    classes = [named(k) for k in sorted(keys, key=lambda k: int(k.removeprefix("gold_")))]
    evidence = (
        f"on gold items of class(es) {classes} they answer the gold class far less often than "
        "their channels fitted without the gold items predict (tail probability "
        f"{result['p']:.2g} after Bonferroni over {m} annotator x gold class statistics, below "
        f"{GOLD_CONFLICT_LEVEL})"
    )
    if not flagged:
        message = []
    elif len(flagged) == len(tested) and len(tested) >= 2:
        message = [
            f"the gold labels contradict every annotator: {evidence}. The gold column looks "
            "miscoded (flipped or permuted classes?): check its coding. The channels and the "
            "headline use the gold classes as given."
        ]
    else:
        message = [
            f"annotator(s) {flagged} disagree with the gold labels far beyond their channels: "
            f"{evidence}. Those gold labels may be wrong, or these annotators answered gold items "
            "differently from the others: check the gold items they disagree on. The channels "
            "and the headline use the gold classes as given."
        ]
    ctx.flag("gold.conflict", message, "gold items")
    table = Table(
        "Gold labels against the channels fitted without them (answers agreeing with the gold "
        f"class, per gold class; one-sided tail probability, Bonferroni over {m} statistics; "
        f"flagged below {GOLD_CONFLICT_LEVEL})",
        ("annotator", "agree / answered", "expected share", "tail probability", "check"),
        rows,
    )
    note = (
        f"Gold labels against the annotators: {without['source']} predict how often each "
        "annotator answers the gold class on gold items; its agreements are compared with that "
        "prediction (Beta-binomial, the fit's own spread included). Only disagreement counts: "
        "gold items chosen easy agree more, which contradicts nothing. Honest gold is flagged "
        "in at most 1% of audits, whatever the number of annotators and classes."
    )
    return table, {"status": "ok", "source": without["source"], **result}, note


def _channel_narrowing(ctx: steps.Context, fit) -> tuple[Table, dict]:
    """Two classes: the widths of ``a`` and ``b`` with and without the gold items."""
    rows = []
    per: dict[str, dict[str, dict[str, float]]] = {}
    for j, name in enumerate(ctx.channels.annotators):
        cells = [name]
        per[name] = {}
        for key in ("a", "b"):
            with_gold = float(interval_width(getattr(ctx.channels, key).values[:, j], ctx.prob))
            plain = float(interval_width(getattr(fit, key).values, ctx.prob)[j])
            per[name][key] = {"width_with_gold": with_gold, "width_without_gold": plain}
            cells += [fmt(plain, 3), fmt(with_gold, 3), f"{1 - with_gold / plain:.0%}"]
        rows.append(tuple(cells))
    table = Table(
        f"How much the gold items narrowed the {ctx.percent}% channel intervals "
        "(width without gold, with gold, reduction)",
        ("annotator", "a without", "a with", "a narrower by")
        + ("b without", "b with", "b narrower by"),
        rows,
    )
    return table, per


def _confusion_narrowing(ctx: steps.Context, fit) -> tuple[Table, dict]:
    """C classes: the widths of every confusion entry with and without the gold items."""
    with_gold = interval_width(ctx.channels.confusion.values, ctx.prob)  # (K, C, C)
    plain = interval_width(fit.confusion.values, ctx.prob)
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
    table = Table(
        f"How much the gold items narrowed the {ctx.percent}% confusion intervals",
        ("annotator", "mean diagonal width without gold", "with gold", "median entry narrower by"),
        rows,
    )
    return table, per


def flag_prior_conflicts(ctx, conflict: dict, per: dict) -> dict:
    """Flag ``priors.conflict`` naming the conflicting annotators; the
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
        "unused": origin.get("unused", []),
        "prevalence_carried_over": bool(origin.get("prevalence", False)),
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
    s = ctx.summary
    conflict = prior_conflict(s, priors, reference=ctx.point, random_state=ctx.seed)
    described = _confusion_priors(ctx) if ctx.classwise else _rate_priors(ctx)
    rows, per = [], {}
    for j, name in enumerate(s.annotators):
        c = conflict[name]
        source = "earlier audit" if name in origin.get("from_fit", []) else "default"
        rows.append(
            (name, source, *described[j], fmt(c["p"], 3), "CONFLICT" if c["conflict"] else "ok")
        )
        per[name] = {"source": source, **c}
    flagged = flag_prior_conflicts(ctx, conflict, per)
    if ctx.classwise:  # the v0.2 key order of each track's summary.json
        out["priors"] = {**flagged, "joint": priors.joint is not None}
        what, columns = (
            "Confusion",
            ("prior mean accuracy per class", "prior strength (items per row)"),
        )
        kind = (
            "one normal on the log-ratio coordinates of every carried-over row (mean and "
            "covariance of the earlier draws, so their correlations are kept)"
            if priors.joint is not None
            else "one Dirichlet per confusion row with the earlier posterior's mean and total "
            "variance (the correlations between rows are not carried over)"
        )
    else:
        out["priors"] = {"joint": priors.joint is not None, **flagged}
        what, columns = "Channel", ("prior of a", "prior of b")
        kind = (
            "one normal on the log-odds of every carried-over rate (mean and covariance of the "
            "earlier draws, so their correlations are kept)"
            if priors.joint is not None
            else "moment-matched Beta distributions of its posterior, one per rate"
        )
    table = Table(
        f"{what} priors and prior-data conflict (partial prior predictive tail probability "
        f"per annotator; flagged below {CONFLICT_LEVEL})",
        ("annotator", "prior from", *columns, "tail probability", "check"),
        rows,
    )
    notes = [
        f"Priors from an earlier audit: {kind}, "
        f"discounted for drift by inflate = {origin.get('inflate')}: the earlier audit counts "
        "as 1 / inflate of its items. The tail probability asks whether an annotator's answers "
        "on the new items, given what the other annotators say about them, are surprising "
        "under its prior.",
        _contribution_note(origin),
    ]
    return [table], notes


def _contribution_note(origin: dict) -> str:
    """What the earlier audit gives and what it does not: its annotators that are not in
    these data, and its prevalences.

    Examples
    --------
    >>> print(_contribution_note({"from_fit": ["r1"], "default": ["r9"], "unused": ["old"]}))
    ... # doctest: +NORMALIZE_WHITESPACE
    The earlier audit gives the prior of r1; r9 keep the default prior (not in it); its
    annotator(s) old are not in these data and are not used. Its class prevalences are not
    carried over: they describe the items, which change between audits.
    """
    text = f"The earlier audit gives the prior of {', '.join(origin.get('from_fit', []))}"
    if origin.get("default"):
        text += f"; {', '.join(origin['default'])} keep the default prior (not in it)"
    if origin.get("unused"):
        text += (
            f"; its annotator(s) {', '.join(origin['unused'])} are not in these data and are "
            "not used"
        )
    if origin.get("prevalence"):
        return text + ". Its class prevalences are carried over too."
    return (
        text + ". Its class prevalences are not carried over: they describe the items, which "
        "change between audits."
    )


def _rate_priors(ctx: steps.Context) -> list[tuple[str, str]]:
    """Two classes: each annotator's prior of a and of b, as text."""
    k = ctx.summary.n_annotators
    return [
        (_prior_text(ctx.priors, "a", k, j), _prior_text(ctx.priors, "b", k, j)) for j in range(k)
    ]


def _confusion_priors(ctx: steps.Context) -> list[tuple[str, str]]:
    """C classes: each annotator's prior mean accuracy per class and prior strength."""
    priors, s = ctx.priors, ctx.summary
    assert priors is not None  # this part runs only with priors
    alpha = priors.confusion_alpha(s.n_annotators, s.n_classes)
    centre = priors.confusion_mean(s.n_annotators, s.n_classes)
    covered = np.zeros((s.n_annotators, s.n_classes), dtype=bool)
    joint = cast(JointRatioNormal | None, priors.joint)  # the Dirichlet family's joint prior
    if joint is not None:
        covered = joint.covered_rows(s.n_annotators, joint.n_prevalence)[0]
    return [
        (
            " / ".join(f"{v:.2f}" for v in np.diag(centre[j])),
            "joint normal on the log-ratios"
            if covered[j].any()
            else fmt(float(alpha[j].sum(axis=-1).mean()), 3),
        )
        for j in range(s.n_annotators)
    ]


def _posterior(fit: ChannelFit):
    """The posterior group of a Bayesian fit's InferenceData."""
    assert fit.idata is not None  # the dependence model is always Bayesian
    return fit.idata["posterior"]


def _interval_dict(iv) -> dict:
    lo, hi = iv.interval()
    return {"estimate": float(iv.estimate), "lo": float(lo), "hi": float(hi)}


def _point_independence_ppc_at_dependence(ctx: steps.Context, dep_warnings) -> None:
    """Say, in the independence model's failed predictive check, that the headline no longer
    rests on that model and whether the dependence model's own check passed."""
    dep_failed = any(str(w).startswith(PPC_FAILED) for w in dep_warnings)
    note = (
        " (This is the independence model's check; the headline uses the dependence model "
        "(--dependence), whose check "
        + ("fails too: see its own warning.)" if dep_failed else "passes.)")
    )
    ctx.flags[:] = [
        Flag(f.code, f.message + note, f.source, f.severity)
        if f.code == "channels.sampler" and f.message.startswith(PPC_FAILED)
        else f
        for f in ctx.flags
    ]


_LOO_KEYS = ("elpd_loo", "se", "p_loo", "elpd_diff", "dse")
LOO_TITLE = "LOO on the pattern counts (PSIS, elpd per item summed; higher is better)"
PPC_TITLE = (
    "Posterior predictive check before (independence) and after (dependence): tail "
    "probabilities, small = the model does not reproduce the data"
)
LOO_COLUMNS = ("model", "elpd_loo", "SE", "p_loo", "elpd difference", "SE of difference")


def loo_summary(loo) -> tuple[list, dict]:
    """Table rows and the ``summary.json`` entry of an :func:`arviz.compare` table."""
    rows = [(name, *(fmt(row[k], 1) for k in _LOO_KEYS)) for name, row in loo.iterrows()]
    return rows, {name: {k: float(row[k]) for k in _LOO_KEYS} for name, row in loo.iterrows()}


def _mean_fit(ctx: steps.Context, fit: ChannelFit) -> ChannelFit:
    """The posterior-mean channels (confusions) and prevalences as a one-draw fit (the
    plug-in)."""
    prevalence = fit.class_prevalence if ctx.classwise else fit.prevalence
    groups = [str(g) for g in prevalence["group"].values]
    if ctx.classwise:
        return ChannelFit.from_confusion(
            fit.confusion.values.mean(axis=0, keepdims=True),
            fit.class_prevalence.values.mean(axis=0, keepdims=True),
            annotators=fit.annotators,
            classes=fit.classes,
            groups=groups,
            group_counts=fit.group_counts.values,
            method=f"{fit.method}_posterior_mean",
        )
    return ChannelFit.from_draws(
        fit.a.values.mean(axis=0, keepdims=True),
        fit.b.values.mean(axis=0, keepdims=True),
        fit.prevalence.values.mean(axis=0, keepdims=True),
        annotators=fit.annotators,
        groups=groups,
        group_counts=fit.group_counts.values,
        method="bayes_dependence_posterior_mean",
    )


def _binary_checks(ctx: steps.Context, fits: dict) -> tuple[dict, list]:
    """Two classes: the fits' own predictive checks (worst score group, pair agreement)."""
    indep, dep = fits["independent"], fits["dependent"]
    _point_independence_ppc_at_dependence(ctx, dep.warnings)
    pairs = list(dep.diagnostics.get("ppc_pair_tail_prob", {}))
    rows = [
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
    ppc = {
        name: {
            "group_tail_prob": f.diagnostics.get("ppc_tail_prob"),
            "pair_tail_prob": f.diagnostics.get("ppc_pair_tail_prob"),
        }
        for name, f in fits.items()
    }
    return ppc, rows


def _classwise_checks(ctx: steps.Context, fits: dict) -> tuple[dict, list]:
    """C classes: the pattern and pair-agreement check of both models."""
    checks = {}
    for name, fit in fits.items():
        ds, msgs = multiclass_dependence_ppc(fit, random_state=ctx.seed)
        checks[name] = ds
        ctx.flag(f"dependence.ppc-{name}", msgs, f"{name} model's predictive check")
    indep, dep = checks["independent"], checks["dependent"]
    rows = [
        (
            "worst channel group",
            fmt(float(indep["tail_prob"].min()), 3),
            fmt(float(dep["tail_prob"].min()), 3),
        )
    ] + [
        (
            f"pair {p} agreement",
            fmt(float(indep["pair_agreement_tail"].sel(pair=p)), 3),
            fmt(float(dep["pair_agreement_tail"].sel(pair=p)), 3),
        )
        for p in dep["pair"].values
    ]
    ppc = {
        name: {
            "group_tail_prob": dict(
                zip(map(str, ds["tail_prob"]["group"].values), ds["tail_prob"].values.tolist())
            ),
            "pair_tail_prob": dict(
                zip(map(str, ds["pair"].values), ds["pair_agreement_tail"].values.tolist())
            ),
        }
        for name, ds in checks.items()
    }
    return ppc, rows


def _dependence_part(ctx: steps.Context, out: dict) -> tuple[list, list]:
    """Fit the dependence model (Qu, Tan & Kutner 1996), compare it with the independence
    model (LOO, predictive check, NC-ECE interval) and make it the headline's channels."""
    indep, indep_point = ctx.channels, ctx.point
    with _warnings.catch_warnings(record=True):
        dep = steps.fit_posterior(ctx, ctx.summary, dependence=ctx.dependence)
    ctx.flag("dependence.sampler", dep.warnings, "dependence model")
    fits = {"independent": indep, "dependent": dep}
    ppc, ppc_rows = (_classwise_checks if ctx.classwise else _binary_checks)(ctx, fits)
    if ctx.classwise and indep_point is None:
        indep_point = _mean_fit(ctx, indep)
    dep_point = _mean_fit(ctx, dep)
    interval = multiclass_nc_ece_interval if ctx.classwise else nc_ece_interval
    intervals: dict = {}
    for name, fit, point in (("independent", indep, indep_point), ("dependent", dep, dep_point)):
        # the headline's interval (ece_section): the posterior route ("joint") for channel
        # posteriors, evaluation-only ("reuse") for point channels. Under the dependence model
        # the joint route draws each bin's rate given its marginal channels (the pattern
        # likelihood without the item-difficulty term): models/dependence.md.
        iv = interval(
            ctx.eval_summary,
            fit,
            weights=ctx.weights,
            prob=ctx.prob,
            point_channels=point,
            sample_use="joint" if fit.n_draws > 1 else "reuse",
            random_state=ctx.seed,
        )
        if ctx.classwise:
            parts = cast(MulticlassNCECEInterval, iv)
            intervals[name] = {
                "top_label": _interval_dict(parts.top_label),
                "classwise": _interval_dict(parts.classwise),
            }
        else:
            intervals[name] = _interval_dict(iv)
    loo_rows, loo_dict = loo_summary(compare_channel_models(fits))
    rho = _posterior(dep)["correlation"]
    if ctx.classwise:
        rho = rho.mean(("chain", "draw"))
        corr = {str(p): rho.sel(pair=p).values.tolist() for p in rho["pair"].values}
        classes = [str(c) for c in dep.classes]
    else:
        classes = ["0", "1"]
        corr = {
            str(p): [float(rho.sel(pair=p, **{"class": c}).mean()) for c in classes]
            for p in rho["pair"].values
        }
    groups = dep.diagnostics["dependence_groups"]
    out["dependence"] = {
        "groups": groups,
        "headline_model": "dependent",
        "identification": dep.diagnostics["identification"],
        "latent_correlation_mean": corr,
        "loo": loo_dict,
        "ppc": ppc,
        "nc_ece": intervals,
        **(
            {
                "accuracy": {
                    name: np.einsum("sjyy->jy", f.confusion.values).mean(axis=0).tolist()
                    for name, f in fits.items()
                }
            }
            if ctx.classwise
            else {
                "channels": {
                    name: {
                        "a": f.a.values.mean(axis=0).tolist(),
                        "b": f.b.values.mean(axis=0).tolist(),
                    }
                    for name, f in fits.items()
                }
            }
        ),
    }
    # the rest of the audit (NC-ECE, recalibration, summary) uses the dependence model
    ctx.channels, ctx.point = dep, dep_point
    ctx.diagnostics["channels"] = steps.channel_entries(ctx)
    tables = [
        Table(
            "Conditional dependence: posterior mean latent within-class correlation per pair "
            "(one column per true class)"
            if ctx.classwise
            else "Conditional dependence: groups sharing a latent item difficulty, and their "
            "posterior mean latent within-class correlation (class 0, class 1)",
            ("pair", *[f"given Y = {c}" for c in classes])
            if ctx.classwise
            else ("pair", "correlation given Y = 0", "correlation given Y = 1"),
            [(p, *[fmt(v, 2) for v in c]) for p, c in corr.items()],
        ),
        Table(LOO_TITLE, LOO_COLUMNS, loo_rows),
        Table(PPC_TITLE, ("check", "independence model", "dependence model"), ppc_rows),
        _nc_ece_table(ctx, intervals),
    ]
    named = "; ".join(", ".join(g) for g in groups)
    notes = [
        f"Dependence groups: {named} (overlapping pairs are merged: a group shares one latent "
        + (
            "item difficulty u ~ N(0, 1)). Within a group annotator j answers its true class y "
            "with probability Phi(c_jy + s_jy u) and otherwise a wrong class in proportion to "
            "its confusion row; T_j stays the marginal confusion, so NC-ECE uses it unchanged "
            "(models/dependence.md). Loadings s_jy ~ HalfNormal(1). The model couples whether "
            "answers are correct, not which wrong class they name."
            if ctx.classwise
            else "item difficulty, so every pair inside it is dependent). Within a group, "
            "annotator j answers 1 with probability Phi(c_jy + s_jy u) given the class y and "
            "the item's difficulty u ~ N(0, 1); a_j and b_j stay the marginal channels, so "
            "NC-ECE uses them unchanged (models/dependence.md). Loadings s_jy ~ HalfNormal(1)."
        ),
        "The headline NC-ECE, "
        + ("the summary's confusions" if ctx.classwise else "the channel table of the summary")
        + " and the recalibration use the dependence model; the channel section above shows "
        "the independence model. The dependence model is weakly identified: trust it most when "
        "at least two annotators are outside the dependent groups, and read the LOO difference "
        "with its SE.",
    ]
    return tables, notes


def _nc_ece_table(ctx: steps.Context, intervals: dict) -> Table:
    """NC-ECE and its interval under both channel models (top-label and class-wise for C
    classes)."""
    pct = ctx.percent
    parts = ("top_label", "classwise") if ctx.classwise else (None,)
    rows = []
    for name, iv in intervals.items():
        cells = [name + (" (headline)" if name == "dependent" else "")]
        for part in parts:
            e = iv if part is None else iv[part]
            cells += [fmt(e["estimate"]), f"[{fmt(e['lo'])}, {fmt(e['hi'])}]"]
        rows.append(tuple(cells))
    header = (
        ("channel model", "top-label NC-ECE", f"{pct}% interval", "class-wise", "interval")
        if ctx.classwise
        else ("channel model", "NC-ECE", f"{pct}% interval")
    )
    return Table(f"NC-ECE and its {pct}% interval under both channel models", header, rows)


def knowledge_section(ctx: steps.Context) -> Section:
    """Gold items, priors from earlier audits and conditional dependence between annotators:
    what they were and what they changed."""
    out: dict = {}
    tables: list = []
    notes: list = []
    parts = []
    s = ctx.summary
    if s.has_gold and int(s.n_gold.sum()) + int(s.n_gold_unanswered.sum()) > 0:
        parts.append(_gold_part)
    if ctx.priors is not None:
        parts.append(_priors_part)
    if ctx.dependence is not None:
        parts.append(_dependence_part)
    for part in parts:
        t, n = part(ctx, out)
        tables += t
        notes += n
    ctx.diagnostics["knowledge"] = out
    if not tables:
        return Section(
            key="knowledge",
            title=TITLE,
            status="skipped",
            reason="no gold items (--gold), no priors from an earlier audit (--priors) and no "
            "dependence model (--dependence).",
        )
    title = (
        TITLE
        if ctx.classwise
        else "Prior knowledge: gold items, earlier audits, dependent annotators"
    )
    return Section(key="knowledge", title=title, tables=tables, notes=notes)
