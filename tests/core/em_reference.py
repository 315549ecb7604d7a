"""The slow, obvious per-item binary EM: the independent reference the pattern-count EM
(:mod:`bayescal.channels.em`) is tested against (moved here from the package in v0.3)."""

import numpy as np


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


def binary_em_run(counts, states, a0, b0, mu0, **options):
    """The one EM's kernel (:func:`bayescal.channels.em.em_run`) on binary channels:
    starts ``a0``, ``b0`` (R, K), ``mu0`` (R, L); returns ``a``, ``b``, ``mu`` too."""
    from bayescal.channels.em import em_run

    a0, b0, mu0 = (np.asarray(x, dtype=np.float64) for x in (a0, b0, mu0))
    t0 = np.stack([np.stack([1 - a0, a0], -1), np.stack([1 - b0, b0], -1)], axis=2)
    out = em_run(counts, states, t0, np.stack([1 - mu0, mu0], -1), **options)
    t = out["confusion"]
    return {**out, "a": t[:, :, 0, 1], "b": t[:, :, 1, 1], "mu": out["prevalence"][:, :, 1]}
