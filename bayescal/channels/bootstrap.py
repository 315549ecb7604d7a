"""Channel uncertainty for point EM fits: a Bayesian bootstrap of the channel sample.

A point estimator (Hanada & Futami, Sec. 4: marginal Dawid–Skene or joint
score-bin EM) gives one channel value, so an NC-ECE interval built on it knows
only the evaluation sample's noise; its calibration test then rejects too often
when the channels were estimated (``bayescal bench coverage``: level 0.13 to 0.17
at nominal 0.10 with split samples). :func:`bootstrap_channels` gives the
sampling spread of the same estimator as draws, which
:func:`bayescal.nc_ece_interval` takes like posterior draws (its ``full`` source).

Each draw re-weights the (group, pattern) cells of the channel sample by
``Dirichlet(counts)`` scaled to the sample size (Rubin's Bayesian bootstrap,
aggregated to cells exactly as in :mod:`bayescal.metrics.uncertainty`) and re-runs
the one EM from the point estimate, all draws at once
(:func:`bayescal.channels.em.em_run` on a leading draw axis), in chunks of draws
so memory stays bounded; this works for every number of classes. Draws whose EM
does not converge or fails the EM protocol's acceptance rule (two classes: a gap
``b - a >= min_gap``; more: every confusion with smallest singular value at least
``min_singular``) are left out and counted in the result's ``warnings``; more than
``max_failed`` of them is a ``FitError``.
"""

from __future__ import annotations

import numbers

import numpy as np

from bayescal._random import check_random_state
from bayescal.channels.em import em_run
from bayescal.channels.result import ChannelFit
from bayescal.errors import ConfigError, DataError, FitError

__all__ = ["bootstrap_channels", "BOOTSTRAP_METHODS"]

#: Point estimators whose sampling spread :func:`bootstrap_channels` reproduces.
BOOTSTRAP_METHODS = ("score_bin_em", "dawid_skene_em")

#: Largest number of float64 elements of one (draws, groups, patterns) working
#: array (2**21 = 16 MiB); draws are processed in chunks below it.
_CHUNK_ELEMENTS = 1 << 21


def _channel_counts(summary, fit) -> np.ndarray:
    """Pattern counts (L, P) of the groups the fit has prevalences for."""
    counts = summary.pattern_counts.values.astype(np.float64)
    want = [str(g) for g in fit.prevalence["group"].values]
    binary_default = "pooled" if fit.method == "dawid_skene_em" else "grouped"
    if fit.diagnostics.get("prevalence", binary_default) == "pooled":
        return counts.sum(axis=0, keepdims=True)
    have = summary.groups
    missing = [g for g in want if g not in have]
    if missing:
        raise DataError(
            f"the fit has prevalences for groups {missing} that the summary does not have; "
            "bootstrap the summary the channels were fitted on."
        )
    return counts[[have.index(g) for g in want]]


def _check(summary, fit, n_draws, max_failed) -> None:
    if not isinstance(fit, ChannelFit):
        raise ConfigError(f"fit must be a ChannelFit; got {type(fit).__name__}.")
    if fit.n_draws != 1:
        raise ConfigError(
            f"fit must be a point fit (one draw); got {fit.n_draws} draws. A posterior "
            "already carries channel uncertainty."
        )
    if fit.method not in BOOTSTRAP_METHODS:
        raise ConfigError(
            f"bootstrap_channels reruns EM; the fit's method is {fit.method!r}, not one of "
            f"{BOOTSTRAP_METHODS}. Use Bayesian channels (bayescal.fit_channels_bayes) for "
            "channel uncertainty with other designs."
        )
    if fit.annotators != summary.annotators:
        raise DataError(
            f"the fit is for annotators {fit.annotators} but the summary has "
            f"{summary.annotators}; they must match in name and order."
        )
    if isinstance(n_draws, bool) or not isinstance(n_draws, numbers.Integral) or n_draws < 2:
        raise ConfigError(f"n_draws must be a whole number of at least 2; got {n_draws!r}.")
    if not isinstance(max_failed, numbers.Real) or not 0 <= float(max_failed) < 1:
        raise ConfigError(f"max_failed must be a share in [0, 1); got {max_failed!r}.")


