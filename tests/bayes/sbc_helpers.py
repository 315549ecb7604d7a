"""Simulation-based calibration (Talts et al. 2018, "Validating Bayesian inference algorithms
with simulation-based calibration") for the PyMC channel models, and its rank-uniformity test.

Imported by name (``from sbc_helpers import ...``): the test folders are not packages.

The uniformity test is Neyman's smooth test (Rayner & Best, "Smooth Tests of Goodness of
Fit", 1989) of order 2 on the discrete ranks: with ``h1``, ``h2`` the polynomials of degree 1
and 2 that are orthonormal under the uniform distribution on ``{0, ..., L}``, the components
``V_k = sum_i h_k(r_i) / sqrt(N)`` over ``N`` replications have mean 0 and variance 1 exactly
under uniformity and are uncorrelated, and ``V1**2 + V2**2`` is referred to chi-square(2).
``V1`` measures a shift of the ranks (posterior biased: ``V1 > 0`` when the truth sits above
the draws), ``V2`` their spread (``V2 > 0``: too many extreme ranks, posterior too narrow;
``V2 < 0``: posterior too wide) -- the two shapes that Talts et al. show for biased and
mis-scaled posteriors. Against these alternatives it needs fewer replications than a
chi-square test on binned ranks; ``test_sbc_rank_test.py`` measures both.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats

from bayescal.bayes.gold import sample_gold_counts
from bayescal.bayes.logdensity import ChannelLogDensity, MulticlassLogDensity
from bayescal.bayes.models import sample_counts, sample_prior
from bayescal.bayes.multiclass import make_multiclass_spec, orient_draws
from bayescal.bayes.sampling import NUTSSettings, sample_nutpie
from bayescal.channels.orientation import dominant_diagonal_permutation
from bayescal.data.multiclass import MulticlassAnnotations
from bayescal.dims import CHAIN, DRAW
from bayescal.summaries import summarize_multiclass

#: 40 replications; one chain each of 150 warm-up and 80 kept iterations thinned by 4, which
#: gives ranks 0..20: enough resolution for the order-2 smooth test, which at N = 40, L = 20
#: rejects a shifted or mis-scaled posterior more often than the earlier binned chi-square at
#: N = 40, L = 100 (test_sbc_rank_test.py), with 230 sampler iterations per replication instead
#: of 500. Thinning by 4 suffices: the bulk ESS is typically 0.15-0.5 per NUTS draw (down to
#: 0.05 in the hardest replications), and over 40 replications of each model (seed 11) the lag-1
#: autocorrelation of the kept draws averaged -0.09..0.12 per parameter (0.00 overall).
N_REPS = 40
TUNE, DRAWS, THIN = 150, 80, 4
#: Family-wise false-alarm rate of one model's SBC (Bonferroni over its parameters).
FAMILY_ALPHA = 0.01


def sbc_settings(rng, *, draws: int = DRAWS, tune: int = TUNE) -> NUTSSettings:
    """One replication's NUTS settings: one chain, its seed from ``rng``, target accept 0.9."""
    return NUTSSettings(
        draws=draws,
        tune=tune,
        chains=1,
        cores=1,
        seed=int(rng.integers(2**31 - 1)),
        target_accept=0.9,
        progress=False,
    )


def legendre_scores(n_values: int, order: int = 2) -> np.ndarray:
    """Orthonormal polynomials of degree 1..order on the uniform distribution over
    ``{0, ..., n_values - 1}``, as a table ``(n_values, order)``: each column has mean 0 and
    mean square 1 over the support, columns are orthogonal, leading coefficients positive."""
    x = np.arange(n_values, dtype=np.float64)
    q, r = np.linalg.qr(np.vander(x - x.mean(), order + 1, increasing=True))
    return q[:, 1:] * np.sign(np.diag(r)[1:]) * np.sqrt(n_values)


