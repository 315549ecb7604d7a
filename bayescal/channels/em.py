"""Dawid–Skene EM on response-pattern counts: marginal and joint score-bin versions.

The latent class ``Y`` is binary; annotator ``j`` answers 1 with probability
``a_j`` when ``Y = 0`` and ``b_j`` when ``Y = 1``; answers are independent
given ``Y`` (and the score group). A missing answer contributes no factor.

Both estimators work on the binary view's ``pattern_counts[group, pattern]``
(:class:`~bayescal.summaries.summary.BinaryView`) over the P *observed*
patterns (at most one per item, and at most 3**K), so an EM iteration costs
O(R x L x P x K) for R starts and L groups, whatever the number of items.
All starts run together as one vectorised array program.

Protocol (paper, Appendix G.2; SPEC §1): 10 starts, at most 1000 iterations,
stop when the change in mean log-likelihood is below ``1e-9 (1 + |previous|)``,
probabilities clipped to [1e-6, 1 - 1e-6], initial ``a ~ U[0.04, 0.30]``,
``b ~ U[0.70, 0.96]``, prevalences ``~ U[0.1, 0.9]`` with the first start at the
group midpoints; orientation by one global label exchange so that the
designated annotator has ``a < b``; keep the highest likelihood among converged
starts whose oriented gaps are all at least ``1e-3``.

Gold items (items of known class, ``BinaryView.gold_counts()``, shape (2, P))
enter through ``P(pattern | Y = y)`` at their known class: their E-step
responsibility is fixed at ``y``, they add to the channel M-step and not to the
prevalence. Conditioning on the class rather than using ``P(Y = y) P(pattern |
y)`` keeps the likelihood valid when gold items were chosen by class or score
(non-randomly), as long as the choice does not depend on the answers given the
class. The mean log-likelihood is then

    (1/N) [ sum_g sum_s n_gs log p_g(s) + sum_y sum_s n^gold_ys log P(s | Y = y) ].

Gold items also fix the labelling (the likelihood is no longer symmetric under
the label exchange), so with gold items no exchange is applied.
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.channels.identification import check_design, check_fitted
from bayescal.channels.moments import moment_inverse_arrays
from bayescal.channels.options import check_em_options
from bayescal.channels.orientation import exchange_binary_labels, orient_index
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError, FitError

__all__ = ["dawid_skene_em", "score_bin_em", "em_fit_counts", "dawid_skene_em_items", "FALLBACK"]

#: The paper's fixed fallback: used only when the caller asks (``fallback="fixed"``).
FALLBACK = {"a": 0.2, "b": 0.8, "prevalence": 0.5}


def indicators(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indicators of "answered 1" and "answered 0" of each pattern (states 0, 1, 2 = missing)."""
    return (states == 1).astype(np.float64), (states == 0).astype(np.float64)


