"""Noise or ambiguity? The evidence the annotations give about what "truth" is (SPEC §3).

The two views of disagreement predict different things about the answers to
one item:

- **noise** (Dawid–Skene, SPEC §3): the item has one true class ``y``; each
  answer is an independent draw from the annotator's confusion row
  ``T_j[y, :]``. Given the class, answers to the same item are no more alike
  than answers to different items of that class.
- **ambiguity** (Tao et al.): the item has its own answer distribution
  ``pi(x)``; items of one class differ, so answers to the same item are
  correlated beyond their class.

This module checks the fitted noise model against the data, with replicated
data (a posterior predictive check for a posterior, a parametric bootstrap at a
point fit): each replicate keeps every item's channel group and set of answering
annotators, draws the class from the group's prevalence and the answers from the
confusion rows, and recomputes the same statistics, so selection effects of the
fit (class responsibilities computed from the answers) act on both sides.

Statistics (items with at least two answers; ``r_iy`` is the model's
responsibility of class ``y`` for item ``i``, ``v_i`` its answer counts, ``N_i``
its number of answers, ``E_iy = sum_{j answered} T_j[y, :]``):

Dispersion per latent class ``y``
    ``phi_y = sum_i r_iy |v_i - E_iy|^2 / sum_i r_iy V_iy`` with
    ``E_iy = sum_{j answered} M_j[y, :]`` and
    ``V_iy = sum_{j answered} sum_a M_j[y, a] (1 - M_j[y, a])``, the mean and the
    variance of ``|v_i - E_iy|^2`` given ``y`` when annotator ``j`` answers with
    rates ``M_j[y, :]``. ``M`` is the responsibility-weighted answer rate of the data
    themselves (one M step): equal to the confusions at a maximum-likelihood fit, and
    otherwise it keeps a mean that misses (a posterior pulled by its prior, channels
    from elsewhere) from adding its squared bias to the dispersion; such misfits show
    in the pattern and disagreement checks instead. Under the noise model
    ``phi`` is near 1; if answers to one item share an intra-item correlation
    ``rho_icc`` beyond the class, ``phi`` is about ``1 + (N - 1) rho_icc``: with
    many answers per item (ChaosNLI: 100) a little ambiguity makes ``phi`` large.
    Upper-tail probability ``P(phi_rep >= phi_obs)`` (the evidence for ambiguity);
    the lower tail flags answers *less* dispersed than the fitted confusions imply
    (confusions noisier than the answers, for example a prior that weighs on rows
    with few items), a misfit of another kind.
Disagreement per latent class ``y``
    The share of disagreeing pairs among an item's answers,
    ``d_i = 1 - sum_a v_ia (v_ia - 1) / (N_i (N_i - 1))``, averaged with weights
    ``r_iy``; reported with its replicated mean, the excess (observed minus
    replicated) and a two-sided tail probability.
Pattern counts per channel group
    The chi-square discrepancy of the pattern counts against their expectation
    (observed patterns, plus one cell per answering set for every other
    pattern), when the pattern space is small enough for expected counts to mean
    something (``(C+1)**K <= MAX_PATTERN_CELLS``); two-sided per-group
    dependence of specific annotators is not separated from ambiguity here.
Per-item test (many answers per item)
    Each item's own dispersion ``phi_i`` against the replicates of items with
    the same channel group and answering set: the share of items with a tail
    probability below 0.05 (about 0.05 under the noise model).

The verdict (:attr:`NoiseAmbiguityCheck.view`) says which view the evidence
supports and why, with the numbers; it is never given without the check.

Which channels to check: the maximum-likelihood fit (multiclass EM), or a posterior
close to it. The statistics compare the agreement within items with what the
*given* channels allow, so channels that fit worse than the best noise model (for
example confusions pulled toward uniform) leave the same excess agreement as
ambiguity does. Only when the best-fitting noise model still falls short is the
excess evidence against the noise view.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._random import check_random_state
from bayescal.channels.result import ChannelFit
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.dims import CLASS, GROUP
from bayescal.errors import ConfigError, DataError
from bayescal.flags import Flag
from bayescal.summaries.summary import Summary, summarize_multiclass

__all__ = [
    "NoiseAmbiguityCheck",
    "noise_or_ambiguity",
    "VIEWS",
    "MANY_ANSWERS",
    "MAX_PATTERN_CELLS",
    "DEFAULT_REPLICATES",
]

#: The verdicts: the noise model fits; answers are over-dispersed within items (ambiguity);
#: the noise model misfits otherwise; too little information to tell.
VIEWS = ("noise", "ambiguity", "misfit", "inconclusive")

#: Median answers per item from which the per-item test is run.
MANY_ANSWERS = 10

#: Largest full pattern space ``(C+1)**K`` for the pattern-count chi-square.
MAX_PATTERN_CELLS = 20_000

DEFAULT_REPLICATES = 200

#: Items with two or more answers needed before the check can say anything.
_MIN_ITEMS = 30


@dataclass(eq=False)
class NoiseAmbiguityCheck:
    """The evidence for noise or ambiguity, and the verdict it supports.

    Attributes
    ----------
    view : {"noise", "ambiguity", "misfit", "inconclusive"}
    reasons : list of str
        The evidence behind ``view``, with the numbers.
    per_class : xarray.Dataset over ``class``
        ``items`` (responsibility-weighted items with two or more answers),
        ``dispersion_observed``, ``dispersion_replicated``, ``dispersion_tail``,
        ``disagreement_observed``, ``disagreement_replicated``,
        ``disagreement_excess``, ``disagreement_tail``.
    overall : dict
        The same statistics pooled over classes.
    patterns : xarray.Dataset over ``group`` or None
        ``discrepancy_observed``, ``discrepancy_replicated``, ``tail`` (None when
        the pattern space is too large, see :data:`MAX_PATTERN_CELLS`).
    per_item : dict or None
        With many answers per item: ``share_overdispersed``, ``expected_share``
        (0.05), ``items`` tested, ``most_overdispersed`` (pattern labels).
    answers : dict
        ``median_per_item``, ``items_with_two_or_more``.
    replicates : int
    source : str
        ``"posterior predictive"`` or ``"parametric bootstrap"``.
    alpha : float
    flags : list of Flag
    """

    view: str
    reasons: list
    per_class: xr.Dataset
    overall: dict
    patterns: xr.Dataset | None
    per_item: dict | None
    answers: dict
    replicates: int
    source: str
    alpha: float
    flags: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain numbers for JSON."""
        per_class = {
            str(c): {v: float(self.per_class[v].sel({CLASS: c})) for v in self.per_class.data_vars}
            for c in self.per_class[CLASS].values
        }
        patterns = None
        if self.patterns is not None:
            patterns = {
                str(g): {v: float(self.patterns[v].sel({GROUP: g})) for v in self.patterns}
                for g in self.patterns[GROUP].values
            }
        return {
            "view": self.view,
            "reasons": list(self.reasons),
            "overall": dict(self.overall),
            "per_class": per_class,
            "patterns": patterns,
            "per_item": self.per_item,
            "answers": dict(self.answers),
            "replicates": self.replicates,
            "source": self.source,
            "alpha": self.alpha,
        }

    def __repr__(self) -> str:
        o = self.overall
        return (
            f"<NoiseAmbiguityCheck view={self.view!r} dispersion={o['dispersion_observed']:.3f} "
            f"(replicated {o['dispersion_replicated']:.3f}, tail {o['dispersion_tail']:.3g}); "
            f"{self.replicates} replicates ({self.source})>"
        )


