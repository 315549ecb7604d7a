"""The item posteriors section of both audits (issue 25 item 3).

Per item, the posterior probability of each true class given its answers (averaged over
the channel draws of a Bayesian fit), the corrected label and a surprise flag
(:func:`bayescal.channels.items.item_posteriors`). The report shows the counts and the
most surprising items; ``items.csv`` in the report folder holds every item, and
``summary.json["items"]`` the counts, the rule and the most surprising items. Out of core
the items are not in memory (the summary keeps pattern counts only), so the section is
skipped with that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from bayescal.channels.items import ItemPosteriors, item_posteriors
from bayescal.data.container import Annotations
from bayescal.report.core import Section, Table, fmt_p

if TYPE_CHECKING:
    from bayescal.report.sections import Context

__all__ = ["KEY", "TITLE", "items_section", "items_artifacts", "MAX_SHOWN"]

KEY = "items"
TITLE = "Items: the true class given the answers"

#: Most surprising items listed in the report (all are in ``items.csv``).
MAX_SHOWN = 10


def items_section(ctx: Context) -> Section:
    """Compute the item posteriors into ``ctx.items`` and describe them."""
    refused = needs_items(ctx, KEY, TITLE, "item posteriors need")
    if refused is not None:
        return refused
    data = cast(Annotations, ctx.data)
    post = item_posteriors(data, ctx.channels, ctx.summary, random_state=ctx.seed)
    ctx.items = post
    return Section(KEY, TITLE, tables=[_table(data, post)], notes=_notes(post))


def needs_items(ctx: Context, key: str, title: str, need: str) -> Section | None:
    """The skipped section of a per-item step (items, next) that cannot run, else None."""
    if not isinstance(ctx.data, Annotations):
        return Section(
            key,
            title,
            status="skipped",
            reason=f"out-of-core input: {need} the items in memory, and the out-of-core "
            "summary keeps pattern counts only.",
        )
    if ctx.channels is None or ctx.summary is None:
        return Section(key, title, status="skipped", reason="no channel fit to condition on.")
    return None


def answers_text(data: Annotations, i: int, classes: np.ndarray) -> str:
    """Item ``i``'s answers as ``"annotator: class, ..."`` (missing answers left out)."""
    return ", ".join(
        f"{a}: {classes[int(v)]}"
        for a, v in zip(data.annotators, data.labels[i])
        if not np.isnan(v)
    )


def items_artifacts(ctx: Context) -> dict[str, Any]:
    """``{"items.csv": writer}`` when the item posteriors were computed."""
    post = ctx.items
    return {} if post is None else {"items.csv": post.to_csv}


def _notes(post: ItemPosteriors) -> list[str]:
    checked = int(np.isfinite(post.surprise_p).sum())
    draws = "the point channels" if post.n_draws == 1 else f"{post.n_draws} channel draws"
    out = [
        f"Each item's probability of every true class given its answers and its channel "
        f"group (the channel model's E-step), averaged over {draws}; the corrected label is "
        f"the most probable "
        "class. Every item is in items.csv, one row per item.",
        f"{int(post.surprising.sum())} of {checked} answered items have answers the fit finds "
        f"surprising (tail probability below {post.alpha:g}); about "
        f"{post.expected_false_flags:.1f} are expected by chance when the model holds, so "
        "read the list against that number: many more point to items the channel model "
        "does not describe (hard or mislabelled items, dependent annotators).",
    ]
    if post.gold.any():
        out.append(f"{int(post.gold.sum())} gold items carry their known class.")
    if post.unanswered.any():
        out.append(
            f"{int(post.unanswered.sum())} items nobody answered carry their group's prevalence."
        )
    return out + list(post.notes)


def _table(data: Annotations, post: ItemPosteriors) -> Table:
    order = post.most_surprising(MAX_SHOWN)
    classes = np.asarray(post.classes, dtype=object)
    rows = []
    for i in order:
        answers = answers_text(data, i, classes)
        k = int(post.corrected_label[i])
        rows.append(
            (
                str(post.items[i]),
                answers,
                classes[k],
                f"{post.probability[i, k]:.3f}",
                fmt_p(float(post.surprise_p[i])),
            )
        )
    return Table(
        caption=f"The most surprising items (at most {MAX_SHOWN}; tail probability of their "
        "answers under the fit)",
        header=("item", "answers", "corrected label", "its probability", "surprise p"),
        rows=rows,
    )
