"""Three-annotator moment inverse (K >= 3, no groups needed).

With means ``m_j``, covariances ``C_jk = mu (1 - mu) delta_j delta_k`` and third
central moment ``T = mu (1 - mu) (1 - 2 mu) delta_1 delta_2 delta_3`` the
channels follow in closed form (SPEC §1), exact for any prevalence including
1/2. Moments are pairwise (triple-wise) complete: each is computed on the items
where the annotators involved all answered, so missing answers are handled
when they are missing independently of the class.
"""

from __future__ import annotations

import numpy as np

from bayescal.channels.identification import check_design, check_fitted
from bayescal.channels.orientation import orient_index
from bayescal.channels.result import ChannelFit
from bayescal.errors import FitError

__all__ = ["moment_inverse", "moment_inverse_arrays", "moments_from_counts"]


def moments_from_counts(counts, states, idx):
    """Complete-case mean, covariance or third central moment of annotators ``idx``.

    Central moments use the means of the same complete-case subset.
    """
    sel = np.all(states[:, idx] != 2, axis=1)
    w = counts * sel
    n = w.sum()
    if n <= 0:
        return np.nan, 0.0
    x = (states[:, idx] == 1).astype(np.float64)
    means = (w @ x) / n
    prod = np.prod(x - means, axis=1)
    return float(w @ prod / n) if len(idx) > 1 else float(means[0]), float(n)


def moment_inverse_arrays(counts, states, *, orient=0):
    """Closed-form channels from pattern counts (P,) pooled over groups, on the patterns
    ``states`` (P, K) (0, 1, 2 = missing)."""
    counts = np.asarray(counts, dtype=np.float64)
    states = np.asarray(states)
    k = states.shape[1]
    others = [j for j in range(k) if j != orient]
    i1, i2, i3 = orient, others[0], others[1]
    m = np.array([moments_from_counts(counts, states, [j])[0] for j in range(k)])
    # only the covariances with the designated annotator and C23 enter the inverse: K
    # moments, not all K (K - 1) / 2 pairs (K = 1,000 annotators took 16 s)
    c = {j: moments_from_counts(counts, states, [i1, j])[0] for j in others}
    t3, n3 = moments_from_counts(counts, states, [i1, i2, i3])
    c12, c13 = c[i2], c[i3]
    c23 = moments_from_counts(counts, states, [i2, i3])[0]
    diag = {"C12": c12, "C13": c13, "C23": c23, "T": t3, "n_triple": n3}
    if not np.all(np.isfinite([c12, c13, c23, t3])):
        raise FitError(
            "moment inverse needs items answered by all of the first three annotators (after the "
            "designated one); none were found.",
            diagnostics=diag,
        )
    prod = c12 * c13 * c23
    if prod <= 0:
        raise FitError(
            f"moment inverse failed: the product of the three covariances is {prod:.3g} <= 0, "
            "which the class-conditional model cannot produce (an annotator is uninformative, "
            "the sample is too small, or answers are dependent given the class). Use EM.",
            diagnostics=diag,
        )
    # With annotator i1 oriented (delta > 0), sign(delta_i2) = sign(C12),
    # sign(delta_i3) = sign(C13);
    # sqrt(C12 C13 C23) = s^(3/2) |d1 d2 d3|, so t carries the sign of d1 d2 d3.
    t = t3 / np.sqrt(prod) * np.sign(c12 * c13)
    mu = 0.5 * (1.0 - t / np.sqrt(4.0 + t * t))
    s = mu * (1.0 - mu)
    diag.update(t=float(t), mu=float(mu))
    if not s > 1e-12:
        raise FitError(
            f"moment inverse failed: the implied prevalence {mu:.3g} is at the boundary (the third "
            "moment dominates the covariances), so the gaps cannot be recovered. Use EM.",
            diagnostics=diag,
        )
    d1 = np.sqrt(c12 * c13 / (c23 * s))
    delta = np.empty(k)
    delta[i1] = d1
    for j in others:
        delta[j] = c[j] / (s * d1)
    a = m - delta * mu
    b = a + delta
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise FitError("moment inverse produced non-finite channels.", diagnostics=diag)
    return {"a": a, "b": b, "mu": float(mu), "diagnostics": diag}


def moment_inverse(summary, *, orient=0) -> ChannelFit:
    """Channels of K >= 3 annotators from first, second and third moments.

    Parameters
    ----------
    summary : Summary
    orient : int or str
        Designated annotator (``a < b``); it plays the role of annotator 1.

    Raises
    ------
    FitError
        When a channel falls outside [0, 1] (sampling noise at small n, or a
        model violation): such values are not probabilities.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal import summarize
    >>> fit = moment_inverse(summarize(simulate_toy(20000, random_state=3)))
    >>> bool(abs(fit.a.values[0, 0] - 0.08) < 0.03)
    True
    """
    j = orient_index(summary.annotators, orient)
    warnings = check_design(summary, "moments")
    view = summary.binary
    counts = view.pattern_counts.sum(axis=0)
    res = moment_inverse_arrays(counts, view.states, orient=j)
    a, b = res["a"], res["b"]
    bad = (a < 0) | (a > 1) | (b < 0) | (b > 1)
    if bad.any():
        names = [summary.annotators[i] for i in np.flatnonzero(bad)]
        raise FitError(
            f"moment inverse gave channels outside [0, 1] for {names} (a = "
            f"{np.round(a, 4).tolist()}, b = {np.round(b, 4).tolist()}): sampling "
            "noise or model violation. Use EM, which stays inside the unit box.",
            diagnostics=res["diagnostics"],
        )
    if (b - a).min() < 1e-3:
        names = [summary.annotators[i] for i in np.flatnonzero(b - a < 1e-3)]
        raise FitError(
            f"moment inverse gave annotator(s) {names} a gap b - a below 1e-3 once "
            f"{summary.annotators[j]!r} is oriented (gaps {np.round(b - a, 4).tolist()}): they "
            "look uninformative or reversed. Drop them, or check the orientation annotator.",
            diagnostics=res["diagnostics"],
        )
    fit = ChannelFit.from_point(
        a,
        b,
        [res["mu"]],
        annotators=summary.annotators,
        groups=["all"],
        group_counts=[int(counts.sum())],
        method="moments",
        diagnostics=res["diagnostics"],
        warnings=warnings,
    )
    fit.warnings.extend(check_fitted(fit))
    return fit