def em_run(counts, i1, i0, a0, b0, mu0, *, tol=1e-9, max_iter=1000, clip=1e-6, gold=None):
    """Run EM from R starts at once.

    Parameters
    ----------
    counts : ndarray (L, P) or (R, L, P)
        Pattern counts per group (float); with a leading axis, one data set per
        start (the bootstrap of :mod:`bayescal.channels.bootstrap`).
    i1, i0 : ndarray (P, K)
        Indicators of "answered 1" and "answered 0" for each pattern.
    a0, b0 : ndarray (R, K); mu0 : ndarray (R, L)
        Starting values.
    gold : ndarray (2, P) or (R, 2, P), optional
        Gold items per known class and pattern (module docstring).

    Returns
    -------
    dict with a, b, mu (final), mean_loglik (R,), converged (R,), n_iter (R,)
    """
    gold = np.zeros((2, counts.shape[-1])) if gold is None else np.asarray(gold, np.float64)
    g0, g1 = gold[..., 0, :], gold[..., 1, :]  # (P,) or (R, P)
    n = counts.sum(axis=(-2, -1)) + gold.sum(axis=(-2, -1))
    group_n = counts.sum(axis=-1)
    a, b, mu = a0.copy(), b0.copy(), mu0.copy()
    r = a.shape[0]
    prev = np.full(r, np.nan)
    ll = np.full(r, -np.inf)
    converged = np.zeros(r, dtype=bool)
    active = np.ones(r, dtype=bool)
    n_iter = np.zeros(r, dtype=np.int64)
    answered = i1 + i0
    lo, hi = clip, 1.0 - clip
    for it in range(max_iter + 1):
        lp0 = np.log(a) @ i1.T + np.log1p(-a) @ i0.T  # (R, P)
        lp1 = np.log(b) @ i1.T + np.log1p(-b) @ i0.T
        num1 = np.log(mu)[:, :, None] + lp1[:, None, :]  # (R, L, P)
        num0 = np.log1p(-mu)[:, :, None] + lp0[:, None, :]
        top = np.maximum(num0, num1)
        lse = top + np.log(np.exp(num0 - top) + np.exp(num1 - top))
        ll_gold = (g0 * lp0).sum(axis=-1) + (g1 * lp1).sum(axis=-1)
        ll_new = ((counts * lse).sum(axis=(1, 2)) + ll_gold) / n
        ll = np.where(active, ll_new, ll)
        done = active & (np.abs(ll_new - prev) < tol * (1.0 + np.abs(prev)))
        converged |= done
        active &= ~done
        if not active.any() or it == max_iter:
            break
        prev = np.where(active, ll_new, prev)
        n_iter += active
        gamma = np.exp(num1 - lse)
        cg = counts * gamma  # (R, L, P)
        c0 = counts - cg
        mu_new = cg.sum(axis=2) / group_n
        w1 = cg.sum(axis=1) + g1  # (R, P): gold items at their known class
        w0 = c0.sum(axis=1) + g0
        b_new = (w1 @ i1) / np.maximum(w1 @ answered, 1e-300)
        a_new = (w0 @ i1) / np.maximum(w0 @ answered, 1e-300)
        sel = active[:, None]
        a = np.where(sel, np.clip(a_new, lo, hi), a)
        b = np.where(sel, np.clip(b_new, lo, hi), b)
        mu = np.where(sel, np.clip(mu_new, lo, hi), mu)
    return {"a": a, "b": b, "mu": mu, "mean_loglik": ll, "converged": converged, "n_iter": n_iter}


def _starts(rng, n_starts, k, group_mid):
    a0 = rng.uniform(0.04, 0.30, size=(n_starts, k))
    b0 = rng.uniform(0.70, 0.96, size=(n_starts, k))
    mu0 = rng.uniform(0.1, 0.9, size=(n_starts, group_mid.size))
    mu0[0] = group_mid
    return a0, b0, mu0


