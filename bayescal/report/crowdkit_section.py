"""Naive ECE against crowd-kit's aggregated labels, beside the soft and majority votes.

Issue 16 (interop): users who already aggregate with crowd-kit can see what its
labels would say about the score's calibration. Every row here is a *naive* error
in Hanada & Futami's sense (Sec. 3): the aggregated label of each item is taken as
its true label, so annotation noise left in the aggregate (and the aggregator's own
errors) biases the error, in either direction; the noise-corrected NC-ECE of the
audit is the estimate of the calibration error under the channel model. The
aggregators also ignore the score.

Aggregators (crowd-kit 1.4, binary labels 0 / 1):

- ``DawidSkene``: per-annotator 2 x 2 confusion matrices by EM, the same
  class-conditional model as the audit's ``dawid-skene-em`` channels but one
  hard (maximum a posteriori) label per item;
- ``GLAD``: annotator ability and item difficulty (Whitehill et al. 2009), the
  one model here in which items differ in how hard they are;
- ``MMSR``: annotator skills from the matrix of pairwise agreements
  (Ma & Olshevsky 2020), meant for sparse designs;
- ``KOS``: Karger-Oh-Shah message passing, defined for binary labels only.

Left out: ``MajorityVote`` (the audit's own majority vote is that row, with a
stated tie rule), ``OneCoinDawidSkene`` (a special case of ``DawidSkene``),
``MACE`` (spammer model; 4-5 s at 500 items, about twice GLAD) and ``Wawa``
(raises ``AttributeError: __sklearn_tags__`` with crowd-kit 1.4.2 and
scikit-learn 1.9).

What an audit spends on these rows is bounded: an aggregator above its item cap
(:data:`MAX_ITEMS`) is skipped, and the rows together get
:data:`SECTION_BUDGET_SECONDS` at their predicted costs (:func:`predicted_seconds`), run
cheapest first; a row that does not fit is skipped with its cost as the stated reason,
in the table, the notes and ``summary.json``.

Each aggregator runs with crowd-kit's default settings, as a user would run it
(its ``DawidSkene`` then stops after a few iterations by its own tolerance rule,
short of the maximum: see the README's Dawid-Skene comparison).

crowd-kit is optional: it is imported only here, inside the section, never by
``import bayescal``; without it the section says so in one line.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from bayescal.data.container import Annotations
from bayescal.progress import step
from bayescal.report.core import Section, Table, fmt
from bayescal.report.sections import Context
from bayescal.summaries.partition import assign

__all__ = [
    "AGGREGATORS",
    "BUDGET_SECONDS",
    "FIXED_SECONDS",
    "SECTION_BUDGET_SECONDS",
    "MAX_ITEMS",
    "MICROSECONDS_PER_ITEM",
    "TITLE",
    "crowdkit_section",
    "crowdkit_skipped",
    "crowdkit_summary",
    "hard_label_ece",
    "predicted_seconds",
]

#: crowd-kit aggregators compared (class names in ``crowdkit.aggregation``).
AGGREGATORS = ("DawidSkene", "GLAD", "MMSR", "KOS")

#: Per-item cost of each aggregator, in microseconds per annotated item (three answers per
#: item, crowd-kit 1.4 with its defaults, one core): GLAD fits one difficulty per item by
#: gradient steps (2.4 ms per item: 4.7 s at 2,000 items, 24 s at 10,000); DawidSkene took
#: 50 s and MMSR 136 s on 10**6 items (issue 23), KOS 0.84 times MMSR's time on 10**5 items
#: (bench at load 12: DawidSkene 11.9 s, MMSR 74 s, KOS 62 s there).
MICROSECONDS_PER_ITEM = {"DawidSkene": 50, "GLAD": 2400, "MMSR": 136, "KOS": 115}

#: Seconds one crowd-kit row may add to an audit (at the costs above). The rows are naive
#: errors beside the audit's own: GLAD alone was a third of the embedded example's audit
#: (3.6 s of about 13 s at 1514 items), DawidSkene, MMSR and KOS minutes at 10**6 items.
BUDGET_SECONDS = 2.5

#: Above this many annotated items an aggregator's row is skipped, with the reason, rather than
#: exceed :data:`BUDGET_SECONDS` (GLAD 1041, DawidSkene 50,000, MMSR 18,382, KOS 21,739);
#: ``--skip crowdkit`` leaves all rows out.
MAX_ITEMS = {name: int(BUDGET_SECONDS * 1e6 / us) for name, us in MICROSECONDS_PER_ITEM.items()}

#: Cost of each aggregator that does not grow with the items: crowd-kit's pandas steps per
#: iteration (DawidSkene and KOS run up to 100 iterations of group-bys) dominate at a few
#: thousand items. CPU seconds at 1514 items (the embedded SNLI example, crowd-kit 1.4.2,
#: 2026-12-02, load 6 on 2 cores): DawidSkene 1.36, MMSR 0.37, KOS 1.59, i.e. these
#: fixed parts plus :data:`MICROSECONDS_PER_ITEM` times the items; GLAD's per-item figure
#: already holds its fixed part.
FIXED_SECONDS = {"DawidSkene": 1.28, "GLAD": 0.0, "MMSR": 0.16, "KOS": 1.42}

#: Seconds the crowd-kit rows together may add to an audit, at the predicted costs
#: (:func:`predicted_seconds`). The rows run cheapest first; a row that would pass the
#: budget is skipped with its predicted cost as the reason (on the embedded example
#: MMSR and DawidSkene run, 1.7 s; KOS, 1.6 s more, is skipped: it was a sixteenth of the
#: warm audit's CPU time). The soft- and majority-vote rows are always there.
SECTION_BUDGET_SECONDS = 2.5

_log = logging.getLogger(__name__)

_KEY = "naive_crowdkit"
TITLE = "Naive comparison: crowd-kit aggregated labels taken as truth"


def hard_label_ece(score: np.ndarray, target: np.ndarray, edges: np.ndarray) -> float:
    """Binned ECE of ``score`` against per-item labels taken as truth (naive).

    ``sum_m |sum_{i in m} (t_i - z_i)| / n`` over the bins ``edges`` (Hanada &
    Futami, Sec. 3, the binned ECE with a given target); the same quantity the
    audit's soft- and majority-vote rows compute from pattern counts.

    Parameters
    ----------
    score : array of shape (n,)
        Scores in [0, 1].
    target : array of shape (n,)
        The labels (0 / 1) taken as truth.
    edges : array of shape (M + 1,)
        Bin edges (0 first, 1 last; the last bin closed at 1).

    Returns
    -------
    float

    Examples
    --------
    >>> hard_label_ece(np.array([0.1, 0.2, 0.9]), np.array([0, 1, 1]), np.array([0, 0.5, 1]))
    0.2666666666666667
    """
    z = np.asarray(score, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    n_bins = edges.size - 1
    b = assign(z, edges)
    moments = np.bincount(b, weights=t - z, minlength=n_bins) / z.size
    return float(np.abs(moments).sum())


def _aggregator(name: str, seed: int):
    from crowdkit import aggregation

    if name in ("MMSR", "KOS"):  # the two with random starts take a seed
        return getattr(aggregation, name)(random_state=seed)
    return getattr(aggregation, name)()


def predicted_seconds(name: str, n_items: int) -> float:
    """Predicted seconds of aggregator ``name`` on ``n_items`` annotated items."""
    return FIXED_SECONDS[name] + MICROSECONDS_PER_ITEM[name] * n_items / 1e6


def _over_budget(name: str, n_items: int, spent: float) -> dict[str, Any]:
    cost = predicted_seconds(name, n_items)
    return {
        "status": "skipped",
        "reason": f"{name} costs about {cost:.1f} s on {n_items} annotated items; with the "
        f"{spent:.1f} s of the cheaper rows before it the crowd-kit rows would pass their "
        f"{SECTION_BUDGET_SECONDS} s budget (SECTION_BUDGET_SECONDS)",
    }


def _run(name: str, frame, items: np.ndarray, score, edges, majority, seed) -> dict[str, Any]:
    """One aggregator's labels and naive ECE; a failure is reported, not hidden."""
    if items.size > MAX_ITEMS[name]:
        cost = MICROSECONDS_PER_ITEM[name] * items.size / 1e6
        return {
            "status": "skipped",
            "reason": f"{items.size} annotated items, above MAX_ITEMS[{name!r}] = "
            f"{MAX_ITEMS[name]}: {name} costs about {MICROSECONDS_PER_ITEM[name]} us per item, "
            f"about {cost:.1f} s here, over the {BUDGET_SECONDS} s budget of one naive row",
        }
    t0 = time.perf_counter()
    try:
        labels = _aggregator(name, seed).fit_predict(frame)
    except Exception as exc:  # a third-party model failing must not stop the audit
        return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"[:300]}
    seconds = time.perf_counter() - t0
    labels = labels.reindex(items)
    values = labels.to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isnan(values).any() or not np.isin(values, (0.0, 1.0)).all():
        return {
            "status": "failed",
            "reason": "returned labels other than 0 / 1 for the annotated items",
        }
    return {
        "status": "ok",
        "ece": hard_label_ece(score, values, edges),
        "differs_from_majority_vote": float(np.mean(values != majority)),
        "positive_fraction": float(values.mean()),
        "seconds": seconds,
    }


