"""Design checks shared by every channel estimator.

Refusals (:class:`~bayescal.errors.IdentificationError`) are for designs that
cannot identify channels at all; warnings are for designs that are identified
in principle but weakly in this sample. Each message says why and what helps.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal.display import name_list
from bayescal.errors import DataError, IdentificationError, IdentificationWarning

__all__ = [
    "check_design",
    "check_fitted",
    "design_parts",
    "gold_identifies",
    "GAP_WARNING",
    "GOLD_SE_WARNING",
    "GOLD_METHODS",
    "pair_group_moments",
    "check_multiclass_design",
    "check_fitted_confusion",
    "gold_identifies_multiclass",
    "SINGULAR_WARNING",
    "GOLD_ROW_SE_WARNING",
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

#: Confusion matrices whose smallest singular value is below this trigger a
#: warning: the corrected one-hot targets multiply by the inverse, whose norm is
#: one over the smallest singular value (with C = 2 this is the binary
#: ``GAP_WARNING`` scale).
SINGULAR_WARNING = 0.05

#: Worst-case standard error of a confusion entry from gold items alone above which a
#: gold-identified design is flagged weak. Annotator ``j``'s answers on the ``n_jy`` gold
#: items of class ``y`` it answered are multinomial(``n_jy``, ``T_j[y, :]``), so an entry's
#: standard error is ``sqrt(T (1 - T) / n_jy) <= 1 / (2 sqrt(n_jy))``; 0.1 is reached at
#: ``n_jy = 25`` (the binary ``GOLD_SE_WARNING`` per rate).
GOLD_ROW_SE_WARNING = 0.1

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


def design_parts(summary) -> list[tuple[list[int], int, bool]]:
    """The parts of a design that share no item: annotators linked when they answered an
    item together (gold items included), as connected components.

    Returns one ``(annotators, items, all_three)`` per part, largest first: the indices
    of its annotators, its answered items, and whether some item carries answers of three
    or more of its annotators. Parts do not inform each other's channels except through
    a prevalence they share, so a design is identified only if each part is (see
    :func:`_check_parts`).

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal import Annotations
    >>> from bayescal.summaries import summarize
    >>> labels = np.full((6, 3), np.nan)
    >>> labels[:3, 0] = 1; labels[3:, 1:] = 0  # r1 alone on items 0-2, r2 and r3 on 3-5
    >>> d = Annotations.from_arrays(np.linspace(0.1, 0.9, 6), labels)
    >>> design_parts(summarize(d, groups=1))
    [([1, 2], 3, False), ([0], 3, False)]
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    weight = np.asarray(summary.pattern_totals, dtype=np.float64)
    if summary.has_gold:
        weight = weight + summary.gold_counts().sum(axis=0)
    answered = (summary.states < summary.n_classes)[weight > 0]
    items = weight[weight > 0]
    together = csr_matrix(answered.astype(np.int64))
    n_parts, label = connected_components(together.T @ together, directed=False)
    parts = []
    for part in range(n_parts):
        members = np.flatnonzero(label == part)
        rows = answered[:, members].any(axis=1)
        width = answered[rows][:, members].sum(axis=1)
        parts.append((members.tolist(), int(items[rows].sum()), bool((width >= 3).any())))
    return sorted(parts, key=lambda x: (-len(x[0]), -x[1], x[0]))


