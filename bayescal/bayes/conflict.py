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

**Gold labels against the annotators** (:func:`gold_conflict`, flag ``gold.conflict``):
the same question with the roles turned round. The channels fitted *without* the gold
items (``Summary.without_gold()``: posterior draws, or the Bayesian bootstrap of the EM
fit) predict how often annotator ``j`` answers ``y`` on gold items of class ``y``; a
gold column whose classes are flipped, permuted or miscoded makes the annotators agree
with it far less often than that. Statistic: ``R_jy``, j's answers equal to ``y`` among
its ``n_jy`` answers on gold items of class ``y`` (the summary's gold tables: no pass
over items). Under honest gold ``R_jy ~ Binomial(n_jy, T_j[y, y])`` with ``T_j`` the
channel of the other items; its predictive is Beta-binomial, ``T_j[y, y] ~ Beta``
matched to the mean and variance of the draws (so the estimate's own error is carried:
a plug-in binomial rejects too often when the gold items are not few against the
rest), its concentration at most j's number of answers on the other items (no data
set of that size knows ``T_j[y, y]`` better than if each of them had a known class
``y``; this bounds a boundary estimate whose draws do not move) plus Jeffreys' half
counts. One-sided tail ``P(R_rep <= R_obs)``: agreement *above* the channels' is what
easy gold items (the usual choice) give and contradicts nothing. Multiplicity: every
(annotator, gold class) with answers is one statistic; an annotator's ``p`` is its
smallest tail probability times the number ``m`` of statistics of the whole check
(Bonferroni over annotators and classes), capped at 1, flagged below
:data:`GOLD_CONFLICT_LEVEL`: honest gold raises the flag in at most 1% of audits
whatever K and C (less: Bonferroni and the discrete tail are conservative).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import betabinom

from bayescal._random import check_random_state
from bayescal.bayes.models import make_spec, sample_prior
from bayescal.bayes.priors import ChannelPriors, JointRatioNormal
from bayescal.channels.em import dawid_skene_em
from bayescal.channels.fit import fit_channels
from bayescal.errors import ConfigError

__all__ = [
    "prior_conflict",
    "gold_conflict",
    "per_annotator",
    "CONFLICT_LEVEL",
    "GOLD_CONFLICT_LEVEL",
]

#: Per-annotator tail probability below which priors and data are flagged as in conflict.
CONFLICT_LEVEL = 0.01

#: Family-wise level of :func:`gold_conflict`: the share of audits with honest gold items
#: that may raise ``gold.conflict`` (Bonferroni over every annotator and gold class), the
#: priors' level for the whole audit rather than per annotator.
GOLD_CONFLICT_LEVEL = 0.01


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


def per_annotator(
    tails: dict, annotators, *, tests: int | None = None, level: float = CONFLICT_LEVEL
) -> dict:
    """Each annotator's statistics' tail probabilities, Bonferroni-combined and flagged.

    ``tails[name]`` holds one tail probability per annotator (NaN: statistic not
    available for it); ``p`` is the smallest times their number (or times ``tests``, the
    statistics of the whole family), capped at 1, flagged below ``level``.
    """
    out = {}
    for j, name in enumerate(annotators):
        stats = {key: float(v[j]) for key, v in tails.items() if not np.isnan(v[j])}
        m = len(stats) if tests is None else tests
        p = min(1.0, min(stats.values()) * m) if stats else float("nan")
        out[name] = {"p": p, "statistics": stats, "conflict": bool(p < level)}
    return out


