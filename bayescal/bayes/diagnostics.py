"""Checks run after sampling, turned into warnings that say what to do.

- **Sampler checks** (:func:`sampling_checks`): R-hat, bulk and tail ESS,
  divergent transitions, E-BFMI. Thresholds follow Vehtari et al. (2021) and
  the Stan/ArviZ defaults: R-hat <= 1.01, ESS >= 100 per chain, no divergences,
  E-BFMI >= 0.3.
- **Posterior predictive check of the pattern counts** (:func:`pattern_ppc`):
  for each score group, the chi-square discrepancy
  ``X(y, theta) = sum_s (y_s - E_s)^2 / E_s`` with ``E_s = N_{g, mask(s)} p_g(s | theta)``
  is computed for the observed counts and for counts replicated from the
  same draw; the tail probability ``P(X(y_rep, theta) >= X(y, theta) | y)``
  is small when the observed patterns are further from the model than data
  the model generates. For each pair of annotators, the number of items on
  which both answered and agreed is compared with its replicates (two-sided
  tail probability): conditionally dependent annotators (paper, App. D.7; for
  example two who share a rule or see each other's answers) agree more than
  the latent-class model allows. With four or more annotators the model may
  absorb a dependent pair as two very accurate annotators, and the misfit then
  shows on *other* pairs, so a flagged pair says that the independence
  assumption fails, not necessarily which annotators share information. Posterior
  predictive tail probabilities are conservative (they concentrate near 0.5
  under a correct model), so a small one is meaningful. Where the model is
  saturated (Hui-Walter with two groups; the marginal model with three
  annotators on pooled counts) the check has no power; this is stated in
  the result.
"""

from __future__ import annotations

import itertools
import math
import warnings as _warnings

import numpy as np
import xarray as xr

from bayescal.bayes.models import pattern_logp
from bayescal.dims import ANNOTATOR, CHAIN, DRAW, GROUP, PATTERN
from bayescal.errors import ConvergenceWarning, DiagnosticWarning

__all__ = [
    "sampling_checks",
    "pattern_ppc",
    "warning_kind",
    "THRESHOLDS",
    "MIN_DRAWS",
    "PPC_FAILED",
]

THRESHOLDS = {"rhat_max": 1.01, "ess_per_chain_min": 100.0, "bfmi_min": 0.3, "ppc_alpha": 0.05}
#: Fewest draws per chain for R-hat and ESS (rank-normalised split R-hat halves each chain;
#: ArviZ returns NaN below 4) and for E-BFMI (a variance of energy differences needs 2).
MIN_DRAWS = {"rhat": 4, "ess": 4, "bfmi": 2}
_PARAMS = ("a", "b", "confusion", "prevalence")
#: How the sampler checks' warnings begin (``sampling_checks``), and the predictive check's.
_CONVERGENCE_STARTS = ("R-hat", "bulk ESS", "tail ESS", "E-BFMI")
PPC_FAILED = "posterior predictive check of the pattern counts failed"


def warning_kind(message: str) -> str:
    """What a Bayesian fit's warning is about, for readers that word its consequence.

    ``"convergence"`` (R-hat, ESS, divergent transitions, E-BFMI: the draws describe the
    posterior imprecisely), ``"predictive-check"`` (the pattern counts misfit: dependent
    annotators or a wrong channel model), ``"empty-groups"`` (channel groups without an
    annotated item: their prevalence is the prior and enters no item's estimate) or
    ``"other"``.

    Examples
    --------
    >>> warning_kind("tail ESS is only 179 at a[r1] (below 200 = 100 per chain): ...")
    'convergence'
    >>> warning_kind(PPC_FAILED + " in score group(s) ['g1']")
    'predictive-check'
    """
    if message.startswith(_CONVERGENCE_STARTS) or "divergent transition" in message:
        return "convergence"
    if message.startswith(PPC_FAILED):
        return "predictive-check"
    if "contain no annotated item" in message:
        return "empty-groups"
    return "other"


def _worst(da: xr.DataArray, fn) -> tuple[float, str]:
    """Worst value of a per-parameter statistic and the label of the entry that has it."""
    vals = np.asarray(da.values, dtype=np.float64).ravel()
    if vals.size == 0 or np.all(np.isnan(vals)):
        return float("nan"), ""
    i = int(fn(np.where(np.isnan(vals), -np.inf if fn is np.nanargmax else np.inf, vals)))
    idx = np.unravel_index(i, da.shape)
    label = ",".join(str(da[d].values[k]) for d, k in zip(da.dims, idx))
    return float(vals[i]), f"{da.name}[{label}]" if label else str(da.name)


