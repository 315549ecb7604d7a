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

from bayescal import summarize
from bayescal.bayes.models import build_pymc_model, make_spec, sample_counts, sample_prior
from bayescal.simulate import simulate_toy

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


class SBCRun:
    """One SBC problem for one model: the PyMC model and its NUTS step compiled once, the
    pattern counts of each replication swapped in (``BuiltModel.set_counts``).

    A replication draws ``(a, b, prevalence)`` from the prior (``sample_prior``), pattern
    counts with the template's design (``sample_counts``), runs one NUTS chain from the
    model's initial point (``tune`` warm-up iterations with step-size and mass-matrix
    adaptation, then ``draws``), keeps every ``thin``-th draw and returns the rank of each
    true value among them. The chain is driven as ``pymc.sample(step=..., chains=1)`` drives
    it (reset the adaptation, tune, stop tuning, step), without ``pymc.sample``'s per-call
    graph compilation (initial-point, trace and step-assignment functions: about a third
    of a replication's time at these sizes). The step's log-density and gradient are compiled
    with PyTensor's NUMBA backend (IEEE arithmetic: fastmath off), which evaluates them about
    three times faster than the C backend here (0.26 s against 0.81 s CPU a replication,
    measured); the model graph is the one ``fit_channels_bayes`` samples with the C backend.
    A cold cache adds a one-off JIT compilation (~15-40 s); PyTensor keeps it in its compile
    directory.
    """

    def __init__(self, model: str, *, n: int, groups: int, missing: float, fp, seed: int):
        import pymc as pm
        import pytensor
        import pytensor.tensor as pt

        kw = {} if fp is None else {"fp": fp, "fn": (0.1, 0.2)}
        template = summarize(
            simulate_toy(n, random_state=seed, missing=missing, **kw), groups=groups
        )
        self.spec = make_spec(template, model)
        self.built = build_pymc_model(self.spec)
        m = self.built.model
        with m, pytensor.config.change_flags(numba__fastmath=False):
            self.step = pm.NUTS(target_accept=0.9, compile_kwargs={"mode": "NUMBA"})
        params = pt.concatenate([m["a"], m["b"], m["prevalence"]])
        self._values = m.compile_fn(
            m.replace_rvs_by_values([params])[0], inputs=m.value_vars, point_fn=True
        )
        self._start = m.initial_point()
        self.names = (
            [f"a[{a}]" for a in self.spec.annotators]
            + [f"b[{a}]" for a in self.spec.annotators]
            + [f"prevalence[{g}]" for g in self.spec.prevalence_groups]
        )

    def ranks(self, n_reps: int, *, tune: int, draws: int, thin: int, rng) -> np.ndarray:
        """Ranks ``(n_reps, n_parameters)`` in ``{0, ..., draws // thin}``."""
        out = np.zeros((n_reps, len(self.names)), dtype=np.int64)
        for r in range(n_reps):
            truth = sample_prior(self.spec, 1, rng)
            counts = sample_counts(self.spec, truth["a"], truth["b"], truth["prevalence"], rng)
            self.built.set_counts(counts[0])
            kept = self._chain(tune, draws, thin, rng)
            true = np.concatenate([truth["a"][0], truth["b"][0], truth["prevalence"][0]])
            out[r] = (kept < true).sum(axis=0)
        return out

    def _chain(self, tune: int, draws: int, thin: int, rng) -> np.ndarray:
        step = self.step
        step.set_rng(rng)
        step.reset_tuning()
        point = dict(self._start)
        kept = []
        for i in range(tune + draws):
            if i == tune:
                step.stop_tuning()
            point, _ = step.step(point)
            if i >= tune and (i - tune) % thin == thin - 1:
                kept.append(self._values(point))
        return np.asarray(kept)
