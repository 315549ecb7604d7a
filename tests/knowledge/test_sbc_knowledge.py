"""Simulation-based calibration (Talts et al. 2018) of the new models: gold items (two
annotators, no score groups: identified by the gold items alone) and the joint log-odds prior
from an earlier fit. Ranks are tested with the order-2 smooth test of tests/bayes/sbc_helpers.

Sampled with nutpie on the hand-written density (tested equal to the PyMC model's to 1e-9),
one chain per replication: 40 replications of 150 warm-up + 80 kept draws thinned by 4, the
settings of tests/bayes (ranks 0..20; see sbc_helpers for why they suffice).
"""

import warnings

import numpy as np
import pytest
from gold_data import gold_data
from sbc_helpers import DRAWS, FAMILY_ALPHA, N_REPS, THIN, TUNE, smooth_test

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.gold import sample_gold_counts
from bayescal.bayes.logdensity import ChannelLogDensity
from bayescal.bayes.models import make_spec, sample_counts, sample_prior
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.sampling import NUTSSettings, sample_nutpie
from bayescal.simulate import simulate_toy

pytestmark = pytest.mark.slow


def _ranks(spec, rng):
    names = len(spec.annotators) * 2 + len(spec.prevalence_groups)
    out = np.zeros((N_REPS, names), dtype=np.int64)
    for r in range(N_REPS):
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


def _check(spec, seed):
    ranks = _ranks(spec, np.random.default_rng(seed))
    v, pvals = smooth_test(ranks, DRAWS // THIN + 1)
    print("(p, V1 shift, V2 spread):", np.round(pvals, 4), np.round(v, 2))
    # family-wise false-alarm rate 1%, Bonferroni over the parameters; the seed is fixed
    assert pvals.min() > FAMILY_ALPHA / ranks.shape[1], (pvals, v)


def test_sbc_gold_two_annotators_without_groups():
    d, _ = gold_data(300, [0.1, 0.25], [0.85, 0.7], n_gold=60, seed=31, missing=0.1)
    _check(make_spec(summarize(d, groups=1), "marginal"), seed=2024)


def test_sbc_joint_prior_from_an_earlier_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        earlier = fit_channels_bayes(
            summarize(simulate_toy(300, random_state=32), groups=2),
            draws=500,
            tune=300,
            chains=2,
            cores=1,
            posterior_predictive=False,
            check=False,
        )
    # inflate 4 widens the prior so the replications span a range of truths
    priors = ChannelPriors.from_fit(earlier, inflate=4.0, prevalence=True, joint=True)
    template = summarize(simulate_toy(300, random_state=33, missing=0.15), groups=2)
    _check(make_spec(template, "grouped", priors=priors), seed=2025)
