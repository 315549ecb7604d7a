"""Shared fixtures for the recalibration tests."""

from __future__ import annotations

import pytest
from recal_helpers import TRUE_A, TRUE_B

from bayescal import ChannelFit
from bayescal.simulate import simulate_gaussian


@pytest.fixture(scope="session")
def gauss():
    return simulate_gaussian(6000, random_state=11)


@pytest.fixture(scope="session")
def known():
    return ChannelFit.known(TRUE_A, TRUE_B, annotators=["a1", "a2"], mu=0.5)
