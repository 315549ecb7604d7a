"""The one hand-written density (``bayescal.bayes.logdensity``): one C-class likelihood under
both prior families, held to a numpy reference written from the formulas.

The reference (below) evaluates the log density in complex arithmetic, so its gradient is
the complex-step derivative ``Im f(x + i h e_k) / h`` with ``h = 1e-30``: no subtraction, so
it is exact to rounding (relative error ~1e-16, Squire & Trapp 1998). Both sides then agree
to rounding, and 1e-12 relative (of ``max(1, |value|)``) leaves four orders of magnitude
for the different order of summation over a few thousand cells (measured: <= 3e-14). When
the C-class likelihood was introduced the kernels were also compared with the two v0.2
kernels they replace, at 20 random points on 14 specs (binary grouped / marginal /
designated / gold / priors / joint; Dirichlet C = 2, 3, 5, pooled, gold, joint): largest
relative difference 2.4e-13.
"""

import numpy as np
import pytest
from scipy.special import betaln, gammaln

from bayescal import Annotations, summarize
from bayescal.bayes.logdensity import ChannelLogDensity, MulticlassLogDensity
from bayescal.bayes.models import channel_hyper, make_spec
from bayescal.bayes.multiclass import make_multiclass_spec
from bayescal.simulate import simulate_multiclass, simulate_toy

H = 1e-30
TOL = 1e-12


def _lse(z):
    m = z.real.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[..., 0]


def _loglik(log_t, log_r, spec):
    """sum_gs n_gs logsumexp_y(log rho[q(g), y] + l[s, y]) + sum_ys gold[y, s] l[s, y]."""
    k, c = log_t.shape[0], log_t.shape[1]
    ext = np.concatenate([log_t, np.zeros((k, c, 1))], axis=2)  # answer c: missing, log 1
    ll = sum(ext[j][:, spec.states[:, j]].T for j in range(k))  # (P, C)
    cells = log_r[spec.prevalence_index][:, None, :] + ll[None]  # (L, P, C)
    return (spec.counts * _lse(cells)).sum() + (spec.gold.T * ll).sum()


def _log_sig(t):
    return -np.log1p(np.exp(-t)), -np.log1p(np.exp(t))  # log sigmoid(t), log(1 - sigmoid(t))


def _beta_reference(x, spec):
    k, n_prev = spec.n_annotators, len(spec.prevalence_groups)
    ordered = np.flatnonzero(spec.oriented)
    free = np.flatnonzero(~spec.oriented)
    u, v = np.zeros(k, complex), np.zeros(k, complex)
    y = x[: 2 * ordered.size].reshape(-1, 2)
    z = x[2 * ordered.size : 2 * k].reshape(-1, 2)
    u[ordered], v[ordered] = y[:, 0], y[:, 0] + np.exp(y[:, 1])
    u[free], v[free] = z[:, 0], z[:, 1]
    la, l1a = _log_sig(u)
    lb, l1b = _log_sig(v)
    lm, l1m = _log_sig(x[2 * k :])
    al, be = channel_hyper(spec)
    p_al, p_be = spec.priors.prevalence.expand(n_prev, "group")
    lp = y[:, 1].sum() - betaln(al, be).sum() - betaln(p_al, p_be).sum()
    lp += (al[:, 0] * la + be[:, 0] * l1a + al[:, 1] * lb + be[:, 1] * l1b).sum()
    lp += (p_al * lm + p_be * l1m).sum()
    log_t = np.stack([np.stack([l1a, la], -1), np.stack([l1b, lb], -1)], axis=1)  # [j, y, a]
    return lp + _loglik(log_t, np.stack([l1m, lm], -1), spec)


def _rows(v, reference):
    """Reference log-ratio coordinates (..., C-1) -> log of the simplex rows (..., C)."""
    c = v.shape[-1] + 1
    z = np.zeros((*v.shape[:-1], c), complex)
    for idx in np.ndindex(reference.shape):
        z[idx][np.arange(c) != reference[idx]] = v[idx]
    return z - _lse(z)[..., None]


