"""The multiclass ambiguity audit (Tao et al.): the library's assessment, rendered.

:func:`audit_ambiguity` calls :func:`bayescal.ambiguity.assess_ambiguity`
(split, annotation profile, calibration-half recommendation, every method
fitted on the calibration half and scored on the test half, error by
annotation entropy) and renders the typed result as an
:class:`AmbiguityReport`: the shared :class:`~bayescal.report.core.Report`
that renders itself in Jupyter and saves ``report.html`` and ``summary.json``
atomically.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from bayescal._typing import RandomState
from bayescal.ambiguity.assessment import AmbiguityAssessment, assess_ambiguity
from bayescal.ambiguity.loaders import AmbiguityData
from bayescal.ambiguity.metric_intervals import intervals_to_dict, paired_differences
from bayescal.ambiguity.metrics import ece_voted
from bayescal.ambiguity.recommend import AmbiguityRecommendation
from bayescal.display import display_name
from bayescal.errors import ConfigError
from bayescal.plotting.ambiguity import entropy_histogram, true_and_voted_reliability
from bayescal.report.core import Provenance, Report, Section, Table, fmt
from bayescal.report.figures import responsive_figure
from bayescal.report.verdict import ambiguity_facts, decide, summary_entries

_log = logging.getLogger(__name__)

__all__ = ["audit_ambiguity", "AmbiguityReport"]

_GROUP_TEXT = {
    "reference": "nothing (reference)",
    "voted": "voted labels",
    "soft": "annotations (distribution or samples)",
    "annotation-free": "voted labels only (pseudo-soft target)",
    "oracle": "ORACLE: fitted on the test half; an upper reference, not a method",
}

#: Classes listed in the data section's table (the rest are counted in a note).
MAX_CLASS_ROWS = 50


@dataclass(eq=False, repr=False)
class AmbiguityReport(Report):
    """An ambiguity audit: the report plus the library's typed assessment.

    Attributes
    ----------
    assessment : AmbiguityAssessment
        Split, profile, per-method results (with test-half probabilities),
        recommendation, entropy strata, flags.
    """

    #: keyword-only: it follows the report's defaulted fields
    assessment: AmbiguityAssessment = field(kw_only=True)

    @property
    def recommendation(self) -> AmbiguityRecommendation:
        return self.assessment.recommendation

    @property
    def probas(self) -> dict:
        """Test-half probabilities of every method that ran."""
        return self.assessment.methods.probas

    @property
    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """Calibration and test item indices."""
        return self.assessment.cal, self.assessment.test

    def __repr__(self) -> str:
        s = self.summary
        rec = self.recommendation
        ece = s["methods"].get(rec.method, {}).get("ece_true")
        return (
            f"<AmbiguityReport {display_name(s['dataset'])}: {s['n_cal']} cal / "
            f"{s['n_test']} test items x {s['n_classes']} classes; "
            f"annotations: {rec.annotations['level']}; recommended {rec.method}"
            + (f" (test ECE_true {ece:.2f}%)" if ece is not None else "")
            + f"; {len(self.flags)} warning(s)>"
        )


def audit_ambiguity(
    data: AmbiguityData,
    *,
    random_state: RandomState = 0,
    methods: Iterable[str] | None = None,
    annotations: str = "auto",
    objective: str = "overall",
    cal_fraction: float = 0.5,
    n_bins: int = 15,
    n_draws: int = 100,
    cv_folds: int = 5,
    entropy_strata: int = 5,
    distribution_threshold: int = 10,
    n_boot: int = 200,
    interval_prob: float = 0.9,
    command: str | None = None,
    title: str | None = None,
) -> AmbiguityReport:
    """Audit multiclass calibration against annotator distributions and recommend a calibrator.

    Tao et al. (arXiv:2603.22879): the SPEC §2 comparison protocol and the
    practical guidelines, checked on the calibration half; see
    :func:`bayescal.ambiguity.assess_ambiguity` for the steps.

    Parameters
    ----------
    data : AmbiguityData
        Logits and annotator counts (``load_cifar10h``, ``load_chaosnli``,
        ``load_npz`` or built directly).
    command : str, optional
        The command line, recorded for reproducibility.
    title : str, optional
    random_state, methods, annotations, objective, cal_fraction, n_bins, n_draws
        Settings of :func:`~bayescal.ambiguity.assess_ambiguity`, described there, with
        the same defaults (listed here so that the signature says what the audit takes).
    cv_folds, entropy_strata, distribution_threshold, n_boot, interval_prob
        Likewise.

    Returns
    -------
    AmbiguityReport

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.ambiguity import AmbiguityData
    >>> rng = np.random.default_rng(0)
    >>> pi = rng.dirichlet([1, 1, 1], 200)
    >>> d = AmbiguityData(logits=3 * np.log(pi), counts=rng.multinomial(20, pi),
    ...                   classes=("a", "b", "c"), item_ids=np.arange(200))
    >>> r = audit_ambiguity(d, methods=["Uncalibrated", "TS", "SLTS"], n_draws=5, cv_folds=2)
    >>> (r.recommendation.annotations["level"],
    ...  r.recommendation.method in ("SLTS", "Dirichlet-Soft", "SoftPlatt", "TS"))
    ('distribution', True)
    """
    if not isinstance(data, AmbiguityData):
        raise ConfigError(f"audit_ambiguity expects AmbiguityData; got {type(data).__name__}.")
    started = time.perf_counter()
    a = assess_ambiguity(
        data,
        random_state=random_state,
        methods=methods,
        annotations=annotations,
        objective=objective,
        cal_fraction=cal_fraction,
        n_bins=n_bins,
        n_draws=n_draws,
        cv_folds=cv_folds,
        entropy_strata=entropy_strata,
        distribution_threshold=distribution_threshold,
        n_boot=n_boot,
        interval_prob=interval_prob,
    )
    _log.info("drawing the report")
    summary = _summary(data, a)
    sections = [
        _data_section(data, a, summary),
        _recommendation_section(a.recommendation),
        _methods_section(a),
        _reliability_section(data, a),
        _entropy_section(a.strata),
    ]
    provenance = Provenance.capture(
        command,
        a.seed,
        _data_hash(data),
        a.settings,
        started=started,
        source=dict(data.attrs),
    )
    sections.append(provenance.section())
    verdict = decide(ambiguity_facts(summary, sections, a.flags))
    return AmbiguityReport(
        kind="ambiguity",
        title=title or f"bayescal ambiguity audit: {data.name or 'data'}",
        summary={**summary_entries(verdict, summary), **summary},
        sections=sections,
        provenance=provenance,
        flags=list(a.flags),
        assessment=a,
    )


def _data_hash(data: AmbiguityData) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(data.logits, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(data.counts, dtype=np.int64).tobytes())
    h.update("\x1f".join(map(str, data.classes)).encode())
    h.update("\x1f".join(map(str, data.item_ids)).encode())
    return h.hexdigest()


def _summary(data: AmbiguityData, a: AmbiguityAssessment) -> dict:
    """The audit's keys of ``summary.json`` (the report adds warnings and reproducibility)."""
    s = a.settings
    frac = s["cal_fraction"]
    out = {
        "dataset": data.name,
        "n_items": data.n_items,
        "n_cal": int(a.cal.size),
        "n_test": int(a.test.size),
        "n_classes": data.n_classes,
        "classes": [str(c) for c in data.classes],
        "annotations": a.profile,
        "protocol": {
            "split": f"stratified {frac:g}/{1 - frac:g} by voted label "
            f"(ties: lowest class index), seed {a.seed}",
            "fitting": "every method is fitted on the calibration half; the recommendation uses "
            "only the calibration half (cross-validation); the test half only scores",
            "oracle": "'Oracle TS (oracle)' is SLTS fitted on the TEST half: an upper reference, "
            "never a method and never recommended",
            "n_bins": s["n_bins"],
            "n_draws": s["n_draws"],
            "units": "ece_true, aece, cwece, ece_plugin, ece_voted in percent; brier (Tao et "
            "al.'s Eq. 5, squared distance to the annotator distribution), brier_sampled "
            "(against a label drawn from it: Eq. 5 + 1 - ||pi||^2), nll, accuracy as "
            "fractions; accuracy against voted labels",
        },
        "methods": a.methods.rows,
        "intervals": _interval_summary(a),
        "recommendation": a.recommendation.to_dict(),
        "entropy_strata": a.strata,
    }
    if data.reference is not None:
        out["reference_agreement"] = float(np.mean(data.voted == data.reference))
    return out


