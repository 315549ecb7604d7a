"""Constrained generalised method of moments: two annotators, L >= 2 score groups.

Parameters ``(a_1, b_1, a_2, b_2, mu_1..mu_L)``; model moments per group
``q1_g = a_1 + delta_1 mu_g``, ``q2_g = a_2 + delta_2 mu_g``,
``q12_g = (1 - mu_g) a_1 a_2 + mu_g b_1 b_2``. The estimate minimises
``sum_g sum_m w_gm (hat q_gm - q_gm(theta))**2`` over a compact set: every
probability in [eps, 1 - eps] and both gaps at least ``min_gap`` (so the first
annotator orients the labels and the second agrees with it).

Weights: ``"diagonal"`` (default) uses ``w = n_gm / max(hat q (1 - hat q), 1/n_gm)``,
the inverse sampling variance of each moment (a diagonal approximation to the
efficient weight); ``"identity"`` uses 1.

The compact set is enforced by a smooth re-parameterisation with box bounds
(``b_j = a_j + min_gap + t_j (1 - eps - min_gap - a_j)``, ``t_j`` in [0, 1]) so a
bounded least-squares solver applies. Diagnostics: the objective value and the
smallest singular value of the moment Jacobian at the solution; a small value
means weak identification (groups with nearly equal prevalences).
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal._typing import RandomState
from bayescal.channels.hui_walter import hui_walter_moments
from bayescal.channels.identification import (
    _warn,
    check_design,
    check_fitted,
    pair_group_moments,
)
from bayescal.channels.orientation import orient_index
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError, FitError
from bayescal.summaries.summary import Summary

__all__ = ["constrained_gmm", "gmm_moments", "gmm_jacobian"]

#: Warn when (largest moment standard error) / (smallest Jacobian singular value)
#: exceeds this: a first-order bound on the parameter error scale.
WEAK_ID_SCALE = 0.05


def gmm_moments(theta: np.ndarray, n_groups: int) -> np.ndarray:
    """Model moments (3, L): rows q1, q2, q12, from natural parameters.

    Hanada & Futami, Sec. 4.2, Eq. (13), for each score group (App. D.4).
    """
    a1, b1, a2, b2 = theta[:4]
    mu = np.asarray(theta[4 : 4 + n_groups])
    return np.stack([a1 + (b1 - a1) * mu, a2 + (b2 - a2) * mu, (1 - mu) * a1 * a2 + mu * b1 * b2])


def gmm_jacobian(theta: np.ndarray, n_groups: int) -> np.ndarray:
    """Jacobian of the stacked moments (3L,) with respect to theta (4 + L,).

    Hanada & Futami, App. D.4 (the Jacobian whose smallest singular value diagnoses
    weak identification).
    """
    a1, b1, a2, b2 = theta[:4]
    mu = np.asarray(theta[4 : 4 + n_groups])
    L = n_groups
    jac = np.zeros((3, L, 4 + L))
    jac[0, :, 0], jac[0, :, 1] = 1 - mu, mu
    jac[1, :, 2], jac[1, :, 3] = 1 - mu, mu
    jac[2, :, 0], jac[2, :, 2] = (1 - mu) * a2, (1 - mu) * a1
    jac[2, :, 1], jac[2, :, 3] = mu * b2, mu * b1
    idx = np.arange(L)
    jac[0, idx, 4 + idx] = b1 - a1
    jac[1, idx, 4 + idx] = b2 - a2
    jac[2, idx, 4 + idx] = b1 * b2 - a1 * a2
    return jac.reshape(3 * L, 4 + L)


class _Param:
    """Box parameters <-> natural parameters."""

    def __init__(self, n_groups, eps, min_gap, monotone):
        self.L, self.eps, self.gap, self.monotone = n_groups, eps, min_gap, monotone

    def bounds(self):
        lo = [self.eps, 0.0, self.eps, 0.0] + [self.eps if not self.monotone else 0.0] * self.L
        hi = [1 - self.eps - self.gap, 1.0, 1 - self.eps - self.gap, 1.0] + [
            1 - self.eps if not self.monotone else 1.0
        ] * self.L
        if self.monotone:
            lo[4], hi[4] = self.eps, 1 - self.eps
        return np.array(lo), np.array(hi)

    def natural(self, x):
        eps, gap = self.eps, self.gap
        a1, t1, a2, t2 = x[:4]
        b1 = a1 + gap + t1 * (1 - eps - gap - a1)
        b2 = a2 + gap + t2 * (1 - eps - gap - a2)
        if self.monotone:
            mu = np.empty(self.L)
            mu[0] = x[4]
            for g in range(1, self.L):
                mu[g] = mu[g - 1] + x[4 + g] * (1 - eps - mu[g - 1])
        else:
            mu = np.asarray(x[4:])
        return np.concatenate([[a1, b1, a2, b2], mu])

    def box(self, theta):
        eps, gap = self.eps, self.gap
        a1, b1, a2, b2 = theta[:4]
        lo, hi = self.bounds()
        t1 = (b1 - a1 - gap) / max(1 - eps - gap - a1, 1e-12)
        t2 = (b2 - a2 - gap) / max(1 - eps - gap - a2, 1e-12)
        mu = np.asarray(theta[4:], dtype=np.float64)
        if self.monotone:
            mu = np.maximum.accumulate(mu)
            s = [mu[0]] + [
                (mu[g] - mu[g - 1]) / max(1 - eps - mu[g - 1], 1e-12) for g in range(1, self.L)
            ]
            rest = np.asarray(s)
        else:
            rest = mu
        return np.clip(np.concatenate([[a1, t1, a2, t2], rest]), lo, hi)


def constrained_gmm(
    summary: Summary,
    *,
    n_starts: int = 10,
    eps: float = 1e-6,
    min_gap: float = 1e-3,
    weights: str = "diagonal",
    monotone: bool = False,
    orient: int | str = 0,
    random_state: RandomState = 0,
) -> ChannelFit:
    """Two-annotator channels from group moments by constrained GMM.

    Hanada & Futami, Sec. 4.2 and App. D.4 (constrained GMM of two annotators' channels from
    score-group moments; SPEC §1 "Channel estimators"): minimise the weighted
    distance between the observed moments ``q1_g``, ``q2_g``, ``q12_g`` and the
    model's over the compact set described in the module docstring.

    Parameters
    ----------
    summary : Summary
        Two annotators, at least two non-empty score groups.
    n_starts : int, default 10
        Random starts (same ranges as EM); the Hui-Walter solution is added as a
        start when there are two groups and it exists.
    eps, min_gap : float
        The compact set: probabilities in [eps, 1 - eps], gaps >= min_gap.
    weights : {"diagonal", "identity"}
    monotone : bool, default False
        Constrain the prevalence to increase with the score group.
    orient : int or str
        The annotator that plays annotator 1 (its gap is positive).
    random_state : None, int or Generator, default 0
        Seeds the random starts.

    Returns
    -------
    ChannelFit
        One draw; ``diagnostics`` holds the objective, the smallest Jacobian
        singular value and the per-start objectives.

    Examples
    --------
    >>> from bayescal.simulate import simulate_gaussian
    >>> from bayescal import summarize
    >>> import numpy as np
    >>> t = 1 / (1 + np.exp(-0.3))
    >>> fit = constrained_gmm(summarize(simulate_gaussian(20000, random_state=0), groups=[0, t, 1]))
    >>> fit.method
    'gmm'
    """
    if weights not in ("diagonal", "identity"):
        raise ConfigError(f"weights must be 'diagonal' or 'identity'; got {weights!r}.")
    if not 0 < eps < 0.1 or not 0 <= min_gap < 0.5:
        raise ConfigError(
            f"need 0 < eps < 0.1 and 0 <= min_gap < 0.5; got eps={eps}, min_gap={min_gap}."
        )
    warnings = check_design(summary, "gmm")
    j = orient_index(summary.annotators, orient)
    mom = _group_moments(summary, j)
    L = summary.n_groups
    qhat = np.stack([mom["q1"], mom["q2"], mom["q12"]])
    ns = np.stack([mom["n1"], mom["n2"], mom["n12"]])
    sw = np.sqrt(_moment_weights(qhat, ns, weights))
    par = _Param(L, eps, min_gap, monotone)

    def resid(x):
        return (sw * (qhat - gmm_moments(par.natural(x), L))).ravel()

    starts = _starts(par, mom, n_starts, monotone, check_random_state(random_state))
    best, objs = _solve(resid, starts, par.bounds())
    theta = par.natural(best.x)
    diag = _diagnostics(theta, L, ns, objs, len(starts), best, weights)
    if best.status <= 0:
        raise FitError(f"GMM optimiser failed: {best.message}", diagnostics=diag)
    fit = _channel_fit(summary, theta, j, diag, warnings, converged=bool(best.status > 0))
    _flag_fit(fit, best, par, diag, min_gap)
    return fit


def _group_moments(summary: Summary, j: int) -> dict:
    """Per-group moments of annotator ``j`` and the other one; empty groups are refused."""
    mom = pair_group_moments(summary, j, 1 - j)
    empty = (mom["n1"] == 0) | (mom["n2"] == 0) | (mom["n12"] == 0)
    if empty.any():
        names = [g for g, e in zip(summary.groups, empty) if e]
        raise FitError(
            f"group(s) {names} lack items answered by each annotator and by both; their moments "
            "(and prevalences) are not estimable. Use fewer or wider groups.",
            diagnostics={"empty_groups": names},
        )
    return mom


def _moment_weights(qhat: np.ndarray, ns: np.ndarray, weights: str) -> np.ndarray:
    """``n / max(q (1 - q), 1 / n)``: the inverse sampling variance of each moment, or 1."""
    if weights == "diagonal":
        return ns / np.maximum(qhat * (1 - qhat), 1.0 / ns)
    return np.ones_like(qhat)


def _starts(par: _Param, mom: dict, n_starts: int, monotone: bool, rng) -> list[np.ndarray]:
    """Random starts in EM's ranges, plus the Hui-Walter solution for two groups."""
    L = par.L
    starts = []
    for _ in range(n_starts):
        theta = np.concatenate(
            [
                [
                    rng.uniform(0.04, 0.30),
                    rng.uniform(0.70, 0.96),
                    rng.uniform(0.04, 0.30),
                    rng.uniform(0.70, 0.96),
                ],
                np.sort(rng.uniform(0.1, 0.9, L)) if monotone else rng.uniform(0.1, 0.9, L),
            ]
        )
        starts.append(par.box(theta))
    if L == 2:
        try:
            hw = hui_walter_moments(mom["q1"], mom["q2"], mom["q12"])
        except FitError:
            # no closed-form solution for these moments: the random starts remain
            return starts
        theta = np.concatenate([[hw["a"][0], hw["b"][0], hw["a"][1], hw["b"][1]], hw["mu"]])
        starts.append(par.box(theta))
    return starts


