"""The subgroup section of both audits (issue 25 item 1): is the model calibrated for every
subgroup (site, sex, scanner)?

Runs only when the audit is given a subgroup (``audit(..., subgroup="site")``,
``--subgroup COL``): per subgroup the noise-corrected calibration error with its interval
and test (:func:`bayescal.metrics.subgroups.subgroup_nc_ece`), the Holm-corrected test of
"calibrated in every subgroup", the largest gap between subgroups, a table and a forest
plot; ``summary.json["subgroups"]`` holds one entry per subgroup and
``summary.json["subgroup_calibration"]`` the family results. ``--skip subgroups`` leaves
it out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from bayescal.data.container import Annotations
from bayescal.display import name_list
from bayescal.flags import Flag
from bayescal.metrics.subgroups import SubgroupCalibration, subgroup_nc_ece
from bayescal.plotting.binary import subgroup_forest
from bayescal.report.core import Section, Table, fmt, fmt_p
from bayescal.report.figures import responsive_figure

if TYPE_CHECKING:
    from bayescal.report.sections import Context

__all__ = ["KEY", "TITLE", "subgroups_section", "subgroups_summary"]

KEY = "subgroups"
TITLE = "Subgroups: calibration in every subgroup"

_CHANNEL_WORDS = {
    "pooled": "each subgroup's own channels, partially pooled toward those of the "
    "subgroups whose readers err alike (pairwise tests form the reader clusters; "
    "empirical-Bayes Dirichlet prior, concentration from the within-cluster spread); a "
    "subgroup whose readers differ from every cluster keeps its own",
    "shared": "one set of channels for every subgroup (readers assumed to err alike)",
    "per-subgroup": "each subgroup's own EM channels",
}


def subgroups_section(ctx: Context) -> Section:
    """Compute the subgroup calibration into ``ctx.subgroups`` and describe it."""
    res = subgroup_nc_ece(
        cast(Annotations, ctx.data),  # check_subgroup_request refused a bare summary
        ctx.subgroup,
        channels=ctx.subgroup_channels,
        groups=ctx.groups,
        bins=ctx.bins,
        # a rule name or per-annotator weights: both reach corrected_onehot_targets
        weights=cast(str, ctx.weights),
        prob=ctx.prob,
        random_state=ctx.seed,
    )
    ctx.subgroups = res
    if not res.calibrated_everywhere():
        bad = [s.name for s in res.subgroups if s.p_holm <= 1.0 - res.prob]
        ctx.flag(
            "subgroups.miscalibrated",
            [
                f"the model is not calibrated in every {res.label}: {name_list(bad, joined=True)} "
                f"(Holm-adjusted p <= {1.0 - res.prob:.2g})"
            ],
            KEY,
        )
    ctx.flag("subgroups.channels", res.warnings, KEY)
    ctx.add_flags(
        Flag(
            "subgroups.out-of-range",
            f"{res.label} {s.name}: plug-in NC-ECE {s.plugin:.3g} exceeds 1, which no "
            "calibration error of probabilities can; its channels are nearly unidentified "
            f"({s.n_items} items) and the correction amplifies noise, so its NC-ECE, "
            "interval and test are not estimates. Use shared channels (--subgroup-channels "
            "shared) or merge it with a similar subgroup.",
            KEY,
            severity="error",
        )
        for s in res.subgroups
        if not s.plausible
    )
    forest = responsive_figure(
        f"NC-ECE per {res.label}",
        lambda fig, narrow: subgroup_forest(res, ax=fig.subplots()),
        size=(7, 0.45 * len(res.subgroups) + 1.6),
        narrow_height=0.6 * len(res.subgroups) + 2.0,
    )
    return Section(KEY, TITLE, tables=[_table(res)], figures=[forest], notes=_notes(res))


def subgroups_summary(ctx: Context) -> dict[str, Any]:
    """``summary.json`` entries: ``subgroups`` (one per subgroup) and the family results."""
    res = ctx.subgroups
    if res is None:
        return {}
    family = res.to_dict()
    return {"subgroups": family.pop("entries"), "subgroup_calibration": family}


def _table(res: SubgroupCalibration) -> Table:
    pct = int(round(res.prob * 100))
    return Table(
        caption=f"NC-ECE per {res.label} ({res.metric}; bias-corrected, {pct}% interval)",
        header=(
            res.label,
            "items",
            "NC-ECE",
            f"{pct}% interval",
            "p (calibrated)",
            "Holm p",
            "toward shared",
        ),
        rows=[
            (
                s.name,
                str(s.n_items),
                fmt(s.estimate) if s.plausible else f"impossible (plug-in {fmt(s.plugin)})",
                f"[{fmt(s.lo)}, {fmt(s.hi)}]",
                fmt_p(s.p_value),
                fmt_p(s.p_holm),
                f"{s.shrinkage:.2f}",
            )
            for s in res.subgroups
        ],
    )


def _notes(res: SubgroupCalibration) -> list[str]:
    test = res.to_dict()["test"]
    gap = res.gap
    verdict = (
        "rejected: some subgroup is miscalibrated"
        if test["rejected"]
        else "not rejected: the data are consistent with calibration in every subgroup"
    )
    out = [
        f"Channels: {_CHANNEL_WORDS[res.channels]}."
        + (
            ""
            if res.kappa is None
            else f" Pooling concentration {res.kappa:.3g} prior items per confusion row."
        )
        + (
            ""
            if not res.clusters
            else " Reader clusters: "
            + "; ".join("{" + ", ".join(c) + "}" for c in res.clusters)
            + "."
        ),
        f"Calibrated in every {res.label}: Holm-corrected across {len(res.subgroups)} "
        f"subgroups (family-wise level {1.0 - res.prob:.2g}), p = {fmt_p(res.p_all)}; "
        f"{verdict}.",
        f"Largest gap: {gap['worst']} minus {gap['best']} = {fmt(gap['estimate'])} "
        f"[{fmt(gap['lo'])}, {fmt(gap['hi'])}] (the pair is chosen on the estimates, so the "
        "interval is descriptive).",
        f"Intervals: {res.n_replicates} bootstrap replicates of items within each subgroup, "
        "every channel fit refitted in each, so channel uncertainty is in every interval.",
    ]
    return out