_INTERVAL_TEXT = {
    "ece_true": ("ECE_true %", 2),
    "aece": ("aECE %", 2),
    "cwece": ("cwECE %", 2),
    "ece_voted": ("ECE_voted %", 2),
    "brier": ("Brier, Eq. 5 (vs π)", 4),
    "brier_sampled": ("Brier, sampled label", 4),
    "nll": ("NLL", 3),
    "accuracy": ("accuracy %", 1),
}


def _interval_summary(a: AmbiguityAssessment) -> dict | None:
    """Estimates, intervals and paired differences against the recommended method (JSON)."""
    ds = a.intervals
    if ds is None:
        return None
    rec = a.recommendation.method
    out = {
        "prob": ds.attrs["prob"],
        "n_boot": ds.attrs["n_boot"],
        "interval_method": ds.attrs["interval_method"],
        "units": "as in 'methods' (ECE-type metrics and accuracy in percent)",
        "methods": intervals_to_dict(ds),
    }
    if rec in ds.calibrator.values:
        versus = intervals_to_dict(paired_differences(ds, rec))
        versus.pop(rec)
        out["versus_recommended"] = {
            "reference": rec,
            "methods": versus,
            "not_distinguishable": {
                str(m): [
                    name
                    for name, metrics in versus.items()
                    if not metrics[str(m)]["distinguishable"] and not a.methods.rows[name]["oracle"]
                ]
                for m in ds.metric.values
            },
        }
    return out


