"""Where to annotate next: items ranked by how much one more label shrinks the NC-ECE's spread.

**Target.** The NC-ECE is ``sum_m |gap_m|`` over score bins (class-wise: bins of every
class's probability, averaged over classes; C = 2 the binary class-1 NC-ECE). Given the
channels, the corrected positive rate of a bin is a sum of item posteriors, so the gap of
bin ``m`` of class ``c`` is ``(1/n) sum_{i in m} (Y_ic - p_ic)``. Linearising ``|.|`` at the
posterior-mean gaps (the delta method, signs ``s_cm``) gives

    F = sum_i a_i[Y_i],   a_i[k] = lambda_k s_{k, m_k(i)} / n,

with ``lambda = (0, 1)`` for C = 2 (class 1 only) and ``1/C`` for every class when C > 2.
Its posterior variance, over the channel draws ``theta_d`` (uniform weights) and the
items' classes (independent given ``theta``, item ``i`` categorical ``p_i(theta)``), is

    V = E_d[ sum_i (sum_k a_ik^2 p_ik - g_i^2) ] + Var_d(G),
    g_i(theta) = sum_k a_ik p_ik(theta),  G = sum_i g_i,

and the delta-method interval width is ``2 z sqrt(V)``.

**Gold label (action "gold").** Revealing ``Y_i = c`` multiplies the posterior of the
channels by ``p_ic(theta)`` (item ``i``'s likelihood becomes ``P(a_i, Y_i = c | theta)``), so
the draws are reweighted by ``w_d ∝ p_ic(theta_d)``, item ``i``'s term becomes ``a_ic`` and the
other items keep ``p_k(theta)``. By the law of total variance the expected variance after
the label is ``V - Var_c(E[F | Y_i = c])``, so the **expected reduction** is exactly

    Delta_i = sum_c P_i(c) (E[F | Y_i = c] - E[F])^2,   P_i(c) = mean_d p_ic(theta_d),
    E[F | Y_i = c] = a_ic + sum_d w_d (G_d - g_i(theta_d)).

The first part is the item's own class uncertainty (for a point fit it is all of it:
``Var(a_i[Y_i])``, so for C = 2 the ranking is the most-uncertain-item ranking, weighted
by the bin signs); the reweighting is the channels tightening.

**Re-read (action "reread").** One more answer ``A`` from an annotator with confusion ``T``
(a chosen annotator, or the *typical* one: the mean confusion over annotators, per draw):
``P(A = a | theta) = q_a = sum_c p_ic T_ca``; draws are reweighted by ``q_a(theta)`` and item
``i``'s posterior becomes ``p_ic T_ca / q_a``, so

    Delta_i = sum_a P(a) (E[F | A = a] - E[F])^2,
    E[F | A = a] = sum_d w_d (G_d - g_i + sum_c a_ic p_ic T_ca / q_a).

Both are exact given the draws (no Monte Carlo beyond the posterior's own draws). The
expected width after a batch ``S`` is reported as ``2 z sqrt(V - sum_{i in S} Delta_i)``:
adding the single-item reductions is exact for the items' own terms and an approximation
for the channel terms (labels of a batch tighten the channels jointly).

Items are handled per (group, answer pattern, bin of every class) cell, so the cost is
``O(draws x cells x C^2)``. Gold items (their class is known) and items nobody answered
(out of the NC-ECE) are not candidates; a chosen annotator re-reads only items he has not
answered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy.stats import norm

from bayescal.channels.items import (
    _draws,
    _gold_mask,
    cell_posterior_blocks,
    cell_posterior_mean,
    check_inputs,
    item_cells,
    plain,
    write_csv,
)
from bayescal.channels.mcse import mean_mcse
from bayescal.channels.result import ChannelFit
from bayescal.data.container import Annotations
from bayescal.errors import ConfigError, DataError
from bayescal.summaries.partition import assign, cell_sums
from bayescal.summaries.summary import Summary

__all__ = [
    "ACTIONS",
    "AnnotationTargets",
    "rank_annotation_targets",
    "rank_annotation_requests",
    "expected_reductions",
]

#: What one more label is: the true class revealed, or one more annotator's answer.
ACTIONS = ("gold", "reread")

#: Most channel draws used (evenly thinned beyond this); the cost is linear in them.
MAX_DRAWS = 400


@dataclass(frozen=True)
class AnnotationTargets:
    """Candidate items ranked by the expected reduction of the NC-ECE's posterior variance.

    Attributes
    ----------
    items : ndarray (n_candidates,)
        Item ids, best first.
    index : ndarray (n_candidates,), int
        Their positions in the container.
    reduction : ndarray (n_candidates,)
        Expected reduction of the posterior variance ``V`` of the linearised NC-ECE.
    variance : float
        ``V`` now.
    prob : float
        Interval probability of the widths (normal, ``2 z sqrt(V)``).
    action : str
    annotator : str or None
        The re-reading annotator (None: the typical one; or for ``"gold"``).
    n_draws : int
        Channel draws used (at most ``MAX_DRAWS``, evenly thinned).
    method : str
    notes : list of str
    variance_mcse : float or None
        Monte Carlo standard error of ``variance`` from using ``n_draws`` draws only
        (batch means of its per-draw terms, :mod:`bayescal.channels.mcse`; 0 for a point
        fit).
    """

    items: np.ndarray
    index: np.ndarray
    reduction: np.ndarray
    variance: float
    prob: float
    action: str
    annotator: str | None
    n_draws: int
    method: str
    notes: list[str] = field(default_factory=list)
    variance_mcse: float | None = None

    @property
    def n_candidates(self) -> int:
        return int(self.items.size)

    @property
    def width(self) -> float:
        """Delta-method interval width now: ``2 z sqrt(V)``."""
        return _width(self.variance, self.prob)

    @property
    def width_mcse(self) -> float | None:
        """Monte Carlo standard error of :attr:`width` (delta method: ``z mcse(V) / sqrt(V)``)."""
        if self.variance_mcse is None:
            return None
        if self.variance <= 0:
            return 0.0
        z = float(norm.ppf(0.5 + self.prob / 2))
        return float(z * self.variance_mcse / np.sqrt(self.variance))

    def width_after(self, n: int) -> float:
        """Expected width after labelling the top ``n`` (single-item reductions added)."""
        left = self.variance - float(self.reduction[: max(0, int(n))].sum())
        return _width(max(left, 0.0), self.prob)

    def widths_after(self) -> np.ndarray:
        """:meth:`width_after` for every ``n`` from 1 to ``n_candidates``, in one pass.

        A running sum of the reductions and one normal quantile, so a ranking of 10^6
        items costs milliseconds (a quantile per rank cost a minute). The running sum
        adds in a different order than :meth:`width_after`'s ``sum``, so the two agree
        to rounding (relative ``n_candidates * eps`` of the variance), not bit for bit.
        """
        left = np.maximum(self.variance - np.cumsum(self.reduction), 0.0)
        return 2 * float(norm.ppf(0.5 + self.prob / 2)) * np.sqrt(left)

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per candidate, best first (``rank`` from 1)."""
        import pandas as pd

        share = self.reduction / self.variance if self.variance > 0 else self.reduction * 0
        frame = pd.DataFrame(
            {
                "rank": np.arange(1, self.n_candidates + 1),
                "item": self.items,
                "variance_reduction": self.reduction,
                "share_of_variance": share,
                "width_after_top": self.widths_after(),
            }
        )
        return frame

    def to_csv(self, path: Any) -> None:
        """Write :meth:`to_frame` as CSV (17 significant digits)."""
        write_csv(self.to_frame(), path, index=False)

    def to_dict(self, *, max_listed: int = 10) -> dict[str, Any]:
        """A JSON-ready record: the rule, the width now and after the top 10 / 50, the top items."""
        return {
            "action": self.action,
            "annotator": self.annotator,
            "n_candidates": self.n_candidates,
            "n_draws": self.n_draws,
            "method": self.method,
            "prob": self.prob,
            "variance": self.variance,
            "width": self.width,
            "mcse": {"variance": self.variance_mcse, "width": self.width_mcse},
            "draws_used": self.n_draws,
            "width_after": {str(k): self.width_after(k) for k in (10, 50)},
            "top": [
                {"item": plain(self.items[r]), "variance_reduction": float(self.reduction[r])}
                for r in range(min(max_listed, self.n_candidates))
            ],
            "notes": list(self.notes),
        }


