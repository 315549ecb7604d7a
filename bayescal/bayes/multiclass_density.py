"""Log posterior density and gradient of the multiclass Dawid–Skene model, hand-written.

The density is the one PyMC builds in
:func:`bayescal.bayes.multiclass.build_multiclass_pymc_model` (the reference),
written out on the same unconstrained coordinates so that nutpie can sample it
without compiling a PyTensor graph. Every term of PyMC's ``model.logp()`` is
included: the Dirichlet log densities with their normalising constants, the
Jacobian of the transform, and the pattern-count likelihood (SPEC §3, summed
over the latent class; multinomial constants dropped as in the PyMC
``Potential``). Tests hold it equal to PyMC's ``compile_logp`` /
``compile_dlogp`` to 1e-9.

With a joint normal prior from an earlier audit
(:class:`~bayescal.bayes.priors.JointRatioNormal`) the density adds
``log N(z; mean, cov) - sum_k log x_k`` over the covered rows and its gradient
``-P (z - mean)`` scattered onto ``d / d log x`` of each coordinate's class
(+) and reference (-), minus one per entry of a covered row.

Unconstrained coordinates: reference log-ratios
-----------------------------------------------
Each simplex (a confusion row ``T_j[y, :]`` or a prevalence row ``rho[q, :]``)
has a *reference* class ``r`` and ``C - 1`` free coordinates
``v_a = log x_a - log x_r`` for ``a != r`` (in class order), so
``x = softmax(z)`` with ``z_r = 0`` and ``z_a = v_a``. The log-Jacobian of this
map is ``sum_k log x_k``, so a Dirichlet(``alpha``) prior plus the Jacobian is
``sum_k alpha_k log x_k + log Gamma(sum alpha) - sum log Gamma(alpha_k)``.

Why reference log-ratios and not PyMC's default simplex transform (centred
log-ratios): the reference is the class each row puts most mass on (from the
starting point: the diagonal of a confusion row, the predicted class of a
prevalence row). The posterior covariance of ``log x_a - log x_r`` is about
``1 / n_a + 1 / n_r`` for multinomial counts ``n``; with ``n_r`` large the
coordinates are close to independent, which is what a diagonal mass matrix can
adapt to. In centred coordinates every free coordinate moves the last class,
which couples all of them; measured at 10,000 items, C = 10, K = 3 this needed
twice the leapfrog steps per draw and gave a smaller ESS (``models/multiclass.md``).

Likelihood and gradient (closed form)
-------------------------------------
``l[s, y] = sum_{j answered in s} log T_j[y, s_j]`` and, for each non-empty
(group ``g``, pattern ``s``) cell with count ``n``,
``n logsumexp_y (log rho[q(g), y] + l[s, y])``. With the responsibilities
``r[g, s, y]`` (the E step of EM; a gold item of class ``y`` has the one-hot
responsibility of ``y`` and adds ``n log P(s | Y = y) = n l[s, y]``, no
prevalence), the derivative with respect to
``log T_j[y, a]`` is ``W_j[y, a] = sum_{s: s_j = a} sum_g n_gs r_gsy`` and with
respect to ``log rho[q, y]`` it is ``sum_{g -> q} sum_s n_gs r_gsy``. For one
simplex with ``G_k = d f / d log x_k`` (``alpha_k`` plus those expected counts),
``d f / d v_a = G_a - x_a sum_k G_k``.

One evaluation costs O((cells + P K) C) for the non-empty cells and the P
observed patterns, whatever the number of items. The kernel is compiled by
numba once and cached on disk (``cache=True``), as the binary kernel.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import gammaln

from bayescal.bayes.multiclass import free_classes
from bayescal.errors import ConfigError

__all__ = [
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
def _logp_grad(
    x,
    grad,
    states,
    cell_g,
    cell_s,
    cell_n,
    pidx,
    alpha,
    beta,
    ref_t,
    ref_r,
    const,
    gold_y,
    gold_s,
    gold_n,
    j_kind,
    j_row,
    j_answer,
    j_ref,
    j_mean,
    j_prec,
    j_const,
    j_conf_rows,
    j_prev_rows,
):
    """Log density at ``x`` (returned) and its gradient (written into ``grad``)."""
    n_pat, k = states.shape
    c = alpha.shape[1]
    n_prev = beta.shape[0]
    log_t = np.zeros((k, c + 1, c))  # [j, answer, y]; answer c = missing: log 1 = 0
    p_t = np.empty((k, c, c))
    row_log = np.empty(c)
    row_p = np.empty(c)
    lp = const
    for j in range(k):
        for y in range(c):
            _simplex_logs(x, (j * c + y) * (c - 1), ref_t[j, y], c, row_log, row_p)
            for a in range(c):
                log_t[j, a, y] = row_log[a]
                p_t[j, y, a] = row_p[a]
                lp += alpha[j, y, a] * row_log[a]
    off_prev = k * c * (c - 1)
    log_r = np.empty((n_prev, c))
    p_r = np.empty((n_prev, c))
    for q in range(n_prev):
        _simplex_logs(x, off_prev + q * (c - 1), ref_r[q], c, row_log, row_p)
        for y in range(c):
            log_r[q, y] = row_log[y]
            p_r[q, y] = row_p[y]
            lp += beta[q, y] * row_log[y]
    # l[s, y] = log P(pattern s | class y), kept as its row maximum and exp(l - max), so a
    # cell needs C products and one log instead of C exponentials
    ll = np.zeros((n_pat, c))
    ll_max = np.empty(n_pat)
    el = np.empty((n_pat, c))
    for s in range(n_pat):
        for j in range(k):
            st = states[s, j]
            if st < c:
                for y in range(c):
                    ll[s, y] += log_t[j, st, y]
        m = ll[s, 0]
        for y in range(1, c):
            if ll[s, y] > m:
                m = ll[s, y]
        ll_max[s] = m
        for y in range(c):
            el[s, y] = math.exp(ll[s, y] - m)
    w = np.zeros((n_pat, c))  # expected class counts per pattern
    e_r = np.zeros((n_prev, c))  # expected class counts per prevalence row
    joint = np.empty(c)
    for i in range(cell_n.shape[0]):
        s = cell_s[i]
        q = pidx[cell_g[i]]
        n = cell_n[i]
        tot = 0.0
        for y in range(c):
            joint[y] = p_r[q, y] * el[s, y]
            tot += joint[y]
        if tot > 1e-250:
            lse = ll_max[s] + math.log(tot)
        else:  # underflow guard: the exact log-sum-exp of this cell
            lse, tot = cell_logsumexp(log_r[q], ll[s], joint)
        lp += n * lse
        scale = n / tot
        for y in range(c):
            r = scale * joint[y]
            w[s, y] += r
            e_r[q, y] += r
    for i in range(gold_n.shape[0]):  # gold items: known class, no prevalence
        lp += gold_n[i] * ll[gold_s[i], gold_y[i]]
        w[gold_s[i], gold_y[i]] += gold_n[i]
    g_t = alpha.copy()
    for s in range(n_pat):
        for j in range(k):
            st = states[s, j]
            if st < c:
                for y in range(c):
                    g_t[j, y, st] += w[s, y]
    g_r = beta + e_r
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


class MulticlassLogDensity:
    """Log posterior density and gradient of the multiclass model on its unconstrained scale.

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
        alpha = np.ascontiguousarray(spec.confusion_alpha, dtype=np.float64)
        beta = np.ascontiguousarray(spec.prevalence_alpha, dtype=np.float64)
        const = float(
            (gammaln(alpha.sum(-1)) - gammaln(alpha).sum(-1)).sum()
            + (gammaln(beta.sum(-1)) - gammaln(beta).sum(-1)).sum()
        )
        g, s = np.nonzero(spec.counts)
        gy, gs = np.nonzero(spec.gold)
        joint = _joint_args(spec)
        self.spec = spec
        self._args = (
            np.ascontiguousarray(spec.states, dtype=np.int64),
            g.astype(np.int64),
            s.astype(np.int64),
            spec.counts[g, s].astype(np.float64),
            np.ascontiguousarray(spec.prevalence_index, dtype=np.int64),
            alpha,
            beta,
            np.ascontiguousarray(spec.confusion_reference, dtype=np.int64),
            np.ascontiguousarray(spec.prevalence_reference, dtype=np.int64),
            const,
            gy.astype(np.int64),
            gs.astype(np.int64),
            spec.gold[gy, gs].astype(np.float64),
            *joint,
        )
        self.n_confusion = k * c * (c - 1)
        self.n_dim = self.n_confusion + beta.shape[0] * (c - 1)

    def __call__(self, x) -> tuple[float, np.ndarray]:
        """``(log density, gradient)`` at the unconstrained point ``x`` of shape (n_dim,)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if x.shape != (self.n_dim,):
            raise ConfigError(f"x must have shape ({self.n_dim},); got {x.shape}.")
        grad = np.empty(self.n_dim)
        return float(_logp_grad(x, grad, *self._args)), grad

    def sampler_function(self):
        """``x -> (log density, gradient)`` without argument checks (for the sampler's loop)."""
        args, n_dim = self._args, self.n_dim

        def logp_grad(x):
            grad = np.empty(n_dim)
            return _logp_grad(x, grad, *args), grad

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