def _data_section(data: AmbiguityData, a: AmbiguityAssessment, summary: dict) -> Section:
    profile = a.profile
    per = profile["per_item"]
    shown = [display_name(c) for c in data.classes]
    rows = [
        ("dataset", data.name or "(unnamed)"),
        ("items", data.n_items),
        (
            "classes",
            f"{data.n_classes}: {', '.join(shown[:20])}" + (" …" if data.n_classes > 20 else ""),
        ),
        ("calibration / test items", f"{a.cal.size} / {a.test.size}"),
        (
            "annotations per item (min / median / mean / max)",
            f"{per['min']} / {per['median']:g} / {per['mean']:.1f} / {per['max']}",
        ),
        ("annotations in total", profile["total"]),
        (
            "annotation level",
            f"{profile['level']} (detected: {profile['detected']}"
            + (f", declared: {profile['declared']})" if profile["declared"] else ")"),
        ),
        ("unanimous items", f"{100 * profile['unanimous_fraction']:.1f}%"),
        (
            "annotations disagreeing with the item's majority",
            f"{100 * profile['disagreement_rate']:.1f}%",
        ),
        ("mean normalised annotation entropy", f"{profile['entropy']['mean']:.3f}"),
        (
            "model accuracy against voted labels",
            f"{100 * float(np.mean(data.logits.argmax(1) == data.voted)):.1f}%",
        ),
    ]
    if "reference_agreement" in summary:
        rows.append(
            (
                "voted label = dataset's reference label",
                f"{100 * summary['reference_agreement']:.1f}%",
            )
        )
    voted = np.bincount(data.voted, minlength=data.n_classes)
    share = data.counts.sum(axis=0) / data.counts.sum()
    pred = np.bincount(data.logits.argmax(1), minlength=data.n_classes)
    class_rows = [
        (shown[j], int(voted[j]), f"{100 * share[j]:.1f}%", int(pred[j]))
        for j in range(min(data.n_classes, MAX_CLASS_ROWS))
    ]
    histogram = responsive_figure(
        "Annotation entropy per item: how much annotators disagree.",
        lambda fig, narrow: entropy_histogram(a.entropy, ax=fig.subplots()),
        size=(6, 2.8),
        narrow_height=2.6,
    )
    notes = []
    if data.n_classes > MAX_CLASS_ROWS:
        notes.append(
            f"The class table shows the first {MAX_CLASS_ROWS} of {data.n_classes} classes."
        )
    return Section(
        key="data",
        title="Data",
        tables=[
            Table("Items and annotations", ("", "value"), rows),
            Table(
                "Classes",
                ("class", "items voted", "share of annotations", "model's top class"),
                class_rows,
            ),
        ],
        figures=[histogram],
        notes=notes,
    )