def smooth_test(ranks, n_values: int, order: int = 2):
    """Neyman's smooth test of uniformity of integer ranks in ``{0, ..., n_values - 1}``.

    Parameters
    ----------
    ranks : int array (N,) or (N, M)
        One rank per replication (rows), for M quantities tested separately (columns).
    n_values : int
        Number of possible ranks (retained posterior draws + 1).

    Returns
    -------
    components : (order,) or (order, M) float array, the ``V_k``
    p_value : float or (M,) float array, chi-square(order) tail of ``sum_k V_k**2``
    """
    ranks = np.asarray(ranks)
    h = legendre_scores(n_values, order)
    v = np.moveaxis(h[ranks], -1, 0).sum(axis=1) / np.sqrt(ranks.shape[0])
    return v, stats.chi2.sf((v**2).sum(axis=0), order)


def binned_chisquare_test(ranks, n_values: int, n_bins: int = 5):
    """The previous SBC test: ranks binned into ``n_bins`` equal cells, Pearson chi-square
    per column. Kept as the power reference for the smooth test."""
    ranks = np.asarray(ranks)
    cells = ranks * n_bins // n_values
    observed = np.stack([(cells == k).sum(axis=0) for k in range(n_bins)])
    return stats.chisquare(observed, axis=0).pvalue


def normal_posterior_ranks(rng, n_reps: int, n_draws: int, shift: float, scale: float, size: int):
    """Ranks an SBC would see when the computed posterior is wrong in a known way.

    The truth sits at ``z ~ N(0, 1)`` in units of the correct posterior sd; the computed
    posterior is ``N(shift, scale**2)`` in the same units; the rank of the truth among
    ``n_draws`` independent draws is Binomial(n_draws, Phi((z - shift) / scale)). ``shift =
    0, scale = 1`` is a correct posterior (uniform ranks). Returns ``(size, n_reps)`` ints.
    """
    z = rng.standard_normal((size, n_reps))
    return rng.binomial(n_draws, stats.norm.cdf((z - shift) / scale))


def nutpie_ranks(spec, rng, n_reps: int = N_REPS) -> np.ndarray:
    """Ranks ``(n_reps, n_parameters)`` in ``{0, ..., DRAWS // THIN}`` of one model's SBC.

    A replication draws ``(a, b, prevalence)`` from the prior (``sample_prior``), pattern
    counts with the template's design (``sample_counts``; gold counts too when the template
    has gold items), runs one NUTS chain of nutpie on the hand-written density (the audit's
    default sampler; the density equals the PyMC model's ``logp`` and gradient to 1e-9,
    ``tests/bayes/test_fast_sampler.py``) with ``TUNE`` warm-up and ``DRAWS`` kept iterations,
    keeps every ``THIN``-th draw and returns the rank of each true value among them. The
    numba kernel is compiled once per process, so a replication costs about 70 ms of CPU
    (PyMC's NUTS on the same graph: about 0.3 s).
    """
    names = len(spec.annotators) * 2 + len(spec.prevalence_groups)
    out = np.zeros((n_reps, names), dtype=np.int64)
    for r in range(n_reps):
        truth = sample_prior(spec, 1, rng)
        counts = sample_counts(spec, truth["a"], truth["b"], truth["prevalence"], rng)[0]
        rep = spec.with_counts(counts)
        rep.gold = sample_gold_counts(spec, truth["a"], truth["b"], rng)[0]
        post, _, _ = sample_nutpie(ChannelLogDensity(rep), sbc_settings(rng))
        kept = np.concatenate(
            [post[v].values[0][THIN - 1 :: THIN] for v in ("a", "b", "prevalence")], axis=1
        )
        true = np.concatenate([truth["a"][0], truth["b"][0], truth["prevalence"][0]])
        out[r] = (kept < true).sum(axis=0)
    return out


def parameter_names(spec) -> list[str]:
    """The order of :func:`nutpie_ranks`' columns."""
    return (
        [f"a[{a}]" for a in spec.annotators]
        + [f"b[{a}]" for a in spec.annotators]
        + [f"prevalence[{g}]" for g in spec.prevalence_groups]
    )