def _width(variance: float, prob: float) -> float:
    return float(2 * norm.ppf(0.5 + prob / 2) * np.sqrt(variance))


def rank_annotation_targets(
    data: Annotations,
    fit: ChannelFit,
    summary: Summary,
    *,
    action: Literal["gold", "reread"] = "gold",
    annotator: str | None = None,
    prob: float = 0.9,
    gold_in_ece: bool = False,
    max_draws: int = MAX_DRAWS,
) -> AnnotationTargets:
    """Rank items by the expected reduction of the NC-ECE's posterior variance from one label.

    See the module docstring for the formula (exact given the channel draws).

    Parameters
    ----------
    data : Annotations
        The audited items (any number of classes).
    fit : ChannelFit
        Channels fitted on ``summary``: a posterior (its draws carry the channel
        tightening) or a point fit (the items' own class uncertainty only).
    summary : Summary
        The summary the channels were fitted on (its groups and bin edges).
    action : {"gold", "reread"}, default "gold"
        Reveal the item's true class, or ask one more annotator.
    annotator : str, optional
        With ``"reread"``: the annotator who re-reads (default: the typical annotator,
        the mean confusion over annotators).
    prob : float, default 0.9
        Interval probability of the reported widths.
    gold_in_ece : bool, default False
        Count the gold items in the NC-ECE (with their known class: a fixed term), as the
        audits' ``gold_in_ece``; by default they are left out of it.
    max_draws : int, default 400

    Raises
    ------
    ConfigError
        Unknown action or annotator, ``prob`` outside (0, 1), ``max_draws`` < 1, or a fit
        that does not match the data.
    DataError
        No candidate item (every item is gold or unanswered).

    Examples
    --------
    >>> import bayescal as bc
    >>> from bayescal.simulate import simulate_toy
    >>> data = simulate_toy(500, random_state=0)
    >>> s = bc.summarize(data)
    >>> r = rank_annotation_targets(data, bc.fit_channels(s), s)
    >>> bool(r.width_after(10) < r.width), bool(np.all(np.diff(r.reduction) <= 0))
    (True, True)
    """
    (ranking,) = rank_annotation_requests(
        data,
        fit,
        summary,
        [(action, annotator)],
        prob=prob,
        gold_in_ece=gold_in_ece,
        max_draws=max_draws,
    )
    return ranking


