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

This module tests the noise model against the data with replicated data sets.
Each replicate keeps every item's channel group and set of answering annotators
(and every gold item's known class), draws the class from the group's prevalence
and the answers from the confusion rows. Every statistic ``D`` is one function of
a data set, computed the same way on the data and on each replicate:

- **at a point fit** (a parametric bootstrap of the fitted noise model): ``D(X) =
  d(X, theta_hat(X))`` with ``theta_hat`` the maximum-likelihood (EM) fit *of that
  data set*: the given channels are polished by EM on the data, and every
  replicate is refitted by EM started from them. The reference distribution then
  carries the fit's own adaptation to its data (a fitted model is closer to its
  data than to fresh data from it), which plugging the fitted channels into the
  replicates would leave out;
- **with a posterior** (a posterior predictive check with realised discrepancies):
  ``d(X, theta_s)`` against ``d(X_rep, theta_s)`` with ``X_rep`` drawn at the draw
  ``theta_s``; no refit. Such tail probabilities are conservative (Meng 1994), not
  calibrated: the calibrated check is the one at the EM fit.

The statistics (items with at least two answers; ``r_iy`` is the fit's
responsibility of class ``y`` for item ``i``, ``v_i`` its answer counts):

Dispersion per latent class ``y``
    ``phi_y = sum_i r_iy |v_i - E_iy|^2 / sum_i r_iy V_iy`` with
    ``E_iy = sum_{j answered} M_j[y, :]`` and
    ``V_iy = sum_{j answered} sum_a M_j[y, a] (1 - M_j[y, a])``, the mean and the
    variance of ``|v_i - E_iy|^2`` given ``y`` when annotator ``j`` answers with
    rates ``M_j[y, :]``. ``M`` is the responsibility-weighted answer rate of the data
    themselves (one M step): equal to the confusions at a maximum-likelihood fit, and
    otherwise it keeps a mean that misses (a posterior pulled by its prior) from adding
    its squared bias to the dispersion. Under the noise model ``phi`` is near 1; if
    answers to one item share an intra-item correlation ``rho_icc`` beyond the class,
    ``phi`` is about ``1 + (N - 1) rho_icc``: with many answers per item (ChaosNLI:
    100) a little ambiguity makes ``phi`` large. The upper tail is the evidence for
    ambiguity; the lower tail flags answers *less* dispersed than the fitted
    confusions imply, a misfit of another kind.
Disagreement per latent class ``y``
    The share of disagreeing pairs among an item's answers,
    ``d_i = 1 - sum_a v_ia (v_ia - 1) / (N_i (N_i - 1))``, and its expectation
    given the class, ``delta_iy = 1 - mean_{j != k answered} sum_a T_j[y, a] T_k[y, a]``;
    the excess ``sum_i r_iy (d_i - delta_iy) / sum_i r_iy`` (mean 0 under the model,
    pooled over classes too) with a two-sided tail probability.