# --------------------------------------------------------------------------- R-hat and ESS
#: Entries per block of the vectorised R-hat and ESS: keeps each block's arrays in cache
#: and bounds the FFT's memory (4 split chains x 1000 draws x 64 entries of complex128, about
#: 4 MB); 64 was the fastest of 32-1024 on the audit's 2 x 1000 draws.
_BLOCK = 64


def rank_diagnostics(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank-normalised split R-hat, bulk ESS and tail ESS (Vehtari et al. 2021) of every
    entry of ``x`` (chain, draw, ...) at once; each result has the trailing shape.

    The same numbers as :func:`arviz.rhat` (``method="rank"``) and :func:`arviz.ess`
    (``"bulk"``, ``"tail"``), which loop over the entries one by one: 53 s for the 10,000
    entries of a 50-class posterior (2 x 1000 draws) against about 7 s here. The tests
    compare both on chains with ties, constants, NaN, trends and odd lengths.

    An entry with a NaN anywhere is NaN in all three; R-hat is NaN with fewer than 2
    chains, all three with fewer than 4 draws per chain (``MIN_DRAWS``).
    """
    shape = x.shape[2:]
    m, n, p = x.shape[0], x.shape[1], math.prod(shape)
    rhat, bulk, tail = (np.full(p, np.nan) for _ in range(3))
    if m == 0 or n == 0 or p == 0:  # nothing to compute: NaN of the trailing shape
        return rhat.reshape(shape), bulk.reshape(shape), tail.reshape(shape)
    x = np.asarray(x, dtype=np.float64).reshape(m, n, p)
    ok = np.asarray(~np.isnan(x).any(axis=(0, 1)))
    if n >= MIN_DRAWS["ess"]:
        for start in range(0, p, _BLOCK):
            idx = np.arange(start, min(start + _BLOCK, p))
            idx = idx[ok[idx]]
            if idx.size:
                rhat[idx], bulk[idx], tail[idx] = _block_diagnostics(x[:, :, idx])
    return rhat.reshape(shape), bulk.reshape(shape), tail.reshape(shape)


def _block_diagnostics(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`rank_diagnostics` of one block of entries without NaN."""
    s = _split(x)
    z = _z_scale(s)
    if x.shape[0] >= 2:
        folded = np.abs(s - np.median(s.reshape(-1, s.shape[2]), axis=0))
        r_bulk, r_tail = _rhat_plain(z), _rhat_plain(_z_scale(folded))
        rhat = np.where(r_tail > r_bulk, r_tail, r_bulk)  # ArviZ's max(bulk, tail)
    else:
        rhat = np.full(x.shape[2], np.nan)
    low_q, high_q = _quantile_type7(x.reshape(-1, x.shape[2]), (0.05, 0.95))
    low = _ess_split(_split((x <= low_q).astype(np.float64)))
    high = _ess_split(_split((x <= high_q).astype(np.float64)))
    return rhat, _ess_split(z), np.where(high < low, high, low)  # ArviZ's min(low, high)


def _quantile_type7(cols: np.ndarray, probs: tuple[float, ...]) -> list[np.ndarray]:
    """R's type-7 quantiles down each column with ArviZ's arithmetic (``mquantiles`` with
    ``alphap = betap = 1``: ``(1 - g) x[k-1] + g x[k]`` at ``aleph = n p + 1 - p``).
    ``np.quantile`` rounds differently, and between tied draws that decides which draws
    fall at or below the quantile, and so the tail ESS of a stuck chain."""
    srt = np.sort(cols, axis=0)
    n = srt.shape[0]
    out = []
    for prob in probs:
        if n == 1:
            out.append(srt[0])
            continue
        aleph = n * prob + (1.0 - prob)
        k = int(np.floor(min(max(aleph, 1.0), n - 1.0)))
        g = min(max(aleph - k, 0.0), 1.0)
        out.append((1.0 - g) * srt[k - 1] + g * srt[k])
    return out


def _split(x: np.ndarray) -> np.ndarray:
    """Each chain's first and last halves as chains of their own (odd lengths drop the middle)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half :]], axis=0)


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Rank-normalise each entry over all its chains and draws (Blom's offset 3/8)."""
    from scipy.special import ndtri

    m, n, p = x.shape
    ranks = _average_ranks(x.reshape(m * n, p))
    return ndtri((ranks - 0.375) / (m * n + 0.25)).reshape(m, n, p)


def _average_ranks(cols: np.ndarray) -> np.ndarray:
    """1-based ranks down each column, ties sharing their average rank (``rankdata``'s
    ``"average"``)."""
    size = cols.shape[0]
    order = np.argsort(cols, axis=0)
    srt = np.take_along_axis(cols, order, axis=0)
    pos = np.arange(size)[:, None]
    starts = np.ones(cols.shape, dtype=bool)
    starts[1:] = srt[1:] != srt[:-1]
    ranks = np.empty(cols.shape)
    if starts.all():  # no ties (continuous draws): the rank is the sorted position
        np.put_along_axis(ranks, order, np.broadcast_to(pos + 1.0, cols.shape), axis=0)
        return ranks
    ends = np.ones(cols.shape, dtype=bool)
    ends[:-1] = starts[1:]
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=0)
    last = np.minimum.accumulate(np.where(ends, pos, size)[::-1], axis=0)[::-1]
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=0)
    return ranks


