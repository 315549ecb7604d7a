"""Recalibration section of the audit (Hanada & Futami, Sec. 5; selection by Sec. 6.3 /
App. G.4).

The choice is :func:`bayescal.recal.selection.choose_recalibration`: the original score
("none") and a naive and a corrected map of each family (temperature, Platt,
histogram) are compared on validation subsets of a pilot partition, each with its
own channel fit, and the choice's error is measured on a test partition corrected by
channels from a separate evaluation-channel partition. The audit's own channels
(fitted on every item) are not used for the choice: they saw every item. With a channel
posterior the choice refits the recommended corrected map (or, when it keeps the
original score or a naive map, the best corrected candidate) under every draw on its
pilot items (:class:`~bayescal.recal.ensemble.MapBand`); both audits show that band, the
one the choice checked, as a table of the map's parameters (:func:`band_table`) and, for
two classes, shaded in the figure.
"""

from __future__ import annotations

from typing import cast

from bayescal.errors import DataError, FitError
from bayescal.plotting.binary import recalibration_curves
from bayescal.recal.ensemble import PosteriorMap
from bayescal.recal.selection import BASE, MIN_PART_ITEMS, SELECTION_FAMILIES, choose_recalibration
from bayescal.report.core import Section, Table, fmt
from bayescal.report.figures import responsive_figure
from bayescal.report.sections import Context
from bayescal.summaries.summary import Summary

__all__ = ["FAMILIES", "MIN_ITEMS", "band_table", "recalibration_section"]

FAMILIES = SELECTION_FAMILIES

#: Fewest annotated items for the pilot / evaluation-channel / test partitions: each pilot
#: subset gets a sixth of the items and must hold MIN_PART_ITEMS.
MIN_ITEMS = 6 * MIN_PART_ITEMS


def _skipped(reason: str) -> Section:
    return Section(key="recalibration", title="Recalibration", status="skipped", reason=reason)


def _pm(mean, sd) -> str:
    return fmt(mean) if sd is None else f"{fmt(mean)} ± {fmt(sd)}"


def _rows(choice) -> list[tuple]:
    splits = choice.settings["splits_used"]
    rows = []
    for r in choice.table():
        name = "none (original score)" if r["map"] == BASE else r["map"]
        rows.append(
            (
                name,
                r["target"] or "",
                _pm(r["validation_nc_ece"], r["validation_nc_ece_sd"]),
                f"{r['wins']} of {splits}",
                _pm(r["test_nc"], r.get("test_nc_sd")),
                fmt(r["test_soft_vote"]),
                fmt(r.get("test_oracle")),
            )
        )
    return rows


def _band_values(entry: dict, key: str) -> list:
    v = entry[key]
    return v if isinstance(v, list) else [v]


def band_table(choice, labels: dict[str, list[str]] | None = None) -> Table | None:
    """The posterior band of the choice's corrected map (its parameters over the channel
    draws), or None without a channel posterior. ``labels`` names the entries of a
    vector parameter (histogram bins, classes)."""
    band = choice.posterior_band
    if band is None:
        return None
    pct = int(round(band.prob * 100))
    labels = dict(labels or {})
    if band.family == "histogram":  # bins of the score
        labels.setdefault("bin_value", [str(b) for b in band.maps.params_["bin"].values])
    rows = []
    for name, entry in band.parameters().items():
        means, los, his = (_band_values(entry, k) for k in ("mean", "lo", "hi"))
        names = labels.get(name) or [str(i + 1) for i in range(len(means))]
        for i, (m, lo, hi) in enumerate(zip(means, los, his)):
            label = name if len(means) == 1 else f"{name} {names[i]}"
            rows.append((label, fmt(m), f"[{fmt(lo)}, {fmt(hi)}]"))
    role = "recommended map" if band.role == "recommended" else "best corrected candidate"
    return Table(
        f"Posterior band of the {role} (corrected {band.family.replace('_', ' ')}), refitted "
        f"under {band.n_draws} channel draws on the {band.n_items} pilot items",
        ("parameter", "posterior mean", f"{pct}% band"),
        rows,
    )


