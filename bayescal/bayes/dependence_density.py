"""The dependence model's log posterior densities and gradients for nutpie (numba kernels).

Two parametrisations of the one model (:mod:`bayescal.bayes.dependence`): the two-class
one on ``ab`` (:class:`DependenceLogDensity`, the binary model card's Beta / ordered-logit
priors) and the C-class one on the confusion rows' reference log-ratios
(:class:`MulticlassDependenceLogDensity`, Dirichlet rows); their coordinates differ, so
each has its kernel.

Two classes
-----------
Same density as :func:`bayescal.bayes.dependence.build_pymc_dependence_model`
(tests hold it equal to PyMC's ``compile_logp`` / ``compile_dlogp`` to 1e-9), on
PyMC's unconstrained coordinates in PyMC's order:
``x = [ab_chain__, ab_free_logodds__, prevalence_logodds__, loading_log__]``.

Pieces
------
- Prior of ``a``, ``b``, prevalence and their transforms' Jacobians: the
  independence model's :class:`~bayescal.bayes.logdensity.ChannelLogDensity` on a
  spec with no cells (so priors and orientation are not forked).
- Loadings: ``s = exp(t)``, HalfNormal(sigma) density plus the log-Jacobian ``t``.
- Likelihood (Qu, Tan & Kutner 1996; class summed out as in SPEC §4): the kernel
  below returns it with its gradient in ``c_jy = Phi^{-1}(p_jy) sqrt(1 + s_jy^2)``,
  ``s_jy`` and ``logit mu``. At each node ``u_q`` of a group, with
  ``F_jq = Phi(+-(c_j + s_j u_q))``: ``L = sum_q w_q prod_j F_jq`` and
  ``dL/dc_j = sum_q w_q (+-phi(z_jq)) prod_{k != j} F_kq``, ``dL/ds_j`` the same
  times ``u_q``. Ungrouped annotators are one-member groups at the single node
  ``u = 0`` (``s = 0``), i.e. exactly ``Phi(c) = p``.
- Chain rule (in the same kernel): ``dc/d logit p = sqrt(1 + s^2) p (1 - p) /
  phi(Phi^{-1}(p))``, ``dc/dt = Phi^{-1}(p) s^2 / sqrt(1 + s^2)``, ``ds/dt = s``; the
  ordered transform as in :mod:`bayescal.bayes.logdensity`. ``Phi^{-1}`` is computed in the
  kernel (Acklam's approximation refined by one Halley step), from the smaller tail
  ``expit(-|logit p|)`` so that rates near 0 and 1 keep their precision.

One evaluation is two numba calls (the prior part, then this kernel): 31 us of CPU time for a
pair among four annotators in five score groups, no missing answers (process time over 20 000
calls; wall time 95 us at load average 6 on 2 shared cores).

C classes
---------
:class:`MulticlassDependenceLogDensity`'s kernel computes (docstring of the class:
responsibilities, ``d log I / d c`` and ``d log I / d s`` per distinct correct / wrong /
missing sub-pattern of each group, the chain rule to
``T_j[y, y]`` and ``log s``, and ``d f / d v_a = G_a - x_a sum_k G_k`` to the
reference log-ratios), in one compiled loop nest: tests hold it equal to PyMC's
``logp`` / ``dlogp`` to 1e-9. ``Phi^{-1}`` is the binary kernel's (Acklam plus one
Halley step) evaluated on the smaller tail, ``1 - T_jyy`` as the sum of the row's
off-diagonal entries. Compiled once and cached on disk (``cache=True``); divisions follow
numpy's rules (``error_model="numpy"``): an underflowed integral gives ``-inf`` / ``nan``,
which nutpie treats as a divergence, instead of raising.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TypeVar

import numba
import numpy as np

from bayescal.bayes.dependence import (
    DependenceSpec,
    _multiclass_prior_only,
    _prior_only,
    _status,
)
from bayescal.bayes.logdensity import (
    ChannelLogDensity,
    MulticlassLogDensity,
    _simplex_grad,
    _simplex_logs,
    cell_logsumexp,
)
from bayescal.bayes.models import ChannelModelSpec
from bayescal.bayes.multiclass import MulticlassModelSpec
from bayescal.errors import ConfigError

__all__ = ["DependenceLogDensity", "MulticlassDependenceLogDensity"]

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _dep_loglik_grad(
    c,
    s,
    lmu,
    l1mu,
    states,
    counts,
    gold,
    pidx,
    members,
    starts,
    sub_index,
    sub_states,
    sub_starts,
    nodes,
    weights,
    gc,
    gs,
    gt,
):
    """Pattern-count log-likelihood (returned) and gradients in ``c``, ``s`` and logit mu.

    A set's factor depends only on its members' answers, so it is computed once per
    distinct sub-pattern (``sub_states[sub_starts[g]:sub_starts[g + 1]]``, the
    members' states) and looked up per pattern through ``sub_index[p, g]``.
    """
    n_patterns, k = states.shape
    n_groups = counts.shape[0]
    n_q = nodes.shape[0]
    n_sets = starts.shape[0] - 1
    n_sub = sub_states.shape[0]
    ph1 = np.empty((k, 2, n_q))
    ph0 = np.empty((k, 2, n_q))
    dens = np.empty((k, 2, n_q))
    for g in range(n_sets):
        # a one-member set has s = 0: z = c at its single node (index 0)
        nq = 1 if starts[g + 1] - starts[g] == 1 else n_q
        for m in range(starts[g], starts[g + 1]):
            j = members[m]
            for y in range(2):
                for q in range(nq):
                    z = c[j, y] + s[j, y] * nodes[q]
                    # one erfc, on the side where it is the small (accurate) tail
                    if z < 0.0:
                        ph1[j, y, q] = 0.5 * math.erfc(-z / _SQRT2)
                        ph0[j, y, q] = 1.0 - ph1[j, y, q]
                    else:
                        ph0[j, y, q] = 0.5 * math.erfc(z / _SQRT2)
                        ph1[j, y, q] = 1.0 - ph0[j, y, q]
                    dens[j, y, q] = math.exp(-0.5 * z * z - _LOG_SQRT_2PI)
    # per set, sub-pattern and class: log factor and its derivatives per member position
    sub_lr = np.empty((n_sub, 2))
    sub_dc = np.zeros((n_sub, 2, k))
    sub_ds = np.zeros((n_sub, 2, k))
    f = np.empty(k)
    for g in range(n_sets):
        lo = starts[g]
        hi = starts[g + 1]
        single = hi - lo == 1
        nq = 1 if single else n_q
        for sp in range(sub_starts[g], sub_starts[g + 1]):
            for y in range(2):
                total = 0.0
                for q in range(nq):
                    qq = q
                    wq = weights[q]
                    uq = nodes[q]
                    if single:
                        qq = 0  # s = 0 makes z = c at every node: one node, weight one
                        wq = 1.0
                        uq = 0.0
                    prod = 1.0
                    for m in range(lo, hi):
                        st = sub_states[sp, m - lo]
                        if st == 1:
                            f[m - lo] = ph1[members[m], y, qq]
                        elif st == 0:
                            f[m - lo] = ph0[members[m], y, qq]
                        else:
                            f[m - lo] = 1.0
                        prod *= f[m - lo]
                    total += wq * prod
                    for m in range(lo, hi):
                        st = sub_states[sp, m - lo]
                        if st == 2:
                            continue
                        others = 1.0
                        for m2 in range(lo, hi):
                            if m2 != m:
                                others *= f[m2 - lo]
                        j = members[m]
                        d = dens[j, y, qq] if st == 1 else -dens[j, y, qq]
                        sub_dc[sp, y, j] += wq * others * d
                        sub_ds[sp, y, j] += wq * others * d * uq
                if not total > 0.0:
                    return -np.inf
                sub_lr[sp, y] = math.log(total)
                for m in range(lo, hi):
                    sub_dc[sp, y, members[m]] /= total
                    sub_ds[sp, y, members[m]] /= total
    for j in range(k):
        for y in range(2):
            gc[j, y] = 0.0
            gs[j, y] = 0.0
    for i in range(gt.shape[0]):
        gt[i] = 0.0
    lp = 0.0
    for p in range(n_patterns):
        lr0 = 0.0
        lr1 = 0.0
        for g in range(n_sets):
            sp = sub_index[p, g]
            lr0 += sub_lr[sp, 0]
            lr1 += sub_lr[sp, 1]
        c0 = gold[0, p]
        c1 = gold[1, p]
        lp += gold[0, p] * lr0 + gold[1, p] * lr1
        for g in range(n_groups):
            n = counts[g, p]
            if n == 0.0:
                continue
            q = pidx[g]
            neg = l1mu[q] + lr0
            pos = lmu[q] + lr1
            if neg > pos:
                mx = neg + math.log1p(math.exp(pos - neg))
                r = math.exp(pos - mx)
            else:
                mx = pos + math.log1p(math.exp(neg - pos))
                r = -math.expm1(neg - mx)
            lp += n * mx
            c1 += n * r
            c0 += n * (1.0 - r)
            gt[q] += n * (r - math.exp(lmu[q]))
        if c0 == 0.0 and c1 == 0.0:
            continue
        for g in range(n_sets):
            sp = sub_index[p, g]
            for m in range(starts[g], starts[g + 1]):
                j = members[m]
                gc[j, 0] += c0 * sub_dc[sp, 0, j]
                gc[j, 1] += c1 * sub_dc[sp, 1, j]
                gs[j, 0] += c0 * sub_ds[sp, 0, j]
                gs[j, 1] += c1 * sub_ds[sp, 1, j]
    return lp


def _ndtri_lower(q):
    """``Phi^{-1}(q)`` for ``0 <= q <= 1/2``: Acklam's rational approximation (relative error
    1.2e-9) and one Halley step on ``Phi(x) - q`` (erfc is accurate in the lower tail), which
    brings it to double precision."""
    if q <= 0.0:
        return -np.inf
    if q < 0.02425:
        r = math.sqrt(-2.0 * math.log(q))
        x = (
            (
                (
                    (
                        (-7.784894002430293e-03 * r - 3.223964580411365e-01) * r
                        - 2.400758277161838e00
                    )
                    * r
                    - 2.549732539343734e00
                )
                * r
                + 4.374664141464968e00
            )
            * r
            + 2.938163982698783e00
        ) / (
            (
                ((7.784695709041462e-03 * r + 3.224671290700398e-01) * r + 2.445134137142996e00) * r
                + 3.754408661907416e00
            )
            * r
            + 1.0
        )
    else:
        r0 = q - 0.5
        r = r0 * r0
        x = (
            (
                (
                    (
                        (
                            (-3.969683028665376e01 * r + 2.209460984245205e02) * r
                            - 2.759285104469687e02
                        )
                        * r
                        + 1.383577518672690e02
                    )
                    * r
                    - 3.066479806614716e01
                )
                * r
                + 2.506628277459239e00
            )
            * r0
            / (
                (
                    (
                        (
                            (-5.447609879822406e01 * r + 1.615858368580409e02) * r
                            - 1.556989798598866e02
                        )
                        * r
                        + 6.680131188771972e01
                    )
                    * r
                    - 1.328068155288572e01
                )
                * r
                + 1.0
            )
        )
    e = 0.5 * math.erfc(-x / _SQRT2) - q
    u = e * math.exp(0.5 * x * x + _LOG_SQRT_2PI)
    return x - u / (1.0 + 0.5 * x * u)


def _dep_logp_grad(
    x,
    grad,
    gbase,
    n_base,
    ord_idx,
    free_idx,
    loaded,
    inv_var,
    const,
    states,
    counts,
    gold,
    pidx,
    members,
    starts,
    sub_index,
    sub_states,
    sub_starts,
    nodes,
    weights,
):
    """Likelihood and loadings' prior at ``x`` (returned), gradient written into ``grad``
    (``gbase``: the prior part's gradient in the first ``n_base`` coordinates), on PyMC's
    unconstrained coordinates; the chain rule of the module docstring."""
    k = states.shape[1]
    n_ord = ord_idx.shape[0]
    n_free = free_idx.shape[0]
    n_prev = n_base - 2 * (n_ord + n_free)
    w = np.empty((k, 2))
    ey1 = np.empty(n_ord)
    for i in range(n_ord):
        j = ord_idx[i]
        ey1[i] = math.exp(x[2 * i + 1])
        w[j, 0] = x[2 * i]
        w[j, 1] = x[2 * i] + ey1[i]
    for i in range(n_free):
        j = free_idx[i]
        w[j, 0] = x[2 * (n_ord + i)]
        w[j, 1] = x[2 * (n_ord + i) + 1]
    s = np.zeros((k, 2))
    lp = const
    for i in range(loaded.shape[0]):
        for y in range(2):
            lt = x[n_base + 2 * i + y]
            s[loaded[i], y] = math.exp(lt)
            lp += lt - 0.5 * s[loaded[i], y] ** 2 * inv_var
    c = np.empty((k, 2))
    qn = np.empty((k, 2))
    dcdw = np.empty((k, 2))
    for j in range(k):
        for y in range(2):
            wj = w[j, y]
            # the smaller tail, accurately from the log-odds: q = expit(-|w|)
            tail = math.log1p(math.exp(-abs(wj)))
            q = math.exp(-(max(abs(wj), 0.0) + tail))
            z = _ndtri_nb(q)
            qn[j, y] = z if wj <= 0.0 else -z
            r = math.sqrt(1.0 + s[j, y] ** 2)
            c[j, y] = qn[j, y] * r
            # dc/dw = r p (1 - p) / phi(Phi^{-1}(p)), in logs
            log_p1p = -(max(-wj, 0.0) + tail) - (max(wj, 0.0) + tail)
            dcdw[j, y] = r * math.exp(log_p1p + 0.5 * qn[j, y] ** 2 + _LOG_SQRT_2PI)
    lmu = np.empty(n_prev)
    l1mu = np.empty(n_prev)
    off = 2 * (n_ord + n_free)
    for i in range(n_prev):
        tv = x[off + i]
        tail = math.log1p(math.exp(-abs(tv)))
        lmu[i] = -(max(-tv, 0.0) + tail)
        l1mu[i] = -(max(tv, 0.0) + tail)
    gc = np.empty((k, 2))
    gs = np.empty((k, 2))
    gt = np.empty(n_prev)
    ll = _lik_nb(
        c,
        s,
        lmu,
        l1mu,
        states,
        counts,
        gold,
        pidx,
        members,
        starts,
        sub_index,
        sub_states,
        sub_starts,
        nodes,
        weights,
        gc,
        gs,
        gt,
    )
    lp += ll
    for i in range(n_base):
        grad[i] = gbase[i]
    for i in range(n_ord):
        j = ord_idx[i]
        g0 = gc[j, 0] * dcdw[j, 0]
        g1 = gc[j, 1] * dcdw[j, 1]
        grad[2 * i] += g0 + g1
        grad[2 * i + 1] += g1 * ey1[i]
    for i in range(n_free):
        j = free_idx[i]
        grad[2 * (n_ord + i)] += gc[j, 0] * dcdw[j, 0]
        grad[2 * (n_ord + i) + 1] += gc[j, 1] * dcdw[j, 1]
    for i in range(n_prev):
        grad[off + i] += gt[i]
    for i in range(loaded.shape[0]):
        j = loaded[i]
        for y in range(2):
            sv = s[j, y]
            r = math.sqrt(1.0 + sv * sv)
            grad[n_base + 2 * i + y] = (
                gc[j, y] * qn[j, y] * sv * sv / r + gs[j, y] * sv - sv * sv * inv_var + 1.0
            )
    ok = math.isfinite(lp)
    for i in range(grad.shape[0]):
        ok = ok and math.isfinite(grad[i])
    if not ok:
        # a rate or loading beyond double precision (|logit| > ~37, s = inf) or a pattern of
        # probability 0: outside the representable model, rejected like a zero-density point
        for i in range(grad.shape[0]):
            grad[i] = 0.0
        return -np.inf
    return lp


#: numba dispatchers the full kernel calls (bound by ``_kernel`` before it is compiled)
_ndtri_nb = None
_lik_nb = None


_COMPILED: list = []


def _kernel():
    """The density's numba kernel (compiled on first use, cached on disk as in
    :mod:`bayescal.bayes.logdensity`); the helpers it calls are compiled first."""
    if not _COMPILED:
        import numba

        jit = numba.njit(cache=True, nogil=True)
        globals()["_ndtri_nb"] = jit(_ndtri_lower)
        globals()["_lik_nb"] = jit(_dep_loglik_grad)
        _COMPILED.append(jit(_dep_logp_grad))
    return _COMPILED[0]


def _sub_patterns(states, sets):
    """Distinct sub-patterns of every set's members: (sub_index (P, n_sets), sub_states
    (n_sub, max members), sub_starts (n_sets + 1,))."""
    width = max(len(g) for g in sets)
    sub_index = np.empty((states.shape[0], len(sets)), dtype=np.int64)
    rows, starts = [], [0]
    for g, members in enumerate(sets):
        uniq, inv = np.unique(states[:, members], axis=0, return_inverse=True)
        sub_index[:, g] = starts[-1] + inv.ravel()
        padded = np.full((uniq.shape[0], width), 2, dtype=np.int64)
        padded[:, : len(members)] = uniq
        rows.append(padded)
        starts.append(starts[-1] + uniq.shape[0])
    sub_states = np.concatenate(rows) if rows else np.zeros((0, width), dtype=np.int64)
    return sub_index, np.ascontiguousarray(sub_states), np.array(starts, dtype=np.int64)


#: the independence model's density a dependence density starts from
PriorT = TypeVar("PriorT", ChannelLogDensity, MulticlassLogDensity)


class _LoadingDensity(ABC, Generic[PriorT]):
    """What both parametrisations' densities share: the independence model's density
    ``prior`` on the first ``n_base`` coordinates, then ``log loading``."""

    dspec: DependenceSpec
    prior: PriorT
    n_dim: int

    @abstractmethod
    def sampler_function(self) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
        """``x -> (log density, gradient)`` without argument checks (for the sampler)."""

    def __call__(self, x) -> tuple[float, np.ndarray]:
        """``(log density, gradient)`` at the unconstrained point ``x`` of shape (n_dim,)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_dim,):
            raise ConfigError(f"x must have shape ({self.n_dim},); got {x.shape}.")
        return self.sampler_function()(x)

    def initial_point(self) -> np.ndarray:
        """The independence model's initial point, every loading at ``sigma / 2``."""
        return np.concatenate(
            [
                self.prior.initial_point(),
                np.full(self.dspec.n_loadings, math.log(self.dspec.sigma / 2)),
            ]
        )