def rank_annotation_requests(
    data: Annotations,
    fit: ChannelFit,
    summary: Summary,
    requests: Sequence[tuple[str, str | None]],
    *,
    prob: float = 0.9,
    gold_in_ece: bool = False,
    max_draws: int = MAX_DRAWS,
) -> list[AnnotationTargets]:
    """:func:`rank_annotation_targets` for several ``(action, annotator)`` requests at once.

    The rankings share one pass over the channel draws: the per-draw class posteriors of
    the cells are computed in blocks of draws (:func:`bayescal.channels.items.
    cell_posterior_blocks`) and every ranking's sums are accumulated from the same block,
    so no (draws x cells x C) array is held (1.2 GB at 10^5 items, C = 10, 400 draws) and
    the E-step runs twice (once for the mean posteriors the bin signs need, once for the
    sums) whatever the number of requests. Each result equals the single request's.
    """
    if not requests:
        raise ConfigError("requests must hold at least one (action, annotator) pair.")
    for action, annotator in requests:
        _check_request(data, action, annotator)
    prob = float(prob)
    if not 0 < prob < 1:
        raise ConfigError(f"prob must lie in (0, 1); got {prob!r}.")
    if not isinstance(gold_in_ece, bool):
        raise ConfigError(f"gold_in_ece must be True or False; got {gold_in_ece!r}.")
    check_inputs("rank_annotation_targets", data, fit, summary, max_draws)
    t, pi, n_draws = _draws(fit, int(max_draws), summary)
    c = data.n_classes
    states, uniq, cell_pat, cell_group, cell_of_item = item_cells(data, summary, pi.shape[1])
    cell_states = uniq[cell_pat]

    def blocks():
        return cell_posterior_blocks(cell_states, cell_group, t, pi)

    gold = _gold_mask(data)
    unanswered = (states == c).all(axis=1)
    in_ece = ~unanswered if gold_in_ece else ~gold & ~unanswered
    if not (in_ece & ~gold).any():
        raise DataError(
            "no candidate item: every item is gold-labelled or unanswered; there is nothing "
            "to label next."
        )
    p_items = cell_posterior_mean(blocks(), n_draws, cell_pat.size, c)[cell_of_item]  # (n, C)
    coef = _coefficients(data.probs, p_items, in_ece, np.asarray(summary.bin_edges))
    channels, candidates = [], []
    for action, annotator in requests:
        keep = in_ece & ~gold
        channel = None
        if action == "reread":
            if annotator is None:
                channel = t.mean(axis=1)  # (D, C, C) the typical annotator
            else:
                j = list(data.annotators).index(annotator)
                channel = t[:, j]
                keep &= states[:, j] == c
                if not keep.any():
                    raise DataError(
                        f"annotator {annotator!r} answered every candidate item; choose "
                        "another annotator or the typical one (annotator=None)."
                    )
        channels.append(channel)
        candidates.append(keep)
    variance, variance_mcse, reductions = _block_reductions(
        blocks, n_draws, cell_pat.size, cell_of_item, coef, channels
    )
    if fit.n_draws == 1:  # point channels: no posterior wording (the items' own spread only)
        notes = [
            "Reductions are of the variance of the NC-ECE linearised at the bin gaps of the "
            "point channels (delta method); widths are 2 z sqrt(V).",
            "The channels are a point fit: only the items' own class uncertainty is counted, "
            "not the tightening of the channels (--channels bayes counts that too).",
        ]
    else:
        notes = [
            "Reductions are of the posterior variance of the NC-ECE linearised at the "
            "posterior-mean bin gaps (delta method); widths are 2 z sqrt(V).",
        ]
    if n_draws < fit.n_draws:
        notes.append(f"{n_draws} of {fit.n_draws} channel draws used (evenly thinned).")
    out = []
    for (action, annotator), keep, reduction in zip(requests, candidates, reductions):
        index = np.flatnonzero(keep)
        order = index[np.argsort(-reduction[index], kind="stable")]
        out.append(
            AnnotationTargets(
                items=np.asarray(data.items)[order],
                index=order,
                reduction=reduction[order],
                variance=variance,
                prob=prob,
                action=action,
                annotator=annotator,
                n_draws=n_draws,
                method=fit.method,
                notes=list(notes),
                variance_mcse=variance_mcse,
            )
        )
    return out