def gold_conflict(summary, reference) -> dict:
    """Gold labels against the channels fitted without them (module docstring).

    Parameters
    ----------
    summary : Summary
        The data with their gold tables, any number of classes.
    reference : ChannelFit
        Channels fitted on ``summary.without_gold()`` as draws: a posterior, or
        :func:`~bayescal.channels.bootstrap.bootstrap_channels` draws of the EM fit. A
        point fit is refused: without the estimate's own error the binomial test flagged
        honest gold in 9 of 40 simulated audits (600 gold items among 3000).

    Returns
    -------
    dict
        ``{"p", "conflict", "level", "statistics", "annotators": {name: {"p",
        "statistics": {"gold_y": p}, "counts": {"gold_y": {"agree", "answered",
        "expected_share"}}, "conflict"}}}``: ``p`` is the family's (the smallest
        annotator's), ``statistics`` the number ``m`` of (annotator, gold class) tests.

    Examples
    --------
    >>> from bayescal import Annotations, fit_channels, summarize
    >>> from bayescal.channels.bootstrap import bootstrap_channels
    >>> from bayescal.simulate import simulate_toy
    >>> d = simulate_toy(3000, random_state=0)
    >>> gold = np.where(np.arange(d.n_items) < 300, d.truth, np.nan)
    >>> def check(gold):
    ...     s = summarize(Annotations.from_arrays(d.score, d.labels, gold=gold), groups=3)
    ...     plain = s.without_gold()
    ...     fit = fit_channels(plain, "score_bin_em", random_state=0)
    ...     return gold_conflict(s, bootstrap_channels(plain, fit, n_draws=200))
    >>> check(gold)["conflict"], check(1 - gold)["conflict"]
    (False, True)
    >>> sorted(check(1 - gold)["annotators"]["a1"]["statistics"])
    ['gold_0', 'gold_1']
    """
    c = summary.n_classes
    if reference.annotators != summary.annotators or reference.n_classes != c:
        raise ConfigError(
            "gold_conflict needs the channels of the same annotators and classes, fitted on "
            "summary.without_gold()."
        )
    if reference.n_draws < 2:
        raise ConfigError(
            "gold_conflict needs channel draws (their spread is the estimate's error); got a "
            "point fit. Pass bootstrap_channels(summary.without_gold(), fit) or a posterior."
        )
    states = summary.states
    answered = (states < c).astype(np.float64)  # (P, K)
    gold = summary.gold_counts().astype(np.float64)  # (C, P)
    t = reference.confusion.values  # (S, K, C, C)
    # no data set of j's size knows T_j[y, y] better than if each answer had a known class
    bound = summary.answered_counts.values.astype(np.float64)  # (K,)
    tails: dict[str, np.ndarray] = {}
    counts: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for y in range(c):
        n = gold[y] @ answered  # j's answers on gold items of class y, (K,)
        agree = gold[y] @ (states == y).astype(np.float64)
        diag = t[:, :, y, y]  # (S, K)
        mean = diag.mean(axis=0)
        var = diag.var(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(var > 0, mean * (1.0 - mean) / var - 1.0, np.inf)
        kappa = np.clip(kappa, 0.0, bound)
        p = betabinom.cdf(agree, n, kappa * mean + 0.5, kappa * (1.0 - mean) + 0.5)
        tails[f"gold_{y}"] = np.where(n > 0, np.minimum(p, 1.0), np.nan)
        counts[f"gold_{y}"] = (agree, n, mean)
    tests = int(sum((~np.isnan(v)).sum() for v in tails.values()))
    per = per_annotator(tails, summary.annotators, tests=max(tests, 1), level=GOLD_CONFLICT_LEVEL)
    for j, name in enumerate(summary.annotators):
        per[name]["counts"] = {
            key: {
                "agree": int(agree[j]),
                "answered": int(n[j]),
                "expected_share": float(mean[j]),
            }
            for key, (agree, n, mean) in counts.items()
            if n[j] > 0
        }
    ps = [v["p"] for v in per.values() if not np.isnan(v["p"])]
    p_family = min(ps) if ps else float("nan")
    return {
        "p": p_family,
        "conflict": bool(p_family < GOLD_CONFLICT_LEVEL),
        "level": GOLD_CONFLICT_LEVEL,
        "statistics": tests,
        "annotators": per,
    }