def _rhat_plain(x: np.ndarray) -> np.ndarray:
    """Gelman-Rubin R-hat of each entry of (chain, draw, entries)."""
    n = x.shape[1]
    between = n * x.mean(axis=1).var(axis=0, ddof=1)
    within = x.var(axis=1, ddof=1).mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def _ess_split(x: np.ndarray) -> np.ndarray:
    """ESS of each entry of split chains (chain, draw, entries) without NaN: Geyer's
    initial monotone sequence on the FFT autocovariances, the steps of ArviZ's ``_ess``."""
    from scipy.fft import irfft, next_fast_len, rfft

    m, n, p = x.shape
    out = np.full(p, float(m * n))  # a constant entry: ArviZ returns the draw count
    moving = np.ptp(x.reshape(m * n, p), axis=0) >= np.finfo(np.float64).resolution
    if not moving.any():
        return out
    x = x[:, :, moving]
    p = x.shape[2]
    size = next_fast_len(2 * n)  # zero-padded to twice the length: no circular wrap-around
    f = rfft(x - x.mean(axis=1, keepdims=True), n=size, axis=1)
    acov = irfft(f * np.conj(f), n=size, axis=1)[:, :n] / n  # (chain, lag, entries)
    mean_var = acov[:, 0].mean(axis=0) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + x.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (mean_var - acov.mean(axis=0)) / var_plus  # (lag, entries)
    kept = np.zeros((n, p))
    kept[0] = 1.0
    kept[1] = rho[1]
    even, odd = np.ones(p), rho[1].copy()
    t_end = np.ones(p, dtype=np.int64)
    running = np.ones(p, dtype=bool)
    # Geyer's initial positive sequence: pairs of lags while the last pair's sum is positive
    for t in range(1, n - 3, 2):
        running &= even + odd > 0.0
        if not running.any():
            break
        even = np.where(running, rho[t + 1], even)
        odd = np.where(running, rho[t + 2], odd)
        keep = running & (even + odd >= 0.0)
        kept[t + 1] = np.where(keep, even, kept[t + 1])
        kept[t + 2] = np.where(keep, odd, kept[t + 2])
        t_end = np.where(running, t + 2, t_end)
    max_t = t_end - 2
    cols = np.arange(p)
    kept[max_t + 1, cols] = np.where(even > 0, even, kept[max_t + 1, cols])
    # Geyer's initial monotone sequence
    for t in range(1, int(max_t.max()) - 1, 2):
        active = t <= max_t - 2
        pair = kept[t - 1] + kept[t]
        worse = active & (kept[t + 1] + kept[t + 2] > pair)
        kept[t + 1] = np.where(worse, pair / 2.0, kept[t + 1])
        kept[t + 2] = np.where(worse, kept[t + 1], kept[t + 2])
    head = np.where(max_t >= 0, np.cumsum(kept, axis=0)[np.maximum(max_t, 0), cols], 0.0)
    tau = np.maximum(-1.0 + 2.0 * head + kept[max_t + 1, cols], 1.0 / np.log10(m * n))
    out[moving] = np.where(np.isnan(kept).any(axis=0), np.nan, m * n / tau)
    return out


def _per_entry(post, var: str, values: np.ndarray) -> xr.DataArray:
    """A per-entry statistic as a DataArray on the variable's own dims and coords."""
    template = post[var].isel({CHAIN: 0, DRAW: 0}, drop=True)
    return xr.DataArray(values, dims=template.dims, coords=template.coords, name=var)


