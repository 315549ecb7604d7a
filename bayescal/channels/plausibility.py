"""Implausible fits, flagged as data: checks whose failure makes an NC-ECE untrustworthy.

Hanada & Futami's noise-corrected ECE (Sec. 3-4) divides by each annotator's gap
``b - a`` and rests on class-conditional, independent annotators whose answers rise
with the true class. When those premises fail the arithmetic still returns a number,
often a confident-looking one (three annotators answering at random gave NC-ECE 0.336
[0.29, 0.48] in issue 12). Each function here looks at one premise on the summary or
the fitted channels and returns :class:`~bayescal.flags.Flag` objects with stable codes;
the audit puts them in ``summary.json["warnings"]``, at the top of the report and on
the command line. Severity ``"error"`` marks a number that must not be read as a
measurement (the audit then labels the NC-ECE "not reliable").

Thresholds (module constants, documented where they are defined):

========================================  ============================================
code                                      fires when
========================================  ============================================
``plausibility.reference-like-name``      an annotator column is named like a reference
                                          label (:data:`REFERENCE_NAMES`)
``plausibility.identical-annotators``     two annotators agree on every one of at least
                                          :data:`MIN_SHARED_ITEMS` items both answered
``plausibility.one-judgement`` (error)    every annotator is identical to another and they
                                          all form one copy (one judgement per item)
``plausibility.near-chance`` (error)      every annotator's gap is below
                                          :data:`NEAR_CHANCE_GAP` (for draws: the lower
                                          end of its interval), or no pair of annotators
                                          agrees beyond chance (:data:`AGREEMENT_Z`)
``plausibility.annotator-near-chance``    one annotator's gap interval reaches below
                                          :data:`NEAR_CHANCE_GAP` (channel draws only;
                                          point fits warn through their own check)
``plausibility.score-inverted``           the answer rate (so the prevalence) falls as
                                          the score rises, by :data:`TREND_Z` standard
                                          errors
``plausibility.too-few-items``            fewer than :data:`ITEMS_PER_PARAMETER` items
                                          per free channel parameter
``plausibility.out-of-range`` (error)     NC-ECE above 1, or a corrected bin rate
                                          farther outside [0, 1] than
                                          :data:`RATE_MARGIN` and 3 of its standard
                                          errors
========================================  ============================================

Examples
--------
>>> reference_name_flags(["r1", "Truth", "r2"])[0].code
'plausibility.reference-like-name'
>>> reference_name_flags(["r1", "r2"])
[]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from bayescal.data.validation import REFERENCE_NAMES, reference_like
from bayescal.flags import Flag

__all__ = [
    "AGREEMENT_Z",
    "ITEMS_PER_PARAMETER",
    "MIN_SHARED_ITEMS",
    "NEAR_CHANCE_GAP",
    "RATE_MARGIN",
    "REFERENCE_NAMES",
    "TREND_Z",
    "agreement_flags",
    "channel_flags",
    "design_flags",
    "ece_range_flags",
    "plausibility_flags",
    "reference_name_flags",
    "score_trend_flags",
]


#: An annotator whose gap b - a is below this carries almost no signal: corrected
#: labels divide by the gap, so their variance grows like 1 / gap**2 (x400 at 0.05).
#: The same value as the point fits' own warning (channels.identification.GAP_WARNING).
NEAR_CHANCE_GAP = 0.05

#: Pairwise answer agreement counts as "beyond chance" when the phi coefficient is at
#: least this many standard errors (1 / sqrt(n)) above 0. Three pairs of independent
#: random annotators all stay below 3 with probability 0.996, so they are flagged; two
#: toy annotators (gaps 0.76, prevalence spread over the scores) reach it from about
#: 30 shared items. With M > 3 pairs the largest of M null z's grows like sqrt(2 log M)
#: (about 5.3 at K = 3,000 annotators), so the threshold for the largest is raised to
#: keep the same 0.996 (Sidak: ``agreement_threshold``), and the pairs' mean agreement
#: ``sum(z) / sqrt(M)`` (N(0, 1) for independent annotators: the z's are uncorrelated)
#: is tested at AGREEMENT_Z too, so that many weakly agreeing pairs still count.
AGREEMENT_Z = 3.0

#: Fewest shared items on which perfect agreement is read as duplicated columns: two
#: independent annotators with 10% error each agree on 30 items with probability
#: 0.82**30 = 0.003.
MIN_SHARED_ITEMS = 30

#: A falling answer rate is flagged when the weighted slope over the bins is this many
#: standard errors below 0 (a one-sided 0.13% test: a flat score never trips it).
TREND_Z = 3.0

#: Fewest items per free channel parameter (2 per annotator + one prevalence per
#: non-empty score group); the EM and GMM fits are unstable below it (issue 12: five
#: items, K = 2, GMM, NC-ECE 236).
ITEMS_PER_PARAMETER = 10

#: How far outside [0, 1] a corrected bin rate may sit before it is flagged, besides
#: three of its bootstrap standard errors: a single item's corrected label can reach
#: (1 - a) / (b - a), 1.125 for a = 0.1, b = 0.9.
RATE_MARGIN = 0.5

_GROUPED = {"score_bin_em": True, "hui_walter": True, "gmm": True, "dawid_skene_em": False}


def reference_name_flags(annotators: Sequence[str]) -> list[Flag]:
    """Flag annotator columns named like a reference label (issue 12, item 3).

    A column called ``truth`` that was not passed as ``--truth`` becomes a perfect
    annotator (a = 0, b = 1) and every corrected number leans on it.

    Parameters
    ----------
    annotators : sequence of str
        Annotator names, as in the data.

    Returns
    -------
    list of Flag
        One ``plausibility.reference-like-name`` flag per such column.

    Examples
    --------
    >>> [f.code for f in reference_name_flags(["gold", "r1"])]
    ['plausibility.reference-like-name']
    """
    out = []
    for name in annotators:
        if reference_like(name) == "reference":  # the readers' rule (data layer)
            out.append(
                Flag(
                    "plausibility.reference-like-name",
                    f"annotator column {str(name)!r} is named like a reference label; if it "
                    "holds ground truth, pass it as the truth column (--truth / truth=) instead: "
                    "as an annotator it is treated as one noisy rater among others.",
                    "data",
                )
            )
    return out


#: Rows of the pairwise tables computed at once: a block holds (3 C + 1) x rows x K
#: numbers, so memory stays bounded for any number of annotators K.
_PAIR_BLOCK_CELLS = 1 << 20


def _pair_statistics(
    summary,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Every annotator pair ``j < k`` once, in row-major order, in blocks of rows:
    ``(j, k, n, z, identical)`` arrays over the block's pairs.

    ``n`` is the number of items both answered and ``identical`` whether the two never
    disagree. ``z`` is the standardised agreement beyond chance of their C x C table:
    ``(O - E) / se0`` with ``O`` the share of items on which they agree, ``E = sum_a
    p_a q_a`` its value under independence and ``se0**2 = (E + E**2 - sum_a p_a q_a
    (p_a + q_a)) / n`` its null variance (Fleiss, Cohen & Everitt 1969, the variance of
    kappa's numerator); 0 when an annotator is constant on the shared items. With two
    classes ``z = phi sqrt(n)``, the phi coefficient's z. The tables are matrix products of
    the answer indicators weighted by the pattern counts, O(P K^2 C) arithmetic with no
    loop over pairs (K = 1,000 annotators took 23 s with one table per pair).
    """
    counts = summary.pattern_totals.astype(np.float64)
    states = summary.states
    c = summary.n_classes
    k_total = summary.n_annotators
    answered = (states < c).astype(np.float64)  # (P, K)
    each = [(states == a).astype(np.float64) for a in range(c)]
    rows = max(1, _PAIR_BLOCK_CELLS // max(k_total * (3 * c + 1), 1))
    for start in range(0, k_total, rows):
        block = np.arange(start, min(start + rows, k_total))
        jj, kk = np.nonzero(np.arange(k_total)[None, :] > block[:, None])
        w_any = answered[:, block] * counts[:, None]  # (P, B)
        n = (w_any.T @ answered)[jj, kk]
        agree = np.zeros(jj.size)
        chance = np.zeros(jj.size)
        third = np.zeros(jj.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            for x in each:
                w_a = x[:, block] * counts[:, None]
                agree += (w_a.T @ x)[jj, kk]
                p_a = (w_a.T @ answered)[jj, kk] / n  # j answers a, k answers
                q_a = (w_any.T @ x)[jj, kk] / n  # k answers a, j answers
                chance += p_a * q_a
                third += p_a * q_a * (p_a + q_a)
            var0 = (chance + chance**2 - third) / n
            ok = (n > 0) & (var0 > 1e-15 * np.maximum(chance, 1.0))
            z = np.where(ok, (agree / n - chance) / np.sqrt(np.where(ok, var0, 1.0)), 0.0)
        yield block[jj], kk, n, z, agree == n


def agreement_threshold(n_pairs: int) -> float:
    """Threshold for the largest of ``n_pairs`` pairwise agreement z's: AGREEMENT_Z, raised
    for more than three pairs so that independent random annotators stay below it with the
    probability three pairs have at AGREEMENT_Z (Sidak, ``Phi(3)**3 = 0.996``).

    Examples
    --------
    >>> round(agreement_threshold(3), 3), round(agreement_threshold(4_498_500), 2)
    (3.0, 6.01)
    """
    from scipy.special import log_ndtr, ndtri_exp

    log_keep = 3.0 * float(log_ndtr(AGREEMENT_Z))  # log P(all three below): log 0.996
    return max(AGREEMENT_Z, float(ndtri_exp(log_keep / max(n_pairs, 1))))


def agreement_flags(summary) -> list[Flag]:
    """Identical annotators, and annotators that agree no more than chance.

    Conditional independence (Hanada & Futami, Assumption 2) fails for duplicated
    columns; with independent class-conditional annotators whose gaps are positive,
    answers of two annotators correlate (cov = Var(Y) gap_j gap_k), so no pair agreeing
    beyond chance means no annotator carries the class.

    Parameters
    ----------
    summary : Summary
        Its pattern counts, pooled over the score groups.

    Returns
    -------
    list of Flag
        ``plausibility.identical-annotators`` (one per pair) and
        ``plausibility.near-chance`` (severity "error").

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.data.container import Annotations
    >>> from bayescal.summaries.summary import summarize
    >>> rng = np.random.default_rng(0)
    >>> x = (rng.random((400, 1)) < 0.5).astype(float)
    >>> d = Annotations.from_arrays(rng.random(400), np.hstack([x, x, 1 - x]))
    >>> sorted({f.code for f in agreement_flags(summarize(d))})
    ['plausibility.identical-annotators']
    """
    out = []
    names = summary.annotators
    z_max, z_sum, n_pairs = -np.inf, 0.0, 0  # over the pairs that share an item
    copy_of = list(range(len(names)))  # union-find over the identical pairs

    def root(j: int) -> int:
        while copy_of[j] != j:
            copy_of[j] = copy_of[copy_of[j]]
            j = copy_of[j]
        return j

    for js, ks, n, z, identical in _pair_statistics(summary):
        shared = n > 0
        if shared.any():
            z_max = max(z_max, float(z[shared].max()))
            z_sum += float(z[shared].sum())
            n_pairs += int(shared.sum())
        for j, k, n_jk in zip(
            js[identical & (n >= MIN_SHARED_ITEMS)],
            ks[identical & (n >= MIN_SHARED_ITEMS)],
            n[identical & (n >= MIN_SHARED_ITEMS)],
            strict=True,
        ):
            copy_of[root(int(j))] = root(int(k))
            out.append(
                Flag(
                    "plausibility.identical-annotators",
                    f"annotators {names[j]!r} and {names[k]!r} agree on all {int(n_jk)} items "
                    "both answered: the correction assumes independent judgements given the "
                    "class; a duplicated column counts one judgement twice. Drop the copy, or "
                    "check how the columns were made.",
                    "data",
                )
            )
    if len(names) >= 2 and len({root(j) for j in range(len(names))}) == 1:
        out.append(
            Flag(
                "plausibility.one-judgement",
                f"all {len(names)} annotators give the same answer on every item they share: "
                "the data hold one judgement per item, copied, and the channels of one "
                "annotator are not identified without gold items or known channels. The "
                "number shown is not a measurement of calibration.",
                "data",
                severity="error",
            )
        )
    if n_pairs == 0:
        return out
    threshold = agreement_threshold(n_pairs)
    z_mean = z_sum / np.sqrt(n_pairs)
    if z_max < threshold and z_mean < AGREEMENT_Z:
        over = (
            ""
            if n_pairs <= 3
            else f" over {n_pairs:,} pairs; their mean agreement is {z_mean:.1f} standard "
            f"errors (sum / sqrt(pairs)), {AGREEMENT_Z:g} needed"
        )
        out.append(
            Flag(
                "plausibility.near-chance",
                "no two annotators agree more than chance would (largest agreement "
                f"{z_max:.1f} standard errors above independence; {threshold:.3g} "
                f"needed{over}): the answers carry no detectable information about the class, so "
                "NC-ECE and corrected recalibration are not identified here. The number shown "
                "is not a measurement of calibration.",
                "data",
                severity="error",
            )
        )
    return out


def score_trend_flags(summary) -> list[Flag]:
    """Flag a positive-answer rate (hence a prevalence) that falls as the score rises.

    Under class-conditional noise with positive gaps, ``E[A_j | Z] = a_j + (b_j - a_j)
    P(Y = 1 | Z)``: answers fall with the score only if the prevalence does, i.e. the
    model (or the annotators' coding) is inverted. Test: weighted least-squares slope of
    the bins' mean answer on their mean score, items as units (the within-item answers
    are averaged, so the binomial variance bounds theirs).

    Parameters
    ----------
    summary : Summary
        Its bin sums of answers, answered counts and scores.

    Returns
    -------
    list of Flag
        ``plausibility.score-inverted`` when the slope is below ``-TREND_Z`` standard
        errors.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.data.container import Annotations
    >>> from bayescal.summaries.summary import summarize
    >>> rng = np.random.default_rng(0)
    >>> z = rng.random(600)
    >>> y = rng.random((600, 3)) < 1 - z[:, None]
    >>> [f.code for f in score_trend_flags(summarize(Annotations.from_arrays(z, y)))]
    ['plausibility.score-inverted']
    """
    view = summary.binary
    n = view.bin_count.astype(np.float64)
    answered = view.bin_answered.sum(axis=1).astype(np.float64)
    ok = (n > 0) & (answered > 0)
    if ok.sum() < 2:
        return []
    x = view.bin_score_sum[ok] / n[ok]
    r = view.bin_label_sum.sum(axis=1)[ok] / answered[ok]
    w = n[ok]
    xbar = np.average(x, weights=w)
    rbar = np.average(r, weights=w)
    sxx = float((w * (x - xbar) ** 2).sum())
    if sxx <= 0 or rbar <= 0 or rbar >= 1:
        return []
    slope = float((w * (x - xbar) * (r - rbar)).sum() / sxx)
    z = slope / np.sqrt(rbar * (1 - rbar) / sxx)
    if z >= -TREND_Z:
        return []
    return [
        Flag(
            "plausibility.score-inverted",
            f"the share of positive answers falls as the score rises (slope {slope:.3f} per "
            f"unit score, {z:.1f} standard errors): either the score ranks the classes the "
            "wrong way round or the annotators' 0/1 coding is inverted. Check which class the "
            "score predicts and how answers were coded before reading the calibration error.",
            "data",
        )
    ]


def channel_flags(fit, *, prob: float = 0.9) -> list[Flag]:
    """Flag fitted channels whose gaps are near chance (Hanada & Futami, Sec. 4).

    Parameters
    ----------
    fit : ChannelFit
        Binary channels, point (one draw) or draws.
    prob : float, default 0.9
        Interval probability for the gap's lower end (draws only).

    Returns
    -------
    list of Flag
        ``plausibility.near-chance`` (severity "error") when every annotator's gap
        (lower end for draws) is below :data:`NEAR_CHANCE_GAP`;
        ``plausibility.annotator-near-chance`` per such annotator otherwise (draws only).

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> ch = ChannelFit.known([0.49, 0.5, 0.5], [0.51, 0.52, 0.53], mu=0.5)
    >>> [f.severity for f in channel_flags(ch)]
    ['error']
    """
    gaps = np.asarray(fit.delta.values, dtype=np.float64)
    if gaps.shape[0] > 1:
        low = np.quantile(gaps, (1 - prob) / 2, axis=0)
        what = f"the lower end of its {int(round(prob * 100))}% interval"
    else:
        low = gaps[0]
        what = "its estimate"
    near = low < NEAR_CHANCE_GAP
    if near.all():
        return [
            Flag(
                "plausibility.near-chance",
                f"every annotator's gap b - a is near chance ({what} below "
                f"{NEAR_CHANCE_GAP}: "
                + ", ".join(f"{n} {v:.3f}" for n, v in zip(fit.annotators, low))
                + "): corrected labels divide by the gap, so NC-ECE is not identified and its "
                "interval is not a measurement of calibration. Collect informative annotators "
                "or supply known channels.",
                "channels",
                severity="error",
            )
        ]
    if gaps.shape[0] == 1:
        return []
    return [
        Flag(
            "plausibility.annotator-near-chance",
            f"annotator {name!r} may be answering at chance: {what} of its gap b - a is "
            f"{v:.3f} (below {NEAR_CHANCE_GAP}); its corrected labels are very noisy. Consider "
            "dropping it or using inverse-variance weights.",
            "channels",
        )
        for name, v, is_near in zip(fit.annotators, low, near)
        if is_near
    ]


def design_flags(summary, method: str) -> list[Flag]:
    """Flag too few items for the number of free channel parameters.

    Parameters
    ----------
    summary : Summary
    method : str
        ``"score_bin_em"``, ``"hui_walter"``, ``"gmm"`` (one prevalence per non-empty
        score group) or ``"dawid_skene_em"`` (one prevalence).

    Returns
    -------
    list of Flag
        ``plausibility.too-few-items`` when items < :data:`ITEMS_PER_PARAMETER` x
        parameters.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.summaries.summary import summarize
    >>> design_flags(summarize(simulate_toy(60, random_state=0)), "score_bin_em")[0].code
    'plausibility.too-few-items'
    """
    groups = int((summary.group_counts.values > 0).sum()) if _GROUPED.get(method, True) else 1
    params = 2 * summary.n_annotators + groups
    need = ITEMS_PER_PARAMETER * params
    if summary.n_items >= need:
        return []
    return [
        Flag(
            "plausibility.too-few-items",
            f"{summary.n_items} annotated items for {params} free channel parameters (2 per "
            f"annotator + {groups} prevalence(s)); the fit needs about {need} "
            f"({ITEMS_PER_PARAMETER} per parameter) to be stable. Add items, or use fewer score "
            "groups.",
            "identification",
        )
    ]


def ece_range_flags(
    plugin: float, rates: np.ndarray, rate_sd: np.ndarray, counts: np.ndarray
) -> list[Flag]:
    """Flag an NC-ECE above 1 or corrected bin rates far outside [0, 1].

    A binned ECE of probabilities is at most 1; corrected rates are unbiased and may
    leave [0, 1] by sampling noise, so a bin is flagged only beyond both
    :data:`RATE_MARGIN` and three of its standard errors.

    Parameters
    ----------
    plugin : float
        The plug-in NC-ECE.
    rates, rate_sd, counts : array-like of shape (M,)
        Corrected positive rate per bin, its bootstrap standard deviation and the
        bin's item count.

    Returns
    -------
    list of Flag
        ``plausibility.out-of-range`` (severity "error").

    Examples
    --------
    >>> ece_range_flags(236.0, [0.2, 90.0], [0.1, 1.0], [3, 2])[0].severity
    'error'
    >>> ece_range_flags(0.05, [0.2, 1.05], [0.1, 0.1], [30, 20])
    []
    """
    rates = np.asarray(rates, dtype=np.float64)
    sd = np.nan_to_num(np.asarray(rate_sd, dtype=np.float64))
    counts = np.asarray(counts)
    excess = np.maximum(rates - 1.0, -rates)
    far = (counts > 0) & np.isfinite(rates) & (excess > np.maximum(RATE_MARGIN, 3 * sd))
    problems = []
    if not np.isfinite(plugin) or plugin > 1.0:
        problems.append(f"NC-ECE {plugin:.4g} exceeds 1, the largest possible calibration error")
    if far.any():
        shown = ", ".join(f"bin {m}: {rates[m]:.3g}" for m in np.flatnonzero(far)[:5])
        problems.append(f"corrected positive rates far outside [0, 1] ({shown})")
    if not problems:
        return []
    return [
        Flag(
            "plausibility.out-of-range",
            "; ".join(problems) + ". The channels do not fit these data (too few items, or "
            "gaps near 0); the calibration error is not a measurement. Add items or annotators, "
            "or use fewer groups and bins.",
            "NC-ECE",
            severity="error",
        )
    ]


def plausibility_flags(summary, fit, method: str, *, prob: float = 0.9) -> list[Flag]:
    """Every data and channel check above, in one list (errors first).

    Parameters
    ----------
    summary : Summary
    fit : ChannelFit
    method : str
        The point method the design is judged for (see :func:`design_flags`).
    prob : float, default 0.9

    Examples
    --------
    >>> from bayescal.channels.fit import fit_channels
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.summaries.summary import summarize
    >>> s = summarize(simulate_toy(1000, random_state=0))
    >>> plausibility_flags(s, fit_channels(s, "score_bin_em", random_state=0), "score_bin_em")
    []
    """
    flags = [
        *reference_name_flags(summary.annotators),
        *agreement_flags(summary),
        *score_trend_flags(summary),
        *design_flags(summary, method),
        *channel_flags(fit, prob=prob),
    ]
    unique = list(dict.fromkeys(flags))
    near = [f for f in unique if f.code == "plausibility.near-chance"]
    if len(near) > 1:  # the data and the channels both say it: one flag, both reasons
        merged = Flag(near[0].code, " Also: ".join(f.message for f in near), "channels", "error")
        unique = [f for f in unique if f.code != "plausibility.near-chance"] + [merged]
    return sorted(unique, key=lambda f: f.severity != "error")
