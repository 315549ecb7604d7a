"""The channel models' log posterior density and its gradient, hand-written for a fast sampler.

The density is the one PyMC builds in :func:`bayescal.bayes.models.build_pymc_model`
(the reference), written out on the sampler's unconstrained scale so that a
NUTS implementation outside PyMC (nutpie) can sample it without compiling a
PyTensor graph. It includes every term of PyMC's ``model.logp()``: the Beta
log densities with their normalising constants, the Jacobians of the
log-odds and ordered transforms, and the pattern-count likelihood (SPEC §4,
Hanada & Futami, Eq. 7 summed over the latent class; multinomial constants
dropped as in the PyMC ``Potential``), with the gold items' answers at their
known class (``n^gold_ys log P(s | Y = y)``, :mod:`bayescal.bayes.models`) and,
when the priors carry one, the joint log-odds normal of
:class:`~bayescal.bayes.priors.JointLogitNormal`. Tests
hold it equal to PyMC's
``compile_logp`` / ``compile_dlogp`` to 1e-9.

Unconstrained coordinates (PyMC's value variables, in PyMC's order)
--------------------------------------------------------------------
``x = [ab_chain__ (n_oriented, 2), ab_free_logodds__ (n_free, 2), prevalence_logodds__ (L')]``.
For an oriented annotator ``(y0, y1)``: ``logit a = y0``, ``logit b = y0 + exp(y1)``
(log-odds then ordered transform; log-Jacobian ``y1 + log a(1-a) + log b(1-b)``).
For a free annotator: ``logit a = z0``, ``logit b = z1``. Prevalence: ``logit mu = t``.

Gradient (closed form)
----------------------
With ``u = logit a``, ``v = logit b``, ``r_gs = P(Y = 1 | pattern s, group g)``
(the E-step responsibility), ``c1_s = sum_g n_gs r_gs + n^gold_1s`` and
``c0_s = sum_g n_gs (1 - r_gs) + n^gold_0s`` (a gold item's responsibility is its class):

- ``d/du_j = alpha_a (1 - a) - beta_a a + (1 - a_j) C0_j1 - a_j C0_j0`` where
  ``C0_jk = sum_{s: s_j = k} c0_s`` (answers of ``j`` equal to ``k``);
- ``d/dv_j`` likewise with ``b``, ``c1`` and the Beta prior of ``b``;
- ``d/dt_q = alpha_mu (1 - mu_q) - beta_mu mu_q + sum_{g -> q} sum_s n_gs (r_gs - mu_q)``;
- ordered pairs: ``d/dy0 = d/du + d/dv``, ``d/dy1 = exp(y1) d/dv + 1``.

The kernel is compiled by numba on its first call in a process (numba is
imported then) and cached on disk with numba's ``cache=True``: the cache lives
in this package's ``__pycache__`` (numba's in-tree locator), or, when the
package folder is read-only, in the user's own numba cache (``~/.cache/numba``,
or ``$NUMBA_CACHE_DIR`` when the user set it). numba unpickles its index and
code from there, so only those places are read: both are writable only by
whoever can already change this package's code or the user's own environment;
nothing is read from the working directory, the data's folder or a shared
temporary folder.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln, expit, logit

from bayescal.bayes.models import INIT_PAIR, ChannelModelSpec, channel_hyper
from bayescal.dims import GROUP
from bayescal.errors import ConfigError

__all__ = ["ChannelLogDensity"]


def _logp_grad(
    x,
    grad,
    ord_idx,
    free_idx,
    states,
    counts,
    gold,
    pidx,
    al,
    be,
    p_al,
    p_be,
    const,
    jidx,
    jmean,
    jprec,
):
    """Log density at ``x`` (returned) and its gradient (written into ``grad``)."""
    n_patterns, k = states.shape
    n_groups = counts.shape[0]
    n_prev = p_al.shape[0]
    n_ord = ord_idx.shape[0]
    n_free = free_idx.shape[0]
    u = np.empty(k)
    v = np.empty(k)
    ey1 = np.empty(n_ord)
    lp = const
    for i in range(n_ord):
        j = ord_idx[i]
        ey1[i] = math.exp(x[2 * i + 1])
        u[j] = x[2 * i]
        v[j] = x[2 * i] + ey1[i]
        lp += x[2 * i + 1]  # ordered transform's log-Jacobian
    for i in range(n_free):
        j = free_idx[i]
        u[j] = x[2 * (n_ord + i)]
        v[j] = x[2 * (n_ord + i) + 1]
    la = np.empty(k)
    l1a = np.empty(k)
    lb = np.empty(k)
    l1b = np.empty(k)
    for j in range(k):
        # log sigmoid(t) = -softplus(-t), log(1 - sigmoid(t)) = -softplus(t), with
        # softplus(t) = max(t, 0) + log1p(exp(-|t|)): no overflow for any t
        tail = math.log1p(math.exp(-abs(u[j])))
        la[j] = -(max(-u[j], 0.0) + tail)
        l1a[j] = -(max(u[j], 0.0) + tail)
        tail = math.log1p(math.exp(-abs(v[j])))
        lb[j] = -(max(-v[j], 0.0) + tail)
        l1b[j] = -(max(v[j], 0.0) + tail)
        # Beta(alpha, beta) density times the log-odds Jacobian a (1 - a)
        lp += al[j, 0] * la[j] + be[j, 0] * l1a[j] + al[j, 1] * lb[j] + be[j, 1] * l1b[j]
    off = 2 * (n_ord + n_free)
    lm = np.empty(n_prev)
    l1m = np.empty(n_prev)
    for q in range(n_prev):
        t = x[off + q]
        tail = math.log1p(math.exp(-abs(t)))
        lm[q] = -(max(-t, 0.0) + tail)
        l1m[q] = -(max(t, 0.0) + tail)
        lp += p_al[q] * lm[q] + p_be[q] * l1m[q]
    # joint log-odds normal prior (JointLogitNormal): the normal, minus the log-odds
    # Jacobian its rates' Beta(1, 1) carry; gradient -P d - (1 - 2 rate) per covered rate
    n_joint = jidx.shape[0]
    ju = np.zeros(k)
    jv = np.zeros(k)
    jt = np.zeros(n_prev)
    if n_joint > 0:
        d = np.empty(n_joint)
        for i in range(n_joint):
            p = jidx[i]
            if p < k:
                d[i] = u[p] - jmean[i]
                lp -= la[p] + l1a[p]
            elif p < 2 * k:
                d[i] = v[p - k] - jmean[i]
                lp -= lb[p - k] + l1b[p - k]
            else:
                d[i] = x[off + p - 2 * k] - jmean[i]
                lp -= lm[p - 2 * k] + l1m[p - 2 * k]
        for i in range(n_joint):
            pd = 0.0
            for m2 in range(n_joint):
                pd += jprec[i, m2] * d[m2]
            lp -= 0.5 * d[i] * pd
            p = jidx[i]
            if p < k:
                ju[p] = -pd - (1.0 - 2.0 * math.exp(la[p]))
            elif p < 2 * k:
                jv[p - k] = -pd - (1.0 - 2.0 * math.exp(lb[p - k]))
            else:
                jt[p - 2 * k] = -pd - (1.0 - 2.0 * math.exp(lm[p - 2 * k]))
    c0 = np.zeros(n_patterns)
    c1 = np.zeros(n_patterns)
    gt = np.zeros(n_prev)
    for s in range(n_patterns):
        l0 = 0.0
        l1 = 0.0
        for j in range(k):
            state = states[s, j]
            if state == 1:
                l0 += la[j]
                l1 += lb[j]
            elif state == 0:
                l0 += l1a[j]
                l1 += l1b[j]
        # gold items: the answers at the known class, no prevalence term
        lp += gold[0, s] * l0 + gold[1, s] * l1
        c0[s] += gold[0, s]
        c1[s] += gold[1, s]
        for g in range(n_groups):
            n = counts[g, s]
            if n == 0.0:
                continue
            q = pidx[g]
            neg = l1m[q] + l0
            pos = lm[q] + l1
            if neg > pos:
                m = neg + math.log1p(math.exp(pos - neg))
                r = math.exp(pos - m)
            else:
                m = pos + math.log1p(math.exp(neg - pos))
                r = -math.expm1(neg - m)
            lp += n * m
            c1[s] += n * r
            c0[s] += n * (1.0 - r)
            gt[q] += n * (r - math.exp(lm[q]))
    gu = np.empty(k)
    gv = np.empty(k)
    for j in range(k):
        a = math.exp(la[j])
        b = math.exp(lb[j])
        gu[j] = al[j, 0] * (1.0 - a) - be[j, 0] * a + ju[j]
        gv[j] = al[j, 1] * (1.0 - b) - be[j, 1] * b + jv[j]
    for s in range(n_patterns):
        for j in range(k):
            state = states[s, j]
            if state == 1:
                gu[j] += math.exp(l1a[j]) * c0[s]
                gv[j] += math.exp(l1b[j]) * c1[s]
            elif state == 0:
                gu[j] -= math.exp(la[j]) * c0[s]
                gv[j] -= math.exp(lb[j]) * c1[s]
    for i in range(n_ord):
        j = ord_idx[i]
        grad[2 * i] = gu[j] + gv[j]
        grad[2 * i + 1] = gv[j] * ey1[i] + 1.0
    for i in range(n_free):
        j = free_idx[i]
        grad[2 * (n_ord + i)] = gu[j]
        grad[2 * (n_ord + i) + 1] = gv[j]
    for q in range(n_prev):
        mu = math.exp(lm[q])
        grad[off + q] = gt[q] + p_al[q] * (1.0 - mu) - p_be[q] * mu + jt[q]
    return lp


#: the compiled kernel, made on first use (numba is imported then, not with this module)
_COMPILED: list = []


def _kernel():
    """``_logp_grad`` compiled by numba, or loaded from numba's on-disk cache."""
    if not _COMPILED:
        import numba

        _COMPILED.append(numba.njit(cache=True, nogil=True)(_logp_grad))
    return _COMPILED[0]