def _solve(resid, starts, bounds):
    """Bounded least squares from every start; the best result and all objectives."""
    from scipy.optimize import least_squares  # weight: keeps `import bayescal` light

    results = [
        least_squares(
            resid,
            x0,
            bounds=bounds,
            method="trf",
            xtol=1e-12,
            ftol=1e-12,
            gtol=1e-12,
            max_nfev=2000,
        )
        for x0 in starts
    ]
    objs = np.array([2 * r.cost for r in results])
    return results[int(np.argmin(objs))], objs


def _diagnostics(theta, L: int, ns, objs, n_starts: int, best, weights: str) -> dict:
    """Objective, Jacobian conditioning and the first-order error scale at the solution."""
    sv = np.linalg.svd(gmm_jacobian(theta, L), compute_uv=False)
    se_max = float(np.sqrt(0.25 / ns.min()))
    return {
        "objective": float(objs.min()),
        "objective_df": int(3 * L - (4 + L)),
        "jacobian_min_singular_value": float(sv.min()),
        "moment_se_max": se_max,
        "error_scale": float(se_max / max(sv.min(), 1e-300)),
        "starts": n_starts,
        "start_objectives": objs.tolist(),
        "optimizer_status": int(best.status),
        "weights": weights,
    }


def _channel_fit(summary: Summary, theta, j: int, diag: dict, warnings, *, converged) -> ChannelFit:
    other = 1 - j
    a = np.empty(2)
    b = np.empty(2)
    a[j], b[j], a[other], b[other] = theta[:4]
    return ChannelFit.from_point(
        a,
        b,
        theta[4:],
        annotators=summary.annotators,
        groups=summary.groups,
        group_counts=summary.group_counts.values,
        method="gmm",
        diagnostics=diag,
        warnings=warnings,
        group_edges=summary.group_edges,
        converged=converged,
    )


def _flag_fit(fit: ChannelFit, best, par: _Param, diag: dict, min_gap: float) -> None:
    """Weak identification and gaps at their bound become warnings on the fit."""
    if diag["error_scale"] > WEAK_ID_SCALE:
        _warn(
            "weak identification: smallest singular value of the moment Jacobian is "
            f"{diag['jacobian_min_singular_value']:.4g}, so a moment error of "
            f"{diag['moment_se_max']:.4f} (one standard error in the smallest group) can move "
            f"the channels by about {diag['error_scale']:.3f}. "
            "Use groups whose prevalences differ more, or more data.",
            fit.warnings,
        )
    lo, hi = par.bounds()
    at_bound = np.isclose(best.x, lo) | np.isclose(best.x, hi)
    gap = fit.b.values[0] - fit.a.values[0]
    if at_bound[[1, 3]].any() and gap.min() <= min_gap * 1.01:
        fit.warnings.append(
            f"a gap sits at its lower bound {min_gap}: the data do not support an informative "
            "annotator there; treat the channels as unreliable."
        )
    fit.warnings.extend(check_fitted(fit))