def em_fit_counts(
    counts,
    *,
    states,
    group_mid,
    n_starts=10,
    max_iter=1000,
    tol=1e-9,
    clip=1e-6,
    min_gap=1e-3,
    orient=0,
    random_state=0,
    extra_starts=None,
    gold=None,
):
    """EM on plain arrays; returns the best accepted start or raises FitError.

    ``counts`` has shape (L, P) over the patterns ``states`` (P, K) (0, 1, 2 =
    missing); ``group_mid`` (L,) are the first start's prevalences;
    ``extra_starts`` is an optional (a, b, mu) triple of arrays with leading start
    dimension, appended to the random starts; ``gold`` (2, P) holds gold items per
    known class (module docstring; None or all zero: none).
    """
    check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip, min_gap=min_gap)
    rng = check_random_state(random_state)
    counts = np.asarray(counts, dtype=np.float64)
    gold = np.zeros((2, counts.shape[1])) if gold is None else np.asarray(gold, np.float64)
    has_gold = bool(gold.sum() > 0)
    states = np.asarray(states)
    k = states.shape[1]
    i1, i0 = indicators(states)
    used = (counts.sum(axis=0) + gold.sum(axis=0)) > 0  # patterns seen: the others add nothing
    counts_u, i1_u, i0_u = counts[:, used], i1[used], i0[used]
    a0, b0, mu0 = _starts(rng, n_starts, k, np.asarray(group_mid, dtype=np.float64))
    if extra_starts is not None:
        ea, eb, emu = (np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in extra_starts)
        a0, b0, mu0 = np.vstack([a0, ea]), np.vstack([b0, eb]), np.vstack([mu0, emu])
    out = em_run(
        counts_u, i1_u, i0_u, a0, b0, mu0, tol=tol, max_iter=max_iter, clip=clip, gold=gold[:, used]
    )
    if has_gold:  # gold items fix the labelling: an exchange would change the likelihood
        a, b, mu = out["a"], out["b"], out["mu"]
    else:
        a, b, mu = exchange_binary_labels(out["a"], out["b"], out["mu"], orient)
    gaps = (b - a).min(axis=1)
    finite = np.isfinite(out["mean_loglik"]) & np.all(np.isfinite(a), axis=1)
    accepted = out["converged"] & (gaps >= min_gap) & finite
    n_total = counts.sum() + gold.sum()
    diag = {
        "starts": int(a0.shape[0]),
        "starts_converged": int(out["converged"].sum()),
        "starts_accepted": int(accepted.sum()),
        "start_logliks": (out["mean_loglik"] * n_total).tolist(),
        "start_min_gaps": gaps.tolist(),
        "iterations": out["n_iter"].tolist(),
        "gold_items": [int(x) for x in gold.sum(axis=1)],
    }
    if not accepted.any():
        worst = int(np.argmin((b - a)[np.argmax(out["mean_loglik"])]))
        raise FitError(
            f"EM found no acceptable start: {diag['starts_converged']} of {diag['starts']} starts "
            f"converged and none had every oriented gap b - a >= {min_gap} (the smallest gap at "
            f"the best likelihood belongs to annotator index {worst}). An annotator whose answers "
            "do not depend on the class (for example one who always answers 1) carries no "
            "information: drop it, or raise max_iter if starts did not converge.",
            diagnostics=diag,
        )
    best = int(np.argmax(np.where(accepted, out["mean_loglik"], -np.inf)))
    return {
        "a": a[best],
        "b": b[best],
        "mu": mu[best],
        "loglik": float(out["mean_loglik"][best] * n_total),
        "n_iter": int(out["n_iter"][best]),
        "n_accepted": int(accepted.sum()),
        "diagnostics": diag,
    }


def _group_midpoints(summary) -> np.ndarray:
    edges = summary.group_edges
    if edges is None:
        return np.full(summary.n_groups, 0.5)
    return (edges[:-1] + edges[1:]) / 2


def _fixed_fallback(summary, groups, group_counts, method, reason, warnings):
    k = summary.n_annotators
    return ChannelFit.from_point(
        np.full(k, FALLBACK["a"]),
        np.full(k, FALLBACK["b"]),
        np.full(len(groups), FALLBACK["prevalence"]),
        annotators=summary.annotators,
        groups=groups,
        group_counts=group_counts,
        method=method,
        status="fallback",
        converged=False,
        n_starts_accepted=0,
        warnings=warnings
        + [f"fixed fallback channels (a=0.2, b=0.8, prevalence 0.5) used: {reason}"],
        diagnostics={"fallback_reason": reason},
        group_edges=summary.group_edges,
    )