def _chain_draw(post, var: str) -> np.ndarray:
    da = post[var]
    return da.transpose(CHAIN, DRAW, *[d for d in da.dims if d not in (CHAIN, DRAW)]).values


def sampling_checks(idata, *, thresholds=None, emit: bool = True) -> tuple[dict, list[str]]:
    """R-hat, ESS, divergences and BFMI of ``a``, ``b``, ``prevalence``.

    Returns
    -------
    (diagnostics, warnings)
        ``diagnostics`` holds the worst values (``rhat_max``, ``ess_bulk_min``,
        ``ess_tail_min``, ``divergences``, ``bfmi_min``) and where they occur;
        a check that cannot be computed (fewer draws per chain than
        ``MIN_DRAWS`` asks, constant energy, one chain for R-hat) is ``None``
        and gets a message, never a division by zero. ``converged`` is False
        when R-hat or ESS failed or could not be computed, or a transition
        diverged. ``warnings`` has one message per failed or unavailable
        check, each with what to do.
        With ``emit`` each message is also issued as a
        :class:`~bayescal.errors.ConvergenceWarning`.
    """
    return _sampling_checks(idata, thresholds, emit)


def _sampling_checks(idata, thresholds, emit):
    th = {**THRESHOLDS, **(thresholds or {})}
    post = idata.posterior
    n_chains = int(post.sizes[CHAIN])
    n_draws = int(post.sizes[DRAW])
    var_names = [v for v in _PARAMS if v in post]
    diag: dict = {"chains": n_chains, "draws_per_chain": n_draws}
    out: list[str] = []
    stats = {v: rank_diagnostics(_chain_draw(post, v)) for v in var_names}
    if n_draws < MIN_DRAWS["rhat"]:
        diag.update(rhat_max=None, ess_bulk_min=None, ess_tail_min=None)
        out.append(
            f"R-hat and ESS unavailable: {n_draws} draw(s) per chain, and both need at least "
            f"{MIN_DRAWS['rhat']}; convergence is not checked. Sample hundreds of draws."
        )
    elif n_chains >= 2:
        worst = [_worst(_per_entry(post, v, stats[v][0]), np.nanargmax) for v in var_names]
        val, where = max(worst, key=lambda t: -np.inf if np.isnan(t[0]) else t[0])
        diag["rhat_max"], diag["rhat_max_at"] = val, where
        if val > th["rhat_max"]:
            out.append(
                f"R-hat reaches {val:.3f} at {where} (above {th['rhat_max']}): the "
                "chains disagree. Sample longer (more tune and draws); if it persists "
                "the channels are weakly identified here: use more or better-separated "
                "score groups, more annotators, or a stronger prior on a and b."
            )
    else:
        diag["rhat_max"] = None
        out.append("only one chain was run, so R-hat cannot be checked; use chains >= 2.")
    min_ess = th["ess_per_chain_min"] * n_chains
    for kind in ("bulk", "tail") if n_draws >= MIN_DRAWS["ess"] else ():
        col = 1 if kind == "bulk" else 2
        worst = [_worst(_per_entry(post, v, stats[v][col]), np.nanargmin) for v in var_names]
        val, where = min(worst, key=lambda t: np.inf if np.isnan(t[0]) else t[0])
        diag[f"ess_{kind}_min"], diag[f"ess_{kind}_min_at"] = val, where
        if val < min_ess:
            out.append(
                f"{kind} ESS is only {val:.0f} at {where} (below {min_ess:.0f} = "
                f"{th['ess_per_chain_min']:.0f} per chain): "
                + (
                    "posterior means are imprecise"
                    if kind == "bulk"
                    else "interval ends are imprecise"
                )
                + ". Increase draws (and tune); if mixing is slow, a stronger prior or more score "
                "groups sharpen the posterior."
            )
    if "sample_stats" in idata.groups():
        ss = idata.sample_stats
        n_div = int(ss["diverging"].sum()) if "diverging" in ss else 0
        diag["divergences"] = n_div
        if n_div:
            out.append(
                f"{n_div} divergent transition(s) of {n_chains * n_draws}: NUTS could not explore "
                "part of the posterior (typically rates or prevalences pressed against 0 or 1, or "
                "a gap near 0), so the draws may be biased. Raise target_accept (for example "
                "0.95 or 0.99), put a stronger prior on prevalence (Beta(2, 2)) or on a and b, or "
                "merge sparse score groups."
            )
        if "energy" in ss:
            bfmi = _bfmi(ss["energy"].transpose(CHAIN, DRAW).values)
            diag["bfmi_min"] = None if bfmi is None else float(np.min(bfmi))
            if bfmi is None:
                out.append(
                    f"E-BFMI unavailable: it needs at least {MIN_DRAWS['bfmi']} draws per chain "
                    "with varying energy; the energy exploration is not checked."
                )
            elif np.min(bfmi) < th["bfmi_min"]:
                bad = [int(c) for c in np.flatnonzero(bfmi < th["bfmi_min"])]
                out.append(
                    f"E-BFMI {np.min(bfmi):.2f} in chain(s) {bad} (below {th['bfmi_min']}): the "
                    "momentum resampling explores the energy distribution poorly. Increase tune; "
                    "heavy posterior tails usually mean a weakly identified prevalence or channel, "
                    "so a stronger prior or more groups help."
                )
    diag["converged"] = not any(
        warning_kind(m) == "convergence" and not m.startswith("E-BFMI") for m in out
    )
    if emit:
        for msg in out:
            _warnings.warn(msg, ConvergenceWarning, stacklevel=3)
    return diag, out


