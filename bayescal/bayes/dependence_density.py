"""The dependence model's log posterior density and gradient for nutpie (numba kernel).

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
- Chain rule in numpy: ``dc/d logit p = sqrt(1 + s^2) p (1 - p) / phi(Phi^{-1}(p))``,
  ``dc/dt = Phi^{-1}(p) s^2 / sqrt(1 + s^2)``, ``ds/dt = s``; the ordered
  transform as in :mod:`bayescal.bayes.logdensity`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, ndtri

from bayescal.bayes.dependence import DependenceSpec, _prior_only
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.errors import ConfigError

__all__ = ["DependenceLogDensity"]

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
                    ph1[j, y, q] = 0.5 * math.erfc(-z / _SQRT2)
                    ph0[j, y, q] = 0.5 * math.erfc(z / _SQRT2)
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


_COMPILED: list = []


def _kernel():
    """``_dep_loglik_grad`` compiled by numba (cached on disk as in
    :mod:`bayescal.bayes.logdensity`)."""
    if not _COMPILED:
        import numba

        _COMPILED.append(numba.njit(cache=True, nogil=True)(_dep_loglik_grad))
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


class DependenceLogDensity:
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

    def __init__(self, dspec: DependenceSpec):
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

    def _rates(self, x):
        """``logit a``, ``logit b`` (K, 2), ``exp(y1)`` of the ordered pairs, logit mu."""
        k = self.spec.n_annotators
        n_ord = self.ord_idx.size
        w = np.empty((k, 2))
        y = x[: 2 * n_ord].reshape(n_ord, 2)
        ey1 = np.exp(y[:, 1])
        w[self.ord_idx, 0] = y[:, 0]
        w[self.ord_idx, 1] = y[:, 0] + ey1
        w[self.free_idx] = x[2 * n_ord : 2 * (n_ord + self.free_idx.size)].reshape(-1, 2)
        return w, ey1, x[2 * (n_ord + self.free_idx.size) : self.n_base]

    def __call__(self, x) -> tuple[float, np.ndarray]:
        """``(log density, gradient)`` at the unconstrained point ``x`` of shape (n_dim,)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_dim,):
            raise ConfigError(f"x must have shape ({self.n_dim},); got {x.shape}.")
        return self.sampler_function()(x)

    def sampler_function(self):
        """``x -> (log density, gradient)`` without argument checks (for the sampler)."""
        prior_fn = self.prior.sampler_function()
        kernel = _kernel()
        dspec, lik_args = self.dspec, self._lik_args
        loaded, n_base, n_dim = dspec.loaded, self.n_base, self.n_dim
        k = self.spec.n_annotators
        ord_idx, free_idx = self.ord_idx, self.free_idx
        n_ord = ord_idx.size
        inv_var = 1.0 / dspec.sigma**2
        const = self._half_normal_const

        def logp_grad(x):
            with np.errstate(all="ignore"):  # overflow -> -inf below, no warning
                return _logp_grad(x)

        def _logp_grad(x):
            lp, gbase = prior_fn(x[:n_base])
            w, ey1, t = self._rates(x)
            logt = x[n_base:].reshape(-1, 2)
            s = np.zeros((k, 2))
            s[loaded] = np.exp(logt)
            p = expit(w)
            qn = ndtri(p)
            r = np.sqrt(1.0 + s * s)
            c = qn * r
            lmu = -np.logaddexp(0.0, -t)
            l1mu = -np.logaddexp(0.0, t)
            gc = np.empty((k, 2))
            gs = np.empty((k, 2))
            gt = np.empty(t.size)
            ll = kernel(c, s, lmu, l1mu, *lik_args, gc, gs, gt)
            grad = np.empty(n_dim)
            if not np.isfinite(ll):
                grad[:] = 0.0
                return -np.inf, grad
            # dc/dw = r p (1 - p) / phi(q), in logs so extreme rates do not overflow
            dcdw = r * np.exp(
                -np.logaddexp(0.0, -w) - np.logaddexp(0.0, w) + 0.5 * qn**2 + _LOG_SQRT_2PI
            )
            gw = gc * dcdw
            grad[:n_base] = gbase
            grad[2 * np.arange(n_ord)] += gw[ord_idx, 0] + gw[ord_idx, 1]
            grad[2 * np.arange(n_ord) + 1] += gw[ord_idx, 1] * ey1
            free_pos = 2 * (n_ord + np.arange(free_idx.size))
            grad[free_pos] += gw[free_idx, 0]
            grad[free_pos + 1] += gw[free_idx, 1]
            grad[2 * (n_ord + free_idx.size) : n_base] += gt
            sl = s[loaded]
            gt_load = gc[loaded] * qn[loaded] * sl**2 / r[loaded] + gs[loaded] * sl
            grad[n_base:] = (gt_load - sl**2 * inv_var + 1.0).ravel()
            lp += ll + const + float((logt - 0.5 * sl**2 * inv_var).sum())
            if not np.all(np.isfinite(grad)):
                # a rate or loading beyond double precision (|logit| > ~37 or s = inf):
                # outside the representable model, rejected like a zero-probability point
                grad[:] = 0.0
                return -np.inf, grad
            return lp, grad

        return logp_grad

    def initial_point(self) -> np.ndarray:
        """The independence model's initial point, every loading at ``sigma / 2``."""
        return np.concatenate(
            [
                self.prior.initial_point(),
                np.full(self.dspec.n_loadings, math.log(self.dspec.sigma / 2)),
            ]
        )

    def constrain(self, x) -> dict[str, np.ndarray]:
        """Model variables from unconstrained draws (..., n_dim): the independence model's
        ``ab``, ``a``, ``b``, ``prevalence`` (and ``ab_free``) plus ``loading``
        (..., n_loaded, 2)."""
        x = np.asarray(x, dtype=np.float64)
        out = self.prior.constrain(x[..., : self.n_base])
        out["loading"] = np.exp(x[..., self.n_base :]).reshape(*x.shape[:-1], -1, 2)
        return out
