"""Numba kernel of the multiclass dependence model's likelihood and gradient (for nutpie).

The same computation as the numpy
:class:`~bayescal.bayes.multiclass_dependence.MulticlassDependenceLogDensity` reference
path (module docstring there: responsibilities, ``d log I / d c`` and ``d log I / d s``
per distinct correct / wrong / missing sub-pattern of each group, the chain rule to
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

import numba
import numpy as np

from bayescal.bayes.dependence_density import _ndtri_lower
from bayescal.bayes.logdensity import _simplex_grad, _simplex_logs, cell_logsumexp

__all__ = ["likelihood_kernel"]

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_ndtri_nb = numba.njit(cache=True, nogil=True)(_ndtri_lower)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def likelihood_kernel(
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
            qd[j, y] = _ndtri_nb(d) if d <= 0.5 else -_ndtri_nb(o)
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