def _recommendation_section(rec: AmbiguityRecommendation) -> Section:
    rows = [
        ("recommended method", rec.method),
        ("guideline default for your annotations", rec.guideline_default),
        ("annotations available", rec.annotations["available"]),
    ]
    for n, r in rec.test.items():
        rows.append(
            (
                f"test half: {n}",
                f"ECE_true {r['ece_true']:.2f}%, ECE_voted {r['ece_voted']:.2f}%, "
                f"NLL {r['nll']:.3f}, Brier {r['brier']:.4f}",
            )
        )
    tables = [Table("Recommendation", ("", ""), rows)]
    scores = rec.check.get("scores", {})
    if scores:
        tables.append(
            Table(
                f"Calibration-half check ({rec.check['folds']}-fold "
                "cross-validation; the test half is not used)",
                ("method", "ECE_true %", "ECE_voted %", "NLL", "Brier"),
                [
                    (
                        n,
                        fmt(s.get("ece_true"), 2),
                        fmt(s.get("ece_voted"), 2),
                        fmt(s.get("nll"), 3),
                        fmt(s.get("brier"), 4),
                    )
                    if "error" not in s
                    else (n, "failed: " + s["error"], "", "", "")
                    for n, s in scores.items()
                ],
            )
        )
    if rec.alternatives:
        tables.append(
            Table(
                "Alternatives the guideline names",
                ("method", "when", "test ECE_true %", "test NLL"),
                [
                    (a["method"], a["why"], fmt(a["test_ece_true"], 2), fmt(a["test_nll"], 3))
                    for a in rec.alternatives
                ],
            )
        )
    return Section(
        key="recommendation", title="Recommendation", tables=tables, notes=list(rec.reasons)
    )


def _methods_section(a: AmbiguityAssessment) -> Section:
    header = (
        "method",
        "fitted on",
        "usable with your annotations",
        "T",
        "ECE_true %",
        "aECE %",
        "cwECE %",
        "ECE_voted %",
        "Brier, Eq. 5 (vs π)",
        "Brier, sampled label",
        "NLL",
        "accuracy %",
        "seconds",
    )
    rec = a.recommendation.method
    rows = []
    for name, r in a.methods.rows.items():
        label = name + ("  ← recommended" if name == rec else "")
        usable = (
            "oracle: no"
            if r["oracle"]
            else ("yes" if r["usable"] else f"no (needs more than {a.level})")
        )
        if r["status"] != "ok":
            rows.append(
                (label, _GROUP_TEXT[r["group"]], usable, "failed: " + r["error"], *[""] * 9)
            )
            continue
        rows.append(
            (
                label,
                _GROUP_TEXT[r["group"]],
                usable,
                fmt(r["temperature"], 2),
                fmt(r["ece_true"], 2),
                fmt(r["aece"], 2),
                fmt(r["cwece"], 2),
                fmt(r["ece_voted"], 2),
                fmt(r["brier"], 4),
                fmt(r["brier_sampled"], 4),
                fmt(r["nll"], 3),
                fmt(100 * r["accuracy"], 1),
                fmt(r["seconds"], 2),
            )
        )
    notes = [
        "All numbers are on the test half. ECE_true, aECE and cwECE compare "
        "confidences with labels drawn from the annotator distribution; ECE_voted "
        "with the voted label; Brier and NLL score the whole predicted distribution "
        "against the annotator distribution (lower is better everywhere).",
        "Two Brier scores: 'Eq. 5 (vs π)' is Tao et al.'s Eq. 5, mean ||p − π||², the "
        "squared distance to the annotator distribution (0 for a perfect prediction); "
        "'sampled label' is the Brier score against one label drawn from the annotators, "
        "E||p − e_y||² = Eq. 5 + (1 − ||π||²), whose floor is the annotators' own "
        "disagreement and whose scale matches the Brier columns of Tao et al.'s tables.",
        "Oracle TS (oracle) is fitted on the test half itself: it shows how far a single "
        "temperature can go, it is not a method you can use, and it is never recommended.",
    ]
    tables = [Table("Every method, test half", header, rows)]
    summary = _interval_summary(a)
    if summary is not None:
        tables += _interval_tables(summary)
        notes += _distinguishable_notes(summary)
    return Section(key="methods", title="Method comparison", tables=tables, notes=notes)


def _interval_tables(summary: dict) -> list[Table]:
    pct = int(round(100 * summary["prob"]))
    keys = [k for k in _INTERVAL_TEXT if k != "accuracy"]
    header = ("method", *[_INTERVAL_TEXT[k][0] for k in keys])

    def rows(methods: dict, cell) -> list[tuple]:
        return [
            (name, *(cell(metrics[k], _INTERVAL_TEXT[k][1]) for k in keys))
            for name, metrics in methods.items()
        ]

    tables = [
        Table(
            f"Test-half metrics with {pct}% intervals ({summary['interval_method']}; "
            f"{summary['n_boot']} replicates)",
            header,
            rows(
                summary["methods"],
                lambda v, d: f"{fmt(v['estimate'], d)} [{fmt(v['lo'], d)}, {fmt(v['hi'], d)}]",
            ),
        )
    ]
    versus = summary.get("versus_recommended")
    if versus and versus["methods"]:
        tables.append(
            Table(
                f"Each method minus the recommended {versus['reference']}, paired on the same "
                f"resampled items and label draws ({pct}% intervals; n.d. = not "
                "distinguishable: the interval contains 0)",
                header,
                rows(
                    versus["methods"],
                    lambda v, d: (
                        f"{v['estimate']:+.{d}f} [{fmt(v['lo'], d)}, {fmt(v['hi'], d)}]"
                        + ("" if v["distinguishable"] else " (n.d.)")
                    ),
                ),
            )
        )
    return tables