def bootstrap_channels(
    summary,
    fit,
    *,
    n_draws: int = 1000,
    max_iter: int = 1000,
    tol: float = 1e-9,
    min_gap: float = 1e-3,
    min_singular: float = 1e-3,
    max_failed: float = 0.01,
    random_state=0,
) -> ChannelFit:
    """Bootstrap draws of an EM channel fit (its sampling spread, as channel draws).

    Parameters
    ----------
    summary : Summary
        The channel sample the point fit was made on.
    fit : ChannelFit
        A point fit by ``"score_bin_em"`` or ``"dawid_skene_em"``.
    n_draws : int, default 1000
    max_iter, tol
        EM stopping rule of each draw (the paper's protocol, SPEC §1).
    min_gap : float, default 1e-3
        Two classes: smallest accepted gap ``b - a`` of a draw.
    min_singular : float, default 1e-3
        More classes: smallest accepted singular value of a draw's confusions.
    max_failed : float, default 0.01
        Largest share of draws that may fail before a :class:`~bayescal.errors.FitError`.
    random_state : None, int or Generator, default 0

    Returns
    -------
    ChannelFit
        ``n_draws`` draws (fewer by the failed ones, counted in ``warnings`` and
        ``diagnostics``), method ``"<method> (bootstrap)"``; pass it to
        :func:`bayescal.nc_ece_interval` with ``point_channels=fit``.

    Examples
    --------
    >>> from bayescal import fit_channels, summarize
    >>> from bayescal.simulate import simulate_toy
    >>> s = summarize(simulate_toy(2000, "shifted", random_state=0), groups=5)
    >>> fit = fit_channels(s, "score_bin_em")
    >>> boot = bootstrap_channels(s, fit, n_draws=200)
    >>> boot.n_draws, bool(0.005 < boot.a.std("draw").min() < 0.05)
    (200, True)
    """
    _check(summary, fit, n_draws, max_failed)
    rng = check_random_state(random_state)
    counts = _channel_counts(summary, fit)
    # gold items (known class) are resampled with the others: their cells are extra rows
    gold = summary.gold_counts().astype(np.float64)
    used = (counts.sum(axis=0) + gold.sum(axis=0)) > 0
    n_groups = counts.shape[0]
    counts = np.concatenate([counts, gold])[:, used]
    states = summary.states[used]
    flat = counts.ravel()
    nz = np.flatnonzero(flat)
    t0, rho0 = fit.confusion.values, fit.class_prevalence.values
    parts = []
    step = max(1, _CHUNK_ELEMENTS // max(1, flat.size * (t0.shape[-1] - 1)))
    for start in range(0, n_draws, step):
        r = min(step, n_draws - start)
        g = rng.standard_gamma(flat[nz], size=(r, nz.size))
        g *= flat.sum() / g.sum(axis=1, keepdims=True)
        boot = np.zeros((r, flat.size))
        boot[:, nz] = g
        boot = boot.reshape((r,) + counts.shape)
        parts.append(
            em_run(
                boot[:, :n_groups],
                states,
                np.repeat(t0, r, axis=0),
                np.repeat(rho0, r, axis=0),
                tol=tol,
                max_iter=max_iter,
                gold=boot[:, n_groups:],
            )
        )
    t, rho = (np.concatenate([p[key] for p in parts]) for key in ("confusion", "prevalence"))
    converged = np.concatenate([p["converged"] for p in parts])
    if fit.n_classes == 2:
        rule = f"lost a gap b - a >= {min_gap}"
        ok = converged & ((t[:, :, 1, 1] - t[:, :, 0, 1]).min(axis=1) >= min_gap)
    else:
        rule = f"lost an invertible confusion (smallest singular value >= {min_singular})"
        ok = converged & (np.linalg.svd(t, compute_uv=False).min(axis=(1, 2)) >= min_singular)
    failed = int((~ok).sum())
    if failed > max_failed * n_draws:
        raise FitError(
            f"{failed} of {n_draws} bootstrap draws of the {fit.method} fit did not converge or "
            f"{rule}: the channels are too weakly identified for a "
            "bootstrap. Use Bayesian channels, more items or more informative annotators.",
            diagnostics={"draws": n_draws, "failed": failed},
        )
    warnings = list(fit.warnings)
    if failed:
        warnings.append(
            f"{failed} of {n_draws} bootstrap draws did not converge or {rule} and were left out"
        )
    out = ChannelFit.from_confusion(
        t[ok],
        rho[ok],
        annotators=fit.annotators,
        classes=fit.classes,
        groups=[str(g) for g in fit.prevalence["group"].values],
        group_counts=fit.group_counts.values,
        method=f"{fit.method} (bootstrap)",
        warnings=warnings,
        diagnostics={"bootstrap_draws": n_draws, "failed": failed},
        group_edges=fit.group_edges,
    )
    return out.as_binary() if fit.layout == "binary" else out