class ChannelLogDensity:
    """Log posterior density and gradient of a channel model on the unconstrained scale.

    Parameters
    ----------
    spec : ChannelModelSpec
        From :func:`bayescal.bayes.models.make_spec`.

    Attributes
    ----------
    n_dim : int
        ``2 K + L'`` (K annotators, L' prevalence groups).
    names : list of str
        PyMC's value-variable name of each coordinate's block, in order.

    Examples
    --------
    >>> from bayescal.simulate import simulate_toy
    >>> from bayescal.summaries import summarize
    >>> from bayescal.bayes.models import make_spec
    >>> spec = make_spec(summarize(simulate_toy(500, random_state=0), groups=3))
    >>> density = ChannelLogDensity(spec)
    >>> density.n_dim
    9
    >>> logp, grad = density(density.initial_point())
    >>> grad.shape
    (9,)
    """

    def __init__(self, spec: ChannelModelSpec):
        al, be = channel_hyper(spec)
        p_al, p_be = spec.priors.prevalence.expand(len(spec.prevalence_groups), GROUP)
        self.spec = spec
        joint = spec.priors.joint
        if joint is None:
            joint_norm = 0.0
            joint_args = (np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 0)))
        else:
            joint.check_size(spec.n_annotators, len(spec.prevalence_groups))
            joint_norm = joint.log_norm
            joint_args = (
                np.ascontiguousarray(joint.index, dtype=np.int64),
                np.ascontiguousarray(joint.mean, dtype=np.float64),
                np.ascontiguousarray(joint.precision, dtype=np.float64),
            )
        self.ord_idx = np.flatnonzero(spec.oriented).astype(np.int64)
        self.free_idx = np.flatnonzero(~spec.oriented).astype(np.int64)
        # Cells without items add exactly zero to the density and its gradient: the kernel
        # skips them (16 annotators who all answer: 65,536 cells, a few thousand observed).
        held = (spec.counts.sum(axis=0) + spec.gold.sum(axis=0)) > 0
        self._args = (
            self.ord_idx,
            self.free_idx,
            np.ascontiguousarray(spec.states[held], dtype=np.int64),
            np.ascontiguousarray(spec.counts[:, held], dtype=np.float64),
            np.ascontiguousarray(spec.gold[:, held], dtype=np.float64),
            np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
            np.ascontiguousarray(al, dtype=np.float64),
            np.ascontiguousarray(be, dtype=np.float64),
            np.ascontiguousarray(p_al, dtype=np.float64),
            np.ascontiguousarray(p_be, dtype=np.float64),
            float(-betaln(al, be).sum() - betaln(p_al, p_be).sum()) + joint_norm,
            *joint_args,
        )
        self.n_prevalence = len(spec.prevalence_groups)
        self.n_dim = 2 * spec.n_annotators + self.n_prevalence
        self.names = ["ab_chain__"] * (2 * self.ord_idx.size)
        self.names += ["ab_free_logodds__"] * (2 * self.free_idx.size)
        self.names += ["prevalence_logodds__"] * self.n_prevalence

    def with_counts(self, counts) -> ChannelLogDensity:
        """The same density with other pattern counts on the same cells (no recompilation)."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.shape != self.spec.counts.shape:
            raise ConfigError(
                f"counts must have shape {self.spec.counts.shape}; got {counts.shape}."
            )
        return ChannelLogDensity(self.spec.with_counts(counts))

    def __call__(self, x) -> tuple[float, np.ndarray]:
        """``(log density, gradient)`` at the unconstrained point ``x`` of shape (n_dim,)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_dim,):
            raise ConfigError(f"x must have shape ({self.n_dim},); got {x.shape}.")
        grad = np.empty(self.n_dim)
        return float(_kernel()(x, grad, *self._args)), grad

    def sampler_function(self):
        """``x -> (log density, gradient)`` without the argument checks of ``__call__``.

        For samplers that call it tens of thousands of times with float64 vectors of
        length ``n_dim`` (the checks cost as much as the kernel).
        """
        args, n_dim, kernel = self._args, self.n_dim, _kernel()

        def logp_grad(x):
            grad = np.empty(n_dim)
            return kernel(x, grad, *args), grad

        return logp_grad

    def initial_point(self) -> np.ndarray:
        """PyMC's initial point: every pair at ``(a, b) = (0.25, 0.75)``, each prevalence at its
        prior mean."""
        lo, hi = logit(np.asarray(INIT_PAIR))
        pair_ord = np.array([lo, np.log(hi - lo)])
        pair_free = np.array([lo, hi])
        p_al, p_be = self._args[8], self._args[9]
        return np.concatenate(
            [
                np.tile(pair_ord, self.ord_idx.size),
                np.tile(pair_free, self.free_idx.size),
                logit(p_al / (p_al + p_be)),
            ]
        )

    def constrain(self, x) -> dict[str, np.ndarray]:
        """Model variables from unconstrained draws ``x`` of shape (..., n_dim).

        Returns ``a``, ``b`` (..., K), ``prevalence`` (..., L'), ``ab`` (..., n_oriented, 2)
        and, when some annotators are not oriented, ``ab_free`` (..., n_free, 2).
        """
        x = np.asarray(x, dtype=np.float64)
        n_ord, n_free = self.ord_idx.size, self.free_idx.size
        y = x[..., : 2 * n_ord].reshape(*x.shape[:-1], n_ord, 2)
        z = x[..., 2 * n_ord : 2 * (n_ord + n_free)].reshape(*x.shape[:-1], n_free, 2)
        ab = expit(np.stack([y[..., 0], y[..., 0] + np.exp(y[..., 1])], axis=-1))
        ab_free = expit(z)
        k = self.spec.n_annotators
        pairs = np.empty((*x.shape[:-1], k, 2))
        pairs[..., self.ord_idx, :] = ab
        pairs[..., self.free_idx, :] = ab_free
        out = {
            "ab": ab,
            "a": pairs[..., 0],
            "b": pairs[..., 1],
            "prevalence": expit(x[..., 2 * (n_ord + n_free) :]),
        }
        if n_free:
            out["ab_free"] = ab_free
        return out