def score_bin_em(
    summary,
    *,
    n_starts: int = 10,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    min_gap: float = 1e-3,
    orient=0,
    fallback: str | None = None,
    empty_groups: str = "error",
    random_state=0,
) -> ChannelFit:
    """Joint score-bin EM: shared channels, one prevalence per score group.

    Parameters
    ----------
    summary : Summary
        Pattern counts per score group.
    n_starts, max_iter, tol, clip, min_gap
        The paper's protocol (see module docstring); change only with reason.
    orient : int or str, default 0
        The designated annotator whose ``a < b`` fixes the label orientation.
    fallback : {None, "fixed"}
        ``"fixed"`` returns the paper's fixed fallback (flagged ``status="fallback"``)
        instead of raising when no start is acceptable or a group is empty.
    empty_groups : {"error", "drop"}
        A group with no annotated item has no identified prevalence. ``"error"``
        follows the paper (failure); ``"drop"`` fits the other groups and reports
        the dropped ones in ``warnings``.
    random_state : int or Generator, default 0

    Returns
    -------
    ChannelFit

    Raises
    ------
    FitError
        No acceptable start, or an empty group (unless ``fallback`` or ``empty_groups`` says
        otherwise).

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal import summarize
    >>> fit = score_bin_em(summarize(simulate_toy(4000, random_state=1), groups=5))
    >>> fit.status, fit.a.sizes["draw"]
    ('ok', 1)
    """
    check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip, min_gap=min_gap)
    if fallback not in (None, "fixed"):
        raise ConfigError(f"fallback must be None or 'fixed'; got {fallback!r}.")
    if empty_groups not in ("error", "drop"):
        raise ConfigError(f"empty_groups must be 'error' or 'drop'; got {empty_groups!r}.")
    warnings = check_design(summary, "score_bin_em")
    j = orient_index(summary.annotators, orient)
    view = summary.binary
    counts = view.pattern_counts
    group_n = counts.sum(axis=1)
    groups = summary.groups
    mid = _group_midpoints(summary)
    empty = group_n == 0
    if empty.any():
        names = [groups[i] for i in np.flatnonzero(empty)]
        reason = f"score group(s) {names} contain no annotated item"
        if empty_groups == "drop":
            warnings.append(f"{reason}; dropped from the fit (their prevalence is not estimated).")
        elif fallback == "fixed":
            return _fixed_fallback(summary, groups, group_n, "score_bin_em", reason, warnings)
        else:
            raise FitError(
                f"{reason}: their prevalence is not identified. Use fewer or wider groups, "
                "empty_groups='drop', or fallback='fixed'.",
                diagnostics={"empty_groups": names},
            )
    keep = ~empty
    try:
        res = em_fit_counts(
            counts[keep],
            states=view.states,
            group_mid=mid[keep],
            n_starts=n_starts,
            max_iter=max_iter,
            tol=tol,
            clip=clip,
            min_gap=min_gap,
            orient=j,
            random_state=random_state,
            gold=view.gold_counts(),
        )
    except FitError as exc:
        if fallback == "fixed":
            return _fixed_fallback(summary, groups, group_n, "score_bin_em", str(exc), warnings)
        raise
    kept_groups = [g for g, k_ in zip(groups, keep) if k_]
    fit = ChannelFit.from_point(
        res["a"],
        res["b"],
        res["mu"],
        annotators=summary.annotators,
        groups=kept_groups,
        group_counts=group_n[keep],
        method="score_bin_em",
        loglik=res["loglik"],
        converged=True,
        n_starts_accepted=res["n_accepted"],
        diagnostics=res["diagnostics"],
        warnings=warnings,
        group_edges=summary.group_edges,
    )
    fit.warnings.extend(check_fitted(fit))
    return fit


def dawid_skene_em(
    summary,
    *,
    n_starts: int = 10,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    min_gap: float = 1e-3,
    orient=0,
    use_moment_start: bool = True,
    random_state=0,
) -> ChannelFit:
    """Marginal Dawid–Skene EM (K >= 3): one prevalence, score groups pooled.

    Same protocol as :func:`score_bin_em` with a single group; when the
    three-annotator moment inverse succeeds it is added as an extra start.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal import summarize
    >>> fit = dawid_skene_em(summarize(simulate_toy(4000, random_state=1)))
    >>> list(fit.prevalence["group"].values)
    ['all']
    """
    check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip, min_gap=min_gap)
    if not isinstance(use_moment_start, bool):
        raise ConfigError(f"use_moment_start must be True or False; got {use_moment_start!r}.")
    warnings = check_design(summary, "dawid_skene_em")
    j = orient_index(summary.annotators, orient)
    view = summary.binary
    counts = view.pattern_counts.sum(axis=0, keepdims=True)
    extra = None
    if use_moment_start and summary.n_annotators >= 3:
        try:
            m = moment_inverse_arrays(counts[0], view.states, orient=j)
            extra = (
                np.clip(m["a"], 0.01, 0.99)[None],
                np.clip(m["b"], 0.01, 0.99)[None],
                np.clip([[m["mu"]]], 0.01, 0.99),
            )
        except FitError:
            extra = None
    res = em_fit_counts(
        counts,
        states=view.states,
        group_mid=np.array([0.5]),
        n_starts=n_starts,
        max_iter=max_iter,
        tol=tol,
        clip=clip,
        min_gap=min_gap,
        orient=j,
        random_state=random_state,
        extra_starts=extra,
        gold=view.gold_counts(),
    )
    fit = ChannelFit.from_point(
        res["a"],
        res["b"],
        res["mu"],
        annotators=summary.annotators,
        groups=["all"],
        group_counts=[int(counts.sum())],
        method="dawid_skene_em",
        loglik=res["loglik"],
        converged=True,
        n_starts_accepted=res["n_accepted"],
        diagnostics=res["diagnostics"],
        warnings=warnings,
    )
    fit.warnings.extend(check_fitted(fit))
    return fit