def band_note(choice) -> str | None:
    """One sentence on what the band is and how the choice used it."""
    band = choice.posterior_band
    if band is None:
        return None
    held = choice.recommended.get("posterior_band_holds_identity")
    use = (
        "it holds the original score at every pilot item, so the original score is kept"
        if held
        else "it excludes the original score at some pilot item, so the posterior does not "
        "overrule the choice"
        if held is False
        else "no corrected map was recommended, so the band did not enter the choice"
    )
    return (
        f"Band: the {band.family.replace('_', ' ')} corrected map refitted under every "
        f"channel posterior draw on the pilot items (channel uncertainty only); {use}."
    )


def _verdict(choice) -> str:
    rec = choice.recommended
    best = rec["best_by_validation"]
    gain = f"{fmt(rec['improvement_over_original'])} (standard error {fmt(rec['improvement_se'])})"
    if choice.keeps_original:
        if rec.get("posterior_band_holds_identity"):
            return (
                f"Keep the original score: the best map on validation ({best.replace('_', ', ')}) "
                "refitted under every channel posterior draw gives a band that holds the "
                "original score at every pilot item, so the posterior does not tell the map "
                "from the original."
            )
        if best == BASE:
            return (
                "Keep the original score: no map had a smaller validation NC-ECE than the "
                "original score."
            )
        return (
            f"Keep the original score: the best map on validation ({best.replace('_', ', ')}) "
            f"improved on it by only {gain}, within one standard error of the split-to-split "
            "noise, so recalibrating is not supported by these data."
        )
    return (
        f"Recommended: the {rec['target']} {rec['map']} map; on validation it improved on the "
        f"original score by {gain}. Its test NC-ECE is {fmt(rec['test_nc_ece'])} against "
        f"{fmt(choice.test[BASE]['nc'])} for the original score."
    )


def recalibration_section(ctx: Context) -> Section:
    """Choose between the original score (probabilities) and the maps on held-out data;
    report the choice. The class-wise audit shows it in the noise view only."""
    if ctx.classwise and not ctx.runs("noise"):
        return ctx.other_view(
            "recalibration",
            "Recalibration (noise view)",
            ", and corrected maps assume one true class per item. Soft-target calibrators "
            "fitted to the answer distribution are compared by `bayescal audit-ambiguity`; "
            "--view both runs the corrected maps here anyway.",
        )
    if isinstance(ctx.data, Summary):
        return _skipped(
            "the audit ran on a summary (no per-item scores): fitting and evaluating maps "
            "on held-out items needs items. The corrected histogram map can be built from counts "
            "with bayescal.recal.histogram_map_from_summary; see docs/scale.md."
        )
    n_annotated = int(ctx.data.annotated.sum())
    if n_annotated < MIN_ITEMS:
        return _skipped(
            f"only {n_annotated} annotated items; choosing a map on held-out data (pilot, "
            f"evaluation-channel and test partitions) needs at least {MIN_ITEMS}."
        )
    channels = ctx.channels
    try:
        choice = choose_recalibration(
            ctx.data,
            # the class-wise selection fits its own default channels (grouped EM) on edges
            **(
                {"bins": ctx.summary.bin_edges}
                if ctx.classwise
                else {"channels": ctx.point_method, "bins": ctx.bins}
            ),
            groups=cast(str, ctx.groups),
            weights=cast(str, ctx.weights),
            posterior=channels if channels.n_draws > 1 else None,
            prob=ctx.prob,
            random_state=ctx.seed,
        )
    except (FitError, DataError) as exc:
        return _skipped(f"the held-out map selection could not run: {exc}")
    ctx.add_flags(choice.flags)
    record = choice.to_dict()
    record["keeps_original"] = choice.keeps_original
    ctx.diagnostics["recalibration"] = record
    if ctx.classwise:
        return _classwise_section(ctx, choice)
    split = next(i for i, m in enumerate(choice.maps[f"{FAMILIES[0]}_corrected"]) if m is not None)
    pair = {
        fam: (choice.maps[f"{fam}_corrected"][split], choice.maps[f"{fam}_naive"][split])
        for fam in FAMILIES
    }
    band = choice.posterior_band
    prob = ctx.prob  # bound now: figures are drawn when first shown
    shaded = cast(PosteriorMap, band.maps) if band is not None else None
    maps = responsive_figure(
        f"Recalibration maps of pilot split {split + 1}: corrected (solid) vs naive (dotted)"
        + (
            f"; band: the {band.family} corrected map under every posterior draw, pilot items"
            if band is not None
            else ""
        ),
        lambda fig, narrow: recalibration_curves(pair, band=shaded, prob=prob, ax=fig.subplots()),
        size=(5.5, 4.2),
        narrow_height=3.6,
    )
    sizes = choice.sizes
    notes = [
        _verdict(choice),
        f"Protocol (Hanada & Futami, Sec. 6.3 / App. G.4): {sizes['pilot']} pilot items, split "
        f"{choice.settings['pilot_splits']} times into channel / map-fitting / validation "
        f"subsets of about {sizes['pilot_subset']}; candidates are chosen by mean validation "
        f"NC-ECE, a map only if it beats the original score by more than one standard error. "
        f"Test: {sizes['test']} other items, corrected by channels fitted on "
        f"{sizes['evaluation_channel']} further items, on the same bins of g(Z) for every "
        "candidate; each map's test error is the mean ± SD over its pilot fits.",
        "Wins: in how many pilot splits each candidate had the smallest validation NC-ECE (the "
        "selection's uncertainty). Naive maps fit the annotators' answer rates, not the "
        "clean-label probabilities, and can make calibration worse.",
        f"Channels of the selection: {ctx.point_method} point fits on the channel subsets, not "
        "the audit's channels (those saw every item).",
    ]
    if sizes["used"] < sizes["annotated"]:
        notes.insert(
            2,
            f"The selection used a seeded random subsample of {sizes['used']} of the "
            f"{sizes['annotated']} annotated items (bayescal.recal.selection."
            "MAX_BINARY_SELECTION_ITEMS): its cost grows with the items, the protocol holds "
            "at any size, and fewer items only make it keep the original score more often.",
        )
    return _choice_section(
        choice,
        "Recalibration",
        "Held-out calibration error of the original score and of recalibrated scores "
        "(lower is better)",
        "test reference-label ECE",
        notes,
        band_table(choice),
        [maps],
    )