def _dirichlet_reference(x, spec):
    k, c = spec.n_annotators, spec.n_classes
    n_conf = k * c * (c - 1)
    log_t = _rows(x[:n_conf].reshape(k, c, c - 1), spec.confusion_reference)
    log_r = _rows(x[n_conf:].reshape(-1, c - 1), spec.prevalence_reference)
    alpha, beta = spec.confusion_alpha, spec.prevalence_alpha
    # nested rows (default for C > 2): T[y, y] ~ Beta(d, M), shares ~ Dirichlet(s, ..., s), so
    # the row's density is Beta(d, M) Dirichlet(q; s) / (1 - T[y, y])^(C - 2)
    kappa = spec.kernel.kappa
    d = np.diagonal(alpha, axis1=-2, axis2=-1)
    s = (alpha.sum(-1) - d) / (c - 1)  # every wrong answer has the same exponent here
    mass = (c - 1) * s + kappa
    lp = (-betaln(d, mass) + gammaln((c - 1) * s) - (c - 1) * gammaln(s)).sum()
    lp += (gammaln(beta.sum(-1)) - gammaln(beta).sum(-1)).sum()
    lp += (alpha * log_t).sum() + (beta * log_r).sum()
    lp += (kappa * np.log(1.0 - np.exp(np.diagonal(log_t, axis1=-2, axis2=-1)))).sum()
    return lp + _loglik(log_t, log_r, spec)


def _gold_summary():
    """2,000 items, 3 annotators (a = 0.1-0.2, b = 0.7-0.9), 20% answers missing, 300 gold."""
    rng = np.random.default_rng(3)
    y = (rng.random(2000) < 0.3).astype(int)
    rate = np.where(y[:, None] == 1, [0.8, 0.9, 0.7], [0.1, 0.2, 0.15])
    labels = (rng.random((2000, 3)) < rate).astype(float)
    labels[(rng.random((2000, 3)) < 0.2) & (np.arange(3) > 0)] = np.nan  # a1 always answers
    gold = np.full(2000, np.nan)
    gold[:300] = y[:300]
    return summarize(Annotations.from_arrays(rng.random(2000), labels, gold=gold), groups=3)


def _binary_specs():
    toy = summarize(simulate_toy(3000, random_state=1), groups=4)
    gold = _gold_summary()
    return {
        "grouped": make_spec(toy),
        "marginal": make_spec(toy, "marginal"),
        "designated": make_spec(toy, orientation="designated"),
        "gold": make_spec(gold),
        "priors": make_spec(toy, priors={"a": (1, 5), "b": (7, 2), "prevalence": (2, 3)}),
    }


def _dirichlet_specs():
    out = {"C=2 gold": make_multiclass_spec(_gold_summary())}
    for c in (2, 3, 4):
        s = summarize(simulate_multiclass(2000, c, random_state=c))
        out[f"C={c}"] = make_multiclass_spec(s)
        out[f"C={c} pooled"] = make_multiclass_spec(s, pooled=True)
    s = summarize(simulate_multiclass(2000, 4, random_state=9))
    out["C=4 split"] = make_multiclass_spec(s, priors={"diagonal": 3.0, "split": 0.4})
    out["C=4 Dirichlet rows"] = make_multiclass_spec(s, priors={"off_diagonal": 0.7})
    return out


CASES = [(ChannelLogDensity, _beta_reference, name, s) for name, s in _binary_specs().items()]
CASES += [
    (MulticlassLogDensity, _dirichlet_reference, name, s) for name, s in _dirichlet_specs().items()
]


@pytest.mark.parametrize(("density", "reference", "name", "spec"), CASES, ids=[c[2] for c in CASES])
def test_density_and_gradient_equal_the_reference(density, reference, name, spec):
    d = density(spec)
    rng = np.random.default_rng(7)
    for scale in (0.0, 0.5, 1.5):
        x = d.initial_point() + rng.normal(0.0, scale, d.n_dim)
        lp, grad = d(x)
        want = reference(x.astype(complex), spec).real
        assert abs(lp - want) <= TOL * max(1.0, abs(want)), (name, lp, want)
        step = np.array([reference(x + 1j * H * e, spec).imag / H for e in np.eye(d.n_dim)])
        np.testing.assert_allclose(grad, step, rtol=TOL, atol=TOL * max(1.0, np.abs(step).max()))
