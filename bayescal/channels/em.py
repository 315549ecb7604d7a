"""Dawid–Skene EM on response-pattern counts, for any number of classes (SPEC §1, §3).

Annotator ``j`` answers class ``a`` with probability ``T_j[y, a]`` when the true
class is ``y``; answers are independent given ``Y`` (and the channel group); a
missing answer contributes no factor. Per channel group ``g`` with prevalence
``rho[g, y]`` a pattern ``s`` has probability

    P(s | g) = sum_y rho[g, y] prod_{j answered} T_j[y, s_j],

and the counts ``n[g, s]`` of a :class:`~bayescal.summaries.summary.Summary` are
multinomial given the group totals. EM works on the P *observed* patterns (at most
one per item) and, for tables of more than ``2**16`` (group, pattern) cells, on the
non-empty cells only, so an iteration costs O(R x C x (cells + C x P x K)) for R
starts, whatever the number of items; all starts run as one array program.
With two classes, ``a = T[0, 1]`` and ``b = T[1, 1]`` are Hanada & Futami's
channels and ``prevalence = rho[:, 1]``.

**Prevalence model** (one spelling, shared with the Bayesian model):
``prevalence="grouped"`` has one prevalence vector per group of the summary (for
two classes the paper's joint score-bin EM, :func:`score_bin_em`);
``"pooled"`` pools the groups (the marginal Dawid–Skene model, group ``"all"``).

**Parametrisation.** Each probability vector (a confusion row, a prevalence) is
held by its entries ``1 .. C-1``; entry 0 is one minus their sum. After every M
step each held entry is clipped to ``[clip, 1 - clip]`` and, if their sum
exceeds ``1 - clip``, scaled down so that entry 0 is at least ``clip``. With two
classes this is the paper's clipping of ``a``, ``b``, ``mu`` to
``[1e-6, 1 - 1e-6]``, and the arithmetic is the v0.2 binary EM's, operation for
operation (so ``bench toy`` reproduces exactly).

**Start protocol and orientation are chosen by C.**

- C = 2 (paper, Appendix G.2; SPEC §1): ``n_starts`` random starts
  ``a ~ U[0.04, 0.30]``, ``b ~ U[0.70, 0.96]``, prevalences ``~ U[0.1, 0.9]``
  with the first start at the group midpoints (plus, pooled with K >= 3, the
  moment inverse as an extra start); one global label exchange per start so that
  the designated annotator has ``a < b``; a start is accepted when it converged,
  is finite and every oriented gap ``b - a`` is at least ``min_gap`` (1e-3).
- C > 2 (v0.2 multiclass; SPEC §3): the soft-majority-vote start plus
  ``n_starts - 1`` random diagonal-dominant starts (accuracy ``~ U[0.5, 0.95]``,
  the rest by a flat Dirichlet; flat-Dirichlet prevalences); each start's latent
  classes relabelled by the assignment maximising the designated annotator's
  diagonal (:mod:`bayescal.channels.orientation`); accepted when converged,
  finite and every confusion matrix has smallest singular value at least
  ``min_singular`` (1e-3; the corrected one-hot targets invert them).

Both stop when the change in mean log-likelihood is below ``tol (1 + |previous|)``
or after ``max_iter`` iterations, and return the accepted start with the highest
likelihood.

**Gold items** (items of known class, :meth:`Summary.gold_counts`, shape (C, P))
enter through ``P(s | Y = y)`` at their known class: their E-step responsibility
is fixed at ``y``, they add to the confusion counts and not to the prevalences
(gold items are often chosen by class or score, which says nothing about the other
items' prevalence, while ``P(answers | Y = y)`` does not depend on how an item
was chosen). The mean log-likelihood is then

    (1/N) [ sum_g sum_s n_gs log P(s | g) + sum_y sum_s n^gold_ys log P(s | Y = y) ].

Gold items label the latent classes themselves, so with gold items no exchange or
relabelling is applied.
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Callable, Sequence

import numpy as np

from bayescal._random import check_random_state
from bayescal.channels.identification import (
    check_design,
    check_fitted,
    check_fitted_confusion,
    check_multiclass_design,
    gold_identifies_multiclass,
)
from bayescal.channels.moments import moment_inverse_arrays
from bayescal.channels.options import check_em_options, check_real_option
from bayescal.channels.orientation import (
    diagonal_dominance_failures,
    dominant_diagonal_permutation,
    exchange_binary_labels,
    orient_index,
    relabel_classes,
)
from bayescal.channels.result import ChannelFit
from bayescal.display import name_list
from bayescal.errors import ConfigError, DataError, FitError
from bayescal.summaries.partition import cell_sums
from bayescal.summaries.summary import Summary

__all__ = [
    "dawid_skene_em",
    "score_bin_em",
    "em_fit_counts",
    "em_run",
    "expected_answer_counts",
    "pattern_log_probs",
    "majority_vote_start",
    "resolve_prevalence",
    "PREVALENCE_MODELS",
    "FALLBACK",
    "Progress",
]

#: The prevalence models (module docstring), shared with the Bayesian model.
PREVALENCE_MODELS = ("grouped", "pooled")

#: The paper's fixed fallback: used only when the caller asks (``fallback="fixed"``; C = 2).
FALLBACK = {"a": 0.2, "b": 0.8, "prevalence": 0.5}

#: ``progress(iteration, change)``: called once per EM iteration with the largest change
#: in mean log-likelihood among the starts still running.
Progress = Callable[[int, float], None]

#: Two-class tables of at most this many (group, pattern) cells are worked on whole (the
#: v0.2 layout); larger ones on their non-empty cells only (:func:`_whole_table`).
_DENSE_CELLS = 1 << 16

#: Tables of more than two classes are worked on whole up to this many cells (a few
#: microseconds per iteration whatever their share of empty cells, and the fits of the
#: earlier releases bit for bit), on their non-empty cells beyond.
_DENSE_CELLS_MULTICLASS = 1 << 12

#: Start batches keep the (starts, groups, classes, patterns) arrays below this many
#: float64 numbers (160 MB).
_BATCH_ELEMENTS = 20_000_000


def resolve_prevalence(prevalence=None, *, pooled=None, model=None, default="grouped") -> str:
    """The prevalence model from ``prevalence`` or its deprecated spellings.

    ``pooled=True/False`` (v0.2 multiclass) and ``model="marginal"/"grouped"`` (v0.2
    binary Bayesian fit) still work with a :class:`DeprecationWarning`.

    Examples
    --------
    >>> resolve_prevalence("pooled"), resolve_prevalence(default="pooled")
    ('pooled', 'pooled')
    """
    old = None
    if pooled is not None:
        if not isinstance(pooled, bool):
            raise ConfigError(f"pooled must be True or False; got {pooled!r}.")
        old, spelling = ("pooled" if pooled else "grouped"), f"pooled={pooled}"
    if model is not None:
        if model not in ("marginal", "grouped"):
            raise ConfigError(f"model must be 'grouped' or 'marginal'; got {model!r}.")
        old, spelling = ("pooled" if model == "marginal" else "grouped"), f"model={model!r}"
    if old is not None:
        if prevalence is not None and prevalence != old:
            raise ConfigError(f"prevalence={prevalence!r} contradicts {spelling}; pass one.")
        _warnings.warn(
            f"{spelling} is deprecated; use prevalence={old!r}.", DeprecationWarning, stacklevel=3
        )
        return old
    value = default if prevalence is None else prevalence
    if value not in PREVALENCE_MODELS:
        raise ConfigError(f"prevalence must be one of {PREVALENCE_MODELS}; got {prevalence!r}.")
    return value


# ----------------------------------------------------------------- kernels
def _log_rows(free: np.ndarray) -> np.ndarray:
    """Log of probability vectors from their held entries 1..C-1 (module docstring)."""
    return np.concatenate([np.log1p(-free.sum(axis=-1, keepdims=True)), np.log(free)], axis=-1)


def _indicators(states: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """``onehot[a]`` (P, K): answered class ``a``; ``answered`` (P, K)."""
    onehot = np.stack([states == a for a in range(c)]).astype(np.float64)
    return onehot, (states < c).astype(np.float64)


def _answer_loglik(log_t: np.ndarray, onehot: np.ndarray, states: np.ndarray) -> np.ndarray:
    """``sum_j log T_j[y, s_j]`` over answered j: (R, C, P) from log T (R, K, C, C).

    For two classes the sum runs in the v0.2 binary order (products with the answer
    indicators, class by class), which keeps ``bench toy`` bit for bit; for more classes
    one gather per annotator (O(R C P K), where C**2 indicator products would cost C
    times more).
    """
    r, k, c, _ = log_t.shape
    if c == 2:
        rows = [
            sum(np.ascontiguousarray(log_t[:, :, y, a]) @ onehot[a].T for a in range(c))
            for y in range(c)
        ]
        return np.stack(rows, axis=1)
    ext = np.concatenate([log_t, np.zeros((r, k, c, 1))], axis=3)  # missing: log 1
    out = np.zeros((r, c, states.shape[0]))
    for j in range(k):
        out += np.take(ext[:, j], states[:, j], axis=2)
    return out


def pattern_log_probs(states, confusion, prevalence) -> np.ndarray:
    """``log P(s | g)`` for every group and observed pattern, shape (L, P) (SPEC §3).

    ``states`` (P, K) holds the answered class or C for missing; ``confusion``
    (K, C, C); ``prevalence`` (L, C).

    Examples
    --------
    >>> t = np.array([[[0.9, 0.1], [0.2, 0.8]]] * 2)
    >>> lp = pattern_log_probs(np.array([[0, 2], [1, 1]]), t, np.array([[0.5, 0.5]]))
    >>> np.exp(lp).round(4).tolist()  # 0.5*0.9 + 0.5*0.2, 0.5*0.1*0.1 + 0.5*0.8*0.8
    [[0.55, 0.325]]
    """
    t = np.asarray(confusion, dtype=np.float64)
    onehot, _ = _indicators(np.asarray(states), t.shape[-1])
    lp = _answer_loglik(np.log(t)[None], onehot, np.asarray(states))[0]
    joint = np.log(np.asarray(prevalence, dtype=np.float64))[:, :, None] + lp[None]
    top = joint.max(axis=1)
    return top + np.log(np.exp(joint - top[:, None]).sum(axis=1))


def expected_answer_counts(counts, states, confusion, prevalence) -> np.ndarray:
    """E-step counts ``N[r, j, y, a]``: expected items of class ``y`` that ``j`` answered ``a``.

    ``counts`` (R, L, P) pattern counts (or weights) per group, ``states`` (P, K),
    ``confusion`` (R, K, C, C), ``prevalence`` (R, L, C): one data set and fit per ``r``.
    ``N[r, j, y, :] / N[r, j, y, :].sum()`` is the M step's confusion row without clipping.

    Examples
    --------
    >>> t = np.array([[[[0.9, 0.1], [0.2, 0.8]]] * 2])
    >>> n = expected_answer_counts(np.array([[[10.0, 5.0]]]), np.array([[0, 2], [1, 1]]),
    ...                            t, np.array([[[0.5, 0.5]]]))
    >>> round(float(n.sum(axis=(2, 3))[0, 1]), 6)  # annotator 2 answered 5 items
    5.0
    """
    t = np.asarray(confusion, dtype=np.float64)
    states = np.asarray(states)
    c = t.shape[-1]
    onehot, _ = _indicators(states, c)
    lp = _answer_loglik(np.log(t), onehot, states)  # (R, C, P)
    joint = np.log(np.asarray(prevalence, dtype=np.float64))[:, :, :, None] + lp[:, None]
    top = joint.max(axis=2, keepdims=True)
    post = np.exp(joint - top)
    post /= post.sum(axis=2, keepdims=True)  # (R, L, C, P)
    per_pattern = (np.asarray(counts, dtype=np.float64)[:, :, None, :] * post).sum(axis=1)
    return np.einsum("ryp,apj->rjya", per_pattern, onehot)


def _held(x: np.ndarray, clip: float) -> np.ndarray:
    """Clip held entries to [clip, 1 - clip]; scale them so entry 0 stays >= clip."""
    x = np.clip(x, clip, 1.0 - clip)
    total = x.sum(axis=-1, keepdims=True)
    return np.where(total > 1.0 - clip, x * ((1.0 - clip) / total), x)


def _complete(free: np.ndarray) -> np.ndarray:
    """Full probability vectors from the held entries 1..C-1."""
    return np.concatenate([1.0 - free.sum(axis=-1, keepdims=True), free], axis=-1)


def _m_step(
    per_group, per_pattern, gold, onehot, answered, states, group_n, clip, prior=None, whole=True
):
    """Held confusion (R, K, C, C-1) and prevalence (R, L, C-1) entries from expected counts.

    ``per_group[r, y, l]`` and ``per_pattern[r, y, p]`` are the expected counts of class
    ``y`` summed over patterns / groups; ``gold`` (C, P) or (R, C, P) holds gold items at
    their known class, which count for the confusions only (module docstring); ``prior``
    (R, K, C, C) pseudo-counts are added to each confusion row (the MAP step under
    Dirichlet(prior + 1) rows, :func:`em_run`).

    A table worked on whole (``whole``, :func:`_whole_table`) keeps the products with the
    answer indicators (the earlier fits bit for bit: ``bench toy``, and the examples'
    posteriors, whose sampler starts at the EM fit); a larger table of more than two
    classes sums each annotator's answers with one ``bincount`` (O(R C P K)), where the
    C**2 indicator products cost C times more (at C = 50 most of an EM step).
    """
    c = per_pattern.shape[1]
    rho = per_group[:, 1:].transpose(0, 2, 1) / group_n[..., None]
    if c > 2 and not whole:
        return _held(_confusion_rows(per_pattern + gold, states, prior), clip), _held(rho, clip)
    t = np.empty((per_pattern.shape[0], onehot.shape[2], c, c - 1))
    for y in range(c):
        wy = per_pattern[:, y] + gold[..., y, :]  # (R, P)
        den = wy @ answered
        if prior is not None:
            den = den + prior[:, :, y].sum(axis=-1)
        den = np.maximum(den, 1e-300)
        for a in range(1, c):
            num = wy @ onehot[a]
            if prior is not None:
                num = num + prior[:, :, y, a]
            t[:, :, y, a - 1] = num / den
    return _held(t, clip), _held(rho, clip)


def _confusion_rows(w: np.ndarray, states: np.ndarray, prior) -> np.ndarray:
    """Held confusion entries (R, K, C, C-1) from class weights ``w[r, y, p]`` of patterns.

    ``num[r, j, y, a] = sum_p w[r, y, p] [s_pj = a]`` (plus ``prior``), one ``bincount`` per
    annotator; a missing answer (``s_pj = C``) falls in a last column that is dropped.
    """
    r, c, n_pat = w.shape
    k = states.shape[1]
    flat = w.ravel()
    base = (np.arange(r * c, dtype=np.int64) * (c + 1))[:, None]  # (R C, 1)
    num = np.empty((r, k, c, c))
    for j in range(k):
        index = (base + np.asarray(states[:, j], dtype=np.int64)[None, :]).ravel()
        sums = np.bincount(index, weights=flat, minlength=r * c * (c + 1))
        num[:, j] = sums.reshape(r, c, c + 1)[..., :c]
    if prior is not None:
        num = num + prior
    den = np.maximum(num.sum(axis=-1, keepdims=True), 1e-300)
    return num[..., 1:] / den


def _whole_table(n_classes: int, n_cells: int) -> bool:
    """Whether EM works on every (group, pattern) cell rather than the non-empty ones.

    Two-class tables up to :data:`_DENSE_CELLS`: the v0.2 layout, kept bit for bit
    (``bench toy``); tables of more classes up to :data:`_DENSE_CELLS_MULTICLASS`. A large
    table of many classes is mostly empty (C groups x observed patterns; at C = 50, 3000
    items about 3% of 75,000 cells are non-empty) and the whole table cost 20 times the
    non-empty cells per iteration.
    """
    return n_cells <= (_DENSE_CELLS if n_classes == 2 else _DENSE_CELLS_MULTICLASS)


class _Cells:
    """The (group, pattern) cells EM works on: all of them for a small two-class table
    (the v0.2 layout, kept bit for bit), the non-empty ones otherwise (cost per observed
    cell)."""

    def __init__(self, counts: np.ndarray, n_classes: int):
        n_groups, n_pat = counts.shape[-2:]
        n_cells = n_groups * n_pat
        flat = counts.reshape((*counts.shape[:-2], n_cells))
        self.dense = _whole_table(n_classes, n_cells)
        index = np.arange(n_cells)
        if not self.dense:
            index = np.flatnonzero(flat.reshape(-1, n_cells).any(axis=0))
        self.group, self.pattern = np.divmod(index, n_pat)
        self.counts = flat[..., index]  # (n,) or (R, n)
        self.shape = (n_groups, n_pat)
        self._by_pattern = cell_sums(self.pattern, n_pat)
        self._by_group = cell_sums(self.group, n_groups)

    def sums(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sums of ``w[r, y, cell]`` per group (R, C, L) and per pattern (R, C, P)."""
        r, c, n = w.shape
        flat = w.reshape(r * c, n).T
        per_pattern = (self._by_pattern @ flat).T.reshape(r, c, self.shape[1])
        if self.dense:  # the v0.2 order of summation over patterns
            per_group = w.reshape(r, c, *self.shape).sum(axis=3)
        else:
            per_group = (self._by_group @ flat).T.reshape(r, c, self.shape[0])
        return per_group, per_pattern


