"""Simulation-based calibration (Talts et al. 2018) of the multiclass dependence model:
C = 3 classes, three annotators, the pair a1:a2 dependent, three channel groups of 300 items,
no missing answers (every one of the 27 patterns is a cell, so the replicated counts are the
model's exactly). Truths from the stated priors (Dirichlet rows with the multiclass SBC prior,
restricted by rejection to the designated annotator's labelling, the support the sampler's
one-labelling posterior lives on; HalfNormal(1) loadings), posterior by nutpie on the numba
density (equal to PyMC's to 1e-9), one chain per replication with the settings of
tests/bayes/sbc_helpers."""

import dataclasses
import itertools

import numpy as np
import pytest
import xarray as xr
from sbc_helpers import DRAWS, FAMILY_ALPHA, N_REPS, THIN, TUNE, smooth_test

from bayescal.bayes.dependence import (
    make_multiclass_dependence_spec,
    multiclass_pattern_logp_dependent,
)
from bayescal.bayes.dependence_density import MulticlassDependenceLogDensity
from bayescal.bayes.multiclass import make_multiclass_spec
from bayescal.bayes.priors import ChannelPriors
from bayescal.bayes.sampling import NUTSSettings, sample_nutpie
from bayescal.channels.orientation import dominant_diagonal_permutation
from bayescal.simulate import simulate_multiclass
from bayescal.summaries import summarize_multiclass

pytestmark = pytest.mark.slow

#: the multiclass SBC prior (tests/multiclass/test_bayes_multiclass_slow.py): informative
#: enough that draws stay in the designated annotator's labelling
PRIORS = {"diagonal": 4.0, "off_diagonal": 1.0, "prevalence": 3.0}
N_PER_GROUP = 300


def _template():
    c, k = 3, 3
    data = simulate_multiclass(300, c, n_annotators=k, random_state=3)
    spec = make_multiclass_spec(summarize_multiclass(data), priors=PRIORS)
    full = np.array(list(itertools.product(range(c), repeat=k)))
    spec = dataclasses.replace(
        spec,
        states=full,
        patterns=np.arange(len(full)),
        counts=np.zeros((len(spec.groups), len(full)), dtype=np.int64),
        gold=np.zeros((c, len(full)), dtype=np.int64),
    )
    return make_multiclass_dependence_spec(spec, "a1:a2")


def _truth(rng, dspec):
    priors = ChannelPriors(PRIORS, family="dirichlet")
    k, c = dspec.base.n_annotators, dspec.n_classes
    alpha = priors.confusion_alpha(k, c)
    while True:
        t = np.stack([[rng.dirichlet(alpha[j, y]) for y in range(c)] for j in range(k)])
        if np.array_equal(dominant_diagonal_permutation(t[0]), np.arange(c)):
            break
    rho = rng.dirichlet(priors.prevalence_alpha(1, c)[0], size=len(dspec.base.prevalence_groups))
    s = np.abs(rng.normal(0.0, dspec.sigma, (dspec.loaded.size, c)))
    return t, rho, s


def test_sbc_multiclass_dependence_pair():
    dspec = _template()
    rng = np.random.default_rng(2027)
    ranks = []
    for _ in range(N_REPS):
        t, rho, s = _truth(rng, dspec)
        p = np.exp(multiclass_pattern_logp_dependent(dspec, t, rho, s))  # (L, 27), rows sum 1
        counts = np.stack([rng.multinomial(N_PER_GROUP, row / row.sum()) for row in p])
        density = MulticlassDependenceLogDensity(dspec.with_counts(counts))
        settings = NUTSSettings(
            draws=DRAWS,
            tune=TUNE,
            chains=1,
            cores=1,
            seed=int(rng.integers(2**31 - 1)),
            target_accept=0.9,
            progress=False,
        )

        def to_posterior(d, x, attrs):
            return xr.Dataset({"x": (("chain", "draw", "unconstrained"), x)})

        post, _, _ = sample_nutpie(density, settings, to_posterior=to_posterior)
        conf, prev, load = density.constrain(post["x"].values[0][THIN - 1 :: THIN])
        kept = np.stack(
            [
                conf[:, 0, 0, 0],
                conf[:, 1, 1, 2],
                conf[:, 2, 2, 2],
                prev[:, 0, 0],
                load[:, 0, 0],
                load[:, 1, 2],
            ],
            axis=1,
        )
        true = np.array([t[0, 0, 0], t[1, 1, 2], t[2, 2, 2], rho[0, 0], s[0, 0], s[1, 2]])
        ranks.append((kept < true).sum(axis=0))
    ranks = np.array(ranks)
    v, pvals = smooth_test(ranks, DRAWS // THIN + 1)
    print("(p, V1 shift, V2 spread):", np.round(pvals, 4), np.round(v, 2))
    # family-wise false-alarm rate 1%, Bonferroni over the six quantities
    assert pvals.min() > FAMILY_ALPHA / ranks.shape[1], (pvals, v)
