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
from scipy import stats

from bayescal.bayes.gold import sample_gold_counts
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import sample_counts, sample_prior
from bayescal.bayes.sampling import NUTSSettings, sample_nutpie

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
        settings = NUTSSettings(
            draws=DRAWS,
            tune=TUNE,
            chains=1,
            cores=1,
            seed=int(rng.integers(2**31 - 1)),
            target_accept=0.9,
            progress=False,
        )
        post, _, _ = sample_nutpie(ChannelLogDensity(rep), settings)
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