def check_sbc(spec, seed: int) -> None:
    """Smooth test of rank uniformity per parameter, Bonferroni over the parameters: the
    family-wise false-alarm rate is ``FAMILY_ALPHA``; the seed is fixed, so the outcome is
    deterministic."""
    ranks = nutpie_ranks(spec, np.random.default_rng(seed))
    v, pvals = smooth_test(ranks, DRAWS // THIN + 1)
    report = {
        name: (round(float(p), 4), round(float(v1), 2), round(float(v2), 2))
        for name, p, v1, v2 in zip(parameter_names(spec), pvals, *v)
    }
    print(spec.kind, "(p, V1 shift, V2 spread):", report)
    assert pvals.min() > FAMILY_ALPHA / ranks.shape[1], report


# --------------------------------------------------------------------------- multiclass
def multiclass_sbc_draw(rng, priors, k: int, c: int, *, restrict: bool, scale: float = 1.0):
    """Confusions (K, C, C) and prevalence (C,) from the multiclass prior.

    ``restrict``: keep only draws in which annotator 0's diagonal is the largest over
    relabellings (rejection), the support of the relabelled posterior of a fit without gold
    items (``orient_draws``). With gold items the posterior is not relabelled and lives on
    every labelling, so its replications draw from the whole prior. ``scale`` multiplies
    every concentration of the simulator's prior (a planted error when != 1)."""
    nested = bool(np.any(priors.confusion_kernel(k, c).kappa != 0))
    if nested and scale != 1.0:
        raise ValueError("scale != 1 is a planted error of Dirichlet rows only")
    alpha = priors.confusion_alpha(k, c) * scale
    while True:
        if nested:  # a Beta diagonal and Dirichlet shares of the rest (ChannelPriors docs)
            t = priors.sample_confusion(rng, 1, k, c)[0]
        else:
            t = np.stack([[rng.dirichlet(alpha[j, y]) for y in range(c)] for j in range(k)])
        if not restrict or np.array_equal(dominant_diagonal_permutation(t[0]), np.arange(c)):
            break
    return t, rng.dirichlet(priors.prevalence_alpha(1, c)[0] * scale)


def _answers(rng, t, y, missing):
    """Answers (n, K) of annotators with confusions ``t`` on items of classes ``y``; each
    answer missing with probability ``missing`` (NaN)."""
    u = rng.random((y.size, t.shape[0], 1))
    lab = (u > np.cumsum(t[:, y].transpose(1, 0, 2), axis=2)).sum(axis=2)
    lab = np.minimum(lab, t.shape[-1] - 1).astype(np.float64)
    lab[rng.random(lab.shape) < missing] = np.nan
    return lab


def multiclass_sbc_data(rng, t, rho, *, n_items, gold_per_class, missing, gold_shift=0):
    """One replication's data: ``n_items`` items of class ``y ~ rho`` and, when
    ``gold_per_class > 0``, that many gold items of every class, all answered through ``t``.

    The gold items' classes are fixed by design (a number per class), not drawn from
    ``rho``: the model conditions on them without a prevalence factor (gold items may be
    chosen by class, models/gold.md), which is the exact posterior only when their classes
    carry no information about ``rho``. ``gold_shift`` records gold item of class ``y`` as
    class ``y + shift (mod C)`` (a planted error: the gold likelihood at a wrong class)."""
    c = t.shape[-1]
    y = rng.choice(c, size=n_items, p=rho)
    y_gold = np.repeat(np.arange(c), gold_per_class)
    labels = _answers(rng, t, np.concatenate([y, y_gold]), missing)
    gold = np.concatenate([np.full(n_items, np.nan), (y_gold + gold_shift) % c])
    probs = np.full((labels.shape[0], c), 1.0 / c)
    return MulticlassAnnotations.from_arrays(probs, labels, gold=gold)


def _unconstrained(density, x, attrs):
    return xr.Dataset({"x": ((CHAIN, DRAW, "unconstrained"), x)}, attrs=attrs)


def multiclass_nutpie_ranks(
    priors,
    rng,
    n_reps: int,
    *,
    k: int = 3,
    c: int = 3,
    n_items: int = 200,
    gold_per_class: int = 20,
    missing: float = 0.2,
    tune: int = TUNE,
    draws: int = DRAWS,
    thin: int = THIN,
    gold_shift: int = 0,
    prior_scale: float = 1.0,
):
    """Ranks ``(n_reps, K C C + C)`` in ``{0, ..., draws // thin}`` of the multiclass SBC,
    columns ``confusion[j, y, a]`` (C order) then ``prevalence[y]``, and which replications
    carried gold items.

    Odd replications carry ``gold_per_class`` gold items of each class, even ones none.
    Each replication draws the truth from the prior (restricted to annotator 0's labelling
    without gold, :func:`multiclass_sbc_draw`), simulates data
    (:func:`multiclass_sbc_data`), summarises it with one pooled prevalence, and runs one
    nutpie chain on :class:`MulticlassLogDensity` (the hand-written density, equal to the
    PyMC model's ``logp`` and gradient to 1e-9 with and without gold,
    tests/multiclass/test_multiclass_gold_bayes.py) from the prior means jittered by
    U(-1, 1); draws of replications without gold are relabelled by ``orient_draws`` as the
    fit does, those with gold are not (gold items label the classes).
    """
    m = draws // thin
    out = np.zeros((n_reps, k * c * c + c), dtype=np.int64)
    with_gold = np.arange(n_reps) % 2 == 1
    for r in range(n_reps):
        t, rho = multiclass_sbc_draw(
            rng, priors, k, c, restrict=not with_gold[r], scale=prior_scale
        )
        data = multiclass_sbc_data(
            rng,
            t,
            rho,
            n_items=n_items,
            gold_per_class=gold_per_class if with_gold[r] else 0,
            missing=missing,
            gold_shift=gold_shift,
        )
        spec = make_multiclass_spec(
            summarize_multiclass(data, groups="all"), pooled=True, priors=priors
        )
        assert spec.has_gold == with_gold[r]
        density = MulticlassLogDensity(spec)
        settings = sbc_settings(rng, draws=draws, tune=tune)
        post, _, _ = sample_nutpie(density, settings, to_posterior=_unconstrained)
        conf, prev = density.constrain(post["x"].values[0][thin - 1 :: thin])
        if not spec.has_gold:
            conf, prev, _ = orient_draws(conf, prev, spec.orient)
        kept = np.concatenate([conf.reshape(m, -1), prev[:, 0]], axis=1)
        out[r] = (kept < np.concatenate([t.ravel(), rho])).sum(axis=0)
    return out, with_gold


def multiclass_parameter_names(k: int = 3, c: int = 3) -> list[str]:
    """The order of :func:`multiclass_nutpie_ranks`' columns."""
    return [f"T{j}[{y},{a}]" for j in range(k) for y in range(c) for a in range(c)] + [
        f"rho[{y}]" for y in range(c)
    ]


def pooled_spread_test(ranks, n_values: int) -> float:
    """Two-sided p-value that the ranks of all columns together are not too spread or too
    central: per replication the mean over columns of the degree-2 score ``h2(rank)``
    (:func:`legendre_scores`), which has mean 0 exactly under uniformity whatever the
    correlation between columns; replications are independent, so a one-sample t-test on
    these means (``N - 1`` degrees of freedom) is valid. It pools the evidence of a posterior
    that is too wide (or too narrow) for every parameter at once -- a mis-scaled prior -- which
    the per-column smooth tests at a Bonferroni level see only one by one."""
    u = legendre_scores(n_values, 2)[:, 1][np.asarray(ranks)].mean(axis=1)
    t = u.mean() / (u.std(ddof=1) / np.sqrt(u.size))
    return float(2 * stats.t.sf(abs(t), u.size - 1))
