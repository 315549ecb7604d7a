"""Recalibration section of the binary audit (Hanada & Futami, Sec. 5; split workflow of App. E.5).

The annotated items are split in half (seeded): maps are fitted on the first
half and judged on the second with bins on ``g(Z)``. Channels are the audit's
(fitted on all items; a separate channel sample is better when one exists).
For each family (temperature, Platt, histogram) a naive map (fitted to the
mean answer) and a corrected map (fitted to noise-corrected labels) are
compared by held-out NC-ECE (with the audit's weight rule); the corrected map
with the smallest held-out NC-ECE is the one recommended. With a channel
posterior the histogram map is also fitted under every draw, giving a
credible band for ``g``.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal.metrics.uncertainty import posterior_mean_channels
from bayescal.plotting.binary import recalibration_curves
from bayescal.recal import (
    HistogramMap,
    PlattMap,
    TemperatureMap,
    evaluate_map,
    fit_posterior_map,
    naive_targets,
)
from bayescal.report.core import Section, Table, fmt
from bayescal.report.figures import responsive_figure
from bayescal.report.sections import Context
from bayescal.summaries.summary import Summary

__all__ = ["FAMILIES", "MIN_ITEMS", "recalibration_section"]

FAMILIES = ("temperature", "platt", "histogram")

#: Fewest annotated items for a fit / test split.
MIN_ITEMS = 40


def _maps(n_fit: int):
    j = max(2, int(round(n_fit ** (1 / 3))))  # Hanada & Futami's J = round(n^(1/3))
    return {
        "temperature": TemperatureMap,
        "platt": PlattMap,
        "histogram": lambda: HistogramMap(bins=j),
    }, j


def _scores(ev: dict) -> dict:
    out = {"nc": ev["nc"].value, "soft_vote": ev["soft_vote"].value}
    if "oracle" in ev:
        out["oracle"] = ev["oracle"].value
    return out


def _row(name: str, target: str, scores: dict) -> tuple:
    return (name, target, fmt(scores["nc"]), fmt(scores["soft_vote"]), fmt(scores.get("oracle")))


def recalibration_section(ctx: Context) -> Section:
    """Fit naive and corrected maps on one half, judge them on the other, recommend one."""
    if isinstance(ctx.data, Summary):
        return Section(
            key="recalibration",
            title="Recalibration",
            status="skipped",
            reason="the audit ran on a summary (no per-item scores): fitting and evaluating maps "
            "on a held-out split needs items. The corrected histogram map can be built from counts "
            "with bayescal.recal.histogram_map_from_summary; see docs/scale.md.",
        )
    data = ctx.data
    annotated = np.flatnonzero(data.annotated)
    if annotated.size < MIN_ITEMS:
        return Section(
            key="recalibration",
            title="Recalibration",
            status="skipped",
            reason=f"only {annotated.size} annotated items; a fit/test split needs at least "
            f"{MIN_ITEMS}.",
        )
    order = np.random.default_rng(ctx.seed).permutation(annotated)
    fit_d = data.subset(np.sort(order[: order.size // 2]))
    test_d = data.subset(np.sort(order[order.size // 2 :]))
    point = ctx.point if ctx.point is not None else posterior_mean_channels(ctx.channels)
    makers, j = _maps(fit_d.n_items)

    def evaluate(g):
        return _scores(evaluate_map(g, test_d, channels=point, bins=ctx.bins, weights=ctx.weights))

    record = {"base": evaluate(lambda z: z)}
    rows = [_row("none (original score)", "", record["base"])]
    fitted = {}
    band = None
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        naive_t = naive_targets(fit_d)
        for fam in FAMILIES:
            for target in ("naive", "corrected"):
                m = makers[fam]()
                m = (
                    m.fit_targets(naive_t)
                    if target == "naive"
                    else m.fit_corrected(fit_d, point, weights=ctx.weights)
                )
                fitted[(fam, target)] = m
                record[f"{fam}_{target}"] = evaluate(m)
                rows.append(_row(fam, target, record[f"{fam}_{target}"]))
        if ctx.channels.n_draws > 1:
            band = fit_posterior_map(
                "histogram", fit_d, ctx.channels, weights=ctx.weights, map_params={"bins": j}
            )
    ctx.flag("recalibration.fit", [str(w.message) for w in caught], "recalibration")
    best = min(FAMILIES, key=lambda f: record[f"{f}_corrected"]["nc"])
    record["recommended"] = {
        "family": best,
        "target": "corrected",
        "heldout_nc_ece": record[f"{best}_corrected"]["nc"],
    }
    ctx.diagnostics["recalibration"] = record
    maps = responsive_figure(
        "Recalibration maps: corrected (solid) vs naive (dotted)",
        lambda fig, narrow: recalibration_curves(
            {fam: (fitted[(fam, "corrected")], fitted[(fam, "naive")]) for fam in FAMILIES},
            band=band,
            prob=ctx.prob,
            ax=fig.subplots(),
        ),
        size=(5.5, 4.2),
        narrow_height=3.6,
    )
    notes = [
        f"Maps fitted on {fit_d.n_items} items and evaluated on {test_d.n_items} other items "
        f"(seeded split); bins on g(Z); histogram maps use J = {j} equal-mass bins.",
        f"Recommended: the corrected {best} map (smallest held-out NC-ECE). Naive maps fit the "
        "annotators' answer rates, not the clean-label "
        "probabilities, and can make calibration worse.",
        "Channels were fitted on all items, including the test half (reuse); when a separate "
        "channel sample exists, fit channels on it for a strictly held-out evaluation.",
    ]
    return Section(
        key="recalibration",
        title="Recalibration",
        tables=[
            Table(
                "Held-out calibration error of recalibrated scores (lower is better)",
                ("map", "target", "NC-ECE", "soft-vote ECE", "reference-label ECE"),
                rows,
            )
        ],
        figures=[maps],
        notes=notes,
    )