def _check_request(data: Annotations, action: str, annotator: str | None) -> None:
    if action not in ACTIONS:
        raise ConfigError(f"action must be one of {ACTIONS}; got {action!r}.")
    if annotator is not None and action != "reread":
        raise ConfigError("annotator= chooses who re-reads: use it with action='reread'.")
    if annotator is not None and annotator not in list(data.annotators):
        raise ConfigError(
            f"annotator {annotator!r} is not one of the data's annotators "
            f"{list(data.annotators)[:6]}; pass one of them, or None for the typical one."
        )


def _coefficients(
    probs: np.ndarray, p_items: np.ndarray, in_ece: np.ndarray, edges: np.ndarray
) -> np.ndarray:
    """``a_i[k] = lambda_k s_{k, m_k(i)} / n`` for the items in the NC-ECE, 0 for the others."""
    n, c = probs.shape
    lam = np.array([0.0, 1.0]) if c == 2 else np.full(c, 1.0 / c)
    coef = np.zeros((n, c))
    m = in_ece.sum()
    n_bins = edges.size - 1
    for k in range(c):
        if lam[k] == 0:
            continue
        b = assign(probs[:, k], edges)
        gap = np.bincount(
            b[in_ece], weights=(p_items[in_ece, k] - probs[in_ece, k]), minlength=n_bins
        )
        coef[in_ece, k] = lam[k] * np.sign(gap)[b[in_ece]] / m
    return coef


