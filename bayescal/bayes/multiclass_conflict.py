"""Prior-data conflict per annotator for multiclass priors (issue 15 item 2).

The multiclass twin of :func:`bayescal.bayes.conflict.prior_conflict` (same
partial prior predictive check, Bayarri & Berger 2000; per-block conflict of
Evans & Moshonov 2006). For annotator ``j``:

- from a point fit on the new data (multiclass Dawid–Skene EM, gold items
  included) every non-empty cell (channel group ``g``, pattern ``s``) gets
  ``pi[g, s, j, y] = P(Y = y | the other annotators' answers in s, g)``;
- statistic ``y`` (one per class): j's share of answers ``y`` weighted by
  ``pi[., y]``, close to ``T_j[y, y]`` (how often j recognises class ``y``);
- replicates: j's confusion rows drawn from the prior (Dirichlet rows, or the
  joint normal's rows when the priors have one), j's
  number of answers ``y`` in each cell ~ Binomial(j's answers there,
  ``sum_y' pi[y'] T_j[y', y]``); each statistic is replicated from its own
  binomial (its marginal is exact; the statistics are tested one by one);
- with gold items, ``gold_y``: j's share of correct answers on gold items of
  class ``y``, replicated Binomial(answers, ``T_j[y, y]``); with K = 1 these are
  the only statistics.

Only j's channel is drawn from its prior, so a drifted annotator does not make its
colleagues look drifted. Two-sided tail probabilities ``2 min(P(T_rep >= T_obs),
P(T_rep <= T_obs))``, Bonferroni over the statistics, flagged below
:data:`~bayescal.bayes.conflict.CONFLICT_LEVEL`. What it does not look at: a
drift that moves answers between wrong classes with the diagonal unchanged.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from bayescal._random import check_random_state
from bayescal.bayes.conflict import _tail, _weighted_shares, per_annotator
from bayescal.bayes.multiclass import MulticlassPriors
from bayescal.channels.em import dawid_skene_em
from bayescal.errors import ConfigError

__all__ = ["multiclass_prior_conflict"]


def _others_posterior(summary, fit) -> np.ndarray:
    """``pi[g, s, j, y] = P(Y = y | answers of everyone but j in pattern s, group g)``."""
    c = summary.n_classes
    states = summary.states  # (P, K)
    logt = np.log(fit.confusion.values[0])  # (K, C, C)
    ext = np.concatenate([logt, np.zeros((logt.shape[0], c, 1))], axis=2)  # missing: log 1
    # each answer's log P given y: (P, K, C)
    each = np.stack([ext[j][:, states[:, j]].T for j in range(states.shape[1])], axis=1)
    others = each.sum(axis=1, keepdims=True) - each  # (P, K, C)
    prev = fit.class_prevalence
    by_group = dict(zip([str(g) for g in prev["group"].values], prev.values[0]))
    pooled = prev.values[0].mean(axis=0)
    rho = np.stack([by_group.get(str(g), pooled) for g in summary.groups])  # (L, C)
    joint = np.log(rho)[:, None, None, :] + others[None]  # (L, P, K, C)
    joint -= joint.max(axis=-1, keepdims=True)
    pi = np.exp(joint)
    return pi / pi.sum(axis=-1, keepdims=True)


def multiclass_prior_conflict(
    summary, priors, *, reference=None, draws: int = 1000, random_state=0
) -> dict:
    """Partial prior predictive tail probability per annotator (module docstring).

    Parameters
    ----------
    summary : Summary
        The new data (gold tables used when present).
    priors : MulticlassPriors, mapping or None
        The priors to check, for example ``MulticlassPriors.from_fit(earlier_fit)``.
    reference : ChannelFit, optional
        Multiclass point fit on the new data giving the others' channels and the
        prevalences (default: multiclass Dawid–Skene EM; the first draw is used).
    draws : int, default 1000
        Prior draws; the smallest non-zero tail probability is ``2 / draws``.
    random_state : None, int or Generator, default 0

    Returns
    -------
    dict
        ``{annotator: {"p": float, "statistics": {name: p}, "conflict": bool}}``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> s = summarize_multiclass(simulate_multiclass(2000, 3, random_state=0))
    >>> good = multiclass_prior_conflict(s, None, draws=400)
    >>> any(v["conflict"] for v in good.values())
    False
    >>> eye = np.eye(3)[None] * 3000 + 1  # 'every annotator is almost always right'
    >>> bad = multiclass_prior_conflict(s, {"confusion": np.repeat(eye, 3, 0)}, draws=400)
    >>> all(v["conflict"] for v in bad.values())
    True
    """
    if not (isinstance(draws, (int, np.integer)) and draws >= 2):
        raise ConfigError(f"draws must be an integer >= 2; got {draws!r}.")
    rng = check_random_state(random_state)
    priors = MulticlassPriors.coerce(priors)
    k, c = summary.n_annotators, summary.n_classes
    alpha = priors.confusion_alpha(k, c)  # (K, C, C)
    prior_t = rng.gamma(np.broadcast_to(alpha, (int(draws), k, c, c)))
    prior_t /= prior_t.sum(axis=-1, keepdims=True)  # (S, K, C, C): Dirichlet rows
    if priors.joint is not None:  # rows under the joint normal are drawn from it
        priors.joint.check_size(k, priors.joint.n_prevalence)
        for (j, y), rows in priors.joint.sample_rows(rng, int(draws))["confusion"].items():
            prior_t[:, j, y] = rows
    states = summary.states
    answered = (states < c).astype(np.float64)  # (P, K)
    tails: dict[str, np.ndarray] = {}
    counts = summary.pattern_counts.values
    if k >= 2 and counts.sum() > 0:
        if reference is None:
            with _warnings.catch_warnings():
                _warnings.simplefilter("ignore")
                reference = dawid_skene_em(summary, prevalence="grouped", empty_groups="drop")
        pi = _others_posterior(summary, reference)  # (L, P, K, C)
        g_idx, s_idx = np.nonzero(counts)
        n = counts[g_idx, s_idx].astype(np.float64)[:, None]  # (cells, 1)
        m = n * answered[s_idx]  # j's answers per cell, (cells, K)
        pi_c = pi[g_idx, s_idx]  # (cells, K, C)
        for y in range(c):
            obs_y = n * (states[s_idx] == y)  # j answered y in the cell, (cells, K)
            w = pi_c[:, :, y]
            # P(j answers y | cell) = sum_y' pi[y'] T_j[y', y], per prior draw: (S, cells, K)
            q = np.einsum("ikz,skz->sik", pi_c, prior_t[:, :, :, y])
            rep = rng.binomial(m.astype(np.int64)[None], np.clip(q, 0.0, 1.0))
            tails[f"class_{y}"] = _tail(
                _weighted_shares(obs_y, m, w), _weighted_shares(rep, m[None], w[None])
            )
    if summary.has_gold and summary.n_gold.sum() > 0:
        gold = summary.gold_counts()  # (C, P)
        for y in range(c):
            n_y = gold[y] @ answered  # (K,)
            right = gold[y] @ (states == y).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                obs = np.where(n_y > 0, right / n_y, np.nan)
                sim = rng.binomial(n_y.astype(np.int64), prior_t[:, :, y, y]) / np.where(
                    n_y > 0, n_y, np.nan
                )
            tails[f"gold_{y}"] = _tail(obs, sim)
    return per_annotator(tails, summary.annotators)
