"""Design checks shared by every channel estimator.

Refusals (:class:`~bayescal.errors.IdentificationError`) are for designs that
cannot identify channels at all; warnings are for designs that are identified
in principle but weakly in this sample. Each message says why and what helps.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal.errors import DataError, IdentificationError, IdentificationWarning

__all__ = [
    "check_design",
    "check_fitted",
    "gold_identifies",
    "GAP_WARNING",
    "GOLD_SE_WARNING",
    "GOLD_METHODS",
    "pair_group_moments",
]

#: Oriented gaps below this trigger a warning: corrected labels divide by the
#: gap, so their variance grows like 1 / gap**2.
GAP_WARNING = 0.05

#: Gold items identify a design only if they are used by the estimator: the EM fits and the
#: Bayesian models (which use these point methods' design checks) take them into account.
GOLD_METHODS = ("score_bin_em", "dawid_skene_em")

#: Worst-case standard error of a channel gap ``b_j - a_j`` from gold items alone above which
#: a gold-identified design is flagged weak. From ``n0_j`` gold-0 and ``n1_j`` gold-1 answers
#: of annotator ``j`` the Fisher information of ``a_j`` is ``n0_j / (a_j (1 - a_j))``, so
#: ``se(b_j - a_j) = sqrt(a(1-a)/n0_j + b(1-b)/n1_j) <= sqrt(1/(4 n0_j) + 1/(4 n1_j))``;
#: 0.1 is reached at ``n0_j = n1_j = 50``.
GOLD_SE_WARNING = 0.1

_ONE = (
    "one annotator cannot identify its own noise channel: the same answer rates arise from "
    "many (a, b, P(Y=1|Z)) combinations with different calibration errors (paper, App. D.1: "
    "(a, b, m) = (0.2, 0.8, 0.25 + 0.5z) and (0.1, 0.9, 0.3125 + 0.375z) give identical data "
    "but ECE 1/8 vs 5/32). Add annotators, or supply known channels with ChannelFit.known()."
)
_TWO_MARGINAL = (
    "two annotators without score groups are not identified: with mu = 1/2 and gaps d and 0.24/d "
    "every d in (0.24, 1) gives the same answer-pattern probabilities (0.31, 0.19, 0.19, 0.31) "
    "(paper, App. D.1). Use score groups with different prevalences (method 'score_bin_em', "
    "'hui_walter' or 'gmm' with groups >= 2), add a third annotator, or supply known channels."
)


def _warn(msg, out):
    out.append(msg)
    _warnings.warn(msg, IdentificationWarning, stacklevel=4)


def pair_group_moments(summary, j=0, k=1):
    """Pairwise-complete moments per group for annotators j, k.

    Returns arrays (L,) q1, q2, q12 and the counts n1, n2, n12 they rest on.
    """
    view = summary.binary
    states = view.states
    counts = view.pattern_counts.astype(np.float64)
    s1, s2 = states[:, j], states[:, k]
    ans1, ans2 = s1 != 2, s2 != 2
    both = ans1 & ans2
    n1 = counts @ ans1
    n2 = counts @ ans2
    n12 = counts @ both
    with np.errstate(invalid="ignore", divide="ignore"):
        q1 = (counts @ (s1 == 1)) / n1
        q2 = (counts @ (s2 == 1)) / n2
        q12 = (counts @ ((s1 == 1) & (s2 == 1))) / n12
    return {"q1": q1, "q2": q2, "q12": q12, "n1": n1, "n2": n2, "n12": n12}


def gold_identifies(summary) -> tuple[bool, float]:
    """Whether gold items alone identify every annotator's channel, and how well.

    Gold items' answers are Bernoulli(``a_j``) for gold-0 items and Bernoulli(``b_j``)
    for gold-1 items (the gold likelihood of :mod:`bayescal.channels.em`). Its
    log-likelihood in ``logit a_j`` has second derivative ``-n0_j a_j (1 - a_j)``,
    strictly negative once annotator ``j`` answered one gold-0 item, so "enough" gold
    items means: **every annotator answered at least one gold-0 and one gold-1
    item**. Then ``(a, b)`` are identified without score groups or a third
    annotator, for any K >= 1, and the unknown items' prevalence follows from an
    annotator's positive rate ``a_j + mu (b_j - a_j)`` (``b_j != a_j``).

    Returns
    -------
    identified : bool
    worst_se : float
        ``max_j sqrt(1/(4 n0_j) + 1/(4 n1_j))``: the largest worst-case standard
        error of a gap from gold items alone (inf when not identified); above
        :data:`GOLD_SE_WARNING` the gold identification is weak.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations, summarize
    >>> data = Annotations.from_arrays(
    ...     [0.2, 0.8, 0.5], [[0], [1], [1]], gold=[0, 1, np.nan])
    >>> gold_identifies(summarize(data, groups=1))
    (True, 0.7071067811865476)
    """
    if not summary.has_gold:
        return False, float("inf")
    answered = summary.gold_answered().astype(np.float64)  # (2, K)
    if (answered < 1).any():
        return False, float("inf")
    return True, float(np.sqrt(0.25 / answered[0] + 0.25 / answered[1]).max())


def _gold_message(summary, method) -> str:
    if not summary.has_gold:
        return ""
    n0, n1 = summary.binary.n_gold
    if method not in GOLD_METHODS:
        return (
            f" The {n0 + n1} gold items do not help here: method {method!r} does not use them "
            f"(use {' or '.join(GOLD_METHODS)} or the Bayesian models)."
        )
    answered = summary.gold_answered()
    short = [
        summary.annotators[j] for j in range(summary.n_annotators) if (answered[:, j] < 1).any()
    ]
    return (
        f" The gold items ({n0} of class 0, {n1} of class 1) would identify the channels if "
        f"every annotator had answered at least one of each class; {short} have not."
    )


def check_design(summary, method: str) -> list[str]:
    """Refuse non-identified designs; return (and emit) weak-identification warnings.

    Gold items (SPEC §1 extension, issue 15) identify K = 1 and K = 2 without score
    groups when :func:`gold_identifies` says so and ``method`` uses them
    (:data:`GOLD_METHODS`).
    """
    out: list[str] = []
    k = summary.n_annotators
    summary.require_items()
    view = summary.binary
    answered = view.answered_counts + summary.gold_answered().sum(axis=0)
    if (answered == 0).any():
        names = [summary.annotators[j] for j in np.flatnonzero(answered == 0)]
        shown = f"{names}" if len(names) <= 10 else f"{names[:10]} and {len(names) - 10} more"
        raise DataError(
            f"annotator(s) {shown} answered no item; remove them before fitting channels."
        )
    by_gold, worst_se = gold_identifies(summary)
    if by_gold and method in GOLD_METHODS:
        if worst_se > GOLD_SE_WARNING:
            _warn(
                f"the gold items identify the channels only weakly: a gap b - a estimated from "
                f"them alone has a standard error up to {worst_se:.3f} (above "
                f"{GOLD_SE_WARNING}; every annotator needs about 50 answered gold items of each "
                "class for 0.1). Add gold items, annotators or score groups.",
                out,
            )
        return out
    if k == 1:
        raise IdentificationError(_ONE + _gold_message(summary, method))
    if method in ("dawid_skene_em", "moments") and k < 3:
        raise IdentificationError(
            f"method {method!r} needs at least three annotators; got two. " + _TWO_MARGINAL
        )
    if method in ("hui_walter", "gmm") and k != 2:
        raise IdentificationError(
            f"method {method!r} is for exactly two annotators; got {k}. With three or more use "
            "'score_bin_em' or 'dawid_skene_em', or select two annotators first."
        )
    nonempty = int((summary.group_counts.values > 0).sum())
    if k == 2:
        if (
            method == "score_bin_em"
            and nonempty < 2
            or method in ("hui_walter", "gmm")
            and nonempty < 2
        ):
            raise IdentificationError(
                f"two annotators need at least two non-empty score groups; got {nonempty}. "
                + _TWO_MARGINAL
                + _gold_message(summary, method)
            )
        if method == "hui_walter" and summary.n_groups != 2:
            raise IdentificationError(
                f"the Hui-Walter inverse uses exactly two groups; got {summary.n_groups}. Use "
                "groups=2 (or a threshold [0, t, 1]), or method 'gmm' for more groups."
            )
        mom = pair_group_moments(summary)
        if (mom["n12"] == 0).all():
            raise IdentificationError(
                "the two annotators never answered the same item, so their joint answers (and "
                "hence the channels) are not identified. Collect overlapping annotations."
            )
        ok = mom["n1"] > 0
        q1, n1 = mom["q1"][ok], mom["n1"][ok]
        if q1.size >= 2:
            se = np.sqrt(np.clip(q1 * (1 - q1), 1e-12, None) / n1)
            diff = q1.max() - q1.min()
            se_diff = np.sqrt(se[np.argmax(q1)] ** 2 + se[np.argmin(q1)] ** 2)
            if diff < 3 * se_diff:
                _warn(
                    f"score groups barely differ in annotator {summary.annotators[0]!r}'s positive "
                    f"rate (largest difference {diff:.4f}, {diff / se_diff:.1f} standard errors): "
                    "with two annotators the channels are then only weakly identified. Use groups "
                    "that separate low from high scores, or more data.",
                    out,
                )
    return out


def check_fitted(fit) -> list[str]:
    """Warnings about a fitted channel: gaps near zero."""
    out: list[str] = []
    gaps = fit.delta.values.mean(axis=0)
    for name, g in zip(fit.annotators, gaps):
        if abs(g) < GAP_WARNING:
            _warn(
                f"annotator {name!r} is nearly uninformative: gap b - a = {g:.4f} (below "
                f"{GAP_WARNING}); corrected labels divide by the gap, so NC-ECE and corrected "
                "recalibration become very noisy. Consider dropping this annotator.",
                out,
            )
    return out