class DependenceLogDensity(_LoadingDensity[ChannelLogDensity]):
    """Log posterior density and gradient of the dependence model, unconstrained scale.

    Parameters
    ----------
    dspec : DependenceSpec
        From :func:`bayescal.bayes.dependence.make_dependence_spec`.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.summaries import summarize
    >>> from bayescal.bayes.models import make_spec
    >>> from bayescal.bayes.dependence import make_dependence_spec
    >>> spec = make_spec(summarize(simulate_toy(500, random_state=0), groups=3))
    >>> density = DependenceLogDensity(make_dependence_spec(spec, "a1:a2"))
    >>> density.n_dim  # 2 K + L + 2 loadings per grouped annotator
    13
    >>> logp, grad = density(density.initial_point())
    >>> grad.shape
    (13,)
    """

    def __init__(self, dspec: DependenceSpec[ChannelModelSpec]):
        spec = dspec.base
        self.dspec = dspec
        self.spec = spec
        self.prior = ChannelLogDensity(_prior_only(spec))
        self.ord_idx = self.prior.ord_idx
        self.free_idx = self.prior.free_idx
        self.n_base = self.prior.n_dim
        self.n_dim = self.n_base + dspec.n_loadings
        k = spec.n_annotators
        grouped = set(dspec.loaded.tolist())
        sets = [list(g) for g in dspec.groups] + [[j] for j in range(k) if j not in grouped]
        members = np.array([j for g in sets for j in g], dtype=np.int64)
        starts = np.cumsum([0] + [len(g) for g in sets]).astype(np.int64)
        sub_index, sub_states, sub_starts = _sub_patterns(spec.states, sets)
        self._lik_args = (
            np.ascontiguousarray(spec.states, dtype=np.int64),
            np.ascontiguousarray(spec.counts, dtype=np.float64),
            np.ascontiguousarray(spec.gold, dtype=np.float64),
            np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
            members,
            starts,
            sub_index,
            sub_states,
            sub_starts,
            np.ascontiguousarray(dspec.nodes),
            np.ascontiguousarray(dspec.weights),
        )
        self.names = self.prior.names + ["loading_log__"] * dspec.n_loadings
        self._half_normal_const = dspec.n_loadings * (
            math.log(2.0) - _LOG_SQRT_2PI - math.log(dspec.sigma)
        )

    def with_counts(self, counts) -> DependenceLogDensity:
        """The same density with other pattern counts on the same cells (no recompilation)."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != self.spec.counts.shape:
            raise ConfigError(
                f"counts must have shape {self.spec.counts.shape}; got {counts.shape}."
            )
        return DependenceLogDensity(self.dspec.with_counts(counts))

    def sampler_function(self):
        """``x -> (log density, gradient)`` without argument checks (for the sampler)."""
        prior_fn = self.prior.sampler_function()
        kernel = _kernel()
        dspec = self.dspec
        args = (
            self.n_base,
            self.ord_idx,
            self.free_idx,
            dspec.loaded,
            1.0 / dspec.sigma**2,
            self._half_normal_const,
            *self._lik_args,
        )
        n_base, n_dim = self.n_base, self.n_dim

        def logp_grad(x):
            lp, gbase = prior_fn(x[:n_base])
            grad = np.empty(n_dim)
            lp += kernel(x, grad, gbase, *args)
            return lp, grad

        return logp_grad

    def constrain(self, x) -> dict[str, np.ndarray]:
        """Model variables from unconstrained draws (..., n_dim): the independence model's
        ``ab``, ``a``, ``b``, ``prevalence`` (and ``ab_free``) plus ``loading``
        (..., n_loaded, 2)."""
        x = np.asarray(x, dtype=np.float64)
        out = self.prior.constrain(x[..., : self.n_base])
        out["loading"] = np.exp(x[..., self.n_base :]).reshape(*x.shape[:-1], -1, 2)
        return out


# --------------------------------------------------------------------------- C classes
class MulticlassDependenceLogDensity(_LoadingDensity[MulticlassLogDensity]):
    """Log posterior density and closed-form gradient for nutpie (numba kernel).

    Unconstrained coordinates in PyMC's order: the independence model's
    (:class:`~bayescal.bayes.logdensity.MulticlassLogDensity`, reference
    log-ratios of every confusion row, then of every prevalence row), then
    ``log loading`` (dependent annotator, class). The prior part is that density on
    a spec without items; the likelihood, the loadings' prior and the gradient come
    from the numba kernel below
    (gradient in ``log T``, ``log rho`` and ``s`` from the responsibilities, as in
    the E step, mapped to the log-ratios by ``d f / d v_a = G_a - x_a sum_k G_k``).

    Per group and class the integral ``I_G(y, v)`` is computed once per distinct
    correct / wrong / missing sub-pattern ``v`` of its members (at most ``3^r``),
    so one evaluation costs ``O(C 3^r Q r^2)`` for the integrals plus ``O(P K C)``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> from bayescal.bayes.multiclass import make_multiclass_spec
    >>> data = simulate_multiclass(400, 3, n_annotators=4, random_state=0)
    >>> spec = make_multiclass_spec(summarize_multiclass(data))
    >>> from bayescal.bayes.dependence import make_dependence_spec
    >>> density = MulticlassDependenceLogDensity(make_dependence_spec(spec, "a1:a2"))
    >>> density.n_dim  # 4 x 3 x 2 confusion + 3 x 2 prevalence + 2 x 3 loadings
    36
    >>> logp, grad = density(density.initial_point())
    >>> grad.shape
    (36,)
    """

    def __init__(self, dspec: DependenceSpec[MulticlassModelSpec]):
        spec = dspec.base
        self.dspec = dspec
        self.spec = spec
        self.prior = MulticlassLogDensity(_multiclass_prior_only(spec))
        self.n_base = self.prior.n_dim
        self.n_dim = self.n_base + dspec.n_loadings
        k, c = spec.n_annotators, spec.n_classes
        states = np.ascontiguousarray(spec.states, dtype=np.int64)
        grouped = np.zeros(k, dtype=np.bool_)
        grouped[dspec.loaded] = True
        g, s = np.nonzero(spec.counts)
        # every group's distinct sub-patterns, numbered globally
        n_groups = max(len(dspec.groups), 1)
        rmax = max([len(gr) for gr in dspec.groups], default=1)
        inv = np.zeros((states.shape[0], c, n_groups), dtype=np.int64)
        sub_status: list[list[int]] = []
        sub_members: list[list[int]] = []
        sub_size: list[int] = []
        for gi, group in enumerate(dspec.groups):
            status = _status(states, list(group), c)  # (P, C, r)
            code = (status * 3 ** np.arange(len(group))).sum(axis=-1)
            subs, where = np.unique(code, return_inverse=True)
            inv[:, :, gi] = len(sub_size) + where.reshape(code.shape)
            for v in subs:
                row = [(v // 3**i) % 3 for i in range(len(group))]
                sub_status.append(row + [2] * (rmax - len(group)))
                sub_members.append(list(group) + [0] * (rmax - len(group)))
                sub_size.append(len(group))
        if not dspec.groups:  # no groups: one empty sub-pattern with I = 1
            sub_status, sub_members, sub_size = [[2]], [[0]], [0]
        self._args = (
            self.n_base,
            states,
            s.astype(np.int64),
            spec.prevalence_index[g].astype(np.int64),
            spec.counts[g, s].astype(np.float64),
            np.ascontiguousarray(np.asarray(spec.gold).T, dtype=np.float64),
            np.ascontiguousarray(spec.confusion_reference, dtype=np.int64),
            np.ascontiguousarray(spec.prevalence_reference, dtype=np.int64),
            len(spec.prevalence_groups),
            grouped,
            dspec.loaded.astype(np.int64),
            inv,
            np.array(sub_status, dtype=np.int64),
            np.array(sub_members, dtype=np.int64),
            np.array(sub_size, dtype=np.int64),
            np.ascontiguousarray(dspec.nodes),
            np.ascontiguousarray(dspec.weights),
            1.0 / dspec.sigma**2,
            dspec.n_loadings * (math.log(2.0) - _LOG_SQRT_2PI - math.log(dspec.sigma)),
        )

    def sampler_function(self):
        """``x -> (log density, gradient)`` for the sampler's loop."""
        prior_fn = self.prior.sampler_function()
        args, n_base, n_dim = self._args, self.n_base, self.n_dim

        def logp_grad(x):
            lp, gbase = prior_fn(x[:n_base])
            grad = np.empty(n_dim)
            grad[:n_base] = gbase
            return lp + _multiclass_likelihood_kernel(x, grad, *args), grad

        return logp_grad

    def constrain(self, x):
        """Confusions (..., K, C, C), prevalences (..., L', C), loadings (..., n_loaded, C)."""
        x = np.asarray(x, dtype=np.float64)
        conf, prev = self.prior.constrain(x[..., : self.n_base])
        loading = np.exp(x[..., self.n_base :]).reshape(
            *x.shape[:-1], self.dspec.loaded.size, self.dspec.n_classes
        )
        return conf, prev, loading