# ----------------------------------------------------------------- per-item statistics
@dataclass
class _Layout:
    """The items as rows: states, group, weight (items sharing a row), answering mask id."""

    states: np.ndarray  # (m, K) int, C = missing
    group: np.ndarray  # (m,)
    weight: np.ndarray  # (m,)
    mask: np.ndarray  # (m,) answering-set id


def _answer_counts(states, c):
    return np.stack([(states == a).sum(axis=1) for a in range(c)], axis=1).astype(np.float64)


def _log_answers_given_class(states, t):
    """``log P(answers | y) = sum_{j answered} log T_j[y, a_j]`` per row: (m, C)."""
    k, c, _ = t.shape
    answered = states < c
    idx = np.where(answered, states, 0)
    logt = np.log(t)
    out = np.zeros((states.shape[0], c))
    for j in range(k):
        out += np.where(answered[:, j, None], logt[j][:, idx[:, j]].T, 0.0)
    return out


def _statistics(states, group, weight, t, rho, pidx):
    """Per-row class responsibilities and the row statistics of the module docstring.

    Returns
    -------
    dict with ``r`` (m, C), ``s`` (m, C) = |v - E_y|^2, ``v`` (m, C) = V_y,
    ``d`` (m,) disagreement, ``ok`` (m,) rows with two or more answers, ``w`` (m,).
    """
    c = t.shape[1]
    answered = states < c
    joint = _log_answers_given_class(states, t) + np.log(rho)[pidx[group]]
    joint -= joint.max(axis=1, keepdims=True)
    r = np.exp(joint)
    r /= r.sum(axis=1, keepdims=True)
    counts = _answer_counts(states, c)  # (m, C)
    n_ans = counts.sum(axis=1)
    mask = answered.astype(np.float64)
    # The class means come from these answers (one M step with these responsibilities), not
    # from the channels: at a maximum-likelihood fit they coincide, and otherwise a mean that
    # misses would add its squared bias to the dispersion and pass for over-dispersion.
    wr = weight[:, None] * r
    idx = np.where(answered, states, 0)
    num = np.stack(
        [
            np.stack([np.bincount(idx[:, j], wr[:, y] * mask[:, j], c) for y in range(c)])
            for j in range(t.shape[0])
        ]
    )  # (K, C, C)
    tm = (num + 1e-12) / (num + 1e-12).sum(axis=2, keepdims=True)
    e = np.einsum("mj,jya->mya", mask, tm)  # expected counts given y
    var = np.einsum("mj,jy->my", mask, (tm * (1 - tm)).sum(axis=2))
    s = ((counts[:, None, :] - e) ** 2).sum(axis=2)
    ok = n_ans >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(ok, 1.0 - (counts * (counts - 1)).sum(axis=1) / (n_ans * (n_ans - 1)), 0.0)
    return {"r": r, "s": s, "v": var, "d": d, "ok": ok, "w": weight * ok}