def _classwise_section(ctx: Context, choice) -> Section:
    """The class-wise audit's choice: temperature and vector scaling, top-label errors."""
    sizes = choice.sizes
    notes = [
        _verdict(choice),
        f"Protocol (Hanada & Futami, Sec. 6.3 / App. G.4, as for two classes): "
        f"{sizes['pilot']} pilot items split {choice.settings['pilot_splits']} times "
        "into channel / map-fitting / validation subsets; candidates are chosen by mean "
        "validation top-label NC-ECE (bias-corrected), a map only if it beats the original "
        f"probabilities by more than one standard error. Test: {sizes['test']} other "
        "items, bins on the recalibrated confidence."
        + (
            f" The selection used a random subsample of {sizes['used']} of the "
            f"{sizes['annotated']} annotated items (its cost grows with the items; the "
            "protocol holds at any size, and fewer items only make it keep the original "
            "probabilities more often)."
            if sizes.get("used", 0) < sizes.get("annotated", 0)
            else ""
        ),
    ]
    classes = [str(c) for c in ctx.summary.classes]
    return _choice_section(
        choice,
        "Recalibration (noise view)",
        "Held-out calibration error of the original and recalibrated probabilities "
        "(top-label, lower is better)",
        "test reference-class ECE",
        notes,
        band_table(choice, {"scale": classes, "bias": classes}),
        [],
    )


def _choice_section(choice, title, caption, reference, notes, band, figures) -> Section:
    if band_note(choice):
        notes.insert(1, cast(str, band_note(choice)))
    header = (
        "map",
        "target",
        "validation NC-ECE (mean ± SD)",
        "wins",
        "test NC-ECE",
        "test soft-vote ECE",
        reference,
    )
    return Section(
        key="recalibration",
        title=title,
        tables=[Table(caption, header, _rows(choice)), *([band] if band is not None else [])],
        figures=figures,
        notes=notes,
    )