def _bfmi(energy: np.ndarray) -> np.ndarray | None:
    """E-BFMI per chain (Betancourt 2016): mean squared energy change over the energy
    variance; None when some chain has fewer than 2 draws or constant energy."""
    if energy.shape[1] < MIN_DRAWS["bfmi"]:
        return None
    var = energy.var(axis=1)
    if not np.all(var > 0):
        return None
    return np.square(np.diff(energy, axis=1)).mean(axis=1) / var


def _expected_counts(idata) -> np.ndarray:
    """``E[s] = N_{g, mask(s)} p_g(s | theta)`` per draw: (chain, draw, L, P)."""
    const = idata.constant_data
    states = const["pattern_states"].transpose(PATTERN, ANNOTATOR).values
    lp = pattern_logp(
        idata.posterior["a"].transpose(CHAIN, DRAW, ANNOTATOR).values,
        idata.posterior["b"].transpose(CHAIN, DRAW, ANNOTATOR).values,
        idata.posterior["prevalence"].transpose(CHAIN, DRAW, GROUP).values,
        states,
        const["prevalence_index"].values,
    )
    return np.exp(lp) * const["mask_total"].transpose(GROUP, PATTERN).values


def pattern_ppc(
    idata,
    *,
    alpha: float | None = None,
    emit: bool = True,
    expected: np.ndarray | None = None,
    n_params: int | None = None,
    n_classes: int = 2,
) -> tuple[xr.Dataset, list[str]]:
    """Posterior predictive check of the pattern counts per group and per annotator pair.

    Parameters
    ----------
    idata : arviz.InferenceData
        From :func:`bayescal.bayes.fit_channels_bayes`: needs ``posterior``
        (``a``, ``b``, ``prevalence``), ``posterior_predictive`` and
        ``observed_data`` (``counts``) and ``constant_data``.
    alpha : float, default 0.05
        Family-wise level: a group is flagged when its tail probability is below
        ``alpha / L``, a pair when below ``alpha / n_pairs`` (Bonferroni).
    expected : ndarray of shape (chain, draw, L, P), optional
        Expected counts per draw under another model on the same cells (the
        dependence model, :func:`bayescal.bayes.dependence_fit.dependence_ppc`);
        default: the independence model's.
    n_params : int, optional
        That model's parameter count (for the saturation check); default
        ``2 K + L'``.
    n_classes : int, default 2
        Answer classes; state ``n_classes`` is a missing answer (2 on the binary
        track, C on the multiclass track: :mod:`bayescal.bayes.dependence_fit`).

    Returns
    -------
    (xarray.Dataset, warnings)
        ``tail_prob[group]``, ``discrepancy_observed[group]`` (posterior mean
        of X(y, theta)), ``discrepancy_replicated[group]``,
        ``pair_agreement_tail[pair]``, ``pair_agreement_observed[pair]``,
        ``pair_agreement_replicated[pair]`` (posterior predictive mean), and attrs
        ``saturated`` (True when the check cannot have power) and ``flagged``.
    """
    th = alpha if alpha is not None else THRESHOLDS["ppc_alpha"]
    obs = idata.observed_data["counts"].transpose(GROUP, PATTERN)
    y = obs.values.astype(np.float64)
    yrep = (
        idata.posterior_predictive["counts"]
        .transpose(CHAIN, DRAW, GROUP, PATTERN)
        .values.astype(np.float64)
    )
    if expected is None:
        expected = _expected_counts(idata)
    pos = expected > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        x_obs = np.where(pos, (y - expected) ** 2 / expected, 0.0).sum(-1)
        x_rep = np.where(pos, (yrep - expected) ** 2 / expected, 0.0).sum(-1)
    tail = (x_rep >= x_obs).mean(axis=(0, 1))
    groups = [str(g) for g in obs[GROUP].values]
    states = idata.constant_data["pattern_states"].transpose(PATTERN, ANNOTATOR).values
    annotators = [str(a) for a in idata.constant_data[ANNOTATOR].values]
    pairs = list(itertools.combinations(range(len(annotators)), 2))
    pair_labels = [f"{annotators[j]}~{annotators[k]}" for j, k in pairs]
    # (P, n_pairs); no pairs with one annotator (identified by gold items)
    agree = np.zeros((states.shape[0], len(pairs)))
    for i, (j, k) in enumerate(pairs):
        agree[:, i] = (
            (states[:, j] != n_classes)
            & (states[:, k] != n_classes)
            & (states[:, j] == states[:, k])
        )
    t_obs = y.sum(0) @ agree
    t_rep = yrep.sum(2) @ agree  # (chain, draw, pairs)
    upper = (t_rep >= t_obs).mean(axis=(0, 1))
    lower = (t_rep <= t_obs).mean(axis=(0, 1))
    pair_tail = np.minimum(1.0, 2 * np.minimum(upper, lower))  # two-sided
    # free cells: per group and observed missingness mask, C**(answers) - 1 probabilities
    mask_size = np.asarray(idata.constant_data["mask_size"].values)
    cells = int((float(n_classes) ** mask_size - 1).sum()) * len(groups)
    if n_params is None:
        n_params = 2 * len(annotators) + int(idata.posterior.sizes[GROUP])
    saturated = cells <= n_params
    ds = xr.Dataset(
        {
            "tail_prob": ((GROUP,), tail),
            "discrepancy_observed": ((GROUP,), x_obs.mean(axis=(0, 1))),
            "discrepancy_replicated": ((GROUP,), x_rep.mean(axis=(0, 1))),
            "pair_agreement_tail": (("pair",), pair_tail),
            "pair_agreement_observed": (("pair",), t_obs),
            "pair_agreement_replicated": (("pair",), t_rep.mean(axis=(0, 1))),
        },
        coords={GROUP: groups, "pair": pair_labels},
    )
    out: list[str] = []
    bad_groups = [g for g, p in zip(groups, tail) if p < th / len(groups)]
    bad_pairs = [(lab, p) for lab, p in zip(pair_labels, pair_tail) if p < th / max(len(pairs), 1)]
    if not saturated and (bad_groups or bad_pairs):
        kind = idata.attrs.get("model", "")
        msg = PPC_FAILED
        if bad_groups:
            msg += (
                f" in score group(s) {bad_groups} (tail probabilities "
                + ", ".join(f"{p:.3g}" for g, p in zip(groups, tail) if g in bad_groups)
                + ")"
            )
        if bad_pairs:
            direction = dict(zip(pair_labels, np.where(upper <= lower, "more", "less")))
            msg += "; annotator pair(s) " + ", ".join(
                f"{lab} agree {direction[lab]} often than the model predicts (p = {p:.3g})"
                for lab, p in bad_pairs
            )
        if "dependence_groups" in idata.attrs:
            msg += (
                f". The conditional-dependence model (groups {idata.attrs['dependence_groups']}) "
                "does not reproduce these counts either: widen the dependence groups "
                "(dependence='all'), or drop or merge one annotator of a dependent pair."
            )
        else:
            msg += (
                ". The latent-class model assumes answers are independent given the class "
                "(Hanada & Futami, App. D.7): conditionally dependent annotators (shared rules, "
                "copied answers) bias the channels. Drop or merge one annotator of a dependent "
                "pair, or model the dependence (dependence=..., --dependence)."
            )
        if kind == "marginal":
            msg += (
                " For the marginal model a group-level failure may instead mean "
                "the prevalence varies with the score: use model='grouped'."
            )
        out.append(msg)
    ds.attrs.update(saturated=bool(saturated), flagged=bool(out), alpha=float(th))
    if emit:
        for m in out:
            _warnings.warn(m, DiagnosticWarning, stacklevel=3)
    return ds, out