def expected_reductions(
    p_cells: np.ndarray,
    cell_of_item: np.ndarray,
    coef: np.ndarray,
    channel: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """``V`` and every item's expected variance reduction ``Delta_i`` (module docstring).

    Parameters
    ----------
    p_cells : (D, cells, C)
        Per-draw class posterior of each cell.
    cell_of_item : (n,)
    coef : (n, C)
        ``a_i[k]``, the item's term of the linearised NC-ECE when its class is ``k``.
    channel : (D, C, C), optional
        The re-reader's confusion per draw; None: the class is revealed (gold).

    Returns
    -------
    variance : float
    reduction : ndarray (n,)
    """
    n_draws, n_cells, _ = p_cells.shape
    variance, _, (reduction,) = _block_reductions(
        lambda: iter([(slice(0, n_draws), p_cells)]),
        n_draws,
        n_cells,
        cell_of_item,
        coef,
        [channel],
    )
    return variance, reduction


def _block_reductions(
    blocks: Callable[[], Iterator[tuple[slice, np.ndarray]]],
    n_draws: int,
    n_cells: int,
    cell_of_item: np.ndarray,
    coef: np.ndarray,
    channels: Sequence[np.ndarray | None],
) -> tuple[float, float, list[np.ndarray]]:
    """:func:`expected_reductions` for several re-readers (None: gold) from blocks of draws,
    with the Monte Carlo standard error of the variance (its per-draw terms
    ``within_d + (G_d - E G)^2`` averaged: :func:`bayescal.channels.mcse.mean_mcse`).

    ``blocks()`` yields ``(draw slice, p (draws in the block, cells, C))``. Every
    quantity of the formula is a sum over draws (``G_d`` and the within-item variance
    per draw, then ``sum_d p``, ``sum_d p p^T``, ``sum_d p G_d`` or their re-read
    forms), so the blocks are accumulated one at a time; only ``E[G]`` waits for the
    last block (it enters as a constant shift of ``h``).
    """
    c = coef.shape[1]
    # per-cell sums over items: A = sum a_i, S = sum a_i a_i^T, A2 = sum a_i^2
    by_cell = cell_sums(cell_of_item, n_cells)  # np.add.at took seconds at C = 50
    a_sum = np.asarray(by_cell @ coef)
    s_sum = np.asarray(by_cell @ (coef[:, :, None] * coef[:, None, :]).reshape(-1, c * c))
    s_sum = s_sum.reshape(n_cells, c, c)
    s_diag = np.einsum("xcc->xc", s_sum)
    g_total = np.empty(n_draws)
    within = np.empty(n_draws)
    mass = [np.zeros((n_cells, c)) for _ in channels]
    second = [np.zeros((n_cells, c, c)) for _ in channels]
    shift = [np.zeros((n_cells, c)) for _ in channels]
    for d, p in blocks():
        g = np.einsum("dxc,xc->d", p, a_sum)  # G_d
        g_total[d] = g
        # sums over the draws as batched matrix products per cell (BLAS), not einsum loops
        by_cell = np.ascontiguousarray(p.transpose(1, 2, 0))  # (cells, C, D)
        quad = np.einsum("xde,dxe->d", np.matmul(p.transpose(1, 0, 2), s_sum), p)
        within[d] = np.einsum("dxc,xc->d", p, s_diag) - quad
        for i, channel in enumerate(channels):
            if channel is None:
                # outcome c: weights p_cd; R[x, c, c'] = sum_d w^c_d p_c'd;
                # H[x, c] = sum_d w^c_d G_d - E G
                mass[i] += p.sum(axis=0)
                second[i] += by_cell @ by_cell.transpose(0, 2, 1)
                shift[i] += np.einsum("dxc,d->xc", p, g)
            else:
                # outcome a: q_ad = sum_c p_cd T_dca;
                # Q[x, a, c] = sum_d (p_cd T_dca - q_ad p_cd) / sum_d q_ad
                t_d = channel[d]
                q = np.matmul(p, t_d)  # (D, cells, C): q[d, x, a] = sum_c p[d, x, c] T[d, c, a]
                mass[i] += q.sum(axis=0)
                q_by_cell = np.ascontiguousarray(q.transpose(1, 2, 0))  # (cells, C, D)
                # sum_d p[d, x, c] T[d, c, a] as one product per class c (BLAS; the einsum
                # took three times as long at C = 50), laid out as [x, a, c]
                pt = np.matmul(p.transpose(2, 1, 0), t_d.transpose(1, 0, 2)).transpose(1, 2, 0)
                second[i] += pt - q_by_cell @ by_cell.transpose(0, 2, 1)
                shift[i] += np.einsum("dxa,d->xa", q, g)
    variance = float(within.mean() + g_total.var())
    g_mean = g_total.mean()
    variance_mcse = float(mean_mcse(within + (g_total - g_mean) ** 2))
    reductions = []
    for i, channel in enumerate(channels):
        prob_out = mass[i] / n_draws
        safe = np.where(mass[i] > 0, mass[i], 1.0)
        h = shift[i] / safe - g_mean
        px = prob_out[cell_of_item]
        if channel is None:
            r = second[i] / safe[:, :, None]
            e = coef - np.einsum("ie,ice->ic", coef, r[cell_of_item]) + h[cell_of_item]  # (n, C)
        else:
            qm = second[i] / safe[:, :, None]
            e = np.einsum("ic,iac->ia", coef, qm[cell_of_item]) + h[cell_of_item]
        reductions.append((px * e**2).sum(axis=1))
    return variance, variance_mcse, reductions
