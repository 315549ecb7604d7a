"""Prior-data conflict per annotator: partial prior predictive tail probabilities (issue 15).

Priors carried over from an earlier audit (:meth:`ChannelPriors.from_fit`) can
contradict the new data, for example when an annotator drifted. For annotator
``j`` the check asks whether j's answers on the new data are surprising under
j's prior, given what the *other* annotators say about each item:

- from a point fit on the new data (the nuisance: the other annotators' channels
  and the prevalences; EM by default) every non-empty cell (score group ``g``,
  pattern ``s``) gets ``pi_gsj = P(Y = 1 | the others' answers in s, g)``;
- ``negatives``: j's share of 1s weighted by ``1 - pi`` (close to ``a_j``) and
  ``positives``: the share weighted by ``pi`` (close to ``b_j``);
- replicates: ``(a_j, b_j)`` drawn from the prior (orientation constraint
  included, :func:`bayescal.bayes.models.sample_prior`), j's number of 1s in each
  cell ~ Binomial(j's answers there, ``(1 - pi) a_j + pi b_j``);
- with gold items, ``gold_0`` / ``gold_1``: j's share of 1s on gold items of class
  0 / 1, replicated Binomial(answers, ``a_j`` / ``b_j``); with K = 1 these are the
  only statistics.

This is a partial (plug-in) prior predictive check in the sense of Bayarri &
Berger (2000), the per-parameter-block conflict of Evans & Moshonov (2006): only
j's channel is drawn from its prior, so a drifted annotator does not make its
colleagues look drifted. Each statistic's two-sided tail probability is ``2
min(P(T_rep >= T_obs), P(T_rep <= T_obs))``, capped at 1; an annotator's ``p`` is the
smallest of them times their number (Bonferroni), capped at 1, flagged below
``CONFLICT_LEVEL``.
"""

from __future__ import annotations

import numpy as np

from bayescal._random import check_random_state
from bayescal.bayes.models import make_spec, sample_prior
from bayescal.channels.fit import fit_channels

__all__ = ["prior_conflict", "per_annotator", "CONFLICT_LEVEL"]

#: Per-annotator tail probability below which priors and data are flagged as in conflict.
CONFLICT_LEVEL = 0.01


def _others_posterior(spec, fit) -> np.ndarray:
    """``pi[g, s, j] = P(Y = 1 | answers of everyone but j in pattern s, group g)``."""
    a = fit.a.values[0]
    b = fit.b.values[0]
    one = (spec.states == 1).astype(np.float64)
    zero = (spec.states == 0).astype(np.float64)
    c0 = one * np.log(a) + zero * np.log1p(-a)  # (P, K): each answer's log P given Y = 0
    c1 = one * np.log(b) + zero * np.log1p(-b)
    others = (c1.sum(axis=1, keepdims=True) - c1) - (c0.sum(axis=1, keepdims=True) - c0)
    mu = fit.prevalence.values[0]
    mu = (
        mu[spec.prevalence_index]
        if mu.size == len(spec.prevalence_index)
        else np.full(len(spec.groups), mu[0])
    )
    log_odds = np.log(mu / (1 - mu))[:, None, None] + others[None]
    return 1 / (1 + np.exp(-log_odds))


