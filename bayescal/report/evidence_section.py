"""The steps only the class-wise audit has (C > 2): noise or ambiguity, and the ambiguity view.

:func:`evidence_section` runs the noise-or-ambiguity check
(:func:`~bayescal.metrics.noise_or_ambiguity.noise_or_ambiguity`), which decides which
analysis leads with ``view="auto"``; :func:`ambiguity_view_section` is the ambiguity view's
ECE against the annotators' answer distribution (Tao et al.). The noise view is the audit's
calibration-error step (:func:`bayescal.report.sections.ece_section`).
"""

from __future__ import annotations

import warnings as _warnings
from typing import cast

import numpy as np

from bayescal.ambiguity.metrics import ece_plugin, ece_true
from bayescal.data.container import Annotations
from bayescal.metrics.noise_or_ambiguity import noise_or_ambiguity
from bayescal.plotting.ambiguity import reliability_diagram
from bayescal.plotting.multiclass import dispersion_check
from bayescal.report.core import Section, Table, fmt
from bayescal.report.figures import responsive_figure
from bayescal.report.sections import Context

__all__ = ["evidence_section", "ambiguity_view_section"]


#: The per-class table's columns after the class: (key of the check, digits shown).
_CLASS_COLUMNS = (
    ("items", 0),
    ("dispersion_observed", 3),
    ("dispersion_replicated", 3),
    ("dispersion_tail", 3),
    ("disagreement_observed", 4),
    ("disagreement_excess", 4),
    ("disagreement_tail", 3),
)


# --------------------------------------------------------------------------- evidence
def evidence_section(ctx: Context) -> Section:
    """The noise-or-ambiguity check; it decides which analysis runs with ``view="auto"``."""
    # at the maximum-likelihood fit: the best noise model is what the evidence is about
    fit = ctx.point if ctx.point is not None else ctx.channels
    with _warnings.catch_warnings(record=True):
        ctx.check = noise_or_ambiguity(ctx.summary, fit, random_state=ctx.seed)
    chk = ctx.check
    ctx.add_flags(chk.flags)
    pc = chk.per_class
    rows = [
        (str(cls), *(fmt(float(pc[key][i]), digits) for key, digits in _CLASS_COLUMNS))
        for i, cls in enumerate(pc["class"].values)
    ]
    o = chk.overall
    rows.append(("all", *(fmt(o[key], digits) for key, digits in _CLASS_COLUMNS)))
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


# --------------------------------------------------------------------------- ambiguity view
_AMBIGUITY_TITLE = "Calibration error, ambiguity view (the answer distribution as truth)"


def ambiguity_view_section(ctx: Context) -> Section:
    """ECE against the annotators' answer distribution (Tao et al.), on the audit's bins."""
    data = cast(Annotations, ctx.data)  # the class-wise audit refuses a bare summary
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
        curve = ece_true(probs, counts, n_bins=m, random_state=ctx.seed)
        ctx.ambiguity["ece_true"] = float(curve.ece)
        ctx.ambiguity["ece_plugin"] = float(ece_plugin(probs, counts, n_bins=m).ece)
    if not ctx.runs("ambiguity"):
        return ctx.other_view(
            "ambiguity",
            _AMBIGUITY_TITLE,
            "; ECE_true is still in summary.json. Run with --view both (or --view ambiguity) "
            "to show this section.",
        )
    if not uniform:
        return Section(
            key="ambiguity",
            title=_AMBIGUITY_TITLE,
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
        title=_AMBIGUITY_TITLE,
        tables=[Table("Ambiguity-view calibration error", ("criterion", "value"), rows)],
        figures=[answer_reliability],
        notes=notes,
    )
