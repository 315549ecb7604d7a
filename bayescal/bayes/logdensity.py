"""The channel model's log posterior density and its gradient, hand-written for a fast sampler.

One likelihood for every number of classes C, two prior families on top of it (the
priors of :mod:`bayescal.bayes.priors`):

- :class:`MulticlassLogDensity`: Dirichlet rows, the density PyMC builds in
  :func:`bayescal.bayes.multiclass.build_multiclass_pymc_model`, on reference log-ratio
  coordinates (any C);
- :class:`ChannelLogDensity`: the two-class Beta family with the ordered-logit
  orientation, the density of :func:`bayescal.bayes.models.build_pymc_model`.

Both are written out on the sampler's unconstrained scale so that a NUTS
implementation outside PyMC (nutpie) samples them without compiling a PyTensor graph,
and include every term of PyMC's ``model.logp()``: the prior log densities with their
normalising constants, the Jacobians of the transforms and the pattern-count
likelihood (multinomial constants dropped as in the PyMC ``Potential``), with the gold
items' answers at their known class and, when the priors carry one, the joint normal
of :class:`~bayescal.bayes.priors.JointRatioNormal` /
:class:`~bayescal.bayes.priors.JointLogitNormal`. Tests hold them equal to PyMC's
``compile_logp`` / ``compile_dlogp`` to 1e-9.

Likelihood and its gradient (closed form, :func:`_likelihood`, both families)
-----------------------------------------------------------------------------
``l[s, y] = sum_{j answered in s} log T_j[y, s_j]`` and, for each non-empty
(group ``g``, pattern ``s``) cell with count ``n``,
``n logsumexp_y (log rho[q(g), y] + l[s, y])`` (SPEC §3, §4: Dawid & Skene; Hanada &
Futami Eq. 7 summed over the latent class). With the responsibilities ``r[g, s, y]``
(the E step of EM; a gold item of class ``y`` has the one-hot responsibility of ``y``
and adds ``n l[s, y]``, no prevalence), the derivative with respect to
``log T_j[y, a]`` is ``W_j[y, a] = sum_{s: s_j = a} sum_g n_gs r_gsy`` and with respect
to ``log rho[q, y]`` it is ``sum_{g -> q} sum_s n_gs r_gsy``. One evaluation costs
O((cells + P K) C) for the non-empty cells and the P observed patterns, whatever the
number of items.

Dirichlet rows: reference log-ratio coordinates
-----------------------------------------------
Each simplex (a confusion row ``T_j[y, :]`` or a prevalence row ``rho[q, :]``)
has a *reference* class ``r`` and ``C - 1`` free coordinates
``v_a = log x_a - log x_r`` for ``a != r`` (in class order), so
``x = softmax(z)`` with ``z_r = 0`` and ``z_a = v_a``. The log-Jacobian of this
map is ``sum_k log x_k``, so a Dirichlet(``alpha``) prior plus the Jacobian is
``sum_k alpha_k log x_k + log Gamma(sum alpha) - sum log Gamma(alpha_k)``. For one
simplex with ``G_k = d f / d log x_k`` (``alpha_k`` plus the expected counts above),
``d f / d v_a = G_a - x_a sum_k G_k``.

Why reference log-ratios and not PyMC's default simplex transform (centred
log-ratios): the reference is the class each row puts most mass on (from the
starting point: the diagonal of a confusion row, the predicted class of a
prevalence row). The posterior covariance of ``log x_a - log x_r`` is about
``1 / n_a + 1 / n_r`` for multinomial counts ``n``; with ``n_r`` large the
coordinates are close to independent, which is what a diagonal mass matrix can
adapt to. In centred coordinates every free coordinate moves the last class,
which couples all of them; measured at 10,000 items, C = 10, K = 3 this needed
twice the leapfrog steps per draw and gave a smaller ESS (``models/multiclass.md``).
With a joint normal prior the density adds ``log N(z; mean, cov) - sum_k log x_k``
over the covered rows and its gradient ``-P (z - mean)`` scattered onto ``d / d log
x`` of each coordinate's class (+) and reference (-), minus one per entry of a
covered row.

Beta family (C = 2): ordered log-odds coordinates
-------------------------------------------------
``x = [ab_chain__ (n_oriented, 2), ab_free_logodds__ (n_free, 2), prevalence_logodds__
(L')]`` (PyMC's value variables, in PyMC's order). For an oriented annotator ``(y0,
y1)``: ``logit a = y0``, ``logit b = y0 + exp(y1)`` (log-odds then ordered transform;
log-Jacobian ``y1 + log a(1-a) + log b(1-b)``); for a free annotator ``logit a = z0``,
``logit b = z1``; prevalence ``logit mu = t``. The rows are ``T_j[0, :] = (1 - a, a)``,
``T_j[1, :] = (1 - b, b)``, ``rho = (1 - mu, mu)``, so with ``u = logit a`` the chain
rule gives ``d/du_j = alpha_a (1 - a) - beta_a a + (1 - a) W_j[0, 1] - a W_j[0, 0]``;
``d/dv_j`` likewise with ``b`` and row 1; ``d/dt_q = alpha_mu (1 - mu) - beta_mu mu +
(1 - mu) E_q1 - mu E_q0`` (``E`` the expected class counts of prevalence row ``q``);
ordered pairs: ``d/dy0 = d/du + d/dv``, ``d/dy1 = exp(y1) d/dv + 1``.

The kernels are compiled by numba and cached on disk with numba's ``cache=True``: the
cache lives in this package's ``__pycache__`` (numba's in-tree locator), or, when the
package folder is read-only, in the user's own numba cache (``~/.cache/numba``, or
``$NUMBA_CACHE_DIR`` when the user set it). numba unpickles its index and code from
there, so only those places are read: both are writable only by whoever can already
change this package's code or the user's own environment; nothing is read from the
working directory, the data's folder or a shared temporary folder.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import betaln, expit, gammaln, logit

from bayescal.bayes.models import INIT_PAIR, ChannelModelSpec, channel_hyper
from bayescal.bayes.multiclass import free_classes
from bayescal.dims import GROUP
from bayescal.errors import ConfigError

__all__ = [
    "ChannelLogDensity",
    "MulticlassLogDensity",
    "ratio_backward",
    "ratio_forward",
    "cell_loglik",
]


def ratio_backward(v, reference) -> np.ndarray:
    """Reference log-ratios ``(..., C-1)`` -> simplex points ``(..., C)``.

    Examples
    --------
    >>> ratio_backward(np.log([[2.0, 1.0]]), np.array([2])).round(4).tolist()
    [[0.5, 0.25, 0.25]]
    """
    v = np.asarray(v, dtype=np.float64)
    c = v.shape[-1] + 1
    ref = np.broadcast_to(np.asarray(reference, dtype=np.int64), v.shape[:-1])
    z = np.zeros((*v.shape[:-1], c))
    np.put_along_axis(z, free_classes(ref, c), v, axis=-1)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def ratio_forward(x, reference) -> np.ndarray:
    """Inverse of :func:`ratio_backward`: simplex points ``(..., C)`` -> ``(..., C-1)``.

    Examples
    --------
    >>> x = np.array([0.5, 0.3, 0.2])
    >>> bool(np.allclose(ratio_backward(ratio_forward(x, 0), 0), x))
    True
    """
    lx = np.log(np.asarray(x, dtype=np.float64))
    c = lx.shape[-1]
    ref = np.broadcast_to(np.asarray(reference, dtype=np.int64), lx.shape[:-1])
    free = np.take_along_axis(lx, free_classes(ref, c), axis=-1)
    return free - np.take_along_axis(lx, ref[..., None], axis=-1)


@numba.njit(cache=True, nogil=True)
def _simplex_logs(x, off, ref, c, out_log, out_p):
    """``log x`` and ``x`` of the simplex whose free coordinates start at ``x[off]``."""
    m = 0.0  # z_ref = 0
    for i in range(c - 1):
        if x[off + i] > m:
            m = x[off + i]
    tot = math.exp(-m)
    for i in range(c - 1):
        tot += math.exp(x[off + i] - m)
    lse = m + math.log(tot)
    i = 0
    for a in range(c):
        if a == ref:
            out_log[a] = -lse
        else:
            out_log[a] = x[off + i] - lse
            i += 1
        out_p[a] = math.exp(out_log[a])


@numba.njit(cache=True, nogil=True)
def _simplex_grad(g, p, grad, off, ref, c):
    """Write ``d f / d v`` of one simplex given ``g = d f / d log x`` and ``p = x``."""
    tot = 0.0
    for a in range(c):
        tot += g[a]
    i = 0
    for a in range(c):
        if a != ref:
            grad[off + i] = g[a] - p[a] * tot
            i += 1


@numba.njit(cache=True, nogil=True)
def cell_logsumexp(log_r, ll, joint):
    """``logsumexp_y (log_r[y] + ll[y])`` (returned with ``sum_y joint[y]``); ``joint`` receives
    ``exp(log_r + ll - max)``, proportional to the responsibilities."""
    m = -np.inf
    for y in range(joint.shape[0]):
        joint[y] = log_r[y] + ll[y]
        if joint[y] > m:
            m = joint[y]
    tot = 0.0
    for y in range(joint.shape[0]):
        joint[y] = math.exp(joint[y] - m)
        tot += joint[y]
    return m + math.log(tot), tot


@numba.njit(cache=True, nogil=True)
def _pattern_logs(log_t, states, s, out):
    """``out[y] = log P(pattern s | class y)`` (answers' log probabilities summed)."""
    out[:] = 0.0
    for j in range(states.shape[1]):
        st = states[s, j]
        if st < log_t.shape[2]:
            for y in range(out.shape[0]):
                out[y] += log_t[j, st, y]


@numba.njit(cache=True, nogil=True)
def _likelihood(log_t, t, log_r, p_r, states, cell_g, cell_s, cell_n, pidx, gold, g_t, g_r):
    """The pattern-count log likelihood (module docstring), returned; its derivatives with
    respect to ``log T_j[y, a]`` are added into ``g_t`` (K, C, C) and with respect to
    ``log rho[q, y]`` into ``g_r`` (L', C).

    ``log_t`` is (K, C + 1, C), indexed ``[j, answer, y]`` (answer C = missing, log 1 = 0),
    and ``t = exp(log_t)`` (the callers have it from their simplex maps); ``log_r`` and
    ``p_r = exp(log_r)`` are (L', C); ``gold`` holds the gold items as rows
    ``(class, pattern, count)``. One pass over the cells, which :func:`_cells` orders by
    pattern: each pattern's class likelihoods are computed once for its run of cells and its
    expected class counts go straight into the gradient, so nothing of size (patterns, C) is
    stored (any order gives the same value; an unsorted one recomputes a pattern per run).
    """
    k = states.shape[1]
    c = log_t.shape[2]
    g_ay = np.zeros((k, c + 1, c))  # d / d log T_j[y, a], laid out as log_t: [j, a, y]
    el = np.empty(c)
    row = np.empty(c)
    w = np.empty(c)  # expected class counts of the current pattern
    joint = np.empty(c)
    lp = 0.0
    n_cells = cell_n.shape[0]
    i = 0
    while i < n_cells:
        s = cell_s[i]
        # P(pattern s | class y) = exp(ll_max) * el[y] with max_y el[y] = 1: a product of K
        # probabilities, one log and C products instead of C exponentials; a product that
        # would underflow is taken in log space
        for y in range(c):
            el[y] = 1.0
        for j in range(k):
            st = states[s, j]
            if st < c:
                for y in range(c):
                    el[y] *= t[j, st, y]
        m = el[0]
        for y in range(1, c):
            if el[y] > m:
                m = el[y]
        if m > 1e-280:
            ll_max = math.log(m)
            inv = 1.0 / m
            for y in range(c):
                el[y] *= inv
        else:
            _pattern_logs(log_t, states, s, row)
            ll_max = row[0]
            for y in range(1, c):
                if row[y] > ll_max:
                    ll_max = row[y]
            for y in range(c):
                el[y] = math.exp(row[y] - ll_max)
        for y in range(c):
            w[y] = 0.0
        while i < n_cells and cell_s[i] == s:
            q = pidx[cell_g[i]]
            n = cell_n[i]
            tot = 0.0
            for y in range(c):
                joint[y] = p_r[q, y] * el[y]
                tot += joint[y]
            if tot > 1e-250:
                lse = ll_max + math.log(tot)
            else:  # underflow guard: the exact log-sum-exp of this cell
                _pattern_logs(log_t, states, s, row)
                lse, tot = cell_logsumexp(log_r[q], row, joint)
            lp += n * lse
            scale = n / tot
            for y in range(c):
                r = scale * joint[y]
                w[y] += r
                g_r[q, y] += r
            i += 1
        for j in range(k):
            st = states[s, j]
            if st < c:
                for y in range(c):
                    g_ay[j, st, y] += w[y]
    for i in range(gold.shape[0]):  # gold items: known class, no prevalence
        y, s = int(gold[i, 0]), int(gold[i, 1])
        _pattern_logs(log_t, states, s, row)
        lp += gold[i, 2] * row[y]
        for j in range(k):
            st = states[s, j]
            if st < c:
                g_ay[j, st, y] += gold[i, 2]
    for j in range(k):
        for y in range(c):
            for a in range(c):
                g_t[j, y, a] += g_ay[j, a, y]
    return lp


@numba.njit(cache=True, nogil=True)
def _off_mass(p, y, c):
    """``1 - p[y]`` as the sum of the other entries (exact near ``p[y] = 1``)."""
    tot = 0.0
    for a in range(c):
        if a != y:
            tot += p[a]
    return tot


@numba.njit(cache=True, nogil=True)
def _dirichlet_logp_grad(
    x,
    grad,
    states,
    cell_g,
    cell_s,
    cell_n,
    pidx,
    gold,
    alpha,
    beta,
    ref_t,
    ref_r,
    const,
    j_kind,
    j_row,
    j_answer,
    j_ref,
    j_mean,
    j_prec,
    j_const,
    j_conf_rows,
    j_prev_rows,
    kappa,
):
    """Dirichlet rows: log density at ``x`` (returned) and its gradient (into ``grad``);
    ``kappa[j, y] != 0`` adds ``kappa log(1 - T_j[y, y])`` (nested rows,
    :meth:`~bayescal.bayes.priors.ChannelPriors.confusion_kernel`)."""
    k = states.shape[1]
    c = alpha.shape[1]
    n_prev = beta.shape[0]
    log_t = np.zeros((k, c + 1, c))  # [j, answer, y]; answer c = missing: log 1 = 0
    t = np.ones((k, c + 1, c))  # exp(log_t)
    p_t = np.empty((k, c, c))
    off_mass = np.ones((k, c))  # 1 - T[y, y] of the nested rows (kappa != 0)
    row_log = np.empty(c)
    row_p = np.empty(c)
    lp = const
    for j in range(k):
        for y in range(c):
            _simplex_logs(x, (j * c + y) * (c - 1), ref_t[j, y], c, row_log, row_p)
            for a in range(c):
                log_t[j, a, y] = row_log[a]
                t[j, a, y] = row_p[a]
                p_t[j, y, a] = row_p[a]
                lp += alpha[j, y, a] * row_log[a]
            if kappa[j, y] != 0.0:  # the wrong answers' total, not 1 - T[y, y] (cancellation)
                off_mass[j, y] = _off_mass(row_p, y, c)
                lp += kappa[j, y] * math.log(off_mass[j, y])
    off_prev = k * c * (c - 1)
    log_r = np.empty((n_prev, c))
    p_r = np.empty((n_prev, c))
    for q in range(n_prev):
        _simplex_logs(x, off_prev + q * (c - 1), ref_r[q], c, row_log, row_p)
        for y in range(c):
            log_r[q, y] = row_log[y]
            p_r[q, y] = row_p[y]
            lp += beta[q, y] * row_log[y]
    g_t = alpha.copy()
    for j in range(k):
        for y in range(c):
            if kappa[j, y] != 0.0:  # d / d log T[y, a] of kappa log(sum of wrong answers)
                w = kappa[j, y] / off_mass[j, y]
                for a in range(c):
                    if a != y:
                        g_t[j, y, a] += w * p_t[j, y, a]
    g_r = beta.copy()
    lp += _likelihood(log_t, t, log_r, p_r, states, cell_g, cell_s, cell_n, pidx, gold, g_t, g_r)
    n_joint = j_mean.shape[0]
    if n_joint > 0:  # joint normal on the covered rows' log-ratios (priors from an audit)
        dev = np.empty(n_joint)
        for d in range(n_joint):
            if j_kind[d] == 0:
                jj, yy = j_row[d] // c, j_row[d] % c
                dev[d] = log_t[jj, j_answer[d], yy] - log_t[jj, j_ref[d], yy] - j_mean[d]
            else:
                dev[d] = log_r[j_row[d], j_answer[d]] - log_r[j_row[d], j_ref[d]] - j_mean[d]
        quad = 0.0
        for d in range(n_joint):
            gz = 0.0
            for e in range(n_joint):
                gz -= j_prec[d, e] * dev[e]
            quad += dev[d] * gz
            if j_kind[d] == 0:
                jj, yy = j_row[d] // c, j_row[d] % c
                g_t[jj, yy, j_answer[d]] += gz
                g_t[jj, yy, j_ref[d]] -= gz
            else:
                g_r[j_row[d], j_answer[d]] += gz
                g_r[j_row[d], j_ref[d]] -= gz
        lp += 0.5 * quad + j_const
        # remove the simplex Jacobian of the covered rows (their Dirichlet is flat)
        for j in range(k):
            for y in range(c):
                if j_conf_rows[j, y]:
                    for a in range(c):
                        lp -= log_t[j, a, y]
                        g_t[j, y, a] -= 1.0
        for q in range(n_prev):
            if j_prev_rows[q]:
                for a in range(c):
                    lp -= log_r[q, a]
                    g_r[q, a] -= 1.0
    for j in range(k):
        for y in range(c):
            _simplex_grad(g_t[j, y], p_t[j, y], grad, (j * c + y) * (c - 1), ref_t[j, y], c)
    for q in range(n_prev):
        _simplex_grad(g_r[q], p_r[q], grad, off_prev + q * (c - 1), ref_r[q], c)
    return lp


@numba.njit(cache=True, nogil=True)
def _log_sigmoids(t):
    """``(log sigmoid(t), log(1 - sigmoid(t)))`` without overflow for any ``t``: log sigmoid(t)
    = -softplus(-t), softplus(t) = max(t, 0) + log1p(exp(-|t|))."""
    tail = math.log1p(math.exp(-abs(t)))
    return -(max(-t, 0.0) + tail), -(max(t, 0.0) + tail)


@numba.njit(cache=True, nogil=True)
def _beta_logp_grad(
    x,
    grad,
    ord_idx,
    free_idx,
    states,
    cell_g,
    cell_s,
    cell_n,
    pidx,
    gold,
    al,
    be,
    p_al,
    p_be,
    const,
    jidx,
    jmean,
    jprec,
):
    """Beta family (C = 2): log density at ``x`` (returned) and its gradient (into ``grad``)."""
    k = states.shape[1]
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
    # rows (1 - a, a) and (1 - b, b) as the likelihood's log_t[j, answer, y]
    log_t = np.zeros((k, 3, 2))
    for j in range(k):
        la, l1a = _log_sigmoids(u[j])
        lb, l1b = _log_sigmoids(v[j])
        log_t[j, 0, 0], log_t[j, 1, 0] = l1a, la
        log_t[j, 0, 1], log_t[j, 1, 1] = l1b, lb
        # Beta(alpha, beta) density times the log-odds Jacobian a (1 - a)
        lp += al[j, 0] * la + be[j, 0] * l1a + al[j, 1] * lb + be[j, 1] * l1b
    t = np.exp(log_t)
    off = 2 * (n_ord + n_free)
    log_r = np.empty((n_prev, 2))
    p_r = np.empty((n_prev, 2))
    for q in range(n_prev):
        lm, l1m = _log_sigmoids(x[off + q])
        log_r[q, 0], log_r[q, 1] = l1m, lm
        p_r[q, 0], p_r[q, 1] = math.exp(l1m), math.exp(lm)
        lp += p_al[q] * lm + p_be[q] * l1m
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
                lp -= log_t[p, 1, 0] + log_t[p, 0, 0]
            elif p < 2 * k:
                d[i] = v[p - k] - jmean[i]
                lp -= log_t[p - k, 1, 1] + log_t[p - k, 0, 1]
            else:
                d[i] = x[off + p - 2 * k] - jmean[i]
                lp -= log_r[p - 2 * k, 1] + log_r[p - 2 * k, 0]
        for i in range(n_joint):
            pd = 0.0
            for m2 in range(n_joint):
                pd += jprec[i, m2] * d[m2]
            lp -= 0.5 * d[i] * pd
            p = jidx[i]
            if p < k:
                ju[p] = -pd - (1.0 - 2.0 * math.exp(log_t[p, 1, 0]))
            elif p < 2 * k:
                jv[p - k] = -pd - (1.0 - 2.0 * math.exp(log_t[p - k, 1, 1]))
            else:
                jt[p - 2 * k] = -pd - (1.0 - 2.0 * p_r[p - 2 * k, 1])
    g_t = np.zeros((k, 2, 2))
    g_r = np.zeros((n_prev, 2))
    lp += _likelihood(log_t, t, log_r, p_r, states, cell_g, cell_s, cell_n, pidx, gold, g_t, g_r)
    for j in range(k):
        a = math.exp(log_t[j, 1, 0])
        b = math.exp(log_t[j, 1, 1])
        gu = (
            al[j, 0] * (1.0 - a)
            - be[j, 0] * a
            + ju[j]
            + (1.0 - a) * g_t[j, 0, 1]
            - a * g_t[j, 0, 0]
        )
        gv = (
            al[j, 1] * (1.0 - b)
            - be[j, 1] * b
            + jv[j]
            + (1.0 - b) * g_t[j, 1, 1]
            - b * g_t[j, 1, 0]
        )
        u[j], v[j] = gu, gv  # reused as the gradients with respect to logit a, logit b
    for i in range(n_ord):
        j = ord_idx[i]
        grad[2 * i] = u[j] + v[j]
        grad[2 * i + 1] = v[j] * ey1[i] + 1.0
    for i in range(n_free):
        j = free_idx[i]
        grad[2 * (n_ord + i)] = u[j]
        grad[2 * (n_ord + i) + 1] = v[j]
    for q in range(n_prev):
        mu = p_r[q, 1]
        grad[off + q] = (
            (1.0 - mu) * g_r[q, 1] - mu * g_r[q, 0] + p_al[q] * (1.0 - mu) - p_be[q] * mu + jt[q]
        )
    return lp


@numba.njit(cache=True, nogil=True)
def _cell_loglik(log_t, log_r, states, cell_g, cell_s, pidx, out):
    """``log P(s | g)`` of every non-empty cell for every draw, written into ``out`` (S, cells)."""
    n_draws, k, c, _ = log_t.shape
    n_pat = states.shape[0]
    ll = np.empty((n_pat, c))
    for d in range(n_draws):
        for s in range(n_pat):
            for y in range(c):
                acc = 0.0
                for j in range(k):
                    st = states[s, j]
                    if st < c:
                        acc += log_t[d, j, y, st]
                ll[s, y] = acc
        for i in range(cell_s.shape[0]):
            s = cell_s[i]
            q = pidx[cell_g[i]]
            m = -np.inf
            for y in range(c):
                v = log_r[d, q, y] + ll[s, y]
                if v > m:
                    m = v
            tot = 0.0
            for y in range(c):
                tot += math.exp(log_r[d, q, y] + ll[s, y] - m)
            out[d, i] = m + math.log(tot)


def cell_loglik(spec, confusion, prevalence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log P(s | g)`` on the spec's non-empty (group, pattern) cells, per draw (SPEC §3).

    Parameters
    ----------
    spec : MulticlassModelSpec
    confusion : array-like of shape (S, K, C, C)
    prevalence : array-like of shape (S, L', C)

    Returns
    -------
    loglik : ndarray of shape (S, n_cells)
    group, pattern : ndarray of shape (n_cells,)
        The cells, in the order of ``numpy.nonzero(spec.counts)``.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> from bayescal.bayes.multiclass import make_multiclass_spec
    >>> spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(300, random_state=0)))
    >>> ll, g, s = cell_loglik(spec, spec.init_confusion[None], spec.init_prevalence[None])
    >>> ll.shape == (1, g.size) and bool((ll < 0).all())
    True
    """
    g, s = np.nonzero(spec.counts)
    log_t = np.log(np.ascontiguousarray(confusion, dtype=np.float64))
    log_r = np.log(np.ascontiguousarray(prevalence, dtype=np.float64))
    out = np.empty((log_t.shape[0], g.size))
    _cell_loglik(
        log_t,
        log_r,
        np.ascontiguousarray(spec.states, dtype=np.int64),
        g.astype(np.int64),
        s.astype(np.int64),
        np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
        out,
    )
    return out, g, s


def _joint_args(spec) -> tuple:
    """The kernel's arrays for the joint normal prior (empty without one)."""
    joint = spec.priors.joint
    k, n_prev = spec.n_annotators, spec.prevalence_alpha.shape[0]
    if joint is None:
        empty = np.zeros(0, dtype=np.int64)
        return (
            empty,
            empty,
            empty,
            empty,
            np.zeros(0),
            np.zeros((0, 0)),
            0.0,
            np.zeros((k, spec.n_classes), dtype=np.bool_),
            np.zeros(n_prev, dtype=np.bool_),
        )
    conf_rows, prev_rows = joint.covered_rows(k, n_prev)
    return (
        joint.kind,
        joint.row,
        joint.answer,
        joint.reference,
        joint.mean,
        np.ascontiguousarray(joint.precision),
        float(joint.log_norm),
        conf_rows,
        prev_rows,
    )


def _cells(states, counts, gold) -> tuple:
    """The kernels' data: the patterns that hold items (cells without items add exactly zero
    to the density and its gradient: 16 annotators who all answer make 65,536 cells, a few
    thousand observed), the non-empty (group, pattern) cells and the gold rows."""
    held = (counts.sum(axis=0) + gold.sum(axis=0)) > 0
    position = np.cumsum(held) - 1
    # pattern-major, so the likelihood's pass over the cells reads each pattern's row once
    # (group-major swept the per-pattern arrays once per group)
    s, g = np.nonzero(counts.T)
    gy, gs = np.nonzero(gold)
    gold_rows = np.column_stack([gy, position[gs], gold[gy, gs]]).astype(np.float64)
    return (
        np.ascontiguousarray(states[held], dtype=np.int64),
        g.astype(np.int64),
        position[s].astype(np.int64),
        counts[g, s].astype(np.float64),
    ), np.ascontiguousarray(gold_rows.reshape(-1, 3))


class ChannelLogDensity:
    """Log posterior density and gradient of the two-class model with Beta priors and the
    ordered-logit orientation, on the unconstrained scale (module docstring).

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
        joint = spec.priors.logit_joint
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
        self.p_al = np.ascontiguousarray(p_al, dtype=np.float64)
        self.p_be = np.ascontiguousarray(p_be, dtype=np.float64)
        cells, gold = _cells(spec.states, spec.counts, spec.gold)
        self._args = (
            self.ord_idx,
            self.free_idx,
            *cells,
            np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
            gold,
            np.ascontiguousarray(al, dtype=np.float64),
            np.ascontiguousarray(be, dtype=np.float64),
            self.p_al,
            self.p_be,
            float(-betaln(al, be).sum() - betaln(p_al, p_be).sum()) + joint_norm,
            *joint_args,
        )
        self.n_prevalence = len(spec.prevalence_groups)
        self.n_dim = 2 * spec.n_annotators + self.n_prevalence
        self.names = ["ab_chain__"] * (2 * self.ord_idx.size)
        self.names += ["ab_free_logodds__"] * (2 * self.free_idx.size)
        self.names += ["prevalence_logodds__"] * self.n_prevalence

    def with_counts(self, counts) -> ChannelLogDensity:
        """The same density with other pattern counts on the same cells."""
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
        return float(_beta_logp_grad(x, grad, *self._args)), grad

    def sampler_function(self):
        """``x -> (log density, gradient)`` without the argument checks of ``__call__``.

        For samplers that call it tens of thousands of times with float64 vectors of
        length ``n_dim`` (the checks cost as much as the kernel).
        """
        args, n_dim = self._args, self.n_dim

        def logp_grad(x):
            grad = np.empty(n_dim)
            return _beta_logp_grad(x, grad, *args), grad

        return logp_grad

    def initial_point(self) -> np.ndarray:
        """PyMC's initial point: every pair at ``(a, b) = (0.25, 0.75)``, each prevalence at its
        prior mean."""
        lo, hi = logit(np.asarray(INIT_PAIR))
        pair_ord = np.array([lo, np.log(hi - lo)])
        pair_free = np.array([lo, hi])
        return np.concatenate(
            [
                np.tile(pair_ord, self.ord_idx.size),
                np.tile(pair_free, self.free_idx.size),
                logit(self.p_al / (self.p_al + self.p_be)),
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


class MulticlassLogDensity:
    """Log posterior density and gradient of the model with Dirichlet rows (any C), on its
    unconstrained scale (module docstring).

    Parameters
    ----------
    spec : MulticlassModelSpec
        From :func:`bayescal.bayes.multiclass.make_multiclass_spec` (its
        ``confusion_reference`` / ``prevalence_reference`` fix the coordinates).

    Attributes
    ----------
    n_dim : int
        ``K C (C - 1) + L' (C - 1)``; confusion coordinates first (annotator,
        true class, free answered class in C order), then prevalence.

    Examples
    --------
    >>> from bayescal.simulate import simulate_multiclass
    >>> from bayescal.summaries import summarize_multiclass
    >>> from bayescal.bayes.multiclass import make_multiclass_spec
    >>> spec = make_multiclass_spec(summarize_multiclass(simulate_multiclass(500, random_state=0)))
    >>> density = MulticlassLogDensity(spec)
    >>> density.n_dim  # 3 annotators x 3 rows x 2 + 3 groups x 2
    24
    >>> logp, grad = density(density.initial_point())
    >>> grad.shape
    (24,)
    """

    def __init__(self, spec):
        k, c = spec.n_annotators, spec.n_classes
        kernel = spec.kernel
        alpha = np.ascontiguousarray(kernel.alpha, dtype=np.float64)
        beta = np.ascontiguousarray(spec.prevalence_alpha, dtype=np.float64)
        const = float(kernel.log_norm.sum() + (gammaln(beta.sum(-1)) - gammaln(beta).sum(-1)).sum())
        cells, gold = _cells(spec.states, spec.counts, spec.gold)
        self.spec = spec
        self._args = (
            *cells,
            np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
            gold,
            alpha,
            beta,
            np.ascontiguousarray(spec.confusion_reference, dtype=np.int64),
            np.ascontiguousarray(spec.prevalence_reference, dtype=np.int64),
            const,
            *_joint_args(spec),
            np.ascontiguousarray(kernel.kappa, dtype=np.float64),
        )
        self.n_confusion = k * c * (c - 1)
        self.n_dim = self.n_confusion + beta.shape[0] * (c - 1)

    def __call__(self, x) -> tuple[float, np.ndarray]:
        """``(log density, gradient)`` at the unconstrained point ``x`` of shape (n_dim,)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_dim,):
            raise ConfigError(f"x must have shape ({self.n_dim},); got {x.shape}.")
        grad = np.empty(self.n_dim)
        return float(_dirichlet_logp_grad(x, grad, *self._args)), grad

    def sampler_function(self):
        """``x -> (log density, gradient)`` without argument checks (for the sampler's loop)."""
        args, n_dim = self._args, self.n_dim

        def logp_grad(x):
            grad = np.empty(n_dim)
            return _dirichlet_logp_grad(x, grad, *args), grad

        return logp_grad

    def point_from(self, confusion, prevalence) -> np.ndarray:
        """Unconstrained point of confusions (K, C, C) and prevalences (L', C)."""
        return np.concatenate(
            [
                ratio_forward(confusion, self.spec.confusion_reference).ravel(),
                ratio_forward(prevalence, self.spec.prevalence_reference).ravel(),
            ]
        )

    def initial_point(self) -> np.ndarray:
        """The spec's starting confusions and prevalences on the unconstrained scale."""
        return self.point_from(self.spec.init_confusion, self.spec.init_prevalence)

    def constrain(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Confusions (..., K, C, C) and prevalences (..., L', C) from draws (..., n_dim)."""
        x = np.asarray(x, dtype=np.float64)
        k, c = self.spec.n_annotators, self.spec.n_classes
        lead = x.shape[:-1]
        conf = ratio_backward(
            x[..., : self.n_confusion].reshape(*lead, k, c, c - 1), self.spec.confusion_reference
        )
        prev = ratio_backward(
            x[..., self.n_confusion :].reshape(*lead, -1, c - 1), self.spec.prevalence_reference
        )
        return conf, prev