def _weighted_shares(ones, answered, weight):
    """Share of 1s weighted per cell: sum(w * ones) / sum(w * answered) over cells."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weight * ones).sum(axis=-2) / (weight * answered).sum(axis=-2)


def _tail(observed, replicated) -> np.ndarray:
    """Two-sided prior predictive tail probability per annotator (NaN statistics ignored)."""
    ok = ~np.isnan(replicated)
    n = np.maximum(ok.sum(axis=0), 1)
    hi = ((replicated >= observed) & ok).sum(axis=0) / n
    lo = ((replicated <= observed) & ok).sum(axis=0) / n
    p = np.minimum(1.0, 2 * np.minimum(hi, lo))
    return np.where(np.isnan(observed), np.nan, p)


def prior_conflict(
    summary, priors, *, model: str = "grouped", reference=None, draws: int = 2000, random_state=0
) -> dict:
    """Partial prior predictive tail probability per annotator (module docstring).

    Parameters
    ----------
    summary : Summary
        The new data.
    priors : ChannelPriors, mapping or None
        The priors to check, for example ``ChannelPriors.from_fit(earlier_fit)``.
    model : {"grouped", "marginal", "hui_walter"}, default "grouped"
        Whose prevalence structure the prior draws follow.
    reference : ChannelFit, optional
        Point fit on the new data giving the others' channels and the prevalences
        (default: ``score_bin_em``, or ``dawid_skene_em`` for the marginal model;
        the first draw of a posterior is used as given).
    draws : int, default 2000
        Prior draws; the smallest non-zero tail probability is ``2 / draws``.
    random_state : None, int or Generator, default 0

    Returns
    -------
    dict
        ``{annotator: {"p": float, "statistics": {name: p}, "conflict": bool}}``.

    Examples
    --------
    >>> from bayescal import summarize
    >>> from bayescal.simulate import simulate_toy
    >>> s = summarize(simulate_toy(2000, random_state=0), groups=3)
    >>> good = prior_conflict(s, None, draws=400)
    >>> any(v["conflict"] for v in good.values())
    False
    >>> bad = prior_conflict(s, {"a": (500, 500), "b": (950, 50)}, draws=400)
    >>> all(v["conflict"] for v in bad.values())
    True
    """
    rng = check_random_state(random_state)
    spec = make_spec(summary, model, priors=priors)
    prior = sample_prior(spec, int(draws), rng)
    tails = {}
    k = spec.n_annotators
    answered = (spec.states != 2).astype(np.float64)  # (P, K)
    ones = (spec.states == 1).astype(np.float64)
    if k >= 2 and spec.counts.sum() > 0:
        if reference is None:
            method = "dawid_skene_em" if model == "marginal" else "score_bin_em"
            options = {} if model == "marginal" else {"empty_groups": "drop"}
            reference = fit_channels(summary, method, **options)
        pi = _others_posterior(spec, reference)  # (L, P, K)
        keep = spec.counts > 0
        n = spec.counts[keep].astype(np.float64)[:, None]  # (C, 1)
        pi_c = pi[keep]  # (C, K)
        m = n * answered[np.nonzero(keep)[1]]  # j's answers per cell, (C, K)
        obs_ones = n * ones[np.nonzero(keep)[1]]
        q = (1 - pi_c)[None] * prior["a"][:, None, :] + pi_c[None] * prior["b"][:, None, :]
        rep_ones = rng.binomial(m.astype(np.int64)[None], q)  # (S, C, K)
        for name, w in (("negatives", 1 - pi_c), ("positives", pi_c)):
            observed = _weighted_shares(obs_ones, m, w)
            replicated = _weighted_shares(rep_ones, m[None], w[None])
            tails[name] = _tail(observed, replicated)
    if spec.gold.sum() > 0:
        gold_answered = spec.gold @ answered  # (2, K)
        gold_ones = spec.gold @ ones
        for y, rate in ((0, prior["a"]), (1, prior["b"])):
            n_y = gold_answered[y]
            with np.errstate(invalid="ignore", divide="ignore"):
                obs = np.where(n_y > 0, gold_ones[y] / n_y, np.nan)
                sim = rng.binomial(n_y.astype(np.int64), rate) / np.where(n_y > 0, n_y, np.nan)
            tails[f"gold_{y}"] = _tail(obs, sim)
    return per_annotator(tails, spec.annotators)


def per_annotator(tails: dict, annotators) -> dict:
    """Each annotator's statistics' tail probabilities, Bonferroni-combined and flagged.

    ``tails[name]`` holds one tail probability per annotator (NaN: statistic not
    available for it); ``p`` is the smallest times their number, capped at 1.
    """
    out = {}
    for j, name in enumerate(annotators):
        stats = {key: float(v[j]) for key, v in tails.items() if not np.isnan(v[j])}
        p = min(1.0, min(stats.values()) * len(stats)) if stats else float("nan")
        out[name] = {"p": p, "statistics": stats, "conflict": bool(p < CONFLICT_LEVEL)}
    return out
