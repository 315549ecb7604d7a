"""Annotator aggregation weights for corrected labels.

The corrected label of annotator ``j`` is ``U_j = (A_j - a_j) / delta_j`` with
``E[U_j | Y, Z] = Y``; any convex combination keeps that property, and the
weights only change its variance (paper Sec. 4.4, App. C.6). Rules:

``"equal"``
    ``alpha_j = 1 / K``.
``"gap"``, ``"squared_gap"``
    ``alpha_j`` proportional to ``delta_j`` or ``delta_j**2``.
``"inverse_variance"``
    ``alpha_j`` proportional to ``1 / v_j`` with
    ``v_j = ((1 - mu) a_j (1 - a_j) + mu b_j (1 - b_j)) / delta_j**2``, the
    residual variance of ``U_j``. With known channels (``ChannelFit.known``, with
    the true ``mu``) this is the oracle IV rule; with estimated channels it is
    the plug-in IV rule (paper App. F.4).
``"shrunk_inverse_variance"``
    ``alpha = (1 - lam) alpha_IV + lam / K``. The paper's formula was lost; this
    convex shrinkage toward equal weights bounds how far noisy plug-in channels
    can push the weights. The default ``lam`` is :data:`DEFAULT_SHRINKAGE`.

Weights are computed per channel draw, so a posterior gives a posterior of weights.

For C classes (:func:`class_weights`, SPEC §3) the corrected one-hot target of annotator
``j`` is ``u_j = (T_j^T)^{-1} e_{A_j}``; ``"inverse_variance"`` weights by ``1 / v_j`` with
``v_j = sum_k sum_y rho_y (sum_a T_j[y, a] (T_j^{-1})[a, k]**2 - 1(y = k))``, the trace of
the covariance of ``u_j`` around ``e_Y`` (for C = 2 the binary inverse-variance rule).
Class-specific weights would break ``sum_k U[k] = 1``, which recalibration relies on.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayescal.dims import ANNOTATOR, DRAW
from bayescal.errors import ConfigError, DataError

__all__ = [
    "annotator_weights",
    "WEIGHT_RULES",
    "DEFAULT_SHRINKAGE",
    "check_weights",
    "CLASS_WEIGHT_RULES",
    "inverse_confusions",
    "class_weights",
]

WEIGHT_RULES = ("equal", "gap", "squared_gap", "inverse_variance", "shrunk_inverse_variance")

#: Default shrinkage toward equal weights, chosen by ``bayescal bench weights``
#: (toy inputs and curves, the paper's and a heterogeneous annotator panel, n =
#: 2000, 100 repetitions, channels by score-bin EM, NC-ECE error against the
#: population binned ECE): lam = 0.1 had the smallest worst-case MAE ratio to the
#: best lam of each cell (1.017; lam = 0 gave 1.023, equal weights 1.27). The
#: differences for lam <= 0.2 are within Monte Carlo error. See docs/results.md.
DEFAULT_SHRINKAGE = 0.1


def _gap_check(delta: np.ndarray, annotators) -> None:
    if np.any(~np.isfinite(delta)) or np.any(delta <= 0):
        bad = sorted({annotators[j] for j in np.argwhere(~(delta > 0))[:, 1]})
        raise DataError(
            f"channel gaps b - a must be positive to correct labels; annotator(s) {bad} have "
            f"gap <= 0 (min {np.nanmin(delta):.4g}). An uninformative or reversed annotator cannot "
            "be inverted: drop it, or fix the orientation of the channels."
        )


def annotator_weights(channels, rule="equal", *, lam: float = DEFAULT_SHRINKAGE) -> xr.DataArray:
    """Convex annotator weights per channel draw.

    Parameters
    ----------
    channels : ChannelFit
    rule : str or array-like of shape (n_annotators,)
        One of :data:`WEIGHT_RULES`, or explicit non-negative weights summing to one.
    lam : float in [0, 1]
        Shrinkage for ``"shrunk_inverse_variance"``.

    Returns
    -------
    xarray.DataArray of shape (draw, annotator), rows summing to one.

    Examples
    --------
    >>> from bayescal import ChannelFit
    >>> ch = ChannelFit.known([0.1, 0.3], [0.9, 0.7], mu=0.5)
    >>> annotator_weights(ch, "squared_gap").values.round(3).tolist()
    [[0.8, 0.2]]
    """
    a, b = channels.a.values, channels.b.values
    delta = b - a
    _gap_check(delta, channels.annotators)

    def variance():
        mu = channels.mu.values[:, None]
        return ((1 - mu) * a * (1 - a) + mu * b * (1 - b)) / delta**2

    gap_rules = {
        "gap": lambda: delta / delta.sum(axis=1, keepdims=True),
        "squared_gap": lambda: delta**2 / (delta**2).sum(axis=1, keepdims=True),
    }
    return _rule_weights(channels, rule, WEIGHT_RULES, lam, variance, gap_rules)


def _rule_weights(channels, rule, rules, lam, variance, other=None) -> xr.DataArray:
    """Weights (draw, annotator) of ``rule``: explicit, equal, one of ``other`` (name ->
    weights) or inverse ``variance()`` (S, K), shrunk toward equal by ``lam``."""
    conf = channels.confusion
    s, k = conf.shape[:2]
    if not isinstance(rule, str):
        w = np.broadcast_to(check_weights(rule, k), (s, k)).copy()
    elif rule == "equal":
        w = np.full((s, k), 1.0 / k)
    elif other and rule in other:
        w = other[rule]()
    elif rule in ("inverse_variance", "shrunk_inverse_variance"):
        inv = 1.0 / np.maximum(variance(), 1e-300)
        w = inv / inv.sum(axis=1, keepdims=True)
        if rule == "shrunk_inverse_variance":
            if not 0.0 <= lam <= 1.0:
                raise ConfigError(f"lam must be in [0, 1]; got {lam}.")
            w = (1 - lam) * w + lam / k
    else:
        raise ConfigError(f"unknown weight rule {rule!r}; choose one of {rules} or pass weights.")
    return xr.DataArray(
        w,
        dims=(DRAW, ANNOTATOR),
        coords={DRAW: conf[DRAW].values, ANNOTATOR: conf[ANNOTATOR].values},
        name="weights",
        attrs={"rule": rule if isinstance(rule, str) else "explicit"},
    )


def check_weights(weights, k: int) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (k,):
        raise DataError(f"explicit weights must have shape ({k},); got {w.shape}.")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise DataError("explicit weights must be finite and non-negative.")
    if abs(w.sum() - 1.0) > 1e-9:
        raise DataError(f"explicit weights must sum to one; they sum to {w.sum():.6g}.")
    return w


# ---------------------------------------------------------------- C classes
CLASS_WEIGHT_RULES = ("equal", "inverse_variance", "shrunk_inverse_variance")

#: A confusion matrix whose smallest singular value is below this is treated as singular.
_SINGULAR = 1e-10


def inverse_confusions(channels) -> np.ndarray:
    """``T_j^{-1}`` per draw and annotator, shape (S, K, C, C) (SPEC §3).

    Raises
    ------
    DataError
        When a confusion matrix is singular (smallest singular value below 1e-10):
        its answers cannot be corrected.
    """
    t = channels.confusion.values
    sv = np.linalg.svd(t, compute_uv=False).min(axis=2)  # (S, K)
    if (sv < _SINGULAR).any():
        s, j = np.argwhere(sv < _SINGULAR)[0]
        raise DataError(
            f"annotator {channels.annotators[j]!r} has a singular confusion matrix (draw {s}, "
            f"smallest singular value {sv[s, j]:.3g}): its answers cannot be corrected. An "
            "annotator who never uses some class, or answers independently of the class, carries "
            "no invertible information; drop it before computing NC-ECE."
        )
    return np.linalg.inv(t)


def class_weights(channels, rule="equal", *, lam: float = DEFAULT_SHRINKAGE) -> xr.DataArray:
    """Annotator weights per draw for the corrected one-hot targets (see module docstring).

    Parameters
    ----------
    channels : ChannelFit
    rule : str or array-like of shape (n_annotators,)
        One of :data:`CLASS_WEIGHT_RULES`, or explicit non-negative weights
        summing to one.
    lam : float in [0, 1]
        Shrinkage toward equal weights for ``"shrunk_inverse_variance"``.

    Returns
    -------
    xarray.DataArray of shape (draw, annotator)
        Rows sum to one.

    Examples
    --------
    >>> from bayescal.channels.result import ChannelFit
    >>> ch = ChannelFit.known_confusion([[[0.9, 0.1], [0.1, 0.9]], [[0.7, 0.3], [0.3, 0.7]]])
    >>> class_weights(ch, "inverse_variance").values.round(3).tolist()  # binary IV rule
    [[0.903, 0.097]]
    """

    def variance():
        t = channels.confusion.values
        inv = inverse_confusions(channels)
        rho = channels.marginal_prevalence.values  # (S, C)
        second = np.einsum("sjya,sja->sjy", t, (inv**2).sum(axis=3))  # E[|u_j|^2 | Y = y]
        return np.einsum("sy,sjy->sj", rho, second) - 1.0  # minus |e_y|^2 = 1

    return _rule_weights(channels, rule, CLASS_WEIGHT_RULES, lam, variance)
