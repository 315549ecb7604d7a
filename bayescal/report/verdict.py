"""The verdict at the top of every report: one decision, what it rests on, what to do next.

Every audit (binary, multiclass, ambiguity) collects its typed results into one
:class:`Facts` record (per-track code only where the facts differ:
:func:`binary_facts`, :func:`multiclass_facts`, :func:`ambiguity_facts`), and one
function, :func:`decide`, turns facts into a :class:`Verdict`: a sentence a reader
can act on, derived from the numbers (the bin that contributes most to the error,
its direction and size in points, whether a recalibration map was recommended on
held-out data and which one), the calibration test and the interval reconciled in
words, the checks it rests on (one line each, with the section that shows them),
the next steps, and what each warning means for the headline. The report renders
it with one template partial (``templates/_verdict.html``) and ``summary.json``
holds the same content under ``verdict``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from bayescal.bayes.diagnostics import warning_kind
from bayescal.flags import Flag
from bayescal.metrics.binned import BinnedECE
from bayescal.report.core import ON_REQUEST, Section, fmt, fmt_p, p_text

__all__ = [
    "Check",
    "BinGap",
    "Recalibration",
    "Skipped",
    "Facts",
    "Verdict",
    "decide",
    "summary_entries",
    "largest_gap",
    "noise_facts",
    "ambiguity_facts",
    "WIDE_INTERVAL",
    "CHECK_STATUSES",
]

#: Upper end of the interval (in ECE units) from which a calibration test that does not
#: reject is read as "too few items to tell" rather than "consistent with calibration":
#: 0.10 is an error of 10 points somewhere in the score range, more than any score a
#: clinician would keep unexamined.
WIDE_INTERVAL = 0.10

#: A check passed, failed, was not run (with the reason) or is an assumption no check
#: in this audit can test.
CHECK_STATUSES = ("passed", "failed", "not run", "assumed")

#: Decisions a verdict can end in.
DECISIONS = ("recalibrate", "keep", "fix the data", "collect more items", "use the ambiguity view")


@dataclass(frozen=True)
class Check:
    """One premise of the verdict: a check's outcome in one line, and the section showing it."""

    name: str
    status: str
    text: str
    section: str

    def __post_init__(self) -> None:
        if self.status not in CHECK_STATUSES:
            raise ValueError(f"check status must be one of {CHECK_STATUSES}; got {self.status!r}")


@dataclass(frozen=True)
class BinGap:
    """The evaluation bin that contributes most to the binned error.

    ``score`` is the mean score (top-label confidence) of its items and ``rate`` their
    noise-corrected positive rate (accuracy); ``gap = score - rate`` is positive when
    the model over-predicts (is over-confident) there.
    """

    lo: float
    hi: float
    score: float
    rate: float
    n: int
    share: float

    @property
    def gap(self) -> float:
        return self.score - self.rate

    @property
    def points(self) -> int:
        """The gap in percentage points, rounded."""
        return int(round(abs(self.gap) * 100))

    def bin_text(self) -> str:
        return f"{self.lo:g}-{self.hi:g}"


@dataclass(frozen=True)
class Recalibration:
    """What the held-out recalibration choice said.

    ``status``: ``"recommended"`` (a map beat the original score on held-out data),
    ``"keep"`` (none did), ``"skipped"`` (with the reason) or ``"not applicable"``.
    """

    status: str
    map: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Skipped:
    """A report section (stage) that did not run, with its reason."""

    section: str
    title: str
    reason: str


@dataclass(frozen=True)
class Facts:
    """What a verdict is derived from; one record for every track.

    ``metric`` names the headline number (``"NC-ECE"``, ``"top-label NC-ECE"``,
    ``"ECE_true"``); ``estimate``, ``lo``, ``hi`` are its value and interval in ECE
    units (fractions, not percent); ``p_value`` the calibration test's (None where
    the track has none); ``reference`` the error against the data's reference labels.
    """

    track: str
    n_items: int
    metric: str
    estimate: float | None
    lo: float | None
    hi: float | None
    prob: float
    p_value: float | None
    unreliable_because: tuple[str, ...]
    gap: BinGap | None
    recalibration: Recalibration
    checks: tuple[Check, ...]
    flags: tuple[Flag, ...]
    skipped: tuple[Skipped, ...] = ()
    reference: float | None = None
    reference_name: str = "reference labels"
    #: multiclass: the noise-or-ambiguity evidence ("noise", "ambiguity", "misfit", ...)
    evidence: str | None = None
    #: ambiguity track: the recommended calibrator, its and the uncalibrated test ECE_true
    #: (percent), whether the two are distinguishable, and the runners-up
    calibrator: str | None = None
    uncalibrated: float | None = None
    distinguishable: bool | None = None
    not_distinguishable: tuple[str, ...] = ()
    #: column -> role record of the input file, as the reader saw it
    columns: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Verdict:
    """The decision at the top of a report (see :func:`decide`)."""

    status: str
    decision: str
    sentence: str
    reconciliation: str
    rests_on: tuple[Check, ...]
    next_steps: tuple[str, ...]
    caveats: tuple[str, ...]
    skipped: tuple[Skipped, ...] = ()
    columns: tuple[tuple[str, str], ...] = ()
    numbers: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}; got {self.decision!r}")

    def to_dict(self) -> dict:
        """The ``verdict`` object of ``summary.json`` (same content as the HTML block)."""
        out = asdict(self)
        out["columns"] = [{"role": r, "columns": c} for r, c in self.columns]
        return out