def _class_sums(st):
    """Per-class sums: items, dispersion numerator / denominator, disagreement sum."""
    wr = st["w"][:, None] * st["r"]  # (m, C)
    return np.stack(
        [
            wr.sum(axis=0),
            (wr * st["s"]).sum(axis=0),
            (wr * st["v"]).sum(axis=0),
            (wr * st["d"][:, None]).sum(axis=0),
        ]
    )  # (4, C)


def _ratios(sums):
    """Dispersion and disagreement per class (last column: pooled) from _class_sums."""
    pooled = np.concatenate([sums, sums.sum(axis=1, keepdims=True)], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return pooled[1] / pooled[2], pooled[3] / pooled[0], pooled[0]


def _item_dispersion(st):
    """Each row's own dispersion: sum_y r_y |v - E_y|^2 / sum_y r_y V_y."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (st["r"] * st["s"]).sum(axis=1) / (st["r"] * st["v"]).sum(axis=1)


def _replicate(layout, t, rho, pidx, rng):
    """Answers replicated from the model with every row's group and answering set kept."""
    k, c, _ = t.shape
    rows = np.repeat(np.arange(layout.states.shape[0]), layout.weight.astype(np.int64))
    group = layout.group[rows]
    answered = layout.states[rows] < c
    cum = np.cumsum(rho, axis=1)[pidx[group]]
    y = np.minimum((rng.random((rows.size, 1)) > cum).sum(axis=1), c - 1)
    out = np.full((rows.size, k), c, dtype=np.int64)
    u = rng.random((rows.size, k))
    for j in range(k):
        cj = np.cumsum(t[j], axis=1)[y]  # (n, C)
        a = np.minimum((u[:, j, None] > cj).sum(axis=1), c - 1)
        out[:, j] = np.where(answered[:, j], a, c)
    return out, group, rows


# ----------------------------------------------------------------- pattern discrepancy
def _pattern_discrepancy(summary, t, rho, pidx, rep_states, rep_group):
    """Chi-square of pattern counts per group: observed patterns + one rest cell per mask."""
    c = summary.n_classes
    states = summary.states
    counts = summary.pattern_counts.values.astype(np.float64)  # (L, P)
    k = states.shape[1]
    bits = 1 << np.arange(k)
    mask_of = (states < c).astype(np.int64) @ bits
    masks = np.unique(mask_of)
    ll = _pattern_loglik(states, t, rho, pidx)  # (L, P)
    per_mask = np.stack([counts[:, mask_of == m].sum(axis=1) for m in masks], axis=1)  # (L, M)
    m_index = np.searchsorted(masks, mask_of)
    expected = np.exp(ll) * per_mask[:, m_index]
    rest_exp = per_mask - np.stack(
        [expected[:, mask_of == m].sum(axis=1) for m in masks], axis=1
    )  # (L, M)

    def chi2(obs, obs_rest):
        with np.errstate(invalid="ignore", divide="ignore"):
            x = np.where(expected > 0, (obs - expected) ** 2 / expected, 0.0).sum(axis=1)
            x += np.where(rest_exp > 1e-12, (obs_rest - rest_exp) ** 2 / rest_exp, 0.0).sum(axis=1)
        return x

    observed = chi2(counts, np.zeros_like(rest_exp))
    # replicated counts on the same cells (the full code space is small here)
    powers = (c + 1) ** np.arange(k, dtype=np.int64)
    lookup = np.full((c + 1) ** k, -1, dtype=np.int64)
    lookup[states.astype(np.int64) @ powers] = np.arange(states.shape[0])
    rep_idx = lookup[rep_states @ powers]
    rep_mask = np.searchsorted(masks, (rep_states < c).astype(np.int64) @ bits)
    rep_counts = np.zeros_like(counts)
    rep_rest = np.zeros_like(rest_exp)
    inside = rep_idx >= 0
    np.add.at(rep_counts, (rep_group[inside], rep_idx[inside]), 1.0)
    np.add.at(rep_rest, (rep_group[~inside], rep_mask[~inside]), 1.0)
    return observed, chi2(rep_counts, rep_rest)


def _pattern_loglik(states, t, rho, pidx):
    """``log P(s | g)`` per group and pattern: (L, P)."""
    joint = np.log(rho)[pidx][:, None, :] + _log_answers_given_class(states, t)[None]
    top = joint.max(axis=2, keepdims=True)
    return (top + np.log(np.exp(joint - top).sum(axis=2, keepdims=True)))[..., 0]


# ----------------------------------------------------------------- entry point
def _prevalence_index(summary, channels):
    groups = [str(g) for g in channels.class_prevalence[GROUP].values]
    if groups == ["all"]:
        return np.zeros(summary.n_groups, dtype=np.int64)
    missing = [g for g in summary.groups if g not in groups]
    if missing:
        raise DataError(
            f"the channels have prevalences for groups {groups} but the data have groups "
            f"{list(summary.groups)} ({missing} missing); summarise the data with the grouping "
            "the channels were fitted on, or fit pooled channels."
        )
    return np.array([groups.index(g) for g in summary.groups], dtype=np.int64)


def noise_or_ambiguity(
    data,
    channels: ChannelFit,
    *,
    groups="predicted",
    n_replicates: int = DEFAULT_REPLICATES,
    alpha: float = 0.01,
    random_state=0,
) -> NoiseAmbiguityCheck:
    """Check the fitted noise model against the annotations: noise or ambiguity? (SPEC §3).

    Parameters
    ----------
    data : MulticlassAnnotations or Summary
        The annotations the channels were fitted on (a container is summarised
        with ``groups``, which must match the channels' groups unless they are
        pooled).
    channels : ChannelFit
        A point fit (parametric bootstrap at it; use the EM fit, see the module
        docstring) or a posterior (one draw per replicate, cycling through the
        draws: a posterior predictive check).
    groups : channel groups, default "predicted"
        Only with a container.
    n_replicates : int, default 200
        Replicated data sets; tail probabilities move in steps of 1 / (R + 1).
    alpha : float, default 0.01
        Level of each check (Bonferroni over the classes for the per-class checks).
        Replicates at a fitted point are themselves noisy, so a dataset drawn from
        the noise model lands in the upper tail now and then; 0.01 keeps such false
        alarms rare (the measured rate is in ``docs/multiclass.md``).
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    NoiseAmbiguityCheck

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.channels.multiclass_em import multiclass_dawid_skene_em
    >>> from bayescal.summaries import summarize_multiclass
    >>> data = simulate_multiclass(3000, 3, random_state=0)
    >>> fit = multiclass_dawid_skene_em(summarize_multiclass(data))
    >>> check = noise_or_ambiguity(data, fit, n_replicates=100)
    >>> check.view
    'noise'
    """
    if isinstance(data, MulticlassAnnotations):
        summary = summarize_multiclass(data, groups=groups)
    elif isinstance(data, Summary):
        summary = data
    else:
        raise ConfigError(
            f"expected MulticlassAnnotations or a Summary; got {type(data).__name__}."
        )
    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    if channels.annotators != list(summary.annotators) or channels.n_classes != summary.n_classes:
        raise DataError(
            f"channels are for annotators {channels.annotators} and {channels.n_classes} classes; "
            f"the data have {list(summary.annotators)} and {summary.n_classes}."
        )
    if (
        isinstance(n_replicates, bool)
        or not isinstance(n_replicates, (int, np.integer))
        or (n_replicates < 20)
    ):
        raise ConfigError(f"n_replicates must be an integer >= 20; got {n_replicates!r}.")
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1); got {alpha!r}.")
    rng = check_random_state(random_state)
    pidx = _prevalence_index(summary, channels)
    c = summary.n_classes
    counts = summary.pattern_counts.values
    g_idx, p_idx = np.nonzero(counts)
    states = np.asarray(summary.states, dtype=np.int64)
    bits = 1 << np.arange(states.shape[1], dtype=np.int64)
    layout = _Layout(
        states=states[p_idx],
        group=g_idx,
        weight=counts[g_idx, p_idx].astype(np.float64),
        mask=(states[p_idx] < c).astype(np.int64) @ bits,
    )
    n_ans = (layout.states < c).sum(axis=1)
    n_items = layout.weight.sum()
    answers = {
        "median_per_item": float(np.median(np.repeat(n_ans, layout.weight.astype(np.int64)))),
        "items_with_two_or_more": int(layout.weight[n_ans >= 2].sum()),
        "items": int(n_items),
    }
    t_all = channels.confusion.values
    rho_all = channels.class_prevalence.values
    n_draws = t_all.shape[0]
    point = n_draws == 1
    t_mean, rho_mean = t_all.mean(axis=0), rho_all.mean(axis=0)
    obs = _statistics(layout.states, layout.group, layout.weight, t_mean, rho_mean, pidx)
    obs_sums = _class_sums(obs)
    many = answers["median_per_item"] >= MANY_ANSWERS
    small_space = (c + 1) ** summary.n_annotators <= MAX_PATTERN_CELLS
    obs_item = _item_dispersion(obs) if many else None
    disp_obs = np.empty((n_replicates, c + 1))
    disp_rep = np.empty((n_replicates, c + 1))
    dis_obs = np.empty((n_replicates, c + 1))
    dis_rep = np.empty((n_replicates, c + 1))
    chi_obs = np.empty((n_replicates, summary.n_groups))
    chi_rep = np.empty((n_replicates, summary.n_groups))
    item_exceed = np.zeros(layout.states.shape[0]) if many else None
    for r in range(n_replicates):
        t, rho = t_all[r % n_draws], rho_all[r % n_draws]
        # realised discrepancies: the observed statistic at this draw's parameters
        o = obs if point else _statistics(layout.states, layout.group, layout.weight, t, rho, pidx)
        disp_obs[r], dis_obs[r], _ = _ratios(_class_sums(o))
        rep_states, rep_group, rows = _replicate(layout, t, rho, pidx, rng)
        rep = _statistics(rep_states, rep_group, np.ones(rep_group.size), t, rho, pidx)
        disp_rep[r], dis_rep[r], _ = _ratios(_class_sums(rep))
        if small_space:
            chi_obs[r], chi_rep[r] = _pattern_discrepancy(
                summary, t, rho, pidx, rep_states, rep_group
            )
        if many:
            phi_rep = _item_dispersion(rep)
            phi_obs = obs_item if point else _item_dispersion(o)
            # rows sharing a group and answering set share a replicate distribution
            key = layout.group * (bits.sum() + 1) + layout.mask
            rep_key = key[rows]
            for kk in np.unique(key):
                pool = np.sort(phi_rep[rep_key == kk])
                sel = key == kk
                item_exceed[sel] += 1.0 - np.searchsorted(pool, phi_obs[sel], "left") / max(
                    pool.size, 1
                )
    disp_tail = (disp_rep >= disp_obs).mean(axis=0)
    disp_lower = (disp_rep <= disp_obs).mean(axis=0)
    upper = (dis_rep >= dis_obs).mean(axis=0)
    lower = (dis_rep <= dis_obs).mean(axis=0)
    dis_tail = np.minimum(1.0, 2 * np.minimum(upper, lower))
    items_per = _ratios(obs_sums)[2]
    classes = list(summary.classes)
    per_class = xr.Dataset(
        {
            "items": ((CLASS,), items_per[:c]),
            "dispersion_observed": ((CLASS,), disp_obs.mean(axis=0)[:c]),
            "dispersion_replicated": ((CLASS,), disp_rep.mean(axis=0)[:c]),
            "dispersion_tail": ((CLASS,), disp_tail[:c]),
            "disagreement_observed": ((CLASS,), dis_obs.mean(axis=0)[:c]),
            "disagreement_replicated": ((CLASS,), dis_rep.mean(axis=0)[:c]),
            "disagreement_excess": ((CLASS,), (dis_obs - dis_rep).mean(axis=0)[:c]),
            "disagreement_tail": ((CLASS,), dis_tail[:c]),
        },
        coords={CLASS: classes},
    )
    overall = {
        "items": float(items_per[c]),
        "dispersion_observed": float(disp_obs.mean(axis=0)[c]),
        "dispersion_replicated": float(disp_rep.mean(axis=0)[c]),
        "dispersion_tail": float(disp_tail[c]),
        "dispersion_lower_tail": float(disp_lower[c]),
        "disagreement_observed": float(dis_obs.mean(axis=0)[c]),
        "disagreement_replicated": float(dis_rep.mean(axis=0)[c]),
        "disagreement_excess": float((dis_obs - dis_rep).mean(axis=0)[c]),
        "disagreement_tail": float(dis_tail[c]),
    }
    patterns = None
    if small_space:
        patterns = xr.Dataset(
            {
                "discrepancy_observed": ((GROUP,), chi_obs.mean(axis=0)),
                "discrepancy_replicated": ((GROUP,), chi_rep.mean(axis=0)),
                "tail": ((GROUP,), (chi_rep >= chi_obs).mean(axis=0)),
            },
            coords={GROUP: list(summary.groups)},
        )
    per_item = None
    if many:
        tail_i = item_exceed / n_replicates
        tested = layout.weight
        share = float((tested * (tail_i < 0.05)).sum() / tested.sum())
        order = np.argsort(tail_i)[:5]
        per_item = {
            "share_overdispersed": share,
            "expected_share": 0.05,
            "items": int(tested.sum()),
            "most_overdispersed": [str(summary.pattern_labels[p_idx[i]]) for i in order],
        }
    view, reasons, flags = _verdict(overall, per_class, patterns, per_item, answers, alpha, point)
    return NoiseAmbiguityCheck(
        view=view,
        reasons=reasons,
        per_class=per_class,
        overall=overall,
        patterns=patterns,
        per_item=per_item,
        answers=answers,
        replicates=int(n_replicates),
        source="parametric bootstrap" if point else "posterior predictive",
        alpha=float(alpha),
        flags=flags,
    )