def _results(ctx: Context) -> dict[str, Any]:
    """The numbers (summary.json's ``naive_crowdkit``), or why there are none."""
    if not isinstance(ctx.data, Annotations):
        return {
            "status": "skipped",
            "reason": "crowd-kit aggregates per-item answers; this audit was given a summary "
            "(pattern counts only).",
        }
    n_annotated = int(ctx.data.annotated.sum())
    if n_annotated > max(MAX_ITEMS.values()):  # not even crowd-kit's import and frame
        caps = ", ".join(f"{name} {cap}" for name, cap in MAX_ITEMS.items())
        return {
            "status": "skipped",
            "reason": f"{n_annotated} annotated items, above every aggregator's MAX_ITEMS "
            f"({caps}: where its measured cost passes the {BUDGET_SECONDS} s budget of one "
            "naive row); the soft- and majority-vote rows above are the naive errors.",
        }
    try:
        from importlib.metadata import version

        import crowdkit.aggregation  # noqa: F401  (availability check)
    except ImportError:
        return {
            "status": "skipped",
            "reason": "crowd-kit is not installed (pip install crowd-kit); the soft- and "
            "majority-vote rows above are the naive errors.",
        }
    data = ctx.data
    keep = data.annotated
    items = data.items[keep]
    score = data.score[keep]
    labels = data.labels[keep]
    answered = ~np.isnan(labels)
    # the audit's majority vote (ties count as 0), per item
    majority = (2 * np.nansum(labels, axis=1) > answered.sum(axis=1)).astype(np.float64)
    edges = ctx.summary.bin_edges
    frame = data.to_crowdkit()
    runs = {}
    spent = 0.0  # predicted seconds of the rows run so far, cheapest first
    order = sorted(AGGREGATORS, key=lambda name: predicted_seconds(name, items.size))
    for i, name in enumerate(order, 1):
        step(_log, i, len(order), "naive errors against crowd-kit labels: %s", name)
        cost = predicted_seconds(name, items.size)
        if items.size <= MAX_ITEMS[name] and spent + cost > SECTION_BUDGET_SECONDS:
            runs[name] = _over_budget(name, items.size, spent)
            continue
        runs[name] = _run(name, frame, items, score, edges, majority, ctx.seed)
        if runs[name]["status"] != "skipped":
            spent += cost
    runs = {name: runs[name] for name in AGGREGATORS}  # the table's order
    return {"status": "ok", "crowdkit_version": version("crowd-kit"), "aggregators": runs}