# --------------------------------------------------------------------------- facts
def largest_gap(binned: BinnedECE) -> BinGap | None:
    """The bin whose share-weighted gap ``share * |score - rate|`` is largest.

    Weighting by the bin's share picks the bin that drives the binned error (a sparse
    bin's large gap is mostly sampling noise and contributes little); None when no bin
    holds items. The corrected rate is averaged over the channel draws.

    Examples
    --------
    >>> from bayescal.metrics.ncece import nc_ece
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.summaries.summary import summarize
    >>> from bayescal.channels.fit import fit_channels
    >>> s = summarize(simulate_toy(2000, random_state=0))
    >>> g = largest_gap(nc_ece(s, fit_channels(s, method="score_bin_em")))
    >>> 0 <= g.lo < g.hi <= 1 and g.n > 0
    True
    """
    count = np.asarray(binned.bin_count.values, dtype=float)
    if not count.sum() > 0:
        return None
    score = np.asarray(binned.bin_mean_score.values, dtype=float)
    target = np.asarray(binned.bin_mean_target.values, dtype=float)
    rate = target.mean(axis=0) if target.ndim == 2 else target
    share = count / count.sum()
    with np.errstate(invalid="ignore"):
        contribution = np.where(count > 0, share * np.abs(score - rate), -np.inf)
    i = int(np.argmax(contribution))
    edges = np.asarray(binned.bin_edges, dtype=float)
    return BinGap(
        lo=float(edges[i]),
        hi=float(edges[i + 1]),
        score=float(score[i]),
        rate=float(rate[i]),
        n=int(count[i]),
        share=float(share[i]),
    )


def skipped_sections(sections: Iterable[Section], summary: Mapping[str, Any]) -> tuple:
    """Sections that did not run, plus the summary's own ``skipped`` record (any layout:
    a mapping name -> reason, or a list of ``{"section"/"name"/"stage", "reason"}``)."""
    out = [Skipped(s.key, s.title, s.reason) for s in sections if s.status == "skipped"]
    seen = {s.section for s in out}
    extra = summary.get("skipped")
    items: list[tuple[str, str]] = []
    if isinstance(extra, Mapping):
        items = [
            (str(k), str(v.get("reason", v)) if isinstance(v, Mapping) else str(v))
            for k, v in extra.items()
        ]
    elif isinstance(extra, (list, tuple)):
        for e in extra:
            if isinstance(e, Mapping):
                name = e.get("section", e.get("name", e.get("stage", "?")))
                items.append((str(name), str(e.get("reason", ""))))
    for name, reason in items:
        if name not in seen:
            out.append(Skipped(name, name, reason))
            seen.add(name)
    return tuple(out)


def summary_entries(verdict: Verdict, summary: Mapping[str, Any]) -> dict:
    """What a report adds to its ``summary.json``: the ``verdict`` object, and a skipped
    recalibration stated with its reason where the audit left no record of it."""
    out: dict[str, Any] = {"verdict": verdict.to_dict()}
    recal = verdict.numbers.get("recalibration", {})
    if "recalibration" not in summary and recal.get("status") == "skipped":
        out["recalibration"] = {"status": "skipped", "reason": recal.get("reason", "")}
    return out


def _assumptions(lines: Sequence[str], section: str) -> list[Check]:
    """The audit's own assumption sentences (shown in full in ``section``) as premises."""
    return [Check("assumption", "assumed", text, section) for text in lines]


