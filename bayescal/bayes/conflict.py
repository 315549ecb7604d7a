"""Prior-data conflict per annotator: partial prior predictive tail probabilities (issue 15).

Priors carried over from an earlier audit (:meth:`ChannelPriors.from_fit`) can
contradict the new data, for example when an annotator drifted. For annotator
``j`` the check asks whether j's answers on the new data are surprising under
j's prior, given what the *other* annotators say about each item; one check for
every number of classes C:

- from a point fit on the new data (the nuisance: the other annotators' channels
  and the prevalences; EM by default) every non-empty cell (group ``g``, pattern
  ``s``) gets ``pi[g, s, j, y] = P(Y = y | the others' answers in s, g)``;
- statistic ``class_y`` (one per class): j's share of answers ``y`` weighted by
  ``pi[., y]``, close to ``T_j[y, y]`` (how often j recognises class ``y``; for two
  classes ``class_0`` is one minus j's false-positive share and ``class_1`` its
  sensitivity share);
- replicates: j's confusion rows drawn from the prior (Dirichlet rows, the joint
  normal's rows when the priors have one, or for the Beta family ``(a_j, b_j)`` with
  the orientation constraint, :func:`bayescal.bayes.models.sample_prior`); j's
  number of answers ``y`` in each cell ~ Binomial(j's answers there, ``sum_y' pi[y']
  T_j[y', y]``), each statistic from its own binomial (its marginal is exact; the
  statistics are tested one by one);
- with gold items, ``gold_y``: j's share of correct answers on gold items of class
  ``y``, replicated Binomial(answers, ``T_j[y, y]``); with K = 1 these are the only
  statistics.

This is a partial (plug-in) prior predictive check in the sense of Bayarri &
Berger (2000), the per-parameter-block conflict of Evans & Moshonov (2006): only
j's channel is drawn from its prior, so a drifted annotator does not make its
colleagues look drifted. Each statistic's two-sided tail probability is ``2
min(P(T_rep >= T_obs), P(T_rep <= T_obs))``, capped at 1; an annotator's ``p`` is the
smallest of them times their number (Bonferroni), capped at 1, flagged below
:data:`CONFLICT_LEVEL`. What it does not look at: a drift that moves answers
between wrong classes with the diagonal unchanged (C > 2).
"""

from __future__ import annotations

import warnings

import numpy as np

from bayescal._random import check_random_state
from bayescal.bayes.models import make_spec, sample_prior
from bayescal.bayes.priors import ChannelPriors, JointRatioNormal
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.fit import fit_channels
from bayescal.errors import ConfigError

__all__ = ["prior_conflict", "per_annotator", "CONFLICT_LEVEL"]

#: Per-annotator tail probability below which priors and data are flagged as in conflict.
CONFLICT_LEVEL = 0.01


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


def _weighted_shares(ones, answered, weight):
    """Share of answers weighted per cell: sum(w * ones) / sum(w * answered) over cells."""
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


def _prior_confusion(summary, priors: ChannelPriors, model: str, draws: int, rng) -> np.ndarray:
    """Draws of every annotator's confusion rows from the prior, (S, K, C, C)."""
    k, c = summary.n_annotators, summary.n_classes
    if priors.family == "beta":  # (a, b) with the orientation constraint of the binary model
        prior = sample_prior(make_spec(summary, model, priors=priors), draws, rng)
        a, b = prior["a"], prior["b"]
        return np.stack([np.stack([1 - a, a], -1), np.stack([1 - b, b], -1)], axis=2)
    t = priors.sample_confusion(rng, draws, k, c)  # Dirichlet or nested rows
    if isinstance(priors.joint, JointRatioNormal):  # rows under the joint normal come from it
        priors.joint.check_size(k, priors.joint.n_prevalence)
        for (j, y), rows in priors.joint.sample_rows(rng, draws)["confusion"].items():
            t[:, j, y] = rows
    return t


def _reference_fit(summary, family: str, model: str):
    """The default point fit on the new data: the EM of the priors' model."""
    if family == "beta":
        if model == "marginal":
            return fit_channels(summary, "dawid_skene_em")
        return fit_channels(summary, "score_bin_em", empty_groups="drop")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dawid_skene_em(summary, prevalence="grouped", empty_groups="drop")


def prior_conflict(
    summary, priors, *, model: str = "grouped", reference=None, draws: int = 2000, random_state=0
) -> dict:
    """Partial prior predictive tail probability per annotator (module docstring).

    Parameters
    ----------
    summary : Summary
        The new data (gold tables used when present), any number of classes.
    priors : ChannelPriors, mapping or None
        The priors to check, for example ``ChannelPriors.from_fit(earlier_fit)``; a
        mapping or None is read in the Beta family for two classes, Dirichlet otherwise.
    model : {"grouped", "marginal", "hui_walter"}, default "grouped"
        Beta family: whose prevalence structure the prior draws and the default
        reference follow.
    reference : ChannelFit, optional
        Point fit on the new data giving the others' channels and the prevalences
        (default: ``score_bin_em`` / ``dawid_skene_em`` (marginal) for the Beta family,
        multiclass Dawid-Skene EM for Dirichlet rows; the first draw of a posterior is
        used as given).
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
    >>> from bayescal.simulate import simulate_multiclass, simulate_toy
    >>> s = summarize(simulate_toy(2000, random_state=0), groups=3)
    >>> good = prior_conflict(s, None, draws=400)
    >>> any(v["conflict"] for v in good.values())
    False
    >>> bad = prior_conflict(s, {"a": (500, 500), "b": (950, 50)}, draws=400)
    >>> all(v["conflict"] for v in bad.values())
    True
    >>> s3 = summarize(simulate_multiclass(2000, 3, random_state=0))
    >>> eye = np.eye(3)[None] * 3000 + 1  # 'every annotator is almost always right'
    >>> bad = prior_conflict(s3, {"confusion": np.repeat(eye, 3, 0)}, draws=400)
    >>> all(v["conflict"] for v in bad.values())
    True
    """
    if not (isinstance(draws, (int, np.integer)) and draws >= 2):
        raise ConfigError(f"draws must be an integer >= 2; got {draws!r}.")
    rng = check_random_state(random_state)
    k, c = summary.n_annotators, summary.n_classes
    priors = ChannelPriors.coerce(priors, default="beta" if c == 2 else "dirichlet")
    prior_t = _prior_confusion(summary, priors, model, int(draws), rng)
    states = summary.states
    answered = (states < c).astype(np.float64)  # (P, K)
    tails: dict[str, np.ndarray] = {}
    counts = summary.pattern_counts.values
    if k >= 2 and counts.sum() > 0:
        if reference is None:
            reference = _reference_fit(summary, priors.family, model)
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