_ndtri_c = numba.njit(cache=True, nogil=True)(_ndtri_lower)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _multiclass_likelihood_kernel(
    x,
    grad,
    n_base,
    states,
    cell_s,
    cell_q,
    cell_n,
    gold,
    ref_t,
    ref_r,
    n_prev,
    grouped,
    loaded,
    inv,
    sub_status,
    sub_members,
    sub_size,
    nodes,
    weights,
    inv_var,
    hn_const,
):
    """Likelihood plus loading prior at ``x`` (returned); its gradient is *added* to
    ``grad`` (which holds the prior's gradient in the first ``n_base`` entries).

    ``inv[s, y, g]``: the global sub-pattern index of group ``g`` for pattern ``s`` given
    class ``y``; ``sub_status[v, m]`` (1 correct, 0 wrong, 2 missing) and
    ``sub_members[v, m]`` the annotator of member ``m`` of sub-pattern ``v``'s group.
    """
    n_pat, k = states.shape
    c = ref_t.shape[1]
    n_groups = inv.shape[2]
    n_sub = sub_status.shape[0]
    nq = nodes.shape[0]
    # constrained confusions and prevalences
    log_t = np.empty((k, c, c))
    p_t = np.empty((k, c, c))
    row_log = np.empty(c)
    row_p = np.empty(c)
    for j in range(k):
        for y in range(c):
            _simplex_logs(x, (j * c + y) * (c - 1), ref_t[j, y], c, row_log, row_p)
            for a in range(c):
                log_t[j, y, a] = row_log[a]
                p_t[j, y, a] = row_p[a]
    off_prev = k * c * (c - 1)
    log_r = np.empty((n_prev, c))
    p_r = np.empty((n_prev, c))
    for q in range(n_prev):
        _simplex_logs(x, off_prev + q * (c - 1), ref_r[q], c, row_log, row_p)
        for y in range(c):
            log_r[q, y] = row_log[y]
            p_r[q, y] = row_p[y]
    # loadings, their HalfNormal prior and log-Jacobian
    s = np.zeros((k, c))
    lp = hn_const
    for i in range(loaded.shape[0]):
        for y in range(c):
            t = x[n_base + i * c + y]
            sv = math.exp(t)
            s[loaded[i], y] = sv
            lp += -0.5 * inv_var * sv * sv + t
    # probit parts of the diagonal: q = Phi^{-1}(T_yy) on the smaller tail
    qd = np.zeros((k, c))
    offsum = np.zeros((k, c))
    cc = np.zeros((k, c))
    for j in range(k):
        for y in range(c):
            o = 0.0
            for a in range(c):
                if a != y:
                    o += p_t[j, y, a]
            offsum[j, y] = o
            d = p_t[j, y, y]
            qd[j, y] = _ndtri_c(d) if d <= 0.5 else -_ndtri_c(o)
            cc[j, y] = qd[j, y] * math.sqrt(1.0 + s[j, y] * s[j, y])
    # log P(s | y) without the integrals: emission factors
    ll = np.zeros((n_pat, c))
    for sp in range(n_pat):
        for j in range(k):
            a = states[sp, j]
            if a >= c:
                continue
            for y in range(c):
                if not grouped[j]:
                    ll[sp, y] += log_t[j, y, a]
                elif a != y:
                    ll[sp, y] += log_t[j, y, a] - math.log(offsum[j, y])
    # integrals per sub-pattern and class, with d log I / d c and d log I / d s per member
    rmax = sub_status.shape[1]
    log_i = np.empty((n_sub, c))
    dlc = np.zeros((n_sub, c, rmax))
    dls = np.zeros((n_sub, c, rmax))
    f = np.empty(rmax)
    df = np.empty(rmax)
    # Phi(z), Phi(-z) and phi(z) at every node, once per grouped annotator and class
    ph1 = np.empty((k, c, nq))
    ph0 = np.empty((k, c, nq))
    phd = np.empty((k, c, nq))
    for j in range(k):
        if not grouped[j]:
            continue
        for y in range(c):
            for qn in range(nq):
                z = cc[j, y] + s[j, y] * nodes[qn]
                # one erfc, on the side where it is the small (accurate) tail
                if z < 0.0:
                    ph1[j, y, qn] = 0.5 * math.erfc(-z / _SQRT2)
                    ph0[j, y, qn] = 1.0 - ph1[j, y, qn]
                else:
                    ph0[j, y, qn] = 0.5 * math.erfc(z / _SQRT2)
                    ph1[j, y, qn] = 1.0 - ph0[j, y, qn]
                phd[j, y, qn] = math.exp(-0.5 * z * z - _LOG_SQRT_2PI)
    for v in range(n_sub):
        r = sub_size[v]
        for y in range(c):
            tot = 0.0
            for m in range(r):
                dlc[v, y, m] = 0.0
                dls[v, y, m] = 0.0
            for qn in range(nq):
                u = nodes[qn]
                for m in range(r):
                    j = sub_members[v, m]
                    st = sub_status[v, m]
                    if st == 2:
                        f[m] = 1.0
                        df[m] = 0.0
                        continue
                    if st == 1:
                        f[m] = ph1[j, y, qn]
                        df[m] = phd[j, y, qn]
                    else:
                        f[m] = ph0[j, y, qn]
                        df[m] = -phd[j, y, qn]
                prod = weights[qn]
                for m in range(r):
                    prod *= f[m]
                tot += prod
                for m in range(r):
                    other = weights[qn] * df[m]
                    for m2 in range(r):
                        if m2 != m:
                            other *= f[m2]
                    dlc[v, y, m] += other
                    dls[v, y, m] += other * u
            # an integral that underflows makes the density -inf there (a divergence to
            # nutpie), as in the numpy reference, instead of raising
            log_i[v, y] = math.log(tot) if tot > 0.0 else -np.inf
            for m in range(r):
                dlc[v, y, m] /= tot
                dls[v, y, m] /= tot
    for sp in range(n_pat):
        for g in range(n_groups):
            for y in range(c):
                ll[sp, y] += log_i[inv[sp, y, g], y]
    # cells: log-sum-exp over classes and responsibilities
    wsum = np.zeros((n_pat, c))
    g_r = np.zeros((n_prev, c))
    joint = np.empty(c)
    for i in range(cell_n.shape[0]):
        sp = cell_s[i]
        q = cell_q[i]
        lse, tot = cell_logsumexp(log_r[q], ll[sp], joint)
        lp += cell_n[i] * lse
        for y in range(c):
            rr = cell_n[i] * joint[y] / tot
            wsum[sp, y] += rr
            g_r[q, y] += rr
    for sp in range(n_pat):
        for y in range(c):
            if gold[sp, y] != 0.0:
                lp += gold[sp, y] * ll[sp, y]
                wsum[sp, y] += gold[sp, y]
    # gradients: d f / d log T (off-diagonal and ungrouped), d f / d T_yy, d f / d s
    g_t = np.zeros((k, c, c))
    d_diag = np.zeros((k, c))
    d_s = np.zeros((k, c))
    for sp in range(n_pat):
        for j in range(k):
            a = states[sp, j]
            if a >= c:
                continue
            for y in range(c):
                w = wsum[sp, y]
                if not grouped[j]:
                    g_t[j, y, a] += w
                elif a != y:
                    g_t[j, y, a] += w
                    d_diag[j, y] += w / offsum[j, y]
        for g in range(n_groups):
            for y in range(c):
                v = inv[sp, y, g]
                w = wsum[sp, y]
                for m in range(sub_size[v]):
                    j = sub_members[v, m]
                    root = math.sqrt(1.0 + s[j, y] * s[j, y])
                    dc_dp = root / math.exp(-0.5 * qd[j, y] * qd[j, y] - _LOG_SQRT_2PI)
                    d_diag[j, y] += w * dlc[v, y, m] * dc_dp
                    d_s[j, y] += w * (dls[v, y, m] + dlc[v, y, m] * qd[j, y] * s[j, y] / root)
    for j in range(k):
        if grouped[j]:
            for y in range(c):
                g_t[j, y, y] += d_diag[j, y] * p_t[j, y, y]
    tmp = np.empty(n_base)
    for j in range(k):
        for y in range(c):
            _simplex_grad(g_t[j, y], p_t[j, y], tmp, (j * c + y) * (c - 1), ref_t[j, y], c)
    for q in range(n_prev):
        _simplex_grad(g_r[q], p_r[q], tmp, off_prev + q * (c - 1), ref_r[q], c)
    for i in range(n_base):
        grad[i] += tmp[i]
    for i in range(loaded.shape[0]):
        for y in range(c):
            sv = s[loaded[i], y]
            grad[n_base + i * c + y] = d_s[loaded[i], y] * sv - inv_var * sv * sv + 1.0
    return lp