def _sampler_check(diag: Mapping[str, Any], bayes: bool, section: str) -> Check:
    if not bayes:
        return Check(
            "sampler convergence",
            "not run",
            "point channels: there is no sampler to check.",
            section,
        )
    from bayescal.bayes.diagnostics import THRESHOLDS

    rhat, ess, div = diag.get("rhat_max"), diag.get("ess_bulk_min"), diag.get("divergences")
    ok = (
        rhat is not None
        and rhat < THRESHOLDS["rhat_max"]
        and ess is not None
        and ess > THRESHOLDS["ess_per_chain_min"]
        and div == 0
    )
    return Check(
        "sampler convergence",
        "passed" if ok else "failed",
        f"R-hat {fmt(rhat, 3)} (target < {THRESHOLDS['rhat_max']}), bulk ESS {fmt(ess, 0)}, "
        f"{fmt(div)} divergent transitions.",
        section,
    )


def _plausibility_check(flags: Sequence[Flag]) -> Check:
    errors = [f for f in flags if f.severity == "error"]
    if errors:
        codes = ", ".join(sorted({f.code for f in errors}))
        return Check(
            "plausibility of the fit",
            "failed",
            f"{codes}: the corrected error is not a measurement on these data.",
            "warnings",
        )
    return Check(
        "plausibility of the fit",
        "passed",
        "channels better than chance, corrected bin rates within range.",
        "warnings",
    )


