"""Helpers shared by the recalibration tests (imported by name: tests have no packages)."""

from __future__ import annotations

import numpy as np

from bayescal import ChannelFit
from bayescal.simulate import GAUSSIAN_FN, GAUSSIAN_FP

TRUE_A = np.array(GAUSSIAN_FP)
TRUE_B = 1.0 - np.array(GAUSSIAN_FN)


def tight_posterior(n_draws=300, scale=1e-4, seed=0):
    """Draws concentrated symmetrically around the true Gaussian-setting channels."""
    rng = np.random.default_rng(seed)
    a = TRUE_A + scale * rng.standard_normal((n_draws, 2))
    b = TRUE_B + scale * rng.standard_normal((n_draws, 2))
    prev = 0.5 + scale * rng.standard_normal((n_draws, 1))
    return ChannelFit.from_draws(
        a, b, prev, annotators=["a1", "a2"], groups=["all"], group_counts=[1], method="synthetic"
    )
