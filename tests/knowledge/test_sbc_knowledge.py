"""Simulation-based calibration (Talts et al. 2018) of the new models: gold items (two
annotators, no score groups: identified by the gold items alone) and the joint log-odds prior
from an earlier fit. Ranks are tested with the order-2 smooth test of tests/bayes/sbc_helpers.

Sampled with nutpie on the hand-written density (tested equal to the PyMC model's to 1e-9),
one chain per replication: 40 replications of 150 warm-up + 80 kept draws thinned by 4, the
settings of tests/bayes (ranks 0..20; see sbc_helpers for why they suffice).
"""

import warnings

import pytest
from gold_data import gold_data
from sbc_helpers import check_sbc

from bayescal import summarize
from bayescal.bayes import fit_channels_bayes
from bayescal.bayes.models import make_spec
from bayescal.bayes.priors import ChannelPriors
from bayescal.simulate import simulate_toy

pytestmark = pytest.mark.slow


def test_sbc_gold_two_annotators_without_groups():
    d, _ = gold_data(300, [0.1, 0.25], [0.85, 0.7], n_gold=60, seed=31, missing=0.1)
    check_sbc(make_spec(summarize(d, groups=1), "marginal"), seed=2024)


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
    check_sbc(make_spec(template, "grouped", priors=priors), seed=2025)
