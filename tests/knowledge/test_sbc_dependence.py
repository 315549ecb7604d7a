"""Simulation-based calibration (Talts et al. 2018) of the conditional-dependence model:
three annotators, the pair a1:a2 dependent, three score groups (no missing answers: they are
tested exactly elsewhere and would triple the cells). Truths from
the stated priors (Beta channels ordered a < b, Beta prevalences, HalfNormal(1) loadings),
counts from the model, posterior by nutpie on the hand-written density (equal to PyMC's to
1e-9), one chain per replication with the settings of tests/bayes/sbc_helpers. The numba kernel
is compiled once and reused by every replication.
"""

import numpy as np
import pytest
from sbc_helpers import DRAWS, FAMILY_ALPHA, N_REPS, THIN, sbc_settings, smooth_test

from bayescal import summarize
from bayescal.bayes.dependence import (
    make_dependence_spec,
    sample_counts_dependent,
    sample_loadings_prior,
)
from bayescal.bayes.dependence_density import DependenceLogDensity
from bayescal.bayes.dependence_fit import dependence_posterior
from bayescal.bayes.models import make_spec, sample_prior
from bayescal.bayes.sampling import sample_nutpie
from bayescal.simulate import simulate_toy

pytestmark = pytest.mark.slow


def test_sbc_dependence_pair():
    template = summarize(simulate_toy(300, random_state=41), groups=3)
    dspec = make_dependence_spec(make_spec(template, "grouped"), "a1:a2")
    rng = np.random.default_rng(2026)
    names = ("a", "b", "prevalence", "loading")
    ranks = []
    for _ in range(N_REPS):
        truth = sample_prior(dspec.base, 1, rng)
        truth["loading"] = sample_loadings_prior(dspec, 1, rng)
        counts = sample_counts_dependent(
            dspec, truth["a"], truth["b"], truth["prevalence"], truth["loading"], rng
        )[0]
        rep = dspec.with_counts(counts)
        settings = sbc_settings(rng)
        post, _, _ = sample_nutpie(
            DependenceLogDensity(rep),
            settings,
            to_posterior=lambda d, x, at, rep=rep: dependence_posterior(rep, d, x, at),
        )
        kept = np.concatenate(
            [post[v].values[0][THIN - 1 :: THIN].reshape(DRAWS // THIN, -1) for v in names],
            axis=1,
        )
        true = np.concatenate([np.ravel(truth[v][0]) for v in names])
        ranks.append((kept < true).sum(axis=0))
    ranks = np.array(ranks)
    v, pvals = smooth_test(ranks, DRAWS // THIN + 1)
    print("(p, V1 shift, V2 spread):", np.round(pvals, 4), np.round(v, 2))
    # family-wise false-alarm rate 1%, Bonferroni over the 3 + 3 + 3 + 4 quantities
    assert pvals.min() > FAMILY_ALPHA / ranks.shape[1], (pvals, v)