def dawid_skene_em_items(
    labels,
    *,
    group=None,
    a0,
    b0,
    mu0,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    gold=None,
):
    """Per-item EM from one start: the slow, obvious implementation.

    Works on the item rows rather than on pattern counts: the independent
    implementation the pattern-count EM is tested against.

    Parameters
    ----------
    labels : ndarray (n_items, K), NaN = missing
    group : ndarray (n_items,) of ints in 0..L-1, optional
    a0, b0 : ndarray (K,); mu0 : ndarray (L,)
    gold : ndarray (n_items,), optional
        Known class 0 / 1 of gold items, NaN for the others: a gold item's
        responsibility is its class, and only unknown items enter the prevalence.

    Returns
    -------
    dict with a, b, mu, loglik, converged, n_iter (no orientation applied).
    """
    lab = np.asarray(labels, dtype=np.float64)
    n, k = lab.shape
    g = np.zeros(n, dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
    ans = ~np.isnan(lab)
    x = np.where(ans, lab, 0.0)
    keep = ans.any(axis=1)
    known = np.full(n, np.nan) if gold is None else np.asarray(gold, dtype=np.float64)
    x, ans, g, known = x[keep], ans[keep], g[keep], known[keep]
    is_gold = ~np.isnan(known)
    ug = g[~is_gold]
    a, b = np.array(a0, dtype=np.float64), np.array(b0, dtype=np.float64)
    mu = np.array(mu0, dtype=np.float64)
    prev = np.nan
    converged = False
    it = 0
    for it in range(max_iter + 1):
        l0 = (ans * (x * np.log(a) + (1 - x) * np.log1p(-a))).sum(axis=1)
        l1 = (ans * (x * np.log(b) + (1 - x) * np.log1p(-b))).sum(axis=1)
        n1 = np.log(mu[g]) + l1
        n0 = np.log1p(-mu[g]) + l0
        # an item's log-likelihood: marginal for unknown items, P(answers | Y = y) for gold
        lse = np.where(is_gold, np.where(known == 1, l1, l0), np.logaddexp(n0, n1))
        ll = lse.mean()
        if abs(ll - prev) < tol * (1 + abs(prev)):
            converged = True
            break
        if it == max_iter:
            break
        prev = ll
        gam = np.where(is_gold, known, np.exp(n1 - np.logaddexp(n0, n1)))
        mu = np.clip(
            np.bincount(ug, weights=gam[~is_gold], minlength=mu.size)
            / np.bincount(ug, minlength=mu.size),
            clip,
            1 - clip,
        )
        b = np.clip((gam[:, None] * ans * x).sum(0) / (gam[:, None] * ans).sum(0), clip, 1 - clip)
        a = np.clip(
            ((1 - gam)[:, None] * ans * x).sum(0) / ((1 - gam)[:, None] * ans).sum(0),
            clip,
            1 - clip,
        )
    return {
        "a": a,
        "b": b,
        "mu": mu,
        "loglik": float(lse.sum()),
        "converged": converged,
        "n_iter": it,
    }