def crowdkit_summary(ctx: Context) -> dict[str, Any]:
    """``{"naive_crowdkit": ...}`` for summary.json (computed by :func:`crowdkit_section`)."""
    return {_KEY: ctx.diagnostics.get(_KEY, {"status": "skipped", "reason": "not run"})}


def crowdkit_skipped(ctx: Context, reason: str) -> Section:
    """The section left out (``--skip crowdkit``): skipped with ``reason``, in the report and in
    ``summary.json["naive_crowdkit"]``."""
    ctx.diagnostics[_KEY] = {"status": "skipped", "reason": reason}
    return Section(key="crowdkit", title=TITLE, status="skipped", reason=reason)


def crowdkit_section(ctx: Context) -> Section:
    """The naive crowd-kit rows (issue 16), after the audit's ECE section.

    Needs ``ctx.errors["soft_vote"]`` / ``["majority_vote"]`` and ``ctx.summary``
    (the ECE section's); stores its numbers in ``ctx.diagnostics["naive_crowdkit"]``.
    """
    res = _results(ctx)
    if res["status"] != "ok":
        return crowdkit_skipped(ctx, res["reason"])
    ctx.diagnostics[_KEY] = res
    rows = [
        ("soft vote (this audit)", fmt(ctx.errors["soft_vote"].value), "", ""),
        (
            "majority vote (this audit; ties count as 0)",
            fmt(ctx.errors["majority_vote"].value),
            "",
            "",
        ),
    ]
    failed = []
    for name, r in res["aggregators"].items():
        if r["status"] != "ok":
            rows.append((f"crowd-kit {name}", r["status"], "", ""))
            failed.append(f"crowd-kit {name} {r['status']}: {r['reason']}")
            continue
        rows.append(
            (
                f"crowd-kit {name}",
                fmt(r["ece"]),
                fmt(r["differs_from_majority_vote"]),
                f"{r['seconds']:.2f}",
            )
        )
    notes = [
        "Naive errors: each row takes one aggregated label per item as the truth and ignores "
        "the score. Noise left in the aggregate biases these errors (up or down); the "
        "noise-corrected NC-ECE above is the audit's estimate. All rows use the audit's bins and "
        "its annotated items.",
        f"crowd-kit {res['crowdkit_version']}: DawidSkene (per-annotator confusion matrices), "
        "GLAD (annotator ability and item difficulty), MMSR (skills from pairwise agreement, "
        "for sparse designs), KOS (binary-only message passing), each with crowd-kit's default "
        "settings; MMSR and KOS use the audit's seed.",
        *failed,
    ]
    return Section(
        key="crowdkit",
        title=TITLE,
        tables=[
            Table(
                "Naive binned ECE against aggregated labels (lower is better)",
                (
                    "labels taken as truth",
                    "ECE",
                    "share of items unlike the majority vote",
                    "seconds",
                ),
                rows,
            )
        ],
        notes=notes,
    )