def em_run(
    counts,
    states,
    confusion0,
    prevalence0,
    *,
    tol=1e-9,
    max_iter=1000,
    clip=1e-6,
    gold=None,
    prior=None,
    progress: Progress | None = None,
) -> dict:
    """Run EM from R starts at once on pattern counts (no orientation applied).

    Parameters
    ----------
    counts : ndarray (L, P) or (R, L, P)
        Pattern counts per group (float; may be weights); with a leading axis, one data
        set per start (the bootstrap of :mod:`bayescal.channels.bootstrap`).
    states : ndarray (P, K)
        Answered class ``0 .. C-1`` or ``C`` for missing.
    confusion0 : ndarray (R, K, C, C); prevalence0 : ndarray (R, L, C)
        Starting values.
    gold : ndarray (C, P) or (R, C, P), optional
        Gold items per known class and pattern (module docstring).
    prior : ndarray (K, C, C) or (R, K, C, C), optional
        Dirichlet pseudo-counts added to every confusion row in the M step: EM then
        maximises the posterior under ``Dirichlet(prior + 1)`` rows (the log prior is
        in ``mean_loglik``), the partial pooling of :mod:`bayescal.metrics.subgroups`.
    progress : callable, optional
        ``progress(iteration, change)`` once per iteration (:data:`Progress`).

    Returns
    -------
    dict with ``confusion`` (R, K, C, C), ``prevalence`` (R, L, C), ``mean_loglik``,
    ``converged`` and ``n_iter`` (R,).
    """
    counts = np.asarray(counts, dtype=np.float64)
    t = np.array(confusion0, dtype=np.float64)[..., 1:]
    rho = np.array(prevalence0, dtype=np.float64)[..., 1:]
    r, c = t.shape[0], t.shape[2]
    states = np.asarray(states)
    onehot, answered = _indicators(states, c)
    gold = np.zeros((c, counts.shape[-1])) if gold is None else np.asarray(gold, np.float64)
    n = counts.sum(axis=(-2, -1)) + gold.sum(axis=(-2, -1))
    group_n = np.maximum(counts.sum(axis=-1), 1e-300)  # an empty group's prevalence: clip
    if prior is not None:
        prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), (r, *t.shape[1:3], c))
    cells = _Cells(counts, c)
    has_gold = bool(gold.any())  # no gold: its log-likelihood is exactly 0 (C sums skipped)
    cc = cells.counts
    prev = np.full(r, np.nan)
    ll = np.full(r, -np.inf)
    converged = np.zeros(r, dtype=bool)
    active = np.ones(r, dtype=bool)
    n_iter = np.zeros(r, dtype=np.int64)
    for it in range(max_iter + 1):
        lp = _answer_loglik(_log_rows(t), onehot, states)  # (R, C, P)
        joint = np.ascontiguousarray(  # (R, C, cells), C order: the sums' order is fixed
            _log_rows(rho).transpose(0, 2, 1)[:, :, cells.group] + lp[:, :, cells.pattern]
        )
        top = joint.max(axis=1)  # joint, top: (R, C, cells), (R, cells)
        lse = top + np.log(np.exp(joint - top[:, None]).sum(axis=1))
        ll_gold = (
            sum((gold[..., y, :] * lp[:, y]).sum(axis=-1) for y in range(c)) if has_gold else 0.0
        )
        ll_new = ((cc * lse).sum(axis=-1) + ll_gold) / n
        if prior is not None:
            ll_new = ll_new + (prior * _log_rows(t)).sum(axis=(1, 2, 3)) / n
        ll = np.where(active, ll_new, ll)
        change = np.abs(ll_new - prev)
        done = active & (change < tol * (1.0 + np.abs(prev)))
        if progress is not None and it > 0:
            progress(it, float(np.max(np.where(active, change, 0.0))))
        converged |= done
        active &= ~done
        if not active.any() or it == max_iter:
            break
        prev = np.where(active, ll_new, prev)
        n_iter += active
        rest = np.exp(joint[:, 1:] - lse[:, None]) * cc[..., None, :]
        w = np.concatenate([(cc - rest.sum(axis=1))[:, None], rest], axis=1)
        t_new, rho_new = _m_step(
            *cells.sums(w), gold, onehot, answered, states, group_n, clip, prior, cells.dense
        )
        t = np.where(active[:, None, None, None], t_new, t)
        rho = np.where(active[:, None, None], rho_new, rho)
    return {
        "confusion": _complete(t),
        "prevalence": _complete(rho),
        "mean_loglik": ll,
        "converged": converged,
        "n_iter": n_iter,
    }