def _distinguishable_notes(summary: dict) -> list[str]:
    pct = int(round(100 * summary["prob"]))
    notes = [
        f"Intervals are {pct}% basic bootstrap intervals over the test items (each item "
        "resampled together with its label draws). Binned ECEs are biased upward, and the "
        "basic interval corrects for that, so an ECE interval can lie below its estimate: "
        "the estimate is the paper's statistic, the interval is for the population value."
    ]
    versus = summary.get("versus_recommended")
    if not versus:
        return notes
    ref = versus["reference"]
    for key in ("ece_true", "nll", "brier"):
        same = versus["not_distinguishable"][key]
        label = _INTERVAL_TEXT[key][0].replace(" %", "")
        if same:
            notes.append(f"Not distinguishable from {ref} on {label} at {pct}%: {', '.join(same)}.")
        else:
            notes.append(f"On {label}, every other method is distinguishable from {ref} at {pct}%.")
    return notes


def _reliability_section(data: AmbiguityData, a: AmbiguityAssessment) -> Section:
    rec = a.recommendation
    bins = a.methods.bins
    show = [
        n
        for n in ("Uncalibrated", "TS", rec.guideline_default, rec.method, "Oracle TS (oracle)")
        if n in bins
    ]
    show = list(dict.fromkeys(show))
    if not show:
        return Section(
            key="reliability",
            title="Reliability diagrams",
            status="skipped",
            reason="no method produced predictions.",
        )
    n_bins = a.settings["n_bins"]
    counts = data.counts[a.test]
    titles = {n: n + (" (recommended)" if n == rec.method and n != "TS" else "") for n in show}
    true = {titles[n]: bins[n] for n in show}
    voted = {titles[n]: ece_voted(a.methods.probas[n], counts, n_bins=n_bins) for n in show}
    k = len(show)
    return Section(
        key="reliability",
        title="Reliability diagrams",
        figures=[
            responsive_figure(
                "Accuracy against labels drawn from the annotator distribution (ECE_true; "
                "top row, or left on a phone) and against the voted label (ECE_voted; bottom "
                "row, or right). Red = overconfident, green = underconfident. Test half.",
                lambda fig, narrow: true_and_voted_reliability(
                    true,
                    voted,
                    stacked=narrow,
                    axes=fig.subplots(k, 2, squeeze=False)
                    if narrow
                    else fig.subplots(2, k, squeeze=False),
                ),
                size=(2.7 * k, 5.8),
                narrow_height=2.2 * k,
            )
        ],
        notes=[
            "A voted-label calibrator such as TS can look calibrated "
            "in the bottom row while staying overconfident in the top "
            "row: under ambiguity the voted label is the wrong target."
        ],
    )


def _entropy_section(strata: dict | None) -> Section:
    if not strata:
        return Section(
            key="entropy",
            title="Error by annotation entropy",
            status="skipped",
            reason="entropy strata were not requested (entropy_strata < 2).",
        )
    methods = [k for k in strata if k != "strata"]
    header = ("stratum", "items", "entropy range", *[f"{m}: mean |p − π| %" for m in methods])
    rows = []
    for i, s in enumerate(strata["strata"]):
        rng_text = (
            "0 (unanimous)"
            if s["entropy_max"] == 0
            else f"{s['entropy_min']:.2f}–{s['entropy_max']:.2f}"
        )
        rows.append(
            (i + 1, s["n"], rng_text, *[fmt(strata[m]["mean_error"][i], 2) for m in methods])
        )
    notes = [
        "|p − π|: the gap between the top-class confidence and the share of annotators choosing "
        "that class, per item. Tao et al.'s Proposition 2: for TS it grows with annotation entropy."
    ]
    for m in methods:
        notes.append(
            f"{m}: {'rises' if strata[m]['strictly_increasing'] else 'does not rise strictly'} "
            "with entropy; "
            f"{'monotone within two standard errors' if strata[m]['monotone'] else 'not monotone'}."
        )
    return Section(
        key="entropy",
        title="Error by annotation entropy",
        tables=[Table("Test half", header, rows)],
        notes=notes,
    )