def _columns(columns: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    if not columns:
        return ()
    out = []
    for role, col in columns.items():
        if col is None or (isinstance(col, (list, tuple)) and not col):
            continue
        shown = ", ".join(map(str, col)) if isinstance(col, (list, tuple)) else str(col)
        out.append((str(role), shown))
    return tuple(out)


def _recal_choice(rec: Any, skipped: Sequence[Skipped]) -> Recalibration:
    """The held-out recalibration choice's record (one format for every C)."""
    if not isinstance(rec, Mapping) or "recommended" not in rec:
        return _recal_skipped(skipped)
    r = rec["recommended"]
    if rec.get("keeps_original") or r.get("map") in (None, "none"):
        best = rec.get("recommended", {}).get("best_by_validation", "none")
        return Recalibration(
            "keep",
            None,
            "on held-out items no map improved on the original score by more than the "
            "split-to-split noise"
            + ("" if best in (None, "none") else f" (best on validation: {_map_name(best)})"),
        )
    name = _map_name(f"{r['map']}_{r.get('target') or 'corrected'}")
    gain = r.get("improvement_over_original")
    return Recalibration(
        "recommended",
        name,
        f"on held-out items it lowered the NC-ECE by {fmt(gain)} "
        f"(test NC-ECE {fmt(r.get('test_nc_ece'))})",
    )


_MAP_NAMES = {
    "platt": "Platt",
    "temperature": "temperature",
    "histogram": "histogram",
    "vector": "vector",
}


def _map_name(key: str) -> str:
    """``"platt_corrected"`` -> ``"corrected Platt map"``."""
    if key in (None, "none"):
        return "original score"
    fam, _, target = str(key).partition("_")
    fam_text = _MAP_NAMES.get(fam, fam)
    return f"{target + ' ' if target else ''}{fam_text} map"


def noise_facts(
    summary: Mapping[str, Any],
    binned: BinnedECE,
    sections: Sequence[Section],
    flags: Sequence[Flag],
    *,
    assumptions: Sequence[str],
    columns: Mapping[str, Any] | None = None,
) -> Facts:
    """The facts of the binary or multiclass (noise) audit, by its number of classes.

    ``binned`` is the point NC-ECE (binary) or its top-label part (multiclass), whose bins
    give :func:`largest_gap`; the rest is read from the audit's ``summary`` keys and its
    sections.
    """
    multiclass = int(summary.get("n_classes", 2)) > 2
    nc = summary["ece"]["nc"]
    diag = summary.get("diagnostics", {})
    bayes = summary["channels"]["method"].startswith("bayes")
    skipped = skipped_sections(sections, summary)
    evidence = summary.get("noise_or_ambiguity", {}) if multiclass else {}
    what = "confusion matrix" if multiclass else "channel"
    checks = [
        Check(
            "identification",
            "passed",
            f"the design identifies every annotator's {what} (design check).",
            "identification",
        ),
        _sampler_check(diag, bayes, "diagnostics"),
        _evidence_check(evidence) if multiclass else _ppc_check(diag.get("ppc_p_min"), bayes),
        _plausibility_check(flags),
        *_assumptions(assumptions, "identification"),
    ]
    recal = summary.get("recalibration")
    recalibration = _recal_choice(recal, skipped)
    return Facts(
        track="multiclass" if multiclass else "binary",
        n_items=int(summary["n_items"]),
        metric="top-label NC-ECE" if multiclass else "NC-ECE",
        estimate=nc.get("point"),
        lo=nc.get("lo"),
        hi=nc.get("hi"),
        prob=float(nc.get("prob", 0.9)),
        p_value=nc.get("p_value"),
        unreliable_because=tuple(nc.get("unreliable_because", ())),
        gap=largest_gap(binned),
        recalibration=recalibration,
        checks=tuple(checks),
        flags=tuple(flags),
        skipped=skipped,
        reference=summary["ece"].get("oracle"),
        reference_name="reference classes" if multiclass else "reference labels",
        evidence=evidence.get("view"),
        uncalibrated=summary["ece"].get("ambiguity", {}).get("ece_true"),
        columns=columns,
    )


def _evidence_check(evidence: Mapping[str, Any]) -> Check:
    view = evidence.get("view")
    overall = evidence.get("overall") or {}
    if "dispersion_observed" in overall:
        text = (
            f"evidence: {view}; dispersion of answers to the same item around their class's "
            f"confusion rows {fmt(overall['dispersion_observed'], 3)}, against "
            f"{fmt(overall.get('dispersion_replicated'), 3)} replicated from the noise model "
            f"(tail probability {fmt_p(overall.get('dispersion_tail'))})."
        )
    else:
        text = f"evidence: {view}. {(evidence.get('reasons') or [''])[0]}"
    return Check(
        "noise or ambiguity (one true class per item)",
        "passed" if view == "noise" else ("not run" if view == "inconclusive" else "failed"),
        text,
        "evidence",
    )


def _recal_skipped(skipped: Sequence[Skipped]) -> Recalibration:
    why = next((s.reason for s in skipped if s.section == "recalibration"), "not run")
    return Recalibration("skipped", None, why)


def _ppc_check(ppc: float | None, bayes: bool) -> Check:
    if not bayes or ppc is None:
        return Check(
            "predictive check (answers independent given the class)",
            "not run",
            "needs the Bayesian channels (--channels bayes).",
            "diagnostics",
        )
    from bayescal.bayes.diagnostics import THRESHOLDS

    alpha = THRESHOLDS["ppc_alpha"]
    return Check(
        "predictive check (answers independent given the class)",
        "passed" if ppc >= alpha else "failed",
        f"smallest tail probability of the pattern counts {fmt_p(ppc)} "
        f"({'at least' if ppc >= alpha else 'below'} {alpha}).",
        "diagnostics",
    )


def ambiguity_facts(
    summary: Mapping[str, Any], sections: Sequence[Section], flags: Sequence[Flag]
) -> Facts:
    """The ambiguity audit's facts: the recommended calibrator against the uncalibrated
    model on the test half (ECE_true in percent, as the audit reports it)."""
    rec = summary["recommendation"]
    method = rec["method"]
    test = rec.get("test", {})
    ece = test.get(method, {}).get("ece_true")
    base = test.get("Uncalibrated", {}).get("ece_true")
    iv = summary.get("intervals") or {}
    lo = hi = None
    by_method = iv.get("methods", {})
    if method in by_method:  # the bias-corrected estimate its interval comes with
        e = by_method[method]["ece_true"]
        ece, lo, hi = e.get("estimate", ece), e.get("lo"), e.get("hi")
    if "Uncalibrated" in by_method:
        base = by_method["Uncalibrated"]["ece_true"].get("estimate", base)
    versus = iv.get("versus_recommended", {})
    same = tuple(versus.get("not_distinguishable", {}).get("ece_true", ()))
    distinguishable = None if not versus else "Uncalibrated" not in same
    profile = summary["annotations"]
    check = rec.get("check", {})
    fallbacks = rec.get("fallbacks") or []
    checks = [
        Check(
            "annotations",
            "passed",
            f"{profile['level']} ({rec['annotations'].get('available', '')}).",
            "data",
        ),
        Check(
            "calibration-half check",
            "failed" if fallbacks else "passed",
            f"{check.get('folds', '?')}-fold cross-validation on the calibration half only "
            + (
                "moved the choice: " + "; ".join(map(str, fallbacks))
                if fallbacks
                else "kept the guideline's choice"
            )
            + ".",
            "recommendation",
        ),
        Check(
            "held-out test half",
            "passed",
            f"{summary['n_test']} items never used to fit or choose; they only score.",
            "methods",
        ),
        Check(
            "ambiguity, not noise",
            "assumed",
            "the annotators' label distribution is the target: disagreement is genuine "
            "ambiguity, not errors around one true class.",
            "recommendation",
        ),
    ]
    return Facts(
        track="ambiguity",
        n_items=int(summary["n_items"]),
        metric="ECE_true",
        estimate=None if ece is None else ece / 100,
        lo=None if lo is None else lo / 100,
        hi=None if hi is None else hi / 100,
        prob=float(iv.get("prob", 0.9)),
        p_value=None,
        unreliable_because=(),
        gap=None,
        recalibration=Recalibration(
            "keep" if method == "Uncalibrated" else "recommended",
            None if method == "Uncalibrated" else method,
            rec["reasons"][0] if rec.get("reasons") else "",
        ),
        checks=tuple(checks),
        flags=tuple(flags),
        skipped=skipped_sections(sections, summary),
        calibrator=method,
        uncalibrated=None if base is None else base / 100,
        distinguishable=distinguishable,
        not_distinguishable=tuple(m for m in same if m != "Uncalibrated"),
    )


# --------------------------------------------------------------------------- decision
#: What a warning means for the headline, by code (prefix matches: "plausibility.").
WARNING_MEANING = {
    "channels.sampler": "the channels, and so the corrected error and its interval, may be "
    "biased by more than the interval shows (dependent annotators or a misfitting channel "
    "model); the verdict holds only if the error stays where it is when the dependence is "
    "modelled (--dependence) or the dependent annotator is dropped.",
    "dependence.sampler": "the dependence model's fit is in doubt; compare its NC-ECE with the "
    "independence model's in the gold-and-priors section before relying on either.",
    "noise.overdispersed": "answers vary more than the noise model allows: disagreement looks "
    "like ambiguity, so the noise-corrected error (one true class per item) is not the target; "
    "read ECE_true instead.",
    "noise.misfit": "the noise model does not fit the answers; the noise-corrected error rests "
    "on a model the data reject.",
    "identification.design": "the channels are weakly identified; the interval may understate "
    "the uncertainty.",
    "priors.conflict": "the priors disagree with these data; the headline moves with them, so "
    "compare with a run without --priors.",
    "data.unannotated": "those items are in no error; the verdict is about the annotated items.",
    "data.unchecked": "the reader did not read or could not check what the warning names; if "
    "that matters (a skipped file that holds items, an item counted twice), the counts and so "
    "every number are off by those items: check the input before relying on the verdict.",
    "gold.conflict": "the channels, and so the corrected error, use the gold classes as given: if "
    "the gold column is miscoded the headline is biased; fix it, or compare with a run without "
    "--gold, before relying on the verdict.",
    "gold.unanswered": "those gold items inform nothing; the channels rest on the answered items "
    "(gold or not), and the verdict with them.",
    "ece.bins": "some bins are sparse; the per-bin gaps there are noisy, the total error less so.",
    "recalibration.fit": "a recalibration map had fitting trouble; its held-out error is still "
    "what the recommendation compares.",
    "plausibility.reference-like-name": "if that column is a reference label rather than an "
    "annotator, the channels and the corrected error are biased: rerun with --annotators "
    "naming only the annotators.",
    "plausibility.identical-annotators": "two identical annotators break the independence the "
    "correction rests on: the corrected error is biased; drop one of them.",
    "plausibility.score-inverted": "the score falls as positives rise: check the coding of "
    "answers and score before reading the error.",
    "plausibility.too-few-items": "few items per channel parameter: the error and its interval "
    "are rough.",
    "plausibility": "the corrected error is not a measurement on these data.",
}


#: What the Bayesian fit's warnings (code ``channels.sampler``) mean, by their kind
#: (:func:`bayescal.bayes.diagnostics.warning_kind`); the predictive check's is the code's.
SAMPLER_MEANING = {
    "convergence": "the chains describe the channel posterior imprecisely, so the interval's "
    "ends (and the estimate's last digit) are uncertain beyond what they show; rerun with "
    "more --draws and --tune before quoting them.",
    "empty-groups": "no annotated item falls in those channel groups, so no estimate depends "
    "on their prevalence: nothing in the headline changes.",
}


def _meaning(f: Flag) -> str:
    if f.code == "channels.sampler":
        kind = warning_kind(f.message)
        if kind in SAMPLER_MEANING:
            return SAMPLER_MEANING[kind]
        if kind == "other":
            return "not accounted for in this verdict: read it before acting on the numbers."
    if f.code in WARNING_MEANING:
        return WARNING_MEANING[f.code]
    prefix = f.code.split(".")[0]
    if f.severity == "error" or prefix == "plausibility":
        return WARNING_MEANING["plausibility"]
    return "not accounted for in this verdict: read it before acting on the numbers."


def _direction(gap: BinGap, track: str) -> str:
    if track == "multiclass":
        word = "over-confident" if gap.gap > 0 else "under-confident"
        return (
            f"where its top-class probability is {gap.bin_text()} it is {word} by about "
            f"{gap.points} points ({gap.n} items)"
        )
    word = "over-predicts" if gap.gap > 0 else "under-predicts"
    return (
        f"among items scored {gap.bin_text()} it {word} by about {gap.points} points "
        f"({gap.n} items)"
    )


def _interval_text(f: Facts) -> str:
    pct = int(round(f.prob * 100))
    if f.lo is None or f.hi is None:
        return f"{f.metric} {fmt(f.estimate)}"
    return f"{f.metric} {fmt(f.estimate)}, {pct}% interval [{fmt(f.lo)}, {fmt(f.hi)}]"


def _verdict(
    f: Facts,
    *,
    status: str,
    decision: str,
    sentence: str,
    reconciliation: str,
    next_steps: Sequence[str],
    caveats: Sequence[str],
) -> Verdict:
    """A verdict on ``f``: the wording given, the premises and numbers taken from ``f``."""
    numbers = {
        "metric": f.metric,
        "estimate": f.estimate,
        "lo": f.lo,
        "hi": f.hi,
        "prob": f.prob,
        "p_value": f.p_value,
        "largest_gap": None
        if f.gap is None
        else {**asdict(f.gap), "gap": f.gap.gap, "points": f.gap.points},
        "recalibration": asdict(f.recalibration),
    }
    return Verdict(
        status=status,
        decision=decision,
        sentence=sentence,
        reconciliation=reconciliation,
        rests_on=f.checks,
        next_steps=tuple(next_steps),
        caveats=tuple(caveats),
        skipped=f.skipped,
        columns=_columns(f.columns),
        numbers=numbers,
    )


def decide(f: Facts) -> Verdict:
    """The verdict from the facts; every branch of the wording reads the numbers.

    Branches, in order: the corrected error is not a measurement (an error flag) ->
    fix the data; the ambiguity audit, or multiclass evidence of ambiguity -> the
    ambiguity view; the calibration test rejects -> recalibrate with the recommended
    map, or keep the score when no map beat it on held-out data (the two reconciled),
    or collect items when the choice could not run; the test does not reject -> keep
    the score, or collect more items when the interval still reaches
    :data:`WIDE_INTERVAL`. Failed checks qualify the sentence and add a next step.
    """
    failed = [c for c in f.checks if c.status == "failed"]
    caveats = list(dict.fromkeys(f"{fl.code}: {_meaning(fl)}" for fl in f.flags))  # once each
    if f.reference is not None:
        caveats.append(
            f"The error against the {f.reference_name} ({fmt(f.reference)}) takes them as "
            "truth; when they are themselves annotations (for example a crowd majority) they "
            "carry their own noise, so that number can fall outside the "
            f"{f.metric} interval and is not the model's true error"
            + (
                " (here it does)."
                if f.lo is not None and f.hi is not None and not f.lo <= f.reference <= f.hi
                else "."
            )
        )
    steps: list[str] = []
    ambiguous = f.track == "multiclass" and f.evidence == "ambiguity"
    for c in failed:
        if c.name == "plausibility of the fit" or (ambiguous and c.section == "evidence"):
            continue  # said by the verdict's own first step
        steps.append(_failed_step(c))

    if f.unreliable_because:
        codes = ", ".join(f.unreliable_because)
        return _verdict(
            f,
            status="not measurable",
            decision="fix the data",
            sentence=f"These data cannot measure the model's calibration ({codes}): do not act "
            f"on the {f.metric} below; fix what the warnings name and rerun.",
            reconciliation=f"The {f.metric} is computed but is not a measurement: the checks "
            "above it failed, so neither its value nor the calibration test says anything "
            "about the model.",
            next_steps=tuple(["Fix what each error warning names, then rerun.", *steps]),
            caveats=tuple(caveats),
        )

    if f.track == "ambiguity":
        return _ambiguity_verdict(f, caveats, steps)
    if ambiguous:
        amb = "" if f.uncalibrated is None else f" ({fmt(f.uncalibrated)})"
        return _verdict(
            f,
            status="ambiguous labels",
            decision="use the ambiguity view",
            sentence="The annotators' disagreement looks like genuine ambiguity, not noise "
            f"around one true class: judge the model by its ECE_true{amb} against their label "
            "distribution, and choose a calibrator with bayescal audit-ambiguity.",
            reconciliation=f"The noise-corrected {_interval_text(f)} does not apply: it "
            "assumes one true class per item, which the noise-or-ambiguity check rejects; it "
            "stays in the report and summary.json for comparison only.",
            next_steps=tuple(
                [
                    "Run bayescal audit-ambiguity on the same answers (counts per class) to "
                    "compare soft-target calibrators on held-out items.",
                    *steps,
                ]
            ),
            caveats=tuple(caveats),
        )

    alpha = 1 - f.prob
    rejects = f.p_value is not None and f.p_value < alpha
    if f.p_value is None:  # no test: read the interval
        rejects = f.lo is not None and f.lo > 0
    test = f"the calibration test ({p_text(f.p_value)})" if f.p_value is not None else "the test"
    qualifier = ""
    if failed:
        names = ", ".join(c.name for c in failed)
        qualifier = f" Caution: {names} failed; see what the verdict rests on."
    gap = "" if f.gap is None else _direction(f.gap, f.track)
    rec = f.recalibration

    if rejects:
        where = f": {gap}" if gap else ""
        if rec.status == "recommended":
            sentence = (
                f"The model is miscalibrated{where}; recalibrate with the {rec.map} shown below."
            )
            recon = (
                f"{test.capitalize()} rejects perfect calibration at level {fmt(alpha, 2)} and "
                f"the {_interval_text(f)} excludes 0; the {rec.map} was chosen on held-out data: "
                f"{rec.reason}."
            )
            decision, status = "recalibrate", "miscalibrated"
            steps.insert(
                0,
                f"Apply the {rec.map} (Recalibration section) and audit the "
                "recalibrated score on new items.",
            )
        elif rec.status == "keep":
            sentence = (
                f"The model is miscalibrated{where}, but no recalibration map did better than "
                "the score on held-out items; keep the score."
            )
            recon = (
                f"{test.capitalize()} says the model is not perfectly calibrated, and the "
                f"{_interval_text(f)} excludes 0; yet {rec.reason}, so recalibrating would trade "
                f"an overall error of {fmt(f.estimate, 3)} for a map whose benefit these data do "
                "not show."
            )
            decision, status = "keep", "miscalibrated, keep"
            steps.insert(
                0,
                "Keep the score; rerun the audit when more annotated items (or a "
                "new model) arrive.",
            )
        elif rec.status == "skipped" and rec.reason.startswith(ON_REQUEST):
            sentence = (
                f"The model is miscalibrated{where}; recalibration was left out of this audit "
                "on request, so rerun without --skip recalibration to choose a map."
            )
            recon = (
                f"{test.capitalize()} rejects perfect calibration and the {_interval_text(f)} "
                "excludes 0; no map was compared because the recalibration step was skipped."
            )
            decision, status = "recalibrate", "miscalibrated"
            steps.insert(
                0,
                "Rerun without --skip recalibration (skip without 'recalibration' in Python) "
                "to compare recalibration maps on held-out items.",
            )
        else:
            sentence = (
                f"The model is miscalibrated{where}; no map could be chosen on held-out data "
                f"({rec.reason}), so collect more annotated items before recalibrating."
            )
            recon = (
                f"{test.capitalize()} rejects perfect calibration and the {_interval_text(f)} "
                "excludes 0; choosing a map needs held-out items this audit did not have."
            )
            decision, status = "collect more items", "miscalibrated"
            steps.insert(0, "Collect more annotated items, then rerun to choose a map.")
    else:
        if f.hi is not None and f.hi >= WIDE_INTERVAL:
            sentence = (
                f"Too few items to tell: the data are consistent with a calibrated model, but "
                f"the error could be as large as {fmt(f.hi, 2)} ({round(f.hi * 100)} "
                f"points); collect more annotated items before deciding."
            )
            decision, status = "collect more items", "undetermined"
            steps.insert(0, f"Collect more annotated items ({f.n_items} now) and rerun.")
        else:
            sentence = "The data are consistent with a calibrated model; keep the score."
            decision, status = "keep", "calibrated"
            steps.insert(0, "Keep the score; rerun the audit on new items or a new model.")
        recon = (
            f"{test.capitalize()} does not reject perfect calibration at level {fmt(alpha, 2)}, "
            f"and the {_interval_text(f)} "
            + ("starts at 0." if f.lo is not None and f.lo <= 0 else "is small.")
        )
        if rec.status == "recommended":
            recon += (
                f" The held-out comparison prefers the {rec.map} ({rec.reason}); with no "
                "evidence of miscalibration that map is optional."
            )
        elif rec.status == "skipped":
            recon += f" Recalibration was not attempted: {rec.reason}"
    return _verdict(
        f,
        status=status,
        decision=decision,
        sentence=sentence + qualifier,
        reconciliation=recon,
        next_steps=tuple(steps),
        caveats=tuple(caveats),
    )


def _failed_step(c: Check) -> str:
    if c.name.startswith("predictive check"):
        return (
            "The predictive check failed: rerun with --dependence for the suspected pair "
            "(or drop one annotator of it) and see whether the error moves."
        )
    if c.name == "sampler convergence":
        return (
            "Rerun with more tuning steps or draws (--tune, --draws) until the sampler converges."
        )
    if c.name.startswith("noise or ambiguity"):
        return "Read the evidence section: the noise model is in doubt for these answers."
    if c.name == "calibration-half check":
        return "Read the Recommendation section: the guideline's default was overruled."
    return f"Read the {c.section} section: {c.name} failed."


def _ambiguity_verdict(f: Facts, caveats: list[str], steps: list[str]) -> Verdict:
    pct = int(round(f.prob * 100))
    est = "n/a" if f.estimate is None else f"{f.estimate * 100:.2f}%"
    base = "n/a" if f.uncalibrated is None else f"{f.uncalibrated * 100:.2f}%"
    iv = ""
    if f.lo is not None and f.hi is not None:
        iv = f" (bias-corrected {pct}% interval {f.lo * 100:.2f}-{f.hi * 100:.2f}%"
        if f.estimate is not None and not f.lo <= f.estimate <= f.hi:
            # a basic bootstrap interval moves against the binned ECE's upward bias, so it
            # can lie wholly below the plug-in (measured: ChaosNLI-SNLI, Dirichlet-Soft)
            iv += "; the sampled ECE is biased upward, so the interval lies below it"
        iv += ")"
    others = ", ".join(f.not_distinguishable[:4]) + (
        ", and others" if len(f.not_distinguishable) > 4 else ""
    )
    if f.calibrator == "Uncalibrated":
        return _verdict(
            f,
            status="calibrated",
            decision="keep",
            sentence="Keep the model's probabilities: no calibrator beat them against the "
            f"annotators' label distribution (ECE_true {base} on the test half).",
            reconciliation=f.recalibration.reason,
            next_steps=tuple(["Keep the probabilities; rerun on new items.", *steps]),
            caveats=tuple(caveats),
        )
    if f.distinguishable is False:
        return _verdict(
            f,
            status="not distinguishable",
            decision="keep",
            sentence=f"{f.calibrator} is the recommended calibrator (ECE_true {est}{iv} vs "
            f"{base} uncalibrated on the test half), but the difference is within the "
            "bootstrap noise; keeping the model's probabilities is as good on these data.",
            reconciliation=f"The paired {pct}% interval of the ECE_true difference between "
            f"{f.calibrator} and the uncalibrated model contains 0.",
            next_steps=tuple(["Keep the probabilities or collect more items.", *steps]),
            caveats=tuple(caveats),
        )
    recon = (
        "ECE_true is measured against the annotators' label distribution on the test half, "
        "which no method saw; "
        + (
            f"the paired {pct}% interval of the difference between {f.calibrator} and the "
            "uncalibrated model excludes 0."
            if f.distinguishable
            else "no paired interval of the difference was computed (n_boot = 0)."
        )
    )
    if others:
        recon += f" Not distinguishable from it on ECE_true: {others}."
    return _verdict(
        f,
        status="miscalibrated",
        decision="recalibrate",
        sentence=f"The model's probabilities are miscalibrated against the annotators' label "
        f"distribution (ECE_true {base} uncalibrated); recalibrate with {f.calibrator}, which "
        f"brings it to {est}{iv} on held-out items.",
        reconciliation=recon,
        next_steps=tuple(
            [
                f"Fit {f.calibrator} on all labelled items (bayescal.ambiguity) and apply it to "
                "new predictions.",
                *steps,
            ]
        ),
        caveats=tuple(caveats),
    )