def _verdict(overall, per_class, patterns, per_item, answers, alpha, point):
    """Which view the evidence supports, and the evidence in words."""
    flags = []
    reasons = []
    source = "the point fit" if point else "the posterior"
    if answers["items_with_two_or_more"] < _MIN_ITEMS:
        reasons.append(
            f"only {answers['items_with_two_or_more']} item(s) have two or more answers: the "
            "answers to one item cannot be compared, so the data cannot tell noise from "
            "ambiguity."
        )
        return "inconclusive", reasons, flags
    c = per_class.sizes[CLASS]
    phi, phi_rep, tail = (
        overall["dispersion_observed"],
        overall["dispersion_replicated"],
        overall["dispersion_tail"],
    )
    over = [
        str(k)
        for k, t in zip(per_class[CLASS].values, per_class["dispersion_tail"].values)
        if t < alpha / c
    ]
    dispersed = tail < alpha
    text = (
        f"answers to the same item vary {phi:.3f} times as much around their class's "
        f"confusion rows as {source} predicts through the channels alone (replicated "
        f"{phi_rep:.3f}; tail probability {tail:.3g})"
    )
    n_med = answers["median_per_item"]
    if dispersed:
        icc = (phi - phi_rep) / max(n_med - 1, 1)
        reasons.append(
            text + f": items of one class differ from each other (an intra-item correlation "
            f"of about {icc:.3f} beyond the class at a median of {n_med:g} answers per item)"
            + (f", clearest in class(es) {over}" if over else "")
            + ". This is what ambiguity (or item difficulty) predicts, not class-conditional "
            "noise."
        )
    elif overall["dispersion_lower_tail"] < alpha:
        reasons.append(
            text + f": the answers vary less than the fitted confusions imply (lower tail "
            f"probability {overall['dispersion_lower_tail']:.3g}); the confusions are noisier "
            "than the annotators, as when the prior's pseudo-answers weigh on rows with few "
            "items (many classes, few items per class)."
        )
    else:
        reasons.append(text + ": consistent with class-conditional noise.")
        if n_med < MANY_ANSWERS:
            reasons.append(
                f"with a median of {n_med:g} answers per item this check has little power: a "
                "latent-class model explains answers that agree within items by the class itself, "
                "so moderate ambiguity can look like noise. Only many answers per item separate "
                "the two views well."
            )
    if per_item is not None:
        reasons.append(
            f"per-item test ({per_item['items']} items, median {n_med:g} answers): "
            f"{per_item['share_overdispersed']:.1%} of items are over-dispersed at level 0.05 "
            f"(about {per_item['expected_share']:.0%} expected under the noise model)."
        )
    misfit_groups = []
    if patterns is not None:
        g = patterns.sizes[GROUP]
        misfit_groups = [
            str(x) for x, t in zip(patterns[GROUP].values, patterns["tail"].values) if t < alpha / g
        ]
        if misfit_groups:
            reasons.append(
                f"the pattern counts of channel group(s) {misfit_groups} are further from "
                f"{source} than replicated data (chi-square tail probabilities "
                + ", ".join(
                    f"{t:.3g}"
                    for x, t in zip(patterns[GROUP].values, patterns["tail"].values)
                    if str(x) in misfit_groups
                )
                + ")."
            )
    dis_tail = overall["disagreement_tail"]
    if dis_tail < alpha:
        direction = "more" if overall["disagreement_excess"] > 0 else "less"
        reasons.append(
            f"annotators disagree {direction} within items than replicated data "
            f"({overall['disagreement_observed']:.4f} vs {overall['disagreement_replicated']:.4f}"
            f", tail probability {dis_tail:.3g})."
        )
    if dispersed:
        view = "ambiguity"
        flags.append(
            Flag(
                "noise.overdispersed",
                "answers are over-dispersed within items relative to the noise model "
                f"(dispersion {phi:.3f} vs {phi_rep:.3f}): disagreement looks like ambiguity; "
                "the noise-corrected errors assume one true class per item.",
                "noise or ambiguity",
            )
        )
    elif misfit_groups or dis_tail < alpha or overall["dispersion_lower_tail"] < alpha:
        view = "misfit"
        flags.append(
            Flag(
                "noise.misfit",
                "the noise model misfits the annotations in ways that are not within-item "
                "over-dispersion (see the check): dependent annotators or class-dependent "
                "missingness can cause this; corrected errors may be biased.",
                "noise or ambiguity",
            )
        )
    else:
        view = "noise"
    return view, reasons, flags