Annotator-pair agreement tables (the pattern-level discrepancy)
    For every pair of annotators ``j < k``, a table of ``C + 1`` cells: the items on
    which both answered ``a`` (one cell per class), expected
    ``E_jk[a] = sum_g N_gjk sum_y rho_gy T_j[y, a] T_k[y, a]`` (``N_gjk`` items of channel
    group ``g`` answered by both), and the items on which they answered differently.
    The statistic is the deviance ``G2 = 2 sum O log(O / E)`` over every cell and pair
    (an empty cell adds 0; each table's totals match, so this is its multinomial
    deviance). The cells are fixed before looking at the data, so the data and every
    replicate are measured on the same cells whatever patterns occur; second-order
    margins stay informative where the full pattern table (``(C+1)**K`` cells) is
    almost empty (limited-information goodness of fit, Maydeu-Olivares & Joe 2005).
    Two pools keep the cells away from parameters that a fit of ~100 items per class
    puts on the boundary, where replicates drawn from the fit are sparser than the
    data: the cells of two *different* answers are one cell (their expectations rest on
    small off-diagonal confusion entries; measured with a cell per answer pair: a 53%
    false-alarm rate at C = 10, K = 3, 900 items), and the channel groups share one
    table per pair (a group's prevalence of a class it rarely holds is fitted near zero).
    Dependent annotators and ambiguity move these tables.
Per-item test (many answers per item)
    Each item's own dispersion ``phi_i`` against the replicated items with the same
    channel group and answering set: the share of items with a tail probability
    below 0.05 (about 0.05 under the noise model). Descriptive: not in the verdict.

Tail probabilities are Monte Carlo p-values, ``(1 + #{D_rep >= D_obs}) / (R + 1)``
(ties count against the data), so under the null each is at most its level
whatever ``R`` (the derivation, and what it does not cover, is in
``docs/multiclass.md``). The verdict (:attr:`NoiseAmbiguityCheck.view`) is
"ambiguity" when the dispersion's upper tail is at most ``alpha``, "misfit" when its
lower tail or the pair tables' tail is, "noise" otherwise: three tests at level
``alpha`` each, so data from the noise model are called "noise" with probability at
least ``1 - 3 alpha`` (0.97 at the default) up to the bootstrap's plug-in error. The
disagreement is shown for reading, not tested: it is a quadratic function of the
answer counts like the dispersion, so its tails repeat the dispersion's.
"inconclusive" when fewer than 30 items have two answers or the noise model has as
many free parameters as the answer patterns have cells (it then fits any answers:
two classes, three annotators, one group).

Two classes: the same model and statistics; the dispersion is then the binomial
over-dispersion of each item's count of class-1 answers beyond its class (item
difficulty or genuinely borderline items), and the pair tables are the pairs'
agreement on each class. Binary channels fitted on score groups are matched by the
score on their group edges.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from bayescal._blas import MAX_THREADS, available_cpus, map_in_order, one_blas_thread
from bayescal._random import check_random_state
from bayescal.channels.em import em_run
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.dims import CLASS, GROUP
from bayescal.errors import ConfigError, DataError
from bayescal.flags import Flag
from bayescal.summaries.patterns import unique_patterns
from bayescal.summaries.summary import Summary, summarize

__all__ = [
    "NoiseAmbiguityCheck",
    "noise_or_ambiguity",
    "pair_deviance",
    "VIEWS",
    "MANY_ANSWERS",
    "DEFAULT_REPLICATES",
    "REFIT_TOL",
    "REFIT_MAX_ITER",
]

#: The verdicts: the noise model fits; answers are over-dispersed within items (ambiguity);
#: the noise model misfits otherwise; too little information to tell.
VIEWS = ("noise", "ambiguity", "misfit", "inconclusive")

#: Median answers per item from which the per-item test is run.
MANY_ANSWERS = 10

DEFAULT_REPLICATES = 200

#: EM settings of the polish and of every replicate's refit. Started at the fitted channels,
#: EM stops when the mean log-likelihood per item changes by less than ``REFIT_TOL (1 + |ll|)``;
#: the statistics' remaining refit error is then far below their replicate spread
#: (``docs/multiclass.md``).
REFIT_TOL = 1e-7
REFIT_MAX_ITER = 1000

#: Probability floor of the refits (the EM default).
_CLIP = 1e-6

#: Items with two or more answers needed before the check can say anything.
_MIN_ITEMS = 30

#: Relative tolerance under which a replicate's statistic counts as equal to the data's.
_TIE = 1e-9

PAIR = "pair"


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
        ``disagreement_observed``, ``disagreement_expected`` (under the fitted
        model), ``disagreement_replicated`` (replicates' mean),
        ``disagreement_excess`` (observed minus expected), ``disagreement_tail``
        (two-sided, of the excess against the replicates' own excess).
    overall : dict
        The same statistics pooled over classes (plus ``dispersion_lower_tail``), and
        the pair tables' deviance summed over groups and pairs:
        ``pattern_discrepancy_observed``, ``pattern_discrepancy_replicated``,
        ``pattern_tail``.
    pairs : xarray.Dataset over ``pair``
        Each annotator pair's agreement-table deviance, labelled ``"j~k"``:
        ``discrepancy_observed``, ``discrepancy_replicated``, ``excess_sd`` (observed
        minus replicated in replicate standard deviations), ``tail`` (per pair, for
        reading; the verdict uses the sum over pairs in ``overall``).
    per_item : dict or None
        With many answers per item: ``share_overdispersed``, ``expected_share``
        (0.05), ``items`` tested, ``most_overdispersed`` (pattern labels).
    answers : dict
        ``median_per_item``, ``items_with_two_or_more``, ``items``.
    replicates : int
    source : str
        ``"parametric bootstrap"`` (point fit, refitted on every replicate) or
        ``"posterior predictive"``.
    alpha : float
    refit : dict or None
        Point fits: ``polish_shift`` (largest change of a confusion entry when EM
        polished the given channels on the data), ``iterations_median``,
        ``not_converged`` (replicates whose refit stopped at :data:`REFIT_MAX_ITER`).
    degrees_of_freedom : float
        Free cells of the observed answering sets minus the noise model's parameters.
    flags : list of Flag
    """

    view: str
    reasons: list[str]
    per_class: xr.Dataset
    overall: dict[str, float]
    pairs: xr.Dataset
    per_item: dict | None
    answers: dict[str, float]
    replicates: int
    source: str
    alpha: float
    refit: dict[str, float] | None
    degrees_of_freedom: float
    flags: list[Flag] = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain numbers for JSON (only the five pairs furthest from the model)."""
        per_class = {
            str(c): {v: float(self.per_class[v].sel({CLASS: c})) for v in self.per_class.data_vars}
            for c in self.per_class[CLASS].values
        }
        order = np.lexsort((-self.pairs["excess_sd"].values, self.pairs["tail"].values))[:5]
        pairs = {
            str(self.pairs[PAIR].values[i]): {
                v: float(self.pairs[v].values[i]) for v in self.pairs.data_vars
            }
            for i in order
        }
        return {
            "view": self.view,
            "reasons": list(self.reasons),
            "overall": dict(self.overall),
            "per_class": per_class,
            "pairs_furthest": pairs,
            "per_item": self.per_item,
            "answers": dict(self.answers),
            "replicates": self.replicates,
            "source": self.source,
            "alpha": self.alpha,
            "refit": None if self.refit is None else dict(self.refit),
            "degrees_of_freedom": self.degrees_of_freedom,
        }

    def __repr__(self) -> str:
        o = self.overall
        return (
            f"<NoiseAmbiguityCheck view={self.view!r} dispersion={o['dispersion_observed']:.3f} "
            f"(replicated {o['dispersion_replicated']:.3f}, tail {o['dispersion_tail']:.3g}); "
            f"pair deviance tail {o['pattern_tail']:.3g}; {self.replicates} replicates "
            f"({self.source})>"
        )


# ----------------------------------------------------------------- data as rows
@dataclass(frozen=True)
class _Rows:
    """Items as distinct (label, answer pattern) rows with their item counts.

    ``label`` is the summary's channel group of ordinary items, the known class of
    gold items.
    """

    states: np.ndarray  # (m, K) int64, C = not answered
    label: np.ndarray  # (m,) int64
    weight: np.ndarray  # (m,) float64

    @classmethod
    def of_items(cls, states: np.ndarray, label: np.ndarray, n_classes: int) -> _Rows:
        """Aggregate item-level states (n, K) and labels (n,) into distinct rows."""
        pattern_states, inverse = unique_patterns(states, n_classes)
        key = label.astype(np.int64) * pattern_states.shape[0] + inverse
        _, first, count = np.unique(key, return_index=True, return_counts=True)
        return cls(
            states=np.asarray(states[first], dtype=np.int64),
            label=np.asarray(label[first], dtype=np.int64),
            weight=count.astype(np.float64),
        )

    @classmethod
    def of_counts(cls, counts: np.ndarray, states: np.ndarray) -> _Rows:
        """Rows of the non-zero cells of ``counts[label, pattern]``."""
        lab, pat = np.nonzero(counts)
        return cls(
            states=np.asarray(states, dtype=np.int64)[pat],
            label=lab.astype(np.int64),
            weight=counts[lab, pat].astype(np.float64),
        )

    @property
    def n_items(self) -> float:
        return float(self.weight.sum())


@dataclass(frozen=True)
class _Params:
    """One noise model: confusions (K, C, C) and prevalences per fit group (G, C)."""

    confusion: np.ndarray
    prevalence: np.ndarray


@dataclass(frozen=True)
class _Discrepancy:
    """The statistics of one data set at one noise model."""

    #: (5, C): responsibility-weighted items, dispersion numerator and denominator,
    #: disagreement and its expectation under the model, per latent class
    class_sums: np.ndarray
    pair_deviance: np.ndarray  # (K, K), upper triangle (j < k)
    item_dispersion: np.ndarray | None  # (m,) each row's own dispersion

    def ratios(self) -> dict[str, np.ndarray]:
        """Per class, last entry pooled, (C + 1,) each: ``items``, ``dispersion``,
        ``disagreement``, ``disagreement_expected``."""
        pooled = np.concatenate([self.class_sums, self.class_sums.sum(axis=1, keepdims=True)], 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return {
                "items": pooled[0],
                "dispersion": pooled[1] / pooled[2],
                "disagreement": pooled[3] / pooled[0],
                "disagreement_expected": pooled[4] / pooled[0],
            }


def _one_hot(states: np.ndarray, n_classes: int) -> np.ndarray:
    """(m, K, C) indicators of the answered class (all zero where not answered)."""
    m, k = states.shape
    out = np.zeros((m, k, n_classes))
    rows, cols = np.nonzero(states < n_classes)
    out[rows, cols, states[rows, cols]] = 1.0
    return out


def _agreement(confusion: np.ndarray) -> np.ndarray:
    """``A[y, j, k, a] = T_j[y, a] T_k[y, a]``: both answer ``a`` given class ``y``."""
    return np.einsum("jya,kya->yjka", confusion, confusion)


def pair_deviance(
    states, label, weight, confusion, prevalence, *, n_groups: int | None = None
) -> np.ndarray:
    """Deviance of every annotator pair's agreement table (module docstring).

    The table of pair ``j < k`` has ``C + 1`` cells: the items on which both answered
    ``a`` (one cell per class) and the items on which they answered differently, summed
    over the channel groups (each group's items expected at its own prevalence).

    Parameters
    ----------
    states : ndarray of shape (m, K)
        Answered class ``0 .. C-1`` or ``C`` (not answered), one row per item or per
        distinct (group, pattern).
    label : ndarray of shape (m,)
        Channel group index of each row.
    weight : ndarray of shape (m,)
        Items per row.
    confusion : ndarray of shape (K, C, C)
    prevalence : ndarray of shape (L, C)
        Class prevalence of each channel group (rows indexed by ``label``).
    n_groups : int, optional
        ``L``; default ``prevalence.shape[0]``.

    Returns
    -------
    ndarray of shape (K, K)
        ``G2_jk = 2 sum_cells O log(O / E)`` for ``j < k`` (zero on and below the
        diagonal), with ``E_jk[a] = sum_g N_gjk sum_y rho_gy T_j[y, a] T_k[y, a]`` for
        "both answered a" and ``N_jk - sum_a E_jk[a]`` for "answered differently".

    Examples
    --------
    >>> t = np.array([[[0.9, 0.1], [0.2, 0.8]]] * 2)
    >>> rho = np.array([[0.5, 0.5]])
    >>> states = np.array([[0, 0], [1, 1], [0, 1]])
    >>> dev = pair_deviance(states, np.zeros(3, int), np.array([40.0, 35.0, 25.0]), t, rho)
    >>> round(float(dev[0, 1]), 3)  # E = 100 * (0.425, 0.325; differently 0.25)
    0.338
    """
    states = np.asarray(states, dtype=np.int64)
    t = np.asarray(confusion, dtype=np.float64)
    rho = np.asarray(prevalence, dtype=np.float64)
    k, c, _ = t.shape
    n_groups = rho.shape[0] if n_groups is None else n_groups
    label = np.asarray(label)
    w = np.asarray(weight, dtype=np.float64)
    onehot = _one_hot(states, c)  # (m, K, C)
    answered = (states < c).astype(np.float64)
    observed = np.zeros((k, k, c + 1))
    expected = np.zeros((k, k, c + 1))
    agree = _agreement(t)  # (C_y, K, K, C_a)
    counted = np.zeros(label.shape, dtype=bool)
    for g in range(n_groups):
        sel = label == g
        if not sel.any():
            continue
        counted |= sel
        both = (answered[sel] * w[sel, None]).T @ answered[sel]
        expected[..., :c] += both[..., None] * np.einsum("y,yjka->jka", rho[g], agree)
        observed[..., c] += both
        expected[..., c] += both
    # both answered alike: summed over the counted rows at once (the groups differ only in
    # expectation), one (K x m) (m x K) product per class
    x, ws = onehot[counted], w[counted, None]
    for a in range(c):
        observed[:, :, a] = (x[:, :, a] * ws).T @ x[:, :, a]
    observed[..., c] -= observed[..., :c].sum(axis=-1)
    expected[..., c] -= expected[..., :c].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # counts are whole items; below half an item a cell is empty (rounding in the sums)
        term = np.where(observed > 0.5, observed * np.log(observed / expected), 0.0)
    return np.triu(2.0 * term.sum(axis=-1), 1)


def _mask_form(mask: np.ndarray, form: np.ndarray) -> np.ndarray:
    """``sum_{j, k} mask[m, j] form[y, j, k] mask[m, k]``, shape (m, C)."""
    m, k = mask.shape
    c = form.shape[0]
    by_first = (mask @ form.transpose(1, 0, 2).reshape(k, c * k)).reshape(m, c, k)
    return (by_first * mask[:, None, :]).sum(axis=2)


def _discrepancy(rows: _Rows, params: _Params, fit_group: np.ndarray, n_groups: int, *, per_item):
    """The module's statistics of ``rows`` (ordinary items) at ``params``."""
    t = params.confusion
    rho = params.prevalence[fit_group]  # (L, C): each summary group's prevalence
    k, c, _ = t.shape
    states = rows.states
    onehot = _one_hot(states, c)  # (m, K, C)
    mask = (states < c).astype(np.float64)
    m = states.shape[0]
    flat = onehot.reshape(m, k * c)  # (m, K C): the einsums below as matrix products (BLAS)
    joint = flat @ np.log(t).transpose(0, 2, 1).reshape(k * c, c) + np.log(rho)[rows.label]
    joint -= joint.max(axis=1, keepdims=True)
    r = np.exp(joint)
    r /= r.sum(axis=1, keepdims=True)
    counts = onehot.sum(axis=1)  # (m, C)
    n_ans = counts.sum(axis=1)
    # The class means come from these answers (one M step with these responsibilities), not
    # from the channels: at a maximum-likelihood fit they coincide, and otherwise a mean that
    # misses would add its squared bias to the dispersion and pass for over-dispersion.
    num = ((rows.weight[:, None] * r).T @ flat).reshape(c, k, c).transpose(1, 0, 2) + 1e-12
    tm = num / num.sum(axis=2, keepdims=True)
    var = mask @ (tm * (1 - tm)).sum(axis=2)  # (m, C)
    # s = |v - E_y|^2 with E_y = sum_j mask_j tm[j, y] expanded, so no (m, C, C) array of
    # expected counts is formed: |v|^2 - 2 v.E_y + |E_y|^2, the last a form in the mask
    cross = (mask[:, :, None] * counts[:, None, :]).reshape(m, k * c) @ tm.transpose(
        0, 2, 1
    ).reshape(k * c, c)
    s = (counts**2).sum(axis=1)[:, None] - 2.0 * cross + _mask_form(mask, _agreement(tm).sum(3))
    ok = n_ans >= 2
    pairs = np.maximum(n_ans * (n_ans - 1), 1.0)
    d = np.where(ok, 1.0 - (counts * (counts - 1)).sum(axis=1) / pairs, 0.0)
    # E[d | y]: 1 - the mean over ordered pairs j != k of P(both answer alike | y)
    agree = _agreement(t).sum(axis=3)  # (C, K, K)
    same = _mask_form(mask, agree) - mask @ np.einsum("yjj->jy", agree)
    d_expected = np.where(ok[:, None], 1.0 - same / pairs[:, None], 0.0)  # (m, C)
    with np.errstate(invalid="ignore", divide="ignore"):
        item = (r * s).sum(axis=1) / (r * var).sum(axis=1) if per_item else None
    wr = (rows.weight * ok)[:, None] * r
    sums = np.stack(
        [
            wr.sum(axis=0),
            (wr * s).sum(axis=0),
            (wr * var).sum(axis=0),
            wr.T @ d,
            (wr * d_expected).sum(axis=0),
        ]
    )
    dev = pair_deviance(states, rows.label, rows.weight, t, rho, n_groups=n_groups)
    return _Discrepancy(class_sums=sums, pair_deviance=dev, item_dispersion=item)


# ----------------------------------------------------------------- replicates and refits
@dataclass(frozen=True)
class _ReplicateStatistics:
    """One replicate's statistics: the data's and the replicate's (with the refit's
    iterations at a point fit) and, with many answers per item, the items' exceedances."""

    observed: _Discrepancy
    replicated: _Discrepancy
    n_iter: int
    converged: bool
    exceedance: np.ndarray | None


def _replicate(rows: _Rows, t: np.ndarray, rho_of_row: np.ndarray | None, rng) -> _Rows:
    """Replicated items: each keeps its row's label and answering set.

    The class is drawn from ``rho_of_row`` (m, C), or is the row's label (gold rows,
    ``rho_of_row=None``); the answers from the confusion rows.
    """
    k, c, _ = t.shape
    idx = np.repeat(np.arange(rows.weight.size), rows.weight.astype(np.int64))
    answered = rows.states[idx] < c
    if rho_of_row is None:
        y = rows.label[idx]
    else:
        cum = np.cumsum(rho_of_row, axis=1)[idx]
        y = np.minimum((rng.random((idx.size, 1)) > cum).sum(axis=1), c - 1)
    u = rng.random(answered.shape)
    out = np.full(answered.shape, c, dtype=np.int64)
    for j in range(k):
        cj = np.cumsum(t[j], axis=1)[y]  # (n, C)
        a = np.minimum((u[:, j, None] > cj).sum(axis=1), c - 1)
        out[:, j] = np.where(answered[:, j], a, c)
    return _Rows.of_items(out, rows.label[idx], c)


def _refit(rows: _Rows, gold: _Rows | None, start: _Params, fit_group: np.ndarray):
    """EM from ``start`` on ``rows`` (and gold rows): (params, iterations, converged)."""
    k, c, _ = start.confusion.shape
    m = rows.weight.size
    states = rows.states if gold is None else np.concatenate([rows.states, gold.states])
    uniq, inverse = unique_patterns(states, c)
    counts = np.zeros((start.prevalence.shape[0], uniq.shape[0]))
    np.add.at(counts, (fit_group[rows.label], inverse[:m]), rows.weight)
    gold_counts = None
    if gold is not None:
        gold_counts = np.zeros((c, uniq.shape[0]))
        np.add.at(gold_counts, (gold.label, inverse[m:]), gold.weight)
    res = em_run(
        counts,
        uniq,
        start.confusion[None],
        start.prevalence[None],
        tol=REFIT_TOL,
        max_iter=REFIT_MAX_ITER,
        clip=_CLIP,
        gold=gold_counts,
    )
    fitted = _Params(res["confusion"][0], res["prevalence"][0])
    return fitted, int(res["n_iter"][0]), bool(res["converged"][0])


def _degrees_of_freedom(rows: _Rows, gold: _Rows | None, fit_group, n_classes, n_ann) -> float:
    """Free cells of the observed (group, answering set) tables minus the model's parameters."""
    c = n_classes

    def cells(r: _Rows, lab: np.ndarray) -> tuple[float, int]:
        n_ans = (r.states < c).sum(axis=1)
        bits = (r.states < c).astype(np.int64)
        key = np.unique(np.column_stack([lab, bits]), axis=0)
        sizes = key[:, 1:].sum(axis=1)
        return float(sum(float(c) ** int(s) - 1.0 for s in sizes if s > 0)), int(
            np.unique(lab[n_ans > 0]).size
        )

    free, groups = cells(rows, fit_group[rows.label])
    if gold is not None:
        free += cells(gold, gold.label)[0]
    return free - (n_ann * c * (c - 1) + groups * (c - 1))


def _upper(rep: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Monte Carlo upper tail ``(1 + #{rep >= obs}) / (1 + #valid)`` along axis 0."""
    return _tail(rep >= obs - _TIE * (1 + np.abs(obs)), rep, obs)


def _lower(rep: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Monte Carlo lower tail ``(1 + #{rep <= obs}) / (1 + #valid)`` along axis 0."""
    return _tail(rep <= obs + _TIE * (1 + np.abs(obs)), rep, obs)


def _standardised(rep: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """``(mean obs - mean rep) / sd rep`` along axis 0 (0 where the replicates do not vary)."""
    sd = rep.std(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sd > 0, (obs.mean(axis=0) - rep.mean(axis=0)) / sd, 0.0)


def _tail(hit: np.ndarray, rep: np.ndarray, obs: np.ndarray) -> np.ndarray:
    valid = np.isfinite(rep) & np.isfinite(obs)
    n = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (1.0 + (hit & valid).sum(axis=0)) / (1.0 + n), np.nan)


# ----------------------------------------------------------------- inputs
def _channel_grouping(channels: ChannelFit, classes: list[str]):
    """The ``groups`` argument that reproduces the channels' groups on a container.

    Pooled channels: ``"all"``; groups named by the classes: ``"predicted"``; otherwise
    the channels' group edges (score groups on ``p_1`` for two classes, confidence
    groups on ``max p`` beyond, as :func:`bayescal.summaries.summarize` reads edges).
    """
    names = [str(g) for g in channels.class_prevalence[GROUP].values]
    if names == ["all"]:
        return "all"
    if names == [str(c) for c in classes] or channels.group_edges is None:
        return "predicted"
    return np.asarray(channels.group_edges, dtype=np.float64)


def _summary_of(data, channels: ChannelFit, groups) -> Summary:
    """The summary to check: a summary as given, a container summarised on the channels' groups."""
    if isinstance(data, Summary):
        return data
    if isinstance(data, Annotations):
        chosen = _channel_grouping(channels, data.classes) if groups is None else groups
        return summarize(data, groups=chosen)
    raise ConfigError(
        f"expected annotations (a container) or a Summary; got {type(data).__name__}."
    )


def _prevalence_index(summary: Summary, channels: ChannelFit) -> np.ndarray:
    """The channels' prevalence row of each summary group (groups without items: any)."""
    groups = [str(g) for g in channels.class_prevalence[GROUP].values]
    if groups == ["all"]:
        return np.zeros(summary.n_groups, dtype=np.int64)
    held = summary.pattern_counts.values.sum(axis=1) > 0
    missing = [g for g, h in zip(summary.groups, held) if h and str(g) not in groups]
    if missing:
        raise DataError(
            f"the channels have prevalences for groups {groups} but the data have groups "
            f"{list(summary.groups)} ({missing} missing); summarise the data with the grouping "
            "the channels were fitted on, or fit pooled channels."
        )
    return np.array(
        [groups.index(str(g)) if str(g) in groups else 0 for g in summary.groups], dtype=np.int64
    )


def _check_options(n_replicates, alpha) -> None:
    if not (isinstance(alpha, (float, int, np.floating)) and not isinstance(alpha, bool)) or not (
        0 < alpha < 1
    ):
        raise ConfigError(f"alpha must be in (0, 1); got {alpha!r}.")
    need = max(20, math.ceil(1.0 / alpha - 1.0 - 1e-9))
    if (
        isinstance(n_replicates, bool)
        or not isinstance(n_replicates, (int, np.integer))
        or n_replicates < need
    ):
        raise ConfigError(
            f"n_replicates must be an integer >= {need} at alpha = {alpha:g} (the smallest "
            f"Monte Carlo tail probability is 1 / (n_replicates + 1)); got {n_replicates!r}."
        )


# ----------------------------------------------------------------- entry point
def noise_or_ambiguity(
    data,
    channels: ChannelFit,
    *,
    groups=None,
    n_replicates: int = DEFAULT_REPLICATES,
    alpha: float = 0.01,
    random_state=0,
) -> NoiseAmbiguityCheck:
    """Test the noise model against the annotations: noise or ambiguity? (SPEC §3).

    Parameters
    ----------
    data : Annotations or Summary
        The annotations the channels were fitted on, any number of classes (a
        container is summarised with ``groups``).
    channels : ChannelFit
        A point fit (parametric bootstrap: EM polishes it on the data and refits
        every replicate from it; use the maximum-likelihood fit, see the module
        docstring) or a posterior (one draw per replicate, cycling through the
        draws: a posterior predictive check, conservative).
    groups : channel groups, optional
        Only with a container. Default: the channels' groups (pooled, predicted
        class, confidence edges, or for binary channels the score on their edges).
    n_replicates : int, default 200
        Replicated data sets; tail probabilities move in steps of 1 / (R + 1), so
        at least ``1 / alpha - 1`` are needed (99 at the default level).
    alpha : float, default 0.01
        Level of each of the verdict's three tests (module docstring).
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    NoiseAmbiguityCheck

    Raises
    ------
    ConfigError
        A wrong type, ``alpha`` outside (0, 1), too few replicates for ``alpha``.
    DataError
        Channels for other annotators, classes or groups than the data.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.channels.em import dawid_skene_em
    >>> from bayescal.summaries import summarize_multiclass
    >>> data = simulate_multiclass(2000, 3, random_state=0)
    >>> fit = dawid_skene_em(summarize_multiclass(data))
    >>> check = noise_or_ambiguity(data, fit, n_replicates=99)
    >>> check.view
    'noise'
    """
    if not isinstance(channels, ChannelFit):
        raise ConfigError(f"channels must be a ChannelFit; got {type(channels).__name__}.")
    _check_options(n_replicates, alpha)
    summary = _summary_of(data, channels, groups)
    if channels.annotators != list(summary.annotators) or channels.n_classes != summary.n_classes:
        raise DataError(
            f"channels are for annotators {channels.annotators} and {channels.n_classes} classes; "
            f"the data have {list(summary.annotators)} and {summary.n_classes}."
        )
    rng = check_random_state(random_state)
    # many small matrix products: a multi-threaded BLAS would spend its time synchronising
    with one_blas_thread():
        return _check(summary, channels, n_replicates, float(alpha), rng)


def _check(summary: Summary, channels: ChannelFit, n_replicates: int, alpha: float, rng):
    """The body of :func:`noise_or_ambiguity` on validated inputs."""
    fit_group = _prevalence_index(summary, channels)
    c, k, n_groups = summary.n_classes, summary.n_annotators, summary.n_groups
    states = np.asarray(summary.states, dtype=np.int64)
    rows = _Rows.of_counts(summary.pattern_counts.values, states)
    gold = None
    if summary.has_gold and summary.gold_counts().sum() > 0:
        gold = _Rows.of_counts(summary.gold_counts(), states)
    n_ans = (rows.states < c).sum(axis=1)
    answers = {
        "median_per_item": float(np.median(np.repeat(n_ans, rows.weight.astype(np.int64))))
        if rows.weight.size
        else 0.0,
        "items_with_two_or_more": int(rows.weight[n_ans >= 2].sum()),
        "items": int(rows.n_items),
    }
    dof = _degrees_of_freedom(rows, gold, fit_group, c, k)
    t_all = channels.confusion.values
    rho_all = channels.class_prevalence.values
    n_draws = t_all.shape[0]
    point = n_draws == 1
    many = answers["median_per_item"] >= MANY_ANSWERS
    given = _Params(t_all[0], rho_all[0])
    fitted = given
    refit: dict[str, float] | None = None
    iterations: list[int] = []
    not_converged = 0
    if point:
        fitted, _, _ = _refit(rows, gold, given, fit_group)
        refit = {"polish_shift": float(np.abs(fitted.confusion - given.confusion).max())}
    obs_point = _discrepancy(rows, fitted, fit_group, n_groups, per_item=many)
    pairs_j, pairs_k = np.triu_indices(k, 1)
    obs_stats: dict[str, list[np.ndarray]] = {}
    rep_stats: dict[str, list[np.ndarray]] = {}
    item_exceed = np.zeros(rows.weight.size)

    def drawn() -> Iterator[tuple[_Params, _Rows, _Rows | None]]:
        # every replicate's random draws, in order, in this thread
        for r in range(n_replicates):
            params = fitted if point else _Params(t_all[r % n_draws], rho_all[r % n_draws])
            rho_rows = params.prevalence[fit_group][rows.label]
            rep_rows = _replicate(rows, params.confusion, rho_rows, rng)
            rep_gold = None if gold is None else _replicate(gold, params.confusion, None, rng)
            yield params, rep_rows, rep_gold

    def statistics(replicate: tuple[_Params, _Rows, _Rows | None]) -> _ReplicateStatistics:
        # one replicate's refit and statistics: no random numbers, so any thread
        params, rep_rows, rep_gold = replicate
        obs = obs_point if point else _discrepancy(rows, params, fit_group, n_groups, per_item=many)
        rep_params, n_iter, conv = params, 0, True
        if point:
            rep_params, n_iter, conv = _refit(rep_rows, rep_gold, params, fit_group)
        rep = _discrepancy(rep_rows, rep_params, fit_group, n_groups, per_item=many)
        exceed = None
        if many:
            exceed = _item_exceedance(rows, obs.item_dispersion, rep_rows, rep, c, n_groups)
        return _ReplicateStatistics(obs, rep, n_iter, conv, exceed)

    threads = min(available_cpus(), MAX_THREADS)
    for one in map_in_order(statistics, drawn(), workers=threads):
        if point:
            iterations.append(one.n_iter)
            not_converged += not one.converged
        for store, stats in ((obs_stats, one.observed), (rep_stats, one.replicated)):
            for name, value in _named_statistics(stats, pairs_j, pairs_k).items():
                store.setdefault(name, []).append(value)
        if one.exceedance is not None:
            item_exceed += one.exceedance
    if refit is not None:
        refit["iterations_median"] = float(np.median(iterations))
        refit["not_converged"] = int(not_converged)
    o = {name: np.array(v) for name, v in obs_stats.items()}  # (R, ...) each
    x = {name: np.array(v) for name, v in rep_stats.items()}
    disp_tail = _upper(x["dispersion"], o["dispersion"])
    disp_lower = _lower(x["dispersion"], o["dispersion"])
    ex_o, ex_x = o["disagreement_excess"], x["disagreement_excess"]
    dis_tail = np.minimum(1.0, 2 * np.minimum(_upper(ex_x, ex_o), _lower(ex_x, ex_o)))

    def mean(a: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.nanmean(a, axis=0) if np.isfinite(a).any() else a[0]

    columns = {
        "items": mean(o["items"]),
        "dispersion_observed": mean(o["dispersion"]),
        "dispersion_replicated": mean(x["dispersion"]),
        "dispersion_tail": disp_tail,
        "disagreement_observed": mean(o["disagreement"]),
        "disagreement_expected": mean(o["disagreement"] - ex_o),
        "disagreement_replicated": mean(x["disagreement"]),
        "disagreement_excess": mean(ex_o),
        "disagreement_tail": dis_tail,
    }
    per_class = xr.Dataset(
        {name: ((CLASS,), v[:c]) for name, v in columns.items()},
        coords={CLASS: list(summary.classes)},
    )
    overall = {name: float(v[c]) for name, v in columns.items()}
    overall["dispersion_lower_tail"] = float(disp_lower[c])
    tot_o, tot_x = o["pairs"].sum(axis=1), x["pairs"].sum(axis=1)
    overall["pattern_discrepancy_observed"] = float(tot_o.mean())
    overall["pattern_discrepancy_replicated"] = float(tot_x.mean())
    overall["pattern_tail"] = float(_upper(tot_x, tot_o))
    names = list(summary.annotators)
    pairs = xr.Dataset(
        {
            "discrepancy_observed": ((PAIR,), o["pairs"].mean(axis=0)),
            "discrepancy_replicated": ((PAIR,), x["pairs"].mean(axis=0)),
            "excess_sd": ((PAIR,), _standardised(x["pairs"], o["pairs"])),
            "tail": ((PAIR,), _upper(x["pairs"], o["pairs"])),
        },
        coords={PAIR: [f"{names[a]}~{names[b]}" for a, b in zip(pairs_j, pairs_k)]},
    )
    per_item = None
    if many:
        tested = n_ans >= 2
        tail_i = np.where(tested, item_exceed / n_replicates, np.inf)
        share = float((rows.weight * (tail_i < 0.05)).sum() / rows.weight[tested].sum())
        order = np.argsort(tail_i, kind="stable")[:5]
        labels = summary.pattern_labels
        lookup = {tuple(s): i for i, s in enumerate(states.tolist())}
        per_item = {
            "share_overdispersed": share,
            "expected_share": 0.05,
            "items": int(rows.weight[tested].sum()),
            "most_overdispersed": [str(labels[lookup[tuple(rows.states[i])]]) for i in order],
        }
    evidence = _Evidence(overall, per_class, pairs, per_item, answers, dof, float(alpha), point)
    view, reasons, flags = _verdict(evidence)
    if refit is not None and refit["polish_shift"] > 1e-3:
        reasons.append(
            f"the given channels are not the maximum-likelihood fit of these data (EM moved a "
            f"confusion entry by {refit['polish_shift']:.3g}); the check is about the "
            "best-fitting noise model, so it used the refitted channels."
        )
    return NoiseAmbiguityCheck(
        view=view,
        reasons=reasons,
        per_class=per_class,
        overall=overall,
        pairs=pairs,
        per_item=per_item,
        answers=answers,
        replicates=int(n_replicates),
        source="parametric bootstrap" if point else "posterior predictive",
        alpha=float(alpha),
        refit=refit,
        degrees_of_freedom=float(dof),
        flags=flags,
    )


def _named_statistics(x: _Discrepancy, pairs_j, pairs_k) -> dict[str, np.ndarray]:
    """The statistics the check compares, per class (last entry pooled), group or pair."""
    ratios = x.ratios()
    return {
        "items": ratios["items"],
        "dispersion": ratios["dispersion"],
        "disagreement": ratios["disagreement"],
        "disagreement_excess": ratios["disagreement"] - ratios["disagreement_expected"],
        "pairs": x.pair_deviance[pairs_j, pairs_k],
    }


def _item_exceedance(rows, obs_item, rep_rows, rep, n_classes, n_groups) -> np.ndarray:
    """Per observed row: the weighted share of replicated items with the same group and
    answering set whose own dispersion is at least the row's."""
    bits = 1 << np.arange(rows.states.shape[1], dtype=np.int64)

    def key(r: _Rows) -> np.ndarray:
        return ((r.states < n_classes).astype(np.int64) @ bits) * n_groups + r.label

    keys, inverse = np.unique(np.concatenate([key(rows), key(rep_rows)]), return_inverse=True)
    k_obs, k_rep = inverse[: rows.weight.size], inverse[rows.weight.size :]
    phi_rep = np.nan_to_num(rep.item_dispersion, nan=0.0)
    phi_obs = np.nan_to_num(obs_item, nan=np.inf)
    # one sorted axis: key first, then phi (phi / (1 + phi) is increasing and below 1)
    order = np.argsort(k_rep * 2.0 + phi_rep / (1.0 + phi_rep), kind="stable")
    pos = k_rep[order] * 2.0 + phi_rep[order] / (1.0 + phi_rep[order])
    cum = np.concatenate([[0.0], np.cumsum(rep_rows.weight[order])])
    with np.errstate(invalid="ignore"):
        q = np.where(np.isfinite(phi_obs), phi_obs / (1.0 + phi_obs), 1.0)
    at = np.searchsorted(pos, k_obs * 2.0 + q, side="left")
    end = np.searchsorted(pos, k_obs * 2.0 + 1.5, side="left")
    start = np.searchsorted(pos, k_obs * 2.0, side="left")
    total = cum[end] - cum[start]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (cum[end] - cum[at]) / total, 0.0)


# ----------------------------------------------------------------- verdict
@dataclass(frozen=True)
class _Evidence:
    overall: dict[str, float]
    per_class: xr.Dataset
    pairs: xr.Dataset
    per_item: dict | None
    answers: dict[str, float]
    dof: float
    alpha: float
    point: bool


def _verdict(ev: _Evidence) -> tuple[str, list[str], list[Flag]]:
    """Which view the evidence supports, and the evidence in words."""
    flags: list[Flag] = []
    reasons: list[str] = []
    overall, alpha = ev.overall, ev.alpha
    source = "the fitted noise model" if ev.point else "the posterior"
    if ev.answers["items_with_two_or_more"] < _MIN_ITEMS:
        reasons.append(
            f"only {ev.answers['items_with_two_or_more']} item(s) have two or more answers: the "
            "answers to one item cannot be compared, so the data cannot tell noise from "
            "ambiguity."
        )
        return "inconclusive", reasons, flags
    if ev.dof <= 0:
        reasons.append(
            f"the noise model has at least as many free parameters as the observed answer "
            f"patterns have free cells ({ev.dof:g} degrees of freedom): it fits any answers, so "
            "the data cannot tell noise from ambiguity. More annotators, or channel groups "
            "whose prevalences differ, make the model testable."
        )
        return "inconclusive", reasons, flags
    c = ev.per_class.sizes[CLASS]
    phi, phi_rep, tail = (
        overall["dispersion_observed"],
        overall["dispersion_replicated"],
        overall["dispersion_tail"],
    )
    tails = ev.per_class["dispersion_tail"].values
    over = [str(k) for k, t in zip(ev.per_class[CLASS].values, tails) if t <= alpha / c]
    dispersed = tail <= alpha
    text = (
        f"answers to the same item vary {phi:.3f} times as much around their class's "
        f"confusion rows as {source} predicts through the channels alone (replicated "
        f"{phi_rep:.3f}; tail probability {tail:.3g})"
    )
    n_med = ev.answers["median_per_item"]
    if dispersed:
        icc = (phi - phi_rep) / max(n_med - 1, 1)
        reasons.append(
            text + f": items of one class differ from each other (an intra-item correlation "
            f"of about {icc:.3f} beyond the class at a median of {n_med:g} answers per item)"
            + (f", clearest in class(es) {over}" if over else "")
            + ". This is what ambiguity (or item difficulty) predicts, not class-conditional "
            "noise."
        )
    elif overall["dispersion_lower_tail"] <= alpha:
        reasons.append(
            text + f": the answers vary less than the fitted confusions imply (lower tail "
            f"probability {overall['dispersion_lower_tail']:.3g}); answers to one item are "
            "spread more evenly than independent draws, or the confusions are noisier than "
            "the annotators (a prior's pseudo-answers on rows with few items)."
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
    if ev.per_item is not None:
        reasons.append(
            f"per-item test ({ev.per_item['items']} items, median {n_med:g} answers): "
            f"{ev.per_item['share_overdispersed']:.1%} of items are over-dispersed at level 0.05 "
            f"(about {ev.per_item['expected_share']:.0%} expected under the noise model)."
        )
    pattern_misfit = overall["pattern_tail"] <= alpha
    if pattern_misfit:
        worst = int(np.argmax(ev.pairs["excess_sd"].values))
        reasons.append(
            "the answer tables of annotator pairs are further from "
            f"{source} than replicated data (deviance {overall['pattern_discrepancy_observed']:.1f}"
            f" vs {overall['pattern_discrepancy_replicated']:.1f} replicated, tail probability "
            f"{overall['pattern_tail']:.3g}; furthest pair {ev.pairs[PAIR].values[worst]}, "
            f"{float(ev.pairs['discrepancy_observed'].values[worst]):.1f} vs "
            f"{float(ev.pairs['discrepancy_replicated'].values[worst]):.1f}, "
            f"{float(ev.pairs['excess_sd'].values[worst]):.1f} replicate sd above)."
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
    elif pattern_misfit or overall["dispersion_lower_tail"] <= alpha:
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
