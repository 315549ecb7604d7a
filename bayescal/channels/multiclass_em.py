"""Multiclass Dawid–Skene EM on response-pattern counts (Dawid & Skene 1979; SPEC §3).

Annotator ``j`` answers class ``a`` with probability ``T_j[y, a]`` when the true
class is ``y``; answers are independent given ``Y`` (and the channel group); a
missing answer contributes no factor. Per channel group ``g``, with prevalence
``rho[g, y]``, a pattern ``s`` has probability

    P(s | g) = sum_y rho[g, y] prod_{j answered} T_j[y, s_j]      (SPEC §3)

and the counts ``n[g, s]`` of a :class:`~bayescal.summaries.summary.Summary`
are multinomial given the group totals. EM works on the observed patterns only,
so an iteration costs O(R x L x C x P x K) for R starts, L groups and P observed
patterns, whatever the number of items. Computations are in log space.

Protocol (the binary protocol of Hanada & Futami, App. G.2, carried over; SPEC §1):
``n_starts`` starts (default 10): the first from the soft majority vote (the
start crowd-kit uses), the others random with diagonal-dominant confusions
(accuracy ``~ U[0.5, 0.95]`` per annotator, the rest spread by a flat Dirichlet)
and flat-Dirichlet prevalences; at most ``max_iter`` iterations; stop when the
change in mean log-likelihood is below ``tol (1 + |previous|)``; after every M
step each probability is raised to at least ``clip`` and its row renormalised.
Orientation (SPEC §3): the latent classes of every start are relabelled by the
assignment that maximises the designated annotator's diagonal
(:mod:`bayescal.channels.orientation`), and the diagonal dominance of that
annotator is checked at the chosen start. A start is accepted when it
converged, is finite, and every confusion matrix is invertible, smallest
singular value at least ``min_singular`` (the corrected one-hot targets of
NC-ECE invert them; with C = 2 this plays the role of the binary rule
``b - a >= 1e-3``). The accepted start with the highest likelihood is returned.

Gold items (issue 15, ``models/gold.md``): ``gold[y, s]`` items of known class
``y`` with pattern ``s`` (:meth:`Summary.gold_counts`) add
``sum_y sum_s gold[y, s] log P(s | Y = y)`` to the log-likelihood, with
``P(s | Y = y) = prod_{j answered} T_j[y, s_j]``. Their class is known, so in the
E step their responsibility is the one-hot of ``y``; they enter the confusion
counts of the M step and not the prevalences: gold items are often selected by
class (a fixed number per class, or the hard cases), so their class shares say
nothing about the prevalence of the other items, while ``P(answers | Y = y)``
does not depend on how the item was selected. With gold items the latent classes
are labelled by the data, so the relabelling of each start is not applied (it
would change the likelihood); the best accepted start is kept.

Identification (SPEC §3): K >= 3 annotators whose confusion matrices have full
rank and every class present identify the mixture up to relabelling (Kruskal's
condition). With C = 2, K = 2 and two or more channel groups the binary
Hui–Walter argument applies instead. With enough gold items (every annotator
answered at least one gold item of every class, :func:`gold_identifies_multiclass`)
any K >= 1 is identified. Other designs are refused with the reason.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal._random import check_random_state
from bayescal.channels.options import check_em_options, check_real_option
from bayescal.channels.orientation import (
    diagonal_dominance_failures,
    dominant_diagonal_permutation,
    orient_index,
    relabel_classes,
)
from bayescal.channels.result import ChannelFit
from bayescal.errors import (
    ConfigError,
    DataError,
    FitError,
    IdentificationError,
    IdentificationWarning,
)
from bayescal.summaries.summary import Summary

__all__ = [
    "multiclass_dawid_skene_em",
    "multiclass_em_counts",
    "multiclass_em_run",
    "majority_vote_start",
    "pattern_log_probs",
    "check_multiclass_design",
    "gold_identifies_multiclass",
    "SINGULAR_WARNING",
    "GOLD_ROW_SE_WARNING",
]

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

#: Start-batch size is chosen so that the (starts, groups, classes, patterns)
#: arrays of one batch hold at most this many float64 numbers (160 MB).
_BATCH_ELEMENTS = 20_000_000


# ----------------------------------------------------------------- kernels
def pattern_log_probs(states, confusion, prevalence) -> np.ndarray:
    """``log P(s | g)`` for every group and observed pattern (SPEC §3).

    Parameters
    ----------
    states : ndarray of shape (P, K)
        Answered class ``0 .. C-1`` or ``C`` for missing.
    confusion : ndarray of shape (K, C, C)
    prevalence : ndarray of shape (L, C)

    Returns
    -------
    ndarray of shape (L, P)

    Examples
    --------
    >>> import numpy as np
    >>> t = np.array([[[0.9, 0.1], [0.2, 0.8]]] * 2)
    >>> lp = pattern_log_probs(np.array([[0, 2], [1, 1]]), t, np.array([[0.5, 0.5]]))
    >>> np.exp(lp).round(4).tolist()  # 0.5*0.9 + 0.5*0.2, 0.5*0.1*0.1 + 0.5*0.8*0.8
    [[0.55, 0.325]]
    """
    lp = _log_answer_probs(np.log(confusion)[None], np.asarray(states))[0]  # (C, P)
    joint = np.log(prevalence)[:, :, None] + lp[None]
    top = joint.max(axis=1, keepdims=True)
    return (top + np.log(np.exp(joint - top).sum(axis=1, keepdims=True)))[:, 0, :]


def _log_answer_probs(log_t, states):
    """``sum_j log T_j[y, s_j]`` over answered j: (R, C, P) from log T (R, K, C, C)."""
    r, k, c, _ = log_t.shape
    ext = np.concatenate([log_t, np.zeros((r, k, c, 1))], axis=3)  # missing state: log 1
    out = np.zeros((r, c, states.shape[0]))
    for j in range(k):
        out += np.take(ext[:, j], states[:, j], axis=2)
    return out


def _answer_indicators(states, n_classes):
    """Per annotator a sparse (C, P) indicator of which patterns answered which class."""
    from scipy import sparse

    p = states.shape[0]
    out = []
    for j in range(states.shape[1]):
        s = states[:, j].astype(np.int64)
        ans = s < n_classes
        out.append(
            sparse.csr_matrix(
                (np.ones(int(ans.sum())), (s[ans], np.flatnonzero(ans))), shape=(n_classes, p)
            )
        )
    return out


def _m_step(w, indicators, group_n, clip, gold=None):
    """Confusions and prevalences from expected counts ``w[r, l, y, p]``.

    ``gold[y, p]`` (optional): gold items at their known class; they count for the
    confusions only (module docstring).
    """
    r, _, c, p = w.shape
    rho = w.sum(axis=3) / group_n[None, :, None]
    per_class = w.sum(axis=1) if gold is None else w.sum(axis=1) + gold[None]
    per_pattern = per_class.transpose(2, 0, 1).reshape(p, r * c)  # (P, R*C)
    num = np.stack(
        [(ind @ per_pattern).reshape(c, r, c).transpose(1, 2, 0) for ind in indicators], axis=1
    )  # (R, K, C_true, C_answered)
    t = num / np.maximum(num.sum(axis=3, keepdims=True), 1e-300)
    return _floor(t, clip), _floor(rho, clip)


def _floor(x, clip):
    """Raise every probability to at least ``clip`` and renormalise the last axis."""
    x = np.maximum(x, clip)
    return x / x.sum(axis=-1, keepdims=True)


def majority_vote_start(counts, states, n_classes, *, clip=1e-6, gold=None):
    """The soft-majority-vote start: pattern posteriors = answer shares, then one M step.

    Parameters
    ----------
    counts : ndarray of shape (L, P)
    states : ndarray of shape (P, K)
    n_classes : int
    gold : ndarray of shape (C, P), optional
        Gold items at their known class (they enter the confusions).

    Returns
    -------
    confusion : ndarray of shape (K, C, C)
    prevalence : ndarray of shape (L, C)
    """
    counts = np.asarray(counts, dtype=np.float64)
    ind = _answer_indicators(states, n_classes)
    votes = np.asarray(sum(m.toarray() for m in ind))  # (C, P)
    shares = votes / np.maximum(votes.sum(axis=0, keepdims=True), 1)
    w = counts[None, :, None, :] * shares[None, None]
    group_n = np.maximum(counts.sum(axis=1), 1e-300)
    t, rho = _m_step(w, ind, group_n, clip, gold)
    return t[0], rho[0]


def multiclass_em_run(
    counts,
    states,
    n_classes,
    confusion0,
    prevalence0,
    *,
    tol=1e-9,
    max_iter=1000,
    clip=1e-6,
    gold=None,
):
    """Run EM from R starts at once on pattern counts.

    Parameters
    ----------
    counts : ndarray of shape (L, P)
        Pattern counts per group (float; may be expected counts).
    states : ndarray of shape (P, K)
    n_classes : int
    confusion0 : ndarray of shape (R, K, C, C)
    prevalence0 : ndarray of shape (R, L, C)
    gold : ndarray of shape (C, P), optional
        Gold items per known class and pattern (module docstring); None: none.

    Returns
    -------
    dict with ``confusion`` (R, K, C, C), ``prevalence`` (R, L, C),
    ``mean_loglik`` (R,), ``converged`` (R,), ``n_iter`` (R,) (no orientation applied).
    """
    counts = np.asarray(counts, dtype=np.float64)
    states = np.asarray(states)
    if gold is not None:
        gold = np.asarray(gold, dtype=np.float64)
    n = counts.sum() + (0.0 if gold is None else gold.sum())
    group_n = np.maximum(counts.sum(axis=1), 1e-300)  # an empty group gets a flat prevalence
    t, rho = np.array(confusion0, dtype=np.float64), np.array(prevalence0, dtype=np.float64)
    r = t.shape[0]
    ind = _answer_indicators(states, n_classes)
    prev = np.full(r, np.nan)
    ll = np.full(r, -np.inf)
    converged = np.zeros(r, dtype=bool)
    active = np.ones(r, dtype=bool)
    n_iter = np.zeros(r, dtype=np.int64)
    for it in range(max_iter + 1):
        lp = _log_answer_probs(np.log(t), states)  # (R, C, P)
        joint = np.log(rho)[:, :, :, None] + lp[:, None]  # (R, L, C, P)
        top = joint.max(axis=2, keepdims=True)
        lse = top + np.log(np.exp(joint - top).sum(axis=2, keepdims=True))  # (R, L, 1, P)
        ll_new = (counts[None] * lse[:, :, 0, :]).sum(axis=(1, 2))
        if gold is not None:  # gold items: log P(s | Y = y) at their known class
            ll_new = ll_new + (gold[None] * lp).sum(axis=(1, 2))
        ll_new = ll_new / n
        ll = np.where(active, ll_new, ll)
        done = active & (np.abs(ll_new - prev) < tol * (1.0 + np.abs(prev)))
        converged |= done
        active &= ~done
        if not active.any() or it == max_iter:
            break
        prev = np.where(active, ll_new, prev)
        n_iter += active
        w = counts[None, :, None, :] * np.exp(joint - lse)
        t_new, rho_new = _m_step(w, ind, group_n, clip, gold)
        t = np.where(active[:, None, None, None], t_new, t)
        rho = np.where(active[:, None, None], rho_new, rho)
    return {
        "confusion": t,
        "prevalence": rho,
        "mean_loglik": ll,
        "converged": converged,
        "n_iter": n_iter,
    }


def _random_starts(rng, n_starts, k, c, n_groups):
    acc = rng.uniform(0.5, 0.95, size=(n_starts, k, 1, 1))
    off = rng.dirichlet(np.ones(c), size=(n_starts, k, c))
    eye = np.eye(c)[None, None]
    off = off * (1 - eye)
    off = off / off.sum(axis=3, keepdims=True)
    t = acc * eye + (1 - acc) * off
    rho = rng.dirichlet(np.ones(c), size=(n_starts, n_groups))
    return t, rho


def multiclass_em_counts(
    counts,
    states,
    n_classes: int,
    *,
    n_starts: int = 10,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    min_singular: float = 1e-3,
    orient: int = 0,
    random_state=0,
    extra_starts=None,
    gold=None,
):
    """EM on plain arrays; returns the best accepted, oriented start or raises FitError.

    Parameters
    ----------
    counts : ndarray of shape (L, P)
        Counts of observed patterns per group (float allowed).
    states : ndarray of shape (P, K)
    n_classes : int
    n_starts, max_iter, tol, clip, min_singular, orient, random_state
        See :func:`multiclass_dawid_skene_em`.
    extra_starts : (confusion (R, K, C, C), prevalence (R, L, C)), optional
        Appended to the majority-vote and random starts.
    gold : ndarray of shape (C, P), optional
        Gold items per known class and pattern; with any, starts are not relabelled.

    Returns
    -------
    dict with ``confusion`` (K, C, C), ``prevalence`` (L, C), ``loglik``, ``n_iter``,
    ``n_accepted``, ``dominance_failures``, ``diagnostics``.
    """
    opts = check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip)
    min_singular = check_real_option("min_singular", min_singular, low=0.0, high=1.0)
    rng = check_random_state(random_state)
    counts = np.asarray(counts, dtype=np.float64)
    states = np.asarray(states)
    n_groups, n_pat = counts.shape
    k, c = states.shape[1], n_classes
    if gold is not None:
        gold = np.asarray(gold, dtype=np.float64)
        if gold.shape != (c, n_pat):
            raise DataError(f"gold counts must have shape ({c}, {n_pat}); got {gold.shape}.")
        if gold.sum() == 0:
            gold = None
    t_mv, rho_mv = majority_vote_start(counts, states, c, clip=clip, gold=gold)
    t_r, rho_r = _random_starts(rng, opts["n_starts"] - 1, k, c, n_groups)
    t0 = np.concatenate([t_mv[None], t_r])
    rho0 = np.concatenate([rho_mv[None], rho_r])
    if extra_starts is not None:
        et, erho = (np.asarray(x, dtype=np.float64) for x in extra_starts)
        t0, rho0 = np.concatenate([t0, et]), np.concatenate([rho0, erho])
    batch = max(1, _BATCH_ELEMENTS // max(1, n_groups * c * n_pat))
    runs = [
        multiclass_em_run(
            counts,
            states,
            c,
            t0[i : i + batch],
            rho0[i : i + batch],
            tol=opts["tol"],
            max_iter=opts["max_iter"],
            clip=opts["clip"],
            gold=gold,
        )
        for i in range(0, t0.shape[0], batch)
    ]
    out = {key: np.concatenate([run[key] for run in runs]) for key in runs[0]}
    r = t0.shape[0]
    t, rho = out["confusion"], out["prevalence"]
    for i in range(r if gold is None else 0):  # gold items label the classes themselves
        if np.all(np.isfinite(t[i])):
            perm = dominant_diagonal_permutation(t[i, orient])
            t[i], rho[i] = relabel_classes(t[i], rho[i], perm)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(out["mean_loglik"]) & np.all(np.isfinite(t), axis=(1, 2, 3))
        sv = np.where(
            finite[:, None], np.linalg.svd(np.nan_to_num(t), compute_uv=False).min(axis=2), 0.0
        )  # (R, K)
    accepted = out["converged"] & finite & (sv.min(axis=1) >= min_singular)
    n_total = counts.sum() + (0.0 if gold is None else gold.sum())
    diag = {
        "starts": r,
        "starts_converged": int(out["converged"].sum()),
        "starts_accepted": int(accepted.sum()),
        "start_logliks": (out["mean_loglik"] * n_total).tolist(),
        "start_min_singular_values": sv.min(axis=1).tolist(),
        "iterations": out["n_iter"].tolist(),
        "gold_items": [0] * c if gold is None else [int(x) for x in gold.sum(axis=1)],
    }
    if not accepted.any():
        best = int(np.argmax(np.where(finite, out["mean_loglik"], -np.inf)))
        weak = int(np.argmin(sv[best]))
        raise FitError(
            f"multiclass EM found no acceptable start: {diag['starts_converged']} of {r} starts "
            f"converged and none had every confusion matrix invertible (smallest singular value "
            f">= {min_singular:g}); at the best likelihood annotator index {weak} has smallest "
            f"singular value {sv[best, weak]:.3g}. An annotator who never uses some class, or "
            "whose answers do not depend on the class, cannot be inverted: drop it or merge "
            "classes, raise max_iter if starts did not converge, or pass min_singular=0 to "
            "accept non-invertible channels (NC-ECE will then refuse them).",
            diagnostics=diag,
        )
    best = int(np.argmax(np.where(accepted, out["mean_loglik"], -np.inf)))
    diag["min_singular_values"] = sv[best].tolist()
    return {
        "confusion": t[best],
        "prevalence": rho[best],
        "loglik": float(out["mean_loglik"][best] * n_total),
        "n_iter": int(out["n_iter"][best]),
        "n_accepted": int(accepted.sum()),
        "dominance_failures": diagonal_dominance_failures(t[best, orient]),
        "diagnostics": diag,
    }


# ----------------------------------------------------------------- design checks
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
        raise DataError(f"annotator(s) {silent} answered no item; remove them before fitting.")
    unused = [summary.classes[y] for y in np.flatnonzero(answers.sum(axis=0) == 0)]
    if unused:
        raise IdentificationError(
            f"class(es) {unused} are never answered by any annotator, so their confusion "
            "columns are zero and their prevalence is not identified from the annotations. "
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


def _warn(msg, out):
    out.append(msg)
    _warnings.warn(msg, IdentificationWarning, stacklevel=4)


def _check_fitted(fit, dominance_failures, orient, by_gold=False) -> list[str]:
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


# ----------------------------------------------------------------- estimator
def multiclass_dawid_skene_em(
    summary,
    *,
    pooled: bool = False,
    n_starts: int = 10,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    min_singular: float = 1e-3,
    orient=0,
    empty_groups: str = "error",
    random_state=0,
) -> ChannelFit:
    """Multiclass Dawid–Skene EM: shared confusion matrices, one prevalence per channel group.

    Parameters
    ----------
    summary : Summary
        Pattern counts per channel group (by default the predicted class); gold
        items in its gold tables enter with their known class (module docstring).
    pooled : bool, default False
        Pool the groups into one (the marginal Dawid–Skene model with a single
        prevalence vector, group ``"all"``).
    n_starts : int, default 10
        Starts in total: the majority-vote start plus ``n_starts - 1`` random ones.
    max_iter : int, default 1000
    tol : float, default 1e-9
        Stop when the mean log-likelihood changes by less than ``tol (1 + |previous|)``.
    clip : float, default 1e-6
        Floor of every probability after each M step (rows renormalised).
    min_singular : float, default 1e-3
        A start is accepted only if every confusion matrix has smallest singular
        value at least this (invertible); 0 accepts any.
    orient : int or str, default 0
        The designated annotator whose diagonal fixes the class labels.
    empty_groups : {"error", "drop"}
        A channel group with no annotated item has no identified prevalence:
        refuse, or fit the other groups and report the dropped ones.
    random_state : None, int or Generator, default 0

    Returns
    -------
    ChannelFit
        ``confusion[draw=1, annotator, true_class, answered_class]``,
        ``class_prevalence[draw=1, group, class]``, ``layout="multiclass"``;
        ``diagnostics`` holds every start's log-likelihood and smallest singular value.

    Raises
    ------
    IdentificationError, DataError
        Designs that cannot identify the channels (see :func:`check_multiclass_design`).
    FitError
        No acceptable start, or an empty group with ``empty_groups="error"``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> s = summarize_multiclass(simulate_multiclass(3000, 3, random_state=0))
    >>> fit = multiclass_dawid_skene_em(s)
    >>> fit.confusion.shape, fit.prevalence.dims
    ((1, 3, 3, 3), ('draw', 'group', 'class'))
    """
    if not isinstance(summary, Summary):
        raise ConfigError(
            f"multiclass_dawid_skene_em expects a Summary; got "
            f"{type(summary).__name__}. Build one with summarize_multiclass(data)."
        )
    check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip)
    if not isinstance(pooled, bool):
        raise ConfigError(f"pooled must be True or False; got {pooled!r}.")
    if empty_groups not in ("error", "drop"):
        raise ConfigError(f"empty_groups must be 'error' or 'drop'; got {empty_groups!r}.")
    j = orient_index(summary.annotators, orient)
    warnings = check_multiclass_design(summary, pooled=pooled)
    counts = summary.pattern_counts.values.astype(np.float64)
    groups = summary.groups
    if pooled:
        counts, groups = counts.sum(axis=0, keepdims=True), ["all"]
    group_n = counts.sum(axis=1)
    empty = group_n == 0
    if empty.any():
        names = [groups[i] for i in np.flatnonzero(empty)]
        if empty_groups == "error":
            raise FitError(
                f"channel group(s) {names} contain no annotated item, so their prevalence is not "
                "identified. Use empty_groups='drop', pooled=True, or other groups.",
                diagnostics={"empty_groups": names},
            )
        warnings.append(
            f"channel group(s) {names} contain no annotated item; dropped from the fit "
            "(their prevalence is not estimated)."
        )
    keep = ~empty
    res = multiclass_em_counts(
        counts[keep],
        summary.states,
        summary.n_classes,
        n_starts=n_starts,
        max_iter=max_iter,
        tol=tol,
        clip=clip,
        min_singular=min_singular,
        orient=j,
        random_state=random_state,
        gold=summary.gold_counts() if summary.has_gold else None,
    )
    fit = ChannelFit.from_confusion(
        res["confusion"],
        res["prevalence"],
        annotators=summary.annotators,
        classes=summary.classes,
        groups=[g for g, k_ in zip(groups, keep) if k_],
        group_counts=group_n[keep].round().astype(np.int64),
        method="dawid_skene_em",
        loglik=res["loglik"],
        converged=True,
        n_starts_accepted=res["n_accepted"],
        diagnostics={**res["diagnostics"], "pooled": pooled, "orient": summary.annotators[j]},
        warnings=warnings,
        group_edges=None if pooled else summary.group_edges,
    )
    by_gold = gold_identifies_multiclass(summary)[0]
    fit.warnings.extend(_check_fitted(fit, res["dominance_failures"], j, by_gold))
    return fit
