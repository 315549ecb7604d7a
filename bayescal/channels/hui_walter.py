"""Hui–Walter closed-form inverse: two annotators in two score groups.

From the group moments ``q1_g = E[A_1]``, ``q2_g = E[A_2]`` and
``q12_g = E[A_1 A_2]`` (pairwise complete when answers are missing):
``c_g = q12_g - q1_g q2_g``, ``beta = (q2_1 - q2_0) / (q1_1 - q1_0)``,
``h_g = c_g / beta + q1_g**2``, ``u = (h_1 - h_0) / (q1_1 - q1_0)``,
``v = u q1_0 - h_0``; ``a_1 < b_1`` are the roots of ``q**2 - u q + v``
(since ``h_g = q1_g (a_1 + b_1) - a_1 b_1``), then
``a_2 = tau + beta a_1``, ``b_2 = tau + beta b_1`` with ``tau = q2_0 - beta q1_0``
and ``mu_g = (q1_g - a_1) / delta_1``.
"""

from __future__ import annotations

import numpy as np

from bayescal.channels.identification import check_design, check_fitted, pair_group_moments
from bayescal.channels.orientation import orient_index
from bayescal.channels.result import ChannelFit
from bayescal.errors import FitError

__all__ = ["hui_walter", "hui_walter_moments"]

_EPS = 1e-12


def hui_walter_moments(q1, q2, q12):
    """The closed form on two-group moments (arrays of length 2); raises FitError.

    Examples
    --------
    >>> a1, b1, a2, b2, mu = 0.1, 0.8, 0.2, 0.9, np.array([0.3, 0.7])
    >>> q1, q2 = a1 + (b1 - a1) * mu, a2 + (b2 - a2) * mu
    >>> q12 = (1 - mu) * a1 * a2 + mu * b1 * b2
    >>> np.round(hui_walter_moments(q1, q2, q12)["a"], 10).tolist()
    [0.1, 0.2]
    """
    q1, q2, q12 = (np.asarray(x, dtype=np.float64) for x in (q1, q2, q12))
    diag = {"q1": q1.tolist(), "q2": q2.tolist(), "q12": q12.tolist()}
    dq1 = q1[1] - q1[0]
    if abs(dq1) < _EPS:
        raise FitError(
            "Hui-Walter failed: annotator 1's positive rate is the same in both groups "
            f"(difference {dq1:.3g}), so the groups carry no information about the channels. "
            "Choose groups whose prevalences differ (for example split at a score threshold).",
            diagnostics=diag,
        )
    beta = (q2[1] - q2[0]) / dq1
    diag["beta"] = float(beta)
    if abs(beta) < _EPS:
        raise FitError(
            "Hui-Walter failed: annotator 2's positive rate does not change between groups while "
            "annotator 1's does (beta = 0): annotator 2 looks uninformative.",
            diagnostics=diag,
        )
    c = q12 - q1 * q2
    h = c / beta + q1**2
    u = (h[1] - h[0]) / dq1
    v = u * q1[0] - h[0]
    disc = u * u - 4.0 * v
    diag.update(u=float(u), v=float(v), discriminant=float(disc))
    if disc <= 0:
        raise FitError(
            f"Hui-Walter failed: the quadratic for (a_1, b_1) has no two real roots "
            f"(discriminant {disc:.3g}); sampling noise or a model violation (dependent "
            "annotators). Use the constrained GMM, which stays feasible.",
            diagnostics=diag,
        )
    root = np.sqrt(disc)
    a1, b1 = (u - root) / 2.0, (u + root) / 2.0
    tau = q2[0] - beta * q1[0]
    a2, b2 = tau + beta * a1, tau + beta * b1
    mu = (q1 - a1) / (b1 - a1)
    a = np.array([a1, a2])
    b = np.array([b1, b2])
    diag.update(a=a.tolist(), b=b.tolist(), mu=mu.tolist())
    values = np.concatenate([a, b, mu])
    if not np.all(np.isfinite(values)) or values.min() < 0 or values.max() > 1:
        raise FitError(
            "Hui-Walter failed: the solution is not a set of probabilities "
            f"(a = {np.round(a, 4).tolist()}, b = {np.round(b, 4).tolist()}, "
            f"prevalences = {np.round(mu, 4).tolist()}). Use the constrained GMM.",
            diagnostics=diag,
        )
    if b2 - a2 <= 0:
        raise FitError(
            f"Hui-Walter failed: annotator 2 has a non-positive gap ({b2 - a2:.4f}) once "
            "annotator 1 is oriented; the two annotators disagree about which class is positive.",
            diagnostics=diag,
        )
    return {"a": a, "b": b, "mu": mu, "diagnostics": diag}


def hui_walter(summary, *, orient=0) -> ChannelFit:
    """Closed-form channels for two annotators in exactly two score groups.

    Parameters
    ----------
    summary : Summary
        Two annotators, two groups (for example ``groups=[0, t, 1]``).
    orient : int or str
        The designated annotator (``a < b``) takes the role of annotator 1.

    Raises
    ------
    IdentificationError
        Wrong number of annotators or groups.
    FitError
        No real roots, a vanishing denominator, or a solution outside [0, 1].
    """
    warnings = check_design(summary, "hui_walter")
    j = orient_index(summary.annotators, orient)
    other = 1 - j
    mom = pair_group_moments(summary, j, other)
    if not np.all(np.isfinite(mom["q12"])) or (mom["n12"] == 0).any():
        raise FitError(
            "Hui-Walter needs items answered by both annotators in each group; a group has none.",
            diagnostics={k_: np.asarray(v).tolist() for k_, v in mom.items()},
        )
    res = hui_walter_moments(mom["q1"], mom["q2"], mom["q12"])
    a = np.empty(2)
    b = np.empty(2)
    a[j], a[other] = res["a"]
    b[j], b[other] = res["b"]
    fit = ChannelFit.from_point(
        a,
        b,
        res["mu"],
        annotators=summary.annotators,
        groups=summary.groups,
        group_counts=summary.group_counts.values,
        method="hui_walter",
        diagnostics=res["diagnostics"],
        warnings=warnings,
        group_edges=summary.group_edges,
    )
    fit.warnings.extend(check_fitted(fit))
    return fit