# ----------------------------------------------------------------- starts
def majority_vote_start(counts, states, n_classes, *, clip=1e-6, gold=None):
    """Soft-majority-vote start: pattern posteriors = answer shares, then one M step.

    Returns confusion (K, C, C) and prevalence (L, C).
    """
    counts = np.asarray(counts, dtype=np.float64)
    onehot, answered = _indicators(np.asarray(states), n_classes)
    votes = onehot.sum(axis=2)  # (C, P)
    shares = votes / np.maximum(votes.sum(axis=0, keepdims=True), 1)
    w = counts[None, None] * shares[None, :, None]  # (1, C, L, P)
    gold = np.zeros((n_classes, counts.shape[1])) if gold is None else gold
    group_n = np.maximum(counts.sum(axis=1), 1e-300)
    states = np.asarray(states)
    whole = _whole_table(n_classes, counts.size)
    t, rho = _m_step(
        w.sum(axis=3), w.sum(axis=2), gold, onehot, answered, states, group_n, clip, None, whole
    )
    return _complete(t)[0], _complete(rho)[0]


def _binary_starts(rng, n_starts, k, group_mid):
    a0 = rng.uniform(0.04, 0.30, size=(n_starts, k))
    b0 = rng.uniform(0.70, 0.96, size=(n_starts, k))
    mu0 = rng.uniform(0.1, 0.9, size=(n_starts, group_mid.size))
    mu0[0] = group_mid
    return _binary_arrays(a0, b0, mu0)


