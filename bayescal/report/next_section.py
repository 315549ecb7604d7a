"""The "Where to annotate next" section of both audits (issue 25 item 4).

Candidate items (not gold-labelled, answered) ranked by the expected reduction of the
posterior variance of the linearised NC-ECE if their true class were revealed
(:func:`bayescal.channels.acquisition.rank_annotation_targets`, ``action="gold"``), with the
expected delta-method width after the top 10 and 50; the same for one more answer from the
typical annotator in ``summary.json["next_annotations"]["reread"]``. ``next.csv`` in the
report folder holds the full gold ranking. Out of core the items are not in memory, so the
section is skipped with that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from bayescal.channels.acquisition import AnnotationTargets, rank_annotation_requests
from bayescal.data.container import Annotations
from bayescal.errors import DataError
from bayescal.report.core import Section, Table
from bayescal.report.items_section import answers_text, needs_items

if TYPE_CHECKING:
    from bayescal.report.sections import Context

__all__ = ["KEY", "TITLE", "next_section", "next_artifacts", "next_summary", "MAX_SHOWN"]

KEY = "next"
TITLE = "Where to annotate next"

#: Items listed in the report (the full ranking is in ``next.csv``).
MAX_SHOWN = 10


def next_section(ctx: Context) -> Section:
    """Rank the items into ``ctx.next_gold`` / ``ctx.next_reread`` and describe the top."""
    refused = needs_items(ctx, KEY, TITLE, "ranking items needs")
    if refused is not None:
        return refused
    data, fit, summary = cast(Annotations, ctx.data), ctx.channels, ctx.summary
    try:
        # one pass over the channel draws for both rankings (the same cell posteriors)
        gold, reread = rank_annotation_requests(
            data,
            fit,
            summary,
            [("gold", None), ("reread", None)],
            prob=ctx.prob,
            gold_in_ece=ctx.gold_in_ece,
        )
    except DataError as err:  # every item gold or unanswered: nothing to rank
        return Section(KEY, TITLE, status="skipped", reason=str(err))
    ctx.next_gold, ctx.next_reread = gold, reread
    return Section(KEY, TITLE, tables=[_table(data, gold)], notes=_notes(gold, reread))


def next_artifacts(ctx: Context) -> dict[str, Any]:
    """``{"next.csv": writer}`` when the ranking was computed."""
    gold = ctx.next_gold
    return {} if gold is None else {"next.csv": gold.to_csv}


def next_summary(ctx: Context) -> dict[str, Any]:
    """``{"next_annotations": {...}}`` when the ranking was computed, else nothing."""
    gold = ctx.next_gold
    reread = ctx.next_reread
    if gold is None or reread is None:
        return {}
    return {"next_annotations": {"gold": gold.to_dict(), "reread": reread.to_dict()}}


def _shrink(r: AnnotationTargets, k: int) -> str:
    if r.width <= 0:
        return "0%"
    return f"{100 * (1 - r.width_after(k) / r.width):.1f}%"


def _variance(r: AnnotationTargets) -> str:
    """Which variance the ranking removes: posterior with channel draws, plain for a point fit."""
    return "posterior variance" if r.n_draws > 1 else "variance"


def _given(r: AnnotationTargets) -> str:
    return "the channel draws" if r.n_draws > 1 else "the point channels"


def _notes(gold: AnnotationTargets, reread: AnnotationTargets) -> list[str]:
    pct = round(100 * gold.prob)
    out = [
        f"Each of {gold.n_candidates} candidate items (answered, not gold) is ranked by how "
        f"much revealing its true class is expected to shrink the {_variance(gold)} of the "
        "NC-ECE, linearised at the bin gaps (delta method; exact in expectation over the "
        f"item's class probabilities, given {_given(gold)}). next.csv holds the full ranking.",
        f"Delta-method {pct}% width now {gold.width:.4f}; expected after gold labels for the "
        f"top 10 {gold.width_after(10):.4f} ({_shrink(gold, 10)} narrower), top 50 "
        f"{gold.width_after(50):.4f} ({_shrink(gold, 50)}). These shares apply to the "
        "reported interval as a guide; the widths add single-item reductions, which ignores "
        "that a batch tightens the channels jointly.",
        f"One more answer from a typical annotator instead: top 10 {_shrink(reread, 10)}, "
        f"top 50 {_shrink(reread, 50)} narrower (summary.json['next_annotations']['reread']).",
    ]
    return out + [n for n in gold.notes if n not in out[0]]


def _table(data: Annotations, r: AnnotationTargets) -> Table:
    classes = np.asarray(data.classes, dtype=object)
    rows = []
    for rank in range(min(MAX_SHOWN, r.n_candidates)):
        i = int(r.index[rank])
        answers = answers_text(data, i, classes)
        share = r.reduction[rank] / r.variance if r.variance > 0 else 0.0
        rows.append(
            (str(r.items[rank]), answers, f"{100 * share:.2f}%", f"{r.width_after(rank + 1):.4f}")
        )
    return Table(
        caption=f"Items to gold-label first (at most {MAX_SHOWN}; share of the NC-ECE's "
        f"{_variance(r)} each is expected to remove, and the width after the top ones)",
        header=("item", "answers", "variance removed", "width after"),
        rows=rows,
    )
