"""Fixtures for the core tests (helpers live in core_helpers.py)."""

import numpy as np
import pytest


@pytest.fixture
def toy_channels():
    return np.array([0.08, 0.13, 0.18]), np.array([0.84, 0.89, 0.94])