def _binary_arrays(a, b, mu):
    """Confusion (R, K, 2, 2) and prevalence (R, L, 2) from a, b (R, K) and mu (R, L)."""
    t = np.stack([np.stack([1.0 - a, a], axis=-1), np.stack([1.0 - b, b], axis=-1)], axis=2)
    return t, np.stack([1.0 - mu, mu], axis=-1)


def _multiclass_starts(rng, n_starts, counts, states, c, clip, gold):
    t_mv, rho_mv = majority_vote_start(counts, states, c, clip=clip, gold=gold)
    k, n_groups = states.shape[1], counts.shape[0]
    acc = rng.uniform(0.5, 0.95, size=(n_starts - 1, k, 1, 1))
    off = rng.dirichlet(np.ones(c), size=(n_starts - 1, k, c))
    eye = np.eye(c)[None, None]
    off = off * (1 - eye)
    off = off / off.sum(axis=3, keepdims=True)
    t = np.concatenate([t_mv[None], acc * eye + (1 - acc) * off])
    rho = np.concatenate([rho_mv[None], rng.dirichlet(np.ones(c), size=(n_starts - 1, n_groups))])
    return t, rho


# ----------------------------------------------------------------- one fit on arrays
def em_fit_counts(
    counts,
    states,
    n_classes: int = 2,
    *,
    group_mid=None,
    n_starts: int = 10,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    min_gap: float | None = None,
    min_singular: float | None = None,
    orient: int = 0,
    random_state=0,
    extra_starts=None,
    gold=None,
    progress: Progress | None = None,
    annotators: Sequence[str] | None = None,
) -> dict:
    """EM on plain arrays: the best accepted, oriented start, or FitError.

    Parameters
    ----------
    counts : ndarray (L, P)
        Pattern counts per group over the patterns ``states`` (P, K).
    n_classes : int, default 2
        C; the start protocol, orientation and acceptance follow it (module docstring).
    group_mid : ndarray (L,), optional
        C = 2: the first start's prevalences (default 0.5).
    min_gap : float, C = 2 only (default 1e-3); min_singular : float, C > 2 only (1e-3)
        Acceptance thresholds (module docstring).
    extra_starts : (confusion (R, K, C, C), prevalence (R, L, C)), optional
        Appended to the protocol's starts.
    gold : ndarray (C, P), optional
        Gold items per known class and pattern (None or all zero: none).
    annotators : sequence of str, optional
        The annotators' names, for messages (default: their positions, from 0).

    Returns
    -------
    dict with ``confusion`` (K, C, C), ``prevalence`` (L, C), ``loglik``, ``n_iter``,
    ``n_accepted``, ``dominance_failures``, ``diagnostics``; with C = 2 also ``a``, ``b``
    (K,) and ``mu`` (L,).
    """
    c = int(n_classes)
    binary = c == 2
    opts = check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip)
    if binary and min_singular is not None or not binary and min_gap is not None:
        given, other = ("min_singular", "min_gap") if binary else ("min_gap", "min_singular")
        raise ConfigError(
            f"{given} applies to {'more than' if binary else 'exactly'} two classes; with "
            f"C = {c} the acceptance threshold is {other}."
        )
    given_threshold = min_gap if binary else min_singular
    threshold = check_real_option(
        "min_gap" if binary else "min_singular",
        1e-3 if given_threshold is None else given_threshold,
        low=0.0,
        high=1.0,
        high_open=binary,
    )
    rng = check_random_state(random_state)
    counts = np.asarray(counts, dtype=np.float64)
    states = np.asarray(states)
    n_groups, n_pat = counts.shape
    gold = np.zeros((c, n_pat)) if gold is None else np.asarray(gold, dtype=np.float64)
    if gold.shape != (c, n_pat):
        raise DataError(f"gold counts must have shape ({c}, {n_pat}); got {gold.shape}.")
    has_gold = bool(gold.sum() > 0)
    used = (counts.sum(axis=0) + gold.sum(axis=0)) > 0  # patterns seen: the others add nothing
    counts, states, gold = counts[:, used], states[used], gold[:, used]
    if binary:
        mid = np.full(n_groups, 0.5) if group_mid is None else np.asarray(group_mid, np.float64)
        t0, rho0 = _binary_starts(rng, opts["n_starts"], states.shape[1], mid)
    else:
        g = gold if has_gold else None
        t0, rho0 = _multiclass_starts(rng, opts["n_starts"], counts, states, c, opts["clip"], g)
    if extra_starts is not None:
        et, erho = (np.asarray(x, dtype=np.float64) for x in extra_starts)
        t0, rho0 = np.concatenate([t0, et]), np.concatenate([rho0, erho])
    n_cells = counts.size if _whole_table(c, counts.size) else int((counts > 0).sum())
    batch = max(1, _BATCH_ELEMENTS // max(1, c * n_cells))
    runs = [
        em_run(
            counts,
            states,
            t0[i : i + batch],
            rho0[i : i + batch],
            tol=opts["tol"],
            max_iter=opts["max_iter"],
            clip=opts["clip"],
            gold=gold,
            progress=progress,
        )
        for i in range(0, t0.shape[0], batch)
    ]
    out = {key: np.concatenate([run[key] for run in runs]) for key in runs[0]}
    n_total = counts.sum() + gold.sum()
    accept = _accept_binary if binary else _accept_multiclass
    t, rho, accepted, diag = accept(out, orient, threshold, has_gold)
    diag.update(
        starts=int(t0.shape[0]),
        starts_converged=int(out["converged"].sum()),
        starts_accepted=int(accepted.sum()),
        start_logliks=(out["mean_loglik"] * n_total).tolist(),
        iterations=out["n_iter"].tolist(),
        gold_items=[int(x) for x in gold.sum(axis=1)],
    )
    if not accepted.any():
        names = (
            [f"at position {j}" for j in range(t.shape[1])]
            if annotators is None
            else [repr(str(x)) for x in annotators]
        )
        message = _no_start_message(diag, t, out, threshold, binary, names)
        k, c = t.shape[1], t.shape[2]
        n_params = k * c * (c - 1) + (c - 1) * rho.shape[1]
        if n_total < n_params:  # the likelier cause: too few items, not a bad annotator
            message = (
                f"only {int(n_total)} annotated item(s) for {n_params} free channel parameters: "
                "too few to tell the annotators' errors apart; add items (about 10 per "
                f"parameter, {10 * n_params}, for a stable fit). " + message
            )
        raise FitError(message, diagnostics=diag)
    best = int(np.argmax(np.where(accepted, out["mean_loglik"], -np.inf)))
    res = {
        "confusion": t[best],
        "prevalence": rho[best],
        "loglik": float(out["mean_loglik"][best] * n_total),
        "n_iter": int(out["n_iter"][best]),
        "n_accepted": int(accepted.sum()),
        "dominance_failures": [] if binary else diagonal_dominance_failures(t[best, orient]),
        "diagnostics": diag,
    }
    if binary:
        res.update(a=t[best, :, 0, 1], b=t[best, :, 1, 1], mu=rho[best, :, 1])
    else:
        diag["min_singular_values"] = diag["_sv"][best].tolist()
    diag.pop("_sv", None)
    return res


def _accept_binary(out, orient, min_gap, has_gold):
    a, b = out["confusion"][:, :, 0, 1], out["confusion"][:, :, 1, 1]
    mu = out["prevalence"][:, :, 1]
    if not has_gold:  # gold items fix the labelling: an exchange would change the likelihood
        a, b, mu = exchange_binary_labels(a, b, mu, orient)
    gaps = (b - a).min(axis=1)
    finite = np.isfinite(out["mean_loglik"]) & np.all(np.isfinite(a), axis=1)
    accepted = out["converged"] & (gaps >= min_gap) & finite
    t, rho = _binary_arrays(a, b, mu)
    return t, rho, accepted, {"start_min_gaps": gaps.tolist()}


def _accept_multiclass(out, orient, min_singular, has_gold):
    t, rho = out["confusion"], out["prevalence"]
    for i in range(0 if has_gold else t.shape[0]):  # gold items label the classes themselves
        if np.all(np.isfinite(t[i])):
            t[i], rho[i] = relabel_classes(
                t[i], rho[i], dominant_diagonal_permutation(t[i, orient])
            )
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(out["mean_loglik"]) & np.all(np.isfinite(t), axis=(1, 2, 3))
        sv = np.where(
            finite[:, None], np.linalg.svd(np.nan_to_num(t), compute_uv=False).min(axis=2), 0.0
        )  # (R, K)
    accepted = out["converged"] & finite & (sv.min(axis=1) >= min_singular)
    return t, rho, accepted, {"start_min_singular_values": sv.min(axis=1).tolist(), "_sv": sv}


def _no_start_message(diag, t, out, threshold, binary, names) -> str:
    head = (
        f"EM found no acceptable start: {diag['starts_converged']} of {diag['starts']} starts "
        "converged and none had "
    )
    # gold items fix the labelling (no exchange, no relabelling): gold classes that contradict
    # the annotators pull every start away from their channels
    gold = (
        " Gold items fix which class is which: gold labels that contradict the annotators "
        "(flipped or miscoded classes) leave no acceptable start either; check the gold "
        "column's coding, or fit without the gold items to see whether the annotators alone fit."
        if sum(diag.get("gold_items", [])) > 0
        else ""
    )
    # only when some start ran out of iterations is more of them a fix (a Python option: the
    # audit and the command line run the EM with its default)
    longer = (
        f" {diag['starts'] - diag['starts_converged']} start(s) ran out of iterations: in "
        "Python, a larger max_iter= of the EM lets them finish."
        if diag["starts_converged"] < diag["starts"]
        else ""
    )
    if binary:
        gaps = (t[:, :, 1, 1] - t[:, :, 0, 1])[np.argmax(out["mean_loglik"])]
        worst = int(np.argmin(gaps))
        # a clearly negative gap is an annotator who answers against the class, not one
        # whose answers ignore it
        why = (
            f"Its gap is {gaps[worst]:.3g}: it answers 1 more often for class 0 than for "
            "class 1, as if its answers were coded the other way round; recode them "
            "(1 - answer) if so, or drop it from the annotators."
            if gaps[worst] < -0.1
            else "An annotator whose answers do not depend on the class (for example one who "
            "always answers 1) carries no information: drop it from the annotators."
        )
        text = head + (
            f"every oriented gap b - a >= {threshold} (the smallest gap at the best likelihood "
            f"belongs to annotator {names[worst]}). " + why
        )
        return text + longer + gold
    sv = diag["_sv"]
    finite = np.isfinite(out["mean_loglik"])
    best = int(np.argmax(np.where(finite, out["mean_loglik"], -np.inf)))
    weak = int(np.argmin(sv[best]))
    text = head + (
        f"every confusion matrix invertible (smallest singular value >= {threshold:g}); at the "
        f"best likelihood annotator {names[weak]} has smallest singular value "
        f"{sv[best, weak]:.3g}. An annotator who never uses some class, or whose answers do not "
        "depend on the class, cannot be inverted: drop it from the annotators or merge classes "
        "(in Python, min_singular=0 accepts non-invertible channels, which the NC-ECE then "
        "refuses)."
    )
    return text + longer + gold


# ----------------------------------------------------------------- the estimator
def _group_midpoints(summary) -> np.ndarray:
    edges = summary.group_edges
    if edges is None:
        return np.full(summary.n_groups, 0.5)
    return (edges[:-1] + edges[1:]) / 2


def _fixed_fallback(summary, groups, group_counts, method, reason, warnings):
    k = summary.n_annotators
    return ChannelFit.from_point(
        np.full(k, FALLBACK["a"]),
        np.full(k, FALLBACK["b"]),
        np.full(len(groups), FALLBACK["prevalence"]),
        annotators=summary.annotators,
        groups=groups,
        group_counts=group_counts,
        method=method,
        status="fallback",
        converged=False,
        n_starts_accepted=0,
        warnings=warnings
        + [f"fixed fallback channels (a=0.2, b=0.8, prevalence 0.5) used: {reason}"],
        diagnostics={"fallback_reason": reason},
        group_edges=summary.group_edges,
    )


def _moment_start(counts, states, j):
    """The three-annotator moment inverse as an extra C = 2 start (None when it fails)."""
    try:
        m = moment_inverse_arrays(counts[0], states, orient=j)
    except FitError:
        return None
    a, b = np.clip(m["a"], 0.01, 0.99)[None], np.clip(m["b"], 0.01, 0.99)[None]
    return _binary_arrays(a, b, np.clip([[m["mu"]]], 0.01, 0.99))


def dawid_skene_em(
    summary,
    *,
    prevalence: str | None = None,
    pooled: bool | None = None,
    n_starts: int = 10,
    max_iter: int = 1000,
    tol: float = 1e-9,
    clip: float = 1e-6,
    min_gap: float | None = None,
    min_singular: float | None = None,
    orient=0,
    use_moment_start: bool = True,
    fallback: str | None = None,
    empty_groups: str = "error",
    random_state=0,
    progress: Progress | None = None,
) -> ChannelFit:
    """Dawid–Skene EM for any number of classes (module docstring).

    Parameters
    ----------
    summary : Summary
        Pattern counts per channel group; gold items in its gold tables enter with
        their known class.
    prevalence : {"grouped", "pooled"}, optional
        One prevalence per group of the summary, or one for all (group ``"all"``).
        Default: ``"pooled"`` for two classes (the paper's marginal Dawid–Skene, K >= 3;
        :func:`score_bin_em` is the grouped one), ``"grouped"`` for more.
    pooled : bool, optional
        Deprecated spelling of ``prevalence``.
    n_starts, max_iter, tol, clip
        The start protocol (module docstring); change only with reason.
    min_gap : float, optional
        C = 2: smallest accepted oriented gap ``b - a`` (default 1e-3).
    min_singular : float, optional
        C > 2: smallest accepted singular value of every confusion (default 1e-3; 0: any).
    orient : int or str, default 0
        The designated annotator that fixes the labelling (``a < b``; C > 2: its diagonal).
    use_moment_start : bool, default True
        C = 2, pooled, K >= 3: add the moment inverse as a start.
    fallback : {None, "fixed"}
        C = 2: ``"fixed"`` returns the paper's fixed fallback (``status="fallback"``)
        instead of raising when no start is acceptable or a group is empty.
    empty_groups : {"error", "drop"}
        A group with no annotated item has no identified prevalence: refuse, or fit the
        other groups and report the dropped ones in ``warnings``.
    random_state : None, int or Generator, default 0
    progress : callable, optional
        ``progress(iteration, change)`` once per EM iteration (:data:`Progress`).

    Returns
    -------
    ChannelFit
        Method ``"score_bin_em"`` (C = 2, grouped) or ``"dawid_skene_em"``; binary layout
        for C = 2; ``diagnostics`` hold every start's log-likelihood.

    Raises
    ------
    IdentificationError, DataError
        Designs that cannot identify the channels.
    FitError
        No acceptable start, or an empty group (unless ``fallback``/``empty_groups`` say
        otherwise).

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal import summarize
    >>> fit = dawid_skene_em(summarize(simulate_toy(4000, random_state=1)))
    >>> list(fit.prevalence["group"].values)
    ['all']
    >>> from bayescal.simulate import simulate_multiclass
    >>> fit = dawid_skene_em(summarize(simulate_multiclass(3000, 3, random_state=0)))
    >>> fit.confusion.shape, fit.prevalence.dims
    ((1, 3, 3, 3), ('draw', 'group', 'class'))
    """
    if not isinstance(summary, Summary):
        raise ConfigError(
            f"dawid_skene_em expects a Summary; got {type(summary).__name__}. Build one with "
            "bayescal.summarize(data)."
        )
    c = summary.n_classes
    binary = c == 2
    mode = resolve_prevalence(prevalence, pooled=pooled, default="pooled" if binary else "grouped")
    check_em_options(n_starts=n_starts, max_iter=max_iter, tol=tol, clip=clip)
    if fallback not in (None, "fixed") or fallback and not binary:
        raise ConfigError(
            f"fallback must be None or 'fixed' (two classes only); got {fallback!r} with C = {c}."
        )
    if empty_groups not in ("error", "drop"):
        raise ConfigError(f"empty_groups must be 'error' or 'drop'; got {empty_groups!r}.")
    if not isinstance(use_moment_start, bool):
        raise ConfigError(f"use_moment_start must be True or False; got {use_moment_start!r}.")
    method = "score_bin_em" if binary and mode == "grouped" else "dawid_skene_em"
    j = orient_index(summary.annotators, orient)
    if binary:
        warnings = check_design(summary, method)
        counts = summary.binary.pattern_counts.astype(np.float64)
    else:
        warnings = check_multiclass_design(summary, pooled=mode == "pooled")
        counts = summary.pattern_counts.values.astype(np.float64)
    groups, mid, edges = summary.groups, _group_midpoints(summary), summary.group_edges
    if mode == "pooled":
        counts, groups, edges = counts.sum(axis=0, keepdims=True), ["all"], None
        mid = np.array([0.5])
    group_n = counts.sum(axis=1)
    empty = group_n == 0
    if empty.any():
        names = [groups[i] for i in np.flatnonzero(empty)]
        reason = f"channel group(s) {name_list(names)} contain no annotated item"
        if empty_groups == "drop":
            warnings.append(f"{reason}; dropped from the fit (their prevalence is not estimated).")
        elif fallback == "fixed":
            return _fixed_fallback(summary, groups, group_n, method, reason, warnings)
        else:
            raise FitError(
                f"{reason}, so their prevalence is not identified. Use fewer or wider groups, "
                "empty_groups='drop', prevalence='pooled'"
                + (", or fallback='fixed'." if binary else "."),
                diagnostics={"empty_groups": names},
            )
    keep = ~empty
    extra = None
    if binary and mode == "pooled" and use_moment_start and summary.n_annotators >= 3:
        extra = _moment_start(counts, summary.states, j)
    gold = summary.gold_counts() if summary.has_gold else None
    if binary and summary.has_gold:
        gold = summary.binary.gold_counts()
    try:
        res = em_fit_counts(
            counts[keep],
            summary.states,
            c,
            group_mid=np.asarray(mid, dtype=np.float64)[keep],
            n_starts=n_starts,
            max_iter=max_iter,
            tol=tol,
            clip=clip,
            min_gap=min_gap,
            min_singular=min_singular,
            orient=j,
            random_state=random_state,
            extra_starts=extra,
            gold=gold,
            progress=progress,
            annotators=summary.annotators,
        )
    except FitError as exc:
        if fallback == "fixed":
            return _fixed_fallback(summary, groups, group_n, method, str(exc), warnings)
        raise
    fit = ChannelFit.from_confusion(
        res["confusion"],
        res["prevalence"],
        annotators=summary.annotators,
        classes=summary.classes,
        groups=[g for g, k_ in zip(groups, keep) if k_],
        group_counts=group_n[keep].round().astype(np.int64),
        method=method,
        loglik=res["loglik"],
        converged=True,
        n_starts_accepted=res["n_accepted"],
        diagnostics={**res["diagnostics"], "prevalence": mode, "orient": summary.annotators[j]},
        warnings=warnings,
        group_edges=edges,
    )
    if binary:
        fit = fit.as_binary()
        fit.warnings.extend(check_fitted(fit))
    else:
        by_gold = gold_identifies_multiclass(summary)[0]
        fit.warnings.extend(check_fitted_confusion(fit, res["dominance_failures"], j, by_gold))
    return fit


def score_bin_em(summary: Summary, **options) -> ChannelFit:
    """The joint score-bin EM: :func:`dawid_skene_em` with ``prevalence="grouped"``.

    Shared channels, one prevalence per group of the summary (score groups for two
    classes: Hanada & Futami, Sec. 4.2). Options as :func:`dawid_skene_em`.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal import summarize
    >>> fit = score_bin_em(summarize(simulate_toy(4000, random_state=1), groups=5))
    >>> fit.status, fit.a.sizes["draw"]
    ('ok', 1)
    """
    if "prevalence" in options or "pooled" in options:
        raise ConfigError("score_bin_em is the grouped EM; use dawid_skene_em(prevalence=...).")
    return dawid_skene_em(summary, prevalence="grouped", use_moment_start=False, **options)