def _check_parts(summary, out: list[str], *, grouped: bool, what: str) -> None:
    """Refuse a design whose parts (:func:`design_parts`) cannot each identify their
    channels: a part needs three or more annotators, and, when the prevalence is one for
    all items (``grouped=False``), a part of exactly three needs items answered by all
    three (pairs alone give 3 + 3 moments for 7 unknowns in the binary case).

    With ``grouped`` prevalences (one per score or predicted-class group) a part of one or
    two annotators can borrow the groups' prevalences from the other parts (its answer
    rates per group then determine its channel when the groups' prevalences differ), so
    such a part is a weak-design warning in ``out``, not a refusal: its channels rest on
    the model's assumption that the prevalence depends on the group alone.
    """
    parts = design_parts(summary)
    names = summary.annotators
    if len(parts) > 1 and all(len(p[0]) == 1 for p in parts):
        # no item has two answers: with one annotator per item every answer rate is
        # a_k + (b_k - a_k) mu_g (for C classes rho_g T_k), unchanged when the prevalences
        # are moved affinely (by any invertible map) and the channels with them, so no
        # grouping identifies them; only gold items would
        raise IdentificationError(
            f"no item has answers of two annotators: each of the {len(parts)} annotators "
            f"answered items of its own ({', '.join(f'{names[p[0][0]]!r}: {p[1]}' for p in parts)}"
            f" item(s)), so {what} cannot tell an annotator's errors from the class prevalence "
            "(any shift of the prevalences is matched by the channels), with or without score "
            "groups. Collect items answered by two or more annotators, or add gold items."
        )
    if len(parts) > 1:
        small = [p for p in parts if len(p[0]) < 3]
        described = "; ".join(
            f"{{{', '.join(str(names[j]) for j in p[0])}}}: {p[1]} item(s)" for p in parts
        )
        if small and grouped:
            _warn(
                f"the annotators fall into {len(parts)} parts that never answer the same item "
                f"({described}); the channels of a part with fewer than three annotators rest "
                "only on the group prevalences the other parts estimate (the assumption that "
                "the prevalence depends on the group alone). Collect answers that overlap "
                "across the parts, or add gold items.",
                out,
            )
        elif small:
            raise IdentificationError(
                f"the annotators fall into {len(parts)} parts that never answer the same item "
                f"({described}); a part with fewer than three annotators does not identify its "
                f"channels with {what} (one prevalence for all items). Collect answers that "
                "overlap across the parts, add gold items, or audit each part of three or more "
                "annotators on its own. (Item ids spelled two ways, e.g. with a trailing space, "
                "split one item into two.)"
            )
    if not grouped:
        for members, _, all_three in parts:
            if len(members) == 3 and not all_three:
                trio = ", ".join(str(names[j]) for j in members)
                raise IdentificationError(
                    f"annotators {trio} never answered an item all three together: with pairs "
                    f"of answers only, {what} (one prevalence for all items) is not identified "
                    "(for two classes, 3 answer rates and 3 pair agreements for 7 unknowns). "
                    "Collect items with three answers, add gold items, or use score groups "
                    "(--channels score-bin-em)."
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
        raise DataError(
            f"annotator(s) {name_list(names)} answered no item; remove them before fitting "
            "channels."
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
    if method in ("dawid_skene_em", "moments"):
        _check_parts(summary, out, grouped=False, what=f"method {method!r}")
    elif method == "score_bin_em" and k >= 3:
        _check_parts(summary, out, grouped=True, what=f"method {method!r}")
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


# ----------------------------------------------------------------- C > 2
def gold_identifies_multiclass(summary) -> tuple[bool, float]:
    """Whether gold items alone identify every confusion row, and how well (issue 15).

    A gold item of class ``y`` contributes ``log P(s | Y = y) = sum_j log T_j[y, s_j]``:
    annotator ``j``'s answers on the ``n_jy`` gold items of class ``y`` it answered are
    multinomial(``n_jy``, ``T_j[y, :]``), whose log-likelihood is strictly concave in
    the row's log-ratio coordinates once ``n_jy >= 1``. So "enough" gold items means:
    **every annotator answered at least one gold item of every class**. Then every
    confusion row is identified without a third annotator or channel groups, for any
    K >= 1, and the unknown items' prevalence follows from the answer shares (a
    mixture with known, linearly independent components: any annotator with an
    invertible confusion matrix, which the EM acceptance rule requires).

    Returns
    -------
    identified : bool
    worst_se : float
        ``max_{j, y} 1 / (2 sqrt(n_jy))``, the largest worst-case standard error of a
        confusion entry from gold items alone (inf when not identified); above
        :data:`GOLD_ROW_SE_WARNING` the gold identification is weak.

    Examples
    --------
    >>> import numpy as np
    >>> from bayescal.data.multiclass import MulticlassAnnotations
    >>> from bayescal.summaries import summarize_multiclass
    >>> d = MulticlassAnnotations.from_arrays(
    ...     [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]], [[0], [1], [1]], gold=[0, 1, np.nan])
    >>> gold_identifies_multiclass(summarize_multiclass(d))
    (True, 0.5)
    """
    if not summary.has_gold:
        return False, float("inf")
    answered = summary.gold_answered().astype(np.float64)  # (C, K)
    if not np.all(answered >= 1):
        return False, float("inf")
    return True, float(np.max(0.5 / np.sqrt(answered)))


def _all_answer_counts(summary) -> np.ndarray:
    """Answers per annotator and class, gold items included: (K, C)."""
    answers = summary.answer_counts.values
    if summary.has_gold:
        gold = summary.gold_counts().sum(axis=0)  # (P,)
        c = summary.n_classes
        answers = answers + np.stack(
            [
                np.bincount(summary.states[:, j], weights=gold, minlength=c + 1)[:c]
                for j in range(summary.n_annotators)
            ]
        ).astype(np.int64)
    return answers


def check_multiclass_design(summary, *, pooled: bool = False) -> list[str]:
    """Refuse designs that cannot identify multiclass channels; return weak-design warnings.

    Conditions (SPEC §3): at least one annotated item of unknown class; every
    annotator answered something; every class answered by someone; K >= 3
    annotators, or C = 2 with K = 2 and at least two non-empty channel groups
    (Hui–Walter), or enough gold items (:func:`gold_identifies_multiclass`: every
    annotator answered a gold item of every class; weak, with a warning, when some
    annotator answered fewer than 25 gold items of a class).

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> check_multiclass_design(summarize_multiclass(simulate_multiclass(300, random_state=0)))
    []
    """
    out: list[str] = []
    k, c = summary.n_annotators, summary.n_classes
    summary.require_items()
    answers = _all_answer_counts(summary)  # (K, C)
    silent = [summary.annotators[j] for j in np.flatnonzero(answers.sum(axis=1) == 0)]
    if silent:
        raise DataError(
            f"annotator(s) {name_list(silent)} answered no item; remove them before fitting."
        )
    unused = [summary.classes[y] for y in np.flatnonzero(answers.sum(axis=0) == 0)]
    if unused:
        raise IdentificationError(
            f"class(es) {name_list(unused)} are never answered by any annotator, so their "
            "confusion columns are zero and their prevalence is not identified from the "
            "annotations. "
            "Merge or drop these classes, or collect annotations that use them."
        )
    nonempty = int((summary.group_counts.values > 0).sum()) if not pooled else 1
    if k < 3 and not (c == 2 and k == 2 and nonempty >= 2):
        by_gold, worst_se = gold_identifies_multiclass(summary)
        if not by_gold:
            gold_note = ""
            if summary.has_gold:
                short = _gold_shortfall(summary)
                gold_note = (
                    f" The gold items do not suffice: every annotator needs at least one gold "
                    f"item of every class, and {short}."
                )
            raise IdentificationError(
                f"{k} annotator(s) do not identify multiclass confusion matrices: the "
                "latent-class model is identified (up to relabelling) with K >= 3 annotators "
                "whose confusion matrices have full rank (Kruskal's condition, SPEC §3); with "
                "C = 2 classes two annotators also suffice given two or more channel groups with "
                "different prevalences; any K is identified by gold items (every annotator "
                "answered a gold item of every class)." + gold_note + " Add annotators or gold "
                "items, or supply known confusions with ChannelFit.known_confusion()."
            )
        if worst_se > GOLD_ROW_SE_WARNING:
            _warn(
                f"{k} annotator(s) are identified by the gold items alone, weakly: some "
                f"confusion entry rests on so few gold answers that its standard error from "
                f"gold alone may reach {worst_se:.3f} (above {GOLD_ROW_SE_WARNING}; 25 gold "
                "answers per annotator and class bring it below). Expect wide intervals.",
                out,
            )
    if not gold_identifies_multiclass(summary)[0]:
        _check_parts(summary, out, grouped=not pooled, what="the multiclass Dawid-Skene model")
    for j, name in enumerate(summary.annotators):
        never = [summary.classes[y] for y in np.flatnonzero(answers[j] == 0)]
        if never:
            _warn(
                f"annotator {name!r} never answered class(es) {never}: its confusion matrix has "
                "(near-)zero columns and cannot be inverted, so it cannot enter corrected "
                "targets. Expect a refusal unless min_singular=0.",
                out,
            )
    return out


def _gold_shortfall(summary) -> str:
    answered = summary.gold_answered()  # (C, K)
    missing = [
        f"{summary.annotators[j]!r} answered none of class {summary.classes[y]!r}"
        for y, j in zip(*np.nonzero(answered == 0))
    ]
    shown = "; ".join(missing[:5]) + ("; ..." if len(missing) > 5 else "")
    return shown


def check_fitted_confusion(fit, dominance_failures, orient, by_gold=False) -> list[str]:
    """Warnings about fitted confusions (C > 2): near-singular matrices, weak orientation."""
    out: list[str] = []
    t = fit.confusion.values.mean(axis=0)
    sv = np.linalg.svd(t, compute_uv=False).min(axis=1)
    for name, s in zip(fit.annotators, sv):
        if s < SINGULAR_WARNING:
            _warn(
                f"annotator {name!r} has a nearly singular confusion matrix (smallest singular "
                f"value {s:.4f}, below {SINGULAR_WARNING}); corrected one-hot targets multiply "
                "by its inverse, so NC-ECE and corrected recalibration become very noisy. "
                "Consider dropping this annotator.",
                out,
            )
    if (sv >= SINGULAR_WARNING).sum() < 3 and fit.n_classes > 2 and not by_gold:
        _warn(
            f"only {(sv >= SINGULAR_WARNING).sum()} annotator(s) have well-conditioned confusion "
            f"matrices (smallest singular values {np.round(sv, 4).tolist()}); identification "
            "needs three (SPEC §3), so the fit may be weakly identified.",
            out,
        )
    name = fit.annotators[orient]
    for y, a, tyy, tya in dominance_failures:
        _warn(
            f"the designated annotator {name!r} is not diagonally dominant after the best "
            f"relabelling: for true class {fit.classes[y]!r} it answers {fit.classes[a]!r} with "
            f"probability {tya:.4f} >= {tyy:.4f} for the true class. The orientation then rests "
            "on the assignment alone; designate an annotator you trust (orient=...).",
            out,
        )
    return out
