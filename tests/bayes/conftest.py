"""Shared fits for the Bayesian channel tests: each model is sampled once per session.

The reference fits are the ones the model cards in ``models/`` summarise.
"""

import pytest
from bayes_reference import reference_fit


@pytest.fixture(scope="session")
def grouped_fit():
    return reference_fit("grouped")


@pytest.fixture(scope="session")
def marginal_fit():
    return reference_fit("marginal")


@pytest.fixture(scope="session")
def hui_walter_fit():
    return reference_fit("hui_walter")
